"""More GE types the ONNX frontend maps to (part of :mod:`.builtin`): ``Resize``, ``Einsum``,
``GatherNd``, ``NonZero``, the bit shifts, the losses ``SoftmaxCrossEntropyLoss`` and
``NLLLoss``, ``RmsNorm``, ``GridSampler2D`` / ``GridSampler3D`` and ``Quantize``, with GE's port
and attribute names and the shape rules of their GE (and ONNX) definitions."""

from __future__ import annotations

import math
from typing import Any

from .. import infer as I
from ..types import DataType
from . import Attr, DynamicInput, Input, OptionalInput, Output, TensorType, TypeVar
from .builtin import _F, _op

__all__ = ["register_frontend"]

_UNKNOWN_RANK = [-2]


def _optional_value(ctx: Any, name: str) -> Any:
    """The known value of optional input ``name`` (None when the op lacks the port, the port is
    unset or its value is not known)."""
    if name not in ctx.input_names or ctx.input(name) is None:
        return None
    return ctx.value(name)


def _resize_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``Resize``: the ``sizes`` input when known, else ``floor(dim * scale)``; over ``axes``
    (every axis by default), with ``keep_aspect_ratio_policy`` for sizes."""
    x = ctx.input("x")
    shape = list(x.shape)
    if shape == _UNKNOWN_RANK:
        return [(shape, x.dtype)]
    rank = len(shape)
    axes = [a + rank if a < 0 else a for a in (ctx.attr("axes") or range(rank))]
    if any(not 0 <= a < rank for a in axes):
        return [([-1] * rank, x.dtype)]
    out = list(shape)
    sizes, scales = _optional_value(ctx, "sizes"), _optional_value(ctx, "scales")
    if sizes is not None and sizes.size == len(axes):
        want = [int(v) for v in sizes.reshape(-1)]
        policy = str(ctx.attr("keep_aspect_ratio_policy", "stretch"))
        if policy == "stretch":
            for a, v in zip(axes, want, strict=True):
                out[a] = v
        elif all(shape[a] > 0 for a in axes):
            ratios = [v / shape[a] for a, v in zip(axes, want, strict=True)]
            r = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                out[a] = int(math.floor(shape[a] * r + 0.5))
        else:
            for a in axes:
                out[a] = -1
    elif scales is not None and scales.size == len(axes):
        for a, s in zip(axes, scales.reshape(-1), strict=True):
            out[a] = int(math.floor(shape[a] * float(s))) if shape[a] >= 0 else -1
    else:
        for a in axes:
            out[a] = -1
    return [(out, x.dtype)]


def _merge_dim(old: int | None, new: int) -> int:
    """One size of a letter seen twice: 1 broadcasts, an unknown (-1) yields to a known."""
    if old is None or old == 1 or (old == -1 and new >= 0):
        return new
    return old


def _einsum_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``Einsum``: the output subscripts (implicit: the letters used once, sorted) over the
    operands' dims; ``...`` broadcasts like numpy."""
    eq = str(ctx.attr("equation", "")).replace(" ", "")
    xs = [d for d in ctx.inputs if d is not None]
    dtype = xs[0].dtype if xs else _F.FLOAT
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    unknown = [(_UNKNOWN_RANK, dtype)]
    if len(terms) != len(xs) or any(list(d.shape) == _UNKNOWN_RANK for d in xs):
        return unknown
    letters: dict[str, int] = {}
    ell: list[int] | None = None
    for term, d in zip(terms, xs, strict=True):
        dims = list(d.shape)
        head, _, tail = term.partition("...")
        n_ell = len(dims) - len(head) - len(tail)
        if n_ell < 0 or (n_ell and "..." not in term):
            return unknown
        named = list(zip(head, dims[: len(head)], strict=True))
        named += list(zip(tail, dims[len(dims) - len(tail):], strict=True))
        for ch, size in named:
            letters[ch] = _merge_dim(letters.get(ch), size)
        if "..." in term:
            e = dims[len(head): len(head) + n_ell]
            if ell is None:
                ell = e
            else:
                n = max(len(ell), len(e))
                a, b = [1] * (n - len(ell)) + ell, [1] * (n - len(e)) + e
                ell = [_merge_dim(x, y) for x, y in zip(a, b, strict=True)]
    if not arrow:
        once = sorted(ch for ch in letters if lhs.count(ch) == 1)
        rhs = ("..." if ell is not None else "") + "".join(once)
    out: list[int] = []
    for i, part in enumerate(rhs.split("...")):
        if i:
            out.extend(ell or [])
        for ch in part:
            if ch not in letters:
                return unknown
            out.append(letters[ch])
    return [(out, dtype)]


