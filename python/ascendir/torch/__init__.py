"""PyTorch frontend: import ``torch.export`` programs into ascendir graphs.

``torch`` is imported on first use of a function here, never by ``import ascendir``.

The FX graph (as ``torch.export`` gives it, or decomposed to the Core ATen opset with
``run_decompositions()`` where needed) is flattened into plain arrays in Python, then
converted in one Rust call without the GIL:
user inputs become ``Data`` nodes, parameters, buffers and lifted constants ``Const`` nodes
that share the tensors' memory, ATen calls GE ops with GE port and attribute names (the
schemas of the builtin op library and the ONNX mapping), the outputs the ``NetOutput``.

>>> import torch, ascendir as air                                   # doctest: +SKIP
>>> g = air.torch.export(model.eval(), (torch.randn(2, 3, 224, 224),),
...                      dynamic_shapes=({0: torch.export.Dim("batch")},))  # doctest: +SKIP
>>> g, report = air.torch.from_exported_program(ep, report=True)  # doctest: +SKIP

Dynamic dims (``torch.export.Dim``) are ``-1`` in the descriptors and named ``s0, s1, …`` in
input order, then dim order, as the compiler's symbolize stage names them; ranges and
equalities are graph attributes (see :data:`ATTR_SYMBOLS`, :data:`ATTR_GUARDS`). Each node
records the ``nn.Module`` and source line it came from (:data:`ATTR_MODULE`,
:data:`ATTR_SOURCE`). Ops without a mapping are kept as ``aten::<op>`` nodes with their
schema (:data:`ATTR_SCHEMA`), listed in the report and in the graph attribute
:data:`ATTR_UNKNOWN_OPS`. See ``docs/TORCH.md``.

The ``Const`` nodes view the parameters' memory (no copy): changing a parameter in place
after the import changes the graph's constant too.
"""
# Optional dependencies (torch): absent or untyped where the package is checked
# mypy: disable-error-code="import-not-found,import-untyped"

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from .. import _core
from .._core import Graph
from ..errors import TorchExportError

__all__ = [
    "ATTR_GUARDS",
    "ATTR_MODULE",
    "ATTR_MODULE_STACK",
    "ATTR_PARAM",
    "ATTR_SCHEMA",
    "ATTR_SHAPE",
    "ATTR_SOURCE",
    "ATTR_SYMBOLS",
    "ATTR_SYMBOL_RANGES",
    "ATTR_SYMBOL_SOURCES",
    "ATTR_TARGET",
    "ATTR_UNKNOWN_OPS",
    "ImportReport",
    "TorchExportError",
    "UnknownOpWarning",
    "export",
    "from_exported_program",
]

ATTR_SYMBOLS = "_ascendir_torch_symbols"
"""Graph attribute: the symbols ``s0, s1, …`` (one per dynamic user-input dim)."""
ATTR_SYMBOL_SOURCES = "_ascendir_torch_symbol_sources"
"""Graph attribute: where each symbol comes from (``input 0 dim 0``)."""
ATTR_SYMBOL_RANGES = "_ascendir_torch_symbol_ranges"
"""Graph attribute: ``[min, max]`` of each symbol (``max`` is ``-1`` when unbounded)."""
ATTR_GUARDS = "_ascendir_torch_guards"
"""Graph attribute: the range constraints and equalities (``Ge(s0, 2)``, ``Eq(s0, s1)``)."""
ATTR_UNKNOWN_OPS = "_ascendir_torch_unknown_ops"
"""Graph attribute: the distinct ``aten::<op>`` types kept unmapped."""
ATTR_SHAPE = "_ascendir_torch_shape"
"""``Data`` node attribute: the symbolic shape, one expression per dim (``s0``, ``3``)."""
ATTR_MODULE = "_ascendir_torch_module"
"""Node attribute: the innermost ``nn.Module`` (``layer1.0.conv1 (torch.nn...Conv2d)``)."""
ATTR_MODULE_STACK = "_ascendir_torch_module_stack"
"""Node attribute: the whole ``nn_module_stack``, outermost first (when deeper than one)."""
ATTR_SOURCE = "_ascendir_torch_source"
"""Node attribute: the user source location (``model.py:12 in forward``)."""
ATTR_TARGET = "_ascendir_torch_target"
"""Node attribute: the FX target (``aten.convolution.default``)."""
ATTR_SCHEMA = "_ascendir_torch_schema"
"""Attribute of unmapped ``aten::<op>`` nodes: the ATen schema."""
ATTR_PARAM = "_ascendir_torch_param"
"""``Const`` node attribute: the parameter, buffer or constant name (``layer1.0.conv1.weight``)."""


