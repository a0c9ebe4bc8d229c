"""GE's pattern helpers (``ge.passes.pattern``): :class:`Pattern`, :class:`NodeIo`,
:func:`create_pattern`, the ``@pattern`` decorator and the inputs handed to expression-style
hooks. A pattern is compiled for ascendir's Rust matcher by :mod:`._compile`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, overload

from ... import _core
from ..error import GeError, GeTypeError, GeValueError
from ..es.graph_builder import GraphBuilder
from ..es.tensor_holder import TensorHolder
from ..graph import Graph, Node

__all__ = ["NodeIo", "Pattern", "PatternInputs", "create_pattern", "pattern"]

_PATTERN_MARK = "__ge_expression_pattern_method__"


@dataclass(frozen=True)
class NodeIo:
    """One node output: ``node`` and output ``index``."""

    node: Node
    index: int = 0


class Pattern:
    """A pattern graph to find: its inputs (``Data``) match any value, its ``Const`` nodes a
    constant, its op nodes a node of the same type; the output is the matched root.
    ``capture_tensor`` records outputs the hooks read back through
    ``MatchResult.get_captured_tensor(i)``."""

    def __init__(self, graph: Graph) -> None:
        if not isinstance(graph, Graph):
            raise GeTypeError("Pattern expects a ge.graph.Graph")
        self._graph: _core.Graph = graph.air
        self._captures: list[tuple[str, int]] = []
        self._valid = True
        self._node_order = [n.name for n in self._graph.nodes
                            if n.type not in ("Data", "NetOutput")]

    def _check(self, what: str) -> None:
        if not self._valid:
            raise GeError(f"{what} failed; the Pattern was released")

    def capture_tensor(self, source: TensorHolder | Node | NodeIo,
                       index: int | None = None) -> Pattern:
        """Record an output of the pattern graph (a ``TensorHolder``; a ``Node`` and
        ``index``; or a ``NodeIo`` with ``index`` left ``None``); returns the pattern."""
        self._check("capture_tensor")
        if isinstance(source, TensorHolder):
            if index is not None:
                raise GeValueError("index must be None when capturing a TensorHolder")
            value = source.air
            node, k = value.producer(), value.index
        elif isinstance(source, Node):
            if index is None:
                index = 0
            if not isinstance(index, int) or isinstance(index, bool):
                raise GeTypeError("index must be an integer")
            node, k = source.air, index
        elif hasattr(source, "node") and hasattr(source, "index"):
            if index is not None:
                raise GeValueError("index must be None when capturing a NodeIo")
            if not isinstance(source.node, Node):
                raise GeTypeError("NodeIo.node must be a ge.graph.Node")
            node, k = source.node.air, int(source.index)
        else:
            raise GeTypeError("capture_tensor expects a TensorHolder, a Node or a NodeIo, got "
                              f"{type(source).__name__}")
        if node.graph != self._graph:
            raise GeValueError(f"capture_tensor: node '{node.name}' is not in the pattern graph "
                               f"'{self._graph.name}'")
        if not 0 <= k < len(node.outputs):
            raise GeValueError(f"capture_tensor: node '{node.name}' has no output {k}")
        self._captures.append((node.name, k))
        return self

    def get_captured_tensors(self) -> list[NodeIo]:
        """The captured outputs, as ``NodeIo`` of the pattern graph's nodes."""
        self._check("get_captured_tensors")
        return [NodeIo(Node.from_air(self._graph.node(n)), k) for n, k in self._captures]

    def is_valid(self) -> bool:
        """Whether the pattern was not released."""
        return self._valid

    def release(self) -> int:
        """End the Python object's use (GE hands the native pattern to C++); returns a
        handle number. Afterwards every method but ``is_valid`` / ``release`` raises."""
        self._check("release")
        self._valid = False
        return id(self)

    @property
    def graph(self) -> Graph:
        """The pattern graph."""
        return Graph.from_air(self._graph)


def create_pattern(graph: Graph) -> Pattern:
    """A :class:`Pattern` of ``graph``."""
    return Pattern(graph)


def ensure_pattern(item: Pattern | Graph) -> Pattern:
    """``item`` as a :class:`Pattern` (a ``Graph`` is wrapped)."""
    if isinstance(item, Graph):
        return create_pattern(item)
    if isinstance(item, Pattern):
        return item
    raise GeTypeError("PatternFusionPass.patterns must return Pattern or Graph objects, got "
                      f"{type(item).__name__}")


