"""Graph passes: a pass is an object that transforms an :class:`ascendir.Graph`; a
:class:`PassManager` runs a list of them, to a fixed point if asked, checking the graph between
passes and keeping a log of what each pass did and how long it took.

The vocabulary is that of onnx-ir's and torch.fx's pass infrastructure::

    from ascendir import passes

    class FoldMulByOne(passes.InPlacePass):
        def call(self, graph):
            modified = False
            for node in graph.find_nodes(op_type="Mul"):   # any way of finding nodes
                ...
            return passes.PassResult(graph, modified)

    result = passes.PassManager([FoldMulByOne()], steps=3)(graph)
    result.modified, manager.log

- :class:`InPlacePass` edits the graph it is given and returns it; :class:`FunctionalPass`
  leaves its input alone and returns a new graph (the manager checks both promises when
  ``check_invariants`` is on: an in-place pass must return its input, a functional one must not
  change it).
- ``requires(graph)`` / ``ensures(graph)`` are a pass's pre- and postconditions: they raise
  :class:`PreconditionError` / :class:`PostconditionError` (any exception they raise is wrapped
  in one, naming the pass).
- Every node a pass run by the manager creates carries the pass's name in its ``_created_by``
  attribute (:func:`created_by` reads it): provenance survives serialization.
- Between passes (``check_invariants=True``, the default) the graph must validate and have no
  :meth:`~ascendir.Graph.problems`; a pass that breaks it raises :class:`InvariantError`
  naming the pass, and the graph is left as the pass left it for inspection.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from .compiler import CompileOptions
    from .compiler.state import CompileState

from . import _core
from .errors import AscendIRError

__all__ = [
    "CREATED_BY",
    "CSE",
    "Build",
    "CollapseReshapes",
    "CompileStage",
    "CompileStatePass",
    "CompilerPass",
    "Fuse",
    "Lower",
    "Package",
    "Simplify",
    "Symbolize",
    "Validate",
    "compile_pipeline",
    "ConstantFolding",
    "FoldFloats",
    "FuseAttention",
    "InferShapes",
    "Prune",
    "RemoveNoops",
    "SplitsToSlices",
    "compiler_passes",
    "FunctionalPass",
    "InPlacePass",
    "InvariantError",
    "Pass",
    "PassError",
    "PassManager",
    "PassRecord",
    "PassResult",
    "PostconditionError",
    "PreconditionError",
    "Sequential",
    "created_by",
]

#: The attribute that names the pass that created a node.
CREATED_BY = "_created_by"


class PassError(AscendIRError):
    """A pass failed; ``pass_name`` names it."""


class PreconditionError(PassError):
    """A pass's ``requires`` refused the graph it was given."""


class PostconditionError(PassError):
    """A pass's ``ensures`` refused the graph the pass produced."""


class InvariantError(PassError):
    """After a pass the graph does not validate, has problems, or the pass broke its in-place
    or functional promise."""


@dataclass(frozen=True)
class PassResult:
    """What a pass returns: the resulting graph and whether the pass changed anything."""

    graph: _core.Graph
    modified: bool


@dataclass(frozen=True)
class PassRecord:
    """One pass run by a :class:`PassManager`: its name, the step (fixed-point round, from 0),
    whether it modified the graph, its wall time and the node counts before and after."""

    name: str
    step: int
    modified: bool
    seconds: float
    nodes_before: int
    nodes_after: int


class Pass(abc.ABC):
    """A graph transformation. Subclasses implement :meth:`call`; calling the pass object runs
    ``requires``, ``call`` and ``ensures``."""

    #: Whether the pass edits its input graph (``True``) or returns a new one (``False``).
    in_place: bool = True
    #: Whether the pass runs over a compile in progress (a
    #: :class:`~ascendir.compiler.state.CompileState`) itself; a pass that does not is run
    #: over the compile's graph (:meth:`CompileState.run_graph_pass`) when a manager meets
    #: one.
    on_state: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """The pass's name (its class name unless overridden)."""
        return type(self).__name__

    def requires(self, graph: _core.Graph) -> None:  # noqa: B027 - optional hook
        """Precondition on the input graph; raise to refuse it."""

    def ensures(self, graph: _core.Graph) -> None:  # noqa: B027 - optional hook
        """Postcondition on the output graph; raise to reject it."""

    @abc.abstractmethod
    def call(self, graph: _core.Graph) -> PassResult:
        """Transform ``graph``; return the result and whether anything changed."""

    def __call__(self, graph: _core.Graph) -> PassResult:
        """Run the pass: ``requires``, ``call``, ``ensures``."""
        _check(self.requires, graph, self.name, PreconditionError, "requires")
        result = self.call(graph)
        if not isinstance(result, PassResult):
            raise PassError(f"pass '{self.name}' returned {type(result).__name__}, "
                            "not a PassResult", pass_name=self.name)
        _check(self.ensures, result.graph, self.name, PostconditionError, "ensures")
        return result

    def __repr__(self) -> str:
        return f"{self.name}()"


