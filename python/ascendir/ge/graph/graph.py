"""GE's ``ge.graph.Graph`` over :class:`ascendir.Graph`."""

from __future__ import annotations

import itertools
import os
from enum import Enum
from typing import Any

from ... import _core
from ...errors import AscendIRError
from ..error import GeError, GeTypeError, GeValueError
from ._attr import get_attr, set_attr
from .node import Node

__all__ = ["DumpFormat", "Graph"]

_dump_counter = itertools.count()


class DumpFormat(Enum):
    """The forms of ``Graph.dump_to_file`` / ``dump_to_stream``."""

    kOnnx = 0  # noqa: N815 - GE's names
    kTxt = 1  # noqa: N815
    kReadable = 2  # noqa: N815


_DUMP_NAMES = {DumpFormat.kOnnx: ("onnx", "pbtxt"), DumpFormat.kTxt: ("txt", "txt"),
               DumpFormat.kReadable: ("readable", "txt")}


def _check_node(value: Any, what: str) -> Node:
    if not isinstance(value, Node):
        raise GeTypeError(f"{what} must be a Node")
    return value


def _check_int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise GeTypeError(f"{what} must be an integer")
    return value


class Graph:
    """A graph: a handle on an :class:`ascendir.Graph` (``.air``), never a copy.

    ``Graph("name")`` makes an empty graph; ``Graph.from_air(g)`` views an existing one, and
    every change through either object shows in both.
    """

    __slots__ = ("_g", "_owner")
    _g: Any
    _owner: Any

    def __init__(self, name: str = "graph") -> None:
        if not isinstance(name, str):
            raise GeTypeError("Graph name must be a string")
        self._g = _core.Graph(name)
        self._owner: Any = None

    @classmethod
    def _create_from(cls, graph: Any, owner: Any = None) -> Graph:
        """Wrap an :class:`ascendir.Graph` (no copy); ``owner`` is kept alive with the view."""
        if graph is None:
            raise GeValueError("Graph pointer cannot be None")
        if not isinstance(graph, _core.Graph):
            raise GeTypeError(f"expected an ascendir.Graph, got {type(graph).__name__}")
        inst = cls.__new__(cls)
        inst._g = graph
        inst._owner = owner
        return inst

    @classmethod
    def from_air(cls, graph: _core.Graph) -> Graph:
        """The GE view of ``graph`` (the same graph, not a copy)."""
        return cls._create_from(graph)

    @property
    def air(self) -> _core.Graph:
        """The wrapped :class:`ascendir.Graph`."""
        return self._g

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Graph) and self._g == other._g

    def __hash__(self) -> int:
        return hash(self._g)

    def __copy__(self) -> Graph:
        raise GeError("Graph does not support copy")

    def __deepcopy__(self, memo: Any) -> Graph:
        raise GeError("Graph does not support deepcopy")

    def __str__(self) -> str:
        return self.dump_to_stream(DumpFormat.kReadable)

    def __repr__(self) -> str:
        return f"Graph(name={self._g.name!r}, nodes={len(self._g)})"

    @property
    def name(self) -> str:
        """The graph's name."""
        return str(self._g.name)

    def get_all_nodes(self) -> list[Node]:
        """Every node, those of subgraphs included."""
        return [Node._create_from(n) for n in self._g.all_nodes()]

    def get_direct_nodes(self) -> list[Node]:
        """The nodes of this graph only (not of its subgraphs)."""
        return [Node._create_from(n) for n in self._g.nodes]

    def get_attr(self, key: str) -> Any:
        """The value of graph attribute ``key`` (GE's ``RuntimeError`` if there is none)."""
        return get_attr(self._g.attrs, key, f"Graph {self._g.name}")

    def set_attr(self, key: str, value: Any) -> None:
        """Set graph attribute ``key``; the kind follows the value's Python type."""
        set_attr(self._g.attrs, key, value, f"Graph {self._g.name}")

    def dump_to_stream(self, format: DumpFormat = DumpFormat.kReadable) -> str:
        """The graph as text: GE's readable dump (``kReadable``, the ``ge_readable*.txt`` layout
        GE's ``ReadableDump`` writes; see ``docs/VIEWING.md``), GE's protobuf text dump
        (``kTxt``) or GE's ONNX dump as ``ge::Graph::DumpToStream(kOnnx)`` writes it (``kOnnx``:
        an ONNX ``ModelProto`` in protobuf text named after the graph, nodes with their
        ``ge:``-prefixed types and edges, no attributes; see ``docs/VIEWING.md``)."""
        if not isinstance(format, DumpFormat):
            raise GeTypeError(
                "Format must be in [DumpFormat.kOnnx, DumpFormat.kTxt, DumpFormat.kReadable]")
        try:
            if format == DumpFormat.kReadable:
                return str(_core._readable_to_text(self._g))
            if format == DumpFormat.kTxt:
                return str(self._g.to_text())
            return str(_core._ge_onnx_to_text(self._g, self._g.name, False))
        except AscendIRError as e:
            raise GeError(f"Failed to dump graph: {self.name} to stream: {e}") from e

    def dump_to_file(self, format: DumpFormat = DumpFormat.kReadable, suffix: str = "") -> None:
        """Write :meth:`dump_to_stream`'s text to
        ``ge_<onnx|txt|readable>_<NNNNN>_<graph name>_0[_<suffix>].<pbtxt|txt>`` in the
        directory ``$DUMP_GRAPH_PATH`` (the working directory when unset)."""
        if not isinstance(suffix, str):
            raise GeTypeError("Suffix must be a string")
        if not isinstance(format, DumpFormat):
            raise GeTypeError(
                "Format must be in [DumpFormat.kOnnx, DumpFormat.kTxt, DumpFormat.kReadable]")
        text = self.dump_to_stream(format)
        word, ext = _DUMP_NAMES[format]
        tail = f"_{suffix}" if suffix else ""
        fname = f"ge_{word}_{next(_dump_counter):05d}_{self.name}_0{tail}.{ext}"
        path = os.path.join(os.environ.get("DUMP_GRAPH_PATH") or os.getcwd(), fname)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise GeError(
                f"Failed to dump graph: {self.name} to file format {format} with suffix "
                f"{suffix}: {e}") from e

    def save_to_air(self, file_path: str) -> None:
        """Write the graph (with its subgraphs) to ``file_path`` as a GE ``.air`` file: the
        binary GE ``ModelDef``."""
        if not isinstance(file_path, str):
            raise GeTypeError("file_path must be a string")
        try:
            data = self._g.to_bytes()
            with open(file_path, "wb") as f:
                f.write(data)
        except (AscendIRError, OSError) as e:
            raise GeError(f"Failed to save graph to AIR format: {e}") from e

    def load_from_air(self, file_path: str) -> None:
        """Read a GE ``.air`` file (binary ``ModelDef``) into this object: it then views the
        file's main graph (an ``ascendir.Graph`` obtained from ``.air`` before keeps the old
        contents). On failure nothing changes."""
        if not isinstance(file_path, str):
            raise GeTypeError("file_path must be a string")
        try:
            with open(file_path, "rb") as f:
                data = f.read()
            self._g = _core.Graph.from_bytes(data)
        except (AscendIRError, OSError) as e:
            raise GeError(f"Failed to load graph from AIR format: {e}") from e

    def remove_node(self, node: Node) -> None:
        """Remove ``node`` and every edge it has."""
        _check_node(node, "node")
        try:
            if node.air.graph != self._g:
                raise GeValueError(f"node '{node.air.name}' is not in graph '{self.name}'")
            self._g.remove([node.air], safe=False)
        except AscendIRError as e:
            raise GeError(f"Failed to remove Node {node.name} from Graph {self.name}: {e}") from e

    def _anchors(self, src: Node, si: int, dst: Node, di: int) -> tuple[Any, Any]:
        if si == -1 and di == -1:
            return src.air.out_control_anchor, dst.air.in_control_anchor
        return src.air.out_data_anchor(si), dst.air.in_data_anchor(di)

    def _edge_args(self, src_node: Any, src_port_index: Any, dst_node: Any,
                   dst_port_index: Any) -> None:
        _check_node(src_node, "src_node")
        _check_int(src_port_index, "src_port_index")
        _check_node(dst_node, "dst_node")
        _check_int(dst_port_index, "dst_port_index")

    def remove_edge(self, src_node: Node, src_port_index: int, dst_node: Node,
                    dst_port_index: int) -> None:
        """Remove the data edge between the ports, or the control edge when both indexes
        are -1."""
        self._edge_args(src_node, src_port_index, dst_node, dst_port_index)
        try:
            out, inp = self._anchors(src_node, src_port_index, dst_node, dst_port_index)
            if not out.is_linked_with(inp):
                raise GeValueError("no such edge")
            out.unlink(inp)
        except (AscendIRError, IndexError) as e:
            raise GeError(
                f"Failed to remove Edge from Node {src_node.name}, Port Index {src_port_index} "
                f"to Node {dst_node.name}, Port Index {dst_port_index}: {e}") from e

    def add_data_edge(self, src_node: Node, src_port_index: int, dst_node: Node,
                      dst_port_index: int) -> None:
        """Link output ``src_port_index`` of ``src_node`` to input ``dst_port_index`` of
        ``dst_node``."""
        self._edge_args(src_node, src_port_index, dst_node, dst_port_index)
        try:
            if src_port_index < 0 or dst_port_index < 0:
                raise GeValueError("port indexes of a data edge are not negative")
            out, inp = self._anchors(src_node, src_port_index, dst_node, dst_port_index)
            out.link_to(inp)
            if dst_node.air.type == "NetOutput":
                self._sync_outputs(dst_node.air)
        except (AscendIRError, IndexError) as e:
            raise GeError(
                f"Failed to add DataEdge from Node {src_node.name}, Port Index "
                f"{src_port_index} to Node {dst_node.name}, Port Index {dst_port_index}: {e}"
            ) from e

    def _sync_outputs(self, net: Any) -> None:
        """Make the graph's outputs the ``NetOutput`` node's inputs again once all of them
        are linked (GE's outputs are that node's inputs; ascendir keeps them as a list)."""
        srcs = list(net.inputs)
        if net.graph == self._g and srcs and all(v is not None for v in srcs):
            self._g.set_outputs([(v.producer(), v.index) for v in srcs])

    def add_control_edge(self, src_node: Node, dst_node: Node) -> None:
        """Add a control edge from ``src_node`` to ``dst_node``."""
        _check_node(src_node, "src_node")
        _check_node(dst_node, "dst_node")
        try:
            src_node.air.out_control_anchor.link_to(dst_node.air.in_control_anchor)
        except AscendIRError as e:
            raise GeError(
                f"Failed to add Control from Node {src_node.name} to Node {dst_node.name}: {e}"
            ) from e

    def find_node_by_name(self, name: str) -> Node:
        """The node named ``name`` (GE's ``RuntimeError`` if there is none)."""
        if not isinstance(name, str):
            raise GeTypeError("name must be a string")
        node = self._g.find(name)
        if node is None:
            raise GeError(f"Failed to find Node name {name}")
        return Node._create_from(node)

    def get_all_subgraphs(self) -> list[Graph]:
        """Every subgraph below this graph."""
        return [Graph._create_from(s) for s in self._g.root_graph.subgraphs]

    def get_subgraph(self, name: str) -> Graph | None:
        """The subgraph named ``name``, or ``None``."""
        if not isinstance(name, str):
            raise GeTypeError("name must be a string")
        for s in self._g.root_graph.subgraphs:
            if s.name == name:
                return Graph._create_from(s)
        return None

    def add_subgraph(self, subgraph: Graph) -> None:
        """Not available: an ascendir subgraph belongs to a parent node's slot
        (``ascendir.Graph.add_subgraph(sub, parent=, slot=)``); raises GE's ``RuntimeError``."""
        if not isinstance(subgraph, Graph):
            raise GeTypeError("subgraph must be a Graph")
        raise GeError(
            f"Failed to add subgraph '{subgraph.name}' to graph '{self.name}': an ascendir "
            "subgraph needs a parent node; use Graph.air.add_subgraph(sub, parent=, slot=)")

    def remove_subgraph(self, name: str) -> None:
        """Remove the subgraph named ``name``."""
        if not isinstance(name, str):
            raise GeTypeError("name must be a string")
        try:
            self._g.root_graph.remove_subgraph(name)
        except AscendIRError as e:
            raise GeError(f"Failed to remove subgraph '{name}' from graph '{self.name}': {e}"
                          ) from e
