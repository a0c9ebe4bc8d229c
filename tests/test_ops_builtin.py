"""The builtin operator library: coverage of GE's op types, GE port and attribute names, and
inference through add_op for each rule family."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air
from ascendir import ops

REQUIRED_TYPES = """
Data Const NetOutput Identity Cast Add Sub Mul RealDiv Maximum Minimum Pow Abs Neg Exp Log Sqrt
Rsqrt Reciprocal Tanh Sigmoid Relu Relu6 LeakyRelu Gelu Erf Sign Equal NotEqual Greater
GreaterEqual Less LessEqual LogicalAnd LogicalOr LogicalNot Select ReduceSum ReduceMean ReduceMax
ReduceMin ReduceProd MatMul MatMulV2 BatchMatMul BatchMatMulV2 Conv2D Conv2DBackpropInput
MaxPool AvgPool BatchNorm LayerNorm SoftmaxV2 Reshape Transpose TransposeD ConcatV2 ConcatV2D
Split SplitV SplitD GatherV2 StridedSlice Slice Squeeze Unsqueeze ExpandDims Tile Pad Shape Fill
Range TopK ArgMaxV2 If While Case PartitionedCall Eltwise Pooling FullyConnection TransData Aipp
""".split()


def test_every_required_type_is_registered():
    missing = [t for t in REQUIRED_TYPES if not ops.is_registered(t)]
    assert missing == []
    assert len(ops.list_ops()) >= 150


@pytest.mark.parametrize(
    ("op", "inputs", "outputs", "attrs"),
    [
        (
            "Conv2D",
            ["x", "filter", "bias", "offset_w"],
            ["y"],
            ["strides", "pads", "dilations", "groups", "data_format", "offset_x"],
        ),
        (
            "MatMulV2",
            ["x1", "x2", "bias", "offset_w"],
            ["y"],
            ["transpose_x1", "transpose_x2", "offset_x"],
        ),
        ("BatchMatMul", ["x1", "x2", "bias"], ["y"], ["adj_x1", "adj_x2"]),
        ("ConcatV2", ["x", "concat_dim"], ["y"], ["N"]),
        ("Split", ["split_dim", "x"], ["y"], ["num_split"]),
        ("GatherV2", ["x", "indices", "axis"], ["y"], ["batch_dims"]),
        (
            "BatchNorm",
            ["x", "scale", "offset", "mean", "variance"],
            ["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"],
            ["epsilon", "data_format", "is_training"],
        ),
        ("TopK", ["x", "k"], ["values", "indices"], ["sorted", "dim", "largest"]),
        ("Cast", ["x"], ["y"], ["dst_type"]),
        ("If", ["cond", "input"], ["output"], []),
        (
            "Pooling",
            ["x"],
            ["y"],
            [
                "mode",
                "global_pooling",
                "window",
                "stride",
                "pad",
                "dilation",
                "ceil_mode",
                "data_format",
            ],
        ),
    ],
)
def test_ge_port_and_attribute_names(op, inputs, outputs, attrs):
    d = ops.get(op)
    assert d.input_names() == inputs
    assert d.output_names() == outputs
    assert d.attr_names() == attrs


def test_declaration_kinds():
    conv = ops.get("Conv2D")
    kinds = {i.name: i.kind for i in conv.inputs}
    assert kinds == {
        "x": "required",
        "filter": "required",
        "bias": "optional",
        "offset_w": "optional",
    }
    assert ops.get("ConcatV2").inputs[0].kind == "dynamic"
    assert ops.get("SplitD").outputs[0].kind == "dynamic"
    assert [s.name for s in ops.get("If").subgraphs] == ["then_branch", "else_branch"]
    assert ops.get("Case").subgraphs[0].dynamic
    assert ops.get("Cast").attrs[0].required
    assert ops.get("Relu").rule.kind == "same_as"
    assert ops.get("Aipp").rule is None and ops.get("Aipp").infer_fn is not None


def graph_with(*shapes, dtype=air.float32):
    g = air.Graph()
    return g, [g.add_input(f"in{i}", air.TensorDesc(list(s), dtype)) for i, s in enumerate(shapes)]


def shape_of(node, i=0):
    return node.op_desc.output_desc(i).shape


def test_unary_binary_compare_and_logical():
    g, (a, b) = graph_with([4, 1, 3], [5, 1])
    for t in ("Abs", "Sigmoid", "Gelu", "Relu6"):
        assert shape_of(g.add_op(t, [a])) == (4, 1, 3)
    for t in ("Add", "Mul", "RealDiv", "Maximum", "Pow"):
        assert shape_of(g.add_op(t, [a, b])) == (4, 5, 3)
    lt = g.add_op("Less", [a, b])
    assert lt.op_desc.output_desc(0).dtype == air.bool_
    both = g.add_op("LogicalAnd", [lt, lt])
    assert shape_of(both) == (4, 5, 3) and both.op_desc.output_desc(0).dtype == air.bool_
    sel = g.add_op("SelectV2", [lt, a, b])
    assert shape_of(sel) == (4, 5, 3)
    n = g.add_op("AddN", [[a, a, a]])
    assert n.attrs["N"] == 3 and shape_of(n) == (4, 1, 3)
    c = g.add_op("Cast", [a], attrs={"dst_type": int(air.float16)})
    assert c.op_desc.output_desc(0).dtype == air.float16


def test_reductions_norms_and_selection():
    g, (x,) = graph_with([2, 3, 4])
    assert shape_of(g.add_op("ReduceMeanD", [x], attrs={"axes": [1]})) == (2, 4)
    axes = g.add_const("axes", np.array([0, -1], np.int64))
    assert shape_of(g.add_op("ReduceMax", [x, axes], attrs={"keep_dims": True})) == (1, 3, 1)
    k = g.add_const("k", np.array(2, np.int32))
    top = g.add_op("TopKV2", [x, k])
    assert shape_of(top, 0) == (2, 3, 2) and top.op_desc.output_desc(1).dtype == air.int32
    am = g.add_op("ArgMaxD", [x], attrs={"dimension": 1})
    assert shape_of(am) == (2, 4) and am.op_desc.output_desc(0).dtype == air.int32
    scale = g.add_input("scale", air.TensorDesc([3], air.float32))
    bn = g.add_op("BatchNorm", [x, scale, scale])
    assert [shape_of(bn, i) for i in range(5)] == [(2, 3, 4)] + [(3,)] * 4
    ln = g.add_op("LayerNorm", [x, scale, scale], attrs={"begin_norm_axis": 1})
    assert shape_of(ln, 1) == (2, 1, 1)
    sm = g.add_op("SoftmaxV2", [x])
    assert sm.attrs["axes"] == [-1] and shape_of(sm) == (2, 3, 4)


def test_layout_ops():
    g, (x,) = graph_with([1, 3, 1, 5])
    assert shape_of(g.add_op("Squeeze", [x])) == (3, 5)
    assert shape_of(g.add_op("Unsqueeze", [x], attrs={"axes": [0]})) == (1, 1, 3, 1, 5)
    assert shape_of(g.add_op("ExpandDims", [x, g.add_const("a", np.array(-1, np.int32))])) == (
        1,
        3,
        1,
        5,
        1,
    )
    assert shape_of(g.add_op("TransposeD", [x], attrs={"perm": [3, 2, 1, 0]})) == (5, 1, 3, 1)
    assert shape_of(g.add_op("Flatten", [x])) == (1, 15)
    assert shape_of(g.add_op("TileD", [x], attrs={"multiples": [2, 1, 3, 1]})) == (2, 3, 3, 5)
    assert shape_of(
        g.add_op("PadD", [x], attrs={"paddings": [[0, 0], [1, 1], [0, 0], [2, 2]]})
    ) == (1, 5, 1, 9)
    sv = g.add_op("SplitVD", [x], attrs={"size_splits": [1, -1], "split_dim": -1, "num_split": 2})
    assert [shape_of(sv, i) for i in range(2)] == [(1, 3, 1, 1), (1, 3, 1, 4)]
    sl = g.add_op("SliceD", [x], attrs={"offsets": [0, 1, 0, 0], "size": [-1, 2, -1, 3]})
    assert shape_of(sl) == (1, 2, 1, 3)
    r = g.add_op(
        "Range", [g.add_const(f"r{i}", np.array(v, np.int32)) for i, v in enumerate((0, 10, 2))]
    )
    assert shape_of(r) == (5,)
    e = g.add_op("Expand", [x, g.add_const("es", np.array([2, 1, 3, 4, 5], np.int64))])
    assert shape_of(e) == (2, 1, 3, 4, 5)


def test_conv_family():
    g = air.Graph()
    x = g.add_input("x", air.TensorDesc([1, 16, 16, 8], air.float16, format="NHWC"))
    w = g.add_input("w", air.TensorDesc([3, 3, 8, 32], air.float16, format="HWCN"))
    c = g.add_op(
        "Conv2D",
        [x, w],
        attrs={"strides": [1, 2, 2, 1], "pads": [1, 1, 1, 1], "data_format": "NHWC"},
    )
    assert shape_of(c) == (1, 8, 8, 32)
    assert c.op_desc.output_desc(0).format == air.Format.NHWC
    p = g.add_op(
        "AvgPool", [c], attrs={"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    )
    assert shape_of(p) == (1, 4, 4, 32)
    size = g.add_const("size", np.array([1, 16, 16, 8], np.int32))
    back = g.add_op(
        "Conv2DBackpropInput", [size, w, c], attrs={"strides": [1, 2, 2, 1], "pads": [1, 1, 1, 1]}
    )
    assert shape_of(back) == (1, 16, 16, 8)
    fc = g.add_op(
        "FullyConnection",
        [p, g.add_input("fw", air.TensorDesc([10, 512], air.float16))],
        attrs={"num_output": 10},
    )
    assert shape_of(fc) == (1, 1, 1, 10)


def test_aipp_python_rule():
    g = air.Graph()
    img = g.add_input("img", air.TensorDesc([1, 224, 224, 3], air.uint8, format="NHWC"))
    a = g.add_op("Aipp", [img])
    assert shape_of(a) == (1, 3, 224, 224)
    assert a.op_desc.output_desc(0).dtype == air.float16
