"""Reductions (ReduceXxx / ReduceXxxD, ReduceL2, ReduceLogSumExp, ReduceLogSum), ArgMax/ArgMin,
TopK, SoftmaxV2 / LogSoftmaxV2, BatchNorm, LayerNorm, LayerNormV3, InstanceNorm, Cumsum, Cumprod.

Reduction axes come from the ``axes`` input (``ReduceXxx``) or attribute (``ReduceXxxD``);
empty axes reduce every dim unless ``noop_with_empty_axes`` is set; ``keep_dims`` keeps the
reduced dims as 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..types import DataType
from ._core import Ctx, kernel

__all__ = ["norm_axes"]


def norm_axes(ctx: Ctx, axes: Any, ndim: int) -> tuple[int, ...]:
    """Axes normalised to ``[0, ndim)`` (an error naming the node when out of range)."""
    out = []
    for a in np.asarray(axes, dtype=np.int64).reshape(-1).tolist():
        b = a + ndim if a < 0 else a
        if not 0 <= b < max(ndim, 1):
            raise ctx.error(f"axis {a} is out of range for rank {ndim}")
        if b not in out:
            out.append(b)
    return tuple(sorted(out))


def _axes_of(ctx: Ctx, ins: list[Any], x: np.ndarray) -> tuple[int, ...] | None:
    """The reduction axes; None means 'no reduction' (noop_with_empty_axes)."""
    if ctx.type.endswith("D") or not ctx.has_port("axes"):
        raw = ctx.attr("axes")
    else:
        raw = ctx.port(ins, "axes")
        if raw is None:
            raw = ctx.attr("axes")
    axes = [] if raw is None else np.asarray(raw).reshape(-1).tolist()
    if not axes:
        if ctx.flag("noop_with_empty_axes"):
            return None
        return tuple(range(x.ndim))
    return norm_axes(ctx, axes, x.ndim)


def _empty_fill(op: str, x: np.ndarray) -> Any:
    if op == "max":
        return -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max


def _reduce(op: str) -> Any:
    def run(ctx: Ctx, ins: list[Any]) -> np.ndarray:
        x = np.asarray(ins[0])
        axes = _axes_of(ctx, ins, x)
        if axes is None:
            return x
        keep = ctx.flag("keep_dims", False)
        with np.errstate(all="ignore"):
            if op in ("max", "min"):
                if x.dtype == np.bool_:
                    y = (np.any if op == "max" else np.all)(x, axis=axes, keepdims=keep)
                elif x.size == 0 or any(x.shape[a] == 0 for a in axes):
                    shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
                    if not keep:
                        shape = [d for i, d in enumerate(x.shape) if i not in axes]
                    y = np.full(shape, _empty_fill(op, x), x.dtype)
                else:
                    y = (np.max if op == "max" else np.min)(x, axis=axes, keepdims=keep)
            elif op == "sum":
                y = np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)
            elif op == "mean":
                acc = np.float64 if x.dtype.kind != "f" else None
                y = np.mean(x, axis=axes, keepdims=keep, dtype=acc)
            elif op == "prod":
                y = np.prod(x, axis=axes, keepdims=keep, dtype=x.dtype)
            elif op == "all":
                y = np.all(x, axis=axes, keepdims=keep)
            elif op == "any":
                y = np.any(x, axis=axes, keepdims=keep)
            elif op == "l2":
                y = np.sqrt(np.sum(np.square(x.astype(np.float64)), axis=axes, keepdims=keep))
            elif op == "logsum":
                y = np.log(np.sum(x.astype(np.float64), axis=axes, keepdims=keep))
            else:  # logsumexp
                x64 = x.astype(np.float64)
                m = np.max(x64, axis=axes, keepdims=True) if x.size else np.zeros(())
                m = np.where(np.isfinite(m), m, 0)
                s = np.log(np.sum(np.exp(x64 - m), axis=axes, keepdims=True)) + m
                y = s if keep else np.squeeze(s, axis=axes)
        y = np.asarray(y)
        return y if y.dtype == x.dtype or op in ("all", "any") else y.astype(x.dtype)

    return run


for _base, _op in (("ReduceSum", "sum"), ("ReduceMean", "mean"), ("ReduceMax", "max"),
                   ("ReduceMin", "min"), ("ReduceProd", "prod"), ("ReduceAll", "all"),
                   ("ReduceAny", "any")):
    kernel(_base, _base + "D")(_reduce(_op))
kernel("ReduceL2")(_reduce("l2"))
kernel("ReduceLogSumExp")(_reduce("lse"))
kernel("ReduceLogSum")(_reduce("logsum"))


# ---------------------------------------------------------------- arg max / top k


@kernel("ArgMaxV2", "ArgMin", "ArgMaxD", "ArgMinD")
def _arg(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    if ctx.type.endswith("D"):
        dim = ctx.attr("dimension", ctx.attr("axis", 0))
    else:
        d = ctx.port(ins, "dimension")
        dim = ctx.attr("dimension", 0) if d is None else np.asarray(d).reshape(-1)[0]
    (axis,) = norm_axes(ctx, [int(dim)], x.ndim) if x.ndim else (0,)
    is_max = "Max" in ctx.type
    last = ctx.flag("select_last_index")
    src = np.flip(x, axis) if last else x
    idx = np.argmax(src, axis=axis) if is_max else np.argmin(src, axis=axis)
    if last:
        idx = x.shape[axis] - 1 - idx
    if ctx.flag("keep_dims"):
        idx = np.expand_dims(idx, axis)
    return idx.astype(ctx.out_dtype(0, "dtype", DataType.INT32))


def _descending_key(x: np.ndarray) -> np.ndarray:
    """A key whose ascending stable order is x's descending order (ties keep index order)."""
    if x.dtype.kind == "f":
        return -x
    if x.dtype == np.bool_:
        return ~x
    return np.invert(x)


