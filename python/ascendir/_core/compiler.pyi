"""Type stubs of ``ascendir._core.compiler``, the compiler pipeline behind ``air.compile``."""

from collections.abc import Callable
from typing import Any, final

from . import Graph

__all__ = ['ArchivedModel', 'Batch', 'CompileState', 'compile_archive',
           'compiler_passes', 'load_model', 'lowered_types', 'register_lowering',
           'run_compiler_pass', 'sniff', 'unpack_archive']

def compiler_passes() -> list[str]:
    """The names of the compiler's passes that act on a plain graph, pipeline order."""

def run_compiler_pass(graph: Graph, name: str, options_json: str) -> bool:
    """Run the compiler pass ``name`` over ``graph`` in place; whether it modified it."""

def lowered_types() -> list[str]:
    """GE op types with a registered lowering."""

def register_lowering(spec_json: str) -> str:
    """Register a lowering given as JSON; returns its GE type."""

def unpack_archive(data: bytes) -> list[tuple[str, bytes]]:
    """The sections of a result archive."""

def compile_archive(model: Graph | str | bytes, options_json: str, jobs: int, dump: bool = False, cache_dir: str | None = None, cache_mode: str = "off") -> tuple[bytes, bool]:
    """Compile one model into its result archive; ``(archive, cached)``."""

def sniff(data: bytes) -> str | None:
    """The model format the bytes show, or None."""

def load_model(model: str | bytes, base_dir: str | None = None) -> Graph:
    """Load a model file or bytes as a Graph."""

@final
class ArchivedModel:
    """The compiled ModelDef of a result archive, held in the archive's buffer."""

    def graph(self) -> Graph:
        """The main graph of the ModelDef."""
    def __bytes__(self) -> bytes:
        """The ModelDef bytes (a copy)."""
    def __len__(self) -> int: ...

@final
class Batch:
    """A batch compiling on its own threads."""

    def __new__(cls, models: list[Any], options_json: str, jobs: int, dump: bool = False, cache_dir: str | None = None, cache_mode: str = "off", archives: bool = False) -> Batch: ...
    def next(self, timeout: float) -> tuple[Any, ...] | None:
        """The next finished model, or None."""
    def progress(self) -> tuple[int, int, int, int, int]:
        """``(done, failed, total, in_flight, peak_in_flight)``."""
    def cancel(self) -> None:
        """Stop the batch."""
    def join(self) -> None:
        """Wait for the batch's threads."""

@final
class CompileState:
    """A compile of a copy of a graph, run one pass at a time."""

    def __new__(cls, graph: Graph, options_json: str, dump: bool = False) -> CompileState: ...
    @staticmethod
    def pipeline() -> list[str]:
        """The names of the pipeline's passes, in order."""
    @property
    def next_pass(self) -> str | None:
        """The next pipeline pass to run (None when all have run)."""
    @property
    def finished(self) -> bool:
        """Whether the compile's model was taken."""
    @property
    def num_nodes(self) -> int:
        """Nodes of the graph being compiled."""
    def run(self, name: str) -> bool:
        """Run the pass ``name``; whether it modified the graph."""
    def run_hook(self, name: str, call: Callable[[Graph], tuple[Graph, bool]], point: str | None = None) -> bool:
        """Run ``call(graph) -> (graph, modified)`` over the graph as the pass ``name``."""
    def keep_out(self, name: str, reason: str) -> None:
        """Keep node ``name`` out of fusion (after ``lower``, before ``fuse``)."""
    def graph(self) -> Graph:
        """A copy of the graph being compiled."""
    def decisions(self) -> list[tuple[str, tuple[str, str] | None]]:
        """``(name, None | (category, reason))`` per lowering decision."""
    def clusters(self) -> list[list[str]]:
        """The clusters' member names, cluster order."""
    def kernels(self) -> list[dict[str, Any]]:
        """The packaged kernels as dicts."""
    def log(self) -> list[tuple[str, str, float, bool, int, int]]:
        """``(name, stage, seconds, modified, nodes_before, nodes_after)`` per pass run."""
    def finish(self) -> tuple[Graph, list[Any], bytes, str, str, list[tuple[str, str]]]:
        """The compiled model's parts, once every pass has run."""
