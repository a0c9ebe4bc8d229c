"""Lowering rows whose form depends on the node:
AddN over any operand count, BiasAdd / BiasAddGrad on the data format's channel axis, Tile as a
broadcast, Fill and Expand to a shape given by a tensor, ArgMax, the matrix-vector product on
the vector unit, and the gradient rows outside the op library — each checked against numpy, and
each refused form a barrier with its reason."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ascendir as air
from ascendir.asc._cxx import find_compiler
from support.kernels import compile_row as compile1
from support.kernels import run_hint as run_kernel

F32 = air.float32


def have_cxx() -> bool:
    try:
        find_compiler()
    except air.CxxBuildError:
        return False
    return True


def verify_on_cpu(cm) -> None:
    """The kernels built as C++ agree with the simulator (skipped without a compiler)."""
    if not have_cxx():
        return
    rep = air.compiler.verify(cm)
    assert rep.cases and all(c.ok for c in rep.cases), rep


def reasons(cm) -> dict[str, str]:
    """Node name → the reason it was not lowered."""
    r = json.loads(cm.report.to_json())
    out = {}
    for b in r.get("barriers", []):
        out[b["name"]] = b["reason"]
    return out


def signed(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_add_n_adds_every_operand_with_broadcasting(n):
    g = air.Graph("addn")
    rng = np.random.default_rng(n)
    shapes = [(4, 16) if i % 2 == 0 else (1, 16) for i in range(n)]
    xs = [g.add_input(f"x{i}", air.TensorDesc(list(s), F32)) for i, s in enumerate(shapes)]
    feeds = {f"x{i}": signed(rng, s) for i, s in enumerate(shapes)}
    g.set_outputs([g.add_op("AddN", xs, name="op", attrs={"N": n})])
    cm = compile1(g)
    (k,) = cm.kernels
    assert k.members == ["op"]
    want = sum(feeds[f"x{i}"] for i in range(n))
    np.testing.assert_allclose(run_kernel(cm, k, feeds).reshape(4, 16), want, rtol=1e-6)
    got = air.evaluate(cm.graph, feeds)
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-6)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_bias_add_follows_the_data_format(fmt):
    g = air.Graph("bias")
    shape = (2, 3, 4, 5)
    c = shape[-1] if fmt == "NHWC" else shape[1]
    x = g.add_input("x", air.TensorDesc(list(shape), F32))
    b = g.add_input("b", air.TensorDesc([c], F32))
    y = g.add_op("BiasAdd", [x, b], name="op", attrs={"data_format": fmt})
    g.set_outputs([g.add_op("Relu", [y], name="relu")])
    rng = np.random.default_rng(3)
    feeds = {"x": signed(rng, shape), "b": signed(rng, (c,))}
    cm = air.compile(g)
    (k,) = cm.kernels
    assert sorted(k.members) == ["op", "relu"]
    bshape = [1, 1, 1, c] if fmt == "NHWC" else [1, c, 1, 1]
    want = np.maximum(feeds["x"] + feeds["b"].reshape(bshape), 0)
    np.testing.assert_allclose(run_kernel(cm, k, feeds).reshape(shape), want, rtol=1e-6)
    np.testing.assert_allclose(air.evaluate(g, feeds)["relu"], want, rtol=1e-6)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_bias_add_grad_sums_all_but_the_channel_axis(fmt):
    g = air.Graph("bgrad")
    shape = (2, 3, 4, 5)
    x = g.add_input("x", air.TensorDesc(list(shape), F32))
    c = shape[-1] if fmt == "NHWC" else shape[1]
    y = g.add_op("BiasAddGrad", [g.add_op("Abs", [x], name="abs")], name="op",
                 attrs={"data_format": fmt}, input_names=["x"], outputs=["y"],
                 output_descs=[air.TensorDesc([c], F32)], allow_unregistered=True)
    g.set_outputs([y])
    feeds = {"x": signed(np.random.default_rng(4), shape)}
    cm = compile1(g, evaluate=False)
    (k,) = cm.kernels
    assert sorted(k.members) == ["abs", "op"]
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    want = np.abs(feeds["x"]).sum(axis=axes)
    np.testing.assert_allclose(run_kernel(cm, k, feeds).reshape(-1), want, rtol=1e-5)
    verify_on_cpu(cm)


@pytest.mark.parametrize(("ty", "ref"), [
    ("LeakyReluGrad", lambda dy, f: np.where(f > 0, dy, dy * 0.3)),
    ("EluGrad", lambda dy, y: np.where(y > 0, dy, dy * (y + 1))),
])
def test_gradient_rows_take_both_branches(ty, ref):
    g = air.Graph(ty)
    td = air.TensorDesc([4, 16], F32)
    dy, f = g.add_input("dy", td), g.add_input("f", td)
    names = ["gradients", "features" if ty == "LeakyReluGrad" else "activations"]
    g.set_outputs([g.add_op(ty, [dy, f], name="op", attrs={"negative_slope": 0.3},
                            input_names=names, outputs=["backprops"], output_descs=[td],
                            allow_unregistered=True)])
    rng = np.random.default_rng(5)
    feeds = {"dy": signed(rng, (4, 16)), "f": signed(rng, (4, 16))}
    assert (feeds["f"] > 0).any() and (feeds["f"] < 0).any()
    cm = compile1(g, evaluate=False)
    (k,) = cm.kernels
    got = run_kernel(cm, k, feeds).reshape(4, 16)
    np.testing.assert_allclose(got, ref(feeds["dy"], feeds["f"]), rtol=1e-6)


def test_tile_of_unit_dims_is_a_broadcast_and_other_tiles_are_barriers():
    g = air.Graph("tile")
    x = g.add_input("x", air.TensorDesc([1, 4, 1], F32))
    z = g.add_input("z", air.TensorDesc([4, 3], F32))
    t = g.add_op("Tile", [x, g.add_const("m", np.array([2, 1, 3], np.int64))], name="tile")
    bad = g.add_op("Tile", [z, g.add_const("m2", np.array([2, 1], np.int64))], name="bad")
    g.set_outputs([g.add_op("Abs", [t], name="abs"), g.add_op("Neg", [bad], name="neg")])
    cm = compile1(g)
    rng = np.random.default_rng(6)
    feeds = {"x": signed(rng, (1, 4, 1)), "z": signed(rng, (4, 3))}
    (k,) = [k for k in cm.kernels if "tile" in k.members]
    want = np.abs(np.tile(feeds["x"], (2, 1, 3)))
    np.testing.assert_allclose(run_kernel(cm, k, feeds).reshape(2, 4, 3), want)
    assert "concat form" in reasons(cm)["bad"]
    got = air.evaluate(cm.graph, feeds)
    np.testing.assert_allclose(got["abs"], want)
    np.testing.assert_allclose(got["neg"], -np.tile(feeds["z"], (2, 1)))


def test_expand_to_a_symbolic_shape_tensor_keeps_the_symbol():
    """Expand's target computed from another input's shape: the output is [s0, 16], not the
    operand's [1, 16] (the graph output has the batch dim)."""
    g = air.Graph("expand")
    x = g.add_input("x", air.TensorDesc([-1, 16], F32))
    y = g.add_input("y", air.TensorDesc([1, 16], F32))
    shp = g.add_op("Shape", [x], name="shape")
    e = g.add_op("Expand", [g.add_op("Abs", [y], name="abs"), shp], name="op")
    g.set_outputs([g.add_op("Exp", [e], name="exp")])
    cm = compile1(g, input_shapes={"x": [5, 16]})
    rng = np.random.default_rng(7)
    for rows in (5, 3):
        feeds = {"x": signed(rng, (rows, 16)), "y": signed(rng, (1, 16))}
        got = air.evaluate(cm.graph, feeds)["exp"]
        assert got.shape == (rows, 16)
        np.testing.assert_allclose(got, np.exp(np.abs(np.broadcast_to(feeds["y"], (rows, 16)))),
                                   rtol=1e-6)


