"""AscGraph construction (pyascir-compatible), axis transforms, checks and dumps (A1-A11)."""

from __future__ import annotations

import pytest

from ascendir import asc
from ascendir.errors import InvalidArgumentError, NotFoundError, ValidationError
from support.asc_graphs import broken_views_graph, implicit_broadcast_graph
from support.hintgraph import F32, HB


def test_a1_size_vars() -> None:
    g = asc.HintGraph("g")
    for n in ["s0", "s1", "s2"]:
        g.create_size(n)
    g.create_size(10)
    g.create_size(1)
    g.create_size("s3")
    sizes = g.size_vars
    assert len(sizes) == 6
    assert sizes[4] == 1
    assert sizes[5].expression == "s3"
    with pytest.raises(InvalidArgumentError):
        g.create_size("s0")


def test_a2_axes() -> None:
    g = asc.HintGraph("g")
    z0 = g.create_axis("z0", g.create_size("s0"))
    assert z0.id == 0
    assert g.find_axis(-1) is None
    assert g.find_axis(len(g.axes)) is None
    with pytest.raises(NotFoundError):
        g.axis(5)
    with pytest.raises(InvalidArgumentError):
        g.create_axis("z0", 4)


def test_a3_a4_splits() -> None:
    g = asc.HintGraph("g")
    s0 = g.create_size("s0")
    a = g.create_axis("S0", s0)
    o, i = g.tile_split(a)
    assert (o.id, i.id) == (1, 2)
    assert (o.name, o.type_name) == ("S0T", "TILE_OUT")
    assert o.size.expression == "Ceiling((s0 / (S0t_size)))"
    assert (i.name, i.type_name, i.size.expression) == ("S0t", "TILE_IN", "S0t_size")
    assert o.from_axes == [a] and i.from_axes == [a]
    assert o.split_pair == i and i.split_pair == o
    assert g.size_vars[-1].expression == "S0t_size"
    bo, bi = g.block_split(a)
    assert (bo.name, bi.name, bo.type_name) == ("S0B", "S0b", "BLOCK_OUT")
    assert g.size_vars[-1].expression == "S0b_size"
    one = g.create_axis("one", 1)
    n = len(g.size_vars)
    oo, oi = g.tile_split(one)
    assert oo.size == 1 and oi.size == 1 and len(g.size_vars) == n
    with pytest.raises(NotFoundError):
        g.tile_split(99)


def test_a5_merge() -> None:
    g = asc.HintGraph("g")
    a = g.create_axis("S0", g.create_size("s0"))
    b = g.create_axis("S1", g.create_size("s1"))
    m = g.merge_axes([a, b])
    assert (m.name, m.type_name, m.size.expression) == ("S0S1", "MERGED", "(s0 * s1)")
    assert m.from_axes == [a, b]
    with pytest.raises(InvalidArgumentError):
        g.merge_axes([a, a])


def _one_node(names: list[str]) -> tuple[asc.HintGraph, asc.Node, list[asc.Axis]]:
    g = asc.HintGraph("g")
    axes = [g.create_axis(f"S{k}", g.create_size(n)) for k, n in enumerate(names)]
    node = asc.ops.Data("n", g)
    node.attr.sched.axis = axes
    node.y.contiguous = axes
    return g, node, axes


def test_a6_apply_split() -> None:
    g, n, (a,) = _one_node(["s0"])
    o, i = g.tile_split(a)
    g.apply_split(n, o, i)
    assert n.attr.sched.axis == [o.id, i.id]
    assert n.y.axis == [o.id, i.id]
    assert [e.expression for e in n.y.size] == ["(s0 / (S0t_size))", "S0t_size"]
    assert [e.expression for e in n.y.strides] == ["S0t_size", "1"]
    with pytest.raises(InvalidArgumentError):
        g.apply_split(n, i, o)


def test_a7_apply_merge() -> None:
    g, n, axes = _one_node(["s0", "s1"])
    m = g.merge_axes(axes)
    assert g.apply_merge(n, m) == []
    assert n.attr.sched.axis == [m.id]
    assert [e.expression for e in n.y.size] == ["(s0 * s1)"]
    assert n.y.strides == [1]


