"""GE's replacement helper (``ge.passes.replacement``)."""

from __future__ import annotations

from ..error import GeTypeError
from ..graph import Graph

__all__ = ["create_replacement"]


def create_replacement(graph: Graph) -> Graph:
    """``graph`` as a replacement graph (checked to be a ``ge.graph.Graph``)."""
    if not isinstance(graph, Graph):
        raise GeTypeError("replacement graph must be a ge.graph.Graph")
    return graph
