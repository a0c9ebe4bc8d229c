"""Keep an AscGraph on an ``AscBackend`` node of a ComputeGraph, so that fused kernels travel
with the graph through GE ModelDef files (the bytes attribute survives save and load)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.asc import ASCGRAPH_ATTR_KEY
from ._graph import AscGraph

if TYPE_CHECKING:
    from .. import Node

__all__ = ["ASCGRAPH_ATTR_KEY", "load_from_node", "store_on_node"]



def store_on_node(node: Node, graph: AscGraph) -> None:
    """Serialize ``graph`` (``ascendc_ir.proto`` layout) into ``node``'s bytes attribute."""
    from ..types import AttrKind

    node.attrs.set(ASCGRAPH_ATTR_KEY, graph.to_bytes(), kind=AttrKind.BYTES)


def load_from_node(node: Node) -> AscGraph:
    """The AscGraph stored on ``node`` (``NotFoundError`` when it holds none)."""
    return AscGraph.from_bytes(node.attrs[ASCGRAPH_ATTR_KEY])
