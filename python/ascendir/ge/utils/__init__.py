"""``ascendir.ge.utils``: GE's ``ge.utils`` (:class:`GeUtils`)."""

from __future__ import annotations

from .ge_utils import GeUtils

__all__ = ["GeUtils"]
