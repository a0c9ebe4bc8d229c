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

from test_evaluate_onnx import as_array, mismatch  # noqa: E402

# Cases whose export does not reproduce what the original does, and why. A listed case may
# pass; an unlisted one must.
KNOWN = {
    "test_averagepool_2d_dilations": "mapping drops AveragePool dilations",
    "test_averagepool_2d_same_lower": "mapping writes SAME_LOWER pooling as SAME",
    "test_maxpool_2d_same_lower": "mapping writes SAME_LOWER pooling as SAME",
    "test_range_": "the expanded Range's Loop body exports a form onnxruntime rejects",
    "test_affine_grid_": "exported sequence/optional values lose their types (unmapped ops kept)",
    "test_if_seq": "exported sequence/optional values lose their types (unmapped ops kept)",
    "test_if_opt": "exported sequence/optional values lose their types (unmapped ops kept)",
    "test_split_to_sequence_": "exported sequence/optional values lose their types",
    "test_linear_attention_fp16_expanded": "unmapped ops kept; onnxruntime rejects the export",
}


def known_reason(name: str) -> str | None:
    for prefix, why in KNOWN.items():
        if name.startswith(prefix):
            return why
    return None


def _reproduces(run, case) -> bool:
    try:
        for inputs, outputs in case.data_sets:
            got = run([as_array(v) for v in inputs])
            if len(got) != len(outputs):
                return False
            for a, e in zip(got, outputs, strict=True):
                if mismatch(a, as_array(e), case.rtol, case.atol):
                    return False
    except Exception:  # noqa: BLE001 - a runtime refusing the model counts as not reproducing
        return False
    return True


def _reference(m):
    sess = ReferenceEvaluator(m)
    names = [i.name for i in m.graph.input]
    return lambda xs: sess.run(None, dict(zip(names, xs, strict=False)))


def _onnxruntime(m):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return lambda xs: sess.run(None, dict(zip(names, xs, strict=False)))


def _runs(make, m, case) -> bool:
    try:
        run = make(m)
    except Exception:  # noqa: BLE001 - a runtime refusing the model counts as not reproducing
        return False
    return _reproduces(run, case)


def _checks(m) -> str | None:
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - the checker's own error types vary by version
        return str(e).splitlines()[0] if str(e) else type(e).__name__
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
            for name, make in (("ReferenceEvaluator", _reference), ("onnxruntime", _onnxruntime)):
                orig_ok = _runs(make, case.model, case)
                runs[name] = (orig_ok, orig_ok and _runs(make, exp, case))
            out[case.name] = (_checks(case.model), _checks(exp), runs)
    return out


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
    # Measured 97.9 % (1844 / 1883); the target is 99 % (what is left: sequence and
    # optional value types, Split inside If bodies, Loop/Scan state types).
    assert passed / len(checked) >= 0.975


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
    assert _checks(m) is None
    assert _checks(exp) is None
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
    assert _checks(m) is None
    assert _checks(exp) is None
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
    assert _checks(m) is None
    assert _checks(exp) is None