def _gather_nd_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``GatherNd``: ``indices.shape[:-1] + x.shape[batch_dims + indices.shape[-1]:]``."""
    x, idx = ctx.input("x"), ctx.input("indices")
    xs, ids = list(x.shape), list(idx.shape)
    b = int(ctx.attr("batch_dims", 0) or 0)
    if xs == _UNKNOWN_RANK or ids == _UNKNOWN_RANK or not ids or ids[-1] < 0:
        return [(_UNKNOWN_RANK, x.dtype)]
    k = ids[-1]
    if b + k > len(xs):
        raise ValueError(f"indices of depth {k} (batch_dims {b}) exceed x of rank {len(xs)}")
    return [(ids[:-1] + xs[b + k:], x.dtype)]


def _non_zero_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``NonZero``: ``[count, rank]`` (``[rank, count]`` with ``transpose``); the count is
    value-dependent; ``dtype`` (int64 by default)."""
    x = ctx.input("x")
    rank = -1 if list(x.shape) == _UNKNOWN_RANK else len(x.shape)
    dtype = DataType(int(ctx.attr("dtype", int(_F.INT64))))
    shape = [rank, -1] if ctx.attr("transpose", False) else [-1, rank]
    return [(shape, dtype)]


def _loss_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``SoftmaxCrossEntropyLoss`` / ``NLLLoss``: the loss has the labels' shape without
    ``reduction`` (``none``), else it is a scalar; ``log_prop`` has the scores' shape and
    ``total_weight`` is a scalar."""
    x, labels = ctx.input(0), ctx.input(1)
    loss = list(labels.shape) if ctx.attr("reduction", "mean") == "none" else []
    second = list(x.shape) if ctx.op_type == "SoftmaxCrossEntropyLoss" else []
    return [(loss, x.dtype), (second, x.dtype)]


def _rms_norm_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``RmsNorm``: ``y`` like ``x``; ``rstd`` float32, ``x``'s shape with the dims gamma
    covers (the trailing ones) set to 1."""
    x, gamma = ctx.input("x"), ctx.input("gamma")
    xs, gs = list(x.shape), list(gamma.shape)
    if xs == _UNKNOWN_RANK or gs == _UNKNOWN_RANK:
        return [(xs, x.dtype), (_UNKNOWN_RANK, _F.FLOAT)]
    if len(gs) > len(xs):
        raise ValueError(f"gamma of rank {len(gs)} exceeds x of rank {len(xs)}")
    return [(xs, x.dtype), (xs[: len(xs) - len(gs)] + [1] * len(gs), _F.FLOAT)]


def _grid_sampler_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``GridSampler2D`` / ``GridSampler3D``: ``[N, C]`` of ``x`` and the grid's spatial dims."""
    x, grid = ctx.input("x"), ctx.input("grid")
    xs, gs = list(x.shape), list(grid.shape)
    spatial = 3 if ctx.op_type == "GridSampler3D" else 2
    n = xs[0] if len(xs) == spatial + 2 else (gs[0] if len(gs) == spatial + 2 else -1)
    c = xs[1] if len(xs) == spatial + 2 else -1
    mid = gs[1:-1] if len(gs) == spatial + 2 else [-1] * spatial
    return [([n, c, *mid], x.dtype)]


