"""Declaration objects used in :class:`ascendir.OpDef` bodies."""

from __future__ import annotations

import copy
import typing
from collections.abc import Iterable
from typing import Any

from ..types import AttrKind, DataType, NamedAttrs

__all__ = [
    "Attr",
    "DynamicInput",
    "DynamicOutput",
    "Input",
    "OptionalInput",
    "Output",
    "Subgraph",
    "TensorType",
    "TypeVar",
]

_D = DataType


class TensorType:
    """Named dtype sets for :class:`TypeVar` (GE's ``TensorType::ALL()``, ...)."""

    FLOAT: tuple[DataType, ...] = (_D.FLOAT, _D.FLOAT16, _D.BF16)
    """Floating point types (float32, float16, bfloat16)."""
    FLOATING: tuple[DataType, ...] = (_D.FLOAT, _D.FLOAT16, _D.BF16, _D.DOUBLE)
    """Floating point types including float64."""
    SIGNED_INT: tuple[DataType, ...] = (_D.INT8, _D.INT16, _D.INT32, _D.INT64)
    """Signed integers."""
    UNSIGNED_INT: tuple[DataType, ...] = (_D.UINT8, _D.UINT16, _D.UINT32, _D.UINT64)
    """Unsigned integers."""
    INT: tuple[DataType, ...] = SIGNED_INT + UNSIGNED_INT
    """All integers."""
    INDEX: tuple[DataType, ...] = (_D.INT32, _D.INT64)
    """Index types (int32, int64)."""
    BOOL: tuple[DataType, ...] = (_D.BOOL,)
    """Booleans."""
    COMPLEX: tuple[DataType, ...] = (_D.COMPLEX64, _D.COMPLEX128)
    """Complex types."""
    REAL_NUMBER: tuple[DataType, ...] = FLOATING + INT
    """Real numbers (floats and integers)."""
    NUMBER: tuple[DataType, ...] = REAL_NUMBER + COMPLEX
    """All numbers."""
    ALL: tuple[DataType, ...] = NUMBER + (_D.BOOL, _D.STRING)
    """Everything common (numbers, bool, string)."""
    ANY: tuple[DataType, ...] = ()
    """No constraint at all."""


def _dtypes(items: Iterable[Any]) -> tuple[DataType, ...]:
    out: list[DataType] = []
    for item in items:
        if isinstance(item, (list, tuple, set, frozenset)):
            out.extend(_dtypes(item))
        elif isinstance(item, str):
            out.append(DataType[item.upper()])
        else:
            out.append(DataType(item))
    seen: list[DataType] = []
    for d in out:
        if d not in seen:
            seen.append(d)
    return tuple(seen)


class _Decl:
    name: str = ""

    def bound(self, name: str) -> Any:
        """A copy of this declaration carrying its attribute name."""
        c = copy.copy(self)
        c.name = name
        return c


class TypeVar(_Decl):
    """A dtype variable: every port declared with it has the same dtype, one of ``allowed``.

    ``TypeVar(air.float16, air.float32)``, ``TypeVar(air.TensorType.NUMBER)``; no arguments
    (or ``TensorType.ANY``) means unconstrained.
    """

    def __init__(self, *allowed: Any) -> None:
        self.allowed = _dtypes(allowed)

    def describe(self) -> str:
        """``T in {FLOAT, FLOAT16}``."""
        return f"{self.name} in {{{', '.join(d.name for d in self.allowed)}}}"

    def __repr__(self) -> str:
        return f"TypeVar({', '.join(d.name for d in self.allowed)})"


