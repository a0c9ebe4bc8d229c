"""GE's attribute conventions over :class:`ascendir.AttrMap`.

Writing picks the kind from the Python value in GE's order (str, float, bool, DataType,
Tensor, int, then lists of float, bool, int, DataType, str; an empty or mixed list is refused).
Reading gives the kinds GE's Python API reads (string, float, bool, int, data type, tensor and
the lists of float, bool, int, data type and string); any other kind raises GE's
:class:`RuntimeError`.
"""

from __future__ import annotations

from typing import Any

from ... import _core
from ...types import AttrKind
from ..error import GeError, GeTypeError, GeValueError
from .tensor import Tensor
from .types import AttrValueType, DataType, from_air_dtype

__all__ = ["get_attr", "set_attr", "to_attr"]


def _check_list(values: list[Any], expected: type | tuple[type, ...], what: str) -> None:
    if not values:
        raise GeValueError("Empty list is not supported")
    if not all(isinstance(v, expected) for v in values):
        raise GeTypeError(f"All values must be {what}")


def to_attr(value: Any) -> tuple[Any, AttrKind]:
    """``value`` as an ascendir attribute value and kind, by GE's rules (GE's ``ValueError``
    for a type it does not store, e.g. ``None``, a dict, an empty or mixed list)."""
    if isinstance(value, str):
        return value, AttrKind.STRING
    if isinstance(value, float):
        return value, AttrKind.FLOAT
    if isinstance(value, bool):
        return value, AttrKind.BOOL
    if isinstance(value, DataType):
        return int(value), AttrKind.DATA_TYPE
    if isinstance(value, Tensor):
        return value.air, AttrKind.TENSOR
    if isinstance(value, int):
        return value, AttrKind.INT
    if isinstance(value, list):
        if all(isinstance(v, float) for v in value):
            _check_list(value, (int, float), "numbers")
            return [float(v) for v in value], AttrKind.LIST_FLOAT
        if all(isinstance(v, bool) for v in value):
            return list(value), AttrKind.LIST_BOOL
        if all(isinstance(v, int) for v in value):
            # GE tests int before DataType, so a list of DataType is stored as ints too.
            return [int(v) for v in value], AttrKind.LIST_INT
        if all(isinstance(v, str) for v in value):
            return list(value), AttrKind.LIST_STRING
    raise GeValueError(f"Unsupported attribute type: {type(value)} for value: {value}")


_KINDS: dict[int, AttrValueType] = {int(v.value): v for v in AttrValueType}


def _from_attr(value: Any, kind: int) -> Any:
    vt = _KINDS.get(kind)
    if vt in (AttrValueType.VT_STRING, AttrValueType.VT_BOOL, AttrValueType.VT_INT):
        return value
    if vt == AttrValueType.VT_FLOAT:
        return float(value)
    if vt == AttrValueType.VT_DATA_TYPE:
        return from_air_dtype(value)
    if vt == AttrValueType.VT_TENSOR:
        return Tensor._create_from(value)
    if vt == AttrValueType.VT_LIST_FLOAT:
        return [float(v) for v in value]
    if vt in (AttrValueType.VT_LIST_BOOL, AttrValueType.VT_LIST_INT, AttrValueType.VT_LIST_STRING):
        return list(value)
    if vt == AttrValueType.VT_LIST_DATA_TYPE:
        return [from_air_dtype(v) for v in value]
    name = vt.name if vt is not None else str(kind)
    raise GeError(f"Unsupported attribute type: {name}")


def get_attr(attrs: Any, key: str, where: str) -> Any:
    """Read ``key`` of an :class:`ascendir.AttrMap` by GE's rules; ``where`` names the owner
    in the error of a missing key."""
    if not isinstance(key, str):
        raise GeTypeError("Attribute key must be a string")
    try:
        value = attrs[key]
    except KeyError:
        raise GeError(f"Failed to get attribute '{key}' from {where}") from None
    if isinstance(value, _core.Tensor):  # the one kind a tensor value has
        return Tensor._create_from(value)
    return _from_attr(value, int(attrs.kind(key)))


def set_attr(attrs: Any, key: str, value: Any, where: str) -> None:
    """Write ``key`` of an :class:`ascendir.AttrMap` by GE's rules (nothing written on error)."""
    if not isinstance(key, str):
        raise GeTypeError("Attribute key must be a string")
    converted, kind = to_attr(value)
    try:
        attrs.set(key, converted, kind=kind)
    except Exception as e:  # noqa: BLE001 - reported as GE's failure, cause chained
        raise GeError(f"Failed to set attribute '{key}' on {where}: {e}") from e
