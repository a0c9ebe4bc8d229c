"""Small models for the batch compiles, and what a batch leaves behind in the process."""

from __future__ import annotations

import os

import ascendir as air

OPS = ("Abs", "Exp", "Relu", "Neg", "Tanh", "Sigmoid")


def model(i: int, width: int = 64) -> bytes:
    """A small model, different for every ``i``: a chain of pointwise ops with a reduction,
    whose length and shape depend on ``i``."""
    g = air.Graph(f"m{i}")
    x = g.add_input("x", air.TensorDesc([4 + i % 5, width], air.float32))
    y = g.add_input("y", air.TensorDesc([4 + i % 5, width], air.float32))
    v = g.add_op("Add", [x, y], name="add")
    for k in range(2 + i % 7):
        v = g.add_op(OPS[(i + k) % len(OPS)], [v], name=f"op{k}")
    s = g.add_op("ReduceSumD", [v], name="sum", attrs={"axes": [1], "keep_dims": True})
    w = g.add_op("Mul", [v, s], name="mul")
    g.set_outputs([w, s])
    return bytes(g.to_bytes())


def rss_kb() -> int:
    """The resident set size of this process, in KiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def compile_threads() -> list[str]:
    """The names of this process's threads that a batch compile started and that must not
    outlive it."""
    names = []
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    # The package's shared helper threads (``ascendir-worker-<i>``, see set_num_threads) live as
    # long as the process; a batch's own threads must not outlive it.
    return [n for n in names if n.startswith("ascendir-") and not n.startswith("ascendir-worker")]
