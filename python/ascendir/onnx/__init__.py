"""ONNX frontend: import ONNX models into ascendir graphs and export them back.

Parsing happens in Rust (our own ``onnx.proto`` subset; the ``onnx`` package is not needed at
run time) and builds the graph in one call without the GIL. Operators of the standard domain
(opsets 11-21) map to GE op types with GE port and attribute names (``Conv`` -> ``Conv2D``,
``Gemm`` -> ``MatMulV2``, ``Softmax`` -> ``SoftmaxV2`` ...); anything else is kept as
``onnx::<OpType>`` with all its attributes and listed in the import report.

>>> import ascendir as air
>>> g = air.onnx.load("model.onnx")                        # doctest: +SKIP
>>> g, report = air.onnx.load("model.onnx", return_report=True)  # doctest: +SKIP
>>> air.onnx.save(g, "copy.onnx")                          # doctest: +SKIP
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from .. import _core
from .._core import Graph
from ..errors import AscendIRError

__all__ = [
    "ImportReport",
    "OpsetWarning",
    "UnknownOpWarning",
    "from_bytes",
    "load",
    "save",
    "opset_warning",
    "to_bytes",
    "warn_opset",
]


class UnknownOpWarning(UserWarning):
    """Emitted when an import keeps operators it cannot map (as ``onnx::<OpType>``)."""


class OpsetWarning(UserWarning):
    """Emitted when a model's standard-domain opset is outside the ones the mapping was written
    for: ops whose meaning changed in that opset may be mapped by an older definition."""


@dataclass(frozen=True)
class ImportReport:
    """What an ONNX import found.

    Attributes:
        onnx_nodes: ONNX nodes imported, over every graph (root and bodies).
        root_nodes: ONNX nodes of the root graph.
        initializers: initializers imported (each a ``Const`` node).
        aux_consts: extra ``Const`` nodes made for GE inputs that ONNX holds as attributes.
        unknown_ops: unmapped ops by GE type (``onnx::<OpType>``) with their counts.
        subgraphs: subgraphs registered on the root graph.
        opset: the standard-domain opset of the model.
        ir_version: the ONNX IR version of the model.
        producer: producer name and version.
        opset_mapped: whether ``opset`` is one the mapping was written for.
        mapped_opsets: the first and last standard-domain opsets the mapping was written for.
        expanded: ONNX nodes replaced by their function bodies, by op type
            (``load(..., expand_functions=True)``; ``onnx_nodes`` and ``root_nodes`` count the
            model as given, before expansion).
    """

    onnx_nodes: int
    root_nodes: int
    initializers: int
    aux_consts: int
    unknown_ops: dict[str, int] = field(default_factory=dict)
    subgraphs: int = 0
    opset: int = 0
    ir_version: int = 0
    producer: str = ""
    opset_mapped: bool = True
    mapped_opsets: tuple[int, int] = (0, 0)
    expanded: dict[str, int] = field(default_factory=dict)


_ONNX_ELEM_TYPES = {
    "FLOAT": 1,
    "UINT8": 2,
    "INT8": 3,
    "UINT16": 4,
    "INT16": 5,
    "INT32": 6,
    "INT64": 7,
    "STRING": 8,
    "BOOL": 9,
    "FLOAT16": 10,
    "DOUBLE": 11,
    "UINT32": 12,
    "UINT64": 13,
    "COMPLEX64": 14,
    "COMPLEX128": 15,
    "BF16": 16,
    "FLOAT8_E4M3FN": 17,
    "FLOAT8_E5M2": 19,
    "INT4": 22,
    "FLOAT4_E2M1": 23,
}


def _onnx_dtype_of(dtype: Any) -> int:
    """The ONNX ``TensorProto.DataType`` number of an ascendir dtype (0 when ONNX lacks it)."""
    return _ONNX_ELEM_TYPES.get(getattr(dtype, "name", str(dtype)), 0)


def _report(raw: dict[str, Any]) -> ImportReport:
    return ImportReport(**raw)


def _to_bytes(model: Any) -> bytes:
    """Serialize an ``onnx.ModelProto`` (anything with ``SerializeToString``)."""
    serialize = getattr(model, "SerializeToString", None)
    if serialize is None:
        raise TypeError(f"expected a path, bytes or an onnx.ModelProto, not {type(model).__name__}")
    data = serialize()
    if not isinstance(data, bytes):
        raise TypeError("SerializeToString() did not return bytes")
    return data


@overload
def load(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview | Any,
    *,
    base_dir: str | os.PathLike[str] | None = ...,
    return_report: Literal[False] = ...,
    warn_unknown: bool = ...,
    expand_functions: bool = ...,
) -> Graph: ...


@overload
def load(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview | Any,
    *,
    base_dir: str | os.PathLike[str] | None = ...,
    return_report: Literal[True],
    warn_unknown: bool = ...,
    expand_functions: bool = ...,
) -> tuple[Graph, ImportReport]: ...


def load(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview | Any,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    return_report: bool = False,
    warn_unknown: bool = True,
    expand_functions: bool = False,
) -> Graph | tuple[Graph, ImportReport]:
    """Import an ONNX model as a :class:`~ascendir.Graph`.

    Args:
        source: a file path, the serialized model bytes, or an ``onnx.ModelProto`` (serialized
            with ``SerializeToString()`` first).
        base_dir: directory for external data files when ``source`` is not a path (a path's
            own directory is used otherwise).
        return_report: also return the :class:`ImportReport`.
        warn_unknown: emit an :class:`UnknownOpWarning` listing unmapped operators, and an
            :class:`OpsetWarning` naming the opset when it is outside the ones the mapping was
            written for.
        expand_functions: replace each node the mapping cannot express by its ONNX function
            body (``Attention``, ``NegativeLogLikelihoodLoss``, ``ReduceL1`` ...), recursively,
            where the whole body then maps to GE types (see :mod:`ascendir.onnx.expand`; needs
            the ``onnx`` package). Nodes without such a body stay ``onnx::<OpType>``.

    Raises:
        ascendir.DecodeError: the bytes are not a well-formed ONNX protobuf (``.offset`` and
            ``.path`` locate the first bad field).
        ascendir.InvalidArgumentError: the model is not a valid graph (e.g. a node reads a value
            nothing produces, a tensor's payload does not match its shape).
        ascendir.ExternalDataError: an external data file of a tensor cannot be found or read
            (``.tensor``, ``.location``; also an ``OSError``).
        ascendir.DuplicateNameError: two definitions of one value name (the graph is not in
            SSA form; ``.value``, ``.first``, ``.second`` name it and both definitions).
        OSError: the model file cannot be read.
    """
    if isinstance(source, (str, os.PathLike)):
        graph, raw = _core._onnx_load_file(os.fspath(source))
    else:
        if isinstance(source, (bytearray, memoryview)):
            source = bytes(source)
        if not isinstance(source, bytes):
            source = _to_bytes(source)
        bd = os.fspath(base_dir) if base_dir is not None else None
        graph, raw = _core._onnx_load_bytes(source, bd)
    if expand_functions and raw["unknown_ops"]:
        graph, raw = _expanded(source, base_dir, graph, raw)
    report = _report(raw)
    if warn_unknown and report.unknown_ops:
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(report.unknown_ops.items()))
        hint = "" if expand_functions else " (expand_functions=True may express them)"
        warnings.warn(
            f"ONNX import kept unmapped operators: {listed}{hint}", UnknownOpWarning, stacklevel=2
        )
    if warn_unknown:
        warn_opset(graph, stacklevel=3)
    if return_report:
        return graph, report
    return graph


def opset_warning(graph: Graph) -> str | None:
    """The text of the :class:`OpsetWarning` of ``graph`` when it was imported from ONNX at an
    opset the mapping was not written for (the graph keeps its opset as an attribute, so its
    compiled graph and its GE files say it too); ``None`` otherwise."""
    return _core._onnx_opset_warning(graph)


def warn_opset(graph: Graph, stacklevel: int = 2) -> None:
    """Emit the :class:`OpsetWarning` of ``graph`` (see :func:`opset_warning`), if any."""
    message = opset_warning(graph)
    if message is not None:
        warnings.warn(message, OpsetWarning, stacklevel=stacklevel + 1)


def _expanded(
    source: Any, base_dir: Any, graph: Graph, raw: dict[str, Any]
) -> tuple[Graph, dict[str, Any]]:
    """The import of ``source`` with its function ops expanded (``load(expand_functions=True)``);
    the plain import when no node expands into mapped ops or the expansion fails."""
    from . import expand

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        data = expand.original_path_bytes(path)
        bd: str | None = os.path.dirname(os.path.abspath(path))
    else:
        data = source
        bd = os.fspath(base_dir) if base_dir is not None else None
    try:
        done = expand.expand(data, raw["unknown_ops"], lambda b: _core._onnx_load_bytes(b, bd))
    except AscendIRError as e:
        warnings.warn(
            f"ONNX import: function expansion failed ({e}); the ops stay unmapped",
            UnknownOpWarning,
            stacklevel=3,
        )
        return graph, raw
    if done is None:
        return graph, raw
    new_graph, new_raw, counts = done
    new_raw = dict(new_raw)
    new_raw["onnx_nodes"], new_raw["root_nodes"] = raw["onnx_nodes"], raw["root_nodes"]
    new_raw["expanded"] = counts
    return new_graph, new_raw


def from_bytes(data: bytes, *, base_dir: str | os.PathLike[str] | None = None) -> Graph:
    """Import serialized ONNX model bytes (see :func:`load`)."""
    return load(data, base_dir=base_dir)


def to_bytes(graph: Graph, *, opset: int | None = None, producer: str | None = None) -> bytes:
    """Export ``graph`` (with its subgraphs) as serialized ONNX model bytes.

    Args:
        graph: a root graph made of mapped ops (or ops kept as ``onnx::<OpType>``).
        opset: the standard-domain opset to write; default: the one the graph was imported
            from, else 17.
        producer: the producer name to record (default ``"ascendir"``).

    Raises:
        ascendir.InvalidArgumentError: a node has no ONNX form.
    """
    return bytes(_core._onnx_save_bytes(graph, opset, producer))


def save(
    graph: Graph,
    path: str | os.PathLike[str],
    *,
    opset: int | None = None,
    producer: str | None = None,
) -> None:
    """Export ``graph`` to an ONNX file (see :func:`to_bytes`)."""
    data = to_bytes(graph, opset=opset, producer=producer)
    with open(os.fspath(path), "wb") as f:
        f.write(data)