def test_fill_broadcasts_its_value():
    g = air.Graph("fill")
    v = g.add_input("v", air.TensorDesc([1], F32))
    x = g.add_input("x", air.TensorDesc([3, 8], F32))
    f = g.add_op("Fill", [g.add_const("dims", np.array([3, 8], np.int64)), v], name="fill")
    g.set_outputs([g.add_op("Mul", [f, x], name="mul")])
    cm = compile1(g)
    (k,) = cm.kernels
    assert sorted(k.members) == ["fill", "mul"]
    rng = np.random.default_rng(8)
    feeds = {"v": np.array([2.5], np.float32), "x": signed(rng, (3, 8))}
    np.testing.assert_allclose(air.evaluate(cm.graph, feeds)["mul"], 2.5 * feeds["x"])


@pytest.mark.parametrize("keep", [True, False])
def test_arg_max_over_one_axis(keep):
    g = air.Graph("argmax")
    x = g.add_input("x", air.TensorDesc([4, 16], F32))
    a = g.add_op("ArgMaxD", [g.add_op("Neg", [x], name="neg")], name="op",
                 attrs={"dimension": -1, "keep_dims": keep})
    g.set_outputs([a])
    feeds = {"x": signed(np.random.default_rng(9), (4, 16))}
    cm = compile1(g)
    (k,) = cm.kernels
    assert sorted(k.members) == ["neg", "op"]
    want = air.evaluate(g, feeds)["op"]
    got = air.evaluate(cm.graph, feeds)["op"]
    assert got.dtype == np.int32 and got.shape == ((4, 1) if keep else (4,))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got.reshape(-1), np.argmin(feeds["x"], axis=-1))
    verify_on_cpu(cm)


