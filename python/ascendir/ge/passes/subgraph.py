"""GE's graph-level rewriting (``SubgraphInput``, ``SubgraphOutput``, ``SubgraphBoundary``,
``SubgraphRewriter``): replace the subgraph between a boundary's inputs (input anchors of its
nodes) and outputs (output anchors) by a replacement graph."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ... import _core
from ...errors import AscendIRError
from ...rewriter import VerificationError
from ..error import GeError, GeTypeError, GeValueError
from ..graph import Graph, Node
from . import _runstate
from ._splice import splice
from .base import PassContext
from .fuse_inspector import ORIGINAL_NAMES, can_fuse

__all__ = ["SubgraphBoundary", "SubgraphInput", "SubgraphOutput", "SubgraphRewriter"]

SUCCESS = 0
FAILED = 1


def _node(value: Any, what: str) -> Node:
    if not isinstance(value, Node):
        raise GeTypeError(f"{what} must be a ge.graph.Node")
    return value


def _index(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise GeTypeError(f"{what} must be an integer")
    if value < 0:
        raise GeValueError(f"{what} must be non-negative")
    return value


class SubgraphInput:
    """One boundary input: input anchors ``(node, input index)`` of the subgraph's nodes that
    all read the same value."""

    def __init__(self, node_inputs: Iterable[tuple[Node, int]] | None = None) -> None:
        self._anchors: list[tuple[Node, int]] = []
        for item in node_inputs or []:
            if not isinstance(item, tuple) or len(item) != 2:
                raise GeError("SubgraphInput items must be (node, index) 2-tuples")
            self.add_input(item[0], item[1])

    def add_input(self, node: Node, out_index: int) -> int:
        """Add the input anchor ``out_index`` of ``node``; returns 0."""
        self._anchors.append((_node(node, "node"), _index(out_index, "index")))
        return SUCCESS


class SubgraphOutput:
    """One boundary output: an output anchor ``(node, output index)``."""

    def __init__(self, node: Node | None = None, out_index: int | None = None) -> None:
        self._anchor: tuple[Node, int] | None = None
        if node is not None:
            self.set_output(node, 0 if out_index is None else out_index)

    def set_output(self, node: Node, out_index: int) -> int:
        """Set the output anchor; returns 0."""
        self._anchor = (_node(node, "node"), _index(out_index, "out_index"))
        return SUCCESS


class SubgraphBoundary:
    """The inputs and outputs of the subgraph to replace, by the replacement graph's input
    and output indexes."""

    def __init__(self) -> None:
        self._inputs: dict[int, SubgraphInput] = {}
        self._outputs: dict[int, SubgraphOutput] = {}

    def add_input(self, index: int, input: SubgraphInput) -> int:  # noqa: A002 - GE's name
        """Bind boundary input ``index``; returns 0."""
        i = _index(index, "index")
        if not isinstance(input, SubgraphInput):
            raise GeTypeError("input must be a SubgraphInput")
        if i in self._inputs:
            raise GeValueError(f"boundary input {i} is already set")
        self._inputs[i] = input
        return SUCCESS

    def add_output(self, index: int, output: SubgraphOutput) -> int:
        """Bind boundary output ``index``; returns 0."""
        i = _index(index, "index")
        if not isinstance(output, SubgraphOutput):
            raise GeTypeError("output must be a SubgraphOutput")
        if i in self._outputs:
            raise GeValueError(f"boundary output {i} is already set")
        self._outputs[i] = output
        return SUCCESS

    def _resolve(self) -> tuple[_core.Graph, list[_core.Value], list[_core.Node],
                                list[_core.Value]]:
        """The graph, input values, subgraph nodes (topological) and output values."""
        if not self._outputs:
            raise GeValueError("the boundary has no output")
        for what, d in (("input", self._inputs), ("output", self._outputs)):
            if sorted(d) != list(range(len(d))):
                raise GeValueError(f"boundary {what} indexes must be 0..n-1, got {sorted(d)}")
        outs: list[_core.Value] = []
        for i in range(len(self._outputs)):
            anchor = self._outputs[i]._anchor
            if anchor is None:
                raise GeValueError(f"boundary output {i} has no output set")
            n, k = anchor[0].air, anchor[1]
            if k >= len(n.outputs):
                raise GeValueError(f"boundary output {i}: '{n.name}' has no output {k}")
            outs.append(n.outputs[k])
        graph = outs[0].producer().graph
        stops: set[tuple[_core.Node, int]] = set()
        ins: list[_core.Value] = []
        for i in range(len(self._inputs)):
            anchors = self._inputs[i]._anchors
            if not anchors:
                raise GeValueError(f"boundary input {i} has no anchor")
            value = None
            for node, k in anchors:
                n = node.air
                src = n.inputs[k] if k < len(n.inputs) else None
                if src is None:
                    raise GeValueError(f"boundary input {i}: input {k} of '{n.name}' is not "
                                       "linked")
                if value is not None and (src.producer(), src.index) != (
                        value.producer(), value.index):
                    raise GeValueError(f"boundary input {i}: its anchors read different "
                                       "values")
                value = src
                stops.add((n, k))
            assert value is not None
            ins.append(value)
        inside: set[_core.Node] = set()
        stack = [v.producer() for v in outs]
        while stack:
            n = stack.pop()
            if n in inside:
                continue
            if n.graph != graph:
                raise GeValueError("the boundary spans several graphs")
            if n.type == "Data":
                raise GeValueError(f"the subgraph reaches the graph input '{n.name}': the "
                                   "boundary inputs do not close it")
            inside.add(n)
            for k, src in enumerate(n.inputs):
                if src is not None and (n, k) not in stops:
                    stack.append(src.producer())
        for n, _k in stops:
            if n not in inside:
                raise GeValueError(f"boundary input anchor on '{n.name}' is not inside the "
                                   "subgraph")
        order = [n for n in graph.nodes if n in inside]
        return graph, ins, order, outs


class SubgraphRewriter:
    """Replace the subgraph a :class:`SubgraphBoundary` describes by a replacement graph."""

    @staticmethod
    def replace(boundary: SubgraphBoundary, replacement: Graph, *,
                context: PassContext | None = None) -> int | None:
        """Replace the subgraph: replacement input ``i`` reads boundary input ``i``, every use
        of boundary output ``j`` reads replacement output ``j``. Without ``context`` returns
        GE's status (0, or 1 when it failed, the graph unchanged; the reason goes to the
        running pass's context); with it checks ``can_fuse``, reports the fusion and raises
        :class:`GeError` on failure. Under ``run_passes(verify=True)`` the replacement is
        checked numerically first (:class:`ascendir.rewriter.VerificationError`)."""
        if not isinstance(boundary, SubgraphBoundary):
            raise GeTypeError("boundary must be a SubgraphBoundary")
        if not isinstance(replacement, Graph):
            raise GeTypeError("replacement must be a ge.graph.Graph")
        if context is not None and not isinstance(context, PassContext):
            raise GeTypeError("context must be a PassContext")
        run = _runstate.current()
        pass_name = run.pass_name if run is not None else "SubgraphRewriter"
        try:
            graph, ins, nodes, outs = boundary._resolve()
            before = [Node.from_air(n) for n in nodes]
            if context is not None:
                check = can_fuse(before)
                if not check.ok:
                    raise GeError(f"SubgraphRewriter.replace: {check.reason}")
            names = [n.name for n in before]
            where = f"subgraph at '{outs[-1].producer().name}'"
            created = splice(graph, ins, nodes, outs, replacement.air, pass_name, where,
                             do_verify=run is not None and run.verify)
        except VerificationError:
            raise
        except AscendIRError as e:
            if context is not None:
                context.set_error_message(str(e))
                raise
            if run is not None:
                run.context.set_error_message(str(e))
            return FAILED
        if run is not None:
            run.rewrites += 1
            run.created += len(created)
        if context is not None:
            _report(context, names, created)
            return None
        return SUCCESS


def _report(context: PassContext, before: list[str], created: list[_core.Node]) -> None:
    for n in created:
        n.op_desc.attrs[ORIGINAL_NAMES] = list(before)
    context.fuse_reports.append((before, [n.name for n in created]))