class UnknownOpWarning(UserWarning):
    """Emitted when an import keeps ATen ops it cannot map (as ``aten::<op>``)."""


@dataclass(frozen=True)
class ImportReport:
    """What a PyTorch import found.

    Attributes:
        fx_nodes: FX nodes of the converted program (placeholders and output included).
        fx_calls: its ``call_function`` nodes.
        ge_nodes: nodes of the graph (``NetOutput`` included).
        inputs: user inputs (``Data`` nodes).
        params: parameters, buffers and lifted constants (``Const`` nodes).
        unknown_ops: unmapped ops by GE type (``aten::<op>``), with their counts.
        unknown_schemas: the ATen schema of each unmapped op type.
        symbols: ``(name, min, max, source)`` of each symbol (``max`` -1: unbounded).
        guards: range constraints and equalities, as the compiler writes guards.
        decomposed: whether the program was decomposed to Core ATen first.
        flatten_seconds: time spent flattening the FX graph in Python.
        convert_seconds: time of the Rust conversion (without the GIL).
    """

    fx_nodes: int
    fx_calls: int
    ge_nodes: int
    inputs: int
    params: int
    unknown_ops: dict[str, int] = field(default_factory=dict)
    unknown_schemas: dict[str, str] = field(default_factory=dict)
    symbols: list[tuple[str, int, int, str]] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    decomposed: bool = False
    flatten_seconds: float = 0.0
    convert_seconds: float = 0.0


def _is_exported_program(obj: Any) -> bool:
    import torch

    return isinstance(obj, torch.export.ExportedProgram)


def _convert(ep: Any, name: str, decomposed: bool) -> tuple[Graph, ImportReport]:
    from ._flatten import flatten

    t0 = time.perf_counter()
    flat = flatten(ep, name)
    t1 = time.perf_counter()
    graph, raw = _core._torch_convert(*flat)
    rep = ImportReport(
        fx_nodes=raw["fx_nodes"],
        fx_calls=raw["fx_calls"],
        ge_nodes=raw["ge_nodes"],
        inputs=raw["inputs"],
        params=raw["params"],
        unknown_ops=dict(raw["unknown_ops"]),
        unknown_schemas=dict(raw["unknown_schemas"]),
        symbols=list(flat[11]),
        guards=list(flat[12]),
        decomposed=decomposed,
        flatten_seconds=t1 - t0,
        convert_seconds=raw["convert_seconds"],
    )
    return graph, rep


_EXECUTING = re.compile(r"While executing %(\S+) : .*?target=([\w.]+)")


def _run_decompositions(ep: Any) -> Any:
    """``ep.run_decompositions()``; a failure of torch's re-trace is a
    :class:`~ascendir.TorchExportError` naming the FX node it stopped at."""
    try:
        return ep.run_decompositions()
    except Exception as e:  # torch raises ValueError, RuntimeError, its own errors
        text = str(e)
        m = _EXECUTING.search(text)
        first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
        node, target = (m.group(1), m.group(2)) if m else (None, None)
        where = f" at node '{node}' ({target})" if node else ""
        raise TorchExportError(
            f"decomposing the program to Core ATen failed{where}: {type(e).__name__}: {first}",
            node=node, target=target) from e


@overload
def from_exported_program(
    ep: Any, *, decompose: bool | None = ..., report: Literal[False] = ...,
    warn_unknown: bool = ..., name: str = ...,
) -> Graph: ...


@overload
def from_exported_program(
    ep: Any, *, decompose: bool | None = ..., report: Literal[True], warn_unknown: bool = ...,
    name: str = ...,
) -> tuple[Graph, ImportReport]: ...