@pytest.mark.parametrize("transposed", [False, True])
def test_matrix_vector_product_on_the_vector_unit(transposed):
    g = air.Graph("mv")
    x = g.add_input("x", air.TensorDesc([2, 6, 16], F32))
    w = np.random.default_rng(10).standard_normal((1, 16) if transposed else (16, 1))
    wc = g.add_const("w", w.astype(np.float32))
    mm = g.add_op("BatchMatMulV2", [g.add_op("Relu", [x], name="relu"), wc], name="mm",
                  attrs={"adj_x2": transposed})
    g.set_outputs([g.add_op("Sigmoid", [mm], name="sig")])
    feeds = {"x": signed(np.random.default_rng(11), (2, 6, 16))}
    # Off by default (GE's matmul_vector): a barrier.
    off = air.compile(g)
    assert "matmul_vector" in reasons(off)["mm"]
    cm = air.compile(g, options=air.CompileOptions(enable=["matmul_vector"]))
    (k,) = cm.kernels
    assert sorted(k.members) == ["mm", "relu", "sig"]
    want = air.evaluate(g, feeds)["sig"]
    got = air.evaluate(cm.graph, feeds)["sig"]
    assert got.shape == (2, 6, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    w2 = w.reshape(16, 1) if transposed else w
    ref = 1 / (1 + np.exp(-(np.maximum(feeds["x"], 0) @ w2)))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    verify_on_cpu(cm)


@pytest.mark.parametrize(("x2", "why"), [((16, 2), "N other than 1"),
                                        ((40, 1), "at most 32")])
def test_matrix_products_the_vector_unit_cannot_take_are_barriers(x2, why):
    g = air.Graph("mm")
    k = x2[0]
    x = g.add_input("x", air.TensorDesc([6, k], F32))
    w = g.add_const("w", np.ones(x2, np.float32))
    g.set_outputs([g.add_op("Relu", [g.add_op("MatMulV2", [x, w], name="mm")], name="r")])
    cm = compile1(g, enable=["matmul_vector"])
    assert why in reasons(cm)["mm"]


def test_two_slices_of_one_input_fuse_into_one_kernel_at_every_size():
    """x[:, :8] + x[:, 8:] over a symbolic batch: both halves are strided Loads of x."""
    g = air.Graph("halves")
    x = g.add_input("x", air.TensorDesc([-1, 16], F32))
    lo = g.add_op("StridedSliceD", [x], name="lo",
                  attrs={"begin": [0, 0], "end": [2**31 - 1, 8], "strides": [1, 1]})
    hi = g.add_op("SliceD", [x], name="hi", attrs={"offsets": [0, 8], "size": [-1, -1]})
    g.set_outputs([g.add_op("Mul", [g.add_op("Exp", [lo], name="e"), hi], name="mul")])
    cm = air.compile(g, input_shapes={"x": [6, 16]})
    (k,) = cm.kernels
    assert sorted(k.members) == ["e", "hi", "lo", "mul"]
    assert len(cm.graph.node(k.name).in_data_nodes) == 2
    rng = np.random.default_rng(12)
    for rows in (6, 3, 11):
        feeds = {"x": signed(rng, (rows, 16))}
        got = air.evaluate(cm.graph, feeds)["mul"]
        np.testing.assert_allclose(got, np.exp(feeds["x"][:, :8]) * feeds["x"][:, 8:],
                                   rtol=1e-6)
    verify_on_cpu(cm)


def test_strided_slice_with_steps_on_the_cpu():
    g = air.Graph("steps")
    x = g.add_input("x", air.TensorDesc([6, 20], F32))
    s = g.add_op("StridedSliceD", [x], name="s",
                 attrs={"begin": [1, -19], "end": [6, 20], "strides": [2, 3]})
    g.set_outputs([g.add_op("Relu", [s], name="relu")])
    cm = compile1(g)
    (k,) = cm.kernels
    feeds = {"x": signed(np.random.default_rng(13), (6, 20))}
    want = np.maximum(feeds["x"][1:6:2, 1:20:3], 0)
    np.testing.assert_allclose(air.evaluate(cm.graph, feeds)["relu"], want)
    verify_on_cpu(cm)


def test_a_slice_of_a_computed_tensor_is_not_fused_with_its_producer():
    g = air.Graph("inner")
    x = g.add_input("x", air.TensorDesc([4, 16], F32))
    a = g.add_op("Abs", [x], name="abs")
    n = g.add_op("Neg", [a], name="neg")
    s = g.add_op("SliceD", [n], name="s", attrs={"offsets": [0, 4], "size": [4, 8]})
    g.set_outputs([g.add_op("Exp", [s], name="exp")])
    cm = compile1(g)
    by_member = {m: k.name for k in cm.kernels for m in k.members}
    assert by_member["s"] == by_member["exp"] != by_member["neg"]
    codes = {r["code"] for r in cm.report.data["rejected_pairs"]}
    assert "AF2003" in codes
    feeds = {"x": signed(np.random.default_rng(14), (4, 16))}
    np.testing.assert_allclose(air.evaluate(cm.graph, feeds)["exp"],
                               np.exp(-np.abs(feeds["x"][:, 4:12])), rtol=1e-6)


@pytest.mark.parametrize(("attrs", "why"), [
    ({"begin": [0, 0], "end": [2, 16], "strides": [1, 1]}, "dynamic dim"),
    ({"begin": [0, 0], "end": [2**31 - 1, 16], "strides": [1, -1]}, "step below 1"),
    ({"begin": [0, 5], "end": [2**31 - 1, 5], "strides": [1, 1]}, "empty slice"),
])
def test_slices_that_are_not_lowered_say_why(attrs, why):
    g = air.Graph("bad")
    x = g.add_input("x", air.TensorDesc([-1, 16], F32))
    s = g.add_op("StridedSliceD", [x], name="s", attrs=attrs)
    g.set_outputs([g.add_op("Exp", [s], name="exp")])
    cm = air.compile(g, input_shapes={"x": [4, 16]})
    assert why in reasons(cm)["s"]


# ---------------------------------------------------------------- row 34: concat


def _concat_graph(op_type: str, axis: int, dims: list[list[int]], producer: bool = False):
    g = air.Graph(f"cat_{op_type}")
    xs = [g.add_input(f"x{i}", air.TensorDesc(d, F32)) for i, d in enumerate(dims)]
    if producer:
        xs[0] = g.add_op("Abs", [g.add_op("Exp", [xs[0]], name="exp")], name="abs")
    n = len(xs)
    if op_type in ("ConcatV2D", "ConcatD"):
        c = g.add_op(op_type, [xs], name="cat", attrs={"concat_dim": axis, "N": n})
    elif op_type == "ConcatV2":
        c = g.add_op(op_type, [xs, g.add_const("ax", np.array(axis, np.int32))], name="cat",
                     attrs={"N": n})
    else:
        c = g.add_op(op_type, [g.add_const("ax", np.array(axis, np.int32)), xs], name="cat",
                     attrs={"N": n})
    y = g.add_op("Mul", [g.add_op("Relu", [c], name="relu"), g.add_const("k", np.float32(3))],
                 name="y")
    g.set_outputs([y])
    return g


def _concat_feeds(g, batch):
    rng = np.random.default_rng(batch)
    return {n.name: rng.standard_normal(
        [batch if d == -1 else d for d in n.op_desc.output_desc(0).shape]).astype(np.float32)
        for n in g.inputs}


@pytest.mark.parametrize(("op_type", "axis"), [("ConcatV2D", 1), ("ConcatD", -1),
                                               ("ConcatV2", 0), ("Concat", 2)])
def test_concat_fuses_with_its_consumers_over_partial_loads(op_type, axis):
    dims = [[-1, 3, 4], [-1, 5, 4], [-1, 2, 4]]
    if axis == 0:
        dims = [[2, 3, 4], [3, 3, 4]]
    elif axis in (2, -1):
        dims = [[-1, 3, 4], [-1, 3, 1], [-1, 3, 6]]
    g = _concat_graph(op_type, axis, dims)
    hints = {n.name: [2 if d == -1 else d for d in n.op_desc.output_desc(0).shape]
             for n in g.inputs}
    cm = air.compile(g, input_shapes=hints)
    (k,) = cm.kernels
    assert k.fuse_type == "concat" and k.name.startswith("autofuse_concat_0_")
    assert k.members == ["cat", "relu", "y"]
    (cat,) = (n for n in k.hint.nodes if n.type == "Concat")
    # One Load per operand, each of its own extent on the concat axis.
    loads = [n for n in k.hint.nodes if n.type == "Load"][:len(dims)]
    extents = [list(map(str, ld.y.size)) for ld in loads]
    a = axis % 3
    assert [e[a] for e in extents] == [str(d[a]) for d in dims]
    assert str(cat.y.size[a]) == str(sum(d[a] for d in dims))
    for batch in (2, 5):
        f = _concat_feeds(g, batch)
        want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
        np.testing.assert_allclose(got["y"] if "y" in got else list(got.values())[0],
                                   list(want.values())[0], rtol=1e-6)
    verify_on_cpu(cm)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack_is_a_concat_of_one_slice_per_operand(axis):
    g = air.Graph(f"pack{axis}")
    xs = [g.add_input(f"x{i}", air.TensorDesc([-1, 4], F32)) for i in range(3)]
    p = g.add_op("Pack", [xs], name="pack", attrs={"axis": axis, "N": 3})
    g.set_outputs([g.add_op("Relu", [p], name="relu")])
    cm = air.compile(g, input_shapes={f"x{i}": [2, 4] for i in range(3)})
    (k,) = cm.kernels
    assert k.members == ["pack", "relu"] and k.fuse_type == "concat"
    for batch in (2, 5):
        f = _concat_feeds(g, batch)
        np.testing.assert_array_equal(list(air.evaluate(cm.graph, f).values())[0],
                                      np.maximum(np.stack(list(f.values()), axis=axis), 0))
    verify_on_cpu(cm)


def test_a_concat_does_not_take_in_the_producers_of_its_operands():
    g = _concat_graph("ConcatV2D", 1, [[2, 3, 4], [2, 5, 4]], producer=True)
    cm = air.compile(g)
    kernels = {tuple(k.members) for k in cm.kernels}
    assert ("cat", "relu", "y") in kernels
    assert ("exp", "abs") in kernels
    f = _concat_feeds(g, 2)
    np.testing.assert_allclose(list(air.evaluate(cm.graph, f).values())[0],
                               list(air.evaluate(g, f).values())[0], rtol=1e-6)
    why = air.compiler.explain(g, "abs", "cat")
    assert "AF2003" in str(why)


def test_concat_forms_that_stay_barriers():
    # Operands of another rank than the output's (a scalar-like operand), and a concat the
    # family switch turns off.
    g = _concat_graph("ConcatV2D", 1, [[2, 3, 4], [2, 5, 4]])
    cm = air.compile(g, options=air.CompileOptions(disable=["concat"]))
    assert "concat family is disabled" in reasons(cm)["cat"]
    g = _concat_graph("ConcatV2", 1, [[2, 3, 4], [2, 5, 4]])
    ax = g.node("ax")
    # A concat axis that is not a constant.
    g2 = air.Graph("dyn_axis")
    a = g2.add_input("a", air.TensorDesc([2, 3], F32))
    b = g2.add_input("b", air.TensorDesc([2, 3], F32))
    d = g2.add_input("d", air.TensorDesc([], air.int32))
    c = g2.add_op("ConcatV2", [[a, b], d], name="cat", attrs={"N": 2})
    g2.set_outputs([g2.add_op("Relu", [c], name="r")])
    assert ax is not None
    cm = air.compile(g2)
    assert "not constant" in reasons(cm)["cat"]


# ---------------------------------------------------------------- row 35: split


def _split_graph(op_type: str):
    g = air.Graph(f"split_{op_type}")
    x = g.add_input("x", air.TensorDesc([-1, 12, 4], F32))
    if op_type == "SplitD":
        s = g.add_op(op_type, [x], attrs={"split_dim": 1, "num_split": 3}, name="sp", outputs=3)
    elif op_type == "SplitVD":
        s = g.add_op(op_type, [x], attrs={"size_splits": [3, -1, 4], "split_dim": -2,
                                          "num_split": 3}, name="sp", outputs=3)
    elif op_type == "Split":
        s = g.add_op(op_type, [g.add_const("dim", np.array(1, np.int32)), x],
                     attrs={"num_split": 3}, name="sp", outputs=3)
    else:
        s = g.add_op(op_type, [x, g.add_const("sizes", np.array([2, 6, 4], np.int64)),
                               g.add_const("dim", np.array(1, np.int32))],
                     attrs={"num_split": 3}, name="sp", outputs=3)
    a = g.add_op("Abs", [g.add_op("Relu", [s.out(0)], name="a")], name="aa")
    # Output 1 unused; output 2 a graph output through Neg.
    g.set_outputs([a, g.add_op("Neg", [s.out(2)], name="c")])
    return g


@pytest.mark.parametrize("op_type", ["SplitD", "SplitVD", "Split", "SplitV"])
def test_split_becomes_a_strided_load_per_output_when_the_family_is_on(op_type):
    g = _split_graph(op_type)
    hints = {"x": [2, 12, 4]}
    off = air.compile(g, input_shapes=hints)
    assert reasons(off)["sp"] == "the split family is disabled"
    cm = compile1(g, input_shapes=hints, enable=["split"])
    assert cm.report.data["simplify"]["splits_to_slices"] == 1
    assert not any(n.type.startswith("Split") for n in cm.graph.nodes)
    members = {m for k in cm.kernels for m in k.members}
    assert {"sp_slice0", "sp_slice2", "a", "aa", "c"} <= members
    assert "sp_slice1" not in members  # an unused output gets no Load
    for batch in (2, 3):
        f = {"x": np.random.default_rng(batch).standard_normal((batch, 12, 4)).astype(np.float32)}
        want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
    verify_on_cpu(cm)


def test_a_split_along_a_dynamic_dim_stays_a_barrier():
    g = air.Graph("split_dyn")
    x = g.add_input("x", air.TensorDesc([-1, 4], F32))
    s = g.add_op("SplitD", [x], attrs={"split_dim": 0, "num_split": 2}, name="sp", outputs=2)
    g.set_outputs([g.add_op("Relu", [s.out(0)], name="a"), g.add_op("Relu", [s.out(1)], name="b")])
    cm = air.compile(g, options=air.CompileOptions(enable=["split"]))
    assert "not constant" in reasons(cm)["sp"] or "dynamic" in reasons(cm)["sp"]


# ---------------------------------------------------------------- row 37: gather


def _gather_graph(op_type: str, axis: int, pshape: list[int], ishape: list[int],
                  producer: bool = False, batch_dims: int = 0):
    g = air.Graph(f"gather_{op_type}")
    x = g.add_input("x", air.TensorDesc(pshape, F32))
    i = g.add_input("i", air.TensorDesc(ishape, air.int32))
    if producer:
        x = g.add_op("Abs", [g.add_op("Exp", [x], name="exp")], name="abs")
    if op_type == "GatherV2D":
        y = g.add_op(op_type, [x, i], attrs={"axis": axis}, name="ga")
    elif op_type == "GatherV2":
        y = g.add_op(op_type, [x, i, g.add_const("ax", np.array([axis], np.int64))],
                     attrs={"batch_dims": batch_dims}, name="ga")
    else:
        y = g.add_op(op_type, [x, i], name="ga")
    z = g.add_op("Mul", [g.add_op("Relu", [y], name="r"), g.add_const("k", np.float32(2))],
                 name="m")
    g.set_outputs([z])
    return g


def _gather_feeds(pshape, ishape, axis, batch):
    rng = np.random.default_rng(batch)
    ps = [batch if d == -1 else d for d in pshape]
    ish = [batch if d == -1 else d for d in ishape]
    n = ps[axis]
    return {"x": rng.standard_normal(ps).astype(np.float32),
            "i": rng.integers(-n, n, ish).astype(np.int32)}


@pytest.mark.parametrize(("op_type", "axis", "pshape", "ishape"), [
    ("GatherV2D", 0, [10, 6], [-1, 3]),
    ("GatherV2D", -1, [-1, 3, 8], [5]),
    ("GatherV2", 1, [-1, 7, 5], [2, 2]),
    ("Gather", 0, [9, 1, 4], [-1]),
])
def test_gather_reads_params_and_indices_from_memory(op_type, axis, pshape, ishape):
    g = _gather_graph(op_type, axis, pshape, ishape)
    hints = {"x": [2 if d == -1 else d for d in pshape],
             "i": [2 if d == -1 else d for d in ishape]}
    off = air.compile(g, input_shapes=hints)
    assert reasons(off)["ga"] == "the gather family is disabled"
    cm = air.compile(g, input_shapes=hints, options=air.CompileOptions(enable=["gather"]))
    (k,) = cm.kernels
    assert k.fuse_type == "gather" and k.members == ["ga", "r", "m"]
    (ga,) = (n for n in k.hint.nodes if n.type == "Gather")
    assert ga.attr.ir_attr.negative_index_support is True
    for batch in (2, 3):
        f = _gather_feeds(pshape, ishape, axis, batch)
        want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-6)
    verify_on_cpu(cm)