class _Port(_Decl):
    kind = "required"

    def __init__(self, type: Any = None, *, doc: str = "") -> None:
        """``type`` is a type-variable name, a :class:`DataType` or a set of dtypes."""
        self.type_var: str | None = None
        self.fixed: tuple[DataType, ...] | None = None
        if isinstance(type, str) and type.upper() not in DataType.__members__:
            self.type_var = type
        elif type is not None:
            self.fixed = _dtypes([type])
        self.doc = doc

    def type_var_name(self) -> str | None:
        """The type variable used by this port (a private one for a fixed dtype set)."""
        if self.type_var is not None:
            return self.type_var
        if self.fixed is not None:
            return f"__{self.name}_type"
        return None

    def describe(self) -> str:
        """``x: T`` (with ``?`` for optional, ``*`` for dynamic)."""
        mark = {"optional": "?", "dynamic": "*"}.get(self.kind, "")
        t = self.type_var or (",".join(d.name for d in self.fixed) if self.fixed else "")
        return f"{self.name}{mark}" + (f": {t}" if t else "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


class Input(_Port):
    """A required input."""

    kind = "required"


class OptionalInput(Input):
    """An optional input: unset, its slot holds GE's invalid desc (UNDEFINED / RESERVED)."""

    kind = "optional"


class DynamicInput(Input):
    """A dynamic input ``x``: instances ``x0, x1, ...`` (pass a list to ``add_op``)."""

    kind = "dynamic"


class Output(_Port):
    """A required output."""

    kind = "required"


class DynamicOutput(Output):
    """A dynamic output ``y``: instances ``y0, y1, ...``.

    ``count_attr`` names the attribute holding the instance count (``num_split``); otherwise
    ``add_op(..., outputs=n)`` gives the total output count.
    """

    kind = "dynamic"

    def __init__(self, type: Any = None, *, count_attr: str | None = None, doc: str = "") -> None:
        super().__init__(type, doc=doc)
        self.count_attr = count_attr


class Subgraph(_Decl):
    """A subgraph slot: static (one instance) or dynamic (``name0, name1, ...``)."""

    def __init__(self, *, dynamic: bool = False, doc: str = "") -> None:
        self.dynamic = dynamic
        self.doc = doc

    def describe(self) -> str:
        """``then_branch: graph``."""
        return f"{self.name}: {'graphs' if self.dynamic else 'graph'}"


_REQUIRED: Any = object()


# Attribute kinds of a Python type, alone and as the element of a list.
_KINDS_BY_TYPE: dict[Any, tuple[str, str]] = {
    int: ("INT", "LIST_INT"),
    float: ("FLOAT", "LIST_FLOAT"),
    bool: ("BOOL", "LIST_BOOL"),
    str: ("STRING", "LIST_STRING"),
    bytes: ("BYTES", "LIST_BYTES"),
    DataType: ("DATA_TYPE", "LIST_DATA_TYPE"),
    NamedAttrs: ("NAMED_ATTRS", "LIST_NAMED_ATTRS"),
}
# The same for classes named in annotations without being imported here.
_KINDS_BY_NAME = {
    "Tensor": ("TENSOR", "LIST_TENSOR"),
    "TensorDesc": ("TENSOR_DESC", "LIST_TENSOR_DESC"),
    "Graph": ("GRAPH", "LIST_GRAPH"),
}


def _kinds(t: Any) -> tuple[str, str] | None:
    try:
        found = _KINDS_BY_TYPE.get(t)
    except TypeError:  # an unhashable annotation
        found = None
    return found or _KINDS_BY_NAME.get(getattr(t, "__name__", ""))


def _kind_of(t: Any) -> AttrKind:
    if isinstance(t, AttrKind):
        return t
    if isinstance(t, str):
        return AttrKind[t.upper()]
    kinds = _kinds(t)
    if kinds is not None:
        return AttrKind[kinds[0]]
    origin = typing.get_origin(t)
    if origin in (list, tuple):
        (arg,) = typing.get_args(t)[:1] or (int,)
        if typing.get_origin(arg) in (list, tuple):
            (inner,) = typing.get_args(arg)[:1] or (int,)
            return AttrKind.LIST_LIST_FLOAT if inner is float else AttrKind.LIST_LIST_INT
        kinds = _kinds(arg)
        if kinds is not None:
            return AttrKind[kinds[1]]
    raise TypeError(f"unsupported attribute type {t!r}")


class Attr(_Decl):
    """An attribute of kind ``type`` (``int``, ``float``, ``bool``, ``str``, ``list[int]``,
    ``list[list[int]]``, ``air.DataType``, ``air.Tensor``, an :class:`AttrKind`, ...).

    Without ``default`` the attribute is required (``REQUIRED_ATTR``).
    """

    def __init__(self, type: Any, default: Any = _REQUIRED, *, doc: str = "") -> None:
        self.attr_kind = _kind_of(type)
        self.has_default = default is not _REQUIRED
        self.default = None if default is _REQUIRED else default
        self.doc = doc

    @property
    def required(self) -> bool:
        """Whether the attribute has no default."""
        return not self.has_default

    def describe(self) -> str:
        """``strides: LIST_INT`` or ``groups: INT = 1``."""
        base = f"{self.name}: {self.attr_kind.name}"
        return base + (f" = {self.default!r}" if self.has_default else "")

    def __repr__(self) -> str:
        return f"Attr({self.describe()})"
