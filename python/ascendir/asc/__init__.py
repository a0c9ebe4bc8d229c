"""The AscGraph engine (``from ascendir import asc``), mirroring GE's ``pyascir``.

Build a :class:`HintGraph` with ``create_size`` / ``create_axis`` and ``asc.ops.<Op>(name,
graph)`` nodes, dump it with :func:`asc.utils.debug_str`, transform its axes
(``tile_split``, ``merge_axes``, ``apply_split`` ...), and serialize it with ``to_bytes``.
Symbolic sizes are :class:`SizeExpr` objects (exact integer arithmetic, GE's printing).
"""

from __future__ import annotations

from .._core import asc as _casc
from . import dtypes, ops, utils
from ._graph import (
    AscGraph,
    Axis,
    AxisType,
    ComputeUnit,
    HintGraph,
    ImplGraph,
    Node,
    Output,
    SizeExpr,
)
from .ops import REG_ASC_IR

Expr = SizeExpr
Max = _casc.Max
Min = _casc.Min
Mod = _casc.Mod
Ceiling = _casc.Ceiling
Floor = _casc.Floor
Abs = _casc.Abs
Pow = _casc.Pow
align = _casc.align

#: Attribute key under which an ``AscBackend`` node of a ComputeGraph stores ``to_bytes()``
#: (the engine's constant: the compiler writes the same key).
ASCGRAPH_ATTR_KEY: str = _casc.ASCGRAPH_ATTR_KEY


def Symbol(name: str) -> SizeExpr:  # noqa: N802 - GE's name
    """A free symbol (not registered on any graph)."""
    return SizeExpr.symbol(name)


def parse_expr(text: str) -> SizeExpr:
    """Parse GE's printed expression format (``"(100 + s0)"``)."""
    return SizeExpr.parse(text)


__all__ = [
    "ASCGRAPH_ATTR_KEY",
    "REG_ASC_IR",
    "Abs",
    "AscGraph",
    "Axis",
    "AxisType",
    "Ceiling",
    "ComputeUnit",
    "Expr",
    "Floor",
    "HintGraph",
    "ImplGraph",
    "Max",
    "Min",
    "Mod",
    "Node",
    "Output",
    "Pow",
    "SizeExpr",
    "Symbol",
    "align",
    "dtypes",
    "ops",
    "parse_expr",
    "utils",
]

# Backend: scheduling, UB allocation, tiling and simulation (docs/ASCGRAPH_BACKEND.md).
from .cpu import CpuKernel, build_cpu  # noqa: E402
from .schedule import Autofuser, AutofuserOptions, allocate, schedule  # noqa: E402
from .simulate import evaluate, simulate  # noqa: E402
from .target import Target  # noqa: E402
from .tiling import compile_tiling, solve_tiling  # noqa: E402

__all__ += [
    "Autofuser",
    "AutofuserOptions",
    "CpuKernel",
    "Target",
    "allocate",
    "build_cpu",
    "compile_tiling",
    "evaluate",
    "schedule",
    "simulate",
    "solve_tiling",
]

# Codegen: GE's kernel files as text (docs/CODEGEN.md).
from . import codegen  # noqa: E402
from .codegen import generate_kernel, generate_kernels, write_kernel  # noqa: E402

__all__ += ["codegen", "generate_kernel", "generate_kernels", "write_kernel"]
