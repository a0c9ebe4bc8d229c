"""GE's ``ge.es.GraphBuilder``: eager-style construction of an ascendir graph."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from enum import Enum
from typing import Any

from ... import _core
from ...errors import AscendIRError
from ...types import AttrKind
from ..error import GeError, GeTypeError, GeValueError
from ..graph.graph import Graph
from ..graph.types import DataType, Format
from .tensor_holder import TensorHolder

__all__ = ["GraphBuilder", "InputType", "attr_scope", "control_dependency_scope"]

_local = threading.local()
# How many scopes are open in any thread: the op functions skip the thread-local look-up
# while it is 0, which keeps building cheap.
_open_scopes = 0
_scope_lock = threading.Lock()


class InputType(Enum):
    """The op type of a graph input."""

    DATA = "Data"
    REF_DATA = "RefData"
    AIPP_DATA = "AippData"
    ANY_DATA = "AnyData"


def _np() -> Any:
    import numpy as np

    return np


def _is_int(v: Any) -> bool:
    return isinstance(v, int)


class GraphBuilder:
    """Builds one graph eagerly: each call adds nodes (shapes and types inferred at once by
    ascendir's op registry) to an :class:`ascendir.Graph`, and :meth:`build_and_reset` hands
    it over as a :class:`ascendir.ge.graph.Graph`, after which the builder refuses work.
    """

    __slots__ = ("__weakref__", "_const_seq", "_g", "_input_names", "_is_built", "_loose_inputs",
                 "_name",
                 "_outputs")

    def __init__(self, name: str | None = None) -> None:
        if name is not None and not isinstance(name, str):
            raise GeTypeError("Graph name must be a string")
        self._name = name or "graph"
        self._g = _core.Graph(self._name)
        self._is_built = False
        self._outputs: dict[int, TensorHolder] = {}
        self._input_names: dict[int, str] = {}
        # Inputs made with neither shape nor dtype (placeholders of pattern and replacement
        # graphs): their dtype adapts to the one port type that reads them first.
        self._loose_inputs: set[str] = set()
        self._const_seq = 0

    def __copy__(self) -> GraphBuilder:
        raise GeError("GraphBuilder does not support copy")

    def __deepcopy__(self, memo: Any) -> GraphBuilder:
        raise GeError("GraphBuilder does not support deepcopy")

    def __repr__(self) -> str:
        return f"GraphBuilder(name={self._name!r}, nodes={len(self._g)}, built={self._is_built})"

    @property
    def name(self) -> str:
        """The name of the graph being built."""
        return self._name

    @property
    def air(self) -> _core.Graph:
        """The :class:`ascendir.Graph` being built (the same object the built graph wraps)."""
        return self._g

    def _check_usable(self, operation: str) -> None:
        if self._is_built:
            raise GeError(
                f"Cannot {operation}: GraphBuilder has already been built. "
                "Create a new GraphBuilder to build another graph.")

    # -- scopes -----------------------------------------------------------------------------

    @staticmethod
    def _scoped() -> bool:
        return _open_scopes > 0

    def _apply_scope_infos_to_node(self, tensor_holder: TensorHolder) -> TensorHolder:
        """Give the producer of ``tensor_holder`` the attributes and control dependencies of
        the open :func:`attr_scope` / :func:`control_dependency_scope` blocks."""
        attrs: dict[str, Any] = getattr(_local, "attrs", {})
        if attrs:
            node = tensor_holder._get_node_snapshot()
            for key, value in attrs.items():
                node.set_attr(key, value)
        deps: list[TensorHolder] = getattr(_local, "deps", [])
        deps = [d for d in deps if d._node != tensor_holder._node]
        if deps:
            self.add_control_dependency(tensor_holder, deps)
        return tensor_holder

    def _made(self, node: Any) -> TensorHolder:
        out = TensorHolder._create_from(node, self)
        if _open_scopes:
            self._apply_scope_infos_to_node(out)
        return out

    # -- inputs and constants ---------------------------------------------------------------

    def create_input(
        self,
        index: int,
        *,
        name: str | None = None,
        type_str: InputType = InputType.DATA,
        data_type: DataType = DataType.DT_FLOAT,
        format: Format = Format.FORMAT_ND,
        shape: list[int] | None = None,
    ) -> TensorHolder:
        """Graph input ``index`` (a ``Data`` node by default, named ``input_<index>``) of the
        given type, format and shape (``None``: a scalar)."""
        self._check_usable("create input")
        if not _is_int(index):
            raise GeTypeError("Input index must be an integer")
        if shape is not None and (
            not isinstance(shape, list) or not all(isinstance(d, int) for d in shape)
        ):
            raise GeTypeError("Shape must be a list of integers")
        if not isinstance(type_str, InputType):
            raise GeTypeError("type_str must be an InputType")
        if not isinstance(data_type, DataType):
            raise GeTypeError("Data type must be a DataType")
        if not isinstance(format, Format):
            raise GeTypeError("Format must be a Format")
        if name is not None and not isinstance(name, str):
            raise GeTypeError("Input name must be a string")
        node_name = name or f"input_{index}"
        taken = self._input_names.get(index)
        if taken is not None:
            raise GeError(
                f"Failed to create input {node_name!r} (index {index}): the index is taken by "
                f"input {taken!r}")
        dims = list(shape) if shape is not None else []
        desc = _core.TensorDesc(dims, int(data_type), int(format), origin_shape=dims,
                                origin_format=int(format))
        try:
            if type_str == InputType.DATA:
                node = self._g.add_input(node_name, desc, index=index)
            else:
                op = _core.OpDesc.from_type(type_str.value, node_name, attrs={"index": index})
                if op.num_inputs:
                    op.update_input_desc(0, desc)
                op.update_output_desc(0, desc)
                if self._g.find(node_name) is not None:
                    raise GeValueError(f"a node named {node_name!r} exists")
                node = self._g.add_node(op)
        except AscendIRError as e:
            raise GeError(f"Failed to create input {node_name!r} (index {index}): {e}") from e
        self._input_names[index] = node_name
        if shape is None and data_type == DataType.DT_FLOAT and type_str == InputType.DATA:
            self._loose_inputs.add(node_name)
        return self._made(node)

    def create_inputs(self, num: int, start_index: int = 0) -> list[TensorHolder]:
        """``num`` float scalar inputs with indexes ``start_index``, ``start_index + 1``, ..."""
        self._check_usable("create inputs")
        if not _is_int(num) or num <= 0:
            raise GeTypeError("Number of inputs must be a positive integer")
        if not _is_int(start_index) or start_index < 0:
            raise GeTypeError("Start index must be a non-negative integer")
        return [self.create_input(i) for i in range(start_index, start_index + num)]

    def _const(self, values: list[Any], dims: list[int], dtype: str, what: str) -> TensorHolder:
        np = _np()
        try:
            arr = np.asarray(values, dtype=dtype).reshape(dims)
        except (OverflowError, ValueError) as e:
            raise GeValueError(f"Failed to create {what} constant: {e}") from e
        while True:
            name = f"Const_{self._const_seq}"
            self._const_seq += 1
            if self._g.find(name) is None:
                break
        try:
            node = self._g.add_const(name, arr)
        except AscendIRError as e:
            raise GeError(f"Failed to create {what} constant: {e}") from e
        return self._made(node)

    def _const_values(
        self, value: Any, shape: Any, ok: Any, msg: str
    ) -> tuple[list[Any], list[int]]:
        if ok(value):
            values = [value]
            dims = [] if shape is None else shape
        elif isinstance(value, list):
            if not all(ok(v) for v in value):
                raise GeTypeError(msg)
            values = list(value)
            dims = shape if shape is not None else [len(value)]
        else:
            raise GeTypeError(msg)
        if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
            raise GeTypeError("Shape must be a list of integers")
        expected = 1
        for d in dims:
            expected *= d
        if len(values) != expected:
            raise GeValueError(
                f"Value count ({len(values)}) doesn't match shape {dims} "
                f"(expected {expected} elements)")
        return values, list(dims)

    def _int_const(self, value: Any, shape: Any, dtype: str, what: str) -> TensorHolder:
        self._check_usable("create constant")
        values, dims = self._const_values(
            value, shape, _is_int, "Value must be an integer or list of integers")
        return self._const(values, dims, dtype, what)

    def create_const_int64(self, value: int | list[int],
                           shape: list[int] | None = None) -> TensorHolder:
        """An int64 constant: a scalar for an int, a vector (or ``shape``) for a list."""
        return self._int_const(value, shape, "int64", "int64")

    def create_const_int32(self, value: int | list[int],
                           shape: list[int] | None = None) -> TensorHolder:
        """An int32 constant (as :meth:`create_const_int64`)."""
        return self._int_const(value, shape, "int32", "int32")

    def create_const_uint64(self, value: int | list[int],
                            shape: list[int] | None = None) -> TensorHolder:
        """A uint64 constant (as :meth:`create_const_int64`)."""
        return self._int_const(value, shape, "uint64", "uint64")

    def create_const_uint32(self, value: int | list[int],
                            shape: list[int] | None = None) -> TensorHolder:
        """A uint32 constant (as :meth:`create_const_int64`)."""
        return self._int_const(value, shape, "uint32", "uint32")

    def create_const_float(self, value: float | list[float],
                           shape: list[int] | None = None) -> TensorHolder:
        """A float32 constant: a scalar for a number, a vector (or ``shape``) for a list."""
        self._check_usable("create constant")
        values, dims = self._const_values(
            value, shape, lambda v: isinstance(v, (int, float)),
            "Value must be a float or list of floats")
        return self._const([float(v) for v in values], dims, "float32", "float")

    def create_vector_int64(self, value: list[int]) -> TensorHolder:
        """A 1-D int64 constant."""
        self._check_usable("create vector")
        if not isinstance(value, list) or not all(_is_int(v) for v in value):
            raise GeTypeError("Value must be a list of integers")
        return self._const(list(value), [len(value)], "int64", "int64 vector")

    def _scalar(self, value: Any, dtype: str, what: str) -> TensorHolder:
        self._check_usable("create scalar")
        if not _is_int(value):
            raise GeTypeError("Value must be an integer")
        return self._const([value], [], dtype, what)

    def create_scalar_int64(self, value: int) -> TensorHolder:
        """An int64 scalar constant."""
        return self._scalar(value, "int64", "int64 scalar")

    def create_scalar_int32(self, value: int) -> TensorHolder:
        """An int32 scalar constant."""
        return self._scalar(value, "int32", "int32 scalar")

    def create_scalar_uint64(self, value: int) -> TensorHolder:
        """A uint64 scalar constant (GE's ``ValueError`` when negative)."""
        if _is_int(value) and value < 0:
            raise GeValueError("Value must be non-negative for uint64")
        return self._scalar(value, "uint64", "uint64 scalar")

    def create_scalar_uint32(self, value: int) -> TensorHolder:
        """A uint32 scalar constant (GE's ``ValueError`` outside ``[0, 2**32 - 1]``)."""
        if _is_int(value) and not 0 <= value <= 0xFFFFFFFF:
            raise GeValueError("Value must be in range [0, 2^32-1] for uint32")
        return self._scalar(value, "uint32", "uint32 scalar")

    def create_scalar_float(self, value: float) -> TensorHolder:
        """A float32 scalar constant."""
        self._check_usable("create scalar")
        if not isinstance(value, (int, float)):
            raise GeTypeError("Value must be a number")
        return self._const([float(value)], [], "float32", "float scalar")

    def create_variable(self, index: int, name: str) -> TensorHolder:
        """A ``Variable`` node: needs the ``Variable`` op in ascendir's registry (GE's
        ``RuntimeError`` when it is not registered)."""
        self._check_usable("create variable")
        if not _is_int(index):
            raise GeTypeError("Index must be an integer")
        if not isinstance(name, str):
            raise GeTypeError("Name must be a string")
        try:
            node = self._g.add_op("Variable", [], name=name, attrs={"index": index})
        except AscendIRError as e:
            raise GeError(f"Failed to create variable {name!r}: {e}") from e
        return self._made(node)

    # -- outputs and attributes -------------------------------------------------------------

    def _own(self, tensor: Any, what: str = "Tensor") -> TensorHolder:
        if not isinstance(tensor, TensorHolder):
            raise GeTypeError(f"{what} must be a TensorHolder")
        if tensor._builder is not self:
            raise GeValueError(
                f"{what} '{tensor.name}' belongs to GraphBuilder '{tensor._builder.name}', "
                f"not to '{self._name}'")
        return tensor

    def set_graph_output(self, tensor: TensorHolder, output_index: int) -> None:
        """Make ``tensor`` graph output ``output_index`` (a later call for the same index
        replaces it)."""
        self._check_usable("set graph output")
        self._own(tensor)
        if not _is_int(output_index):
            raise GeTypeError("Output index must be an integer")
        if output_index < 0:
            raise GeError(
                f"Failed to set graph output for graph {self._name} output index "
                f"{output_index}: the index is negative")
        self._outputs[output_index] = tensor

    def _graph_attr(self, attr_name: Any, value: Any, ok: Any, msg: str, kind: AttrKind) -> None:
        self._check_usable("set graph attribute")
        if not isinstance(attr_name, str):
            raise GeTypeError("Attribute name must be a string")
        if not ok(value):
            raise GeTypeError(msg)
        self._g.attrs.set(attr_name, value, kind=kind)

    def set_graph_attr_int64(self, attr_name: str, value: int) -> None:
        """Set an int graph attribute."""
        self._graph_attr(attr_name, value, _is_int, "Value must be an integer", AttrKind.INT)

    def set_graph_attr_string(self, attr_name: str, value: str) -> None:
        """Set a string graph attribute."""
        self._graph_attr(attr_name, value, lambda v: isinstance(v, str),
                         "Value must be a string", AttrKind.STRING)

    def set_graph_attr_bool(self, attr_name: str, value: bool) -> None:
        """Set a bool graph attribute."""
        self._graph_attr(attr_name, value, lambda v: isinstance(v, bool),
                         "Value must be a boolean", AttrKind.BOOL)

    def _holder_attr(self, where: str, tensor: Any, attr_name: Any, value: Any, ok: Any,
                     msg: str, kind: AttrKind) -> None:
        self._check_usable(f"set {where} attribute")
        if not isinstance(tensor, TensorHolder):
            raise GeTypeError("Tensor must be a TensorHolder")
        if not isinstance(attr_name, str):
            raise GeTypeError("Attribute name must be a string")
        if not ok(value):
            raise GeTypeError(msg)
        self._own(tensor)
        if where == "node":
            attrs = tensor._node.attrs
        else:
            attrs = tensor._node.op_desc.output_desc(tensor._index).attrs
        attrs.set(attr_name, value, kind=kind)

    def set_tensor_attr_int64(self, tensor: TensorHolder, attr_name: str, value: int) -> None:
        """Set an int attribute on ``tensor``'s output descriptor."""
        self._holder_attr("tensor", tensor, attr_name, value, _is_int,
                          "Value must be an integer", AttrKind.INT)

    def set_tensor_attr_string(self, tensor: TensorHolder, attr_name: str, value: str) -> None:
        """Set a string attribute on ``tensor``'s output descriptor."""
        self._holder_attr("tensor", tensor, attr_name, value, lambda v: isinstance(v, str),
                          "Value must be a string", AttrKind.STRING)

    def set_tensor_attr_bool(self, tensor: TensorHolder, attr_name: str, value: bool) -> None:
        """Set a bool attribute on ``tensor``'s output descriptor."""
        self._holder_attr("tensor", tensor, attr_name, value, lambda v: isinstance(v, bool),
                          "Value must be a boolean", AttrKind.BOOL)

    def set_node_attr_int64(self, tensor: TensorHolder, attr_name: str, value: int) -> None:
        """Set an int attribute on ``tensor``'s producer node."""
        self._holder_attr("node", tensor, attr_name, value, _is_int,
                          "Value must be an integer", AttrKind.INT)

    def set_node_attr_string(self, tensor: TensorHolder, attr_name: str, value: str) -> None:
        """Set a string attribute on ``tensor``'s producer node."""
        self._holder_attr("node", tensor, attr_name, value, lambda v: isinstance(v, str),
                          "Value must be a string", AttrKind.STRING)

    def set_node_attr_bool(self, tensor: TensorHolder, attr_name: str, value: bool) -> None:
        """Set a bool attribute on ``tensor``'s producer node."""
        self._holder_attr("node", tensor, attr_name, value, lambda v: isinstance(v, bool),
                          "Value must be a boolean", AttrKind.BOOL)

    def add_control_dependency(self, dst_tensor: TensorHolder,
                               src_tensors: list[TensorHolder]) -> None:
        """Control edges from each producer of ``src_tensors`` to ``dst_tensor``'s producer
        (all or nothing)."""
        self._check_usable("add control dependency")
        if not isinstance(dst_tensor, TensorHolder):
            raise GeTypeError("dst_tensor must be a TensorHolder")
        if not isinstance(src_tensors, list):
            raise GeTypeError("src_tensors must be a list")
        if not all(isinstance(t, TensorHolder) for t in src_tensors):
            raise GeTypeError("src_tensors must be a list of TensorHolder")
        self._own(dst_tensor, "dst_tensor")
        for t in src_tensors:
            self._own(t, "src_tensors item")
        dst = dst_tensor._node.in_control_anchor
        made: list[Any] = []
        try:
            for t in src_tensors:
                src = t._node.out_control_anchor
                if not src.is_linked_with(dst):
                    src.link_to(dst)
                    made.append(src)
        except AscendIRError as e:
            for src in made:
                src.unlink(dst)
            raise GeError(
                f"Failed to add control dependency for nodes in graph {self._name}: {e}") from e

    def build_and_reset(self, outputs: list[TensorHolder] | None = None) -> Graph:
        """Finish the graph: ``outputs`` (when given) become outputs 0, 1, ...; the outputs
        set must be numbered 0..n-1 without gaps. Returns the graph; the builder is then
        closed (GE's ``RuntimeError`` on any further use)."""
        self._check_usable("build_and_reset")
        if outputs is not None:
            if not isinstance(outputs, list):
                raise GeTypeError("Outputs must be a list")
            if not all(isinstance(t, TensorHolder) for t in outputs):
                raise GeTypeError("All outputs must be TensorHolder objects")
            for t in outputs:
                self._own(t)
            for i, t in enumerate(outputs):
                self._outputs[i] = t
        order = sorted(self._outputs)
        if order != list(range(len(order))):
            raise GeError(
                f"Failed to build graph {self._name}: graph outputs {order} are not numbered "
                "0..n-1")
        if order:
            try:
                self._g.set_outputs([self._outputs[i].air for i in order])
            except AscendIRError as e:
                raise GeError(f"Failed to build graph {self._name}: {e}") from e
        self._is_built = True
        return Graph._create_from(self._g, owner=self)


@contextlib.contextmanager
def attr_scope(attr_maps: dict[str, Any]) -> Iterator[None]:
    """Nodes built inside the block (in this thread) get the attributes ``attr_maps``
    (nested scopes merge, the inner value winning)."""
    if not isinstance(attr_maps, dict):
        raise GeTypeError("attr_maps must be a dict")
    global _open_scopes
    current: dict[str, Any] = getattr(_local, "attrs", {})
    _local.attrs = {**current, **attr_maps}
    with _scope_lock:
        _open_scopes += 1
    try:
        yield
    finally:
        _local.attrs = current
        with _scope_lock:
            _open_scopes -= 1


@contextlib.contextmanager
def control_dependency_scope(tensors: list[TensorHolder]) -> Iterator[None]:
    """Nodes built inside the block (in this thread) get control edges from the producers of
    ``tensors``."""
    if not isinstance(tensors, list) or not all(isinstance(t, TensorHolder) for t in tensors):
        raise GeTypeError("tensors must be a list of TensorHolder")
    global _open_scopes
    current: list[TensorHolder] = getattr(_local, "deps", [])
    _local.deps = current + tensors
    with _scope_lock:
        _open_scopes += 1
    try:
        yield
    finally:
        _local.deps = current
        with _scope_lock:
            _open_scopes -= 1
