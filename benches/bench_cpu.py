"""The CPU C++ verification target: fused kernels against numpy, and the machine's bandwidth.

Rows (single thread, 2^24 float32 elements, the same run):
- ``memcpy bandwidth``: ``np.copyto`` of 64 MB, the machine's copy bandwidth (read + write);
- ``fused 6-op chain``: the CPU kernel of Load x, Load y → Abs → Mul y → Add x → Relu → Sub y →
  Neg → Store (one pass over memory) against numpy evaluating the chain op by op;
  target ≥ 2× (issue: codegen);
- ``Load→Abs→Store``: the CPU kernel against ``np.abs``; target ≥ 0.5× (50 % of numpy's
  bandwidth).
With ``--models`` (or ``ASCENDIR_BENCH_CPU_MODELS=1``) it also verifies every kernel of the
three models of ``models.py`` on the CPU (``air.compiler.verify``: hint shapes, shapes off the
hints, and a small-UB target that forces tails) and reports the counts and the time.
``k.run`` is timed whole (tiling packing, argument checks and the ctypes call). Notes give the
GB/s of each side (bytes of the inputs and outputs, as the copy row counts them).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from timing import measure, row  # noqa: E402

N = 1 << 24


def _gbs(nbytes: int, seconds: float) -> str:
    return f"{nbytes / seconds / 1e9:.1f} GB/s"


def run(quick: bool) -> list[dict]:
    """The three rows."""
    import numpy as np

    from ascendir import asc
    from ascendir.asc.schedule import schedule
    from ascendir.asc.target import Target
    from ascendir.asc.tiling import solve_tiling
    from support.hintgraph import F32, HB

    reps = 3 if quick else 7
    tgt = Target.ascend910b()
    src = np.random.default_rng(0).uniform(-2, 2, N).astype(np.float32)
    dst = np.empty_like(src)
    t_copy = measure(lambda: np.copyto(dst, src), reps)[0]
    rows = [row("memcpy bandwidth (np.copyto, 64 MB)", t_copy, "", None,
                _gbs(2 * src.nbytes, t_copy))]

    b = HB("Chain6", [N], F32)
    x = b.load()
    y = b.load()
    t = b.op("Abs", x)
    t = b.op("Mul", t, y)
    t = b.op("Add", t, x)
    t = b.op("Relu", t)
    t = b.op("Sub", t, y)
    b.store(b.op("Neg", t))
    impls = schedule(b.g)
    k = asc.build_cpu(impls, tgt, name="bench_chain6")
    td = solve_tiling(impls, tgt, {})
    xs = np.random.default_rng(1).uniform(-2, 2, N).astype(np.float32)
    ys = np.random.default_rng(2).uniform(-2, 2, N).astype(np.float32)
    feed = {b.inputs[0][0]: xs, b.inputs[1][0]: ys}

    def chain() -> object:
        v = np.abs(xs)
        v = v * ys
        v = v + xs
        v = np.maximum(v, 0)
        v = v - ys
        return -v

    out = k.run(td, feed, checked=False)[b.outputs[0]]
    assert np.array_equal(out, chain())
    t_k = measure(lambda: k.run(td, feed, checked=False), reps)[0]
    t_np = measure(chain, reps)[0]
    moved = 3 * xs.nbytes
    rows.append(row("fused 6-op chain, 2^24 f32 (CPU kernel vs numpy op by op)", t_k,
                    "numpy", t_np, f"kernel {_gbs(moved, t_k)}, numpy {_gbs(moved, t_np)} "
                    f"(useful bytes); target ≥ 2×; {td.block_dim} blocks of "
                    f"{dict(td.sizes)}"))

    b2 = HB("LoadAbsStore", [N], F32)
    b2.store(b2.op("Abs", b2.load()))
    impls2 = schedule(b2.g)
    k2 = asc.build_cpu(impls2, tgt, name="bench_abs")
    td2 = solve_tiling(impls2, tgt, {})
    feed2 = {b2.inputs[0][0]: xs}
    assert np.array_equal(k2.run(td2, feed2, checked=False)[b2.outputs[0]], np.abs(xs))
    t_k2 = measure(lambda: k2.run(td2, feed2, checked=False), reps)[0]
    t_abs = measure(lambda: np.abs(xs), reps)[0]
    moved2 = 2 * xs.nbytes
    rows.append(row("Load→Abs→Store, 2^24 f32 (CPU kernel vs np.abs)", t_k2, "np.abs", t_abs,
                    f"kernel {_gbs(moved2, t_k2)}, np.abs {_gbs(moved2, t_abs)}; "
                    "target ≥ 0.5×"))
    return rows


def verify_models() -> list[dict]:
    """Rows: every kernel of each benchmark model verified on the CPU."""
    import time

    import ascendir as air
    import models

    rows = []
    for name, fn in (("resnet50", models.resnet50), ("bert_base", models.bert),
                     ("decoder", models.decoder)):
        cm = air.compile(air.onnx.load(fn()))
        start = time.perf_counter()
        rep = air.compiler.verify(cm)
        t = time.perf_counter() - start
        done = {c.kernel for c in rep.cases}
        bad = {c.kernel for c in rep.failures}
        rows.append(row(f"verify every kernel of {name} on the CPU", t, "", None,
                        f"{len(done) - len(bad)}/{len(cm.kernels)} kernels verified, "
                        f"{len(rep.cases)} runs, {len(rep.failures)} failed"))
    return rows


if __name__ == "__main__":
    import os

    out = run("--quick" in sys.argv)
    if "--models" in sys.argv or os.environ.get("ASCENDIR_BENCH_CPU_MODELS") == "1":
        out += verify_models()
    for r in out:
        print(r)
