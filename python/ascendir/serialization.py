"""Reading and writing GE model files: binary ``ModelDef`` (``.pb``), text dumps (``.txt``,
``.pbtxt``) and OM files (``.om``).

:func:`save` and :func:`load` pick the format from the file suffix. :class:`Model` holds several
graphs plus model-level metadata (name, version, custom version, attributes); a single
:class:`~ascendir.Graph` is saved as a model of one graph with GE's default model attributes.
Malformed input raises :class:`ascendir.errors.DecodeError` with ``offset`` / ``path``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from . import _core
from ._core import Graph

__all__ = ["Model", "load", "load_model", "save"]

_BINARY = (".pb", ".bin", ".air")
_TEXT = (".txt", ".pbtxt", ".prototxt")
_OM = (".om",)


class Model:
    """A GE model: one or more root graphs (each with its subgraphs) and model metadata.

    ``graphs[0]`` is the main graph (``ModelDef.graph[0]``); further graphs are written after
    it and its subgraphs. ``attrs`` is an attribute map that keeps GE attribute kinds; a new
    model starts with GE's 7 default attributes (``memory_size``, ``p2p_memory_size``,
    ``stream_num``, ``event_num``, ``label_num``, ``weight_size`` = 0, ``target_type`` = "MINI").
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
        """The model as an OM file with MODEL_DEF and WEIGHTS_DATA partitions."""
        return _core._om_write(self.name, self.to_bytes(), self.weights)

    def to_proto(self) -> Any:
        """The model as a ``google.protobuf`` ``ModelDef`` message."""
        from ._proto import ge_ir_pb2

        return ge_ir_pb2.ModelDef.FromString(self.to_bytes())

    # -- decoding ---------------------------------------------------------------------------

    @classmethod
    def from_bytes(cls, data: bytes) -> Model:
        """A model from a binary GE ``ModelDef``."""
        name, version, custom_version, holder, graphs = _core._model_from_bytes(data)
        model = cls(name, graphs, version=version, custom_version=custom_version)
        model._holder = holder
        return model

    @classmethod
    def from_text(cls, text: str) -> Model:
        """A model from protobuf text format (a GE dump)."""
        return cls.from_bytes(_core._text_to_bytes(text))

    @classmethod
    def from_om(cls, data: bytes) -> Model:
        """A model from an OM file (its MODEL_DEF partition; weights kept in ``weights``)."""
        name, model_def, weights = _core._om_read(data)
        model = cls.from_bytes(model_def)
        model.weights = weights
        if not model.name:
            model.name = name
        return model

    @classmethod
    def from_proto(cls, msg: Any) -> Model:
        """A model from a ``google.protobuf`` ``ModelDef`` message."""
        return cls.from_bytes(msg.SerializeToString())


def _kind(path: str | os.PathLike[str], format: str | None) -> str:
    if format is not None:
        if format not in ("pb", "txt", "om"):
            raise ValueError(f"unknown model format {format!r} (use 'pb', 'txt' or 'om')")
        return format
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix in _OM:
        return "om"
    if suffix in _TEXT:
        return "txt"
    if suffix in _BINARY:
        return "pb"
    raise ValueError(
        f"cannot tell the model format of '{os.fspath(path)}' from its suffix "
        "(use .pb, .txt, .pbtxt or .om, or pass format=)"
    )


def save(obj: Graph | Model, path: str | os.PathLike[str], *, format: str | None = None) -> None:
    """Write a graph or model to ``path``; the format follows the suffix (``.pb`` binary,
    ``.txt`` / ``.pbtxt`` text, ``.om`` OM file) unless ``format`` is given."""
    model = obj if isinstance(obj, Model) else None
    if model is None:
        if not isinstance(obj, Graph):
            raise TypeError(f"save() takes a Graph or a Model, not {type(obj).__name__}")
        model = Model(obj.name, [obj])
    kind = _kind(path, format)
    if kind == "txt":
        data: bytes = model.to_text().encode("utf-8")
    elif kind == "om":
        data = model.to_om()
    else:
        data = model.to_bytes()
    with open(path, "wb") as f:
        f.write(data)


def load_model(path: str | os.PathLike[str], *, format: str | None = None) -> Model:
    """Read a :class:`Model` from ``path`` (format from the suffix or the OM magic)."""
    with open(path, "rb") as f:
        data = f.read()
    kind = format if format is not None else None
    if kind is None:
        kind = "om" if _core._is_om(data) else _kind(path, None)
    else:
        _kind(path, kind)
    if kind == "om":
        return Model.from_om(data)
    if kind == "txt":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            from .errors import DecodeError

            raise DecodeError(
                f"text model '{os.fspath(path)}' is not valid UTF-8 (byte {e.start})",
                offset=e.start,
                path=None,
            ) from None
        return Model.from_text(text)
    return Model.from_bytes(data)


def load(path: str | os.PathLike[str], *, format: str | None = None) -> Graph:
    """Read the main graph (with its subgraphs) of the model file at ``path``."""
    return load_model(path, format=format).graph
