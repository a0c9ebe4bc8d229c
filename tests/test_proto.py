"""GE ModelDef interop: binary, text and OM round trips, protobuf cross-checks, errors."""

from __future__ import annotations

import importlib.util
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import ascendir as air
from ascendir import _core
from ascendir.errors import DecodeError
from ascendir.serialization import Model, load_model
from support.ge_data import dump_params, need_dump, need_file

# protobuf is the optional extra ``proto``; with it, the generated module must import.
pytest.importorskip("google.protobuf")
from ascendir._proto import ge_ir_pb2 as pb2  # noqa: E402

text_format = pytest.importorskip("google.protobuf.text_format")


def _op(g: air.Graph, name: str, op_type: str, inputs: list, n_out: int = 1) -> air.Node:
    """A node built from an OpDesc (independent of the operator registry)."""
    td = air.TensorDesc([1, 64], air.float32)
    od = air.OpDesc(name, op_type)
    for i in range(len(inputs)):
        od.add_input(f"x{i}", td)
    for i in range(n_out):
        od.add_output(f"y{i}", td)
    node = g.add_node(od)
    for i, src in enumerate(inputs):
        src.out_data_anchor(0).link_to(node.in_data_anchor(i))
    return node


def small_graph() -> air.Graph:
    g = air.Graph("small")
    td = air.TensorDesc([1, 64], air.float32)
    x = g.add_input("x", td)
    y = g.add_input("y", td)
    a = _op(g, "add", "Add", [x, y])
    a.attrs["alpha"] = 1.5
    a.attrs["tags"] = ["a", "b"]
    a.attrs["n"] = 3
    r = _op(g, "relu", "Relu", [a])
    s = _op(g, "relu2", "Relu", [a])
    s.out_control_anchor.link_to(r.in_control_anchor)
    g.attrs["note"] = "hello"
    return g


def test_bytes_round_trip_and_stability() -> None:
    g = small_graph()
    data = g.to_bytes()
    g2 = air.Graph.from_bytes(data)
    assert g2.name == "small"
    assert [n.name for n in g2.nodes] == ["x", "y", "add", "relu", "relu2"]
    assert g2.num_links == g.num_links
    assert g2.dump() == g.dump()
    assert g2.to_bytes() == data
    assert g2.attrs["note"] == "hello"
    assert g2.find("add").attrs["tags"] == ["a", "b"]


def test_repeated_decodes_of_a_large_graph_agree_and_free_cleanly() -> None:
    """Graphs of 128 nodes or more are freed on a pool thread, and small decodes switch
    between running alone and with helper threads as the machine allows: neither may change
    what a decode gives."""
    g = air.Graph("chain")
    prev = g.add_input("x", air.TensorDesc([1, 64], air.float32))
    for i in range(300):
        prev = _op(g, f"relu{i}", "Relu", [prev])
        prev.attrs["index"] = i
    data = g.to_bytes()
    want = g.dump()
    node = None
    for _ in range(40):
        h = air.Graph.from_bytes(data)
        assert h.dump() == want
        node = h.find("relu299")
        del h
    # A node handle keeps its graph alive after the graph object is gone.
    assert node is not None and node.attrs["index"] == 299


def test_text_round_trip() -> None:
    g = small_graph()
    text = g.to_text()
    assert text.startswith('name: "small"\n')
    g2 = air.Graph.from_text(text)
    assert g2.to_bytes() == g.to_bytes()


def test_pickle() -> None:
    g = small_graph()
    g2 = pickle.loads(pickle.dumps(g))
    assert g2.dump() == g.dump()


