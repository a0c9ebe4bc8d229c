"""GE's ``ascir.utils`` helpers: :func:`debug_str`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._graph import AscGraph

__all__ = ["debug_str"]


def debug_str(graph: AscGraph, verbose: bool = False) -> str:
    """GE's text dump of ``graph`` (``verbose`` adds loop axis, API unit and memory)."""
    return graph.debug_str(verbose)
