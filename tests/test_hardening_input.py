"""Malformed input that used to be accepted silently or to fail with an untyped error: ONNX
graphs outside SSA form, missing external data, GE text with lone surrogates, non-UTF-8 GE
strings, malformed reserved `_ascendir_*` attributes. Each fails with a typed error that says
what and where, or is accepted losslessly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from support.hostile import field, vfield

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

# -- ONNX: one definition per value name ----------------------------------------------------------


def _model(nodes, inputs=("x",), initializers=(), outputs=("y",)) -> bytes:
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in outputs],
        initializer=list(initializers),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def test_onnx_two_nodes_producing_one_value_is_refused():
    data = _model([
        helper.make_node("Relu", ["x"], ["y"], name="a"),
        helper.make_node("Neg", ["x"], ["y"], name="b"),
    ])
    with pytest.raises(air.DuplicateNameError) as info:
        air.onnx.load(data)
    err = info.value
    assert isinstance(err, air.AscendIRError)
    assert "'y'" in str(err) and "node 'a' (Relu)" in str(err) and "node 'b' (Neg)" in str(err)
    assert (err.value, err.first, err.second, err.graph) == (
        "y", "node 'a' (Relu)", "node 'b' (Neg)", "g")


def test_onnx_node_output_shadowing_an_input_or_initializer_is_refused():
    shadow_input = _model([helper.make_node("Relu", ["x"], ["x"], name="r")], outputs=("x",))
    with pytest.raises(air.DuplicateNameError, match="'x' twice: graph input and node 'r'"):
        air.onnx.load(shadow_input)
    w = numpy_helper.from_array(np.ones(2, "float32"), "w")
    shadow_init = _model(
        [helper.make_node("Add", ["x", "w"], ["w"], name="add")], initializers=[w],
        outputs=("w",),
    )
    with pytest.raises(air.DuplicateNameError, match="'w' twice: initializer and node 'add'"):
        air.onnx.load(shadow_init)
    # An initializer giving a graph input its default is one value, not two.
    defaulted = _model([helper.make_node("Relu", ["w"], ["y"])], inputs=("w",), initializers=[w])
    assert [n.type for n in air.onnx.load(defaulted).nodes].count("Const") == 1


def test_onnx_body_output_shadowing_an_enclosing_value_is_refused():
    body = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["x"], name="inner")], "then", [],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["z"], name="other")], "else", [],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
    )
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=other)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]), cond],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(air.DuplicateNameError, match="enclosing graph and node 'inner'"):
        air.onnx.load(data.SerializeToString())


# -- ONNX: missing external data ------------------------------------------------------------------


def test_onnx_missing_external_data_file_is_a_typed_error(tmp_path: Path):
    t = TensorProto(name="weight", data_type=TensorProto.FLOAT, dims=[2])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "weights/w.bin"
    data = _model([helper.make_node("Relu", ["weight"], ["y"])], inputs=(), initializers=[t])
    path = tmp_path / "model.onnx"
    path.write_bytes(data)
    with pytest.raises(air.ExternalDataError) as info:
        air.onnx.load(path)
    err = info.value
    assert isinstance(err, OSError) and isinstance(err, air.AscendIRError)
    assert (err.tensor, err.location) == ("weight", "weights/w.bin")
    assert "tensor 'weight'" in str(err) and "'weights/w.bin'" in str(err)
    # The same from bytes with a base directory.
    with pytest.raises(air.ExternalDataError, match="weights/w.bin"):
        air.onnx.load(data, base_dir=tmp_path)


# -- ONNX: string attributes that are not UTF-8 ---------------------------------------------------


def test_onnx_string_attribute_that_is_not_utf8_keeps_its_bytes():
    node = helper.make_node("Foo", ["x"], ["y"], name="foo", domain="my.domain", tag=b"\xff\xfeA")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("my.domain", 1)])
    g = air.onnx.load(model.SerializeToString(), warn_unknown=False)
    attrs = g.node("foo").attrs
    assert attrs["tag"] == b"\xff\xfeA" and attrs.kind("tag") == air.AttrKind.STRING
    out = onnx.load_from_string(air.onnx.to_bytes(g))
    (foo,) = [n for n in out.graph.node if n.op_type == "Foo"]
    (tag,) = [a for a in foo.attribute if a.name == "tag"]
    assert tag.type == onnx.AttributeProto.STRING and tag.s == b"\xff\xfeA"


# -- GE: reserved `_ascendir_*` attributes with wrong contents ------------------------------------


def _attr(key: str, attr_def: bytes) -> bytes:
    return field(1, key) + field(2, attr_def)


def _list_s(*items: str) -> bytes:
    """An AttrDef holding a typed string list."""
    return field(1, b"".join(field(2, s) for s in items) + vfield(20, 1))


def _graph(*ops: bytes) -> bytes:
    return field(7, field(1, "g") + b"".join(field(6, op) for op in ops))


_DATA = field(1, "x") + field(2, "Data") + field(34, vfield(2, 1))


def _relu(inputs: bytes, ctrl_to_data: str) -> bytes:
    attr = field(10, _attr("_ascendir_ctrl_to_data", _list_s(ctrl_to_data)))
    return (field(1, "r") + field(2, "Relu") + inputs + field(33, vfield(2, 1))
            + field(34, vfield(2, 1)) + attr)


@pytest.mark.parametrize(("inputs", "entry", "why"), [
    (field(5, ""), "0:nosuch", "unknown source node 'nosuch'"),
    (field(5, ""), "5:x", "names input slot 5, but the op has 1 input descs"),
    (field(5, ""), "zero:x", "does not start with an input slot number"),
    (field(5, ""), "0x", "is not '<input slot>:<source node>'"),
    # Slot 0 is linked by a data edge: the entry would be dropped.
    (field(5, "x:0"), "0:x", "not an unconnected input"),
])
def test_malformed_ctrl_to_data_entry_is_refused(inputs: bytes, entry: str, why: str):
    with pytest.raises(air.DecodeError, match=why) as info:
        air.Model.from_bytes(_graph(_DATA, _relu(inputs, entry)))
    assert "op[1](r)" in info.value.path
    assert 'attr["_ascendir_ctrl_to_data"][0]' in info.value.path
    # The well-formed entry links the control output of x to the data input of r.
    g = air.Model.from_bytes(_graph(_DATA, _relu(field(5, ""), "0:x"))).graph
    assert g.node("r").input_source(0) == g.node("x").out_control_anchor


@pytest.mark.parametrize("value", [vfield(3, 1), vfield(5, 1), field(2, "true")])
def test_has_out_attr_as_an_attribute_is_refused(value: bytes):
    desc = vfield(2, 1) + field(5, _attr("_ascendir_has_out_attr", value))
    op = field(1, "x") + field(2, "Data") + field(34, desc)
    with pytest.raises(air.DecodeError, match="has_out_attr field") as info:
        air.Model.from_bytes(_graph(op))
    assert "op[0](x)" in info.value.path and "_ascendir_has_out_attr" in info.value.path
    # The field itself decodes and is written back.
    ok = field(1, "x") + field(2, "Data") + field(34, vfield(2, 1) + vfield(9, 1))
    model = air.Model.from_bytes(_graph(ok))
    assert air.Model.from_bytes(model.to_bytes()).to_bytes() == model.to_bytes()


@pytest.mark.parametrize("key", [
    "_ascendir_unknown_fields", "_ascendir_attr_unknown_fields", "_ascendir_attr_groups"])
def test_keys_standing_for_fields_are_refused_as_attributes(key: str):
    attr = _attr(key, field(7, b"\x08\x01"))  # bytes that would be spliced in as a field
    op = field(1, "x") + field(2, "Data") + field(34, vfield(2, 1)) + field(10, attr)
    with pytest.raises(air.DecodeError, match="reserved key holding BYTES") as info:
        air.Model.from_bytes(_graph(op))
    assert "op[0](x)" in info.value.path and key in info.value.path
    graph = field(7, field(1, "g") + field(6, _DATA) + field(11, attr))
    with pytest.raises(air.DecodeError, match="never written as an attribute") as info:
        air.Model.from_bytes(graph)
    assert key in info.value.path
    with pytest.raises(air.DecodeError, match="never written as an attribute"):
        air.Model.from_bytes(_graph(_DATA) + field(11, attr))


def test_has_out_attr_of_the_wrong_kind_is_refused_at_encode():
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    x.op_desc.output_desc(0).attrs["_ascendir_has_out_attr"] = 1
    with pytest.raises(air.InvalidArgumentError, match="must be a BOOL; it holds INT"):
        g.to_bytes()
    x.op_desc.output_desc(0).attrs["_ascendir_has_out_attr"] = True
    desc = air.Graph.from_bytes(g.to_bytes()).node("x").op_desc.output_desc(0)
    assert desc.attrs["_ascendir_has_out_attr"] is True


# -- GE: text given as a str with lone surrogates -------------------------------------------------


def test_text_with_a_lone_surrogate_is_a_decode_error_naming_the_character():
    text = 'name: "m"\ngraph { name: "g\ud800" }\n'
    for read in (air.Model.from_text, air.Graph.from_text):
        with pytest.raises(air.DecodeError) as info:
            read(text)
        err = info.value
        assert not isinstance(err, UnicodeError)
        assert "U+D800 at character 26 (line 2, column 17)" in str(err)
        assert err.offset == 26 == text.index("\ud800")
    # The same text without the surrogate reads.
    assert air.Model.from_text(text.replace("\ud800", "")).graph.name == "g"


# -- GE: AttrDef.s holding bytes that are not UTF-8 -----------------------------------------------


_RAW = b"\xff\xfeA\x00\xc3"


def _op_with_s(raw: bytes) -> bytes:
    attr = field(10, _attr("blob", field(2, raw)))
    return field(1, "x") + field(2, "Data") + field(34, vfield(2, 1)) + attr


def test_non_utf8_string_attribute_round_trips_losslessly():
    model = air.Model.from_bytes(_graph(_op_with_s(_RAW)))
    attrs = model.graph.node("x").attrs
    assert attrs["blob"] == _RAW and isinstance(attrs["blob"], bytes)
    assert attrs.kind("blob") == air.AttrKind.STRING
    data = model.to_bytes()
    assert _attr("blob", field(2, _RAW)) in data  # still AttrDef.s, byte for byte
    assert air.Model.from_bytes(data).to_bytes() == data
    # Through the text format: protobuf text escapes the bytes.
    text = model.to_text()
    assert r'"\377\376A\000\303"' in text
    assert air.Model.from_text(text).to_bytes() == data
    # A UTF-8 value stays a str.
    ok = air.Model.from_bytes(_graph(_op_with_s("é".encode())))
    assert ok.graph.node("x").attrs["blob"] == "é"


def test_string_attribute_set_from_bytes_keeps_the_bytes():
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    x.attrs.set("raw", _RAW, kind=air.AttrKind.STRING)
    x.attrs.set("text", "é".encode(), kind=air.AttrKind.STRING)
    assert (x.attrs["raw"], x.attrs["text"]) == (_RAW, "é")
    assert x.attrs.kind("raw") == air.AttrKind.STRING
    back = air.Graph.from_bytes(g.to_bytes()).node("x").attrs
    assert (back["raw"], back["text"]) == (_RAW, "é")
