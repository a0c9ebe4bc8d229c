"""The merged pattern matcher over the 21k-node decoder of ``models.py``: ``find_matches`` with
10, 50 and 200 registered rules (their cost should grow far slower than the rule count: one
walk, shared sub-patterns checked once), and the ``Mul``-by-1 fold.

Run: ``python benches/bench_rewrite.py``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ascendir as air  # noqa: E402
from ascendir import rewriter  # noqa: E402
from models import decoder  # noqa: E402

# Root op types present in the decoder; each rule asks for a binary op with a constant operand.
_TYPES = ("Mul", "Add", "Sub", "RealDiv", "Pow", "Maximum")


def _rule(i: int) -> rewriter.RewriteRule:
    op_type, value = _TYPES[i % len(_TYPES)], float(i // len(_TYPES) + 1)

    def pattern(op, x):  # type: ignore[no-untyped-def]
        return getattr(op, op_type)(x, op.Const(value))

    def replacement(op, x):  # type: ignore[no-untyped-def]
        return x

    return rewriter.RewriteRule(pattern, replacement, name=f"r{i}")


def _best(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    """Print ms per find_matches for 10, 50 and 200 rules and the 200/10 ratio."""
    g = air.onnx.from_bytes(decoder().SerializeToString())
    print(f"decoder: {len(g.nodes)} nodes")
    times = {}
    for n in (10, 50, 200):
        rules = rewriter.RewriteRuleSet([_rule(i) for i in range(n)])
        found = len(rules.find_matches(g))
        times[n] = _best(lambda: rules.find_matches(g))  # noqa: B023
        print(f"{n:4} rules ({rules.shared_nodes:4} shared pattern nodes): "
              f"{times[n] * 1e3:8.2f} ms, {found} matches")
    print(f"200 / 10 rules: {times[200] / times[10]:.2f}x")


if __name__ == "__main__":
    main()