def test_a_gather_does_not_take_in_its_producers_and_batch_dims_stay_barriers():
    g = _gather_graph("GatherV2D", 0, [10, 6], [4], producer=True)
    cm = air.compile(g, options=air.CompileOptions(enable=["gather"]))
    kernels = {tuple(k.members) for k in cm.kernels}
    assert ("exp", "abs") in kernels and ("ga", "r", "m") in kernels
    assert "AF2003" in str(air.compiler.explain(g, "abs", "ga",
                                                options=air.CompileOptions(enable=["gather"])))
    g = _gather_graph("GatherV2", 1, [3, 7, 5], [3, 2], batch_dims=1)
    cm = air.compile(g, options=air.CompileOptions(enable=["gather"]))
    assert "batch_dims" in reasons(cm)["ga"]


# ---------------------------------------------------------------- row 36: transpose


def _transpose_graph(op_type: str, perm: list[int], shape: list[int], dtype=F32):
    g = air.Graph(f"transpose_{op_type}")
    x = g.add_input("x", air.TensorDesc(shape, dtype))
    e = g.add_op("Exp", [g.add_op("Abs", [x], name="abs")], name="exp")
    if op_type == "TransposeD":
        y = g.add_op(op_type, [e], attrs={"perm": perm}, name="tr")
    else:
        y = g.add_op(op_type, [e, g.add_const("perm", np.array(perm, np.int64))], name="tr")
    g.set_outputs([g.add_op("Relu", [y], name="after"), e])
    return g


