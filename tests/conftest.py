"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ascendir as air


def _run_temp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary directory of the whole run: under pytest-xdist each worker's base
    directory (``popen-gw<N>``) sits in the one its controller made for the run."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def _cpu_kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C++ kernels the CPU target builds (``<cache>/cpu``, see
    ``ascendir.asc._cxx.build_library``): one directory for the whole run, shared by the
    pytest-xdist workers. A build's key is the SHA-256 of the compiler's identity and command,
    the machine's CPU flags, every flag and every source file, and a build is written
    atomically, so a library found there is the one this build would make. The same kernel is
    then built once per run, not once per worker or per test."""
    kernels = _run_temp_root(tmp_path_factory) / "cpu-kernel-cache"
    kernels.mkdir(exist_ok=True)
    return kernels


@pytest.fixture(autouse=True, scope="session")
def _fixture_compile_cache_dir(tmp_path_factory: pytest.TempPathFactory,
                               _cpu_kernel_cache: Path) -> None:
    """The compile cache of the module- and session-scoped fixtures, which are set up before a
    test's own (``_compile_cache_dir``): a temporary directory of the session, never the
    user's cache."""
    cache = tmp_path_factory.mktemp("fixture-compile-cache")
    (cache / "cpu").symlink_to(_cpu_kernel_cache, target_is_directory=True)
    os.environ["ASCENDIR_CACHE_DIR"] = str(cache)


@pytest.fixture(autouse=True)
def _compile_cache_dir(tmp_path_factory: pytest.TempPathFactory, _cpu_kernel_cache: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a compile cache of its own in a temporary directory (inherited by the
    subprocesses it starts), never the user's cache: what one test compiles is never another
    test's cache hit, whatever the order or the worker. Only the C++ kernel builds
    (``<cache>/cpu``) are shared, since their key covers everything a build depends on."""
    cache = tmp_path_factory.mktemp("compile-cache")
    (cache / "cpu").symlink_to(_cpu_kernel_cache, target_is_directory=True)
    monkeypatch.setenv("ASCENDIR_CACHE_DIR", str(cache))


@pytest.fixture
def td() -> air.TensorDesc:
    return air.TensorDesc([1, 64], air.float32)


@pytest.fixture
def chain(td: air.TensorDesc) -> air.Graph:
    """x -> relu -> add(relu, x) -> NetOutput."""
    g = air.Graph("chain")
    x = g.add_input("x", td)
    relu = g.add_op("Relu", [x], name="relu", input_names=["x"], outputs=["y"], output_descs=[td])
    add = g.add_op("Add", [relu, x], name="add", input_names=["x1", "x2"], outputs=["y"],
                   output_descs=[td])
    g.set_outputs([add])
    return g


SUMMARY = "terminal-summary-line"
"""``user_properties`` key of a line for the terminal summary: ``(section title, line)``. Lines
travel in the test reports, so that they reach the terminal summary from pytest-xdist workers
too (a worker's own state never does)."""

_SECTIONS: dict[str, list[str]] = {}
_CORPUS: dict[str, dict] = {}


def _section(request, title: str) -> list:
    """A list whose lines, once the test is done, go into the summary section ``title``."""
    lines: list[str] = []

    def flush() -> None:
        request.node.user_properties.extend((SUMMARY, (title, line)) for line in lines)

    request.addfinalizer(flush)
    return lines


def pytest_runtest_logreport(report) -> None:
    """Gather the summary lines and the corpus rows (``tests/zoo``) from the reports; under
    pytest-xdist this runs in the controller, which prints the summary."""
    if report.when != "teardown":
        return
    for key, value in getattr(report, "user_properties", ()):
        if key == SUMMARY:
            title, line = value
            _SECTIONS.setdefault(title, []).append(line)
        elif key == "zoo":
            _CORPUS[value["name"]] = value


@pytest.fixture
def evaluate_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the evaluate tallies)."""
    return _section(request, "air.evaluate on the ONNX conformance cases")


@pytest.fixture
def export_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the export tallies)."""
    return _section(request, "ONNX export of the conformance cases")


@pytest.fixture
def infer_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the infer_shapes tallies)."""
    return _section(request, "infer_shapes on the ONNX conformance cases")


@pytest.fixture
def mapping_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the node-mapping tally)."""
    return _section(request, "ONNX node mapping over the conformance cases")


@pytest.fixture
def suites_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the tallies of the ONNX backend
    test data suites: pytorch-converted, pytorch-operator, simple, light)."""
    return _section(request, "ONNX backend test data suites")


@pytest.fixture
def real_width_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the corpus at real width)."""
    return _section(request, "real-architecture corpus at real width: compile")


def _corpus_table(terminalreporter) -> None:
    """The real-architecture corpus, stage by stage (rows of ``tests/zoo/test_zoo.py``)."""
    stages = next(iter(_CORPUS.values()))["stages"]
    terminalreporter.section("real-architecture corpus: stage by stage")
    head = f"{'model':18s} {'family':18s} " + " ".join(f"{s[:14]:14s}" for s in stages)
    terminalreporter.write_line(head + "  nodes kernels attention import-s compile-s")
    for name, r in sorted(_CORPUS.items()):
        cells = " ".join(f"{('ok' if r['outcome'].get(s) == 'ok' else 'FAIL'):14s}"
                         for s in stages)
        f = r["figures"]
        terminalreporter.write_line(
            f"{name:18s} {r['family']:18s} {cells}  {f.get('nodes', '-')!s:>5} "
            f"{f.get('kernels', '-')!s:>7} {f.get('attention', '-')!s:>9} "
            f"{f.get('import s', 0):8.3f} "
            f"{f.get('compile s', 0):9.3f}")
    totals = {s: sum(r["seconds"].get(s, 0.0) for r in _CORPUS.values()) for s in stages}
    terminalreporter.write_line("seconds per stage over the corpus: " + ", ".join(
        f"{s} {v:.1f}" for s, v in totals.items()))
    for name, r in sorted(_CORPUS.items()):
        for s, o in r["outcome"].items():
            if o != "ok":
                terminalreporter.write_line(f"  {name} / {s}: {o}")


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    for title, lines in _SECTIONS.items():
        if lines:
            terminalreporter.section(title)
            for line in lines:
                terminalreporter.write_line(line)
    if _CORPUS:
        _corpus_table(terminalreporter)
