"""User passes inside ``air.compile``: ``passes=[(position, point, pass), ...]`` runs each
:class:`ascendir.passes.Pass` at its point of the Rust pipeline.

The Rust pipeline hands the graph it compiles to the pass as an :class:`ascendir.Graph`
(moved, not copied: the handle is only valid during the call) and takes the result back (a
copy when the pass returns another graph); after the pass the pipeline makes the order and
symbols again when it had made them. The pass runs under a one-pass
:class:`~ascendir.passes.PassManager` (its invariant checks and ``created_by`` provenance), is
logged under its name in the compiled model's pass log and, with ``dump_stages``, dumped as
``<NN>_<name>.txt``. A pass that raises fails the compile with a
:class:`~ascendir.errors.CompileError` naming it, the pass's exception as its ``__cause__``.

``air.compile`` keeps no compiled-model cache, so there is no cache key to extend; the kernel
cache of the batch compiler keys kernels by their content (what a user pass changes is in the
key), and the batch compiler takes no user passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import _core
from ..errors import CompileError
from ..passes import Pass, PassManager

if TYPE_CHECKING:
    from . import CompiledModel, CompileOptions

__all__ = ["POSITIONS"]

#: Where a user pass runs relative to its point.
POSITIONS = ("before", "after")


class _Hook:
    """A user pass as the callable the Rust pipeline calls: ``f(graph) -> (graph, modified)``;
    keeps the exception the pass raised."""

    def __init__(self, p: Pass) -> None:
        self.manager = PassManager([p])
        self.error: BaseException | None = None

    def __call__(self, graph: _core.Graph) -> tuple[_core.Graph, bool]:
        try:
            result = self.manager(graph)
        except BaseException as e:
            self.error = e
            raise
        return result.graph, result.modified


def _hooks(passes: Sequence[tuple[str, str, Pass]]) -> list[tuple[str, str, str, _Hook]]:
    out = []
    for item in passes:
        if not (isinstance(item, tuple) and len(item) == 3):
            raise TypeError(f"a user pass is (position, point, pass), got {item!r}")
        position, point, p = item
        if position not in POSITIONS:
            raise ValueError(f"user pass position must be 'before' or 'after', got {position!r}")
        if not isinstance(point, str):
            raise TypeError(f"user pass point must be a pass name, got {point!r}")
        if not isinstance(p, Pass):
            raise TypeError(f"{type(p).__name__} is not an ascendir.passes.Pass")
        out.append((position, point, p.name, _Hook(p)))
    return out


def _compile_with_passes(graph: _core.Graph, opts: CompileOptions, dump: bool,
                         passes: Sequence[tuple[str, str, Pass]]) -> CompiledModel:
    from . import _from_parts

    hooks = _hooks(passes)
    try:
        parts = _core.compiler.compile_with_passes(graph, opts.to_json(), dump, hooks)
    except CompileError as e:
        for _, _, _, h in hooks:
            if h.error is not None:
                raise e from h.error
        raise
    return _from_parts(parts, opts)
