"""GE's ONNX dump (``ge_onnx*.pbtxt``, format ``"onnx_txt"``): the writer's layout, the reader
on what the writer writes (GE's public dumps and real models), content detection, the
``convert`` command, the GE facade's ``kOnnx`` dump and bad input."""

from __future__ import annotations

import gzip
import importlib
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import onnx
import pytest
from google.protobuf import text_format  # type: ignore[import-untyped]

import ascendir as air
from ascendir import _core
from ascendir.formats import detect, sniff
from support.ge_data import COMMITTED

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "zoo"))

GE_DUMPS = sorted(p.name for p in COMMITTED.glob("ge_proto_*.txt.gz"))


def _ge_dump(name: str) -> air.Graph:
    text = gzip.decompress((COMMITTED / name).read_bytes()).decode("utf-8")
    return air.Model.from_text(text).graph


def _corpus_graph(model: str) -> air.Graph:
    import torch

    corpus = importlib.import_module("corpus")  # tests/zoo/corpus.py
    module, args = corpus.build(model)
    ep = torch.export.export(module, args, strict=False)
    return air.torch.from_exported_program(ep, warn_unknown=False)


def _onnx(text: str) -> onnx.ModelProto:
    """The text parsed by protobuf's own text format as ONNX's ModelProto."""
    model = onnx.ModelProto()
    text_format.Parse(text, model)
    return model


def _edges(g: air.Graph) -> Counter[tuple[str, int, str, int]]:
    out: Counter[tuple[str, int, str, int]] = Counter()
    for n in g.nodes:
        for a in n.in_data_anchors:
            peer = a.peer
            if peer is not None:
                out[(peer.node.name, peer.index, n.name, a.index)] += 1
        for c in n.in_control_nodes:
            out[(c.name, -1, n.name, -1)] += 1
    return out


def _plain(value: Any) -> bool:
    """Values of the kinds GE's dump keeps: ints (bools become ints), floats, strings and
    lists of them."""
    scalar = (bool, int, float, str)
    if isinstance(value, (list, tuple)):
        return len(value) > 0 and all(isinstance(v, scalar) for v in value)
    return isinstance(value, scalar)


def _rows(value: Any) -> bool:
    """A list of int lists GE's dump keeps: one whose last row is not empty (GE writes one
    attribute per non-empty row)."""
    return (isinstance(value, list) and len(value) > 0 and isinstance(value[-1], list)
            and len(value[-1]) > 0)


def _desc(d: air.TensorDesc) -> tuple[Any, ...]:
    # GE's dump has no `has_out_attr` flag (kept by ascendir as a private attribute).
    attrs = {k: v for k, v in d.attrs.items()
             if not k.startswith("_ascendir_") and (_plain(v) or _rows(v))}
    return (tuple(d.shape), d.dtype, d.format, d.origin_dtype, d.origin_format, d.size,
            d.real_dim_cnt, d.device_type, attrs)


def _check_graph_kept(orig: air.Graph, back: air.Graph) -> None:
    assert back.name == orig.name
    assert [(n.name, n.type) for n in back.nodes] == [(n.name, n.type) for n in orig.nodes]
    assert _edges(back) == _edges(orig)
    for a, b in zip(orig.nodes, back.nodes, strict=True):
        kept = {k: v for k, v in a.attrs.items() if _plain(v)}
        assert {k: b.attrs[k] for k in kept} == kept, a.name
        for k, v in a.attrs.items():
            if isinstance(v, air.Tensor):
                w = b.attrs[k]
                assert isinstance(w, air.Tensor), (a.name, k)
                assert (tuple(w.desc.shape), w.desc.dtype) == (tuple(v.desc.shape), v.desc.dtype)
                assert bytes(w.data) == bytes(v.data), (a.name, k)
        oa, ob = a.op_desc, b.op_desc
        assert oa.num_inputs == ob.num_inputs and oa.num_outputs == ob.num_outputs
        for i in range(oa.num_inputs):
            assert _desc(ob.input_desc(i)) == _desc(oa.input_desc(i)), (a.name, i)
        for i in range(oa.num_outputs):
            assert _desc(ob.output_desc(i)) == _desc(oa.output_desc(i)), (a.name, i)


