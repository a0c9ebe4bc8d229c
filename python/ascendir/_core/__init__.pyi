"""Type stubs of the extension module ``ascendir._core`` (checked by ``mypy.stubtest``)."""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from os import PathLike
from typing import Any, final, overload

import numpy as np

from ..types import AttrKind, DataType, Format
from . import asc as asc
from . import asc_backend as asc_backend
from . import codegen as codegen
from . import compiler as compiler

__all__ = ['Anchor', 'AttrMap', 'Graph', 'InsertionPoint', 'Node', 'NodeSeq', 'OpDesc', 'PatternSet', 'Tensor', 'TensorBuffer', 'TensorDesc', 'Usage', 'Value', '__version__', '_attr_kind_table', '_bytes_to_text', '_data_type_table', '_default_model_attrs', '_format_table', '_graph_diff', '_graph_from_bytes', '_is_om', '_model_from_bytes', '_model_to_bytes', '_om_read', '_om_write', '_onnx_load_bytes', '_onnx_load_file', '_onnx_mapping', '_onnx_opset_warning', '_onnx_save_bytes', '_ops_attach', '_ops_begin_library', '_ops_contains', '_ops_end_library', '_ops_infer_node', '_ops_is_builtin', '_ops_library_loading', '_ops_register', '_ops_rule_kinds', '_ops_rule_of', '_ops_signature', '_ops_table_text', '_ops_types', '_ops_unregister', '_read_dump_text', '_test_panic', '_text_to_bytes', '_thread_token', '_thread_trace_start', '_thread_trace_stop', '_torch_convert', 'asc', 'asc_backend', 'codegen', 'calc_tensor_mem_size_of', 'compiler', 'format_c0_value', 'format_parts', 'format_serial_string', 'get_num_threads', 'make_format', 'memory_priority_from_ge_options', 'memory_size_of', 'release_memory', 'set_num_threads', 'size_in_bytes_of', 'topo_mode_from_ge_options', '_is_readable', '_readable_from_text', '_readable_to_text', '_ge_onnx_to_text', '_ge_onnx_from_text', '_is_ge_onnx']

__version__: str

@final
class TensorDesc:
    """A tensor descriptor (a view when obtained from a node's op desc)."""

    def __new__(cls, shape: Sequence[int] | None=None, dtype: _DTypeLike | None=None, format: _FormatLike | None=None, *, name: str | None=None, origin_shape: Sequence[int] | None=None, origin_format: _FormatLike | None=None, origin_dtype: _DTypeLike | None=None) -> TensorDesc:
        ...
    shape: tuple[int, ...]
    dtype: DataType
    format: Format | int
    origin_shape: tuple[int, ...] | None
    origin_format: Format | int
    origin_dtype: DataType
    name: str | None
    size: int
    weight_size: int
    data_offset: int
    reuse_input: bool
    reuse_input_index: int
    output_tensor: bool
    input_tensor: bool
    real_dim_cnt: int
    device_type: str
    cmps_size: int
    cmps_tab: str
    cmps_tab_offset: int

    @property
    def attrs(self) -> AttrMap:
        ...

    @property
    def is_valid(self) -> bool:
        ...

    @property
    def is_unknown_shape(self) -> bool:
        ...

    def shape_size(self) -> int:
        ...

    def mem_size(self) -> int:
        ...

    def memory_size(self) -> int:
        ...

    def copy(self) -> TensorDesc:
        ...

    def __copy__(self) -> TensorDesc:
        ...

    def __deepcopy__(self, memo: Any) -> TensorDesc:
        ...

@final
class TensorBuffer:
    """Keeps shared tensor bytes alive while numpy views them."""

    def __len__(self) -> int:
        ...

