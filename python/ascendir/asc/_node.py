"""Nodes of an AscGraph: the node class (subclassed per op type in :mod:`ascendir.asc.ops`), its
outputs and the attribute proxies ``node.attr.sched``, ``node.attr.api`` and
``node.attr.ir_attr``.

The handles are the Rust engine's (``ascendir._core.asc``): every read and write goes straight
to the graph. This module adds what is Python's: construction by op class and port assignment
(``node.x = other``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._core import asc as _casc
from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._graph import AscGraph

Output = _casc.Output
NodeAttr = _casc.NodeAttr
SchedProxy = _casc.SchedProxy
ApiProxy = _casc.ApiProxy
IrAttrProxy = _casc.IrAttrProxy
TensorAttrGroup = _casc.TensorAttrGroup


class Node(_casc.Node):
    """An AscIR node (``asc.ops.Abs("abs", graph)``); ports are attributes (``node.x = other``,
    ``node.y.dtype``), attributes live under ``node.attr``.

    A node created without a graph joins one when it is linked to a node of that graph or
    given axes of that graph.
    """

    op_type: str = ""

    def __init__(self, name: str, graph: AscGraph | None = None) -> None:
        self._create(name, graph)

    def __setattr__(self, name: str, value: Any) -> None:
        kind = None if name.startswith("_") else self._port_kind(name)
        if kind == "in":
            self._link(name, value)
        elif kind == "in_dynamic":
            self._link_dynamic(name, value)
        elif kind == "out":
            raise InvalidArgumentError(f"output '{name}' of node '{self.name}' cannot be assigned")
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name == "attr":  # GE scripts do ``del x.attr``: a no-op
            return
        object.__delattr__(self, name)


def _node_class(op_type: str) -> type[Node]:
    from . import ops

    return ops._class_for(op_type)
