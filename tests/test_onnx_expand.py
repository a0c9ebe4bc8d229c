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
RNG = np.random.default_rng(7)


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


@pytest.mark.sweep
def test_expanded_conformance_cases_reproduce_onnx(mapping_summary):
    from onnx.backend.test.case import node as cases_of

    import test_evaluate_onnx as ev

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
        status, why = ev.evaluate_case(c, g)
        tally[status] += 1
        if status == "fail" and ev.known_reason(c.name) is None:
            unexpected[c.name] = why
    mapping_summary.append(f"expand_functions: {sum(tally.values())} more cases fully mapped, "
                           f"{tally['pass']} reproduce the expected outputs")
    assert not unexpected, unexpected
    assert tally["pass"] >= 150
