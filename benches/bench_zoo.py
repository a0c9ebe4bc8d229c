"""The real-architecture corpus (``tests/zoo/corpus.py``) against its peers, per model:

- import: ``air.torch.from_exported_program(ep)`` against ``torch.onnx.export(ep, dynamo=True)``
  + ``air.onnx.load`` of the same ``ExportedProgram`` (the export itself is the shared cost);
- compile: ``air.compile`` of the imported graph against ``torch.compile`` (Inductor, CPU)'s
  first compile of the same module, each Inductor compile in a fresh process with its caches
  off; the kernel counts (Inductor's counted from its output code) in the note.

Needs the torch extra, ``transformers`` and ``timm``. ``--quick`` runs five models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ZOO = HERE.parent / "tests" / "zoo"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ZOO))

from timing import measure, row  # noqa: E402

QUICK = ["bert", "llama", "t5", "wav2vec2", "timm-resnet18"]

_CHILD = r"""
import json, re, sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import torch
import torch._inductor.config as cfg
cfg.fx_graph_cache = False
from torch._inductor.utils import run_and_get_code
from corpus import build
model, args = build(sys.argv[2])
fn = torch.compile(model)
t = time.perf_counter()
with torch.no_grad():
    _, codes = run_and_get_code(fn, *args)
dt = time.perf_counter() - t
code = "\n".join(codes)
kernels = set(re.findall(r"^(cpp_fused_\w+|triton_\w+) = async_compile\.", code, re.M))
print(json.dumps({"seconds": dt, "kernels": len(kernels)}))
"""


def _inductor(name: str) -> dict:
    """Inductor's first compile of corpus model ``name``: ``seconds`` and ``kernels``, or
    ``error`` (the last line it printed) where torch itself fails on the model."""
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    out = subprocess.run([sys.executable, "-c", _CHILD, str(ZOO), name], capture_output=True,
                         text=True, env=env, timeout=1800)
    if out.returncode != 0:
        lines = [ln for ln in out.stderr.splitlines() if "Error" in ln] or ["(no message)"]
        return {"error": lines[-1][:160]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[dict]:
    """Rows: per model, the import and the compile against their peers."""
    import torch
    from corpus import ENTRIES, build

    import ascendir as air

    warnings.simplefilter("ignore")
    names = QUICK if quick else [e.name for e in ENTRIES]
    rows: list[dict] = []
    fewer_or_equal = compared = 0
    torch.set_grad_enabled(False)
    for name in names:
        model, args = build(name)
        ep = torch.export.export(model, args, strict=False)
        last: list = []

        def ours(ep=ep, last=last) -> None:
            last[:] = [air.torch.from_exported_program(ep, warn_unknown=False)]

        t_import = measure(ours, 3)[0]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.onnx")
            start = time.perf_counter()
            torch.onnx.export(ep, args, path, dynamo=True, verbose=False)
            air.onnx.load(path, warn_unknown=False)
            t_onnx = time.perf_counter() - start
        rows.append(row(f"zoo import {name}", t_import, "torch.onnx.export + onnx.load",
                        t_onnx, "from the same ExportedProgram"))
        g = last[0]
        compiled: list = []

        def comp(g=g, compiled=compiled) -> None:
            compiled[:] = [air.compile(g)]

        t_compile = measure(comp, 3)[0]
        peer = _inductor(name)
        ours_k = len(compiled[0].kernels)
        if "error" in peer:
            rows.append(row(f"zoo compile {name}", t_compile, "torch.compile (Inductor, CPU)",
                            None, f"kernels: ours {ours_k}; Inductor failed: {peer['error']}"))
            continue
        compared += 1
        fewer_or_equal += ours_k <= peer["kernels"]
        rows.append(row(f"zoo compile {name}", t_compile, "torch.compile (Inductor, CPU)",
                        peer["seconds"], f"kernels: ours {ours_k}, Inductor {peer['kernels']}"))
    rows.append({"name": "zoo kernels <= Inductor's", "note":
                 f"{fewer_or_equal} of the {compared} models Inductor compiles "
                 f"({100 * fewer_or_equal / max(compared, 1):.0f} %)"})
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
