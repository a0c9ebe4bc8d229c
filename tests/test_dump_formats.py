"""GE's readable dump (``ge_readable*.txt``): the printer against GE's documented example, the
reader on what the printer writes (GE's public dumps and real models), content detection and
bad input."""

# ruff: noqa: E501  (the expected texts are GE's, whose lines are long)

from __future__ import annotations

import gzip
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

import ascendir as air
from ascendir import _core
from ascendir.formats import detect, sniff
from support.ge_data import COMMITTED

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "zoo"))

# GE's readable_dump.md, example 1, as GE's printer writes it. The document spells the users
# of a get_element line `[users=N]`; GE's code (and its unit tests) write `[#users=N]`.
EXAMPLE_1 = """graph("MakeTransformerSubGraph"):
  %input_0 : [#users=1] = Node[type=Data] (attrs = {index: 0})
  %input_1 : [#users=1] = Node[type=Data] (attrs = {index: 1})
  %input_2 : [#users=1] = Node[type=Data] (attrs = {index: 2})
  %Const_0 : [#users=1] = Node[type=Const] (attrs = {value: [-1 7168]})
  %Reshape_1 : [#users=1] = Node[type=Reshape] (inputs = (x=%input_0, shape=%Const_0), attrs = {axis: 0, num_axes: -1})
  %Cast_2 : [#users=1] = Node[type=Cast] (inputs = (x=%Reshape_1), attrs = {dst_type: 0})
  %Cast_3 : [#users=1] = Node[type=Cast] (inputs = (x=%input_1), attrs = {dst_type: 0})
  %Const_4 : [#users=1] = Node[type=Const] (attrs = {value: [1 0]})
  %Transpose_5 : [#users=1] = Node[type=Transpose] (inputs = (x=%Cast_3, perm=%Const_4))
  %MatMul_6 : [#users=1] = Node[type=MatMul] (inputs = (x1=%Cast_2, x2=%Transpose_5), attrs = {transpose_x1: false, transpose_x2: false})
  %Sigmoid_7 : [#users=1] = Node[type=Sigmoid] (inputs = (x=%MatMul_6))
  %Const_8 : [#users=1] = Node[type=Const] (attrs = {value: [-1 256]})
  %Reshape_9 : [#users=1] = Node[type=Reshape] (inputs = (x=%Sigmoid_7, shape=%Const_8), attrs = {axis: 0, num_axes: -1})
  %Unsqueeze_10 : [#users=1] = Node[type=Unsqueeze] (inputs = (x=%input_2), attrs = {axes: {0}})
  %Cast_11 : [#users=1] = Node[type=Cast] (inputs = (x=%Unsqueeze_10), attrs = {dst_type: 0})
  %Add_12 : [#users=1] = Node[type=Add] (inputs = (x1=%Reshape_9, x2=%Cast_11))
  %Const_13 : [#users=1] = Node[type=Const] (attrs = {value: [2]})
  %TopKV2_14 : [#users=2] = Node[type=TopKV2] (inputs = (x=%Add_12, k=%Const_13), attrs = {sorted: true, dim: -1, largest: true, indices_dtype: 3})
  %ret : [#users=1] = get_element[node=%TopKV2_14](0)
  %ret_1 : [#users=0] = get_element[node=%TopKV2_14](1)
  %Const_15 : [#users=1] = Node[type=Const] (attrs = {value: [-1]})
  %ReduceSum_16 : [#users=1] = Node[type=ReduceSum] (inputs = (x=%ret, axes=%Const_15), attrs = {keep_dims: false, noop_with_empty_axes: true})
  %Const_17 : [#users=1] = Node[type=Const] (attrs = {value: [4]})
  %TopKV2_18 : [#users=2] = Node[type=TopKV2] (inputs = (x=%ReduceSum_16, k=%Const_17), attrs = {sorted: false, dim: -1, largest: true, indices_dtype: 3})
  %ret_2 : [#users=0] = get_element[node=%TopKV2_18](0)
  %ret_3 : [#users=1] = get_element[node=%TopKV2_18](1)
  %Cast_19 : [#users=1] = Node[type=Cast] (inputs = (x=%ret_3), attrs = {dst_type: 9})
  %ZerosLike_20 : [#users=1] = Node[type=ZerosLike] (inputs = (x=%ReduceSum_16))
  %Shape_21 : [#users=1] = Node[type=Shape] (inputs = (x=%Cast_19), attrs = {dtype: 3})
  %Const_22 : [#users=1] = Node[type=Const] (attrs = {value: [1.000000]})
  %Cast_23 : [#users=1] = Node[type=Cast] (inputs = (x=%Const_22), attrs = {dst_type: 0})
  %Fill_24 : [#users=1] = Node[type=Fill] (inputs = (dims=%Shape_21, value=%Cast_23))
  %ScatterElements_25 : [#users=1] = Node[type=ScatterElements] (inputs = (data=%ZerosLike_20, indices=%Cast_19, updates=%Fill_24), attrs = {axis: 0, reduction: "none"})
  %Unsqueeze_26 : [#users=1] = Node[type=Unsqueeze] (inputs = (x=%ScatterElements_25), attrs = {axes: {-1}})
  %Const_27 : [#users=1] = Node[type=Const] (attrs = {value: [256 256]})
  %BroadcastTo_28 : [#users=1] = Node[type=BroadcastTo] (inputs = (x=%Unsqueeze_26, shape=%Const_27))
  %Identity_29 : [#users=1] = Node[type=Identity] (inputs = (x=%BroadcastTo_28))
  %Const_30 : [#users=1] = Node[type=Const] (attrs = {value: [256 256]})
  %Reshape_31 : [#users=1] = Node[type=Reshape] (inputs = (x=%Identity_29, shape=%Const_30), attrs = {axis: 0, num_axes: -1})
  %Cast_32 : [#users=1] = Node[type=Cast] (inputs = (x=%Reshape_31), attrs = {dst_type: 12})
  %LogicalNot_33 : [#users=1] = Node[type=LogicalNot] (inputs = (x=%Cast_32))
  %Const_34 : [#users=1] = Node[type=Const] (attrs = {value: [0.000000]})
  %MaskedFill_35 : [#users=1] = Node[type=MaskedFill] (inputs = (x=%Add_12, mask=%LogicalNot_33, value=%Const_34))
  %Const_36 : [#users=1] = Node[type=Const] (attrs = {value: [4]})
  %TopKV2_37 : [#users=2] = Node[type=TopKV2] (inputs = (x=%MaskedFill_35, k=%Const_36), attrs = {sorted: false, dim: -1, largest: true, indices_dtype: 3})
  %ret_4 : [#users=0] = get_element[node=%TopKV2_37](0)
  %ret_5 : [#users=1] = get_element[node=%TopKV2_37](1)
  %Cast_38 : [#users=1] = Node[type=Cast] (inputs = (x=%ret_5), attrs = {dst_type: 9})
  %GatherElements_39 : [#users=1] = Node[type=GatherElements] (inputs = (x=%Sigmoid_7, index=%Cast_38), attrs = {dim: 1})
  %Const_40 : [#users=1] = Node[type=Const] (attrs = {value: [0.000001]})
  %RealDiv_41 : [#users=1] = Node[type=RealDiv] (inputs = (x1=%GatherElements_39, x2=%Const_40))
  %Const_42 : [#users=1] = Node[type=Const] (attrs = {value: [2.500000]})
  %Mul_43 : [#users=1] = Node[type=Mul] (inputs = (x1=%RealDiv_41, x2=%Const_42))
  %Cast_44 : [#users=1] = Node[type=Cast] (inputs = (x=%Mul_43), attrs = {dst_type: 0})

  return (output_0=%Cast_38, output_1=%Cast_44)
"""


