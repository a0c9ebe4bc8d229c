"""ascendir.ge.es: GE's GraphBuilder, TensorHolder, tensor-likes and op functions over
ascendir's graph, and the graphs of GE's fusion-pass samples built with it and evaluated
against numpy (each test names the GE rule it checks)."""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest

import ascendir as air
from ascendir.ge import es
from ascendir.ge.es import GraphBuilder, InputType, TensorHolder
from ascendir.ge.es.graph_builder import attr_scope, control_dependency_scope
from ascendir.ge.es.math import Add, Concat, ConcatV2, Identity, MatMul, Split
from ascendir.ge.es.nn import BatchMatMulV2, Conv2D, Relu
from ascendir.ge.es.tensor_like import (
    _flatten_and_infer_shape,
    convert_to_tensor_holder,
    resolve_builder,
)
from ascendir.ge.graph import DataType, Format, Graph, Node

RNG = np.random.default_rng(52)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _nodes(b: GraphBuilder) -> int:
    return len(b.air)


def _run(g: Graph, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The graph's outputs in order."""
    out = air.evaluate(g.air, feeds)
    return list(out.values())


# -- GraphBuilder ---------------------------------------------------------------------------


def test_builder_name_and_copy() -> None:
    assert GraphBuilder().name == "graph" and GraphBuilder("my_graph").name == "my_graph"
    with pytest.raises(TypeError, match="Graph name must be a string"):
        GraphBuilder(1)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="GraphBuilder does not support copy"):
        copy.copy(GraphBuilder())
    with pytest.raises(RuntimeError, match="GraphBuilder does not support deepcopy"):
        copy.deepcopy(GraphBuilder())


def test_create_input_defaults_and_details() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    assert isinstance(x, TensorHolder) and x.name == "input_0"
    n = x._get_node_snapshot()
    assert n.type == "Data" and n.get_attr("index") == 0
    d = n.get_output_desc(0)
    assert (d.shape, d.data_type, d.format) == ([], DataType.DT_FLOAT, Format.FORMAT_ND)
    y = b.create_input(1, name="img", data_type=DataType.DT_FLOAT16, format=Format.FORMAT_NCHW,
                       shape=[1, 3, 4, 4])
    d = y._get_node_snapshot().get_output_desc(0)
    assert y.name == "img" and d.shape == [1, 3, 4, 4]
    assert (d.data_type, d.format) == (DataType.DT_FLOAT16, Format.FORMAT_NCHW)
    r = b.create_input(2, type_str=InputType.REF_DATA, shape=[2])
    assert r._get_node_snapshot().type == "RefData"


