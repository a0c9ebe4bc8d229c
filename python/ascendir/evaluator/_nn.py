"""Matrix products and windows: MatMul(V2), BatchMatMul(V2), FullyConnection,
FlashAttentionScore, Conv2D, Conv3D, Conv2DBackpropInput(D), Conv2DTransposeD, MaxPool / AvgPool
(TF style), MaxPoolV3 / AvgPoolV2 (ONNX style), MaxPool3D / AvgPool3D, Pooling (Caffe style),
GlobalAveragePool / GlobalMaxPool, LRN.

Convolution and pooling run on NCHW internally (NHWC data is transposed in and out); the
helpers take any number of spatial dims. GE attribute formats: ``strides`` / ``dilations`` /
``ksize`` are 4-lists in the data format's dim order, ``pads`` is ``[top, bottom, left,
right]``; ``padding`` / ``padding_mode`` ``SAME`` pads the upper side with the odd element,
``SAME_LOWER`` the lower side, ``VALID`` not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._core import Ctx, kernel

__all__ = ["conv_nchw", "conv_transpose_nchw", "pool_nchw"]


def _acc_dtype(*xs: np.ndarray) -> np.dtype[Any]:
    dt = np.result_type(*xs)
    if dt.kind in "iub":
        return np.dtype(np.int64)
    if dt == np.float16 or dt.itemsize < 4:
        return np.dtype(np.float32)
    return dt


def _out_dtype(ctx: Ctx, x: np.ndarray) -> np.dtype[Any]:
    d = ctx.out_desc_dtype(0)
    if d is not None:
        return d
    return np.dtype(np.int32) if x.dtype in (np.int8, np.uint8) else x.dtype


def _last2(a: np.ndarray, flip: bool) -> np.ndarray:
    return np.swapaxes(a, -1, -2) if flip and a.ndim >= 2 else a


def _matmul(ctx: Ctx, ins: list[Any], t1: str, t2: str) -> np.ndarray:
    a, b = np.asarray(ins[0]), np.asarray(ins[1])
    bias = ctx.port(ins, "bias")
    acc = _acc_dtype(a, b)
    y = np.matmul(_last2(a, ctx.flag(t1)).astype(acc), _last2(b, ctx.flag(t2)).astype(acc))
    alpha = ctx.attr("alpha")
    if alpha is not None:
        y = y * float(alpha)
    if bias is not None:
        beta = ctx.attr("beta")
        bb = np.asarray(bias).astype(acc)
        y = y + (bb * float(beta) if beta is not None else bb)
    return y.astype(_out_dtype(ctx, a))


@kernel("MatMul", "MatMulV2")
def _mm(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return _matmul(ctx, ins, "transpose_x1", "transpose_x2")


@kernel("GEMM")
def _gemm(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    """GE's GEMM: ``alpha * (a @ b) + beta * c`` (alpha, beta one-element tensors)."""
    a, b, c = (np.asarray(x) for x in ins[:3])
    alpha, beta = (float(np.asarray(x).reshape(-1)[0]) for x in ins[3:5])
    acc = _acc_dtype(a, b)
    y = np.matmul(_last2(a, ctx.flag("transpose_a")).astype(acc),
                  _last2(b, ctx.flag("transpose_b")).astype(acc))
    return (alpha * y + beta * c.astype(acc)).astype(_out_dtype(ctx, a))


