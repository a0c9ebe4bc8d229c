"""Element types of AscGraph tensors (``asc.dtypes.float16`` ...), as GE's pyascir spells them.

The values are members of :class:`ascendir.types.DataType` (GE's ``ge::DataType`` numbering),
so they interoperate with the graph IR side.
"""

from __future__ import annotations

from ..types import DataType

__all__ = [
    "DataType",
    "bfloat16",
    "bool_",
    "double",
    "float16",
    "float32",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "undefined",
]

float32 = DataType.FLOAT
float16 = DataType.FLOAT16
bfloat16 = DataType.BF16
double = DataType.DOUBLE
int4 = DataType.INT4
int8 = DataType.INT8
int16 = DataType.INT16
int32 = DataType.INT32
int64 = DataType.INT64
uint8 = DataType.UINT8
uint16 = DataType.UINT16
uint32 = DataType.UINT32
uint64 = DataType.UINT64
bool_ = DataType.BOOL
undefined = DataType.UNDEFINED

# GE's pyascir also exposes these spellings.
globals()["float"] = DataType.FLOAT
globals()["bool"] = DataType.BOOL
bf16 = DataType.BF16


def to_dtype(value: object) -> DataType:
    """A :class:`DataType` from a member, a GE number or a name (``"float16"``, ``"DT_INT8"``)."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return DataType(value)
    if isinstance(value, str):
        member = globals().get(value)
        if isinstance(member, DataType):
            return member
        key = value.upper()
        key = key[3:] if key.startswith("DT_") else key
        return DataType[key]
    from ..errors import InvalidArgumentError

    raise InvalidArgumentError(f"not a data type: {value!r}")
