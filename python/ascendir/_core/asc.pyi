"""Type stubs of ``ascendir._core.asc``."""

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, final

from typing_extensions import disjoint_base

ASCGRAPH_ATTR_KEY: str

__all__ = ['ASCGRAPH_ATTR_KEY', 'Abs', 'ApiProxy', 'AscGraph', 'Axis', 'Ceiling', 'Expr', 'Floor', 'IrAttrProxy', 'Max', 'Min', 'Mod', 'Node', 'NodeAttr', 'Output', 'Pow', 'SchedProxy', 'TensorAttrGroup', '_axis_id', '_bench_exprs', 'align', 'op_info', 'register_op', 'registered_ops', 'relation']

@final
class Expr:
    """An immutable canonical symbolic integer expression (``asc.SizeExpr``)."""

    def __new__(cls, value: _ExprLike | None=None) -> Expr:
        ...

    @staticmethod
    def symbol(name: str) -> Expr:
        ...

    @staticmethod
    def parse(text: str) -> Expr:
        ...

    @staticmethod
    def rational(n: int, d: int) -> Expr:
        ...

    @property
    def expression(self) -> str:
        ...

    @property
    def expr_type(self) -> int:
        ...

    @property
    def name(self) -> str | None:
        ...

    def is_const(self) -> bool:
        ...

    def is_symbol(self) -> bool:
        ...

    def const_value(self) -> int | None:
        ...

    def free_symbols(self) -> list[str]:
        ...

    def args(self) -> list[Expr]:
        ...

    def evaluate(self, bindings: Mapping[str, int] | Mapping[Expr, int] | Mapping[str | Expr, int] | None=None) -> int | Fraction:
        ...

    def subs(self, mapping: Mapping[str, _ExprLike] | Mapping[Expr, _ExprLike] | Mapping[str | Expr, _ExprLike]) -> Expr:
        ...

    def replace(self, old: _ExprLike, new: _ExprLike) -> Expr:
        ...

    def static_eq(self, other: _ExprLike) -> bool | None:
        ...

    def static_ne(self, other: _ExprLike) -> bool | None:
        ...

    def static_lt(self, other: _ExprLike) -> bool | None:
        ...

    def static_le(self, other: _ExprLike) -> bool | None:
        ...

    def static_gt(self, other: _ExprLike) -> bool | None:
        ...

    def static_ge(self, other: _ExprLike) -> bool | None:
        ...

    def __add__(self, other: _ExprLike, /) -> Expr:
        ...

    def __radd__(self, other: _ExprLike, /) -> Expr:
        ...

    def __sub__(self, other: _ExprLike, /) -> Expr:
        ...

    def __rsub__(self, other: _ExprLike, /) -> Expr:
        ...

    def __mul__(self, other: _ExprLike, /) -> Expr:
        ...

    def __rmul__(self, other: _ExprLike, /) -> Expr:
        ...

    def __truediv__(self, other: _ExprLike, /) -> Expr:
        ...

    def __rtruediv__(self, other: _ExprLike, /) -> Expr:
        ...

    def __floordiv__(self, other: _ExprLike, /) -> Expr:
        ...

    def __rfloordiv__(self, other: _ExprLike, /) -> Expr:
        ...

    def __mod__(self, other: _ExprLike, /) -> Expr:
        ...

    def __rmod__(self, other: _ExprLike, /) -> Expr:
        ...

    def __pow__(self, other: _ExprLike, modulo: Any=None, /) -> Expr:
        ...

    def __rpow__(self, other: _ExprLike, modulo: Any=None, /) -> Expr:
        ...

    def __neg__(self) -> Expr:
        ...

    def __pos__(self) -> Expr:
        ...

    def __abs__(self) -> Expr:
        ...

    def __int__(self) -> int:
        ...

    def __hash__(self) -> int:
        ...

    def __eq__(self, other: object, /) -> bool:
        ...

    def __lt__(self, other: _ExprLike, /) -> bool:
        ...

    def __le__(self, other: _ExprLike, /) -> bool:
        ...

    def __gt__(self, other: _ExprLike, /) -> bool:
        ...

    def __ge__(self, other: _ExprLike, /) -> bool:
        ...

def Max(*args: _ExprLike) -> Expr:
    ...

def Min(*args: _ExprLike) -> Expr:
    ...

def Mod(a: _ExprLike, b: _ExprLike) -> Expr:
    ...

def Ceiling(a: _ExprLike) -> Expr:
    ...

def Floor(a: _ExprLike) -> Expr:
    ...

def Abs(a: _ExprLike) -> Expr:
    ...

def Pow(a: _ExprLike, b: _ExprLike) -> Expr:
    ...

def align(x: _ExprLike, n: _ExprLike) -> Expr:
    ...

def relation(kind: str, a: _ExprLike, b: _ExprLike) -> Expr:
    ...

