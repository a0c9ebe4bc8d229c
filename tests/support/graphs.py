"""Graphs built node by node from plain OpDescs."""

from __future__ import annotations

import ascendir as air


def plain_op(g: air.Graph, name: str, ty: str, inputs=(), outputs: int = 1, shape=(1, 4)):
    """A node built from a plain OpDesc (no registry checks), fed by ``inputs`` (None = open)."""
    od = air.OpDesc(name, ty)
    for i in range(len(inputs)):
        od.add_input(f"x{i}", air.TensorDesc([1, 4], air.float32))
    for i in range(outputs):
        od.add_output(f"y{i}", air.TensorDesc(list(shape), air.float32))
    node = g.add_node(od)
    for i, src in enumerate(inputs):
        if src is not None:
            src.out_data_anchor(0).link_to(node.in_data_anchor(i))
    return node
