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


def _chain(k: int) -> bytes:
    """``k`` blocks ``h = Relu(h * one)`` over one initializer of ones: ``2k`` nodes."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes = []
    h = "x"
    for i in range(k):
        nodes.append(helper.make_node("Mul", [h, "one"], [f"m{i}"], name=f"m{i}"))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"r{i}"))
        h = f"r{i}"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.ones((1,), np.float32), "one")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def _onnx_ir_fold(data: bytes) -> float:
    """The same fold written with onnx-ir's pass infrastructure; returns seconds."""
    import numpy as np
    import onnx
    import onnx_ir as ir

    class FoldMulByOne(ir.passes.InPlacePass):
        def call(self, model):  # type: ignore[no-untyped-def]
            g = model.graph
            count = 0
            for node in list(g):
                c = node.inputs[1] if node.op_type == "Mul" else None
                if c is None or c.const_value is None or not np.all(c.const_value.numpy() == 1):
                    continue
                ir.convenience.replace_all_uses_with(node.outputs[0], node.inputs[0])
                g.remove(node, safe=True)
                count += 1
            return ir.passes.PassResult(model, count > 0)

    model = ir.serde.deserialize_model(onnx.load_from_string(data))
    t = time.perf_counter()
    FoldMulByOne()(model)
    return time.perf_counter() - t


def fold(k: int) -> None:
    """The Mul-by-1 fold over ``2k`` nodes: ascendir's rewriter vs onnx-ir."""
    data = _chain(k)
    g = air.onnx.from_bytes(data)
    rules = rewriter.RewriteRuleSet([_rule_mul_one()])
    t = time.perf_counter()
    n = rules.apply(g, max_rounds=1)
    ours = time.perf_counter() - t
    theirs = _onnx_ir_fold(data)
    print(f"Mul-by-1 fold over {2 * k} nodes: {n} rewrites, ascendir {ours * 1e3:.1f} ms, "
          f"onnx-ir {theirs * 1e3:.1f} ms ({theirs / ours:.1f}x)")


def _rule_mul_one() -> rewriter.RewriteRule:
    def pattern(op, x):  # type: ignore[no-untyped-def]
        return op.Mul(x, op.Const(1.0))

    def replacement(op, x):  # type: ignore[no-untyped-def]
        return x

    return rewriter.RewriteRule(pattern, replacement, name="mul_one")


def main() -> None:
    """Print ms per find_matches for 10, 50 and 200 rules and the 200/10 ratio, then the
    Mul-by-1 fold (``python benches/bench_rewrite.py [blocks]``, 500000 blocks by default)."""
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
    fold(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)


if __name__ == "__main__":
    main()
