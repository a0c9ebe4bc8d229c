"""Hostile input to the decoders: deep nesting, allocation before validation, OM partition
tables, size overflows, panics, memory pressure, ONNX external data, and inputs that used to be
accepted silently. Each test reproduces the original report with a small generated input."""

from __future__ import annotations

import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir import _core
from ascendir.serialization import CycleWarning
from support.hostile import field, nested_modeldef, nested_onnx_if, run_snippet, vfield

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

# -- crashes and aborts -------------------------------------------------------------------------


def test_modeldef_nested_100k_levels_is_refused_at_the_limit():
    data = nested_modeldef(100_000)
    with pytest.raises(air.DecodeError, match="nested more than 64 levels") as info:
        air.Model.from_bytes(data)
    assert info.value.path == "graph[64]"
    # The same file inside an OM container, and one level under the limit loads.
    with pytest.raises(air.DecodeError, match="nested more than 64"):
        air.Model.from_om(_core._om_write("m", data, b""))
    model = air.Model.from_bytes(nested_modeldef(64))
    assert len(model.graph.subgraphs) == 64
    assert model.graph.problems() == []


def test_onnx_nested_100k_if_bodies_is_a_decode_error():
    data = nested_onnx_if(100_000)
    with pytest.raises(air.DecodeError):
        air.onnx.load(data)