def _example_1_graph() -> air.Graph:
    """Example 1 built with the graph API: each op records its IR inputs and attributes (as a
    GE OpDesc made from its IR does), values as the example shows them."""
    import re

    import numpy as np

    g = air.Graph("MakeTransformerSubGraph")
    line_re = re.compile(r"  %(\S+) : \[#users=(\d+)\] = Node\[type=(\w+)\] \((.*)\)$")
    outs: list[str] = []
    for line in EXAMPLE_1.splitlines()[1:]:
        m = line_re.match(line)
        if m is None:
            if line.startswith("  return"):
                outs = re.findall(r"%(\w+)", line)
            continue
        name, users, op_type, body = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        inputs = re.findall(r"(\w+)=%(\w+)", body.split("attrs = ")[0])
        od = air.OpDesc(name, op_type)
        for param, _ in inputs:
            od.add_input(param)
        for k in range(users):
            od.add_output(f"y{k}")
        attrs = body.split("attrs = {", 1)[1][:-1] if "attrs = {" in body else ""
        ir_attrs: list[str] = []
        for key, raw in re.findall(r"(\w+): (\[[^\]]*\]|\{[^}]*\}|\"[^\"]*\"|[^,]+)", attrs):
            ir_attrs.append(key)
            if raw.startswith("["):
                items = raw[1:-1].split()
                dtype = np.float32 if "." in raw else np.int64
                od.attrs.set(key, air.Tensor(np.array([dtype(x) for x in items])))
            elif raw.startswith("{"):
                od.attrs.set(key, [int(x) for x in raw[1:-1].split(", ")])
            elif raw in ("true", "false"):
                od.attrs.set(key, raw == "true")
            elif raw.startswith('"'):
                od.attrs.set(key, raw[1:-1])
            else:
                od.attrs.set(key, int(raw))
        od.ir_inputs = [(p, "required") for p, _ in inputs]
        od.ir_attr_names = ir_attrs
        node = g.add_node(od)
        for i, (_, src) in enumerate(inputs):
            node.in_data_anchor(i).link_from(_value(g, src))
    g.set_outputs([_value(g, o) for o in outs])
    return g


