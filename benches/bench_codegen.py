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
    """One row: generate the files of every BERT-base kernel (graphs decoded beforehand)."""
    import ascendir as air
    import models
    from ascendir import asc

    cm = air.compile(air.onnx.load(models.bert()))
    kernels = [(k.name, list(k.impls), k.hint) for k in cm.kernels]
    total = [0]

    def go() -> None:
        n = 0
        for name, impls, hint in kernels:
            files = asc.generate_kernel(impls, name, hint=hint)
            n += sum(len(t) for t in files.values())
        total[0] = n

    t = measure(go, 3 if quick else 7)[0]
    templates = sum(len(i) for _, i, _ in kernels)
    return [row("codegen BERT-base (all kernels)", t, "target", 0.050,
                f"{len(kernels)} kernels, {templates} templates, {total[0] / 1e6:.2f} MB of text")]
