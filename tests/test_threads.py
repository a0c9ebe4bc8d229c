"""The thread knob (``set_num_threads`` / ``ASCENDIR_NUM_THREADS``): every parallel path honours
it, and the same input gets the same thread schedule on every call.

Parallel work notes the thread it runs on while a trace is on (``_core._thread_trace_start``);
the tests compare the threads seen with the calling thread.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import ascendir as air
from ascendir import _core

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "transformer_block.onnx")

# Enough ops for two decode parts (16,384 ops per thread at least) and several encode parts.
BIG = 40_000


def chain(n: int) -> air.Graph:
    """A Data node then ``n - 1`` Relu nodes in a chain."""
    types = np.ones(n, dtype=np.int64)
    types[0] = 0
    i = np.arange(1, n, dtype=np.int64)
    zeros = np.zeros(n - 1, dtype=np.int64)
    edges = np.stack([i - 1, zeros, i, zeros], axis=1)
    return air.Graph.from_edges(
        types, edges, type_names=["Data", "Relu"],
        ports={"Data": (["x"], ["y"]), "Relu": (["x"], ["y"])},
        desc=air.TensorDesc([1, 64], air.float32), name="chain",
    )


@pytest.fixture
def threads() -> Iterator[Callable[[int], None]]:
    """Set the thread count for a test and restore it afterwards."""
    before = air.get_num_threads()
    yield air.set_num_threads
    air.set_num_threads(before)


def traced(f: Callable[[], object]) -> list[int]:
    """The tokens of the threads that ran parallel work during ``f()`` (frees of graphs
    dropped before are waited for first, frees of those ``f`` drops are waited for after)."""
    air.release_memory()
    _core._thread_trace_start()
    try:
        f()
        air.release_memory()
    finally:
        seen = _core._thread_trace_stop()
    return seen


def test_set_and_get(threads: Callable[[int], None]) -> None:
    threads(3)
    assert air.get_num_threads() == 3
    threads(1)
    assert air.get_num_threads() == 1


@pytest.mark.parametrize("bad", [0, -1])
def test_a_count_below_one_is_rejected(bad: int) -> None:
    with pytest.raises(air.InvalidArgumentError, match=f"at least 1, got {bad}"):
        air.set_num_threads(bad)
    assert air.get_num_threads() >= 1


@pytest.mark.parametrize(("value", "want"), [("3", 3), ("1", 1), ("zero", None), ("0", None)])
def test_the_environment_variable_sets_the_default(value: str, want: int | None) -> None:
    env = dict(os.environ, ASCENDIR_NUM_THREADS=value)
    out = subprocess.run(
        [sys.executable, "-c", "import ascendir; print(ascendir.get_num_threads())"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout
    # A value that is not a positive integer is ignored: the machine's parallelism.
    expected = want if want is not None else len(os.sched_getaffinity(0))
    assert int(out) == expected


def test_one_thread_decodes_and_encodes_on_the_caller_only(
    threads: Callable[[int], None],
) -> None:
    data = chain(BIG).to_bytes()
    threads(1)
    me = _core._thread_token()
    assert traced(lambda: air.Graph.from_bytes(data)) == [me]
    g = air.Graph.from_bytes(data)
    assert traced(g.to_bytes) == [me]


@pytest.mark.parametrize("n", [1, 2])
def test_a_large_graph_is_freed_on_a_helper_only_with_helpers(
    threads: Callable[[int], None], n: int
) -> None:
    graphs = [chain(BIG)]
    threads(n)
    seen = traced(graphs.clear)
    if n == 1:
        assert seen == []
    else:
        assert len(seen) == 1 and _core._thread_token() not in seen


def test_a_small_graph_is_freed_on_the_caller(threads: Callable[[int], None]) -> None:
    graphs = [chain(500)]
    threads(2)
    assert traced(graphs.clear) == []


def test_two_threads_split_a_large_decode_the_same_way_every_time(
    threads: Callable[[int], None],
) -> None:
    data = chain(BIG).to_bytes()
    threads(2)
    me = _core._thread_token()
    for _ in range(3):
        seen = traced(lambda: air.Graph.from_bytes(data))
        # Two parts: one on the caller, one on the pool's one helper.
        assert len(seen) == 2 and me in seen


def test_two_threads_leave_a_small_decode_on_the_caller(threads: Callable[[int], None]) -> None:
    data = chain(500).to_bytes()
    threads(2)
    assert traced(lambda: air.Graph.from_bytes(data)) == [_core._thread_token()]


def test_one_thread_compiles_on_the_caller_only(threads: Callable[[int], None]) -> None:
    threads(1)
    me = _core._thread_token()
    out: list[air.compiler.CompiledModel] = []
    seen = traced(lambda: out.append(air.compile(EXAMPLE)))
    # Several kernels: the parallel phase had more than one item to share out.
    assert len(out[0].kernels) >= 2
    assert seen == [me]


def test_the_decoded_graph_does_not_depend_on_the_thread_count(
    threads: Callable[[int], None],
) -> None:
    data = chain(BIG).to_bytes()
    threads(1)
    one = air.Graph.from_bytes(data).to_bytes()
    threads(2)
    two = air.Graph.from_bytes(data).to_bytes()
    threads(3)
    three = air.Graph.from_bytes(data).to_bytes()
    assert one == two == three == data
