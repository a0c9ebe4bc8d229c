"""GE's pass classes (``ge.passes.base``): the stage enum, the pass contracts, the pass context,
the matcher configuration and the match result handed to a pattern pass's hooks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, Union

from ... import _core
from ..error import GeError, GeTypeError
from ..graph import Graph, Node
from .pattern import NodeIo

if TYPE_CHECKING:
    from .pattern import Pattern

__all__ = [
    "DecomposePass",
    "FusionBasePass",
    "MatchResult",
    "PassContext",
    "PassStage",
    "PatternFusionPass",
    "PatternMatcherConfig",
    "PatternMatcherConfigBuilder",
]

PatternOrGraph = Union["Pattern", Graph]
StatusLike = bool | int | None


class PassStage(str, Enum):
    """The compile stage a pass runs at (GE's names and values), in GE's order."""

    BEFORE_INFER_SHAPE = "BeforeInferShape"
    AFTER_INFER_SHAPE = "AfterInferShape"
    AFTER_BUILTIN_FUSION_PASS = "AfterBuiltinFusionPass"
    AFTER_ORIGIN_GRAPH_OPTIMIZE = "AfterOriginGraphOptimize"

    def __new__(cls, value: str) -> PassStage:
        """The member of value ``value`` (a ``str`` whose value is GE's stage name)."""
        obj = str.__new__(cls, value)
        obj._value_ = value
        return obj


class PassContext:
    """The context handed to ``FusionBasePass.run(graph, context)``: the pass name, an error
    message the pass may set, and the compile options (``get_option_value``)."""

    def __init__(self, pass_name: str = "", options: Mapping[str, str] | None = None) -> None:
        if not isinstance(pass_name, str):
            raise GeTypeError("pass_name must be a string")
        self._pass_name = pass_name
        self._error = ""
        self._options = {str(k): str(v) for k, v in (options or {}).items()}
        #: ``(nodes_before, nodes_after)`` names of every fusion ``report_fuse`` recorded.
        self.fuse_reports: list[tuple[list[str], list[str]]] = []

    def get_pass_name(self) -> str:
        """The current pass name."""
        return self._pass_name

    def set_pass_name(self, name: str) -> None:
        """Set the pass name."""
        if not isinstance(name, str):
            raise GeTypeError("name must be a string")
        self._pass_name = name

    def get_error_message(self) -> str:
        """The error message set by the pass or the runner ("" when none)."""
        return self._error

    def set_error_message(self, message: str) -> None:
        """Set the error message reported when the pass fails."""
        if not isinstance(message, str):
            raise GeTypeError("message must be a string")
        self._error = message

    def get_option_value(self, key: str) -> str:
        """The value of compile option ``key``; :class:`GeError` when it is not set."""
        if not isinstance(key, str):
            raise GeTypeError("key must be a string")
        if key not in self._options:
            raise GeError(f"get_option_value failed; key={key}; option is not set")
        return self._options[key]


class PatternMatcherConfig:
    """How a pattern's constants and attributes are compared (built by
    :class:`PatternMatcherConfigBuilder`)."""

    def __init__(self) -> None:
        self._const_value = False
        self._ir_attr = False

    def is_enable_const_value_match(self) -> bool:
        """Whether a pattern ``Const`` must equal the graph's constant (else any ``Const``)."""
        return self._const_value

    def is_enable_ir_attr_match(self) -> bool:
        """Whether a pattern node's IR attributes must equal the graph node's."""
        return self._ir_attr

    def __repr__(self) -> str:
        return (f"PatternMatcherConfig(const_value_match={self._const_value}, "
                f"ir_attr_match={self._ir_attr})")


class PatternMatcherConfigBuilder:
    """Fluent builder of :class:`PatternMatcherConfig`."""

    def __init__(self) -> None:
        self._const_value = False
        self._ir_attr = False

    def enable_const_value_match(self) -> PatternMatcherConfigBuilder:
        """Compare constant values; returns the builder."""
        self._const_value = True
        return self

    def enable_ir_attr_match(self) -> PatternMatcherConfigBuilder:
        """Compare IR attributes; returns the builder."""
        self._ir_attr = True
        return self

    def build(self) -> PatternMatcherConfig:
        """The configuration."""
        cfg = PatternMatcherConfig()
        cfg._const_value = self._const_value
        cfg._ir_attr = self._ir_attr
        return cfg


class MatchResult:
    """One match of a pattern in the graph, valid during the ``meet_requirements`` /
    ``replacement`` call it is handed to."""

    _pattern: Pattern
    _nodes: dict[str, _core.Node]
    _inputs: dict[str, _core.Value]
    _valid: bool

    def __init__(self) -> None:
        raise GeError("MatchResult objects are created by the pass runner")

    @classmethod
    def _create(cls, pattern: Pattern, nodes: Mapping[str, _core.Node],
                inputs: Mapping[str, _core.Value]) -> MatchResult:
        inst = cls.__new__(cls)
        inst._pattern = pattern
        inst._nodes = dict(nodes)     # pattern op / const node name -> graph node
        inst._inputs = dict(inputs)   # pattern Data node name -> graph value
        inst._valid = True
        return inst

    def _check(self, what: str) -> None:
        if not self._valid:
            raise GeError(f"{what} failed; the MatchResult is no longer valid (it lives for "
                          "one meet_requirements / replacement call)")

    def _invalidate(self) -> None:
        """End the result's life (the runner does it after each hook)."""
        self._valid = False

    def get_matched_nodes(self) -> list[Node]:
        """The graph nodes matched by the pattern's nodes (its inputs excluded), in the pattern
        graph's node order."""
        self._check("get_matched_nodes")
        return [Node.from_air(self._nodes[name]) for name in self._pattern._node_order
                if name in self._nodes]

    def get_captured_tensor(self, capture_index: int) -> NodeIo:
        """The graph output matched by the ``capture_index``-th captured tensor, as a
        ``NodeIo`` (``node``, ``index``)."""
        self._check("get_captured_tensor")
        if not isinstance(capture_index, int) or isinstance(capture_index, bool):
            raise GeTypeError("capture_index must be an integer")
        caps = self._pattern._captures
        if not 0 <= capture_index < len(caps):
            raise GeError(f"get_captured_tensor failed; capture_index={capture_index}; the "
                          f"pattern '{self.get_pattern_graph_name()}' captures {len(caps)} "
                          "tensors")
        name, index = caps[capture_index]
        if name in self._inputs:
            v = self._inputs[name]
            return NodeIo(Node.from_air(v.producer()), v.index)
        return NodeIo(Node.from_air(self._nodes[name]), index)

    def get_pattern_graph_name(self) -> str:
        """The name of the pattern graph that matched."""
        self._check("get_pattern_graph_name")
        return self._pattern._graph.name

    def __str__(self) -> str:
        if not self._valid:
            return "MatchResult(invalid)"
        nodes = ", ".join(f"{k}->{n.name}" for k, n in self._nodes.items())
        return f"MatchResult(pattern={self._pattern._graph.name}, nodes=[{nodes}])"


class FusionBasePass:
    """A pass that edits the graph itself in ``run(graph, context)``; returns ``None``,
    ``True`` / ``False`` or a status (0 is success)."""

    def run(self, graph: Graph, context: PassContext) -> StatusLike:
        """Edit ``graph``; the runner calls it once per run."""
        raise NotImplementedError("FusionBasePass.run must be implemented")


class PatternFusionPass(FusionBasePass):
    """A pass of patterns (``@pattern`` methods, or ``patterns()``), ``meet_requirements``
    and ``replacement``; the runner never calls ``run``, and overriding it is a
    :class:`TypeError`."""

    def __init__(self, matcher_config: PatternMatcherConfig | None = None) -> None:
        self._matcher_config = matcher_config

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "run" in cls.__dict__:
            raise GeTypeError(
                f"{cls.__name__} overrides run(), which the PatternFusionPass runner never "
                "calls; implement patterns()/replacement() instead")
        from .pattern import _adapt_pattern_methods, _adapt_replacement, _has_pattern_methods

        if _has_pattern_methods(cls):
            if "patterns" in cls.__dict__:
                raise GeTypeError(f"{cls.__name__} cannot combine @pattern methods with "
                                  "patterns(); use one style for declaring patterns")
            cls.patterns = _adapt_pattern_methods(cls)  # type: ignore[method-assign]
        if "replacement" in cls.__dict__:
            cls.replacement = _adapt_replacement(  # type: ignore[method-assign]
                cls.__dict__["replacement"])

    @property
    def matcher_config(self) -> PatternMatcherConfig | None:
        """The matcher configuration given at construction (None: GE's defaults)."""
        return getattr(self, "_matcher_config", None)

    def patterns(self) -> Iterable[PatternOrGraph]:
        """The patterns to find (``Pattern`` or ``Graph`` objects)."""
        raise NotImplementedError("PatternFusionPass.patterns must be implemented")

    def meet_requirements(self, match_result: MatchResult) -> bool:
        """Whether to rewrite this match (``False`` skips it)."""
        return True

    def replacement(self, match_result: MatchResult) -> Graph:
        """The graph replacing the match: input ``i`` takes the pattern's input ``i``, output
        ``j`` replaces the pattern's output ``j``."""
        raise NotImplementedError("PatternFusionPass.replacement must be implemented")


class DecomposePass(FusionBasePass):
    """A pass replacing single nodes of the registered ``op_types`` by a graph; the runner
    calls ``meet_requirements(node)`` and ``replacement(node)``, never ``run``."""

    op_types: list[str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "run" in cls.__dict__:
            raise GeTypeError(
                f"{cls.__name__} overrides run(), which the DecomposePass runner never calls; "
                "implement meet_requirements()/replacement() instead")

    def meet_requirements(self, node: Node) -> bool:
        """Whether to decompose ``node`` (``False`` skips it)."""
        return True

    def replacement(self, node: Node) -> Graph:
        """The graph replacing ``node``: input ``i`` takes the node's input ``i``, output
        ``j`` replaces its output ``j``."""
        raise NotImplementedError("DecomposePass.replacement must be implemented")


