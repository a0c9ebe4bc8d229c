"""Nodes of an AscGraph: the node handle, its outputs (tensor views) and the attribute proxies
``node.attr.sched``, ``node.attr.api`` and ``node.attr.ir_attr``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._core import asc as _casc
from ..errors import InvalidArgumentError, NotFoundError
from ..types import DataType
from ._axis import Axis, ComputeUnit, SizeExpr, _axis_graph, _axis_id
from .dtypes import to_dtype

if TYPE_CHECKING:
    from ._graph import AscGraph


class _Proxy:
    """Base of the attribute proxies (``node.attr.sched`` ...)."""

    __slots__ = ("_node",)
    _node: Node

    def __init__(self, node: Node) -> None:
        object.__setattr__(self, "_node", node)


class SchedProxy(_Proxy):
    """``node.attr.sched``: ``axis``, ``loop_axis``, ``exec_order``, ``exec_condition``."""

    __slots__ = ()

    @property
    def axis(self) -> list[int]:
        """Loop axis ids, outer to inner."""
        n = self._node
        return n._core.sched_get(n._id, "axis")

    @axis.setter
    def axis(self, value: Sequence[Axis | int]) -> None:
        n = self._node
        n._attach_to(_axis_graph(value))
        n._core.sched_set(n._id, "axis", [_axis_id(n._graph, a) for a in value])

    @property
    def loop_axis(self) -> int:
        """The innermost loop axis id (-1 = unset)."""
        n = self._node
        return n._core.sched_get(n._id, "loop_axis")

    @loop_axis.setter
    def loop_axis(self, value: Axis | int) -> None:
        n = self._node
        n._attach_to(_axis_graph([value]))
        n._core.sched_set(n._id, "loop_axis", _axis_id(n._graph, value))

    @property
    def exec_order(self) -> int:
        """Execution order (-1 = node order)."""
        n = self._node
        return n._core.sched_get(n._id, "exec_order")

    @exec_order.setter
    def exec_order(self, value: int) -> None:
        n = self._node
        n._core.sched_set(n._id, "exec_order", value)

    @property
    def exec_condition(self) -> str:
        """Caching condition name (``no_cache`` ...)."""
        n = self._node
        return n._core.sched_get(n._id, "exec_condition")

    @exec_condition.setter
    def exec_condition(self, value: str | int) -> None:
        n = self._node
        n._core.sched_set(n._id, "exec_condition", value)


class ApiProxy(_Proxy):
    """``node.attr.api``: ``compute_type``, ``type``, ``unit`` (lower-case names)."""

    __slots__ = ()

    @property
    def compute_type(self) -> str:
        """Compute type (``load``, ``elewise``, ...); setting it also sets type and unit."""
        n = self._node
        return n._core.api_get(n._id, "compute_type")

    @compute_type.setter
    def compute_type(self, value: str | int) -> None:
        n = self._node
        n._core.api_set(n._id, "compute_type", value)

    @property
    def type(self) -> str:
        """API type (``buffer`` or ``compute``)."""
        n = self._node
        return n._core.api_get(n._id, "type")

    @type.setter
    def type(self, value: str) -> None:
        n = self._node
        n._core.api_set(n._id, "type", value)

    @property
    def unit(self) -> ComputeUnit:
        """Compute unit (:class:`ComputeUnit`: ``VECTOR``, ``MTE2``, ...)."""
        n = self._node
        return ComputeUnit[str(n._core.api_get(n._id, "unit")).upper()]

    @unit.setter
    def unit(self, value: ComputeUnit | str | int) -> None:
        n = self._node
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                value = ComputeUnit(value)
            except ValueError:
                raise InvalidArgumentError(f"compute unit {value} is not one of GE's "
                                           f"{[u.value for u in ComputeUnit]}") from None
        name = value.name.lower() if isinstance(value, ComputeUnit) else str(value)
        n._core.api_set(n._id, "unit", name)


class IrAttrProxy(_Proxy):
    """``node.attr.ir_attr.<name>``: the op's IR attributes, type-checked by its prototype."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        n = self._node
        value = n._core.ir_attr_get(n._id, name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        n = self._node
        if isinstance(value, DataType):
            value = int(value)
        n._core.ir_attr_set(n._id, name, value)

    def names(self) -> list[str]:
        """Names of the attributes that are set."""
        n = self._node
        return n._core.ir_attr_names(n._id)


class NodeAttr(_Proxy):
    """``node.attr``: ``sched``, ``api``, ``ir_attr``."""

    __slots__ = ()

    @property
    def sched(self) -> SchedProxy:
        """Scheduling info."""
        return SchedProxy(self._node)

    @property
    def api(self) -> ApiProxy:
        """API info."""
        return ApiProxy(self._node)

    @property
    def ir_attr(self) -> IrAttrProxy:
        """Per-op IR attributes."""
        return IrAttrProxy(self._node)


class _FieldProxy:
    """``out.mem`` / ``out.que`` / ``out.buf``: memory attribute groups of an output."""

    __slots__ = ("_out", "_group")

    def __init__(self, out: Output, group: str) -> None:
        object.__setattr__(self, "_out", out)
        object.__setattr__(self, "_group", group)

    def __getattr__(self, name: str) -> Any:
        o = self._out
        d = o._node._core.tensor_get(o._node._id, o._index, self._group)
        if name not in d:
            raise AttributeError(name)
        return d[name]

    def __setattr__(self, name: str, value: Any) -> None:
        o = self._out
        o._node._core.tensor_set(o._node._id, o._index, self._group, (name, value))

    def __repr__(self) -> str:
        o = self._out
        return repr(o._node._core.tensor_get(o._node._id, o._index, self._group))


class Output:
    """An output tensor of a node (``node.y``): dtype, view and memory attributes."""

    __slots__ = ("_node", "_index")

    def __init__(self, node: Node, index: int) -> None:
        self._node = node
        self._index = index

    def _get(self, field: str) -> Any:
        n = self._node
        return n._core.tensor_get(n._id, self._index, field)

    def _set(self, field: str, value: Any) -> None:
        n = self._node
        n._core.tensor_set(n._id, self._index, field, value)

    @property
    def node(self) -> Node:
        """The producing node."""
        return self._node

    @property
    def index(self) -> int:
        """Output index."""
        return self._index

    @property
    def name(self) -> str:
        """Output port name."""
        n = self._node
        return n._core.output_names(n._id)[self._index]

    @property
    def dtype(self) -> DataType:
        """Element type."""
        return DataType(self._get("dtype"))

    @dtype.setter
    def dtype(self, value: Any) -> None:
        self._set("dtype", int(to_dtype(value)))

    @property
    def axis(self) -> list[int]:
        """Axis ids of the view."""
        return self._get("axis")

    @axis.setter
    def axis(self, value: Sequence[Axis | int]) -> None:
        self._set_axes("axis", value)

    def _set_axes(self, field: str, value: Sequence[Axis | int]) -> None:
        """Set an axis-id list field, attaching the node to the axes' graph first."""
        n = self._node
        n._attach_to(_axis_graph(value))
        self._set(field, [_axis_id(n._graph, a) for a in value])

    @property
    def size(self) -> list[SizeExpr]:
        """Repeats (extent per view axis); GE's name."""
        return self._get("repeats")

    @size.setter
    def size(self, value: Sequence[SizeExpr | int]) -> None:
        self._set("repeats", list(value))

    repeats = size

    @property
    def strides(self) -> list[SizeExpr]:
        """Index step per view axis."""
        return self._get("strides")

    @strides.setter
    def strides(self, value: Sequence[SizeExpr | int]) -> None:
        self._set("strides", list(value))

    @property
    def vectorized_axis(self) -> list[int]:
        """Axes held in UB for one API call."""
        return self._get("vectorized_axis")

    @vectorized_axis.setter
    def vectorized_axis(self, value: Sequence[Axis | int]) -> None:
        self._set_axes("vectorized_axis", value)

    @property
    def vectorized_strides(self) -> list[SizeExpr]:
        """UB strides of the vectorized axes."""
        return self._get("vectorized_strides")

    @vectorized_strides.setter
    def vectorized_strides(self, value: Sequence[SizeExpr | int]) -> None:
        self._set("vectorized_strides", list(value))

    @property
    def mem(self) -> _FieldProxy:
        """Placement: ``tensor_id``, ``alloc_type``, ``hardware``, ``position``, ``reuse_id``."""
        return _FieldProxy(self, "mem")

    @property
    def que(self) -> _FieldProxy:
        """Queue binding: ``id``, ``depth``, ``buf_num``."""
        return _FieldProxy(self, "que")

    @property
    def buf(self) -> _FieldProxy:
        """Buffer binding: ``id``."""
        return _FieldProxy(self, "buf")

    def set_contiguous(self, axes: Sequence[Axis | int]) -> None:
        """Make this a contiguous view over ``axes`` (repeats = sizes, strides = suffix
        products, last 1)."""
        n = self._node
        n._attach_to(_axis_graph(axes))
        n._core.set_contiguous(n._id, self._index, [_axis_id(n._graph, a) for a in axes])

    contiguous = property(None, set_contiguous, doc="Write-only: ``out.contiguous = [z0, z1]``.")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Output):
            return False
        return other._node is self._node and other._index == self._index

    def __hash__(self) -> int:
        return hash((id(self._node), self._index))

    def __repr__(self) -> str:
        return f"Output({self._node.name}.{self.name})"


