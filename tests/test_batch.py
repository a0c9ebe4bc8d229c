"""Batch compilation (docs/BATCH.md: order, threads, failures, executors, the cache, memory,
cancellation and threads): ``air.compile_many``, ``air.compile_iter``,
executors (threads, processes, a real Dask ``LocalCluster``), the compile cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

import ascendir as air
from support.batch import compile_threads, model


def key_bytes(cm: air.compiler.CompiledModel) -> tuple:
    """What must be identical between two compiles of one model: the graph bytes and the
    kernels (names, members, ImplGraphs)."""
    return (cm.to_bytes(), [(k.name, k.members, [i.to_bytes() for i in k.impls])
                            for k in cm.kernels])


# ---------------------------------------------------------------- C24 order and identity


def test_c24_many_models_match_sequential_compiles_in_input_order():
    models = [model(i) for i in range(100)]
    sequential = [key_bytes(air.compile(m)) for m in models]
    results = air.compile_many(models, jobs=4, cache="off")
    assert [r.index for r in results] == list(range(100))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert [key_bytes(r.value) for r in results] == sequential
    # Another jobs value, and the models as Graphs and as files: the same bytes.
    graphs = [air.Graph.from_bytes(m) for m in models[:10]]
    again = air.compile_many(graphs, jobs=1, cache="off")
    assert [key_bytes(r.value) for r in again] == sequential[:10]


def test_paths_are_streamed_and_the_iterator_yields_as_models_finish(tmp_path: Path):
    paths = []
    for i in range(12):
        p = tmp_path / f"m{i}.pb"
        p.write_bytes(model(i))
        paths.append(str(p))
    seen = []
    for i, r in air.compile_iter(paths, jobs=2, cache="off"):
        assert r.ok and r.source == paths[i]
        seen.append(i)
    assert sorted(seen) == list(range(12))
    # At most `jobs` models are loaded at once (the batch's own counter).
    batch = air._core.compiler.Batch(paths, air.CompileOptions().to_json(), 2)
    n = 0
    while n < len(paths):
        if batch.next(0.1) is not None:
            n += 1
    batch.join()
    done, failed, total, in_flight, peak = batch.progress()
    assert (done, failed, total, in_flight) == (12, 0, 12, 0)
    assert 1 <= peak <= 2


# ---------------------------------------------------------------- C27 failures


def test_c27_a_failing_model_fails_alone_and_names_stage_and_node(tmp_path: Path):
    bad_infer = air.Graph("bad")
    a = bad_infer.add_input("a", air.TensorDesc([2, 3], air.float32))
    b = bad_infer.add_input("b", air.TensorDesc([4, 5], air.float32))
    bad_infer.set_outputs([bad_infer.add_op("Add", [a, b], name="the_add")])
    models = [model(0), b"\x08\x07garbage", str(tmp_path / "missing.onnx"), bad_infer, model(1)]
    results = air.compile_many(models, jobs=2, cache="off")
    assert [r.ok for r in results] == [True, False, False, False, True]
    assert results[1].error.stage == "load"
    assert results[2].error.stage == "load" and "missing.onnx" in str(results[2].error)
    e = results[3].error
    assert isinstance(e, air.CompileError) and isinstance(e, air.AscendIRError)
    assert (e.stage, e.node) == ("infer", "the_add")
    with pytest.raises(air.CompileError) as ei:
        air.compile_many(models, jobs=2, on_error="raise", cache="off")
    assert ei.value.stage in ("load", "infer")


def test_bad_arguments_are_compile_errors():
    with pytest.raises(air.CompileError):
        air.compile_many([model(0)], jobs=0)
    with pytest.raises(air.CompileError):
        air.compile_many([model(0)], cache="sometimes")  # type: ignore[arg-type]
    with pytest.raises(air.CompileError):
        air.compile_many([model(0)], on_error="ignore")  # type: ignore[arg-type]
    assert air.compile_many([]) == []


# ---------------------------------------------------------------- C25 the GIL


@pytest.mark.serial
def test_c25_a_python_thread_keeps_running_while_a_batch_compiles():
    models = [model(i, width=256) for i in range(40)]
    ticks: list[float] = []
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t0 = time.perf_counter()
    t.start()
    # One compile thread: a core stays free, so what is measured is the GIL, not the CPU.
    results = air.compile_many(models, jobs=1, cache="off")
    t1 = time.perf_counter()
    stop.set()
    t.join()
    assert all(r.ok for r in results)
    # The counting thread was held up (gaps over 20 ms) for at most 10 % of the batch's wall
    # time: the compile itself ran without the GIL.
    inside = [x for x in ticks if t0 <= x <= t1]
    gaps = [b - a for a, b in zip(inside, inside[1:], strict=False) if b - a > 0.02]
    assert sum(gaps) <= 0.1 * (t1 - t0), (sum(gaps), t1 - t0)


# ---------------------------------------------------------------- threads on air.compile


def test_compile_from_four_threads_on_different_and_on_the_same_graph():
    graphs = [air.Graph.from_bytes(model(i)) for i in range(4)]
    expected = [key_bytes(air.compile(g)) for g in graphs]
    before = [g.to_bytes() for g in graphs]
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda g: key_bytes(air.compile(g)), graphs * 3))
    assert got == expected * 3
    same = graphs[0]
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda _: key_bytes(air.compile(same)), range(8)))
    assert got == [expected[0]] * 8
    assert [g.to_bytes() for g in graphs] == before  # the inputs are read-only to the compiler


# ---------------------------------------------------------------- C28 executors and Dask


def _check_same(results, models):
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert [key_bytes(r.value) for r in results] == [key_bytes(air.compile(m)) for m in models]


def test_c28_thread_and_process_pool_executors():
    models = [model(i) for i in range(6)]
    with ThreadPoolExecutor(2) as ex:
        _check_same(air.compile_many(models, executor=ex, cache="off"), models)
    with ProcessPoolExecutor(2) as ex:
        results = air.compile_many(models, executor=ex, cache="off")
        _check_same(results, models)
        assert all(r.task_key and r.task_key.startswith("ascendir-compile-") for r in results)
        # A failing model through a process: plain data comes back, the error is typed.
        bad = air.compile_many([b"\x08\x07garbage"], executor=ex, cache="off")
        assert not bad[0].ok and bad[0].error.stage == "load"


def test_the_worker_checks_the_client_version():
    from ascendir.compiler.batch import _compile_task

    out = _compile_task(model(0), air.CompileOptions().to_json(), "0.0.0-other", False, "off")
    assert out[0] == "error" and "version mismatch" in out[3]


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_c28_dask_local_cluster_same_bytes_and_keys_reused(dask_client):
    models = [model(i) for i in range(8)]
    first = air.compile_many(models, executor=dask_client, cache="off")
    _check_same(first, models)
    second = air.compile_many(models, executor=dask_client, cache="off")
    _check_same(second, models)
    # Content-addressed keys: the same model is the same task, whoever submits it.
    assert [r.task_key for r in first] == [r.task_key for r in second]
    assert len({r.task_key for r in first}) == len(models)
    # client.get_executor() is a concurrent.futures.Executor: the generic path.
    _check_same(air.compile_many(models[:3], executor=dask_client.get_executor(),
                                 cache="off"), models[:3])


def test_dask_back_to_back_batches_of_the_same_models(dask_client):
    """The same models submitted again right after a batch finished run again: finishing a batch
    must not cancel its content-keyed tasks, or the cancel can reach the scheduler after the next
    batch's submission of the same keys and cancel those."""
    models = [model(i) for i in range(4)]
    for _ in range(10):
        results = air.compile_many(models, executor=dask_client, cache="off")
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:2]


