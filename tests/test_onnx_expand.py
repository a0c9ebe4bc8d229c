"""``air.onnx.load(..., expand_functions=True)``: ONNX function ops replaced by their bodies where
the whole body maps to GE types, checked against onnxruntime / ReferenceEvaluator and over the
conformance cases."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import ascendir as air

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

F = TensorProto.FLOAT
LOOP_STACKING = ("a Scan becomes a Loop, whose scan outputs ReferenceEvaluator concatenates "
                 "(np.vstack) where onnxruntime and the ONNX Scan stack them on a new axis")
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _same_draws() -> None:
    """Each test draws the same inputs from ``RNG`` whatever ran before it (random order,
    pytest-xdist)."""
    RNG.bit_generator.state = np.random.default_rng(7).bit_generator.state


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "m", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def close(got, exp):
    got = list(got.values()) if isinstance(got, dict) else got
    for a, e in zip(got, exp, strict=True):
        assert np.asarray(a).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


def nll_model():
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="mean",
                            ignore_index=1)
    return model([node], [vi("x", F, [2, 3, 4]), vi("t", TensorProto.INT64, [2, 4])],
                 [vi("y", F, [])], 22)


def nll_feeds():
    return {"x": RNG.standard_normal((2, 3, 4)).astype(np.float32),
            "t": np.array([[0, 1, 2, 1], [2, 2, 0, 1]], np.int64)}


def test_rank3_nll_loss_expands_and_evaluates_like_the_reference():
    m = nll_model()
    with pytest.warns(air.onnx.UnknownOpWarning):
        plain = air.onnx.load(m)
    assert any(n.type == "onnx::NegativeLogLikelihoodLoss" for n in plain.nodes)
    g, rep = air.onnx.load(m, return_report=True, expand_functions=True)
    assert rep.unknown_ops == {}
    assert rep.expanded == {"NegativeLogLikelihoodLoss": 1}
    assert rep.onnx_nodes == 1 and rep.root_nodes == 1  # the model as given
    assert not any(n.type.startswith("onnx::") for n in g.all_nodes())
    assert all(n.name.startswith("NegativeLogLikelihoodLoss_0/") for n in g.nodes
               if n.type not in ("Data", "NetOutput", "Const"))
    feeds = nll_feeds()
    close(air.evaluate(g, feeds), ReferenceEvaluator(m).run(None, feeds))


def test_reduce_sum_square_with_axes_input_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    node = helper.make_node("ReduceSumSquare", ["x", "axes"], ["y"], keepdims=0)
    m = model([node], [vi("x", F, [3, 4, 5])], [vi("y", F, [3, 5])], 18, [axes])
    g, rep = air.onnx.load(m, return_report=True, expand_functions=True)
    assert rep.unknown_ops == {} and rep.expanded == {"ReduceSumSquare": 1}
    feeds = {"x": RNG.standard_normal((3, 4, 5)).astype(np.float32)}
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    close(air.evaluate(g, feeds), sess.run(None, feeds))


def test_attention_expands_through_nested_functions_and_exports_a_valid_model():
    # Attention's body holds CastLike nodes, themselves functions: two rounds.
    q = vi("q", F, [2, 3, 4, 8])
    k = vi("k", F, [2, 3, 6, 8])
    v = vi("v", F, [2, 3, 6, 8])
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1)
    m = model([node], [q, k, v], [vi("y", F, [2, 3, 4, 8])], 23)
    g, rep = air.onnx.load(m, return_report=True, expand_functions=True)
    assert rep.unknown_ops == {} and rep.expanded == {"Attention": 1}
    feeds = {n: RNG.standard_normal(s).astype(np.float32)
             for n, s in (("q", (2, 3, 4, 8)), ("k", (2, 3, 6, 8)), ("v", (2, 3, 6, 8)))}
    close(air.evaluate(g, feeds), ReferenceEvaluator(m).run(None, feeds))
    out = onnx.load_from_string(air.onnx.to_bytes(g))
    onnx.checker.check_model(out, full_check=True)
    close(ReferenceEvaluator(out).run(None, feeds), ReferenceEvaluator(m).run(None, feeds))


def test_a_body_with_an_unmapped_op_keeps_the_node(tmp_path):
    # CenterCropPad's body pads over `axes` from computed pads, which GE's pads cannot say.
    shape = helper.make_tensor("s", TensorProto.INT64, [2], [5, 3])
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], axes=[0, 1])
    m = model([node], [vi("x", F, [4, 4])], [vi("y", F, [5, 3])], 18, [shape])
    g, rep = air.onnx.load(m, return_report=True, warn_unknown=False, expand_functions=True)
    if rep.expanded:  # the mapping learned the body's ops: then it must evaluate right
        feeds = {"x": RNG.standard_normal((4, 4)).astype(np.float32)}
        close(air.evaluate(g, feeds), ReferenceEvaluator(m).run(None, feeds))
    else:
        assert rep.unknown_ops == {"onnx::CenterCropPad": 1}
        assert [n.name for n in g.all_nodes() if "/" in n.name] == []


def test_expansion_is_deterministic_and_leaves_the_input_alone(tmp_path):
    m = nll_model()
    data = m.SerializeToString()
    path = tmp_path / "nll.onnx"
    path.write_bytes(data)
    a = air.onnx.load(path, expand_functions=True)
    b = air.onnx.load(data, expand_functions=True)
    assert air.onnx.to_bytes(a) == air.onnx.to_bytes(b)
    assert m.SerializeToString() == data and path.read_bytes() == data


def test_mapped_models_are_imported_once_and_unchanged():
    node = helper.make_node("Relu", ["x"], ["y"])
    m = model([node], [vi("x", F, [2])], [vi("y", F, [2])], 17)
    g, rep = air.onnx.load(m, return_report=True, expand_functions=True)
    assert rep.expanded == {} and [n.type for n in g.nodes] == ["Data", "Relu", "NetOutput"]


# Expanded cases whose export a runtime runs differently from the original, and why.
EXPORT_KNOWN = {
    ("ReferenceEvaluator", "test_scan9_"): LOOP_STACKING,
    ("ReferenceEvaluator", "test_linear_attention_"): LOOP_STACKING,
}


def export_known(runtime: str, name: str) -> str | None:
    return next((why for (r, p), why in EXPORT_KNOWN.items()
                 if r == runtime and name.startswith(p)), None)


@pytest.mark.sweep
def test_expanded_conformance_cases_reproduce_onnx(mapping_summary):
    from onnx.backend.test.case import node as cases_of

    from support import onnx_conformance as oc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = cases_of.collect_testcases(None)
    tally: collections.Counter[str] = collections.Counter()
    unexpected = {}
    for c in cases:
        _, plain = air.onnx.load(c.model, return_report=True, warn_unknown=False)
        if not plain.unknown_ops:
            continue
        g, rep = air.onnx.load(c.model, return_report=True, warn_unknown=False,
                               expand_functions=True)
        if rep.unknown_ops:
            continue
        assert rep.expanded, c.name
        status, why = oc.evaluate_case(c, g)
        tally[status] += 1
        if status == "fail" and oc.known_reason(c.name) is None:
            unexpected[c.name] = why
        # The export: checked where the original is, run where the original runs.
        exported = onnx.load_from_string(air.onnx.to_bytes(g))
        if oc.checks(c.model) is None:
            tally["checked"] += 1
            problem = oc.checks(exported)
            if problem:
                unexpected[f"checker: {c.name}"] = problem
        for runtime, make in (("ReferenceEvaluator", oc.reference_runner),
                              ("onnxruntime", oc.onnxruntime_runner)):
            if oc.reproduces_with(make, c.model, c):
                tally[runtime] += 1
                if not oc.reproduces_with(make, exported, c):
                    tally[f"{runtime} known"] += 1
                    if export_known(runtime, c.name) is None:
                        unexpected[f"{runtime}: {c.name}"] = "regression"
    mapping_summary.append(
        f"expand_functions: {tally['pass'] + tally['fail']} more cases fully mapped, "
        f"{tally['pass']} reproduce the expected outputs in air.evaluate; their exports pass "
        f"the checker ({tally['checked']} checked) and reproduce what the original does in "
        f"ReferenceEvaluator ({tally['ReferenceEvaluator']} cases, "
        f"{tally['ReferenceEvaluator known']} known Loop differences) and onnxruntime "
        f"({tally['onnxruntime']}, {tally['onnxruntime known']})")
    assert not unexpected, unexpected
    assert tally["pass"] >= 290


# ---------------------------------------------------------------- ascendir's own expansions

I64 = TensorProto.INT64
U8 = TensorProto.UINT8


def const(name, arr):
    return onnx.numpy_helper.from_array(np.asarray(arr), name)


def rnd(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _scan_model():
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "x_t"], ["y_t"])],
        "body", [vi("s_in", F, [2]), vi("x_t", F, [2])], [vi("s_out", F, [2]), vi("y_t", F, [2])])
    node = helper.make_node("Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                            scan_input_directions=[1], scan_output_directions=[1],
                            scan_output_axes=[1])
    return model([node], [vi("s0", F, [2]), vi("x", F, [4, 2])],
                 [vi("s", F, [2]), vi("y", F, [2, 4])], 16), {"s0": rnd(2), "x": rnd(4, 2)}


RULE_CASES = {
    "Pad": (model([helper.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="edge")],
                  [vi("x", F, [2, 3, 4]), vi("p", I64, [4])], [vi("y", F, None)], 18,
                  [const("a", np.array([2, 0], np.int64))]),
            {"x": rnd(2, 3, 4), "p": np.array([1, 0, 2, 1], np.int64)}),
    # 1-D with auto_pad (with explicit pads the default import maps it over a unit axis).
    "Conv": (model([helper.make_node("Conv", ["x", "w", "b"], ["y"], auto_pad="SAME_UPPER",
                                     strides=[2])],
                   [vi("x", F, [1, 3, 9])], [vi("y", F, None)], 17,
                   [const("w", rnd(4, 3, 3)), const("b", rnd(4))]), {"x": rnd(1, 3, 9)}),
    "AveragePool": (model([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3],
                                            pads=[1, 1], count_include_pad=0)],
                          [vi("x", F, [2, 3, 7])], [vi("y", F, None)], 17), {"x": rnd(2, 3, 7)}),
    "Max": (model([helper.make_node("Max", ["a", "b", "c"], ["y"])],
                  [vi("a", F, [3]), vi("b", F, [2, 3]), vi("c", F, [3])], [vi("y", F, None)], 13),
            {"a": rnd(3), "b": rnd(2, 3), "c": rnd(3)}),
    "Mean": (model([helper.make_node("Mean", ["a", "b", "c"], ["y"])],
                   [vi("a", F, [3]), vi("b", F, [2, 3]), vi("c", F, [3])], [vi("y", F, None)],
                   13), {"a": rnd(3), "b": rnd(2, 3), "c": rnd(3)}),
    "Compress": (model([helper.make_node("Compress", ["x", "c"], ["y"])],
                       [vi("x", F, [2, 3]), vi("c", TensorProto.BOOL, [4])], [vi("y", F, None)],
                       17), {"x": rnd(2, 3), "c": np.array([1, 0, 0, 1], bool)}),
    "EyeLike": (model([helper.make_node("EyeLike", ["x"], ["y"], k=1, dtype=I64)],
                      [vi("x", F, [3, 4])], [vi("y", I64, None)], 17), {"x": rnd(3, 4)}),
    "LSTM": (model([helper.make_node("LSTM", ["x", "w", "r"], ["y", "h", "c"], hidden_size=3,
                                     layout=1)],
                   [vi("x", F, [2, 5, 4])], [vi("y", F, None), vi("h", F, None),
                                             vi("c", F, None)], 17,
                   [const("w", rnd(1, 12, 4)), const("r", rnd(1, 12, 3))]), {"x": rnd(2, 5, 4)}),
    # An even size (an odd one maps to GE's LRN): a window of one more channel after than before.
    "LRN": (model([helper.make_node("LRN", ["x"], ["y"], size=4, alpha=0.1, beta=0.6, bias=1.5)],
                  [vi("x", F, [1, 5, 2, 2])], [vi("y", F, None)], 13), {"x": rnd(1, 5, 2, 2)}),
    "LpPool": (model([helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3,
                                       pads=[1, 0, 1, 0])],
                     [vi("x", F, [1, 2, 4, 4])], [vi("y", F, None)], 18), {"x": rnd(1, 2, 4, 4)}),
    "ReverseSequence": (
        model([helper.make_node("ReverseSequence", ["x", "n"], ["y"], time_axis=1, batch_axis=0)],
              [vi("x", F, [3, 4, 2]), vi("n", I64, [3])], [vi("y", F, None)], 17),
        {"x": rnd(3, 4, 2), "n": np.array([4, 1, 2], np.int64)}),
    "DequantizeLinear": (
        model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1)],
              [vi("x", U8, [2, 3])], [vi("y", F, None)], 17,
              [const("s", np.array([0.5, 2.0, 0.25], np.float32)),
               const("z", np.array([1, 128, 3], np.uint8))]),
        {"x": np.array([[0, 7, 255], [128, 1, 3]], np.uint8)}),
    "QuantizeLinear": (
        model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
              [vi("x", F, [6])], [vi("y", TensorProto.INT16, None)], 21,
              [const("s", np.array(0.5, np.float32)), const("z", np.array(-3, np.int16))]),
        {"x": np.array([-1e5, -1.25, -0.75, 0.25, 0.75, 1e5], np.float32)}),
    "QLinearMatMul": (
        model([helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                                ["y"])],
              [vi("a", U8, [2, 3])], [vi("y", U8, None)], 17,
              [const("as", np.array(0.1, np.float32)), const("az", np.array(5, np.uint8)),
               const("b", RNG.integers(0, 255, (3, 4)).astype(np.uint8)),
               const("bs", np.array(0.02, np.float32)), const("bz", np.array(120, np.uint8)),
               const("ys", np.array(0.05, np.float32)), const("yz", np.array(100, np.uint8))]),
        {"a": RNG.integers(0, 255, (2, 3)).astype(np.uint8)}),
    "Scan": _scan_model(),
    "RNN": (model([helper.make_node("RNN", ["x", "w", "r", "b", "", "h0"], ["y", "h"],
                                    hidden_size=3, direction="bidirectional",
                                    activations=["Tanh", "Relu"])],
                  [vi("x", F, [4, 2, 5]), vi("h0", F, [2, 2, 3])],
                  [vi("y", F, None), vi("h", F, None)], 12,
                  [const("w", rnd(2, 3, 5)), const("r", rnd(2, 3, 3)), const("b", rnd(2, 6))]),
            {"x": rnd(4, 2, 5), "h0": rnd(2, 2, 3)}),
}


def _lrn_formula(x, *, size, alpha, beta, bias):
    """ONNX's LRN: the squares summed over channels [c - floor((size - 1) / 2),
    c + ceil((size - 1) / 2)]."""
    lo = (size - 1) // 2
    hi = size - 1 - lo
    c = x.shape[1]
    sq = np.stack([np.sum(np.square(x[:, max(0, i - lo):min(c, i + hi + 1)]), axis=1)
                   for i in range(c)], axis=1)
    return (x / (bias + alpha / size * sq) ** beta).astype(x.dtype)


def _oracle(op):
    # onnxruntime refuses batch-major LSTM; ReferenceEvaluator stands in for it there.
    if op == "LSTM":
        return lambda m: (lambda feeds: ReferenceEvaluator(m).run(None, feeds))
    # onnxruntime refuses an even LRN size (the odd sizes map to GE's LRN) and the reference
    # evaluator sums another window: the operator's formula stands in.
    if op == "LRN":
        return lambda m: (lambda _names, feeds: [_lrn_formula(feeds["x"], size=4, alpha=0.1,
                                                              beta=0.6, bias=1.5)])
    ort = pytest.importorskip("onnxruntime")
    return lambda m: ort.InferenceSession(m.SerializeToString(),
                                          providers=["CPUExecutionProvider"]).run


@pytest.mark.parametrize("op", sorted(RULE_CASES))
def test_own_expansions_match_onnxruntime(op):
    m, feeds = RULE_CASES[op]
    run = _oracle(op)
    want = run(m)(None, feeds) if op != "LSTM" else run(m)(feeds)
    for o, w in zip(m.graph.output, want, strict=True):  # give the outputs their shapes
        o.CopyFrom(vi(o.name, o.type.tensor_type.elem_type, list(np.shape(w))))
    with pytest.warns(air.onnx.UnknownOpWarning):
        air.onnx.load(m)  # the form GE has no single op for
    g, rep = air.onnx.load(m, return_report=True, expand_functions=True)
    assert rep.unknown_ops == {} and rep.expanded == {op: 1}
    close(air.evaluate(g, feeds), want)
    out = onnx.load_from_string(air.onnx.to_bytes(g))
    onnx.checker.check_model(out, full_check=True)
    names = {i.name for i in out.graph.input}
    fed = {k: v for k, v in feeds.items() if k in names}
    close(run(out)(None, fed) if op != "LSTM" else run(out)(fed), want)


def test_scatter_of_opset_10_maps_and_exports_under_its_name():
    node = helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1)
    m = model([node], [vi("x", F, [2, 3]), vi("i", I64, [2, 1]), vi("u", F, [2, 1])],
              [vi("y", F, [2, 3])], 10)
    m.ir_version = 5
    g = air.onnx.load(m)
    assert [n.type for n in g.nodes if n.type not in ("Data", "NetOutput")] == ["ScatterElements"]
    out = onnx.load_from_string(air.onnx.to_bytes(g))
    assert [n.op_type for n in out.graph.node] == ["Scatter"]
    onnx.checker.check_model(out, full_check=True)
    feeds = {"x": rnd(2, 3), "i": np.array([[2], [0]], np.int64), "u": rnd(2, 1)}
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    close(air.evaluate(g, feeds), sess.run(None, feeds))


def test_cli_inspect_and_convert_expand_on_request(tmp_path):
    import subprocess

    from support.cli import script

    m = nll_model()
    (tmp_path / "nll.onnx").write_bytes(m.SerializeToString())

    def run(*args):
        return subprocess.run([script(), *args], cwd=tmp_path, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=300, check=True).stdout

    assert "onnx::NegativeLogLikelihoodLoss" in run("inspect", "nll.onnx")
    assert "onnx::" not in run("inspect", "--expand-functions", "nll.onnx")
    run("convert", "--expand-functions", "nll.onnx", "nll.pb")
    g = air.serialization.load(tmp_path / "nll.pb")
    assert g.nodes and not any(n.type.startswith("onnx::") for n in g.nodes)


def test_malformed_nodes_are_left_as_they_are():
    # LRN without its required `size`; Pad whose constant pads do not fit its axes.
    lrn = helper.make_node("LRN", ["x"], ["y"])
    pads = const("p", np.array([1, 1, 1], np.int64))
    axes = const("a", np.array([0, 1], np.int64))
    pad = helper.make_node("Pad", ["x", "p", "", "a"], ["z"])
    m = model([lrn, pad], [vi("x", F, [1, 2, 3, 3])],
              [vi("y", F, [1, 2, 3, 3]), vi("z", F, None)], 18, [pads, axes])
    g, rep = air.onnx.load(m, return_report=True, warn_unknown=False, expand_functions=True)
    assert rep.unknown_ops == {"onnx::LRN": 1, "onnx::Pad": 1} and rep.expanded == {}
