"""ONNX import of real-architecture models: ``air.onnx.load`` vs ``onnx.load`` alone and vs
``onnx.load`` + ``onnx_ir`` conversion (``onnx_ir.load``).

The models come from ``benches/models.py`` (ResNet-50 layout, BERT-base, a 20k-node decoder),
written to a temporary directory; every timing reads the file from disk.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import row  # noqa: E402


def _load_time(fn: Any, repeat: int) -> float:
    """Best-of-``repeat`` seconds of ``fn()`` (the machines are shared: the minimum is the
    stable estimate, as ``timeit`` recommends); the result is freed outside the timed region,
    for every library alike (import time, not teardown)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        obj = fn()
        times.append(time.perf_counter() - start)
        del obj
    return min(times)


def _rows_for(name: str, path: str, repeat: int) -> list[dict[str, Any]]:
    import onnx

    import ascendir as air

    air.onnx.load(path, warn_unknown=False)  # warm the module and the page cache
    ours = _load_time(lambda: air.onnx.load(path, warn_unknown=False), repeat)
    n = len(onnx.load(path).graph.node)
    rows = [
        row(
            f"onnx import {name} ({n} nodes)",
            ours,
            "onnx.load",
            _load_time(lambda: onnx.load(path), repeat),
        )
    ]
    try:
        import onnx_ir
    except ImportError:
        rows.append(
            row(
                f"onnx import {name} ({n} nodes)",
                ours,
                "onnx_ir.load",
                None,
                note="onnx_ir is not installed",
            )
        )
    else:
        rows.append(
            row(
                f"onnx import {name} ({n} nodes)",
                ours,
                "onnx_ir.load",
                _load_time(lambda: onnx_ir.load(path), repeat),
            )
        )
    gc.collect()
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    """Benchmark rows (see ``benches/run.py``)."""
    import models

    repeat = 5 if quick else 15
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        builders = [
            ("resnet50", models.resnet50),
            ("bert-base", models.bert),
            ("decoder", models.decoder),
        ]
        for name, build in builders:
            import onnx

            path = str(Path(tmp) / f"{name}.onnx")
            onnx.save(build(), path)
            rows.extend(_rows_for(name, path, repeat))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