def test_dask_resources_send_tasks_only_to_workers_that_have_them(tmp_path: Path):
    """``resources=`` restricts every task to the workers started with that resource: with one
    plain worker and one ``--resources ascendir=1`` worker (a real ``dask worker`` process),
    every compile task runs on the second."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dask_cli = Path(sys.executable).with_name("dask")
        worker = subprocess.Popen(
            [str(dask_cli), "worker", cluster.scheduler_address, "--nthreads", "1",
             "--resources", "ascendir=1", "--no-dashboard", "--name", "reserved"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            client.wait_for_workers(2, timeout=120)
            reserved = {a for a, w in client.scheduler_info()["workers"].items()
                        if w.get("resources", {}).get("ascendir") == 1}
            assert len(reserved) == 1
            models = [model(i) for i in range(6)]
            with distributed.get_task_stream(client) as stream:
                res = air.compile_many(models, executor=client, cache="off",
                                       resources={"ascendir": 1})
            _check_same(res, models)
            ran = {t["worker"] for t in stream.data
                   if str(t["key"]).startswith("ascendir-compile-")}
            assert ran == reserved
        finally:
            worker.terminate()
            worker.wait(timeout=60)


def test_resources_are_checked_and_need_dask():
    with pytest.raises(air.CompileError, match="Dask"):
        air.compile_many([model(0)], resources={"ascendir": 1})
    with pytest.raises(air.CompileError, match="Dask"):
        with ThreadPoolExecutor(1) as ex:
            air.compile_many([model(0)], executor=ex, resources={"a": 1})
    r = _cli(["x.pb", "-o", "o", "--resources", "ascendir=1"], Path.cwd())
    assert r.returncode == 2 and "--scheduler" in r.stderr
    r = _cli(["x.pb", "-o", "o", "--scheduler", "tcp://127.0.0.1:1", "--resources", "a=0"],
             Path.cwd())
    assert r.returncode == 2 and "positive" in r.stderr


# ---------------------------------------------------------------- C30 the cache


def test_c30_the_second_run_comes_from_the_cache(tmp_path: Path):
    models = [model(i) for i in range(10)]
    cold = air.compile_many(models, jobs=2, cache="readwrite", cache_dir=tmp_path)
    assert all(r.ok and not r.cached for r in cold)
    warm = air.compile_many(models, jobs=2, cache="readwrite", cache_dir=tmp_path)
    assert all(r.ok and r.cached for r in warm)
    assert [key_bytes(r.value) for r in warm] == [key_bytes(r.value) for r in cold]
    # Read-only mode reads; off ignores it.
    assert all(r.cached for r in air.compile_many(models, cache="read", cache_dir=tmp_path))
    assert not any(r.cached for r in air.compile_many(models, cache="off", cache_dir=tmp_path))


def test_kernels_come_from_the_cache_when_the_model_is_new(tmp_path: Path):
    """Two models that differ outside their kernels: the second reuses the first's kernels
    (the report counts them) and compiles to the same kernels."""
    def with_tail(extra: bool) -> air.Graph:
        g = air.Graph("m")
        x = g.add_input("x", air.TensorDesc([8, 64], air.float32))
        v = g.add_op("Exp", [g.add_op("Abs", [x], name="abs")], name="exp")
        if extra:  # removed by simplify: the kernel is the same
            v = g.add_op("Identity", [v], name="id")
        g.set_outputs([v])
        return g

    a = air.compile_many([with_tail(False)], cache="readwrite", cache_dir=tmp_path)[0].value
    assert a.report.data["kernels_from_cache"] == 0
    b_res = air.compile_many([with_tail(True)], cache="readwrite", cache_dir=tmp_path)[0]
    assert not b_res.cached
    b = b_res.value
    assert b.report.data["kernels_from_cache"] == len(b.kernels) == 1
    assert all(k["from_cache"] for k in b.report.data["kernels"])
    assert [i.to_bytes() for i in b.kernels[0].impls] == [i.to_bytes() for i in a.kernels[0].impls]


# ---------------------------------------------------------------- memory and cancellation


@pytest.mark.serial
def test_rss_stays_flat_over_1000_models():
    script = textwrap.dedent("""
        import json, os, sys
        sys.path.insert(0, sys.argv[1])
        import ascendir as air
        from support.batch import model, rss_kb
        models = [model(i % 50) for i in range(1000)]
        rss = {}
        for n, (i, r) in enumerate(air.compile_iter(models, jobs=2, cache="off"), 1):
            assert r.ok
            if n in (100, 1000):
                rss[n] = rss_kb()
        print(json.dumps(rss))
    """)
    out = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=900, check=True)
    rss = {int(k): v for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}
    assert rss[1000] < rss[100] * 1.05, rss


@pytest.mark.serial
def test_keyboard_interrupt_cancels_promptly_and_stops_the_threads():
    models = [model(i % 50, width=256) for i in range(2000)]
    seen: list[tuple[int, int]] = []

    def interrupt_after_the_first(done: int, total: int, failed: int) -> None:
        # Ctrl-C as the calling thread sees it (a KeyboardInterrupt raised in it), once a model
        # is done: the test does not depend on how fast a model compiles, nor on when the
        # interpreter gets round to a simulated signal.
        first = done >= 1 and not any(d >= 1 for d, _ in seen)
        seen.append((done, failed))
        if first:
            raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        air.compile_many(models, jobs=2, cache="off", progress=interrupt_after_the_first)
    assert time.perf_counter() - t0 < 60
    # Cancelled: the models not started were reported as failed (cancelled), most of them.
    done, failed = seen[-1]
    assert done == len(models) and failed > len(models) // 2, seen[-1]
    deadline = time.perf_counter() + 10
    while compile_threads() and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert compile_threads() == []


_SIGINT_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    sys.path.insert(0, sys.argv[1])
    import ascendir as air
    from support.batch import compile_threads, model

    distinct = [model(i, width=256) for i in range(50)]
    models = [distinct[i % 50] for i in range(30000)]
    told = []
    stopped = {}

    def progress(done, total, failed):
        if done >= 1 and not told:
            told.append(done)
            print("started", flush=True)

    try:
        air.compile_many(models, jobs=2, cache="off", progress=progress)
    except KeyboardInterrupt:
        stopped["at"] = time.monotonic()
    deadline = time.monotonic() + 10
    while compile_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps({"interrupted": "at" in stopped, "threads": compile_threads()}),
          flush=True)
    sys.exit(130 if "at" in stopped else 0)
""")


