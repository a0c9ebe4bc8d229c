"""The ``ascendir`` command line.

``ascendir demo`` builds a small ResNet-style block through the Python API, sorts it and
prints a readable summary; ``ascendir convert SRC DST`` converts between ONNX, GE ModelDef
(binary or text) and OM files; ``ascendir inspect FILE`` summarizes a model.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import Graph, Node, TensorDesc, float16

__all__ = ["build_demo_graph", "main", "summary"]


def build_demo_graph() -> Graph:
    """A ResNet basic block: two 3x3 convolutions with batch norm, a skip connection, ReLU."""
    import numpy as np

    g = Graph("resnet_block")
    x = g.add_input("x", TensorDesc([1, 64, 56, 56], float16, format="NCHW"))
    rng = np.random.default_rng(0)

    def conv_bn(src: Node, prefix: str, relu: bool) -> Node:
        w = g.add_const(f"{prefix}_w", rng.standard_normal((64, 64, 3, 3)).astype(np.float16))
        out_desc = TensorDesc([1, 64, 56, 56], float16, format="NCHW")
        conv = g.add_op(
            "Conv2D",
            [src, w],
            name=f"{prefix}_conv",
            input_names=["x", "filter"],
            outputs=["y"],
            output_descs=[out_desc],
            attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1]},
        )
        params = [
            g.add_const(f"{prefix}_{p}", np.ones(64, np.float32))
            for p in ("scale", "offset", "mean", "variance")
        ]
        bn = g.add_op(
            "BatchNorm",
            [conv, *params],
            name=f"{prefix}_bn",
            input_names=["x", "scale", "offset", "mean", "variance"],
            outputs=["y"],
            output_descs=[out_desc],
            attrs={"epsilon": 1e-5, "is_training": False},
        )
        if not relu:
            return bn
        return g.add_op("Relu", [bn], name=f"{prefix}_relu", input_names=["x"],
                        outputs=["y"], output_descs=[out_desc])

    branch = conv_bn(conv_bn(x, "conv1", relu=True), "conv2", relu=False)
    out_desc = TensorDesc([1, 64, 56, 56], float16, format="NCHW")
    add = g.add_op("Add", [branch, x], name="skip_add", input_names=["x1", "x2"],
                   outputs=["y"], output_descs=[out_desc])
    relu = g.add_op("Relu", [add], name="out_relu", input_names=["x"], outputs=["y"],
                    output_descs=[out_desc])
    g.set_outputs([relu])
    return g


def summary(graph: Graph) -> str:
    """A readable multi-line summary: counts by type, inputs, outputs and the node order."""
    lines = [f"graph '{graph.name}': {len(graph)} nodes, {graph.num_links} links"]
    counts = ", ".join(f"{t} x{n}" for t, n in graph.op_type_counts().items())
    lines.append(f"  op types: {counts}")
    for node in graph.inputs:
        desc = node.op_desc.output_desc(0)
        lines.append(f"  input  {node.name}: {list(desc.shape)} {desc.dtype.name}")
    for node, index in graph.outputs:
        desc = node.op_desc.output_desc(index)
        lines.append(f"  output {node.name}:{index}: {list(desc.shape)} {desc.dtype.name}")
    lines.append("  order:")
    for node in graph:
        producers = ", ".join(n.name for n in node.in_data_nodes) or "-"
        lines.append(f"    #{node.id:<3} {node.type:<10} {node.name:<16} <- {producers}")
    return "\n".join(lines)


def _cmd_demo(args: argparse.Namespace) -> int:
    graph = build_demo_graph()
    graph.topo_sort(mode=args.mode)
    problems = graph.problems()
    print(summary(graph))
    if problems:
        print("invariant problems:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ascendir`` command."""
    parser = argparse.ArgumentParser(prog="ascendir", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build, sort and summarize a small ResNet block")
    demo.add_argument("--mode", default="dfs", choices=["bfs", "dfs", "rdfs", "stable_rdfs"])
    demo.set_defaults(func=_cmd_demo)
    from .onnx.cli_commands import add_convert_command, add_inspect_command

    add_convert_command(sub)
    add_inspect_command(sub)
    from .compiler.cli import add_compile_command

    add_compile_command(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
