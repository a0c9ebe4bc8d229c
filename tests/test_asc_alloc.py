"""UB allocator: queues and buffers, in-place groups, reuse, the queue limit, the report, and
a deliberately corrupted allocation that the simulator catches; the temporary buffers an API
declares (with GE's per-dtype sizes)."""

from __future__ import annotations

import numpy as np
import pytest

from ascendir.asc.schedule import AutofuserOptions, allocate, schedule
from ascendir.asc.simulate import evaluate, simulate
from ascendir.asc.target import Target
from ascendir.asc.tiling import solve_tiling
from support.hintgraph import F16, F32, HB, I32


def _chain(n_abs: int) -> HB:
    b = HB("Chain", ["s0"], F16)
    x = b.load()
    for _ in range(n_abs):
        x = b.op("Abs", x)
    b.store(x)
    return b


def _out(impl, name):
    return impl.node(name).y


def test_a17_inplace_chain_shares_one_queue() -> None:
    b = _chain(4)
    impl = schedule(b.g)[0]
    ld = _out(impl, "load2")
    assert ld.mem.alloc_type == "queue"
    assert ld.que.id == 0
    assert ld.mem.reuse_id == 0
    assert ld.mem.position == "vecin"
    for k, name in enumerate(["abs3", "abs4", "abs5", "abs6"]):
        t = _out(impl, name)
        assert t.mem.alloc_type == "queue", name
        assert t.que.id == 1, name
        assert t.mem.reuse_id == k + 1
        assert t.que.depth == 2
        assert t.que.buf_num == 2
    assert _out(impl, "store7").mem.alloc_type == "global"
    assert _out(impl, "x1").mem.alloc_type == "global"
    impl.validate()


def test_report_peak_and_lower_bound() -> None:
    b = _chain(2)
    impl = schedule(b.g, AutofuserOptions(allocate=False))[0]
    rep = allocate(impl)
    kinds = sorted(c["kind"] for c in rep["containers"])
    assert kinds == ["queue", "queue", "tmp"]
    vals = {"z0t_size": 1000, "z0Tb_size": 1, "s0": 5000}
    peak = rep["peak_ub_bytes"].evaluate(vals)
    low = rep["live_bytes_lower_bound"].evaluate(vals)
    assert peak == 2 * 2016 + 2 * 2016 + 8192
    assert 0 < low <= peak
    assert rep["vecin_queues"] == 1
    assert rep["inserted"] == []


def test_buffers_for_same_unit_consumers_and_reuse() -> None:
    # load -> exp -> (sub with load2) -> abs -> store: vector->vector edges use VECCALC buffers.
    b = HB("Calc", ["s0"], F32)
    x = b.load()
    e = b.op("Exp", x)
    s = b.op("Add", e, e)
    a = b.op("Neg", s)
    b.store(b.op("Abs", a))
    impl = schedule(b.g)[0]
    # Exp has two uses by one vector consumer: a VECCALC buffer; the rest is one in-place
    # group ending at the Store, hence a VECOUT queue.
    assert _out(impl, a.name).mem.alloc_type == "queue"
    assert _out(impl, e.name).mem.alloc_type == "buffer"
    assert _out(impl, e.name).buf.id >= 0
    assert _out(impl, e.name).mem.reuse_id == -1
    impl.validate()
    shape = {"s0": 777}
    t = solve_tiling([impl], Target("t", core_num=3, ub_size=20000), shape)
    inputs = b.make_inputs(shape)
    np.testing.assert_allclose(simulate(impl, t, inputs)[b.outputs[0]],
                               evaluate(b.g, inputs, shape)[b.outputs[0]], rtol=1e-6)