class InPlacePass(Pass):
    """A pass that edits the graph it is given and returns it."""

    in_place = True


class FunctionalPass(Pass):
    """A pass that leaves its input graph unchanged and returns a new graph."""

    in_place = False


def _check(hook, graph: _core.Graph, name: str, kind: type[PassError], what: str) -> None:  # type: ignore[no-untyped-def]
    try:
        hook(graph)
    except PassError:
        raise
    except Exception as e:
        raise kind(f"pass '{name}': {what} failed: {e}", pass_name=name) from e


def _is_state(target: object) -> bool:
    from .compiler.state import CompileState

    return isinstance(target, CompileState)


def _apply(p: Pass, target: _core.Graph) -> PassResult:
    """Run ``p`` over ``target``; a plain graph pass over a compile in progress runs over its
    graph."""
    if not p.on_state and _is_state(target):
        state: CompileState = target  # type: ignore[assignment]
        return PassResult(target, state.run_graph_pass(p))
    return p(target)


def created_by(node: _core.Node) -> str | None:
    """The name of the pass that created ``node`` (run by a :class:`PassManager`), or None."""
    value = node.op_desc.attrs.get(CREATED_BY)
    return value if isinstance(value, str) else None


class Sequential(Pass):
    """Passes run one after another; modified when any of them modified the graph. In place
    when all of its passes are."""

    def __init__(self, passes: Iterable[Pass]) -> None:
        self.passes: list[Pass] = list(passes)
        for p in self.passes:
            if not isinstance(p, Pass):
                raise TypeError(f"{type(p).__name__} is not a Pass")
        self.in_place = all(p.in_place for p in self.passes)

    def call(self, graph: _core.Graph) -> PassResult:
        """Run every pass once, in order."""
        modified = False
        for p in self.passes:
            result = _apply(p, graph)
            graph, modified = result.graph, modified or result.modified
        return PassResult(graph, modified)

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(map(repr, self.passes))})"


class PassManager(Sequential):
    """Run ``passes`` in order, ``steps`` times at most, stopping after a round that modified
    nothing (``early_stop``). ``check_invariants`` checks the graph after every pass (it
    validates, has no problems, and the pass kept its in-place or functional promise). Every
    node a pass creates is tagged with the pass's name (:func:`created_by`). :attr:`log` holds
    one :class:`PassRecord` per pass run, of the last call."""

    def __init__(self, passes: Sequence[Pass], steps: int = 1, *,
                 check_invariants: bool = True, early_stop: bool = True) -> None:
        super().__init__(passes)
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(f"steps must be a positive int, got {steps!r}")
        self.steps = steps
        self.check_invariants = check_invariants
        self.early_stop = early_stop
        self.log: list[PassRecord] = []

    def call(self, graph: _core.Graph) -> PassResult:
        """Run the passes to a fixed point (at most ``steps`` rounds)."""
        self.log = []
        modified = False
        for step in range(self.steps):
            round_modified = False
            for p in self.passes:
                graph, changed = self._run_one(p, graph, step)
                round_modified = round_modified or changed
            modified = modified or round_modified
            if self.early_stop and not round_modified:
                break
        return PassResult(graph, modified)

    def _run_one(self, p: Pass, graph: _core.Graph, step: int) -> tuple[_core.Graph, bool]:
        if _is_state(graph):
            return self._run_on_state(p, graph, step)
        before = set(graph.all_nodes())
        before_bytes = graph.to_bytes() if self.check_invariants and not p.in_place else None
        t = time.perf_counter()
        result = p(graph)
        seconds = time.perf_counter() - t
        out = result.graph
        if self.check_invariants:
            self._check(p, graph, out, before_bytes)
        after = out.all_nodes()
        if out is graph:  # a new graph's nodes are all new: provenance is for in-place edits
            for n in after:
                if n not in before and CREATED_BY not in n.op_desc.attrs:
                    n.op_desc.attrs[CREATED_BY] = p.name
        self.log.append(PassRecord(p.name, step, result.modified, seconds, len(before),
                                   len(after)))
        return out, result.modified

    def _run_on_state(self, p: Pass, target: _core.Graph, step: int) -> tuple[_core.Graph, bool]:
        """One pass over a compile in progress: the compiler checks its graph between its own
        passes, and a plain graph pass runs under a manager of its own (the checks and the
        provenance above)."""
        state: CompileState = target  # type: ignore[assignment]
        before = state.num_nodes
        t = time.perf_counter()
        result = _apply(p, target)
        seconds = time.perf_counter() - t
        self.log.append(PassRecord(p.name, step, result.modified, seconds, before,
                                   state.num_nodes))
        return result.graph, result.modified

    def _check(self, p: Pass, graph: _core.Graph, out: _core.Graph,
               before_bytes: bytes | None) -> None:
        if p.in_place and out is not graph:
            raise InvariantError(f"pass '{p.name}' is in place but returned another graph",
                                 pass_name=p.name)
        if before_bytes is not None and graph.to_bytes() != before_bytes:
            raise InvariantError(f"pass '{p.name}' is functional but changed its input graph",
                                 pass_name=p.name)
        try:
            out.validate()
        except AscendIRError as e:
            raise InvariantError(f"after pass '{p.name}': {e}", pass_name=p.name) from e
        problems = out.problems()
        if problems:
            raise InvariantError(f"after pass '{p.name}': {problems[0]}"
                                 + (f" (and {len(problems) - 1} more)" if len(problems) > 1
                                    else ""), pass_name=p.name, problems=problems)