# Starts a command with SIGINT at its default disposition, as a foreground process has it: a
# process started from a background job of a non-interactive shell (`cmd &` in a script, many CI
# runners) inherits SIGINT ignored (POSIX), and so does every process it starts; Python then
# installs no KeyboardInterrupt handler and the signals below would be ignored. Reset, then exec
# the command itself: the process signalled is the command, whatever started the tests.
_DEFAULT_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                   "os.execv(sys.argv[1], sys.argv[1:])")


def _with_default_sigint(argv: list[str]) -> list[str]:
    return [sys.executable, "-c", _DEFAULT_SIGINT, *argv]


def _signal_when(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> float:
    """Send SIGINT to ``proc`` once ``ready()`` holds; the monotonic time it was sent."""
    deadline = time.monotonic() + 300
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the batch never started"
        time.sleep(0.02)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    return sent


@pytest.mark.serial
def test_a_real_sigint_cancels_compile_many_promptly_and_stops_its_threads(tmp_path: Path):
    # A real signal, delivered by the OS to a process whose main thread waits in compile_many
    # (the binding's wait checks for signals between its waits without the GIL).
    script = tmp_path / "batch_sigint.py"
    script.write_text(_SIGINT_SCRIPT)
    proc = subprocess.Popen(
        _with_default_sigint([sys.executable, str(script), str(Path(__file__).parent)]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.strip() == "started", (first, proc.communicate())
    sent = _signal_when(proc, lambda: True)
    out, err = proc.communicate(timeout=120)
    took = time.monotonic() - sent
    assert proc.returncode == 130, (out, err)
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"interrupted": True, "threads": []}, result
    assert took < 60, took


@pytest.mark.serial
def test_a_real_sigint_stops_the_cli_with_exit_130(tmp_path: Path):
    src = tmp_path / "models"
    src.mkdir()
    distinct = [model(i, width=256) for i in range(50)]
    for i in range(5000):
        (src / f"m{i:04d}.pb").write_bytes(distinct[i % 50])
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _with_default_sigint([sys.executable, "-m", "ascendir.cli", "compile", str(src),
                              "-o", str(out), "--jobs", "2", "--no-cache"]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    # Signalled once the first model's outputs are written: the batch is under way.
    sent = _signal_when(proc, lambda: out.is_dir() and any(out.iterdir()))
    stdout, stderr = proc.communicate(timeout=120)
    took = time.monotonic() - sent
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupted" in stderr
    assert took < 60, took
    # Not every model was compiled: the batch stopped.
    assert len(list(out.iterdir())) < 5000


def test_available_cpus_honours_the_affinity_mask():
    n = air.compiler.available_cpus()
    assert 1 <= n <= len(os.sched_getaffinity(0))


def test_progress_callable_is_called_from_the_calling_thread():
    calls = []
    me = threading.get_ident()
    air.compile_many([model(i) for i in range(5)], jobs=2, cache="off",
                     progress=lambda d, t, f: calls.append((d, t, f, threading.get_ident())))
    assert calls and calls[-1][:3] == (5, 5, 0)
    assert {c[3] for c in calls} == {me}
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


# ---------------------------------------------------------------- C29 the CLI


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ascendir.cli", "compile", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    d = tmp_path / "models"
    d.mkdir()
    for i in range(5):
        (d / f"m{i}.pb").write_bytes(model(i))
    (d / "notes.md").write_text("not a model")
    return d


def test_c29_cli_directories_globs_jobs_and_exit_codes(model_dir: Path, tmp_path: Path):
    r = _cli([str(model_dir), "-o", "out", "--jobs", "2", "--dump-stages"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "5 compiled, 0 failed" in r.stdout
    for i in range(5):
        assert f"m{i}" in r.stdout
        assert (tmp_path / "out" / f"m{i}" / f"m{i}.om").exists()
        stages = sorted(os.listdir(tmp_path / "out" / f"m{i}" / "stages"))
        # One file per stage of the pipeline, numbered as in docs/COMPILER.md.
        assert stages == ["00_load.txt", "01_validate.txt", "02_infer.txt", "03_symbols.json",
                          "04_simplify.txt", "05_lower.json", "06_fuse.json", "07_realize.txt",
                          "08_schedule.txt", "09_tile.json", "12_package.txt"]
        text = (tmp_path / "out" / f"m{i}" / "stages" / "07_realize.txt").read_text()
        assert "== autofuse_" in text
    # A second run comes from the cache; --no-cache compiles again.
    again = _cli([str(model_dir / "m*.pb"), "-o", "out2", "-j", "2", "--dump-stages"],
                 tmp_path)
    assert again.returncode == 0 and again.stdout.count("cached") == 5, again.stdout
    fresh = _cli([str(model_dir / "m*.pb"), "-o", "out3", "--no-cache"], tmp_path)
    assert fresh.returncode == 0 and "cached" not in fresh.stdout
    (model_dir / "broken.pb").write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    some = _cli([str(model_dir), "-o", "out4", "--no-cache"], tmp_path)
    assert some.returncode == 1
    assert some.stderr.count("ascendir: error:") == 1 and "broken.pb" in some.stderr
    assert "5 compiled, 1 failed" in some.stdout
    # Usage errors exit 2.
    assert _cli([str(model_dir / "nothing*.pb"), "-o", "o"], tmp_path).returncode == 2
    assert _cli([str(model_dir), "-o", "o", "--jobs", "0"], tmp_path).returncode == 2
    assert _cli([str(model_dir), "-o", "o", "--no-cache", "--cache-dir", "x"],
                tmp_path).returncode == 2


def test_c29_cli_fail_fast_stops_the_batch(model_dir: Path, tmp_path: Path):
    (model_dir / "a_broken.pb").write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    r = _cli([str(model_dir), "-o", "out", "--jobs", "1", "--fail-fast", "--no-cache"],
             tmp_path)
    assert r.returncode == 1
    assert "a_broken.pb" in r.stderr and "skipped" in r.stdout


def test_c29_cli_scheduler_compiles_on_a_dask_cluster(model_dir: Path, tmp_path: Path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        r = _cli([str(model_dir), "-o", "out", "--scheduler", cluster.scheduler_address,
                  "--no-cache"], tmp_path)
        assert r.returncode == 0, r.stderr
        assert "5 compiled, 0 failed" in r.stdout
        assert (tmp_path / "out" / "m3" / "m3.om").exists()
        sf = tmp_path / "scheduler.json"
        sf.write_text(json.dumps({"address": cluster.scheduler_address}))
        r = _cli([str(model_dir / "m0.pb"), "-o", "out5", "--scheduler-file", str(sf)],
                 tmp_path)
        assert r.returncode == 0, r.stderr
