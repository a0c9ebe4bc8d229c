"""The compiler (``air.compile``): symbolize, lower, fuse, realize, package (docs/COMPILER.md)
and whole-kernel numerics through ``asc.evaluate``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import ascendir as air
from ascendir import asc

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "transformer_block.onnx")


def graph(shape, n_inputs=1, dtype=air.float32, name="g"):
    g = air.Graph(name)
    xs = [g.add_input(f"x{i}", air.TensorDesc(list(shape), dtype)) for i in range(n_inputs)]
    return g, xs


def kernel_of(cm, member):
    for k in cm.kernels:
        if member in k.members:
            return k
    return None


def reference(op, *xs):
    f = {"Abs": np.abs, "Exp": np.exp, "Relu": lambda a: np.maximum(a, 0), "Neg": np.negative,
         "Add": np.add, "Mul": np.multiply, "Sub": np.subtract, "Sqrt": np.sqrt,
         "Tanh": np.tanh, "Sigmoid": lambda a: 1 / (1 + np.exp(-a)), "RealDiv": np.divide,
         "Maximum": np.maximum, "Minimum": np.minimum}[op]
    return f(*xs)


# ---------------------------------------------------------------- C7, C12, caller unchanged


def test_c7_two_output_pointwise_cluster_and_input_unchanged():
    g, (x,) = graph([8, 64])
    a = g.add_op("Abs", [x], name="abs0")
    e = g.add_op("Exp", [a], name="exp")
    r = g.add_op("Relu", [a], name="relu")
    a2 = g.add_op("Abs", [r], name="abs1")
    g.set_outputs([e, a2])
    before = g.to_bytes()
    cm = air.compile(g)
    assert g.to_bytes() == before
    assert len(cm.kernels) == 1
    k = cm.kernels[0]
    assert sorted(k.members) == ["abs0", "abs1", "exp", "relu"]
    assert k.fuse_type == "pointwise"
    assert k.name.startswith("autofuse_pointwise_0_")
    node = cm.graph.node(k.name)
    assert node.type == "AscBackend"
    assert len(node.out_data_anchors) == 2
    assert [n.type for n in cm.graph.nodes].count("AscBackend") == 1
    cm.graph.validate()
    attrs = node.op_desc.attrs
    assert list(attrs["_datadump_original_op_types"]) == ["Abs", "Relu", "Abs", "Exp"]
    assert str(attrs["_ge_attr_lowering_func"]) == "kAutoFuseLoweringFunc"
    hint = asc.AscGraph.from_bytes(bytes(attrs[asc.ASCGRAPH_ATTR_KEY]))
    assert asc.utils.debug_str(hint) == asc.utils.debug_str(k.hint)
    compute = [n for n in k.hint.nodes if n.type in ("Abs", "Exp", "Relu")]
    assert len(compute) == 4


def test_c12_single_relu_between_convs_is_lifted_two_pointwise_fuse():
    g, (x,) = graph([1, 4, 8, 8])
    w = g.add_const("w", np.zeros((4, 4, 1, 1), np.float32))
    c1 = g.add_op("Conv2D", [x, w], name="c1", attrs={"strides": [1, 1, 1, 1],
                                                     "pads": [0, 0, 0, 0], "data_format": "NCHW"})
    r = g.add_op("Relu", [c1], name="relu")
    c2 = g.add_op("Conv2D", [r, w], name="c2", attrs={"strides": [1, 1, 1, 1],
                                                     "pads": [0, 0, 0, 0], "data_format": "NCHW"})
    g.set_outputs([c2])
    cm = air.compile(g)
    assert cm.kernels == []
    assert cm.graph.node("relu").type == "Relu"
    lifted = cm.report.data["lifted"]
    assert any(item["members"] == ["relu"] for item in lifted)
    barriers = {b["name"]: b for b in cm.report.data["barriers"]}
    assert barriers["c1"]["category"] == "Temporary Skip Lowering"
    assert barriers["c1"]["reason"] == "no lowering registered"

    g2, (x,) = graph([4, 8])
    g2.set_outputs([g2.add_op("Exp", [g2.add_op("Abs", [x])])])
    assert len(air.compile(g2).kernels) == 1


# ---------------------------------------------------------------- C1, C3: symbols and guards


def test_c1_symbols_hints_and_guard():
    g = air.Graph("sym")
    a = g.add_input("a", air.TensorDesc([-1, 3], air.float32))
    b = g.add_input("b", air.TensorDesc([-1, -1], air.float32))
    g.set_outputs([g.add_op("Exp", [g.add_op("Abs", [a])]),
                   g.add_op("Exp", [g.add_op("Abs", [b])])])
    cm = air.compile(g, input_shapes={"a": [4, 3], "b": [5, 6]})
    syms = cm.report.data["symbols"]
    assert syms["s0"] == {"hint": 4, "source": "input 0 dim 0"}
    assert syms["s1"] == {"hint": 5, "source": "input 1 dim 0"}
    assert syms["s2"] == {"hint": 6, "source": "input 1 dim 1"}

    g = air.Graph("guard")
    x = g.add_input("x", air.TensorDesc([-1, -1], air.float32))
    y = g.add_input("y", air.TensorDesc([-1, -1], air.float32))
    s = g.add_op("Add", [x, y], name="add")
    g.set_outputs([g.add_op("Exp", [s])])
    cm = air.compile(g, input_shapes={"x": [2, 8], "y": [2, 8]})
    guards = cm.report.data["guards"]
    assert "Eq(s0, s2)" in guards and "Eq(s1, s3)" in guards
    assert len(cm.kernels) == 1


def test_c3_broadcast_loop_space_and_explicit_broadcasts():
    g = air.Graph("bc")
    a = g.add_input("a", air.TensorDesc([1, 1, 6], air.float32))
    b = g.add_input("b", air.TensorDesc([1, 5, 6], air.float32))
    c = g.add_input("c", air.TensorDesc([4, 5, 1], air.float32))
    s1 = g.add_op("Add", [a, b], name="add1")
    s2 = g.add_op("Add", [s1, c], name="add2")
    g.set_outputs([s2])
    cm = air.compile(g)
    (k,) = cm.kernels
    assert [ax.size.expression for ax in k.hint.axes] == ["4", "5", "6"]
    loads = {n.name for n in k.hint.nodes if n.type == "Load"}
    for n in k.hint.nodes:
        src_out = n.input("x") if n.type == "Broadcast" else None
        if src_out is not None and src_out.node.name in loads:
            # one axis per Broadcast
            src, dst = src_out.node.y.repeats, n.y.repeats
            assert sum(a.expression != b.expression for a, b in zip(src, dst, strict=True)) == 1
    feeds = {"a": np.random.rand(1, 1, 6).astype(np.float32),
             "b": np.random.rand(1, 5, 6).astype(np.float32),
             "c": np.random.rand(4, 5, 1).astype(np.float32)}
    check_kernel(k, [feeds["a"], feeds["b"], feeds["c"]],
                 [feeds["a"] + feeds["b"] + feeds["c"]])


# ---------------------------------------------------------------- C2, C4: realized HintGraphs


def test_c2_add_abs_exp_one_load_and_views():
    g = air.Graph("c2")
    x = g.add_input("x", air.TensorDesc([-1, -1, -1], air.float32))
    s = g.add_op("Add", [x, x])
    g.set_outputs([g.add_op("Exp", [g.add_op("Abs", [s])])])
    cm = air.compile(g, input_shapes={"x": [2, 3, 8]})
    (k,) = cm.kernels
    types = [n.type for n in k.hint.nodes]
    assert types == ["Data", "Load", "Add", "Abs", "Exp", "Store", "Output"]
    load = [n for n in k.hint.nodes if n.type == "Load"][0]
    assert [r.expression for r in load.y.repeats] == ["s0", "s1", "s2"]
    assert [r.expression for r in load.y.strides] == ["(s1 * s2)", "s2", "1"]


def test_c4_reduce_keep_dims_and_not():
    g, (x,) = graph([4, 6, 8])
    a = g.add_op("Abs", [x], name="abs")
    r = g.add_op("ReduceSumD", [a], name="sum", attrs={"axes": [1], "keep_dims": True})
    g.set_outputs([r])
    cm = air.compile(g)
    (k,) = cm.kernels
    assert k.fuse_type == "reduce"
    s = [n for n in k.hint.nodes if n.type == "Sum"][0]
    assert [e.expression for e in s.y.repeats] == ["4", "1", "8"]
    assert [e.expression for e in s.y.strides] == ["8", "0", "1"]
    xv = np.random.randn(4, 6, 8).astype(np.float32)
    check_kernel(k, [xv], [np.abs(xv).sum(axis=1, keepdims=True)])

    g, (x,) = graph([4, 6, 8])
    a = g.add_op("Abs", [x], name="abs")
    r = g.add_op("ReduceSumD", [a], name="sum", attrs={"axes": [1], "keep_dims": False})
    g.set_outputs([r])
    cm = air.compile(g)
    (k,) = cm.kernels
    assert tuple(k.node.op_desc.output_desc(0).shape) == (4, 8)


# ---------------------------------------------------------------- C6: barrier reasons


def test_c6_barrier_categories():
    g, (x,) = graph([4, 8], dtype=air.int64)
    a = g.add_op("Abs", [x], name="abs64")
    g.set_outputs([g.add_op("Neg", [a], name="neg64")])
    cm = air.compile(g)
    bar = {b["name"]: b for b in cm.report.data["barriers"]}
    assert bar["abs64"]["category"] == "Backend Not Support"

    g, (x,) = graph([4, 8])
    a = g.add_op("Abs", [x], name="abs", attrs={"_disable_autofuse_scope": True})
    g.set_outputs([g.add_op("Exp", [a], name="exp")])
    cm = air.compile(g)
    bar = {b["name"]: b for b in cm.report.data["barriers"]}
    assert bar["abs"]["category"] == "Node Info Incorrect"


# ---------------------------------------------------------------- C8, C9, C10, C11: limits


def test_c8_size_and_input_limits():
    g, (x,) = graph([16, 16])
    cur = x
    for i in range(70):
        cur = g.add_op("Abs" if i % 2 else "Neg", [cur], name=f"n{i}")
    g.set_outputs([cur])
    cm = air.compile(g)
    assert len(cm.kernels) >= 2
    for k in cm.kernels:
        assert k.hint.node_count() <= 64 if hasattr(k.hint, "node_count") else True
        assert len(list(k.hint.nodes)) <= 64
    assert sum(len(k.members) for k in cm.kernels) == 70
    codes = {r["code"] for r in cm.report.data["rejected_pairs"]}
    assert "NF1010" in codes

    g, xs = graph([8, 8], n_inputs=9)
    cur = xs[0]
    for i, x in enumerate(xs[1:]):
        cur = g.add_op("Add", [cur, x], name=f"add{i}")
    g.set_outputs([cur])
    cm = air.compile(g)
    assert all(k.node.op_desc.num_inputs <= 8 for k in cm.kernels)
    assert len(cm.kernels[0].members) == 7
    assert "NF1007" in {r["code"] for r in cm.report.data["rejected_pairs"]}


def test_c9_reduce_epilogue_limit():
    # A reduction over a symbolic extent is not all-load: GE's epilogue limit applies. (An
    # all-load row, a constant extent, takes any epilogue: see the decomposed layer norm.)
    g, (x,) = graph([8, -1])
    r = g.add_op("Relu", [x], name="relu")
    s = g.add_op("ReduceSumD", [r], name="sum", attrs={"axes": [1], "keep_dims": True})
    cur = s
    for i, t in enumerate(["Abs", "Exp", "Neg", "Abs"]):
        cur = g.add_op(t, [cur], name=f"e{i}")
    g.set_outputs([cur])
    cm = air.compile(g)
    k = kernel_of(cm, "sum")
    assert k is not None
    assert k.members == ["relu", "sum", "e0", "e1", "e2"]
    assert "NF1031" in {r["code"] for r in cm.report.data["rejected_pairs"]}


def test_c10_no_cycle_through_a_barrier():
    g, (x,) = graph([1, 4, 8, 8])
    w = g.add_const("w", np.zeros((4, 4, 1, 1), np.float32))
    a = g.add_op("Abs", [x], name="A")
    c = g.add_op("Exp", [a], name="C")
    d = g.add_op("Conv2D", [c, w], name="D", attrs={"strides": [1, 1, 1, 1],
                                                   "pads": [0, 0, 0, 0], "data_format": "NCHW"})
    b = g.add_op("Add", [a, d], name="B")
    g.set_outputs([b])
    cm = air.compile(g)
    ka, kb = kernel_of(cm, "A"), kernel_of(cm, "B")
    assert ka is None or kb is None or ka is not kb
    assert "NF1002" in {r["code"] for r in cm.report.data["rejected_pairs"]}


def test_c11_horizontal_fusion_needs_a_shared_tensor():
    g, (x, y) = graph([8, 32], n_inputs=2)
    a = g.add_op("Exp", [g.add_op("Abs", [x], name="a1")], name="a2")
    b = g.add_op("Exp", [g.add_op("Abs", [y], name="b1")], name="b2")
    g.set_outputs([a, b])
    cm = air.compile(g)
    assert len(cm.kernels) == 2
    text = air.compiler.explain(g, "a1", "b1")
    assert "NF1001" in text

    g, (x,) = graph([8, 32])
    a = g.add_op("Exp", [g.add_op("Abs", [x], name="a1")], name="a2")
    b = g.add_op("Relu", [g.add_op("Neg", [x], name="b1")], name="b2")
    g.set_outputs([a, b])
    cm = air.compile(g)
    assert len(cm.kernels) == 1
    assert "fused into" in air.compiler.explain(g, "a1", "b1")


def test_report_keeps_the_top_refused_pairs_and_explain_sees_them_all():
    # A chain with skip edges: many horizontal pairs refused (cycles, limits).
    g, (x,) = graph([1, 64])
    nodes = [x, g.add_op("Abs", [x], name="n1")]
    for i in range(2, 160):
        skip = nodes[i - 2 - (i * 7) % min(i - 1, 9)]
        nodes.append(g.add_op("Add", [nodes[-1], skip], name=f"n{i}"))
    g.set_outputs([nodes[-1]])

    def refused(n):
        opts = air.CompileOptions(report_rejections=n)
        return air.compile(g, options=opts).report.data["rejected_pairs"]

    full, top = refused(None), refused(5)
    assert len(full) > 5 and top == full[:5]
    assert refused(0) == []
    assert air.compile(g).report.data["rejected_pairs"] == full[:1000]
    # Most shared bytes first, then in graph order of the pair's first members.
    at = {f"n{i}": i for i in range(160)}
    order = [(-r["bytes"], at[r["a"]], at[r["b"]]) for r in full]
    assert order == sorted(order) and len(set(order)) == len(order)
    # explain sees every refusal whatever the option says (the last one is not in the top 1).
    last = full[-1]
    text = air.compiler.explain(g, last["a"], last["b"],
                                options=air.CompileOptions(report_rejections=1))
    codes = {r["code"] for r in full}
    assert any(f"did not fuse: [{c}]" in text for c in codes), text


# ---------------------------------------------------------------- C13: determinism


def test_c13_same_partition_and_bytes_every_run():
    cm1 = air.compile(EXAMPLE)
    cm2 = air.compile(EXAMPLE)
    assert cm1.to_bytes() == cm2.to_bytes()
    assert [k.name for k in cm1.kernels] == [k.name for k in cm2.kernels]
    assert [k.cache_key for k in cm1.kernels] == [k.cache_key for k in cm2.kernels]


# ---------------------------------------------------------------- C15 + report recount


@pytest.mark.parametrize("attention", [True, False])
def test_c15_example_kernels_schedule_tile_and_allocate_on_every_target(attention):
    cm = air.compile(EXAMPLE, options=air.CompileOptions(fuse_attention=attention))
    assert len(cm.kernels) >= (3 if attention else 4)
    types = {t for k in cm.kernels for t in k.member_types}
    # With the attention pass the softmax is inside GE's FlashAttentionScore, not a kernel.
    assert {"LayerNorm", "Erf"} <= types
    assert ("SoftmaxV2" in types) != attention
    assert sum(n.type == "FlashAttentionScore" for n in cm.graph.nodes) == int(attention)
    for k in cm.kernels:
        for target in (asc.Target.ascend910b(), asc.Target.ascend950()):
            sizes = {}
            t = asc.solve_tiling(k.impls, target=target, sizes=sizes)
            assert t.block_dim >= 1
        assert all(len(i.nodes) > 0 for i in k.impls)
    # The report's counts are right.
    rep = cm.report.data
    assert rep["nodes_after"] == len(cm.graph.nodes)
    assert rep["nodes_before"] == len(air.onnx.load(EXAMPLE).nodes)
    assert len(rep["kernels"]) == len(cm.kernels) == sum(
        1 for n in cm.graph.nodes if n.type == "AscBackend")
    for kj, k in zip(rep["kernels"], cm.kernels, strict=True):
        assert kj["members"] == k.members
        assert kj["inputs"] == k.node.op_desc.num_inputs


def test_example_kernels_match_numpy_of_their_members():
    src = air.onnx.load(EXAMPLE)
    src.infer_shapes()
    cm = air.compile(EXAMPLE)
    k = next(k for k in cm.kernels if k.member_types == ["Add", "RealDiv", "Erf", "Add", "Mul",
                                                          "Mul"] or "Erf" in k.member_types)
    node = k.node
    rng = np.random.default_rng(0)
    feeds = []
    for a in node.in_data_anchors:
        d = a.peer.node.op_desc.output_desc(a.peer.index)
        prod = a.peer.node
        if prod.type == "Const":
            feeds.append(np.asarray(prod.op_desc.attrs["value"].numpy()).astype(np.float32))
        else:
            feeds.append(rng.standard_normal(tuple(d.shape)).astype(np.float32))
    out = evaluate_kernel(k, feeds)
    assert all(np.isfinite(o).all() for o in out)


# ---------------------------------------------------------------- errors, CLI


def test_corrupt_file_is_a_load_error(tmp_path):
    p = tmp_path / "bad.pb"
    p.write_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage")
    with pytest.raises(air.CompileError) as e:
        air.compile(str(p))
    assert e.value.stage == "load"
    assert isinstance(e.value, air.AscendIRError)


def test_compile_errors_carry_their_kind():
    """A failure says what failed (``kind``, with its node and stage); ``constraint`` and
    ``excess`` are a tiling failure's only."""
    with pytest.raises(air.CompileError) as e:
        air.compile(EXAMPLE, target="nowhere")
    assert (e.value.stage, e.value.kind) == ("load", "options")
    assert e.value.constraint is None and e.value.excess is None
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "m",
                          [a, b], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(air.CompileError) as e:
        air.compile(air.onnx.load(m, warn_unknown=False))
    assert (e.value.stage, e.value.kind, e.value.node) == ("infer", "infer", "add")
    assert "cannot be broadcast" in e.value.reason
    assert e.value.constraint is None and e.value.excess is None


