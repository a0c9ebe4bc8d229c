"""Running a compiled kernel's HintGraph on the feeds of its GE inputs, and compiling a graph
whose lowering row under test may be a one-op kernel (with the default lifting checked)."""

from __future__ import annotations

import json

import numpy as np

import ascendir as air
from ascendir import asc


def run_hint(cm, k, feeds):
    """Evaluate kernel ``k``'s HintGraph (``asc.evaluate``) on the feeds of its GE inputs,
    given by producer name; returns its one output."""
    data = sorted((n for n in k.hint.nodes if n.type == "Data"),
                  key=lambda n: n.attr.ir_attr.index)
    srcs = cm.graph.node(k.name).in_data_nodes
    inputs = {d.name: np.ascontiguousarray(feeds[s.name]).reshape(-1)
              for d, s in zip(data, srcs, strict=True)}
    (out,) = (n for n in k.hint.nodes if n.type == "Output")
    return np.asarray(asc.evaluate(k.hint, inputs, {})[out.name])


def compile_row(g, evaluate=True, **kw):
    """The compile of a graph whose row under test may be a one-op kernel.

    At the default options a cluster of fewer than two compute ops is lifted back to its GE
    node: that compile is checked first (every kernel has two or more compute ops, every
    lifted cluster below the minimum says so, and the compiled graph evaluates as the
    original). The compile returned is the one with ``min_cluster_ops=1``, where the row's
    own kernel exists to be tested. ``evaluate=False`` for the rows ``air.evaluate`` has no
    kernel for (the gradient ops outside the op library)."""
    default = air.compile(g, options=air.CompileOptions(**kw))
    rep = json.loads(default.report.to_json())
    assert all(k["compute_ops"] >= 2 for k in rep["kernels"]), rep["kernels"]
    lifted = rep.get("lifted", [])
    kept = air.compile(g, options=air.CompileOptions(min_cluster_ops=1, **kw))
    for k in json.loads(kept.report.to_json())["kernels"]:
        if k["compute_ops"] < 2:
            assert any(set(k["members"]) <= set(c["members"])
                       and "min_cluster_ops" in c["reason"] for c in lifted), (k, lifted)
    feeds = _feeds(g) if evaluate else None
    if feeds is not None:
        want = air.evaluate(g, feeds)
        for got in (air.evaluate(default.graph, feeds), air.evaluate(kept.graph, feeds)):
            assert got.keys() == want.keys()
            for name in want:
                np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    return kept


def _feeds(g):
    """Random feeds for the graph's inputs when every input shape is static (else None)."""
    rng = np.random.default_rng(0)
    feeds = {}
    for node in g.inputs:
        desc = node.op_desc.output_desc(0)
        dims = list(desc.shape)
        if any(d < 0 for d in dims):
            return None
        dt = np.dtype(desc.dtype.to_numpy())
        if dt.kind == "f":
            feeds[node.name] = rng.standard_normal(dims).astype(dt)
        elif dt.kind in "iu":
            feeds[node.name] = rng.integers(0, 3, dims).astype(dt)
        else:
            feeds[node.name] = rng.integers(0, 2, dims).astype(dt)
    return feeds
