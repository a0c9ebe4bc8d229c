"""``air.evaluate`` of imported ONNX models against independent oracles: the expected outputs
of the ONNX backend conformance cases (generated from the installed ``onnx`` package), and
``onnxruntime`` / ``onnx.reference.ReferenceEvaluator`` on small models built here."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import ascendir as air

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from support.onnx_conformance import known_reason, run_case  # noqa: E402


@pytest.fixture(scope="module")
def conformance():
    """Every node conformance case of the installed onnx package, evaluated."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases(None)
        results = {c.name: run_case(c) for c in cases}
    return results


@pytest.mark.sweep
def test_conformance_cases_reproduce_onnx(conformance, evaluate_summary):
    tally = collections.Counter(status for status, _ in conformance.values())
    mapped = tally["pass"] + tally["fail"]
    unexpected = {n: why for n, (s, why) in conformance.items()
                  if s == "fail" and known_reason(n) is None}
    reasons = collections.Counter(known_reason(n) for n, (s, _) in conformance.items()
                                  if s == "fail" and known_reason(n))
    lines = [f"{len(conformance)} cases, {mapped} fully mapped: {tally['pass']} reproduce the "
             f"expected outputs ({tally['pass'] / mapped:.1%}), {tally['fail']} do not"]
    lines += [f"  {k:3d} x {why}" for why, k in reasons.most_common()]
    lines += [f"  unexpected: {n}: {why}" for n, why in sorted(unexpected.items())]
    evaluate_summary.extend(lines)
    assert not unexpected, unexpected
    assert mapped > 800
    assert tally["pass"] / mapped >= 0.97


# ---------------------------------------------------------------- onnxruntime / reference


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "m", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


RNG = np.random.default_rng(7)
F = RNG.standard_normal


@pytest.fixture(autouse=True)
def _same_draws() -> None:
    """Each test draws the same inputs from ``RNG`` whatever ran before it (random order,
    pytest-xdist)."""
    RNG.bit_generator.state = np.random.default_rng(7).bit_generator.state