def test_a8_sched_merge_positions() -> None:
    g, n, (s0, s1, s2, s3) = _one_node(["s0", "s1", "s2", "s3"])
    m03 = g.merge_axes([s0, s3])
    g2 = g.copy()
    g2.apply_sched_axis_merge("n", m03.id)
    assert g2.node("n").attr.sched.axis == [m03.id, s1.id, s2.id]
    m10 = g.merge_axes([s1, s0])
    g3 = g.copy()
    g3.apply_sched_axis_merge("n", m10.id)
    assert g3.node("n").attr.sched.axis == [m10.id, s2.id, s3.id]
    q = g.create_size("q")
    mx = g.merge_axes([g.create_axis("X", q), g.create_axis("Y", q)])
    g.apply_sched_axis_merge(n, mx)
    assert n.attr.sched.axis == [s0.id, s1.id, s2.id, s3.id]
    partial = g.merge_axes([s0, g.axis("X")])
    with pytest.raises(InvalidArgumentError, match="only some axes"):
        g.apply_merge(n, partial)
    assert n.attr.sched.axis == [s0.id, s1.id, s2.id, s3.id]


def test_a9_tensor_merge() -> None:
    g, n, (s0, s1, s2, s3) = _one_node(["s0", "s1", "s2", "s3"])
    m12 = g.merge_axes([s1, s2])
    g2 = g.copy()
    assert g2.apply_merge("n", m12.id) == []
    y = g2.node("n").y
    assert y.axis == [s0.id, m12.id, s3.id]
    assert [e.expression for e in y.size] == ["s0", "(s1 * s2)", "s3"]
    assert [e.expression for e in y.strides] == ["(s1 * s2 * s3)", "s3", "1"]
    m31 = g.merge_axes([s3, s1])
    before = (n.y.axis, n.y.size, n.y.strides)
    assert g.apply_merge(n, m31) == ["y"]
    assert (n.y.axis, n.y.size, n.y.strides) == before


def test_a11_debug_str() -> None:
    graph = asc.HintGraph("test")
    s0 = graph.create_size("s0")
    s1 = graph.create_size("s1")
    s2 = graph.create_size("s2")
    assert asc.utils.debug_str(graph) == (
        "Graph: test\nSizes:\n  s0: VAR\n  s1: VAR\n  s2: VAR\nAxis:\nNodes:\n"
    )
    graph.create_axis("z0", s0)
    graph.create_axis("z1", s1)
    graph.create_axis("z2", s2)
    graph.create_axis("z3", 512)
    graph.create_axis("z4", s1 + s2)
    assert asc.utils.debug_str(graph) == "".join(
        [
            "Graph: test\n",
            "Sizes:\n",
            "  s0: VAR\n",
            "  s1: VAR\n",
            "  s2: VAR\n",
            "Axis:\n",
            "  z0(0) : ORIGINAL, size:s0, \n",
            "  z1(1) : ORIGINAL, size:s1, \n",
            "  z2(2) : ORIGINAL, size:s2, \n",
            "  z3(3) : ORIGINAL, size:512, \n",
            "  z4(4) : ORIGINAL, size:(s1 + s2), \n",
            "Nodes:\n",
        ]
    )
    assert graph.create_axis("z5", s0 + 100).size.expression == "(100 + s0)"


def test_split_axis_dump_has_from() -> None:
    g = asc.HintGraph("g")
    a = g.create_axis("z0", g.create_size("s0"))
    g.tile_split(a)
    lines = g.debug_str().splitlines()
    assert "  z0T(1) : TILE_OUT, size:Ceiling((s0 / (z0t_size))), , from: {z0, }" in lines
    assert "  z0t(2) : TILE_IN, size:z0t_size, , from: {z0, }" in lines
    assert "  z0t_size: VAR" in lines


def test_transform_log_replays_on_copy() -> None:
    g, n, (s0, s1) = _one_node(["s0", "s1"])
    base = g.copy()
    o, i = g.tile_split(s0)
    g.apply_split(n, o, i)
    m = g.merge_axes([o, i])
    g.apply_merge(n, m)
    g.apply_reorder(n, [s1, m])
    base.replay(g.transform_log)
    assert base.debug_str(True) == g.debug_str(True)
    assert [k for k, *_ in g.transform_log] == [
        "tile_split", "apply_split", "merge", "apply_merge", "apply_reorder"
    ]
    assert g.trans_info == [(0, [0], [2, 3]), (1, [2, 3], [4])]


def test_reorder_errors() -> None:
    g, n, (s0, s1) = _one_node(["s0", "s1"])
    with pytest.raises(InvalidArgumentError):
        g.apply_reorder(n, [s0])
    with pytest.raises(InvalidArgumentError):
        g.apply_reorder(n, [s0, s0])
    extra = g.create_axis("E", 3)
    with pytest.raises(NotFoundError):
        g.apply_reorder(n, [s0, extra])
    assert n.attr.sched.axis == [s0.id, s1.id]


