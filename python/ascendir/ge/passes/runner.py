"""The offline pass runner: :func:`run_passes` runs the registered passes over a graph, and
:class:`GeStagePass` runs one stage's passes inside ``air.compile(..., ge_passes=True)``.

Pattern passes match through ascendir's Rust matcher (all patterns of a pass merged into one
``PatternSet``); every rewrite goes through one splice routine (all or nothing) and, with
``verify=True``, is first checked numerically against the subgraph it replaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import _core, passes
from ...rewriter import VerificationError
from ..error import GeError, GeTypeError, GeValueError
from ..graph import Graph, Node
from . import _runstate
from ._match import Compiled, Found, compile_pattern, read_match
from ._splice import data_index, remove_unused, splice
from .base import (
    DecomposePass,
    FusionBasePass,
    PassContext,
    PassStage,
    PatternFusionPass,
    PatternMatcherConfig,
)
from .pattern import ensure_pattern
from .registry import (
    PASS_KIND_DECOMPOSE,
    PASS_KIND_FUSION_BASE,
    PassDescriptor,
    get_registered_passes,
)

__all__ = ["STAGE_POINTS", "GeStagePass", "PassRun", "run_pass", "run_passes"]

#: Where each GE stage runs in ``air.compile``'s pipeline: ``(position, point)``.
STAGE_POINTS: dict[PassStage, tuple[str, str]] = {
    PassStage.BEFORE_INFER_SHAPE: ("before", "infer"),
    PassStage.AFTER_INFER_SHAPE: ("after", "infer"),
    PassStage.AFTER_BUILTIN_FUSION_PASS: ("after", "simplify"),
    PassStage.AFTER_ORIGIN_GRAPH_OPTIMIZE: ("before", "lower"),
}

MAX_ROUNDS = 10


@dataclass(frozen=True)
class PassRun:
    """One pass run: its name, stage, kind, how many rewrites it made and how many nodes
    they created."""

    name: str
    stage: PassStage
    kind: str
    rewrites: int
    created: int


def _air(graph: Any) -> _core.Graph:
    if isinstance(graph, Graph):
        return graph.air
    if isinstance(graph, _core.Graph):
        return graph
    raise GeTypeError(f"graph must be a ge.graph.Graph or an ascendir.Graph, got "
                      f"{type(graph).__name__}")


def _stages(stage: Any) -> list[PassStage]:
    if stage is None:
        return list(PassStage)
    from .registry import _stage

    return [_stage(stage)]


def run_passes(graph: Graph | _core.Graph, stage: PassStage | None = None, verify: bool = False,
               *, options: Mapping[str, str] | None = None) -> list[PassRun]:
    """Run the registered passes of ``stage`` (every stage, in GE's order, when None) over
    ``graph`` (a ``ge.graph.Graph`` or an ``ascendir.Graph``, edited in place), each stage's
    passes in registration order. ``verify=True`` checks every replacement numerically
    against the subgraph it replaces (:func:`ascendir.evaluate`, random inputs, per-dtype
    tolerance) and raises :class:`ascendir.rewriter.VerificationError` naming the pass, the
    match and the difference, the graph as it was before that rewrite. ``options`` are the
    compile options ``PassContext.get_option_value`` reads. Returns one :class:`PassRun`
    per pass run."""
    g = _air(graph)
    if not isinstance(verify, bool):
        raise GeTypeError("verify must be a bool")
    runs: list[PassRun] = []
    for s in _stages(stage):
        for d in get_registered_passes():
            if d.stage == s:
                runs.append(run_pass(d, g, verify=verify, options=options))
    return runs


def run_pass(d: PassDescriptor, graph: _core.Graph, *, verify: bool = False,
             options: Mapping[str, str] | None = None) -> PassRun:
    """Run one registered pass over ``graph``."""
    try:
        inst = d.cls()
    except Exception as e:
        raise GeError(f"pass '{d.pass_name}': creating {d.class_name}() failed: {e}") from e
    ctx = PassContext(d.pass_name, options)
    state = _runstate.RunState(d.pass_name, ctx, verify)
    with _runstate.running(state):
        if d.kind == PASS_KIND_DECOMPOSE and isinstance(inst, DecomposePass):
            _run_decompose(inst, d, graph, state)
        elif isinstance(inst, PatternFusionPass) and d.kind != PASS_KIND_FUSION_BASE:
            _run_pattern(inst, d, graph, state)
        elif isinstance(inst, FusionBasePass):
            _run_fusion_base(inst, d, graph, ctx)
        else:
            raise GeTypeError(f"pass '{d.pass_name}': {d.class_name} is not a "
                              "FusionBasePass")
    if state.created:
        graph.infer_shapes()
    return PassRun(d.pass_name, d.stage, d.kind, state.rewrites, state.created)


def _run_fusion_base(inst: FusionBasePass, d: PassDescriptor, graph: _core.Graph,
                     ctx: PassContext) -> None:
    status = inst.run(Graph.from_air(graph), ctx)
    if status is None or status is True or (type(status) is int and status == 0):
        return
    if status is False or type(status) is int:
        msg = ctx.get_error_message()
        raise GeError(f"pass '{d.pass_name}' failed (status {status!r})"
                      + (f": {msg}" if msg else ""))
    raise GeTypeError(f"pass '{d.pass_name}': run() must return None, a bool or an int, got "
                      f"{type(status).__name__}")


def _hook(d: PassDescriptor, hook: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except (GeError, GeTypeError, GeValueError, VerificationError):
        raise
    except Exception as e:
        raise GeError(f"pass '{d.pass_name}': {hook} raised {type(e).__name__}: {e}") from e


def compile_patterns(inst: PatternFusionPass, d: PassDescriptor) -> list[Compiled]:
    """The pass's patterns compiled for the matcher under its matcher config."""
    config = inst.matcher_config
    if config is not None and not isinstance(config, PatternMatcherConfig):
        raise GeTypeError("PatternFusionPass.matcher_config must be PatternMatcherConfig or "
                          "None")
    items = _hook(d, "patterns()", inst.patterns)
    if items is None:
        return []
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise GeTypeError("PatternFusionPass.patterns must return an iterable of Pattern or "
                          "Graph")
    return [compile_pattern(ensure_pattern(p), config) for p in items]


def _run_pattern(inst: PatternFusionPass, d: PassDescriptor, graph: _core.Graph,
                 state: _runstate.RunState) -> None:
    compiled = compile_patterns(inst, d)
    if not compiled:
        return
    try:
        matcher = _core.PatternSet([(str(i), c.graph) for i, c in enumerate(compiled)])
    except Exception as e:
        raise GeError(f"pass '{d.pass_name}': its patterns do not compile: {e}") from e
    for _ in range(MAX_ROUNDS):
        dead: list[_core.Node] = []
        try:
            stale = _pattern_round(inst, d, graph, matcher, compiled, state, dead)
        finally:
            remove_unused(graph, dead)
        if not stale:
            break


def _pattern_round(inst: PatternFusionPass, d: PassDescriptor, graph: _core.Graph,
                   matcher: Any, compiled: list[Compiled], state: _runstate.RunState,
                   dead: list[_core.Node]) -> bool:
    """One walk over the matches (graph order, the first claims its nodes); whether a
    match was left because an earlier rewrite of the walk removed part of it."""
    stale = False
    claimed: set[_core.Node] = set()   # op nodes of the matches rewritten in this walk
    roots: set[_core.Node] = set()
    for rule, root, _, nodes, caps, outs in _pattern_order(matcher.find_matches(graph, False)):
        if root in roots:
            continue
        found = read_match(compiled[rule], root, outs, nodes, caps)
        if found is None:
            continue
        ops = found.ops
        if any(n in claimed for n in ops):
            continue
        # A match reading a value an earlier rewrite of this walk replaced is matched again
        # in the next walk (its nodes now read the replacement).
        if claimed and any(v.producer() in claimed for v in found.inputs.values()):
            stale = True
            continue
        if _rewrite_match(inst, d, graph, found, state, dead):
            claimed.update(ops)
            roots.add(root)
    return stale


def _pattern_order(raw: list[Any]) -> list[Any]:
    """The matcher's matches (graph order of the roots, the rules at one root in reverse
    order) with the rules at one root in pattern order: the first pattern that matches at a
    node is the one tried first."""
    out: list[Any] = []
    i = 0
    while i < len(raw):
        j = i + 1
        while j < len(raw) and raw[j][1] == raw[i][1]:
            j += 1
        out.extend(sorted(raw[i:j], key=lambda m: m[0]) if j - i > 1 else raw[i:j])
        i = j
    return out


def _rewrite_match(inst: PatternFusionPass, d: PassDescriptor, graph: _core.Graph,
                   found: Found, state: _runstate.RunState, dead: list[_core.Node]) -> bool:
    mr = found.result()
    try:
        ok = bool(_hook(d, "meet_requirements()", inst.meet_requirements, mr))
    finally:
        mr._invalidate()
    if not ok:
        return False
    mr = found.result()
    try:
        repl = _hook(d, "replacement()", inst.replacement, mr)
    finally:
        mr._invalidate()
    if not isinstance(repl, Graph):
        raise GeTypeError(f"pass '{d.pass_name}': PatternFusionPass.replacement must return "
                          f"ge.graph.Graph, got {type(repl).__name__}")
    where = (f"pattern '{found.compiled.graph.name}' matched at '{found.root.name}' "
             f"(nodes {', '.join(n.name for n in found.ordered)})")
    created = splice(graph, found.input_values(), found.ordered, found.outputs, repl.air,
                     d.pass_name, where, do_verify=state.verify, dead=dead)
    state.rewrites += 1
    state.created += len(created)
    return True


def _run_decompose(inst: DecomposePass, d: PassDescriptor, graph: _core.Graph,
                   state: _runstate.RunState) -> None:
    types = set(d.op_types)
    for n in [n for n in graph.nodes if n.type in types]:
        if not n.is_alive:
            continue
        node = Node.from_air(n)
        if not bool(_hook(d, "meet_requirements()", inst.meet_requirements, node)):
            continue
        repl = _hook(d, "replacement()", inst.replacement, node)
        if not isinstance(repl, Graph):
            raise GeTypeError(f"pass '{d.pass_name}': DecomposePass.replacement must return "
                              f"ge.graph.Graph, got {type(repl).__name__}")
        ins = list(n.inputs)
        used = sorted({data_index(x) for x in repl.air.nodes if x.type == "Data"})
        for i in used:
            if i < len(ins) and ins[i] is None:
                raise GeError(f"pass '{d.pass_name}': replacement input {i} of '{n.name}' "
                              "reads an unlinked input")
        inputs = [v for v in ins[: max(used, default=-1) + 1]]
        created = splice(graph, inputs, [n], list(n.outputs), repl.air, d.pass_name,  # type: ignore[arg-type]
                         f"{n.type} '{n.name}'", do_verify=state.verify)
        state.rewrites += 1
        state.created += len(created)


class GeStagePass(passes.InPlacePass):
    """The registered GE passes of one stage as an :class:`ascendir.passes.Pass` (what
    ``air.compile(..., ge_passes=True)`` inserts at the stage's point)."""

    def __init__(self, stage: PassStage, *, verify: bool = False) -> None:
        self.stage = stage
        self.verify = verify

    @property
    def name(self) -> str:
        """``ge_passes.<stage value>``."""
        return f"ge_passes.{self.stage.value}"

    def call(self, graph: _core.Graph) -> passes.PassResult:
        """Run the stage's passes."""
        runs = run_passes(graph, self.stage, self.verify)
        return passes.PassResult(graph, any(r.rewrites for r in runs))


def stage_passes(verify: bool = False) -> list[tuple[str, str, passes.Pass]]:
    """The user passes ``air.compile(..., ge_passes=True)`` adds: one per GE stage with a
    registered pass, at :data:`STAGE_POINTS`."""
    present = {d.stage for d in get_registered_passes()}
    return [(*STAGE_POINTS[s], GeStagePass(s, verify=verify)) for s in PassStage
            if s in present]
