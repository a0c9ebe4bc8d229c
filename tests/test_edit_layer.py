"""The editing layer for pass writers: insertion points (``inserting_before`` /
``inserting_after``), the indexed ``find_nodes``, the typed builders of ``ascendir.ops``,
``OpDesc.from_type`` and ``Tensor.__array__``; each on hand-built graphs and on an imported
ONNX model, with stale handles and all-or-nothing failures."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ascendir as air
from ascendir import ops

F32 = air.TensorDesc([1, 3, 8, 8], air.float32)


def _names(nodes: list[air.Node]) -> list[str]:
    return [n.name for n in nodes]


def _chain() -> tuple[air.Graph, dict[str, air.Node]]:
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2, 3], air.float32))
    a = g.add_op("Relu", [x], name="a")
    b = g.add_op("Exp", [a], name="b")
    g.set_outputs([b])
    return g, {"x": x, "a": a, "b": b}


def _onnx_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["s"], name="sig"),
        helper.make_node("Mul", ["r", "s"], ["y"], name="mul"),
    ]
    graph = helper.make_graph(
        nodes, "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


# --- insertion points --------------------------------------------------------------------


def test_inserting_before_keeps_creation_order() -> None:
    g, n = _chain()
    with g.inserting_before(n["b"]) as same:
        assert same is g
        p = g.add_op("Abs", [n["a"]], name="p")
        q = g.add_op("Neg", [p], name="q")
        c = g.add_const("c", np.ones((2, 3), np.float32))
    assert _names(g.nodes) == ["x", "a", "p", "q", "c", "b", "Node_Output"]
    # Leaving the block: new nodes go to the end again.
    g.add_op("Sqrt", [q], name="tail")
    assert g.nodes[-1].name == "tail"
    assert c.type == "Const" and g.check_invariants() == []


def test_inserting_after_moves_with_each_new_node() -> None:
    g, n = _chain()
    with g.inserting_after(n["x"]):
        g.add_op("Abs", [n["x"]], name="p")
        g.add_op("Neg", [n["x"]], name="q")
        g.add_node(air.OpDesc("r", "NoOp"))
    assert _names(g.nodes) == ["x", "p", "q", "r", "a", "b", "Node_Output"]


def test_nested_blocks_restore_the_outer_point() -> None:
    g, n = _chain()
    with g.inserting_after(n["a"]):
        g.add_op("Abs", [n["a"]], name="p1")
        with g.inserting_before(n["a"]):
            g.add_op("Neg", [n["x"]], name="inner")
        g.add_op("Abs", [n["a"]], name="p2")
    g.add_op("Abs", [n["a"]], name="end")
    assert _names(g.nodes) == ["x", "inner", "a", "p1", "p2", "b", "Node_Output", "end"]


def test_the_point_is_restored_when_the_block_raises() -> None:
    g, n = _chain()
    with pytest.raises(air.NotFoundError):
        with g.inserting_before(n["a"]):
            g.add_op("Abs", [n["x"]], name="p")
            g.add_op("NoSuchOp", [n["x"]], name="bad")
    g.add_op("Abs", [n["x"]], name="end")
    assert _names(g.nodes) == ["x", "p", "a", "b", "Node_Output", "end"]


def test_a_stale_node_is_refused_and_nothing_is_added() -> None:
    g, n = _chain()
    extra = g.add_op("Abs", [n["x"]], name="extra")
    g.remove_node(extra)
    with pytest.raises(air.StaleHandleError):
        g.inserting_before(extra)
    with pytest.raises(air.StaleHandleError):
        g.inserting_after(extra)
    foreign = air.Graph("o").add_input("z", F32)
    with pytest.raises(air.ForeignHandleError):
        g.inserting_before(foreign)
    block = g.inserting_before(n["a"])
    assert isinstance(block, air.InsertionPoint) and repr(block) == "InsertionPoint(before 'a')"
    # The anchor node removed inside the block: the next add raises, the graph is unchanged.
    with g.inserting_after(n["a"]):
        p = g.add_op("Abs", [n["a"]], name="p")
        g.remove_node(p)
        before = g.to_bytes()
        with pytest.raises(air.StaleHandleError):
            g.add_op("Neg", [n["a"]], name="q")
        with pytest.raises(air.StaleHandleError):
            ops.Neg(n["a"].outputs[0], name="q2")
        assert g.to_bytes() == before and g.find("q") is None
    g.add_op("Neg", [n["a"]], name="q")
    assert g.nodes[-1].name == "q"


def test_insertion_point_in_an_imported_model_and_the_result_runs() -> None:
    m = _onnx_model()
    g = air.onnx.load(m)
    relu = g.find_nodes(op_type="Relu")[0]
    mul = g.find_nodes(op_type="Mul")[0]
    # Replace relu(c) by max(c, 0) + 0 written with builders, placed where the Relu was.
    with g.inserting_before(relu):
        c = relu.inputs[0]
        assert c is not None
        zero = g.add_const("zero", np.zeros((1,), np.float32)).outputs[0]
        m0 = ops.Maximum(c, zero, name="m0")
    relu.outputs[0].replace_all_uses_with(m0)
    g.remove_node(relu)
    order = _names(g.nodes)
    assert order.index("zero") < order.index("m0") < order.index(mul.name)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    import onnxruntime as ort

    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = air.evaluate(g, {"x": x})
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-4, atol=1e-5)


def test_insert_node_before_is_deprecated_but_works() -> None:
    g, n = _chain()
    with pytest.warns(DeprecationWarning, match="inserting_before"):
        new = g.insert_node(air.OpDesc("k", "NoOp"), before=n["b"])
    assert _names(g.nodes)[:4] == ["x", "a", "k", "b"] and new.name == "k"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.insert_node(air.OpDesc("k2", "NoOp"), after=n["b"])  # GE InsertNode: kept


# --- find_nodes --------------------------------------------------------------------------


def test_find_nodes_by_type_and_name_in_graph_order() -> None:
    g, n = _chain()
    with g.inserting_before(n["a"]):
        g.add_op("Exp", [n["x"]], name="e0")
    assert _names(g.find_nodes(op_type="Exp")) == ["e0", "b"]
    assert _names(g.find_nodes(name="a")) == ["a"]
    assert g.find_nodes(op_type="Exp", name="a") == []
    assert _names(g.find_nodes(op_type="Relu", name="a")) == ["a"]
    assert g.find_nodes(op_type="Nope") == [] and g.find_nodes(name="nope") == []
    assert _names(g.find_nodes()) == _names(g.nodes)
    assert g.find("a") == n["a"] and g.node("a") == n["a"]


def test_find_nodes_stays_right_after_edits() -> None:
    g, n = _chain()
    assert _names(g.find_nodes(op_type="Relu")) == ["a"]  # builds the index
    extra = g.add_op("Relu", [n["b"]], name="r2")
    assert _names(g.find_nodes(op_type="Relu")) == ["a", "r2"]
    n["a"].op_desc.type = "Sigmoid"  # retype
    assert _names(g.find_nodes(op_type="Relu")) == ["r2"]
    assert _names(g.find_nodes(op_type="Sigmoid")) == ["a"]
    n["a"].op_desc.name = "renamed"  # rename
    assert g.find_nodes(name="a") == [] and _names(g.find_nodes(name="renamed")) == ["renamed"]
    g.remove_node(extra)  # remove
    assert g.find_nodes(op_type="Relu") == []
    g.topo_sort("rdfs")  # reorder
    assert _names(g.find_nodes(op_type="Sigmoid")) == ["renamed"]
    with g.inserting_before(n["b"]):
        copy = g.copy()  # a copy starts without the insertion point
    copy.add_op("Abs", [copy.node("b")], name="last")
    assert copy.nodes[-1].name == "last"
    assert _names(copy.find_nodes(op_type="Exp")) == ["b"]
    assert g.check_invariants() == []


def test_find_nodes_on_an_imported_model_matches_a_scan() -> None:
    g = air.onnx.load(_onnx_model())
    for t in {n.type for n in g.nodes}:
        assert g.find_nodes(op_type=t) == [n for n in g.nodes if n.type == t]
    # Many inserts at one place renumber the order keys; the order stays right.
    sig = g.find_nodes(op_type="Sigmoid")[0]
    r = sig.inputs[0]
    assert r is not None
    with g.inserting_before(sig):
        for i in range(50):
            ops.Abs(r, name=f"abs{i}")
            found = g.find_nodes(op_type="Abs")
            assert found == [n for n in g.nodes if n.type == "Abs"]
    assert g.check_invariants() == []


# --- typed builders ----------------------------------------------------------------------


def test_builders_build_infer_and_return_values() -> None:
    g = air.Graph("b")
    x = g.add_input("x", F32).outputs[0]
    w = g.add_const("w", np.ones((4, 3, 3, 3), np.float32), ).outputs[0]
    y = ops.Conv2D(x, w, strides=[1, 1, 1, 1], pads=[1, 1, 1, 1], data_format="NCHW",
                   name="conv")
    assert isinstance(y, air.Value)
    conv = y.producer()
    assert conv.name == "conv" and conv.type == "Conv2D"
    assert tuple(y.desc.shape) == (1, 4, 8, 8)  # inferred
    assert conv.attrs["dilations"] == [1, 1, 1, 1] and conv.attrs["groups"] == 1  # defaults
    parts = ops.SplitD(y, split_dim=1, num_split=2)
    assert isinstance(parts, tuple) and len(parts) == 2
    assert [tuple(p.desc.shape) for p in parts] == [(1, 2, 8, 8)] * 2
    cat = ops.ConcatV2D(list(parts), concat_dim=1)
    assert tuple(cat.desc.shape) == (1, 4, 8, 8)
    assert cat.producer().inputs == list(parts)
    # A Node stands for its output 0; a fresh name is given.
    r = ops.Relu(conv)
    assert r.producer().name.startswith("Relu")


def test_builders_take_the_registry_signature() -> None:
    import inspect

    sig = inspect.signature(ops.Conv2D)
    p = sig.parameters
    assert list(p)[:4] == ["x", "filter", "bias", "offset_w"]
    assert p["bias"].default is None and p["x"].default is inspect.Parameter.empty
    assert p["strides"].kind is inspect.Parameter.KEYWORD_ONLY
    assert p["strides"].default is inspect.Parameter.empty  # required attribute
    assert p["pads"].default == (0, 0, 0, 0) and p["data_format"].default == "NHWC"
    assert ops.get("Conv2D").attr_names() == [k for k in p if k not in
                                              ("x", "filter", "bias", "offset_w", "name",
                                               "graph")]


def test_builder_errors_say_what_and_where() -> None:
    g = air.Graph("e")
    x = g.add_input("x", F32).outputs[0]
    w = g.add_const("w", np.ones((4, 3, 3, 3), np.float32)).outputs[0]
    before = g.to_bytes()
    with pytest.raises(air.InvalidArgumentError, match=r"ops\.Conv2D.*stridez"):
        ops.Conv2D(x, w, stridez=[1, 1, 1, 1])
    with pytest.raises(air.InvalidArgumentError, match=r"ops\.Conv2D.*strides"):
        ops.Conv2D(x, w)  # missing required attribute
    with pytest.raises(air.AscendIRError, match="strides"):
        ops.Conv2D(x, w, strides="wide")  # wrong type
    with pytest.raises(air.InvalidArgumentError, match=r"ops\.Conv2D.*filter"):
        ops.Conv2D(x)  # missing required input
    with pytest.raises(air.InvalidArgumentError, match=r"Add.*'x2' is missing"):
        ops.Add(x, None)
    with pytest.raises(air.InvalidArgumentError, match="Value"):
        ops.Relu(np.ones(3))
    with pytest.raises(air.InvalidArgumentError, match="dynamic"):
        ops.ConcatV2D(x, concat_dim=0)
    with pytest.raises(air.InvalidArgumentError, match=r"Relu.*'x' is missing"):
        ops.Relu(None)
    value = air.Tensor(np.ones(2, np.float32))
    with pytest.raises(air.InvalidArgumentError, match="graph="):
        ops.Const(value=value)
    with pytest.raises(AttributeError, match="NoSuchOp"):
        ops.NoSuchOp  # noqa: B018
    other = air.Graph("other").add_input("z", F32).outputs[0]
    with pytest.raises(air.ForeignHandleError):
        ops.Add(x, other)
    with pytest.raises(air.DuplicateNameError):
        ops.Relu(x, name="w")
    assert g.to_bytes() == before  # every failure left the graph as it was
    c = ops.Const(value=value, graph=g, name="c")
    np.testing.assert_array_equal(np.asarray(c.producer().attrs["value"]), np.ones(2))


def test_builders_follow_registrations() -> None:
    @air.register_op("EditLayerScale")
    class EditLayerScale(air.OpDef):
        x = air.Input("T")
        y = air.Output("T")
        scale = air.Attr(float, default=0.5)
        T = air.TypeVar(air.float32)
        infer = air.infer.same_as("x")

    try:
        g = air.Graph("u")
        x = g.add_input("x", F32).outputs[0]
        y = ops.EditLayerScale(x, scale=2.0)
        assert y.producer().attrs["scale"] == 2.0 and tuple(y.desc.shape) == (1, 3, 8, 8)
        assert ops.EditLayerScale(x).producer().attrs["scale"] == 0.5
    finally:
        ops.unregister("EditLayerScale")
    with pytest.raises(AttributeError):
        ops.EditLayerScale  # noqa: B018


def test_builders_stub_is_generated_from_the_registry() -> None:
    from ascendir import _stubgen

    text = _stubgen.BUILDERS_STUB.read_text()
    assert text == _stubgen.render_builders_stub(), "run python -m ascendir._stubgen"
    assert ("def Conv2D(x: Value, filter: Value, bias: Value | None = None, "
            "offset_w: Value | None = None, *, strides: Sequence[int], "
            "pads: Sequence[int] = (0, 0, 0, 0)") in text
    assert "def SplitD(x: Value, *, split_dim: int, num_split: int" in text
    assert ") -> tuple[Value, ...]:" in text


# --- OpDesc.from_type and Tensor.__array__ ------------------------------------------------


def test_op_desc_from_type_has_the_registry_ports_and_defaults() -> None:
    od = air.OpDesc.from_type("Conv2D", name="c", attrs={"strides": [1, 1, 2, 2]})
    assert od.name == "c" and od.type == "Conv2D"
    assert od.input_names == ["x", "filter", "bias", "offset_w"] and od.output_names == ["y"]
    assert od.attrs["pads"] == [0, 0, 0, 0] and od.attrs["strides"] == [1, 1, 2, 2]
    assert air.OpDesc.from_type("Relu").name == "Relu"
    split = air.OpDesc.from_type("SplitD", "s", attrs={"split_dim": 0, "num_split": 3})
    assert split.num_outputs == 3
    with pytest.raises(air.NotFoundError, match="Rellu"):
        air.OpDesc.from_type("Rellu")
    with pytest.raises(air.InvalidArgumentError, match="strides"):
        air.OpDesc.from_type("Conv2D")
    g = air.Graph("od")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    with g.inserting_before(x):
        node = g.add_node(air.OpDesc.from_type("Relu", "r"))
    assert _names(g.nodes) == ["r", "x"] and node.type == "Relu"


def test_tensor_array_protocol() -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = air.Tensor(data)
    view = np.asarray(t)
    assert view.dtype == np.float32 and view.shape == (2, 3) and not view.flags.writeable
    assert np.shares_memory(view, np.asarray(t))  # zero-copy views of the same bytes
    np.testing.assert_array_equal(view, data)
    same = t.__array__(copy=False)
    assert np.shares_memory(same, view)
    copied = np.array(t)
    assert copied.flags.writeable and not np.shares_memory(copied, view)
    as64 = np.asarray(t, dtype=np.float64)
    assert as64.dtype == np.float64 and np.array_equal(as64, data)
    with pytest.raises(ValueError, match="copy"):
        t.__array__(dtype=np.float64, copy=False)
    assert t.__array__(dtype=np.float32, copy=False).dtype == np.float32
    # A Const's value reads as an array directly.
    g = air.Graph("t")
    c = g.add_const("c", data)
    np.testing.assert_array_equal(np.asarray(c.attrs["value"]), data)


# --- a real model through the torch frontend ---------------------------------------------


def test_rewrite_every_relu_of_resnet18_with_builders() -> None:
    import sys
    from pathlib import Path

    import torch

    sys.path.insert(0, str(Path(__file__).parent))
    from support.torch_models import build, example

    model, rest, kind = build("resnet18")
    x = example(rest, kind, 1, seed=0)
    g = air.torch.export(model, (x,))
    nodes_before = len(g)
    for t in {n.type for n in g.nodes}:
        assert g.find_nodes(op_type=t) == [n for n in g.nodes if n.type == t]
    relus = g.find_nodes(op_type="Relu")
    assert len(relus) >= 9
    # Relu(v) -> Maximum(v, 0), placed where each Relu was; the result must not change.
    for i, relu in enumerate(relus):
        v = relu.inputs[0]
        assert v is not None
        with g.inserting_before(relu):
            zero = g.add_const(f"zero{i}", np.zeros((1,), np.float32)).outputs[0]
            m = ops.Maximum(v, zero, name=f"max{i}")
        assert tuple(m.desc.shape) == tuple(relu.outputs[0].desc.shape)
        relu.outputs[0].replace_all_uses_with(m)
        g.remove_node(relu)
        with pytest.raises(air.StaleHandleError):
            g.inserting_after(relu)
        order = g.nodes
        k = order.index(m.producer())
        assert order[k - 1].name == f"zero{i}" and order[k - 2] == v.producer()
    assert g.find_nodes(op_type="Relu") == []
    assert len(g.find_nodes(op_type="Maximum")) == len(relus)
    assert len(g) == nodes_before + len(relus)
    assert g.problems() == [] and g.check_invariants() == []
    with torch.no_grad():
        want = model(x).numpy()
    got = next(iter(air.evaluate(g, {g.inputs[0].name: x.numpy()}).values()))
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_evaluate_after_a_removal_and_an_insertion_without_a_sort() -> None:
    # GE ids: an added node takes the node count, which an earlier node keeps after a
    # removal; the evaluator must not confuse the two nodes.
    g = air.Graph("ids")
    x = g.add_input("x", air.TensorDesc([2, 3], air.float32))
    dangling = [g.add_op("Abs", [x], name=f"u{i}") for i in range(2)]
    a = g.add_op("Relu", [x], name="a")
    b = g.add_op("Exp", [a], name="b")
    g.set_outputs([b])
    g.remove(dangling)
    with g.inserting_after(b):
        neg = ops.Neg(b.outputs[0], name="neg")  # read by nothing
    assert neg.producer().id == b.id  # two nodes share an id
    assert _names(g.nodes) == ["x", "a", "b", "neg", "Node_Output"]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    got = air.evaluate(g, {"x": xv})
    np.testing.assert_allclose(next(iter(got.values())), np.exp(np.maximum(xv, 0)), rtol=1e-6)


def test_a_type_checker_sees_the_builders_types(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "use_builders.py"
    script.write_text(
        "import ascendir as air\n"
        "from ascendir import ops\n"
        "\n"
        "def build(g: air.Graph, x: air.Value, w: air.Value) -> air.Value:\n"
        "    y = ops.Conv2D(x, w, strides=[1, 1, 1, 1], groups=1)\n"
        "    a, b = ops.SplitD(y, split_dim=1, num_split=2)\n"
        "    with g.inserting_before(y.producer()):\n"
        "        z = ops.Relu(a)\n"
        "    nodes: list[air.Node] = g.find_nodes(op_type='Relu')\n"
        "    assert nodes\n"
        "    return ops.Add(z, b)\n"
        "\n"
        "def wrong(x: air.Value, w: air.Value) -> None:\n"
        "    ops.Conv2D(x, w, strides=[1, 1, 1, 1], groups='one')\n")
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file",
                        str(root / "pyproject.toml"), str(script)],
                       cwd=str(tmp_path), capture_output=True, text=True, check=False,
                       timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr
    errors = [line for line in r.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, r.stdout
    assert 'use_builders.py:14: error: Argument "groups" to "Conv2D" has incompatible type' \
        in errors[0]


def test_a_subgraph_has_its_own_point_and_index() -> None:
    g = air.Graph("root")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    cond = g.add_op("If", [x], name="if")
    body = air.Graph("then")
    d = body.add_input("then_in", air.TensorDesc([2], air.float32))
    r = body.add_op("Relu", [d], name="t_relu")
    body.set_outputs([r])
    g.add_subgraph(body, parent=cond, slot="then_branch")
    sub = g.subgraph("then")
    t_relu = sub.node("t_relu")
    with sub.inserting_before(t_relu):
        e = ops.Exp(sub.node("then_in").outputs[0], name="t_exp")
        g.add_op("Abs", [x], name="root_abs")  # the root's point is its own: the end
    assert _names(sub.nodes)[:3] == ["then_in", "t_exp", "t_relu"]
    assert g.nodes[-1].name == "root_abs"
    assert e.producer().graph == sub
    assert _names(sub.find_nodes(op_type="Relu")) == ["t_relu"]
    assert g.find_nodes(op_type="Relu") == []
    assert _names(g.find_nodes(op_type="Abs")) == ["root_abs"]
