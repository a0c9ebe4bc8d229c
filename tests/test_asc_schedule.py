"""Scheduler: tiling groups and the merge table, cases and names, ImplGraph structure (A12–A16)."""

from __future__ import annotations

import pytest

from ascendir import asc
from ascendir.asc.schedule import (
    Autofuser,
    AutofuserOptions,
    merge_contiguous_axes,
    merge_groups,
    schedule,
    tiling_group,
)
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling
from ascendir.errors import AscendIRError
from support.hintgraph import F16, F32, HB

NO_MERGE = AutofuserOptions(merge_contiguous_axes=False)


def _las(n: int) -> HB:
    b = HB("LoadAbsStore", [f"s{k}" for k in range(n)], F16)
    b.store(b.op("Abs", b.load()))
    return b


def _compute(impl):
    return [n for n in impl.nodes if n.attr.api.compute_type not in ("invalid",)]


def test_a12_groups() -> None:
    g = tiling_group(_las(3).g)
    assert g == {"x": [], "y": [0, 1, 2], "r": [], "n": []}


def test_a13_group_merge_table() -> None:
    def grp(x=(), y=(), r=()):
        return {"x": list(x), "y": list(y), "r": list(r), "n": []}

    assert merge_groups(grp(y=[0, 1]), grp(y=[0, 1])) is not None
    assert merge_groups(grp(y=[0, 1]), grp(y=[1, 0])) is None
    assert merge_groups(grp(y=[0, 1]), grp(y=[0])) is None
    assert merge_groups(grp(y=[0, 1]), grp(y=[0], r=[1])) == grp(y=[0], r=[1])
    assert merge_groups(grp(x=[0], y=[1]), grp(y=[0, 1])) == grp(x=[0], y=[1])
    assert merge_groups(grp(x=[0], y=[1]), grp(y=[0, 1, 2])) is None


def test_a14_one_axis_schedule() -> None:
    impls = schedule(_las(1).g)
    assert [i.name for i in impls] == ["LoadAbsStore_B0Y0"]
    i = impls[0]
    assert i.tiling_key == 0
    assert [(a.id, a.name) for a in i.axes] == [
        (0, "z0"), (1, "z0T"), (2, "z0t"), (3, "z0TB"), (4, "z0Tb")]
    assert i.axis("z0T").size.expression == "Ceiling((s0 / (z0t_size)))"
    assert i.axis("z0TB").size.expression == "Ceiling((Ceiling((s0 / (z0t_size))) / (z0Tb_size)))"
    for n in _compute(i):
        assert n.attr.sched.axis == [3, 4, 2]
        assert n.attr.sched.loop_axis == 4
        assert n.y.vectorized_axis == [2]
        assert [e.expression for e in n.y.vectorized_strides] == ["1"]
    i.validate()


def test_a15_three_axis_schedule() -> None:
    impls = schedule(_las(3).g, NO_MERGE)
    assert [i.name for i in impls] == [f"LoadAbsStore_B0Y{k}" for k in range(3)]
    i = impls[1]
    names = {a.name: a.id for a in i.axes}
    assert names["z1T"] == 3 and names["z1t"] == 4
    assert names["z0z1T"] == 5 and names["z0z1TB"] == 6 and names["z0z1Tb"] == 7
    for n in _compute(i):
        assert n.attr.sched.axis == [6, 7, 4, 2]
        assert n.y.vectorized_axis == [4, 2]
        assert [e.expression for e in n.y.vectorized_strides] == ["s2", "1"]
    assert [k.tiling_key for k in impls] == [0, 1, 2]


