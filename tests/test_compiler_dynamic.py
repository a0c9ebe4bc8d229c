"""The compiler on dynamic models: symbols survive the barriers (MatMul, Reshape through shape
arithmetic, Transpose, Concat, Gather, Slice, Conv), guards unify the symbols barrier outputs get,
and the kernels compute the right values at the hints."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ascendir as air
from ascendir import asc

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _same_draws() -> None:
    """Each test draws the same inputs from ``RNG`` whatever ran before it (random order,
    pytest-xdist)."""
    RNG.bit_generator.state = np.random.default_rng(7).bit_generator.state


class Builder:
    """A tiny ONNX graph builder (exporter-style shape arithmetic included)."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.values: dict[str, np.ndarray] = {}
        self.n = 0

    def op(self, ty: str, ins: list[str], name: str | None = None, **attrs) -> str:
        self.n += 1
        name = name or f"{ty.lower()}{self.n}"
        self.nodes.append(helper.make_node(ty, ins, [name], name=name, **attrs))
        return name

    def init(self, arr: np.ndarray, name: str | None = None) -> str:
        self.n += 1
        name = name or f"w{self.n}"
        self.inits.append(numpy_helper.from_array(arr, name))
        self.values[name] = arr
        return name

    def ints(self, v: list[int]) -> str:
        return self.init(np.array(v, np.int64))

    def dim(self, x: str, axis: int) -> str:
        g = self.op("Gather", [self.op("Shape", [x]), self.init(np.array(axis, np.int64))], axis=0)
        return self.op("Unsqueeze", [g, self.ints([0])])

    def model(self, outputs: list[str]) -> air.Graph:
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        g = helper.make_graph(self.nodes, "dyn", self.inputs, outs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return air.onnx.from_bytes(m.SerializeToString())


def layer(b: Builder, x: str, hidden: int) -> tuple[str, str, str]:
    """``x @ W1 + b1 → Relu → @ W2 + b2 → + x → LayerNorm``; returns (relu, ln, add1)."""
    w1 = b.init(RNG.standard_normal((hidden, 2 * hidden)).astype(np.float32) * 0.1)
    b1 = b.init(RNG.standard_normal(2 * hidden).astype(np.float32))
    w2 = b.init(RNG.standard_normal((2 * hidden, hidden)).astype(np.float32) * 0.1)
    b2 = b.init(RNG.standard_normal(hidden).astype(np.float32))
    add1 = b.op("Add", [b.op("MatMul", [x, w1]), b1], name="add1")
    relu = b.op("Relu", [add1], name="relu")
    h2 = b.op("Add", [b.op("MatMul", [relu, w2]), b2], name="add2")
    res = b.op("Add", [h2, x], name="residual")
    g = b.init(np.ones(hidden, np.float32))
    be = b.init(np.zeros(hidden, np.float32))
    ln = b.op("LayerNormalization", [res, g, be], name="ln", axis=-1, epsilon=1e-5)
    return relu, ln, add1


def dynamic_model():
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 32]))
    relu, ln, _ = layer(b, "x", 32)
    shape = b.op("Concat", [b.dim(ln, 0), b.dim(ln, 1), b.ints([4]), b.ints([8])], axis=0)
    heads = b.op("Transpose", [b.op("Reshape", [ln, shape])], perm=[0, 2, 1, 3])
    out = b.op("Neg", [b.op("Exp", [heads], name="exp")], name="neg")
    return b.model([out, relu])


def node_attrs(cm, k):
    return cm.graph.node(k.name).attrs


def kernel_with(cm, member):
    (k,) = [k for k in cm.kernels if member in k.members]
    return k


