"""The CPU C++ verification target (docs/CPU.md): ImplGraphs as a C++ kernel built and run here.

``k = build_cpu(impls, target)`` generates ``<name>_cpu.cpp`` from the kernel plan of every
template, compiles it with the system C++ compiler (cached by source hash) and loads it;
``k.run(tiling, {"x": array})`` packs the solved TilingData into the generated
``AutofuseTilingData`` struct, runs every block (block index ``0 .. block_dim``) over one UB
byte array of the target's size, and returns ``{output name: 1-D array}`` — the same contract
as :func:`ascendir.asc.simulate.simulate`.

The checked build (``checked=True``, the default) reports, naming the node, every UB access
outside its container slot, every tensor base not 32-byte aligned and every read of a slot
another tensor took since the tensor was written (freed slots are poisoned with 0xFF). Not
modelled: pipe parallelism and events (everything runs in program order), bank conflicts.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._core import asc_backend as _be
from ..errors import KernelRunError
from ._cxx import build_library
from .schedule import _core_of
from .simulate import _Interp, _Plan, export_plan, np_dtype

_KINDS = {
    1: "size",
    2: "ub",
    3: "align",
    4: "slot",
    5: "stale",
    6: "unwritten",
    7: "vectorized",
    8: "tiling_key",
    9: "op",
}
FLAG_CHECK = 1


def _graphs(impls: Any) -> list[Any]:
    if isinstance(impls, Iterable) and not hasattr(impls, "_core"):
        return list(impls)
    return [impls]


def _ident(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return s if s and not s[0].isdigit() else f"k_{s}"


class CpuKernel:
    """A built CPU kernel: :meth:`run` executes it; ``source``, ``tiling_header`` and
    ``runtime_header`` are the generated texts, ``library`` the shared library."""

    def __init__(self, name: str, impls: list[Any], gen: Mapping[str, Any], library: Path,
                 block_size: int) -> None:
        self.name: str = name
        self._sym: str = gen["name"]
        self._names: list[str] = list(gen.get("names", []))
        self.source: str = gen["source"]
        self.tiling_header: str = gen["tiling_header"]
        self.runtime_header: str = gen["runtime_header"]
        self.kernel_tiling_stub: str = gen["kernel_tiling_stub"]
        self.fields: list[tuple[str, int]] = [tuple(f) for f in gen["fields"]]  # type: ignore[misc]
        self.inputs: list[tuple[str, int]] = [tuple(a) for a in gen["inputs"]]  # type: ignore[misc]
        self.outputs: list[tuple[str, int]] = [tuple(a) for a in gen["outputs"]]  # type: ignore[misc]
        self.templates: list[tuple[str, int]] = [tuple(t) for t in gen["templates"]]  # type: ignore[misc]
        self.library = library
        self._impls = impls
        self._block = block_size
        lib = ctypes.CDLL(str(library))
        self._run = getattr(lib, f"ascendir_run_{self._sym}")
        self._run.restype = ctypes.c_int
        self._run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                              ctypes.c_uint32]
        self._err = getattr(lib, f"ascendir_error_{self._sym}")
        self._err.restype = ctypes.c_char_p
        self._lib = lib

    def files(self) -> dict[str, str]:
        """The files that were built: ``<kernel>_cpu.cpp``, ``autofuse_tiling_data.h``, the
        runtime header ``ascendir_cpu_rt.h`` and the CANN-free ``kernel_tiling/kernel_tiling.h``.
        They are the canonical form (kernel named ``kernel``, node names printed as ``#<i>``)
        that identical kernels share; :func:`cpu_sources` gives the named form."""
        return {
            f"{self._sym}_cpu.cpp": self.source,
            "autofuse_tiling_data.h": self.tiling_header,
            "ascendir_cpu_rt.h": self.runtime_header,
            "kernel_tiling/kernel_tiling.h": self.kernel_tiling_stub,
        }

    def _named(self, text: str) -> str:
        """A runtime message with the canonical ``#<i>`` names replaced by the real ones."""
        def sub(m: re.Match[str]) -> str:
            k = int(m.group(1))
            return self._names[k] if k < len(self._names) else m.group(0)

        return re.sub(r"#(\d+)", sub, text)

    def pack_tiling(self, tiling: Any) -> Any:
        """The TilingData struct bytes (a ``uint32`` array in field order) for ``tiling``."""
        import numpy as np

        values: dict[str, int] = {
            "block_dim": int(tiling.block_dim),
            "corenum": int(tiling.core_num),
            "ub_size": int(tiling.ub_size),
            "hbm_size": 0,
            "tiling_key": int(tiling.tiling_key),
        }
        values.update({k: int(v) for k, v in tiling.shape})
        values.update({k: int(v) for k, v in tiling.sizes})
        for name, slot, _bn in tiling.containers:
            values[name] = int(slot)
        size = max((off for _, off in self.fields), default=-4) // 4 + 1
        buf = np.zeros(size, dtype=np.uint32)
        for name, off in self.fields:
            v = values.get(name, 0)
            if not 0 <= v < 2**32:
                raise KernelRunError(
                    f"kernel '{self.name}': TilingData field {name} = {v} does not fit uint32",
                    kind="tiling_key", kernel=self.name,
                )
            buf[off // 4] = v
        return buf

    def run(self, tiling: Any, inputs: Mapping[str, Any], *, checked: bool = True,
            ub_size: int | None = None, threads: int = 1) -> dict[str, Any]:
        """Run every block with ``tiling`` (a solved :class:`TilingData`) on ``inputs``
        (per Data node name); ``{output name: 1-D array}``. ``threads`` > 1 runs the blocks on
        that many threads, each with its own UB (kernels with atomic stores run serially); the
        results are the same."""
        if threads < 1:
            raise KernelRunError(f"threads must be at least 1, not {threads}", kind="op",
                                 kernel=self.name)
        import numpy as np

        impl = None
        for g in self._impls:
            if int(_core_of(g).tiling_key) == int(tiling.tiling_key):
                impl = g
                break
        if impl is None:
            raise KernelRunError(
                f"kernel '{self.name}' has no template for tiling key {tiling.tiling_key}",
                code=8, kind="tiling_key", kernel=self.name,
            )
        bindings = dict(tiling.shape)
        bindings.update(dict(tiling.sizes))
        plan = export_plan(impl, bindings)
        try:
            interp = _Interp(_Plan(plan), dict(inputs))
        except Exception as e:  # the simulator's input checks
            raise KernelRunError(f"kernel '{self.name}': {e}", kind="input",
                                 kernel=self.name) from None
        gm = interp.gm
        for n in plan["nodes"]:
            if n["compute_type"] != "load":
                continue
            src = interp.p.by_id[n["inputs"][0][0]]
            t = n["outputs"][0]
            need = int(n["attrs"].get("offset", 0)) + 1
            for r, s in zip(t["base_repeats"], t["base_strides"], strict=False):
                need += (max(int(r), 1) - 1) * abs(int(s))
            have = gm[src["name"]].size if src["name"] in gm else 0
            if have < need:
                raise KernelRunError(
                    f"kernel '{self.name}': input '{src['name']}' has {have} elements, "
                    f"node '{n['name']}' reads {need}",
                    kind="input", node=n["name"], kernel=self.name,
                )
        args_in = []
        for name, dt in self.inputs:
            if name not in gm:
                raise KernelRunError(f"kernel '{self.name}': no input given for '{name}'",
                                     kind="input", kernel=self.name)
            a = np.ascontiguousarray(gm[name]).astype(np_dtype(dt), copy=False)
            gm[name] = a
            args_in.append(a)
        args_out = []
        for name, dt in self.outputs:
            held = gm.get(name)
            out = np.zeros(1, dtype=np_dtype(dt)) if held is None else held
            out = np.ascontiguousarray(out, dtype=np_dtype(dt))
            gm[name] = out
            args_out.append(out)
        tbuf = self.pack_tiling(tiling)
        pin = (ctypes.c_void_p * max(len(args_in), 1))(*[a.ctypes.data for a in args_in])
        pout = (ctypes.c_void_p * max(len(args_out), 1))(*[a.ctypes.data for a in args_out])
        ub = int(ub_size if ub_size is not None else tiling.ub_size)
        rc = self._run(tbuf.ctypes.data, ctypes.addressof(pin), ctypes.addressof(pout), None,
                       ub, FLAG_CHECK if checked else 0, int(threads))
        if rc != 0:
            msg = self._named((self._err() or b"").decode("utf-8", "replace"))
            m = re.match(r"node '([^']*)'", msg)
            raise KernelRunError(
                f"kernel '{self.name}' (template {tiling.tiling_key}): {msg}",
                code=rc, kind=_KINDS.get(rc, "op"), node=m.group(1) if m else None,
                kernel=self.name,
            )
        return {name: gm[name] for name, _ in self.outputs}


def cpu_sources(impls: Any, name: str, target: Any = None) -> dict[str, str]:
    """The CPU kernel's files (file name → text) without building them:
    ``<name>_cpu.cpp``, ``autofuse_tiling_data.h``, ``ascendir_cpu_rt.h`` and
    ``kernel_tiling/kernel_tiling.h``."""
    graphs = _graphs(impls)
    block = int(getattr(target, "block_size", 32) or 32)
    kname = _ident(name)
    gen = dict(_be.cpu_kernel([_core_of(g) for g in graphs], kname, block))
    return {
        f"{kname}_cpu.cpp": gen["source"],
        "autofuse_tiling_data.h": gen["tiling_header"],
        "ascendir_cpu_rt.h": gen["runtime_header"],
        "kernel_tiling/kernel_tiling.h": gen["kernel_tiling_stub"],
    }


def build_cpu(impls: Any, target: Any = None, *, name: str | None = None,
              flags: Iterable[str] = (), cache_dir: str | None = None) -> CpuKernel:
    """Generate, build and load the CPU kernel of ``impls`` (one ImplGraph or the templates of
    one kernel, tiling-key order). ``target`` gives the block size (32 bytes by default)."""
    graphs = _graphs(impls)
    if not graphs:
        raise KernelRunError("build_cpu needs at least one ImplGraph", kind="op")
    block = int(getattr(target, "block_size", 32) or 32)
    kname = _ident(name or str(_core_of(graphs[0]).name))
    # The canonical form: kernels that differ only in their names share one build.
    gen = dict(_be.cpu_kernel([_core_of(g) for g in graphs], kname, block, True))
    sym = gen["name"]
    files = {
        f"{sym}_cpu.cpp": gen["source"],
        "autofuse_tiling_data.h": gen["tiling_header"],
        "ascendir_cpu_rt.h": gen["runtime_header"],
        "kernel_tiling/kernel_tiling.h": gen["kernel_tiling_stub"],
    }
    lib = build_library(files, f"{sym}_cpu.cpp", flags=tuple(flags), cache_dir=cache_dir)
    return CpuKernel(kname, graphs, gen, lib, block)


__all__ = ["CpuKernel", "FLAG_CHECK", "build_cpu", "cpu_sources"]
