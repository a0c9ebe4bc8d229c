"""Reading and writing model files: GE binary ``ModelDef`` (``.pb``), text dumps (``.txt``,
``.pbtxt``), OM files (``.om``), ONNX models (``.onnx``) and GE's readable dumps
(``ge_readable*.txt``, format ``"readable"``: read by content, written with
``format="readable"``) and GE's ONNX dumps (``ge_onnx*.pbtxt``, format ``"onnx_txt"``: read by
content, written with ``format="onnx_txt"``); see ``docs/VIEWING.md``.

:func:`save` picks the format from the file suffix; :func:`load` from the file's bytes, then its
suffix (see :mod:`ascendir.formats`). :class:`Model` holds several graphs plus model-level
metadata (name, version, custom version, attributes, OM partitions); a single
:class:`~ascendir.Graph` is saved as a model of one graph with GE's default model attributes.
Malformed input raises :class:`ascendir.errors.DecodeError` with ``offset`` / ``path``. What a
target format cannot hold (OM partitions in a ``.pb``, model attributes in ONNX) is dropped
with a :class:`DataLossWarning`. A GE graph with a cycle (other than the NextIteration links of
v1 control-flow loops) loads as it is, so that any graph state round-trips, with a
:class:`CycleWarning` naming the cycle; ``Graph.validate()`` reports it as a problem.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from . import _core
from ._core import Graph
from .formats import FORMATS, SUFFIXES, detect, read_model_bytes

__all__ = [
    "PARTITION_NAMES",
    "CycleWarning",
    "DataLossWarning",
    "Model",
    "load",
    "load_model",
    "model_from_bytes",
    "save",
]

PARTITION_NAMES: dict[int, str] = {
    0: "MODEL_DEF",
    1: "WEIGHTS_DATA",
    2: "TASK_INFO",
    3: "TBE_KERNELS",
    4: "CUST_AICPU_KERNELS",
    5: "SO_BINS",
    6: "FLOW_MODEL",
    7: "FLOW_SUBMODEL",
    8: "MODEL_INOUT_INFO",
}
"""GE's ``ModelPartitionType`` numbers and names."""


class CycleWarning(UserWarning):
    """A loaded GE graph has a cycle (the model loads; ``validate()`` reports the cycle)."""


def _warn_cycles(graphs: Iterable[Graph]) -> None:
    """Warn once per graph of the trees of ``graphs`` that has a cycle."""
    for root in graphs:
        for g in [root, *root.subgraphs]:
            cycle = g.find_cycle()
            if cycle is not None:
                names = " -> ".join(n.name for n in cycle)
                warnings.warn(
                    f"graph '{g.name}' has a cycle: {names}", CycleWarning, stacklevel=3
                )


class DataLossWarning(UserWarning):
    """Emitted when reading or writing a model drops data the target cannot hold."""


def _partition_name(kind: int) -> str:
    return PARTITION_NAMES.get(kind, f"type {kind}")


