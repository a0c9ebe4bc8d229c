"""Pattern rewriting: declarative rules over op types, attributes, constant values and uses,
matched by one merged matcher in Rust (``ascendir._core.PatternSet``).

A rule is two plain Python functions of the same captures: the *pattern* builds the subgraph
to find, the *replacement* what to put in its place, both with the typed builders through the
``op`` namespace they receive first (the style of onnxscript's rewriter)::

    from ascendir import rewriter

    def pattern(op, x):
        return op.Mul(x, op.Const(1.0))      # a Const of ones, of any shape

    def replacement(op, x):
        return x                             # just a capture: x * 1 -> x

    rules = rewriter.RewriteRuleSet([rewriter.RewriteRule(pattern, replacement, name="mul1")])
    rules.apply(graph)                       # how many rewrites

- ``op.<OpType>(inputs..., attr=...)`` is ``ascendir.ops.<OpType>``; in a pattern, only the
  attributes passed explicitly are compared (equal values), the others are free, and an
  optional input left out must be unlinked in the graph.
- ``op.Const(value)``: in a pattern a one-element constant matches a ``Const`` whose every
  element equals it (any shape, any numeric dtype), a bigger one a ``Const`` of the same shape
  and elements; in a replacement it adds a ``Const`` (numpy's dtype of ``value``, float32 for a
  Python float).
- Every intermediate value of a pattern (not the root) must have no use outside the match, so
  that the matched nodes can go. Inputs are matched in order: ``Mul(x, 1)`` does not match
  ``Mul(1, x)`` (write a second rule).
- The matcher compiles every rule of a set into one: sub-patterns rules share are checked once
  per graph node, and one walk over the graph tries at each node only the rules whose root op
  type is the node's.

Rewriting a match inserts the replacement before the root, moves every use of the root value
(and a graph output naming it) to the replacement's value, and removes the matched nodes that
nothing reads any more. Each node it creates carries the rule set's pass name in its
``_created_by`` attribute (:func:`ascendir.passes.created_by`). A rewrite is all or nothing:
when building the replacement or moving the uses fails, the nodes it created are removed and
:class:`RewriteError` is raised.

``verify=True`` checks every match before rewriting it: the matched subgraph and the
replacement are built as standalone graphs over the captures' descs, run with
:func:`ascendir.evaluate` on the same random inputs (a fixed seed), and compared with a
per-dtype tolerance (float32 ``1e-5`` relative, float16 / bfloat16 ``1e-3``, integers and
booleans exact). A rewrite that changes the result raises :class:`VerificationError` before
anything changes: the graph is left as the earlier rewrites of the call left it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core, passes
from . import ops as _ops
from .errors import AscendIRError, StaleHandleError
from .types import DataType

__all__ = [
    "Match",
    "PatternRewritePass",
    "RewriteError",
    "RewriteRule",
    "RewriteRuleSet",
    "VerificationError",
]


class RewriteError(passes.PassError):
    """A rule's pattern or replacement cannot be built, or a rewrite failed (the graph is left
    as it was before that rewrite)."""


class VerificationError(RewriteError):
    """``verify=True``: a replacement does not compute what the matched subgraph computes."""


@dataclass(frozen=True)
class Match:
    """One match: the rule, the root node and output, the matched nodes (op and constant
    nodes, not the captures; inputs before their readers) and each capture's value."""

    rule: RewriteRule
    root: _core.Node
    root_output: int
    nodes: list[_core.Node]
    captures: dict[str, _core.Value]

    @property
    def value(self) -> _core.Value:
        """The root value the rewrite replaces."""
        return self.root.outputs[self.root_output]


class _Builder:
    """The ``op`` namespace a pattern or replacement function receives: ``op.<OpType>`` is the
    typed builder, naming each node and recording what it adds."""

    def __init__(self, graph: _core.Graph, prefix: str, pattern: bool) -> None:
        self._graph = graph
        self._prefix = prefix
        self._pattern = pattern
        self._count = 0
        self.created: list[_core.Node] = []

    def _name(self, hint: str) -> str:
        while True:
            self._count += 1
            name = f"{self._prefix}{hint}_{self._count}"
            if self._graph.find(name) is None:
                return name

    def Const(self, value: Any, *, name: str | None = None) -> _core.Value:  # noqa: N802
        """A constant: a predicate in a pattern, a new ``Const`` in a replacement."""
        arr = np.asarray(value)
        if arr.dtype == np.float64 and not isinstance(value, np.ndarray):
            arr = arr.astype(np.float32)
        node = self._graph.add_const(name or self._name("Const"), arr)
        self.created.append(node)
        return node.outputs[0]

    def __getattr__(self, op_type: str) -> Callable[..., Any]:
        if op_type.startswith("_"):
            raise AttributeError(op_type)
        build = getattr(_ops, op_type)

        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("name", self._name(op_type))
            kwargs.setdefault("graph", self._graph)
            out = build(*args, **kwargs)
            first = out[0] if isinstance(out, tuple) else out
            node = first if isinstance(first, _core.Node) else first.producer()
            self.created.append(node)
            if self._pattern:
                keys = [_attr_key(node, k) for k in kwargs if k not in ("name", "graph")]
                if any(k is not None for k in keys):
                    node.op_desc.attrs[_PATTERN_ATTRS] = [k for k in keys if k is not None]
            return out

        return call


