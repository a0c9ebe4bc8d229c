"""ONNX frontend: import of real-architecture models, op mapping, subgraphs, export round trip,
external data, malformed input, CLI commands."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ascendir as air  # noqa: E402
from ascendir.onnx import ImportReport, UnknownOpWarning  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import models  # noqa: E402


@pytest.fixture(scope="module")
def small_models() -> dict[str, Any]:
    return {
        "resnet50": models.resnet50(width=4, image=32),
        "bert": models.bert(layers=2, hidden=16, heads=2),
        "decoder": models.decoder(layers=3, hidden=8, heads=2),
    }


def _op_nodes(g: air.Graph, n_inits: int, report_aux: int = 0) -> int:
    """Nodes that stand for ONNX nodes: all but inputs, initializer Consts and the NetOutput."""
    types = Counter(n.type for n in g.nodes)
    return len(g) - types["Data"] - n_inits - types["NetOutput"] - report_aux


def _aux(g: air.Graph) -> int:
    return sum(1 for n in g.nodes if n.type == "Const" and "_onnx_aux" in n.attrs)


@pytest.mark.parametrize("name", ["resnet50", "bert", "decoder"])
def test_real_models_import_with_matching_node_counts(
    small_models: dict[str, Any], name: str
) -> None:
    model = small_models[name]
    g, report = air.onnx.load(model.SerializeToString(), return_report=True)
    assert isinstance(report, ImportReport)
    assert report.unknown_ops == {}
    assert report.root_nodes == len(model.graph.node)
    assert _op_nodes(g, len(model.graph.initializer), _aux(g)) == len(model.graph.node)
    assert g.check_invariants() == []
    # Inputs and outputs keep their ONNX names.
    assert [n.name for n in g.inputs] == [i.name for i in model.graph.input]
    assert len(g.outputs) == len(model.graph.output)


def test_resnet_ops_use_ge_types_and_attrs(small_models: dict[str, Any]) -> None:
    g = air.onnx.load(small_models["resnet50"])
    types = Counter(n.type for n in g.nodes)
    assert types["Conv2D"] == 53
    assert types["BatchNorm"] == 53
    assert types["MaxPoolV3"] == 1
    assert types["GlobalAveragePool"] == 1
    assert types["MatMulV2"] == 1
    stem = next(n for n in g.nodes if n.type == "Conv2D")
    a = stem.attrs
    assert a["strides"] == [1, 1, 2, 2]
    assert a["pads"] == [3, 3, 3, 3]
    assert a["dilations"] == [1, 1, 1, 1]
    assert a["groups"] == 1
    assert a["data_format"] == "NCHW"
    assert stem.op_desc.input_names == ["x", "filter"]
    pool = next(n for n in g.nodes if n.type == "MaxPoolV3")
    assert pool.attrs["ksize"] == [1, 1, 3, 3]
    assert pool.attrs["padding_mode"] == "CALCULATED"
    fc = next(n for n in g.nodes if n.type == "MatMulV2")
    assert fc.attrs["transpose_x2"] is True
    assert fc.op_desc.input_names == ["x1", "x2", "bias"]
    bn = next(n for n in g.nodes if n.type == "BatchNorm")
    assert bn.op_desc.input_names == ["x", "scale", "offset", "mean", "variance"]
    assert bn.attrs["is_training"] is False


def test_bert_ops_use_ge_types(small_models: dict[str, Any]) -> None:
    g = air.onnx.load(small_models["bert"])
    types = Counter(n.type for n in g.nodes)
    for ge in (
        "LayerNorm",
        "SoftmaxV2",
        "TransposeD",
        "ConcatV2D",
        "GatherV2D",
        "RealDiv",
        "BatchMatMulV2",
        "Unsqueeze",
        "Shape",
        "Reshape",
        "StridedSliceV2",
        "Erf",
        "If",
    ):
        assert types[ge] > 0, ge
    sm = next(n for n in g.nodes if n.type == "SoftmaxV2")
    assert sm.attrs["axes"] == [-1]
    ln = next(n for n in g.nodes if n.type == "LayerNorm")
    assert ln.attrs["begin_norm_axis"] == -1
    assert ln.op_desc.input_names == ["x", "gamma", "beta"]
    cat = next(n for n in g.nodes if n.type == "ConcatV2D")
    assert cat.op_desc.input_names == ["x0", "x1", "x2", "x3"]
    assert cat.attrs["N"] == 4 and cat.attrs["concat_dim"] == 0
    cast = next(n for n in g.nodes if n.type == "Cast")
    assert cast.attrs["dst_type"] == int(air.DataType.FLOAT)


def test_if_and_loop_bodies_become_subgraphs_with_parent_links(
    small_models: dict[str, Any],
) -> None:
    g = air.onnx.load(small_models["bert"])
    if_node = next(n for n in g.nodes if n.type == "If")
    names = if_node.op_desc.subgraph_names
    assert names == ["if_then", "if_else"]
    assert [ir for ir, _ in if_node.op_desc.subgraph_ir_names] == ["then_branch", "else_branch"]
    # The pooled value the branches read becomes an explicit input of the If.
    assert if_node.op_desc.input_names == ["cond", "input0"]
    then = g.subgraph("if_then")
    assert then.parent_node == if_node
    data = [n for n in then.nodes if n.type == "Data"]
    assert len(data) == 1 and data[0].attrs["index"] == 1
    d = air.onnx.load(small_models["decoder"])
    loop = next(n for n in d.nodes if n.type == "Loop")
    assert loop.op_desc.input_names == ["max_trip_count", "cond", "input0", "input1"]
    body = d.subgraph("loop_body")
    assert sorted(n.attrs["index"] for n in body.nodes if n.type == "Data") == [0, 1, 2, 3]


def test_loop_with_a_carried_value_validates_and_infers(small_models: dict[str, Any]) -> None:
    # The body's output 0 is the loop condition, which no Loop output receives: the carried
    # values after it map to the Loop's outputs 0, 1, ... (it once counted the condition).
    d = air.onnx.load(small_models["decoder"])
    d.validate()
    body = d.subgraph("loop_body")
    net = next(n for n in body.nodes if n.type == "NetOutput")
    idx = [net.op_desc.input_desc(i).attrs.get("_parent_node_index")
           for i in range(len(net.op_desc.input_names))]
    assert idx == [-1, 0]
    d.infer_shapes()
    loop = next(n for n in d.nodes if n.type == "Loop")
    carried = loop.op_desc.input_desc(2)
    out = loop.op_desc.output_desc(0)
    assert out.dtype == carried.dtype and list(out.shape) == list(carried.shape)


def test_value_descs_carry_onnx_names_and_types() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["N", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, ["N", 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="act")], "g", [x], [y])
    g = air.onnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    d = g.node("act").op_desc.output_desc(0)
    assert d.name == "y"
    assert d.dtype == air.DataType.FLOAT16
    assert list(d.shape) == [-1, 8]


def test_initializers_share_and_keep_values(small_models: dict[str, Any]) -> None:
    model = small_models["bert"]
    g = air.onnx.load(model)
    init = model.graph.initializer[0]
    node = g.node(init.name)
    assert node.type == "Const"
    value = node.attrs["value"]
    np.testing.assert_array_equal(np.asarray(value.numpy()), numpy_helper.to_array(init))


def test_unknown_ops_are_kept_and_reported() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="r"),
        helper.make_node(
            "FancyOp", ["r"], ["y"], name="fancy", domain="com.example", alpha=0.5, tags=["a"]
        ),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
    )
    with pytest.warns(UnknownOpWarning, match="onnx::FancyOp"):
        g, report = air.onnx.load(model, return_report=True)
    assert report.unknown_ops == {"onnx::FancyOp": 1}
    n = g.node("fancy")
    assert n.type == "onnx::FancyOp"
    assert n.attrs["alpha"] == pytest.approx(0.5)
    assert n.attrs["tags"] == ["a"]
    assert n.attrs["_onnx_domain"] == "com.example"
    # Exported back verbatim, with its domain.
    back = onnx.load_from_string(air.onnx.to_bytes(g))
    onnx.checker.check_model(back)
    assert back.graph.node[1].op_type == "FancyOp" and back.graph.node[1].domain == "com.example"


@pytest.mark.parametrize("name", ["resnet50", "bert", "decoder"])
def test_round_trip_passes_the_checker(
    small_models: dict[str, Any], name: str, tmp_path: Path
) -> None:
    model = small_models[name]
    g = air.onnx.load(model)
    path = tmp_path / f"{name}.onnx"
    air.onnx.save(g, path)
    back = onnx.load(str(path))
    onnx.checker.check_model(back)
    assert [n.op_type for n in back.graph.node] == [n.op_type for n in model.graph.node]
    assert [i.name for i in back.graph.input] == [i.name for i in model.graph.input]
    assert [o.name for o in back.graph.output] == [o.name for o in model.graph.output]
    assert len(back.graph.initializer) >= len(model.graph.initializer)
    # Shape inference sees the same graph again.
    onnx.shape_inference.infer_shapes(back, strict_mode=True)
    # And it imports again to the same node count.
    g2 = air.onnx.load(back)
    ops1 = Counter(n.type for n in g.nodes if n.type != "Const")
    ops2 = Counter(n.type for n in g2.nodes if n.type != "Const")
    assert ops1 == ops2


def test_round_trip_keeps_attribute_values(small_models: dict[str, Any]) -> None:
    model = small_models["resnet50"]
    back = onnx.load_from_string(air.onnx.to_bytes(air.onnx.load(model)))

    def attrs(n: Any) -> dict[str, Any]:
        return {a.name: helper.get_attribute_value(a) for a in n.attribute}

    for a, b in zip(model.graph.node, back.graph.node, strict=True):
        if a.op_type in ("Conv", "MaxPool"):
            for key in ("strides", "pads", "kernel_shape"):
                assert attrs(a)[key] == attrs(b)[key], (a.name, key)
        if a.op_type == "Gemm":
            assert attrs(b)["transB"] == 1


def test_external_data_is_loaded(tmp_path: Path) -> None:
    model = models.resnet50(width=4, image=32)
    path = tmp_path / "ext.onnx"
    ext = onnx.ModelProto()
    ext.CopyFrom(model)
    with open(tmp_path / "weights.bin", "wb") as f:
        for t in ext.graph.initializer:
            if len(t.raw_data) < 64:
                continue
            offset = f.tell()
            f.write(t.raw_data)
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            for key, value in (
                ("location", "weights.bin"),
                ("offset", str(offset)),
                ("length", str(f.tell() - offset)),
            ):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
    path.write_bytes(ext.SerializeToString())
    assert (tmp_path / "weights.bin").exists()
    g = air.onnx.load(path)
    ref = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    name = "layer4.2.c.conv.weight"
    np.testing.assert_array_equal(np.asarray(g.node(name).attrs["value"].numpy()), ref[name])
    # From bytes, the directory must be given.
    data = path.read_bytes()
    with pytest.raises(air.InvalidArgumentError, match="weights.bin"):
        air.onnx.load(data)
    g2 = air.onnx.load(data, base_dir=tmp_path)
    assert len(g2) == len(g)


def _external_data_model(folder: Path) -> np.ndarray:
    """Write ``model.onnx`` with its weights in one external file into ``folder``; returns the
    weight (the model computes ``x * w + 1``)."""
    w = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "one"], ["y"])],
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.ones((1,), np.float32), "one")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(model, str(folder / "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="model.data", size_threshold=0)
    assert (folder / "model.data").exists()
    return w


def test_external_data_of_a_bare_file_name_resolves_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _external_data_model(tmp_path)
    monkeypatch.chdir(tmp_path)
    g = air.onnx.load("model.onnx")
    np.testing.assert_array_equal(np.asarray(g.node("w").attrs["value"].numpy()), w)
    cm = air.compile("model.onnx")
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = air.evaluate(cm.graph, {"x": x}).values()
    np.testing.assert_allclose(y, x * w + 1, rtol=1e-6)
    assert air.serialization.load_model("model.onnx").graph.node("w") is not None


def test_malformed_bytes_raise_decode_error(small_models: dict[str, Any]) -> None:
    data = small_models["bert"].SerializeToString()
    with pytest.raises(air.DecodeError) as e:
        air.onnx.load(data[: len(data) // 2])
    assert e.value.offset is not None and e.value.path.startswith("ModelProto")
    with pytest.raises(air.DecodeError):
        air.onnx.load(b"\xff\xff\xff\xff")
    # Flip bytes at many places: never a crash, only library errors.
    rng = np.random.default_rng(0)
    raw = bytearray(small_models["resnet50"].SerializeToString())
    for _ in range(200):
        bad = bytearray(raw)
        for pos in rng.integers(0, len(bad), 4):
            bad[pos] = int(rng.integers(0, 256))
        try:
            air.onnx.load(bytes(bad), warn_unknown=False)
        except (air.AscendIRError, OSError):
            pass


def test_invalid_graphs_name_the_problem() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["nowhere"], ["y"], name="r")], "g", [x], [y]
    )
    with pytest.raises(air.InvalidArgumentError, match="nowhere"):
        air.onnx.load(helper.make_model(graph))
    with pytest.raises(TypeError):
        air.onnx.load(12345)


def test_load_accepts_path_bytes_and_model(small_models: dict[str, Any], tmp_path: Path) -> None:
    model = small_models["decoder"]
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    sizes = {len(air.onnx.load(src)) for src in (path, str(path), path.read_bytes(), model)}
    assert len(sizes) == 1


def test_decoder_scale_model_has_20k_nodes() -> None:
    model = models.decoder()
    assert len(model.graph.node) >= 20000
    g, report = air.onnx.load(model, return_report=True)
    assert report.onnx_nodes == len(model.graph.node) + 2  # the Loop body's two nodes
    assert _op_nodes(g, len(model.graph.initializer), _aux(g)) == len(model.graph.node)


def _onnx_types(model: Any) -> dict[str, tuple[int, tuple[int, ...]]]:
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim)
        out[vi.name] = (t.elem_type, dims)
    return out


@pytest.mark.parametrize("name", ["resnet50", "bert", "decoder"])
def test_shape_inference_agrees_with_onnx(small_models: dict[str, Any], name: str) -> None:
    from ascendir.onnx import _onnx_dtype_of

    model = small_models[name]
    want = _onnx_types(model)
    g = air.onnx.load(model)
    g.infer_shapes()
    got = {}
    for n in g.nodes:
        od = n.op_desc
        for i in range(od.num_outputs):
            d = od.output_desc(i)
            if d.name in want:
                got[d.name] = (_onnx_dtype_of(d.dtype), tuple(d.shape))
    agree = sum(1 for k, v in want.items() if got.get(k) == v)
    missing = [(k, want[k], got.get(k)) for k in want if got.get(k) != want[k]][:10]
    assert agree >= 0.99 * len(want), missing


def test_cli_commands(small_models: dict[str, Any], tmp_path: Path, capsys: Any) -> None:
    import argparse

    from ascendir.onnx.cli_commands import add_convert_command, add_inspect_command

    path = tmp_path / "bert.onnx"
    onnx.save(small_models["bert"], str(path))
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_convert_command(sub)
    add_inspect_command(sub)
    args = parser.parse_args(["inspect", str(path)])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "LayerNorm" in text and "subgraphs: 2" in text and "unknown ops: none" in text
    dst = tmp_path / "copy.onnx"
    args = parser.parse_args(["convert", str(path), str(dst)])
    assert args.func(args) == 0
    onnx.checker.check_model(onnx.load(str(dst)))
    pb = tmp_path / "bert.pb"
    args = parser.parse_args(["convert", str(path), str(pb)])
    assert args.func(args) == 0
    assert pb.stat().st_size > 0


def test_scan_is_kept_with_its_body_and_round_trips() -> None:
    sv = helper.make_tensor_value_info
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "next"], ["sum_out"], name="acc"),
            helper.make_node("Identity", ["sum_out"], ["scan_out"], name="emit"),
        ],
        "scan_body",
        [sv("sum_in", TensorProto.FLOAT, [2]), sv("next", TensorProto.FLOAT, [2])],
        [sv("sum_out", TensorProto.FLOAT, [2]), sv("scan_out", TensorProto.FLOAT, [2])],
    )
    node = helper.make_node(
        "Scan", ["init", "xs"], ["final", "ys"], name="scan", num_scan_inputs=1, body=body
    )
    graph = helper.make_graph(
        [node],
        "g",
        [sv("init", TensorProto.FLOAT, [2]), sv("xs", TensorProto.FLOAT, [3, 2])],
        [sv("final", TensorProto.FLOAT, [2]), sv("ys", TensorProto.FLOAT, [3, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    g, report = air.onnx.load(model, return_report=True, warn_unknown=False)
    assert report.unknown_ops == {"onnx::Scan": 1}
    scan = g.node("scan")
    assert scan.op_desc.subgraph_names == ["scan_body"]
    assert scan.attrs["num_scan_inputs"] == 1
    sub = g.subgraph("scan_body")
    assert sorted(n.attrs["index"] for n in sub.nodes if n.type == "Data") == [0, 1]
    back = onnx.load_from_string(air.onnx.to_bytes(g))
    onnx.checker.check_model(back)
    b = back.graph.node[0]
    assert b.op_type == "Scan" and list(b.input) == ["init", "xs"]
    body_attr = next(a for a in b.attribute if a.name == "body")
    assert [i.name for i in body_attr.g.input] == ["sum_in", "next"]


def test_non_utf8_node_names_are_decode_errors() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="NAME")], "g", [x], [y])
    data = helper.make_model(graph).SerializeToString().replace(b"NAME", b"N\xffME")
    with pytest.raises(air.DecodeError) as e:
        air.onnx.load(data)
    assert "node[0]" in e.value.path


@pytest.mark.parametrize("name", ["resnet50", "bert", "decoder"])
def test_round_trip_computes_the_same_outputs(small_models: dict[str, Any], name: str) -> None:
    from onnx.reference import ReferenceEvaluator

    model = small_models[name]
    back = onnx.load_from_string(air.onnx.to_bytes(air.onnx.load(model)))
    rng = np.random.default_rng(0)
    if name == "resnet50":
        feeds = {"input": rng.standard_normal((2, 3, 32, 32)).astype(np.float32)}
    elif name == "bert":
        ids = rng.integers(0, 100, (2, 5)).astype(np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
    else:
        feeds = {"input_ids": rng.integers(0, 64, (2, 5)).astype(np.int64)}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = ReferenceEvaluator(back).run(None, feeds)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_export_of_a_graph_built_in_python_passes_the_full_check() -> None:
    from ascendir.cli import build_demo_graph

    model = onnx.load_from_string(air.onnx.to_bytes(build_demo_graph()))
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node][:3] == ["Conv", "BatchNormalization", "Relu"]
    conv = model.graph.node[0]
    pads = next(a for a in conv.attribute if a.name == "pads")
    assert list(pads.ints) == [1, 1, 1, 1]


def test_defaults_that_differ_between_onnx_and_ge_are_written_out() -> None:
    # ONNX LeakyRelu's alpha defaults to 0.01 and HardSigmoid's to 0.2; GE's negative_slope
    # defaults to 0 and HardSigmoid's alpha to 1/6: an absent attribute must not change meaning.
    from onnx.reference import ReferenceEvaluator

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ("a", "b")]
    nodes = [helper.make_node("LeakyRelu", ["x"], ["a"], name="lr"),
             helper.make_node("HardSigmoid", ["x"], ["b"], name="hs")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], outs),
                              opset_imports=[helper.make_opsetid("", 17)])
    g = air.onnx.load(model)
    assert g.node("lr").attrs["negative_slope"] == pytest.approx(0.01)
    assert g.node("hs").attrs["alpha"] == pytest.approx(0.2)
    xv = np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3)
    want = ReferenceEvaluator(model).run(None, {"x": xv})
    got = air.evaluate(g, {"x": xv})
    np.testing.assert_allclose(got["a"], want[0], rtol=1e-6)
    np.testing.assert_allclose(got["b"], want[1], rtol=1e-6)
    # A GE LeakyRelu without negative_slope exports with alpha 0 (not ONNX's 0.01).
    ge = air.Graph("ge")
    gx = ge.add_input("x", air.TensorDesc([2, 3], air.float32))
    ge.set_outputs([ge.add_op("LeakyRelu", [gx], name="lr")])
    exported = onnx.load_from_string(air.onnx.to_bytes(ge))
    (node,) = [n for n in exported.graph.node if n.op_type == "LeakyRelu"]
    alpha = [a.f for a in node.attribute if a.name == "alpha"]
    assert alpha == [0.0]


def test_models_outside_the_mapped_opsets_import_with_a_warning_naming_the_opset() -> None:
    import warnings

    def relu_model(opset: int) -> Any:
        graph = helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])], "m",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    with pytest.warns(air.onnx.OpsetWarning, match="opset 23"):
        g, report = air.onnx.load(relu_model(23), return_report=True)
    assert not report.opset_mapped and report.mapped_opsets[1] < 23
    assert [n.type for n in g.nodes if n.type not in ("Data", "NetOutput")] == ["Relu"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, report = air.onnx.load(relu_model(17), return_report=True)
    assert report.opset_mapped


def test_ge_ops_without_one_onnx_op_export_as_the_nodes_they_mean() -> None:
    """NotEqual, Rsqrt, Swish, SelectV2, Gelu (before opset 20) and BatchMatMulV2 with adj_x2
    and a bias (a torch Linear on a 3-D input) are written as several ONNX nodes; the model
    passes the full check and onnxruntime gives air.evaluate's numbers."""
    ort = pytest.importorskip("onnxruntime")
    f32 = air.float32
    g = air.Graph("composite")
    x = g.add_input("x", air.TensorDesc([2, 3, 4], f32))
    y = g.add_input("y", air.TensorDesc([2, 3, 4], f32))
    rng = np.random.default_rng(5)
    w = g.add_const("w", rng.standard_normal((5, 4)).astype(np.float32))
    b = g.add_const("b", rng.standard_normal(5).astype(np.float32))
    ne = g.add_op("NotEqual", [x, y], name="ne")
    pos = g.add_op("Add", [g.add_op("Mul", [x, x], name="sq"),
                           g.add_const("one", np.float32(1.0))], name="pos")
    rs = g.add_op("Rsqrt", [pos], name="rs")
    sw = g.add_op("Swish", [x], name="sw", attrs={"scale": 1.5})
    sel = g.add_op("SelectV2", [ne, rs, sw], name="sel")
    ge_exact = g.add_op("Gelu", [sel], name="gelu_exact", attrs={"approximate": "none"})
    ge_tanh = g.add_op("Gelu", [sel], name="gelu_tanh")
    lin = g.add_op("BatchMatMulV2", [ge_tanh, w, b], name="lin",
                   input_names=["x1", "x2", "bias"], attrs={"adj_x2": True})
    g.set_outputs([ge_exact, lin])
    g.infer_shapes()
    feeds = {"x": rng.standard_normal((2, 3, 4)).astype(np.float32)}
    feeds["y"] = np.where(rng.random((2, 3, 4)) < 0.5, feeds["x"], 0).astype(np.float32)
    want = list(air.evaluate(g, feeds).values())
    model = onnx.load_from_string(air.onnx.to_bytes(g, opset=17))
    onnx.checker.check_model(model, full_check=True)
    types = {n.op_type for n in model.graph.node}
    assert {"Not", "Equal", "Reciprocal", "Sigmoid", "Where", "Erf", "Tanh", "Transpose",
            "MatMul"} <= types
    assert not types & {"NotEqual", "Rsqrt", "Swish", "SelectV2", "Gelu", "BatchMatMulV2"}
    got = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b_ in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b_, rtol=1e-5, atol=1e-5)


