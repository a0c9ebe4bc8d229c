"""Type stubs of ``ascendir._core.codegen``."""

from typing import Any

from .asc_backend import Target

__all__ = ['generate_kernel', 'generate_kernels', 'kernel_tiling_stub', 'tiling_data_header', 'tiling_fields']

def generate_kernel(fused: Any, name: str, target: Target, hint: Any | None=None, cache_key: str | None=None) -> list[tuple[str, str]]:
    ...

def generate_kernels(kernels: list[tuple[Any, str, Any | None, str | None]], target: Target) -> list[list[tuple[str, str]]]:
    ...

def kernel_tiling_stub() -> str:
    ...

def tiling_data_header(kernel: str, fused: Any) -> str:
    ...

def tiling_fields(fused: Any) -> list[tuple[str, int]]:
    ...
