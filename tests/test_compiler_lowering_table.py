"""Every row of the lowering table is checked — the single op, lowered, scheduled, tiled and
run through its HintGraph (``air.evaluate`` of the compiled graph), equals the numpy reference of
the GE op (``air.evaluate`` of the original graph) on random inputs."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air
from support.kernels import compile_row, run_hint

SHAPE = (4, 16)
# Lowered GE types outside the builtin op library: the reference interpreter has no kernel
# for them, so they are checked against numpy here directly.
NOT_IN_LIBRARY = {"Axpy", "BiasAddGrad", "BitwiseAnd", "EluGrad", "Inv", "LeakyReluGrad", "Muls",
                  "ReluGrad", "RsqrtGrad", "SigmoidGrad", "SqueezeV3", "TanhGrad", "UnsqueezeV3"}
# Rows of a family that is off by default.
ENABLE = {"MatMul": ["matmul_vector"], "MatMulV2": ["matmul_vector"],
          "BatchMatMul": ["matmul_vector"], "BatchMatMulV2": ["matmul_vector"],
          "GatherV2D": ["gather"], "GatherV2": ["gather"], "Gather": ["gather"],
          "TransposeD": ["transpose"], "Transpose": ["transpose"]}
GATHERS = {"GatherV2D", "GatherV2", "Gather"}
MATMUL = {"MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2"}
# Input domains: positive values where the op needs them, bool / int operands.
POSITIVE = {"Log", "Sqrt", "Rsqrt", "Reciprocal", "Pow", "Div", "RealDiv", "FloorDiv", "Mod"}
BOOL_IN = {"LogicalAnd", "LogicalOr", "LogicalNot", "ReduceAll", "ReduceAllD", "ReduceAny",
           "ReduceAnyD"}
VIEWS = {"Reshape", "Squeeze", "Unsqueeze", "ExpandDims", "Flatten"}
ATTRS = {
    "Cast": {"dst_type": int(air.DataType.FLOAT16)},
    "SoftmaxV2": {"axes": [-1]},
    "LogSoftmaxV2": {"axes": [-1]},
    "LayerNorm": {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-5},
    "BatchNorm": {"epsilon": 1e-5, "data_format": "NCHW", "is_training": False},
    "Elu": {"alpha": 0.7},
    "LeakyRelu": {"negative_slope": 0.2},
    "Flatten": {"axis": 1},
    "Squeeze": {"axis": [1]},
    "Unsqueeze": {"axes": [0]},
    "Celu": {"alpha": 0.6},
    "ArgMaxD": {"dimension": 1},
    "BiasAdd": {"data_format": "NCHW"},
    "TileD": {"multiples": [2, 1, 3]},
    "SliceD": {"offsets": [1, 3], "size": [2, -1]},
    "StridedSliceD": {"begin": [0, 1], "end": [4, 15], "strides": [2, 3]},
    "ConcatV2D": {"concat_dim": 1, "N": 3},
    "Pack": {"axis": 1, "N": 3},
    "GatherV2D": {"axis": 1},
    "TransposeD": {"perm": [1, 0]},
    "ConcatD": {"concat_dim": -1, "N": 3},
    "ConcatV2": {"N": 3},
    "Concat": {"N": 3},
}
CONCATS = {"ConcatV2D", "ConcatD", "ConcatV2", "Concat", "Pack"}
# Constant operands of the slice rows (name → values), x being (4, 16).
SLICE_CONSTS = {
    "Slice": {"offsets": [1, 2], "size": [3, 9]},
    "StridedSlice": {"begin": [1, -12], "end": [4, 100], "strides": [1, 2]},
    "StridedSliceV2": {"begin": [2], "end": [-1], "axes": [1], "strides": [3]},
}


def lowered_in_library():
    # Lowerings a test registers for its own types ("Test...") stay for the process.
    return [t for t in air.compiler.lowered_types()
            if t not in NOT_IN_LIBRARY and not t.startswith("Test")]


def value(rng, shape, dtype, op_type):
    if dtype == air.bool_:
        return rng.random(shape) > 0.5
    v = rng.standard_normal(shape).astype(np.float32)
    if op_type in POSITIVE:
        v = np.abs(v) + 0.5
    return v


def build(op_type: str):
    """``op_type`` on Data inputs (and Const operands where the op takes shapes or axes)."""
    decl = air.ops.get(op_type)
    g = air.Graph(op_type)
    feeds = {}
    ins = []
    rng = np.random.default_rng(abs(hash(op_type)) % 2**32)
    attrs = dict(ATTRS.get(op_type, {}))
    shape = SHAPE
    if op_type == "BatchNorm":
        shape = (2, 4, 3, 5)
    if op_type in VIEWS:
        shape = (4, 1, 16)
    if op_type in ("Tile", "TileD"):
        shape = (1, 4, 1)
    if op_type == "BiasAdd":
        shape = (2, 4, 3)
    if op_type == "Fill":
        dims = g.add_const("dims_c", np.array([3, 4, 16], np.int64))
        fill_value = g.add_input("value", air.TensorDesc([1], air.float32))
        feeds["value"] = np.array([1.5], np.float32)
        ins = [dims, fill_value]
    for inp in ([] if op_type == "Fill" else decl.inputs):
        wanted = inp.kind == "dynamic" or inp.name in SLICE_CONSTS.get(op_type, {})
        if inp.kind != "required" and op_type != "BatchNorm" and not wanted:
            continue
        n = inp.name
        if n in SLICE_CONSTS.get(op_type, {}):
            ins.append(g.add_const(f"{n}_c", np.array(SLICE_CONSTS[op_type][n], np.int64)))
            continue
        if n == "multiples":
            ins.append(g.add_const(f"{n}_c", np.array([2, 1, 3], np.int64)))
            continue
        if n == "perm":
            ins.append(g.add_const(f"{n}_c", np.array([1, 0], np.int64)))
            continue
        if n == "concat_dim":
            ins.append(g.add_const(f"{n}_c", np.array(1, np.int32)))
            continue
        if n == "dimension":
            ins.append(g.add_const(f"{n}_c", np.array([1], np.int64)))
            continue
        if n in ("axes",):
            ins.append(g.add_const(f"{n}_c", np.array([1], np.int64)))
            attrs.setdefault("keep_dims", True)
            continue
        if n == "axis":
            ins.append(g.add_const(f"{n}_c", np.array([0], np.int64)))
            continue
        if n == "indices" and op_type in GATHERS:
            # Indices into dim 0 (GatherV2's constant axis, Gather) or 1 (GatherV2D), some
            # negative.
            dim = SHAPE[1] if op_type == "GatherV2D" else SHAPE[0]
            x = g.add_input(n, air.TensorDesc([2, 3], air.int32))
            feeds[n] = rng.integers(-dim, dim, (2, 3)).astype(np.int32)
            ins.append(x)
            continue
        if n == "shape":
            target = [4, 1, 16] if op_type == "Reshape" else [3, 4, 16]
            ins.append(g.add_const(f"{n}_c", np.array(target, np.int64)))
            continue
        dt = air.float32
        s = shape
        if op_type in BOOL_IN or (op_type.startswith("Select") and n == "condition"):
            dt = air.bool_
        if op_type in ("LayerNorm",) and n != "x":
            s = (shape[-1],)
        if op_type == "BatchNorm" and n != "x":
            s = (shape[1],)
        if op_type == "ClipByValue" and n != "x":
            s = ()
        if op_type == "BiasAdd" and n == "bias":
            s = (shape[1],)
        if op_type in MATMUL:
            x1 = (3, 4, 16) if op_type.startswith("Batch") else (4, 16)
            s = x1 if n == "x1" else (16, 1)
        if inp.kind == "dynamic":
            # Three operands for a variadic input (AddN); a concat's of three extents.
            for j in range(3):
                if op_type in CONCATS and op_type != "Pack":
                    s = (SHAPE[0], (16, 5, 7)[j])
                x = g.add_input(f"{n}{j}", air.TensorDesc(list(s), dt))
                feeds[f"{n}{j}"] = value(rng, s, dt, op_type)
                ins.append(x)
            continue
        x = g.add_input(n, air.TensorDesc(list(s), dt))
        v = value(rng, s, dt, op_type)
        if n == "variance":
            v = np.abs(v) + 0.1
        if op_type == "ClipByValue" and n != "x":
            v = np.asarray(-0.5 if n == "clip_value_min" else 0.5, np.float32)
        feeds[n] = v
        ins.append(x)
    if op_type.startswith("Reduce") and not op_type.endswith("D"):
        pass
    elif op_type.startswith("Reduce"):
        attrs.setdefault("axes", [1])
        attrs.setdefault("keep_dims", True)
    node = g.add_op(op_type, ins, name="op", attrs=attrs)
    outs = [node]
    if op_type in VIEWS or op_type in ("Expand", "BroadcastTo", "Tile", "TileD", "Fill") \
            or "Slice" in op_type or op_type in CONCATS or op_type in GATHERS:
        # A view has no compute of its own: give the kernel one after it.
        outs = [g.add_op("Abs", [node], name="after")]
    g.set_outputs(outs)
    return g, feeds


@pytest.mark.parametrize("op_type", lowered_in_library())
def test_every_lowering_row_equals_the_reference(op_type):
    g, feeds = build(op_type)
    cm = compile_row(g, evaluate=False, enable=ENABLE.get(op_type, []))
    kernels = [k for k in cm.kernels if "op" in k.members]
    assert kernels, cm.report.text()
    want = air.evaluate(g, feeds)
    got = air.evaluate(cm.graph, feeds)
    assert list(want) == list(got)
    for k in want:
        w, v = np.asarray(want[k]), np.asarray(got[k])
        assert w.shape == v.shape and w.dtype == v.dtype, (k, w.shape, v.shape, w.dtype, v.dtype)
        if w.dtype == np.float16:
            np.testing.assert_allclose(v.astype(np.float32), w.astype(np.float32), rtol=1e-3)
        elif w.dtype.kind == "f":
            np.testing.assert_allclose(v, w, rtol=2e-5, atol=2e-6)
        else:
            np.testing.assert_array_equal(v, w)


def test_every_row_is_covered():
    rows = {t for t in air.compiler.lowered_types() if not t.startswith("Test")}
    assert rows == set(lowered_in_library()) | NOT_IN_LIBRARY


# GE semantics of the lowered types outside the builtin library (GE's op definitions).
OUTSIDE = {
    "Inv": (1, lambda x: 1.0 / x, {}),
    "Muls": (1, lambda x: x * 2.5, {"value": 2.5}),
    "Axpy": (2, lambda x1, x2: x1 * 0.5 + x2, {"alpha": 0.5}),
    "ReluGrad": (2, lambda g, f: np.where(f > 0, g, 0).astype(np.float32), {}),
    "SigmoidGrad": (2, lambda y, dy: dy * y * (1 - y), {}),
    "TanhGrad": (2, lambda y, dy: dy * (1 - y * y), {}),
    "RsqrtGrad": (2, lambda y, dy: dy * y ** 3 * -0.5, {}),
}


@pytest.mark.parametrize("op_type", sorted(OUTSIDE))
def test_rows_outside_the_library_equal_numpy(op_type):
    n_in, ref, attrs = OUTSIDE[op_type]
    g = air.Graph(op_type)
    rng = np.random.default_rng(len(op_type))
    td = air.TensorDesc(list(SHAPE), air.float32)
    names = [f"x{i}" for i in range(n_in)]
    feeds = {n: (np.abs(rng.standard_normal(SHAPE)) + 0.5).astype(np.float32) for n in names}
    xs = [g.add_input(n, td) for n in names]
    port_names = {"ReluGrad": ["gradients", "features"], "SigmoidGrad": ["y", "dy"],
                  "TanhGrad": ["y", "dy"], "RsqrtGrad": ["y", "dy"], "Axpy": ["x1", "x2"]}
    node = g.add_op(op_type, xs, name="op", attrs=attrs,
                    input_names=port_names.get(op_type, ["x"]), outputs=["y"],
                    output_descs=[td], allow_unregistered=True)
    g.set_outputs([node])
    cm = compile_row(g, evaluate=False)
    (k,) = cm.kernels
    assert k.members == ["op"]
    got = run_hint(cm, k, feeds).reshape(SHAPE)
    np.testing.assert_allclose(got, ref(*(feeds[n] for n in names)), rtol=2e-5, atol=1e-6)


def test_bitwise_and_and_v3_views_equal_numpy():
    g = air.Graph("band")
    td = air.TensorDesc(list(SHAPE), air.int32)
    a, b = g.add_input("a", td), g.add_input("b", td)
    g.set_outputs([g.add_op("BitwiseAnd", [a, b], name="op", input_names=["x1", "x2"],
                            outputs=["y"], output_descs=[td], allow_unregistered=True)])
    cm = compile_row(g)
    (k,) = cm.kernels
    rng = np.random.default_rng(0)
    feeds = {n: rng.integers(-1000, 1000, SHAPE).astype(np.int32) for n in ("a", "b")}
    got = run_hint(cm, k, feeds).reshape(SHAPE)
    np.testing.assert_array_equal(got, np.bitwise_and(feeds["a"], feeds["b"]))
    for ty, shape_in, shape_out in [("SqueezeV3", [4, 1, 16], [4, 16]),
                                    ("UnsqueezeV3", [4, 16], [4, 1, 16])]:
        g = air.Graph(ty)
        x = g.add_input("x", air.TensorDesc(shape_in, air.float32))
        axes = g.add_const("axes", np.array([1], np.int64))
        v = g.add_op(ty, [g.add_op("Abs", [x], name="abs"), axes], name="op",
                     input_names=["x", "axes"], outputs=["y"],
                     output_descs=[air.TensorDesc(shape_out, air.float32)],
                     allow_unregistered=True)
        g.set_outputs([g.add_op("Neg", [v], name="neg")])
        cm = air.compile(g)
        (k,) = cm.kernels
        assert sorted(k.members) == ["abs", "neg", "op"]
        xv = rng.standard_normal(shape_in).astype(np.float32)
        got = run_hint(cm, k, {"x": xv})
        np.testing.assert_allclose(got.reshape(shape_out), -np.abs(xv).reshape(shape_out))


def test_python_lowering_is_traced_into_the_registry():
    from ascendir.compiler import lowering

    @lowering("TestFastGelu")
    def _(b, x):
        return b.Mul(x, b.Sigmoid(b.Mul(x, 1.702)))

    assert "TestFastGelu" in air.compiler.lowered_types()
    g = air.Graph("fg")
    td = air.TensorDesc([4, 16], air.float32)
    x = g.add_input("x", td)
    y = g.add_op("TestFastGelu", [x], name="op", input_names=["x"], outputs=["y"],
                 output_descs=[td], allow_unregistered=True)
    g.set_outputs([g.add_op("Abs", [y], name="abs")])
    cm = air.compile(g)
    (k,) = cm.kernels
    assert sorted(k.members) == ["abs", "op"]
    xv = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    got = run_hint(cm, k, {"x": xv}).reshape(4, 16)
    np.testing.assert_allclose(got, np.abs(xv / (1 + np.exp(-1.702 * xv))), rtol=1e-5)
    # A builtin lowering is not replaced by accident; bad traces are refused in Rust.
    with pytest.raises(air.CompileError, match="already has a lowering") as refused:
        lowering("Abs")(lambda b, x: b.Neg(x))
    assert (refused.value.stage, refused.value.kind) == ("lower", "lowering")
    with pytest.raises(air.CompileError, match="NoSuchAscOp"):
        lowering("TestBad")(lambda b, x: b.NoSuchAscOp(x))
    with pytest.raises(TypeError):
        lowering("TestBad2")(lambda b, x: b.Mul(x, "two"))
    assert "TestBad" not in air.compiler.lowered_types()