class PatternInputs:
    """The inputs of a pattern or replacement graph, made on first access: ``inputs[i]``
    creates input ``i`` (and those before it), ``inputs[:n]`` the first ``n``. The count is
    unknown, so iterating is refused."""

    def __init__(self, builder: GraphBuilder) -> None:
        self._builder = builder
        self._inputs: dict[int, TensorHolder] = {}

    @overload
    def __getitem__(self, index: int) -> TensorHolder: ...

    @overload
    def __getitem__(self, index: slice) -> list[TensorHolder]: ...

    def __getitem__(self, index: int | slice) -> TensorHolder | list[TensorHolder]:
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise GeValueError("PatternInputs slice step must be 1")
            start = 0 if index.start is None else index.start
            if index.stop is None:
                raise GeValueError("PatternInputs slice must provide a stop index, for "
                                   "example inputs[:3]")
            if start < 0 or index.stop < 0:
                raise GeValueError("PatternInputs slice indices must be non-negative")
            if index.stop < start:
                raise GeValueError("PatternInputs slice stop must be greater than or equal "
                                   "to start")
            return [self[i] for i in range(start, index.stop)]
        if not isinstance(index, int) or isinstance(index, bool):
            raise GeTypeError("PatternInputs index must be an integer or slice")
        if index < 0:
            raise GeValueError("PatternInputs index must be non-negative")
        for i in range(len(self._inputs), index + 1):
            self._inputs[i] = self._builder.create_input(i)
        return self._inputs[index]

    def __iter__(self) -> Any:
        raise GeTypeError("PatternInputs cannot be iterated because the input count is "
                          "unknown; use inputs[:N]")

    def created(self) -> list[TensorHolder]:
        """The inputs made so far, in index order."""
        return [self._inputs[i] for i in sorted(self._inputs)]


def pattern(method: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``PatternFusionPass`` method ``method(self, inputs)`` as one pattern."""
    setattr(method, _PATTERN_MARK, True)
    return method


def _pattern_methods(cls: type) -> list[Callable[..., Any]]:
    return [m for m in cls.__dict__.values() if callable(m) and getattr(m, _PATTERN_MARK, False)]


def _has_pattern_methods(cls: type) -> bool:
    return bool(_pattern_methods(cls))


def _positional(method: Callable[..., Any]) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(method).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _check_arity(method: Callable[..., Any], lo: int, hi: int, message: str) -> None:
    n = len(_positional(method))
    kw_required = any(p.kind == p.KEYWORD_ONLY and p.default is p.empty
                      for p in inspect.signature(method).parameters.values())
    if n < lo or n > hi or kw_required:
        raise GeTypeError(message)


def _adapt_pattern_methods(cls: type) -> Callable[..., list[Pattern]]:
    """``patterns(self)`` made of the class's ``@pattern`` methods."""
    methods = _pattern_methods(cls)
    for m in methods:
        _check_arity(m, 2, 2, "@pattern methods only support method(self, inputs)")

    def patterns(self: Any) -> list[Pattern]:
        out = []
        for m in methods:
            builder = GraphBuilder(f"{type(self).__name__}_{m.__name__}_pattern")
            inputs = PatternInputs(builder)
            out.extend(_patterns_of(builder, inputs, m(self, inputs)))
        return out

    return patterns


def _adapt_replacement(method: Callable[..., Any]) -> Callable[..., Any]:
    """``replacement(self, inputs[, match_result])`` wrapped into ``replacement(self,
    match_result) -> Graph``; any other signature is kept."""
    params = _positional(method)
    if len(params) < 2 or params[1].name != "inputs":
        return method
    _check_arity(method, 2, 3, "Expression-style replacement only supports "
                 "replacement(self, inputs) or replacement(self, inputs, match_result)")
    with_match = len(params) == 3

    @wraps(method)
    def replacement(self: Any, match_result: Any) -> Graph:
        builder = GraphBuilder(f"{type(self).__name__}_replacement")
        inputs = PatternInputs(builder)
        result = method(self, inputs, match_result) if with_match else method(self, inputs)
        if isinstance(result, Graph):
            return result
        return builder.build_and_reset(_outputs_of(result, "replacement"))

    return replacement


def _patterns_of(builder: GraphBuilder, inputs: PatternInputs, result: Any) -> list[Pattern]:
    if isinstance(result, (Pattern, Graph)):
        return [ensure_pattern(result)]
    if (isinstance(result, (list, tuple)) and result
            and all(isinstance(r, (Pattern, Graph)) for r in result)):
        raise GeTypeError("A @pattern method supports a single pattern only. For multiple "
                          "patterns, declare several @pattern methods or use patterns(self).")
    outs = _outputs_of(result, "patterns")
    built = create_pattern(builder.build_and_reset(outs))
    for t in inputs.created():
        built.capture_tensor(t)
    for t in outs:
        built.capture_tensor(t)
    return [built]


def _outputs_of(result: Any, hook: str) -> list[TensorHolder]:
    if isinstance(result, TensorHolder):
        return [result]
    if isinstance(result, tuple):
        result = list(result)
    if isinstance(result, list) and result and all(isinstance(r, TensorHolder) for r in result):
        return result
    raise GeTypeError(f"Expression-style {hook} must return a TensorHolder or a non-empty "
                      "list/tuple of TensorHolder")