def test_a_compile_error_made_in_python_has_every_field():
    """The Python-side constructor fills the fields the binding sets."""
    e = air.CompileError("bad emit", stage="package", node=None, reason="bad emit")
    assert (e.kind, e.constraint, e.excess) == ("other", None, None)
    t = air.CompileError("x", stage="tile", kind="tiling", constraint="ub", excess=64)
    assert (t.kind, t.constraint, t.excess) == ("tiling", "ub", 64)


def test_cli_compile_writes_model_and_report(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "ascendir.cli", "compile", EXAMPLE, "-o", str(out),
                        "--emit", "om,report,dot", "--dump-stages"], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "transformer_block" in r.stdout and "kernels" in r.stdout
    rep = json.loads((out / "report.json").read_text())
    assert rep["kernels"]
    assert (out / "transformer_block.om").exists() and (out / "fusion.dot").exists()
    assert (out / "stages" / "05_lower.json").exists()
    back = air.load(str(out / "transformer_block.om"))
    assert sum(1 for n in back.nodes if n.type == "AscBackend") == len(rep["kernels"])
    loaded = air.compiler.load(str(out / "transformer_block.om"))
    fresh = air.compile(EXAMPLE)
    for a, b in zip(loaded.kernels, fresh.kernels, strict=True):
        assert [asc.utils.debug_str(i) for i in a.impls] == [
            asc.utils.debug_str(i) for i in b.impls]
    bad = subprocess.run([sys.executable, "-m", "ascendir.cli", "compile", str(tmp_path / "no"),
                          "-o", str(out)], capture_output=True, text=True, check=False)
    assert bad.returncode == 1