class Model:
    """A GE model: one or more root graphs (each with its subgraphs) and model metadata.

    ``graphs[0]`` is the main graph (``ModelDef.graph[0]``); further graphs are written after
    it and its subgraphs. ``attrs`` is an attribute map that keeps GE attribute kinds; a new
    model starts with GE's 7 default attributes (``memory_size``, ``p2p_memory_size``,
    ``stream_num``, ``event_num``, ``label_num``, ``weight_size`` = 0, ``target_type`` = "MINI").
    ``weights`` is the OM ``WEIGHTS_DATA`` partition and ``partitions`` the OM file's other
    partitions (``TASK_INFO``, ``TBE_KERNELS``, ...) as ``(type, bytes)``, written back byte
    for byte by :meth:`to_om`.
    """

    def __init__(
        self,
        name: str = "",
        graphs: Iterable[Graph] = (),
        *,
        version: int = 1,
        custom_version: str = "",
        attrs: Mapping[str, Any] | None = None,
        weights: bytes = b"",
        partitions: Iterable[tuple[int, bytes]] = (),
    ) -> None:
        self.name: str = name
        self.graphs: list[Graph] = list(graphs)
        for g in self.graphs:
            if not isinstance(g, Graph):
                raise TypeError(
                    f"Model graphs must be ascendir.Graph objects, not {type(g).__name__}"
                )
        if not 0 <= int(version) < 2**32:
            raise ValueError(f"model version {version} does not fit in uint32")
        self.version: int = int(version)
        self.custom_version: str = custom_version
        self.weights: bytes = bytes(weights)
        self.partitions: list[tuple[int, bytes]] = [(int(k), bytes(d)) for k, d in partitions]
        self._holder: Graph = _core._default_model_attrs()
        if attrs is not None:
            target = self._holder.attrs
            for key, value in attrs.items():
                target[key] = value

    @property
    def attrs(self) -> Any:
        """The model attributes (a mutable mapping that keeps attribute kinds)."""
        return self._holder.attrs

    @property
    def graph(self) -> Graph:
        """The main graph (``graphs[0]``)."""
        if not self.graphs:
            raise ValueError(f"model '{self.name}' has no graph")
        return self.graphs[0]

    def __repr__(self) -> str:
        names = ", ".join(repr(g.name) for g in self.graphs)
        return f"Model({self.name!r}, graphs=[{names}], version={self.version})"

    # -- encoding ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The model as a binary GE ``ModelDef``."""
        return _core._model_to_bytes(
            self.name, self.version, self.custom_version, self._holder, list(self.graphs)
        )

    def to_text(self) -> str:
        """The model in protobuf text format (GE's dump layout)."""
        return _core._bytes_to_text(self.to_bytes())

    def to_om(self) -> bytes:
        """The model as an OM file: MODEL_DEF, WEIGHTS_DATA, then :attr:`partitions`."""
        return _core._om_write(self.name, self.to_bytes(), self.weights, list(self.partitions))

    def to_proto(self) -> Any:
        """The model as a ``google.protobuf`` ``ModelDef`` message."""
        from ._proto import ge_ir_pb2

        return ge_ir_pb2.ModelDef.FromString(self.to_bytes())

    # -- decoding ---------------------------------------------------------------------------

    @classmethod
    def from_bytes(cls, data: bytes) -> Model:
        """A model from a binary GE ``ModelDef``."""
        name, version, custom_version, holder, graphs = _core._model_from_bytes(data)
        _warn_cycles(graphs)
        model = cls(name, graphs, version=version, custom_version=custom_version)
        model._holder = holder
        return model

    @classmethod
    def from_text(cls, text: str) -> Model:
        """A model from protobuf text format (a GE dump)."""
        return cls.from_bytes(_core._text_to_bytes(text))

    @classmethod
    def from_om(cls, data: bytes) -> Model:
        """A model from an OM file: its MODEL_DEF partition, the weights in ``weights`` and the
        other partitions in ``partitions``. A file of several models warns
        (:class:`DataLossWarning`) that only the first is read."""
        name, model_def, weights, others, model_num = _core._om_read(data)
        model = cls.from_bytes(model_def)
        model.weights = weights
        model.partitions = list(others)
        if not model.name:
            model.name = name
        if model_num > 1:
            warnings.warn(
                f"the OM file holds {model_num} models; only the first is read",
                DataLossWarning,
                stacklevel=2,
            )
        return model

    @classmethod
    def from_proto(cls, msg: Any) -> Model:
        """A model from a ``google.protobuf`` ``ModelDef`` message."""
        return cls.from_bytes(msg.SerializeToString())


def _kind(path: str | os.PathLike[str], format: str | None) -> str:
    """The format to write ``path`` in: ``format``, else the one its suffix names."""
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"unknown model format {format!r} (use one of {', '.join(FORMATS)})")
        return format
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    kind = SUFFIXES.get(suffix)
    if kind is None:
        raise ValueError(
            f"cannot tell the model format of '{os.fspath(path)}' from its suffix "
            f"(use {', '.join(sorted(SUFFIXES))}, or pass format=)"
        )
    return kind