def test_symbols_survive_matmul_reshape_and_transpose():
    g = dynamic_model()
    cm = air.compile(g, input_shapes={"x": [2, 5, 32]})
    members = [set(k.members) for k in cm.kernels]
    # The bias Add and Relu fuse after the first MatMul; the second bias Add, the residual and
    # the LayerNorm fuse after the second; Exp follows the head-splitting Reshape + Transpose.
    assert {"add1", "relu"} in members
    assert any({"add2", "residual", "ln"} <= m for m in members)
    assert any("exp" in m for m in members)
    for k in cm.kernels:
        syms = {s.split(":")[0] for s in node_attrs(cm, k)["_ascendir_symbols"]}
        assert syms <= {"s0", "s1"}, (k.name, syms)
    exp = kernel_with(cm, "exp")
    assert node_attrs(cm, exp)["_ascendir_output_symbol_shape"] == ["[s0, 4, s1, 8]"]
    # MatMul, Reshape (through Shape → Gather → Unsqueeze → Concat) and Transpose have exact
    # rules: no symbol beyond the input's two, no guard.
    assert set(cm.report.data["symbols"]) == {"s0", "s1"}
    assert cm.report.data["symbols"]["s0"]["hint"] == 2
    assert cm.report.data["symbols"]["s1"]["hint"] == 5
    assert cm.report.data["guards"] == []


def test_fallback_symbols_are_unified_by_guards():
    # Conv over dynamic spatial dims: no exact rule, so the op's own rule runs at the hints and
    # each unknown output dim gets a fresh symbol; the Add of two such convs unifies them.
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"]))
    convs = []
    for _ in range(2):
        w = b.init(RNG.standard_normal((4, 3, 3, 3)).astype(np.float32))
        convs.append(b.op("Conv", ["x", w], pads=[1, 1, 1, 1]))
    out = b.op("Exp", [b.op("Add", convs, name="add")], name="exp")
    cm = air.compile(b.model([out]), input_shapes={"x": [2, 3, 10, 12]})
    syms = cm.report.data["symbols"]
    fresh = sorted((s for s in syms if syms[s]["source"].startswith("node '")),
                   key=lambda s: int(s[1:]))
    assert [syms[s]["hint"] for s in fresh] == [10, 12, 10, 12]
    a, b_, c, d = fresh
    guards = cm.report.data["guards"]
    assert f"Eq({a}, {c})" in guards and f"Eq({b_}, {d})" in guards
    k = kernel_with(cm, "exp")
    assert node_attrs(cm, k)["_ascendir_output_symbol_shape"] == [f"[s0, 4, {a}, {b_}]"]


def hint_sizes(cm):
    return {s: v["hint"] for s, v in cm.report.data["symbols"].items()}


def run_kernel(cm, k, feeds):
    data = sorted((n for n in k.hint.nodes if n.type == "Data"),
                  key=lambda n: n.attr.ir_attr.index)
    inputs = {d.name: np.ascontiguousarray(f).reshape(-1) for d, f in zip(data, feeds,
                                                                          strict=True)}
    out = asc.evaluate(k.hint, inputs, hint_sizes(cm))
    outs = sorted((n for n in k.hint.nodes if n.type == "Output"),
                  key=lambda n: n.attr.ir_attr.index)
    return [np.asarray(out[o.name]) for o in outs]


def test_dynamic_kernel_values_at_the_hints():
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 16]))
    relu, _, _ = layer(b, "x", 16)
    g = b.model([relu])
    cm = air.compile(g, input_shapes={"x": [3, 7, 16]})
    k = kernel_with(cm, "relu")
    node = cm.graph.node(k.name)
    # Inputs of the kernel, in the node's input order: the MatMul output and the bias Const.
    mm = RNG.standard_normal((3, 7, 32)).astype(np.float32)
    feeds = []
    bias = None
    for src in node.in_data_nodes:
        if src.type == "Const":
            bias = src.attrs["value"].numpy()
            feeds.append(bias)
        else:
            assert src.type == "MatMulV2" or src.type == "BatchMatMulV2", src.type
            feeds.append(mm)
    assert bias is not None and bias.shape == (32,)
    (got,) = run_kernel(cm, k, feeds)
    np.testing.assert_allclose(got.reshape(3, 7, 32), np.maximum(mm + bias, 0), rtol=1e-6)


