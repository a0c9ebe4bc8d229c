"""Axes of an AscGraph (GE's ``ge::Axis``): the axis handle (the Rust engine's), its type and
compute-unit enums, and the helper that resolves axis arguments (an ``Axis`` or an id)."""

from __future__ import annotations

import enum

from .._core import asc as _casc


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

Axis = _casc.Axis
_axis_id = _casc._axis_id