def test_proto_message_round_trip() -> None:
    g = small_graph()
    msg = g.to_proto()
    assert isinstance(msg, pb2.ModelDef)
    assert msg.graph[0].op[2].name == "add"
    assert list(msg.graph[0].op[3].input) == ["add:0", "relu2:-1"]
    assert msg.attr["target_type"].s == b"MINI"
    # Our bytes parse with python protobuf, and its bytes decode with ours. (upb orders map
    # entries differently from C++/GE, so compare decoded results, not python's bytes.)
    assert air.Graph.from_bytes(msg.SerializeToString()).to_bytes() == g.to_bytes()
    assert pb2.ModelDef.FromString(g.to_bytes()) == msg
    g2 = air.Graph.from_proto(msg)
    assert g2.to_bytes() == g.to_bytes()


def test_independently_built_message_decodes() -> None:
    m = pb2.ModelDef(name="m", version=1)
    gd = m.graph.add(name="g")
    a = gd.op.add(name="a", type="Data", id=0, has_out_attr=True)
    a.output_desc.add(dtype=pb2.DT_FLOAT16, layout="NCHW").shape.dim.extend([1, 3])
    b = gd.op.add(name="b", type="Relu", id=1, has_out_attr=True)
    b.input.extend(["a:0", "a:-1"])
    b.input_desc.add(dtype=pb2.DT_INT32, layout="ND")
    b.output_desc.add(dtype=pb2.DT_BF16, layout="FRACTAL_Z:16")
    b.attr["k"].list.i.extend([1, 2])
    b.attr["k"].list.val_type = pb2.AttrDef.ListValue.VT_LIST_INT
    b.attr["dt"].dt = 1  # ge::DataType FLOAT16 (API numbering)
    g = air.Graph.from_proto(m)
    assert g.num_links == 2
    node_b = g.find("b")
    assert node_b.attrs["k"] == [1, 2]
    assert node_b.attrs["dt"] == air.DataType.FLOAT16
    desc = node_b.op_desc.output_desc(0)
    assert desc.dtype == air.DataType.BF16
    assert air.format_serial_string(desc.format) == "FRACTAL_Z:16"
    # Encoding back: python protobuf reads every field we wrote.
    back = pb2.ModelDef.FromString(g.to_bytes())
    ob = back.graph[0].op[1]
    assert list(ob.input) == ["a:0", "a:-1"]
    assert ob.output_desc[0].dtype == pb2.DT_BF16
    assert ob.output_desc[0].attr["format_for_int"].i == 4 + 16 * 256


def test_shipped_pb2_matches_the_proto_file(tmp_path: Path) -> None:
    if importlib.util.find_spec("grpc_tools") is None:
        pytest.skip("grpcio-tools is not installed")
    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{root / 'proto'}",
            f"--descriptor_set_out={tmp_path / 'd.bin'}",
            str(root / "proto" / "ge_ir.proto"),
        ],
        check=True,
    )
    from google.protobuf import descriptor_pb2

    compiled = descriptor_pb2.FileDescriptorSet.FromString((tmp_path / "d.bin").read_bytes())
    shipped = descriptor_pb2.FileDescriptorProto()
    pb2.DESCRIPTOR.CopyToProto(shipped)
    fresh = compiled.file[0]
    assert [m.name for m in fresh.message_type] == [m.name for m in shipped.message_type]
    for a, b in zip(fresh.message_type, shipped.message_type, strict=True):
        fields_a = [(f.name, f.number, f.type) for f in a.field]
        assert fields_a == [(f.name, f.number, f.type) for f in b.field]


def test_decode_errors_carry_offset_or_path() -> None:
    with pytest.raises(DecodeError) as e:
        air.Graph.from_bytes(b"\x3a\x05\x0a")
    assert e.value.offset == 1
    assert e.value.path == "ModelDef.graph[0]"
    data = small_graph().to_bytes()
    failed = 0
    for cut in range(0, len(data), 7):
        try:
            g = air.Graph.from_bytes(data[:cut])
        except DecodeError as err:
            assert err.offset is not None or err.path is not None
            failed += 1
        else:
            # A prefix that happens to end on a field boundary decodes to a valid graph.
            assert g.check_invariants() == []
    assert failed > 0
    m = small_graph().to_proto()
    m.graph[0].op[3].input[0] = "nope:0"
    with pytest.raises(DecodeError) as e:
        air.Graph.from_proto(m)
    assert e.value.path == "graph[0].op[3](relu).input[0]"
    assert "unknown edge source 'nope'" in str(e.value)
    m = small_graph().to_proto()
    m.graph[0].op[1].name = "x"
    with pytest.raises(DecodeError, match="already has a node named 'x'"):
        air.Graph.from_proto(m)
    with pytest.raises(DecodeError) as e:
        air.Graph.from_text('name: "m"\ngraph { bogus: 1 }\n')
    assert e.value.offset == 18