class _RustPass(InPlacePass):
    """A pass of the Rust compiler named by ``rust_name`` (a subclass) or by the name given
    (the generic class): :attr:`name` is the Rust pass's."""

    #: The Rust pass a subclass runs.
    rust_name: ClassVar[str] = ""
    _rust: str

    def _choose(self, name: str | None, known: list[str], what: str, quote: str) -> None:
        chosen = name if name is not None else self.rust_name
        if chosen not in known:
            raise ValueError(f"unknown {what} {quote.format(chosen)} (one of: "
                             f"{', '.join(known)})")
        self._rust = chosen

    @property
    def name(self) -> str:
        """The Rust pass's name."""
        return self._rust

    def __repr__(self) -> str:
        if not type(self).rust_name:
            return f"{type(self).__name__}({self._rust!r})"
        return f"{type(self).__name__}()"


class CompilerPass(_RustPass):
    """One of the compiler's own passes over a plain graph (:func:`compiler_passes` lists
    them), run in place by the Rust compiler: shape inference (``infer``) or a rewrite of the
    compile pipeline's stage 4 (``fold_constants`` … ``prune``, docs/COMPILER.md). A stage 4
    rewrite is given the graph's symbols as stage 3 makes them, so the graph must have been
    inferred (run :class:`InferShapes` first). ``options`` (a
    :class:`~ascendir.compiler.CompileOptions`, the defaults when None) are the compile options
    the pass reads; a pass they turn off (e.g. ``FuseAttention`` without ``fusion``) does
    nothing. The pass's :attr:`name` is the Rust pass's.

    ``CompilerPass("cse")`` names the Rust pass; the subclasses (``passes.CSE()``, ...) are
    the same with the name fixed."""

    def __init__(self, name: str | None = None, options: CompileOptions | None = None) -> None:
        if not (name if name is not None else self.rust_name):
            raise TypeError("CompilerPass needs the name of a compiler pass")
        self._choose(name, list(_core.compiler.compiler_passes()), "compiler pass", "'{}'")
        self.options = options
        self._json: str | None = None

    on_state = True

    def call(self, graph: _core.Graph) -> PassResult:
        """Run the Rust pass over ``graph`` in place (over a compile in progress: its graph,
        with its options)."""
        if _is_state(graph):
            state: CompileState = graph  # type: ignore[assignment]
            return PassResult(graph, state.run(self._rust))
        if self._json is None:
            from .compiler import CompileOptions
            self._json = (self.options or CompileOptions()).to_json()
        modified = _core.compiler.run_compiler_pass(graph, self._rust, self._json)
        return PassResult(graph, bool(modified))



class InferShapes(CompilerPass):
    """Shape and dtype inference (the compiler's stage 2, ``infer``)."""

    rust_name = "infer"