def test_a16_aligned_vectorized_strides() -> None:
    b = HB("Aligned", [7, 9, 8, 10], F16)
    ld = b.load()
    st = asc.ops.Store("st")
    st.x = ld
    st.attr.sched.axis = b.axes
    st.attr.ir_attr.offset = asc.SizeExpr(0)
    st.y.dtype = F16
    st.y.axis = b.axes
    st.y.size = [7, 9, 8, 1]
    st.y.strides = [8, 1, 1, 0]
    out = asc.ops.Output("y", b.g)
    out.x = st
    out.attr.ir_attr.index = 0
    impls = schedule(b.g, AutofuserOptions(merge_contiguous_axes=False, unaligned_template=False))
    i = next(k for k in impls if k.name.endswith("Y0"))
    for n in ("load2", "st"):
        assert [e.expression for e in i.node(n).y.vectorized_strides][1:] == ["128", "16", "1"]
    impls = schedule(b.g, NO_MERGE)
    un = next(k for k in impls if k.name.endswith("Y0_unaligned"))
    assert [e.expression for e in un.node("load2").y.vectorized_strides][1:] == ["80", "10", "1"]


def test_autofuser_matches_schedule() -> None:
    b = _las(2)
    a = [i.name for i in Autofuser(AutofuserOptions()).schedule(b.g)]
    assert a == [i.name for i in schedule(b.g)]


def test_contiguous_merge_renumbers_axes() -> None:
    m = merge_contiguous_axes(_las(3).g)
    assert [a.name for a in m.axes] == ["z0z1z2"]
    assert m.axes[0].size.expression == "(s0 * s1 * s2)"


def test_broadcast_blocks_the_merge_and_gives_one_case_per_axis() -> None:
    b = HB("Brc", ["s0", "s1"], F32)
    x = b.load()
    y = b.load(reps=[1, b.sizes[1]])
    b.store(b.op("Add", x, b.broadcast(y, 0)))
    names = [i.name for i in schedule(b.g)]
    # Splitting z0 keeps rows of z1 in UB: the unaligned template pads only the broadcast.
    assert names == ["Brc_B0Y0", "Brc_B0Y0_unaligned", "Brc_B0Y1"]


def test_unaligned_template_pads_only_the_broadcast() -> None:
    b = HB("Brc", ["s0", "s1"], F32)
    x = b.load()
    y = b.load(reps=[1, b.sizes[1]])
    b.store(b.op("Add", x, b.broadcast(y, 0)))
    general, unaligned = schedule(b.g)[:2]
    strides = {n.name: [str(e) for e in n.y.vectorized_strides] for n in unaligned.nodes
               if n.type not in ("Data", "Output")}
    padded = "(8 * Ceiling((Rational(1 , 8) * s1)))"
    assert strides["broadcast5"] == [padded, "1"]
    assert strides["remove_pad_broadcast5"] == ["s1", "1"]
    assert strides["load2"] == strides["add6"] == strides["store7"] == ["s1", "1"]
    # The RemovePad runs right after the broadcast and feeds its consumer.
    order = sorted((n.attr.sched.exec_order, n.name) for n in unaligned.nodes)
    names = [nm for _, nm in order]
    assert names.index("remove_pad_broadcast5") == names.index("broadcast5") + 1
    assert unaligned.node("add6").x2.node.name == "remove_pad_broadcast5"
    assert [str(e) for e in general.node("add6").y.vectorized_strides] == [padded, "1"]
    # Dense rows leave more room: with 5-float rows the unaligned tile holds more rows.
    fn = compile_tiling(schedule(b.g), Target("small", core_num=4, ub_size=16384))
    g_t, u_t = fn.solve_each({"s0": 10000, "s1": 5})[:2]
    assert u_t["z0t_size"] > g_t["z0t_size"]


def test_reduce_cases_split_and_all_load() -> None:
    b = HB("Red", ["s0", "s1"], F32)
    b.store(b.reduce("Sum", b.load(), [1]))
    assert tiling_group(b.g) == {"x": [], "y": [0], "r": [1], "n": []}
    impls = schedule(b.g)
    assert [i.name for i in impls] == ["Red_B0Y0R1", "Red_B0Y0"]
    split = impls[0]
    ax = {a.name: a.id for a in split.axes}
    # sched = [block outer, block inner, reduce outer, vectorized...]
    load = split.node("load2")
    assert load.attr.sched.axis[:3] == [ax["z0TB"], ax["z0Tb"], ax["z1T"]]
    assert load.attr.sched.loop_axis == ax["z1T"]
    # The store after the reduce does not loop over the reduce outer axis.
    st = [n for n in split.nodes if n.type == "Store"][0]
    assert st.attr.sched.loop_axis == ax["z0Tb"]


