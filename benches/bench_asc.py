"""AscGraph engine: symbolic size expressions against SymPy doing the same work, and building
plus dumping a 1000-node HintGraph over 5 axes through the GE-style Python API.

Expression workload (identical on both sides): for k < n, with eight symbols s0..s7,
``e = Ceiling(((s[k % 8] + k % 17) * s[(k // 8) % 8]) / (2 + k % 5))``, then hash and print it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, row  # noqa: E402


def _ours_exprs(n: int) -> int:
    from ascendir import asc

    syms = [asc.Symbol(f"s{i}") for i in range(8)]
    ceil = asc.Ceiling
    total = 0
    for k in range(n):
        e = ceil(((syms[k % 8] + k % 17) * syms[(k // 8) % 8]) / (2 + k % 5))
        total += hash(e) & 1
        total += len(str(e))
    return total


def _sympy_exprs(n: int) -> int:
    import sympy

    syms = sympy.symbols("s0:8", positive=True, integer=True)
    ceil = sympy.ceiling
    total = 0
    for k in range(n):
        e = ceil(((syms[k % 8] + k % 17) * syms[(k // 8) % 8]) / (2 + k % 5))
        total += hash(e) & 1
        total += len(str(e))
    return total


def build_and_dump(n_nodes: int = 1000, n_axes: int = 5) -> str:
    """A HintGraph Data -> Load -> (Abs/Add chain) -> Store -> Output over ``n_axes`` axes."""
    from ascendir import asc

    g = asc.HintGraph("bench")
    sizes = [g.create_size(f"s{i}") for i in range(n_axes)]
    axes = [g.create_axis(f"z{i}", s) for i, s in enumerate(sizes)]
    strides = []
    acc = asc.SizeExpr(1)
    for s in reversed(sizes):
        strides.append(acc)
        acc = acc * s
    strides.reverse()

    def view(node: Any) -> None:
        node.attr.sched.axis = axes
        node.y.dtype = asc.dtypes.float16
        node.y.axis = axes
        node.y.size = sizes
        node.y.strides = strides

    x = asc.ops.Data("x", g)
    x.attr.ir_attr.index = 0
    view(x)
    load = asc.ops.Load("load", g)
    load.x = x
    load.attr.ir_attr.offset = 0
    view(load)
    prev = load
    for i in range(n_nodes - 5):
        if i % 2:
            node = asc.ops.Add(f"add{i}", g)
            node.x1 = prev
            node.x2 = load
        else:
            node = asc.ops.Abs(f"abs{i}", g)
            node.x = prev
        view(node)
        prev = node
    store = asc.ops.Store("store", g)
    store.x = prev
    store.attr.ir_attr.offset = 0
    view(store)
    out = asc.ops.Output("out", g)
    out.x = store
    out.attr.ir_attr.index = 0
    view(out)
    return asc.utils.debug_str(g)


def run(quick: bool) -> list[dict]:
    """Rows: expressions through Python vs SymPy, the Rust expression loop, graph build + dump."""
    rows = []
    n = 20_000 if quick else 100_000
    repeat = 3 if quick else 5
    from ascendir import asc

    ours = measure(lambda: _ours_exprs(n), repeat)[0]
    inner = measure(lambda: asc._casc._bench_exprs(n), repeat)[0]
    peer_s = None
    try:
        import sympy  # noqa: F401

        peer_n = 300 if quick else 1000
        peer_s = measure(lambda: _sympy_exprs(peer_n), max(1, repeat // 2))[0] * (n / peer_n)
    except ImportError:
        pass
    note = "SymPy timed on 300 (quick) / 1000 expressions, scaled to n"
    rows.append(row(f"asc exprs create+canonicalize+print ({n})", ours, "sympy", peer_s, note))
    rows.append(row(f"asc exprs, Rust loop ({n})", inner, "sympy", peer_s, note))
    text = build_and_dump()
    assert text.count(": Abs (") + text.count(": Add (") == 995
    build = measure(build_and_dump, repeat)[0]
    rows.append(row("asc HintGraph 1000 nodes x 5 axes: build + debug_str", build, "", None,
                    f"{len(text)} chars dumped"))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
