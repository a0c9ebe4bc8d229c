"""Batch compilation (issue: batch): ``air.compile_many`` against what users would do instead.

- a sequential loop of ``air.compile`` (target: speed-up ≥ 0.8 × cores used);
- a ``multiprocessing.Pool`` of as many processes calling ``air.compile`` per model (target:
  ≥ 1.5× the throughput at equal cores);
- the compile cache: the second run of the same batch (target: ≥ 10× faster);
- ``air.compile`` from 4 Python threads against the same calls one after another;
- memory: one large model (G(1M), a random DAG of lowerable ops) among 200 small ones, given as
  paths: peak RSS of the batch against the large model's own compile, and the most models in
  flight at once (at most ``jobs``).

The batch is 64 BERT-layout models of 1–4 layers and hidden sizes 32–96 (``models.bert``),
all different (vocabulary sizes), given as ONNX bytes; every compile is CPU-bound (cache off
except in the cache rows).
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import row  # noqa: E402


def _models(n: int) -> list[bytes]:
    import models

    return [models.bert(layers=1 + i % 4, hidden=32 * (1 + i % 3), heads=4, vocab=100 + i)
            .SerializeToString()
            for i in range(n)]


def _compile_bytes(data: bytes) -> bytes:
    import ascendir as air

    return air.compile(data).to_bytes()


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


_LARGE = """
import json, os, sys, time
sys.path.insert(0, {here!r})
import ascendir as air
import workloads
from timing import rss_bytes

n_large, n_small, jobs, mode = {n_large}, {n_small}, {jobs}, {mode!r}
d = {tmp!r}
large = os.path.join(d, "large.pb")
if not os.path.exists(large):
    with open(large, "wb") as f:
        f.write(bytes(workloads.build_g_n_bulk(n_large).to_bytes()))
    small = workloads.build_g_n_bulk(200)
    for i in range(n_small):
        with open(os.path.join(d, f"small{{i:03d}}.pb"), "wb") as f:
            f.write(bytes(small.to_bytes()))
paths = [large] + [os.path.join(d, f"small{{i:03d}}.pb") for i in range(n_small)]
base = rss_bytes()
t = time.perf_counter()
if mode == "alone":
    air.compile(large)
    peak_models = 1
else:
    batch = air._core.compiler.Batch(paths, air.CompileOptions().to_json(), jobs)
    got = 0
    while got < len(paths):
        item = batch.next(0.1)
        if item is not None:
            got += 1
            assert not isinstance(item[1], air.CompileError), item[1]
    batch.join()
    peak_models = batch.progress()[4]
with open("/proc/self/status") as f:
    hwm = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM")][0]
print(json.dumps({{"base": base, "hwm": hwm, "seconds": time.perf_counter() - t,
                  "peak_models": peak_models}}))
"""


def _large(n_large: int, n_small: int, jobs: int, mode: str, tmp: str) -> dict:
    import json

    code = _LARGE.format(here=str(HERE), n_large=n_large, n_small=n_small, jobs=jobs,
                         mode=mode, tmp=tmp)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[dict]:
    """Rows: batch vs loop, vs a process pool, the cache, threads, memory (each row is also
    printed on stderr as it is measured)."""
    import ascendir as air

    class _Rows(list):  # type: ignore[type-arg]
        def append(self, r: dict) -> None:
            print(r, file=sys.stderr, flush=True)
            super().append(r)

    cores = air.compiler.available_cpus()
    n = 16 if quick else 64
    repeat = 1 if quick else 3
    models = _models(n)
    air.compile(models[0])  # warm: registries, lazy imports

    seq = _best(lambda: [air.compile(m) for m in models], repeat)
    batch = _best(lambda: air.compile_many(models, jobs=cores, cache="off"), repeat)
    # The same loop on one thread: air.compile builds a model's final kernels on the
    # package's threads, so the default loop above already uses several cores for part of
    # each compile; this is the loop whose work is all on one core.
    threads = air.get_num_threads()
    air.set_num_threads(1)
    try:
        seq1 = _best(lambda: [air.compile(m) for m in models], repeat)
    finally:
        air.set_num_threads(threads)
    rows = _Rows()
    rows.append(row(f"compile_many {n} models, jobs={cores}", batch, "sequential loop", seq,
                    f"speed-up {seq / batch:.2f} on {cores} cores (target >= "
                    f"{0.8 * cores:.1f} = 0.8 x cores); the loop's air.compile uses "
                    f"{threads} threads for each model's final kernels"))
    rows.append(row(f"compile_many {n} models, jobs={cores}", batch,
                    "sequential loop, one thread", seq1,
                    f"speed-up {seq1 / batch:.2f} on {cores} cores (target >= "
                    f"{0.8 * cores:.1f}); air.set_num_threads(1) for the loop"))

    ctx = multiprocessing.get_context("forkserver")

    def pool() -> None:
        with ctx.Pool(cores) as p:
            p.map(_compile_bytes, models)

    pooled = _best(pool, repeat)
    rows.append(row(f"compile_many {n} models vs a process pool", batch,
                    f"multiprocessing.Pool({cores})", pooled,
                    "target >= 1.5 (pool start-up included: a user's script pays it)"))

    # Each repeat fills a new cache directory (cold) and reads it back (warm); best of each,
    # like the other rows.
    colds, warms = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cdir:
            t = time.perf_counter()
            cold = air.compile_many(models, jobs=cores, cache_dir=cdir)
            colds.append(time.perf_counter() - t)
            t = time.perf_counter()
            warm = air.compile_many(models, jobs=cores, cache_dir=cdir)
            warms.append(time.perf_counter() - t)
            assert all(r.cached for r in warm) and not any(r.cached for r in cold)
    t_cold, t_warm = min(colds), min(warms)
    rows.append(row(f"compile_many {n} models, second run (cache)", t_warm,
                    "first run (cache cold)", t_cold, "target >= 10"))

    four = [air.onnx.load(m) for m in models[:4]]
    one_by_one = _best(lambda: [air.compile(g) for g in four], repeat)

    def threads() -> None:
        with ThreadPoolExecutor(4) as ex:
            list(ex.map(air.compile, four))

    threaded = _best(threads, repeat)
    rows.append(row("air.compile from 4 threads", threaded, "the 4 calls in sequence",
                    one_by_one, f"{cores} cores"))

    n_large = int(os.environ.get("ASCENDIR_BENCH_LARGE_NODES", 100_000 if quick else 1_000_000))
    with tempfile.TemporaryDirectory() as tmp:
        alone = _large(n_large, 200, cores, "alone", tmp)
        mixed = _large(n_large, 200, cores, "batch", tmp)
    grow = lambda r: (r["hwm"] - r["base"]) / 2**20  # noqa: E731
    rows.append(row(f"batch G({n_large // 1000}k) + 200 small models, peak RSS growth (MiB)",
                    grow(mixed), f"air.compile of G({n_large // 1000}k) alone", grow(alone),
                    f"at most {mixed['peak_models']} models in flight (jobs={cores}); "
                    f"batch {mixed['seconds']:.1f} s, alone {alone['seconds']:.1f} s "
                    "(the 'ours' and 'peer' columns are MiB here, not seconds)"))
    return list(rows)


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
