"""Stage 4's constant folding of float computations: element-wise nodes on constants become
Consts (computed in f64, rounded once to the output dtype); weight-sized results and ops with
non-default forms stay computations; the compiled graph evaluates equal to the original."""

from __future__ import annotations

import numpy as np

import ascendir as air


def _graph(big: bool = False, log_base: float | None = None) -> air.Graph:
    g = air.Graph("fold")
    x = g.add_input("x", air.TensorDesc([-1, 4], air.float32))
    inv = g.add_op("RealDiv", [g.add_const("one", np.float32(1.0)),
                               g.add_op("Sqrt", [g.add_const("d", np.float32(16.0))], name="sq")],
                   name="inv")
    w = g.add_const("w", np.arange(4, dtype=np.float32))
    w2 = g.add_op("Mul", [w, inv], name="w2")
    h = g.add_op("Cast", [g.add_const("h", np.float16(3))], name="hc",
                 attrs={"dst_type": int(air.DataType.FLOAT)})
    y = g.add_op("Add", [g.add_op("Mul", [x, w2], name="m"), h], name="y")
    outs = [y]
    if big:
        wb = g.add_const("wb", np.ones((300, 300), np.float32))
        outs.append(g.add_op("Mul", [wb, inv], name="scaled_weight"))
    if log_base is not None:
        outs.append(g.add_op("Log", [g.add_const("e", np.float32(8.0))], name="lg",
                             attrs={"base": log_base}))
    g.set_outputs(outs)
    return g


def _same(g, cm, batch=3):
    f = {"x": np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)}
    want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)


def test_float_computations_on_constants_fold():
    g = _graph()
    cm = air.compile(g, input_shapes={"x": [2, 4]})
    assert cm.report.data["simplify"]["constants_folded"] == 4  # sq, inv, w2, hc
    types = [n.type for n in cm.graph.nodes]
    assert not {"Sqrt", "RealDiv", "Cast"} & set(types)
    assert [k.members for k in cm.kernels] == [["m", "y"]]
    _same(g, cm)
    w2 = next(n for n in cm.graph.nodes if n.name == "w2_folded")
    np.testing.assert_array_equal(w2.attrs["value"].numpy(), np.arange(4, dtype=np.float32) / 4)


def test_large_results_and_non_default_forms_stay_computations():
    g = _graph(big=True, log_base=2.0)
    cm = air.compile(g, input_shapes={"x": [2, 4]})
    names = {n.name for n in cm.graph.nodes} | {m for k in cm.kernels for m in k.members}
    assert "scaled_weight" in names  # 90,000 elements: above the folding limit
    assert "lg" in names  # Log with a base: not folded
    _same(g, cm)


def test_folding_is_part_of_fusion():
    g = _graph()
    cm = air.compile(g, options=air.CompileOptions(fusion=False))
    assert cm.report.data["simplify"]["constants_folded"] == 0
    assert "Sqrt" in {n.type for n in cm.graph.nodes}


def test_folding_keeps_broadcasts_of_integer_constants() -> None:
    """``[8, 1] - [1, 8]`` of integer constants (T5's relative positions) is 64 values, not
    the 8 an element-by-element walk of the two value lists gives: the compiled graph
    computes what the original does."""
    g = air.Graph("relative_positions")
    x = g.add_input("x", air.TensorDesc([8, 8], air.float32))
    pos = g.add_const("pos", np.arange(8, dtype=np.int64))
    q = g.add_op("Unsqueeze", [pos], name="q", attrs={"axes": [1]})
    k = g.add_op("Unsqueeze", [pos], name="k", attrs={"axes": [0]})
    rel = g.add_op("Sub", [k, q], name="rel")
    dist = g.add_op("Abs", [rel], name="dist")
    f = g.add_op("Cast", [dist], name="f", attrs={"dst_type": int(air.float32)})
    scaled = g.add_op("Mul", [f, g.add_const("c", np.float32(0.5))], name="scaled")
    g.set_outputs([g.add_op("Add", [x, scaled], name="out")])
    g.infer_shapes()
    feeds = [np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)]
    want = list(air.evaluate(g, feeds).values())[0]
    cm = air.compile(g)
    got = list(air.evaluate(cm.graph, feeds).values())[0]
    assert got.shape == (8, 8)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    expected = np.abs(np.arange(8)[None, :] - np.arange(8)[:, None]) * 0.5
    np.testing.assert_allclose(want - feeds[0], expected, rtol=1e-6)


def test_exact_gelu_is_fused_as_the_erf_form() -> None:
    """GE ``Gelu`` with ``approximate="none"`` (torch's default, ONNX's exact Gelu) is fused
    as x·½·(1 + erf(x/√2)); without the attribute it is the tanh form. Either way the compiled
    graph computes what the original does."""
    import math

    for approx, formula in (
        ("none", lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))),
        (None, lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                * (v + 0.044715 * v**3)))),
    ):
        g = air.Graph("gelu")
        x = g.add_input("x", air.TensorDesc([4, 64], air.float32))
        attrs = {"approximate": approx} if approx else {}
        y = g.add_op("Gelu", [g.add_op("Mul", [x, x], name="sq")], name="gelu", attrs=attrs)
        g.set_outputs([g.add_op("Add", [y, x], name="out")])
        g.infer_shapes()
        xv = np.linspace(-4, 4, 256, dtype=np.float32).reshape(4, 64)
        cm = air.compile(g)
        assert len(cm.kernels) == 1
        got = list(air.evaluate(cm.graph, [xv]).values())[0]
        want = formula((xv * xv).astype(np.float64)) + xv
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_an_explicit_narrowing_cast_keeps_its_rounding_inside_a_kernel() -> None:
    """Cast f32 → f16 → f32 in a fused region rounds to f16 as the graph says, though the
    precision policy computes the kernel in f32."""
    g = air.Graph("cast")
    x = g.add_input("x", air.TensorDesc([4, 64], air.float32))
    m = g.add_op("Mul", [x, g.add_const("c", np.float32(1.001))], name="m")
    h = g.add_op("Cast", [m], name="h", attrs={"dst_type": int(air.float16)})
    f = g.add_op("Cast", [h], name="f", attrs={"dst_type": int(air.float32)})
    g.set_outputs([g.add_op("Add", [f, x], name="out")])
    g.infer_shapes()
    xv = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32) * 100
    want = (xv * np.float32(1.001)).astype(np.float16).astype(np.float32) + xv
    cm = air.compile(g)
    assert len(cm.kernels) == 1
    got = list(air.evaluate(cm.graph, [xv]).values())[0]
    np.testing.assert_array_equal(got, want)
