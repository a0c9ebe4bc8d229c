"""Enumerations of GE types: :class:`DataType`, :class:`Format`, :class:`AttrKind`, and
:class:`NamedAttrs`.

The numeric values are GE's (``ge::DataType``, ``ge::Format``, ``AnyValue::ValueType``); the
tables come from the Rust core so both sides always agree.
"""

from __future__ import annotations

import enum
from typing import Any

from . import _core

__all__ = ["AttrKind", "DataType", "Format", "NamedAttrs"]

_DT_TABLE = _core._data_type_table()
_FORMAT_TABLE = _core._format_table()

# The array-library (numpy / ml_dtypes / torch) name of every type that has one, from the
# Rust table: the one dtype map of the package.
_ARRAY_NAMES: dict[str, str] = {row[0]: row[5] for row in _DT_TABLE if row[5] is not None}
_FROM_ARRAY = {v: k for k, v in _ARRAY_NAMES.items()}


class DataType(enum.IntEnum):
    """A tensor element type, numbered as GE's ``ge::DataType``."""

    _ignore_ = ["_row"]
    for _row in _DT_TABLE:
        locals()[_row[0]] = _row[1]

    @property
    def proto_value(self) -> int:
        """The number written in ``TensorDescriptor.dtype`` on the wire."""
        return _DT_INFO[self.value][0]

    @property
    def serial_name(self) -> str:
        """GE's serial string, e.g. ``"DT_BFLOAT16"``."""
        return _DT_INFO[self.value][2]

    @property
    def bit_width(self) -> int | None:
        """Bits per element, or ``None`` for types without a size (STRING, UNDEFINED)."""
        code = _DT_INFO[self.value][1]
        if code > 1000:
            return code - 1000
        if code > 0:
            return code * 8
        return None

    @property
    def itemsize(self) -> int:
        """GE's ``GetSizeByDataType``: bytes per element, ``1000 + bits`` for sub-byte types."""
        return _DT_INFO[self.value][1]

    def to_numpy(self) -> Any:
        """The numpy dtype of this type (``InvalidArgumentError`` when numpy has none). The
        narrow floats and ints numpy lacks (bfloat16, float8, int4, ...) come from
        ``ml_dtypes`` where it is installed."""
        import numpy as np

        name = _ARRAY_NAMES.get(self.name)
        if name is not None:
            try:
                return np.dtype(name)
            except TypeError:
                try:
                    import ml_dtypes

                    t = getattr(ml_dtypes, name, None)
                except ImportError:
                    t = None
                if t is not None:
                    return np.dtype(t)
        from .errors import InvalidArgumentError

        raise InvalidArgumentError(f"numpy has no dtype for {self.name}")

    @classmethod
    def from_numpy(cls, dtype: Any) -> DataType:
        """The type of a numpy dtype (or anything ``numpy.dtype`` accepts)."""
        import numpy as np

        name = np.dtype(dtype).name
        member = _FROM_ARRAY.get(name)
        if member is None:
            from .errors import InvalidArgumentError

            raise InvalidArgumentError(f"no GE data type for numpy dtype {name!r}")
        return cls[member]

    @classmethod
    def from_name(cls, name: str) -> DataType:
        """Look up by enum name (``"FLOAT16"``) or GE serial name (``"DT_FLOAT16"``)."""
        text = name.upper()
        if text.startswith("DT_"):
            for member in cls:
                if member.serial_name == text:
                    return member
            text = text[3:]
        if text == "FLOAT32":
            return cls.FLOAT
        try:
            return cls[text]
        except KeyError:
            from .errors import NotFoundError

            raise NotFoundError(f"unknown data type name {name!r}") from None


_DT_INFO = {row[1]: (row[2], row[3], row[4]) for row in _DT_TABLE}


class Format(enum.IntEnum):
    """A primary tensor layout, numbered as GE's ``ge::Format``.

    A full format integer may also carry a sub-format (bits 8-23) and a C0 format (bits 24-27);
    see :func:`ascendir.make_format`.
    """

    _ignore_ = ["_row"]
    for _row in _FORMAT_TABLE:
        locals()[_row[0]] = _row[1]

    @property
    def serial_name(self) -> str:
        """GE's ``FormatToSerialString`` of this primary format."""
        return _FORMAT_INFO[self.value][0]

    @property
    def supports_mem_size(self) -> bool:
        """Whether GE's ``CalcTensorMemSize`` accepts this format."""
        return _FORMAT_INFO[self.value][1]

    @classmethod
    def from_name(cls, name: str) -> Format:
        """Look up by enum name (``"NCHW"``) or GE serial name."""
        text = name.upper()
        if text.startswith("FORMAT_") and text != "FORMAT_RESERVED":
            text = text[len("FORMAT_") :]
        for member in cls:
            if member.name == text or member.serial_name == text:
                return member
        from .errors import NotFoundError

        raise NotFoundError(f"unknown format name {name!r}")


_FORMAT_INFO = {row[1]: (row[2], row[3]) for row in _FORMAT_TABLE}


class AttrKind(enum.IntEnum):
    """The kind of an attribute value, numbered as GE's ``AnyValue::ValueType``."""

    _ignore_ = ["_row"]
    for _row in _core._attr_kind_table():
        locals()[_row[0]] = _row[1]


class NamedAttrs:
    """A named bag of attributes (GE ``NamedAttrs``), usable as an attribute value."""

    __slots__ = ("attrs", "name")

    def __init__(self, name: str = "", attrs: dict[str, Any] | None = None) -> None:
        self.name = name
        self.attrs: dict[str, Any] = dict(attrs or {})

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NamedAttrs) and self.name == other.name and self.attrs == other.attrs
        )

    def __repr__(self) -> str:
        return f"NamedAttrs({self.name!r}, {self.attrs!r})"