def _check(g: air.Graph) -> None:
    text = _core._ge_onnx_to_text(g, "GE")
    first = _onnx(text)
    assert first.ir_version == 6 and first.producer_name == "GE"
    assert first.graph.name == g.name and len(first.graph.input) == 0
    nodes = [n for n in first.graph.node if n.op_type != "subgraph"]
    assert [n.op_type for n in nodes] == [f"ge:{n.type}" for n in g.nodes]
    for n in nodes:
        names = [a.name for a in n.attribute]
        assert names == sorted(names)
        assert "input_desc_nums" in names and "output_desc_nums" in names
    back = _core._ge_onnx_from_text(text)
    again = _core._ge_onnx_to_text(back, "GE")
    assert _onnx(again) == first
    assert again == text
    _check_graph_kept(g, back)
    subs = {s.name: s for s in back.subgraphs}
    assert sorted(subs) == sorted(s.name for s in g.subgraphs)
    for s in g.subgraphs:
        _check_graph_kept(s, subs[s.name])


@pytest.mark.parametrize("name", GE_DUMPS)
def test_ge_dumps_read_back_message_identical(name: str) -> None:
    g = _ge_dump(name)
    assert len(g.nodes) > 10
    _check(g)


@pytest.mark.parametrize("model", ["timm-mixer", "gpt2"])
def test_corpus_models_read_back_message_identical(model: str) -> None:
    _check(_corpus_graph(model))


def test_writer_layout_follows_ge() -> None:
    g = _ge_dump(GE_DUMPS[0])
    model = _onnx(_core._ge_onnx_to_text(g, "GE"))
    node = next(n for n in model.graph.node if n.input)
    attrs = {a.name: a for a in node.attribute}
    for key in ("input_desc_dtype:0", "input_desc_layout:0", "input_desc_origin_dtype:0",
                "input_desc_device_type:0", "output_desc_shape:0", "id", "stream_id",
                "workspace", "is_input_const"):
        assert key in attrs, key
    assert attrs["input_desc_dtype:0"].type == onnx.AttributeProto.STRING
    assert attrs["input_desc_dtype:0"].s.decode().startswith("DT_")
    assert attrs["output_desc_shape:0"].type == onnx.AttributeProto.INTS
    for inp in node.input:
        assert inp == "" or ":" in inp
    used = {i for n in model.graph.node for i in n.input}
    for n in model.graph.node:
        assert all(o in used for o in n.output)
    names = [v.name for v in model.graph.output]
    assert names and all(g.node(n) is not None for n in names)
    # Without attributes, as ge::Graph::DumpToStream(kOnnx) writes it.
    bare = _onnx(_core._ge_onnx_to_text(g, g.name, False))
    assert bare.producer_name == g.name
    assert all(not n.attribute for n in bare.graph.node)
    back = _core._ge_onnx_from_text(_core._ge_onnx_to_text(g, g.name, False))
    assert _edges(back) == _edges(g)


def test_detection_by_content(tmp_path: Path) -> None:
    g = _ge_dump(GE_DUMPS[-1])
    as_txt = tmp_path / "ge_onnx_00001_graph.txt"
    air.save(g, as_txt, format="onnx_txt")
    data = as_txt.read_bytes()
    assert data.startswith(b"ir_version: 6\n")
    assert sniff(data) == "onnx_txt" and detect(as_txt, data) == "onnx_txt"
    assert [n.name for n in air.load(as_txt).nodes] == [n.name for n in g.nodes]
    assert air.load_model(as_txt).graph.name == g.name
    # A graph-first ONNX text is ONNX too; GE's own text named .pbtxt stays GE text.
    graph_first = data.split(b"\n", 2)[2]
    assert graph_first.startswith(b"graph {") and sniff(graph_first) == "onnx_txt"
    ge_text = tmp_path / "ge.pbtxt"
    air.save(g, ge_text, format="txt")
    assert detect(ge_text, ge_text.read_bytes()) == "txt"
    assert len(air.load(ge_text).nodes) == len(g.nodes)
    readable = tmp_path / "r.txt"
    air.save(g, readable, format="readable")
    assert detect(readable, readable.read_bytes()) == "readable"