# ---------------------------------------------------------------- numerics through asc.evaluate


def evaluate_kernel(k, feeds):
    data = sorted((n for n in k.hint.nodes if n.type == "Data"),
                  key=lambda n: n.attr.ir_attr.index)
    inputs = {d.name: f.reshape(-1) for d, f in zip(data, feeds, strict=True)}
    out = asc.evaluate(k.hint, inputs, {})
    outs = sorted((n for n in k.hint.nodes if n.type == "Output"),
                  key=lambda n: n.attr.ir_attr.index)
    return [np.asarray(out[o.name]) for o in outs]


def check_kernel(k, feeds, expected):
    got = evaluate_kernel(k, feeds)
    for g_, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g_.reshape(-1), np.asarray(e).reshape(-1), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("chain", [["Abs", "Exp"], ["Neg", "Relu", "Sqrt"],
                                   ["Tanh", "Sigmoid", "Abs"]])
def test_pointwise_kernels_equal_numpy(chain):
    g, (x,) = graph([6, 40])
    cur = x
    for i, t in enumerate(chain):
        cur = g.add_op(t, [cur], name=f"n{i}")
    g.set_outputs([cur])
    (k,) = air.compile(g).kernels
    xv = np.abs(np.random.default_rng(1).standard_normal((6, 40))).astype(np.float32) + 0.1
    ref = xv
    for t in chain:
        ref = reference(t, ref)
    check_kernel(k, [xv], [ref])


