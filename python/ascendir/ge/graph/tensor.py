"""GE's ``ge.graph.Tensor`` over :class:`ascendir.Tensor`."""

from __future__ import annotations

from typing import Any

from ... import _core
from ..error import GeError, GeTypeError, GeValueError
from .tensor_desc import Shape, TensorDesc
from .types import DataType, Format, Placement, from_air_dtype, from_air_format, to_air_dtype

__all__ = ["Tensor", "TensorData"]

# What ``Tensor.get_data`` returns: a number for a scalar, else nested lists.
TensorData = int | float | bool | list[Any]


def _np() -> Any:
    import numpy as np

    return np


def _numpy_dtype(data_type: DataType) -> Any:
    """The numpy dtype of a GE data type (GeError when numpy has none)."""
    try:
        return to_air_dtype(data_type).to_numpy()
    except Exception as e:  # noqa: BLE001 - the reason goes into the message
        raise GeError(f"Failed to create Tensor with data type: {data_type}: {e}") from e


def _dims(shape: list[int] | None, count: int) -> list[int]:
    """The dims of a tensor of ``count`` values: ``shape``, or ``[]`` / ``[count]`` without."""
    if shape is not None:
        return list(shape)
    return [] if count == 1 else [count]


class Tensor:
    """A host tensor: data with a :class:`TensorDesc`.

    Built from a flat list of numbers (``Tensor(data, data_type=, format=, shape=)``), from a raw
    binary file of the data type (``Tensor(file_path=...)``) or empty (``Tensor()``). Wraps an
    :class:`ascendir.Tensor` (``.air``); a tensor read from an attribute
    (``node.get_attr("value")``) is the attribute's tensor.
    """

    __slots__ = ("_t",)
    _t: Any

    def __init__(
        self,
        data: list[Any] | None = None,
        file_path: str | None = None,
        data_type: DataType = DataType.DT_FLOAT,
        format: Format = Format.FORMAT_ND,
        shape: list[int] | None = None,
        placement: Placement = Placement.PLACEMENT_HOST,
    ) -> None:
        if shape is not None and (
            not isinstance(shape, list) or not all(isinstance(d, int) for d in shape)
        ):
            raise GeTypeError("Shape must be a list of integers")
        if not isinstance(placement, Placement):
            raise GeTypeError("Placement must be a Placement")
        if not isinstance(data_type, DataType):
            raise GeTypeError("Data type must be a DataType")
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format")
        if data is not None and file_path is not None:
            raise GeError("Tensor should be created either by data or by file")
        np = _np()
        if data is not None:
            if not isinstance(data, list):
                raise GeTypeError("data should be List")
            dtype = _numpy_dtype(data_type)
            dims = _dims(shape, len(data))
            try:
                arr = np.asarray(data).astype(dtype).reshape(dims)
            except (TypeError, ValueError) as e:
                raise GeError(f"Failed to create Tensor: {e}") from e
        elif file_path is not None:
            if not isinstance(file_path, str):
                raise GeTypeError("file_path must be a string")
            dtype = _numpy_dtype(data_type)
            try:
                flat = np.fromfile(file_path, dtype=dtype)
                arr = flat.reshape(_dims(shape, flat.size))
            except (OSError, ValueError) as e:
                raise GeError(f"Failed to create Tensor from file {file_path!r}: {e}") from e
        else:
            arr = np.zeros(_dims(shape, 0) if shape is not None else [0],
                           dtype=_numpy_dtype(data_type))
        self._t = self._make(arr, int(format))
        if placement == Placement.PLACEMENT_DEVICE:
            self.to_device()

    @staticmethod
    def _make(arr: Any, fmt: int) -> Any:
        t = _core.Tensor(arr)
        if fmt != int(from_air_format(int(t.desc.format))):
            desc = t.desc.copy()
            desc.format = fmt
            desc.origin_format = fmt
            t = _core.Tensor(desc, t.numpy())
        return t

    @classmethod
    def _create_from(cls, tensor: Any) -> Tensor:
        """Wrap an existing :class:`ascendir.Tensor` (no copy)."""
        if tensor is None:
            raise GeValueError("Tensor pointer cannot be None")
        if not isinstance(tensor, _core.Tensor):
            raise GeTypeError(f"expected an ascendir.Tensor, got {type(tensor).__name__}")
        inst = cls.__new__(cls)
        inst._t = tensor
        return inst

    @classmethod
    def from_air(cls, tensor: _core.Tensor) -> Tensor:
        """A GE view of ``tensor`` (the same object)."""
        return cls._create_from(tensor)

    @property
    def air(self) -> _core.Tensor:
        """The wrapped :class:`ascendir.Tensor`."""
        return self._t

    def numpy(self) -> Any:
        """The data as a numpy array (read-only view)."""
        return self._t.numpy()

    def __copy__(self) -> Tensor:
        raise GeError("Tensor does not support copy")

    def __deepcopy__(self, memo: Any) -> Tensor:
        raise GeError("Tensor does not support deepcopy")

    def __str__(self) -> str:
        return (
            f"Tensor format is {self.get_format()}, data_type is {self.get_data_type()}, "
            f"shape is {self.get_shape()}, data is {self.get_data()}"
        )

    @property
    def placement(self) -> Placement:
        """Where the data lives (always the host here)."""
        return self.get_placement()

    @property
    def format(self) -> Format:
        """The format."""
        return self.get_format()

    @property
    def data_type(self) -> DataType:
        """The element data type."""
        return self.get_data_type()

    @property
    def shape(self) -> Shape:
        """The shape."""
        return self.get_shape()

    @property
    def data(self) -> TensorData:
        """The data (see :meth:`get_data`)."""
        return self.get_data()

    def set_format(self, format: Format) -> Tensor:
        """Set the format (the data is unchanged); returns ``self``."""
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format")
        self._t = self._make(self._t.numpy(), int(format))
        return self

    def get_format(self) -> Format:
        """The format."""
        return from_air_format(int(self._t.desc.format))

    def set_data_type(self, data_type: DataType) -> Tensor:
        """Set the data type, converting the values to it; returns ``self``."""
        if not isinstance(data_type, DataType):
            raise GeTypeError("Data_type must be a DataType")
        dtype = _numpy_dtype(data_type)
        fmt = int(self.get_format())
        self._t = self._make(self._t.numpy().astype(dtype), fmt)
        return self

    def get_data_type(self) -> DataType:
        """The element data type."""
        return from_air_dtype(self._t.desc.dtype)

    def get_data(self) -> TensorData:
        """The values: a number for a scalar, nested lists otherwise."""
        value: TensorData = self._t.tolist()
        return value

    def get_tensor_desc(self) -> TensorDesc:
        """A copy of the tensor's descriptor."""
        return TensorDesc._create_from(self._t.desc.copy())

    def get_shape(self) -> Shape:
        """The shape."""
        return Shape(list(self._t.desc.shape))

    def get_placement(self) -> Placement:
        """Where the data lives: always :attr:`Placement.PLACEMENT_HOST` (no device here)."""
        return Placement.PLACEMENT_HOST

    def to_host(self) -> Tensor:
        """Move device data to the host: every tensor here is on the host, so this raises
        GE's ``ValueError``."""
        raise GeValueError("to_host() only supports device tensors")

    def to_device(self) -> Tensor:
        """Move the data to a device: there is no device offline, so this raises
        :class:`~ascendir.ge.error.GeError`."""
        raise GeError("Failed to move tensor from host to device: ascendir.ge has no device")
