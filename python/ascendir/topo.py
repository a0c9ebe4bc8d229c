"""Topological sorting modes and GE's option mapping.

``Graph.topo_sort(mode=...)`` accepts a :class:`TopoMode` or its name. GE chooses the mode from
its session options; :meth:`TopoMode.from_options` and :func:`sort_options` reproduce that
choice exactly, quirks included (a non-numeric ``ge.topoSortingMode`` selects BFS).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from . import _core

#: GE option keys read by the sorter.
OPTION_TOPOSORTING_MODE = "ge.topoSortingMode"
OPTION_GRAPH_RUN_MODE = "ge.graphRunMode"
OPTION_MEMORY_OPTIMIZATION_POLICY = "ge.exec.memoryOptimizationPolicy"


class TopoMode(enum.IntEnum):
    """GE's ``TopoSortingMode`` (the numbers are GE's)."""

    BFS = 0
    """Breadth first from the sources; one seed's region drains before the next seed."""
    DFS = 1
    """Depth first from the sources (GE's inference default)."""
    RDFS = 2
    """Reverse depth first from the sinks, smallest producer first; then DelayTopoSort."""
    STABLE_RDFS = 3
    """Keep the current order wherever it is legal."""

    @property
    def label(self) -> str:
        """The name ``Graph.topo_sort`` accepts (``"bfs"``, ``"dfs"``, ``"rdfs"``, ...)."""
        return self.name.lower()

    @classmethod
    def from_name(cls, name: str) -> TopoMode:
        """Parse ``"bfs"``, ``"dfs"``, ``"rdfs"`` or ``"stable_rdfs"`` (case-insensitive)."""
        key = name.strip().upper().replace("-", "_")
        if key == "STABLERDFS":
            key = "STABLE_RDFS"
        try:
            return cls[key]
        except KeyError:
            from .errors import InvalidArgumentError

            raise InvalidArgumentError(
                f"unknown topological sorting mode {name!r} "
                "(expected bfs, dfs, rdfs or stable_rdfs)"
            ) from None

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> TopoMode:
        """The mode GE picks for these session options.

        ``ge.topoSortingMode`` is parsed like C ``strtol`` (``"abc"`` → 0 → BFS); an empty
        value or a number outside 0..3 falls back to ``ge.graphRunMode``: 1 or more
        (training) → BFS, otherwise DFS.
        """
        mode = options.get(OPTION_TOPOSORTING_MODE)
        run = options.get(OPTION_GRAPH_RUN_MODE)
        return cls(
            _core.topo_mode_from_ge_options(
                None if mode is None else str(mode), None if run is None else str(run)
            )
        )


def memory_priority_from_options(options: Mapping[str, Any]) -> bool:
    """Whether ``ge.exec.memoryOptimizationPolicy`` is exactly ``"MemoryPriority"``."""
    policy = options.get(OPTION_MEMORY_OPTIMIZATION_POLICY)
    return bool(_core.memory_priority_from_ge_options(None if policy is None else str(policy)))


def sort_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ``Graph.topo_sort`` that reproduce GE's choice for ``options``.

    >>> g.topo_sort(**sort_options({"ge.graphRunMode": "1"}))  # doctest: +SKIP
    """
    return {
        "mode": TopoMode.from_options(options),
        "memory_priority": memory_priority_from_options(options),
    }


__all__ = [
    "OPTION_GRAPH_RUN_MODE",
    "OPTION_MEMORY_OPTIMIZATION_POLICY",
    "OPTION_TOPOSORTING_MODE",
    "TopoMode",
    "memory_priority_from_options",
    "sort_options",
]
