"""Element-wise kernels: unary math and activations, broadcasting binary ops, comparisons,
logical ops, AddN / Eltwise, BiasAdd, Select, ClipByValue, PRelu.

Results keep the first input's dtype (the library's ``same_as`` / ``broadcast`` rules);
comparisons and the ``Is*`` predicates give bool.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import Ctx, kernel

__all__: list[str] = []

_erf_scalar = np.vectorize(math.erf, otypes=[np.float64])



def _floating(dt: np.dtype) -> bool:
    """Whether ``dt`` is a floating type, the ml_dtypes ones (bfloat16, float8 ..., kind "V")
    included."""
    return dt.kind in "fc" or (dt.kind == "V" and dt.name.startswith(("bfloat", "float")))

def erf(x: np.ndarray) -> np.ndarray:
    """The error function, element-wise (exact to double precision)."""
    if x.size == 0:
        return x.astype(np.float64)
    return np.asarray(_erf_scalar(x))


def _same(x: np.ndarray, y: Any) -> np.ndarray:
    y = np.asarray(y)
    return y if y.dtype == x.dtype else y.astype(x.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(np.zeros((), x.dtype), x)


def _gelu(ctx: Ctx, x: np.ndarray) -> np.ndarray:
    # GE's Gelu is the tanh approximation; ``approximate="none"`` (kept from ONNX) is the
    # exact erf form.
    x64 = x.astype(np.float64)
    if str(ctx.attr("approximate", "tanh")) == "none":
        return 0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)))
    return 0.5 * x64 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)))


def _round(x: np.ndarray) -> np.ndarray:
    return np.rint(x) if _floating(x.dtype) else x


def _selu(ctx: Ctx, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 1.6732632423543772))
    gamma = float(ctx.attr("gamma", ctx.attr("scale", 1.0507009873554805)))
    return gamma * np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1))


def _hard_max(ctx: Ctx, x: np.ndarray) -> np.ndarray:
    """1 at the first maximum along ``axis``, 0 elsewhere."""
    if x.ndim == 0:
        return np.ones_like(x)
    axis = int(ctx.attr("axis", -1))
    if not -x.ndim <= axis < x.ndim:
        raise ctx.error(f"axis {axis} is out of range for rank {x.ndim}")
    y = np.zeros_like(x)
    if x.size:
        idx = np.expand_dims(np.argmax(x, axis=axis), axis)
        np.put_along_axis(y, idx, 1, axis=axis)
    return y


def _hard_sigmoid(ctx: Ctx, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 1.0 / 6.0))
    beta = float(ctx.attr("beta", 0.5))
    return np.clip(alpha * x + beta, 0, 1)


def _is_inf(ctx: Ctx, x: np.ndarray) -> np.ndarray:
    pos = bool(ctx.attr("detect_positive", 1))
    neg = bool(ctx.attr("detect_negative", 1))
    if x.dtype.kind != "f":
        return np.zeros(x.shape, bool)
    return (np.isposinf(x) & pos) | (np.isneginf(x) & neg)


_UNARY: dict[str, Callable[[np.ndarray], Any]] = {
    "Abs": np.abs,
    "Neg": np.negative,
    "Exp": np.exp,
    "Log": np.log,
    "Sqrt": np.sqrt,
    "Rsqrt": lambda x: 1.0 / np.sqrt(x),
    "Reciprocal": lambda x: np.reciprocal(x) if _floating(x.dtype) else 1 // x,
    "Tanh": np.tanh,
    "Sigmoid": _sigmoid,
    "Relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "Relu6": lambda x: np.clip(x, 0, 6),
    "Erf": erf,
    "Sign": np.sign,
    "Square": np.square,
    "Floor": lambda x: np.floor(x) if _floating(x.dtype) else x,
    "Ceil": lambda x: np.ceil(x) if _floating(x.dtype) else x,
    "Round": _round,
    "Sin": np.sin,
    "Cos": np.cos,
    "Tan": np.tan,
    "Sinh": np.sinh,
    "Cosh": np.cosh,
    "Asin": np.arcsin,
    "Acos": np.arccos,
    "Atan": np.arctan,
    "Asinh": np.arcsinh,
    "Acosh": np.arccosh,
    "Atanh": np.arctanh,
    "Log1p": np.log1p,
    "Expm1": np.expm1,
    "Softplus": _softplus,
    "Softsign": lambda x: x / (1 + np.abs(x)),
    "HardSwish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "Mish": lambda x: x * np.tanh(_softplus(x)),
    "ZerosLike": np.zeros_like,
    "OnesLike": np.ones_like,
    "StopGradient": lambda x: x,
    "Snapshot": lambda x: x,
    "Identity": lambda x: x,
    "TensorMove": lambda x: x,
    "Invert": lambda x: np.invert(x),
}

_PREDICATE: dict[str, Callable[[np.ndarray], Any]] = {
    "IsNan": lambda x: np.isnan(x) if _floating(x.dtype) else np.zeros(x.shape, bool),
    "IsFinite": lambda x: np.isfinite(x) if _floating(x.dtype) else np.ones(x.shape, bool),
    "LogicalNot": np.logical_not,
}

_UNARY_ATTR: dict[str, Callable[[Ctx, np.ndarray], Any]] = {
    "Gelu": _gelu,
    "LeakyRelu": lambda c, x: np.where(x >= 0, x, x * float(c.attr("negative_slope", 0.0))),
    "Elu": lambda c, x: np.where(x > 0, x, float(c.attr("alpha", 1.0))
                                 * (np.exp(np.minimum(x, 0)) - 1)),
    "Celu": lambda c, x: np.maximum(x, 0) + np.minimum(
        0, float(c.attr("alpha", 1.0)) * (np.exp(x / float(c.attr("alpha", 1.0))) - 1)),
    "Selu": _selu,
    "HardSigmoid": _hard_sigmoid,
    "Swish": lambda c, x: x * _sigmoid(float(c.attr("scale", 1.0)) * x),
    "HardMax": _hard_max,
    "HardShrink": lambda c, x: np.where(np.abs(x) > float(c.attr("lambd", 0.5)), x, 0),
    "SoftShrink": lambda c, x: np.where(
        x > float(c.attr("lambd", 0.5)), x - float(c.attr("lambd", 0.5)),
        np.where(x < -float(c.attr("lambd", 0.5)), x + float(c.attr("lambd", 0.5)), 0)),
    "ThresholdedRelu": lambda c, x: np.where(x > float(c.attr("alpha", 1.0)), x, 0),
}


def _unary_kernel(fn: Callable[[np.ndarray], Any]) -> Any:
    def run(ctx: Ctx, ins: list[Any]) -> np.ndarray:
        x = np.asarray(ins[0])
        with np.errstate(all="ignore"):
            return _same(x, fn(x))

    return run


def _attr_kernel(fn: Callable[[Ctx, np.ndarray], Any]) -> Any:
    def run(ctx: Ctx, ins: list[Any]) -> np.ndarray:
        x = np.asarray(ins[0])
        # bfloat16 (an ml_dtypes type) is computed in float32 and rounded once, as ONNX's
        # reference does: ml_dtypes >= 0.7 rounds every intermediate step to bfloat16.
        wide = x.astype(np.float32) if x.dtype.name == "bfloat16" else x
        with np.errstate(all="ignore"):
            return _same(x, fn(ctx, wide))

    return run


def _predicate_kernel(fn: Callable[[np.ndarray], Any]) -> Any:
    def run(ctx: Ctx, ins: list[Any]) -> np.ndarray:
        return np.asarray(fn(np.asarray(ins[0])), dtype=bool)

    return run


for _name, _fn in _UNARY.items():
    kernel(_name)(_unary_kernel(_fn))
for _name, _afn in _UNARY_ATTR.items():
    kernel(_name)(_attr_kernel(_afn))
for _name, _pfn in _PREDICATE.items():
    kernel(_name)(_predicate_kernel(_pfn))


@kernel("IsInf")
def _isinf(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return _is_inf(ctx, np.asarray(ins[0]))


# ---------------------------------------------------------------- binary


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _floating(a.dtype):
        return a / b
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return q + fix


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _floating(a.dtype):
        return np.floor(a / b)
    return np.floor_divide(a, b)


def _mod(ctx: Ctx, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # GE's Mod is C's (sign of the dividend); ONNX's ``fmod=0`` (kept) is Python's.
    if ctx.attr("fmod") is not None and not bool(ctx.attr("fmod")):
        return np.mod(a, b)
    return np.fmod(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return np.power(a.astype(np.int64), b.astype(np.int64))
    return np.power(a.astype(np.result_type(a, b, np.float32)), b)


def _xdivy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(a == 0, np.zeros((), a.dtype), a / np.where(a == 0, 1, b))


def _xlogy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(a == 0, np.zeros((), a.dtype), a * np.log(np.where(a == 0, 1, b)))


def _div_no_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    z = b == 0
    return np.where(z, np.zeros((), a.dtype), _trunc_div(a, np.where(z, np.ones((), b.dtype), b)))


_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "Add": np.add,
    "AddV2": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "RealDiv": _trunc_div,
    "Div": _trunc_div,
    "DivNoNan": _div_no_nan,
    "FloorDiv": _floor_div,
    "FloorMod": np.mod,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "Pow": _pow,
    "SquaredDifference": lambda a, b: np.square(a - b),
    "Atan2": np.arctan2,
    "Xdivy": _xdivy,
    "Xlogy": _xlogy,
    "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor,
}

_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "Equal": np.equal,
    "NotEqual": np.not_equal,
    "Greater": np.greater,
    "GreaterEqual": np.greater_equal,
    "Less": np.less,
    "LessEqual": np.less_equal,
    "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or,
    "LogicalXor": np.logical_xor,
}


def _binary_kernel(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Any:
    def run(ctx: Ctx, ins: list[Any]) -> np.ndarray:
        a, b = np.asarray(ins[0]), np.asarray(ins[1])
        if a.dtype == np.bool_ and b.dtype == np.bool_ and fn in (np.add, np.multiply):
            return np.asarray(fn(a, b))
        with np.errstate(all="ignore"):
            return _same(a, fn(a, b))

    return run


def _compare_kernel(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Any:
    def run(ctx: Ctx, ins: list[Any]) -> np.ndarray:
        return np.asarray(fn(np.asarray(ins[0]), np.asarray(ins[1])), dtype=bool)

    return run


for _name, _bfn in _BINARY.items():
    kernel(_name)(_binary_kernel(_bfn))
for _name, _cfn in _COMPARE.items():
    kernel(_name)(_compare_kernel(_cfn))


@kernel("Mod")
def _mod_kernel(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    a, b = np.asarray(ins[0]), np.asarray(ins[1])
    with np.errstate(all="ignore"):
        return _same(a, _mod(ctx, a, b))


@kernel("AddN")
def _add_n(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    xs = [np.asarray(v) for v in ins if v is not None]
    if not xs:
        raise ctx.error("has no inputs")
    acc = xs[0]
    for v in xs[1:]:
        acc = acc + v
    return _same(xs[0], acc)


@kernel("Eltwise")
def _eltwise(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    xs = [np.asarray(v) for v in ins if v is not None]
    if not xs:
        raise ctx.error("has no inputs")
    mode = int(ctx.attr("mode", 1))
    if mode == 0:
        acc = xs[0]
        for v in xs[1:]:
            acc = acc * v
    elif mode == 1:
        coeff = [float(c) for c in (ctx.attr("coeff") or [])]
        if coeff and len(coeff) != len(xs):
            raise ctx.error(f"has {len(coeff)} coefficients for {len(xs)} inputs")
        acc = xs[0] * coeff[0] if coeff else xs[0]
        for i, v in enumerate(xs[1:], 1):
            acc = acc + (v * coeff[i] if coeff else v)
    elif mode == 2:
        acc = xs[0]
        for v in xs[1:]:
            acc = np.maximum(acc, v)
    else:
        raise ctx.error(f"mode {mode} is not 0 (product), 1 (sum) or 2 (max)")
    return _same(xs[0], acc)


def channel_axis(ctx: Ctx, ndim: int, i: int = 0, default: str = "NCHW") -> int:
    """The channel axis of input ``i`` (``data_format`` / desc format; last for NHWC)."""
    return ndim - 1 if ctx.layout(i, default) == "NHWC" else min(1, ndim - 1)


@kernel("BiasAdd")
def _bias_add(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, b = np.asarray(ins[0]), np.asarray(ins[1])
    fmt = ctx.layout(0, "NHWC")
    axis = x.ndim - 1 if fmt == "NHWC" or x.ndim < 2 else 1
    if b.ndim != 1 or b.shape[0] != x.shape[axis]:
        raise ctx.error(f"bias {list(b.shape)} does not match dim {axis} of x {list(x.shape)}")
    shape = [1] * x.ndim
    shape[axis] = b.shape[0]
    return _same(x, x + b.reshape(shape))


@kernel("Select")
def _select(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    c, a, b = (np.asarray(v) for v in ins[:3])
    if c.ndim == 1 and a.ndim > 1 and c.shape[0] == a.shape[0] and c.shape != a.shape:
        c = c.reshape((-1,) + (1,) * (a.ndim - 1))
    return _same(a, np.where(c.astype(bool), a, b))


@kernel("SelectV2")
def _select_v2(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    c, a, b = (np.asarray(v) for v in ins[:3])
    return _same(a, np.where(c.astype(bool), a, b))


@kernel("ClipByValue")
def _clip(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    lo = ctx.port(ins, "clip_value_min")
    hi = ctx.port(ins, "clip_value_max")
    y = x
    if lo is not None:
        y = np.maximum(y, np.asarray(lo))
    if hi is not None:
        y = np.minimum(y, np.asarray(hi))
    return _same(x, y)


@kernel("PRelu")
def _prelu(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, w = np.asarray(ins[0]), np.asarray(ins[1])
    # GE: a 1-D weight holds one slope per channel; other shapes broadcast like numpy.
    if w.ndim == 1 and w.size > 1 and x.ndim >= 2:
        axis = channel_axis(ctx, x.ndim)
        if x.shape[axis] == w.size:
            shape = [1] * x.ndim
            shape[axis] = w.size
            w = w.reshape(shape)
    return _same(x, np.where(x >= 0, x, x * w))