_PATTERN_ATTRS = "_pattern_attrs"


def _attr_key(node: _core.Node, kwarg: str) -> str | None:
    attrs = node.op_desc.attrs
    for key in (kwarg, kwarg.rstrip("_")):
        if key in attrs:
            return key
    return None


def _capture_names(fn: Callable[..., Any], what: str) -> list[str]:
    params = list(inspect.signature(fn).parameters.values())
    if not params:
        raise RewriteError(f"the {what} function must take the op namespace first")
    for p in params[1:]:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise RewriteError(f"{what} parameter '{p.name}' must be a plain positional one")
    return [p.name for p in params[1:]]


class _NotCapture(Exception):
    pass


class _Probe:
    def __getattr__(self, name: str) -> Any:
        raise _NotCapture(name)


def _returned_capture(replacement: Callable[..., Any]) -> str | None:
    """The capture ``replacement`` returns without building anything, probed with stand-ins;
    None when it builds ops or does anything else with its arguments."""
    names = _capture_names(replacement, "replacement")
    stand_ins = [object() for _ in names]
    try:
        out = replacement(_Probe(), *stand_ins)
    except Exception:  # noqa: BLE001 - any use of a stand-in: not a plain capture
        return None
    return next((n for n, s in zip(names, stand_ins, strict=True) if out is s), None)


class RewriteRule:
    """A pattern, its replacement (both ``fn(op, *captures)``) and an optional ``condition``
    (``condition(match) -> bool``, checked after the pattern matched)."""

    def __init__(self, pattern: Callable[..., Any], replacement: Callable[..., Any], *,
                 name: str | None = None,
                 condition: Callable[[Match], bool] | None = None) -> None:
        self.pattern = pattern
        self.replacement = replacement
        self.name: str = name or str(getattr(pattern, "__name__", "rule"))
        self.condition = condition
        self.captures = _capture_names(pattern, "pattern")
        missing = [c for c in _capture_names(replacement, "replacement")
                   if c not in self.captures]
        if missing:
            raise RewriteError(f"rule '{self.name}': the replacement takes '{missing[0]}', "
                               "which the pattern does not capture")
        self.graph = self._trace()
        #: The capture the replacement returns unchanged (``x * 1 -> x``), else None.
        self.returns_capture = _returned_capture(replacement)

    def _trace(self) -> _core.Graph:
        g = _core.Graph(f"pattern_{self.name}")
        desc = _core.TensorDesc([-2], DataType.FLOAT)
        args = [g.add_input(c, desc).outputs[0] for c in self.captures]
        try:
            root = self.pattern(_Builder(g, "", pattern=True), *args)
        except Exception as e:
            raise RewriteError(f"rule '{self.name}': the pattern does not build: {e}") from e
        if isinstance(root, tuple):
            raise RewriteError(f"rule '{self.name}': the pattern must return one value")
        if not isinstance(root, _core.Value) or root.producer().type in ("Data",):
            raise RewriteError(f"rule '{self.name}': the pattern must return an op's value")
        g.set_outputs([root])
        return g

    def __repr__(self) -> str:
        return f"RewriteRule({self.name!r})"


