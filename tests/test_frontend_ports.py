"""Every frontend names the ports of the GE ops it builds as the registry does: the ONNX importer
(one small model per mapped ONNX op) and the PyTorch frontend (its test models) give each node of
a registered type the input and output port names of its prototype (GE's names)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ascendir as air
from ascendir import _core

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from support.ports import FRAME, check_ports  # noqa: E402

F = TensorProto.FLOAT
B = TensorProto.BOOL
I64 = TensorProto.INT64


# ---------------------------------------------------------------------------------------------
# ONNX: one model per mapped ONNX op.


def _init(name: str, values: Any, dtype: Any = np.int64) -> Any:
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def _case(
    inputs: list[str],
    data: dict[str, tuple[list[int], int]] | None = None,
    inits: list[Any] | None = None,
    outputs: int = 1,
    opset: int = 13,
    **attrs: Any,
) -> dict[str, Any]:
    return {"inputs": inputs, "data": data or {}, "inits": inits or [], "outputs": outputs,
            "opset": opset, "attrs": attrs}


X = {"x": ([2, 3], F)}
X4 = {"x": ([1, 2, 4, 4], F)}
XY = {"x": ([2, 3], F), "y": ([2, 3], F)}
BOOLS = {"x": ([2, 3], B), "y": ([2, 3], B)}
INTS = {"x": ([2, 3], TensorProto.INT32), "y": ([2, 3], TensorProto.INT32)}

UNARY = [
    "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Abs", "Neg", "Reciprocal",
    "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Atan", "Asin", "Acos", "Sinh",
    "Cosh", "IsNaN", "IsInf", "Softplus", "Softsign", "Identity", "Elu", "Selu",
    "HardSigmoid", "LeakyRelu", "Flatten", "Softmax", "LogSoftmax", "Shape", "Transpose",
    "ArgMax", "ArgMin",
]
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "LessOrEqual",
          "GreaterOrEqual", "Max", "Min", "PRelu"]


def _branch(name: str, value: float) -> Any:
    c = helper.make_node("Constant", [], [f"{name}_out"],
                         value=_init(f"{name}_v", [value], np.float32))
    return helper.make_graph([c], name, [],
                             [helper.make_tensor_value_info(f"{name}_out", F, [1])])


def _loop_body() -> Any:
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Add", ["v_in", "v_in"], ["v_out"]),
    ]
    return helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("v_in", F, [2, 3])],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_tensor_value_info("v_out", F, [2, 3])],
    )


CASES: dict[str, dict[str, Any]] = {
    **{op: _case(["x"], X) for op in UNARY},
    **{op: _case(["x", "y"], XY) for op in BINARY},
    "Mod": _case(["x", "y"], XY, fmod=1),
    "Not": _case(["x"], {"x": ([2, 3], B)}),
    "And": _case(["x", "y"], BOOLS),
    "Or": _case(["x", "y"], BOOLS),
    "Gelu": _case(["x"], X, opset=20),
    "Mish": _case(["x"], X, opset=18),
    "HardSwish": _case(["x"], X, opset=14),
    "Celu": _case(["x"], X),
    "Cast": _case(["x"], X, to=TensorProto.FLOAT16),
    "CastLike": _case(["x", "like"], {"x": ([2, 3], F), "like": ([1], TensorProto.FLOAT16)},
                      opset=15),
    "Size": _case(["x"], X),
    "Einsum": _case(["x", "y"], {"x": ([2, 3], F), "y": ([3, 4], F)}, opset=12,
                    equation="ij,jk->ik"),
    "GatherND": _case(["x", "i"], X, [_init("i", [[0], [1]])]),
    "NonZero": _case(["x"], X),
    "Resize": _case(["x", "", "scales"], X4, [_init("scales", [1.0, 1.0, 2.0, 2.0], np.float32)],
                    mode="nearest"),
    "Reshape": _case(["x", "shape"], X, [_init("shape", [3, 2])]),
    "Expand": _case(["x", "shape"], {"x": ([1, 3], F)}, [_init("shape", [2, 3])]),
    "Tile": _case(["x", "reps"], X, [_init("reps", [2, 1])]),
    "Where": _case(["c", "x", "y"], {"c": ([2, 3], B), **XY}),
    "Range": _case(["s", "l", "d"], {"s": ([], F), "l": ([], F), "d": ([], F)}),
    "Slice": _case(["x", "starts", "ends", "axes", "steps"], X,
                   [_init("starts", [0]), _init("ends", [1]), _init("axes", [0]),
                    _init("steps", [1])]),
    "Clip": _case(["x", "lo", "hi"], X,
                  [_init("lo", 0.0, np.float32), _init("hi", 1.0, np.float32)]),
    "Pad": _case(["x", "pads", "cv"], X,
                 [_init("pads", [0, 1, 0, 1]), _init("cv", 0.0, np.float32)]),
    "TopK": _case(["x", "k"], X, [_init("k", [1])], outputs=2),
    "Sum": _case(["x", "y", "z"], {**XY, "z": ([2, 3], F)}),
    "GlobalAveragePool": _case(["x"], X4),
    "GlobalMaxPool": _case(["x"], X4),
    "GatherElements": _case(["x", "i"], {"x": ([2, 3], F), "i": ([2, 3], I64)}),
    "CumSum": _case(["x", "axis"], X, [_init("axis", 1)]),
    "CumProd": _case(["x", "axis"], X, [_init("axis", 1)], opset=26),
    "ScatterElements": _case(["x", "i", "u"], {"x": ([2, 3], F), "i": ([2, 3], I64),
                                               "u": ([2, 3], F)}, axis=1),
    "Scatter": _case(["x", "i", "u"], {"x": ([2, 3], F), "i": ([2, 3], I64),
                                       "u": ([2, 3], F)}, opset=10, axis=1),
    "BitShift": _case(["x", "y"], {"x": ([2, 3], TensorProto.UINT8),
                                   "y": ([2, 3], TensorProto.UINT8)}, direction="LEFT"),
    "SoftmaxCrossEntropyLoss": _case(["x", "t", "w"], {"x": ([2, 3], F), "t": ([2], I64),
                                                       "w": ([3], F)}, outputs=2),
    "NegativeLogLikelihoodLoss": _case(["x", "t", "w"], {"x": ([2, 3], F), "t": ([2], I64),
                                                         "w": ([3], F)}),
    "RMSNormalization": _case(["x", "s"], {"x": ([2, 3], F), "s": ([3], F)}, opset=23),
    "GridSample": _case(["x", "g"], {"x": ([1, 2, 4, 4], F), "g": ([1, 3, 3, 2], F)},
                        opset=16),
    "QuantizeLinear": _case(["x", "s", "z"], {"x": ([2, 3], F), "s": ([], F),
                                              "z": ([], TensorProto.INT8)}),
    "Xor": _case(["x", "y"], BOOLS),
    **{op: _case(["x", "y"], INTS, opset=18) for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")},
    "BitwiseNot": _case(["x"], {"x": ([2, 3], TensorProto.INT32)}, opset=18),
    **{op: _case(["x"], X) for op in ("Asinh", "Acosh", "Atanh", "ThresholdedRelu")},
    "Swish": _case(["x"], X, opset=24),
    "Hardmax": _case(["x"], X, axis=1),
    "LRN": _case(["x"], X4, size=3),
    "Shrink": _case(["x"], X, lambd=1.0),
    "LSTM": _case(["x", "w", "r"], {"x": ([2, 1, 3], F), "w": ([1, 8, 3], F),
                                    "r": ([1, 8, 2], F)}, outputs=3, hidden_size=2),
    "GRU": _case(["x", "w", "r"], {"x": ([2, 1, 3], F), "w": ([1, 6, 3], F),
                                   "r": ([1, 6, 2], F)}, outputs=2, hidden_size=2),
    "ReduceLogSum": _case(["x", "axes"], X, [_init("axes", [1])], opset=18),
    "ConstantOfShape": _case(["shape"], None, [_init("shape", [2, 3])]),
    "Conv": _case(["x", "w", "b"], X4,
                  [_init("w", np.ones((2, 2, 3, 3)), np.float32),
                   _init("b", [0.0, 0.0], np.float32)],
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "ConvTranspose": _case(["x", "w", "b"], X4,
                           [_init("w", np.ones((2, 3, 3, 3)), np.float32),
                            _init("b", [0.0] * 3, np.float32)], strides=[2, 2]),
    "MaxPool": _case(["x"], X4, kernel_shape=[2, 2]),
    "AveragePool": _case(["x"], X4, kernel_shape=[2, 2]),
    "BatchNormalization": _case(
        ["x", "scale", "bias", "mean", "var"], X4,
        [_init(n, [1.0, 1.0], np.float32) for n in ("scale", "bias", "mean", "var")]),
    "LayerNormalization": _case(["x", "g", "b"], X,
                                [_init("g", [1.0] * 3, np.float32),
                                 _init("b", [0.0] * 3, np.float32)], opset=17),
    "MatMul": _case(["x", "w"], X, [_init("w", np.ones((3, 4)), np.float32)]),
    "Gemm": _case(["x", "w", "c"], X, [_init("w", np.ones((3, 4)), np.float32),
                                       _init("c", np.zeros(4), np.float32)]),
    "Concat": _case(["x", "y"], XY, axis=0),
    "Split": _case(["x", "split"], {"x": ([4, 3], F)}, [_init("split", [2, 2])], outputs=2,
                   axis=0),
    "Gather": _case(["x", "i"], X, [_init("i", [0, 1])]),
    "Squeeze": _case(["x", "axes"], {"x": ([1, 3], F)}, [_init("axes", [0])]),
    "Unsqueeze": _case(["x", "axes"], X, [_init("axes", [0])]),
    "ReduceSum": _case(["x", "axes"], X, [_init("axes", [1])]),
    **{op: _case(["x"], X, axes=[1])
       for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")},
    "Constant": _case([], None, value=_init("v", [1.0], np.float32)),
    "If": _case(["c"], {"c": ([], B)}, then_branch=_branch("then", 1.0),
                else_branch=_branch("else", 0.0)),
    "Loop": _case(["m", "", "x"], X, [_init("m", 2)], body=_loop_body()),
}
"""One ONNX model per ONNX op of the mapping table whose GE type is registered."""


def _model(op: str, case: dict[str, Any]) -> bytes:
    outs = [f"out{k}" for k in range(case["outputs"])]
    node = helper.make_node(op, case["inputs"], outs, name="n", **case["attrs"])
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info(n, t, s) for n, (s, t) in case["data"].items()],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs],
        initializer=case["inits"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case["opset"])])
    return model.SerializeToString()


@pytest.mark.parametrize("op", sorted(CASES))
def test_onnx_import_names_ports_as_the_registry(op: str) -> None:
    g = air.onnx.load(_model(op, CASES[op]))
    (node,) = [n for n in g.nodes if n.name == "n"]
    assert not node.type.startswith("onnx::"), f"{op} did not map"
    assert air.ops.is_registered(node.type), f"{op} maps to {node.type}, which is not registered"
    check_ports(node)


def test_every_mapped_onnx_op_with_a_registered_type_has_a_case() -> None:
    table = _core._onnx_mapping()
    assert len(table) > 50
    missing = sorted(onnx_op for onnx_op, ge in table
                     if air.ops.is_registered(ge) and onnx_op not in CASES)
    assert missing == [], f"ONNX ops mapped to registered GE types without a case: {missing}"


def test_registry_keeps_ge_port_names_of_the_known_disagreements() -> None:
    """GE's own declarations of the ops whose ONNX mapping disagreed with the registry."""
    ports = {
        "PadV3": (["x", "paddings", "constant_values"], ["y"]),
        "MaxPoolV3": (["x"], ["y"]),
        "Conv2D": (["x", "filter", "bias", "offset_w"], ["y"]),
        "LogSoftmaxV2": (["logits"], ["logsoftmax"]),
    }
    for ty, (ins, outs) in ports.items():
        decl = air.ops.get(ty)
        assert (decl.input_names(), decl.output_names()) == (ins, outs), ty


