"""ascendir.ge.graph: GE's Graph, Node, TensorDesc, Shape, Tensor and enumerations over
ascendir's graph (each test names the GE rule it checks)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir._proto import ge_ir_pb2
from ascendir.ge.error import GeError, GeTypeError, GeValueError
from ascendir.ge.es import GraphBuilder
from ascendir.ge.es.math import Add
from ascendir.ge.es.nn import Relu
from ascendir.ge.graph import (
    AttrValueType,
    DataType,
    DumpFormat,
    Format,
    Graph,
    Node,
    Placement,
    Shape,
    Tensor,
    TensorDesc,
)
from ascendir.ge.graph import types as ge_types


def _add_relu() -> tuple[Graph, str, str, str]:
    """input_0 + input_1 -> Relu -> output; returns the graph and the Add, Relu, x names."""
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[2, 3])
    y = b.create_input(1, shape=[2, 3])
    s = Add(x, y)
    r = Relu(s)
    g = b.build_and_reset([r])
    return g, s.name, r.name, x.name


# -- packaging ----------------------------------------------------------------------------


def test_import_ascendir_does_not_import_ge() -> None:
    code = ("import sys, ascendir; assert not any(m.startswith('ascendir.ge') "
            "for m in sys.modules); import ascendir.ge.graph, ascendir.ge.es; "
            "assert not any('cann' in m.lower() or m == 'ge' for m in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_errors_are_ge_and_ascendir_errors() -> None:
    # GE users catch RuntimeError / TypeError / ValueError; ascendir users AscendIRError.
    assert issubclass(GeError, RuntimeError) and issubclass(GeError, air.AscendIRError)
    assert issubclass(GeTypeError, TypeError) and issubclass(GeTypeError, air.AscendIRError)
    assert issubclass(GeValueError, ValueError) and issubclass(GeValueError, air.AscendIRError)
    e = GeError("m", error_message="cause", api_name="api", context={"k": 1})
    assert (e.error_message, e.api_name, e.context) == ("cause", "api", {"k": 1})


def test_raise_ge_error_message_layout() -> None:
    from ascendir.ge.error import raise_ge_error

    with pytest.raises(GeError, match=r"^Api failed; a=1; boom$") as info:
        raise_ge_error("Api", ValueError("boom"), a=1)
    assert info.value.api_name == "Api" and isinstance(info.value.__cause__, ValueError)


# -- types --------------------------------------------------------------------------------


def test_data_type_numbers_are_ge_and_ascendir() -> None:
    # GE's ge::DataType numbering; the same numbers as ascendir.DataType's members.
    assert (DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_INT32, DataType.DT_INT64) == (
        0, 1, 3, 9)
    assert (DataType.DT_BF16, DataType.DT_UNDEFINED, DataType.DT_HIFLOAT4, DataType.DT_MAX) == (
        27, 28, 42, 43)
    for m in air.DataType:
        assert DataType[f"DT_{m.name}"] == m.value
        assert ge_types.to_air_dtype(DataType(m.value)) is m
        assert ge_types.from_air_dtype(m) is DataType(m.value)


def test_format_numbers_are_ge_and_ascendir() -> None:
    assert (Format.FORMAT_NCHW, Format.FORMAT_NHWC, Format.FORMAT_ND) == (0, 1, 2)
    assert (Format.FORMAT_FRACTAL_NZ, Format.FORMAT_END, Format.FORMAT_MAX) == (29, 52, 53)
    for m in air.Format:
        if m.value <= Format.FORMAT_FRACTAL_NZ_C0_32:
            assert Format[f"FORMAT_{m.name}"] == m.value
    # A full format (sub-format bits) reads as its primary format.
    assert ge_types.from_air_format(air.make_format(air.Format.FRACTAL_Z, 4)) is (
        Format.FORMAT_FRACTAL_Z)
    with pytest.raises(GeError, match="has no name"):
        ge_types.from_air_format(air.Format.FRACTAL_NZ_C0_2)


def test_placement_and_attr_value_type_numbers() -> None:
    assert (Placement.PLACEMENT_HOST, Placement.PLACEMENT_DEVICE) == (0, 1)
    assert AttrValueType.VT_LIST_BASE == 1000
    assert AttrValueType.VT_LIST_INT == 1004 and AttrValueType.VT_DATA_TYPE == 11
    for k in air.AttrKind:
        if k.name in AttrValueType.__members__:
            assert AttrValueType[f"VT_{k.name}"] == k.value


# -- Shape and TensorDesc -----------------------------------------------------------------


def test_shape_is_a_list_with_size_and_unknown() -> None:
    s = Shape([1, 3, 224, 224])
    assert isinstance(s, list) and s == [1, 3, 224, 224] and s[1] == 3
    assert s.get_shape_size() == 150528
    assert Shape().get_shape_size() == 0 and Shape() == [] and not Shape().is_unknown_shape()
    assert Shape([2, -1]).get_shape_size() == -1 and Shape([2, -1]).is_unknown_shape()
    assert Shape([-2]).get_shape_size() == -1 and Shape([-2]).is_unknown_shape()
    assert Shape([2, 0]).get_shape_size() == 0


@pytest.mark.parametrize("dims", [(1, 2), [1, "2"], 3, [1.0]])
def test_shape_rejects_non_int_lists(dims: object) -> None:
    with pytest.raises(TypeError, match="dims must be a list of integers"):
        Shape(dims)  # type: ignore[arg-type]


def test_tensor_desc_defaults_and_construction() -> None:
    d = TensorDesc()
    assert d.shape == [] and d.shape.get_shape_size() == 0
    assert d.format == Format.FORMAT_ND and d.data_type == DataType.DT_FLOAT
    d = TensorDesc([1, 2, 3], Format.FORMAT_NCHW, DataType.DT_FLOAT16)
    assert isinstance(d.get_shape(), Shape) and d.get_shape() == [1, 2, 3]
    assert d.get_format() == Format.FORMAT_NCHW and d.get_data_type() == DataType.DT_FLOAT16
    # Origin shape and format start as the shape and format (GE's GeTensorDesc).
    assert d.origin_shape == [1, 2, 3] and d.origin_format == Format.FORMAT_NCHW


def test_tensor_desc_setters_chain() -> None:
    d = TensorDesc([1])
    out = (d.set_shape([2, 3]).set_data_type(DataType.DT_INT32).set_format(Format.FORMAT_ND)
           .set_origin_shape([4, 5]).set_origin_format(Format.FORMAT_NHWC))
    assert out is d
    assert (d.shape, d.data_type, d.format) == ([2, 3], DataType.DT_INT32, Format.FORMAT_ND)
    assert (d.origin_shape, d.origin_format) == ([4, 5], Format.FORMAT_NHWC)
    assert d.air.shape == (2, 3) and d.air.dtype == air.DataType.INT32


def test_tensor_desc_argument_errors() -> None:
    with pytest.raises(TypeError, match="Format must be a Format"):
        TensorDesc([1], 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Data type must be a DataType"):
        TensorDesc([1], Format.FORMAT_ND, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="shape must be a list of integers"):
        TensorDesc((1, 2))  # type: ignore[arg-type]
    d = TensorDesc([1])
    with pytest.raises(TypeError, match="shape must be a list of integers"):
        d.set_shape([1.5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="Format must be a Format"):
        d.set_format("ND")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Format must be a Format"):
        d.set_origin_format("invalid")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Data type must be a DataType"):
        d.set_data_type(air.DataType.FLOAT)  # type: ignore[arg-type]
    assert d.shape == [1] and d.format == Format.FORMAT_ND  # nothing changed


def test_tensor_desc_copy_refused_and_repr() -> None:
    d = TensorDesc([1, 2])
    with pytest.raises(RuntimeError, match="TensorDesc does not support copy"):
        copy.copy(d)
    with pytest.raises(RuntimeError, match="TensorDesc does not support deepcopy"):
        copy.deepcopy(d)
    text = repr(d)
    assert "TensorDesc" in text and "shape=[1, 2]" in text
    assert f"format={Format.FORMAT_ND}" in text and f"data_type={DataType.DT_FLOAT}" in text
    with pytest.raises(ValueError, match="TensorDesc pointer cannot be None"):
        TensorDesc._create_from(None)


def test_tensor_desc_from_air_is_the_same_object() -> None:
    a = air.TensorDesc([4], air.float32)
    d = TensorDesc.from_air(a)
    assert d.air is a
    d.set_shape([7])
    assert a.shape == (7,)


# -- Tensor ---------------------------------------------------------------------------------


def test_tensor_from_data_shape_and_type() -> None:
    t = Tensor([1, 2, 3, 4, 5, 6], None, DataType.DT_INT8, Format.FORMAT_ND, [1, 2, 3])
    assert t.get_shape() == [1, 2, 3] and t.data_type == DataType.DT_INT8
    assert t.format == Format.FORMAT_ND and t.placement == Placement.PLACEMENT_HOST
    assert t.get_data() == [[[1, 2, 3], [4, 5, 6]]]
    assert t.air.numpy().dtype == np.int8
    f = Tensor([1.0, 2.5], shape=[2])
    assert f.get_data_type() == DataType.DT_FLOAT and f.data == [1.0, 2.5]
    assert Tensor([7.0], shape=[]).get_data() == 7.0  # a scalar reads as a number
    b = Tensor([True, False], data_type=DataType.DT_BOOL, shape=[2])
    assert b.get_data() == [True, False]


def test_tensor_argument_errors() -> None:
    with pytest.raises(TypeError, match="Shape must be a list of integers"):
        Tensor([1.0, 2.0], shape=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Placement must be a Placement"):
        Tensor([1.0], shape=[1], placement=1)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Tensor should be created either by data or by file"):
        Tensor([1.0], "t.bin")
    with pytest.raises(TypeError, match="data should be List"):
        Tensor(1, shape=[1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to create Tensor"):
        Tensor(file_path="no-such-file.bin")
    with pytest.raises(RuntimeError, match="Failed to create Tensor"):
        Tensor([1.0, 2.0, 3.0], shape=[2, 2])  # count does not fit the shape
    with pytest.raises(ValueError, match="Tensor pointer cannot be None"):
        Tensor._create_from(None)


def test_tensor_from_file(tmp_path: Path) -> None:
    p = tmp_path / "t.bin"
    np.arange(6, dtype=np.int32).tofile(p)
    t = Tensor(file_path=str(p), data_type=DataType.DT_INT32, shape=[2, 3])
    assert t.get_data() == [[0, 1, 2], [3, 4, 5]]


def test_tensor_setters_and_copy_refused() -> None:
    t = Tensor([1, 2], data_type=DataType.DT_INT8, shape=[2])
    assert t.set_format(Format.FORMAT_NCHW) is t and t.get_format() == Format.FORMAT_NCHW
    assert t.set_data_type(DataType.DT_INT64).get_data_type() == DataType.DT_INT64
    assert t.get_data() == [1, 2] and t.get_format() == Format.FORMAT_NCHW
    with pytest.raises(TypeError, match="Format must be a Format"):
        t.set_format(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Data_type must be a DataType"):
        t.set_data_type(9)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Tensor does not support copy"):
        copy.copy(t)
    with pytest.raises(RuntimeError, match="Tensor does not support deepcopy"):
        copy.deepcopy(t)
    assert isinstance(t.get_tensor_desc(), TensorDesc) and t.get_tensor_desc().shape == [2]


def test_tensor_placement_offline() -> None:
    t = Tensor([1.0], shape=[1])
    with pytest.raises(ValueError, match=r"to_host\(\) only supports device tensors"):
        t.to_host()
    with pytest.raises(RuntimeError, match="no device"):
        t.to_device()
    with pytest.raises(RuntimeError, match="no device"):
        Tensor([1.0], shape=[1], placement=Placement.PLACEMENT_DEVICE)


def test_empty_tensor() -> None:
    t = Tensor()
    assert t.set_data_type(DataType.DT_FLOAT).get_data_type() == DataType.DT_FLOAT
    assert t.get_data() == [] and t.get_shape() == [0]


# -- Graph --------------------------------------------------------------------------------


def test_graph_creation_and_name() -> None:
    assert Graph().name == "graph"
    g = Graph("test_graph")
    assert g.name == "test_graph" and g.get_all_nodes() == [] and g.get_direct_nodes() == []
    with pytest.raises(TypeError, match="Graph name must be a string"):
        Graph(123)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Graph pointer cannot be None"):
        Graph._create_from(None)


def test_graph_copy_refused() -> None:
    g = Graph("g")
    with pytest.raises(RuntimeError, match="Graph does not support copy"):
        copy.copy(g)
    with pytest.raises(RuntimeError, match="Graph does not support deepcopy"):
        copy.deepcopy(g)


def test_graph_from_air_and_air_are_the_same_graph() -> None:
    a = air.Graph("shared")
    g = Graph.from_air(a)
    assert g.air is a and Graph.from_air(a) == g
    a.add_input("x", air.TensorDesc([1], air.float32))
    assert [n.name for n in g.get_direct_nodes()] == ["x"]  # no copy: edits show through
    g.set_attr("k", 3)
    assert a.attrs["k"] == 3
    node = g.get_direct_nodes()[0]
    assert node.air is a.node("x") or node.air == a.node("x")
    assert Node.from_air(a.node("x")) == node and hash(Node.from_air(a.node("x"))) == hash(node)


def test_graph_attr_kinds_by_python_type() -> None:
    g = Graph("g")
    cases: list[tuple[object, air.AttrKind]] = [
        ("hello", air.AttrKind.STRING), (42, air.AttrKind.INT), (2.5, air.AttrKind.FLOAT),
        (True, air.AttrKind.BOOL), (DataType.DT_INT8, air.AttrKind.DATA_TYPE),
        ([1, 2, 3, 4], air.AttrKind.LIST_INT), ([1.0, 2.0, 3.5], air.AttrKind.LIST_FLOAT),
        ([True, False], air.AttrKind.LIST_BOOL), (["hello", "world"], air.AttrKind.LIST_STRING),
    ]
    for i, (value, kind) in enumerate(cases):
        g.set_attr(f"a{i}", value)
        assert g.air.attrs.kind(f"a{i}") == kind
        got = g.get_attr(f"a{i}")
        assert got == value and type(got) is type(value)
    # Float attributes are float32, as GE's.
    g.set_attr("pi", 3.14)
    assert abs(g.get_attr("pi") - 3.14) < 1e-6
    # GE tests int before DataType: a list of DataType is stored as a list of ints.
    g.set_attr("dts", [DataType.DT_FLOAT, DataType.DT_INT8])
    assert g.air.attrs.kind("dts") == air.AttrKind.LIST_INT and g.get_attr("dts") == [0, 2]


def test_graph_attr_errors() -> None:
    g = Graph("g")
    with pytest.raises(TypeError, match="Attribute key must be a string"):
        g.get_attr(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Attribute key must be a string"):
        g.set_attr(1, "v")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to get attribute 'missing' from Graph g"):
        g.get_attr("missing")
    with pytest.raises(ValueError, match="Empty list is not supported"):
        g.set_attr("e", [])
    with pytest.raises(ValueError, match="Unsupported attribute type"):
        g.set_attr("m", [1, "a"])
    with pytest.raises(ValueError, match="Unsupported attribute type"):
        g.set_attr("n", None)
    assert "e" not in g.air.attrs and "m" not in g.air.attrs and "n" not in g.air.attrs
    g.air.attrs.set("bytes", b"\x00", kind=air.AttrKind.BYTES)
    with pytest.raises(RuntimeError, match="Unsupported attribute type: VT_BYTES"):
        g.get_attr("bytes")


def test_graph_nodes_and_find() -> None:
    g, add, relu, x = _add_relu()
    assert [n.type for n in g.get_all_nodes()] == ["Data", "Data", "Add", "Relu", "NetOutput"]
    assert g.get_direct_nodes() == g.get_all_nodes()
    n = g.find_node_by_name(relu)
    assert isinstance(n, Node) and n.name == relu and n.type == "Relu"
    with pytest.raises(RuntimeError, match="Failed to find Node name invalid"):
        g.find_node_by_name("invalid")
    with pytest.raises(TypeError, match="name must be a string"):
        g.find_node_by_name(1)  # type: ignore[arg-type]


def test_graph_all_nodes_include_subgraph_nodes() -> None:
    parent = air.Graph("parent")
    c = parent.add_input("c", air.TensorDesc([], air.bool_))
    then = air.Graph("then_branch")
    then.add_input("t", air.TensorDesc([1], air.float32))
    node = parent.add_op("PartitionedCall", [[c]], outputs=0)
    parent.add_subgraph(then, parent=node, slot="f")
    g = Graph.from_air(parent)
    assert "t" in [n.name for n in g.get_all_nodes()]
    assert "t" not in [n.name for n in g.get_direct_nodes()]
    subs = g.get_all_subgraphs()
    assert [s.name for s in subs] == ["then_branch"]
    assert [n.name for n in subs[0].get_direct_nodes()] == ["t"]
    found = g.get_subgraph("then_branch")
    assert found is not None and found.name == "then_branch"
    assert g.get_subgraph("nope") is None
    with pytest.raises(TypeError, match="name must be a string"):
        g.get_subgraph(1)  # type: ignore[arg-type]
    g.remove_subgraph("then_branch")
    assert g.get_all_subgraphs() == []
    with pytest.raises(RuntimeError, match="Failed to remove subgraph 'nope'"):
        g.remove_subgraph("nope")


def test_add_subgraph_needs_a_parent_node() -> None:
    g = Graph("g")
    with pytest.raises(TypeError, match="subgraph must be a Graph"):
        g.add_subgraph("s")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="needs a parent node"):
        g.add_subgraph(Graph("s"))


def test_remove_node_removes_its_edges() -> None:
    g, add, relu, _x = _add_relu()
    before = len(g.get_all_nodes())
    g.remove_node(g.find_node_by_name(add))
    assert len(g.get_all_nodes()) == before - 1
    assert g.find_node_by_name(relu).air.inputs == [None]
    with pytest.raises(TypeError, match="node must be a Node"):
        g.remove_node("x")  # type: ignore[arg-type]
    other, *_ = _add_relu()
    with pytest.raises(RuntimeError, match="Failed to remove Node"):
        g.remove_node(other.find_node_by_name(relu))
    assert len(other.get_all_nodes()) == before


def test_data_and_control_edges() -> None:
    g, add, relu, x = _add_relu()
    a, r, d = g.find_node_by_name(add), g.find_node_by_name(relu), g.find_node_by_name(x)
    g.remove_edge(a, 0, r, 0)
    assert r.air.inputs == [None]
    g.add_data_edge(a, 0, r, 0)
    assert r.get_in_data_nodes_and_port_indexes(0) == (a, 0)
    g.add_control_edge(d, r)
    assert r.get_in_control_nodes() == [d] and d.get_out_control_nodes() == [r]
    g.remove_edge(d, -1, r, -1)
    assert r.get_in_control_nodes() == []
    with pytest.raises(RuntimeError, match="Failed to remove Edge"):
        g.remove_edge(d, -1, r, -1)  # no such edge
    with pytest.raises(RuntimeError, match="Failed to add DataEdge"):
        g.add_data_edge(a, 5, r, 0)  # no output 5
    assert r.get_in_data_nodes_and_port_indexes(0) == (a, 0)  # unchanged
    with pytest.raises(TypeError, match="src_node must be a Node"):
        g.add_data_edge(None, 0, r, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="src_port_index must be an integer"):
        g.add_data_edge(a, "0", r, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dst_node must be a Node"):
        g.remove_edge(a, 0, None, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dst_port_index must be an integer"):
        g.remove_edge(a, 0, r, 0.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dst_node must be a Node"):
        g.add_control_edge(a, 1)  # type: ignore[arg-type]


def test_air_round_trip(tmp_path: Path) -> None:
    g, add, relu, x = _add_relu()
    g.set_attr("note", "kept")
    p = str(tmp_path / "g.air")
    g.save_to_air(p)
    # The bytes are a GE ModelDef.
    model = ge_ir_pb2.ModelDef()
    model.ParseFromString(Path(p).read_bytes())
    assert model.graph[0].name == "g"
    assert [op.type for op in model.graph[0].op] == ["Data", "Data", "Add", "Relu", "NetOutput"]
    # Our reader reads them back, through GE's call and ascendir's own.
    h = Graph("empty")
    h.load_from_air(p)
    assert h.name == "g" and [n.name for n in h.get_all_nodes()] == [
        n.name for n in g.get_all_nodes()]
    assert h.get_attr("note") == "kept"
    assert air.Graph.from_bytes(Path(p).read_bytes()).op_type_counts() == g.air.op_type_counts()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = air.evaluate(h.air, {x: a, "input_1": a})
    np.testing.assert_allclose(next(iter(out.values())), np.maximum(a + a, 0))


def test_air_errors_leave_the_graph(tmp_path: Path) -> None:
    g, *_ = _add_relu()
    with pytest.raises(TypeError, match="file_path must be a string"):
        g.save_to_air(tmp_path)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to save graph to AIR format"):
        g.save_to_air(str(tmp_path / "no-dir" / "g.air"))
    with pytest.raises(TypeError, match="file_path must be a string"):
        g.load_from_air(None)  # type: ignore[arg-type]
    bad = tmp_path / "bad.air"
    bad.write_bytes(b"\xff\xff\xff not a model")
    before = g.air
    with pytest.raises(RuntimeError, match="Failed to load graph from AIR format"):
        g.load_from_air(str(bad))
    with pytest.raises(RuntimeError, match="Failed to load graph from AIR format"):
        g.load_from_air(str(tmp_path / "missing.air"))
    assert g.air is before and len(g.get_all_nodes()) == 5


def test_dump_to_stream_forms() -> None:
    g, add, relu, x = _add_relu()
    readable = g.dump_to_stream()
    assert readable == str(g) and readable.startswith(f'graph("{g.name}"):\n')
    assert f"%{relu} : [#users=1] = Node[type=Relu]" in readable
    txt = g.dump_to_stream(DumpFormat.kTxt)
    from google.protobuf import text_format

    model = text_format.Parse(txt, ge_ir_pb2.ModelDef())
    assert [op.name for op in model.graph[0].op][2:4] == [add, relu]
    onnx = g.dump_to_stream(DumpFormat.kOnnx)
    assert 'op_type: "ge:Relu"' in onnx and f'input: "{add}:0"' in onnx
    assert onnx.startswith("ir_version: 6\n") and "attribute" not in onnx
    with pytest.raises(TypeError, match="Format must be in"):
        g.dump_to_stream(2)  # type: ignore[arg-type]


def test_dump_to_file_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g, *_ = _add_relu()
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path))
    g.dump_to_file(DumpFormat.kOnnx, suffix="xxxx")
    g.dump_to_file()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2
    assert any(n.startswith("ge_onnx_") and n.endswith("_g_0_xxxx.pbtxt") for n in names)
    assert any(n.startswith("ge_readable_") and n.endswith("_g_0.txt") for n in names)
    with pytest.raises(TypeError, match="Suffix must be a string"):
        g.dump_to_file(DumpFormat.kTxt, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Format must be in"):
        g.dump_to_file("kTxt")  # type: ignore[arg-type]
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="Failed to dump graph"):
        g.dump_to_file()


# -- Node ---------------------------------------------------------------------------------


def test_node_is_not_built_directly_nor_copied() -> None:
    with pytest.raises(RuntimeError, match="Node objects should not be created directly"):
        Node()
    with pytest.raises(ValueError, match="Node handle cannot be None"):
        Node._create_from(None)
    g, add, *_ = _add_relu()
    n = g.find_node_by_name(add)
    with pytest.raises(RuntimeError, match="Node does not support copy"):
        copy.copy(n)
    with pytest.raises(RuntimeError, match="Node does not support deepcopy"):
        copy.deepcopy(n)


def test_node_neighbours() -> None:
    g, add, relu, x = _add_relu()
    a, r = g.find_node_by_name(add), g.find_node_by_name(relu)
    assert a.get_in_data_nodes_and_port_indexes(1) == (g.find_node_by_name("input_1"), 0)
    assert a.get_out_data_nodes_and_port_indexes(0) == [(r, 0)]
    assert a.get_inputs_size() == 2 and a.get_outputs_size() == 1
    with pytest.raises(TypeError, match="Input index must be an integer"):
        a.get_in_data_nodes_and_port_indexes("0")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to get input data node for index 7"):
        a.get_in_data_nodes_and_port_indexes(7)
    with pytest.raises(TypeError, match="Output index must be an integer"):
        a.get_out_data_nodes_and_port_indexes(None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to get output data node for index 3"):
        a.get_out_data_nodes_and_port_indexes(3)
    g.remove_edge(a, 0, r, 0)
    with pytest.raises(RuntimeError, match="not linked"):
        r.get_in_data_nodes_and_port_indexes(0)


def test_inputs_size_counts_valid_inputs() -> None:
    # GE's GetInputsSize leaves out optional inputs that are not set.
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([1, 2, 4, 4], air.float32))
    w = g.add_const("w", np.ones((3, 2, 1, 1), np.float32))
    conv = g.add_op("Conv2D", [x, w], attrs={"strides": [1, 1, 1, 1], "data_format": "NCHW"})
    assert Node.from_air(conv).get_inputs_size() == 2


def test_node_attrs() -> None:
    g, add, *_ = _add_relu()
    n = g.find_node_by_name(add)
    n.set_attr("s", "v")
    n.set_attr("t", Tensor([1, 2, 3, 4], data_type=DataType.DT_INT32, shape=[2, 2]))
    assert n.has_attr("s") and not n.has_attr("nope")
    assert n.get_attr("s") == "v"
    t = n.get_attr("t")
    assert isinstance(t, Tensor) and t.get_data() == [[1, 2], [3, 4]]
    assert n.air.attrs.kind("t") == air.AttrKind.TENSOR
    with pytest.raises(RuntimeError, match=f"Failed to get attribute 'nope' from Node {add}"):
        n.get_attr("nope")
    with pytest.raises(TypeError, match="attr_name must be a string"):
        n.has_attr(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Attribute key must be a string"):
        n.set_attr(1, 1)  # type: ignore[arg-type]


def test_const_value_reads_as_tensor() -> None:
    b = GraphBuilder("g")
    c = b.create_const_float([0.0, 0.0], shape=[2])
    g = b.build_and_reset([c])
    node = g.find_node_by_name(c.name)
    assert node.type == "Const"
    value = node.get_attr("value")
    assert isinstance(value, Tensor) and value.get_data() == [0.0, 0.0]
    assert value.get_data_type() == DataType.DT_FLOAT


def test_port_descs_are_copies_until_updated() -> None:
    g, add, *_ = _add_relu()
    n = g.find_node_by_name(add)
    d = n.get_input_desc(0)
    assert isinstance(d, TensorDesc) and d.shape == [2, 3] and d.data_type == DataType.DT_FLOAT
    d.set_shape([6])
    assert n.get_input_desc(0).shape == [2, 3]
    n.update_input_desc(0, d)
    assert n.get_input_desc(0).shape == [6]
    o = n.get_output_desc(0).set_format(Format.FORMAT_NCHW)
    n.update_output_desc(0, o)
    assert n.get_output_desc(0).format == Format.FORMAT_NCHW
    o.set_format(Format.FORMAT_NHWC)  # the node keeps its own copy
    assert n.get_output_desc(0).format == Format.FORMAT_NCHW
    with pytest.raises(TypeError, match="Input index must be an integer"):
        n.get_input_desc("0")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to get input desc for index 9"):
        n.get_input_desc(9)
    with pytest.raises(RuntimeError, match="Failed to get output desc for index 1"):
        n.get_output_desc(1)
    with pytest.raises(TypeError, match="tensor_desc must be a TensorDesc"):
        n.update_input_desc(0, air.TensorDesc([1], air.float32))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Failed to get output desc for index 4"):
        n.update_output_desc(4, o)


def test_port_attrs() -> None:
    g, add, *_ = _add_relu()
    n = g.find_node_by_name(add)
    n.set_input_attr("in_a", 1, 5)
    n.set_output_attr("out_a", 0, [1.0, 2.0])
    assert n.get_input_attr("in_a", 1) == 5 and n.get_output_attr("out_a", 0) == [1.0, 2.0]
    assert n.air.op_desc.input_desc(1).attrs["in_a"] == 5
    with pytest.raises(RuntimeError, match="input attribute 'in_a' for index 3"):
        n.get_input_attr("in_a", 3)
    with pytest.raises(RuntimeError, match="Failed to get attribute 'zz'"):
        n.get_output_attr("zz", 0)
    with pytest.raises(TypeError, match="Attribute name must be a string"):
        n.set_input_attr(0, 0, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Output index must be an integer"):
        n.set_output_attr("a", "0", 1)  # type: ignore[arg-type]
