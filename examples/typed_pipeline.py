"""A typed tour of the public API: build a graph, infer shapes, save and reload it in every
format, inspect attributes. It passes ``mypy --strict`` (tests/test_stubs.py checks that).

Run: ``python examples/typed_pipeline.py [OUT_DIR]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import ascendir as air


def build(batch: int) -> air.Graph:
    """A Conv2D -> Relu -> Add block in float16."""
    g = air.Graph("typed_block")
    x: air.Node = g.add_input("x", air.TensorDesc([batch, 8, 16, 16], air.DataType.FLOAT16,
                                                  format=air.Format.NCHW))
    w = g.add_const("w", np.ones((8, 8, 3, 3), np.float16))
    conv = g.add_op("Conv2D", [x, w], name="conv",
                    attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1]})
    relu = g.add_op("Relu", [conv], name="relu")
    add = g.add_op("Add", [relu, x], name="skip")
    g.set_outputs([add])
    g.infer_shapes()
    return g


def output_shape(g: air.Graph) -> list[int]:
    """The shape of the graph's first output."""
    node, index = g.outputs[0]
    return list(node.op_desc.output_desc(index).shape)


def round_trip(g: air.Graph, out_dir: Path) -> dict[str, int]:
    """Save ``g`` in each format and reload it; returns the node count read back per file."""
    counts: dict[str, int] = {}
    for suffix in (".pb", ".txt", ".om", ".onnx"):
        path = out_dir / f"block{suffix}"
        air.save(g, path)
        back: air.Graph = air.load(path)
        counts[path.name] = len(back)
    return counts


def main(argv: list[str]) -> int:
    """Build, check and round-trip the block; prints one line per step."""
    g = build(batch=2)
    g.validate()
    dtype: air.DataType = g.node("conv").op_desc.output_desc(0).dtype
    assert dtype is air.DataType.FLOAT16
    kind: air.AttrKind = g.node("conv").attrs.kind("strides")
    print(f"output shape {output_shape(g)}, dtype {dtype.name}, strides kind {kind.name}")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(argv[0]) if argv else Path(tmp)
        for name, n in round_trip(g, out_dir).items():
            print(f"{name}: {n} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
