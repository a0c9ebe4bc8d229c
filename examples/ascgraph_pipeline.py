"""AscGraph end to end: build a HintGraph (x -> Load -> Abs -> Mul by itself -> Store -> y),
schedule it into ImplGraphs, solve the tiling for Ascend 910B, simulate the chosen ImplGraph
and compare it with the reference evaluation of the HintGraph.

Run: ``python examples/ascgraph_pipeline.py [S0]`` (the size of the symbolic axis, default 4096).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ascendir import asc


def build() -> Any:
    """The HintGraph: one symbolic axis ``z0`` of size ``s0``, float16 throughout."""
    hint = asc.HintGraph("abs_square")
    s0 = hint.create_size("s0")
    z0 = hint.create_axis("z0", s0)

    def view(node: Any) -> None:
        node.attr.sched.axis = [z0]
        node.y.dtype = asc.dtypes.float16
        node.y.axis = [z0]
        node.y.size = [s0]
        node.y.strides = [1]

    x = asc.ops.Data("x", hint)
    x.attr.ir_attr.index = 0
    x.y.dtype = asc.dtypes.float16
    x.y.axis = [z0]
    x.y.size = [s0]
    x.y.strides = [1]
    load = asc.ops.Load("load")
    load.x = x
    load.attr.ir_attr.offset = asc.SizeExpr(0)
    view(load)
    absolute = asc.ops.Abs("abs")
    absolute.x = load
    view(absolute)
    square = asc.ops.Mul("square")
    square.x1 = absolute
    square.x2 = absolute
    view(square)
    store = asc.ops.Store("store")
    store.x = square
    store.attr.ir_attr.offset = asc.SizeExpr(0)
    view(store)
    y = asc.ops.Output("y", hint)
    y.x = store
    y.attr.ir_attr.index = 0
    view(y)
    hint.validate()
    return hint


def main(argv: list[str]) -> int:
    """Schedule, tile and simulate; prints the plan and the largest difference."""
    s0 = int(argv[0]) if argv else 4096
    hint = build()
    impls = asc.schedule(hint)
    target = asc.Target.ascend910b()
    tiling = asc.solve_tiling(impls, target=target, sizes={"s0": s0})
    impl = next(i for i in impls if i.tiling_key == tiling.tiling_key)
    x = np.linspace(-3, 3, s0).astype(np.float16)
    got = asc.simulate(impl, tiling, {"x": x})["y"]
    want = asc.evaluate(hint, {"x": x}, {"s0": s0})["y"]
    diff = float(np.max(np.abs(got.astype(np.float32) - want.astype(np.float32))))
    print(f"{len(impls)} ImplGraph(s); tiling key {tiling.tiling_key} for s0={s0}")
    print(f"simulated {got.shape} {got.dtype}; max |simulate - evaluate| = {diff}")
    return 0 if diff <= 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