@final
class Tensor:
    """A constant tensor: a descriptor and immutable shared bytes."""

    def __new__(cls, desc_or_array: TensorDesc | np.ndarray | Any, data: Any=None) -> Tensor:
        ...

    @property
    def desc(self) -> TensorDesc:
        ...

    @property
    def data(self) -> memoryview:
        ...

    @property
    def nbytes(self) -> int:
        ...

    def numpy(self) -> np.ndarray:
        ...

    def tolist(self) -> Any:
        """The values as nested lists of Python numbers (a number for shape ``[]``), as
        numpy's ``tolist`` gives them."""
        ...

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The numpy array protocol: the zero-copy read-only view unless ``dtype`` or
        ``copy=True`` asks for a copy."""
        ...

@final
class AttrMap:
    """A mutable mapping of attributes that keeps each value's GE kind.

    A ``STRING`` value reads as ``str``, or as ``bytes`` when GE's ``AttrDef.s`` holds bytes
    that are not UTF-8 (kept as read and written back unchanged); ``set(key, b, kind=STRING)``
    stores such bytes.
    """

    def __getitem__(self, key: str, /) -> Any:
        ...

    def __setitem__(self, key: str, value: Any, /) -> None:
        ...

    def __delitem__(self, key: str, /) -> None:
        ...

    def __contains__(self, key: object, /) -> bool:
        ...

    def __len__(self) -> int:
        ...

    def __iter__(self) -> Iterator[str]:
        ...

    def keys(self) -> list[str]:
        ...

    def values(self) -> list[Any]:
        ...

    def items(self) -> list[tuple[str, Any]]:
        ...

    def get(self, key: str, default: Any=None) -> Any:
        ...

    def kind(self, key: str) -> AttrKind:
        ...

    def set(self, key: str, value: Any, *, kind: AttrKind | int | str | None=None) -> None:
        ...

    def update(self, other: Mapping[str, Any]) -> None:
        ...

    def clear(self) -> None:
        ...

    def pop(self, key: str, default: Any=None) -> Any:
        ...

    def to_dict(self) -> dict[str, Any]:
        ...

@final
class OpDesc:
    """An operator descriptor (a view of the node's op after ``Graph.add_node``)."""

    def __new__(cls, name: str, type: str, *, attrs: Mapping[str, Any] | None=None) -> OpDesc:
        ...
    name: str
    type: str
    id: int
    stream_id: int

    @property
    def input_names(self) -> list[str]:
        ...

    @property
    def output_names(self) -> list[str]:
        ...

    @property
    def num_inputs(self) -> int:
        ...

    @property
    def num_valid_inputs(self) -> int:
        ...

    @property
    def num_outputs(self) -> int:
        ...

    def add_input(self, name: str, desc: TensorDesc | None=None) -> int:
        ...

    def add_optional_input(self, name: str, desc: TensorDesc | None=None) -> int:
        ...

    @staticmethod
    def from_type(type: str, name: str | None = None, *, attrs: Mapping[str, Any] | None = None) -> OpDesc:
        """An op of a registered type: its required inputs, outputs, IR metadata and
        attribute defaults from the registry."""
        ...

    def add_output(self, name: str, desc: TensorDesc | None=None) -> int:
        ...

    def add_dynamic_input(self, name: str, count: int, *, front: bool=False, index: int | None=None) -> int:
        ...

    def add_dynamic_output(self, name: str, count: int, *, index: int | None=None) -> int:
        ...

    def insert_input(self, index: int, name: str, desc: TensorDesc | None=None) -> None:
        ...

    def insert_output(self, index: int, name: str, desc: TensorDesc | None=None) -> None:
        ...

    def rename_input(self, old: str, new: str) -> None:
        ...

    def rename_output(self, old: str, new: str) -> None:
        ...

    def input_index(self, name: str) -> int:
        ...

    def output_index(self, name: str) -> int:
        ...

    def input_desc(self, key: int | str) -> TensorDesc:
        ...

    def output_desc(self, key: int | str) -> TensorDesc:
        ...

    def update_input_desc(self, key: int | str, desc: TensorDesc) -> None:
        ...

    def update_output_desc(self, key: int | str, desc: TensorDesc) -> None:
        ...

    def dynamic_input_indexes(self, name: str) -> list[int]:
        ...

    def is_optional_input(self, name: str) -> bool:
        ...

    @property
    def attrs(self) -> AttrMap:
        ...

    @property
    def subgraph_names(self) -> list[str]:
        ...

    @property
    def subgraph_ir_names(self) -> list[tuple[str, str]]:
        ...

    def add_subgraph_name(self, ir_name: str) -> None:
        ...

    def set_subgraph_instance_name(self, index: int, name: str) -> None:
        ...
    ir_inputs: list[tuple[str, str]]
    ir_outputs: list[tuple[str, str]]
    ir_attr_names: list[str]

    @property
    def optional_inputs(self) -> list[str]:
        ...
    has_out_attr: bool
    input_offsets: list[int]
    output_offsets: list[int]
    workspace: list[int]
    workspace_bytes: list[int]
    src_names: list[str]
    src_indices: list[int]
    dst_names: list[str]
    dst_indices: list[int]
    is_input_const: list[bool]
    compile_input_names: list[str]

    def copy(self) -> OpDesc:
        ...

    def __copy__(self) -> OpDesc:
        ...

    def __deepcopy__(self, memo: Any) -> OpDesc:
        ...

@final
class Anchor:
    """An anchor of a node: in/out, data/control (control anchors have index -1)."""

    @property
    def node(self) -> Node:
        ...

    @property
    def index(self) -> int:
        ...

    @property
    def kind(self) -> str:
        ...

    @property
    def is_control(self) -> bool:
        ...

    @property
    def is_input(self) -> bool:
        ...

    @property
    def peers(self) -> list[Anchor]:
        ...

    @property
    def peer(self) -> Anchor | None:
        ...

    def link_to(self, other: Anchor) -> None:
        ...

    def link_from(self, other: Anchor) -> None:
        ...

    def unlink(self, other: Anchor) -> None:
        ...

    def unlink_all(self) -> None:
        ...

    def is_linked_with(self, other: Anchor) -> bool:
        ...

    def replace_peer(self, old: Anchor, new: Anchor) -> None:
        ...

    def insert(self, op_desc: OpDesc, *, in_index: int=0, out_index: int=0) -> Node:
        ...

    def __hash__(self) -> int:
        ...

@final
class Node:
    """A handle to a node; raises StaleHandleError once the node is removed."""
    name: str

    @property
    def type(self) -> str:
        ...

    @property
    def id(self) -> int:
        ...

    @property
    def op_desc(self) -> OpDesc:
        ...

    @property
    def graph(self) -> Graph:
        ...

    @property
    def attrs(self) -> AttrMap:
        ...

    @property
    def is_alive(self) -> bool:
        ...

    @property
    def outputs(self) -> list[Value]:
        """The node's outputs as values, in index order."""
        ...

    @property
    def inputs(self) -> list[Value | None]:
        """The values the node reads, in input order (``None`` for an unlinked input)."""
        ...

    def replace_all_uses_with(self, other: Node) -> int:
        """Every use of every output of this node reads the same output of ``other`` instead;
        returns how many uses moved. All or nothing."""
        ...

    @property
    def in_data_anchors(self) -> list[Anchor]:
        ...

    @property
    def out_data_anchors(self) -> list[Anchor]:
        ...

    @property
    def in_control_anchor(self) -> Anchor:
        ...

    @property
    def out_control_anchor(self) -> Anchor:
        ...

    def in_data_anchor(self, key: int | str) -> Anchor:
        ...

    def out_data_anchor(self, key: int | str) -> Anchor:
        ...

    def out(self, key: int | str | None=None) -> Anchor:
        ...

    @property
    def in_data_nodes(self) -> list[Node]:
        ...

    @property
    def out_data_nodes(self) -> list[Node]:
        ...

    @property
    def in_control_nodes(self) -> list[Node]:
        ...

    @property
    def out_control_nodes(self) -> list[Node]:
        ...

    @property
    def in_nodes(self) -> list[Node]:
        ...

    @property
    def out_nodes(self) -> list[Node]:
        ...

    def input_source(self, key: int | str) -> Anchor | None:
        ...

    def __hash__(self) -> int:
        ...

@final
class InsertionPoint:
    """A ``with`` block placing new nodes before or after a node (``Graph.inserting_before``
    / ``Graph.inserting_after``); leaving it restores the previous insertion point."""

    def __enter__(self) -> Graph:
        ...

    def __exit__(self, *_exc: object) -> bool:
        ...

@final
class Graph:
    """A compute graph (GE ComputeGraph)."""

    def __new__(cls, name: str='graph') -> Graph:
        ...
    name: str

    def __len__(self) -> int:
        ...

    def __contains__(self, item: object, /) -> bool:
        ...

    def __iter__(self) -> Iterator[Node]:
        ...

    @property
    def nodes(self) -> list[Node]:
        ...

    def node(self, name: str) -> Node:
        ...

    def find(self, name: str) -> Node | None:
        ...

    @property
    def attrs(self) -> AttrMap:
        ...

    def add_node(self, op_desc: OpDesc) -> Node:
        ...

    def inserting_before(self, node: Node) -> InsertionPoint:
        """A ``with`` block in which new nodes go right before ``node``, in creation order."""
        ...

    def inserting_after(self, node: Node) -> InsertionPoint:
        """A ``with`` block in which new nodes go right after ``node``, in creation order."""
        ...

    def find_nodes(self, op_type: str | None = None, name: str | None = None) -> list[Node]:
        """The nodes of type ``op_type`` and/or named ``name``, in graph order (indexed)."""
        ...

    def add_input(self, name: str, desc: TensorDesc | None=None, *, index: int | None=None) -> Node:
        ...

    def add_const(self, name: str, value: Any, *, dtype: _DTypeLike | None=None) -> Node:
        ...

    def add_op(self, type: str, inputs: Iterable[_Source | Sequence[_Source] | None] | None=None, *, name: str | None=None, attrs: Mapping[str, Any] | None=None, input_names: Sequence[str] | None=None, outputs: int | Sequence[str] | None=None, output_descs: Sequence[TensorDesc] | None=None, allow_unregistered: bool=False) -> Node:
        ...

    def set_outputs(self, outputs: Iterable[_Source | tuple[Node, int]], *, targets: Iterable[Node] | None=None) -> Node | None:
        ...

    @property
    def inputs(self) -> list[Node]:
        ...

    @property
    def outputs(self) -> list[tuple[Node, int]]:
        ...

    @property
    def targets(self) -> list[Node]:
        ...

    def erase_node(self, node: Node) -> None:
        ...

    @property
    def num_links(self) -> int:
        ...

    def op_type_counts(self) -> dict[str, int]:
        ...

    def dump(self) -> str:
        ...

    def check_invariants(self) -> list[str]:
        ...

    @staticmethod
    def from_edges(types: Any, edges: Any, *, type_names: Sequence[str], ports: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None=None, names: Sequence[str] | None=None, desc: TensorDesc | None=None, name: str='graph') -> Graph:
        ...

    def topo_sort(self, mode: str | int | None=None, *, memory_priority: bool=False, delay_const_chains: bool | None=None, reverse: bool=False, subgraphs: bool=False) -> NodeSeq:
        ...

    def topo_order(self, mode: str | int | None=None, *, memory_priority: bool=False, delay_const_chains: bool | None=None, reverse: bool=False) -> NodeSeq:
        ...

    def find_cycle(self) -> NodeSeq | None:
        ...

    def isolate_node(self, node: Node, io_map: Sequence[int] | None=None) -> Node | None:
        ...

    def remove(self, nodes: Sequence[Node], safe: bool=True) -> list[str]:
        """Remove ``nodes`` together; returns their names. With ``safe``, refuses while an
        output of a removed node is read outside the set or is a graph output. All or
        nothing."""
        ...

    def eliminate_dead_code(self) -> list[str]:
        """Remove every node nothing live depends on; returns their names in graph order."""
        ...

    def bypass(self, node: Node, input: int=0) -> None:
        """Every use of ``node``'s output reads the producer of its input ``input`` instead,
        and ``node`` is removed. All or nothing."""
        ...

    def remove_node(self, node: Node) -> list[str]:
        ...

    def replace_node(self, old: Node, op_desc: OpDesc) -> Node:
        ...

    def insert_node(self, op_desc: OpDesc, *, after: Node | None=None, before: Node | None=None) -> Node:
        """GE ``InsertNode``: ``op_desc`` right after ``after`` in the order, with its id.
        ``before=`` is deprecated: use ``with graph.inserting_before(node): graph.add_node(op_desc)``."""
        ...

    def add_node_front(self, op_desc: OpDesc) -> Node:
        ...

    def insert_between(self, src: Node | Anchor, dst: Anchor, op_desc: OpDesc, *, in_index: int=0, out_index: int=0) -> Node:
        ...

    def insert_after(self, src: Node | Anchor, op_desc: OpDesc, *, consumers: Sequence[Anchor] | None=None, in_index: int=0, out_index: int=0) -> Node:
        ...

    def insert_before(self, dst: Anchor, op_desc: OpDesc, *, in_index: int=0, out_index: int=0) -> Node:
        ...

    def move_output_edges(self, origin: Node, new: Node) -> None:
        ...

    def fuse_nodes(self, originals: Sequence[Node], replacements: Sequence[OpDesc]) -> list[Node]:
        ...

    def fusion_conflict(self, nodes: Sequence[Node]) -> str | None:
        ...

    def copy(self) -> Graph:
        ...

    def __copy__(self) -> Graph:
        ...

    def __deepcopy__(self, memo: Any) -> Graph:
        ...

    def problems(self) -> list[str]:
        ...

    def validate(self) -> None:
        ...

    def add_subgraph(self, sub: Graph, *, parent: Node, slot: str, dynamic: bool=False) -> str:
        ...

    def subgraph(self, name: str) -> Graph:
        ...

    @property
    def subgraphs(self) -> list[Graph]:
        ...

    @property
    def parent_graph(self) -> Graph | None:
        ...

    @property
    def parent_node(self) -> Node | None:
        ...

    @property
    def root_graph(self) -> Graph:
        ...

    def remove_subgraph(self, name: str) -> None:
        ...

    def all_nodes(self) -> list[Node]:
        ...

    def infer_shapes(self) -> dict[str, int]:
        """Infer output shapes, dtypes and formats over the whole graph (subgraphs included)
        in topological order; returns ``{"nodes", "inferred", "unknown", "kept", "conflicts"}``; raises
        ``InferenceError`` (with ``.node`` and ``.rule``) on failure."""
        ...

    def to_bytes(self) -> bytes:
        """This graph (and its subgraphs) as a binary GE ModelDef."""

    @staticmethod
    def from_bytes(data: bytes) -> Graph:
        """The main graph of a binary GE ModelDef (DecodeError on malformed input)."""

    def to_text(self) -> str:
        """This graph as protobuf text format (GE dump layout)."""

    @staticmethod
    def from_text(text: str) -> Graph:
        """The main graph of a text-format ModelDef."""

    def to_proto(self) -> Any:
        """This graph as an ascendir._proto.ge_ir_pb2.ModelDef message."""

    @staticmethod
    def from_proto(msg: Any) -> Graph:
        """The main graph of a google.protobuf ModelDef message."""

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        ...

def _data_type_table() -> list[tuple[str, int, int, int, str, str | None]]:
    ...

def _format_table() -> list[tuple[str, int, str, bool]]:
    ...

def _attr_kind_table() -> list[tuple[str, int]]:
    ...

def release_memory() -> int:
    """Give freed memory back to the operating system now: wait for graphs being freed on pool
    threads, then purge the allocator's unused pages. Returns how many graphs it waited for."""
    ...

def set_num_threads(n: int) -> None:
    """Set the number of threads every parallel path of ascendir may use, the calling thread
    included (ModelDef decode and encode, ONNX import's frees, the compiler's parallel phase,
    freeing large graphs). ``1`` makes every call single-threaded. The default is the
    environment variable ``ASCENDIR_NUM_THREADS``, else the machine's available parallelism.
    Raises InvalidArgumentError when ``n`` is below 1."""
    ...

def get_num_threads() -> int:
    """The number of threads ascendir's parallel paths may use, the calling thread included."""
    ...

def _thread_trace_start() -> None:
    ...

def _thread_trace_stop() -> list[int]:
    ...

def _thread_token() -> int:
    ...

def size_in_bytes_of(count: int, dtype: _DTypeLike) -> int:
    ...

def calc_tensor_mem_size_of(shape: Sequence[int], format: _FormatLike, dtype: _DTypeLike) -> int:
    ...

def memory_size_of(size: int) -> int:
    ...

def format_parts(format: int) -> tuple[int, int, int]:
    ...

def make_format(primary: _FormatLike, sub_format: int=0, c0_format: int=0) -> int:
    ...

def format_serial_string(format: int) -> str:
    ...

def format_c0_value(format: int) -> int:
    ...

@final
class Value:
    """Output ``index`` of a node: a value. Stale once its producer leaves the graph; stands
    for itself wherever a producer is taken."""

    @property
    def index(self) -> int:
        """The output index on the producer."""
        ...

    @property
    def desc(self) -> TensorDesc:
        """The value's tensor desc (a view of the producer's output desc)."""
        ...

    def producer(self) -> Node:
        """The node that produces the value."""
        ...

    def uses(self) -> list[Usage]:
        """One ``Usage(node, index)`` per consumer input, in link order."""
        ...

    def replace_all_uses_with(self, other: Value | Node | Anchor) -> int:
        """Every use (and graph output) of this value reads ``other`` instead; returns how many
        uses moved. All or nothing: a foreign or stale ``other`` or a cycle raises."""
        ...

    def __eq__(self, other: object, /) -> bool:
        ...

    def __hash__(self) -> int:
        ...

@final
class Usage:
    """One use of a value: input ``index`` of ``node``."""

    @property
    def node(self) -> Node:
        """The consumer."""
        ...

    @property
    def index(self) -> int:
        """The consumer's input index."""
        ...

    def __iter__(self) -> Iterator[Node | int]:
        ...

    def __eq__(self, other: object, /) -> bool:
        ...

@final
class PatternSet:
    """Rules compiled from pattern graphs into one matcher."""

    def __new__(cls, patterns: Sequence[tuple[str, Graph]]) -> PatternSet:
        ...

    def __len__(self) -> int:
        """The number of rules."""
        ...

    @property
    def shared_len(self) -> int:
        """The number of distinct pattern nodes after merging the rules."""
        ...

    def captures(self, rule: int) -> list[str]:
        """The capture names of rule ``rule``, in pattern order."""
        ...

    def find_matches(self, graph: Graph, greedy: bool = True) -> list[tuple[int, Node, int, list[Node], list[tuple[str, Value]], list[Value]]]:
        """Every match in ``graph``, in graph order of the roots: ``(rule, root, root output,
        nodes, captures, outputs)`` (``outputs``: the value of each pattern output, the
        root's first)."""
        ...

    def rewrite_to_captures(self, graph: Graph, capture: Sequence[str | None]) -> int:
        """Rewrite the matches of every rule whose replacement is its capture ``capture[r]``;
        returns how many."""
        ...

    def why_not(self, rule: int, node: Node) -> str | None:
        """The first failing predicate of rule ``rule`` at ``node``, or None when it matches."""
        ...

@final
class NodeSeq(Sequence[Node]):
    """A sequence of nodes of one graph (a sort result); handles are created on access."""

    def __len__(self) -> int:
        ...

    @overload
    def __getitem__(self, index: int, /) -> Node:
        ...

    @overload
    def __getitem__(self, index: slice, /) -> NodeSeq:
        ...

    def __iter__(self) -> Iterator[Node]:
        ...

    @property
    def names(self) -> list[str]:
        ...

    def tolist(self) -> list[Node]:
        ...

def topo_mode_from_ge_options(topo_sorting_mode: str | None=None, graph_run_mode: str | None=None) -> int:
    ...

def memory_priority_from_ge_options(policy: str | None=None) -> bool:
    ...

def _ops_register(spec: dict[str, Any], *, overriding: bool=False, infer: Any=None, verify: Any=None, behaviour: str | None=None) -> None:
    ...

def _ops_unregister(ty: str) -> bool:
    ...

def _ops_contains(ty: str) -> bool:
    ...

def _ops_types() -> list[str]:
    ...

def _ops_begin_library() -> None:
    ...

def _ops_end_library() -> None:
    ...

def _ops_library_loading() -> bool:
    ...

def _ops_attach(ty: str, *, infer: Any=None, verify: Any=None, behaviour: str | None=None) -> None:
    ...

def _ops_is_builtin(ty: str) -> bool:
    ...

def _ops_table_text(specs: list[dict[str, Any]]) -> str:
    ...

def _ops_rule_kinds() -> list[str]:
    ...

def _ops_rule_of(ty: str) -> tuple[str, list[tuple[str, str]]] | None:
    ...

def _ops_signature(ty: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, int, Any, bool]], str | None] | None:
    ...