class Node:
    """An AscIR node (``asc.ops.Abs("abs", graph)``); ports are attributes (``node.x = other``,
    ``node.y.dtype``), attributes live under ``node.attr``.

    A node created without a graph joins one when it is linked to a node of that graph or
    given axes of that graph.
    """

    op_type: str = ""

    def __init__(self, name: str, graph: AscGraph | None = None) -> None:
        object.__setattr__(self, "_graph", None)
        object.__setattr__(self, "_scratch", None)
        object.__setattr__(self, "_id", 0)
        object.__setattr__(self, "_ports", None)
        if graph is not None:
            nid = graph._core.add_node(name, self.op_type)
            object.__setattr__(self, "_graph", graph)
            object.__setattr__(self, "_id", nid)
            graph._nodes[nid] = self
        else:
            scratch = _casc.AscGraph("")
            scratch.add_node(name, self.op_type)
            object.__setattr__(self, "_scratch", scratch)

    @classmethod
    def _wrap(cls, graph: AscGraph, nid: int) -> Node:
        node = cls.__new__(cls)
        object.__setattr__(node, "_graph", graph)
        object.__setattr__(node, "_scratch", None)
        object.__setattr__(node, "_id", nid)
        object.__setattr__(node, "_ports", None)
        return node

    @property
    def _core(self) -> Any:
        g = self._graph
        return g._core if g is not None else self._scratch

    def _attach_to(self, graph: AscGraph | None) -> None:
        if graph is None or self._graph is graph:
            return
        if self._graph is not None:
            raise InvalidArgumentError(
                f"node '{self.name}' belongs to graph '{self._graph.name}', not '{graph.name}'"
            )
        nid = graph._core.adopt(self._scratch, self._id)
        object.__setattr__(self, "_graph", graph)
        object.__setattr__(self, "_scratch", None)
        object.__setattr__(self, "_id", nid)
        graph._nodes[nid] = self

    @property
    def graph(self) -> AscGraph | None:
        """The owning graph (None until the node joins one)."""
        return self._graph

    @property
    def id(self) -> int:
        """Node id in its graph."""
        return self._id

    @property
    def name(self) -> str:
        """Node name."""
        return self._core.node_name(self._id)

    @property
    def type(self) -> str:
        """AscIR op type."""
        return self._core.node_type(self._id)

    @property
    def attr(self) -> NodeAttr:
        """``sched``, ``api`` and ``ir_attr``."""
        return NodeAttr(self)

    @attr.deleter
    def attr(self) -> None:
        """Deleting the proxy is a no-op (GE scripts do ``del x.attr``)."""

    @property
    def input_names(self) -> list[str]:
        """Input port names."""
        return self._core.input_names(self._id)

    @property
    def output_names(self) -> list[str]:
        """Output port names."""
        return self._core.output_names(self._id)

    @property
    def outputs(self) -> list[Output]:
        """Output handles."""
        return [Output(self, i) for i in range(len(self.output_names))]

    def output(self, index_or_name: int | str) -> Output:
        """An output by index or port name."""
        names = self.output_names
        if isinstance(index_or_name, str):
            if index_or_name not in names:
                raise NotFoundError(f"node '{self.name}' has no output '{index_or_name}'")
            return Output(self, names.index(index_or_name))
        if not 0 <= index_or_name < len(names):
            raise NotFoundError(f"node '{self.name}' has no output {index_or_name}")
        return Output(self, index_or_name)

    def set_dynamic_outputs(self, port: str, count: int) -> None:
        """Set the number of instances of a dynamic output (named ``<port>0`` ...)."""
        self._core.set_dynamic_outputs(self._id, port, count)

    def input(self, name: str) -> Output | None:
        """The producer output feeding input ``name`` (None when unconnected)."""
        names = self.input_names
        if name not in names:
            raise NotFoundError(f"node '{self.name}' has no input '{name}'")
        src = self._core.node_inputs(self._id)[names.index(name)]
        if src is None or self._graph is None:
            return None
        return Output(self._graph._node(src[0]), src[1])

    def _static_port(self, name: str) -> str | None:
        try:
            info = _op_ports(self.op_type)
        except NotFoundError:
            if name in self.input_names:
                return "in"
            return "out" if name in self.output_names else None
        for port, kind in info[0]:
            if port == name:
                return "in_dynamic" if kind == "dynamic" else "in"
        for port, _kind in info[1]:
            if port == name:
                return "out"
        return None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        names = self.output_names
        if name in names:
            return Output(self, names.index(name))
        if name in self.input_names:
            return self.input(name)
        raise AttributeError(f"{type(self).__name__} node has no attribute or port '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        kind = None if name.startswith("_") else self._static_port(name)
        if kind == "in":
            self._link(name, value)
        elif kind == "in_dynamic":
            self._link_dynamic(name, value)
        elif kind == "out":
            raise InvalidArgumentError(f"output '{name}' of node '{self.name}' cannot be assigned")
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _as_output(value: Any) -> Output:
        if isinstance(value, Output):
            return value
        if isinstance(value, Node):
            return Output(value, 0)
        raise InvalidArgumentError(f"an input takes a node or an output, got {value!r}")

    def _join(self, src: Output) -> None:
        sn = src._node
        if sn._graph is None and self._graph is None:
            raise InvalidArgumentError(
                f"cannot link '{sn.name}' to '{self.name}': neither node belongs to a graph"
            )
        if self._graph is None:
            self._attach_to(sn._graph)
        elif sn._graph is None:
            sn._attach_to(self._graph)
        elif sn._graph is not self._graph:
            raise InvalidArgumentError(
                f"cannot link '{sn.name}' (graph '{sn._graph.name}') to '{self.name}' "
                f"(graph '{self._graph.name}')"
            )

    def _link(self, port: str, value: Any) -> None:
        src = self._as_output(value)
        self._join(src)
        self._core.connect(src._node._id, src._index, self._id, port)

    def _link_dynamic(self, port: str, value: Any) -> None:
        srcs = [self._as_output(v) for v in value]
        for s in srcs:
            self._join(s)
        self._core.set_dynamic_inputs(self._id, port, [(s._node._id, s._index) for s in srcs])

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"{self.type}({self.name!r})"


_PORTS_CACHE: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {}


def _op_ports(op_type: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    ports = _PORTS_CACHE.get(op_type)
    if ports is None:
        info = _casc.op_info(op_type)
        ports = ([(p[0], p[1]) for p in info["inputs"]], [(p[0], p[1]) for p in info["outputs"]])
        _PORTS_CACHE[op_type] = ports
    return ports


def _node_class(op_type: str) -> type[Node]:
    from . import ops

    return ops._class_for(op_type)

