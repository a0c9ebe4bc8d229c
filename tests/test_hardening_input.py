"""Malformed input that used to be accepted silently or to fail with an untyped error: ONNX
graphs outside SSA form, missing external data, GE text with lone surrogates, non-UTF-8 GE
strings, malformed reserved `_ascendir_*` attributes. Each fails with a typed error that says
what and where, or is accepted losslessly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ascendir as air

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


# -- ONNX: missing external data ----------------------------------------------------------------


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
