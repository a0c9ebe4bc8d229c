"""Model file formats: telling ONNX, GE ``ModelDef`` (binary or text) and OM files apart.

:func:`sniff` looks at the bytes only; :func:`detect` trusts the bytes first and the file
suffix second, so a GE dump saved as ``model.bin`` or an ONNX model saved as ``model.pb`` is
still read as what it is. The format names are ``"onnx"``, ``"pb"`` (binary ``ModelDef``),
``"txt"`` (protobuf text, a GE dump) and ``"om"`` (an OM model file).
"""

from __future__ import annotations

import os

from . import _core
from .errors import DecodeError

__all__ = ["FORMATS", "SUFFIXES", "detect", "format_of_suffix", "sniff"]

FORMATS = ("onnx", "pb", "txt", "om")
"""Every format name, in the order the command line lists them."""

SUFFIXES: dict[str, str] = {
    ".onnx": "onnx",
    ".pb": "pb",
    ".bin": "pb",
    ".air": "pb",
    ".txt": "txt",
    ".pbtxt": "txt",
    ".prototxt": "txt",
    ".om": "om",
}
"""File suffixes (lower case) and the format each one names."""

# Top-level fields of onnx.ModelProto and ge.proto.ModelDef as (field number, wire type).
# A field of one message and not the other decides; shared ones (graph = 7, the string in 3)
# do not.
_ONNX_ONLY = {(1, 0), (2, 2), (4, 2), (5, 0), (6, 2), (8, 2), (14, 2), (20, 2), (25, 2), (26, 2)}
_GE_ONLY = {(1, 2), (2, 0), (11, 2)}
_MAX_FIELDS = 64


def format_of_suffix(path: str | os.PathLike[str]) -> str | None:
    """The format the suffix of ``path`` names, or ``None`` for an unknown suffix."""
    return SUFFIXES.get(os.path.splitext(os.fspath(path))[1].lower())


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    value = 0
    for shift in range(0, 70, 7):
        if at >= len(data):
            return None
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
    return None


def _protobuf_kind(data: bytes) -> str | None:
    """``"onnx"`` or ``"pb"`` from the first top-level fields that only one message has."""
    at = 0
    for _ in range(_MAX_FIELDS):
        if at >= len(data):
            return None
        key = _varint(data, at)
        if key is None:
            return None
        tag, at = key
        number, wire = tag >> 3, tag & 7
        if number == 0:
            return None
        if (number, wire) in _ONNX_ONLY:
            return "onnx"
        if (number, wire) in _GE_ONLY:
            return "pb"
        if wire == 0:
            v = _varint(data, at)
            if v is None:
                return None
            at = v[1]
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == 2:
            n = _varint(data, at)
            if n is None:
                return None
            at = n[1] + n[0]
        else:
            return None
    return None


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    if b"\x00" in head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:  # a character cut at the end of the window is fine
            return False
        text = head[: e.start].decode("utf-8")
    if any(ord(c) < 0x20 and c not in "\t\n\r\f\v" for c in text):
        return False
    first = text.lstrip()[:1]
    return first.isalpha() or first in ("#", "_")


def sniff(data: bytes) -> str | None:
    """The format of model bytes, or ``None`` when the bytes do not say (empty, too short or
    not a model). Binary ONNX and GE ``ModelDef`` are told apart by their top-level fields."""
    if not data:
        return None
    if _core._is_om(data):
        return "om"
    if _looks_like_text(data):
        return "txt"
    return _protobuf_kind(data)


def detect(path: str | os.PathLike[str], data: bytes) -> str:
    """The format of the file at ``path`` holding ``data``: what the bytes say, else what the
    suffix says. Raises :class:`ascendir.DecodeError` for an empty file and for bytes that
    are no known format under an unknown suffix."""
    where = os.fspath(path)
    if not data:
        raise DecodeError(f"'{where}' is empty", offset=0, path=None)
    kind = sniff(data)
    if kind is not None:
        return kind
    by_suffix = format_of_suffix(where)
    if by_suffix is not None:
        return by_suffix
    raise DecodeError(
        f"cannot tell the model format of '{where}': its bytes are not ONNX, a GE ModelDef "
        "(binary or text) or an OM file, and its suffix is not one of "
        + ", ".join(sorted(SUFFIXES)),
        offset=0,
        path=None,
    )