class RewriteRuleSet:
    """Rules compiled into one merged matcher; ``pass_name`` tags the nodes it creates."""

    def __init__(self, rules: Iterable[RewriteRule], *, pass_name: str = "PatternRewrite",
                 seed: int = 0) -> None:
        self.rules: list[RewriteRule] = list(rules)
        names = [r.name for r in self.rules]
        if len(set(names)) != len(names):
            raise RewriteError(f"rule names repeat: {names}")
        self.pass_name = pass_name
        self.seed = seed
        self._set = _core.PatternSet([(r.name, r.graph) for r in self.rules])
        # Every rule returns a capture and has no condition: rewrite in bulk in Rust.
        self._bulk: list[str | None] | None = [r.returns_capture for r in self.rules]
        if any(c is None for c in self._bulk) or any(r.condition for r in self.rules):
            self._bulk = None

    @property
    def shared_nodes(self) -> int:
        """How many distinct pattern nodes remain after merging the rules."""
        return self._set.shared_len

    def _index(self, rule: RewriteRule | str) -> int:
        for i, r in enumerate(self.rules):
            if r is rule or r.name == rule:
                return i
        raise RewriteError(f"no rule {rule!r} in the set")

    def find_matches(self, graph: _core.Graph) -> list[Match]:
        """The non-overlapping matches (rules' conditions checked), in graph order of their
        roots; nothing is rewritten. Where a condition refuses a match, another rule at the
        same root may still match."""
        with_conditions = any(r.condition is not None for r in self.rules)
        raw = self._set.find_matches(graph, greedy=not with_conditions)
        out: list[Match] = []
        if not with_conditions:
            for rule, root, k, nodes, caps, _outs in raw:
                out.append(Match(self.rules[rule], root, k, nodes, dict(caps)))
            return out
        claimed: set[_core.Node] = set()
        taken_roots: set[_core.Node] = set()
        # Rust lists every match from the last node back, rules at one node in reverse order:
        # walk it from the end to keep the greedy choice of the Rust matcher.
        for rule, root, k, nodes, caps, _outs in reversed(raw):
            m = Match(self.rules[rule], root, k, nodes, dict(caps))
            ops = [n for n in nodes if n.type not in ("Const", "Constant")]
            if root in taken_roots or any(n in claimed for n in ops):
                continue
            if m.rule.condition is not None and not m.rule.condition(m):
                continue
            claimed.update(ops)
            taken_roots.add(root)
            out.append(m)
        return _graph_order(graph, out)

    def why_not(self, rule: RewriteRule | str, node: _core.Node) -> str | None:
        """Why ``rule`` does not match with its root at ``node``: the first failing predicate
        (naming the pattern node and what differed), or None when it matches (its condition,
        if any, included)."""
        i = self._index(rule)
        reason = self._set.why_not(i, node)
        if reason is not None:
            return reason
        r = self.rules[i]
        if r.condition is not None:
            for m in self._set.find_matches(node.graph, greedy=False):
                if m[0] == i and m[1] == node:
                    if not r.condition(Match(r, m[1], m[2], m[3], dict(m[4]))):
                        return f"the condition of rule '{r.name}' refused the match"
        return None

    def apply(self, graph: _core.Graph, *, verify: bool = False, max_rounds: int = 10) -> int:
        """Rewrite every match, round after round until none is left (at most ``max_rounds``);
        returns how many rewrites were made. When every rule's replacement is one of its
        captures and none has a condition, the rewrites run in bulk in Rust (no verification
        is needed: nothing new is computed, but ``verify=True`` still takes the checked path)."""
        total = 0
        if self._bulk is not None and not verify:
            for _ in range(max_rounds):
                try:
                    done = self._set.rewrite_to_captures(graph, self._bulk)
                except AscendIRError as e:
                    raise RewriteError(str(e), pass_name=self.pass_name) from e
                total += done
                if done == 0:
                    break
            return total
        for _ in range(max_rounds):
            done = 0
            for m in self.find_matches(graph):
                if not _alive(m):
                    continue  # an earlier rewrite of this round changed it: the next round
                if verify:
                    self.verify(m)
                self.rewrite(graph, m)
                done += 1
            total += done
            if done == 0:
                break
        return total

    def rewrite(self, graph: _core.Graph, m: Match) -> None:
        """Rewrite one match (all or nothing)."""
        rule = m.rule
        b = _Builder(graph, f"{rule.name}_", pattern=False)
        args = [m.captures[c] for c in _capture_names(rule.replacement, "replacement")]
        try:
            with graph.inserting_before(m.root):
                new = rule.replacement(b, *args)
            if not isinstance(new, _core.Value):
                raise RewriteError(f"rule '{rule.name}': the replacement returned "
                                   f"{type(new).__name__}, not a Value")
            for n in b.created:
                n.op_desc.attrs[passes.CREATED_BY] = self.pass_name
            m.value.replace_all_uses_with(new)
        except Exception as e:
            if b.created:
                graph.remove(b.created, safe=False)
            if isinstance(e, RewriteError):
                raise
            raise RewriteError(f"rule '{rule.name}' at '{m.root.name}': {e}",
                               pass_name=self.pass_name) from e
        _remove_dead(graph, m.nodes)

    def verify(self, m: Match) -> None:
        """Raise :class:`VerificationError` when the replacement of ``m`` computes something
        else than the matched subgraph on random inputs."""
        from . import evaluate

        rule = m.rule
        original = _extract(m)
        repl = _core.Graph(f"replacement_{rule.name}")
        ins = {c: repl.add_input(c, v.desc.copy()).outputs[0] for c, v in m.captures.items()}
        b = _Builder(repl, "", pattern=False)
        out = rule.replacement(b, *[ins[c] for c in _capture_names(rule.replacement,
                                                                      "replacement")])
        repl.set_outputs([out])
        rng = np.random.default_rng(self.seed)
        feeds = [_random(v.desc, rng, rule.name) for v in m.captures.values()]
        feed_map = dict(zip(m.captures, feeds, strict=True))
        want = next(iter(evaluate(original, feed_map).values()))
        got = next(iter(evaluate(repl, feed_map).values()))
        _compare(np.asarray(want), np.asarray(got), rule.name, m.root.name)


