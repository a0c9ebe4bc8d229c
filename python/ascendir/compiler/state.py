"""A compile in progress, run one pass at a time: :class:`CompileState`.

``air.compile`` is ``passes.compile_pipeline()`` — a :class:`~ascendir.passes.PassManager` of
the compiler's own pass objects — run over a :class:`CompileState`, then
:meth:`CompileState.finish`. Driving the state yourself lets a pass run anywhere in the
pipeline: passes over the plain graph up to ``lower``, and passes over the compile's own state
after it (read the lowering decisions, keep nodes out of fusion, read the clusters and the
kernels).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .. import _core
from ..errors import CompileError

if TYPE_CHECKING:
    from ..passes import Pass
    from . import CompiledModel, CompileOptions, Kernel

__all__ = ["CompileState"]


class _Hook:
    """A graph pass as the callable the Rust pipeline calls, ``f(graph) -> (graph,
    modified)``, under a one-pass :class:`~ascendir.passes.PassManager` (its invariant checks
    and ``created_by`` provenance); keeps the exception the pass raised."""

    def __init__(self, p: Pass) -> None:
        from ..passes import PassManager

        self.manager = PassManager([p])
        self.error: BaseException | None = None

    def __call__(self, graph: _core.Graph) -> tuple[_core.Graph, bool]:
        try:
            result = self.manager(graph)
        except BaseException as e:
            self.error = e
            raise
        return result.graph, result.modified


class CompileState:
    """A compile of a copy of ``graph`` (left unchanged) run one pass at a time: the load stage
    is done on creation, :meth:`run` runs the next pipeline pass (:meth:`pipeline` lists
    them), :meth:`finish` gives the :class:`~ascendir.compiler.CompiledModel` once all have
    run. Options as for ``air.compile``. Each pipeline pass runs exactly as inside
    ``air.compile`` (same stage times, pass log, invariant checks and dumps), so the model is
    the one ``air.compile`` gives. A pass that fails raises
    :class:`~ascendir.errors.CompileError` and ends the compile; a pass run out of order, or at
    a point where it may not run, raises one of ``kind == "order"`` and changes nothing."""

    def __init__(self, graph: _core.Graph, target: str | None = None,
                 input_shapes: Mapping[str, Sequence[int]] | None = None,
                 options: CompileOptions | None = None, *, dump_stages: bool = False) -> None:
        from . import _options

        self.options = _options(target, input_shapes, options)
        self._state = _core.compiler.CompileState(graph, self.options.to_json(), dump_stages)

    @staticmethod
    def pipeline() -> list[str]:
        """The names of the pipeline's passes, in order (from the Rust compiler)."""
        return list(_core.compiler.CompileState.pipeline())

    @property
    def next_pass(self) -> str | None:
        """The next pipeline pass to run (None when all have run)."""
        return self._state.next_pass

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` has taken the compiled model."""
        return bool(self._state.finished)

    @property
    def lowered(self) -> bool:
        """Whether ``lower`` has run (passes over the plain graph no longer may)."""
        names = self.pipeline()
        nxt = self.next_pass
        return (names.index(nxt) if nxt is not None else len(names)) > names.index("lower")

    def run(self, name: str) -> bool:
        """Run the compiler pass ``name``: the next pipeline pass, or (before ``lower``) one
        of ``passes.compiler_passes()`` over the graph. Returns whether it modified the
        graph."""
        return bool(self._state.run(name))

    def run_graph_pass(self, p: Pass, point: str | None = None) -> bool:
        """Run ``p`` (a :class:`~ascendir.passes.Pass` over a plain graph) over the graph being
        compiled, as a pass of the pipeline at ``point`` (a pipeline pass whose stage numbers
        its dump ``<NN>_<name>.txt``; None: the last pass run). The graph is moved into an
        :class:`~ascendir.Graph` for the call (keep no reference to it) and back; the order and
        symbols are made again when the pipeline had made them. Only before ``lower``. A pass
        that raises fails the compile with a :class:`~ascendir.errors.CompileError` naming it,
        its exception as the ``__cause__``."""
        hook = _Hook(p)
        try:
            return bool(self._state.run_hook(p.name, hook, point))
        except CompileError as e:
            if hook.error is not None:
                raise e from hook.error
            raise

    def keep_out(self, node: str, reason: str) -> None:
        """Keep the node named ``node`` out of fusion: its lowering decision becomes a barrier
        (GE's category "Node Info Incorrect", ``reason`` recorded in the report). Only after
        ``lower`` and before ``fuse``."""
        self._state.keep_out(node, reason)

    @property
    def graph(self) -> _core.Graph:
        """A copy of the graph being compiled."""
        return self._state.graph()

    @property
    def num_nodes(self) -> int:
        """Nodes of the graph being compiled."""
        return int(self._state.num_nodes)

    @property
    def decisions(self) -> dict[str, tuple[str, str] | None]:
        """Each node's lowering decision (decision order): None when lowered, ``(category,
        reason)`` when not. Empty before ``lower``."""
        return dict(self._state.decisions())

    @property
    def clusters(self) -> list[list[str]]:
        """The clusters ``fuse`` made, as member names (topological), cluster order. Empty
        before ``fuse``."""
        return [list(c) for c in self._state.clusters()]

    @property
    def kernels(self) -> list[Kernel]:
        """The packaged kernels (after ``package``)."""
        from . import Kernel

        ks = self._state.kernels()
        if not ks:
            return []
        g = self._state.graph()
        return [Kernel(k, g, self.options.target) for k in ks]

    @property
    def log(self) -> list[tuple[str, str, float, bool, int, int]]:
        """``(name, stage, seconds, modified, nodes_before, nodes_after)`` per pass run, in
        order (the compiled model's pass log)."""
        return list(self._state.log())

    def finish(self) -> CompiledModel:
        """The compiled model, once every pipeline pass has run; the state is finished
        after."""
        from . import _from_parts

        return _from_parts(self._state.finish(), self.options)

    def __repr__(self) -> str:
        nxt = "finished" if self.finished else f"next {self.next_pass!r}"
        return f"CompileState({nxt})"
