"""Real-architecture ONNX models built with ``onnx.helper`` (random weights, tiny widths).

The graphs are laid out the way exporters lay them out: shape arithmetic through
``Shape``/``Gather``/``Unsqueeze``/``Concat`` with ``Constant`` nodes, ``MatMul`` + ``Add``
for linear layers, attention with ``Reshape``/``Transpose``/``Softmax``, LayerNormalization as
one op (BERT) or decomposed (decoder), batch norm in the CNN, and ``If`` / ``Loop`` bodies that
read values of the enclosing graph.

* :func:`resnet50` - ResNet-50 layout (bottleneck stages 3-4-6-3), opset 13.
* :func:`bert` - BERT-base layout (12 encoder layers), opset 17.
* :func:`decoder` - GPT-style decoder-only transformer, opset 18; 180 layers give > 20k nodes.

Nothing is downloaded; only ``onnx`` and ``numpy`` are needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["GraphBuilder", "bert", "decoder", "resnet50", "save_all"]


class GraphBuilder:
    """A small helper that names values and nodes the way exporters do."""

    def __init__(self, name: str, seed: int = 0) -> None:
        """Start an empty graph called ``name`` with a seeded weight generator."""
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self.rng = np.random.default_rng(seed)
        self.count: dict[str, int] = {}

    def _name(self, op: str) -> str:
        k = self.count.get(op, 0)
        self.count[op] = k + 1
        return f"/{op}_{k}"

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> Any:
        """Add a node; returns its output name (or a list when ``n_out`` > 1)."""
        name = self._name(op_type)
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def node(self, node: onnx.NodeProto) -> None:
        """Add a prebuilt node."""
        self.nodes.append(node)

    def weight(self, name: str, shape: tuple[int, ...], scale: float = 0.02) -> str:
        """A random float32 initializer."""
        arr = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def init(self, name: str, arr: np.ndarray) -> str:
        """An initializer with the given value."""
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def const(self, value: Any, dtype: Any = np.int64) -> str:
        """A ``Constant`` node (exporters emit shape constants this way)."""
        arr = np.asarray(value, dtype=dtype)
        return self.op("Constant", [], value=numpy_helper.from_array(arr))

    def linear(self, x: str, prefix: str, n_in: int, n_out: int) -> str:
        """``MatMul`` + ``Add`` with a weight and a bias."""
        w = self.weight(f"{prefix}.weight", (n_in, n_out))
        b = self.weight(f"{prefix}.bias", (n_out,))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def dim(self, x: str, axis: int) -> str:
        """``Shape`` → ``Gather`` → ``Unsqueeze``: one dimension as a 1-D int64 tensor."""
        s = self.op("Shape", [x])
        d = self.op("Gather", [s, self.const(axis)], axis=0)
        return self.op("Unsqueeze", [d, self.const([0])])

    def model(self, opset: int) -> onnx.ModelProto:
        """The finished, checked model."""
        graph = helper.make_graph(
            self.nodes, self.name, self.inputs, self.outputs, initializer=self.inits
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ascendir-bench"
        )
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


# --------------------------------------------------------------------------------------------
# ResNet-50


def resnet50(width: int = 8, image: int = 64, classes: int = 10) -> onnx.ModelProto:
    """ResNet-50: a 7x7 stem, max pool, bottleneck stages of 3, 4, 6, 3 blocks, average pool,
    classifier. ``width`` is the first stage's inner width (64 in the real network)."""
    b = GraphBuilder("resnet50")
    b.inputs.append(
        helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, image, image])
    )

    def conv_bn(x: str, prefix: str, cin: int, cout: int, k: int, stride: int, relu: bool) -> str:
        w = b.weight(f"{prefix}.conv.weight", (cout, cin, k, k), 0.1)
        y = b.op(
            "Conv",
            [x, w],
            kernel_shape=[k, k],
            strides=[stride, stride],
            pads=[k // 2] * 4,
            dilations=[1, 1],
            group=1,
        )
        scale = b.init(f"{prefix}.bn.weight", np.ones(cout, np.float32))
        bias = b.init(f"{prefix}.bn.bias", np.zeros(cout, np.float32))
        mean = b.init(f"{prefix}.bn.running_mean", np.zeros(cout, np.float32))
        var = b.init(f"{prefix}.bn.running_var", np.ones(cout, np.float32))
        y = b.op("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5, momentum=0.9)
        return b.op("Relu", [y]) if relu else y

    x = conv_bn("input", "conv1", 3, width, 7, 2, True)
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = width
    for stage, (blocks, mult) in enumerate(zip((3, 4, 6, 3), (1, 2, 4, 8), strict=True)):
        inner = width * mult
        cout = inner * 4
        for blk in range(blocks):
            stride = 2 if blk == 0 and stage > 0 else 1
            p = f"layer{stage + 1}.{blk}"
            y = conv_bn(x, f"{p}.a", cin, inner, 1, 1, True)
            y = conv_bn(y, f"{p}.b", inner, inner, 3, stride, True)
            y = conv_bn(y, f"{p}.c", inner, cout, 1, 1, False)
            short = conv_bn(x, f"{p}.down", cin, cout, 1, stride, False) if blk == 0 else x
            x = b.op("Relu", [b.op("Add", [y, short])])
            cin = cout
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    w = b.weight("fc.weight", (classes, cin))
    bias = b.weight("fc.bias", (classes,))
    y = b.op("Gemm", [x, w, bias], alpha=1.0, beta=1.0, transB=1)
    b.nodes[-1].output[0] = "logits"
    b.outputs.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes]))
    del y
    return b.model(13)


