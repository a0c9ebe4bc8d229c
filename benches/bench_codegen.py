"""Kernel text generation (``asc.generate_kernel``) for every kernel of BERT-base: every file of
a kernel — TilingData header, host tiling, infershape, Ascend C kernel, CPU kernel, metadata
json and the shipped headers (text only, no C++ build).

Target (issue: codegen): all kernels of BERT-base ≤ 50 ms. A target row's ``peer_s`` is the
target time, so ``ratio`` > 1 means the target is met.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, row  # noqa: E402


def run(quick: bool) -> list[dict]:
    """Generate the files of every BERT-base kernel (graphs decoded beforehand): all kernels in
    one ``asc.generate_kernels`` call (what ``CompiledModel.generate`` and ``--emit cpp`` do,
    on the package's threads), and one ``asc.generate_kernel`` call per kernel on one thread."""
    import ascendir as air
    import models
    from ascendir import asc

    cm = air.compile(air.onnx.load(models.bert()))
    kernels = [(list(k.impls), k.name, k.hint) for k in cm.kernels]
    total = [0]

    def together() -> None:
        files = asc.generate_kernels(kernels)
        total[0] = sum(len(t) for f in files for t in f.values())

    def one_by_one() -> None:
        for impls, name, hint in kernels:
            asc.generate_kernel(impls, name, hint=hint)

    repeat = 3 if quick else 7
    threads = air.get_num_threads()
    t = measure(together, repeat)[0]
    air.set_num_threads(1)
    try:
        t1 = measure(one_by_one, repeat)[0]
    finally:
        air.set_num_threads(threads)
    templates = sum(len(i) for i, _, _ in kernels)
    what = f"{len(kernels)} kernels, {templates} templates, {total[0] / 1e6:.2f} MB of text"
    return [row("codegen BERT-base (all kernels)", t, "target", 0.050,
                f"{what}; generate_kernels on {threads} threads"),
            row("codegen BERT-base, one thread", t1, "target", 0.050,
                "generate_kernel per kernel, set_num_threads(1)")]