def test_transpose_groups_x_and_y() -> None:
    b = HB("Tr", ["s0", "s1"], F16)
    b.store(b.transpose(b.load(), [1, 0]))
    assert tiling_group(b.g) == {"x": [1], "y": [0], "r": [], "n": []}
    assert [i.name for i in schedule(b.g)] == ["Tr_B0X1Y0"]


def test_concat_axes_after_the_concat_dim_are_not_split() -> None:
    b = HB("Cc", ["s0", 24], F32)
    x = b.load(reps=[b.sizes[0], 8])
    y = b.load(reps=[b.sizes[0], 16])
    b.store(b.concat([x, y], 1))
    assert tiling_group(b.g) == {"x": [], "y": [0], "r": [], "n": [1]}
    assert [i.name for i in schedule(b.g)] == ["Cc_B0Y0"]


def test_size_one_axes_are_pruned() -> None:
    b = HB("One", [1, "s1"], F32)
    y = b.load(reps=[1, b.sizes[1]])
    x = b.load()
    b.store(b.op("Add", x, y))
    names = [i.name for i in schedule(b.g, NO_MERGE)]
    assert names == ["One_B0Y1"]


def test_disagreeing_groups_name_the_nodes() -> None:
    b = HB("Bad", ["s0", "s1"], F32)
    x = b.load()
    r = b.reduce("Sum", x, [1])
    t = b.transpose(r, [1, 0])
    b.store(t)
    with pytest.raises(AscendIRError, match="cannot be scheduled"):
        schedule(b.g)


def test_unscheduled_inputs_are_rejected() -> None:
    g = asc.HintGraph("Empty")
    with pytest.raises(AscendIRError):
        schedule(g)


def test_impls_are_valid_and_allocated() -> None:
    b = HB("V", ["s0", "s1", "s2"], F16)
    x = b.load()
    y = b.load(reps=[b.sizes[0], 1, b.sizes[2]])
    b.store(b.op("Mul", x, b.broadcast(y, 1)))
    for i in schedule(b.g):
        i.validate()
        assert i.graph_type == 1
        for n in _compute(i):
            if n.type != "Store":
                assert n.y.mem.alloc_type in ("queue", "buffer")


def test_merge_keeps_partial_views_apart() -> None:
    # A size-1 entry with a non-zero stride is "contiguous" but not whole: no merge across it.
    b = HB("Part", ["s0", 5, 4], F16)
    x = b.load()
    y = b.load(reps=[b.sizes[0], 1, 4], strides=[4, 4, 1])
    b.store(b.op("Add", x, b.broadcast(y, 1)))
    m = merge_contiguous_axes(b.g)
    assert [a.name for a in m.axes] == ["z0", "z1", "z2"]


def _abs_f32() -> HB:
    b = HB("AbsG", ["s0"], F32)
    b.store(b.op("Abs", b.load()))
    return b


def test_axis_type_and_compute_unit_are_ge_enums() -> None:
    assert [(t.name, t.value) for t in asc.AxisType][:6] == [
        ("ORIGINAL", 0), ("BLOCK_OUTER", 1), ("BLOCK_INNER", 2), ("TILE_OUTER", 3),
        ("TILE_INNER", 4), ("MERGED", 5)]
    assert asc.ComputeUnit.VECTOR == 5 and asc.ComputeUnit.MTE2 == 2
    impl = schedule(_abs_f32().g)[0]
    types = {a.type for a in impl.axes}
    assert asc.AxisType.TILE_INNER in types and all(isinstance(t, asc.AxisType) for t in types)
    load = next(n for n in impl.nodes if n.type == "Load")
    assert load.attr.api.unit is asc.ComputeUnit.MTE2
