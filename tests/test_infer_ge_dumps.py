"""Acceptance: re-infer every op of the real GE dumps whose type the library knows, from its
recorded input descs and attributes, and compare with the recorded output shapes and dtypes."""

from __future__ import annotations

from pathlib import Path

import pytest

import ascendir as air
from ascendir import infer
from support.ge_data import DUMPS, dump_params, need_dump

# Known disagreements (documented in docs/OPERATORS.md): GE's dump records the AIPP output
# as float32 at this stage, the library declares AIPP features as float16.
KNOWN_MISSES = {("Aipp", "data_0_huawei_aipp")}


def logical(td: air.TensorDesc) -> tuple[int, ...]:
    """The shape GE's inference works on: the origin shape of a transformed tensor."""
    origin = td.origin_shape
    fmt = getattr(td.format, "name", str(td.format))
    ofmt = getattr(td.origin_format, "name", str(td.origin_format))
    if origin is not None and ofmt not in ("ND", "RESERVED") and fmt != ofmt:
        return tuple(origin)
    return tuple(td.shape)


def reinfer(g: air.Graph) -> tuple[int, list[str]]:
    checked, misses = 0, []
    for node in g.all_nodes():
        if not air.ops.is_registered(node.type):
            continue
        checked += 1
        try:
            outs = infer.infer_node(node)
        except air.InferenceError as e:
            misses.append(f"{node.type} {node.name}: {e}")
            continue
        assert outs is not None
        for i, (shape, dtype) in enumerate(outs):
            want = node.op_desc.output_desc(i)
            if shape != logical(want) or dtype != want.dtype:
                if (node.type, node.name) not in KNOWN_MISSES:
                    misses.append(
                        f"{node.type} {node.name} output {i}: inferred {shape} {dtype.name}, "
                        f"recorded {logical(want)} {want.dtype.name}"
                    )
                else:
                    misses.append(f"(known) {node.type} {node.name}")
                break
    return checked, misses


@pytest.mark.parametrize("path", dump_params())
def test_reinferred_shapes_match_the_dump(path: Path | None) -> None:
    g = air.load(need_dump(path))
    checked, misses = reinfer(g)
    assert checked >= 100
    unexpected = [m for m in misses if not m.startswith("(known)")]
    assert not unexpected, "\n".join(unexpected)
    assert (checked - len(misses)) / checked >= 0.95


def test_whole_dump_infer_shapes_keeps_recorded_shapes() -> None:
    g = air.load(need_dump(DUMPS[0] if DUMPS else None))
    before = {n.name: logical(n.op_desc.output_desc(0)) for n in g.nodes if n.op_desc.num_outputs}
    stats = g.infer_shapes()
    assert stats["inferred"] > 300
    changed = [
        n.name
        for n in g.nodes
        if n.op_desc.num_outputs and logical(n.op_desc.output_desc(0)) != before[n.name]
    ]
    assert changed == []


# Sources and partition boundaries keep what they record: a Data's output is its input desc, a
# Const's its value, a PlaceHolder's what the partitioner copied from the other partition.
SOURCES = {"Data", "RefData", "Const", "Constant", "PlaceHolder"}


def _recorded(td: air.TensorDesc) -> tuple:
    origin = td.origin_shape
    return tuple(td.shape), None if origin is None else tuple(origin), td.dtype


@pytest.mark.parametrize("path", dump_params())
def test_cleared_dump_reinfers_its_shapes_and_origin_shapes(path: Path | None) -> None:
    # Every output desc but the sources' is cleared (shape and origin shape unknown, dtype
    # undefined; the layouts stay: choosing them is not inference), then the whole graph is
    # inferred again: both the stored shape (NC1HWC0 and the other 5-D layouts included) and
    # the origin shape must come back.
    g = air.load(need_dump(path))
    recorded = {}
    for n in g.all_nodes():
        if n.type in SOURCES:
            continue
        od = n.op_desc
        for i in range(od.num_outputs):
            d = od.output_desc(i)
            recorded[(n.name, i)] = _recorded(d)
            d.shape = [-2]
            d.dtype = air.DataType.UNDEFINED
            if d.origin_shape is not None:
                d.origin_shape = [-2]
    g.infer_shapes()
    shapes = dtypes = 0
    misses = []
    for n in g.all_nodes():
        if n.type in SOURCES:
            continue
        for i in range(n.op_desc.num_outputs):
            got = _recorded(n.op_desc.output_desc(i))
            want = recorded[(n.name, i)]
            if got[:2] == want[:2]:
                shapes += 1
            else:
                misses.append(f"{n.type} {n.name}:{i}: {got[:2]} != {want[:2]}")
            dtypes += got[2] == want[2]
    assert len(recorded) >= 100
    assert shapes / len(recorded) >= 0.99, "\n".join(misses[:20])
    # Dtypes follow too, except downstream of the AIPP output the library declares float16
    # where one dump records float32 (KNOWN_MISSES above).
    if not any(n.type == "Aipp" for n in g.all_nodes()):
        assert dtypes == len(recorded)


@pytest.mark.parametrize("path", dump_params())
def test_every_node_type_of_the_dumps_is_registered(path: Path | None) -> None:
    # Partition boundaries (PlaceHolder, End) and the fusion engine's host folding ops were the
    # unregistered types of these dumps.
    g = air.load(need_dump(path))
    nodes = list(g.all_nodes())
    unregistered = sorted({n.type for n in nodes if not air.ops.is_registered(n.type)})
    assert unregistered == []


def test_quantization_family_infers_ge_dtypes() -> None:
    g = air.Graph("q")
    x = g.add_input("x", air.TensorDesc([1, 40, 7, 7], air.float16, format=air.Format.NCHW))
    q = g.add_op("AscendQuant", [x], attrs={"scale": 0.5, "offset": 0.0})
    assert q.op_desc.output_desc(0).dtype == air.int8
    acc = g.add_input("acc", air.TensorDesc([1, 40, 7, 7], air.int32, format=air.Format.NCHW))
    scale = g.add_input("s", air.TensorDesc([40], air.uint64))
    deq = g.add_op("AscendDequant", [acc, scale])
    assert deq.op_desc.output_desc(0).dtype == air.float32
    deq16 = g.add_op("AscendDequant", [acc, scale], attrs={"dtype": int(air.DataType.FLOAT16)})
    assert deq16.op_desc.output_desc(0).dtype == air.float16
    req = g.add_op("AscendRequant", [acc, scale])
    assert req.op_desc.output_desc(0).dtype == air.int8
    anti = g.add_op("AscendAntiQuant", [q], attrs={"scale": 2.0, "offset": 0.0})
    assert anti.op_desc.output_desc(0).dtype == air.float32
    assert all(n.op_desc.output_desc(0).shape == (1, 40, 7, 7) for n in (q, deq, req, anti))
    # Stored as NC1HWC0, an int8 tensor has C0 = 32 (float16: 16).
    t8 = g.add_op("TransData", [q], attrs={"src_format": "NCHW", "dst_format": "NC1HWC0"})
    t16 = g.add_op("TransData", [x], attrs={"src_format": "NCHW", "dst_format": "NC1HWC0"})
    assert t8.op_desc.output_desc(0).shape == (1, 2, 7, 7, 32)
    assert t16.op_desc.output_desc(0).shape == (1, 3, 7, 7, 16)
