"""Benchmarks of the AscGraph backend (ratio = target or peer time / ours, above 1: faster):
schedule + allocate + solve of a 20-node HintGraph,
calls of the compiled tiling function, simulator vs direct evaluation throughput, and the
solver against an exhaustive search of aligned tile sizes."""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from ascendir import asc
from ascendir._core import asc as _casc
from ascendir.asc.schedule import schedule
from ascendir.asc.simulate import evaluate, simulate
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling, solve_tiling

F16 = asc.dtypes.float16


def _view(node: Any, axes: list[Any], reps: list[Any]) -> None:
    node.y.dtype = F16
    node.y.axis = axes
    node.y.size = reps
    strides: list[Any] = [0] * len(reps)
    acc: Any = 1
    for k in range(len(reps) - 1, -1, -1):
        strides[k] = acc
        acc = reps[k] * acc
    node.y.strides = strides


def build_graph(n_nodes: int = 20) -> Any:
    """A HintGraph of `n_nodes` nodes: 4 loads, a chain of elementwise ops, one store."""
    g = asc.HintGraph("Bench")
    s0 = g.create_size("s0")
    s1 = g.create_size("s1")
    axes = [g.create_axis("z0", s0), g.create_axis("z1", s1)]
    reps = [s0, s1]
    loads = []
    for k in range(4):
        d = asc.ops.Data(f"x{k}", g)
        d.attr.ir_attr.index = k
        _view(d, axes, reps)
        ld = asc.ops.Load(f"load{k}")
        ld.x = d
        ld.attr.sched.axis = axes
        ld.attr.ir_attr.offset = asc.SizeExpr(0)
        _view(ld, axes, reps)
        loads.append(ld)
    cur = loads[0]
    ops = ["Add", "Mul", "Abs", "Exp", "Sub", "Maximum", "Neg", "Relu"]
    k = 0
    while 2 * 4 + k + 2 < n_nodes:
        ty = ops[k % len(ops)]
        node = getattr(asc.ops, ty)(f"op{k}")
        ports = [p[0] for p in _casc.op_info(ty)["inputs"]]
        node_inputs = [cur] if len(ports) == 1 else [cur, loads[1 + k % 3]]
        for p, v in zip(ports, node_inputs, strict=False):
            setattr(node, p, v)
        node.attr.sched.axis = axes
        _view(node, axes, reps)
        cur = node
        k += 1
    st = asc.ops.Store("store")
    st.x = cur
    st.attr.sched.axis = axes
    st.attr.ir_attr.offset = asc.SizeExpr(0)
    _view(st, axes, reps)
    out = asc.ops.Output("y", g)
    out.x = st
    out.attr.ir_attr.index = 0
    _view(out, axes, reps)
    return g


def build_transpose() -> Any:
    """Load → Transpose → Store over (s0, s1): a case with two tile variables (x and y)."""
    g = asc.HintGraph("BenchT")
    s0 = g.create_size("s0")
    s1 = g.create_size("s1")
    axes = [g.create_axis("z0", s0), g.create_axis("z1", s1)]
    d = asc.ops.Data("x", g)
    d.attr.ir_attr.index = 0
    _view(d, axes, [s0, s1])
    ld = asc.ops.Load("load")
    ld.x = d
    ld.attr.ir_attr.offset = asc.SizeExpr(0)
    tr = asc.ops.Transpose("transpose")
    tr.x = ld
    st = asc.ops.Store("store")
    st.x = tr
    st.attr.ir_attr.offset = asc.SizeExpr(0)
    out = asc.ops.Output("y", g)
    out.x = st
    out.attr.ir_attr.index = 0
    _view(ld, axes, [s0, s1])
    for node in (tr, st, out):
        _view(node, [axes[1], axes[0]], [s1, s0])
    for node in (ld, tr, st):
        node.attr.sched.axis = axes
    return g