def _bench_exprs(count: int) -> int:
    ...

def register_op(op_type: str, inputs: list[tuple[str, str, str]], outputs: list[tuple[str, str, str]], attrs: list[tuple[str, str, Any]], dtype_vars: list[tuple[str, list[int]]], combos: list[list[int]], compute_type: str, inplace: bool=False, tmp_buffer: _ExprLike | None=None, replace: bool=False) -> None:
    ...

def registered_ops() -> list[str]:
    ...

def op_info(op_type: str) -> dict[str, Any]:
    ...

@final
class AscGraph:
    """The AscGraph engine object: sizes, axes, transforms, whole-graph checks and bytes (nodes
    and axes are reached through the handle classes)."""
    name: str
    graph_type: int
    tiling_key: int

    def __new__(cls, name: str) -> AscGraph:
        ...

    def copy(self) -> AscGraph:
        ...

    def create_size(self, name: str) -> Expr:
        ...

    def create_size_const(self, value: int) -> Expr:
        ...

    def size_vars(self) -> list[Expr]:
        ...

    def create_axis(self, name: str, size: _ExprLike) -> int:
        ...

    def axis_count(self) -> int:
        ...

    def find_axis(self, name: str) -> int | None:
        ...

    def tile_split(self, axis: int, outer: str | None=None, inner: str | None=None) -> tuple[int, int]:
        ...

    def block_split(self, axis: int, outer: str | None=None, inner: str | None=None) -> tuple[int, int]:
        ...

    def merge_axes(self, axes: list[int], name: str | None=None) -> int:
        ...

    def bind_block(self, outer: int, inner: int) -> None:
        ...

    def apply_split(self, node: int, outer: int, inner: int) -> None:
        ...

    def apply_merge(self, node: int, merged: int) -> list[int]:
        ...

    def apply_sched_axis_merge(self, node: int, merged: int) -> None:
        ...

    def apply_reorder(self, node: int, order: list[int]) -> None:
        ...

    def try_apply_axis_replace(self, node: int, src: int, dst: int) -> bool:
        ...

    def transform_log(self) -> list[tuple[Any, ...]]:
        ...

    def replay(self, log: Any) -> None:
        ...

    def trans_info(self) -> list[tuple[int, list[int], list[int]]]:
        ...

    def set_axis_map(self, map: list[tuple[int, list[int]]]) -> None:
        ...

    def axis_map(self) -> list[tuple[int, list[int]]]:
        ...

    def node_count(self) -> int:
        ...

    def find_node(self, name: str) -> int | None:
        ...

    def node_type(self, node: int) -> str:
        ...

    def problems(self) -> list[str]:
        ...

    def validate(self) -> None:
        ...

    def hint_problems(self) -> list[str]:
        ...

    def validate_hint_conventions(self) -> None:
        ...

    def infer_dtypes(self) -> None:
        ...

    def debug_str(self, verbose: bool=False) -> str:
        ...

    def topo_order(self) -> list[int]:
        ...

    def to_bytes(self) -> bytes:
        ...

    def structure_bytes(self) -> bytes:
        """The bytes of the graph with every node named after its index and no graph name:
        equal for two graphs that differ only in names (a model's repeated layers)."""
        ...

    @staticmethod
    def from_bytes(data: bytes) -> AscGraph:
        ...

@disjoint_base
class Node:
    """A node handle (base of ``ascendir.asc.Node`` and its per-op-type classes)."""

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Node:
        ...

    def _create(self, name: str, graph: Any | None=None) -> None:
        ...

    @classmethod
    def _wrap(cls, graph: Any, nid: int) -> Any:
        ...

    def _attach_to(self, graph: Any | None) -> None:
        ...

    @property
    def graph(self) -> Any | None:
        ...

    @property
    def id(self) -> int:
        ...

    @property
    def name(self) -> str:
        ...

    @property
    def type(self) -> str:
        ...

    @property
    def attr(self) -> NodeAttr:
        ...

    @property
    def input_names(self) -> list[str]:
        ...

    @property
    def output_names(self) -> list[str]:
        ...

    @property
    def outputs(self) -> list[Output]:
        ...

    def output(self, index_or_name: int | str) -> Output:
        ...

    def set_dynamic_outputs(self, port: str, count: int) -> None:
        ...

    def input(self, name: str) -> Output | None:
        ...

    def _port_kind(self, name: str) -> str | None:
        ...

    def __getattribute__(self, name: str, /) -> Any:
        ...

    def _link(self, port: str, value: Any) -> None:
        ...

    def _link_dynamic(self, port: str, values: Any) -> None:
        ...

