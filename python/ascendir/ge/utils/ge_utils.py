"""GE's ``GeUtils``: shape inference of a graph, and whether a node has a kernel."""

from __future__ import annotations

from typing import Any

from ..error import GeError, GeTypeError, GeValueError
from ..graph import Graph, Node

__all__ = ["GeUtils"]


def _shape(value: Any, i: int) -> list[int]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise GeTypeError(f"input_shapes[{i}] must be a list of integers")
    dims = list(value)
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise GeTypeError(f"input_shapes[{i}] must be a list of integers")
    return dims


class GeUtils:
    """GE's utility functions (static methods)."""

    @staticmethod
    def infer_shape(graph: Graph, input_shapes: list[list[int]]) -> None:
        """Give the graph's inputs (in index order) the shapes ``input_shapes`` and infer every
        node's output shapes and dtypes (nothing else changes: no folding, no pruning)."""
        if not isinstance(graph, Graph):
            raise GeTypeError("graph must be a ge.graph.Graph")
        if isinstance(input_shapes, (str, bytes)) or not isinstance(input_shapes, (list, tuple)):
            raise GeTypeError("input_shapes must be a list of shapes")
        g = graph.air
        shapes = [_shape(s, i) for i, s in enumerate(input_shapes)]
        data = sorted((n for n in g.nodes if n.type == "Data"),
                      key=lambda n: int(n.attrs.get("index", 0)))
        if len(shapes) != len(data):
            raise GeValueError(f"infer_shape: the graph has {len(data)} inputs, "
                               f"input_shapes gives {len(shapes)}")
        for n, dims in zip(data, shapes, strict=True):
            d = n.op_desc.output_desc(0).copy()
            d.shape = tuple(dims)
            if hasattr(d, "origin_shape"):
                d.origin_shape = tuple(dims)
            n.op_desc.update_input_desc(0, d)
            n.op_desc.update_output_desc(0, d.copy())
        try:
            g.infer_shapes()
        except Exception as e:
            raise GeError(f"infer_shape failed; graph={g.name}; {e}") from e

    @staticmethod
    def check_node_support_on_aicore(node: Node) -> tuple[bool, str]:
        """Whether ascendir's compiler has a kernel lowering for the node's type (its
        AICore), and why not."""
        from ...compiler import lowered_types

        if not isinstance(node, Node):
            raise GeTypeError("node must be a ge.graph.Node")
        if node.type in set(lowered_types()):
            return True, ""
        return False, f"op type {node.type} has no kernel lowering"