def _best(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _exhaustive_best(fn: Any, shape: dict[str, int], ub: int) -> int:
    p = fn.problems()[0]
    tiles = [v for v in p["vars"] if v[1] == "tile"]
    cands = []
    for _name, _, align, upper in tiles:
        up = max(asc.SizeExpr.parse(upper).evaluate(shape), 1)
        cands.append(sorted(set(range(align, up + 1, align)) | {up}))
    best = -1
    for combo in itertools.product(*cands):
        vals = dict(shape)
        vals.update({t[0]: v for t, v in zip(tiles, combo, strict=False)})
        vals.update({v[0]: 1 for v in p["vars"] if v[1] == "block"})
        u = fn.ub_usage(0, vals)
        if best < u <= ub:
            best = u
    return best


def run(quick: bool) -> list[dict[str, Any]]:
    """Benchmark rows `{name, ours_s, peer, peer_s, ratio}`."""
    reps = 20 if quick else 200
    rows: list[dict[str, Any]] = []
    g = build_graph(20)
    n = len(g.nodes)
    target = Target.ascend910b()
    shape = {"s0": 4096, "s1": 1000}

    def full() -> None:
        impls = schedule(g)
        solve_tiling(impls, target, shape)

    t_full = _best(full, reps)
    rows.append({"name": f"schedule+allocate+solve ({n} nodes)", "ours_s": t_full,
                 "peer": "target 1 ms", "peer_s": 1e-3, "ratio": 1e-3 / t_full})
    impls = schedule(g)
    fn = compile_tiling(impls, target)
    vals = [4096, 1000]
    calls = 2000 if quick else 20000
    t0 = time.perf_counter()
    for _ in range(calls):
        fn.solve_values(vals)
    t_call = (time.perf_counter() - t0) / calls
    rows.append({"name": "compiled tiling call", "ours_s": t_call, "peer": "target 5 us",
                 "peer_s": 5e-6, "ratio": 5e-6 / t_call})
    # Two tile variables: the exact search walks the corners of the feasible region.
    fn_t = compile_tiling(schedule(build_transpose()), target)
    for vals_t in ([4096, 4096], [37, 100000]):
        t0 = time.perf_counter()
        for _ in range(calls // 10):
            fn_t.solve_values(vals_t)
        t_t = (time.perf_counter() - t0) / (calls // 10)
        rows.append({"name": f"compiled tiling call, transpose {vals_t[0]}x{vals_t[1]} "
                             "(two tile variables)", "ours_s": t_t, "peer": "target 5 us",
                     "peer_s": 5e-6, "ratio": 5e-6 / t_t})
    # Simulator vs direct evaluation.
    small = {"s0": 64, "s1": 300}
    rng = np.random.default_rng(0)
    inputs = {f"x{k}": rng.uniform(0.5, 1.5, size=64 * 300).astype(np.float16) for k in range(4)}
    tiling = compile_tiling(impls, Target("sim", core_num=8, ub_size=65536))(small)
    impl = impls[[i.tiling_key for i in impls].index(tiling.tiling_key)]
    t_sim = _best(lambda: simulate(impl, tiling, inputs), 2 if quick else 5)
    t_eval = _best(lambda: evaluate(g, inputs, small), 2 if quick else 5)
    rows.append({"name": "simulate vs evaluate (64x300 fp16)", "ours_s": t_sim,
                 "peer": "evaluate", "peer_s": t_eval, "ratio": t_eval / t_sim})
    # Solver vs exhaustive search (small UB so the search space is small).
    b = build_graph(12)
    tgt = Target("small", core_num=4, ub_size=16384)
    fn2 = compile_tiling(schedule(b), tgt)
    shp = {"s0": 40, "s1": 700}
    t_solve = _best(lambda: fn2(shp), reps)
    t0 = time.perf_counter()
    best = _exhaustive_best(fn2, shp, tgt.ub_size)
    t_ex = time.perf_counter() - t0
    got = fn2.solve_each(shp)[0]
    rows.append({"name": f"solver vs exhaustive (UB {got.ub_used}/{best})", "ours_s": t_solve,
                 "peer": "exhaustive search", "peer_s": t_ex, "ratio": t_ex / t_solve})
    return rows


if __name__ == "__main__":  # pragma: no cover
    for r in run(True):
        print(r)
