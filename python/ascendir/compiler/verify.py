"""``air.compiler.verify``: every kernel of a compiled model built for the CPU and checked.

For each AscBackend kernel, each template and each shape, the CPU C++ kernel
(:func:`ascendir.asc.build_cpu`, checked build) runs on random inputs with the tiling the solver
gives, and its outputs are compared with the HintGraph evaluated directly
(:func:`ascendir.asc.evaluate`). Shapes: the kernel's hint shape, then shapes that move each
symbol off its hint (kept only when the kernel's guards allow them), each solved both for the
model's target and for a small-UB target whose tiles are small enough that tiles and blocks end
in tails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import AscendIRError

#: The target that forces tails: 4 cores, a 16 KiB UB.
TAIL_TARGET = ("tails", 4, 16384)

#: The kernels are built unoptimized to be verified: five times faster to build than the
#: optimized library, and the same program (the builds use ``-fwrapv`` and
#: ``-ffp-contract=off``, so no optimization changes a result); the inputs are small.
VERIFY_FLAGS: tuple[str, ...] = ("-O0",)


@dataclass
class VerifyCase:
    """One run: kernel, template, target, shape; ``ok``, the largest difference and the error
    (when the kernel did not build or run)."""

    kernel: str
    template: str
    target: str
    shape: dict[str, int]
    ok: bool
    max_abs_diff: float = 0.0
    error: str | None = None


@dataclass
class VerifyReport:
    """What :func:`verify` ran: ``cases`` (one per kernel × template × target × shape) of the
    kernels that were built; ``twins`` maps each other kernel to the built kernel of the same
    structure whose cases stand for it."""

    cases: list[VerifyCase] = field(default_factory=list)
    #: How many kernels were checked (a model without kernels has nothing to verify).
    kernels: int = 0
    #: Kernel → the kernel of the same structure (HintGraph and ImplGraphs equal but for node
    #: names, same shapes) that was built and run for it.
    twins: dict[str, str] = field(default_factory=dict)

    #: Failures listed one per line by :meth:`text`; past this many, the rest are counted.
    MAX_LISTED = 20

    @property
    def ok(self) -> bool:
        """Whether every case passed: a model without kernels is verified; kernels that gave
        no run at all (no template fits any shape) are not."""
        if self.kernels == 0 and not self.cases:
            return True
        return bool(self.cases) and all(c.ok for c in self.cases)

    @property
    def failures(self) -> list[VerifyCase]:
        """The cases that failed."""
        return [c for c in self.cases if not c.ok]

    def failure_lines(self) -> list[str]:
        """One line per failure (each on a single line), the first :attr:`MAX_LISTED`, then
        a line counting the others."""
        fails = self.failures
        lines = []
        for c in fails[:self.MAX_LISTED]:
            why = " ".join((c.error or f"max |diff| {c.max_abs_diff:g}").split())
            lines.append(f"{c.kernel} [{c.template}] {c.target} {c.shape}: {why}")
        if len(fails) > self.MAX_LISTED:
            lines.append(f"... and {len(fails) - self.MAX_LISTED} more failures")
        return lines

    def summary(self) -> str:
        """One line: how many runs of how many kernels, how many failed."""
        if self.kernels == 0 and not self.cases:
            return "no kernels to verify: the model has no AscBackend kernel"
        distinct = self.kernels - len(self.twins)
        twins = f" ({distinct} distinct)" if self.twins else ""
        return (f"verified {len(self.cases)} runs of {self.kernels} kernels{twins}: "
                f"{len(self.failures)} failed")

    def text(self) -> str:
        """A readable summary, then one line per failure (see :meth:`failure_lines`)."""
        return "\n".join([self.summary(), *("  " + x for x in self.failure_lines())])


def _symbols(kernel: Any) -> list[str]:
    return [str(s) for s in kernel.hint.size_vars if not str(s).lstrip("-").isdigit()]


def _hint_shape(kernel: Any, default_hint: int) -> dict[str, int]:
    """Symbol values from the AscBackend node's input dims (``_ascendir_symbols``)."""
    node = kernel.node
    attrs = node.op_desc.attrs
    out: dict[str, int] = {}
    srcs = list(attrs["_ascendir_symbols"]) if "_ascendir_symbols" in attrs else []
    for entry in srcs:
        m = re.match(r"\s*(\w+):\s*input (\d+) dim (\d+)", str(entry))
        if not m:
            continue
        sym, i, d = m.group(1), int(m.group(2)), int(m.group(3))
        try:
            dims = list(node.op_desc.input_desc(i).shape or ())
            v = int(dims[d])
        except (AscendIRError, IndexError, KeyError, ValueError, AttributeError):
            v = -1
        out[sym] = v if v > 0 else default_hint
    for s in _symbols(kernel):
        out.setdefault(s, default_hint)
    return out