def test_convert_command_writes_and_reads_onnx_txt(tmp_path: Path) -> None:
    from ascendir.onnx.cli_commands import convert

    src = tmp_path / "g.pb"
    g = _ge_dump(GE_DUMPS[0])
    air.save(g, src)
    dst = tmp_path / "g.pbtxt"
    convert(str(src), str(dst), to="onnx_txt")
    assert detect(dst, dst.read_bytes()) == "onnx_txt"
    back = tmp_path / "back.pb"
    convert(str(dst), str(back))
    _check_graph_kept(g, air.load(back))


def test_ge_facade_dumps_the_onnx_form() -> None:
    from ascendir.ge.graph.graph import DumpFormat, Graph

    g = _ge_dump(GE_DUMPS[0])
    text = Graph.from_air(g).dump_to_stream(DumpFormat.kOnnx)
    assert text == _core._ge_onnx_to_text(g, g.name, False)
    assert _onnx(text).graph.name == g.name


GOOD = """ir_version: 6
producer_name: "GE"
graph {
  node {
    name: "x"
    op_type: "ge:Data"
    output: "x:0"
    attribute { name: "input_desc_nums" type: INT }
    attribute { name: "output_desc_dtype:0" s: "DT_FLOAT" type: STRING }
    attribute { name: "output_desc_nums" i: 1 type: INT }
  }
  node {
    name: "y"
    op_type: "ge:Relu"
    input: "x:0"
    attribute { name: "input_desc_nums" i: 1 type: INT }
    attribute { name: "output_desc_nums" i: 1 type: INT }
  }
  output { name: "y" }
}
"""

BAD = [
    "",
    "ir_version: 6\n",
    "ir_version: \"six\"\n",
    "ir_version: 6\ngraph {\n",
    "ir_version: 6\ngraph { nope: 1 }\n",
    GOOD.replace('input: "x:0"', 'input: "missing:0"'),
    GOOD.replace('output_desc_dtype:0" s: "DT_FLOAT"', 'output_desc_dtype:0" s: "DT_NOPE"'),
    GOOD.replace('output_desc_dtype:0" s: "DT_FLOAT" type: STRING',
                 'output_desc_dtype:0" type: INT'),
    GOOD.replace('"output_desc_nums" i: 1', '"output_desc_nums" i: 123456789012'),
    GOOD.replace('"input_desc_nums" i: 1', '"input_desc_nums" i: -1'),
    GOOD.replace('output_desc_dtype:0', 'output_desc_dtype:5'),
    GOOD.replace('name: "y"\n    op_type', 'name: "x"\n    op_type'),
    GOOD.replace('output { name: "y" }', 'output { name: "z" }'),
]


def test_good_text_reads() -> None:
    g = _core._ge_onnx_from_text(GOOD)
    assert [(n.name, n.type) for n in g.nodes][:2] == [("x", "Data"), ("y", "Relu")]


@pytest.mark.parametrize("text", BAD)
def test_bad_text_is_a_decode_error(text: str) -> None:
    with pytest.raises(air.DecodeError):
        _core._ge_onnx_from_text(text)


def test_truncations_never_crash() -> None:
    errors = 0
    for cut in range(0, len(GOOD), 5):
        try:
            g = _core._ge_onnx_from_text(GOOD[:cut])
        except air.DecodeError:
            errors += 1
        else:
            _core._ge_onnx_to_text(g, "GE")
    assert errors > 0


def _branch(name: str, op: str) -> air.Graph:
    s = air.Graph(name)
    a = s.add_input(f"{name}_in", air.TensorDesc([3], air.float32))
    a.attrs["_parent_node_index"] = 1
    s.set_outputs([s.add_op(op, [a], name=f"{name}_op")])
    return s