_QUANTIZE_DTYPES = {"torch.qint8": _F.INT8, "torch.quint8": _F.UINT8, "torch.qint32": _F.INT32}


def _quantize_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``Quantize``: ``x``'s shape, the type ``dtype`` names (``torch.qint8`` ...)."""
    name = str(ctx.attr("dtype", ""))
    if name not in _QUANTIZE_DTYPES:
        raise ValueError(f"Quantize dtype {name!r} is not one of {sorted(_QUANTIZE_DTYPES)}")
    return [(list(ctx.input("x").shape), _QUANTIZE_DTYPES[name])]


def _rnn_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``CommonLSTM`` / ``CommonGRU``: ``y`` ``[seq, directions, batch, hidden]``, the final
    states ``[directions, batch, hidden]``, all of ``x``'s type (as many as the op has)."""
    x = ctx.input("x")
    xs = list(x.shape)
    hidden = int(ctx.attr("hidden_size", -1))
    dirs = 2 if ctx.attr("direction", "forward") == "bidirectional" else 1
    seq, batch = (xs[0], xs[1]) if len(xs) == 3 else (-1, -1)
    state = ([dirs, batch, hidden], x.dtype)
    n_states = 2 if ctx.op_type == "CommonLSTM" else 1
    return ([([seq, dirs, batch, hidden], x.dtype)] + [state] * n_states)[: ctx.num_outputs]