def test_queue_limit_inserts_ub2ub_and_stays_correct() -> None:
    b = HB("Many", ["s0"], F32)
    loads = [b.load() for _ in range(6)]
    cur = b.op("Add", loads[0], loads[1])
    for ld in loads[2:]:
        cur = b.op("Add", cur, ld)
    b.store(cur)
    impl = schedule(b.g, AutofuserOptions(allocate=False))[0]
    rep = allocate(impl, max_que_num=2)
    assert rep["vecin_queues"] <= 2
    assert rep["inserted"] and rep["inserted"][0].startswith("ub_cpy_")
    impl.validate()
    shape = {"s0": 1001}
    t = solve_tiling([impl], Target("t", core_num=2, ub_size=40000), shape)
    inputs = b.make_inputs(shape)
    np.testing.assert_allclose(simulate(impl, t, inputs)[b.outputs[0]],
                               evaluate(b.g, inputs, shape)[b.outputs[0]], rtol=1e-6)


def _add_graph() -> HB:
    b = HB("AddXY", ["s0"], F32)
    x = b.load()
    y = b.load()
    b.store(b.op("Add", x, y))
    return b


def test_two_loads_of_one_consumer_coexist() -> None:
    b = _add_graph()
    impl = schedule(b.g)[0]
    lx, ly = _out(impl, "load2"), _out(impl, "load4")
    assert lx.que.id == ly.que.id
    assert lx.mem.reuse_id == ly.mem.reuse_id


def test_corrupted_allocation_is_caught_by_the_simulator() -> None:
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    inputs = b.make_inputs(shape)
    ref = evaluate(b.g, inputs, shape)[b.outputs[0]]
    good = solve_tiling([impl], tgt, shape)
    np.testing.assert_allclose(simulate(impl, good, inputs)[b.outputs[0]], ref, rtol=1e-6)
    # Put both live loads into ONE slot: different reuse ids in a single-buffered queue.
    impl.node("load4").outputs[0].mem.reuse_id = 99
    for name in ("load2", "load4"):
        impl.node(name).outputs[0].que.buf_num = 1
    bad = solve_tiling([impl], tgt, shape)
    out = simulate(impl, bad, inputs)[b.outputs[0]]
    assert not np.allclose(out, ref)
    # What the corrupted kernel computes: y + y.
    y = inputs["x3"].astype(np.float32)
    np.testing.assert_allclose(out, y + y, rtol=1e-6)


def test_undersized_containers_are_reported() -> None:
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    inputs = b.make_inputs(shape)
    ref = evaluate(b.g, inputs, shape)[b.outputs[0]]
    good = solve_tiling([impl], tgt, shape)
    # A tiling whose tile is twice what the containers were sized for.
    from ascendir.asc.simulate import _Plan, _Sim, export_plan

    bind = dict(good.shape)
    bind.update(dict(good.sizes))
    bind["z0t_size"] = bind["z0t_size"] * 2
    plan = export_plan(impl, bind)
    for c in plan["containers"]:
        c["slot_bytes"] //= 2
    sim = _Sim(_Plan(plan), inputs, None, 4 * good.ub_size)
    sim.run()
    assert any("past its slot" in w for w in sim.warnings)
    # Containers that do not fit the UB are refused.
    from ascendir.asc.simulate import SimulationError

    with pytest.raises(SimulationError, match="UB"):
        _Sim(_Plan(export_plan(impl, bind)), inputs, None, 1024)
    assert ref.shape == (3000,)


def test_allocate_rejects_nothing_but_reports_queue_count() -> None:
    b = _add_graph()
    impl = schedule(b.g)[0]
    rep = allocate(impl)
    assert rep["vecin_queues"] == 1
    names = {c["name"] for c in rep["containers"]}
    assert {"q0_size", "q1_size"} <= names


@pytest.mark.parametrize("n", [1, 3])
def test_chain_simulates(n: int) -> None:
    b = _chain(n)
    impl = schedule(b.g)[0]
    shape = {"s0": 5000}
    t = solve_tiling([impl], Target("t", core_num=4, ub_size=12288), shape)
    assert t.block_dim <= 4
    inputs = b.make_inputs(shape)
    assert np.array_equal(simulate(impl, t, inputs)[b.outputs[0]],
                          evaluate(b.g, inputs, shape)[b.outputs[0]])


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
