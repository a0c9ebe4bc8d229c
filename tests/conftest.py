"""Shared fixtures."""

from __future__ import annotations

import os

import pytest

import ascendir as air


@pytest.fixture(autouse=True, scope="session")
def _compile_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The compile cache of the test session lives in a temporary directory (inherited by the
    subprocesses the tests start), never in the user's cache."""
    os.environ["ASCENDIR_CACHE_DIR"] = str(tmp_path_factory.mktemp("compile-cache"))


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


EVALUATE_TALLY = pytest.StashKey[list]()
"""Lines the evaluate conformance test adds to the terminal summary."""


@pytest.fixture
def evaluate_summary(request) -> list:
    """A list whose lines are printed in the terminal summary (the evaluate tallies)."""
    lines = request.config.stash.setdefault(EVALUATE_TALLY, [])
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    lines = config.stash.get(EVALUATE_TALLY, None)
    if lines:
        terminalreporter.section("air.evaluate on the ONNX conformance cases")
        for line in lines:
            terminalreporter.write_line(line)
