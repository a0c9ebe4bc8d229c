"""The compiler (``air.compile``, stages load → package, no codegen) on the real-architecture
models of ``models.py`` and the clustering (fuse stage) on G(n), the random DAG of lowerable ops
of ``workloads.py``.

Targets (issue: compiler): BERT-base ≤ 100 ms and the 21k-node decoder ≤ 1 s on one core (the
models' rows run with one thread; their notes give the time with the machine's threads too), the
fuse stage ≤ 1 s per 100k nodes and near-linear (≤ 2.2× the time for 2× the nodes). A target
row's ``peer_s`` is the target time, so ``ratio`` > 1 means the target is met.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, row  # noqa: E402


def _stage(report: Any, name: str) -> float:
    return sum(s["seconds"] for s in report.data["stages"] if s["stage"] == name)


def run(quick: bool) -> list[dict]:
    """Rows: whole compiles of the three models, the fuse stage on G(100k) and G(200k)."""
    import ascendir as air
    import models
    import workloads

    rows = []
    repeat = 3 if quick else 5
    graphs = {
        "BERT-base (12 layers)": (air.onnx.load(models.bert()), 0.100),
        "ResNet-50": (air.onnx.load(models.resnet50()), None),
        "decoder (21k nodes)": (air.onnx.load(models.decoder()), 1.0),
    }
    for name, (g, target) in graphs.items():
        last: list[Any] = []

        def go(g: Any = g, last: list[Any] = last) -> None:
            last[:] = [air.compile(g)]

        threads = air.get_num_threads()
        air.set_num_threads(1)
        try:
            t = measure(go, repeat)[0]
        finally:
            air.set_num_threads(threads)
        t_all = measure(go, repeat)[0]
        cm = last[0]
        note = (f"one thread; {threads} threads {t_all * 1e3:.1f} ms; "
                f"{len(g.nodes)} nodes -> {cm.report.nodes_after}, {len(cm.kernels)} kernels; "
                f"fuse {_stage(cm.report, 'fuse') * 1e3:.1f} ms, realize+schedule+tile "
                f"{sum(_stage(cm.report, s) for s in ('realize', 'schedule', 'tile')) * 1e3:.1f}"
                " ms")
        rows.append(row(f"compile {name}", t, "target" if target else "", target, note))
    sizes = [20_000, 40_000] if quick else [100_000, 200_000]
    del graphs, g, cm, last
    gc.collect()
    # Both sizes side by side: their compiles alternate (A B B A A B ...), so a drift in the
    # machine's load falls on both; each size's figure is the median of its fuse stages (seven,
    # five with --quick).
    gn = {n: workloads.build_g_n_bulk(n) for n in sizes}
    times: dict[int, list[float]] = {n: [] for n in sizes}
    notes: dict[int, str] = {}
    for i in range(repeat + 2):
        for n in sizes if i % 2 == 0 else sizes[::-1]:
            cm = air.compile(gn[n])
            times[n].append(_stage(cm.report, "fuse"))
            notes[n] = (f"{len(cm.kernels)} kernels; whole compile "
                        f"{cm.report.data['total_seconds']:.2f} s")
            del cm
    fuse = {n: statistics.median(t) for n, t in times.items()}
    for n in sizes:
        rows.append(row(f"fuse stage G({n // 1000}k)", fuse[n], "target", n / 100_000,
                        f"median of {len(times[n])}, min–max {min(times[n]):.3f}–"
                        f"{max(times[n]):.3f} s; {notes[n]}"))
    del gn
    import optimality

    start = time.perf_counter()
    count, width = (50, 8) if quick else (200, 10)
    r = optimality.probe(count, width)
    rows.append(row(f"C14 greedy vs exhaustive ({count} graphs, <= {width} nodes)",
                    time.perf_counter() - start, "", None,
                    f"greedy optimal on {r['optimal']:.1%}, worst gap "
                    f"{r['worst_gap']:.1%} of the best saving"))
    a, b = sizes
    growth = fuse[b] / fuse[a]
    rows.append(row(f"fuse stage growth G({b // 1000}k) / G({a // 1000}k)", growth, "target",
                    2.2, "ratio of the medians, 2x the nodes (near-linear: <= 2.2)"))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
