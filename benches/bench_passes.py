"""The pass layer (``ascendir.passes``) against onnx-ir's and torch.fx's pass infrastructure,
and compile times with the compiler's passes as pass objects.

(a) The Mul-by-1 fold over a graph of N nodes (branches ``Mul(Relu(x), 1)`` summed by a balanced
tree of ``Add``, one shared constant 1), two ways of ours: the rewrite rule ``x * 1 -> x``
(``ascendir.rewriter``, rewritten in bulk in Rust) and ``examples/passes.py``'s
``FoldIdentityArithmetic`` run by ``passes.PassManager`` (a Python pass over the value layer);
onnx-ir's is the same fold written as an ``onnx_ir.passes.InPlacePass`` run by
``onnx_ir.passes.PassManager`` over the same model (N = 1M); torch.fx's is
``torch.fx.subgraph_rewriter.replace_pattern`` of ``x * 1`` by ``x`` over an fx graph of the
same structure (N = 100k). A tree, not a chain: on a chain ``replace_pattern`` is quadratic
(2k nodes 1.1 s, 8k nodes 21.5 s on the 2-core dev machine), and so is the Python pass
(``bypass`` checks that moving the uses makes no cycle by walking the consumers'
descendants); the rewrite rule skips that walk (a capture feeds the root: no cycle can form).
Each side's time is the pass run only (the graph is built, or copied, outside the timing).

(b) ``air.compile`` of the models of ``models.py`` (bert, decoder, resnet50 at their default
sizes), without user passes (the path the restructure must keep within 5 %) and with a no-op
user pass after ``simplify`` (what a hook costs: the graph handed to Python and back, the
symbols made again). A dev (debug) build checks the graph's invariants between passes, so its
compile times are not release figures.
"""

from __future__ import annotations

import gc
import operator
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))

from timing import measure, row  # noqa: E402


def _tree(n: int) -> tuple[int, list[tuple[str, list[int]]]]:
    """The fold's graph of about ``n`` nodes as ``(leaves, ops)``: ``leaves`` branches
    ``Mul(Relu(x), one)`` summed by a balanced tree of ``Add``; ``ops`` are ``(type, inputs)``
    with inputs indexing earlier ops (``-1``: ``x``)."""
    leaves = max(2, n // 3)
    ops: list[tuple[str, list[int]]] = []
    level = []
    for _ in range(leaves):
        ops.append(("Relu", [-1]))
        ops.append(("Mul", [len(ops) - 1]))
        level.append(len(ops) - 1)
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[::2], level[1::2], strict=False):
            ops.append(("Add", [a, b]))
            nxt.append(len(ops) - 1)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return leaves, ops


