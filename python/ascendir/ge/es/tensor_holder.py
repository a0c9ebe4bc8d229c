"""GE's ``ge.es.TensorHolder``: one output of a node being built, over ascendir's graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import _core
from ...errors import AscendIRError
from ..error import GeError, GeTypeError, GeValueError
from ..graph.node import Node
from ..graph.types import DataType, Format
from .tensor_like import literal_to_tensor_holder

if TYPE_CHECKING:
    from .graph_builder import GraphBuilder

__all__ = ["TensorHolder"]


class TensorHolder:
    """Output ``index`` of a node in a :class:`GraphBuilder`'s graph.

    Holders are made by the builder (``create_input``, ``create_const_*``) and by the op
    functions, never directly. A holder keeps its builder alive. ``+ - * /`` (and the
    reflected forms) add ``Add``, ``Sub``, ``Mul`` and ``Div`` nodes; a number or nested list
    operand becomes a constant first. ``.air`` is the output as an :class:`ascendir.Value`.
    """

    __slots__ = ("_builder", "_index", "_node", "_src")
    _builder: GraphBuilder
    _index: int
    _node: Any
    _src: Any

    def __init__(self) -> None:
        raise GeError("TensorHolder objects should not be created directly")

    @classmethod
    def _create_from(cls, node: Any, owner_builder: GraphBuilder, index: int = 0) -> TensorHolder:
        """Output ``index`` of the ascendir ``node`` in ``owner_builder``'s graph."""
        if node is None:
            raise GeValueError("Tensor handle cannot be None")
        if owner_builder is None:
            raise GeValueError("Owner builder cannot be None")
        inst = cls.__new__(cls)
        inst._node = node
        inst._index = index
        inst._src = node if index == 0 else node.outputs[index]
        inst._builder = owner_builder
        return inst

    @property
    def air(self) -> _core.Value:
        """The output as an :class:`ascendir.Value` (a handle, not a copy)."""
        src = self._src
        return src.outputs[0] if isinstance(src, _core.Node) else src

    @property
    def index(self) -> int:
        """The output index on the producer."""
        return self._index

    @property
    def name(self) -> str:
        """The producer node's name."""
        return str(self._node.name)

    def __repr__(self) -> str:
        return f"TensorHolder({self._node.name}:{self._index})"

    def get_owner_builder(self) -> GraphBuilder:
        """The :class:`GraphBuilder` this holder belongs to."""
        return self._builder

    def _get_node_snapshot(self) -> Node:
        """The producer as a :class:`ascendir.ge.graph.Node`."""
        return Node._create_from(self._node)

    def _check_usable(self, operation: str) -> None:
        self._builder._check_usable(operation)

    def _out_desc(self) -> Any:
        return self._node.op_desc.output_desc(self._index)

    def set_data_type(self, data_type: DataType) -> TensorHolder:
        """Set the output's data type; returns ``self``."""
        self._check_usable("set data type")
        if not isinstance(data_type, DataType):
            raise GeTypeError("Data type must be a DataType enum")
        self._out_desc().dtype = int(data_type)
        return self

    def set_format(self, format: Format) -> TensorHolder:
        """Set the output's format; returns ``self``."""
        self._check_usable("set format")
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format enum")
        desc = self._out_desc()
        desc.format = int(format)
        desc.origin_format = int(format)
        return self

    def set_shape(self, shape: list[int]) -> TensorHolder:
        """Set the output's shape (a list of ints); returns ``self``."""
        self._check_usable("set shape")
        if not isinstance(shape, list):
            raise GeTypeError("Shape must be a list of integers")
        if not all(isinstance(d, int) for d in shape):
            raise GeTypeError("All shape dimensions must be integers")
        desc = self._out_desc()
        desc.shape = shape
        desc.origin_shape = shape
        return self

    def _dtype(self) -> Any:
        return self._out_desc().dtype

    def _binary(self, op_type: str, lhs: Any, rhs: Any, what: str) -> TensorHolder:
        b = self._builder
        b._check_usable(what)
        made = None
        if not isinstance(lhs, TensorHolder):
            lhs = made = literal_to_tensor_holder(lhs, b, self._dtype())
        if not isinstance(rhs, TensorHolder):
            rhs = made = literal_to_tensor_holder(rhs, b, self._dtype())
        if lhs._builder is not rhs._builder:
            raise GeValueError(
                f"Cannot perform {what}: tensors from different GraphBuilders "
                f"('{lhs._builder.name}' vs '{rhs._builder.name}')")
        try:
            node = b._g.add_op(op_type, (lhs._src, rhs._src))
        except AscendIRError as e:
            if made is not None:
                b._g.remove([made._node], safe=False)
            raise GeError(f"Failed to create {what} operation: {e}") from e
        out = TensorHolder._create_from(node, b)
        if b._scoped():
            b._apply_scope_infos_to_node(out)
        return out

    def add(self, other: Any) -> TensorHolder:
        """``self + other`` (an ``Add`` node)."""
        return self._binary("Add", self, other, "add")

    def sub(self, other: Any) -> TensorHolder:
        """``self - other`` (a ``Sub`` node)."""
        return self._binary("Sub", self, other, "sub")

    def mul(self, other: Any) -> TensorHolder:
        """``self * other`` (a ``Mul`` node)."""
        return self._binary("Mul", self, other, "mul")

    def div(self, other: Any) -> TensorHolder:
        """``self / other`` (a ``Div`` node)."""
        return self._binary("Div", self, other, "div")

    def __add__(self, other: Any) -> TensorHolder:
        return self._binary("Add", self, other, "add")

    def __sub__(self, other: Any) -> TensorHolder:
        return self._binary("Sub", self, other, "sub")

    def __mul__(self, other: Any) -> TensorHolder:
        return self._binary("Mul", self, other, "mul")

    def __truediv__(self, other: Any) -> TensorHolder:
        return self._binary("Div", self, other, "div")

    def __radd__(self, other: Any) -> TensorHolder:
        return self._binary("Add", self, other, "add")

    def __rsub__(self, other: Any) -> TensorHolder:
        return self._binary("Sub", other, self, "sub")

    def __rmul__(self, other: Any) -> TensorHolder:
        return self._binary("Mul", self, other, "mul")

    def __rtruediv__(self, other: Any) -> TensorHolder:
        return self._binary("Div", other, self, "div")
