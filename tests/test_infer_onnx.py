"""``Graph.infer_shapes`` of imported ONNX models against the truth: the output shapes and
dtypes of the ONNX backend conformance cases (the expected outputs generated from the installed
``onnx`` package), side by side with ``onnx.shape_inference.infer_shapes(data_prop=True)``.

Two measurements over every fully mapped case with tensor outputs:

* as shipped (the declared output types kept): inference must be exact on >= 95 % and never
  wrong (a known dim or dtype that differs from the truth) where ONNX's own inference is exact;
* with every declared output and ``value_info`` type removed: inference must never be wrong
  where ONNX's is exact (unknown dims are allowed; the exact share is reported).
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import ascendir as air

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ascendir.onnx import _onnx_dtype_of  # noqa: E402


def _truth(outputs) -> list[tuple[int, tuple[int, ...]]] | None:
    want = []
    for o in outputs:
        a = numpy_helper.to_array(o) if hasattr(o, "SerializeToString") else o
        if not isinstance(a, np.ndarray) or a.dtype == object:
            return None
        want.append((helper.np_dtype_to_tensor_dtype(a.dtype), tuple(a.shape)))
    return want


def _stripped(m):
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    del m2.graph.value_info[:]
    for o in m2.graph.output:
        o.type.Clear()
    return m2


def _onnx_exact(m, want) -> bool:
    try:
        inferred = onnx.shape_inference.infer_shapes(m, data_prop=True)
    except Exception:  # noqa: BLE001 - ONNX's own inference failing counts as not exact
        return False
    for vi, w in zip(inferred.graph.output, want, strict=True):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
            return False
        dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim)
        if (t.elem_type, dims) != w:
            return False
    return True


def classify(g: air.Graph, want) -> tuple[str, str]:
    """("exact" | "unknown" | "wrong" | "raise", detail) of the graph outputs after inference."""
    try:
        g.infer_shapes()
    except air.AscendIRError as e:
        return "raise", str(e)
    (net,) = [n for n in g.nodes if n.type == "NetOutput"]
    status, got = "exact", []
    for i, (w_dtype, w_shape) in enumerate(want):
        src = net.input_source(i)
        d = src.node.op_desc.output_desc(src.index)
        dtype = 0 if d.dtype == air.DataType.UNDEFINED else _onnx_dtype_of(d.dtype)
        shape = tuple(d.shape)
        got.append((dtype, shape))
        if (dtype, shape) == (w_dtype, w_shape):
            continue
        dtype_ok = dtype in (0, w_dtype)
        shape_ok = shape == (-2,) or (
            len(shape) == len(w_shape)
            and all(a in (-1, b) for a, b in zip(shape, w_shape, strict=True))
        )
        if dtype_ok and shape_ok:
            status = "unknown" if status == "exact" else status
        else:
            status = "wrong"
    return status, f"inferred {got}, truth {want}"


@pytest.fixture(scope="module")
def inferred():
    """Per case and mode: (our status, detail, ONNX exact)."""
    from onnx.backend.test.case import node

    out: dict[str, dict[str, tuple[str, str, bool]]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in node.collect_testcases(None):
            want = _truth(case.data_sets[0][1])
            if want is None:
                continue
            for mode, m in (("declared", case.model), ("stripped", _stripped(case.model))):
                # Function ops and forms GE has no single op for expanded: their cases count.
                g, rep = air.onnx.load(m, return_report=True, warn_unknown=False,
                                       expand_functions=True)
                if rep.unknown_ops:
                    break
                status, detail = classify(g, want)
                out.setdefault(case.name, {})[mode] = (status, detail, _onnx_exact(m, want))
    return out


@pytest.mark.sweep
@pytest.mark.parametrize("mode", ["declared", "stripped"])
def test_infer_shapes_on_the_conformance_cases(inferred, infer_summary, mode):
    rows = {n: r[mode] for n, r in inferred.items()}
    tally = collections.Counter(s for s, _, _ in rows.values())
    n = len(rows)
    onnx_exact = sum(1 for _, _, ox in rows.values() if ox)
    wrong_where_onnx_exact = {k: d for k, (s, d, ox) in rows.items() if s == "wrong" and ox}
    raised_where_onnx_exact = {k: d for k, (s, d, ox) in rows.items() if s == "raise" and ox}
    infer_summary.append(
        f"{mode} output types: {n} fully mapped cases; exact {tally['exact']} "
        f"({tally['exact'] / n:.1%}), unknown dims {tally['unknown']}, wrong {tally['wrong']}, "
        f"raise {tally['raise']}; onnx.shape_inference (data_prop) exact on {onnx_exact} "
        f"({onnx_exact / n:.1%}); wrong where ONNX is exact: {len(wrong_where_onnx_exact)}")
    infer_summary.extend(f"  wrong: {k}: {d}" for k, d in sorted(wrong_where_onnx_exact.items()))
    infer_summary.extend(f"  raise: {k}: {d}" for k, d in sorted(raised_where_onnx_exact.items()))
    assert n > 800
    assert not wrong_where_onnx_exact, wrong_where_onnx_exact
    assert not raised_where_onnx_exact, raised_where_onnx_exact
    if mode == "declared":
        assert tally["exact"] / n >= 0.99  # the issue asks 95 %; measured 100 %


# ------------------------------------------------------------ the regressions found above

ort = pytest.importorskip("onnxruntime")


INT_OUT = {"ArgMax": [True], "ArgMin": [True], "Shape": [True], "TopK": [False, True]}


def _model(node, inputs, n_out=1, opset=18):
    # The outputs declare their element type only: the shapes are for inference to find.
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in inputs.items()]
    ints = INT_OUT.get(node.op_type, [False] * n_out)
    outs = [helper.make_tensor_value_info(
        o, onnx.TensorProto.INT64 if is_int else onnx.TensorProto.FLOAT, None)
        for o, is_int in zip(node.output[:n_out], ints, strict=True)]
    m = helper.make_model(helper.make_graph([node], "m", ins, outs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


X = np.random.default_rng(3).standard_normal((1, 2, 7, 7)).astype(np.float32)
W = np.random.default_rng(4).standard_normal((2, 2, 3, 3)).astype(np.float32)


@pytest.mark.parametrize(("node", "inputs"), [
    (helper.make_node("ArgMax", ["x"], ["y"]), {"x": X}),
    (helper.make_node("ArgMin", ["x"], ["y"], axis=-1, keepdims=0), {"x": X}),
    (helper.make_node("Shape", ["x"], ["y"], start=1, end=-1), {"x": X}),
    (helper.make_node("Shape", ["x"], ["y"], start=3, end=1), {"x": X}),
    (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                      ceil_mode=1, pads=[0, 0, 1, 1]), {"x": X}),
    (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2]), {"x": X}),
    (helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER", strides=[2, 2]),
     {"x": X, "w": W}),
    (helper.make_node("Split", ["x"], ["a", "b", "c"], axis=2, num_outputs=3), {"x": X}),
    (helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=3),
     {"x": X, "k": np.array([2], np.int64)}),
])
def test_inferred_types_match_onnxruntime(node, inputs):
    # Each was wrong or raised before: ArgMax indices int32 and no default axis, Shape without
    # start/end, pooling without ceil's last-window rule or dilations, SAME_LOWER convolution,
    # uneven Split, TopK indices int32.
    m = _model(node, inputs, n_out=len(node.output))
    g = air.onnx.load(m, warn_unknown=False)
    g.infer_shapes()
    so = ort.SessionOptions()
    so.log_severity_level = 4
    got = ort.InferenceSession(m.SerializeToString(), so,
                               providers=["CPUExecutionProvider"]).run(None, inputs)
    (net,) = [n for n in g.nodes if n.type == "NetOutput"]
    for i, want in enumerate(got):
        src = net.input_source(i)
        d = src.node.op_desc.output_desc(src.index)
        if node.op_type == "TopK":
            # k is a graph input here (not constant): the dim stays unknown, never wrong.
            assert d.shape == (1, 2, 7, -1)
            assert _onnx_dtype_of(d.dtype) == helper.np_dtype_to_tensor_dtype(want.dtype)
            continue
        assert (tuple(d.shape), _onnx_dtype_of(d.dtype)) == (
            want.shape, helper.np_dtype_to_tensor_dtype(want.dtype))
    assert air.evaluate(g, list(inputs.values()))


def test_uneven_split_maps_to_sizes_and_exports_back():
    m = _model(helper.make_node("Split", ["x"], ["a", "b", "c"], axis=2, num_outputs=3),
               {"x": X}, n_out=3)
    g = air.onnx.load(m)
    (split,) = [n for n in g.nodes if n.type.startswith("Split")]
    assert split.type == "SplitVD" and split.attrs["size_splits"] == [3, 3, 1]
    got = air.evaluate(g, [X])
    for part, want in zip(got.values(), np.split(X, [3, 6], axis=2), strict=True):
        np.testing.assert_array_equal(part, want)
    g.infer_shapes()
    onnx.checker.check_model(onnx.load_from_string(air.onnx.to_bytes(g)), full_check=True)


def test_index_types_onnx_cannot_express_are_refused_on_export():
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2, 3], air.float32))
    g.set_outputs([g.add_op("ArgMaxD", [x], attrs={"dimension": 1})])
    with pytest.raises(air.AscendIRError, match="ArgMaxD with int32 .* has no ONNX form"):
        air.onnx.to_bytes(g)
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2, 3], air.float32))
    g.set_outputs([g.add_op("ArgMaxD", [x], attrs={"dimension": 1,
                                                   "dtype": int(air.DataType.INT64)})])
    exp = onnx.load_from_string(air.onnx.to_bytes(g))
    onnx.checker.check_model(exp, full_check=True)
    assert exp.graph.node[0].op_type == "ArgMax"


@pytest.mark.parametrize(("node", "inputs", "inits"), [
    (helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest"), {"x": X},
     [numpy_helper.from_array(np.array([1, 1, 2, 0.5], np.float32), "s")]),
    (helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="linear"), {"x": X},
     [numpy_helper.from_array(np.array([1, 2, 3, 9], np.int64), "z")]),
    (helper.make_node("Einsum", ["x", "w"], ["y"], equation="bchw,dcij->bd"),
     {"x": X, "w": W}, []),
    (helper.make_node("Einsum", ["x"], ["y"], equation="...ii"),
     {"x": X[:, :, :5, :5]}, []),
    (helper.make_node("GatherND", ["x", "i"], ["y"]), {"x": X},
     [numpy_helper.from_array(np.array([[0, 1], [0, 0]], np.int64), "i")]),
    (helper.make_node("NonZero", ["x"], ["y"]), {"x": (X > 0).astype(np.float32)}, []),
])
def test_rules_of_frontend_types_match_onnxruntime(node, inputs, inits):
    # Resize, Einsum, GatherNd and NonZero had no rule: their outputs stayed unknown.
    ins = [helper.make_tensor_value_info(k, onnx.TensorProto.FLOAT, v.shape)
           for k, v in inputs.items()]
    out_t = onnx.TensorProto.INT64 if node.op_type == "NonZero" else onnx.TensorProto.FLOAT
    m = helper.make_model(
        helper.make_graph([node], "m", ins, [helper.make_tensor_value_info("y", out_t, None)],
                          initializer=inits),
        opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    g = air.onnx.load(m, warn_unknown=False)
    g.infer_shapes()
    so = ort.SessionOptions()
    so.log_severity_level = 4
    (want,) = ort.InferenceSession(m.SerializeToString(), so,
                                   providers=["CPUExecutionProvider"]).run(None, inputs)
    (net,) = [n for n in g.nodes if n.type == "NetOutput"]
    src = net.input_source(0)
    d = src.node.op_desc.output_desc(src.index)
    if node.op_type == "NonZero":
        # [rank, count]: the count depends on the values.
        assert d.shape == (want.shape[0], -1)
    else:
        assert d.shape == want.shape
    assert _onnx_dtype_of(d.dtype) == helper.np_dtype_to_tensor_dtype(want.dtype)
    got = next(iter(air.evaluate(g, list(inputs.values())).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_castlike_takes_its_type_from_the_op_making_the_target():
    # The targets have no declared type, but the ops making them decide it (Cast's `to`,
    # Shape's int64): CastLike becomes a Cast.
    nodes = [helper.make_node("Cast", ["x"], ["r"], to=onnx.TensorProto.FLOAT16),
             helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("CastLike", ["c", "r"], ["y"]),
             helper.make_node("CastLike", ["c", "s"], ["z"])]
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT16, [1]),
         helper.make_tensor_value_info("z", onnx.TensorProto.INT64, [1])],
        initializer=[numpy_helper.from_array(np.array([1.5], np.float32), "c")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    g, report = air.onnx.load(m, return_report=True, warn_unknown=False)
    assert not report.unknown_ops
    casts = sorted((n.name, n.attrs["dst_type"]) for n in g.nodes
                   if n.type == "Cast" and n.name.startswith("CastLike"))
    assert casts == [("CastLike_2", int(air.DataType.FLOAT16)),
                     ("CastLike_3", int(air.DataType.INT64))]
    y, z = air.evaluate(g, [np.ones(2, np.float32)]).values()
    assert y.dtype == np.float16 and z.dtype == np.int64 and z[0] == 1


def test_an_if_on_a_known_rank_infers_only_the_branch_it_takes():
    # The else branch (rank-3 sizes) cannot fit these shapes: ONNX AffineGrid's body does this.
    i64 = TensorProto.INT64
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["a"])], "then", [],
                             [helper.make_tensor_value_info("a", TensorProto.FLOAT, None)])
    shape = helper.make_tensor("five", i64, [2], [5, -1])
    other = helper.make_graph([helper.make_node("Reshape", ["x", "five"], ["b"])], "else", [],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)],
                              initializer=[shape])
    nodes = [helper.make_node("Size", ["s"], ["n"]),
             helper.make_node("Constant", [], ["four"],
                              value=helper.make_tensor("v", i64, [], [4])),
             helper.make_node("Equal", ["n", "four"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [2, 3]),
                                       helper.make_tensor_value_info("s", i64, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    graph = air.onnx.load(m)
    graph.infer_shapes()
    assert classify(graph, [(TensorProto.FLOAT, (2, 3))])[0] == "exact"