_RELS = {
    "Eq": lambda a, b: a == b,
    "Ne": lambda a, b: a != b,
    "Lt": lambda a, b: a < b,
    "Le": lambda a, b: a <= b,
    "Gt": lambda a, b: a > b,
    "Ge": lambda a, b: a >= b,
}


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


def guard_holds(guard: str, shape: Mapping[str, int]) -> bool | None:
    """Whether a guard (``"Lt(s1, 64)"``) holds for ``shape``; None when it names a symbol
    ``shape`` does not bind or cannot be read."""
    from .. import asc

    m = re.fullmatch(r"\s*(Eq|Ne|Lt|Le|Gt|Ge)\((.*)\)\s*", guard)
    if not m:
        return None
    sides = _split_top(m.group(2))
    if len(sides) != 2:
        return None
    try:
        a, b = (asc.parse_expr(x) for x in sides)
        names = {str(x) for x in (*a.free_symbols(), *b.free_symbols())}
        if not names <= set(shape):
            return None
        return bool(_RELS[m.group(1)](a.evaluate(dict(shape)), b.evaluate(dict(shape))))
    except (AscendIRError, TypeError, ValueError):
        return None


def _guards(kernel: Any) -> list[str]:
    attrs = kernel.node.op_desc.attrs
    return [str(g) for g in attrs["_ascendir_guards"]] if "_ascendir_guards" in attrs else []


def _guards_hold(kernel: Any, shape: Mapping[str, int]) -> bool:
    return all(guard_holds(g, shape) is not False for g in _guards(kernel))


def random_inputs(hint: Any, shape: Mapping[str, int], seed: int = 0) -> dict[str, Any]:
    """Random inputs for a HintGraph at ``shape``: per Data node an array as long as its Loads
    read (floats uniform in [-2, 2], integers in [0, 5), bools), from ``seed``."""
    import numpy as np

    from ..asc.simulate import export_plan, np_dtype

    plan = export_plan(hint, dict(shape))
    by_id = {n["id"]: n for n in plan["nodes"]}
    need: dict[str, tuple[int, Any]] = {}
    for n in plan["nodes"]:
        if n["compute_type"] not in ("load", "gather"):
            continue
        for src in n["inputs"]:
            d = by_id[src[0]]
            if d["type"] != "Data":
                continue
            t = n["outputs"][0] if n["compute_type"] == "load" else d["outputs"][0]
            size = int(n["attrs"].get("offset", 0)) + 1
            for r, s in zip(t["base_repeats"], t["base_strides"], strict=False):
                size += (max(int(r), 1) - 1) * abs(int(s))
            dt = np_dtype(d["outputs"][0]["dtype"])
            prev = need.get(d["name"], (0, dt))[0]
            need[d["name"]] = (max(prev, size), dt)
    rng = np.random.default_rng(seed)
    out = {}
    for name, (size, dt) in need.items():
        if dt.kind == "f":
            out[name] = rng.uniform(-2.0, 2.0, size).astype(dt)
        elif dt.kind == "b":
            out[name] = rng.integers(0, 2, size).astype(dt)
        else:
            out[name] = rng.integers(0, 5, size).astype(dt)
    return out


def _close(a: Any, b: Any) -> tuple[bool, float]:
    import numpy as np

    if a.shape != b.shape:
        return False, float("inf")
    if a.dtype.kind in "iub":
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        return bool((d == 0).all()), float(d.max()) if d.size else 0.0
    tol = 2e-2 if a.dtype.itemsize <= 2 else 1e-4
    x, y = a.astype(np.float64), b.astype(np.float64)
    ok = bool(np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True))
    fin = np.isfinite(x) & np.isfinite(y)
    diff = float(np.abs(x - y)[fin].max()) if fin.any() else 0.0
    return ok, diff


def _structure(kernel: Any, default_hint: int) -> tuple[Any, ...]:
    """What decides a kernel's verification: its HintGraph's and ImplGraphs' structure (names
    aside), its guards and its hint shape."""
    return (kernel.hint.structure_bytes(),
            tuple(impl.structure_bytes() for impl in kernel.impls),
            tuple(_guards(kernel)),
            tuple(sorted(_hint_shape(kernel, default_hint).items())))


