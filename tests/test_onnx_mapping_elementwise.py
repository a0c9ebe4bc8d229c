"""The ONNX elementwise ops and reductions mapped to GE's LogicalXor, BitwiseAnd / BitwiseOr /
BitwiseXor / Invert, Asinh / Acosh / Atanh, Swish, ThresholdedRelu and ReduceLogSum: the GE type
chosen, ``air.evaluate`` against ``onnxruntime`` / ``ReferenceEvaluator``, the export back to
ONNX, and the forms left unmapped."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from support.onnx_models import check, model, unmapped, vi  # noqa: E402
from support.ports import check_ports  # noqa: E402

F, I64, I32, U8, B = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32,
                      TensorProto.UINT8, TensorProto.BOOL)
RNG = np.random.default_rng(1616)


@pytest.fixture(autouse=True)
def _same_draws() -> None:
    """Each test draws the same inputs from ``RNG`` whatever ran before it (random order,
    pytest-xdist)."""
    RNG.bit_generator.state = np.random.default_rng(1616).bit_generator.state


def test_xor_is_logical_xor():
    node = helper.make_node("Xor", ["x", "y"], ["z"])
    m = model(node, [vi("x", B, [2, 3]), vi("y", B, [3])], [vi("z", B, [2, 3])], 13)
    feeds = {"x": RNG.random((2, 3)) > 0.5, "y": np.array([True, False, True])}
    g = check(m, feeds, "LogicalXor")
    g.infer_shapes()


@pytest.mark.parametrize(("op", "ge"), [("BitwiseAnd", "BitwiseAnd"), ("BitwiseOr", "BitwiseOr"),
                                        ("BitwiseXor", "BitwiseXor")])
@pytest.mark.parametrize(("elem", "np_t"), [(I32, np.int32), (U8, np.uint8)])
def test_bitwise_binary(op, ge, elem, np_t):
    node = helper.make_node(op, ["x", "y"], ["z"])
    m = model(node, [vi("x", elem, [2, 3]), vi("y", elem, [3])], [vi("z", elem, [2, 3])], 18)
    feeds = {"x": RNG.integers(0, 100, (2, 3)).astype(np_t),
             "y": RNG.integers(0, 100, (3,)).astype(np_t)}
    check(m, feeds, ge)


def test_bitwise_not_is_invert():
    node = helper.make_node("BitwiseNot", ["x"], ["y"])
    m = model(node, [vi("x", I32, [2, 3])], [vi("y", I32, [2, 3])], 18)
    check(m, {"x": RNG.integers(-50, 50, (2, 3)).astype(np.int32)}, "Invert")


@pytest.mark.parametrize("op", ["Asinh", "Acosh", "Atanh"])
def test_inverse_hyperbolic(op):
    node = helper.make_node(op, ["x"], ["y"])
    m = model(node, [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 13)
    lo, hi = {"Asinh": (-3, 3), "Acosh": (1, 4), "Atanh": (-0.9, 0.9)}[op]
    check(m, {"x": RNG.uniform(lo, hi, (2, 3)).astype(np.float32)}, op)


@pytest.mark.parametrize("alpha", [None, 0.5])
def test_thresholded_relu(alpha):
    attrs = {} if alpha is None else {"alpha": alpha}
    node = helper.make_node("ThresholdedRelu", ["x"], ["y"], **attrs)
    m = model(node, [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 13)
    check(m, {"x": RNG.uniform(-2, 2, (2, 3)).astype(np.float32)}, "ThresholdedRelu")


@pytest.mark.parametrize("alpha", [None, 1.7])
def test_swish(alpha):
    attrs = {} if alpha is None else {"alpha": alpha}
    node = helper.make_node("Swish", ["x"], ["y"], **attrs)
    m = model(node, [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 24)
    g = check(m, {"x": RNG.standard_normal((2, 3)).astype(np.float32)}, "Swish",
              oracle="ref")
    (sw,) = [n for n in g.nodes if n.type == "Swish"]
    assert sw.op_desc.attrs.get("scale", 1.0) == pytest.approx(alpha or 1.0)


def test_swish_below_its_opset_exports_as_its_formula():
    """ONNX has Swish from opset 24; below it the export writes x · Sigmoid(alpha · x)."""
    node = helper.make_node("Swish", ["x"], ["y"], alpha=1.7)
    g = air.onnx.load(model(node, [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 24)
                      .SerializeToString())
    old = onnx.load_from_string(air.onnx.to_bytes(g, opset=23))
    onnx.checker.check_model(old, full_check=True)
    assert [n.op_type for n in old.graph.node] == ["Mul", "Sigmoid", "Mul"]
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    (got,) = ReferenceEvaluator(old).run(None, {"x": x})
    np.testing.assert_allclose(got, x / (1 + np.exp(-1.7 * x)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("op", "elem", "opset"), [("BitwiseNot", I32, 18)])
def test_export_below_the_ops_opset_is_refused(op, elem, opset):
    node = helper.make_node(op, ["x"], ["y"])
    g = air.onnx.load(model(node, [vi("x", elem, [2])], [vi("y", elem, [2])], opset)
                      .SerializeToString())
    air.onnx.to_bytes(g)
    with pytest.raises(air.InvalidArgumentError):
        air.onnx.to_bytes(g, opset=opset - 1)


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", [None, [1], [-1, 0]])
def test_reduce_log_sum(keepdims, axes):
    ins = ["x"] + (["axes"] if axes is not None else [])
    node = helper.make_node("ReduceLogSum", ins, ["y"], keepdims=keepdims)
    inputs = [vi("x", F, [2, 3, 4])] + ([vi("axes", I64, [len(axes)])] if axes else [])
    red = {0, 1, 2} if axes is None else {a % 3 for a in axes}
    shape = [1 if k in red else d for k, d in enumerate([2, 3, 4]) if keepdims or k not in red]
    m = model(node, inputs, [vi("y", F, shape)], 18)
    feeds = {"x": RNG.uniform(0.1, 2, (2, 3, 4)).astype(np.float32)}
    if axes is not None:
        feeds["axes"] = np.array(axes, np.int64)
    g = check(m, feeds, "ReduceLogSum")
    g.infer_shapes()


def test_reduce_log_sum_noop_with_empty_axes_stays_onnx():
    node = helper.make_node("ReduceLogSum", ["x"], ["y"], noop_with_empty_axes=1)
    m = model(node, [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 18)
    unmapped(m, "ReduceLogSum")


@pytest.mark.parametrize("attrs", [
    {},
    {"strides": [2, 3], "pads": [1, 0, 2, 1], "output_padding": [1, 1]},
    {"strides": [2, 2], "dilations": [2, 1], "group": 2},
    {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"strides": [2, 2], "auto_pad": "SAME_LOWER"},
    {"strides": [3, 2], "output_shape": [10, 8]},
])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_2d(attrs, bias):
    group = attrs.get("group", 1)
    ins = ["x", "w"] + (["b"] if bias else [])
    node = helper.make_node("ConvTranspose", ins, ["y"], **attrs)
    inputs = [vi("x", F, [2, 4, 4, 5]), vi("w", F, [4, 3, 3, 2])]
    inputs += [vi("b", F, [3 * group])] if bias else []
    m = model(node, inputs, [vi("y", F, None)], 13)
    m = onnx.shape_inference.infer_shapes(m)
    feeds = {"x": RNG.standard_normal((2, 4, 4, 5)).astype(np.float32),
             "w": RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)}
    if bias:
        feeds["b"] = RNG.standard_normal(3 * group).astype(np.float32)
    # The reference evaluator fails on grouped and output_shape forms: onnxruntime alone.
    oracle = "ort" if "group" in attrs or "output_shape" in attrs else "both"
    g = check(m, feeds, "Conv2DTransposeD", rtol=1e-4, atol=1e-4, oracle=oracle)
    g.infer_shapes()


def test_conv_transpose_forms_without_ge_equivalent_stay_onnx():
    # The output_shape asks for more than the full transposed convolution; unknown dims.
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2],
                            output_shape=[12, 8])
    m = model(node, [vi("x", F, [1, 1, 3, 3]), vi("w", F, [1, 2, 3, 3])], [vi("y", F, None)], 13)
    unmapped(m, "ConvTranspose")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"])
    m = model(node, [vi("x", F, ["n", 1, 3, 3]), vi("w", F, [1, 2, 3, 3])], [vi("y", F, None)],
              13)
    unmapped(m, "ConvTranspose")


@pytest.mark.parametrize("axis", [None, 0, 1, -2])
def test_hardmax(axis):
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Hardmax", ["x"], ["y"], **attrs)
    m = model(node, [vi("x", F, [3, 4, 5])], [vi("y", F, [3, 4, 5])], 13)
    x = RNG.integers(0, 3, (3, 4, 5)).astype(np.float32)  # ties: the first maximum wins
    check(m, {"x": x}, "HardMax")


def test_hardmax_before_opset_13_stays_onnx():
    node = helper.make_node("Hardmax", ["x"], ["y"], axis=1)
    m = model(node, [vi("x", F, [3, 4, 5])], [vi("y", F, [3, 4, 5])], 11)
    unmapped(m, "Hardmax")


def _rnn_case(op, direction, with_lens, extra=None):
    seq, batch, inp, hid = 4, 3, 5, 6
    gates = 4 if op == "LSTM" else 3
    dirs = 2 if direction == "bidirectional" else 1
    ins = ["x", "w", "r", "b", "lens", "h0"] + (["c0", "p"] if op == "LSTM" else [])
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    node = helper.make_node(op, ins, outs, hidden_size=hid, direction=direction, **(extra or {}))
    shapes = {"x": [seq, batch, inp], "w": [dirs, gates * hid, inp],
              "r": [dirs, gates * hid, hid], "b": [dirs, 2 * gates * hid],
              "h0": [dirs, batch, hid], "c0": [dirs, batch, hid], "p": [dirs, 3 * hid]}
    inputs = [vi(n, I32 if n == "lens" else F, [batch] if n == "lens" else shapes[n])
              for n in ins]
    outputs = [vi("y", F, [seq, dirs, batch, hid])] + [vi(o, F, [dirs, batch, hid])
                                                       for o in outs[1:]]
    m = model(node, inputs, outputs, 14)
    feeds = {n: (RNG.standard_normal(shapes[n]) * 0.5).astype(np.float32)
             for n in ins if n != "lens"}
    feeds["lens"] = np.array([4, 2, 3] if with_lens else [4, 4, 4], np.int32)
    return m, feeds


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("with_lens", [False, True])
def test_lstm(direction, with_lens):
    m, feeds = _rnn_case("LSTM", direction, with_lens)
    g = check(m, feeds, "CommonLSTM", rtol=1e-4, atol=1e-5, oracle="ort")
    g.infer_shapes()


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("with_lens", [False, True])
@pytest.mark.parametrize("lbr", [0, 1])
def test_gru(direction, with_lens, lbr):
    m, feeds = _rnn_case("GRU", direction, with_lens, {"linear_before_reset": lbr})
    g = check(m, feeds, "CommonGRU", rtol=1e-4, atol=1e-5, oracle="ort")
    g.infer_shapes()


@pytest.mark.parametrize("extra", [{"layout": 1}, {"clip": 1.0}, {"input_forget": 1},
                                   {"activations": ["Relu", "Tanh", "Tanh"]}])
def test_rnn_forms_without_ge_equivalent_stay_onnx(extra):
    node = helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=2, **extra)
    m = model(node, [vi("x", F, [2, 1, 3]), vi("w", F, [1, 8, 3]), vi("r", F, [1, 8, 2])],
              [vi("y", F, None)], 14)
    unmapped(m, "LSTM")


def test_cast_like_target_typed_through_an_unmapped_producer():
    # Pad with axes stays an ONNX op; its output has its input's type, so the CastLike whose
    # target it is becomes a Cast.
    nodes = [helper.make_node("Pad", ["t", "pads", "", "axes"], ["tp"]),
             helper.make_node("CastLike", ["x", "tp"], ["y"])]
    m = model(nodes, [vi("x", I64, [2, 3]), vi("t", TensorProto.FLOAT16, [2, 2]),
                      vi("pads", I64, [2]), vi("axes", I64, [1])],
              [vi("y", TensorProto.FLOAT16, [2, 3])], 18)
    _, rep = air.onnx.load(m.SerializeToString(), return_report=True, warn_unknown=False)
    assert rep.unknown_ops == {"onnx::Pad": 1}
    g = air.onnx.load(m.SerializeToString(), warn_unknown=False)
    (cast,) = [n for n in g.nodes if n.type == "Cast"]
    assert cast.op_desc.attrs["dst_type"] == int(air.DataType.FLOAT16)


@pytest.mark.parametrize(("shape", "kernel", "strides"), [([1, 2, 7, 6], [3, 2], [2, 1]),
                                                         ([2, 1, 5, 5], [2, 2], [1, 1])])
def test_average_pool_same_lower_becomes_explicit_pads(shape, kernel, strides):
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=kernel, strides=strides,
                            auto_pad="SAME_LOWER")
    out = [shape[0], shape[1]] + [-(-d // s) for d, s in zip(shape[2:], strides, strict=True)]
    m = model(node, [vi("x", F, shape)], [vi("y", F, out)], 13)
    g = check(m, {"x": RNG.standard_normal(shape).astype(np.float32)}, "AvgPoolV2")
    (pool,) = [n for n in g.nodes if n.type == "AvgPoolV2"]
    assert pool.op_desc.attrs["padding_mode"] == "CALCULATED"


def test_pool_same_lower_forms_left_as_onnx():
    # MaxPool's explicit pads would be asymmetric (the reference evaluator mis-sizes them);
    # unknown spatial dims leave no pads to compute.
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    unmapped(model(node, [vi("x", F, [1, 1, 4, 4])], [vi("y", F, [1, 1, 4, 4])], 13), "MaxPool")
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                            auto_pad="SAME_LOWER")
    unmapped(model(node, [vi("x", F, [1, 1, "h", 4])], [vi("y", F, None)], 13), "AveragePool")


@pytest.mark.parametrize(("attrs", "ge"), [({}, "HardShrink"), ({"lambd": 1.5}, "HardShrink"),
                                           ({"lambd": 1.5, "bias": 1.5}, "SoftShrink")])
def test_shrink(attrs, ge):
    node = helper.make_node("Shrink", ["x"], ["y"], **attrs)
    m = model(node, [vi("x", F, [2, 5])], [vi("y", F, [2, 5])], 13)
    x = np.array([[-2, -1.5, -1, -0.5, 0], [0.5, 1, 1.5, 2, 3]], np.float32)
    check(m, {"x": x}, ge)


@pytest.mark.parametrize(("attrs", "elem"), [({"lambd": 1.0, "bias": 0.5}, F),
                                             ({"lambd": -1.0}, F), ({}, I32)])
def test_shrink_forms_without_ge_equivalent_stay_onnx(attrs, elem):
    node = helper.make_node("Shrink", ["x"], ["y"], **attrs)
    unmapped(model(node, [vi("x", elem, [3])], [vi("y", elem, [3])], 13), "Shrink")


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2, 2]},
    {"kernel_shape": [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "ceil_mode": 1, "dilations": [1, 1, 2]},
    {"kernel_shape": [2, 2, 3], "strides": [2, 2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [2, 2, 2], "auto_pad": "VALID"},
])
def test_max_pool_3d(attrs):
    node = helper.make_node("MaxPool", ["x"], ["y"], **attrs)
    m = onnx.shape_inference.infer_shapes(
        model(node, [vi("x", F, [1, 2, 5, 6, 7])], [vi("y", F, None)], 19))
    g = check(m, {"x": RNG.standard_normal((1, 2, 5, 6, 7)).astype(np.float32)}, "MaxPool3D",
              oracle="ort")
    g.infer_shapes()
    (pool,) = [n for n in g.nodes if n.type == "MaxPool3D"]
    check_ports(pool)
    want = [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]
    assert list(pool.op_desc.output_desc(0).shape) == want


def test_max_pool_3d_same_lower_stays_onnx():
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], auto_pad="SAME_LOWER")
    unmapped(model(node, [vi("x", F, [1, 1, 4, 4, 4])], [vi("y", F, None)], 13), "MaxPool")
