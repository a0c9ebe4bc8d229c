"""``air.evaluate`` (the numpy reference interpreter) on the benchmark models, against
onnxruntime on the same ONNX model (a compiled runtime: the ratio shows what a reference
interpreter costs, not a race).

    python benches/bench_evaluate.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models  # noqa: E402
from timing import measure, row  # noqa: E402


def _feeds(m: Any) -> dict[str, np.ndarray]:
    from onnx import TensorProto

    rng = np.random.default_rng(0)
    feeds = {}
    for i in m.graph.input:
        tt = i.type.tensor_type
        shape = [d.dim_value or 4 for d in tt.shape.dim]
        if tt.elem_type == TensorProto.INT64:
            feeds[i.name] = rng.integers(0, 2, shape).astype(np.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def run(quick: bool = False) -> list[dict[str, Any]]:
    """One row per model: ``air.evaluate`` of the imported graph vs onnxruntime."""
    import ascendir as air

    repeat = 2 if quick else 5
    rows = []
    for name, build in (("resnet50", models.resnet50), ("bert", models.bert),
                        ("decoder", models.decoder)):
        m = build()
        g = air.onnx.load(m, warn_unknown=False)
        feeds = _feeds(m)
        ours = measure(lambda g=g, feeds=feeds: air.evaluate(g, feeds), repeat)[1]
        label = f"evaluate {name} ({len(g.all_nodes())} nodes)"
        try:
            import onnxruntime as ort
        except ImportError:
            rows.append(row(label, ours, "onnxruntime", None, note="not installed"))
            continue
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        peer = measure(lambda s=sess, feeds=feeds: s.run(None, feeds), repeat)[1]
        rows.append(row(label, ours, "onnxruntime", peer))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(f"{r['name']:<42} {r['ours_s'] * 1e3:9.1f} ms   {r['peer']} "
              f"{(r['peer_s'] or 0) * 1e3:8.1f} ms")
