"""GE-style construction script, registry, dtype inference and AscGraphDef serialization."""

from __future__ import annotations

import pytest

from ascendir import asc
from ascendir.errors import DecodeError, InferenceError, InvalidArgumentError, RegistryError


def construct_graph() -> asc.HintGraph:
    graph = asc.HintGraph("LoadAbsStore")
    s0 = graph.create_size("s0")
    s1 = graph.create_size("s1")
    s2 = graph.create_size("s2")

    z0 = graph.create_axis("z0", s0 + 100)
    assert z0.size.expression == "(100 + s0)"
    z1 = graph.create_axis("z1", s1)
    z2 = graph.create_axis("z2", s2)
    buf_z0 = graph.create_axis("buf_z0", 100)
    buf_z1 = graph.create_axis("buf_z1", s1)
    buf_z2 = graph.create_axis("buf_z2", s2)

    arg3_1 = asc.ops.Data("arg3_1", graph)
    arg3_1.attr.ir_attr.index = 0
    arg3_1.attr.sched.axis = [z0, z1, z2]
    arg3_1.y.dtype = asc.dtypes.float16
    arg3_1.y.axis = [z0, z1, z2]
    arg3_1.y.size = [100 + s0, s1, s2]
    arg3_1.y.strides = [s1 * s2, s2, asc.SizeExpr(1)]

    load = asc.ops.Load("load")
    with pytest.raises(InvalidArgumentError) as e:
        load.attr.ir_attr.offset = "3"
    assert e.value.args[0] == "Only support type of SizeExpr or long"
    offset_of_0 = asc.SizeExpr(0)
    load.attr.ir_attr.offset = offset_of_0
    assert load.attr.ir_attr.offset.expression == "0"
    load.x = arg3_1
    load.attr.sched.axis = [z0, z1, z2]
    load.y.dtype = asc.dtypes.float16
    load.y.axis = [z0, z1, z2]
    load.y.size = [100 + s0, s1, s2]
    load.y.strides = [s1 * s2, s2, asc.SizeExpr(1)]

    abs_op = asc.ops.Abs("abs")
    abs_op.x = load
    abs_op.attr.sched.axis = [z0, z1, z2]
    abs_op.y.dtype = asc.dtypes.float16
    abs_op.y.axis = [z0, z1, z2]
    abs_op.y.size = [100 + s0, s1, s2]
    abs_op.y.strides = [s1 * s2, s2, asc.SizeExpr(1)]

    store = asc.ops.Store("store")
    store.attr.ir_attr.offset = offset_of_0 + 1
    assert store.attr.ir_attr.offset.expression == "1"
    store.x = abs_op
    store.attr.sched.axis = [z0, z1, z2]
    store.y.dtype = asc.dtypes.float16
    store.y.axis = [z0, z1, z2]
    store.y.size = [100 + s0, s1, s2]
    store.y.strides = [s1 * s2, s2, asc.SizeExpr(1)]

    buf1 = asc.ops.Output("buf1", graph)
    buf1.attr.ir_attr.index = 0
    assert buf1.attr.ir_attr.index == 0
    buf1.x = store
    buf1.attr.sched.axis = [z0, z1, z2]
    buf1.y.dtype = asc.dtypes.float16
    buf1.y.axis = [z0, z1, z2]
    buf1.y.size = [100 + s0, s1, s2]
    buf1.y.strides = [s1 * s2, s2, asc.SizeExpr(1)]
    graph.set_axis_map({z0: [buf_z0], z1: [buf_z1], z2: [buf_z2]})
    assert arg3_1.y.axis == [z0.id, z1.id, z2.id]
    assert arg3_1.y.size == [s0 + 100, s1, 512 * 0 + s2]
    return graph


NODE_BLOCK = (
    "  load: Load (1)\n"
    "    .ir_attr =  {.offset = s: \"0\"\n"
    "    }\n"
    "    .axis = {z0, z1, z2, }\n"
    "    .exec_condition = no_cache\n"
    "    .api:\n"
    "      .compute_type = load\n"
    "    .x = arg3_1.y\n"
    "    .y.dtype = float16\n"
    "    .y.axis = {z0, z1, z2, }\n"
    "    .y.repeats = {(100 + s0), s1, s2, }\n"
    "    .y.strides = {(s1 * s2), s2, 1, }\n"
    "    .y.vectorized_axis = {}\n"
    "    .y.vectorized_strides = {}\n"
)


def test_ge_construction_script_dump() -> None:
    graph = construct_graph()
    text = asc.utils.debug_str(graph)
    assert text.startswith(
        "Graph: LoadAbsStore\nSizes:\n  s0: VAR\n  s1: VAR\n  s2: VAR\nAxis:\n"
        "  z0(0) : ORIGINAL, size:(100 + s0), \n"
        "  z1(1) : ORIGINAL, size:s1, \n"
        "  z2(2) : ORIGINAL, size:s2, \n"
        "  buf_z0(3) : ORIGINAL, size:100, \n"
    )
    assert NODE_BLOCK in text
    assert "  arg3_1: Data (0)\n    .ir_attr =  {.index = i: 0\n    }\n" in text
    assert "  buf1: Output (4)\n" in text and "    .x = store.y\n" in text
    assert [n.name for n in graph.nodes] == ["arg3_1", "load", "abs", "store", "buf1"]
    graph.validate()
    graph.validate_hint_conventions()
    graph.infer_dtypes()
    verbose = graph.debug_str(verbose=True)
    assert "    .loop_axis = -1\n" in verbose and "      .unit = MTE2\n" in verbose


