"""The tiling solver: ``solve_tiling(impls, target=..., sizes={...})``.

The UB usage of every ImplGraph is a symbolic function of its tile sizes; the solver orders
the variables by priority, gives each tile variable the largest aligned value that fits the
UB (binary search), each block variable the smallest value with ``block_dim ≤ cores``, and
picks the template with the lowest cost (ties → higher UB use). ``compile_tiling`` returns a
reusable :class:`TilingFunction`. Failures raise :class:`ascendir.errors.TilingError` whose
``constraint`` (``"ub"``, ``"cores"``, ``"shape"``) and ``excess`` say what cannot be met.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._core import asc_backend as _be
from .schedule import _core_of

Target = _be.Target
TilingData = _be.TilingData
TilingFunction = _be.TilingFunction


def _cores(impls: Any) -> list[Any]:
    if isinstance(impls, Iterable) and not hasattr(impls, "_core"):
        return [_core_of(g) for g in impls]
    return [_core_of(impls)]


def solve_tiling(
    impls: Any, target: Any = None, sizes: dict[str, int] | None = None
) -> Any:
    """Solve the best tiling of ``impls`` (one ImplGraph or a list) for ``sizes``."""
    tgt = target if target is not None else Target.ascend910b()
    return _be.solve_tiling(_cores(impls), tgt, dict(sizes or {}))


def compile_tiling(impls: Any, target: Any = None) -> Any:
    """A compiled tiling function: ``fn(sizes)`` / ``fn(s0=...)`` / ``fn.solve_values([...])``."""
    tgt = target if target is not None else Target.ascend910b()
    return TilingFunction(_cores(impls), tgt)


def tiling_problem(impl: Any, target: Any = None) -> dict[str, Any]:
    """Variables (name, kind, align, upper) in priority order and the UB / block_dim models."""
    tgt = target if target is not None else Target.ascend910b()
    return dict(_be.tiling_problem(_core_of(impl), tgt))


__all__ = [
    "Target",
    "TilingData",
    "TilingFunction",
    "compile_tiling",
    "solve_tiling",
    "tiling_problem",
]