def test_create_input_errors_leave_the_graph() -> None:
    b = GraphBuilder("g")
    b.create_input(0)
    with pytest.raises(TypeError, match="Input index must be an integer"):
        b.create_input("0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Shape must be a list of integers"):
        b.create_input(1, shape=(1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Data type must be a DataType"):
        b.create_input(1, data_type=air.DataType.FLOAT)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to create input 'input_0'"):
        b.create_input(1, name="input_0")  # the name is taken
    with pytest.raises(RuntimeError, match="the index is taken by input 'input_0'"):
        b.create_input(0, name="other")
    assert _nodes(b) == 1
    assert b.create_input(1).name == "input_1"  # the failures left index 1 free


def test_create_inputs() -> None:
    b = GraphBuilder("g")
    xs = b.create_inputs(3)
    assert [x.name for x in xs] == ["input_0", "input_1", "input_2"]
    assert [x.name for x in b.create_inputs(2, 3)] == ["input_3", "input_4"]
    with pytest.raises(TypeError, match="Number of inputs must be a positive integer"):
        b.create_inputs(0)
    with pytest.raises(TypeError, match="Start index must be a non-negative integer"):
        b.create_inputs(1, -1)


@pytest.mark.parametrize(("method", "dtype"), [
    ("create_const_int64", np.int64), ("create_const_int32", np.int32),
    ("create_const_uint64", np.uint64), ("create_const_uint32", np.uint32),
    ("create_const_float", np.float32),
])
def test_create_const_values_and_shapes(method: str, dtype: type) -> None:
    b = GraphBuilder("g")
    make = getattr(b, method)
    scalar = make(5)
    vector = make([1, 2, 3])
    matrix = make([1, 2, 3, 4, 5, 6], shape=[2, 3])
    empty_shape = make(7, shape=[])
    for h, want in ((scalar, np.array(5)), (vector, np.array([1, 2, 3])),
                    (matrix, np.arange(1, 7).reshape(2, 3)), (empty_shape, np.array(7))):
        node = h._get_node_snapshot()
        assert node.type == "Const"
        value = node.get_attr("value").air.numpy()
        assert value.dtype == dtype and value.shape == want.shape
        np.testing.assert_array_equal(value, want.astype(dtype))


def test_create_const_errors() -> None:
    b = GraphBuilder("g")
    with pytest.raises(TypeError, match="Value must be an integer or list of integers"):
        b.create_const_int64("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Value must be an integer or list of integers"):
        b.create_const_int32([1, 2.0])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="Value must be a float or list of floats"):
        b.create_const_float("1.0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Value count \(3\) doesn't match shape"):
        b.create_const_int64([1, 2, 3], shape=[2, 2])
    with pytest.raises(ValueError, match=r"Value count \(1\) doesn't match shape"):
        b.create_const_float(1.0, shape=[2])
    with pytest.raises(ValueError, match="Failed to create uint32 constant"):
        b.create_const_uint32([-1])
    assert _nodes(b) == 0


def test_create_vector_and_scalars() -> None:
    b = GraphBuilder("g")
    v = b.create_vector_int64([4, 5])
    assert v._get_node_snapshot().get_attr("value").get_data() == [4, 5]
    with pytest.raises(TypeError, match="Value must be a list of integers"):
        b.create_vector_int64([1.0])  # type: ignore[list-item]
    cases = [("create_scalar_int64", -3, np.int64), ("create_scalar_int32", 7, np.int32),
             ("create_scalar_uint64", 2**63, np.uint64), ("create_scalar_uint64", 0, np.uint64),
             ("create_scalar_uint32", 0xFFFFFFFF, np.uint32),
             ("create_scalar_float", 2, np.float32)]
    for method, value, dtype in cases:
        a = getattr(b, method)(value)._get_node_snapshot().get_attr("value").air.numpy()
        assert a.shape == () and a.dtype == dtype and a == value
    with pytest.raises(TypeError, match="Value must be an integer"):
        b.create_scalar_int64(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Value must be an integer"):
        b.create_scalar_uint64("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Value must be non-negative"):
        b.create_scalar_uint64(-1)
    with pytest.raises(ValueError, match="Value must be in range"):
        b.create_scalar_uint32(-1)
    with pytest.raises(ValueError, match="Value must be in range"):
        b.create_scalar_uint32(2**32)
    with pytest.raises(TypeError, match="Value must be a number"):
        b.create_scalar_float("1")  # type: ignore[arg-type]


def test_create_variable_needs_the_registry() -> None:
    b = GraphBuilder("g")
    with pytest.raises(TypeError, match="Index must be an integer"):
        b.create_variable("0", "v")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Name must be a string"):
        b.create_variable(0, 1)  # type: ignore[arg-type]
    # ascendir's registry has no Variable op: GE's RuntimeError, nothing added.
    with pytest.raises(RuntimeError, match="Failed to create variable 'v'"):
        b.create_variable(0, "v")
    assert _nodes(b) == 0


def test_graph_outputs_and_build() -> None:
    b = GraphBuilder("g")
    x, y = b.create_inputs(2)
    b.set_graph_output(y, 1)
    b.set_graph_output(x, 0)
    g = b.build_and_reset()
    assert isinstance(g, Graph) and g.name == "g" and g.air is b.air
    assert [(n.name, i) for n, i in g.air.outputs] == [("input_0", 0), ("input_1", 0)]


def test_build_and_reset_outputs_list_and_errors() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    with pytest.raises(TypeError, match="Tensor must be a TensorHolder"):
        b.set_graph_output(x.air, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Output index must be an integer"):
        b.set_graph_output(x, "0")  # type: ignore[arg-type]
    other = GraphBuilder("other").create_input(0)
    with pytest.raises(ValueError, match="belongs to GraphBuilder 'other'"):
        b.set_graph_output(other, 0)
    with pytest.raises(TypeError, match="Outputs must be a list"):
        b.build_and_reset(x)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="All outputs must be TensorHolder objects"):
        b.build_and_reset([x, 1])  # type: ignore[list-item]
    b.set_graph_output(x, 2)
    with pytest.raises(RuntimeError, match=r"graph outputs \[2\] are not numbered 0..n-1"):
        b.build_and_reset()
    # The failed build left the builder usable; the list sets outputs 0.., the rest stay.
    b.set_graph_output(x, 1)
    g = b.build_and_reset([x])
    assert [n.name for n, _ in g.air.outputs] == ["input_0"] * 3


def test_built_builder_refuses_work() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    b.build_and_reset([x])
    msg = "GraphBuilder has already been built. Create a new GraphBuilder"
    for call in (lambda: b.create_input(1), lambda: b.create_const_float(1.0),
                 lambda: b.create_scalar_int64(1), lambda: b.set_graph_output(x, 0),
                 lambda: b.build_and_reset(), lambda: x.set_data_type(DataType.DT_INT8),
                 lambda: x + x, lambda: Relu(x)):
        with pytest.raises(RuntimeError, match=msg):
            call()
    with pytest.raises(RuntimeError, match="Cannot set data type: GraphBuilder has already"):
        x.set_data_type(DataType.DT_FLOAT)


def test_graph_node_and_tensor_attrs() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    b.set_graph_attr_int64("i", 3)
    b.set_graph_attr_string("s", "v")
    b.set_graph_attr_bool("b", True)
    b.set_node_attr_int64(x, "ni", 4)
    b.set_node_attr_string(x, "ns", "w")
    b.set_node_attr_bool(x, "nb", False)
    b.set_tensor_attr_int64(x, "ti", 5)
    b.set_tensor_attr_string(x, "ts", "t")
    b.set_tensor_attr_bool(x, "tb", True)
    g = b.build_and_reset([x])
    assert (g.get_attr("i"), g.get_attr("s"), g.get_attr("b")) == (3, "v", True)
    n = g.find_node_by_name("input_0")
    assert (n.get_attr("ni"), n.get_attr("ns"), n.get_attr("nb")) == (4, "w", False)
    assert [n.get_output_attr(k, 0) for k in ("ti", "ts", "tb")] == [5, "t", True]
    b2 = GraphBuilder("g2")
    y = b2.create_input(0)
    with pytest.raises(TypeError, match="Attribute name must be a string"):
        b2.set_graph_attr_int64(1, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Value must be an integer"):
        b2.set_graph_attr_int64("a", "1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Value must be a string"):
        b2.set_node_attr_string(y, "a", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Value must be a boolean"):
        b2.set_tensor_attr_bool(y, "a", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Tensor must be a TensorHolder"):
        b2.set_node_attr_int64(None, "a", 1)  # type: ignore[arg-type]


def test_control_dependency_and_scopes() -> None:
    b = GraphBuilder("g")
    x, y = b.create_inputs(2)
    r = Relu(x)
    b.add_control_dependency(r, [y])
    assert r._get_node_snapshot().get_in_control_nodes() == [y._get_node_snapshot()]
    with pytest.raises(TypeError, match="src_tensors must be a list"):
        b.add_control_dependency(r, y)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="src_tensors must be a list of TensorHolder"):
        b.add_control_dependency(r, [1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="dst_tensor must be a TensorHolder"):
        b.add_control_dependency(None, [y])  # type: ignore[arg-type]
    with attr_scope({"_scope": "outer", "k": 1}):
        with attr_scope({"_scope": "inner"}), control_dependency_scope([y]):
            s = x + 1.0
        t = Relu(x)
    u = Relu(x)
    sn, tn, un = (h._get_node_snapshot() for h in (s, t, u))
    assert (sn.get_attr("_scope"), sn.get_attr("k")) == ("inner", 1)
    assert sn.get_in_control_nodes() == [y._get_node_snapshot()]
    assert tn.get_attr("_scope") == "outer" and tn.get_in_control_nodes() == []
    assert not un.has_attr("_scope")


# -- TensorHolder -------------------------------------------------------------------------


def test_tensor_holder_is_made_by_the_builder() -> None:
    with pytest.raises(RuntimeError, match="TensorHolder objects should not be created directly"):
        TensorHolder()
    b = GraphBuilder("g")
    with pytest.raises(ValueError, match="Tensor handle cannot be None"):
        TensorHolder._create_from(None, b)
    x = b.create_input(0)
    with pytest.raises(ValueError, match="Owner builder cannot be None"):
        TensorHolder._create_from(x._node, None)  # type: ignore[arg-type]
    assert x.get_owner_builder() is b and x.index == 0
    assert isinstance(x.air, air.Value) and x.air.producer().name == "input_0"
    assert isinstance(x._get_node_snapshot(), Node)


def test_tensor_holder_setters() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    assert x.set_data_type(DataType.DT_INT32) is x
    assert x.set_format(Format.FORMAT_NHWC).set_shape([1, 2]) is x
    d = x._get_node_snapshot().get_output_desc(0)
    assert (d.data_type, d.format, d.shape) == (DataType.DT_INT32, Format.FORMAT_NHWC, [1, 2])
    with pytest.raises(TypeError, match="Data type must be a DataType enum"):
        x.set_data_type(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Format must be a Format enum"):
        x.set_format("NCHW")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Shape must be a list of integers"):
        x.set_shape((1,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="All shape dimensions must be integers"):
        x.set_shape([1, "2"])  # type: ignore[list-item]


def test_operators_map_to_add_sub_mul_div() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[3])
    y = b.create_input(1, shape=[3])
    outs = [x + y, x - y, x * y, x / y, x.add(y), x.sub(y), x.mul(y), x.div(y)]
    types = [h._get_node_snapshot().type for h in outs]
    assert types == ["Add", "Sub", "Mul", "Div"] * 2
    g = b.build_and_reset(outs)
    a, c = np.array([1, 2, 3], np.float32), np.array([4, 5, 8], np.float32)
    got = _run(g, {"input_0": a, "input_1": c})
    for out, want in zip(got, [a + c, a - c, a * c, a / c] * 2, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_operators_with_numbers_and_lists() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[2, 2])
    outs = [x + 1, 2 - x, x * 0.5, 1.0 / x, x + [[1.0, 2.0], [3.0, 4.0]], 3 * x]
    # Reflected forms keep the operand order: 2 - x is Sub(2, x).
    rsub = outs[1]._get_node_snapshot()
    assert rsub.get_in_data_nodes_and_port_indexes(1)[0].name == "input_0"
    # A number takes the type of the holder it meets (x is float: 1 is a float constant).
    one = outs[0]._get_node_snapshot().get_in_data_nodes_and_port_indexes(1)[0]
    assert one.type == "Const" and one.get_attr("value").get_data_type() == DataType.DT_FLOAT
    g = b.build_and_reset(outs)
    a = np.array([[1, 2], [4, 8]], np.float32)
    want = [a + 1, 2 - a, a * 0.5, 1 / a, a + np.array([[1, 2], [3, 4]]), 3 * a]
    for out, w in zip(_run(g, {"input_0": a}), want, strict=True):
        np.testing.assert_allclose(out, w, rtol=1e-6)


def test_operator_type_mismatch_fails_and_leaves_the_graph() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, data_type=DataType.DT_INT32, shape=[2])
    before = _nodes(b)
    with pytest.raises(RuntimeError, match="Failed to create add operation"):
        x + 1.5  # a float constant cannot meet an int32 tensor in Add
    assert _nodes(b) == before
    y = b.create_input(1, shape=[2])
    with pytest.raises(RuntimeError, match="Failed to create mul operation"):
        x * y
    assert _nodes(b) == before + 1


def test_operators_across_builders() -> None:
    x = GraphBuilder("a").create_input(0)
    y = GraphBuilder("b").create_input(0)
    with pytest.raises(ValueError, match="Cannot perform add: tensors from different Graph"):
        x + y
    with pytest.raises(ValueError, match="tensors from different GraphBuilders"):
        Add(x, y)
    with pytest.raises(TypeError, match="Value must be TensorHolder or int"):
        x + "1"  # type: ignore[operator]


def test_holder_keeps_its_builder_alive() -> None:
    def make() -> TensorHolder:
        return GraphBuilder("temp").create_input(0, shape=[2])

    x = make()
    r = Relu(x)
    assert r.get_owner_builder().name == "temp" and len(r.get_owner_builder().air) == 2


# -- tensor-likes ---------------------------------------------------------------------------


def test_flatten_and_infer_shape() -> None:
    assert _flatten_and_infer_shape([[1, 2], [3, 4]]) == ([1, 2, 3, 4], [2, 2])
    assert _flatten_and_infer_shape([]) == ([], [0])
    with pytest.raises(ValueError, match="Irregular nested list"):
        _flatten_and_infer_shape([[1, 2], [3]])
    with pytest.raises(TypeError, match="Value must be int|float or nested lists"):
        _flatten_and_infer_shape([[1], "a"])
    with pytest.raises(TypeError, match="Value must be int|float or nested lists"):
        _flatten_and_infer_shape([[]])


def test_convert_to_tensor_holder_rules() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    assert convert_to_tensor_holder(x, b) is x and convert_to_tensor_holder(None, b) is None
    cases = [(3, np.int64, ()), (2.5, np.float32, ()), ([[1, 2]], np.int64, (1, 2)),
             ([1, 2.5], np.float32, (2,))]
    for value, dtype, shape in cases:
        h = convert_to_tensor_holder(value, b)
        assert h is not None
        a = h._get_node_snapshot().get_attr("value").air.numpy()
        assert a.dtype == dtype and a.shape == shape
    with pytest.raises(TypeError, match="Value must be TensorHolder or int"):
        convert_to_tensor_holder("x", b)
    with pytest.raises(TypeError, match="Value must be TensorHolder or int"):
        convert_to_tensor_holder(True, b)


def test_resolve_builder() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0)
    assert resolve_builder(1, x) is b and resolve_builder(None, b) is b
    with pytest.raises(ValueError, match="at least one input tensor or an explicit owner_builder"):
        resolve_builder(1, 2.0)
    with pytest.raises(ValueError, match="At least one argument is required"):
        resolve_builder()


# -- op functions ---------------------------------------------------------------------------


def test_groups_follow_ge_plugins() -> None:
    assert es.list_plugins() == ["math", "nn", "all"]
    assert es.get_plugin("math") is es.math and es.get_plugin("custom") is None
    math_ops, nn_ops, all_ops = dir(es.math), dir(es.nn), dir(es.all)
    for t in ("Add", "MatMul", "ConcatV2", "Concat", "Split", "Identity", "Sub", "Cast"):
        assert t in math_ops and t not in nn_ops
    for t in ("Relu", "Conv2D", "BatchMatMulV2", "SoftmaxV2", "LayerNorm", "MaxPool"):
        assert t in nn_ops and t not in math_ops
    assert set(math_ops) | set(nn_ops) <= set(all_ops)
    # GE's structural types are only in ``all``; ops with subgraphs have no function.
    assert "Data" in all_ops and "Data" not in math_ops and "If" not in all_ops
    # The functions come from the registry: every registered computing type has one.
    registered = set(air.ops.list_ops())
    assert set(all_ops) <= registered and len(all_ops) > 150
    with pytest.raises(ImportError):
        from ascendir.ge.es.math import Relu as _  # noqa: F401
    with pytest.raises(AttributeError, match="has no op function 'NoSuchOp'"):
        es.all.NoSuchOp  # noqa: B018


def test_op_function_signature_is_ges() -> None:
    sig = inspect.signature(Split)
    assert list(sig.parameters) == ["split_dim", "x", "y_num", "num_split", "owner_builder"]
    assert sig.parameters["num_split"].kind is inspect.Parameter.KEYWORD_ONLY
    conv = inspect.signature(Conv2D).parameters
    assert conv["bias"].default is None and conv["offset_w"].default is None
    assert conv["strides"].default is inspect.Parameter.empty
    assert conv["data_format"].default == "NHWC" and conv["groups"].default == 1
    assert list(inspect.signature(es.all.Const).parameters)[0] == "owner_graph_builder"


def test_op_function_argument_errors_leave_the_graph() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[1, 2, 4, 4])
    w = b.create_input(1, shape=[3, 2, 1, 1])
    before = _nodes(b)
    with pytest.raises(TypeError, match="missing required attribute 'strides'"):
        Conv2D(x, w)
    with pytest.raises(TypeError, match="unexpected keyword argument 'stride'"):
        Conv2D(x, w, stride=[1, 1, 1, 1])
    with pytest.raises(TypeError, match="missing required input 'x2'"):
        Add(x)
    with pytest.raises(TypeError, match="input 'x' is dynamic and takes a list"):
        ConcatV2(x, 0)
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        Add(x, w, x)
    with pytest.raises(ValueError, match="y_num=2 disagrees with num_split=3"):
        Split(0, x, 2, num_split=3)
    # Bad attribute values and types are refused by the registry; the constants made for
    # literal inputs go again.
    with pytest.raises(RuntimeError, match="Failed to build Conv2D"):
        Conv2D(x, w, strides="1")
    with pytest.raises(RuntimeError, match="Failed to build Split"):
        Split(0.5, x, 2)  # a float split_dim
    with pytest.raises(ValueError, match="at least one input tensor or an explicit owner_builder"):
        Add(1.0, 2.0)
    assert _nodes(b) == before


def test_op_function_literals_and_owner_builder() -> None:
    b = GraphBuilder("g")
    s = Add(1.0, 2.0, owner_builder=b)
    assert s.get_owner_builder() is b
    x = b.create_input(0, data_type=DataType.DT_INT32, shape=[2])
    y = Add(x, [1, 2])  # the list follows x's type variable: int32
    c = y._get_node_snapshot().get_in_data_nodes_and_port_indexes(1)[0]
    assert c.get_attr("value").get_data_type() == DataType.DT_INT32
    # Split's split_dim allows only int32: the number becomes an int32 constant.
    parts = Split(0, b.create_input(1, shape=[4, 2]), 2, num_split=2)
    dim = parts[0]._get_node_snapshot().get_in_data_nodes_and_port_indexes(0)[0]
    assert dim.get_attr("value").get_data_type() == DataType.DT_INT32
    g = b.build_and_reset([s, y, *parts])
    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = _run(g, {"input_0": np.array([5, 6], np.int32), "input_1": a})
    np.testing.assert_array_equal(got[0], np.float32(3.0))
    np.testing.assert_array_equal(got[1], [6, 8])
    np.testing.assert_array_equal(got[2], a[:2])
    np.testing.assert_array_equal(got[3], a[2:])


def test_op_function_outputs() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[2, 5])
    top = es.all.TopKV2(x, 3)
    assert type(top).__name__ == "TopKV2Output"
    assert isinstance(top.values, TensorHolder) and top.indices.index == 1
    parts = Split(1, x, 5)  # the count from y_num alone
    assert isinstance(parts, list) and [p.index for p in parts] == [0, 1, 2, 3, 4]
    ident = es.all.IdentityN([x, x], 2)
    assert [p.index for p in ident] == [0, 1]
    g = b.build_and_reset([top.values, top.indices, parts[4], ident[1]])
    a = _f32(2, 5)
    values, indices, last, same = _run(g, {"input_0": a})
    np.testing.assert_array_equal(values, -np.sort(-a, axis=1)[:, :3])
    np.testing.assert_array_equal(indices, np.argsort(-a, axis=1, kind="stable")[:, :3])
    np.testing.assert_array_equal(last, a[:, 4:5])
    np.testing.assert_array_equal(same, a)


def test_dynamic_input_sets_n() -> None:
    b = GraphBuilder("g")
    xs = b.create_inputs(3)
    c = ConcatV2([x.set_shape([2]) for x in xs], 0)
    assert c._get_node_snapshot().get_attr("N") == 3


# -- the graphs of GE's fusion-pass samples -------------------------------------------------


def test_sample_matmul_add() -> None:
    # pattern_base_pass 1/2/3: MatMul(a, b) + c, BatchMatMulV2(a, b) + c, MatMul + constant.
    b = GraphBuilder("matmul_add")
    a = b.create_input(0, shape=[2, 3])
    w = b.create_input(1, shape=[3, 4])
    c = b.create_input(2, shape=[2, 4])
    bx = b.create_input(3, shape=[5, 2, 3])
    bw = b.create_input(4, shape=[5, 3, 4])
    out1 = MatMul(a, w) + c
    out2 = BatchMatMulV2(bx, bw) + c
    sq = b.create_input(5, shape=[2, 2])
    out3 = MatMul(sq, sq, None, transpose_x1=False, transpose_x2=True) + [[0.1, 0.1], [0.1, 0.1]]
    g = b.build_and_reset([out1, out2, out3])
    assert [n.type for n in g.get_all_nodes()].count("MatMul") == 2
    feeds = {"input_0": _f32(2, 3), "input_1": _f32(3, 4), "input_2": _f32(2, 4),
             "input_3": _f32(5, 2, 3), "input_4": _f32(5, 3, 4), "input_5": _f32(2, 2)}
    got = _run(g, feeds)
    f = feeds
    np.testing.assert_allclose(got[0], f["input_0"] @ f["input_1"] + f["input_2"], rtol=1e-5)
    np.testing.assert_allclose(got[1], f["input_3"] @ f["input_4"] + f["input_2"], rtol=1e-5)
    np.testing.assert_allclose(got[2], f["input_5"] @ f["input_5"].T + 0.1, rtol=1e-5)


def test_sample_add_zero() -> None:
    # pattern_base_pass 4: inputs[0] + 0, the Const read back through get_attr("value").
    b = GraphBuilder("add_zero")
    x = b.create_input(0, shape=[3])
    y = x + 0
    g = b.build_and_reset([y])
    const = next(n for n in g.get_all_nodes() if n.type == "Const")
    value = const.get_attr("value")
    assert value.data_type == DataType.DT_FLOAT and value.data == 0.0
    a = _f32(3)
    np.testing.assert_array_equal(_run(g, {"input_0": a})[0], a)


def test_sample_move_relu_before_concat() -> None:
    # graph_base_pass 2: ConcatV2 -> Relu, and the replacement Relu each input -> ConcatV2.
    b = GraphBuilder("target")
    xs = [b.create_input(i, shape=[2, 3]) for i in range(3)]
    target = Relu(ConcatV2(xs, 1, N=3))
    g = b.build_and_reset([target])
    concat = next(n for n in g.get_all_nodes() if n.type == "ConcatV2")
    assert concat.get_outputs_size() == 1
    (relu, _), = concat.get_out_data_nodes_and_port_indexes(0)
    assert relu.type == "Relu"
    size = concat.get_inputs_size()
    assert size == 4
    rb = GraphBuilder("replacement")
    relued = [Relu(rb.create_input(i, shape=[2, 3])) for i in range(size - 1)]
    dim = rb.create_input(size - 1, data_type=DataType.DT_INT32)
    repl = rb.build_and_reset([ConcatV2(relued, dim, N=len(relued))])
    feeds = {f"input_{i}": _f32(2, 3) for i in range(3)}
    want = np.maximum(np.concatenate([feeds[f"input_{i}"] for i in range(3)], axis=1), 0)
    np.testing.assert_array_equal(_run(g, feeds)[0], want)
    feeds["input_3"] = np.array(1, np.int32)
    np.testing.assert_array_equal(_run(repl, feeds)[0], want)


def _conv_nchw(x: np.ndarray, w: np.ndarray, groups: int = 1) -> np.ndarray:
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float64)
    per = o // groups
    for oc in range(o):
        gi = oc // per
        xs = x[:, gi * cg:(gi + 1) * cg]
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                out[:, oc, i, j] = np.sum(xs[:, :, i:i + kh, j:j + kw] * w[oc], axis=(1, 2, 3))
    return out.astype(np.float32)


def test_sample_conv_data_format() -> None:
    # graph_base_pass 3: a Conv2D in NCHW, found by type and data_format, switched to NHWC.
    b = GraphBuilder("conv")
    x = b.create_input(0, format=Format.FORMAT_NCHW, shape=[1, 2, 5, 5])
    w = b.create_input(1, format=Format.FORMAT_NCHW, shape=[3, 2, 3, 3])
    y = Conv2D(x, w, None, None, strides=[1, 1, 1, 1], pads=[0, 0, 0, 0],
               dilations=[1, 1, 1, 1], data_format="NCHW")
    g = b.build_and_reset([y])
    conv = next(n for n in g.get_all_nodes() if n.type in ("Conv2D", "Conv2DV2"))
    assert conv.get_attr("data_format") == "NCHW"
    assert conv.get_output_desc(0).shape == [1, 3, 3, 3]
    xa, wa = _f32(1, 2, 5, 5), _f32(3, 2, 3, 3)
    np.testing.assert_allclose(_run(g, {"input_0": xa, "input_1": wa})[0], _conv_nchw(xa, wa),
                               rtol=1e-4, atol=1e-5)
    conv.set_attr("data_format", "NHWC")
    assert conv.air.attrs["data_format"] == "NHWC"


def test_sample_grouped_conv_decomposition() -> None:
    # pattern_base_pass 6: a grouped Conv2D and its replacement Split -> Conv2D each -> Concat.
    groups = 2
    b = GraphBuilder("grouped")
    x = b.create_input(0, format=Format.FORMAT_NCHW, shape=[1, 4, 5, 5])
    w = b.create_input(1, format=Format.FORMAT_NCHW, shape=[6, 2, 3, 3])
    y = Conv2D(x, w, None, None, strides=[1, 1, 1, 1], groups=groups, data_format="NCHW")
    g = b.build_and_reset([y])
    conv = next(n for n in g.get_all_nodes() if n.type == "Conv2D")
    assert conv.get_attr("groups") == 2 and conv.get_attr("data_format") == "NCHW"
    strides, pads, dilations = (conv.get_attr(k) for k in ("strides", "pads", "dilations"))
    rb = GraphBuilder("replacement")
    inp, filt = rb.create_inputs(2)
    inp.set_shape([1, 4, 5, 5])
    filt.set_shape([6, 2, 3, 3])
    in_slices = Split(1, inp, groups, num_split=groups)
    f_slices = Split(0, filt, groups, num_split=groups)
    outs = [Conv2D(i, f, None, None, strides=strides, pads=pads, dilations=dilations, groups=1,
                   data_format="NCHW") for i, f in zip(in_slices, f_slices, strict=True)]
    repl = rb.build_and_reset([Concat(1, outs, N=len(outs))])
    assert [n.type for n in repl.get_all_nodes()].count("Conv2D") == groups
    xa, wa = _f32(1, 4, 5, 5), _f32(6, 2, 3, 3)
    want = _conv_nchw(xa, wa, groups)
    feeds = {"input_0": xa, "input_1": wa}
    np.testing.assert_allclose(_run(g, feeds)[0], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_run(repl, feeds)[0], want, rtol=1e-4, atol=1e-5)


def test_identity_builds_and_graph_wraps_the_builders_graph() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[2])
    y = Identity(x)
    g = b.build_and_reset([y])
    assert g.air is b.air and Graph.from_air(b.air) == g
    assert y.air.producer() == g.find_node_by_name(y.name).air