def test_serialization_round_trip() -> None:
    graph = construct_graph()
    data = graph.to_bytes()
    back = asc.AscGraph.from_bytes(data)
    assert isinstance(back, asc.HintGraph)
    assert back.debug_str(True) == graph.debug_str(True)
    assert back.to_bytes() == data
    assert back.node("load").attr.ir_attr.offset == 0
    with pytest.raises(DecodeError):
        asc.AscGraph.from_bytes(b"\xff\xff\xff")


def test_serialized_layout_matches_ge_proto() -> None:
    # Field numbers are fixed by proto/ascendc_ir.proto; check a few raw tags.
    graph = construct_graph()
    data = graph.to_bytes()
    assert data[0] == (1 << 3) | 2  # asc_graph_attr = 1, length-delimited
    assert graph.name.encode() in data


def test_infer_dtypes_messages() -> None:
    graph = asc.HintGraph("test")
    x = asc.ops.Data("x", graph)
    x.y.dtype = asc.dtypes.int8
    x.attr.ir_attr.index = 0
    cast = asc.ops.Cast("cast")
    cast.y.dtype = asc.dtypes.int4
    cast.x = x
    cast.attr.api.compute_type = "elemwise"
    with pytest.raises(InferenceError) as info:
        graph.infer_dtypes()
    assert info.value.args[0] == (
        "Check dtype failed for cast Cast; input_dtypes: [DT_INT8], output_dytpes: [DT_INT4]"
    )
    cast.y.dtype = asc.dtypes.float16
    graph.infer_dtypes()

    g2 = asc.HintGraph("test")
    x = asc.ops.Data("x", g2)
    x.y.dtype = asc.dtypes.int64
    load = asc.ops.Load("load")
    load.x = x
    with pytest.raises(InferenceError) as info:
        g2.infer_dtypes()
    assert info.value.args[0] == (
        "Infer dtype failed for load Load; input_dtypes: [DT_INT64] is not supportted now"
    )
    x.y.dtype = asc.dtypes.float16
    ab = asc.ops.Abs("abs")
    ab.x = load
    g2.infer_dtypes()
    assert load.y.dtype == asc.dtypes.float16 and ab.y.dtype == asc.dtypes.float16
    cmp = asc.ops.Gt("gt")
    cmp.x1 = ab
    cmp.x2 = load
    g2.infer_dtypes()
    assert cmp.y.dtype is None or cmp.y.dtype == asc.dtypes.undefined


def test_registry() -> None:
    ops = asc.ops.registered_ops()
    for name in ["Data", "Scalar", "IndexExpr", "Output", "Workspace", "Load", "Store", "Gather",
                 "Broadcast", "Abs", "Cast", "Add", "Axpy", "Where", "Sum", "ArgMax",
                 "Transpose", "Concat", "Split"]:
        assert name in ops
    info = asc._casc.op_info("Abs")
    assert info["inplace"] is True and info["compute_type"] == "elewise"
    assert info["tmp_buffer"] == 8192
    assert asc._casc.op_info("Relu")["tmp_buffer"] is None
    cls = (asc.REG_ASC_IR("MyScale").input("x").output("y")
           .dtypes("T", [asc.dtypes.float16]).attr("k", "float", 2.0)
           .compute_type("elewise").register())
    g = asc.HintGraph("g")
    n = cls("s", g)
    assert isinstance(n, asc.ops.MyScale) and n.attr.ir_attr.k == 2.0
    with pytest.raises(RegistryError, match="already registered"):
        asc.REG_ASC_IR("MyScale").input("x").output("y").register()
    with pytest.raises(RegistryError):
        asc.REG_ASC_IR("Bad").input("x").input("x").output("y").register()
    with pytest.raises(RegistryError):
        asc.REG_ASC_IR("Bad2").output("y").attr("a", "int", "no").register()
    with pytest.raises(RegistryError):
        asc.REG_ASC_IR("Bad3").output("y").compute_type("nonsense").register()
    with pytest.raises(AttributeError):
        _ = asc.ops.NoSuchOp


def test_bytes_parse_with_protoc_generated_classes(tmp_path) -> None:  # noqa: ANN001
    """An independent protobuf implementation reads our bytes with the field numbers of
    proto/ascendc_ir.proto."""
    protoc = pytest.importorskip("grpc_tools.protoc")
    import importlib
    import sys
    from pathlib import Path

    proto_dir = Path(__file__).resolve().parents[1] / "proto"
    rc = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={tmp_path}",
                      str(proto_dir / "ascendc_ir.proto")])
    assert rc == 0
    sys.path.insert(0, str(tmp_path))
    try:
        pb = importlib.import_module("ascendc_ir_pb2")
    finally:
        sys.path.remove(str(tmp_path))
    graph = construct_graph()
    msg = pb.AscGraphDef()
    msg.ParseFromString(graph.to_bytes())
    assert msg.graph_name == "LoadAbsStore"
    assert list(msg.asc_graph_attr.size_var) == ["s0", "s1", "s2"]
    assert msg.asc_graph_attr.axis[0].size == "(100 + s0)"
    load = msg.asc_node[1]
    assert load.attr.name == "load" and load.attr.type == "Load"
    assert load.input_src[0].src_node_name == "arg3_1"
    assert list(load.attr.sched.axis) == [0, 1, 2]
    assert load.attr.api.compute_type == 0
    assert load.attr.ir_attr_def.attr["offset"].s == b"0"
    assert list(load.outputs[0].attr.strides) == ["(s1 * s2)", "s2", "1"]
    assert load.outputs[0].attr.dtype == int(asc.dtypes.float16)
    # And back: bytes written by protobuf decode into the same graph.
    again = asc.AscGraph.from_bytes(msg.SerializeToString())
    assert again.debug_str(True) == graph.debug_str(True)
