"""AscGraph behaviour found missing in acceptance testing against GE's unit-test values: the
temporary buffers the allocator attaches, Abs's per-dtype temp size, ``try_replace_axis`` in
the transform log, GE's enums, Output nodes without a dtype, symbol values inferred by
``asc.evaluate``."""

from __future__ import annotations

import numpy as np
import pytest

from ascendir import asc
from ascendir.asc.schedule import allocate, schedule
from ascendir.asc.simulate import SimulationError, evaluate, infer_sizes
from test_asc_sim_helpers import F32, HB, I32


def _abs(dt: object, sizes: list[object]) -> HB:
    b = HB("AbsG", sizes, dt)
    b.store(b.op("Abs", b.load()))
    return b


def test_allocate_on_its_own_attaches_the_declared_temp_buffer() -> None:
    b = _abs(F32, ["s0"])
    g = b.g.copy()
    rep = allocate(g)
    tmp = [c for c in rep["containers"] if c["kind"] == "tmp"]
    assert len(tmp) == 1 and str(tmp[0]["slot_bytes"]) == "8192"
    # The same UB model as the scheduler's: two queues and the API's temp buffer.
    impl = schedule(b.g)[0]
    kinds = sorted(c["kind"] for c in allocate(impl)["containers"])
    assert kinds == sorted(c["kind"] for c in rep["containers"])


def test_abs_temp_size_follows_ge_per_dtype_rule() -> None:
    """GE's CalcAbsTmpSize: int32 needs Min(65312, 4 × input elements); float the default
    8192 bytes."""
    f = schedule(_abs(F32, ["s0"]).g)[0]
    i = schedule(_abs(I32, ["s0"]).g)[0]
    rep_f = {c["kind"]: str(c["slot_bytes"]) for c in allocate(f)["containers"]}
    rep_i = {c["kind"]: str(c["slot_bytes"]) for c in allocate(i)["containers"]}
    assert rep_f["tmp"] == "8192"
    assert "Min(65312, (4 * z0t_size))" in rep_i["tmp"]


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


def test_axis_type_and_compute_unit_are_ge_enums() -> None:
    assert [(t.name, t.value) for t in asc.AxisType][:6] == [
        ("ORIGINAL", 0), ("BLOCK_OUTER", 1), ("BLOCK_INNER", 2), ("TILE_OUTER", 3),
        ("TILE_INNER", 4), ("MERGED", 5)]
    assert asc.ComputeUnit.VECTOR == 5 and asc.ComputeUnit.MTE2 == 2
    impl = schedule(_abs(F32, ["s0"]).g)[0]
    types = {a.type for a in impl.axes}
    assert asc.AxisType.TILE_INNER in types and all(isinstance(t, asc.AxisType) for t in types)
    load = next(n for n in impl.nodes if n.type == "Load")
    assert load.attr.api.unit is asc.ComputeUnit.MTE2


def test_output_without_dtype_names_the_node() -> None:
    b = _abs(F32, [8])
    out = next(n for n in b.g.nodes if n.type == "Output")
    out.outputs[0].dtype = asc.dtypes.undefined if hasattr(asc.dtypes, "undefined") else 28
    with pytest.raises(SimulationError, match=f"node '{out.name}' \\(Output\\) has no dtype"):
        evaluate(b.g, b.make_inputs({}))


def test_evaluate_infers_symbols_from_input_lengths() -> None:
    b = HB("Inf", ["s0", "s1"], F32)
    x = b.load()
    y = b.load()
    b.store(b.op("Add", x, y))
    inputs = b.make_inputs({"s0": 3, "s1": 7})
    assert infer_sizes(b.g, inputs, {"s1": 7}) == {"s0": 3, "s1": 7}
    got = evaluate(b.g, inputs, {"s1": 7})[b.outputs[0]]
    want = evaluate(b.g, inputs, {"s0": 3, "s1": 7})[b.outputs[0]]
    np.testing.assert_array_equal(got, want)
    one = HB("Inf1", ["s0"], F32)
    one.store(one.op("Neg", one.load()))
    feed = one.make_inputs({"s0": 11})
    assert infer_sizes(one.g, feed) == {"s0": 11}
    np.testing.assert_array_equal(evaluate(one.g, feed)[one.outputs[0]],
                                  -feed[one.inputs[0][0]])