def _ops_infer_node(node: Any) -> list[tuple[list[int], DataType]] | None:
    ...

def _graph_from_bytes(data: bytes) -> Graph:
    ...

def _graph_diff(old: Graph, new: Graph) -> str:
    """What changed from graph ``old`` to graph ``new`` (root graphs), as JSON text."""
    ...

def _read_dump_text(text: str) -> Graph:
    """The graph of a text dump (``Graph.dump()``); ``DecodeError`` naming the line."""
    ...

def _model_from_bytes(data: bytes) -> tuple[str, int, str, Graph, list[Graph]]:
    ...

def _model_to_bytes(name: str, version: int, custom_version: str, holder: Graph, graphs: list[Graph]) -> bytes:
    ...

def _default_model_attrs() -> Graph:
    ...

def _test_panic() -> None:
    """Panic inside the binding's guard on purpose (the test of the panic funnel): raises
    :class:`ascendir.InternalError`. Not part of the API."""
    ...

def _text_to_bytes(text: str) -> bytes:
    ...

def _bytes_to_text(data: bytes) -> str:
    ...

def _om_read(data: bytes) -> tuple[str, bytes, bytes, list[tuple[int, bytes]], int]:
    """Parse an OM file: name, MODEL_DEF, WEIGHTS_DATA, the first model's other partitions, model_num."""
    ...