def test_sample_conv_transpose_pair_removed_by_graph_edits() -> None:
    # graph_base_pass 3's edits: Conv2D(NCHW) -> Transpose(0,2,3,1) -> Transpose(0,3,1,2);
    # the perms read from the Const's value, the pair unlinked, relinked and removed with
    # remove_edge / add_data_edge / remove_node; the graph computes the Conv2D alone.
    from ascendir.ge.es.all import Transpose

    b = GraphBuilder("conv_transposes")
    x = b.create_input(0, format=Format.FORMAT_NCHW, shape=[1, 2, 4, 4])
    w = b.create_input(1, format=Format.FORMAT_NCHW, shape=[3, 2, 1, 1])
    y = Conv2D(x, w, strides=[1, 1, 1, 1], data_format="NCHW")
    out = Relu(Transpose(Transpose(y, [0, 2, 3, 1]), [0, 3, 1, 2]))
    g = b.build_and_reset([out])
    conv = next(n for n in g.get_all_nodes() if n.type == "Conv2D")
    queue = [n for n, _ in conv.get_out_data_nodes_and_port_indexes(0)]
    perms = []
    while queue:
        t = queue.pop(0)
        queue.extend(n for i in range(t.get_outputs_size())
                     for n, _ in t.get_out_data_nodes_and_port_indexes(i))
        if t.type != "Transpose":
            continue
        perm_node, perm_idx = t.get_in_data_nodes_and_port_indexes(1)
        value = perm_node.get_attr("value")
        assert perm_node.type == "Const" and value.data_type in (DataType.DT_INT32,
                                                                 DataType.DT_INT64)
        perms.append(value.data)
        data_node, data_idx = t.get_in_data_nodes_and_port_indexes(0)
        consumers = t.get_out_data_nodes_and_port_indexes(0)
        g.remove_edge(data_node, data_idx, t, 0)
        g.remove_edge(perm_node, perm_idx, t, 1)
        for c, ci in consumers:
            g.remove_edge(t, 0, c, ci)
            g.add_data_edge(data_node, data_idx, c, ci)
        g.remove_node(perm_node)
        g.remove_node(t)
    assert perms == [[0, 2, 3, 1], [0, 3, 1, 2]]
    assert [n.type for n in g.get_all_nodes()] == ["Data", "Data", "Conv2D", "Relu", "NetOutput"]
    xa, wa = _f32(1, 2, 4, 4), _f32(3, 2, 1, 1)
    np.testing.assert_allclose(_run(g, {"input_0": xa, "input_1": wa})[0],
                               np.maximum(_conv_nchw(xa, wa), 0), rtol=1e-4, atol=1e-5)


def test_sample_pattern_graphs_from_unshaped_inputs() -> None:
    # pattern_base_pass 2 builds its patterns from create_inputs(3) (float scalars, no shape
    # known): MatMul(a, b) then Add(matmul, c), BatchMatMulV2 likewise; they must build.
    for mm in (MatMul, BatchMatMulV2):
        b = GraphBuilder(f"pattern_{mm.__name__}")
        a0, b0, c0 = b.create_inputs(3)
        g = b.build_and_reset([Add(mm(a0, b0), c0)])
        nodes = g.get_all_nodes()
        assert [n.type for n in nodes] == ["Data", "Data", "Data", mm.__name__, "Add",
                                           "NetOutput"]
        assert [n.get_attr("index") for n in nodes[:3]] == [0, 1, 2]
        add = nodes[4]
        assert add.get_in_data_nodes_and_port_indexes(0)[0] == nodes[3]
        assert add.get_in_data_nodes_and_port_indexes(1)[0] == nodes[2]
        assert add.get_input_desc(0).get_data_type() == DataType.DT_FLOAT