def _many_ifs(n: int, body_name: str, node_name: str = "") -> onnx.ModelProto:
    """``n`` If nodes whose branches all have the graph name ``body_name`` (and, when given,
    the node name ``node_name``), chained on one value."""
    def branch(tag: str) -> onnx.GraphProto:
        return helper.make_graph([helper.make_node("Neg" if tag == "t" else "Abs", ["v0"],
                                                   [f"o_{tag}"])],
                                 body_name, [],
                                 [helper.make_tensor_value_info(f"o_{tag}", TensorProto.FLOAT,
                                                                [2])])
    nodes = [helper.make_node("If", ["c"], [f"v{i + 1}"], name=node_name,
                              then_branch=branch("t"), else_branch=branch("e"))
             for i in range(n)]
    graph = helper.make_graph(
        nodes, "many",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_bodies_and_nodes_sharing_a_name_get_unique_deterministic_names() -> None:
    for node_name in ("", "same"):
        m = _many_ifs(300, "body", node_name)
        g = air.onnx.load(m)
        names = [s.name for s in g.subgraphs]
        assert len(names) == 600 and len(set(names)) == 600
        assert names[0] == "body"  # the first body keeps its name
        ifs = [n.name for n in g.nodes if n.type == "If"]
        assert len(ifs) == 300 and len(set(ifs)) == 300
        if node_name:
            assert ifs[:3] == ["same", "same_1", "same_2"]
        assert [s.name for s in air.onnx.load(m).subgraphs] == names
        assert g.check_invariants() == []