def test_model_with_several_graphs(tmp_path: Path) -> None:
    g1 = small_graph()
    g2 = air.Graph("second")
    g2.add_input("z", air.TensorDesc([2], air.int32))
    m = Model("net", [g1, g2], version=3, custom_version="1.0", attrs={"extra": 7})
    assert m.attrs["target_type"] == "MINI"
    assert m.attrs["extra"] == 7
    for suffix in (".pb", ".txt", ".pbtxt", ".om"):
        path = tmp_path / f"model{suffix}"
        air.save(m, path)
        m2 = load_model(path)
        assert m2.name == "net"
        assert m2.version == 3
        assert m2.custom_version == "1.0"
        assert [g.name for g in m2.graphs] == ["small", "second"]
        assert m2.attrs["extra"] == 7
        assert m2.to_bytes() == m.to_bytes()
        assert air.load(path).dump() == g1.dump()
    with pytest.raises(ValueError, match="suffix"):
        air.save(g1, tmp_path / "model.xyz")
    air.save(g1, tmp_path / "g.bin", format="pb")
    assert air.load(tmp_path / "g.bin").to_bytes() == g1.to_bytes()


@pytest.mark.parametrize("path", dump_params())
def test_real_dump_cross_check(path: Path | None) -> None:
    path = need_dump(path)
    text = path.read_text()
    ref = text_format.Parse(text, pb2.ModelDef())
    ours = pb2.ModelDef.FromString(_core._text_to_bytes(text))
    assert ours == ref  # our text parser and wire encoding agree with python protobuf
    assert _core._bytes_to_text(ref.SerializeToString()) == text  # GE's layout, byte for byte
    g = air.load(path)
    assert len(g.nodes) == len(ref.graph[0].op)
    links = sum(1 for op in ref.graph[0].op for s in op.input if s)
    assert g.num_links == links
    m = Model.from_bytes(ref.SerializeToString())
    again = m.to_proto()
    # Every op, edge string and attribute of the original survives (GE's reserved keys may
    # be added).
    for o, n in zip(ref.graph[0].op, again.graph[0].op, strict=True):
        assert list(o.input) == list(n.input)
        for k, v in o.attr.items():
            assert n.attr[k] == v, (o.name, k)
        descs_o = list(o.input_desc) + list(o.output_desc)
        descs_n = list(n.input_desc) + list(n.output_desc)
        for od, nd in zip(descs_o, descs_n, strict=True):
            for k, v in od.attr.items():
                assert nd.attr[k] == v
            assert (od.dtype, od.shape.dim, od.layout) == (nd.dtype, nd.shape.dim, nd.layout)
    for k, v in ref.attr.items():
        assert again.attr[k] == v
    # A second load/save is byte-stable.
    b1 = m.to_bytes()
    assert Model.from_bytes(b1).to_bytes() == b1


def test_real_om_loads(tmp_path: Path) -> None:
    m = load_model(need_file("root_model.om"))
    assert m.name == "test_graph_cache"
    g = m.graph
    assert {n.type for n in g.nodes} >= {"Data", "NetOutput"}
    path = tmp_path / "again.om"
    air.save(m, path)
    assert load_model(path).to_bytes() == m.to_bytes()
    with pytest.raises(DecodeError):
        Model.from_om(b"IMOD" + b"\0" * 10)
