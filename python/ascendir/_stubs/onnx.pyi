# Stubs of the ONNX frontend helpers of ascendir._core (used by ascendir.onnx); merged into
# _core.pyi, where Graph is defined.
from os import PathLike
from typing import Any

def _onnx_load_file(path: str | PathLike[str]) -> tuple[Graph, dict[str, Any]]:
    """Import an ONNX model file (external data relative to its directory)."""
    ...

def _onnx_load_bytes(
    data: bytes, base_dir: str | PathLike[str] | None = None
) -> tuple[Graph, dict[str, Any]]:
    """Import serialized ONNX model bytes; ``base_dir`` resolves external data."""
    ...

def _onnx_save_bytes(graph: Graph, opset: int | None = None, producer: str | None = None) -> bytes:
    """Encode a graph (with its subgraphs) as ONNX model bytes."""
    ...
