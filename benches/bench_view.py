"""Looking at graphs: the issue's performance lines for dump folders, diffs and the viewer.

Rows (each the median of ``--repeat`` runs):

- ``dumps``: a ``DUMP_GRAPH_PATH`` tree of 100 stage dumps (``pid_1/ge_proto_000NN_<Stage>.txt``)
  of a 10k-node graph (G(10k) of ``benches/workloads.py``, stage ``k`` with ``k`` of its
  ``Add`` nodes retyped to ``Sub``): ``ascendir.dumps.open`` indexes it, then two stages are loaded
  and diffed (``dumps.diff``). Line: ≤ 1 s for the whole.
- ``json``: the 21k-node decoder of ``benches/models.py`` to Model Explorer's graph JSON text
  (``ascendir.explorer.graphs_json`` + ``json.dumps``). Line: ≤ 1 s.
- ``page`` (with ``--browser``; needs the ``explorer`` extra, Playwright and Chromium): the
  time from opening the page of ``ascendir view decoder.pb`` in headless Chromium until Model
  Explorer shows the graph's top level (its graph info panel). Line: ≤ 5 s.

    python benches/bench_view.py [--repeat 5] [--browser]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _median(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def make_dump_tree(root: Path, n: int = 10_000, stages: int = 100) -> None:
    """``stages`` GE text dumps of G(n) under ``root/pid_1``, stage ``k`` with ``k`` of its
    ``Add`` nodes retyped to ``Sub``."""
    import ascendir as air
    from workloads import build_g_n_bulk

    g = build_g_n_bulk(n)
    adds = [x for x in g.nodes if x.type == "Add"]
    pid = root / "pid_1"
    pid.mkdir(parents=True)
    for k in range(stages):
        if k:
            adds[k - 1].op_desc.type = "Sub"
        air.save(g, pid / f"ge_proto_{k:05d}_Stage{k}.txt")


def bench_dumps(root: Path, repeat: int) -> float:
    from ascendir import dumps

    def run() -> None:
        folder = dumps.open(root)
        assert len(folder) == 100
        d = dumps.diff(folder.get(10), folder.get(90))
        assert len(d.data["retyped"]) == 80, len(d.data["retyped"])

    run()
    return _median(run, repeat)


def bench_json(repeat: int) -> tuple[float, int]:
    import ascendir as air
    from ascendir import explorer
    from models import decoder

    g = air.onnx.load(decoder())
    text = ""

    def run() -> None:
        nonlocal text
        text = json.dumps(explorer.graphs_json(g), separators=(",", ":"))

    run()
    return _median(run, repeat), len(g)


def bench_page(repeat: int) -> float:
    import portpicker
    from playwright.sync_api import sync_playwright

    import ascendir as air
    from models import decoder

    tmp = Path(tempfile.mkdtemp(prefix="bench-view-"))
    path = tmp / "decoder.pb"
    air.save(air.onnx.load(decoder()), path)
    port = portpicker.pick_unused_port()
    proc = subprocess.Popen([sys.executable, "-m", "ascendir", "view", str(path), "--no-open",
                             "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    url = next(line.strip() for line in proc.stdout if line.startswith("http://"))
    times = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                        args=["--no-sandbox"])
            for _ in range(repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                start = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("info-panel table.info-attrs tr", timeout=600_000)
                times.append(time.perf_counter() - start)
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--browser", action="store_true", help="also time the page in Chromium")
    args = ap.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-dumps-") as tmp:
        make_dump_tree(Path(tmp))
        t = bench_dumps(Path(tmp), args.repeat)
    print(f"dumps: index 100 stage dumps of a 10k-node graph + load and diff two: "
          f"{t * 1e3:.0f} ms (limit 1000 ms)")
    ok &= t <= 1.0
    t, n = bench_json(args.repeat)
    print(f"json: the {n}-node decoder to Model Explorer's graph JSON text: {t * 1e3:.0f} ms "
          "(limit 1000 ms)")
    ok &= t <= 1.0
    if args.browser:
        t = bench_page(max(1, args.repeat // 2))
        print(f"page: the decoder's top level in headless Chromium: {t:.1f} s (limit 5 s)")
        ok &= t <= 5.0
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