# --------------------------------------------------------------------------------------------
# Transformers


def _heads(b: GraphBuilder, x: str, heads: int, dh: int, perm: list[int]) -> str:
    """``[B, S, H]`` → ``[B, heads, S, dh]`` (or the K layout) with an exporter-style shape."""
    shape = b.op("Concat", [b.dim(x, 0), b.dim(x, 1), b.const([heads]), b.const([dh])], axis=0)
    return b.op("Transpose", [b.op("Reshape", [x, shape])], perm=perm)


def _merge(b: GraphBuilder, x: str, hidden: int, ref: str) -> str:
    """``[B, heads, S, dh]`` → ``[B, S, H]``."""
    t = b.op("Transpose", [x], perm=[0, 2, 1, 3])
    shape = b.op("Concat", [b.dim(ref, 0), b.dim(ref, 1), b.const([hidden])], axis=0)
    return b.op("Reshape", [t, shape])


def _layer_norm_decomposed(b: GraphBuilder, x: str, prefix: str, hidden: int, opset: int) -> str:
    """LayerNorm as exporters decompose it: mean, centred, variance, rsqrt, scale, shift."""

    def mean(v: str) -> str:
        if opset >= 18:
            return b.op("ReduceMean", [v, b.const([-1])], keepdims=1)
        return b.op("ReduceMean", [v], axes=[-1], keepdims=1)

    mu = mean(x)
    d = b.op("Sub", [x, mu])
    var = mean(b.op("Pow", [d, b.const(2.0, np.float32)]))
    std = b.op("Sqrt", [b.op("Add", [var, b.const(1e-5, np.float32)])])
    y = b.op("Div", [d, std])
    g = b.init(f"{prefix}.weight", np.ones(hidden, np.float32))
    beta = b.init(f"{prefix}.bias", np.zeros(hidden, np.float32))
    return b.op("Add", [b.op("Mul", [y, g]), beta])


def _gelu(b: GraphBuilder, x: str) -> str:
    """The erf form of GELU: ``x * 0.5 * (1 + erf(x / sqrt(2)))``."""
    e = b.op("Erf", [b.op("Div", [x, b.const(1.4142135, np.float32)])])
    return b.op(
        "Mul",
        [b.op("Mul", [x, b.op("Add", [e, b.const(1.0, np.float32)])]), b.const(0.5, np.float32)],
    )


def _attention(b: GraphBuilder, x: str, prefix: str, hidden: int, heads: int, mask: str) -> str:
    dh = hidden // heads
    q = _heads(b, b.linear(x, f"{prefix}.query", hidden, hidden), heads, dh, [0, 2, 1, 3])
    k = _heads(b, b.linear(x, f"{prefix}.key", hidden, hidden), heads, dh, [0, 2, 3, 1])
    v = _heads(b, b.linear(x, f"{prefix}.value", hidden, hidden), heads, dh, [0, 2, 1, 3])
    s = b.op("Div", [b.op("MatMul", [q, k]), b.const(float(np.sqrt(dh)), np.float32)])
    p = b.op("Softmax", [b.op("Add", [s, mask])], axis=-1)
    ctx = _merge(b, b.op("MatMul", [p, v]), hidden, x)
    return b.linear(ctx, f"{prefix}.output", hidden, hidden)


