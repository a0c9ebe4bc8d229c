"""Kernel text generation (docs/CODEGEN.md): GE's files for a kernel's ImplGraphs.

``generate_kernel(impls, name)`` returns ``{file name: text}``:

* ``autofuse_tiling_data.h`` — the TilingData struct in GE's layout (byte-identical to GE's
  ``codegen_tiling_data.cpp`` output for the same graphs);
* ``<name>_tiling_func.cpp`` and the shipped ``ascendir_tiling_rt.h`` — standalone host tiling
  (no CANN) with the solver of :func:`ascendir.asc.compile_tiling`;
* ``<name>_infershape.cpp`` — output shapes from the input dims;
* ``<name>_op_kernel.cpp`` — the Ascend C kernel in GE's structure (one function per ImplGraph,
  the ``TILING_KEY_IS`` dispatch);
* ``<name>_cpu.cpp`` with the shipped ``ascendir_cpu_rt.h`` — the portable C++ kernel;
* ``<name>.json`` — kernel metadata (inputs, outputs, templates, TilingData fields, containers);
* ``kernel_tiling/kernel_tiling.h`` — the CANN-free stub the header includes.

``generate_kernels([(impls, name), ...])`` gives the files of many kernels at once (on the
package's threads, the GIL released). ``write_kernel(directory, impls, name)`` writes them
(creating ``kernel_tiling/``).
:func:`tiling_data_header` and :func:`tiling_fields` give the header and its field layout
alone, also for several schedule groups (``impls`` nested as schedule results → groups →
ImplGraphs).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._core import codegen as _cg
from ..errors import InvalidArgumentError

__all__ = [
    "generate_kernel",
    "generate_kernels",
    "kernel_tiling_stub",
    "tiling_data_header",
    "tiling_fields",
    "write_kernel",
]


def _is_graph(x: Any) -> bool:
    return hasattr(x, "_core") or type(x).__name__ == "AscGraph"


def _fused(impls: Any) -> list[Any]:
    """Nested lists AscGraph → results → groups → ImplGraphs from what the caller passed."""
    if _is_graph(impls):
        return [[[[impls]]]]
    items = list(impls)
    if not items:
        raise InvalidArgumentError("codegen: no ImplGraph given")
    if all(_is_graph(x) for x in items):
        return [[[items]]]
    # schedule results -> groups -> ImplGraphs
    return [[[list(g) for g in result] for result in items]]


def tiling_data_header(impls: Any, name: str) -> str:
    """``autofuse_tiling_data.h`` of kernel ``name``: ``impls`` is one schedule group's
    ImplGraphs, or schedule results → groups → ImplGraphs for several groups."""
    return str(_cg.tiling_data_header(name, _fused(impls)))


def kernel_tiling_stub() -> str:
    """A CANN-free ``kernel_tiling/kernel_tiling.h`` declaring the API tiling structs the
    header may name (``ConfusionTransposeTiling``, ``PadTiling``) as ``uint32_t`` fields; put
    it on the include path of host and CPU builds."""
    return str(_cg.kernel_tiling_stub())


def tiling_fields(impls: Any) -> list[tuple[str, int]]:
    """Every ``uint32_t`` member of the TilingData struct as ``(path, byte offset)``."""
    return [(str(n), int(o)) for n, o in _cg.tiling_fields(_fused(impls))]


def generate_kernel(
    impls: Sequence[Any],
    name: str,
    target: Any = None,
    *,
    hint: Any = None,
    cache_key: str | None = None,
) -> dict[str, str]:
    """The generated files of kernel ``name`` (file name → text) for its ImplGraphs
    (templates in ``tiling_key`` order) on ``target`` (default Ascend 910B).

    ``hint`` (the HintGraph, optional) names the inputs and outputs when given; ``cache_key``
    is recorded in ``<name>.json``."""
    from .target import Target

    tgt = target if target is not None else Target.ascend910b()
    hint_core = getattr(hint, "_core", hint) if hint is not None else None
    return dict(_cg.generate_kernel(_fused(impls), name, tgt, hint_core, cache_key))


def generate_kernels(
    kernels: Sequence[Sequence[Any]],
    target: Any = None,
) -> list[dict[str, str]]:
    """:func:`generate_kernel` of many kernels in one call: ``kernels`` holds
    ``(impls, name)`` or ``(impls, name, hint, cache_key)`` per kernel; returns their files in
    the same order. The kernels are generated on the package's threads
    (:func:`ascendir.set_num_threads`) with the GIL released; each result equals
    :func:`generate_kernel` of that kernel alone. The first failing kernel's error is raised."""
    from .target import Target

    tgt = target if target is not None else Target.ascend910b()
    args = []
    for i, item in enumerate(kernels):
        parts = list(item)
        if not 2 <= len(parts) <= 4:
            raise InvalidArgumentError(
                f"generate_kernels: kernel {i} is not (impls, name[, hint[, cache_key]])")
        parts += [None] * (4 - len(parts))
        impls, name, hint, key = parts
        args.append((_fused(impls), name, getattr(hint, "_core", hint), key))
    return [dict(files) for files in _cg.generate_kernels(args, tgt)]


def write_kernel(
    directory: str | Path,
    impls: Sequence[Any],
    name: str,
    target: Any = None,
    *,
    hint: Any = None,
    cache_key: str | None = None,
) -> list[Path]:
    """Write :func:`generate_kernel`'s files into ``directory`` (created); returns the paths
    in file-name order."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = generate_kernel(impls, name, target, hint=hint, cache_key=cache_key)
    paths = []
    for fname in sorted(files):
        p = out / fname
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(files[fname], encoding="utf-8", newline="\n")
        paths.append(p)
    return paths