def cases():
    x4 = F((2, 4, 9, 8)).astype(np.float32)
    w = F((6, 2, 3, 3)).astype(np.float32)
    yield "conv_groups_strides_pads_dilations", model(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 1],
                          pads=[1, 2, 0, 1], dilations=[1, 2])],
        [vi("x", x4.shape)], [vi("y", None)],
        [init("w", w), init("b", F(6).astype(np.float32))]), {"x": x4}
    yield "conv_same_upper", model(
        [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])],
        [vi("x", x4.shape)], [vi("y", None)], [init("w", F((3, 4, 3, 3)).astype(np.float32))]
    ), {"x": x4}
    yield "maxpool_ceil_pads", model(
        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2],
                          pads=[1, 0, 1, 1], ceil_mode=1)],
        [vi("x", x4.shape)], [vi("y", None)]), {"x": x4}
    yield "avgpool_include_pad", model(
        [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1], count_include_pad=1)],
        [vi("x", x4.shape)], [vi("y", None)]), {"x": x4}
    yield "avgpool_exclude_pad_ceil", model(
        [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 3], strides=[2, 2],
                          pads=[0, 1, 1, 1], ceil_mode=1)],
        [vi("x", x4.shape)], [vi("y", None)]), {"x": x4}
    a, b, c = (F(s).astype(np.float32) for s in ((5, 3), (4, 5), (4,)))
    yield "gemm_transposes_alpha_beta", model(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5,
                          beta=2.0)],
        [vi("a", a.shape), vi("b", b.shape), vi("c", c.shape)], [vi("y", None)]), {
        "a": a, "b": b, "c": c}
    p, q = F((2, 1, 3, 4)).astype(np.float32), F((5, 4, 2)).astype(np.float32)
    yield "matmul_broadcast", model(
        [helper.make_node("MatMul", ["p", "q"], ["y"])],
        [vi("p", p.shape), vi("q", q.shape)], [vi("y", None)]), {"p": p, "q": q}
    x3 = F((3, 4, 5)).astype(np.float32)
    yield "reductions_keepdims", model(
        [helper.make_node("ReduceMean", ["x"], ["m"], axes=[0, 2], keepdims=0),
         helper.make_node("ReduceMax", ["x"], ["mx"], axes=[-1], keepdims=1),
         helper.make_node("ReduceSum", ["x", "ax"], ["s"], keepdims=0),
         helper.make_node("ArgMax", ["x"], ["am"], axis=1, keepdims=0),
         helper.make_node("Softmax", ["x"], ["sm"], axis=1),
         helper.make_node("LogSoftmax", ["x"], ["lsm"], axis=-1)],
        [vi("x", x3.shape)],
        [vi("m", None), vi("mx", None), vi("s", None), vi("am", None, TensorProto.INT64),
         vi("sm", None), vi("lsm", None)], [init("ax", np.array([1], np.int64))], opset=13), {
        "x": x3}
    yield "slice_pad_concat_split", model(
        [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
         helper.make_node("Pad", ["x", "pads"], ["pr"], mode="reflect"),
         helper.make_node("Pad", ["x", "pads", "cv"], ["pc"]),
         helper.make_node("Concat", ["x", "x"], ["c"], axis=-1),
         helper.make_node("Split", ["x", "spl"], ["s0", "s1"], axis=2),
         helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1])],
        [vi("x", x3.shape)], [vi(n, None) for n in ("s", "pr", "pc", "c", "s0", "s1", "t")],
        [init("st", np.array([3, 1], np.int64)), init("en", np.array([-100, 5], np.int64)),
         init("ax", np.array([2, 1], np.int64)), init("sp", np.array([-1, 2], np.int64)),
         init("pads", np.array([0, 1, 2, 1, 0, 1], np.int64)),
         init("cv", np.array(1.5, np.float32)), init("spl", np.array([2, 3], np.int64))]), {
        "x": x3}
    idx = np.array([[0, 2], [1, -1]], np.int64)
    yield "gather_expand_tile_where", model(
        [helper.make_node("Gather", ["x", "i"], ["g"], axis=1),
         helper.make_node("Expand", ["v", "shp"], ["e"]),
         helper.make_node("Tile", ["x", "rep"], ["tl"]),
         helper.make_node("Greater", ["x", "z"], ["gt"]),
         helper.make_node("Where", ["gt", "x", "z"], ["wh"]),
         helper.make_node("Cast", ["x"], ["ci"], to=TensorProto.INT32)],
        [vi("x", x3.shape)], [vi(n, None) for n in ("g", "e", "tl", "wh")]
        + [vi("ci", None, TensorProto.INT32)],
        [init("i", idx), init("v", F((4, 1)).astype(np.float32)),
         init("shp", np.array([2, 1, 3], np.int64)), init("rep", np.array([1, 2, 1], np.int64)),
         init("z", np.zeros((), np.float32))]), {"x": x3}
    ln_x = F((2, 3, 8)).astype(np.float32)
    yield "layernorm_y_and_bn_inference", model(
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5),
         helper.make_node("BatchNormalization", ["x", "s", "o", "mu", "var"], ["bn"],
                          epsilon=1e-3)],
        [vi("x", ln_x.shape)], [vi("y", None), vi("bn", None)],
        [init("g", F(8).astype(np.float32)), init("b", F(8).astype(np.float32)),
         init("s", F(3).astype(np.float32)), init("o", F(3).astype(np.float32)),
         init("mu", F(3).astype(np.float32)),
         init("var", np.abs(F(3)).astype(np.float32) + 0.5)]), {"x": ln_x}
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["t"])], "then", [],
                               [vi("t", None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [vi("e", None)])
    xv = F((3,)).astype(np.float32)
    for flag in (True, False):
        yield f"if_{flag}", model(
            [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
            [vi("c", [], TensorProto.BOOL), vi("x", [3])], [vi("y", None)]), {
            "c": np.array(flag), "x": xv}
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]),
         helper.make_node("Add", ["acc", "x"], ["acc2"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["acc2", "fi"], ["scan"])],
        "body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL),
                 vi("acc", [3])], [vi("cout", [], TensorProto.BOOL), vi("acc2", [3]),
                                   vi("scan", [3])])
    yield "loop_carried_scan_capture", model(
        [helper.make_node("Loop", ["n", "c", "a0"], ["af", "sc"], body=body)],
        [vi("n", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("a0", [3]),
         vi("x", [3])], [vi("af", None), vi("sc", None)]), {
        "n": np.array(4, np.int64), "c": np.array(True), "a0": xv, "x": xv * 2}
    img = F((1, 2, 4, 5)).astype(np.float32)
    yield "resize_linear_and_nearest", model(
        [helper.make_node("Resize", ["x", "", "sc"], ["lin"], mode="linear"),
         helper.make_node("Resize", ["x", "", "", "sz"], ["nn"], mode="nearest",
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
         helper.make_node("Resize", ["x", "", "sc2"], ["cub"], mode="cubic",
                          coordinate_transformation_mode="align_corners")],
        [vi("x", img.shape)], [vi("lin", None), vi("nn", None), vi("cub", None)],
        [init("sc", np.array([1, 1, 2.0, 1.5], np.float32)),
         init("sc2", np.array([1, 1, 2.0, 2.0], np.float32)),
         init("sz", np.array([1, 2, 7, 3], np.int64))], opset=13), {"x": img}


CASES = list(cases())


@pytest.mark.parametrize("name,m,feeds", CASES, ids=[c[0] for c in CASES])
def test_small_models_match_onnxruntime_and_reference(name, m, feeds):
    g = air.onnx.load(m)
    got = air.evaluate(g, feeds)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    ref = ReferenceEvaluator(m).run(None, feeds)
    assert list(got) == [o.name for o in m.graph.output]
    for (key, a), w, r in zip(got.items(), want, ref, strict=True):
        assert a.shape == w.shape and a.dtype == w.dtype, (key, a.shape, w.shape, a.dtype)
        np.testing.assert_allclose(a, w, rtol=1e-4, atol=1e-5, err_msg=f"{name}:{key} vs ort")
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-5, err_msg=f"{name}:{key} vs ref")


@pytest.mark.parametrize("which", ["resnet50", "bert"])
def test_bench_models_match_onnxruntime(which):
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "benches", "models.py")
    spec = importlib.util.spec_from_file_location("bench_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    m = getattr(mod, which)()
    rng = np.random.default_rng(1)
    feeds = {}
    for i in m.graph.input:
        tt = i.type.tensor_type
        shape = [d.dim_value or 2 for d in tt.shape.dim]
        if tt.elem_type == TensorProto.INT64:
            feeds[i.name] = rng.integers(0, 2, shape).astype(np.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    got = air.evaluate(air.onnx.load(m, warn_unknown=False), feeds)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, w in zip(got.values(), want, strict=True):
        np.testing.assert_allclose(a, w, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("attrs", [
    {},
    {"strides": [2], "pads": [1, 2], "dilations": [2]},
    {"auto_pad": "SAME_UPPER", "group": 2},
    {"auto_pad": "VALID", "strides": [3]},
], ids=["plain", "strided-dilated-padded", "same-upper-grouped", "valid-strided"])
def test_one_d_conv_evaluates_like_onnxruntime(attrs) -> None:
    """A 1-D ``Conv`` (audio front ends) with explicit pads is ``Conv2D`` over a unit H axis
    (``Unsqueeze`` → ``Conv2D`` → ``Squeeze``); with ``auto_pad`` it stays ``onnx::Conv``.
    ``air.evaluate`` runs both as onnxruntime does."""
    rng = np.random.default_rng(3)
    groups = attrs.get("group", 1)
    w = rng.standard_normal((4, 4 // groups, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    data = model.SerializeToString()
    x = rng.standard_normal((2, 4, 11)).astype(np.float32)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    if "auto_pad" in attrs:
        with pytest.warns(air.onnx.UnknownOpWarning, match="onnx::Conv"):
            g = air.onnx.load(data)
    else:
        g, rep = air.onnx.load(data, return_report=True)
        assert rep.unknown_ops == {}
        assert sorted(n.type for n in g.nodes if n.type not in ("Data", "Const", "NetOutput")
                      ) == ["Conv2D", "Squeeze", "Unsqueeze", "Unsqueeze"]
    (got,) = air.evaluate(g, [x]).values()
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_conv1d_in_if_branches_with_an_outer_weight_matches_onnxruntime():
    # The branches' Conv reads its weight from the enclosing graph: the rank of the weight
    # (3: a 1-D convolution) must reach the body's import, not fall back to 2-D.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 8)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3)).astype(np.float32)

    def branch(name, pads):
        return helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], [f"{name}_y"], pads=pads)], name, [],
            [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, None)])

    m = helper.make_model(helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=branch("then", [1, 1]),
                          else_branch=branch("else", [0, 0]))],
        "if_conv1d",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")]), opset_imports=[helper.make_opsetid("", 17)])
    # Each branch is Conv2D over [1, 2, 1, 8] between Unsqueezes and a Squeeze, by the default
    # import as by the expansion.
    g, rep = air.onnx.load(m, return_report=True)
    assert rep.unknown_ops == {}
    for sub in [*g.subgraphs, *air.onnx.load(m, expand_functions=True).subgraphs]:
        assert sorted(n.type for n in sub.nodes if n.type in ("Unsqueeze", "Conv2D", "Squeeze")
                      ) == ["Conv2D", "Squeeze", "Unsqueeze", "Unsqueeze"], sub.name
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for flag in (True, False):
        feeds = {"c": np.array(flag), "x": x}
        (want,) = sess.run(None, feeds)
        (got,) = air.evaluate(g, feeds).values()
        assert got.shape == want.shape == ((1, 3, 8) if flag else (1, 3, 6))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    g.infer_shapes()
    assert g.check_invariants() == []
    # Exported back to ONNX, it still runs the same.
    again = onnx.load_from_string(air.onnx.to_bytes(g))
    sess2 = ort.InferenceSession(again.SerializeToString(), providers=["CPUExecutionProvider"])
    (y2,) = sess2.run(None, {"c": np.array(True), "x": x})
    np.testing.assert_allclose(y2, sess.run(None, {"c": np.array(True), "x": x})[0],
                               rtol=1e-4, atol=1e-5)