def test_onnx_pad_with_axes_stays_an_onnx_op() -> None:
    """GE's PadV3 has no `axes` input: an opset-18 Pad that names axes is not PadV3."""
    case = _case(["x", "pads", "", "axes"], X, [_init("pads", [1, 1]), _init("axes", [1])],
                 opset=18)
    g = air.onnx.load(_model("Pad", case))
    (node,) = [n for n in g.nodes if n.name == "n"]
    assert node.type == "onnx::Pad"


# ---------------------------------------------------------------------------------------------
# PyTorch.


def _torch_graphs() -> list[tuple[str, air.Graph]]:
    pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    from support.torch_models import MODELS, MORE, build, build_more, example

    graphs = []
    for name in MODELS:
        model, rest, kind = build(name)
        graphs.append((name, air.torch.export(model, (example(rest, kind, 2, seed=0),))))
    for name in MORE:
        model, inputs, _ = build_more(name)
        graphs.append((name, air.torch.export(model, inputs(2))))
    return graphs


def test_torch_frontend_names_ports_as_the_registry() -> None:
    seen: set[str] = set()
    for _, g in _torch_graphs():
        for node in g.nodes:
            if node.type in FRAME or not air.ops.is_registered(node.type):
                continue
            seen.add(node.type)
            check_ports(node)
    # The test models reach the main families.
    assert {"Conv2D", "BatchNorm", "MatMulV2", "Add"} & seen