def _graph_order(graph: _core.Graph, ms: list[Match]) -> list[Match]:
    pos = {n: i for i, n in enumerate(graph.nodes)} if ms else {}
    return sorted(ms, key=lambda m: pos.get(m.root, 0))


def _alive(m: Match) -> bool:
    try:
        return all(n.is_alive for n in m.nodes) and all(
            v.producer().is_alive for v in m.captures.values())
    except StaleHandleError:
        return False


def _remove_dead(graph: _core.Graph, nodes: Sequence[_core.Node]) -> None:
    outputs = {(n, k) for n, k in graph.outputs}
    dead: list[_core.Node] = []
    gone: set[_core.Node] = set()
    for n in reversed(nodes):
        used = any(u.node not in gone for v in n.outputs for u in v.uses()) or any(
            (n, k) in outputs for k in range(len(n.outputs)))
        if not used:
            dead.append(n)
            gone.add(n)
    if dead:
        graph.remove(dead, safe=True)


def _extract(m: Match) -> _core.Graph:
    """The matched subgraph as a standalone graph over the captures."""
    g = _core.Graph(f"original_{m.rule.name}")
    values: dict[tuple[_core.Node, int], _core.Value] = {}
    for c, v in m.captures.items():
        values[(v.producer(), v.index)] = g.add_input(c, v.desc.copy()).outputs[0]
    for n in m.nodes:
        new = g.add_node(n.op_desc.copy())
        for k, src in enumerate(n.inputs):
            if src is not None:
                mine = values[(src.producer(), src.index)]
                mine.producer().out_data_anchor(mine.index).link_to(new.in_data_anchor(k))
        for k, v in enumerate(new.outputs):
            values[(n, k)] = v
    g.set_outputs([values[(m.root, m.root_output)]])
    return g


def _random(desc: _core.TensorDesc, rng: np.random.Generator, rule: str) -> np.ndarray:
    shape = list(desc.shape)
    if any(d < -1 for d in shape):
        raise VerificationError(f"rule '{rule}': cannot verify over an input of unknown rank")
    shape = [2 if d < 0 else d for d in shape]
    dt = np.dtype(desc.dtype.to_numpy())
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -5
        return rng.integers(lo, 6, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


_RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def _compare(want: np.ndarray, got: np.ndarray, rule: str, root: str) -> None:
    where = f"rule '{rule}' at '{root}'"
    if want.shape != got.shape or want.dtype != got.dtype:
        raise VerificationError(f"{where}: the replacement gives {got.dtype}{list(got.shape)}, "
                                f"the original {want.dtype}{list(want.shape)}")
    if want.dtype.kind in "fc" or want.dtype.name == "bfloat16":
        rtol = _RTOL.get(want.dtype, 1e-3)
        ok = np.allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    if not ok:
        diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
        raise VerificationError(f"{where}: the replacement changes the result "
                                f"(max abs difference {diff:g})")


class PatternRewritePass(passes.InPlacePass):
    """A :class:`RewriteRuleSet` as a pass for :class:`ascendir.passes.PassManager`."""

    def __init__(self, rules: RewriteRuleSet | Iterable[RewriteRule], *,
                 verify: bool = False, name: str | None = None) -> None:
        self.rules = rules if isinstance(rules, RewriteRuleSet) else RewriteRuleSet(
            rules, pass_name=name or "PatternRewritePass")
        if name is not None:
            self.rules.pass_name = name
        self._name = self.rules.pass_name
        self.verify = verify

    @property
    def name(self) -> str:
        """The pass name (the rule set's ``pass_name``)."""
        return self._name

    def call(self, graph: _core.Graph) -> passes.PassResult:
        """Apply the rules to a fixed point."""
        return passes.PassResult(graph, self.rules.apply(graph, verify=self.verify) > 0)
