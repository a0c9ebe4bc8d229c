"""Kernels of GE's internal op types: the quantization family and the fusion engine's host
folding ops; a partition's ``End``.

Semantics from GE's operator definitions: ``AscendQuant`` is ``round(x * scale + offset)``
saturated to the output type (``sqrt_mode`` applies the scale twice; ``round_mode`` Round /
Floor / Ceil / Trunc, Round to nearest even); ``AscendDequant`` multiplies by ``deq_scale`` per
channel (a uint64 scale holds the float32 in its low 32 bits; ``relu_flag`` clamps at 0);
``AscendRequant`` multiplies by ``req_scale`` and saturates to int8; ``AscendAntiQuant`` is
``(x + offset) * scale``. The host ops fold a Caffe BatchNorm (mean and variance divided by the
moving-average factor, ``1 / sqrt(variance + epsilon)``) or Scale layer into a convolution's
filter (per output channel, axis 0) and bias.

Types with no kernel, and why, are in :data:`NOT_EVALUATED`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..types import DataType
from ._core import Ctx, kernel

__all__ = ["NOT_EVALUATED"]

NOT_EVALUATED: dict[str, str] = {
    "PlaceHolder": "its value is produced in another graph partition",
    "RequantHostCpuOp": "GE's host kernels that fold quantization scales are not public",
    "QuantWeightRollBack": "GE's host kernels that fold quantization scales are not public",
    "QuantBiasRollBack": "GE's host kernels that fold quantization scales are not public",
    "QuantBiasOptimization": "GE's host kernels that fold quantization scales are not public",
}
"""Builtin op types :func:`ascendir.evaluate` has no kernel for, with the reason."""

_ROUND = {"Round": np.rint, "Floor": np.floor, "Ceil": np.ceil, "Trunc": np.trunc}


def _scale_values(s: Any) -> np.ndarray:
    """A scale tensor as float32: uint64 scales carry the float32 in their low 32 bits."""
    s = np.asarray(s)
    if s.dtype == np.uint64:
        return (s & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return s.astype(np.float32)


def _per_channel(scale: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """``scale`` shaped to broadcast along ``axis`` of ``x`` (a lone value broadcasts as is)."""
    if scale.size == 1:
        return scale.reshape(())
    if scale.ndim == x.ndim:
        return scale
    shape = [1] * x.ndim
    shape[axis] = scale.size
    return scale.reshape(shape)


def _saturate(y: np.ndarray, dt: np.dtype[Any]) -> np.ndarray:
    if dt.kind in "iu":
        info = np.iinfo(dt)
        y = np.clip(y, info.min, info.max)
    return y.astype(dt)


def _attr_scale(ctx: Ctx) -> float:
    """The ``scale`` attribute, applied twice under ``sqrt_mode``."""
    scale = float(ctx.require("scale"))
    return scale * scale if ctx.flag("sqrt_mode") else scale


def _channel_scaled(ctx: Ctx, x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``x`` times a per-channel scale (channel axis 1), clamped at 0 under ``relu_flag``."""
    y = x.astype(np.float32) * _per_channel(scale, x, 1 if x.ndim > 1 else 0)
    return np.maximum(y, 0) if ctx.flag("relu_flag") else y


@kernel("AscendQuant")
def _quant(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0], np.float32)
    scale = _attr_scale(ctx)
    rnd = _ROUND.get(str(ctx.attr("round_mode", "Round")), np.rint)
    y = rnd(x * scale + float(ctx.require("offset")))
    return _saturate(y, ctx.out_dtype(0, "dst_type", DataType.INT8))


@kernel("AscendDequant")
def _dequant(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    deq = _scale_values(ins[1])
    if ctx.flag("sqrt_mode"):
        deq = deq * deq
    y = _channel_scaled(ctx, np.asarray(ins[0]), deq)
    return y.astype(ctx.out_dtype(0, "dtype", DataType.FLOAT))


@kernel("AscendRequant")
def _requant(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    y = np.rint(_channel_scaled(ctx, np.asarray(ins[0]), _scale_values(ins[1])))
    return _saturate(y, np.dtype(np.int8))


@kernel("AscendAntiQuant")
def _antiquant(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0], np.float32)
    y = (x + float(ctx.require("offset"))) * _attr_scale(ctx)
    return y.astype(ctx.out_dtype(0, "dtype", DataType.FLOAT))


def _bn_factor(ctx: Ctx, ins: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Caffe BatchNorm's (mean, 1 / std) per channel from the host op's inputs."""
    mean = np.asarray(ctx.port(ins, "BNInference_mean"), np.float64).reshape(-1)
    var = np.asarray(ctx.port(ins, "BNInference_variance"), np.float64).reshape(-1)
    momentum = ctx.port(ins, "BNInference_momentum")
    if momentum is not None:
        f = float(np.asarray(momentum).reshape(-1)[0])
        mean, var = (mean / f, var / f) if f != 0 else (mean * 0, var * 0)
    if ctx.flag("need_adding_eps_and_rsqrting", True):
        inv = 1.0 / np.sqrt(var + float(ctx.attr("epsilon", 1e-5)))
    else:
        inv = var
    return mean, inv


def _bias_of(ctx: Ctx, ins: list[Any], n: int) -> np.ndarray:
    b = np.asarray(ctx.port(ins, "Conv_bias"))
    return np.broadcast_to(b.reshape(-1) if b.size > 1 else b.reshape(()), (n,)).astype(
        np.float64)


@kernel("ConvBnFilterHost")
def _bn_filter(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    w = np.asarray(ctx.port(ins, "Conv_filter"))
    _, inv = _bn_factor(ctx, ins)
    return (w * _per_channel(inv, w, 0)).astype(w.dtype)


@kernel("ConvBnBiasHost")
def _bn_bias(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    mean, inv = _bn_factor(ctx, ins)
    dt = np.asarray(ctx.port(ins, "Conv_bias")).dtype
    return ((_bias_of(ctx, ins, mean.size) - mean) * inv).astype(dt)


@kernel("ConvScaleFilterHost")
def _scale_filter(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    w = np.asarray(ctx.port(ins, "Conv_filter"))
    s = np.asarray(ctx.port(ins, "Scale_scale")).reshape(-1)
    return (w * _per_channel(s, w, 0)).astype(w.dtype)


@kernel("ConvScaleBiasHost")
def _scale_bias(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    s = np.asarray(ctx.port(ins, "Scale_scale"), np.float64).reshape(-1)
    t = np.asarray(ctx.port(ins, "Scale_bias"), np.float64).reshape(-1)
    dt = np.asarray(ctx.port(ins, "Conv_bias")).dtype
    return (_bias_of(ctx, ins, s.size) * s + t).astype(dt)


@kernel("End")
def _end(ctx: Ctx, ins: list[Any]) -> list[Any]:  # noqa: ARG001 - sends its input away
    return []
