"""``air.evaluate``: GE-only op semantics against direct numpy expectations, control flow
built by hand, feeds / outputs / errors, zero-copy weights, and equality with the graphs
``air.compile`` makes (AscBackend nodes run through ``asc.evaluate``)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ascendir as air
from ascendir.evaluator import MAX_DEPTH, supported_ops
from ascendir.evaluator._nn import conv_nchw

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "transformer_block.onnx")
RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _same_draws() -> None:
    """Each test draws the same inputs from ``RNG`` whatever ran before it (random order,
    pytest-xdist)."""
    RNG.bit_generator.state = np.random.default_rng(3).bit_generator.state


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def one(type_, inputs, attrs=None, outputs=None, descs=()):
    """A graph of one op over fresh inputs; returns (graph, output keys)."""
    g = air.Graph("one")
    srcs = []
    for i, v in enumerate(inputs):
        if isinstance(v, list):
            srcs.append([g.add_input(f"x{i}_{k}", air.TensorDesc(list(a.shape),
                                                                 air.DataType.from_numpy(a.dtype)))
                         for k, a in enumerate(v)])
        elif v is None:
            srcs.append(None)
        else:
            a = np.asarray(v)
            srcs.append(g.add_input(f"x{i}", air.TensorDesc(list(a.shape),
                                                            air.DataType.from_numpy(a.dtype))))
    kw = {} if outputs is None else {"outputs": outputs}
    n = g.add_op(type_, srcs, name="op", attrs=attrs or {}, **kw)
    for fmt_i, fmt in descs:
        d = n.op_desc.input_desc(fmt_i)
        d.format = fmt
        n.op_desc.update_input_desc(fmt_i, d)
    g.set_outputs([(n, k) for k in range(len(n.out_data_anchors))])
    return g


def feeds_of(inputs):
    out = []
    for v in inputs:
        if isinstance(v, list):
            out.extend(v)
        elif v is not None:
            out.append(np.asarray(v))
    return out


def run1(type_, inputs, attrs=None, outputs=None, descs=()):
    g = one(type_, inputs, attrs, outputs, descs)
    return list(air.evaluate(g, feeds_of(inputs)).values())


def test_every_builtin_op_has_a_kernel():
    # Except the few whose values cannot be computed here, each listed with the reason.
    from ascendir.evaluator._ge import NOT_EVALUATED

    assert set(air.ops.list_ops()) - set(supported_ops()) == set(NOT_EVALUATED)
    g = air.Graph("g")
    p = g.add_op("PlaceHolder", [], output_descs=[air.TensorDesc([2], air.float32)])
    g.set_outputs([p])
    with pytest.raises(air.UnsupportedOpError, match="another graph partition"):
        air.evaluate(g, {})


# ---------------------------------------------------------------- element-wise


@pytest.mark.parametrize("op,fn", [
    ("Rsqrt", lambda x: 1 / np.sqrt(x)), ("Square", np.square), ("Log1p", np.log1p),
    ("Expm1", np.expm1), ("Relu6", lambda x: np.clip(x, 0, 6)),
    ("Softplus", lambda x: np.log1p(np.exp(x))), ("Mish", lambda x: x * np.tanh(np.log1p(
        np.exp(x)))), ("Swish", lambda x: x / (1 + np.exp(-x))),
    ("Gelu", lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
])
def test_unary_math(op, fn):
    x = np.abs(rand(3, 5)) + 0.1
    (y,) = run1(op, [x])
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, fn(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_integer_division_and_remainders_follow_c():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    assert run1("RealDiv", [a, b])[0].tolist() == [3, -3, -3, 3]
    assert run1("FloorDiv", [a, b])[0].tolist() == [3, -4, -4, 3]
    assert run1("Mod", [a, b])[0].tolist() == [1, -1, 1, -1]
    assert run1("FloorMod", [a, b])[0].tolist() == [1, 1, -1, -1]
    x = np.array([0.0, 2.0, 3.0], np.float32)
    y = np.array([0.0, 0.0, 4.0], np.float32)
    np.testing.assert_array_equal(run1("DivNoNan", [x, y])[0], [0, 0, 0.75])
    np.testing.assert_allclose(run1("Xdivy", [x, y])[0][[0, 2]], [0, 0.75])
    np.testing.assert_allclose(run1("Xlogy", [x, np.array([0.0, 1.0, 2.0], np.float32)])[0],
                               [0, 0, 3 * np.log(2)], rtol=1e-6)


def test_eltwise_addn_biasadd_select():
    a, b = rand(2, 3), rand(2, 3)
    np.testing.assert_allclose(run1("Eltwise", [[a, b]], {"N": 2, "mode": 1,
                                                          "coeff": [2.0, -1.0]})[0], 2 * a - b,
                               rtol=1e-6)
    np.testing.assert_allclose(run1("Eltwise", [[a, b]], {"N": 2, "mode": 2})[0],
                               np.maximum(a, b))
    np.testing.assert_allclose(run1("AddN", [[a, b, a]], {"N": 3})[0], a + b + a, rtol=1e-6)
    x, bias = rand(2, 3, 4, 5), rand(3)
    (y,) = run1("BiasAdd", [x, bias], {"data_format": "NCHW"})
    np.testing.assert_allclose(y, x + bias.reshape(1, 3, 1, 1))
    bias5 = rand(5)
    (y,) = run1("BiasAdd", [x, bias5], {"data_format": "NHWC"})
    np.testing.assert_allclose(y, x + bias5)
    cond = np.array([True, False])
    (y,) = run1("Select", [cond, a, b])  # rank-1 condition picks rows
    np.testing.assert_array_equal(y, np.stack([a[0], b[1]]))


# ---------------------------------------------------------------- reductions, norms


def test_reduce_forms_and_arg_topk():
    x = rand(3, 4, 5)
    (y,) = run1("ReduceSumD", [x], {"axes": [0, -1], "keep_dims": True})
    np.testing.assert_allclose(y, x.sum(axis=(0, 2), keepdims=True), rtol=1e-5)
    (y,) = run1("ReduceMax", [x, np.array([1], np.int32)])
    np.testing.assert_array_equal(y, x.max(axis=1))
    (y,) = run1("ReduceMeanD", [x], {"axes": []})
    np.testing.assert_allclose(y, x.mean(), rtol=1e-5)
    (y,) = run1("ArgMaxV2", [x, np.array(2, np.int32)])
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, x.argmax(axis=2))
    (y,) = run1("ArgMinD", [x], {"dimension": 0, "dtype": int(air.int64)})
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, x.argmin(axis=0))
    t = np.array([[3, 1, 3, 2]], np.float32)
    vals, idx = run1("TopKV2", [t, np.array(2, np.int32)], {"dim": -1}, outputs=2)
    np.testing.assert_array_equal(vals, [[3, 3]])
    np.testing.assert_array_equal(idx, [[0, 2]])  # ties keep index order
    assert idx.dtype == np.int32
    vals, idx = run1("TopK", [t, np.array(2, np.int32)], {"largest": False}, outputs=2)
    np.testing.assert_array_equal(idx, [[1, 3]])


def test_batch_norm_nhwc_inference_and_layer_norm_outputs():
    x = rand(2, 3, 3, 4)
    s, o, m, v = rand(4), rand(4), rand(4), np.abs(rand(4)) + 0.5
    outs = run1("BatchNorm", [x, s, o, m, v], {"data_format": "NHWC", "is_training": False,
                                             "epsilon": 1e-3}, outputs=5)
    np.testing.assert_allclose(outs[0], (x - m) / np.sqrt(v + 1e-3) * s + o, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(outs[1], m)
    outs = run1("BatchNorm", [x, s, o, None, None], {"data_format": "NHWC"}, outputs=5)
    bm, bv = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    np.testing.assert_allclose(outs[1], bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[2], bv * 18 / 17, rtol=1e-5)  # unbiased batch variance
    g, b = rand(4), rand(4)
    y, mean, var = run1("LayerNorm", [x, g, b], {"begin_norm_axis": -1,
                                               "begin_params_axis": -1, "epsilon": 1e-5},
                        outputs=3)
    np.testing.assert_allclose(mean, x.mean(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, x.var(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4,
                               atol=1e-5)


# ---------------------------------------------------------------- conv, pool, matmul


def test_conv2d_nhwc_with_hwcn_filter_equals_nchw():
    x = rand(1, 7, 6, 4)  # NHWC
    w = rand(3, 3, 2, 6)  # HWCN, groups 2
    attrs = {"strides": [1, 2, 1, 1], "pads": [1, 1, 0, 1], "dilations": [1, 1, 2, 1],
             "groups": 2, "data_format": "NHWC"}
    (y,) = run1("Conv2D", [x, w], attrs, descs=[(0, air.Format.NHWC), (1, air.Format.HWCN)])
    xc = x.transpose(0, 3, 1, 2)
    wc = w.transpose(3, 2, 0, 1)
    want = conv_nchw(xc, wc, [2, 1], [1, 2], [(1, 1), (0, 1)], 2)
    np.testing.assert_allclose(y, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    # direct sum for one output element
    n, oh, ow, oc = 0, 1, 2, 4
    g = oc // 3
    acc = 0.0
    xp = np.pad(x, ((0, 0), (1, 1), (0, 1), (0, 0)))
    for kh in range(3):
        for kw in range(3):
            for c in range(2):
                acc += xp[n, oh * 2 + kh, ow + 2 * kw, g * 2 + c] * w[kh, kw, c, oc]
    assert abs(y[n, oh, ow, oc] - acc) < 1e-4


def test_conv2d_backprop_input_is_the_adjoint_of_conv2d():
    x, w = rand(2, 4, 7, 6), rand(6, 2, 3, 2)
    attrs = {"strides": [1, 1, 2, 2], "pads": [1, 0, 1, 1], "dilations": [1, 1, 1, 2],
             "groups": 2, "data_format": "NCHW"}
    (y,) = run1("Conv2D", [x, w], attrs)
    dy = rand(*y.shape)
    (dx,) = run1("Conv2DBackpropInputD", [w, dy], {**attrs, "input_size": list(x.shape)})
    assert dx.shape == x.shape
    # <conv(x), dy> == <x, conv^T(dy)>
    np.testing.assert_allclose(np.sum(y * dy), np.sum(x * dx), rtol=1e-4)
    (dx2,) = run1("Conv2DBackpropInput", [np.array(x.shape, np.int32), w, dy], attrs)
    np.testing.assert_allclose(dx2, dx, rtol=1e-6)


def test_tf_pools_same_padding_and_caffe_pooling():
    x = rand(1, 5, 5, 2)  # NHWC
    (mx,) = run1("MaxPool", [x], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                  "padding": "SAME", "data_format": "NHWC"})
    assert mx.shape == (1, 3, 3, 2)
    assert mx[0, 2, 2, 0] == x[0, 4, 4, 0]
    (av,) = run1("AvgPool", [x], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                  "padding": "SAME", "data_format": "NHWC"})
    np.testing.assert_allclose(av[0, 2, 1, 1], x[0, 4, 2:4, 1].mean(), rtol=1e-6)
    xc = rand(1, 1, 5, 5)
    (cp,) = run1("Pooling", [xc], {"mode": 1, "window": [2, 2], "stride": [2, 2],
                                   "pad": [0, 0, 0, 0], "ceil_mode": 0})
    assert cp.shape == (1, 1, 3, 3)  # Caffe rounds up
    np.testing.assert_allclose(cp[0, 0, 2, 2], xc[0, 0, 4, 4] / 1.0, rtol=1e-6)
    (gp,) = run1("MaxPoolV3", [xc], {"ksize": [1, 1, 2, 2], "strides": [1, 1, 1, 1],
                                     "global_pooling": True})
    assert gp.shape == (1, 1, 1, 1) and gp.item() == xc.max()


def test_matmul_family_and_fully_connection():
    a, b = rand(3, 4), rand(5, 4)
    (y,) = run1("MatMulV2", [a, b], {"transpose_x2": True})
    np.testing.assert_allclose(y, a @ b.T, rtol=1e-5)
    p, q = rand(2, 4, 3), rand(2, 5, 4)
    (y,) = run1("BatchMatMul", [p, q], {"adj_x1": True, "adj_x2": True})
    np.testing.assert_allclose(y, np.swapaxes(p, -1, -2) @ np.swapaxes(q, -1, -2), rtol=1e-5)
    x, w, bias = rand(2, 3, 2, 2), rand(6, 12), rand(6)
    (y,) = run1("FullyConnection", [x, w, bias], {"num_output": 6})
    assert y.shape == (2, 6, 1, 1)
    np.testing.assert_allclose(y.reshape(2, 6), x.reshape(2, 12) @ w.T + bias, rtol=1e-5)
    # Integer products accumulate wide and take the output desc's dtype.
    g = air.Graph("i8")
    p8 = g.add_input("p", air.TensorDesc([1, 2], air.int8))
    q8 = g.add_input("q", air.TensorDesc([2, 1], air.int8))
    g.set_outputs([g.add_op("MatMul", [p8, q8], name="mm",
                            output_descs=[air.TensorDesc([1, 1], air.int32)])])
    y = air.evaluate(g, [np.array([[100, 100]], np.int8), np.array([[100], [100]], np.int8)])
    assert y["mm"].dtype == np.int32 and y["mm"].item() == 20000


# ---------------------------------------------------------------- shapes and indexing


def test_strided_slice_masks_and_slice_forms():
    x = np.arange(2 * 3 * 4).reshape(2, 3, 4).astype(np.float32)
    (y,) = run1("StridedSliceD", [x], {"begin": [0, 1], "end": [0, 3], "strides": [1, -1],
                                       "ellipsis_mask": 1, "end_mask": 2})
    np.testing.assert_array_equal(y, x[..., 1::-1])
    (y,) = run1("StridedSlice", [x, np.array([1, 0], np.int32), np.array([2, 2], np.int32),
                                 np.array([1, 1], np.int32)], {"shrink_axis_mask": 1,
                                                              "new_axis_mask": 2})
    np.testing.assert_array_equal(y, x[1, None])  # a new axis consumes no input dim
    (y,) = run1("SliceD", [x], {"offsets": [1, 0, 1], "size": [-1, 2, 2]})
    np.testing.assert_array_equal(y, x[1:, 0:2, 1:3])


def test_split_concat_gather_pad_tile_forms():
    x = rand(4, 6)
    outs = run1("SplitVD", [x], {"size_splits": [1, -1, 2], "split_dim": 1, "num_split": 3},
                outputs=3)
    assert [o.shape[1] for o in outs] == [1, 3, 2]
    outs = run1("Split", [np.array(0, np.int32), x], {"num_split": 2}, outputs=2)
    np.testing.assert_array_equal(outs[1], x[2:])
    (y,) = run1("ConcatV2", [[x, x], np.array(-1, np.int32)], {"N": 2})
    assert y.shape == (4, 12)
    (y,) = run1("Concat", [np.array(0, np.int32), [x, x]], {"N": 2})
    assert y.shape == (8, 6)
    idx = np.array([[0, 2], [1, 1], [3, 0], [5, 5]], np.int32)
    (y,) = run1("GatherV2", [x, idx, np.array(1, np.int32)], {"batch_dims": 1})
    np.testing.assert_array_equal(y, np.take_along_axis(x, idx.astype(np.int64), 1))
    (y,) = run1("PadD", [x], {"paddings": [[1, 0], [0, 2]]})
    np.testing.assert_array_equal(y, np.pad(x, ((1, 0), (0, 2))))
    (y,) = run1("PadV3", [x, np.array([1, 1, 2, 0], np.int64)], {"mode": "edge"})
    np.testing.assert_array_equal(y, np.pad(x, ((1, 1), (2, 0)), mode="edge"))
    (y,) = run1("TileD", [x], {"multiples": [2, 1]})
    assert y.shape == (8, 6)
    (y,) = run1("Reshape", [x, np.array([0, 3, -1], np.int64)])
    assert y.shape == (4, 3, 2)
    (y,) = run1("Reshape", [rand(2, 3, 4), np.array([-1], np.int64)], {"axis": 1})
    assert y.shape == (2, 12)
    (y,) = run1("Shape", [x], {"dtype": int(air.int64)})
    assert y.dtype == np.int64 and y.tolist() == [4, 6]
    (y,) = run1("Size", [x])
    assert y.dtype == np.int32 and y.item() == 24
    (y,) = run1("Fill", [np.array([2, 2], np.int32), np.array(7, np.int8)])
    assert y.dtype == np.int8 and y.tolist() == [[7, 7], [7, 7]]
    (y,) = run1("Range", [np.array(1.0, np.float32), np.array(2.0, np.float32),
                          np.array(0.25, np.float32)])
    np.testing.assert_allclose(y, [1.0, 1.25, 1.5, 1.75])


def test_cast_and_trans_data_round_trip():
    x = np.array([1.7, -1.7, 0.0], np.float32)
    (y,) = run1("Cast", [x], {"dst_type": int(air.int32)})
    assert y.dtype == np.int32 and y.tolist() == [1, -1, 0]
    (y,) = run1("Cast", [x], {"dst_type": int(air.bool_)})
    assert y.tolist() == [True, True, False]
    img = rand(2, 20, 3, 3)
    g = air.Graph("td")
    i = g.add_input("x", air.TensorDesc(list(img.shape), air.float32))
    five = g.add_op("TransData", [i], name="to5",
                    attrs={"src_format": "NCHW", "dst_format": "NC1HWC0"})
    back = g.add_op("TransData", [five], name="back",
                    attrs={"src_format": "NC1HWC0", "dst_format": "NCHW"},
                    output_descs=[air.TensorDesc(list(img.shape), air.float32)])
    nz = g.add_op("TransData", [i], name="nz", attrs={"src_format": "ND",
                                                     "dst_format": "FRACTAL_NZ"})
    g.set_outputs([five, back, nz])
    r = air.evaluate(g, {"x": img})
    assert r["to5"].shape == (2, 2, 3, 3, 16)
    np.testing.assert_array_equal(r["to5"][:, 1, :, :, :4], img[:, 16:].transpose(0, 2, 3, 1))
    assert not r["to5"][:, 1, :, :, 4:].any()
    np.testing.assert_array_equal(r["back"], img)
    assert r["nz"].shape == (2, 20, 1, 1, 16, 16)


# ---------------------------------------------------------------- control flow


def _branch(name, op, parent_index, shape=(3,)):
    s = air.Graph(name)
    a = s.add_input(f"{name}_in", air.TensorDesc(list(shape), air.float32))
    a.attrs["_parent_node_index"] = parent_index
    s.set_outputs([s.add_op(op, [a], name=f"{name}_op")])
    return s


def test_if_and_case_pick_branches():
    g = air.Graph("r")
    c = g.add_input("c", air.TensorDesc([], air.bool_))
    x = g.add_input("x", air.TensorDesc([3], air.float32))
    n = g.add_op("If", [c, [x]], name="if", outputs=1)
    g.add_subgraph(_branch("t", "Neg", 1), parent=n, slot="then_branch")
    g.add_subgraph(_branch("e", "Abs", 1), parent=n, slot="else_branch")
    i = g.add_input("i", air.TensorDesc([], air.int32))
    k = g.add_op("Case", [i, [x]], name="case", outputs=1)
    for j, op in enumerate(("Exp", "Square")):
        g.add_subgraph(_branch(f"b{j}", op, 1), parent=k, slot="branches", dynamic=True)
    g.set_outputs([n, k])
    xv = rand(3)
    r = air.evaluate(g, {"c": np.array(True), "x": xv, "i": np.array(0, np.int32)})
    np.testing.assert_array_equal(r["if"], -xv)
    np.testing.assert_allclose(r["case"], np.exp(xv), rtol=1e-6)
    r = air.evaluate(g, {"c": np.array(False), "x": xv, "i": np.array(9, np.int32)})
    np.testing.assert_array_equal(r["if"], np.abs(xv))
    np.testing.assert_allclose(r["case"], xv * xv)  # out of range: the last branch


def test_while_counts_and_partitioned_call():
    g = air.Graph("w")
    x = g.add_input("x", air.TensorDesc([], air.float32))
    n = g.add_op("While", [[x]], name="loop", outputs=1)
    cond = air.Graph("cond")
    a = cond.add_input("ca", air.TensorDesc([], air.float32))
    a.attrs["_parent_node_index"] = 0
    lim = cond.add_const("lim", np.array(100.0, np.float32))
    cond.set_outputs([cond.add_op("Less", [a, lim], name="lt")])
    body = air.Graph("body")
    b = body.add_input("ba", air.TensorDesc([], air.float32))
    b.attrs["_parent_node_index"] = 0
    body.set_outputs([body.add_op("Add", [b, b], name="dbl")])
    g.add_subgraph(cond, parent=n, slot="cond")
    g.add_subgraph(body, parent=n, slot="body")
    call = g.add_op("PartitionedCall", [[n]], name="call", outputs=1)
    g.add_subgraph(_branch("f", "Neg", 0, shape=()), parent=call, slot="f")
    g.set_outputs([call])
    assert air.evaluate(g, [np.array(3.0, np.float32)])["call"] == -192.0


def _nested_calls(levels: int) -> tuple[air.Graph, air.Graph, air.Node]:
    """A chain of PartitionedCalls nesting ``levels`` subgraphs; returns the root, the deepest
    graph and its call node (still without a body)."""
    g = air.Graph("deep")
    x = g.add_input("x", air.TensorDesc([], air.float32))
    parent_graph, node = g, g.add_op("PartitionedCall", [[x]], name="c0", outputs=1)
    g.set_outputs([node])
    for level in range(levels):
        s = air.Graph(f"s{level}")
        a = s.add_input(f"a{level}", air.TensorDesc([], air.float32))
        a.attrs["_parent_node_index"] = 0
        inner = s.add_op("PartitionedCall", [[a]], name=f"c{level + 1}", outputs=1)
        s.set_outputs([inner])
        parent_graph.add_subgraph(s, parent=node, slot="f")
        parent_graph, node = g.subgraph(f"s{level}"), g.subgraph(f"s{level}").node(
            f"c{level + 1}")
    return g, parent_graph, node


def test_nesting_is_bounded_by_the_graph_tree_limit():
    # The evaluator's bound is the graph tree's: a tree as deep as graphs may nest evaluates,
    # one level more cannot be built.
    assert MAX_DEPTH == 64
    g, parent_graph, node = _nested_calls(MAX_DEPTH - 1)
    parent_graph.add_subgraph(_branch("leaf", "Neg", 0, shape=()), parent=node, slot="f")
    assert air.evaluate(g, [np.array(1.0, np.float32)])["c0"] == -1.0
    g, parent_graph, node = _nested_calls(MAX_DEPTH)
    with pytest.raises(air.InvalidArgumentError, match="the limit is 64"):
        parent_graph.add_subgraph(_branch("leaf", "Neg", 0, shape=()), parent=node, slot="f")


# ---------------------------------------------------------------- feeds, outputs, errors


def test_feed_rules_and_errors():
    g = air.Graph("f")
    a = g.add_input("a", air.TensorDesc([-1, 3], air.float32))
    b = g.add_input("b", air.TensorDesc([2, 3], air.float32))
    g.set_outputs([g.add_op("Add", [a, b], name="s")])
    av, bv = rand(2, 3), rand(2, 3)
    by_name = air.evaluate(g, {"a": av, "b": bv})
    by_order = air.evaluate(g, [av, bv])
    np.testing.assert_array_equal(by_name["s"], by_order["s"])
    assert list(air.evaluate(g, {"a": av.tolist(), "b": bv})) == ["s"]  # lists convert
    with pytest.raises(air.EvaluateError, match="dtype float64") as e:
        air.evaluate(g, {"a": av.astype(np.float64), "b": bv})
    assert e.value.input == "a"
    with pytest.raises(air.EvaluateError, match=r"shape \[2, 4\]"):
        air.evaluate(g, {"a": rand(2, 4), "b": bv})
    with pytest.raises(air.EvaluateError, match="no feed for graph input 'b'"):
        air.evaluate(g, {"a": av})
    with pytest.raises(air.EvaluateError, match="no input named 'c'"):
        air.evaluate(g, {"a": av, "b": bv, "c": av})
    with pytest.raises(air.EvaluateError, match="2 inputs, got 1"):
        air.evaluate(g, [av])
    with pytest.raises(air.EvaluateError, match="Add 's'") as e:
        air.evaluate(g, {"a": rand(5, 3), "b": bv})  # broadcast failure names the node
    assert e.value.node == "s" and e.value.op_type == "Add"


def test_unknown_op_names_the_node_before_running():
    g = air.Graph("u")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    y = g.add_op("MyCustomOp", [x], name="custom", input_names=["x"], outputs=["y"],
                 allow_unregistered=True)
    g.set_outputs([g.add_op("Relu", [y], name="r")])
    with pytest.raises(air.UnsupportedOpError, match="'custom' \\(MyCustomOp\\)") as e:
        air.evaluate(g, [rand(2)])
    assert isinstance(e.value, NotImplementedError) and isinstance(e.value, air.AscendIRError)
    assert e.value.node == "custom" and e.value.op_type == "MyCustomOp"


def test_output_keys_and_zero_copy_consts():
    g = air.Graph("k")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    w = g.add_const("w", np.arange(2, dtype=np.float32))
    top = g.add_op("TopKV2", [x, g.add_const("k", np.array(1, np.int32))], name="top",
                   outputs=2)
    g.set_outputs([w, (top, 1), (top, 0), w])
    r = air.evaluate(g, [np.array([1.0, 5.0], np.float32)])
    assert list(r) == ["w", "top:1", "top", "w#3"]
    tensor = g.node("w").attrs["value"].numpy()
    assert np.shares_memory(r["w"], tensor) and not r["w"].flags.writeable


# ---------------------------------------------------------------- compile equivalence


def _compare_compiled(g, feeds, **kw):
    want = air.evaluate(g, feeds)
    cm = air.compile(g, **kw)
    assert any(n.type == "AscBackend" for n in cm.graph.nodes)
    got = air.evaluate(cm.graph, feeds)
    assert list(got) == list(want)
    for k in want:
        assert got[k].shape == want[k].shape and got[k].dtype == want[k].dtype
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5)


def test_compiled_example_equals_original():
    g = air.onnx.load(EXAMPLE)
    _compare_compiled(g, {"x": rand(2, 16, 32)})


def test_compiled_small_graphs_equal_original():
    g = air.Graph("pw")
    x = g.add_input("x", air.TensorDesc([6, 40], air.float32))
    y = g.add_input("y", air.TensorDesc([1, 40], air.float32))
    a = g.add_op("Abs", [x], name="abs")
    s = g.add_op("Add", [a, y], name="add")
    m = g.add_op("ReduceSumD", [s], name="sum", attrs={"axes": [1], "keep_dims": True})
    g.set_outputs([g.add_op("Mul", [s, m], name="mul"), g.add_op("Exp", [a], name="exp")])
    _compare_compiled(g, {"x": rand(6, 40), "y": rand(1, 40)})
    g = air.Graph("dyn")
    a = g.add_input("a", air.TensorDesc([-1, 8], air.float32))
    sm = g.add_op("SoftmaxV2", [a], name="sm", attrs={"axes": [-1]})
    g.set_outputs([g.add_op("Mul", [sm, sm], name="sq")])
    _compare_compiled(g, {"a": rand(5, 8)}, input_shapes={"a": [4, 8]})


def test_padv3_shape_follows_paddings_contiguous():
    # F.pad(x, [0, 0, 0, 1]) as both frontends write it: every begin, then every end.
    x = rand(2, 15, 16)
    for contiguous, pads, want in (
        (False, [0, 0, 0, 0, 1, 0], ((0, 0), (0, 1), (0, 0))),
        (True, [0, 0, 0, 1, 0, 0], ((0, 0), (0, 1), (0, 0))),
    ):
        g = air.Graph("pad")
        xi = g.add_input("x", air.TensorDesc([2, 15, 16], air.float32))
        p = g.add_op("PadV3", [xi, g.add_const("p", np.array(pads, np.int64))], name="pad",
                     attrs={"paddings_contiguous": contiguous})
        m = g.add_op("Mul", [p, g.add_const("two", np.array(2.0, np.float32))], name="mul")
        g.set_outputs([g.add_op("Add", [m, g.add_const("one", np.array(1.0, np.float32))],
                                name="add")])
        g.infer_shapes()
        assert list(g.node("pad").op_desc.output_desc(0).shape) == [2, 16, 16]
        ref = np.pad(x, want) * 2 + 1
        cm = air.compile(g)
        (y,) = air.evaluate(cm.graph, {"x": x}).values()
        assert y.shape == (2, 16, 16)
        np.testing.assert_allclose(y, ref, rtol=1e-6)


def test_gemm_and_tensor_move_follow_ges_definitions() -> None:
    """GE's GEMM is ``alpha * op(a) @ op(b) + beta * c`` (op: the transpose attributes), its
    output shaped ``[M, N]``; TensorMove copies its input."""

    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3)).astype(np.float32)   # transposed: [3, 4]
    b = rng.standard_normal((5, 4)).astype(np.float32)   # transposed: [4, 5]
    c = rng.standard_normal((3, 5)).astype(np.float32)
    g = air.Graph("gemm")
    ins = [g.add_input(n, air.TensorDesc(list(v.shape), air.float32)).outputs[0]
           for n, v in (("a", a), ("b", b), ("c", c))]
    alpha = g.add_const("alpha", np.array([0.5], np.float32)).outputs[0]
    beta = g.add_const("beta", np.array([2.0], np.float32)).outputs[0]
    y = air.ops.GEMM(*ins, alpha, beta, transpose_a=True, transpose_b=True, name="y")
    assert list(y.desc.shape) == [3, 5]
    m = air.ops.TensorMove(y, name="m")
    g.set_outputs([m])
    (got,) = air.evaluate(g, {"a": a, "b": b, "c": c}).values()
    np.testing.assert_allclose(got, 0.5 * (a.T @ b.T) + 2.0 * c, rtol=1e-5, atol=1e-6)