def test_slice_to_a_dynamic_length_records_a_guard():
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("ids", TensorProto.FLOAT, ["batch", "seq"]))
    buf = b.init(np.arange(64, dtype=np.float32)[None, :])
    seq = b.dim("ids", 1)
    pos = b.op("Slice", [buf, b.ints([0]), seq, b.ints([1]), b.ints([1])], name="pos")
    out = b.op("Exp", [b.op("Add", ["ids", pos], name="add")], name="exp")
    cm = air.compile(b.model([out]), input_shapes={"ids": [2, 9]})
    assert "Lt(s1, 64)" in cm.report.data["guards"]
    k = kernel_with(cm, "exp")
    assert "add" in k.members
    assert node_attrs(cm, k)["_ascendir_output_symbol_shape"] == ["[s0, s1]"]


def test_reshape_with_zero_and_minus_one():
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 4, 8]))
    r = b.op("Reshape", [b.op("Abs", ["x"], name="abs"), b.ints([0, -1])], name="flat")
    out = b.op("Exp", [b.op("Neg", [r], name="neg")], name="exp")
    cm = air.compile(b.model([out]), input_shapes={"x": [2, 3, 4, 8]})
    k = kernel_with(cm, "exp")
    assert node_attrs(cm, k)["_ascendir_output_symbol_shape"] == ["[s0, (32 * s1)]"]


def test_conv_batch_symbol_passes_through():
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 16, 16]))
    w = b.init(RNG.standard_normal((8, 3, 3, 3)).astype(np.float32))
    c = b.op("Conv", ["x", w], name="conv", pads=[1, 1, 1, 1], strides=[2, 2])
    sc = b.init(np.ones(8, np.float32))
    bi = b.init(np.zeros(8, np.float32))
    bn = b.op("BatchNormalization", [c, sc, bi, bi, sc], name="bn")
    out = b.op("Relu", [bn], name="relu")
    cm = air.compile(b.model([out]), input_shapes={"x": [4, 3, 16, 16]})
    k = kernel_with(cm, "relu")
    assert "bn" in k.members
    assert node_attrs(cm, k)["_ascendir_output_symbol_shape"] == ["[s0, 8, 8, 8]"]
    assert set(cm.report.data["symbols"]) == {"s0"}


