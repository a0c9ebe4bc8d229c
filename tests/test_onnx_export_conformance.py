"""ONNX export measured over the ONNX backend conformance cases (generated from the installed
``onnx`` package): every case is imported and exported again, and the export is held to what
the original achieves — ``onnx.checker.check_model(full_check=True)`` passes where it passes on
the original, and ``onnx.reference.ReferenceEvaluator`` and ``onnxruntime`` reproduce the
expected outputs from the export wherever they do from the original. The tallies are printed in
the terminal summary; a semantic regression outside ``KNOWN`` fails."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import ascendir as air

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from support.onnx_conformance import (  # noqa: E402
    checks,
    onnxruntime_runner,
    reference_runner,
    reproduces_with,
)

# Cases whose export does not reproduce what the original does, and why. A listed case may
# pass; an unlisted one must.
# Random ops: the expected outputs hold one draw, so a runtime reproducing them from the
# original is chance, and a later draw from the export (or the original) need not agree.
KNOWN: dict[str, str] = {
    "test_bernoulli": "Bernoulli draws random numbers: a match with the stored draw is chance",
    "test_training_dropout": "training-mode Dropout draws a random mask",
}


def known_reason(name: str) -> str | None:
    for prefix, why in KNOWN.items():
        if name.startswith(prefix):
            return why
    return None


@pytest.fixture(scope="module")
def exported():
    """Per case: (checker on the original, checker on the export, {runtime: (orig, export)})."""
    from onnx.backend.test.case import node

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in node.collect_testcases(None):
            g = air.onnx.load(case.model, warn_unknown=False)
            exp = onnx.load_from_string(air.onnx.to_bytes(g))
            runs = {}
            for name, make in (("ReferenceEvaluator", reference_runner),
                               ("onnxruntime", onnxruntime_runner)):
                orig_ok = reproduces_with(make, case.model, case)
                runs[name] = (orig_ok, orig_ok and reproduces_with(make, exp, case))
            out[case.name] = (checks(case.model), checks(exp), runs)
    return out


@pytest.mark.sweep
def test_exports_pass_the_checker_and_reproduce_what_the_original_does(exported, export_summary):
    checked = {n: e for n, (o, e, _) in exported.items() if o is None}
    passed = sum(1 for e in checked.values() if e is None)
    lines = [f"{len(exported)} cases; onnx.checker(full_check=True) passes on {passed} of the "
             f"{len(checked)} exports whose original passes ({passed / len(checked):.1%})"]
    reasons = collections.Counter(e[:90] for e in checked.values() if e is not None)
    lines += [f"  {k:3d} x {why}" for why, k in reasons.most_common(8)]
    unexpected = {}
    for runtime in ("ReferenceEvaluator", "onnxruntime"):
        orig = [n for n, (_, _, r) in exported.items() if r[runtime][0]]
        lost = [n for n in orig if not exported[n][2][runtime][1]]
        lines.append(f"{runtime}: the export reproduces the expected outputs on "
                     f"{len(orig) - len(lost)} of the {len(orig)} cases the original does; "
                     f"{len(lost)} regressions, {sum(1 for n in lost if known_reason(n))} known")
        unexpected.update({f"{runtime}: {n}": "regression" for n in lost if not known_reason(n)})
    lines += [f"  unexpected: {k}" for k in sorted(unexpected)]
    export_summary.extend(lines)
    assert not unexpected, unexpected
    assert len(checked) > 1800
    assert passed / len(checked) >= 0.99


# ------------------------------------------------------------ the regressions found above


def _roundtrip(m):
    g = air.onnx.load(m, warn_unknown=False)
    return onnx.load_from_string(air.onnx.to_bytes(g))


@pytest.mark.parametrize("op", ["ReduceL2", "ReduceLogSumExp"])
@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_l2_and_log_sum_exp_export_onnx_attributes(op: str, opset: int, keepdims: int):
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    attrs = {"keepdims": keepdims}
    inputs, inits = ["x"], []
    if opset >= 18:
        inputs.append("axes")
        inits.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "axes"))
    else:
        attrs["axes"] = [1]
    node = helper.make_node(op, inputs, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 4] if keepdims else [2, 4])],
        initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    exp = _roundtrip(m)
    (n,) = [n for n in exp.graph.node if n.op_type == op]
    names = {a.name for a in n.attribute}
    assert "keep_dims" not in names
    assert {a.name: a.i for a in n.attribute}.get("keepdims", 1) == keepdims
    assert ("axes" in names) == (opset < 18)
    assert checks(m) is None
    assert checks(exp) is None
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = ReferenceEvaluator(exp).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_split_without_sizes_exports_num_outputs_from_opset_18():
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)
    graph = helper.make_graph(
        [node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2]) for n in "abc"])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    exp = _roundtrip(m)
    (n,) = [n for n in exp.graph.node if n.op_type == "Split"]
    assert {a.name: a.i for a in n.attribute}["num_outputs"] == 3
    assert checks(m) is None
    assert checks(exp) is None
    so = ort.SessionOptions()
    so.log_severity_level = 4
    got = ort.InferenceSession(exp.SerializeToString(), so,
                               providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for g, w in zip(got, np.split(x, 3, axis=1), strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("to", [
    TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2FNUZ, TensorProto.UINT4, TensorProto.INT4,
    TensorProto.FLOAT8E4M3FN])
def test_value_types_without_a_ge_type_export_as_they_were(to: int):
    # GE has no data type for some ONNX element types: the value's type is kept, not written
    # as float.
    node = helper.make_node("Cast", ["x"], ["y"], to=to)
    graph = helper.make_graph(
        [node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", to, [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    exp = _roundtrip(m)
    assert exp.graph.output[0].type.tensor_type.elem_type == to
    assert checks(m) is None
    assert checks(exp) is None


def test_sequence_and_optional_values_export_with_their_types():
    # GE's descs hold dense tensors only: a sequence or optional value keeps its ONNX type and
    # is written back with it (graph output and intermediate value alike).
    seq = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]))
    opt = helper.make_optional_type_proto(seq)
    nodes = [
        helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
        helper.make_node("Optional", ["s"], ["o"]),
        helper.make_node("OptionalGetElement", ["o"], ["s2"]),
        helper.make_node("SequenceAt", ["s2", "i"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "m",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "xy"]
        + [helper.make_tensor_value_info("i", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]),
         helper.make_value_info("s2", seq)],
        value_info=[helper.make_value_info("o", opt), helper.make_value_info("s", seq)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    exp = _roundtrip(m)
    types = {v.name: v.type for v in list(exp.graph.value_info) + list(exp.graph.output)}
    assert types["s2"] == seq
    assert types["o"] == opt
    assert checks(m) is None
    assert checks(exp) is None
    x = np.ones((2, 3), np.float32)
    feeds = {"x": x, "y": 2 * x, "i": np.array(1, np.int64)}
    so = ort.SessionOptions()
    so.log_severity_level = 4
    got = ort.InferenceSession(exp.SerializeToString(), so,
                               providers=["CPUExecutionProvider"]).run(["z"], feeds)[0]
    np.testing.assert_array_equal(got, 2 * x)


@pytest.mark.parametrize(("op", "attrs", "out"), [
    ("MaxPool", {"auto_pad": "SAME_LOWER"}, 5),
    ("AveragePool", {"dilations": [2, 2]}, 3),
])
def test_pooling_forms_ge_cannot_express_stay_onnx_ops(op: str, attrs: dict, out: int):
    # GE's SAME pads at the end (SAME_UPPER), MaxPool's SAME_LOWER would need asymmetric pads
    # (AveragePool's become explicit pads, see test_onnx_mapping_elementwise) and AvgPoolV2
    # has no dilations: these stay ONNX ops and export as they were.
    x = np.random.default_rng(5).standard_normal((1, 1, 5, 5)).astype(np.float32)
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[2, 2], **attrs)
    graph = helper.make_graph(
        [node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, out, out])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    g = air.onnx.load(m, warn_unknown=False)
    assert [n.type for n in g.nodes if n.type not in ("Data", "NetOutput")] == [f"onnx::{op}"]
    exp = onnx.load_from_string(air.onnx.to_bytes(g))
    assert checks(m) is None
    assert checks(exp) is None
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = ReferenceEvaluator(exp).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_body_values_of_unknown_type_export_without_a_type():
    # A Loop body whose state values carry no type: the export must not invent one (it wrote
    # float, which contradicted the int32 the parent passes in).
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Add", ["prev", "prev"], ["cur"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_value_info("prev", onnx.TypeProto())],
        [helper.make_value_info("cond_out", onnx.TypeProto()),
         helper.make_value_info("cur", onnx.TypeProto())])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], "m",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    exp = _roundtrip(m)
    (loop,) = exp.graph.node
    exp_body = loop.attribute[0].g
    assert not exp_body.input[2].HasField("type")
    assert [o.HasField("type") for o in exp_body.output] == [False, False]
    assert checks(exp) is None
    so = ort.SessionOptions()
    so.log_severity_level = 4
    feeds = {"n": np.array(3, np.int64), "x": np.array(1, np.int32)}
    got = ort.InferenceSession(exp.SerializeToString(), so,
                               providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert got.dtype == np.int32 and got == 8


def test_type_attributes_are_kept():
    # Optional's `type` attribute (a TypeProto) was dropped on import, so the export was an
    # Optional with neither input nor type.
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, []))
    node = helper.make_node("Optional", [], ["o"], type=seq)
    graph = helper.make_graph(
        [node, helper.make_node("OptionalHasElement", ["o"], ["h"])], "m", [],
        [helper.make_tensor_value_info("h", TensorProto.BOOL, [])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    exp = _roundtrip(m)
    got = next(n for n in exp.graph.node if n.op_type == "Optional")
    assert got.attribute[0].type == onnx.AttributeProto.TYPE_PROTO
    assert got.attribute[0].tp == seq
    assert checks(exp) is None
    so = ort.SessionOptions()
    so.log_severity_level = 4
    for model in (m, exp):
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        assert not sess.run(None, {})[0]


def test_ir_version_3_models_list_their_weights_as_graph_inputs():
    # Before IR version 4 an initializer must also be a graph input; the export wrote the
    # weights as initializers only, which the checker (and runtimes of that era) reject.
    w = np.arange(2, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        initializer=[onnx.numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    m.ir_version = 3
    assert checks(m) is None
    g = air.onnx.load(m, warn_unknown=False)
    assert sorted(n.type for n in g.nodes) == ["Add", "Const", "Data", "NetOutput"]
    exp = _roundtrip(m)
    assert exp.ir_version == 3
    assert [i.name for i in exp.graph.input] == ["x", "w"]
    assert checks(exp) is None
    x = np.ones(2, np.float32)
    got = ReferenceEvaluator(exp).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, x + w)
    # A model of a later IR version keeps its weights out of the inputs.
    m.ir_version = 8
    m.opset_import[0].version = 17
    del m.graph.input[1]
    assert [i.name for i in _roundtrip(m).graph.input] == ["x"]
