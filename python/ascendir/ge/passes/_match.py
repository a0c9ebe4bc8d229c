"""GE patterns compiled for ascendir's Rust matcher (``ascendir._core.PatternSet``).

A GE pattern graph maps onto the matcher's convention: its inputs (``Data``, by index) are
captures ``in<i>``. With ``enable_const_value_match`` a ``Const`` is the matcher's value
predicate, and the graph constant's shape must equal the pattern's (checked here); without
it (GE's default: any constant) it is a capture ``__const<j>`` whose producer must be a
``Const`` / ``Constant`` (checked here, after the Rust match). With ``enable_ir_attr_match``
every IR attribute the pattern node carries is compared (``_pattern_attrs``), without it
none. The pattern's first output is the matched root; the others are found from it by the
matcher.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ... import _core
from ...rewriter import _PATTERN_ATTRS
from ..error import GeValueError
from .base import MatchResult, PatternMatcherConfig
from .pattern import Pattern

_CONSTS = ("Const", "Constant")


@dataclass
class Compiled:
    """One pattern as the matcher sees it, and how to read its matches back."""

    pattern: Pattern
    graph: _core.Graph
    data: dict[str, str] = field(default_factory=dict)       # capture -> pattern Data name
    any_const: dict[str, str] = field(default_factory=dict)  # capture -> pattern Const name
    data_index: dict[str, int] = field(default_factory=dict)  # pattern Data name -> index
    order: list[str] = field(default_factory=list)           # Rust's node order, by name
    op_slots: list[int] = field(default_factory=list)        # positions of ops in `order`
    const_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # value-matched


def compile_pattern(p: Pattern, config: PatternMatcherConfig | None) -> Compiled:
    """``p`` as a matcher pattern graph under ``config`` (None: GE's defaults)."""
    pg = p._graph
    where = f"pattern '{pg.name}'"
    if not pg.outputs:
        raise GeValueError(f"{where} has no output")
    values_match = config is not None and config.is_enable_const_value_match()
    attrs_match = config is not None and config.is_enable_ir_attr_match()
    cg = _core.Graph(pg.name)
    c = Compiled(p, cg)
    vals: dict[tuple[_core.Node, int], _core.Value] = {}
    for n in pg.nodes:
        t = n.type
        if t == "NetOutput":
            continue
        if t == "Data":
            idx = n.attrs.get("index")
            if not isinstance(idx, int) or f"in{idx}" in c.data:
                raise GeValueError(f"{where}: input '{n.name}' has no distinct 'index'")
            cap = f"in{idx}"
            c.data[cap] = n.name
            c.data_index[n.name] = idx
            vals[(n, 0)] = cg.add_input(cap, n.op_desc.output_desc(0).copy()).outputs[0]
            continue
        if t in _CONSTS and not values_match:
            cap = f"__const{len(c.any_const)}"
            c.any_const[cap] = n.name
            vals[(n, 0)] = cg.add_input(cap, n.op_desc.output_desc(0).copy()).outputs[0]
            continue
        desc = n.op_desc.copy()
        if t in _CONSTS:
            c.const_shapes[n.name] = tuple(n.op_desc.output_desc(0).shape)
        else:
            keys = [a for a in desc.ir_attr_names if a in desc.attrs] if attrs_match else []
            if keys:
                desc.attrs[_PATTERN_ATTRS] = keys
            elif _PATTERN_ATTRS in desc.attrs:
                del desc.attrs[_PATTERN_ATTRS]
        new = cg.add_node(desc)
        for k, src in enumerate(n.inputs):
            if src is not None:
                mine = vals[(src.producer(), src.index)]
                mine.producer().out_data_anchor(mine.index).link_to(new.in_data_anchor(k))
        for k, v in enumerate(new.outputs):
            vals[(n, k)] = v
    cg.set_outputs([vals[(n, k)] for n, k in pg.outputs])
    c.order = _post_order(cg)
    c.op_slots = [i for i, name in enumerate(c.order) if name not in c.const_shapes]
    return c


def _post_order(g: _core.Graph) -> list[str]:
    """The matcher's order of a pattern's non-capture nodes (inputs before readers, from the
    root, then from each further output), which is the order of the nodes of a match."""
    done: set[_core.Node] = set()
    order: list[str] = []
    stack: list[tuple[_core.Node, bool]] = [(n, False) for n, _ in reversed(g.outputs)]
    while stack:
        n, expanded = stack.pop()
        if n in done:
            continue
        if not expanded:
            stack.append((n, True))
            if n.type not in ("Data", *_CONSTS):
                for src in reversed(n.inputs):
                    if src is not None and src.producer() not in done:
                        stack.append((src.producer(), False))
            continue
        done.add(n)
        if n.type != "Data":
            order.append(n.name)
    return order


@dataclass
class Found:
    """One match: the graph nodes by pattern node name, the inputs' values by pattern Data
    name, and the nodes in topological order."""

    compiled: Compiled
    nodes: dict[str, _core.Node]
    inputs: dict[str, _core.Value]
    ordered: list[_core.Node]
    ops: list[_core.Node]          # the matched op nodes (no constants)
    root: _core.Node
    outputs: list[_core.Value]     # the graph value of each pattern output, the root's first

    def result(self) -> MatchResult:
        """A fresh :class:`MatchResult` of this match."""
        return MatchResult._create(self.compiled.pattern, self.nodes, self.inputs)

    def input_values(self) -> list[_core.Value | None]:
        """The graph values of the pattern's inputs, by input index (None for an index the
        pattern has no input of)."""
        c = self.compiled
        by_index = {c.data_index[name]: v for name, v in self.inputs.items()}
        return [by_index.get(i) for i in range(max(by_index, default=-1) + 1)]


def read_match(c: Compiled, root: _core.Node, outputs: list[_core.Value],
               nodes: Sequence[_core.Node],
               caps: Sequence[tuple[str, _core.Value]]) -> Found | None:
    """The match the matcher reported, or None when an any-constant capture is not a
    constant."""
    by_name = dict(zip(c.order, nodes, strict=True))
    for name, shape in c.const_shapes.items():
        # The matcher's one-element predicate takes a constant of any shape; GE compares the
        # whole tensor, so the shapes must agree too.
        if tuple(by_name[name].op_desc.output_desc(0).shape) != shape:
            return None
    inputs: dict[str, _core.Value] = {}
    consts: list[_core.Node] = []
    for cap, v in caps:
        if cap in c.data:
            inputs[c.data[cap]] = v
        else:
            prod = v.producer()
            if prod.type not in _CONSTS:
                return None
            by_name[c.any_const[cap]] = prod
            consts.append(prod)
    ops = [nodes[i] for i in c.op_slots]
    return Found(c, by_name, inputs, [*consts, *nodes], ops, root, outputs)
