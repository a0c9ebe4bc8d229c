"""Fields that ``ge_ir.proto`` does not define (written by a newer GE, or by another tool) survive
decode → graph → encode on ModelDef, GraphDef, OpDef, TensorDescriptor and AttrDef."""

from __future__ import annotations

import pytest

import ascendir as air
from ascendir.serialization import Model

# protobuf is the optional extra ``proto``; with it, the generated module must import.
pytest.importorskip("google.protobuf")
from ascendir._proto import ge_ir_pb2 as pb2  # noqa: E402

unknown_fields = pytest.importorskip("google.protobuf.unknown_fields")

# (field number, wire type, raw bytes of the field as written)
U_MODEL = (102, 0, b"\xb0\x06\x2a")  # varint 42
U_GRAPH = (101, 2, b"\xaa\x06\x02gg")  # bytes "gg"
U_OP = (100, 5, b"\xa5\x06\x01\x02\x03\x04")  # fixed32
U_DESC = (99, 1, b"\x99\x06" + bytes(range(1, 9)))  # fixed64
U_ATTR = (50, 2, b"\x92\x03\x02zz")  # bytes "zz" in an AttrDef


def _unknown(msg: object) -> list[tuple[int, int]]:
    """(field number, wire type) of the unknown fields of ``msg``."""
    return [(f.field_number, f.wire_type) for f in unknown_fields.UnknownFieldSet(msg)]


def _model() -> bytes:
    """A two-op model whose messages carry fields that ge_ir.proto does not define."""
    m = pb2.ModelDef(name="m", version=1)
    g = m.graph.add(name="g")
    g.input.append("x:0")
    g.output.append("r:0")
    td = pb2.TensorDescriptor(dtype=pb2.DT_FLOAT, layout="ND")
    td.shape.dim.extend([2, 3])
    td_bytes = td.SerializeToString() + U_DESC[2]
    x = g.op.add(name="x", type="Data")
    x.output_desc.add().MergeFromString(td_bytes)
    x.MergeFromString(U_OP[2])
    r = g.op.add(name="r", type="Relu")
    r.input.append("x:0")
    r.input_desc.add().MergeFromString(td_bytes)
    r.output_desc.add().MergeFromString(td_bytes)
    r.attr["k"].MergeFromString(pb2.AttrDef(i=5).SerializeToString() + U_ATTR[2])
    g.attr["ga"].MergeFromString(pb2.AttrDef(s=b"v").SerializeToString() + U_ATTR[2])
    g.MergeFromString(U_GRAPH[2])
    m.attr["ma"].MergeFromString(pb2.AttrDef(b=True).SerializeToString() + U_ATTR[2])
    m.MergeFromString(U_MODEL[2])
    return m.SerializeToString()


def _check_graph(g: object) -> None:
    assert _unknown(g) == [U_GRAPH[:2]]
    assert _unknown(g.attr["ga"]) == [U_ATTR[:2]]
    assert g.attr["ga"].s == b"v"
    ops = {op.name: op for op in g.op}
    assert _unknown(ops["x"]) == [U_OP[:2]]
    assert _unknown(ops["r"]) == []
    assert _unknown(ops["r"].attr["k"]) == [U_ATTR[:2]]
    assert ops["r"].attr["k"].i == 5
    for op in ops.values():
        for d in list(op.input_desc) + list(op.output_desc):
            assert _unknown(d) == [U_DESC[:2]]
            assert list(d.shape.dim) == [2, 3]


def test_unknown_fields_survive_a_model_round_trip() -> None:
    data = _model()
    out = Model.from_bytes(data).to_bytes()
    back = pb2.ModelDef.FromString(out)
    assert _unknown(back) == [U_MODEL[:2]]
    assert _unknown(back.attr["ma"]) == [U_ATTR[:2]]
    _check_graph(back.graph[0])
    # Stable on a second round trip.
    assert Model.from_bytes(out).to_bytes() == out


def test_unknown_fields_survive_a_graph_round_trip() -> None:
    g = air.Graph.from_bytes(_model())
    assert [n.name for n in g.nodes] == ["x", "r"]
    back = pb2.ModelDef.FromString(g.to_bytes())
    _check_graph(back.graph[0])
    again = air.Graph.from_bytes(g.to_bytes())
    assert again.to_bytes() == g.to_bytes()


def test_unknown_fields_do_not_change_the_graph() -> None:
    clean = pb2.ModelDef.FromString(_model())
    for msg in [clean, clean.graph[0], *clean.graph[0].op]:
        msg.DiscardUnknownFields()
    a = air.Graph.from_bytes(_model())
    b = air.Graph.from_bytes(clean.SerializeToString())
    assert [(n.name, n.type) for n in a.nodes] == [(n.name, n.type) for n in b.nodes]
    assert a.to_text().count("op {") == b.to_text().count("op {")
