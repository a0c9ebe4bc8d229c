"""``ascendir.ge.es.custom``: GE's ``ge.es.custom`` op functions, for the types registered by
the user (``ascendir.register_op``), made from ascendir's op registry (see
:mod:`ascendir.ge.es._ops` for their signature and the grouping)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _ops


def __getattr__(name: str) -> Callable[..., Any]:
    if name.startswith("_"):
        raise AttributeError(name)
    return _ops.op_function(name, "custom")


def __dir__() -> list[str]:
    return _ops.op_types("custom")