def _if_scale(b: GraphBuilder, x: str, hidden: int) -> str:
    """An ``If`` whose branches read ``x`` from the enclosing graph (a data-dependent rescale)."""
    seq = b.op("Gather", [b.op("Shape", [x]), b.const(1)], axis=0)
    cond = b.op("Greater", [seq, b.const(64)])
    sv = helper.make_tensor_value_info
    then_g = helper.make_graph(
        [helper.make_node("Mul", [x, "if_half"], ["then_out"], name="then_mul")],
        "if_then",
        [],
        [sv("then_out", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.array(0.5, np.float32), "if_half")],
    )
    else_g = helper.make_graph(
        [helper.make_node("Identity", [x], ["else_out"], name="else_id")],
        "if_else",
        [],
        [sv("else_out", TensorProto.FLOAT, None)],
    )
    out = b.op("If", [cond], then_branch=then_g, else_branch=else_g)
    del hidden
    return out


def _loop_accumulate(b: GraphBuilder, x: str, trips: int) -> str:
    """A ``Loop`` that adds ``x`` (read from the enclosing graph) ``trips`` times to a carry."""
    sv = helper.make_tensor_value_info
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="loop_cond"),
            helper.make_node("Add", ["carry_in", x], ["carry_out"], name="loop_add"),
        ],
        "loop_body",
        [
            sv("iter", TensorProto.INT64, []),
            sv("cond_in", TensorProto.BOOL, []),
            sv("carry_in", TensorProto.FLOAT, None),
        ],
        [sv("cond_out", TensorProto.BOOL, []), sv("carry_out", TensorProto.FLOAT, None)],
    )
    zero = b.op("Mul", [x, b.const(0.0, np.float32)])
    trip = b.const(trips)
    cond = b.const(True, np.bool_)
    return b.op("Loop", [trip, cond, zero], body=body)


def bert(
    layers: int = 12, hidden: int = 32, heads: int = 4, vocab: int = 100, max_pos: int = 64
) -> onnx.ModelProto:
    """BERT-base layout: embeddings (word + position + token type, LayerNormalization), an
    extended attention mask, ``layers`` encoder layers (self-attention, GELU feed-forward,
    post-LayerNorm), a pooler, and an ``If`` rescale of the pooled output."""
    b = GraphBuilder("bert", seed=1)
    ids = "input_ids"
    b.inputs.append(helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]))
    b.inputs.append(
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    )
    b.inputs.append(
        helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"])
    )
    word = b.op(
        "Gather", [b.weight("embeddings.word_embeddings.weight", (vocab, hidden)), ids], axis=0
    )
    # Position ids: slice of a buffer to the sequence length.
    seq = b.dim(ids, 1)
    pos_buf = b.init("embeddings.position_ids", np.arange(max_pos, dtype=np.int64)[None, :])
    pos_ids = b.op("Slice", [pos_buf, b.const([0]), seq, b.const([1]), b.const([1])])
    pos = b.op(
        "Gather",
        [b.weight("embeddings.position_embeddings.weight", (max_pos, hidden)), pos_ids],
        axis=0,
    )
    tok = b.op(
        "Gather",
        [b.weight("embeddings.token_type_embeddings.weight", (2, hidden)), "token_type_ids"],
        axis=0,
    )
    x = b.op("Add", [b.op("Add", [word, tok]), pos])
    ln_w = b.init("embeddings.LayerNorm.weight", np.ones(hidden, np.float32))
    ln_b = b.init("embeddings.LayerNorm.bias", np.zeros(hidden, np.float32))
    x = b.op("LayerNormalization", [x, ln_w, ln_b], axis=-1, epsilon=1e-12)
    # Extended mask: (1 - mask[:, None, None, :]) * -10000.
    m = b.op("Unsqueeze", ["attention_mask", b.const([1, 2])])
    m = b.op("Cast", [m], to=TensorProto.FLOAT)
    mask = b.op("Mul", [b.op("Sub", [b.const(1.0, np.float32), m]), b.const(-10000.0, np.float32)])
    for i in range(layers):
        p = f"encoder.layer.{i}"
        att = _attention(b, x, f"{p}.attention", hidden, heads, mask)
        x = b.op(
            "LayerNormalization",
            [
                b.op("Add", [att, x]),
                b.init(f"{p}.attention.LayerNorm.weight", np.ones(hidden, np.float32)),
                b.init(f"{p}.attention.LayerNorm.bias", np.zeros(hidden, np.float32)),
            ],
            axis=-1,
            epsilon=1e-12,
        )
        h = _gelu(b, b.linear(x, f"{p}.intermediate.dense", hidden, 4 * hidden))
        h = b.linear(h, f"{p}.output.dense", 4 * hidden, hidden)
        x = b.op(
            "LayerNormalization",
            [
                b.op("Add", [h, x]),
                b.init(f"{p}.output.LayerNorm.weight", np.ones(hidden, np.float32)),
                b.init(f"{p}.output.LayerNorm.bias", np.zeros(hidden, np.float32)),
            ],
            axis=-1,
            epsilon=1e-12,
        )
    b.nodes[-1].output[0] = "last_hidden_state"
    first = b.op("Gather", ["last_hidden_state", b.const(0)], axis=1)
    pooled = b.op(
        "Tanh",
        [
            b.op(
                "Gemm",
                [
                    first,
                    b.weight("pooler.dense.weight", (hidden, hidden)),
                    b.weight("pooler.dense.bias", (hidden,)),
                ],
                transB=1,
            )
        ],
    )
    out = _if_scale(b, pooled, hidden)
    b.op("Identity", [out])
    b.nodes[-1].output[0] = "pooler_output"
    b.outputs.append(
        helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden]
        )
    )
    b.outputs.append(
        helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch", hidden])
    )
    return b.model(17)


