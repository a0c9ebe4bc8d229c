"""The optimality probe (``benches/optimality.py``): the greedy partition against the
exhaustive best legal one by bytes moved. The full probe (200 graphs of up to 10 lowerable
nodes) runs in ``benches/bench_compile.py``; figures in docs/BENCHMARKS.md (98% optimal, worst
gap 16% of the best saving). Here: 100 graphs of up to 8 nodes, and the cost model checked
against the compiler's own byte count."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import optimality  # noqa: E402


def test_cost_model_is_the_reports_byte_count():
    for s in range(60):
        p = optimality.random_probe(s, 10)
        model, report = optimality.greedy(p)
        assert model == report, s


def test_partitions_are_all_enumerated():
    items = [f"n{i}" for i in range(6)]
    parts = list(optimality.partitions(items))
    assert len(parts) == 203  # Bell(6)
    assert len({tuple(sorted(tuple(sorted(b)) for b in p)) for p in parts}) == 203


def test_greedy_is_optimal_on_small_graphs():
    r = optimality.probe(100, 8)
    assert r["optimal"] >= 0.95, r
    assert r["worst_gap"] <= 0.10, r
