"""Build ``transformer_block.onnx``: one pre-norm transformer block with static shapes
(LayerNormalization, MatMul projections, softmax attention over 2 heads, GELU written with
Erf, residual Adds), random weights, opset 17. Run: ``python examples/transformer_block.py``.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B, S, H, HEADS = 2, 16, 32, 2
D = H // HEADS


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def w(name: str, *shape: int, scale: float = 0.05) -> str:
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name: str, value: object, dtype: object = np.int64) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(t: str, ins: list[str], out: str, **attrs: object) -> str:
        nodes.append(helper.make_node(t, ins, [out], name=out, **attrs))
        return out

    def ln(x: str, p: str) -> str:
        return op("LayerNormalization",
                  [x, c(f"{p}.g", np.ones(H), np.float32), c(f"{p}.b", np.zeros(H), np.float32)],
                  f"{p}.out", axis=-1, epsilon=1e-5)

    def linear(x: str, p: str, n_in: int, n_out: int) -> str:
        m = op("MatMul", [x, w(f"{p}.w", n_in, n_out)], f"{p}.mm")
        return op("Add", [m, w(f"{p}.b", n_out)], f"{p}.out")

    def heads(x: str, p: str) -> str:
        r = op("Reshape", [x, c(f"{p}.shape", [B, S, HEADS, D])], f"{p}.split")
        return op("Transpose", [r], f"{p}.heads", perm=[0, 2, 1, 3])

    h = ln("x", "ln1")
    q, k, v = (heads(linear(h, n, H, H), n) for n in ("q", "k", "v"))
    kt = op("Transpose", [k], "k.t", perm=[0, 1, 3, 2])
    scores = op("MatMul", [q, kt], "scores")
    scaled = op("Div", [scores, c("sqrt_d", np.sqrt(D), np.float32)], "scaled")
    probs = op("Softmax", [scaled], "probs", axis=-1)
    ctx = op("MatMul", [probs, v], "ctx")
    merged = op("Reshape", [op("Transpose", [ctx], "ctx.t", perm=[0, 2, 1, 3]),
                            c("merge.shape", [B, S, H])], "ctx.merged")
    x1 = op("Add", ["x", linear(merged, "o", H, H)], "res1")
    h2 = ln(x1, "ln2")
    f = linear(h2, "fc1", H, 4 * H)
    # GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
    e = op("Erf", [op("Div", [f, c("sqrt2", np.sqrt(2.0), np.float32)], "gelu.div")], "gelu.erf")
    gelu = op("Mul", [op("Mul", [f, op("Add", [e, c("one", 1.0, np.float32)], "gelu.add")],
                         "gelu.mul"), c("half", 0.5, np.float32)], "gelu.out")
    y = op("Add", [x1, linear(gelu, "fc2", 4 * H, H)], "y")
    graph = helper.make_graph(
        nodes, "transformer_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, H])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [B, S, H])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformer_block.onnx")
    onnx.save(build(), path)
    print(f"wrote {path}")
