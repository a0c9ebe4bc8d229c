"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def measure(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, float, float]:
    """``(median, min, max)`` seconds of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def measure_alternating(fns: list[Callable[[], Any]], calls: int,
                        block: int = 25) -> list[float]:
    """Median seconds per call of each of ``fns``, ``calls`` calls each, run in alternating
    blocks of ``block`` calls (A×25, B×25, A×25, ...). The load of a shared machine drifts
    over seconds; alternating lets both sides see the same drift, while blocks (not single
    alternating calls) keep one side's worker threads, still spinning after its call, from
    running into most of the other side's calls."""
    times: list[list[float]] = [[] for _ in fns]
    rounds = max(1, -(-calls // block))
    for r in range(rounds):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            fn = fns[i]
            for _ in range(block):
                start = time.perf_counter()
                fn()
                times[i].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def rss_bytes() -> int:
    """Resident set size of this process."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def import_time(module: str, repeat: int = 7) -> float | None:
    """Median wall time of ``import module`` in a fresh interpreter, minus the interpreter's own
    start-up (``python -c pass``). ``None`` when the module is not installed."""

    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        return time.perf_counter() - start

    try:
        run(f"import {module}")
    except subprocess.CalledProcessError:
        return None
    base = statistics.median(run("pass") for _ in range(repeat))
    return max(statistics.median(run(f"import {module}") for _ in range(repeat)) - base, 0.0)


def row(name: str, ours: float | None, peer: str = "", peer_s: float | None = None,
        note: str = "") -> dict[str, Any]:
    """One result row; ratio = peer / ours (> 1: we are faster)."""
    ratio = peer_s / ours if (ours and peer_s) else None
    return {"name": name, "ours_s": ours, "peer": peer, "peer_s": peer_s, "ratio": ratio,
            "note": note}
