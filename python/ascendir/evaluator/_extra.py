"""Kernels of GE types the ONNX frontend produces beyond the builtin library: Einsum,
GatherNd, ScatterNd, NonZero, OneHot, Trilu, Dropout, DepthToSpace, SpaceToDepth, Resize.

GE's declarations give the semantics (``NonZero`` is ``[count, rank]`` unless
``transpose``; ``DepthToSpace`` / ``SpaceToDepth`` follow ``data_format``); ports named as
ONNX's (ScatterNd ``x, indices, updates``; OneHot ``indices, depth, values``) run ONNX's form.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..types import DataType
from ._core import Ctx, kernel
from ._shape import ints_of

__all__: list[str] = []


@kernel("Einsum")
def _einsum(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    eq = str(ctx.require("equation")).replace(" ", "")
    xs = [np.asarray(v) for v in ctx.group(ins, "x")] or [np.asarray(v) for v in ins]
    dt = xs[0].dtype
    if dt.kind == "f" and dt.itemsize < 4 or dt.kind not in "fciub":
        y = np.einsum(eq, *(v.astype(np.float32) for v in xs), optimize=True)
    else:
        y = np.einsum(eq, *xs, optimize=True)
    return np.asarray(y).astype(dt)


@kernel("GatherNd")
def _gather_nd(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, idx = np.asarray(ins[0]), np.asarray(ins[1]).astype(np.int64)
    b = int(ctx.attr("batch_dims", 0))
    k = idx.shape[-1]
    lead = x.shape[:b]
    nb = int(np.prod(lead, dtype=np.int64))
    xb = x.reshape((nb,) + x.shape[b:])
    ib = idx.reshape((nb, -1, k))
    dims = np.asarray(x.shape[b:b + k], np.int64)
    if ib.size and ((ib < -dims).any() or (ib >= dims).any()):
        raise ctx.error(f"an index is out of range for {list(x.shape)}")
    ib = np.where(ib < 0, ib + dims, ib)
    parts = [xb[i][tuple(ib[i].T)] for i in range(nb)]
    out = np.stack(parts) if parts else np.zeros((0,), x.dtype)
    return out.reshape(idx.shape[:-1] + x.shape[b + k:])


@kernel("ScatterNd")
def _scatter_nd(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    if ctx.has_port("shape"):  # TF form: (indices, x=updates, shape)
        idx = np.asarray(ctx.port(ins, "indices")).astype(np.int64)
        upd = np.asarray(ctx.port(ins, "x"))
        out = np.zeros(ints_of(ctx.port(ins, "shape")), upd.dtype)
        reduction = "add"
    else:
        out = np.array(ctx.port(ins, "x"), copy=True)
        idx = np.asarray(ctx.port(ins, "indices")).astype(np.int64)
        upd = np.asarray(ctx.port(ins, "updates"))
        reduction = str(ctx.attr("reduction", "none"))
    k = idx.shape[-1]
    flat_i = idx.reshape(-1, k)
    flat_u = upd.reshape((flat_i.shape[0],) + out.shape[k:])
    ops = {"none": None, "add": np.add, "mul": np.multiply, "max": np.maximum,
           "min": np.minimum}
    if reduction not in ops:
        raise ctx.error(f"reduction '{reduction}' is not none, add, mul, max or min")
    op = ops[reduction]
    for i in range(flat_i.shape[0]):
        at = tuple(flat_i[i])
        out[at] = flat_u[i] if op is None else op(out[at], flat_u[i])
    return out


@kernel("NonZero")
def _non_zero(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    nz = np.stack(np.nonzero(x)) if x.ndim else np.zeros((0, int(bool(x))), np.int64)
    dt = ctx.out_dtype(0, "dtype", DataType.INT64)
    # GE (PyTorch's nonzero): [count, rank]; ``transpose`` gives ONNX's [rank, count].
    return (nz if ctx.flag("transpose") else nz.T).astype(dt)


@kernel("OneHot")
def _one_hot(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    if ctx.has_port("values"):
        idx = np.asarray(ctx.port(ins, "indices"))
        depth = int(np.asarray(ctx.port(ins, "depth")).reshape(-1)[0])
        vals = np.asarray(ctx.port(ins, "values")).reshape(-1)
        off, on = vals[0], vals[1]
    else:  # GE form: x, depth, on_value, off_value
        idx = np.asarray(ctx.port(ins, "x"))
        depth = int(np.asarray(ctx.port(ins, "depth")).reshape(-1)[0])
        on = np.asarray(ctx.port(ins, "on_value")).reshape(-1)[0]
        off = np.asarray(ctx.port(ins, "off_value")).reshape(-1)[0]
    axis = int(ctx.attr("axis", -1))
    rank = idx.ndim + 1
    axis = axis + rank if axis < 0 else axis
    i = idx.astype(np.int64)
    i = np.where(i < 0, i + depth, i)
    hot = np.arange(depth).reshape((1,) * idx.ndim + (depth,)) == i[..., None]
    y = np.where(hot, on, off).astype(np.asarray(on).dtype)
    return np.moveaxis(y, -1, axis)


@kernel("Trilu")
def _trilu(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    kv = ctx.port(ins, "k")
    k = 0 if kv is None else int(np.asarray(kv).reshape(-1)[0])
    return np.triu(x, k) if ctx.flag("upper", True) else np.tril(x, k)


@kernel("Dropout")
def _dropout(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    tm = ctx.port(ins, "training_mode")
    ratio = ctx.port(ins, "ratio")
    r = 0.5 if ratio is None else float(np.asarray(ratio).reshape(-1)[0])
    if tm is not None and bool(np.asarray(tm).reshape(-1)[0]) and r > 0:
        raise ctx.error("training-mode dropout is random; evaluate runs inference only")
    return [x, np.ones(x.shape, bool)][: max(ctx.num_outputs, 1)]


def _block(ctx: Ctx) -> int:
    b = ctx.attr("block_size", ctx.attr("blocksize"))
    if b is None:
        raise ctx.error("has no block_size")
    return int(b)


def _space_format(ctx: Ctx) -> str:
    f = ctx.attr("data_format")
    if f is None:
        # The ONNX form (attribute 'blocksize') is NCHW; GE's default is NHWC.
        return "NCHW" if "blocksize" in ctx.attrs else ctx.layout(0, "NHWC")
    return str(f)


@kernel("DepthToSpace")
def _depth_to_space(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    b = _block(ctx)
    nhwc = _space_format(ctx) == "NHWC"
    if nhwc:
        x = np.transpose(x, (0, 3, 1, 2))
    n, c, h, w = x.shape
    if str(ctx.attr("mode", "DCR")).upper() == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    y = y.reshape(n, c // (b * b), h * b, w * b)
    return np.transpose(y, (0, 2, 3, 1)) if nhwc else y


@kernel("SpaceToDepth")
def _space_to_depth(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    b = _block(ctx)
    nhwc = _space_format(ctx) == "NHWC"
    if nhwc:
        x = np.transpose(x, (0, 3, 1, 2))
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b)
    if str(ctx.attr("mode", "DCR")).upper() == "CRD":
        y = y.transpose(0, 1, 3, 5, 2, 4)
    else:
        y = y.transpose(0, 3, 5, 1, 2, 4)
    y = y.reshape(n, c * b * b, h // b, w // b)
    return np.transpose(y, (0, 2, 3, 1)) if nhwc else y


# ---------------------------------------------------------------- Resize (ONNX semantics)


def _source_coord(ctx: Ctx, mode: str, out_i: np.ndarray, scale: float, in_len: int,
                  out_len: int, roi: tuple[float, float] | None) -> np.ndarray:
    """ONNX's output-to-input coordinate map (``out_w`` is ``scale * in_len``, unrounded)."""
    o = out_i.astype(np.float64)
    out_w = scale * in_len
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = in_len / 2 * (1 - out_len / out_w)
        return offset + (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if out_w != 1 else np.full_like(o, -0.5)
    if mode == "align_corners":
        return o * (in_len - 1) / (out_w - 1) if out_w != 1 else np.zeros_like(o)
    if mode == "asymmetric":
        return o / scale
    if mode == "tf_crop_and_resize":
        s, e = roi if roi is not None else (0.0, 1.0)
        if out_w != 1:
            c = o * (e - s) * (in_len - 1) / (out_w - 1)
        else:
            c = np.full_like(o, (e - s) * (in_len - 1) / 2)
        return c + s * (in_len - 1)
    raise ctx.error(f"coordinate_transformation_mode '{mode}' is not supported")


def _nearest(ctx: Ctx, mode: str, c: np.ndarray) -> np.ndarray:
    if mode == "round_prefer_floor":
        return np.where(c - np.floor(c) == 0.5, np.floor(c), np.round(c))
    if mode == "round_prefer_ceil":
        return np.where(c - np.floor(c) == 0.5, np.ceil(c), np.round(c))
    if mode == "floor":
        return np.floor(c)
    if mode == "ceil":
        return np.ceil(c)
    raise ctx.error(f"nearest_mode '{mode}' is not supported")


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    return np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                    np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _resize_axis(ctx: Ctx, x: np.ndarray, axis: int, out_len: int, scale: float,
                 roi: tuple[float, float] | None) -> np.ndarray:
    in_len = x.shape[axis]
    mode = str(ctx.attr("mode", "nearest"))
    ctm = str(ctx.attr("coordinate_transformation_mode", "half_pixel"))
    c = _source_coord(ctx, ctm, np.arange(out_len), scale, in_len, out_len, roi)
    if mode == "nearest":
        taps = _nearest(ctx, str(ctx.attr("nearest_mode", "round_prefer_floor")), c)
        idx = taps.astype(np.int64)[:, None]
        w = np.ones((out_len, 1))
    elif mode in ("linear", "cubic"):
        if mode == "linear":
            base = np.floor(c)
            offs = np.arange(0, 2)
            idx = (base[:, None] + offs).astype(np.int64)
            w = 1 - np.abs(c[:, None] - idx)
        else:
            base = np.floor(c)
            offs = np.arange(-1, 3)
            idx = (base[:, None] + offs).astype(np.int64)
            w = _cubic(c[:, None] - idx, float(ctx.attr("cubic_coeff_a", -0.75)))
            if ctx.flag("exclude_outside"):
                w = np.where((idx < 0) | (idx >= in_len), 0.0, w)
                w = w / np.sum(w, axis=1, keepdims=True)
    else:
        raise ctx.error(f"mode '{mode}' is not nearest, linear or cubic")
    outside = (c < 0) | (c > in_len - 1)
    idx = np.clip(idx, 0, in_len - 1)
    xf = np.moveaxis(x.astype(np.float64), axis, -1)
    y = np.sum(xf[..., idx] * w, axis=-1)
    if ctm == "tf_crop_and_resize":
        y = np.where(outside, float(ctx.attr("extrapolation_value", 0.0)), y)
    return np.moveaxis(y, -1, axis)


@kernel("Resize")
def _resize(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    if ctx.flag("antialias"):
        raise ctx.error("antialiased Resize is not supported", )
    roi_v, scales_v, sizes_v = (ctx.port(ins, n) for n in ("roi", "scales", "sizes"))
    axes_attr = ctx.attr("axes")
    axes = [a + x.ndim if a < 0 else a for a in axes_attr] if axes_attr else list(range(x.ndim))
    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ctx.error(f"axes {axes_attr} are not distinct axes of rank {x.ndim}")
    scales = None if scales_v is None or np.size(scales_v) == 0 else [
        float(s) for s in np.asarray(scales_v).reshape(-1)]
    sizes = None if sizes_v is None or np.size(sizes_v) == 0 else ints_of(sizes_v)
    in_sizes = [x.shape[a] for a in axes]
    if sizes is not None:
        policy = str(ctx.attr("keep_aspect_ratio_policy", "stretch"))
        if policy == "stretch":
            scales = [sizes[i] / in_sizes[i] for i in range(len(axes))]
        else:
            ratios = [sizes[i] / in_sizes[i] for i in range(len(axes))]
            r = min(ratios) if policy == "not_larger" else max(ratios)
            scales = [r] * len(axes)
            sizes = [int(math.floor(r * d + 0.5)) for d in in_sizes]
    elif scales is not None:
        sizes = [int(math.floor(in_sizes[i] * scales[i])) for i in range(len(axes))]
    else:
        raise ctx.error("has neither scales nor sizes")
    roi = None
    if roi_v is not None and np.size(roi_v):
        r = np.asarray(roi_v, np.float64).reshape(-1)
        n = len(axes)
        roi = [(float(r[i]), float(r[i + n])) for i in range(n)]
    y = x
    # Innermost axis first, as ONNX's reference nests its 1-D interpolations.
    for i in sorted(range(len(axes)), key=lambda j: -axes[j]):
        a = axes[i]
        if sizes[i] == x.shape[a] and scales[i] == 1.0 and roi is None:
            continue
        y = _resize_axis(ctx, y, a, sizes[i], scales[i], None if roi is None else roi[i])
    if x.dtype.kind in "iu":
        y = np.clip(np.rint(y), np.iinfo(x.dtype).min, np.iinfo(x.dtype).max)
    return np.asarray(y).astype(x.dtype)