@kernel("TopK", "TopKV2")
def _topk(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    k = int(np.asarray(ins[1]).reshape(-1)[0])
    (axis,) = norm_axes(ctx, [int(ctx.attr("dim", -1))], x.ndim)
    if not 0 <= k <= x.shape[axis]:
        raise ctx.error(f"k = {k} is out of range for dim {axis} of {list(x.shape)}")
    key = _descending_key(x) if ctx.flag("largest", True) else x
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    vals = np.take_along_axis(x, idx, axis=axis)
    return [vals, idx.astype(ctx.out_dtype(1, "indices_dtype", DataType.INT32))]


# ---------------------------------------------------------------- softmax


def _softmax_axes(ctx: Ctx, x: np.ndarray) -> tuple[int, ...]:
    axes = ctx.attr("axes")
    if axes is None:
        axes = [ctx.attr("axis", -1)]
    return norm_axes(ctx, axes, x.ndim)


@kernel("SoftmaxV2")
def _softmax(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    if x.size == 0:
        return x
    axes = _softmax_axes(ctx, x)
    xf = x.astype(np.float64)
    with np.errstate(invalid="ignore"):  # a row of -inf is NaN, as IEEE arithmetic gives it
        e = np.exp(xf - np.max(xf, axis=axes, keepdims=True))
        return (e / np.sum(e, axis=axes, keepdims=True)).astype(x.dtype)


@kernel("LogSoftmaxV2")
def _log_softmax(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    if x.size == 0:
        return x
    axes = _softmax_axes(ctx, x)
    xf = x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = xf - np.max(xf, axis=axes, keepdims=True)
        return (s - np.log(np.sum(np.exp(s), axis=axes, keepdims=True))).astype(x.dtype)


# ---------------------------------------------------------------- norms


def _acc(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64 if x.dtype == np.float64 else np.float32)


@kernel("BatchNorm")
def _batch_norm(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    scale, offset = np.asarray(ins[1]), np.asarray(ins[2])
    mean, var = ctx.port(ins, "mean"), ctx.port(ins, "variance")
    eps = float(ctx.attr("epsilon", 1e-4))
    c = x.ndim - 1 if ctx.layout(0, "NHWC") == "NHWC" else min(1, x.ndim - 1)
    shape = [1] * x.ndim
    shape[c] = x.shape[c]
    red = tuple(i for i in range(x.ndim) if i != c)
    xf = _acc(x)
    training = ctx.flag("is_training", True)
    if training or mean is None or var is None:
        bm = np.mean(xf, axis=red)
        bv = np.var(xf, axis=red)
        n = x.size // max(x.shape[c], 1)
        unbiased = bv * (n / (n - 1)) if n > 1 else bv
        use_m, use_v = bm, bv
        momentum = ctx.attr("momentum")
        if momentum is not None and mean is not None and var is not None:
            mo = float(momentum)
            out_m = np.asarray(mean) * mo + bm * (1 - mo)
            out_v = np.asarray(var) * mo + bv * (1 - mo)
        else:
            out_m, out_v = bm, unbiased
        r1, r2 = bm, bv
    else:
        use_m, use_v = _acc(np.asarray(mean)), _acc(np.asarray(var))
        out_m, out_v, r1, r2 = use_m, use_v, use_m, use_v
    y = (xf - use_m.reshape(shape)) / np.sqrt(use_v.reshape(shape) + eps)
    y = y * _acc(scale).reshape(shape) + _acc(offset).reshape(shape)
    sd = scale.dtype
    return [y.astype(x.dtype), np.asarray(out_m).astype(sd), np.asarray(out_v).astype(sd),
            np.asarray(r1).astype(sd), np.asarray(r2).astype(sd)]


@kernel("LayerNormV3")
def _layer_norm_v3(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    y, mean, var = _layer_norm(ctx, ins)
    eps = np.float64(ctx.attr("epsilon", 1e-5))
    acc = np.float64 if var.dtype == np.float64 else np.float32
    rstd = 1.0 / np.sqrt(np.add(var.astype(acc), eps.astype(acc)))
    return [y, mean, rstd.astype(var.dtype)]


@kernel("LayerNorm")
def _layer_norm(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    gamma = ctx.port(ins, "gamma")
    beta = ctx.port(ins, "beta")
    axis = int(ctx.attr("begin_norm_axis", 0))
    axis = axis + x.ndim if axis < 0 else axis
    if not 0 <= axis <= x.ndim:
        raise ctx.error(f"begin_norm_axis {axis} is out of range for rank {x.ndim}")
    red = tuple(range(axis, x.ndim))
    eps = float(ctx.attr("epsilon", 1e-7))
    xf = _acc(x)
    mean = np.mean(xf, axis=red, keepdims=True)
    var = np.mean(np.square(xf - mean), axis=red, keepdims=True)
    y = (xf - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * _acc(np.asarray(gamma))
    if beta is not None:
        y = y + _acc(np.asarray(beta))
    return [y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)]


@kernel("InstanceNorm")
def _instance_norm(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    gamma, beta = ctx.port(ins, "gamma"), ctx.port(ins, "beta")
    fmt = str(ctx.attr("data_format", "NCHW"))
    c = x.ndim - 1 if fmt in ("NHWC", "NDHWC") else 1
    red = tuple(i for i in range(1, x.ndim) if i != c)
    eps = float(ctx.attr("epsilon", 1e-5))
    xf = _acc(x)
    mean = np.mean(xf, axis=red, keepdims=True)
    var = np.mean(np.square(xf - mean), axis=red, keepdims=True)
    y = (xf - mean) / np.sqrt(var + eps)
    shape = [1] * x.ndim
    shape[c] = x.shape[c]
    if gamma is not None:
        y = y * _acc(np.asarray(gamma)).reshape(shape)
    if beta is not None:
        y = y + _acc(np.asarray(beta)).reshape(shape)
    outs = [y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)]
    return outs[: max(ctx.num_outputs, 1)]


@kernel("Cumsum")
def _cumsum(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    a = ctx.port(ins, "axis")
    axis = int(np.asarray(a).reshape(-1)[0]) if a is not None else int(ctx.attr("axis", 0))
    (axis,) = norm_axes(ctx, [axis], x.ndim)
    rev = ctx.flag("reverse")
    src = np.flip(x, axis) if rev else x
    y = np.cumsum(src, axis=axis, dtype=x.dtype)
    if ctx.flag("exclusive"):
        y = y - src
    return np.flip(y, axis) if rev else y


@kernel("Cumprod")
def _cumprod(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    axis = int(np.asarray(ins[1]).reshape(-1)[0])
    (axis,) = norm_axes(ctx, [axis], x.ndim)
    rev = ctx.flag("reverse")
    src = np.flip(x, axis) if rev else x
    y = np.cumprod(src, axis=axis, dtype=x.dtype)
    if ctx.flag("exclusive"):
        # The product of the elements before: ones, then the inclusive products shifted.
        head = np.ones_like(np.take(y, [0], axis=axis)) if y.shape[axis] else y
        y = np.concatenate([head, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(y, axis) if rev else y
