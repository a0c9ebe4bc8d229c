"""Kernels of GE types the ONNX frontend maps to: LeftShift / RightShift, SoftmaxCrossEntropyLoss,
NLLLoss, RmsNorm, GridSampler2D / GridSampler3D and Quantize.

Semantics from GE's operator definitions (the losses and samplers are PyTorch's, which ONNX's
follow): a loss picks ``-logp[n, label, ...]`` times the label's weight, zero where the label is
``ignore_index``; ``mean`` divides the weighted sum by the sum of the picked weights.
``RmsNorm`` normalizes over the trailing dims ``gamma`` has, in float32, and returns ``rstd``.
The grid samplers read ``grid[..., 0]`` as the width coordinate; ``nearest`` rounds half to
even; ``bicubic`` is Keys' convolution with ``a = -0.75`` whose taps are padded one by one.
``Quantize`` is ``round(x / scales) + zero_points`` (half to even) saturated to the type
``dtype`` names, per tensor or along ``axis``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ._core import Ctx, kernel

__all__: list[str] = []


@kernel("LeftShift", "RightShift")
def _shift(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, y = np.asarray(ins[0]), np.asarray(ins[1])
    if x.dtype.kind not in "iu" or y.dtype.kind not in "iu":
        raise ctx.error(f"bit shifts take integers, got {x.dtype} and {y.dtype}")
    fn = np.left_shift if ctx.type == "LeftShift" else np.right_shift
    return fn(x, y.astype(x.dtype)).astype(x.dtype)


def _nll(ctx: Ctx, logp: np.ndarray, labels: Any, weight: Any, out: np.dtype[Any]) -> np.ndarray:
    """The (reduced) negative log likelihood of ``logp`` ([N, C, ...], float64) at ``labels``."""
    t = np.asarray(labels)
    if t.dtype.kind not in "iu":
        raise ctx.error(f"labels must be integers, got {t.dtype}")
    if logp.ndim < 2 or t.shape != logp.shape[:1] + logp.shape[2:]:
        raise ctx.error(f"labels of shape {list(t.shape)} do not fit scores of shape "
                        f"{list(logp.shape)}")
    t = t.astype(np.int64)
    c = logp.shape[1]
    valid = t != int(ctx.attr("ignore_index", -100 if ctx.type == "NLLLoss" else 0))
    safe = np.where(valid, t, 0)
    if np.any((safe < 0) | (safe >= c)):
        raise ctx.error(f"a label is outside [0, {c}) and not the ignore index")
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    if weight is not None:
        w = np.asarray(weight, np.float64).reshape(-1)
        if w.size != c:
            raise ctx.error(f"weight has {w.size} values for {c} classes")
        w = w[safe]
    else:
        w = np.ones(t.shape, np.float64)
    w = np.where(valid, w, 0.0)
    loss = -picked * w
    reduction = str(ctx.attr("reduction", "mean"))
    if reduction == "none":
        return loss.astype(out)
    if reduction == "sum":
        return np.asarray(loss.sum()).astype(out)
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(loss.sum() / w.sum()).astype(out)
    raise ctx.error(f"reduction '{reduction}' is not none, mean or sum")


@kernel("NLLLoss")
def _nll_loss(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    weight = ctx.port(ins, "weight")
    y = _nll(ctx, x.astype(np.float64), ins[1], weight, x.dtype)
    t = np.asarray(ins[1]).astype(np.int64)
    valid = t != int(ctx.attr("ignore_index", -100))
    if weight is not None:
        w = np.asarray(weight, np.float64).reshape(-1)[np.where(valid, t, 0)]
        total = np.where(valid, w, 0.0).sum()
    else:
        total = float(valid.sum())
    return [y, np.asarray(total).astype(x.dtype)]


@kernel("SoftmaxCrossEntropyLoss")
def _softmax_cross_entropy(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    if x.ndim < 2:
        raise ctx.error(f"scores must be [N, C, ...], got shape {list(x.shape)}")
    s = x.astype(np.float64)
    s = s - s.max(axis=1, keepdims=True)
    logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    loss = _nll(ctx, logp, ins[1], ctx.port(ins, "weights"), x.dtype)
    return [loss, logp.astype(x.dtype)]


@kernel("RmsNorm")
def _rms_norm(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x, gamma = np.asarray(ins[0]), np.asarray(ins[1])
    j = gamma.ndim
    if j < 1 or j > x.ndim or x.shape[x.ndim - j:] != gamma.shape:
        raise ctx.error(f"gamma of shape {list(gamma.shape)} is not the trailing dims of x's "
                        f"{list(x.shape)}")
    xf = x.astype(np.float32)
    axes = tuple(range(x.ndim - j, x.ndim))
    eps = np.float32(ctx.attr("epsilon", 1e-6))
    rstd = (np.float32(1) / np.sqrt(np.mean(xf * xf, axis=axes, keepdims=True) + eps))
    y = xf * rstd * gamma.astype(np.float32)
    return [y.astype(x.dtype), rstd.astype(np.float32)]


# ---------------------------------------------------------------- grid sampling


def _reflect(v: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> np.ndarray:
    """Reflect ``v`` at the borders ``lo`` / ``hi`` until it lies between them."""
    rng = np.asarray(hi - lo, np.float64)
    safe = np.where(rng > 0, rng, 1.0)
    below, above = v < lo, v > hi
    dx = np.where(below, lo - v, v - hi)
    n = np.trunc(dx / safe)
    r = dx - n * safe
    even = (n % 2) == 0
    low_side = np.where(even, lo + r, hi - r)
    high_side = np.where(even, hi - r, lo + r)
    out = np.where(below, low_side, np.where(above, high_side, v))
    return np.where(rng > 0, out, lo)


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = -0.75

    def near(d: np.ndarray) -> np.ndarray:
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: np.ndarray) -> np.ndarray:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@kernel("GridSampler2D", "GridSampler3D")
def _grid_sampler(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, grid = np.asarray(ins[0]), np.asarray(ins[1])
    k = 3 if ctx.type == "GridSampler3D" else 2
    if x.ndim != k + 2 or grid.ndim != k + 2 or grid.shape[-1] != k or grid.shape[0] != x.shape[0]:
        raise ctx.error(f"x of shape {list(x.shape)} and grid of shape {list(grid.shape)} do "
                        f"not make a {k}-D sampling")
    mode = str(ctx.attr("interpolation_mode", "bilinear"))
    padding = str(ctx.attr("padding_mode", "zeros"))
    align = ctx.flag("align_corners")
    if mode not in ("bilinear", "nearest", "bicubic") or (mode == "bicubic" and k == 3):
        raise ctx.error(f"interpolation_mode '{mode}' is not evaluated for {k}-D sampling")
    if padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"padding_mode '{padding}' is not zeros, border or reflection")
    dims = x.shape[2:]
    n_batch = x.shape[0]
    g = grid.astype(np.float64)
    # grid[..., 0] indexes the last (width) dim.
    coords, los, his = [], [], []
    for i, d in enumerate(dims):
        nrm = g[..., k - 1 - i]
        c = (nrm + 1) / 2 * (d - 1) if align else ((nrm + 1) * d - 1) / 2
        if mode == "nearest":
            c = np.rint(c)
        lo, hi = (0.0, d - 1.0) if align else (-0.5, d - 0.5)
        if mode == "bicubic":
            pass  # PyTorch pads each of the 4 taps, never the coordinate
        elif padding == "border":
            c = np.where((c < lo) | (c > hi), np.clip(c, 0, d - 1), c)
        elif padding == "reflection":
            c = _reflect(c, lo, hi)
        coords.append(c)
        los.append(lo)
        his.append(hi)
    batch = np.arange(n_batch).reshape((n_batch,) + (1,) * k)

    def tap(idx: list[np.ndarray]) -> np.ndarray:
        """x at integer positions ``idx`` (one array per spatial dim), padded: [N, *out, C]."""
        ok = np.ones(idx[0].shape, bool)
        fixed = []
        for i, (p, d) in enumerate(zip(idx, dims, strict=True)):
            if padding == "zeros":
                ok &= (p >= 0) & (p < d)
                p = np.clip(p, 0, d - 1)
            elif padding == "border":
                p = np.clip(p, 0, d - 1)
            else:
                p = np.clip(np.trunc(_reflect(p.astype(np.float64), los[i], his[i])), 0, d - 1)
            fixed.append(p.astype(np.int64))
        v = x[(batch, slice(None), *fixed)].astype(np.float64)
        return np.where(ok[..., None], v, 0.0)

    if mode == "nearest":
        out = tap([np.trunc(c).astype(np.int64) for c in coords])
    else:
        taps: list[list[tuple[np.ndarray, np.ndarray]]] = []
        for c in coords:
            base = np.floor(c)
            t = c - base
            b = base.astype(np.int64)
            if mode == "bilinear":
                taps.append([(b, 1 - t), (b + 1, t)])
            else:
                w = _cubic_weights(t)
                taps.append([(b + j - 1, w[j]) for j in range(4)])
        out = np.zeros(coords[0].shape + (x.shape[1],), np.float64)
        for combo in itertools.product(*taps):
            weight = np.ones(coords[0].shape, np.float64)
            for _, cw in combo:
                weight = weight * cw
            out += weight[..., None] * tap([p for p, _ in combo])
    return np.moveaxis(out, -1, 1).astype(x.dtype)


# ---------------------------------------------------------------- quantization

_QUANT_TYPES: dict[str, tuple[type[np.integer[Any]], int, int]] = {
    "torch.qint8": (np.int8, -128, 127),
    "torch.quint8": (np.uint8, 0, 255),
    "torch.qint32": (np.int32, -(2**31), 2**31 - 1),
}


@kernel("Quantize")
def _quantize(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    name = str(ctx.attr("dtype", ""))
    if name not in _QUANT_TYPES:
        raise ctx.error(f"dtype '{name}' is not one of {sorted(_QUANT_TYPES)}")
    out, lo, hi = _QUANT_TYPES[name]
    x = np.asarray(ins[0]).astype(np.float32)
    scale = np.asarray(ins[1]).astype(np.float32)
    zp = ctx.port(ins, "zero_points")
    zero = np.zeros_like(scale) if zp is None else np.asarray(zp).astype(np.float32)
    if scale.size > 1 or scale.ndim == x.ndim > 1:
        axis = int(ctx.attr("axis", 1))
        axis = axis + x.ndim if axis < 0 else axis
        if not 0 <= axis < x.ndim or scale.size != x.shape[axis]:
            raise ctx.error(f"{scale.size} scales do not fit axis {axis} of shape "
                            f"{list(x.shape)}")
        shape = [1] * x.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    y = np.rint(x / scale) + zero
    return np.clip(y, lo, hi).astype(out)
