"""Data kept through conversions: model attributes, OM partitions, ONNX through air.load/save,
format sniffing, and ``validate()`` on edits that leave required inputs open."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir import _core, formats
from ascendir.serialization import DataLossWarning, Model
from support.cli import script

EXAMPLE_ONNX = Path(__file__).resolve().parents[1] / "examples" / "transformer_block.onnx"
TASK_INFO, TBE_KERNELS = 2, 3


def _model() -> Model:
    g = air.load(EXAMPLE_ONNX)
    m = Model("net", [g], version=3, custom_version="cv-7")
    m.attrs["soc_version"] = "Ascend910B"
    m.attrs["my_int"] = 42
    m.weights = b"\x01\x02weights"
    m.partitions = [(TASK_INFO, b"\x00task\xff" * 3), (TBE_KERNELS, bytes(range(256)))]
    return m


def _two_model_om(first: bytes, second: bytes) -> bytes:
    """An OM file whose header says two models, each with its own partition table."""
    a = bytearray(first)
    body = bytes(a[256:]) + second[256:]
    a[256:] = body
    struct.pack_into("<I", a, 76, len(body))
    struct.pack_into("<I", a, 156, 2)
    struct.pack_into("<Q", a, 184, len(body))
    return bytes(a)


def test_om_partitions_and_attrs_survive_om_to_om(tmp_path: Path) -> None:
    m = _model()
    src, dst = tmp_path / "a.om", tmp_path / "b.om"
    air.save(m, src)
    r = subprocess.run([script(), "convert", str(src), str(dst)], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    back = air.serialization.load_model(dst)
    assert back.partitions == m.partitions
    assert back.weights == m.weights
    assert back.name == "net" and back.version == 3 and back.custom_version == "cv-7"
    assert back.attrs["soc_version"] == "Ascend910B" and back.attrs["my_int"] == 42
    assert dst.read_bytes() == src.read_bytes()


def test_model_attrs_survive_pb_txt_om_chain(tmp_path: Path) -> None:
    m = _model()
    m.partitions = []
    air.save(m, tmp_path / "a.pb")
    for a, b in (("a.pb", "b.txt"), ("b.txt", "c.pbtxt"), ("c.pbtxt", "d.om"), ("d.om", "e.pb")):
        r = subprocess.run([script(), "convert", str(tmp_path / a), str(tmp_path / b)],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 0 and r.stderr == "", (a, b, r.stderr)
    assert (tmp_path / "e.pb").read_bytes() == (tmp_path / "a.pb").read_bytes()
    back = air.serialization.load_model(tmp_path / "e.pb")
    assert back.attrs["my_int"] == 42 and back.version == 3


def test_dropping_partitions_warns(tmp_path: Path) -> None:
    m = _model()
    air.save(m, tmp_path / "a.om")
    r = subprocess.run([script(), "convert", str(tmp_path / "a.om"), str(tmp_path / "a.pb")],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ascendir: warning: {tmp_path / 'a.om'}: ")
    assert "TASK_INFO" in lines[0] and "TBE_KERNELS" in lines[0]
    with pytest.warns(DataLossWarning, match="model attributes my_int, soc_version"):
        air.save(m, tmp_path / "a.onnx")


def test_multi_model_om_warns_and_keeps_the_first(tmp_path: Path) -> None:
    m = _model()
    other = Model("second", [air.Graph("g2")])
    data = _two_model_om(m.to_om(), other.to_om())
    with pytest.warns(DataLossWarning, match="holds 2 models"):
        back = Model.from_om(data)
    assert back.graph.name == m.graph.name
    assert back.partitions == m.partitions


def test_load_and_save_accept_onnx(tmp_path: Path) -> None:
    g = air.load(EXAMPLE_ONNX)
    assert g.name == "transformer_block" and len(g) == 60
    air.save(g, tmp_path / "copy.onnx")
    again = air.load(tmp_path / "copy.onnx")
    assert again.op_type_counts() == g.op_type_counts()
    m = air.serialization.load_model(tmp_path / "copy.onnx")
    assert m.graph.name == g.name
    import onnx

    onnx.checker.check_model(onnx.load(str(tmp_path / "copy.onnx")))


def test_load_sniffs_the_bytes_before_the_suffix(tmp_path: Path) -> None:
    g = air.load(EXAMPLE_ONNX)
    for fmt, name in (("pb", "ge.onnx"), ("om", "om.pb"), ("txt", "text.bin"),
                      ("onnx", "onnx.txt"), ("pb", "noext")):
        path = tmp_path / name
        air.save(g, path, format=fmt)
        assert formats.sniff(path.read_bytes()) == fmt, name
        assert air.load(path).op_type_counts() == g.op_type_counts(), name


def test_sniff_cases() -> None:
    assert formats.sniff(b"") is None
    assert formats.sniff(b"\x08\x07\x12\x04torch") == "onnx"  # ir_version, producer_name
    assert formats.sniff(b"\x0a\x03net\x10\x01") == "pb"  # name, version
    assert formats.sniff(b"\x3a\x00\x5a\x00") == "pb"  # graph, then attr (GE only)
    assert formats.sniff(b"\x3a\x00\x42\x00") == "onnx"  # graph, then opset_import
    assert formats.sniff(b'name: "net"\ngraph {\n}\n') == "txt"
    assert formats.sniff(b"# a dump\nname: 'x'") == "txt"
    assert formats.sniff(_core._om_write("n", b"", b"")) == "om"
    assert formats.sniff(b"\xff\xff\xff") is None
    with pytest.raises(air.DecodeError, match="is empty"):
        formats.detect("x.onnx", b"")
    with pytest.raises(air.DecodeError, match="cannot tell the model format"):
        formats.detect("x.bad", b"\xff\xff")
    assert formats.detect("x.pb", b"\xff\xff") == "pb"  # the suffix decides when bytes do not


def test_validate_reports_a_required_input_left_open() -> None:
    g = air.Graph("g")
    td = air.TensorDesc([2], air.float32)
    c = g.add_const("c", np.ones(2, np.float32))
    ident = g.add_op("Identity", [c], name="id")
    x = g.add_input("x", td)
    add = g.add_op("Add", [x, ident], name="add")
    g.set_outputs([add])
    g.validate()
    assert g.remove_node(ident) == ["c"]
    with pytest.raises(air.ValidationError) as info:
        g.validate()
    assert info.value.problems == [
        "graph 'g': node 'add' (Add) input 1 'x2' is required but not connected"
    ]


def test_validate_accepts_open_optional_inputs() -> None:
    g = air.Graph("g")
    td = air.TensorDesc([1, 4], air.float32)
    x = g.add_input("x", td)
    od = air.OpDesc("bias_add", "BiasAdd")
    od.add_input("x", td)
    od.add_optional_input("bias", td)
    od.add_output("y", td)
    node = g.add_node(od)
    x.out_data_anchor(0).link_to(node.in_data_anchor(0))
    g.set_outputs([node])
    g.validate()
    od2 = air.OpDesc("plain", "BiasAdd")
    od2.add_input("x", td)
    od2.add_input("bias", td)
    od2.add_output("y", td)
    plain = g.add_node(od2)
    x.out_data_anchor(0).link_to(plain.in_data_anchor(0))
    assert g.problems() == [
        "graph 'g': node 'plain' (BiasAdd) input 1 'bias' is required but not connected"
    ]
