"""Declarative inference rules for :func:`ascendir.register_op`, executed in Rust.

A rule is a kind plus parameters naming the ports and attributes it reads. Where a
parameter names a value (axes, a shape, a permutation, ...) it may name an input (its
constant value is read from a ``Const`` producer) or an attribute, so one rule serves both
``ReduceSum`` (``axes`` input) and ``ReduceSumD`` (``axes`` attribute)::

    infer = air.infer.reduce()                 # x, axes, keep_dims
    infer = air.infer.broadcast(dtype=air.bool_)
    infer = air.infer.same_as("x")

Unknown dims (``-1``) and unknown rank (``[-2]``) propagate. After a rule runs, GE's default
format rule gives outputs in ND the format of the first non-ND input (``keep_format=True``
turns that off). A Python function ``f(ctx) -> [TensorDesc | (shape, dtype), ...]`` may be
given as ``infer=`` instead of a rule (see :class:`ascendir.ops.InferContext`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import _core
from .types import DataType

__all__ = [
    "Rule",
    "arg_max",
    "batch_matmul",
    "broadcast",
    "caffe_pool",
    "cast",
    "concat",
    "const",
    "conv",
    "conv_backprop_input",
    "data",
    "expand",
    "expand_dims",
    "fill",
    "flash_attention",
    "flatten",
    "fully_connection",
    "gather",
    "global_pool",
    "if_",
    "infer_node",
    "infer_shapes",
    "layer_norm",
    "matmul",
    "none",
    "pack",
    "pad",
    "passthrough",
    "pool",
    "range_",
    "reduce",
    "reshape",
    "same_as",
    "select",
    "shape",
    "size",
    "slice_",
    "slice_axes",
    "split",
    "squeeze",
    "strided_slice",
    "tile",
    "topk",
    "trans_data",
    "transpose",
    "unsqueeze",
    "while_",
]


@dataclass(frozen=True)
class Rule:
    """A declarative inference rule: a kind (see :func:`kinds`) and its parameters."""

    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def spec(self) -> tuple[str, dict[str, Any]]:
        """The ``(kind, params)`` pair handed to the Rust registry."""
        return self.kind, dict(self.params)


def kinds() -> list[str]:
    """Names of every rule kind the Rust engine implements."""
    return list(_core._ops_rule_kinds())


def _dtype_param(dtype: Any) -> str | None:
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return dtype
    return DataType(dtype).name


def _rule(kind: str, dtype: Any = None, keep_format: bool = False, **params: Any) -> Rule:
    p: dict[str, Any] = {k: v for k, v in params.items() if v is not None}
    d = _dtype_param(dtype)
    if d is not None:
        p["dtype"] = d
    if keep_format:
        p["format"] = "keep"
    return Rule(kind, p)


def none() -> Rule:
    """No inference: outputs keep the descs they were created with."""
    return Rule("none")


def same_as(
    input: str | None = None,
    *,
    dtype: Any = None,
    outputs: list[str] | None = None,
    keep_format: bool = False,
) -> Rule:
    """Every output takes the shape (and dtype) of ``input`` (default: the first input).

    ``dtype`` fixes the output dtype (a :class:`DataType`, ``"input:<name>"`` or
    ``"attr:<name>"``). ``outputs=[a, b, ...]`` gives output *k* the shape and dtype of
    input ``a``, ``b``, ... instead.
    """
    return _rule("same_as", dtype, keep_format, input=input, outputs=outputs)


def broadcast(*inputs: str, dtype: Any = None, keep_format: bool = False) -> Rule:
    """Numpy broadcasting of ``inputs`` (default: every set input, dynamic groups included)."""
    return _rule("broadcast", dtype, keep_format, inputs=list(inputs) if inputs else None)


def cast(attr: str = "dst_type") -> Rule:
    """The shape of ``x`` and the dtype held by attribute ``attr``."""
    return _rule("cast", attr=attr)


def select(*, broadcast_condition: bool = False) -> Rule:
    """``condition ? x1 : x2``: broadcast of ``x1`` and ``x2`` (and the condition, V2 style)."""
    return _rule("select", broadcast_condition=1 if broadcast_condition else 0)


def passthrough(skip: int = 0) -> Rule:
    """Output *i* is input *i + skip* (``Identity``, ``IdentityN``; ``Loop`` with skip 2)."""
    return Rule("passthrough", {"skip": skip} if skip else {})


def data() -> Rule:
    """``Data``: the output copies the input desc."""
    return Rule("data")


def const() -> Rule:
    """``Const``: the output describes the ``value`` tensor."""
    return Rule("const")


def reduce(
    x: str = "x", axes: str = "axes", keep_dims: str = "keep_dims", *, dtype: Any = None
) -> Rule:
    """Reduce ``x`` over ``axes`` (input or attribute); empty axes reduce everything."""
    return _rule("reduce", dtype, input=x, axes=axes, keep_dims=keep_dims)


def arg_max(axis: str = "dimension", *, dtype: Any = None) -> Rule:
    """Remove the ``axis`` dim; dtype from the ``dtype`` attribute (INT32 by default)."""
    return _rule("arg_max", dtype, axis=axis)


def topk(k: str = "k") -> Rule:
    """``values`` / ``indices`` with the ``dim`` attribute's axis replaced by ``k``."""
    return _rule("topk", k=k)