def _peak(kind: str, n: int) -> tuple[int, int, str]:
    code = f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from support.hostile import field, vfield
        kind, n = {kind!r}, {n}
        if kind == "empty":
            data = field(7, field(1, "g") + b"\\x32\\x00" * n)
            call = lambda: air.Model.from_bytes(data)
        elif kind == "repeated":
            data = field(7, field(1, "g") + field(6, field(1, "a")) * n)
            call = lambda: air.Model.from_bytes(data)
        elif kind == "onnx":
            graph = field(2, "g") + b"\\x0a\\x00" * n  # empty NodeProtos
            data = vfield(1, 8) + field(8, vfield(2, 17)) + field(7, graph)
            call = lambda: air.onnx.load(data)
        else:
            data = 'graph {{\\n  name: "g"\\n' + "  op {{\\n  }}\\n" * n + "}}\\n"
            call = lambda: air.Model.from_text(data)
        grown, err = measure(call)
        print(len(data), grown, err)
    """
    size, grown, err = run_snippet(code).split(" ", 2)
    return int(size), int(grown), err.strip()


@pytest.mark.parametrize(
    ("kind", "n"),
    [("empty", 5_000_000), ("repeated", 2_000_000), ("text", 3_500_000), ("onnx", 5_000_000)],
)
@pytest.mark.serial
def test_hostile_op_lists_are_refused_with_memory_bounded_by_the_input(kind: str, n: int):
    # 10 MB of 2-byte empty OpDefs, 10 MB of ops all named "a", 38 MB of "op { }" text, 10 MB
    # of empty ONNX NodeProtos (which used to import as 5M unmapped ops, peaking at 2.4 GB):
    # each used to be decoded op by op (hundreds of bytes each) before the first was refused.
    size, grown, err = _peak(kind, n)
    assert err.startswith("DecodeError" if kind != "onnx" else "InvalidArgumentError"), err
    assert grown <= 4 * size + 64 * 2**20, (size, grown)


def _om(entries: list[tuple[int, int, int]], payload: bytes) -> bytes:
    """An OM file of one model with the given partition entries (kind, offset, size)."""
    table = struct.pack("<Q", len(entries))
    for kind, off, size in entries:
        table += struct.pack("<IIQQ", kind, 0, off, size)
    head = bytearray(_core._om_write("m", b"", b"")[:256])
    body = table + payload
    head[76:80] = struct.pack("<I", len(body))
    head[184:192] = struct.pack("<Q", len(body))
    return bytes(head) + body


def test_om_overlapping_partitions_are_refused():
    model_def = air.Graph("g").to_bytes()
    ok = _om([(0, 0, len(model_def)), (1, len(model_def), 0)], model_def)
    assert air.Model.from_om(ok).graph.name == "g"
    # 1,000 entries over the same bytes: each used to be copied (a 3 MiB file peaked at 3 GB).
    many = _om([(0, 0, len(model_def))] + [(2, 0, len(model_def))] * 999, model_def)
    with pytest.raises(air.DecodeError, match="overlap"):
        air.Model.from_om(many)


def test_om_partition_out_of_range_is_refused():
    model_def = air.Graph("g").to_bytes()
    for entry in [(2, 4, 1 << 40), (2, 2**64 - 1, 2), (2, len(model_def), 1)]:
        with pytest.raises(air.DecodeError, match="outside the model data"):
            air.Model.from_om(_om([(0, 0, len(model_def)), entry], model_def))


def test_a_panic_reaches_python_as_internal_error():
    with pytest.raises(air.InternalError, match="deliberate panic") as info:
        _core._test_panic()
    assert isinstance(info.value, air.AscendIRError)
    assert type(info.value).__name__ != "PanicException"


def _onnx_with_initializer(t: TensorProto) -> bytes:
    out = helper.make_tensor_value_info(t.name, t.data_type, None)
    graph = helper.make_graph([], "g", [], [out], initializer=[t])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_onnx_string_initializer_of_2_to_62_elements_is_refused():
    # The original 116-byte file imported (the size check was skipped when the byte count
    # overflowed) and its export then panicked with "capacity overflow".
    t = TensorProto(name="s", data_type=TensorProto.STRING, dims=[2**62])
    data = _onnx_with_initializer(t)
    assert len(data) < 200
    with pytest.raises(air.InvalidArgumentError, match="too large|fewer than"):
        air.onnx.load(data)


def test_onnx_export_of_a_huge_string_constant_is_a_typed_error():
    # The export used to reserve one entry per element and panic ("capacity overflow").
    for dims in ([2**62], [2**40, 2**40]):
        g = air.Graph("g")
        c = g.add_const("s", air.Tensor(air.TensorDesc(dims, air.DataType.STRING), b""))
        g.set_outputs([c])
        with pytest.raises(air.InvalidArgumentError, match="string"):
            air.onnx.to_bytes(g)


@pytest.mark.parametrize("dims", [[2**62], [2**31, 2**31], [2**40, 2**40]])
def test_onnx_size_checks_do_not_skip_overflowing_sizes(dims: list[int]):
    t = TensorProto(name="f", data_type=TensorProto.FLOAT, dims=dims, raw_data=b"\0" * 4)
    with pytest.raises(air.InvalidArgumentError, match="too large"):
        air.onnx.load(_onnx_with_initializer(t))


@pytest.mark.parametrize("headroom_mb", [30, 150, 600, 2000])
def test_from_text_under_memory_pressure_raises_memory_error(headroom_mb: int):
    # 1M named ops: 45 MB of text, 16 MB on the wire, about 1 GB once decoded. Under an
    # address-space limit anywhere below what that needs, the call raises MemoryError before
    # it starts (the parse or the decode); it never aborts the process or panics.
    code = f"""
        import resource
        op = '  op {{\\n    name: "n%d"\\n    type: "Relu"\\n  }}\\n'
        text = 'graph {{\\n  name: "g"\\n' + "".join(op % i for i in range(1_000_000)) + "}}\\n"
        air.Model.from_text('graph {{ name: "w" op {{ name: "a" type: "Data" }} }}')  # warm up
        limit = _status("VmSize") + {headroom_mb} * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            air.Model.from_text(text)
            print("loaded")
        except MemoryError as e:
            print("MemoryError", e)
    """
    out = run_snippet(code)
    assert out.startswith("MemoryError"), out
    assert "out of memory: cannot reserve" in out, out


@pytest.mark.parametrize("headroom_mb", [30, 150, 600, 2000])
def test_onnx_import_under_memory_pressure_raises_memory_error(headroom_mb: int):
    # A chain of 1M tiny valid Relu nodes: about 20 MB on the wire, several GB of address space
    # once imported. Under an address-space limit below that, the import raises MemoryError
    # before it starts; it never aborts the process.
    code = f"""
        import resource
        from onnx import TensorProto, helper

        def ld(field, body):
            n, head = len(body), bytearray([field << 3 | 2])
            while True:
                b, n = n & 0x7F, n >> 7
                head.append(b | (0x80 if n else 0))
                if not n:
                    return bytes(head) + body

        def model(n):
            x = helper.make_tensor_value_info("n0", TensorProto.FLOAT, [4])
            y = helper.make_tensor_value_info(f"n{{n}}", TensorProto.FLOAT, [4])
            nodes = b"".join(
                ld(1, ld(1, f"n{{i}}".encode()) + ld(2, f"n{{i + 1}}".encode()) + ld(4, b"Relu"))
                for i in range(n))
            graph = (nodes + ld(2, b"g") + ld(11, x.SerializeToString())
                     + ld(12, y.SerializeToString()))
            opset = helper.make_opsetid("", 17).SerializeToString()
            return bytes([0x08, 0x08]) + ld(8, opset) + ld(7, graph)

        small = air.onnx.load(model(1000))  # the same form imports
        assert len(small.nodes) > 1000, len(small.nodes)
        data = model(1_000_000)
        limit = _status("VmSize") + {headroom_mb} * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            air.onnx.load(data)
            print("loaded")
        except MemoryError as e:
            print("MemoryError", e)
    """
    out = run_snippet(code)
    assert out.startswith("MemoryError"), out
    assert "import a model of" in out and "1000000 nodes" in out, out


# -- ONNX external data -------------------------------------------------------------------------


def _external_model(tmp: Path, location: str, length: int | None = 16, offset: int = 0) -> Path:
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for k, v in entries.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    graph = helper.make_graph(
        [helper.make_node("Relu", ["w"], ["y"])], "g", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializer=[t],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _const_values(g: air.Graph) -> np.ndarray:
    (c,) = [n for n in g.nodes if n.type == "Const"]
    return c.attrs["value"].numpy()


def test_external_data_reads_exactly_its_range(tmp_path: Path):
    # A sparse 64 GiB file: only the 16 bytes at offset 8 may be read.
    with open(tmp_path / "w.bin", "wb") as f:
        f.write(b"\xff" * 8 + np.arange(4, dtype=np.float32).tobytes())
        f.truncate(64 * 2**30)
    g = air.onnx.load(_external_model(tmp_path, "w.bin", length=16, offset=8))
    assert _const_values(g).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(air.InvalidArgumentError, match="out of range"):
        air.onnx.load(_external_model(tmp_path, "w.bin", length=16, offset=64 * 2**30 - 8))


def test_external_data_symlink_to_dev_zero_is_refused(tmp_path: Path):
    os.symlink("/dev/zero", tmp_path / "w.bin")
    with pytest.raises(air.InvalidArgumentError, match="outside the model directory|regular"):
        air.onnx.load(_external_model(tmp_path, "w.bin", length=None))


def test_external_data_symlink_leaving_the_directory_is_refused(tmp_path: Path):
    outside = tmp_path / "secret.bin"
    outside.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    os.symlink(outside, model_dir / "w.bin")
    with pytest.raises(air.InvalidArgumentError, match="outside the model directory"):
        air.onnx.load(_external_model(model_dir, "w.bin"))
    # A link that stays inside the directory is fine.
    (model_dir / "real.bin").write_bytes(outside.read_bytes())
    os.symlink("real.bin", model_dir / "inside.bin")
    assert _const_values(air.onnx.load(_external_model(model_dir, "inside.bin"))).sum() == 6


def test_external_data_fifo_and_directory_are_refused_without_blocking(tmp_path: Path):
    os.mkfifo(tmp_path / "w.bin")
    (tmp_path / "d").mkdir()
    path = _external_model(tmp_path, "w.bin")
    code = f"""
        for loc in ("w.bin", "d"):
            import onnx
            m = onnx.load({str(path)!r}, load_external_data=False)
            m.graph.initializer[0].external_data[0].value = loc
            try:
                air.onnx.load(m.SerializeToString(), base_dir={str(tmp_path)!r})
                print("loaded")
            except air.InvalidArgumentError as e:
                print("refused", "regular file" in str(e))
    """
    # A FIFO used to block the open forever: the child would time out.
    out = run_snippet(code, timeout=120)
    assert out.split() == ["refused", "True", "refused", "True"]


# -- wrong results accepted silently ------------------------------------------------------------


def _graph_bytes(*ops: bytes, name: str = "g") -> bytes:
    return field(7, field(1, name) + b"".join(field(6, op) for op in ops))


def _desc(dtype: int) -> bytes:
    return vfield(2, dtype)


def test_edge_without_output_index_is_refused():
    data_op = field(1, "x") + field(2, "Data") + field(34, _desc(1))
    relu = field(1, "r") + field(2, "Relu") + field(5, "x") + field(33, _desc(1))
    with pytest.raises(air.DecodeError, match="has no ':<output index>'") as info:
        air.Model.from_bytes(_graph_bytes(data_op, relu))
    assert "op[1]" in info.value.path
    # "x:0" links, "" is an unconnected slot.
    ok = field(1, "r") + field(2, "Relu") + field(5, "x:0") + field(33, _desc(1))
    g = air.Model.from_bytes(_graph_bytes(data_op, ok)).graph
    assert g.node("r").in_data_anchor(0).peer is not None
    empty = field(1, "r") + field(2, "Relu") + field(5, "") + field(33, _desc(1))
    assert air.Model.from_bytes(_graph_bytes(data_op, empty)).graph.node("r") is not None


def test_unknown_dtype_number_is_refused_not_lost():
    op = field(1, "x") + field(2, "Data") + field(34, _desc(999))
    with pytest.raises(air.DecodeError, match="unknown ge.proto DataType number 999") as info:
        air.Model.from_bytes(_graph_bytes(op))
    assert info.value.path.endswith("dtype")


def test_malformed_reserved_keys_are_refused():
    # _ascendir_in_ctrl must be a list of strings; an int used to be kept as a plain attribute.
    attr = field(10, field(1, "_ascendir_in_ctrl") + field(2, vfield(3, 5)))
    op = field(1, "x") + field(2, "Data") + field(34, _desc(1)) + attr
    with pytest.raises(air.DecodeError, match="malformed reserved key") as info:
        air.Model.from_bytes(_graph_bytes(op))
    assert "_ascendir_in_ctrl" in info.value.path


@pytest.mark.parametrize("bad", ["--1", "0-5", "+5", "0x-1", "1-2"])
def test_text_integers_take_one_sign(bad: str):
    with pytest.raises(air.DecodeError, match="bad integer"):
        air.Model.from_text(f'name: "m"\nversion: {bad}\ngraph {{ name: "g" }}\n')
    assert air.Model.from_text('name: "m"\nversion: 7\ngraph { name: "g" }\n').version == 7


def test_cyclic_ge_graph_loads_with_a_warning():
    g = air.Graph("cyc")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    a = g.add_op("Add", [x, x], name="a")
    b = g.add_op("Relu", [a], name="b")
    x.out_data_anchor(0).unlink(a.in_data_anchor(1))
    b.out_data_anchor(0).link_to(a.in_data_anchor(1))
    data = g.to_bytes()
    with pytest.warns(CycleWarning, match="graph 'cyc' has a cycle"):
        back = air.Model.from_bytes(data).graph
    assert back.dump() == g.dump()
    with pytest.raises(air.ValidationError, match="cycle"):
        back.validate()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        air.Model.from_bytes(air.Graph("fine").to_bytes())


def test_cyclic_ge_graph_warns_through_every_reader(tmp_path):
    # The text and OM readers and ascendir.load warn as the binary reader does.
    g = air.Graph("cyc")
    x = g.add_input("x", air.TensorDesc([2], air.float32))
    a = g.add_op("Add", [x, x], name="a")
    b = g.add_op("Relu", [a], name="b")
    x.out_data_anchor(0).unlink(a.in_data_anchor(1))
    b.out_data_anchor(0).link_to(a.in_data_anchor(1))
    model = air.Model("m", [g])
    readers = {
        "text": lambda: air.Model.from_text(model.to_text()).graph,
        "om": lambda: air.Model.from_om(model.to_om()).graph,
    }
    for suffix in ("pb", "txt", "om"):
        path = tmp_path / f"cyc.{suffix}"
        air.save(g, path)
        readers[f"load .{suffix}"] = lambda path=path: air.load(path)
    for what, read in readers.items():
        with pytest.warns(CycleWarning, match="graph 'cyc' has a cycle"):
            back = read()
        assert back.dump() == g.dump(), what


def test_cyclic_onnx_graph_is_refused():
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="A"),
             helper.make_node("Relu", ["a"], ["b"], name="B")]
    out = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])
    graph = helper.make_graph(nodes, "g", [], [out])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    with pytest.raises(air.InvalidArgumentError, match="has a cycle"):
        air.onnx.load(data)


def test_size_helpers_share_one_overflow_rule():
    # -1: the size is unknown; an overflow always raises.
    assert air.size_in_bytes_of(-1, air.float32) == -1
    assert air.size_in_bytes_of(4, air.DataType.STRING) == -1
    assert air.size_in_bytes_of(2**60, air.float32) == 2**62
    with pytest.raises(air.SizeOverflowError):
        air.size_in_bytes_of(2**62, air.float32)
    with pytest.raises(air.SizeOverflowError):
        air.calc_tensor_mem_size_of([2**61], "ND", air.float32)
    with pytest.raises(air.SizeOverflowError):
        air.calc_tensor_mem_size_of([2**62, 4], "ND", air.float32)
    assert air.calc_tensor_mem_size_of([-1, 4], "ND", air.float32) == -1



def _nested_named_attrs(depth: int) -> air.NamedAttrs:
    na = air.NamedAttrs("leaf", {"x": 1})
    for i in range(depth - 1):
        na = air.NamedAttrs(f"l{i}", {"n": na})
    return na


@pytest.mark.parametrize("where", ["op", "desc"])
def test_text_writer_accepts_every_nesting_the_binary_reader_accepts(where: str) -> None:
    def graph(depth: int) -> air.Graph:
        g = air.Graph("g")
        x = g.add_input("x", air.TensorDesc([2], air.float32))
        n = g.add_op("Relu", [x], name="r")
        if where == "op":
            n.op_desc.attrs["deep"] = _nested_named_attrs(depth)
        else:
            d = n.op_desc.output_desc(0)
            d.attrs["deep"] = _nested_named_attrs(depth)
            n.op_desc.update_output_desc(0, d)
        g.set_outputs([n])
        return g

    # The deepest nesting the binary reader takes (33 NamedAttrs in an op attribute).
    depth = 20
    while True:
        try:
            air.Graph.from_bytes(graph(depth + 1).to_bytes())
        except air.DecodeError:
            break
        depth += 1
        assert depth < 200
    assert depth >= (33 if where == "op" else 32)
    g = graph(depth)
    back = air.Graph.from_bytes(g.to_bytes())
    text = back.to_text()  # refused with "nested too deeply" before
    assert air.Graph.from_text(text).to_bytes() == back.to_bytes()
    # One level deeper the reader refuses with a typed error, from either format.
    deeper = graph(depth + 1)
    with pytest.raises(air.DecodeError):
        air.Graph.from_bytes(deeper.to_bytes())
    with pytest.raises(air.DecodeError):
        air.Graph.from_text(deeper.to_text())
