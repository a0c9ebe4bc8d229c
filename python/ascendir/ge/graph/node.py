"""GE's ``ge.graph.Node`` over :class:`ascendir.Node`."""

from __future__ import annotations

from typing import Any

from ... import _core
from ...errors import AscendIRError
from ..error import GeError, GeTypeError, GeValueError
from ._attr import get_attr, set_attr
from .tensor_desc import TensorDesc

__all__ = ["Node"]


def _check_index(value: Any, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise GeTypeError(f"{what} must be an integer")


class Node:
    """A node of a graph: a handle on an :class:`ascendir.Node` (``.air``), never a copy.

    Nodes come from a graph (``Graph.get_all_nodes``, ``find_node_by_name``) and are never
    built directly. Two ``Node`` objects of the same node are equal and hash alike.
    """

    __slots__ = ("_node",)
    _node: Any

    def __init__(self) -> None:
        raise GeError("Node objects should not be created directly.")

    @classmethod
    def _create_from(cls, node: Any) -> Node:
        """Wrap an :class:`ascendir.Node` (no copy)."""
        if node is None:
            raise GeValueError("Node handle cannot be None")
        if not isinstance(node, _core.Node):
            raise GeTypeError(f"expected an ascendir.Node, got {type(node).__name__}")
        inst = cls.__new__(cls)
        inst._node = node
        return inst

    @classmethod
    def from_air(cls, node: _core.Node) -> Node:
        """The GE view of ``node`` (the same node)."""
        return cls._create_from(node)

    @property
    def air(self) -> _core.Node:
        """The wrapped :class:`ascendir.Node`."""
        return self._node

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and self._node == other._node

    def __hash__(self) -> int:
        return hash(self._node)

    def __repr__(self) -> str:
        return f"Node(name={self.name!r}, type={self.type!r})"

    def __copy__(self) -> Node:
        raise GeError("Node does not support copy")

    def __deepcopy__(self, memo: Any) -> Node:
        raise GeError("Node does not support deepcopy")

    def _op(self, what: str) -> Any:
        try:
            return self._node.op_desc
        except AscendIRError as e:
            raise GeError(f"Failed to {what}: {e}") from e

    @property
    def name(self) -> str:
        """The node's name."""
        try:
            return str(self._node.name)
        except AscendIRError as e:
            raise GeError(f"Failed to get Node name: {e}") from e

    @property
    def type(self) -> str:
        """The node's op type."""
        try:
            return str(self._node.type)
        except AscendIRError as e:
            raise GeError(f"Failed to get Node type: {e}") from e

    def get_in_control_nodes(self) -> list[Node]:
        """The nodes with a control edge into this one."""
        return [Node._create_from(n) for n in self._node.in_control_nodes]

    def get_out_control_nodes(self) -> list[Node]:
        """The nodes this one has a control edge to."""
        return [Node._create_from(n) for n in self._node.out_control_nodes]

    def get_in_data_nodes_and_port_indexes(self, in_index: int) -> tuple[Node, int]:
        """The producer of input ``in_index`` and its output index (GE's ``RuntimeError``
        when the input does not exist or is not linked)."""
        _check_index(in_index, "Input index")
        try:
            src = self._node.input_source(in_index) if in_index >= 0 else None
        except (AscendIRError, IndexError) as e:
            raise GeError(f"Failed to get input data node for index {in_index}: {e}") from e
        if src is None:
            raise GeError(f"Failed to get input data node for index {in_index}: not linked")
        return Node._create_from(src.node), int(src.index)

    def get_out_data_nodes_and_port_indexes(self, out_index: int) -> list[tuple[Node, int]]:
        """The consumers of output ``out_index``: ``(node, input index)`` in link order."""
        _check_index(out_index, "Output index")
        outs = self._node.outputs
        if not 0 <= out_index < len(outs):
            raise GeError(
                f"Failed to get output data node for index {out_index}: node "
                f"'{self._node.name}' has {len(outs)} outputs")
        return [(Node._create_from(u.node), int(u.index)) for u in outs[out_index].uses()]

    def get_inputs_size(self) -> int:
        """The number of valid inputs (GE's ``GetInputsSize``: unset optional ones excluded)."""
        return int(self._op("get inputs size").num_valid_inputs)

    def get_outputs_size(self) -> int:
        """The number of outputs."""
        return int(self._op("get outputs size").num_outputs)

    def has_attr(self, attr_name: str) -> bool:
        """Whether the node has attribute ``attr_name``."""
        if not isinstance(attr_name, str):
            raise GeTypeError("attr_name must be a string")
        return attr_name in self._node.attrs

    def get_attr(self, key: str) -> Any:
        """The value of attribute ``key`` (GE's ``RuntimeError`` if there is none)."""
        return get_attr(self._node.attrs, key, f"Node {self._node.name}")

    def set_attr(self, key: str, value: Any) -> None:
        """Set attribute ``key``; the kind follows the value's Python type (GE's rules)."""
        set_attr(self._node.attrs, key, value, f"Node {self._node.name}")

    def _desc(self, side: str, index: Any, what: str) -> Any:
        _check_index(index, f"{what} index")
        op = self._op(f"get {side} desc")
        count = op.num_inputs if side == "input" else op.num_outputs
        if not 0 <= index < count:
            raise GeError(
                f"Failed to get {side} desc for index {index}: node '{self._node.name}' has "
                f"{count} {side}s")
        return op.input_desc(index) if side == "input" else op.output_desc(index)

    def get_input_desc(self, index: int) -> TensorDesc:
        """A copy of input ``index``'s descriptor (write it back with
        :meth:`update_input_desc`)."""
        return TensorDesc._create_from(self._desc("input", index, "Input").copy())

    def get_output_desc(self, index: int) -> TensorDesc:
        """A copy of output ``index``'s descriptor (write it back with
        :meth:`update_output_desc`)."""
        return TensorDesc._create_from(self._desc("output", index, "Output").copy())

    def _update(self, side: str, index: Any, tensor_desc: Any, what: str) -> None:
        _check_index(index, f"{what} index")
        if not isinstance(tensor_desc, TensorDesc):
            raise GeTypeError("tensor_desc must be a TensorDesc")
        self._desc(side, index, what)
        op = self._op(f"update {side} desc")
        try:
            if side == "input":
                op.update_input_desc(index, tensor_desc.air.copy())
            else:
                op.update_output_desc(index, tensor_desc.air.copy())
        except AscendIRError as e:
            raise GeError(f"Failed to update {side} desc for index {index}: {e}") from e

    def update_input_desc(self, index: int, tensor_desc: TensorDesc) -> None:
        """Replace input ``index``'s descriptor by a copy of ``tensor_desc``."""
        self._update("input", index, tensor_desc, "Input")

    def update_output_desc(self, index: int, tensor_desc: TensorDesc) -> None:
        """Replace output ``index``'s descriptor by a copy of ``tensor_desc``."""
        self._update("output", index, tensor_desc, "Output")

    def _port_attr(self, side: str, attr_name: Any, index: Any) -> tuple[Any, str]:
        if not isinstance(attr_name, str):
            raise GeTypeError("Attribute name must be a string")
        what = "Input" if side == "input" else "Output"
        _check_index(index, f"{what} index")
        try:
            desc = self._desc(side, index, what)
        except GeError as e:
            raise GeError(
                f"Failed to get Node {self.name} {side} attribute '{attr_name}' for index "
                f"{index}: {e}") from e
        return desc, f"Node {self.name} {side} {index}"

    def get_input_attr(self, attr_name: str, input_index: int) -> Any:
        """Attribute ``attr_name`` of input ``input_index``'s descriptor."""
        desc, where = self._port_attr("input", attr_name, input_index)
        return get_attr(desc.attrs, attr_name, where)

    def set_input_attr(self, attr_name: str, input_index: int, value: Any) -> None:
        """Set attribute ``attr_name`` of input ``input_index``'s descriptor."""
        desc, where = self._port_attr("input", attr_name, input_index)
        set_attr(desc.attrs, attr_name, value, where)

    def get_output_attr(self, attr_name: str, output_index: int) -> Any:
        """Attribute ``attr_name`` of output ``output_index``'s descriptor."""
        desc, where = self._port_attr("output", attr_name, output_index)
        return get_attr(desc.attrs, attr_name, where)

    def set_output_attr(self, attr_name: str, output_index: int, value: Any) -> None:
        """Set attribute ``attr_name`` of output ``output_index``'s descriptor."""
        desc, where = self._port_attr("output", attr_name, output_index)
        set_attr(desc.attrs, attr_name, value, where)