def test_softmax_and_layernorm_kernels_equal_numpy():
    g, (x,) = graph([4, 32])
    s = g.add_op("SoftmaxV2", [x], name="sm", attrs={"axes": [-1]})
    g.set_outputs([g.add_op("Mul", [s, s], name="sq")])
    (k,) = air.compile(g).kernels
    xv = np.random.default_rng(2).standard_normal((4, 32)).astype(np.float32)
    e = np.exp(xv - xv.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    check_kernel(k, [xv], [sm * sm])


def test_repeated_layers_get_the_impl_graphs_of_their_own_hint_graphs():
    # Layers that differ only in their nodes' names are scheduled once and the others take
    # those ImplGraphs with their own names: each kernel's ImplGraphs must be exactly what
    # scheduling its own HintGraph gives (a broadcast with padded rows, two reductions).
    g, (x,) = graph([6, 36])
    cur = x
    for i in range(4):
        p = f"layer{i}/"
        b = g.add_input(p + "b", air.TensorDesc([1, 36], air.float32))
        m = g.add_op("ReduceMeanD", [cur], name=p + "mean", attrs={"axes": [1], "keep_dims": True})
        d = g.add_op("Sub", [cur, m], name=p + "sub")
        v = g.add_op("ReduceMeanD", [g.add_op("Mul", [d, d], name=p + "sq")], name=p + "var",
                     attrs={"axes": [1], "keep_dims": True})
        n = g.add_op("Mul", [d, g.add_op("Rsqrt", [v], name=p + "rsqrt")], name=p + "norm")
        for j in range(2):  # a conv, then the broadcast of a computed row
            r = g.add_op("Reshape", [n, g.add_const(p + f"s{j}", np.array([6, 36, 1, 1]))],
                         name=p + f"r{j}")
            w = g.add_const(p + f"w{j}", np.ones((36, 36, 1, 1), np.float32))
            c = g.add_op("Conv2D", [r, w], name=p + f"conv{j}",
                         attrs={"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0]})
            n = g.add_op("Reshape", [c, g.add_const(p + f"t{j}", np.array([6, 36]))],
                         name=p + f"q{j}")
            if j == 0:
                n = g.add_op("Tanh", [g.add_op("Add", [n, g.add_op("Exp", [b], name=p + "e")],
                                               name=p + "addb")], name=p + "tanh")
        cur = n
    g.set_outputs([cur])
    cm = air.compile(g)
    assert len(cm.kernels) == 8
    inserted = 0
    for k in cm.kernels:
        layers = {m.split("/")[0] for m in k.members}
        direct = asc.schedule(k.hint)
        assert [i.to_bytes() for i in k.impls] == [i.to_bytes() for i in direct], k.name
        names = {n.name for i in k.impls for n in i.nodes}
        inserted += sum(n.startswith("remove_pad_layer") for n in names)
        mentioned = {part.split("/")[0] for n in names for part in n.split("_") if "/" in part}
        assert mentioned and mentioned <= layers, (k.name, mentioned, layers)
    assert inserted >= 4


def test_explain_names_the_refusal_of_a_pair_whose_clusters_were_lifted():
    # a -> MatMul -> b and a -> b: fusing a and b would cycle through the MatMul (NF1002);
    # each is then a one-op cluster, lifted back out.
    g = air.Graph("cyc")
    x = g.add_input("x", air.TensorDesc([8, 8], air.float32))
    a = g.add_op("Exp", [x], name="a")
    m = g.add_op("MatMul", [a, g.add_const("w", np.ones((8, 8), np.float32))], name="m")
    g.set_outputs([g.add_op("Add", [a, m], name="b")])
    rep = air.compile(g).report.data
    assert {tuple(lf["members"]) for lf in rep["lifted"]} == {("a",), ("b",)}
    text = air.compiler.explain(g, "a", "b")
    assert text.startswith("'a' and 'b' did not fuse: [NF1002] "), text
    assert "cycle" in text and "lifted back out" in text


def test_load_keeps_the_compiled_kernel_order(tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benches"))
    import models

    cm = air.compile(air.onnx.load(models.bert(layers=1)))
    names = [k.name for k in cm.kernels]
    in_nodes = [n.name for n in cm.graph.nodes if n.type == "AscBackend"]
    assert sorted(names) == sorted(in_nodes) and names != in_nodes  # the orders differ here
    cm.save(str(tmp_path), ("om",), name="bert")
    assert [k.name for k in air.compiler.load(str(tmp_path / "bert.om")).kernels] == names