def tree_model(n: int) -> Any:
    """An ONNX model of about ``n`` nodes over ``[1, 64]`` floats (:func:`_tree`); the ``Mul``
    reads a scalar initializer ``one`` of 1."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    _, ops = _tree(n)
    names = [f"v{i}" for i in range(len(ops))]
    nodes = []
    for i, (op, ins) in enumerate(ops):
        inputs = ["x" if k < 0 else names[k] for k in ins] + (["one"] if op == "Mul" else [])
        nodes.append(helper.make_node(op, inputs, [names[i]], name=f"n{i}"))
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    graph = helper.make_graph(
        nodes, "tree",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, [1, 64])],
        initializer=[one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


def _onnx_ir_fold() -> Any:
    """The Mul-by-1 fold as an onnx-ir in-place pass."""
    import numpy as np
    import onnx_ir as ir
    from onnx_ir import passes as irp

    class FoldMulByOne(irp.InPlacePass):
        def call(self, model: ir.Model) -> irp.PassResult:
            modified = False
            graph = model.graph
            for node in list(graph):
                if node.op_type != "Mul" or node.domain != "":
                    continue
                x, c = node.inputs[0], node.inputs[1]
                value = c.const_value if c is not None else None
                if x is None or value is None or not np.all(value.numpy() == 1):
                    continue
                out = node.outputs[0]
                if out.shape != x.shape or out.dtype != x.dtype or out.is_graph_output():
                    continue
                ir.convenience.replace_all_uses_with(out, x)
                graph.remove(node, safe=True)
                modified = True
            return irp.PassResult(model, modified)

    return irp.PassManager([FoldMulByOne()])


def _fx_graph(n: int) -> Any:
    """An fx GraphModule of the structure of :func:`tree_model` (``x * 1`` for the Mul)."""
    import torch
    import torch.fx as fx

    _, ops = _tree(n)
    g = fx.Graph()
    x = g.placeholder("x")
    made: list[Any] = []
    for op, ins in ops:
        args = [x if k < 0 else made[k] for k in ins]
        if op == "Relu":
            made.append(g.call_function(torch.relu, (args[0],)))
        elif op == "Mul":
            made.append(g.call_function(operator.mul, (args[0], 1)))
        else:
            made.append(g.call_function(operator.add, (args[0], args[1])))
    g.output(made[-1])
    return fx.GraphModule(torch.nn.Module(), g)


def _mul_by_one() -> Any:
    """The fold as a rewrite rule (``x * 1 → x``): the rewriter applies it in bulk in Rust."""
    from ascendir import rewriter

    def pattern(op, x):  # type: ignore[no-untyped-def]
        return op.Mul(x, op.Const(1.0))

    def replacement(op, x):  # type: ignore[no-untyped-def]
        return x

    return rewriter.RewriteRuleSet([rewriter.RewriteRule(pattern, replacement, name="mul1")])


def _fold_rows(quick: bool) -> list[dict]:
    import onnx_ir as ir
    import torch.fx.subgraph_rewriter as sr

    import ascendir as air
    from ascendir import passes
    from passes import FoldIdentityArithmetic

    rows = []
    sizes = ((20_000, 10_000) if quick else (1_000_000, 100_000))
    for n, peer in zip(sizes, ("onnx-ir", "torch.fx"), strict=True):
        proto = tree_model(n)
        base = air.onnx.load(proto)
        folds = sum(1 for node in base.nodes if node.type == "Mul")

        def rule(base: Any = base) -> float:
            g = base.copy()
            rules = _mul_by_one()
            t = measure(lambda: rules.apply(g, max_rounds=1), 1)[0]
            assert not g.find_nodes(op_type="Mul")
            return t

        def python_pass(base: Any = base) -> float:
            g = base.copy()
            pm = passes.PassManager([FoldIdentityArithmetic()], check_invariants=False)
            t = measure(lambda: pm(g), 1)[0]
            assert not g.find_nodes(op_type="Mul")
            return t

        if peer == "onnx-ir":
            def theirs(proto: Any = proto) -> float:
                model = ir.serde.deserialize_model(proto)
                pm = _onnx_ir_fold()
                t = measure(lambda: pm(model), 1)[0]
                assert not any(node.op_type == "Mul" for node in model.graph)
                return t

            label = "onnx_ir.passes.PassManager"
        else:
            def theirs(n: int = n) -> float:
                gm = _fx_graph(n)
                t = measure(lambda: sr.replace_pattern(gm, lambda x: x * 1, lambda x: x), 1)[0]
                assert not any(node.target is operator.mul for node in gm.graph.nodes)
                return t

            label = "torch.fx replace_pattern"
        t_peer = theirs()
        size = len(_tree(n)[1])
        rows.append(row(f"fold Mul-by-1, tree of {size} nodes (rewrite rule)", rule(), label,
                        t_peer, note=f"{folds} Muls folded; ours: the rule x * 1 -> x, "
                                     "rewritten in bulk in Rust"))
        rows.append(row(f"fold Mul-by-1, tree of {size} nodes (Python pass)", python_pass(),
                        label, t_peer, note="ours: examples/passes.py FoldIdentityArithmetic "
                                            "via passes.PassManager"))
        del base, proto
        gc.collect()
    return rows


class _NoOp:
    """A user pass that changes nothing (built lazily: ascendir is imported in ``run``)."""

    @staticmethod
    def make() -> Any:
        from ascendir import passes

        class NoOp(passes.InPlacePass):
            def call(self, graph: Any) -> passes.PassResult:
                return passes.PassResult(graph, False)

        return NoOp()


def _compile_rows(quick: bool) -> list[dict]:
    import ascendir as air
    import models

    rows = []
    repeat = 1 if quick else 2
    graphs = {"bert": models.bert(), "decoder": models.decoder(), "resnet50": models.resnet50()}
    noop = _NoOp.make()
    for name, proto in graphs.items():
        g = air.onnx.load(proto)
        plain = measure(lambda g=g: air.compile(g), repeat)[0]
        hooked = measure(lambda g=g: air.compile(g, passes=[("after", "simplify", noop)]),
                         repeat)[0]
        rows.append(row(f"compile {name} ({len(g.nodes)} nodes)", plain,
                        "same + no-op user pass", hooked,
                        note="dev builds check invariants between passes: not release times"))
    return rows


def run(quick: bool) -> list[dict]:
    """Rows: the Mul-by-1 fold against onnx-ir (1M nodes) and torch.fx (100k nodes); compile
    times of bert, decoder and resnet50."""
    return _fold_rows(quick) + _compile_rows(quick)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for r in run(args.quick):
        ratio = r["ratio"]
        print(f"{r['name']:<44} ours {r['ours_s']:.4f} s  {r['peer']:<28} "
              f"{r['peer_s']:.4f} s  ratio {'' if ratio is None else f'{ratio:.2f}x'}  "
              f"{r['note']}")