def _value(g: air.Graph, name: str) -> air.Anchor:
    """The output anchor a value name of example 1 stands for."""
    rets = {"ret": ("TopKV2_14", 0), "ret_1": ("TopKV2_14", 1), "ret_2": ("TopKV2_18", 0),
            "ret_3": ("TopKV2_18", 1), "ret_4": ("TopKV2_37", 0), "ret_5": ("TopKV2_37", 1)}
    node, index = rets.get(name, (name, 0))
    return g.node(node).out_data_anchor(index)


def test_example_1_prints_as_ge_writes_it() -> None:
    assert _core._readable_to_text(_example_1_graph()) == EXAMPLE_1


def test_example_1_reads_back_and_prints_the_same() -> None:
    g = _core._readable_from_text(EXAMPLE_1)
    # One node per node line, and the NetOutput of the return line.
    assert len(g.nodes) == EXAMPLE_1.count("Node[type=") + 1
    assert g.node("TopKV2_14").type == "TopKV2"
    assert _core._readable_to_text(g) == EXAMPLE_1
    # The document's own spelling of get_element users reads too.
    doc = EXAMPLE_1.replace("[#users=1] = get_element", "[users=1] = get_element")
    assert _core._readable_to_text(_core._readable_from_text(doc)) == EXAMPLE_1


def _edges(g: air.Graph) -> Counter[tuple[str, int, str]]:
    """Data edges `(source, output index, destination)`; a NetOutput is named `<return>`."""
    def name(n: air.Node) -> str:
        return "<return>" if n.type == "NetOutput" else n.name

    out: Counter[tuple[str, int, str]] = Counter()
    for n in g.nodes:
        for a in n.in_data_anchors:
            peer = a.peer
            if peer is not None:
                out[(name(peer.node), peer.index, name(n))] += 1
    return out


def _shown_attrs(text: str) -> list[str]:
    return [line.split("attrs = ", 1)[1] for line in text.splitlines() if "attrs = " in line]


def _check_round_trip(g: air.Graph) -> None:
    text = _core._readable_to_text(g)
    back = _core._readable_from_text(text)
    assert _core._readable_to_text(back) == text
    originals = [g, *g.subgraphs]
    rebuilt = {s.name: s for s in [back, *back.subgraphs]}
    assert len(rebuilt) == len(originals)
    for orig in originals:
        got = rebuilt[orig.name]
        want_nodes = [(n.name, n.type) for n in orig.nodes if n.type != "NetOutput"]
        assert [(n.name, n.type) for n in got.nodes if n.type != "NetOutput"] == want_nodes
        assert _edges(got) == _edges(orig)
    assert _shown_attrs(_core._readable_to_text(back)) == _shown_attrs(text)


