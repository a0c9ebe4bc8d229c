"""Type stubs of ``ascendir._core.compiler``, the compiler pipeline behind ``air.compile``."""

from typing import Any

from . import Graph

__all__ = ['compile', 'lowered_types', 'register_lowering']

def compile(graph: Graph, options_json: str, dump: bool = False) -> tuple[Graph, list[Any], str, str, str, list[tuple[str, str]]]:
    """Compile ``graph`` (unchanged) with the options given as JSON."""

def lowered_types() -> list[str]:
    """GE op types with a registered lowering."""

def register_lowering(spec_json: str) -> str:
    """Register a lowering given as JSON; returns its GE type."""