def test_decomposed_layer_norm_is_one_all_load_kernel():
    # Exporters' LayerNorm: two ReduceMeans over a constant 32-wide row (all-load, norm-like):
    # GE lets such reductions fuse with each other and with any element-wise epilogue.
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 32]))
    mu = b.op("ReduceMean", ["x"], name="mu", axes=[-1], keepdims=1)
    d = b.op("Sub", ["x", mu], name="d")
    two = b.init(np.array(2.0, np.float32))
    var = b.op("ReduceMean", [b.op("Pow", [d, two], name="pow")], name="var", axes=[-1],
               keepdims=1)
    eps = b.init(np.array(1e-5, np.float32))
    std = b.op("Sqrt", [b.op("Add", [var, eps], name="addeps")], name="std")
    gamma = RNG.standard_normal(32).astype(np.float32)
    beta = RNG.standard_normal(32).astype(np.float32)
    y = b.op("Div", [d, std], name="y")
    out = b.op("Add", [b.op("Mul", [y, b.init(gamma)], name="mul"), b.init(beta)], name="out")
    cm = air.compile(b.model([out]), input_shapes={"x": [3, 5, 32]})
    (k,) = cm.kernels
    assert k.fuse_type == "reduce"
    assert set(k.members) == {"mu", "d", "pow", "var", "addeps", "std", "y", "mul", "out"}
    xv = RNG.standard_normal((3, 5, 32)).astype(np.float32)
    feeds = []
    for src in cm.graph.node(k.name).in_data_nodes:
        feeds.append(xv if src.type == "Data" else src.attrs["value"].numpy())
    (got,) = run_kernel(cm, k, feeds)
    m = xv.mean(-1, keepdims=True)
    v = ((xv - m) ** 2).mean(-1, keepdims=True)
    want = (xv - m) / np.sqrt(v + 1e-5) * gamma + beta
    np.testing.assert_allclose(got.reshape(3, 5, 32), want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the real-architecture models

PLUMBING = {"Data", "RefData", "Const", "Constant", "NetOutput", "Variable"}


def small_models():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
    import models

    return {"resnet50": (models.resnet50(width=4, image=32), {"N": 2}),
            "bert": (models.bert(layers=2, hidden=16, heads=2), {"batch": 2, "seq": 8}),
            "decoder": (models.decoder(layers=2, hidden=8, heads=2), {"batch": 2, "seq": 8})}


def static(model: onnx.ModelProto, dims: dict[str, int]) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param:
                d.dim_value = dims[d.dim_param]
    return m


def traffic(g: air.Graph) -> int:
    """Bytes read and written by the graph's compute nodes, from their (static) descs."""
    def nbytes(desc) -> int:
        n = int(np.prod(list(desc.shape), dtype=np.int64)) if len(desc.shape) else 1
        return n * desc.dtype.itemsize

    total = 0
    for n in g.nodes:
        if n.type in PLUMBING:
            continue
        d = n.op_desc
        total += sum(nbytes(d.output_desc(i)) for i in range(len(d.output_names)))
        for a in n.in_data_anchors:
            if a.peer is not None:
                total += nbytes(a.peer.node.op_desc.output_desc(a.peer.index))
    return total


@pytest.mark.parametrize("name", ["resnet50", "bert", "decoder"])
def test_models_compile_schedule_tile_and_allocate(name):
    model, dims = small_models()[name]
    src = air.onnx.load(model)
    cm = air.compile(src)
    assert cm.kernels, name
    sizes = hint_sizes(cm)
    for k in cm.kernels:
        for target in (asc.Target.ascend910b(), asc.Target.ascend950()):
            t = asc.solve_tiling(k.impls, target=target, sizes=sizes)
            assert t.block_dim >= 1
        for impl in k.impls:
            assert isinstance(asc.allocate(impl), dict)  # raises when the UB does not fit
    rep = cm.report.data
    assert rep["nodes_after"] == len(cm.graph.nodes)
    assert rep["nodes_before"] == len(src.nodes)
    assert len(rep["kernels"]) == sum(1 for n in cm.graph.nodes if n.type == "AscBackend")


def test_report_byte_counts_recount():
    # ResNet at a static batch: every desc is known after inference, so the bytes can be
    # recounted from the descs alone.
    model, dims = small_models()["resnet50"]
    src = air.onnx.load(static(model, dims))
    ref = src.copy()
    ref.infer_shapes()
    assert all(d >= 0 for n in ref.nodes for i in range(len(n.op_desc.output_names))
               for d in n.op_desc.output_desc(i).shape)
    cm = air.compile(src)
    rep = cm.report.data
    assert rep["bytes_before"] == traffic(ref)
    assert rep["bytes_after"] == traffic(cm.graph)
    assert rep["bytes_saved"] == rep["bytes_before"] - rep["bytes_after"] > 0


def test_common_subexpressions_merge_before_fusion():
    g = air.Graph("cse")
    x = g.add_input("x", air.TensorDesc([4, 16], air.float32))
    a1 = g.add_op("Abs", [x], name="a1")
    a2 = g.add_op("Abs", [x], name="a2")  # the same value as a1
    e1 = g.add_op("Exp", [a1], name="e1")
    e2 = g.add_op("Exp", [a2], name="e2")  # then the same as e1
    l1 = g.add_op("LeakyRelu", [x], name="l1", attrs={"negative_slope": 0.1})
    l2 = g.add_op("LeakyRelu", [x], name="l2", attrs={"negative_slope": 0.2})  # different
    g.set_outputs([g.add_op("Add", [e1, e2], name="s"), g.add_op("Mul", [l1, l2], name="m")])
    cm = air.compile(g)
    assert cm.report.data["simplify"]["cse_merged"] == 2
    members = {m for k in cm.kernels for m in k.members}
    assert {"l1", "l2"} <= members
    assert len({"a1", "a2"} & members) == 1 and len({"e1", "e2"} & members) == 1
    xv = RNG.standard_normal((4, 16)).astype(np.float32)
    want = air.evaluate(g, {"x": xv})
    got = air.evaluate(cm.graph, {"x": xv})
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)