@pytest.mark.parametrize(("op_type", "perm", "shape", "dtype"), [
    ("TransposeD", [0, 2, 1], [-1, 3, 8], F32),
    ("Transpose", [2, 0, 1], [4, -1, 6], air.float16),
    ("TransposeD", [3, 1, 0, 2], [2, 3, -1, 5], F32),
])
def test_transpose_is_the_last_op_of_its_kernel(op_type, perm, shape, dtype):
    g = _transpose_graph(op_type, perm, shape, dtype)
    hints = {"x": [2 if d == -1 else d for d in shape]}
    off = air.compile(g, input_shapes=hints)
    assert reasons(off)["tr"] == "the transpose family is disabled"
    opts = air.CompileOptions(enable=["transpose"])
    cm = air.compile(g, input_shapes=hints, options=opts)
    (k,) = cm.kernels
    assert k.fuse_type == "transpose" and k.members == ["abs", "exp", "tr"]
    (t,) = (n for n in k.hint.nodes if n.type == "Transpose")
    # The Transpose's output, and the Store after it, are laid out in the output's dim order.
    (st,) = (n for n in k.hint.nodes if n.type == "Store" and n.x.node.name == "tr")
    assert list(st.y.axis) == list(t.y.axis) != list(t.x.axis)
    refused = {(r["a"], r["b"]): r["code"] for r in cm.report.data["rejected_pairs"]}
    assert refused.get(("tr", "after")) == "AF2004" or refused.get(("abs", "after")) == "AF2004"
    npdt = np.float16 if dtype == air.float16 else np.float32
    for batch in (2, 3):
        f = {"x": np.random.default_rng(batch).standard_normal(
            [batch if d == -1 else d for d in shape]).astype(npdt)}
        want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
        for key in want:
            np.testing.assert_allclose(got[key].astype(np.float32),
                                       want[key].astype(np.float32), rtol=1e-3)
    verify_on_cpu(cm)


def test_a_transpose_of_unit_dims_is_a_view_and_other_dtypes_stay_barriers():
    g = _transpose_graph("TransposeD", [1, 0, 2], [5, 1, 4])
    cm = air.compile(g, options=air.CompileOptions(enable=["transpose"]))
    assert [k.members for k in cm.kernels] == [["abs", "exp", "tr", "after"]]
    f = {"x": np.random.default_rng(0).standard_normal((5, 1, 4)).astype(np.float32)}
    want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6)
    g = air.Graph("int_transpose")
    x = g.add_input("x", air.TensorDesc([3, 4], air.int32))
    g.set_outputs([g.add_op("TransposeD", [g.add_op("Abs", [x], name="abs")],
                            attrs={"perm": [1, 0]}, name="tr")])
    cm = air.compile(g, options=air.CompileOptions(enable=["transpose"]))
    assert "fp16 / fp32" in reasons(cm)["tr"]