def _ge_dump(name: str) -> air.Graph:
    text = gzip.decompress((COMMITTED / name).read_bytes()).decode("utf-8")
    return air.Model.from_text(text).graph


@pytest.mark.parametrize("name", sorted(p.name for p in COMMITTED.glob("ge_proto_*.txt.gz")))
def test_ge_dumps_round_trip(name: str) -> None:
    g = _ge_dump(name)
    assert len(g.nodes) > 10
    _check_round_trip(g)


@pytest.mark.parametrize("model", ["tv-squeezenet", "timm-resnet18", "bert"])
def test_corpus_models_round_trip(model: str) -> None:
    import importlib

    import torch

    corpus = importlib.import_module("corpus")  # tests/zoo/corpus.py
    module, args = corpus.build(model)
    ep = torch.export.export(module, args, strict=False)
    g = air.torch.from_exported_program(ep, warn_unknown=False)
    _check_round_trip(g)


def test_detection_by_content(tmp_path: Path) -> None:
    g = _ge_dump("ge_proto_00046_afterUBMatch.txt.gz")
    readable = tmp_path / "dump.pbtxt"
    air.save(g, readable, format="readable")
    assert readable.read_text().startswith(f'graph("{g.name}"):\n')
    assert sniff(readable.read_bytes()) == "readable"
    assert detect(readable, readable.read_bytes()) == "readable"
    loaded = air.load(readable)
    assert _core._readable_to_text(loaded) == readable.read_text()
    ge_text = tmp_path / "dump.txt"
    air.save(g, ge_text)
    assert detect(ge_text, ge_text.read_bytes()) == "txt"
    as_pbtxt = tmp_path / "ge.pbtxt"
    as_pbtxt.write_bytes(ge_text.read_bytes())
    assert detect(as_pbtxt, as_pbtxt.read_bytes()) == "txt"
    assert len(air.load(as_pbtxt).nodes) == len(g.nodes)


def test_convert_command_writes_and_reads_readable(tmp_path: Path) -> None:
    from ascendir.onnx.cli_commands import convert

    src = tmp_path / "ex.txt"
    src.write_text(EXAMPLE_1)
    dst = tmp_path / "ex.pb"
    convert(str(src), str(dst))
    back = tmp_path / "back.txt"
    convert(str(dst), str(back), to="readable")
    assert back.read_text() == EXAMPLE_1


BAD = [
    "",
    "graph(\"g\")\n",
    "  %a : [#users=1] = Node[type=Data] ()\n",
    "graph(\"g\"):\n  %a : [#users=1] = Node[type=Data] (\n",
    "graph(\"g\"):\n  %a : [#users=1] = Node[type=Add] (inputs = (x1=%nope))\n",
    "graph(\"g\"):\n  %a : [#users=1] = Node[type=X] (attrs = {s: \"open})\n",
    "graph(\"g\"):\n  %a : [#users=1] = Node[type=X] (attrs = {g: %missing})\n",
    "graph(\"g\"):\n  %a : [#users=1] = Node[type=X] ()\n  %a : [#users=1] = Node[type=X] ()\n",
    "graph(\"g\"):\n  %r : [#users=1] = get_element[node=%a](0)\n",
]


@pytest.mark.parametrize("text", BAD)
def test_bad_text_is_a_decode_error(text: str) -> None:
    with pytest.raises(air.DecodeError, match=r"line \d+, column \d+"):
        _core._readable_from_text(text)


def test_truncations_never_crash() -> None:
    errors = 0
    for cut in range(0, len(EXAMPLE_1), 7):
        try:
            g = _core._readable_from_text(EXAMPLE_1[:cut])
        except air.DecodeError:
            errors += 1
        else:
            _core._readable_to_text(g)
    assert errors > 0


def test_ge_facade_dumps_the_readable_form() -> None:
    from ascendir.ge.graph.graph import DumpFormat, Graph

    g = Graph.from_air(_example_1_graph())
    assert g.dump_to_stream(DumpFormat.kReadable) == str(g) == EXAMPLE_1
