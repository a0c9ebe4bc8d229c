"""Scheduling a HintGraph into ImplGraphs and allocating their Unified Buffer
(docs/ASCGRAPH_BACKEND.md).

``schedule(hint)`` returns one ImplGraph per tiling case and template, each with its
``tiling_key`` and its UB allocation written into the tensors' ``mem``/``que``/``buf``.
``Autofuser(AutofuserOptions()).schedule(hint)`` is the GE-style spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._core import asc_backend as _be


def _core_of(graph: Any) -> Any:
    """The engine object behind a graph wrapper (or the object itself)."""
    return getattr(graph, "_core", graph)


def _wrap(core: Any) -> Any:
    """Wrap an engine graph as the package's ImplGraph when that class is available."""
    try:
        from ._graph import ImplGraph
    except ImportError:  # pragma: no cover - the graph package is always present
        return core
    return ImplGraph._from_core(core)


@dataclass
class AutofuserOptions:
    """Options of the scheduler.

    ``merge_contiguous_axes``: merge adjacent loop axes that are contiguous in every view
    first; ``unaligned_template``: also emit the ``_unaligned`` template where valid;
    ``all_load_reduce``: also emit the all-load reduce template; ``reduce_over_cores``: for a
    reduction over every axis, also emit the template that splits the reduce over cores and
    combines the partial results with atomic Stores; ``allocate``: run the UB
    allocator on every ImplGraph; ``max_que_num``: VECIN queue limit of the allocator;
    ``insert_ub2ub``: insert ``Ub2ub`` copies to respect that limit.
    """

    merge_contiguous_axes: bool = True
    unaligned_template: bool = True
    all_load_reduce: bool = True
    reduce_over_cores: bool = True
    allocate: bool = True
    max_que_num: int = 4
    insert_ub2ub: bool = True

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of the engine call."""
        return {
            "merge_contiguous_axes": self.merge_contiguous_axes,
            "unaligned_template": self.unaligned_template,
            "all_load_reduce": self.all_load_reduce,
            "reduce_over_cores": self.reduce_over_cores,
            "allocate": self.allocate,
            "max_que_num": self.max_que_num,
            "insert_ub2ub": self.insert_ub2ub,
        }


def schedule(hint: Any, options: AutofuserOptions | None = None) -> list[Any]:
    """Schedule ``hint`` into ImplGraphs (one per tiling case and template)."""
    opts = options or AutofuserOptions()
    return [_wrap(c) for c in _be.schedule(_core_of(hint), **opts.as_kwargs())]


class Autofuser:
    """GE's ``Autofuser``: ``Autofuser(AutofuserOptions()).schedule(hint)``."""

    def __init__(self, options: AutofuserOptions | None = None) -> None:
        self.options = options or AutofuserOptions()

    def schedule(self, hint: Any) -> list[Any]:
        """Schedule ``hint`` with this fuser's options."""
        return schedule(hint, self.options)


def tiling_group(hint: Any) -> dict[str, list[int]]:
    """The merged tiling group of a HintGraph: ``{"x", "y", "r", "n"}`` axis id lists."""
    return dict(_be.tiling_group(_core_of(hint)))


def merge_groups(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]] | None:
    """Merge two tiling groups (GE's merge table); None when they cannot be fused."""
    r = _be.merge_groups(a, b)
    return None if r is None else dict(r)


def merge_contiguous_axes(hint: Any) -> Any:
    """A copy of ``hint`` with contiguous loop axes merged (ids renumbered)."""
    return _wrap(_be.merge_contiguous_axes(_core_of(hint)))


def allocate(graph: Any, max_que_num: int = 4, insert_ub2ub: bool = True) -> dict[str, Any]:
    """Run the UB allocator on ``graph`` in place.

    Returns the report: ``containers`` (kind, id, name, position, buf_num, members, slot
    bytes as a size expression), ``peak_ub_bytes`` and ``live_bytes_lower_bound`` (size
    expressions of the tile sizes), ``inserted`` (``Ub2ub`` nodes) and ``vecin_queues``.
    """
    return dict(_be.allocate(_core_of(graph), max_que_num, insert_ub2ub))


__all__ = [
    "Autofuser",
    "AutofuserOptions",
    "allocate",
    "merge_contiguous_axes",
    "merge_groups",
    "schedule",
    "tiling_group",
]
