"""The GE-style object API of AscGraphs: graphs, axes, nodes, outputs and attribute proxies.

Everything is stored in the Rust engine (``ascendir._core.asc.AscGraph``, the graph's
``_core``); nodes, outputs, axes and the attribute proxies are the engine's handle classes
(``_node``, ``_axis``). A graph keeps the node handles it gave out, so the same node is the
same Python object every time. Every public name stays importable from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .._core import asc as _casc
from ..errors import InvalidArgumentError, NotFoundError
from ._axis import Axis, AxisType, ComputeUnit, SizeExpr, _axis_id
from ._node import ApiProxy, IrAttrProxy, Node, NodeAttr, Output, SchedProxy, _node_class

__all__ = ["ApiProxy", "AscGraph", "Axis", "AxisType", "ComputeUnit", "HintGraph", "ImplGraph",
           "IrAttrProxy", "Node", "NodeAttr", "Output", "SchedProxy", "SizeExpr"]


class AscGraph:
    """An AscGraph (base of :class:`HintGraph` and :class:`ImplGraph`)."""

    _graph_type = 0

    def __init__(self, name: str) -> None:
        self._core = _casc.AscGraph(name)
        self._core.graph_type = self._graph_type
        self._nodes: dict[int, Node] = {}

    @classmethod
    def _from_core(cls, core: Any) -> AscGraph:
        klass = ImplGraph if core.graph_type == 1 else HintGraph
        g = klass.__new__(klass)
        g._core = core
        g._nodes = {}
        return g

    # ----- basics -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """Graph name."""
        return self._core.name

    @name.setter
    def name(self, value: str) -> None:
        self._core.name = value

    @property
    def graph_type(self) -> int:
        """0 = HINT, 1 = IMPL."""
        return self._core.graph_type

    @property
    def tiling_key(self) -> int:
        """Template key (-1 = none)."""
        return self._core.tiling_key

    @tiling_key.setter
    def tiling_key(self, value: int) -> None:
        self._core.tiling_key = value

    def copy(self) -> AscGraph:
        """A deep copy (new node and axis handles)."""
        return AscGraph._from_core(self._core.copy())

    # ----- sizes and axes -------------------------------------------------------------------

    def create_size(self, name_or_value: str | int) -> SizeExpr:
        """A size variable: a symbol from a name, a constant from an int."""
        if isinstance(name_or_value, str):
            return self._core.create_size(name_or_value)
        if isinstance(name_or_value, int) and not isinstance(name_or_value, bool):
            return self._core.create_size_const(name_or_value)
        raise InvalidArgumentError(f"create_size takes a name or an int, got {name_or_value!r}")

    @property
    def size_vars(self) -> list[SizeExpr]:
        """Size variables in creation order."""
        return self._core.size_vars()

    def create_axis(self, name: str, size: SizeExpr | int) -> Axis:
        """An ORIGINAL axis of length ``size``."""
        return Axis(self, self._core.create_axis(name, size))

    @property
    def axes(self) -> list[Axis]:
        """All axes (id == index)."""
        return [Axis(self, i) for i in range(self._core.axis_count())]

    def axis(self, key: int | str) -> Axis:
        """The axis with this id or name."""
        if isinstance(key, str):
            aid = self._core.find_axis(key)
            if aid is None:
                raise NotFoundError(f"graph '{self.name}' has no axis named '{key}'")
            return Axis(self, aid)
        return Axis(self, key)

    def find_axis(self, key: int | str) -> Axis | None:
        """The axis with this id or name, or None."""
        try:
            return self.axis(key)
        except NotFoundError:
            return None

    def set_axis_map(self, mapping: dict[Axis | int, Sequence[Axis | int]]) -> None:
        """Record an axis correspondence (GE's ``set_axis_map``)."""
        self._core.set_axis_map(
            [(_axis_id(self, k), [_axis_id(self, a) for a in v]) for k, v in mapping.items()]
        )

    # ----- transforms -----------------------------------------------------------------------

    def tile_split(
        self, axis: Axis | int, outer: str | None = None, inner: str | None = None
    ) -> tuple[Axis, Axis]:
        """Tile split: ``<name>T`` (outer) and ``<name>t`` (inner, size ``<name>t_size``)."""
        o, i = self._core.tile_split(_axis_id(self, axis), outer, inner)
        return Axis(self, o), Axis(self, i)

    def block_split(
        self, axis: Axis | int, outer: str | None = None, inner: str | None = None
    ) -> tuple[Axis, Axis]:
        """Block split: ``<name>B`` (outer) and ``<name>b`` (inner, size ``<name>b_size``)."""
        o, i = self._core.block_split(_axis_id(self, axis), outer, inner)
        return Axis(self, o), Axis(self, i)

    def merge_axes(self, axes: Sequence[Axis | int], name: str | None = None) -> Axis:
        """A MERGED axis over ``axes`` (name = concatenation, size = product)."""
        return Axis(self, self._core.merge_axes([_axis_id(self, a) for a in axes], name))

    def bind_block(self, outer: Axis | int, inner: Axis | int) -> None:
        """Retype a pair as block axes (names get ``B`` / ``b``)."""
        self._core.bind_block(_axis_id(self, outer), _axis_id(self, inner))

    def _nid(self, node: Node | str) -> int:
        if isinstance(node, str):
            nid = self._core.find_node(node)
            if nid is None:
                raise NotFoundError(f"graph '{self.name}' has no node named '{node}'")
            return nid
        if node.graph is not self:
            raise InvalidArgumentError(f"node '{node.name}' is not in graph '{self.name}'")
        return node.id

    def apply_split(self, node: Node | str, outer: Axis | int, inner: Axis | int) -> None:
        """Apply a split to a node's loop axes and output views."""
        self._core.apply_split(self._nid(node), _axis_id(self, outer), _axis_id(self, inner))

    def apply_merge(self, node: Node | str, merged: Axis | int) -> list[str]:
        """Apply a merge; returns the outputs left unchanged because they are not contiguous."""
        nid = self._nid(node)
        skipped = self._core.apply_merge(nid, _axis_id(self, merged))
        names = self._node(nid).output_names
        return [names[i] for i in skipped]

    def apply_sched_axis_merge(self, node: Node | str, merged: Axis | int) -> None:
        """Apply a merge to a node's loop axes only."""
        self._core.apply_sched_axis_merge(self._nid(node), _axis_id(self, merged))

    def apply_reorder(self, node: Node | str, order: Sequence[Axis | int]) -> None:
        """Reorder a node's loop axes and output views."""
        self._core.apply_reorder(self._nid(node), [_axis_id(self, a) for a in order])

    def try_replace_axis(self, node: Node | str, src: Axis | int, dst: Axis | int) -> bool:
        """Replace axis ``src`` by ``dst`` in a node's loop axes and output views (repeats and
        strides kept; GE's ``TryApplyAxisReplace``); returns whether anything changed. A change
        is recorded in :attr:`transform_log`, so :meth:`replay` repeats it."""
        return bool(self._core.try_apply_axis_replace(self._nid(node), _axis_id(self, src),
                                                      _axis_id(self, dst)))

    @property
    def transform_log(self) -> list[tuple[Any, ...]]:
        """Every transform made, replayable with :meth:`replay`."""
        return self._core.transform_log()

    def replay(self, log: Iterable[tuple[Any, ...]]) -> None:
        """Re-apply a transform log (e.g. on a copy taken before the transforms)."""
        self._core.replay(list(log))

    @property
    def trans_info(self) -> list[tuple[int, list[int], list[int]]]:
        """GE's split/merge history: ``(kind, src, dst)`` with kind 0 = split, 1 = merge."""
        return self._core.trans_info()

    # ----- nodes ----------------------------------------------------------------------------

    def _node(self, nid: int) -> Node:
        node = self._nodes.get(nid)
        if node is None:
            node = _node_class(self._core.node_type(nid))._wrap(self, nid)
            self._nodes[nid] = node
        return node

    @property
    def nodes(self) -> list[Node]:
        """All nodes in insertion order."""
        return [self._node(i) for i in range(self._core.node_count())]

    def node(self, name: str) -> Node:
        """The node named ``name``."""
        return self._node(self._nid(name))

    def find_node(self, name: str) -> Node | None:
        """The node named ``name``, or None."""
        nid = self._core.find_node(name)
        return None if nid is None else self._node(nid)

    # ----- whole graph ----------------------------------------------------------------------

    def validate(self) -> None:
        """Raise :class:`~ascendir.errors.ValidationError` listing every broken invariant
        (the same list :meth:`problems` returns)."""
        self._core.validate()

    def problems(self) -> list[str]:
        """Every broken invariant (empty when valid)."""
        return self._core.problems()

    def validate_hint_conventions(self) -> None:
        """Raise ValidationError when a HintGraph convention is broken."""
        self._core.validate_hint_conventions()

    def hint_problems(self) -> list[str]:
        """Every HintGraph convention violation."""
        return self._core.hint_problems()

    def infer_dtypes(self) -> None:
        """Check and propagate dtypes (InferenceError names the node)."""
        self._core.infer_dtypes()

    def debug_str(self, verbose: bool = False) -> str:
        """GE's text dump."""
        return self._core.debug_str(verbose)

    def to_bytes(self) -> bytes:
        """GE's ``AscGraphDef`` protobuf bytes."""
        return self._core.to_bytes()

    def structure_bytes(self) -> bytes:
        """The ``AscGraphDef`` bytes with every node named after its index and no graph
        name: equal for two graphs that differ only in names (a model's repeated layers)."""
        return self._core.structure_bytes()

    @staticmethod
    def from_bytes(data: bytes) -> AscGraph:
        """Parse ``AscGraphDef`` bytes (DecodeError names the field)."""
        return AscGraph._from_core(_casc.AscGraph.from_bytes(data))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, nodes={self._core.node_count()})"


class HintGraph(AscGraph):
    """A HintGraph: what is computed (one set of loop axes, unlimited memory, one core)."""

    _graph_type = 0


class ImplGraph(AscGraph):
    """An ImplGraph: how it is computed (split axes, vectorized axes, buffers)."""

    _graph_type = 1
