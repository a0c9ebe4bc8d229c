"""3-D Conv and AveragePool, LRN, opset < 13 Softmax over trailing axes, and the attribute forms
of old opsets' Clip, Slice and Pad: each maps to a GE type, ``air.evaluate`` and the export in
the model's own opset agree with onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import ascendir as air  # noqa: E402
from support.onnx_models import check, model, run_ort, types_of, vi  # noqa: E402

F = TP.FLOAT
RNG = np.random.default_rng(0)


def _checked(m, feeds, ge_type, **kw):
    """``support.onnx_models.check`` of ``m`` with its output shapes declared (as onnxruntime
    computes them): ``onnx.checker``'s full check wants a shape on an output it cannot infer."""
    for out, y in zip(m.graph.output, run_ort(m, feeds), strict=True):
        out.CopyFrom(vi(out.name, out.type.tensor_type.elem_type, list(y.shape)))
    return check(m, feeds, ge_type, oracle="ort", **kw)


def _inferred_shape(g, ge_type: str) -> list[int]:
    """The output shape of the graph's ``ge_type`` node after ``Graph.infer_shapes``."""
    g.infer_shapes()
    (n,) = [n for n in g.nodes if n.type == ge_type]
    return list(n.op_desc.output_desc(0).shape)


def _exported_attrs(g, op: str, opset: int | None = None) -> dict:
    out = onnx.load_from_string(air.onnx.to_bytes(g, opset=opset) if opset else
                                air.onnx.to_bytes(g))
    onnx.checker.check_model(out, full_check=True)
    (node,) = [n for n in out.graph.node if n.op_type == op]
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


@pytest.mark.parametrize(("attrs", "bias"), [
    ({"kernel_shape": [2, 3, 2], "strides": [1, 2, 1], "pads": [1, 0, 1, 0, 1, 1]}, True),
    ({"dilations": [2, 1, 1], "group": 2}, False),
    ({"auto_pad": "VALID", "strides": [2, 2, 2]}, True),
])
def test_conv_3d_maps_to_conv3d(attrs, bias):
    w = RNG.standard_normal((4, 2 if attrs.get("group") else 4, 2, 3, 2)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    ins = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(RNG.standard_normal(4).astype(np.float32), "b"))
        ins.append("b")
    m = model(helper.make_node("Conv", ins, ["y"], **attrs), [vi("x", F, [1, 4, 5, 6, 7])],
              [vi("y", F, None)], 13)
    m.graph.initializer.extend(inits)
    x = RNG.standard_normal((1, 4, 5, 6, 7)).astype(np.float32)
    g = _checked(m, {"x": x}, "Conv3D", rtol=1e-4, atol=1e-5)
    assert _inferred_shape(g, "Conv3D") == list(run_ort(m, {"x": x})[0].shape)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2, 2]},
    {"kernel_shape": [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0],
     "count_include_pad": 1},
    {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1],
     "ceil_mode": 1},
])
def test_average_pool_3d_maps_to_avgpool3d(attrs):
    m = model(helper.make_node("AveragePool", ["x"], ["y"], **attrs),
              [vi("x", F, [2, 3, 5, 6, 7])], [vi("y", F, None)], 13)
    x = RNG.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    g = _checked(m, {"x": x}, "AvgPool3D")
    assert _inferred_shape(g, "AvgPool3D") == list(run_ort(m, {"x": x})[0].shape)


def test_average_pool_3d_at_opset_6_excludes_the_padding():
    """Opset 6 has no ``count_include_pad`` (padding is not counted): the same as opset 7's
    default, which onnxruntime runs (it has no opset 6 AveragePool)."""
    def pool(opset):
        return model(helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3, 3],
                                      pads=[1, 1, 1, 1, 1, 1]),
                     [vi("x", F, [1, 2, 4, 4, 4])], [vi("y", F, [1, 2, 4, 4, 4])], opset)

    x = RNG.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
    g = air.onnx.load(pool(6).SerializeToString())
    assert "AvgPool3D" in types_of(g)
    (want,) = run_ort(pool(7), {"x": x})
    np.testing.assert_allclose(list(air.evaluate(g, {"x": x}).values())[0], want, rtol=1e-5,
                               atol=1e-6)
    assert "count_include_pad" not in _exported_attrs(g, "AveragePool")


@pytest.mark.parametrize(("size", "opset"), [(3, 13), (5, 9)])
def test_lrn_maps_to_ge_lrn(size, opset):
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=2e-3, beta=0.6, bias=1.5)
    m = model(node, [vi("x", F, [2, 7, 3, 4])], [vi("y", F, None)], opset)
    x = RNG.standard_normal((2, 7, 3, 4)).astype(np.float32) * 4
    g = _checked(m, {"x": x}, "LRN")
    (lrn,) = [n for n in g.nodes if n.type == "LRN"]
    assert lrn.op_desc.attrs["depth_radius"] == (size - 1) // 2
    back = _exported_attrs(g, "LRN")
    assert back["size"] == size
    assert back["alpha"] == pytest.approx(2e-3)


