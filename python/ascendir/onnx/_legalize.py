"""ONNX-level expansions of forms GE has no single op for (used by :mod:`ascendir.onnx.expand`).

Each rule rewrites one ONNX node into standard ONNX nodes of the model's opset that the mapping
expresses, with the same meaning, or declines (returns ``False``) when a fact it needs — a rank,
a constant — is not known or the node is malformed. The rules:

- ``Pad`` with ``axes`` (opset 18): the pads of every axis gathered from the given ones;
- 1-D ``Conv`` / ``ConvTranspose`` / ``AveragePool`` / ``MaxPool``: the 2-D op over
  a unit height (``Unsqueeze`` before, ``Squeeze`` after; attributes get a leading 1 / 0);
- ``Max`` / ``Min`` of one or more than two inputs: a chain of two-input ops (one input: an
  ``Identity``); ``Mean``: ``Sum`` over the count;
- ``Compress``: ``Gather`` of the ``NonZero`` indices of the condition (flattened without axis);
- ``EyeLike`` of a static shape: a constant;
- batch-major (``layout=1``) ``LSTM`` / ``GRU``: the time-major op between ``Transpose`` nodes;
- ``RNN`` of a static length without sequence lengths or clipping: unrolled over time;
- ``Transpose`` without ``perm``, ``LRN``, ``LpPool``, ``ReverseSequence``, integer
  ``DequantizeLinear`` / ``QuantizeLinear``, ``QLinearMatMul``, ``Scan``: see their rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class Ctx:
    """What a rule may use: facts of the model and a builder of fresh nodes."""

    def __init__(
        self,
        onnx: Any,
        opset: int,
        types: dict[str, Any],
        consts: Any,
        fresh: Callable[[str], str],
        base: str,
    ) -> None:
        self.onnx = onnx
        self.opset = opset
        self.types = types
        self.consts = consts
        self.fresh = fresh
        self.base = base
        self.nodes: list[Any] = []
        self.inner: list[Any] = []  # nodes made inside a body the rule builds

    def rank(self, name: str) -> int | None:
        t = self.types.get(name)
        if t is None or not t.tensor_type.HasField("shape"):
            return None
        return len(t.tensor_type.shape.dim)

    def shape(self, name: str) -> list[int] | None:
        t = self.types.get(name)
        if t is None or not t.tensor_type.HasField("shape"):
            return None
        dims = t.tensor_type.shape.dim
        if not all(d.HasField("dim_value") for d in dims):
            return None
        return [d.dim_value for d in dims]

    def elem_type(self, name: str) -> int | None:
        t = self.types.get(name)
        return t.tensor_type.elem_type if t is not None and t.tensor_type.elem_type else None

    def node(
        self, op: str, inputs: list[str], outputs: list[str] | int = 1, **attrs: Any
    ) -> list[str]:
        """Append ``op`` and return its output names (fresh ones when ``outputs`` is a count)."""
        if isinstance(outputs, int):
            outputs = [self.fresh(f"{self.base}/{op}_out{i}") for i in range(outputs)]
        n = self.onnx.helper.make_node(
            op, inputs, outputs, name=self.fresh(f"{self.base}/{op}"), **attrs
        )
        self.nodes.append(n)
        return list(outputs)

    def constant(self, value: np.ndarray) -> str:
        tensor = self.onnx.numpy_helper.from_array(value)
        return self.node("Constant", [], value=tensor)[0]

    def unsqueeze(self, x: str, axis: int) -> str:
        if self.opset >= 13:
            return self.node("Unsqueeze", [x, self.constant(np.array([axis], np.int64))])[0]
        return self.node("Unsqueeze", [x], axes=[axis])[0]

    def squeeze(self, x: str, axis: int, out: str) -> None:
        if self.opset >= 13:
            self.node("Squeeze", [x, self.constant(np.array([axis], np.int64))], [out])
        else:
            self.node("Squeeze", [x], [out], axes=[axis])


def _attrs(n: Any, onnx: Any) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}


def _pad_axes(cx: Ctx, n: Any) -> bool:
    if len(n.input) < 4 or not n.input[3]:
        return False
    axes, r = cx.consts.get(n.input[3]), cx.rank(n.input[0])
    if axes is None or r is None:
        return False
    norm = [int(a) + r if a < 0 else int(a) for a in axes.reshape(-1)]
    if any(not 0 <= a < r for a in norm) or len(set(norm)) != len(norm):
        return False
    k = len(norm)
    spot = [norm.index(p) if p in norm else 2 * k for p in range(r)]
    index = np.array(spot + [s + k if s < 2 * k else s for s in spot], np.int64)
    pads = cx.consts.get(n.input[1])
    if pads is not None:
        if pads.size != 2 * k:
            return False
        full = cx.constant(np.concatenate([pads.reshape(-1).astype(np.int64), [0]])[index])
    else:
        zero = cx.constant(np.zeros(1, np.int64))
        cat = cx.node("Concat", [n.input[1], zero], axis=0)[0]
        full = cx.node("Gather", [cat, cx.constant(index)], axis=0)[0]
    value = [n.input[2]] if len(n.input) > 2 and n.input[2] else []
    cx.node("Pad", [n.input[0], full, *value], list(n.output), **_attrs(n, cx.onnx))
    return True


_LEADING = {
    "kernel_shape": 1,
    "strides": 1,
    "dilations": 1,
    "output_padding": 0,
    "output_shape": 1,
}


def _one_d(cx: Ctx, n: Any) -> bool:
    attrs = _attrs(n, cx.onnx)
    rank = cx.rank(n.input[0])
    if rank is None:
        ks = attrs.get("kernel_shape")
        rank = len(ks) + 2 if ks is not None else None
    if rank != 3 or "output_shape" in attrs and n.op_type == "ConvTranspose":
        return False
    for key, lead in _LEADING.items():
        if key in attrs:
            attrs[key] = [lead, *attrs[key]]
    # One value per spatial axis (two for pads), now with the unit height's in front.
    if (
        any(len(attrs[key]) != 2 for key in _LEADING if key in attrs)
        or len(attrs.get("pads", [0, 0])) != 2
    ):
        return False
    if "pads" in attrs:
        b, e = attrs["pads"]
        attrs["pads"] = [0, b, 0, e]
    ins = [cx.unsqueeze(n.input[0], 2)]
    if n.op_type in ("Conv", "ConvTranspose"):
        ins.append(cx.unsqueeze(n.input[1], 2))
        ins.extend(n.input[2:])
    outs = cx.node(n.op_type, ins, len(n.output), **attrs)
    for y4, y in zip(outs, n.output, strict=True):
        if y:
            cx.squeeze(y4, 2, y)
    return True


def _variadic(cx: Ctx, n: Any) -> bool:
    ins = [x for x in n.input if x]
    if not ins or (len(ins) == 2 and n.op_type != "Mean"):
        return False
    if len(ins) == 1:
        cx.node("Identity", ins, list(n.output))
        return True
    if n.op_type == "Mean":
        t = cx.elem_type(ins[0])
        if t is None:
            return False
        dtype = cx.onnx.helper.tensor_dtype_to_np_dtype(t)
        if dtype.kind != "f":
            return False
        total = cx.node("Sum", ins)[0]
        cx.node("Div", [total, cx.constant(np.array(len(ins), dtype))], list(n.output))
        return True
    acc = ins[0]
    for i, x in enumerate(ins[1:], 1):
        out: list[str] | int = list(n.output) if i == len(ins) - 1 else 1
        acc = cx.node(n.op_type, [acc, x], out)[0]
    return True


def _compress(cx: Ctx, n: Any) -> bool:
    axis = _attrs(n, cx.onnx).get("axis")
    x = n.input[0]
    if axis is None:
        x = cx.node("Reshape", [x, cx.constant(np.array([-1], np.int64))])[0]
        axis = 0
    where = cx.node("NonZero", [n.input[1]])[0]
    flat = cx.node("Reshape", [where, cx.constant(np.array([-1], np.int64))])[0]
    cx.node("Gather", [x, flat], list(n.output), axis=axis)
    return True


def _eye_like(cx: Ctx, n: Any) -> bool:
    shape, attrs = cx.shape(n.input[0]), _attrs(n, cx.onnx)
    t = attrs.get("dtype") or cx.elem_type(n.input[0])
    if shape is None or len(shape) != 2 or t is None:
        return False
    dtype = cx.onnx.helper.tensor_dtype_to_np_dtype(t)
    value = np.eye(shape[0], shape[1], int(attrs.get("k", 0)), dtype=dtype)
    cx.node("Constant", [], list(n.output), value=cx.onnx.numpy_helper.from_array(value))
    return True


def _batch_major_rnn(cx: Ctx, n: Any) -> bool:
    attrs = _attrs(n, cx.onnx)
    if attrs.get("layout", 0) != 1:
        return False
    del attrs["layout"]
    ins = list(n.input)
    ins[0] = cx.node("Transpose", [ins[0]], perm=[1, 0, 2])[0]
    for i in (5, 6):  # initial_h, initial_c: [batch, dirs, hidden] -> [dirs, batch, hidden]
        if i < len(ins) and ins[i]:
            ins[i] = cx.node("Transpose", [ins[i]], perm=[1, 0, 2])[0]
    outs = cx.node(n.op_type, ins, len(n.output), **attrs)
    for i, (tm, y) in enumerate(zip(outs, n.output, strict=True)):
        if y:  # Y: [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden]
            perm = [2, 0, 1, 3] if i == 0 else [1, 0, 2]
            cx.node("Transpose", [tm], [y], perm=perm)
    return True


def _transpose(cx: Ctx, n: Any) -> bool:
    r = cx.rank(n.input[0])
    if r is None or any(a.name == "perm" for a in n.attribute):
        return False
    cx.node("Transpose", [n.input[0]], list(n.output), perm=list(range(r - 1, -1, -1)))
    return True


def _float_type(cx: Ctx, name: str) -> Any | None:
    t = cx.elem_type(name)
    if t is None:
        return None
    dtype = cx.onnx.helper.tensor_dtype_to_np_dtype(t)
    return dtype if dtype.kind == "f" else None


def _lrn(cx: Ctx, n: Any) -> bool:
    # ONNX's window over channels: [c - floor((size-1)/2), c + ceil((size-1)/2)]; summed with
    # a 0/1 channel-mixing convolution.
    shape, dtype = cx.shape(n.input[0]), _float_type(cx, n.input[0])
    if shape is None or len(shape) != 4 or dtype is None:
        return False
    attrs = _attrs(n, cx.onnx)
    size = int(attrs["size"])
    alpha, beta = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75)
    bias = attrs.get("bias", 1.0)
    c, lo, hi = shape[1], (size - 1) // 2, size - 1 - (size - 1) // 2
    co, ci = np.meshgrid(np.arange(c), np.arange(c), indexing="ij")
    w = ((ci >= co - lo) & (ci <= co + hi)).astype(dtype).reshape(c, c, 1, 1)
    x = n.input[0]
    sq = cx.node("Mul", [x, x])[0]
    total = cx.node("Conv", [sq, cx.constant(w)], kernel_shape=[1, 1])[0]
    scaled = cx.node("Mul", [total, cx.constant(np.array(alpha / size, dtype))])[0]
    base = cx.node("Add", [scaled, cx.constant(np.array(bias, dtype))])[0]
    den = cx.node("Pow", [base, cx.constant(np.array(beta, dtype))])[0]
    cx.node("Div", [x, den], list(n.output))
    return True


def _lp_pool(cx: Ctx, n: Any) -> bool:
    # (sum |x|^p)^(1/p) = (avg_including_pads(|x|^p) * window)^(1/p)
    attrs, dtype = _attrs(n, cx.onnx), _float_type(cx, n.input[0])
    dilated = any(d != 1 for d in attrs.get("dilations", []))
    if dtype is None or attrs.get("ceil_mode", 0) or dilated:
        return False
    p = float(attrs.pop("p", 2))
    attrs.pop("dilations", None)
    window = int(np.prod(attrs["kernel_shape"]))
    a = cx.node("Abs", [n.input[0]])[0]
    powed = cx.node("Pow", [a, cx.constant(np.array(p, dtype))])[0]
    avg = cx.node("AveragePool", [powed], count_include_pad=1, **attrs)[0]
    total = cx.node("Mul", [avg, cx.constant(np.array(window, dtype))])[0]
    cx.node("Pow", [total, cx.constant(np.array(1.0 / p, dtype))], list(n.output))
    return True


def _reverse_sequence(cx: Ctx, n: Any) -> bool:
    attrs, r = _attrs(n, cx.onnx), cx.rank(n.input[0])
    ta, ba = int(attrs.get("time_axis", 0)), int(attrs.get("batch_axis", 1))
    if r is None or r < 2 or {ta, ba} != {0, 1}:
        return False
    x, lens = n.input[0], n.input[1]
    i64 = np.int64
    shape = cx.node("Shape", [x])[0]
    steps = cx.node("Gather", [shape, cx.constant(np.array(ta, i64))], axis=0)[0]
    t = cx.node("Range", [cx.constant(np.array(0, i64)), steps, cx.constant(np.array(1, i64))])[0]
    view = [1] * r
    view[ta] = -1
    t = cx.node("Reshape", [t, cx.constant(np.array(view, i64))])[0]
    view = [1] * r
    view[ba] = -1
    length = cx.node("Reshape", [lens, cx.constant(np.array(view, i64))])[0]
    inside = cx.node("Less", [t, length])[0]
    last = cx.node("Sub", [length, cx.constant(np.array(1, i64))])[0]
    mirrored = cx.node("Sub", [last, t])[0]
    index = cx.node("Where", [inside, mirrored, t])[0]
    full = cx.node("Expand", [index, shape])[0]
    cx.node("GatherElements", [x, full], list(n.output), axis=ta)
    return True


_QUANT_RANGE = {2: (0, 255), 3: (-128, 127), 4: (0, 65535), 5: (-32768, 32767), 22: (-8, 7)}
"""ONNX integer element type -> saturation range of QuantizeLinear (types GE has)."""


def _per_axis(cx: Ctx, name: str, x: str, axis: int) -> str | None:
    """``name`` (a scale or zero point) shaped to broadcast against ``x`` along ``axis``."""
    r, sr = cx.rank(x), cx.rank(name)
    if sr is None or r is None:
        return None
    if sr == 0 or (cx.shape(name) or [0]) == [1]:
        return name
    if sr != 1:
        return None
    view = [1] * r
    view[axis % r] = -1
    return cx.node("Reshape", [name, cx.constant(np.array(view, np.int64))])[0]


def _dequantize(cx: Ctx, n: Any) -> bool:
    attrs = _attrs(n, cx.onnx)
    scale_t = cx.elem_type(n.input[1])
    if attrs.get("block_size", 0) or scale_t is None:
        return False
    out_t = int(attrs.get("output_dtype", 0)) or scale_t
    axis = int(attrs.get("axis", 1))
    scale = _per_axis(cx, n.input[1], n.input[0], axis)
    zp = n.input[2] if len(n.input) > 2 and n.input[2] else None
    zpv = _per_axis(cx, zp, n.input[0], axis) if zp else None
    if scale is None or (zp and zpv is None):
        return False
    f32 = cx.onnx.TensorProto.FLOAT
    x = cx.node("Cast", [n.input[0]], to=f32)[0]
    if zpv:
        x = cx.node("Sub", [x, cx.node("Cast", [zpv], to=f32)[0]])[0]
    s = cx.node("Cast", [scale], to=f32)[0]
    y = cx.node("Mul", [x, s])[0]
    cx.node("Cast", [y], list(n.output), to=out_t)
    return True


def _quantize(cx: Ctx, n: Any) -> bool:
    attrs = _attrs(n, cx.onnx)
    zp = n.input[2] if len(n.input) > 2 and n.input[2] else None
    out_t = (cx.elem_type(zp) if zp else None) or int(attrs.get("output_dtype", 0)) or 2
    if attrs.get("block_size", 0) or out_t not in _QUANT_RANGE:
        return False
    axis = int(attrs.get("axis", 1))
    scale = _per_axis(cx, n.input[1], n.input[0], axis)
    zpv = _per_axis(cx, zp, n.input[0], axis) if zp else None
    if scale is None or (zp and zpv is None):
        return False
    f32 = cx.onnx.TensorProto.FLOAT
    x = cx.node("Cast", [n.input[0]], to=f32)[0]
    s = cx.node("Cast", [scale], to=f32)[0]
    q = cx.node("Round", [cx.node("Div", [x, s])[0]])[0]
    if zpv:
        q = cx.node("Add", [q, cx.node("Cast", [zpv], to=f32)[0]])[0]
    lo, hi = _QUANT_RANGE[out_t]
    bounds = [cx.constant(np.array(v, np.float32)) for v in (lo, hi)]
    q = cx.node("Clip", [q, *bounds])[0]
    cx.node("Cast", [q], list(n.output), to=out_t)
    return True


def _scan(cx: Ctx, n: Any) -> bool:
    # Scan (opset >= 9) as a Loop over the scan axis: the body gathers its slices of the scan
    # inputs (outer values) at the iteration number; the stacked outputs are reversed / moved
    # to their axis after the loop.
    if cx.opset < 9:
        return False
    attrs = _attrs(n, cx.onnx)
    body, m = attrs["body"], int(attrs["num_scan_inputs"])
    n_state = len(n.input) - m
    k = len(body.output) - n_state
    in_axes = list(attrs.get("scan_input_axes", [0] * m))
    in_dirs = list(attrs.get("scan_input_directions", [0] * m))
    out_axes = list(attrs.get("scan_output_axes", [0] * k))
    out_dirs = list(attrs.get("scan_output_directions", [0] * k))
    if m < 1 or n_state < 0 or k < 0 or len(body.input) != len(n.input):
        return False
    scans = list(n.input[n_state:])
    for j, a in enumerate(in_axes):
        if a < 0:
            r = cx.rank(scans[j])
            if r is None:
                return False
            in_axes[j] = a + r
    out_ranks = []
    for i, a in enumerate(out_axes):
        t = body.output[n_state + i].type.tensor_type
        r = len(t.shape.dim) + 1 if t.HasField("shape") else None
        if a < 0 and r is None or (a != 0 and r is None):
            return False
        out_axes[i] = a + r if a < 0 and r is not None else a
        out_ranks.append(r)
    helper, i64 = cx.onnx.helper, np.int64
    shape = cx.node("Shape", [scans[0]])[0]
    trip = cx.node("Gather", [shape, cx.constant(np.array(in_axes[0], i64))], axis=0)[0]
    last = cx.node("Sub", [trip, cx.constant(np.array(1, i64))])[0]

    def inner(op: str, inputs: list[str], outputs: list[str], **kw: Any) -> None:
        node = helper.make_node(op, inputs, outputs, name=cx.fresh(f"{cx.base}/{op}"), **kw)
        cx.inner.append(node)

    it, cond_in, cond_out = (cx.fresh(f"{cx.base}/{x}") for x in ("iter", "cond", "cond_out"))
    for j, formal in enumerate(body.input[n_state:]):
        idx = it
        if in_dirs[j]:
            idx = cx.fresh(f"{cx.base}/reversed_iter")
            inner("Sub", [last, it], [idx])
        inner("Gather", [scans[j], idx], [formal.name], axis=in_axes[j])
    inner("Identity", [cond_in], [cond_out])
    g = cx.onnx.GraphProto()
    g.name = body.name or f"{cx.base}/body"
    g.input.extend(
        [
            helper.make_tensor_value_info(it, cx.onnx.TensorProto.INT64, []),
            helper.make_tensor_value_info(cond_in, cx.onnx.TensorProto.BOOL, []),
            *body.input[:n_state],
        ]
    )
    g.node.extend([*cx.inner, *body.node])
    g.output.extend(
        [helper.make_tensor_value_info(cond_out, cx.onnx.TensorProto.BOOL, []), *body.output]
    )
    g.initializer.extend(body.initializer)
    g.value_info.extend(body.value_info)
    stacked = [
        y if not (out_dirs[i] or out_axes[i]) else cx.fresh(f"{cx.base}/stacked")
        for i, y in enumerate(n.output[n_state:])
    ]
    # An explicit true condition: some runtimes run no iteration when it is omitted.
    go = cx.constant(np.array(True))
    cx.node("Loop", [trip, go, *n.input[:n_state]], [*n.output[:n_state], *stacked], body=g)
    for i, (y, out) in enumerate(zip(stacked, n.output[n_state:], strict=True)):
        if out_dirs[i]:
            down = cx.constant(np.array(-1, i64))
            order = cx.node("Range", [last, down, down])[0]
            nxt = out if not out_axes[i] else cx.fresh(f"{cx.base}/reversed")
            cx.node("Gather", [y, order], [nxt], axis=0)
            y = nxt
        if out_axes[i]:
            r, a = out_ranks[i], out_axes[i]
            assert r is not None
            perm = [*range(1, a + 1), 0, *range(a + 1, r)]
            cx.node("Transpose", [y], [out], perm=perm)
    return True


def _qlinear_matmul(cx: Ctx, n: Any) -> bool:
    # ((a - a_zp) @ (b - b_zp)) * (a_scale * b_scale / y_scale) + y_zp, rounded, saturated;
    # integer products are exact in float32 below 2**24.
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = (list(n.input) + [""] * 8)[:8]
    out_t = cx.elem_type(y_zp) if y_zp else cx.elem_type(a)
    if out_t not in _QUANT_RANGE or cx.rank(a_s) not in (0, None) and cx.shape(a_s) != [1]:
        return False  # per-row scales of `a` would need a reshape to [M, 1]
    f32 = cx.onnx.TensorProto.FLOAT

    def centred(x: str, zp: str) -> str:
        xf = cx.node("Cast", [x], to=f32)[0]
        return cx.node("Sub", [xf, cx.node("Cast", [zp], to=f32)[0]])[0] if zp else xf

    acc = cx.node("MatMul", [centred(a, a_zp), centred(b, b_zp)])[0]
    scales = [cx.node("Cast", [x], to=f32)[0] for x in (a_s, b_s, y_s)]
    mult = cx.node("Div", [cx.node("Mul", scales[:2])[0], scales[2]])[0]
    q = cx.node("Mul", [acc, mult])[0]
    if y_zp:
        q = cx.node("Add", [q, cx.node("Cast", [y_zp], to=f32)[0]])[0]
    q = cx.node("Round", [q])[0]
    lo, hi = _QUANT_RANGE[out_t]
    q = cx.node("Clip", [q, *(cx.constant(np.array(v, np.float32)) for v in (lo, hi))])[0]
    cx.node("Cast", [q], list(n.output), to=out_t)
    return True


_MAX_UNROLL = 256
"""Time steps at most that an RNN is unrolled into."""

_RNN_ACTIVATIONS = ("Tanh", "Relu", "Sigmoid")


def _rnn(cx: Ctx, n: Any) -> bool:
    # A plain RNN of static length unrolled over time: h = f(x_t W^T + h R^T + Wb + Rb), one
    # chain per direction; GE has no CommonRNN. (Sequence lengths and clipping decline.)
    attrs = _attrs(n, cx.onnx)
    ins = list(n.input) + [""] * (6 - len(n.input))
    x, w, r, b, lens, h0 = ins[:6]
    layout, direction = int(attrs.get("layout", 0)), attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    acts = [a.decode() if isinstance(a, bytes) else a for a in attrs.get("activations", [])]
    dirs = 2 if direction == "bidirectional" else 1
    acts = acts or ["Tanh"] * dirs
    shape, dtype = cx.shape(x), _float_type(cx, x)
    if (
        lens
        or "clip" in attrs
        or "activation_alpha" in attrs
        or "activation_beta" in attrs
        or shape is None
        or len(shape) != 3
        or dtype is None
        or len(acts) != dirs
        or any(a not in _RNN_ACTIVATIONS for a in acts)
    ):
        return False
    hidden = int(attrs["hidden_size"])
    steps, batch = (shape[1], shape[0]) if layout else (shape[0], shape[1])
    if steps < 1 or steps > _MAX_UNROLL:
        return False
    i64 = np.int64
    if layout:
        x = cx.node("Transpose", [x], perm=[1, 0, 2])[0]
        if h0:
            h0 = cx.node("Transpose", [h0], perm=[1, 0, 2])[0]

    def pick(t: str, k: int) -> str:
        return cx.node("Gather", [t, cx.constant(np.array(k, i64))], axis=0)[0]

    ys, lasts = [], []
    for d in range(dirs):
        wt = cx.node("Transpose", [pick(w, d)], perm=[1, 0])[0]
        rt = cx.node("Transpose", [pick(r, d)], perm=[1, 0])[0]
        bias = None
        if b:
            both = pick(b, d)
            if cx.opset >= 13:
                sizes = cx.constant(np.array([hidden, hidden], i64))
                halves = cx.node("Split", [both, sizes], 2, axis=0)
            else:
                halves = cx.node("Split", [both], 2, axis=0, split=[hidden, hidden])
            bias = cx.node("Add", halves)[0]
        h = pick(h0, d) if h0 else cx.constant(np.zeros((batch, hidden), dtype))
        reverse = direction == "reverse" or d == 1
        outs: dict[int, str] = {}
        for t in range(steps - 1, -1, -1) if reverse else range(steps):
            pre = cx.node(
                "Add", [cx.node("MatMul", [pick(x, t), wt])[0], cx.node("MatMul", [h, rt])[0]]
            )[0]
            if bias:
                pre = cx.node("Add", [pre, bias])[0]
            h = cx.node(acts[d], [pre])[0]
            outs[t] = cx.unsqueeze(h, 0)
        seq = cx.node("Concat", [outs[t] for t in range(steps)], axis=0)[0]  # [T, B, H]
        ys.append(cx.unsqueeze(seq, 1))  # [T, 1, B, H]
        lasts.append(cx.unsqueeze(h, 0))  # [1, B, H]
    y_out = n.output[0] if len(n.output) > 0 else ""
    yh_out = n.output[1] if len(n.output) > 1 else ""
    if y_out:
        y = cx.node("Concat", ys, axis=1)[0] if dirs > 1 else ys[0]
        perm = [2, 0, 1, 3] if layout else [0, 1, 2, 3]
        cx.node("Transpose", [y], [y_out], perm=perm)
    if yh_out:
        yh = cx.node("Concat", lasts, axis=0)[0] if dirs > 1 else lasts[0]
        cx.node("Transpose", [yh], [yh_out], perm=[1, 0, 2] if layout else [0, 1, 2])
    return True


RULES: dict[str, Callable[[Ctx, Any], bool]] = {
    "RNN": _rnn,
    "QLinearMatMul": _qlinear_matmul,
    "Scan": _scan,
    "Transpose": _transpose,
    "LRN": _lrn,
    "LpPool": _lp_pool,
    "ReverseSequence": _reverse_sequence,
    "DequantizeLinear": _dequantize,
    "QuantizeLinear": _quantize,
    "Pad": _pad_axes,
    "Conv": _one_d,
    "ConvTranspose": _one_d,
    "AveragePool": _one_d,
    "MaxPool": _one_d,
    "Max": _variadic,
    "Min": _variadic,
    "Mean": _variadic,
    "Compress": _compress,
    "EyeLike": _eye_like,
    "LSTM": _batch_major_rnn,
    "GRU": _batch_major_rnn,
}
"""ONNX op type (standard domain) -> rule; a rule appends its nodes to ``Ctx.nodes`` and says
whether it applied."""
