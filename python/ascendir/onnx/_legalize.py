"""ONNX-level expansions of forms GE has no single op for (used by :mod:`ascendir.onnx.expand`).

Each rule rewrites one ONNX node into standard ONNX nodes of the model's opset that the mapping
expresses, with the same meaning, or declines (returns ``None``) when a fact it needs — a rank,
a constant — is not known. The rules:

- ``Pad`` with ``axes`` (opset 18): the pads of every axis gathered from the given ones;
- 1-D ``Conv`` / ``ConvTranspose`` / ``AveragePool`` / ``MaxPool``: the 2-D op over
  a unit height (``Unsqueeze`` before, ``Squeeze`` after; attributes get a leading 1 / 0);
- ``Max`` / ``Min`` of one or more than two inputs: a chain of two-input ops (one input: an
  ``Identity``); ``Mean``: ``Sum`` over the count;
- ``Compress``: ``Gather`` of the ``NonZero`` indices of the condition (flattened without axis);
- ``EyeLike`` of a static shape: a constant;
- ``Scatter`` (deprecated in opset 11): ``ScatterElements``, its same-meaning successor;
- batch-major (``layout=1``) ``LSTM`` / ``GRU``: the time-major op between ``Transpose`` nodes.
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
        consts: dict[str, np.ndarray],
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


def _scatter(cx: Ctx, n: Any) -> bool:
    cx.node("ScatterElements", list(n.input), list(n.output), **_attrs(n, cx.onnx))
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


RULES: dict[str, Callable[[Ctx, Any], bool]] = {
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
    "Scatter": _scatter,
    "LSTM": _batch_major_rnn,
    "GRU": _batch_major_rnn,
}
"""ONNX op type (standard domain) -> rule; a rule appends its nodes to ``Ctx.nodes`` and says
whether it applied."""
