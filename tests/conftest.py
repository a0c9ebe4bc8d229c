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


@pytest.fixture(autouse=True, scope="session")
def _compile_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The compile cache of the test session lives in a temporary directory (inherited by the
    subprocesses the tests start), never in the user's cache.

    Each session (each pytest-xdist worker) has a compile cache of its own, so that what one
    test compiles is not another's cache hit. The C++ kernels the CPU target builds
    (``<cache>/cpu``, see ``ascendir.asc._cxx.build_library``) are one directory for the whole
    run instead, shared by the workers: a build's key is the SHA-256 of the compiler's identity
    and command, the machine's CPU flags, every flag and every source file, and a build is
    written atomically, so a library found there is the one this build would make. The same
    kernel is then built once per run, not once per worker."""
    cache = tmp_path_factory.mktemp("compile-cache")
    kernels = _run_temp_root(tmp_path_factory) / "cpu-kernel-cache"
    kernels.mkdir(exist_ok=True)
    (cache / "cpu").symlink_to(kernels, target_is_directory=True)
    os.environ["ASCENDIR_CACHE_DIR"] = str(cache)


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


SUMMARIES = pytest.StashKey[dict]()
"""Sections of the terminal summary: title -> lines (the conformance tallies)."""


def _section(request, title: str) -> list:
    return request.config.stash.setdefault(SUMMARIES, {}).setdefault(title, [])


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


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    for title, lines in config.stash.get(SUMMARIES, {}).items():
        if lines:
            terminalreporter.section(title)
            for line in lines:
                terminalreporter.write_line(line)
