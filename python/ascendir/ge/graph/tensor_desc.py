"""GE's ``ge.graph.TensorDesc`` and ``Shape`` over :class:`ascendir.TensorDesc`."""

from __future__ import annotations

from typing import Any

from ... import _core
from ..error import GeError, GeTypeError, GeValueError
from .types import DataType, Format, from_air_dtype, from_air_format

__all__ = ["UNKNOWN_DIM", "UNKNOWN_DIM_NUM", "UNKNOWN_DIM_SIZE", "Shape", "TensorDesc"]

UNKNOWN_DIM = -1
UNKNOWN_DIM_NUM = -2
UNKNOWN_DIM_SIZE = -1


def _normalize_dims(dims: Any, arg_name: str) -> list[int]:
    """``dims`` as a plain list of ints (``None`` is a scalar's ``[]``); GE's TypeError else."""
    if dims is None:
        return []
    if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
        raise GeTypeError(f"{arg_name} must be a list of integers")
    return [int(d) for d in dims]


class Shape(list):  # type: ignore[type-arg]
    """A tensor shape: a ``list`` of ints with GE's two helpers."""

    def __init__(self, dims: list[int] | None = None) -> None:
        super().__init__(_normalize_dims(dims, "dims"))

    def get_shape_size(self) -> int:
        """The element count: 0 for a scalar (``[]``), -1 when a dimension is unknown."""
        if len(self) == 0:
            return 0
        size = 1
        for dim in self:
            if dim in (UNKNOWN_DIM, UNKNOWN_DIM_NUM):
                return UNKNOWN_DIM_SIZE
            size *= dim
        return size

    def is_unknown_shape(self) -> bool:
        """Whether a dimension is unknown (-1) or the rank is unknown (-2)."""
        return any(dim in (UNKNOWN_DIM, UNKNOWN_DIM_NUM) for dim in self)


class TensorDesc:
    """A tensor's metadata (shape, format, data type and their origin forms).

    Wraps an :class:`ascendir.TensorDesc` (``.air``); a desc read from a node is a copy, written
    back with ``Node.update_input_desc`` / ``update_output_desc`` as in GE.
    """

    __slots__ = ("_desc",)
    _desc: Any

    def __init__(
        self,
        shape: list[int] | None = None,
        format: Format = Format.FORMAT_ND,
        data_type: DataType = DataType.DT_FLOAT,
    ) -> None:
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format")
        if not isinstance(data_type, DataType):
            raise GeTypeError("Data type must be a DataType")
        dims = _normalize_dims(shape, "shape")
        self._desc = _core.TensorDesc(
            dims, int(data_type), int(format), origin_shape=dims, origin_format=int(format)
        )

    @classmethod
    def _create_from(cls, desc: Any) -> TensorDesc:
        """Wrap an existing :class:`ascendir.TensorDesc` (no copy)."""
        if desc is None:
            raise GeValueError("TensorDesc pointer cannot be None")
        if not isinstance(desc, _core.TensorDesc):
            raise GeTypeError(f"expected an ascendir.TensorDesc, got {type(desc).__name__}")
        inst = cls.__new__(cls)
        inst._desc = desc
        return inst

    @classmethod
    def from_air(cls, desc: _core.TensorDesc) -> TensorDesc:
        """A GE view of ``desc`` (the same object: edits through either show in both)."""
        return cls._create_from(desc)

    @property
    def air(self) -> _core.TensorDesc:
        """The wrapped :class:`ascendir.TensorDesc` (not a copy)."""
        return self._desc

    def __copy__(self) -> TensorDesc:
        raise GeError("TensorDesc does not support copy")

    def __deepcopy__(self, memo: Any) -> TensorDesc:
        raise GeError("TensorDesc does not support deepcopy")

    def __repr__(self) -> str:
        return (
            f"TensorDesc(shape={self.get_shape()}, format={self.get_format()}, "
            f"data_type={self.get_data_type()})"
        )

    @property
    def shape(self) -> Shape:
        """The shape (see :meth:`get_shape`)."""
        return self.get_shape()

    @property
    def origin_shape(self) -> Shape:
        """The origin shape (see :meth:`get_origin_shape`)."""
        return self.get_origin_shape()

    @property
    def format(self) -> Format:
        """The format (see :meth:`get_format`)."""
        return self.get_format()

    @property
    def origin_format(self) -> Format:
        """The origin format (see :meth:`get_origin_format`)."""
        return self.get_origin_format()

    @property
    def data_type(self) -> DataType:
        """The data type (see :meth:`get_data_type`)."""
        return self.get_data_type()

    def get_shape(self) -> Shape:
        """The shape, a :class:`Shape` (``[]`` for a scalar)."""
        return Shape(list(self._desc.shape))

    def set_shape(self, shape: list[int]) -> TensorDesc:
        """Set the shape (a list of ints); returns ``self`` for chaining."""
        self._desc.shape = _normalize_dims(shape, "shape")
        return self

    def get_origin_shape(self) -> Shape:
        """The origin shape (``[]`` when none was set)."""
        origin = self._desc.origin_shape
        return Shape(list(origin) if origin is not None else [])

    def set_origin_shape(self, shape: list[int]) -> TensorDesc:
        """Set the origin shape (a list of ints); returns ``self``."""
        self._desc.origin_shape = _normalize_dims(shape, "shape")
        return self

    def get_format(self) -> Format:
        """The (primary) format."""
        return from_air_format(int(self._desc.format))

    def set_format(self, format: Format) -> TensorDesc:
        """Set the format (a :class:`Format`); returns ``self``."""
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format")
        self._desc.format = int(format)
        return self

    def get_origin_format(self) -> Format:
        """The (primary) origin format."""
        return from_air_format(int(self._desc.origin_format))

    def set_origin_format(self, format: Format) -> TensorDesc:
        """Set the origin format (a :class:`Format`); returns ``self``."""
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format")
        self._desc.origin_format = int(format)
        return self

    def get_data_type(self) -> DataType:
        """The element data type."""
        return from_air_dtype(self._desc.dtype)

    def set_data_type(self, data_type: DataType) -> TensorDesc:
        """Set the element data type (a :class:`DataType`); returns ``self``."""
        if not isinstance(data_type, DataType):
            raise GeTypeError("Data type must be a DataType")
        self._desc.dtype = int(data_type)
        return self
