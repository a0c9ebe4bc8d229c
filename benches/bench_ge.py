"""Building a graph with ``ascendir.ge.es`` (GE's eager-style API) against building the same
graph with ascendir's own API, in one run.

Workload (identical on every side): two float inputs of shape [8, 8], then ``n`` nodes, node
``k`` being ``Add(p, q)``, ``Mul(p, q)`` or ``Relu(p)`` for ``k % 3 == 0, 1, 2`` where ``p`` and
``q`` are the two previous nodes (a chain with skip links); the last node is the graph output.
Every node is built through ``Graph.add_op``, so dtypes are checked and shapes inferred on
every side.

Rows: ``air.Graph.add_op`` (the baseline), ``air.ops`` typed builders, the ``ge.es`` op
functions (``Add(p, q)``), and the ``ge.es`` operators (``p + q``, ``p * q``). The issue's
line is ``ge.es`` functions / ``add_op`` <= 1.5.

Two more rows time ``ascendir.ge.passes.run_passes`` of GE's add-zero sample passes
(``Add(x, 0) -> x``, pattern_base_pass/4) over the 21k-node decoder of ``benches/models.py``
imported with ``air.onnx.load``, on a fresh copy each time: ``python_add_zero_pass_const_value
_match.py`` (the zero compared by the Rust matcher) and ``python_add_zero_pass.py`` as
written (GE's default config: every Add of a constant matches and its ``meet_requirements``
reads the value and prints a line in Python; the prints go to the null device). The issue's
line is 50 ms for each.

    python benches/bench_ge.py [--nodes 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NULL = open(os.devnull, "w")  # noqa: SIM115 - the sample pass's prints, for the whole run
sys.path.insert(0, str(HERE))


def build_air(n: int) -> Any:
    import ascendir as air

    g = air.Graph("mesh")
    desc = air.TensorDesc([8, 8], air.float32)
    p = g.add_input("a", desc, index=0)
    q = g.add_input("b", desc, index=1)
    add_op = g.add_op
    for k in range(n):
        r = k % 3
        if r == 0:
            node = add_op("Add", [p, q])
        elif r == 1:
            node = add_op("Mul", [p, q])
        else:
            node = add_op("Relu", [p])
        p, q = node, p
    g.set_outputs([p])
    return g


def build_air_ops(n: int) -> Any:
    import ascendir as air
    from ascendir import ops

    g = air.Graph("mesh")
    desc = air.TensorDesc([8, 8], air.float32)
    p = g.add_input("a", desc, index=0).outputs[0]
    q = g.add_input("b", desc, index=1).outputs[0]
    add, mul, relu = ops.Add, ops.Mul, ops.Relu
    for k in range(n):
        r = k % 3
        v = add(p, q) if r == 0 else mul(p, q) if r == 1 else relu(p)
        p, q = v, p
    g.set_outputs([p])
    return g


def build_ge(n: int) -> Any:
    from ascendir.ge.es import GraphBuilder
    from ascendir.ge.es.math import Add, Mul
    from ascendir.ge.es.nn import Relu

    b = GraphBuilder("mesh")
    p = b.create_input(0, name="a", shape=[8, 8])
    q = b.create_input(1, name="b", shape=[8, 8])
    for k in range(n):
        r = k % 3
        v = Add(p, q) if r == 0 else Mul(p, q) if r == 1 else Relu(p)
        p, q = v, p
    return b.build_and_reset([p])


def build_ge_operators(n: int) -> Any:
    from ascendir.ge.es import GraphBuilder
    from ascendir.ge.es.nn import Relu

    b = GraphBuilder("mesh")
    p = b.create_input(0, name="a", shape=[8, 8])
    q = b.create_input(1, name="b", shape=[8, 8])
    for k in range(n):
        r = k % 3
        v = p + q if r == 0 else p * q if r == 1 else Relu(p)
        p, q = v, p
    return b.build_and_reset([p])


def _add_zero_pass(value_match: bool) -> type:
    """GE's add-zero sample pass (pattern_base_pass/4), registered: the const-value-match
    variant, or the default-config one checking the value in ``meet_requirements``."""
    from ascendir.ge.graph.types import DataType
    from ascendir.ge.passes import (
        PassStage,
        PatternFusionPass,
        PatternMatcherConfigBuilder,
        pattern,
        register_fusion_pass,
    )

    if value_match:
        @register_fusion_pass(name="BenchAddZeroConstValueMatchPass",
                              stage=PassStage.BEFORE_INFER_SHAPE)
        class BenchAddZeroConstValueMatchPass(PatternFusionPass):
            def __init__(self):  # type: ignore[no-untyped-def]
                super().__init__(PatternMatcherConfigBuilder().enable_const_value_match()
                                 .build())

            @pattern
            def add_zero(self, inputs):  # type: ignore[no-untyped-def]
                return inputs[0] + 0.0

            def replacement(self, inputs):  # type: ignore[no-untyped-def]
                return inputs[0]

        return BenchAddZeroConstValueMatchPass

    # GE's python_add_zero_pass.py as written (its print goes to the null device).
    def extract_scalar(value: Any) -> Any:
        while isinstance(value, list):
            if len(value) != 1:
                return None
            value = value[0]
        return value

    def is_zero(tensor: Any) -> bool:
        scalar = extract_scalar(tensor.data)
        if scalar is None:
            return False
        if tensor.data_type == DataType.DT_FLOAT:
            return abs(float(scalar)) < 1e-6
        if tensor.data_type == DataType.DT_DOUBLE:
            return abs(float(scalar)) < 1e-15
        if tensor.data_type == DataType.DT_INT32:
            return int(scalar) == 0
        return False

    @register_fusion_pass(name="BenchAddZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class BenchAddZeroPass(PatternFusionPass):
        @pattern
        def add_zero(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + 0

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            captured = match_result.get_captured_tensor(0)
            for node in match_result.get_matched_nodes():
                if node.type != "Const":
                    continue
                const_tensor = node.get_attr("value")
                zero = is_zero(const_tensor)
                print(f"[PythonAddZeroPass] matched={match_result.get_pattern_graph_name()} "
                      f"captured={captured.node.name}:{captured.index} "
                      f"const_dtype={const_tensor.data_type.name} zero={zero}", file=NULL)
                return zero
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0]

    return BenchAddZeroPass


def bench_add_zero(repeat: int, value_match: bool) -> tuple[float, int, int, int]:
    """Median seconds of ``run_passes`` with an add-zero pass over the decoder, its node
    count, the pass's rewrites and the decoder's Add count."""
    import ascendir as air
    from ascendir.ge.passes import clear_registered_passes, run_passes
    from models import decoder

    g0 = air.onnx.load(decoder())
    clear_registered_passes()
    _add_zero_pass(value_match)
    g = g0.copy()
    run_passes(g)  # warm: the ES functions and the pattern compile paths
    try:
        times = []
        rewrites = 0
        for _ in range(repeat):
            g = g0.copy()
            start = time.perf_counter()
            runs = run_passes(g)
            times.append(time.perf_counter() - start)
            rewrites = runs[0].rewrites
    finally:
        clear_registered_passes()
    adds = sum(1 for n in g0.nodes if n.type == "Add")
    return statistics.median(times), len(g0), rewrites, adds


def _median_times(fns: list[Callable[[], Any]], repeat: int) -> list[float]:
    """Median seconds of each of ``fns``, run in alternating order ``repeat`` times (so a
    shared machine's drifting load falls on every side alike)."""
    times: list[list[float]] = [[] for _ in fns]
    for r in range(repeat):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            start = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    n = args.nodes
    # The same graph on every side.
    ga, gg = build_air(n), build_ge(n).air
    assert len(ga) == len(gg) == n + 3, (len(ga), len(gg))
    assert ga.op_type_counts() == gg.op_type_counts()
    build_air_ops(n), build_ge_operators(n)  # warm every path once
    sides = [("air Graph.add_op", build_air), ("air.ops builders", build_air_ops),
             ("ge.es op functions", build_ge), ("ge.es operators", build_ge_operators)]
    times = _median_times([lambda f=f: f(n) for _, f in sides], args.repeat)
    base = times[0]
    print(f"building a {n}-node Add/Mul/Relu mesh, median of {args.repeat}")
    for (label, _), t in zip(sides, times, strict=True):
        print(f"  {label:<20} {t * 1e3:8.1f} ms  {t / n * 1e6:6.2f} us/node  "
              f"{t / base:5.2f}x add_op")
    ratio = times[2] / base
    print(f"ratio ge.es / air add_op: {ratio:.2f} (limit 1.5)")
    t, nodes, rewrites, adds = bench_add_zero(args.repeat, True)
    print(f"add-zero pass (const value match) over the {nodes}-node decoder ({adds} Add "
          f"nodes, {rewrites} rewrites), median of {args.repeat}: {t * 1e3:.1f} ms "
          "(limit 50 ms)")
    t2, _, rewrites2, _ = bench_add_zero(args.repeat, False)
    print(f"add-zero pass (default config, value checked in meet_requirements), "
          f"{rewrites2} rewrites: {t2 * 1e3:.1f} ms (limit 50 ms)")
    return 0 if ratio <= 1.5 and t <= 0.050 and t2 <= 0.050 else 1


if __name__ == "__main__":
    sys.exit(main())
