"""The compiled graph evaluates equal to the original (``air.evaluate``, the numpy
reference interpreter, running AscBackend kernels through their HintGraphs) — on random graphs
of lowerable ops and on the three real-architecture models, at the hints and at other sizes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ascendir as air

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import models  # noqa: E402

UNARY = ["Abs", "Relu", "Tanh", "Sigmoid", "Neg", "Exp"]
BINARY = ["Add", "Mul", "Sub", "Maximum", "Minimum"]
REDUCE = ["ReduceSumD", "ReduceMaxD", "ReduceMeanD"]


def random_graph(seed: int, rows: int = -1) -> air.Graph:
    """A random DAG of element-wise ops, broadcasts, reductions and softmax over [rows, 16]."""
    rng = np.random.default_rng(seed)
    g = air.Graph(f"rand{seed}")
    vals = [g.add_input("x", air.TensorDesc([rows, 16], air.float32)),
            g.add_input("y", air.TensorDesc([1, 16], air.float32))]
    for i in range(int(rng.integers(4, 12))):
        kind = rng.random()
        a = vals[int(rng.integers(len(vals)))]
        if kind < 0.35:
            t = UNARY[int(rng.integers(len(UNARY)))]
            if t == "Exp":
                a = g.add_op("Tanh", [a], name=f"t{i}")  # keep Exp's argument bounded
            vals.append(g.add_op(t, [a], name=f"n{i}"))
        elif kind < 0.75:
            b = vals[int(rng.integers(len(vals)))]
            vals.append(g.add_op(BINARY[int(rng.integers(len(BINARY)))], [a, b], name=f"n{i}"))
        elif kind < 0.9:
            t = REDUCE[int(rng.integers(len(REDUCE)))]
            r = g.add_op(t, [a], name=f"n{i}", attrs={"axes": [1], "keep_dims": True})
            vals.append(g.add_op("Sub", [a, r], name=f"s{i}"))
        else:
            vals.append(g.add_op("SoftmaxV2", [a], name=f"n{i}", attrs={"axes": [-1]}))
    outs = [v for v in vals[2:] if not v.out_data_nodes] or [vals[-1]]
    g.set_outputs(outs)
    return g


def assert_same(a: dict, b: dict, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    assert list(a) == list(b)
    for k in a:
        assert a[k].shape == b[k].shape and a[k].dtype == b[k].dtype, k
        np.testing.assert_allclose(b[k], a[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_compile_to_the_same_values(seed):
    g = random_graph(seed)
    cm = air.compile(g, input_shapes={"x": [4, 16]})
    rng = np.random.default_rng(100 + seed)
    for rows in (4, 7):  # the hint and another size: kernels are generic in the symbols
        feeds = {"x": rng.standard_normal((rows, 16)).astype(np.float32),
                 "y": rng.standard_normal((1, 16)).astype(np.float32)}
        assert_same(air.evaluate(g, feeds), air.evaluate(cm.graph, feeds))


def test_random_graphs_do_fuse():
    fused = sum(len(air.compile(random_graph(s), input_shapes={"x": [4, 16]}).kernels) > 0
                for s in range(40))
    assert fused >= 30


def model_feeds(name: str, batch: int, seq: int, rng: np.random.Generator) -> dict:
    if name == "resnet50":
        return {"input": rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)}
    if name == "bert":
        return {"input_ids": rng.integers(0, 100, (batch, seq)).astype(np.int64),
                "attention_mask": rng.integers(0, 2, (batch, seq)).astype(np.int64),
                "token_type_ids": rng.integers(0, 2, (batch, seq)).astype(np.int64)}
    return {"input_ids": rng.integers(0, 64, (batch, seq)).astype(np.int64)}


@pytest.fixture(scope="module")
def compiled_models():
    out = {}
    for name, m in [("resnet50", models.resnet50(width=4, image=32)),
                    ("bert", models.bert(layers=2, hidden=16, heads=2)),
                    ("decoder", models.decoder(layers=2, hidden=8, heads=2))]:
        g = air.onnx.load(m)
        out[name] = (g, air.compile(g))
    return out


@pytest.mark.parametrize("name", ["resnet50", "bert", "decoder"])
def test_models_compile_to_the_same_values(compiled_models, name):
    g, cm = compiled_models[name]
    assert cm.kernels
    rng = np.random.default_rng(5)
    inputs = {n.name for n in g.nodes if n.type == "Data"}
    for batch, seq in ((2, 16), (3, 5)):
        feeds = model_feeds(name, batch, seq, rng)
        assert set(feeds) == inputs
        assert_same(air.evaluate(g, feeds), air.evaluate(cm.graph, feeds), rtol=1e-4,
                    atol=1e-4)


def test_select_on_a_bool_mask_computes_in_the_values_dtype():
    # Select's condition is a mask: the kernel computes in the dtype of the values it picks
    # from (the condition once set the compute dtype, casting the values to bool).
    g = air.Graph("sel")
    x = g.add_input("x", air.TensorDesc([4, 16], air.float32))
    m = g.add_input("m", air.TensorDesc([4, 16], air.bool_))
    s = g.add_op("Select", [m, g.add_op("Exp", [x], name="exp"), x], name="sel")
    g.set_outputs([g.add_op("Mul", [s, x], name="mul")])
    cm = air.compile(g)
    assert [sorted(k.members) for k in cm.kernels] == [["exp", "mul", "sel"]]
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((4, 16)).astype(np.float32),
             "m": rng.random((4, 16)) > 0.5}
    want = np.where(feeds["m"], np.exp(feeds["x"]), feeds["x"]) * feeds["x"]
    (got,) = air.evaluate(cm.graph, feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert_same(air.evaluate(g, feeds), air.evaluate(cm.graph, feeds))