@kernel("BatchMatMul", "BatchMatMulV2")
def _bmm(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return _matmul(ctx, ins, "adj_x1", "adj_x2")


def _to_bnsd(a: np.ndarray, layout: str, heads: int) -> np.ndarray:
    if layout == "BNSD":
        return a
    if layout == "BSND":
        return a.transpose(0, 2, 1, 3)
    if layout == "SBH":
        a = a.transpose(1, 0, 2)
    b, s, h = a.shape
    return a.reshape(b, s, heads, h // heads).transpose(0, 2, 1, 3)


def _from_bnsd(a: np.ndarray, layout: str) -> np.ndarray:
    if layout == "BNSD":
        return a
    if layout == "BSND":
        return a.transpose(0, 2, 1, 3)
    b, n, s, d = a.shape
    y = a.transpose(0, 2, 1, 3).reshape(b, s, n * d)
    return y.transpose(1, 0, 2) if layout == "SBH" else y


@kernel("FlashAttentionScore")
def _flash_attention(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    """``softmax(scale·(pse + q·kᵀ))·v`` (``pse_type`` 1; otherwise ``scale·q·kᵀ + pse``), masked
    where ``atten_mask`` is set; the statistics as GE returns them (``[B, N, Sq, 8]``)."""
    layout = str(ctx.attr("input_layout", "BSH"))
    if layout not in ("BNSD", "BSND", "BSH", "SBH"):
        raise ctx.error(f"input_layout '{layout}' is not evaluated")
    if float(ctx.attr("keep_prob", 1.0)) != 1.0:
        raise ctx.error("keep_prob below 1 (dropout) is random and not evaluated")
    for port in ("drop_mask", "padding_mask", "prefix", "actual_seq_qlen", "actual_seq_kvlen",
                 "q_start_idx", "kv_start_idx"):
        if ctx.port(ins, port) is not None:
            raise ctx.error(f"input '{port}' is not evaluated")
    if (int(ctx.attr("sparse_mode", 0)) != 0
            or int(ctx.attr("pre_tockens", 2147483647)) < 2147483647
            or int(ctx.attr("next_tockens", 2147483647)) < 2147483647):
        raise ctx.error("sparse modes and token bands are not evaluated")
    heads = int(ctx.attr("head_num", 0))
    if layout in ("BSH", "SBH") and heads < 1:
        raise ctx.error(f"layout {layout} needs head_num >= 1, got {heads}")
    q0 = np.asarray(ins[0])
    q, k, v = (_to_bnsd(np.asarray(a), layout, heads) for a in ins[:3])
    if q.shape[1] != k.shape[1]:
        if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
            raise ctx.error(f"query heads {q.shape[1]} are not a multiple of key heads "
                            f"{k.shape[1]}")
        rep = q.shape[1] // k.shape[1]
        k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    acc = _acc_dtype(q, k, v)
    scale = float(ctx.attr("scale_value", 1.0))
    s = np.matmul(q.astype(acc), np.swapaxes(k.astype(acc), -1, -2))
    pse = ctx.port(ins, "real_shift")
    if pse is not None:
        pse = np.asarray(pse).astype(acc)
        s = scale * (s + pse) if int(ctx.attr("pse_type", 1)) == 1 else scale * s + pse
    else:
        s = scale * s
    mask = ctx.port(ins, "atten_mask")
    if mask is not None:
        s = np.where(np.asarray(mask).astype(bool), np.finfo(acc).min, s)
    m = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - m)
    total = np.sum(e, axis=-1, keepdims=True)
    out = np.matmul(e / total, v.astype(acc)).astype(q0.dtype)
    stats = (*m.shape[:-1], 8)
    return [np.broadcast_to(m, stats).astype(np.float32),
            np.broadcast_to(total, stats).astype(np.float32),
            np.zeros((0,), dtype=q0.dtype), _from_bnsd(out, layout)]


@kernel("FullyConnection")
def _fc(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, w = np.asarray(ins[0]), np.asarray(ins[1])
    b = ctx.port(ins, "b")
    axis = int(ctx.attr("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    lead = x.shape[:axis]
    x2 = x.reshape(int(np.prod(lead, dtype=np.int64)), -1)
    w2 = w.reshape(w.shape[0], -1)
    if ctx.flag("transpose"):
        w2 = w.reshape(-1, w.shape[-1]).T  # w is [K, num_output]
    acc = _acc_dtype(x, w)
    y = x2.astype(acc) @ w2.T.astype(acc)
    if b is not None:
        y = y + np.asarray(b).reshape(-1).astype(acc)
    n = y.shape[1]
    if x.ndim == 4 and axis == 1:
        shape: tuple[int, ...] = ((x.shape[0], 1, 1, n) if ctx.in_format(0) == "NHWC"
                                  else (x.shape[0], n, 1, 1))
    else:
        shape = (*lead, n)
    return y.reshape(shape).astype(_out_dtype(ctx, x))


# ---------------------------------------------------------------- windows


def _same_pads(size: int, k: int, s: int, d: int, lower: bool) -> tuple[int, int]:
    out = -(-size // s)
    dk = d * (k - 1) + 1
    total = max((out - 1) * s + dk - size, 0)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def _window_pads(ctx: Ctx, mode: str, spatial: Sequence[int], k: Sequence[int],
                 s: Sequence[int], d: Sequence[int], pads: Sequence[int]) -> list[tuple[int, int]]:
    n = len(spatial)
    if mode in ("SAME", "SAME_UPPER", "SAME_LOWER"):
        return [_same_pads(spatial[i], k[i], s[i], d[i], mode == "SAME_LOWER") for i in range(n)]
    if mode == "VALID":
        return [(0, 0)] * n
    if len(pads) != 2 * n:
        raise ctx.error(f"pads {list(pads)} must have {2 * n} values")
    return [(int(pads[2 * i]), int(pads[2 * i + 1])) for i in range(n)]


def _windows(xp: np.ndarray, k: Sequence[int], s: Sequence[int], d: Sequence[int],
             out: Sequence[int]) -> np.ndarray:
    """``(N, C, *k, *out)`` windows of a padded NC... array (views, then one stack)."""
    n = len(k)
    parts = []
    for idx in np.ndindex(*k):
        sl = [slice(None), slice(None)]
        for i in range(n):
            start = idx[i] * d[i]
            sl.append(slice(start, start + s[i] * (out[i] - 1) + 1, s[i]))
        parts.append(xp[tuple(sl)])
    w = np.stack(parts, axis=2)
    return w.reshape(xp.shape[:2] + tuple(k) + tuple(out))


def conv_nchw(x: np.ndarray, w: np.ndarray, strides: Sequence[int], dilations: Sequence[int],
              pads: Sequence[tuple[int, int]], groups: int) -> np.ndarray:
    """Grouped N-D convolution of ``x`` (N, C, ...) with ``w`` (O, C/groups, ...)."""
    n = x.ndim - 2
    acc = np.promote_types(_acc_dtype(x, w), np.float64) if x.dtype.kind == "f" else \
        _acc_dtype(x, w)
    xp = np.pad(x.astype(acc), [(0, 0), (0, 0), *pads])
    k = w.shape[2:]
    out = []
    for i in range(n):
        span = xp.shape[2 + i] - (dilations[i] * (k[i] - 1) + 1)
        if span < 0:
            raise ValueError(f"window {k[i]} (dilation {dilations[i]}) is larger than the "
                             f"padded input {xp.shape[2 + i]}")
        out.append(span // strides[i] + 1)
    cols = _windows(xp, k, strides, dilations, out)  # N, C, *k, *out
    g = groups
    nb, ch = x.shape[:2]
    oc = w.shape[0]
    if ch % g or oc % g or w.shape[1] * g != ch:
        raise ValueError(f"channels {ch} and filter {list(w.shape)} do not fit {g} groups")
    cols = cols.reshape((nb, g, ch // g) + cols.shape[2:])
    wg = w.astype(acc).reshape((g, oc // g) + w.shape[1:])
    kk = "".join(chr(ord("h") + i) for i in range(n))
    oo = "".join(chr(ord("p") + i) for i in range(n))
    y = np.einsum(f"ngc{kk}{oo},goc{kk}->ngo{oo}", cols, wg, optimize=True)
    return y.reshape((nb, oc) + tuple(out))


def conv_transpose_nchw(dy: np.ndarray, w: np.ndarray, out_spatial: Sequence[int],
                        strides: Sequence[int], dilations: Sequence[int],
                        pads: Sequence[tuple[int, int]], groups: int) -> np.ndarray:
    """The input gradient of :func:`conv_nchw`: ``dy`` (N, O, ...), ``w`` (O, C/groups, ...),
    the result (N, C, *out_spatial)."""
    n = dy.ndim - 2
    acc = _acc_dtype(dy, w)
    nb, oc = dy.shape[:2]
    g = groups
    cg = w.shape[1]
    k = w.shape[2:]
    dyg = dy.astype(acc).reshape((nb, g, oc // g) + dy.shape[2:])
    wg = w.astype(acc).reshape((g, oc // g) + w.shape[1:])
    kk = "".join(chr(ord("h") + i) for i in range(n))
    oo = "".join(chr(ord("p") + i) for i in range(n))
    cols = np.einsum(f"ngo{oo},goc{kk}->ngc{kk}{oo}", dyg, wg, optimize=True)
    padded = [out_spatial[i] + pads[i][0] + pads[i][1] for i in range(n)]
    need = [dilations[i] * (k[i] - 1) + strides[i] * (dy.shape[2 + i] - 1) + 1 for i in range(n)]
    full = [max(padded[i], need[i]) for i in range(n)]
    buf = np.zeros((nb, g, cg, *full), acc)
    for idx in np.ndindex(*k):
        sl: list[Any] = [slice(None)] * 3
        for i in range(n):
            start = idx[i] * dilations[i]
            sl.append(slice(start, start + strides[i] * (dy.shape[2 + i] - 1) + 1, strides[i]))
        buf[tuple(sl)] += cols[(slice(None),) * 3 + idx]
    crop = tuple(slice(pads[i][0], pads[i][0] + out_spatial[i]) for i in range(n))
    return buf[(slice(None),) * 3 + crop].reshape((nb, g * cg, *out_spatial))


def _spatial(v: Sequence[int], fmt: str, n: int = 2) -> list[int]:
    """The spatial entries of a 4-list in data format ``fmt`` (2-lists pass through)."""
    v = [int(a) for a in v]
    if len(v) == n + 2:
        return v[1:-1] if fmt == "NHWC" else v[2:]
    if len(v) == n:
        return v
    if len(v) == 1:
        return v * n
    raise ValueError(f"{v} does not have {n + 2} (or {n}) values")


def _to_nchw(x: np.ndarray, fmt: str) -> np.ndarray:
    return np.moveaxis(x, -1, 1) if fmt == "NHWC" else x


def _from_nchw(y: np.ndarray, fmt: str) -> np.ndarray:
    return np.moveaxis(y, 1, -1) if fmt == "NHWC" else y


def _filter_oihw(ctx: Ctx, w: np.ndarray, xfmt: str, port: int) -> np.ndarray:
    f = ctx.in_format(port)
    if f == "NCHW" or (f not in ("NHWC", "HWCN", "CHWN") and xfmt == "NCHW"):
        return w
    if f == "NHWC":
        return np.transpose(w, (0, 3, 1, 2))
    if f == "CHWN":
        return np.transpose(w, (3, 0, 1, 2))
    return np.transpose(w, (3, 2, 0, 1))  # HWCN (GE's filter layout for NHWC data)


@kernel("Conv2D")
def _conv2d(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, w = np.asarray(ins[0]), np.asarray(ins[1])
    bias = ctx.port(ins, "bias")
    if x.ndim != 4 or w.ndim != 4:
        raise ctx.error(f"x {list(x.shape)} and filter {list(w.shape)} must be 4-D")
    fmt = ctx.layout(0, "NCHW")
    xc = _to_nchw(x, fmt)
    wc = _filter_oihw(ctx, w, fmt, 1)
    s = _spatial(ctx.ints("strides", [1, 1, 1, 1]), fmt)
    d = _spatial(ctx.ints("dilations", [1, 1, 1, 1]), fmt)
    pads = _window_pads(ctx, str(ctx.attr("padding", "") or ""), xc.shape[2:], wc.shape[2:],
                        s, d, ctx.ints("pads", [0, 0, 0, 0]))
    y = conv_nchw(xc, wc, s, d, pads, int(ctx.attr("groups", 1) or 1))
    if bias is not None:
        y = y + np.asarray(bias).reshape(1, -1, 1, 1).astype(y.dtype)
    return _from_nchw(y, fmt).astype(_out_dtype(ctx, x))


def _onnx_window(ctx: Ctx, spatial: Sequence[int], window: Sequence[int]
                 ) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """The strides, dilations and GE-ordered pads (begin, end per axis) of an ONNX window op
    over ``spatial`` dims with a ``window``: ONNX's ``pads`` (every begin, then every end) or
    its ``auto_pad``."""
    n = len(spatial)
    s = ctx.ints("strides", [1] * n)
    d = ctx.ints("dilations", [1] * n)
    flat = ctx.ints("pads", [0] * (2 * n))
    if len(s) != n or len(d) != n or len(flat) != 2 * n:
        raise ctx.error(f"strides {s}, dilations {d} and pads {flat} do not fit {n} spatial dims")
    auto = str(ctx.attr("auto_pad", "NOTSET") or "NOTSET")
    pads = _window_pads(ctx, auto if auto != "NOTSET" else "", spatial, window, s, d,
                        [v for i in range(n) for v in (flat[i], flat[n + i])])
    return s, d, pads


@kernel("onnx::Conv")
def _onnx_conv(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    """ONNX ``Conv`` of any spatial rank as the import keeps it where no GE form fits (1-D and
    3-D convolutions with ``auto_pad``): ONNX attributes (spatial ``strides`` / ``dilations``,
    ``pads`` as every begin then every end, ``auto_pad``, ``group``)."""
    x, w = np.asarray(ins[0]), np.asarray(ins[1])
    n = x.ndim - 2
    if n < 1 or w.ndim != x.ndim:
        raise ctx.error(f"x {list(x.shape)} and W {list(w.shape)} must have equal ranks >= 3")
    s, d, pads = _onnx_window(ctx, x.shape[2:], w.shape[2:])
    y = conv_nchw(x, w, s, d, pads, int(ctx.attr("group", 1) or 1))
    if len(ins) > 2 and ins[2] is not None:
        y = y + np.asarray(ins[2]).reshape((1, -1) + (1,) * n).astype(y.dtype)
    return y.astype(x.dtype)


@kernel("onnx::MaxPool")
def _onnx_max_pool(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    """ONNX ``MaxPool`` as the import keeps it where no GE form fits (1-D windows with
    ``auto_pad``; SAME_LOWER):
    ONNX attributes (``kernel_shape``, spatial ``strides`` / ``dilations``, ``pads`` as every
    begin then every end, ``auto_pad``, ``ceil_mode``); the values output only."""
    x = np.asarray(ins[0])
    if ctx.num_outputs > 1:
        raise ctx.error("the Indices output is not evaluated")
    k = ctx.ints("kernel_shape")
    n = len(k)
    if x.ndim != n + 2:
        raise ctx.error(f"x {list(x.shape)} does not fit kernel_shape {k}")
    s, d, pads = _onnx_window(ctx, x.shape[2:], k)
    return pool_nchw(x, k, s, pads, mode="max", ceil=bool(int(ctx.attr("ceil_mode", 0))),
                     dilations=d)


@kernel("Conv2DBackpropInput", "Conv2DBackpropInputD")
def _conv2d_bp(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    if ctx.type.endswith("D"):
        size = ctx.ints("input_size")
    else:
        size = np.asarray(ctx.port(ins, "input_size")).reshape(-1).tolist()
    w = np.asarray(ctx.port(ins, "filter"))
    dy = np.asarray(ctx.port(ins, "out_backprop"))
    fmt = ctx.layout(ctx.in_names.index("out_backprop"), "NCHW")
    if len(size) != 4 or dy.ndim != 4 or w.ndim != 4:
        raise ctx.error(f"input_size {size}, filter {list(w.shape)} and out_backprop "
                        f"{list(dy.shape)} must be 4-D")
    out = _spatial(size, fmt)
    wc = _filter_oihw(ctx, w, fmt, ctx.in_names.index("filter"))
    s = _spatial(ctx.ints("strides", [1, 1, 1, 1]), fmt)
    d = _spatial(ctx.ints("dilations", [1, 1, 1, 1]), fmt)
    pads = _window_pads(ctx, str(ctx.attr("padding", "") or ""), out, wc.shape[2:], s, d,
                        ctx.ints("pads", [0, 0, 0, 0]))
    y = conv_transpose_nchw(_to_nchw(dy, fmt), wc, out, s, d, pads,
                            int(ctx.attr("groups", 1) or 1))
    return _from_nchw(y, fmt).astype(_out_dtype(ctx, dy))


@kernel("Conv2DTransposeD")
def _conv2d_transpose(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    size = ctx.ints("input_size")
    x = np.asarray(ctx.port(ins, "x"))
    w = np.asarray(ctx.port(ins, "filter"))
    fmt = ctx.layout(ctx.in_names.index("x"), "NCHW")
    if len(size) != 4 or x.ndim != 4 or w.ndim != 4:
        raise ctx.error(f"input_size {size}, filter {list(w.shape)} and x {list(x.shape)} "
                        "must be 4-D")
    out = _spatial(size, fmt)
    wc = _filter_oihw(ctx, w, fmt, ctx.in_names.index("filter"))
    s = _spatial(ctx.ints("strides", [1, 1, 1, 1]), fmt)
    d = _spatial(ctx.ints("dilations", [1, 1, 1, 1]), fmt)
    p = ctx.ints("pads", [0, 0, 0, 0])
    y = conv_transpose_nchw(_to_nchw(x, fmt), wc, out, s, d, [(p[0], p[1]), (p[2], p[3])],
                            int(ctx.attr("groups", 1) or 1))
    bias = ctx.port(ins, "bias")
    if bias is not None:
        y = y + np.asarray(bias).reshape(1, -1, 1, 1)
    return _from_nchw(y, fmt).astype(_out_dtype(ctx, x))


def pool_nchw(x: np.ndarray, k: Sequence[int], s: Sequence[int], pads: Sequence[tuple[int, int]],
              *, mode: str, ceil: bool = False, dilations: Sequence[int] | None = None,
              count: str = "valid", caffe: bool = False) -> np.ndarray:
    """Max (``mode="max"``) or average pooling of an NC... array.

    ``count`` is the average's divisor: ``"valid"`` counts the input elements of a window,
    ``"padded"`` also the explicit padding (never the ceil-mode overhang).
    """
    n = x.ndim - 2
    d = list(dilations or [1] * n)
    out = []
    for i in range(n):
        size = x.shape[2 + i] + pads[i][0] + pads[i][1]
        span = size - (d[i] * (k[i] - 1) + 1)
        if span < 0:
            raise ValueError(f"window {k[i]} is larger than the padded input {size}")
        o = (-(-span // s[i]) if ceil else span // s[i]) + 1
        if ceil and (o - 1) * s[i] >= x.shape[2 + i] + pads[i][0]:
            o -= 1
        if caffe and o > 1 and (pads[i][0] or pads[i][1]) and (o - 1) * s[i] >= (
                x.shape[2 + i] + pads[i][0]):
            o -= 1
        out.append(o)
    extra = [max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
                 - (x.shape[2 + i] + pads[i][0] + pads[i][1])) for i in range(n)]
    widths = [(0, 0), (0, 0)] + [(pads[i][0], pads[i][1] + extra[i]) for i in range(n)]
    if mode == "max":
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(x, widths, constant_values=fill)
        w = _windows(xp, k, s, d, out)
        return np.max(w, axis=tuple(range(2, 2 + n))) if w.size else np.zeros(
            x.shape[:2] + tuple(out), x.dtype)
    acc = np.float64 if x.dtype == np.float64 else np.float32
    xp = np.pad(x.astype(acc), widths)
    total = np.sum(_windows(xp, k, s, d, out), axis=tuple(range(2, 2 + n)))
    ones = np.zeros((1, 1) + tuple(x.shape[2 + i] + pads[i][0] + pads[i][1] + extra[i]
                                   for i in range(n)), acc)
    inner = tuple(slice(pads[i][0], pads[i][0] + x.shape[2 + i]) for i in range(n))
    if count == "valid":
        ones[(0, 0) + inner] = 1
    else:
        ones[(0, 0) + tuple(slice(0, x.shape[2 + i] + pads[i][0] + pads[i][1])
                            for i in range(n))] = 1
    div = np.sum(_windows(ones, k, s, d, out), axis=tuple(range(2, 2 + n)))
    with np.errstate(all="ignore"):
        return (total / div).astype(x.dtype)


def _pool_common(ctx: Ctx, x: np.ndarray, mode: str, k: list[int], s: list[int],
                 padding: str, pads: list[int], fmt: str, *, ceil: bool, count: str,
                 dilations: list[int] | None = None) -> np.ndarray:
    xc = _to_nchw(x, fmt)
    if ctx.flag("global_pooling"):
        k = list(xc.shape[2:])
        s = [1] * len(k)
        padding, pads = "VALID", []
    d = dilations or [1] * len(k)
    p = _window_pads(ctx, padding, xc.shape[2:], k, s, d, pads)
    y = pool_nchw(xc, k, s, p, mode=mode, ceil=ceil, dilations=d, count=count)
    return _from_nchw(y, fmt)


@kernel("MaxPool3D")
def _max_pool_3d(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    if ctx.attr("data_format", "NDHWC") != "NCDHW" or x.ndim != 5:
        raise ctx.error(f"MaxPool3D is evaluated on 5-D NCDHW data, got {list(x.shape)} "
                        f"{ctx.attr('data_format', 'NDHWC')}")

    def three(key: str, default: int) -> list[int]:
        v = ctx.ints(key, [default] * 5)
        return v[2:] if len(v) == 5 else (v * 3 if len(v) == 1 else v)

    return _pool_common(ctx, x, "max", three("ksize", 1), three("strides", 1),
                        str(ctx.attr("padding", "CALCULATED")), ctx.ints("pads", [0] * 6),
                        "NCHW", ceil=bool(ctx.attr("ceil_mode", 0)), count="valid",
                        dilations=three("dilation", 1))


def _ncdhw(ctx: Ctx, x: np.ndarray, op: str) -> None:
    if ctx.attr("data_format", "NDHWC") != "NCDHW" or x.ndim != 5:
        raise ctx.error(f"{op} is evaluated on 5-D NCDHW data, got {list(x.shape)} "
                        f"{ctx.attr('data_format', 'NDHWC')}")


def _three(ctx: Ctx, key: str, default: int) -> list[int]:
    """A 3-D window attribute's spatial values (given as 5 NCDHW values, 3, or 1)."""
    v = ctx.ints(key, [default] * 5)
    return v[2:] if len(v) == 5 else (v * 3 if len(v) == 1 else v)


@kernel("Conv3D")
def _conv3d(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    """GE ``Conv3D`` on NCDHW data with an OIDHW filter; ``pads`` are front, back, top,
    bottom, left, right."""
    x, w = np.asarray(ins[0]), np.asarray(ins[1])
    _ncdhw(ctx, x, "Conv3D")
    if w.ndim != 5:
        raise ctx.error(f"filter {list(w.shape)} must be 5-D")
    p = ctx.ints("pads", [0] * 6)
    if len(p) != 6:
        raise ctx.error(f"pads {p} must have 6 values")
    y = conv_nchw(x, w, _three(ctx, "strides", 1), _three(ctx, "dilations", 1),
                  [(p[0], p[1]), (p[2], p[3]), (p[4], p[5])], int(ctx.attr("groups", 1) or 1))
    bias = ctx.port(ins, "bias")
    if bias is not None:
        y = y + np.asarray(bias).reshape(1, -1, 1, 1, 1).astype(y.dtype)
    return y.astype(_out_dtype(ctx, x))


@kernel("AvgPool3D")
def _avg_pool_3d(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    """GE ``AvgPool3D`` on NCDHW data: ``count_include_pad`` counts the explicit padding,
    ``divisor_override`` (non-zero) replaces the divisor."""
    x = np.asarray(ins[0])
    _ncdhw(ctx, x, "AvgPool3D")
    p = ctx.ints("pads", [0] * 6)
    if len(p) != 6:
        raise ctx.error(f"pads {p} must have 6 values")
    k = _three(ctx, "ksize", 1)
    pads = [(p[0], p[1]), (p[2], p[3]), (p[4], p[5])]
    ceil = ctx.flag("ceil_mode")
    if int(ctx.attr("divisor_override", 0) or 0):
        raise ctx.error("divisor_override is not evaluated")
    count = "padded" if ctx.flag("count_include_pad", True) else "valid"
    return pool_nchw(x, k, _three(ctx, "strides", 1), pads, mode="avg", ceil=ceil, count=count)


@kernel("LRN")
def _lrn(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    """GE ``LRN`` across the channels (axis 1, NCHW): ``x / (bias + alpha * sum)^beta``, the
    sum of squares over ``depth_radius`` channels on each side."""
    x = np.asarray(ins[0])
    if str(ctx.attr("norm_region", "ACROSS_CHANNELS")) != "ACROSS_CHANNELS" or x.ndim < 2:
        raise ctx.error(f"LRN is evaluated across the channels of data of rank >= 2, got "
                        f"{ctx.attr('norm_region')} {list(x.shape)}")
    r = int(ctx.attr("depth_radius", 5))
    acc = np.float64 if x.dtype == np.float64 else np.float32
    sq = np.square(x.astype(acc))
    widths = [(0, 0)] * x.ndim
    widths[1] = (r, r)
    sqp = np.pad(sq, widths)
    c = x.shape[1]
    total = sum(sqp[:, i:i + c] for i in range(2 * r + 1))
    scale = float(ctx.attr("bias", 1.0)) + float(ctx.attr("alpha", 1.0)) * total
    return (x / np.power(scale, float(ctx.attr("beta", 0.5)))).astype(x.dtype)


@kernel("MaxPool", "AvgPool")
def _tf_pool(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    fmt = ctx.layout(0, "NHWC")
    padding = str(ctx.require("padding"))
    if padding not in ("SAME", "VALID"):
        raise ctx.error(f"padding '{padding}' is not SAME or VALID")
    mode = "max" if ctx.type == "MaxPool" else "avg"
    return _pool_common(ctx, x, mode, _spatial(ctx.ints("ksize"), fmt),
                        _spatial(ctx.ints("strides"), fmt), padding, [], fmt, ceil=False,
                        count="valid")


@kernel("MaxPoolV3", "AvgPoolV2")
def _v3_pool(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    fmt = ctx.layout(0, "NCHW")
    mode = "max" if ctx.type == "MaxPoolV3" else "avg"
    padding = str(ctx.attr("padding_mode", "CALCULATED"))
    dil = ctx.attr("dilations")
    count = "valid" if ctx.flag("exclusive", True) else "padded"
    return _pool_common(ctx, x, mode, _spatial(ctx.ints("ksize"), fmt),
                        _spatial(ctx.ints("strides"), fmt), padding,
                        ctx.ints("pads", [0, 0, 0, 0]), fmt, ceil=ctx.flag("ceil_mode"),
                        count=count, dilations=_spatial(dil, fmt) if dil else None)


@kernel("Pooling")
def _caffe_pool(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    fmt = ctx.layout(0, "NCHW")
    mode_id = int(ctx.attr("mode", 0))
    if mode_id not in (0, 1):
        raise ctx.error(f"pooling mode {mode_id} is not 0 (max) or 1 (average)",)
    xc = _to_nchw(x, fmt)
    if ctx.flag("global_pooling"):
        k, s, p = list(xc.shape[2:]), [1, 1], [(0, 0), (0, 0)]
    else:
        k = _spatial(ctx.ints("window", [1, 1]), "NCHW")
        s = _spatial(ctx.ints("stride", [1, 1]), "NCHW")
        pad = ctx.ints("pad", [0, 0, 0, 0])
        if len(pad) == 2:
            pad = [pad[0], pad[0], pad[1], pad[1]]
        p = [(pad[0], pad[1]), (pad[2], pad[3])]
    # Caffe's ceil_mode attribute: 0 rounds up (Caffe's default), 1 rounds down.
    ceil = int(ctx.attr("ceil_mode", 0)) == 0
    y = pool_nchw(xc, k, s, p, mode="max" if mode_id == 0 else "avg", ceil=ceil,
                  count="padded", caffe=True)
    return _from_nchw(y, fmt)


@kernel("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    axes = tuple(range(2, x.ndim))
    if ctx.type == "GlobalMaxPool":
        return np.max(x, axis=axes, keepdims=True)
    return np.mean(x, axis=axes, keepdims=True, dtype=np.float64).astype(x.dtype)
