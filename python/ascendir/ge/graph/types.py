"""GE's enumerations (``ge.graph.types``): names and numbers as GE's ``ge::DataType``,
``ge::Format``, ``ge::Placement`` and ``AnyValue::ValueType``.

They are ``IntEnum``s of the same numbers as :class:`ascendir.DataType` and
:class:`ascendir.Format` (which use short names: ``DataType.DT_FLOAT == ascendir.DataType.FLOAT``);
:func:`to_air_dtype` and friends convert.
"""

from __future__ import annotations

from enum import IntEnum

from ... import types as _air_types

__all__ = ["AttrValueType", "DataType", "Format", "Placement", "from_air_dtype", "from_air_format",
           "to_air_dtype", "to_air_format"]


class DataType(IntEnum):
    """A tensor element type, as GE's ``ge::DataType``."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_DUAL_SUB_INT8 = 14
    DT_DUAL_SUB_UINT8 = 15
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_RESOURCE = 23
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_UINT2 = 32
    DT_COMPLEX32 = 33
    DT_HIFLOAT8 = 34
    DT_FLOAT8_E5M2 = 35
    DT_FLOAT8_E4M3FN = 36
    DT_FLOAT8_E8M0 = 37
    DT_FLOAT6_E3M2 = 38
    DT_FLOAT6_E2M3 = 39
    DT_FLOAT4_E2M1 = 40
    DT_FLOAT4_E1M2 = 41
    DT_HIFLOAT4 = 42
    DT_MAX = 43


class Format(IntEnum):
    """A primary tensor layout, as GE's ``ge::Format``."""

    FORMAT_NCHW = 0
    FORMAT_NHWC = 1
    FORMAT_ND = 2
    FORMAT_NC1HWC0 = 3
    FORMAT_FRACTAL_Z = 4
    FORMAT_NC1C0HWPAD = 5
    FORMAT_NHWC1C0 = 6
    FORMAT_FSR_NCHW = 7
    FORMAT_FRACTAL_DECONV = 8
    FORMAT_C1HWNC0 = 9
    FORMAT_FRACTAL_DECONV_TRANSPOSE = 10
    FORMAT_FRACTAL_DECONV_SP_STRIDE_TRANS = 11
    FORMAT_NC1HWC0_C04 = 12
    FORMAT_FRACTAL_Z_C04 = 13
    FORMAT_CHWN = 14
    FORMAT_FRACTAL_DECONV_SP_STRIDE8_TRANS = 15
    FORMAT_HWCN = 16
    FORMAT_NC1KHKWHWC0 = 17
    FORMAT_BN_WEIGHT = 18
    FORMAT_FILTER_HWCK = 19
    FORMAT_HASHTABLE_LOOKUP_LOOKUPS = 20
    FORMAT_HASHTABLE_LOOKUP_KEYS = 21
    FORMAT_HASHTABLE_LOOKUP_VALUE = 22
    FORMAT_HASHTABLE_LOOKUP_OUTPUT = 23
    FORMAT_HASHTABLE_LOOKUP_HITS = 24
    FORMAT_C1HWNCoC0 = 25
    FORMAT_MD = 26
    FORMAT_NDHWC = 27
    FORMAT_FRACTAL_ZZ = 28
    FORMAT_FRACTAL_NZ = 29
    FORMAT_NCDHW = 30
    FORMAT_DHWCN = 31
    FORMAT_NDC1HWC0 = 32
    FORMAT_FRACTAL_Z_3D = 33
    FORMAT_CN = 34
    FORMAT_NC = 35
    FORMAT_DHWNC = 36
    FORMAT_FRACTAL_Z_3D_TRANSPOSE = 37
    FORMAT_FRACTAL_ZN_LSTM = 38
    FORMAT_FRACTAL_Z_G = 39
    FORMAT_RESERVED = 40
    FORMAT_ALL = 41
    FORMAT_NULL = 42
    FORMAT_ND_RNN_BIAS = 43
    FORMAT_FRACTAL_ZN_RNN = 44
    FORMAT_NYUV = 45
    FORMAT_NYUV_A = 46
    FORMAT_NCL = 47
    FORMAT_FRACTAL_Z_WINO = 48
    FORMAT_C1HWC0 = 49
    FORMAT_FRACTAL_NZ_C0_16 = 50
    FORMAT_FRACTAL_NZ_C0_32 = 51
    FORMAT_END = 52
    FORMAT_MAX = 53


class Placement(IntEnum):
    """Where a tensor's data lives."""

    PLACEMENT_HOST = 0
    PLACEMENT_DEVICE = 1


class AttrValueType(IntEnum):
    """The kind of an attribute value, as GE's ``AnyValue::ValueType``."""

    VT_NONE = 0
    VT_STRING = 1
    VT_FLOAT = 2
    VT_BOOL = 3
    VT_INT = 4
    VT_TENSOR_DESC = 5
    VT_TENSOR = 6
    VT_BYTES = 7
    VT_GRAPH = 8
    VT_NAMED_ATTRS = 9
    VT_LIST_LIST_INT = 10
    VT_DATA_TYPE = 11
    VT_LIST_LIST_FLOAT = 12
    VT_LIST_BASE = 1000
    VT_LIST_STRING = 1000 + 1
    VT_LIST_FLOAT = 1000 + 2
    VT_LIST_BOOL = 1000 + 3
    VT_LIST_INT = 1000 + 4
    VT_LIST_TENSOR_DESC = 1000 + 5
    VT_LIST_TENSOR = 1000 + 6
    VT_LIST_BYTES = 1000 + 7
    VT_LIST_GRAPH = 1000 + 8
    VT_LIST_NAMED_ATTRS = 1000 + 9
    VT_LIST_DATA_TYPE = 1000 + 11


def to_air_dtype(dt: DataType) -> _air_types.DataType:
    """The :class:`ascendir.DataType` of the same number."""
    return _air_types.DataType(int(dt))


_DT_BY_NUMBER: dict[int, DataType] = {int(m): m for m in DataType}


def from_air_dtype(dt: int) -> DataType:
    """The GE :class:`DataType` of an :class:`ascendir.DataType` (or its number)."""
    member = _DT_BY_NUMBER.get(int(dt))
    return DataType(int(dt)) if member is None else member


def to_air_format(fmt: Format) -> _air_types.Format:
    """The :class:`ascendir.Format` of the same number."""
    return _air_types.Format(int(fmt))


def from_air_format(fmt: int) -> Format:
    """The GE :class:`Format` of a format number; the sub-format and C0 bits of a full
    format are dropped (GE's Python ``Format`` has only primary formats). A primary format
    GE's Python enumeration does not name (the C++ enumeration's ``FRACTAL_NZ_C0_2`` and
    later) raises :class:`~ascendir.ge.error.GeError`."""
    primary = int(fmt) & 0xFF
    if primary > int(Format.FORMAT_FRACTAL_NZ_C0_32):
        from ..error import GeError

        raise GeError(f"format {primary} has no name in ge.graph.types.Format")
    return Format(primary)