def _shapes(kernel: Any, base: dict[str, int]) -> list[dict[str, int]]:
    shapes = [dict(base)]
    for s in _symbols(kernel):
        for v in (base[s] + 1, 2 * base[s] + 3):
            cand = dict(base)
            cand[s] = v
            if cand not in shapes and _guards_hold(kernel, cand):
                shapes.append(cand)
    return shapes


def verify(compiled: Any, *, shapes: Sequence[Mapping[str, int]] | None = None,
           seeds: Iterable[int] = (0,), kernels: Iterable[str] | None = None,
           tails: bool = True, flags: Sequence[str] = VERIFY_FLAGS) -> VerifyReport:
    """Build every kernel of ``compiled`` for the CPU and compare it with the HintGraph.

    ``shapes`` (symbol → value) replace the default shapes; ``kernels`` restricts to kernel
    names; ``tails=False`` skips the small-UB target; ``flags`` are added to the C++ compiler's
    (by default :data:`VERIFY_FLAGS`). Returns a :class:`VerifyReport`.
    """
    from .. import asc
    from ..asc import Target, build_cpu, compile_tiling

    target_name = compiled.options.target
    real = getattr(Target, target_name)()
    targets = [(target_name, real)]
    if tails:
        name, cores, ub = TAIL_TARGET
        targets.append((name, Target(name, core_num=cores, ub_size=ub,
                                     block_size=real.block_size)))
    wanted = set(kernels) if kernels is not None else None
    report = VerifyReport()
    default_hint = int(getattr(compiled.options, "default_hint", 16) or 16)
    every = [k for k in compiled.kernels if wanted is None or k.name in wanted]
    report.kernels = len(every)
    # Structural twins (a model's repeated layers) are the same program on the same shapes:
    # the first of each is built and run for all.
    first: dict[Any, str] = {}
    chosen = []
    for k in every:
        key = _structure(k, default_hint)
        if key in first:
            report.twins[k.name] = first[key]
        else:
            first[key] = k.name
            chosen.append(k)

    def build(k: Any) -> Any:
        try:
            return build_cpu(k.impls, real, name=k.name, flags=tuple(flags))
        except AscendIRError as e:
            return e

    # The C++ builds are separate compiler processes: run them side by side (results in
    # kernel order whatever the finishing order).
    from concurrent.futures import ThreadPoolExecutor

    from .batch import available_cpus

    with ThreadPoolExecutor(max_workers=max(1, min(available_cpus(), len(chosen) or 1))) as ex:
        built = list(ex.map(build, chosen))
    for k, cpu in zip(chosen, built, strict=True):
        impls = k.impls
        if isinstance(cpu, AscendIRError):
            report.cases.append(VerifyCase(k.name, "*", target_name, {}, False,
                                           error=f"build: {cpu}"))
            continue
        base = _hint_shape(k, default_hint)
        runs = [dict(s) for s in shapes] if shapes is not None else _shapes(k, base)
        # The reference once per shape and seed, for every target.
        refs: dict[tuple[int, int], Any] = {}
        for tname, tgt in targets:
            fn = compile_tiling(impls, tgt)
            for si, shape in enumerate(runs):
                for seed in seeds:
                    if (si, seed) not in refs:
                        inputs = random_inputs(k.hint, shape, seed)
                        try:
                            refs[si, seed] = (inputs, asc.evaluate(k.hint, inputs, shape))
                        except Exception as e:  # the reference cannot run this kernel
                            refs[si, seed] = (inputs, e)
                    inputs, ref = refs[si, seed]
                    if isinstance(ref, Exception):
                        report.cases.append(VerifyCase(k.name, "*", tname, shape, False,
                                                       error=f"evaluate: {ref}"))
                        continue
                    for impl, res in zip(impls, fn.solve_each(shape), strict=False):
                        if isinstance(res, Exception):
                            continue  # the template does not fit this shape / target
                        try:
                            out = cpu.run(res, inputs)
                        except AscendIRError as e:
                            report.cases.append(VerifyCase(k.name, impl.name, tname, shape,
                                                           False, error=str(e)))
                            continue
                        ok, worst = True, 0.0
                        for name, want in ref.items():
                            got = out.get(name)
                            if got is None:
                                ok = False
                                continue
                            good, diff = _close(got, want)
                            ok = ok and good
                            worst = max(worst, diff)
                        report.cases.append(VerifyCase(k.name, impl.name, tname, shape, ok,
                                                       worst))
    return report


__all__ = ["VERIFY_FLAGS", "VerifyCase", "VerifyReport", "guard_holds", "random_inputs",
           "verify"]