def layer_norm() -> Rule:
    """``y`` like ``x``; statistics with the dims from ``begin_norm_axis`` set to 1."""
    return Rule("layer_norm")


def flash_attention() -> Rule:
    """GE's ``FlashAttentionScore``: ``attention_out`` like ``query`` (the value's head size);
    float32 ``softmax_max`` / ``softmax_sum`` of ``[B, N, Sq, 8]``; ``softmax_out`` ``[0]``."""
    return Rule("flash_attention")


def matmul(
    a: str = "x1",
    b: str = "x2",
    transpose_a: str = "transpose_x1",
    transpose_b: str = "transpose_x2",
    *,
    dtype: Any = None,
) -> Rule:
    """2-D ``a @ b`` with transposes given by the named bool attributes."""
    return _rule("matmul", dtype, a=a, b=b, transpose_a=transpose_a, transpose_b=transpose_b)


def batch_matmul(
    a: str = "x1",
    b: str = "x2",
    transpose_a: str = "adj_x1",
    transpose_b: str = "adj_x2",
    *,
    dtype: Any = None,
) -> Rule:
    """Batched ``a @ b``: leading dims broadcast, 1-D operands promoted as numpy does."""
    return _rule("batch_matmul", dtype, a=a, b=b, transpose_a=transpose_a, transpose_b=transpose_b)


def fully_connection() -> Rule:
    """``FullyConnection``: ``x[:axis] + [num_output]`` (4-D NCHW gives ``[N, C, 1, 1]``)."""
    return Rule("fully_connection")


def conv(x: str = "x", filter: str = "filter", *, dtype: Any = None) -> Rule:
    """2-D convolution: ``strides``, ``pads``, ``dilations``, ``groups``, ``data_format``."""
    return _rule("conv", dtype, x=x, filter=filter)


def conv_backprop_input(input_size: str = "input_size", out_backprop: str = "out_backprop") -> Rule:
    """The output shape is the value of ``input_size`` (input or attribute)."""
    return _rule("conv_backprop_input", input_size=input_size, x=out_backprop)


def pool() -> Rule:
    """TF-style pooling: ``ksize``, ``strides``, ``padding`` (SAME/VALID/CALCULATED + pads)."""
    return Rule("pool")


def caffe_pool() -> Rule:
    """Caffe-style ``Pooling``: ``window``, ``stride``, ``pad``, ``ceil_mode``, global."""
    return Rule("caffe_pool")


def global_pool() -> Rule:
    """``GlobalAveragePool`` / ``GlobalMaxPool``: ``x[:2]`` followed by 1s."""
    return Rule("global_pool")


def slice_axes() -> Rule:
    """ONNX-style slicing: ``begin``, ``end`` and optional ``axes`` / ``strides``."""
    return Rule("slice_axes")


def reshape(x: str = "x", shape: str = "shape") -> Rule:
    """Reshape to ``shape`` (0 copies a dim, -1 inferred; ``axis`` / ``num_axes`` attrs)."""
    return _rule("reshape", x=x, shape=shape)