def _om_write(name: str, model_def: bytes, weights: bytes, extra: list[tuple[int, bytes]] = ...) -> bytes:
    """Write an OM file: MODEL_DEF, WEIGHTS_DATA, then the ``extra`` partitions byte for byte."""
    ...

def _is_om(data: bytes) -> bool:
    ...

def _readable_to_text(graph: Graph) -> str:
    ...

def _readable_from_text(text: str) -> Graph:
    ...

def _is_readable(data: bytes) -> bool:
    ...

def _ge_onnx_to_text(graph: Graph, producer: str, attributes: bool = True) -> str:
    """GE's ONNX dump (``ge_onnx*.pbtxt``) of a graph and the subgraphs below it."""
    ...

def _ge_onnx_from_text(text: str) -> Graph:
    """The graph a GE ONNX dump text describes (``DecodeError`` on bad text)."""
    ...

def _is_ge_onnx(data: bytes) -> bool:
    """Whether model bytes start like an ONNX ``ModelProto`` in text format."""
    ...

def _onnx_load_file(path: str | PathLike[str]) -> tuple[Graph, dict[str, Any]]:
    """Import an ONNX model file (external data relative to its directory)."""
    ...

def _onnx_load_bytes(data: bytes, base_dir: str | PathLike[str] | None=None) -> tuple[Graph, dict[str, Any]]:
    """Import serialized ONNX model bytes; ``base_dir`` resolves external data."""
    ...

def _onnx_mapping() -> list[tuple[str, str]]:
    """The declarative ONNX to GE table: ``(ONNX type, GE type)`` pairs in table order."""
    ...

def _onnx_opset_warning(graph: Graph) -> str | None:
    """The opset warning of a graph imported from ONNX (``None`` when its opset is mapped or it
    did not come from ONNX)."""
    ...

def _onnx_save_bytes(graph: Graph, opset: int | None=None, producer: str | None=None) -> bytes:
    """Encode a graph (with its subgraphs) as ONNX model bytes."""
    ...

def _torch_convert(name: str, kinds: Sequence[int], names: Sequence[str], targets: Sequence[str], code: Sequence[int], code_off: Sequence[int], meta: Sequence[int], meta_off: Sequence[int], info: Sequence[int], strings: Sequence[str], consts: Sequence[tuple[int, Any]], symbols: Sequence[tuple[str, int, int, str]], guards: Sequence[str]) -> tuple[Graph, dict[str, Any]]:
    """Convert a flattened FX program (see ``ascendir.torch._flatten``) into a graph."""
    ...

_DTypeLike = DataType | int | str | Any
_FormatLike = Format | int | str
_Source = Node | Anchor | Value
