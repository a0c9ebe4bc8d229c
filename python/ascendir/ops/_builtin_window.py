"""GE's 3-D windows and local response normalization (part of :mod:`.builtin`): ``Conv3D``,
``AvgPool3D`` and ``LRN``, with GE's port and attribute names and the shape rules of their GE
definitions. The ONNX import maps 3-D ``Conv`` / ``AveragePool`` and ``LRN`` to them."""

from __future__ import annotations

from typing import Any

from .. import infer as I
from ..types import DataType
from . import Attr, Input, OptionalInput, Output, TensorType, TypeVar
from .builtin import _op

__all__ = ["register_window"]

_UNKNOWN_RANK = [-2]


def _five(ctx: Any, key: str, default: int) -> list[int]:
    """A 3-D window attribute's spatial values (given as 5 NCDHW values, 3, or 1)."""
    v = [int(a) for a in (ctx.attr(key, None) or [default] * 5)]
    return v[2:] if len(v) == 5 else (v * 3 if len(v) == 1 else v)


def _window_dim(n: int, k: int, s: int, d: int, b: int, e: int, ceil: bool) -> int:
    """One output dim of a window over ``n`` with pads ``b`` / ``e`` (ceil mode drops a last
    window that starts in the end padding); -1 when ``n`` is unknown."""
    if n < 0 or k < 0:
        return -1
    span = n + b + e - (d * (k - 1) + 1)
    if span < 0:
        raise ValueError(f"window {d * (k - 1) + 1} is larger than the padded input {n + b + e}")
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + b:
        o -= 1
    return o


def _conv3d_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``Conv3D`` (NCDHW data, OIDHW filter): ``[N, filter O, D', H', W']``, each spatial dim
    from the kernel, stride, dilation and pads ``[front, back, top, bottom, left, right]``."""
    x, w = ctx.input("x"), ctx.input("filter")
    xs, ws = list(x.shape), list(w.shape)
    if len(xs) != 5 or ctx.attr("data_format", "NDHWC") != "NCDHW":
        return [([-1] * 5 if len(xs) == 5 else _UNKNOWN_RANK, x.dtype)]
    k = ws[2:] if len(ws) == 5 else [-1] * 3
    s, d = _five(ctx, "strides", 1), _five(ctx, "dilations", 1)
    pads = [int(p) for p in (ctx.attr("pads", None) or [0] * 6)]
    out = [xs[0], ws[0] if len(ws) == 5 else -1]
    out += [_window_dim(xs[2 + i], k[i], s[i], d[i], pads[2 * i], pads[2 * i + 1], False)
            for i in range(3)]
    return [(out, x.dtype)]


def _avg_pool_3d_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``AvgPool3D`` (NCDHW): each spatial dim from ``ksize``, ``strides`` and ``pads``
    (``ceil_mode`` rounding up but dropping a last window that starts in the end padding)."""
    x = ctx.input("x")
    xs = list(x.shape)
    if len(xs) != 5 or ctx.attr("data_format", "NDHWC") != "NCDHW":
        return [([-1] * 5 if len(xs) == 5 else _UNKNOWN_RANK, x.dtype)]
    k, s = _five(ctx, "ksize", 1), _five(ctx, "strides", 1)
    pads = [int(p) for p in (ctx.attr("pads", None) or [0] * 6)]
    ceil = bool(ctx.attr("ceil_mode", False))
    out = xs[:2] + [_window_dim(xs[2 + i], k[i], s[i], 1, pads[2 * i], pads[2 * i + 1], ceil)
                    for i in range(3)]
    return [(out, x.dtype)]


def register_window() -> None:
    """Register Conv3D, AvgPool3D and LRN."""
    _op(
        "Conv3D",
        x=Input("T"),
        filter=Input("T"),
        bias=OptionalInput(),
        offset_w=OptionalInput(),
        y=Output("T"),
        strides=Attr(list[int]),
        pads=Attr(list[int]),
        dilations=Attr(list[int], [1] * 5),
        groups=Attr(int, 1),
        data_format=Attr(str, "NDHWC"),
        offset_x=Attr(int, 0),
        T=TypeVar(TensorType.FLOATING),
        infer=_conv3d_infer,
    )
    _op(
        "AvgPool3D",
        x=Input("T"),
        y=Output("T"),
        ksize=Attr(list[int]),
        strides=Attr(list[int]),
        pads=Attr(list[int]),
        ceil_mode=Attr(bool, False),
        count_include_pad=Attr(bool, True),
        divisor_override=Attr(int, 0),
        data_format=Attr(str, "NDHWC"),
        T=TypeVar(TensorType.FLOATING),
        infer=_avg_pool_3d_infer,
    )
    _op(
        "LRN",
        x=Input("T"),
        y=Output("T"),
        depth_radius=Attr(int, 5),
        bias=Attr(float, 1.0),
        alpha=Attr(float, 1.0),
        beta=Attr(float, 0.5),
        norm_region=Attr(str, "ACROSS_CHANNELS"),
        T=TypeVar(TensorType.FLOATING),
        infer=I.same_as("x"),
    )
