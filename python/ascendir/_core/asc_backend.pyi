"""Type stubs of ``ascendir._core.asc_backend``."""

from typing import Any, final

__all__ = ['Target', 'TilingData', 'TilingFunction', 'allocate', 'cpu_kernel', 'eval_expr', 'export_plan', 'merge_contiguous_axes', 'merge_groups', 'schedule', 'solve_tiling', 'tiling_group', 'tiling_problem']

@final
class Target:

    def __new__(cls, name: str='custom', core_num: int=48, ub_size: int=196352, block_size: int=32, max_que_num: int=4) -> Target:
        ...

    @staticmethod
    def ascend910b() -> Target:
        ...

    @staticmethod
    def ascend910b3() -> Target:
        ...

    @staticmethod
    def ascend950() -> Target:
        ...

    @staticmethod
    def by_name(name: str) -> Target:
        ...

    @property
    def name(self) -> str:
        ...

    @property
    def core_num(self) -> int:
        ...

    @property
    def ub_size(self) -> int:
        ...

    @property
    def block_size(self) -> int:
        ...

    @property
    def max_que_num(self) -> int:
        ...

@final
class TilingData:

    @property
    def graph(self) -> str:
        ...

    @property
    def tiling_key(self) -> int:
        ...

    @property
    def block_dim(self) -> int:
        ...

    @property
    def ub_size(self) -> int:
        ...

    @property
    def core_num(self) -> int:
        ...

    @property
    def ub_used(self) -> int:
        ...

    @property
    def cost(self) -> int:
        ...

    @property
    def sizes(self) -> list[tuple[str, int]]:
        ...

    @property
    def shape(self) -> list[tuple[str, int]]:
        ...

    @property
    def containers(self) -> list[tuple[str, int, int]]:
        ...

    def __getitem__(self, name: str, /) -> int:
        ...

@final
class TilingFunction:

    def __new__(cls, impls: Any, target: Target) -> TilingFunction:
        ...

    def __call__(self, sizes: dict[str, int] | None=None, **kwargs: int) -> TilingData:
        ...

    def solve_values(self, values: list[int]) -> TilingData:
        ...

    def solve_each(self, sizes: dict[str, int]) -> list[Any]:
        ...

    @property
    def symbols(self) -> list[str]:
        ...

    def problems(self) -> list[dict[str, Any]]:
        ...

    def ub_usage(self, index: int, values: dict[str, int]) -> int:
        ...

def schedule(graph: Any, **options: Any) -> list[Any]:
    ...

def merge_contiguous_axes(graph: Any) -> Any:
    ...

def tiling_group(graph: Any) -> dict[str, list[int]]:
    ...

def merge_groups(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]] | None:
    ...

def allocate(graph: Any, max_que_num: int=4, insert_ub2ub: bool=True) -> dict[str, Any]:
    ...

def solve_tiling(impls: Any, target: Target, sizes: dict[str, int] | None=None) -> TilingData:
    ...

def eval_expr(e: Any, bindings: dict[str, int]) -> int:
    ...

def export_plan(graph: Any, bindings: dict[str, int], block_size: int=32) -> dict[str, Any]:
    ...

def cpu_kernel(impls: Any, name: str, block_size: int=32, canonical: bool=False) -> dict[str, Any]:
    ...

def tiling_problem(graph: Any, target: Target) -> dict[str, Any]:
    ...