def test_check_messages_name_node_tensor_axis() -> None:
    g = broken_views_graph()
    a = g.axis("z0")
    ab = g.node("abs")
    with pytest.raises(ValidationError) as info:
        g.validate()
    problems = info.value.problems
    assert "node 'abs': input 'x' is not connected" in problems
    assert "node 'abs' output 'y': view has 1 axes, 0 repeats and 0 strides" in problems
    assert any("node 'abs' output 'y': inconsistent memory binding" in p for p in problems)
    with pytest.raises(NotFoundError):
        ab.attr.sched.axis = [7]
    with pytest.raises(InvalidArgumentError):
        ab.attr.sched.axis = [a, a]


def test_linking_rules() -> None:
    g1, g2 = asc.HintGraph("a"), asc.HintGraph("b")
    x1, x2 = asc.ops.Data("x", g1), asc.ops.Data("x", g2)
    a = asc.ops.Abs("abs")
    assert a.graph is None
    a.x = x1.y
    assert a.graph is g1 and g1.node("abs") is a
    with pytest.raises(InvalidArgumentError, match="graph"):
        a.x = x2
    lone1, lone2 = asc.ops.Abs("p"), asc.ops.Abs("q")
    with pytest.raises(InvalidArgumentError, match="neither node belongs to a graph"):
        lone1.x = lone2
    with pytest.raises(InvalidArgumentError):
        asc.ops.Data("x", g1)
    with pytest.raises(InvalidArgumentError, match="cannot be assigned"):
        a.y = x1
    assert a.x == x1.y
    c = asc.ops.Concat("cat", g1)
    c.x = [x1, a]
    assert c.input_names == ["x0", "x1"]
    assert c.x0 == x1.y


def test_ir_attr_types() -> None:
    g = asc.HintGraph("g")
    load = asc.ops.Load("load", g)
    assert load.attr.ir_attr.offset is None
    load.attr.ir_attr.offset = 5
    assert load.attr.ir_attr.offset == 5
    with pytest.raises(InvalidArgumentError, match="Only support type of SizeExpr or long"):
        load.attr.ir_attr.offset = "3"
    with pytest.raises(NotFoundError):
        load.attr.ir_attr.nope = 1
    lr = asc.ops.LeakyRelu("lr", g)
    assert lr.attr.ir_attr.negative_slope == 0.0
    lr.attr.ir_attr.negative_slope = 0.25
    assert lr.attr.ir_attr.negative_slope == 0.25
    with pytest.raises(InvalidArgumentError):
        lr.attr.ir_attr.negative_slope = "x"


def test_api_compute_type() -> None:
    g = asc.HintGraph("g")
    m = asc.ops.MatMul("mm", g)
    assert m.attr.api.compute_type == "cube"
    a = asc.ops.Abs("abs", g)
    a.attr.api.compute_type = "elemwise"
    assert (a.attr.api.compute_type, a.attr.api.type, a.attr.api.unit) == (
        "elewise", "compute", asc.ComputeUnit.VECTOR)
    assert a.attr.api.unit == 5 and asc.ComputeUnit(5).name == "VECTOR"
    a.attr.api.unit = asc.ComputeUnit.MTE2
    assert a.attr.api.unit is asc.ComputeUnit.MTE2
    a.attr.api.unit = "vector"
    assert a.attr.api.unit is asc.ComputeUnit.VECTOR
    with pytest.raises(InvalidArgumentError):
        a.attr.api.unit = 42
    with pytest.raises(InvalidArgumentError):
        a.attr.api.compute_type = "bogus"
    del a.attr


def test_hint_conventions() -> None:
    g = implicit_broadcast_graph()
    assert g.hint_problems() == [
        "node 'abs': input 'x' is implicitly broadcast along z0; insert a Broadcast node"
    ]
    with pytest.raises(ValidationError):
        g.validate_hint_conventions()


def test_try_replace_axis_is_public_and_replayed() -> None:
    b = HB("Rep", ["s0", "s1"], F32)
    x = b.load()
    b.store(b.op("Abs", x))
    g = b.g
    before = g.copy()
    z0 = g.axis("z0")
    extra = g.create_axis("zz", b.sizes[0])
    node = g.nodes[1]
    assert g.try_replace_axis(node, z0, extra) is True
    assert extra.id in node.attr.sched.axis and z0.id not in node.attr.sched.axis
    assert g.try_replace_axis(node, z0, extra) is False
    log = g.transform_log
    assert log[-1] == ("axis_replace", node.name, z0.id, extra.id)
    before.create_axis("zz", b.sizes[0])
    before.replay(log)
    assert before.node(node.name).attr.sched.axis == node.attr.sched.axis
