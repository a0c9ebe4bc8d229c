"""Axes of an AscGraph (GE's ``ge::Axis``): the axis handle, its type and compute-unit enums,
and the helpers that resolve axis arguments."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._core import asc as _casc
from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._graph import AscGraph


class AxisType(enum.IntEnum):
    """GE's ``ge::Axis::Type`` (names and numbers)."""

    ORIGINAL = 0
    BLOCK_OUTER = 1
    BLOCK_INNER = 2
    TILE_OUTER = 3
    TILE_INNER = 4
    MERGED = 5
    INVALID = 6


class ComputeUnit(enum.IntEnum):
    """GE's ``ge::ComputeUnit`` (names and numbers): the unit an API runs on."""

    NONE = 0
    MTE1 = 1
    MTE2 = 2
    MTE3 = 3
    SCALAR = 4
    VECTOR = 5
    CUBE = 6
    INVALID = 7

SizeExpr = _casc.Expr




class Axis:
    """A handle to one axis of a graph (compare, hash and use it in views and maps)."""

    __slots__ = ("_graph", "_id")

    def __init__(self, graph: AscGraph, axis_id: int) -> None:
        self._graph = graph
        self._id = axis_id

    def _info(self) -> dict[str, Any]:
        return self._graph._core.axis_info(self._id)

    @property
    def graph(self) -> AscGraph:
        """The owning graph."""
        return self._graph

    @property
    def id(self) -> int:
        """Axis id (its index in the graph)."""
        return self._id

    @property
    def name(self) -> str:
        """Axis name."""
        return self._info()["name"]

    @property
    def size(self) -> SizeExpr:
        """Axis length."""
        return self._info()["size"]

    @property
    def type(self) -> AxisType:
        """GE's axis type (:class:`AxisType`, an ``int``: ORIGINAL=0 ... MERGED=5)."""
        return AxisType(int(self._info()["type"]))

    @property
    def type_name(self) -> str:
        """GE's dump name of the type (``ORIGINAL``, ``TILE_IN``, ...)."""
        return self._info()["type_name"]

    @property
    def from_axes(self) -> list[Axis]:
        """Parent axes (split: the parent; merge: the merged axes)."""
        return [Axis(self._graph, i) for i in self._info()["from"]]

    @property
    def split_pair(self) -> Axis | None:
        """The sibling of the same split, or None."""
        other = self._info()["split_pair_other_id"]
        return None if other < 0 else Axis(self._graph, other)

    @property
    def align(self) -> SizeExpr:
        """Hard alignment of the tile size."""
        return self._info()["align"]

    @align.setter
    def align(self, value: SizeExpr | int) -> None:
        self._graph._core.set_axis_field(self._id, "align", value)

    @property
    def allow_unaligned_tail(self) -> bool:
        """``False`` requires the parent size to be a multiple of this axis' size."""
        return self._info()["allow_unaligned_tail"]

    @allow_unaligned_tail.setter
    def allow_unaligned_tail(self, value: bool) -> None:
        self._graph._core.set_axis_field(self._id, "allow_unaligned_tail", bool(value))

    @property
    def allow_oversize_axis(self) -> bool:
        """Allow padding beyond the size (tiling)."""
        return self._info()["allow_oversize_axis"]

    @allow_oversize_axis.setter
    def allow_oversize_axis(self, value: bool) -> None:
        self._graph._core.set_axis_field(self._id, "allow_oversize_axis", bool(value))

    @property
    def bind_block(self) -> bool:
        """Whether this is a block axis."""
        return self._info()["bind_block"]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Axis) and other._graph is self._graph and other._id == self._id

    def __hash__(self) -> int:
        return hash((id(self._graph), self._id))

    def __repr__(self) -> str:
        info = self._info()
        return f"Axis({info['name']}, id={self._id}, size={info['size']})"


def _axis_id(graph: AscGraph | None, value: Axis | int) -> int:
    if isinstance(value, Axis):
        if graph is not None and value._graph is not graph:
            raise InvalidArgumentError(f"axis {value.name} belongs to another graph")
        return value._id
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidArgumentError(f"expected an Axis or an axis id, got {value!r}")


def _axis_graph(values: Iterable[Any]) -> AscGraph | None:
    for v in values:
        if isinstance(v, Axis):
            return v._graph
    return None