class ConstantFolding(CompilerPass):
    """Shape arithmetic whose integer value is known replaced by a Const (``fold_constants``)."""

    rust_name = "fold_constants"


class RemoveNoops(CompilerPass):
    """Identity and Cast-to-the-same-dtype nodes removed (``remove_noops``)."""

    rust_name = "remove_noops"


class FoldFloats(CompilerPass):
    """Float computations on constants replaced by a Const (``fold_floats``; fusion on)."""

    rust_name = "fold_floats"


class CollapseReshapes(CompilerPass):
    """``Reshape(Reshape(x, a), b)`` rewired as ``Reshape(x, b)`` (``collapse_reshapes``)."""

    rust_name = "collapse_reshapes"


class FuseAttention(CompilerPass):
    """Softmax attention replaced by ``FlashAttentionScore`` (``fuse_attention``; fusion and
    ``fuse_attention`` on)."""

    rust_name = "fuse_attention"


class SplitsToSlices(CompilerPass):
    """Splits replaced by one slice per output (``splits_to_slices``; the split family on)."""

    rust_name = "splits_to_slices"


class CSE(CompilerPass):
    """Pure nodes merged into an earlier equal one (``cse``)."""

    rust_name = "cse"


class Prune(CompilerPass):
    """Pure nodes whose values reach no output removed (``prune``)."""

    rust_name = "prune"


_CLASSES: dict[str, type[CompilerPass]] = {
    c.rust_name: c for c in (InferShapes, ConstantFolding, RemoveNoops, FoldFloats,
                             CollapseReshapes, FuseAttention, SplitsToSlices, CSE, Prune)
}


def compiler_passes(options: CompileOptions | None = None) -> list[CompilerPass]:
    """The compiler's graph passes, in the pipeline's order (the names come from the Rust
    compiler): ``infer`` then the rewrites of stage 4. ``Sequential(compiler_passes())`` over
    a loaded graph gives the graph of the compile's ``04_simplify`` dump."""
    out: list[CompilerPass] = []
    for name in _core.compiler.compiler_passes():
        cls = _CLASSES.get(name)
        out.append(cls(options=options) if cls is not None else CompilerPass(name, options))
    return out


class CompileStatePass(Pass):
    """A pass over a compile in progress (:class:`~ascendir.compiler.state.CompileState`),
    not over a plain graph: ``call(state)`` reads what the compiler's passes made so far
    (``state.decisions``, ``state.clusters``, ``state.kernels``), may keep nodes out of fusion
    between ``lower`` and ``fuse`` (``state.keep_out``), and returns
    ``PassResult(state, modified)``. It runs at any point of the pipeline."""

    on_state = True

    @abc.abstractmethod
    def call(self, graph: CompileState) -> PassResult:  # type: ignore[override]
        """Inspect or steer the compile ``graph`` (a CompileState)."""


class CompileStage(_RustPass):
    """A top-level pass of the compile pipeline, run over a
    :class:`~ascendir.compiler.state.CompileState` (``state.run(name)``: the Rust pass, as
    inside ``air.compile``). ``CompileStage("fuse")`` names it; the subclasses
    (``passes.Lower()``, ...) are the same with the name fixed. The passes after ``simplify``
    work on the compile's own state (lowering decisions, clusters, kernels) and refuse a plain
    graph."""

    on_state = True

    def __init__(self, name: str | None = None) -> None:
        from .compiler.state import CompileState

        self._choose(name, CompileState.pipeline(), "pipeline pass", "{!r}")

    def call(self, graph: _core.Graph) -> PassResult:
        """Run the pipeline pass over a compile in progress."""
        if not _is_state(graph):
            raise PassError(f"pass '{self.name}' runs over a compile in progress "
                            "(ascendir.compiler.CompileState), not over a plain graph",
                            pass_name=self.name)
        state: CompileState = graph  # type: ignore[assignment]
        return PassResult(graph, state.run(self._rust))



class Validate(CompileStage):
    """Stage 1: the graph validates (over a plain graph: ``graph.validate()``)."""

    rust_name = "validate"

    def call(self, graph: _core.Graph) -> PassResult:
        """Validate the graph (or run the compile's stage 1)."""
        if _is_state(graph):
            return super().call(graph)
        graph.validate()
        return PassResult(graph, False)


class Symbolize(CompileStage):
    """Stage 3: the topological order, symbols for unknown dims, symbolic shapes."""

    rust_name = "symbolize"