def transpose(perm: str = "perm") -> Rule:
    """``out[i] = x[perm[i]]``."""
    return _rule("transpose", perm=perm)


def squeeze(axes: str = "axis") -> Rule:
    """Remove the listed size-1 dims (all of them when the list is empty)."""
    return _rule("squeeze", axes=axes)


def unsqueeze(axes: str = "axes") -> Rule:
    """Insert size-1 dims at ``axes`` (positions in the output)."""
    return _rule("unsqueeze", axes=axes)


def expand_dims(axis: str = "axis") -> Rule:
    """Insert one size-1 dim at ``axis``."""
    return _rule("expand_dims", axis=axis)


def flatten() -> Rule:
    """``[prod(x[:axis]), prod(x[axis:])]``."""
    return Rule("flatten")


def concat(inputs: str = "x", axis: str = "concat_dim") -> Rule:
    """Join the dynamic input group ``inputs`` along ``axis``."""
    return _rule("concat", inputs=inputs, axis=axis)


def pack(inputs: str = "x") -> Rule:
    """Stack the dynamic input group ``inputs`` (one shape) along a new dim at ``axis``."""
    return _rule("pack", inputs=inputs)


def split(axis: str = "split_dim", size_splits: str | None = None) -> Rule:
    """Cut ``x`` along ``axis`` into the op's outputs, equally or by ``size_splits``."""
    return _rule("split", axis=axis, size_splits=size_splits)


def gather(axis: str | None = "axis") -> Rule:
    """``x[:axis] + indices[batch_dims:] + x[axis+1:]``."""
    return _rule("gather", axis=axis)


def slice_(offsets: str = "offsets", size: str = "size") -> Rule:
    """``Slice``: the ``size`` value (-1 = to the end)."""
    return _rule("slice", offsets=offsets, size=size)


def strided_slice() -> Rule:
    """TF ``StridedSlice`` with begin/end/ellipsis/new-axis/shrink masks."""
    return Rule("strided_slice")


def tile(multiples: str = "multiples") -> Rule:
    """``x[i] * multiples[i]``."""
    return _rule("tile", multiples=multiples)


def expand(shape: str = "shape") -> Rule:
    """Broadcast of ``x`` with the value of ``shape``."""
    return _rule("expand", shape=shape)


def pad(paddings: str = "paddings") -> Rule:
    """``x[i] + paddings[i][0] + paddings[i][1]``."""
    return _rule("pad", paddings=paddings)


def shape() -> Rule:
    """``Shape``: a 1-D tensor of the input rank (dtype attribute, INT32 default)."""
    return Rule("shape")


def size() -> Rule:
    """``Size``: a scalar."""
    return Rule("size")


def fill() -> Rule:
    """``Fill``: shape from the ``dims`` value, dtype of ``value``."""
    return Rule("fill")


def range_() -> Rule:
    """``Range``: ``ceil((limit - start) / delta)`` elements when constant."""
    return Rule("range")


def trans_data() -> Rule:
    """``TransData`` between a device format and its origin format."""
    return Rule("trans_data")


def if_() -> Rule:
    """``If`` / ``Case`` / ``PartitionedCall``: outputs from the subgraphs' NetOutputs."""
    return Rule("if")


def while_() -> Rule:
    """``While``: subgraphs inferred from the inputs; outputs are the inputs."""
    return Rule("while")


def infer_shapes(graph: Any) -> dict[str, int]:
    """Run inference over ``graph`` (same as ``graph.infer_shapes()``)."""
    result: dict[str, int] = graph.infer_shapes()
    return result


def infer_node(node: Any) -> list[tuple[tuple[int, ...], DataType]] | None:
    """Infer ``node``'s outputs from its current input descs without changing the graph.

    Returns ``[(shape, dtype), ...]`` (one per output the rule produces), or ``None`` when the
    node's type is not registered. Raises :class:`ascendir.InferenceError` when the rule fails.
    """
    out = _core._ops_infer_node(node)
    if out is None:
        return None
    return [(tuple(s), d) for s, d in out]
