"""Model file formats: telling ONNX, GE ``ModelDef`` (binary or text) and OM files apart.

:func:`sniff` looks at the bytes only; :func:`detect` trusts the bytes first and the file
suffix second, so a GE dump saved as ``model.bin`` or an ONNX model saved as ``model.pb`` is
still read as what it is. The format names are ``"onnx"``, ``"pb"`` (binary ``ModelDef``),
``"txt"`` (protobuf text, a GE dump), ``"om"`` (an OM model file), ``"readable"`` (GE's
readable dump, ``ge_readable*.txt``) and ``"onnx_txt"`` (GE's ONNX dump, ``ge_onnx*.pbtxt``: an
ONNX ``ModelProto`` in protobuf text with GE op types). A text file is a readable dump when its
first line that is not blank starts with ``graph("``, whatever its suffix. Protobuf text is
``"onnx_txt"`` when its first field (after blanks and ``#`` comments) is one only ONNX's
``ModelProto`` has (``ir_version``, ``producer_name``, ``opset_import``, ...), or is ``graph``
whose first field telling the two apart is ONNX's ``node`` (or ``initializer``,
``value_info``, ...) rather than GE's ``op``; other protobuf text is ``"txt"``. No suffix names
the two dump formats, so :func:`ascendir.save` writes them only when asked with
``format="readable"`` or ``format="onnx_txt"``.
"""

from __future__ import annotations

import os

from . import _core
from .errors import DecodeError, InvalidArgumentError

__all__ = ["FORMATS", "SUFFIXES", "detect", "format_of_suffix", "read_model_bytes", "sniff"]

FORMATS = ("onnx", "pb", "txt", "om", "readable", "onnx_txt")
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


def format_of_suffix(path: str | os.PathLike[str]) -> str | None:
    """The format the suffix of ``path`` names, or ``None`` for an unknown suffix."""
    return SUFFIXES.get(os.path.splitext(os.fspath(path))[1].lower())


def sniff(data: bytes) -> str | None:
    """The format of model bytes, or ``None`` when the bytes do not say (empty, too short or
    not a model). Binary ONNX and GE ``ModelDef`` are told apart by their top-level fields
    (the compiler's loader decides; this is the same function). Text that starts with a
    ``graph("name"):`` line is ``"readable"``, protobuf text of an ONNX ``ModelProto`` (see
    the module's description) ``"onnx_txt"``, other text ``"txt"``."""
    data = bytes(data)
    kind: str | None = _core.compiler.sniff(data)
    if kind == "txt" and _core._is_readable(data):
        return "readable"
    if kind == "txt" and _core._is_ge_onnx(data):
        return "onnx_txt"
    return kind


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


def read_model_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the model file at ``path``; a path that is not a regular file (a
    directory, a FIFO, a device, also behind a symlink) is refused before it is opened, since
    opening a FIFO blocks and a device such as ``/dev/zero`` has no end.

    Raises:
        InvalidArgumentError: ``path`` is not a regular file.
        OSError: the file cannot be read.
    """
    import stat

    where = os.fspath(path)
    mode = os.stat(where).st_mode
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
        raise InvalidArgumentError(f"model path '{where}' is {kind}, not a regular file")
    with open(where, "rb") as f:
        return f.read()