def _warn_dropped(model: Model, kind: str, path: str | os.PathLike[str]) -> None:
    lost: list[str] = []
    if kind != "om" and model.partitions:
        names = ", ".join(_partition_name(k) for k, _ in model.partitions)
        lost.append(f"OM partitions {names}")
    if kind in ("onnx", "readable", "onnx_txt"):
        if len(model.graphs) > 1:
            lost.append(f"graphs {', '.join(repr(g.name) for g in model.graphs[1:])}")
        defaults = _core._default_model_attrs().attrs
        extra = sorted(k for k in model.attrs.keys() if k not in defaults)
        if extra:
            lost.append(f"model attributes {', '.join(extra)}")
    if lost:
        warnings.warn(
            f"'{os.fspath(path)}' ({kind}) cannot hold the model's {'; '.join(lost)}: dropped",
            DataLossWarning,
            stacklevel=3,
        )


def save(obj: Graph | Model, path: str | os.PathLike[str], *, format: str | None = None) -> None:
    """Write a graph or model to ``path``; the format follows the suffix (``.pb`` binary,
    ``.txt`` / ``.pbtxt`` text, ``.om`` OM file, ``.onnx`` ONNX) unless ``format`` is given
    (``format="readable"`` writes GE's readable dump of the main graph, ``format="onnx_txt"``
    GE's ONNX dump of it).
    What the format cannot hold is dropped with a :class:`DataLossWarning`."""
    model = obj if isinstance(obj, Model) else None
    if model is None:
        if not isinstance(obj, Graph):
            raise TypeError(f"save() takes a Graph or a Model, not {type(obj).__name__}")
        model = Model(obj.name, [obj])
    kind = _kind(path, format)
    _warn_dropped(model, kind, path)
    if kind == "onnx":
        from . import onnx as _onnx

        data: bytes = _onnx.to_bytes(model.graph)
    elif kind == "txt":
        data = model.to_text().encode("utf-8")
    elif kind == "readable":
        data = _core._readable_to_text(model.graph).encode("utf-8")
    elif kind == "onnx_txt":
        data = _core._ge_onnx_to_text(model.graph, "GE").encode("utf-8")
    elif kind == "om":
        data = model.to_om()
    else:
        data = model.to_bytes()
    with open(path, "wb") as f:
        f.write(data)


def model_from_bytes(data: bytes, kind: str, *, where: str = "<bytes>",
                     base_dir: str | None = None) -> Model:
    """Decode model bytes of format ``kind`` (see :mod:`ascendir.formats`)."""
    if kind == "onnx":
        from . import onnx as _onnx

        graph = _onnx.load(data, base_dir=base_dir)
        return Model(graph.name, [graph])
    if kind == "om":
        return Model.from_om(data)
    if kind in ("txt", "readable", "onnx_txt"):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            from .errors import DecodeError

            raise DecodeError(
                f"'{where}' is not valid UTF-8 text (byte {e.start})",
                offset=e.start,
                path=None,
            ) from None
        if kind == "readable":
            graph = _core._readable_from_text(text)
            return Model(graph.name, [graph])
        if kind == "onnx_txt":
            graph = _core._ge_onnx_from_text(text)
            return Model(graph.name, [graph])
        return Model.from_text(text)
    return Model.from_bytes(data)


def load_model(path: str | os.PathLike[str], *, format: str | None = None) -> Model:
    """Read a :class:`Model` from ``path``: ONNX, GE ``ModelDef`` (binary or text) or OM.
    The format is ``format`` when given, else what the bytes say, else what the suffix says
    (:func:`ascendir.formats.detect`)."""
    data = read_model_bytes(path)
    where = os.fspath(path)
    if format is not None:
        kind = _kind(path, format)
    else:
        kind = detect(where, data)
    return model_from_bytes(data, kind, where=where, base_dir=os.path.dirname(where) or ".")


def load(path: str | os.PathLike[str], *, format: str | None = None) -> Graph:
    """Read the main graph (with its subgraphs) of the model file at ``path`` (any format
    :func:`load_model` reads)."""
    return load_model(path, format=format).graph