@final
class Output:
    """An output tensor of a node: dtype, view and memory attributes."""

    def __new__(cls, node: Node, index: int) -> Output:
        ...

    @property
    def node(self) -> Node:
        ...

    @property
    def index(self) -> int:
        ...

    @property
    def name(self) -> str:
        ...

    @property
    def dtype(self) -> Any:
        ...

    @dtype.setter
    def dtype(self, value: Any) -> None:
        ...

    @property
    def axis(self) -> list[int]:
        ...

    @axis.setter
    def axis(self, value: Any) -> None:
        ...

    @property
    def size(self) -> list[Expr]:
        ...

    @size.setter
    def size(self, value: Any) -> None:
        ...

    @property
    def repeats(self) -> list[Expr]:
        ...

    @repeats.setter
    def repeats(self, value: Any) -> None:
        ...

    @property
    def strides(self) -> list[Expr]:
        ...

    @strides.setter
    def strides(self, value: Any) -> None:
        ...

    @property
    def vectorized_axis(self) -> list[int]:
        ...

    @vectorized_axis.setter
    def vectorized_axis(self, value: Any) -> None:
        ...

    @property
    def vectorized_strides(self) -> list[Expr]:
        ...

    @vectorized_strides.setter
    def vectorized_strides(self, value: Any) -> None:
        ...

    @property
    def mem(self) -> TensorAttrGroup:
        ...

    @property
    def que(self) -> TensorAttrGroup:
        ...

    @property
    def buf(self) -> TensorAttrGroup:
        ...

    @property
    def opt(self) -> TensorAttrGroup:
        ...

    def set_contiguous(self, axes: Any) -> None:
        ...

    @property
    def contiguous(self) -> None:
        ...

    @contiguous.setter
    def contiguous(self, axes: Any) -> None:
        ...

@final
class Axis:
    """A handle to one axis of a graph."""

    def __new__(cls, graph: Any, axis_id: int) -> Axis:
        ...

    @property
    def graph(self) -> Any:
        ...

    @property
    def id(self) -> int:
        ...

    @property
    def name(self) -> str:
        ...

    @property
    def size(self) -> Expr:
        ...

    @property
    def type(self) -> Any:
        ...

    @property
    def type_name(self) -> str:
        ...

    @property
    def from_axes(self) -> list[Axis]:
        ...

    @property
    def split_pair(self) -> Axis | None:
        ...

    @property
    def align(self) -> Expr:
        ...

    @align.setter
    def align(self, value: _ExprLike) -> None:
        ...

    @property
    def allow_unaligned_tail(self) -> bool:
        ...

    @allow_unaligned_tail.setter
    def allow_unaligned_tail(self, value: Any) -> None:
        ...

    @property
    def allow_oversize_axis(self) -> bool:
        ...

    @allow_oversize_axis.setter
    def allow_oversize_axis(self, value: Any) -> None:
        ...

    @property
    def bind_block(self) -> bool:
        ...

@final
class NodeAttr:
    """``node.attr``: ``sched``, ``api``, ``ir_attr``."""

    @property
    def sched(self) -> SchedProxy:
        ...

    @property
    def api(self) -> ApiProxy:
        ...

    @property
    def ir_attr(self) -> IrAttrProxy:
        ...

@final
class SchedProxy:
    """``node.attr.sched``."""

    @property
    def axis(self) -> list[int]:
        ...

    @axis.setter
    def axis(self, value: Any) -> None:
        ...

    @property
    def loop_axis(self) -> int:
        ...

    @loop_axis.setter
    def loop_axis(self, value: Any) -> None:
        ...

    @property
    def exec_order(self) -> int:
        ...

    @exec_order.setter
    def exec_order(self, value: int) -> None:
        ...

    @property
    def exec_condition(self) -> str:
        ...

    @exec_condition.setter
    def exec_condition(self, value: str | int) -> None:
        ...

@final
class ApiProxy:
    """``node.attr.api``."""

    @property
    def compute_type(self) -> str:
        ...

    @compute_type.setter
    def compute_type(self, value: str | int) -> None:
        ...

    @property
    def type(self) -> str:
        ...

    @type.setter
    def type(self, value: str) -> None:
        ...

    @property
    def unit(self) -> Any:
        ...

    @unit.setter
    def unit(self, value: Any) -> None:
        ...

@final
class IrAttrProxy:
    """``node.attr.ir_attr``."""

    def __getattribute__(self, name: str, /) -> Any:
        ...

    def __setattr__(self, name: str, value: Any, /) -> None:
        ...

    def names(self) -> list[str]:
        ...

@final
class TensorAttrGroup:
    """``out.mem`` / ``out.que`` / ``out.buf`` / ``out.opt``."""

    def __getattribute__(self, name: str, /) -> Any:
        ...

    def __setattr__(self, name: str, value: Any, /) -> None:
        ...

    def as_dict(self) -> dict[str, Any]:
        ...

def _axis_id(graph: Any | None, value: Any) -> int:
    ...

_ExprLike = Expr | int
