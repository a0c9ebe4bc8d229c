"""The pattern rewriter (``ascendir.rewriter``): its one merged matcher over the 21k-node decoder
of ``models.py`` with 10, 50 and 200 registered rules (the cost should grow far slower than the
rule count: one walk, shared sub-patterns checked once), and the same rules applied by
onnxscript's rewriter (``RewriteRuleSet.apply_to_model``) on the decoder and on BERT.

The rules are the matcher's workload, not meaningful rewrites: rule ``i`` rewrites
``op(x, c)`` to ``x`` for a binary op and a scalar constant ``c`` (``Mul``, ``Add``, ``Sub``,
``RealDiv`` / ``Div``, ``Pow``, ``Maximum`` / ``Max``; ``c`` = 1, 2, ...). onnxscript's
replacement is ``Identity(x)`` (its replacement must be a node), ours reads ``x`` directly. Each
side's time is finding and rewriting, the model loaded outside the timing.

Run: ``python benches/bench_rewrite.py [--quick]`` or ``python benches/run.py --only rewrite``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import row  # noqa: E402

# Root op types present in the decoder: ours (GE) and ONNX's names.
_TYPES = (("Mul", "Mul"), ("Add", "Add"), ("Sub", "Sub"), ("RealDiv", "Div"), ("Pow", "Pow"),
          ("Maximum", "Max"))


def _spec(i: int) -> tuple[str, str, float]:
    ge, onnx_type = _TYPES[i % len(_TYPES)]
    return ge, onnx_type, float(i // len(_TYPES) + 1)


def _ours(n: int) -> Any:
    from ascendir import rewriter

    def rule(i: int) -> rewriter.RewriteRule:
        ge, _, value = _spec(i)

        def pattern(op, x):  # type: ignore[no-untyped-def]
            return getattr(op, ge)(x, op.Const(value))

        def replacement(op, x):  # type: ignore[no-untyped-def]
            return x

        return rewriter.RewriteRule(pattern, replacement, name=f"r{i}")

    return rewriter.RewriteRuleSet([rule(i) for i in range(n)])


def _theirs(n: int) -> Any:
    from onnxscript.rewriter import pattern as orp

    def rule(i: int) -> Any:
        _, onnx_type, value = _spec(i)

        def target(op, x):  # type: ignore[no-untyped-def]
            return getattr(op, onnx_type)(x, value)

        def replacement(op, x):  # type: ignore[no-untyped-def]
            return op.Identity(x)

        return orp.RewriteRule(target, replacement)

    return orp.RewriteRuleSet([rule(i) for i in range(n)])


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _matcher_rows(g: Any, quick: bool) -> list[dict]:
    rows, times = [], {}
    for n in (10, 50, 200):
        rules = _ours(n)
        found = len(rules.find_matches(g))
        times[n] = _best(lambda rules=rules: rules.find_matches(g), 3 if quick else 5)
        rows.append(row(f"find_matches, {n} rules, decoder ({len(g.nodes)} nodes)", times[n],
                        note=f"{found} matches; {rules.shared_nodes} shared pattern nodes"))
    rows.append({"name": "matcher cost 200 rules / 10 rules", "note":
                 f"{times[200] / times[10]:.2f}x (target <= 2x)"})
    return rows


def _apply_rows(models: dict[str, Any]) -> list[dict]:
    import onnx_ir as ir

    import ascendir as air

    rows = []
    for name, proto in models.items():
        g = air.onnx.from_bytes(proto.SerializeToString())
        size = len(g.nodes)
        ours = _ours(50)
        t = time.perf_counter()
        n_ours = ours.apply(g)
        t_ours = time.perf_counter() - t
        model = ir.serde.deserialize_model(proto)
        theirs = _theirs(50)
        t = time.perf_counter()
        n_theirs = theirs.apply_to_model(model)
        t_theirs = time.perf_counter() - t
        rows.append(row(f"apply 50 rules, {name} ({size} nodes)", t_ours,
                        "onnxscript RewriteRuleSet.apply_to_model", t_theirs,
                        note=f"rewrites: ours {n_ours}, onnxscript {n_theirs}"))
    return rows


def run(quick: bool) -> list[dict]:
    """Rows: find_matches with 10, 50 and 200 rules over the decoder, the 200/10 cost, and 50
    rules applied to the decoder and BERT against onnxscript's rewriter."""
    import ascendir as air
    import models

    decoder = models.decoder(layers=4) if quick else models.decoder()
    g = air.onnx.from_bytes(decoder.SerializeToString())
    rows = _matcher_rows(g, quick)
    rows += _apply_rows({"decoder": decoder, "bert": models.bert()})
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        ratio = r.get("ratio")
        print(f"{r['name']:<48} ours {r.get('ours_s') or 0:.4f} s  {r.get('peer', ''):<42} "
              f"{r.get('peer_s') or 0:.4f} s  "
              f"{'' if ratio is None else f'ratio {ratio:.1f}x'}  {r['note']}")
