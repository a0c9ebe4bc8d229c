"""Graph.infer_shapes and the builtin rules from Python: propagation, unknown dims, formats,
subgraphs, errors naming the node and rule."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air
from ascendir import infer


def desc(shape, dtype=air.float32, fmt=None):
    return (
        air.TensorDesc(list(shape), dtype, format=fmt)
        if fmt
        else air.TensorDesc(list(shape), dtype)
    )


def out(node, i=0):
    d = node.op_desc.output_desc(i)
    return d.shape, d.dtype


def test_infer_shapes_propagates_after_an_input_change():
    g = air.Graph()
    x = g.add_input("x", desc([2, 3]))
    y = g.add_input("y", desc([3]))
    a = g.add_op("Add", [x, y])
    r = g.add_op("Relu", [a])
    s = g.add_op("ReduceSumD", [r], attrs={"axes": [-1], "keep_dims": True})
    e = g.add_op("Equal", [s, s])
    assert out(s) == ((2, 1), air.float32)
    assert out(e) == ((2, 1), air.bool_)
    x.op_desc.input_desc(0).shape = [-1, 5, 3]
    stats = g.infer_shapes()
    # Every output on x's path had a recorded static shape the change contradicts.
    assert stats == {"nodes": 6, "inferred": 6, "unknown": 0, "kept": 0, "conflicts": 5}
    assert out(a)[0] == (-1, 5, 3)
    assert out(s)[0] == (-1, 5, 1)
    x.op_desc.input_desc(0).shape = [-2]
    g.infer_shapes()
    assert out(e) == ((-2,), air.bool_)


def test_errors_name_the_node_and_rule():
    g = air.Graph()
    x = g.add_input("x", desc([2, 3]))
    y = g.add_input("y", desc([3]))
    g.add_op("Add", [x, y], name="plus")
    y.op_desc.input_desc(0).shape = [4]
    with pytest.raises(air.InferenceError) as info:
        g.infer_shapes()
    assert info.value.node == "plus" and info.value.rule == "broadcast"
    assert "plus" in str(info.value) and "cannot be broadcast" in str(info.value)


def test_const_values_drive_reshape_transpose_and_friends():
    g = air.Graph()
    x = g.add_input("x", desc([2, 3, 4], air.float16, "NCHW"))
    shape = g.add_const("shape", np.array([0, -1], np.int64))
    r = g.add_op("Reshape", [x, shape])
    assert out(r) == ((2, 12), air.float16)
    perm = g.add_const("perm", np.array([1, 0], np.int32))
    t = g.add_op("Transpose", [r, perm])
    assert out(t)[0] == (12, 2)
    begin = g.add_const("b", np.array([1, 0], np.int32))
    end = g.add_const("e", np.array([10, 2], np.int32))
    strides = g.add_const("s", np.array([3, 1], np.int32))
    ss = g.add_op("StridedSlice", [t, begin, end, strides])
    assert out(ss)[0] == (3, 2)
    idx = g.add_input("idx", desc([5], air.int32))
    gather = g.add_op("GatherV2", [t, idx, g.add_const("axis", np.array([0], np.int32))])
    assert out(gather)[0] == (5, 2)
    shp = g.add_op("Shape", [gather])
    assert out(shp) == ((2,), air.int32)
    fill = g.add_op(
        "Fill", [g.add_const("dims", np.array([4, 4], np.int32)), g.add_const("v", np.float32(1))]
    )
    assert out(fill) == ((4, 4), air.float32)
    # A non-constant shape gives unknown dims of the right rank.
    dyn = g.add_input("dyn", desc([3], air.int64))
    r2 = g.add_op("Reshape", [x, dyn])
    assert out(r2)[0] == (-1, -1, -1)


def test_default_format_rule_spreads_input_formats():
    g = air.Graph()
    x = g.add_input("x", desc([1, 3, 8, 8], air.float32, "NCHW"))
    r = g.add_op("Relu", [x])
    assert r.op_desc.output_desc(0).format == air.Format.NCHW
    sh = g.add_op("Shape", [x])
    assert out(sh) == ((4,), air.int32)


def test_matmul_conv_pool_chain():
    g = air.Graph()
    x = g.add_input("x", desc([8, 3, 32, 32], air.float16, "NCHW"))
    w = g.add_const("w", np.zeros((16, 3, 3, 3), np.float16))
    c = g.add_op("Conv2D", [x, w], attrs={"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1]})
    p = g.add_op(
        "MaxPool", [c], attrs={"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "padding": "VALID"}
    )
    assert out(p)[0] == (8, 16, 8, 8)
    f = g.add_op("Reshape", [p, g.add_const("s", np.array([8, -1], np.int32))])
    m = g.add_op(
        "MatMulV2",
        [f, g.add_const("fc", np.zeros((10, 1024), np.float16))],
        attrs={"transpose_x2": True},
    )
    assert out(m) == ((8, 10), air.float16)
    bad = g.add_const("bad", np.zeros((7, 10), np.float16))
    with pytest.raises(air.InferenceError, match="inner dimensions"):
        g.add_op("MatMulV2", [f, bad], name="mm_bad")
        g.infer_shapes()


def test_if_and_while_infer_their_subgraphs():
    g = air.Graph("root")
    c = g.add_input("c", desc([], air.bool_))
    x = g.add_input("x", desc([4, 6]))
    node = g.add_op("If", [c, [x]], name="if")
    for slot, op in (("then_branch", "Relu"), ("else_branch", "Neg")):
        b = air.Graph(f"b_{slot}")
        d = b.add_input("d", desc([1]), index=1)
        b.set_outputs([b.add_op(op, [d])])
        g.add_subgraph(b, parent=node, slot=slot)
    w = g.add_op("While", [[x]], name="while")
    body = air.Graph("body")
    bd = body.add_input("bd", desc([1]))
    body.set_outputs([body.add_op("Relu", [bd])])
    g.add_subgraph(body, parent=w, slot="body")
    g.infer_shapes()
    assert out(node) == ((4, 6), air.float32)
    assert out(w)[0] == (4, 6)
    inner = g.subgraph("b_then_branch").node("d")
    assert inner.op_desc.output_desc(0).shape == (4, 6)
    assert g.subgraph("body").node("bd").op_desc.output_desc(0).shape == (4, 6)


def test_infer_node_does_not_change_the_graph():
    g = air.Graph()
    x = g.add_input("x", desc([2, 2]))
    r = g.add_op("Relu", [x])
    r.op_desc.input_desc(0).shape = [9]
    assert infer.infer_node(r) == [((9,), air.float32)]
    assert out(r)[0] == (2, 2)
    u = g.add_op("Unregistered", [x], allow_unregistered=True)
    assert infer.infer_node(u) is None
    assert infer.infer_shapes(g)["unknown"] == 1


def test_cycles_are_reported():
    g = air.Graph()
    x = g.add_input("x", desc([2]))
    a = g.add_op("Add", [x, x], name="a")
    b = g.add_op("Relu", [a], name="b")
    a.in_data_anchor(1).unlink(x.out_data_anchor(0))
    b.out_data_anchor(0).link_to(a.in_data_anchor(1))
    with pytest.raises(air.InferenceError, match="cycle"):
        g.infer_shapes()


def test_rule_kinds_are_listed():
    kinds = infer.kinds()
    for k in ("same_as", "broadcast", "reduce", "matmul", "conv", "reshape", "concat", "custom"):
        assert k in kinds


def test_inference_never_replaces_a_recorded_dim_with_an_unknown_one():
    # TopK with a k that is not constant: the rule cannot know the dim, the recorded one stays.
    g = air.Graph()
    x = g.add_input("x", desc([3, 4]))
    k = g.add_input("k", desc([1], air.int32))
    t = g.add_op("TopKV2", [x, k])
    assert out(t)[0] == (3, -1)
    t.op_desc.output_desc(0).shape = [3, 2]
    stats = g.infer_shapes()
    assert out(t)[0] == (3, 2)
    assert stats["kept"] == 1 and stats["conflicts"] == 0
    # A recorded dim the rule contradicts is overwritten and counted.
    t.op_desc.output_desc(0).shape = [5, 2]
    stats = g.infer_shapes()
    assert out(t)[0] == (3, 2)
    assert stats["conflicts"] == 1
    # With a dynamic input the rule's unknown is written (the record may be stale).
    x.op_desc.input_desc(0).shape = [-1, 4]
    g.infer_shapes()
    assert out(t)[0] == (-1, -1)


def test_trans_data_stores_the_device_shape_and_keeps_the_logical_one_as_origin() -> None:
    g = air.Graph("t")
    w = g.add_input("w", air.TensorDesc([64, 64, 3, 3], air.float16, format="NCHW"))
    fz = g.add_op("TransData", [w], name="fz",
                  attrs={"src_format": "NCHW", "dst_format": "FRACTAL_Z"})
    c04 = g.add_op("TransData", [g.add_input("k", air.TensorDesc([64, 3, 7, 7], air.float16,
                                                                   format="NCHW"))],
                   name="c04", attrs={"src_format": "NCHW", "dst_format": "FRACTAL_Z_C04"})
    x = g.add_input("x", air.TensorDesc([2, 32, 8, 8], air.float16, format="NCHW"))
    five = g.add_op("TransData", [x], name="five",
                    attrs={"src_format": "NCHW", "dst_format": "NC1HWC0"})
    # A desc that already has an origin (as GE writes them): the 5-D shape is the shape, the
    # logical one stays the origin shape.
    five.op_desc.update_output_desc(0, air.TensorDesc([2, 32, 8, 8], air.float16,
                                                      format="NC1HWC0", origin_format="NCHW",
                                                      origin_shape=[2, 32, 8, 8]))
    back = g.add_op("TransData", [five], name="back",
                    attrs={"src_format": "NC1HWC0", "dst_format": "NCHW"})
    g.set_outputs([fz, c04, back])
    g.infer_shapes()

    def desc(name: str) -> tuple[object, ...]:
        d = g.node(name).op_desc.output_desc(0)
        return (tuple(d.shape), d.format.name, d.origin_shape and tuple(d.origin_shape),
                d.origin_format.name)

    # GE's (C1·H·W, ceil(N/16), 16, C0) and (ceil(4·H·W / C0), ceil(N/C0), 16, C0)
    assert desc("fz") == ((36, 4, 16, 16), "FRACTAL_Z", (64, 64, 3, 3), "NCHW")
    assert desc("c04") == ((13, 4, 16, 16), "FRACTAL_Z_C04", (64, 3, 7, 7), "NCHW")
    assert desc("five") == ((2, 2, 8, 8, 16), "NC1HWC0", (2, 32, 8, 8), "NCHW")
    assert desc("back")[:2] == ((2, 32, 8, 8), "NCHW")