def test_subgraphs_and_attribute_kinds_survive() -> None:
    g = air.Graph("cf")
    c = g.add_input("c", air.TensorDesc([], air.bool_))
    x = g.add_input("x", air.TensorDesc([3], air.float16, "NCHW"))
    n = g.add_op("If", [c, [x]], name="if", outputs=1)
    g.add_subgraph(_branch("then", "Neg"), parent=n, slot="then_branch")
    g.add_subgraph(_branch("else", "Abs"), parent=n, slot="else_branch")
    n.attrs["i"] = 7
    n.attrs["f"] = 0.25
    n.attrs["s"] = "text"
    n.attrs["li"] = [1, -2]
    n.attrs["lf"] = [0.5, 1.5]
    n.attrs["ls"] = ["a", "b"]
    n.attrs["flag"] = True
    n.op_desc.input_desc(1).attrs["note"] = "kept"
    g.set_outputs([n])
    text = _core._ge_onnx_to_text(g, "GE")
    model = _onnx(text)
    subs = [nd for nd in model.graph.node if nd.op_type == "subgraph"]
    assert [s.name for s in subs] == ["then", "else"]
    assert [v.name for v in subs[0].attribute[0].g.input] == ["then_in"]
    back = _core._ge_onnx_from_text(text)
    assert _core._ge_onnx_to_text(back, "GE") == text
    _check_graph_kept(g, back)
    node = back.node("if")
    assert node.op_desc.subgraph_names == ["then", "else"]
    assert back.subgraph("then").node("then_op").type == "Neg"
    assert node.attrs["flag"] == 1 and node.attrs["ls"] == ["a", "b"]
    assert node.op_desc.input_desc(1).attrs["note"] == "kept"
    assert node.op_desc.input_desc(1).dtype == air.float16


def test_mutations_never_crash() -> None:
    g = air.Graph("m")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    g.set_outputs([g.add_op("Relu", [x], name="relu")])
    text = _core._ge_onnx_to_text(g, "GE")
    outcomes: Counter[str] = Counter()
    for at in range(0, len(text), 29):
        for ch in ("{", '"', "9", ":"):
            mutated = text[:at] + ch + text[at + 1:]
            try:
                back = _core._ge_onnx_from_text(mutated)
            except air.DecodeError:
                outcomes["error"] += 1
            else:
                _core._ge_onnx_to_text(back, "GE")
                outcomes["read"] += 1
    assert outcomes["error"] > 0 and outcomes["read"] > 0


def test_wide_ops_write_their_descs_as_json() -> None:
    import json

    g = air.Graph("wide")
    xs = [g.add_input(f"x{i}", air.TensorDesc([1, i + 1], air.float16, "NCHW"))
          for i in range(21)]
    cat = g.add_op("ConcatD", [xs], name="cat", attrs={"concat_dim": 1})
    g.set_outputs([cat])
    text = _core._ge_onnx_to_text(g, "GE")
    node = next(n for n in _onnx(text).graph.node if n.name == "cat")
    attrs = {a.name: a for a in node.attribute}
    assert "input_desc_dtype:0" not in attrs
    desc = json.loads(attrs["input_desc_20"].s)
    assert list(desc) == sorted(desc)
    assert desc["dtype"] == "DT_FLOAT16" and desc["shape"] == [1, 21]
    assert desc["layout"] == "NCHW"
    back = _core._ge_onnx_from_text(text)
    assert _core._ge_onnx_to_text(back, "GE") == text
    _check_graph_kept(g, back)


def test_dump_folder_reads_ge_onnx_files(tmp_path: Path) -> None:
    from ascendir import dumps

    g = _ge_dump(GE_DUMPS[-1])
    path = tmp_path / "ge_onnx_00001_graph_1_PreRunAfterInfershape.pbtxt"
    air.save(g, path, format="onnx_txt")
    loaded = dumps.load_file(path)
    assert [(n.name, n.type) for n in loaded.nodes] == [(n.name, n.type) for n in g.nodes]