def test_cascaded_reshapes_collapse():
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 64]))
    a = b.op("Abs", ["x"], name="abs")
    r1 = b.op("Reshape", [a, b.ints([0, 4, 16])], name="r1")
    r2 = b.op("Reshape", [r1, b.ints([0, 8, 8])], name="r2")
    out = b.op("Exp", [b.op("Neg", [r2], name="neg")], name="exp")
    g = b.model([out])
    cm = air.compile(g, input_shapes={"x": [3, 64]})
    assert cm.report.data["simplify"]["reshapes_rewired"] == 1
    assert "r1" not in {n.name for n in cm.graph.nodes}
    cm.graph.validate()
    xv = RNG.standard_normal((5, 64)).astype(np.float32)
    want, got = air.evaluate(g, {"x": xv}), air.evaluate(cm.graph, {"x": xv})
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)


def test_shape_arithmetic_folds_to_constants():
    # Static input: the exporter's Shape → Gather → Unsqueeze → Concat chain is a constant.
    b = Builder()
    b.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 32]))
    a = b.op("Abs", ["x"], name="abs")
    shape = b.op("Concat", [b.dim(a, 0), b.dim(a, 1), b.ints([4]), b.ints([8])], axis=0,
                 name="shape")
    r = b.op("Reshape", [a, shape], name="r")
    out = b.op("Exp", [b.op("Transpose", [r], perm=[0, 2, 1, 3], name="t")], name="exp")
    g = b.model([b.op("Neg", [out], name="neg")])
    cm = air.compile(g)
    assert cm.report.data["simplify"]["constants_folded"] >= 1
    types = [n.type for n in cm.graph.nodes]
    assert "Shape" not in types and "ConcatV2D" not in types
    cm.graph.validate()
    xv = RNG.standard_normal((2, 5, 32)).astype(np.float32)
    want, got = air.evaluate(g, {"x": xv}), air.evaluate(cm.graph, {"x": xv})
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
    # Dynamic input: the dims stay symbolic, nothing folds but the constant parts.
    cm = air.compile(dynamic_model(), input_shapes={"x": [2, 5, 32]})
    assert "Shape" in [n.type for n in cm.graph.nodes]


def _range_model(dims: list) -> onnx.ModelProto:
    """``Range(0, Cast<float>(Gather(Shape(x), 2)), 1)`` twice, concatenated, then Add / Mul:
    shape arithmetic that goes through a float."""
    h = helper
    const = lambda name, dt, v: h.make_node(  # noqa: E731
        "Constant", [], [name], value=h.make_tensor(name, dt, [], [v]))
    nodes = [
        h.make_node("Shape", ["x"], ["shp"]), const("i2", TensorProto.INT64, 2),
        h.make_node("Gather", ["shp", "i2"], ["hdim"], axis=0),
        h.make_node("Cast", ["hdim"], ["hf"], to=TensorProto.FLOAT),
        const("z", TensorProto.FLOAT, 0.0), const("o", TensorProto.FLOAT, 1.0),
        h.make_node("Range", ["z", "hf", "o"], ["r1"]),
        h.make_node("Range", ["z", "hf", "o"], ["r2"]),
        h.make_node("Concat", ["r1", "r2"], ["c"], axis=0),
        h.make_node("Add", ["c", "c"], ["a"]), h.make_node("Mul", ["a", "c"], ["y"]),
    ]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("dims", [[1, 3, 40, 40], ["b", 3, "h", 40]])
def test_values_through_float_casts_keep_kernel_symbols_on_model_inputs(dims):
    g = air.onnx.load(_range_model(dims).SerializeToString())
    cm = air.compile(g)
    (k,) = cm.kernels
    assert {"ConcatV2D", "Add", "Mul"} <= set(k.member_types), k.member_types
    syms = [s.split(":")[0] for s in node_attrs(cm, k)["_ascendir_symbols"]]
    sources = cm.report.data["symbols"]
    # A static model: no symbol reaches the kernel. A dynamic one: only the input's dims.
    assert syms == ([] if dims[0] == 1 else ["s1"])
    assert all(sources[s]["source"].startswith("input ") for s in syms), sources
    heights = [40] if dims[0] == 1 else [40, 24]
    for hgt in heights:
        x = np.zeros((1, 3, hgt, 40), np.float32)
        want, got = air.evaluate(g, {"x": x}), air.evaluate(cm.graph, {"x": x})
        (name,) = want
        np.testing.assert_array_equal(got[name], want[name])
        assert got[name].shape == (2 * hgt,)