def decoder(
    layers: int = 180, hidden: int = 16, heads: int = 2, vocab: int = 64, max_pos: int = 128
) -> onnx.ModelProto:
    """GPT-style decoder-only transformer: token + position embeddings, ``layers`` pre-norm
    blocks (decomposed LayerNorm, causal self-attention with a sliced mask buffer and
    ``Where``, GELU MLP), a final norm, tied LM head, and a ``Loop`` over the logits."""
    b = GraphBuilder("decoder", seed=2)
    ids = "input_ids"
    b.inputs.append(helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]))
    wte = b.weight("transformer.wte.weight", (vocab, hidden))
    x = b.op("Gather", [wte, ids], axis=0)
    seq = b.dim(ids, 1)
    start = b.const([0])
    pos_ids = b.op("Range", [b.const(0), b.op("Squeeze", [seq, b.const([0])]), b.const(1)])
    pos = b.op("Gather", [b.weight("transformer.wpe.weight", (max_pos, hidden)), pos_ids], axis=0)
    x = b.op("Add", [x, pos])
    causal = b.init("causal_bias", np.tril(np.ones((max_pos, max_pos), dtype=bool))[None, None])
    neg = b.const(-3.4e38, np.float32)
    dh = hidden // heads
    for i in range(layers):
        p = f"transformer.h.{i}"
        h = _layer_norm_decomposed(b, x, f"{p}.ln_1", hidden, 18)
        q = _heads(b, b.linear(h, f"{p}.attn.q", hidden, hidden), heads, dh, [0, 2, 1, 3])
        k = _heads(b, b.linear(h, f"{p}.attn.k", hidden, hidden), heads, dh, [0, 2, 3, 1])
        v = _heads(b, b.linear(h, f"{p}.attn.v", hidden, hidden), heads, dh, [0, 2, 1, 3])
        s = b.op("Div", [b.op("MatMul", [q, k]), b.const(float(np.sqrt(dh)), np.float32)])
        # Causal mask: bias[:, :, :seq, :seq] via Slice on axes 2 and 3, then Where.
        mask = b.op(
            "Slice",
            [
                causal,
                b.op("Concat", [start, start], axis=0),
                b.op("Concat", [seq, seq], axis=0),
                b.const([2, 3]),
            ],
        )
        s = b.op("Where", [mask, s, neg])
        a = _merge(b, b.op("MatMul", [b.op("Softmax", [s], axis=-1), v]), hidden, h)
        x = b.op("Add", [x, b.linear(a, f"{p}.attn.c_proj", hidden, hidden)])
        h = _layer_norm_decomposed(b, x, f"{p}.ln_2", hidden, 18)
        h = b.linear(
            _gelu(b, b.linear(h, f"{p}.mlp.c_fc", hidden, 4 * hidden)),
            f"{p}.mlp.c_proj",
            4 * hidden,
            hidden,
        )
        x = b.op("Add", [x, h])
    x = _layer_norm_decomposed(b, x, "transformer.ln_f", hidden, 18)
    logits = b.op("MatMul", [x, b.op("Transpose", [wte], perm=[1, 0])])
    acc = _loop_accumulate(b, logits, 2)
    b.op("Identity", [acc])
    b.nodes[-1].output[0] = "logits"
    b.outputs.append(
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", vocab])
    )
    return b.model(18)


def save_all(directory: str) -> dict[str, str]:
    """Write the three models into ``directory``; returns ``{name: path}``."""
    import os

    os.makedirs(directory, exist_ok=True)
    paths = {}
    for name, fn in (("resnet50", resnet50), ("bert_base", bert), ("decoder", decoder)):
        path = os.path.join(directory, f"{name}.onnx")
        onnx.save(fn(), path)
        paths[name] = path
    return paths


if __name__ == "__main__":
    import sys

    for name, path in save_all(sys.argv[1] if len(sys.argv) > 1 else "models").items():
        m = onnx.load(path)
        print(f"{name}: {len(m.graph.node)} nodes, {path}")