def from_exported_program(
    ep: Any,
    *,
    decompose: bool | None = None,
    report: bool = False,
    warn_unknown: bool = True,
    name: str = "main",
) -> Graph | tuple[Graph, ImportReport]:
    """Convert a ``torch.export.ExportedProgram`` into a graph.

    ``decompose``: ``True`` runs ``ep.run_decompositions()`` first (to the Core ATen opset);
    ``False`` converts the program as it is; ``None`` (the default) converts it as it is
    when every op maps (``torch.export`` output: ``linear``, ``conv2d``, ``layer_norm``,
    ``scaled_dot_product_attention`` … map directly, which saves the decomposition's
    re-trace) and falls back to decomposing when an op does not map, when a construct is
    unsupported, or when an in-place op's mutation could be seen by another node.

    With ``report`` the result is ``(graph, ImportReport)``. Unmapped ops are kept as
    ``aten::<op>`` nodes and, with ``warn_unknown``, announced by an
    :class:`UnknownOpWarning`.

    Raises :class:`~ascendir.TorchExportError` naming the FX node (``.node``) and its target
    (``.target``) for a construct the graph cannot express (higher-order ops such as
    ``torch.cond``, Python callables, non-tensor user inputs).
    """
    if not _is_exported_program(ep):
        raise TypeError(f"expected a torch.export.ExportedProgram, not {type(ep).__name__}")
    from ._flatten import NeedsDecomposition

    graph: Graph | None = None
    rep: ImportReport | None = None
    direct: tuple[Graph, ImportReport] | None = None
    if decompose is not True:
        try:
            graph, rep = _convert(ep, name, decomposed=False)
        except NeedsDecomposition:
            if decompose is False:
                raise TorchExportError(
                    "the program mutates a tensor in place where other nodes can see it; "
                    "convert it with decompose=True") from None
        except TorchExportError:
            if decompose is False:
                raise
        if decompose is None and rep is not None and rep.unknown_ops:
            direct = (graph, rep) if graph is not None else None
            graph = rep = None
    if graph is None or rep is None:
        try:
            decomposed = _run_decompositions(ep)
        except TorchExportError:
            if direct is None:
                raise
            # The decomposition's re-trace failed: the direct conversion stands, with its
            # unmapped ops kept as aten:: nodes.
            decomposed = None
        if decomposed is None and direct is not None:
            graph, rep = direct
        else:
            graph, rep = _convert(decomposed, name, decomposed=True)
    if rep.unknown_ops and warn_unknown:
        listed = ", ".join(f"{k} x{v}" for k, v in rep.unknown_ops.items())
        warnings.warn(f"kept unmapped ATen ops: {listed}", UnknownOpWarning, stacklevel=2)
    return (graph, rep) if report else graph


@overload
def export(
    module: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None = ...,
    dynamic_shapes: Any = ..., *, strict: bool = ..., decompose: bool | None = ...,
    report: Literal[False] = ..., warn_unknown: bool = ...,
) -> Graph: ...


@overload
def export(
    module: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None = ...,
    dynamic_shapes: Any = ..., *, strict: bool = ..., decompose: bool | None = ...,
    report: Literal[True], warn_unknown: bool = ...,
) -> tuple[Graph, ImportReport]: ...


def export(
    module: Any,
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    dynamic_shapes: Any = None,
    *,
    strict: bool = False,
    decompose: bool | None = None,
    report: bool = False,
    warn_unknown: bool = True,
) -> Graph | tuple[Graph, ImportReport]:
    """Export ``module`` with ``torch.export.export(module, args, kwargs, dynamic_shapes=…)``
    and convert the program (see :func:`from_exported_program`).

    The module is traced in its current mode: call ``module.eval()`` first for inference
    (dropout off, BatchNorm using its running statistics). A module ``torch.export`` cannot
    trace raises :class:`~ascendir.TorchExportError` (the torch error as its cause).
    """
    import torch

    try:
        ep = torch.export.export(
            module, tuple(args), kwargs=dict(kwargs) if kwargs else None,
            dynamic_shapes=dynamic_shapes, strict=strict,
        )
    except Exception as e:  # torch's tracing errors are of many types
        text = str(e).strip()
        first = text.splitlines()[0] if text else ""
        raise TorchExportError(
            f"torch.export.export could not trace {type(module).__name__}: "
            f"{type(e).__name__}: {first}") from e
    if report:
        return from_exported_program(ep, decompose=decompose, report=True,
                                     warn_unknown=warn_unknown)
    return from_exported_program(ep, decompose=decompose, report=False,
                                 warn_unknown=warn_unknown)


# Re-exported so that ``except air.torch.TorchExportError`` reads naturally.
TorchExportError = TorchExportError