def _max_pool_3d_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """``MaxPool3D`` (NCDHW): each spatial dim from the window, stride, dilation and padding
    (SAME: ``ceil(in / stride)``; CALCULATED: the pads, ``ceil_mode`` rounding up but dropping
    a last window that starts in the end padding)."""
    x = ctx.input("x")
    xs = list(x.shape)
    if len(xs) != 5 or ctx.attr("data_format", "NDHWC") != "NCDHW":
        return [([-1] * 5 if len(xs) == 5 else _UNKNOWN_RANK, x.dtype)]

    def three(key: str, default: int) -> list[int]:
        v = [int(a) for a in (ctx.attr(key, None) or [default] * 5)]
        return v[2:] if len(v) == 5 else (v * 3 if len(v) == 1 else v)

    k, s, d = three("ksize", 1), three("strides", 1), three("dilation", 1)
    mode = ctx.attr("padding", "CALCULATED")
    pads = [int(p) for p in (ctx.attr("pads", None) or [0] * 6)]
    ceil = bool(ctx.attr("ceil_mode", 0))
    out = xs[:2]
    for i in range(3):
        n = xs[2 + i]
        if n < 0:
            out.append(-1)
        elif mode == "SAME":
            out.append(-(-n // s[i]))
        else:
            b, e = (0, 0) if mode == "VALID" else (pads[2 * i], pads[2 * i + 1])
            span = n + b + e - (d[i] * (k[i] - 1) + 1)
            o = (-(-span // s[i]) if ceil else span // s[i]) + 1
            if ceil and (o - 1) * s[i] >= n + b:
                o -= 1
            out.append(o)
    return [(out, x.dtype)]


def register_frontend() -> None:
    """Register Resize, Einsum, GatherNd, NonZero, LeftShift, RightShift, the losses, RmsNorm,
    the grid samplers and Quantize."""
    for name in ("LeftShift", "RightShift"):
        _op(name, x=Input("T"), y=Input("T"), z=Output("T"), T=TypeVar(TensorType.ANY),
            infer=I.broadcast("x", "y"))
    _op(
        "SoftmaxCrossEntropyLoss",
        scores=Input("T"),
        labels=Input(TensorType.INDEX),
        weights=OptionalInput("T"),
        loss=Output("T"),
        log_prop=Output("T"),
        ignore_index=Attr(int, 0),
        reduction=Attr(str, "mean"),
        T=TypeVar(TensorType.ANY),
        infer=_loss_infer,
    )
    _op(
        "NLLLoss",
        x=Input("T"),
        target=Input(),
        weight=OptionalInput("T"),
        y=Output("T"),
        total_weight=Output("T"),
        reduction=Attr(str, "mean"),
        ignore_index=Attr(int, -100),
        T=TypeVar(TensorType.ANY),
        infer=_loss_infer,
    )
    _op(
        "RmsNorm",
        x=Input("T"),
        gamma=Input("T"),
        y=Output("T"),
        rstd=Output(_F.FLOAT),
        epsilon=Attr(float, 1e-6),
        T=TypeVar(TensorType.ANY),
        infer=_rms_norm_infer,
    )
    sampler = dict(
        x=Input("T"),
        grid=Input("T"),
        y=Output("T"),
        interpolation_mode=Attr(str, "bilinear"),
        padding_mode=Attr(str, "zeros"),
        align_corners=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=_grid_sampler_infer,
    )
    _op("GridSampler2D", **sampler)
    _op("GridSampler3D", **sampler)
    _op(
        "Quantize",
        x=Input(),
        scales=Input(),
        zero_points=OptionalInput(),
        y=Output(),
        dtype=Attr(str),
        axis=Attr(int, 1),
        infer=_quantize_infer,
    )
    rnn = dict(
        x=Input("T"),
        w=Input("T"),
        r=Input("T"),
        b=OptionalInput("T"),
        sequence_lens=OptionalInput(_F.INT32),
        initial_h=OptionalInput("T"),
    )
    rnn_attrs = dict(
        activation_alpha=Attr(list[float], []),
        activation_beta=Attr(list[float], []),
        activations=Attr(list[str], []),
        clip=Attr(float, -1.0),
        direction=Attr(str, "forward"),
        hidden_size=Attr(int),
        T=TypeVar(TensorType.FLOAT),
        infer=_rnn_infer,
    )
    _op("CommonLSTM", **rnn, initial_c=OptionalInput("T"), p=OptionalInput("T"),
        y=Output("T"), y_h=Output("T"), y_c=Output("T"), **rnn_attrs,
        input_forget=Attr(int, 0))
    _op("CommonGRU", **rnn, y=Output("T"), y_h=Output("T"), **rnn_attrs,
        linear_before_reset=Attr(int, 0))
    _op(
        "MaxPool3D",
        x=Input("T"),
        y=Output("T"),
        ksize=Attr(list[int]),
        strides=Attr(list[int]),
        padding=Attr(str),
        pads=Attr(list[int], [0] * 6),
        dilation=Attr(list[int], [1] * 5),
        ceil_mode=Attr(int, 0),
        data_format=Attr(str, "NDHWC"),
        T=TypeVar(TensorType.FLOATING),
        infer=_max_pool_3d_infer,
    )
    _op(
        "ReduceLogSum",
        x=Input("T"),
        axes=OptionalInput(TensorType.INDEX),
        y=Output("T"),
        keep_dims=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.reduce(),
    )
    _op(
        "Resize",
        x=Input(),
        roi=OptionalInput(),
        scales=OptionalInput(),
        sizes=OptionalInput(TensorType.INDEX),
        y=Output(),
        coordinate_transformation_mode=Attr(str, "half_pixel"),
        cubic_coeff_a=Attr(float, -0.75),
        exclude_outside=Attr(int, 0),
        extrapolation_value=Attr(float, 0.0),
        mode=Attr(str, "nearest"),
        nearest_mode=Attr(str, "round_prefer_floor"),
        infer=_resize_infer,
    )
    _op("Einsum", x=DynamicInput(), y=Output(), equation=Attr(str), N=Attr(int, 0),
        infer=_einsum_infer)
    _op("GatherNd", x=Input(), indices=Input(TensorType.INDEX), y=Output(),
        infer=_gather_nd_infer)
    _op("NonZero", x=Input(), y=Output(), transpose=Attr(bool, False),
        dtype=Attr(int, int(_F.INT64)), infer=_non_zero_infer)