def test_lrn_of_an_even_size_stays_onnx():
    m = model(helper.make_node("LRN", ["x"], ["y"], size=4), [vi("x", F, [1, 6, 2, 2])],
              [vi("y", F, None)], 13)
    assert types_of(air.onnx.load(m.SerializeToString())) == ["onnx::LRN"]


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize(("axis", "opset"), [(1, 11), (2, 9), (0, 6)])
def test_old_softmax_over_trailing_axes(op, axis, opset):
    """Before opset 13 the op flattens to 2-D at ``axis``: one softmax over every axis from
    ``axis`` on (SoftmaxV2 axes), exported back as the same ``axis``."""
    m = model(helper.make_node(op, ["x"], ["y"], axis=axis), [vi("x", F, [2, 3, 4, 5])],
              [vi("y", F, None)], opset)
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    g = _checked(m, {"x": x}, f"{op}V2")
    (sm,) = [n for n in g.nodes if n.type == f"{op}V2"]
    assert sm.op_desc.attrs["axes"] == list(range(axis - 4, 0))
    assert _exported_attrs(g, op)["axis"] == axis - 4


def test_old_softmax_rank_from_the_producer():
    """The Softmax input's rank is not declared: a Gemm (MatMulV2) gives 2, the Relu after a
    Conv 4, so the default axis 1 maps."""
    w = numpy_helper.from_array(RNG.standard_normal((3, 2, 1, 1)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"])]
    m = model(nodes, [vi("x", F, [1, 2, 3, 3])], [vi("y", F, None)], 9)
    m.graph.initializer.append(w)
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float32)
    g = _checked(m, {"x": x}, "SoftmaxV2", rtol=1e-4, atol=1e-6)
    (sm,) = [n for n in g.nodes if n.type == "SoftmaxV2"]
    assert sm.op_desc.attrs["axes"] == [-3, -2, -1]


def test_old_clip_attributes_are_the_clip_values():
    """Opset 6 Clip's min / max attributes are ClipByValue's value inputs (they were left as
    attributes the kernel did not read)."""
    m = model(helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25),
              [vi("x", F, [3, 4])], [vi("y", F, None)], 6)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    g = _checked(m, {"x": x}, "ClipByValue")
    assert _exported_attrs(g, "Clip") == {"min": -0.5, "max": 0.25}
    # At opset 11 and later the values are inputs again.
    out = onnx.load_from_string(air.onnx.to_bytes(g, opset=13))
    onnx.checker.check_model(out, full_check=True)
    (clip,) = out.graph.node
    assert len(clip.input) == 3


def test_old_slice_attributes_are_the_slice_inputs():
    m = model(helper.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[0, 2]),
              [vi("x", F, [4, 3, 5])], [vi("y", F, None)], 9)
    x = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    g = _checked(m, {"x": x}, "StridedSliceV2")
    assert _exported_attrs(g, "Slice") == {"starts": [1, 0], "ends": [3, -1], "axes": [0, 2]}


@pytest.mark.parametrize(("mode", "value"), [("constant", 1.5), ("reflect", 0.0),
                                             ("edge", 0.0)])
def test_old_pad_attributes_map_to_padv3(mode, value):
    m = model(helper.make_node("Pad", ["x"], ["y"], mode=mode, pads=[0, 1, 2, 0, 2, 1],
                               value=value),
              [vi("x", F, [2, 4, 5])], [vi("y", F, None)], 2)
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    g = _checked(m, {"x": x}, "PadV3")
    back = _exported_attrs(g, "Pad")
    assert back["pads"] == [0, 1, 2, 0, 2, 1]
    assert back["mode"] == mode.encode()


def test_conv_sums_float_inputs_with_one_rounding():
    """A float32 Conv is summed in float64 and rounded once: ``1e8 + 1 - 1e8`` over three
    channels is 1 (a float32 running sum loses the 1), as exact arithmetic gives it."""
    w = numpy_helper.from_array(np.ones((1, 3, 1, 1), np.float32), "w")
    m = model(helper.make_node("Conv", ["x", "w"], ["y"]), [vi("x", F, [1, 3, 1, 2])],
              [vi("y", F, [1, 1, 1, 2])], 13)
    m.graph.initializer.append(w)
    x = np.array([1e8, 1e8, 1, 3, -1e8, -1e8], np.float32).reshape(1, 3, 1, 2)
    want = x.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
    got = list(air.evaluate(air.onnx.load(m.SerializeToString()), {"x": x}).values())[0]
    np.testing.assert_array_equal(got, want)
    assert want.ravel().tolist() == [1.0, 3.0]


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3]},
    {"kernel_shape": [3], "strides": [2], "pads": [1, 1], "dilations": [2]},
    {"kernel_shape": [2], "strides": [2], "ceil_mode": 1},
])
def test_one_d_max_pool_runs_as_max_pool_v3_over_a_unit_axis(attrs):
    """GE's MaxPoolV3 takes 2-D windows: a 1-D MaxPool is MaxPoolV3 over [N, C, 1, L]
    between an Unsqueeze and a Squeeze, as the PyTorch frontend does it."""
    m = model(helper.make_node("MaxPool", ["x"], ["y"], **attrs), [vi("x", F, [2, 3, 9])],
              [vi("y", F, None)], 12)
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    g, rep = air.onnx.load(m.SerializeToString(), return_report=True)
    assert rep.unknown_ops == {}
    assert sorted(types_of(g)) == ["MaxPoolV3", "Squeeze", "Unsqueeze"]
    (want,) = run_ort(m, {"x": x})
    np.testing.assert_array_equal(list(air.evaluate(g, {"x": x}).values())[0], want)