class Simplify(CompileStage):
    """Stage 4: the rewrites of :func:`compiler_passes` after ``infer``, in order (over a
    plain graph: each once, as :class:`Sequential` of them runs them)."""

    rust_name = "simplify"

    def call(self, graph: _core.Graph) -> PassResult:
        """Run stage 4 (over a plain graph: its rewrites)."""
        if _is_state(graph):
            return super().call(graph)
        return Sequential(compiler_passes()[1:])(graph)


class Lower(CompileStage):
    """Stage 5: a lowering decision per node (lowered to AscIR, or a barrier and why)."""

    rust_name = "lower"


class Fuse(CompileStage):
    """Stage 6: lowered nodes partitioned into clusters (GE's fusion rule)."""

    rust_name = "fuse"


class Build(CompileStage):
    """Stages 7–9: each cluster's HintGraph, its schedules and its tiling."""

    rust_name = "build"


class Package(CompileStage):
    """Stage 12: the kernels packaged as AscBackend nodes in the graph, the report."""

    rust_name = "package"


_STAGES: dict[str, type[Pass]] = {
    "validate": Validate, "infer": InferShapes, "symbolize": Symbolize, "simplify": Simplify,
    "lower": Lower, "fuse": Fuse, "build": Build, "package": Package,
}


class _AtPoint(InPlacePass):
    """A plain graph pass run over a compile's graph at a point of the pipeline."""

    on_state = True

    def __init__(self, p: Pass, point: str) -> None:
        self.inner = p
        self.point = point

    @property
    def name(self) -> str:
        """The wrapped pass's name."""
        return self.inner.name

    def call(self, graph: _core.Graph) -> PassResult:
        """Run the wrapped pass over the compile's graph."""
        state: CompileState = graph  # type: ignore[assignment]
        return PassResult(graph, state.run_graph_pass(self.inner, self.point))

    def __repr__(self) -> str:
        return repr(self.inner)


def compile_pipeline(user: Sequence[tuple[str, str, Pass]] = ()) -> PassManager:
    """The compiler's pipeline as a :class:`PassManager` of its pass objects (the names and
    the order come from the Rust compiler): ``air.compile`` is this manager run over a
    :class:`~ascendir.compiler.state.CompileState`. ``user`` passes ``(position, point,
    pass)`` go ``"before"`` or ``"after"`` the pipeline pass ``point``; a plain graph pass at
    ``("before", "lower")`` at the latest, a :class:`CompileStatePass` anywhere. The compiler
    checks its graph between its own passes (in debug builds), so the manager does not."""
    from .compiler.state import CompileState
    from .errors import CompileError

    names = CompileState.pipeline()
    plan: list[Pass] = [_STAGES[n]() if n in _STAGES else CompileStage(n) for n in names]
    last = names.index("lower")
    before: dict[int, list[Pass]] = {}
    for item in user:
        if not (isinstance(item, tuple) and len(item) == 3):
            raise TypeError(f"a user pass is (position, point, pass), got {item!r}")
        position, point, p = item
        if position not in ("before", "after"):
            raise ValueError(f"user pass position must be 'before' or 'after', got {position!r}")
        if not isinstance(p, Pass):
            raise TypeError(f"{type(p).__name__} is not an ascendir.passes.Pass")
        if point not in names:
            raise CompileError(f"user pass '{p.name}': unknown point {point!r} (one of: "
                               f"{', '.join(names)})", kind="options")
        at = names.index(point) + (position == "after")
        if not p.on_state:
            if at > last:
                raise CompileError(
                    f"user pass '{p.name}' works on the graph: it runs before 'lower' at the "
                    f"latest, not {position} '{point}' (the lowering decisions, clusters and "
                    "kernels are not made again; a CompileStatePass runs anywhere)",
                    kind="options")
            p = _AtPoint(p, point)
        before.setdefault(at, []).append(p)
    ordered: list[Pass] = []
    for i in range(len(plan) + 1):
        ordered.extend(before.get(i, []))
        if i < len(plan):
            ordered.append(plan[i])
    return PassManager(ordered, check_invariants=False)


_REWRITER_NAMES = ("Match", "PatternRewritePass", "RewriteError", "RewriteRule",
                   "RewriteRuleSet", "VerificationError")


def __getattr__(name: str) -> object:
    """The pattern rewriter's names (:mod:`ascendir.rewriter`), loaded on first use."""
    if name in _REWRITER_NAMES:
        from . import rewriter

        return getattr(rewriter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
