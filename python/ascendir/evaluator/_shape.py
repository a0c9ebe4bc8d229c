"""Shape and indexing kernels: Reshape, Transpose(D), Squeeze / Unsqueeze (and V3),
ExpandDims, Flatten, Concat family, Split family, Gather family, StridedSlice(D/V2),
Slice(D), Tile(D), Expand / BroadcastTo, Pad / PadD / PadV3, Shape, Size, Fill, Range,
GatherElements.

Index-valued inputs (shape, perm, axes, begin, ...) are read as int64 vectors; the
attribute forms (``...D``) read the attribute of the same name.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..types import DataType
from ._core import Ctx, kernel
from ._reduce import norm_axes

__all__ = ["ints_of"]


def ints_of(v: Any) -> list[int]:
    """An index tensor (or list) as a list of Python ints."""
    return [int(a) for a in np.asarray(v).reshape(-1).tolist()]


def _input_or_attr(ctx: Ctx, ins: list[Any], name: str) -> list[int]:
    if ctx.has_port(name):
        v = ctx.port(ins, name)
        if v is None:
            raise ctx.error(f"input '{name}' is not connected")
        return ints_of(v)
    return ctx.ints(name)


@kernel("Reshape")
def _reshape(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    target = ints_of(ins[1])
    rank = x.ndim
    axis = int(ctx.attr("axis", 0))
    axis = axis + rank + 1 if axis < 0 else axis
    num_axes = int(ctx.attr("num_axes", -1))
    end = rank if num_axes < 0 else min(axis + num_axes, rank)
    head, mid, tail = x.shape[:axis], x.shape[axis:end], x.shape[end:]
    allow_zero = ctx.flag("allowzero")
    new = []
    for i, d in enumerate(target):
        if d == 0 and not allow_zero:
            if i >= len(mid):
                raise ctx.error(f"shape {target} copies dim {i}, but {list(x.shape)} has none")
            new.append(mid[i])
        else:
            new.append(d)
    return x.reshape(tuple(head) + tuple(new) + tuple(tail))


@kernel("Transpose", "TransposeD")
def _transpose(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    perm = _input_or_attr(ctx, ins, "perm")
    return np.transpose(x, perm) if perm else np.transpose(x)


def _squeeze(ctx: Ctx, x: np.ndarray, axes: list[int]) -> np.ndarray:
    if not axes:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    ax = norm_axes(ctx, axes, x.ndim)
    for a in ax:
        if x.shape[a] != 1:
            raise ctx.error(f"cannot squeeze dim {a} of {list(x.shape)}")
    return np.squeeze(x, axis=ax)


def _unsqueeze(ctx: Ctx, x: np.ndarray, axes: list[int]) -> np.ndarray:
    out_rank = x.ndim + len(axes)
    ax = norm_axes(ctx, axes, out_rank)
    if len(ax) != len(axes):
        raise ctx.error(f"axes {axes} repeat an axis")
    shape = list(x.shape)
    for a in ax:
        shape.insert(a, 1)
    return x.reshape(shape)


@kernel("Squeeze")
def _squeeze_k(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return _squeeze(ctx, np.asarray(ins[0]), ctx.ints("axis", ctx.ints("axes", [])))


@kernel("SqueezeV3")
def _squeeze_v3(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    axes = ctx.port(ins, "axes")
    return _squeeze(ctx, np.asarray(ins[0]), [] if axes is None else ints_of(axes))


@kernel("Unsqueeze")
def _unsqueeze_k(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return _unsqueeze(ctx, np.asarray(ins[0]), ctx.ints("axes", []))


@kernel("UnsqueezeV3")
def _unsqueeze_v3(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    axes = ctx.port(ins, "axes")
    return _unsqueeze(ctx, np.asarray(ins[0]), [] if axes is None else ints_of(axes))


@kernel("ExpandDims")
def _expand_dims(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    axis = ints_of(ins[1])
    if len(axis) != 1:
        raise ctx.error(f"axis must be one value, got {axis}")
    return _unsqueeze(ctx, np.asarray(ins[0]), axis)


@kernel("Flatten")
def _flatten(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    axis = int(ctx.attr("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    if not 0 <= axis <= x.ndim:
        raise ctx.error(f"axis {axis} is out of range for rank {x.ndim}")
    lead = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(lead, int(np.prod(x.shape[axis:], dtype=np.int64)))


@kernel("ConcatV2", "ConcatV2D", "Concat", "ConcatD")
def _concat(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    xs = [np.asarray(v) for v in ctx.group(ins, "x")]
    if not xs:
        raise ctx.error("has no inputs to concatenate")
    dim = _input_or_attr(ctx, ins, "concat_dim")
    (axis,) = norm_axes(ctx, dim[:1], xs[0].ndim)
    return np.concatenate(xs, axis=axis)


@kernel("Pack")
def _pack(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    xs = [np.asarray(v) for v in ctx.group(ins, "x")]
    if not xs:
        raise ctx.error("has no inputs to pack")
    if any(x.shape != xs[0].shape for x in xs):
        raise ctx.error(f"inputs of different shapes {[list(x.shape) for x in xs]}")
    (axis,) = norm_axes(ctx, [int(ctx.attr("axis", 0))], xs[0].ndim + 1)
    return np.stack(xs, axis=axis)


def _split(ctx: Ctx, x: np.ndarray, dim: int, sizes: list[int] | None) -> list[np.ndarray]:
    (axis,) = norm_axes(ctx, [dim], x.ndim)
    n = ctx.num_outputs
    total = x.shape[axis]
    if sizes is None:
        if n == 0 or total % n:
            raise ctx.error(f"dim {axis} of {list(x.shape)} does not split into {n} equal parts")
        sizes = [total // n] * n
    else:
        sizes = list(sizes)
        if sizes.count(-1) > 1:
            raise ctx.error(f"size_splits {sizes} have more than one -1")
        if -1 in sizes:
            sizes[sizes.index(-1)] = total - sum(s for s in sizes if s != -1)
        if sum(sizes) != total or any(s < 0 for s in sizes):
            raise ctx.error(f"size_splits {sizes} do not add up to dim {axis} of "
                            f"{list(x.shape)}")
    cuts = np.cumsum(sizes)[:-1].tolist()
    return list(np.split(x, cuts, axis=axis))


@kernel("Split", "SplitD")
def _split_k(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ctx.port(ins, "x"))
    dim = _input_or_attr(ctx, ins, "split_dim")[0]
    return _split(ctx, x, dim, None)


@kernel("SplitV", "SplitVD")
def _split_v(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    x = np.asarray(ctx.port(ins, "x"))
    dim = _input_or_attr(ctx, ins, "split_dim")[0]
    return _split(ctx, x, dim, _input_or_attr(ctx, ins, "size_splits"))


def gather(ctx: Ctx, x: np.ndarray, idx: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """``x`` gathered along ``axis`` at ``idx`` (negative indices wrap), with batch dims."""
    (axis,) = norm_axes(ctx, [axis], x.ndim)
    idx = np.asarray(idx).astype(np.int64)
    n = x.shape[axis]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ctx.error(f"index out of range [-{n}, {n}) for dim {axis} of {list(x.shape)}")
    idx = np.where(idx < 0, idx + n, idx)
    bd = batch_dims + idx.ndim if batch_dims < 0 else batch_dims
    if bd == 0:
        return np.take(x, idx, axis=axis)
    if bd > axis or bd > idx.ndim:
        raise ctx.error(f"batch_dims {batch_dims} exceeds the axis {axis} or the indices")
    lead = x.shape[:bd]
    xb = x.reshape((-1,) + x.shape[bd:])
    ib = idx.reshape((-1,) + idx.shape[bd:])
    parts = [np.take(xb[i], ib[i], axis=axis - bd) for i in range(xb.shape[0])]
    out = np.stack(parts) if parts else np.zeros((0,), x.dtype)
    return out.reshape(tuple(lead) + out.shape[1:])


@kernel("GatherV2")
def _gather_v2(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return gather(ctx, np.asarray(ins[0]), np.asarray(ins[1]), ints_of(ins[2])[0],
                  int(ctx.attr("batch_dims", 0)))


@kernel("GatherV2D")
def _gather_v2d(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return gather(ctx, np.asarray(ins[0]), np.asarray(ins[1]), int(ctx.attr("axis", 0)),
                  int(ctx.attr("batch_dims", 0)))


@kernel("Gather")
def _gather(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return gather(ctx, np.asarray(ins[0]), np.asarray(ins[1]), 0, int(ctx.attr("batch_dims", 0)))


@kernel("GatherElements")
def _gather_elements(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, idx = np.asarray(ins[0]), np.asarray(ins[1]).astype(np.int64)
    (axis,) = norm_axes(ctx, [int(ctx.attr("dim", 0))], x.ndim)
    n = x.shape[axis]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ctx.error(f"index out of range [-{n}, {n}) for dim {axis}")
    return np.take_along_axis(x, np.where(idx < 0, idx + n, idx), axis=axis)


@kernel("ScatterElements")
def _scatter_elements(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x, idx, upd = np.asarray(ins[0]), np.asarray(ins[1]).astype(np.int64), np.asarray(ins[2])
    (axis,) = norm_axes(ctx, [int(ctx.attr("axis", 0))], x.ndim)
    n = x.shape[axis]
    if idx.shape != upd.shape or idx.ndim != x.ndim:
        raise ctx.error(f"indices {list(idx.shape)} and updates {list(upd.shape)} do not "
                        f"match data of rank {x.ndim}")
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ctx.error(f"index out of range [-{n}, {n}) for dim {axis}")
    where: list[np.ndarray] = list(np.indices(idx.shape, sparse=True))
    where[axis] = np.where(idx < 0, idx + n, idx)
    y = x.copy()
    reduction = str(ctx.attr("reduction", "none"))
    if reduction == "none":
        y[tuple(where)] = upd
    elif reduction == "add":
        np.add.at(y, tuple(where), upd.astype(y.dtype))
    elif reduction == "mul":
        np.multiply.at(y, tuple(where), upd.astype(y.dtype))
    else:
        raise ctx.error(f"reduction '{reduction}' is not none, add or mul")
    return y


def _bit(m: int, i: int) -> bool:
    return bool((m >> i) & 1)


def strided_slice(ctx: Ctx, x: np.ndarray, begin: list[int], end: list[int],
                  strides: list[int]) -> np.ndarray:
    """TF's StridedSlice with GE's masks (begin, end, ellipsis, new_axis, shrink_axis)."""
    n = len(begin)
    if len(end) != n or len(strides) != n:
        raise ctx.error(f"begin {begin}, end {end} and strides {strides} differ in length")
    if 0 in strides:
        raise ctx.error(f"strides {strides} contain 0")
    bm, em = int(ctx.attr("begin_mask", 0)), int(ctx.attr("end_mask", 0))
    elm, nam = int(ctx.attr("ellipsis_mask", 0)), int(ctx.attr("new_axis_mask", 0))
    sam = int(ctx.attr("shrink_axis_mask", 0))
    specified = sum(1 for i in range(n) if not _bit(nam, i) and not _bit(elm, i))
    index: list[Any] = []
    dim = 0
    for i in range(n):
        if _bit(elm, i):
            cover = max(x.ndim - specified, 0)
            index.extend([slice(None)] * cover)
            dim += cover
            continue
        if _bit(nam, i):
            index.append(None)
            continue
        if dim >= x.ndim:
            raise ctx.error(f"the slice spec has more dims than the input {list(x.shape)}")
        if _bit(sam, i):
            b = begin[i] + x.shape[dim] if begin[i] < 0 else begin[i]
            if not 0 <= b < x.shape[dim]:
                raise ctx.error(f"shrink index {begin[i]} is out of range for dim {dim}")
            index.append(b)
        else:
            b = None if _bit(bm, i) else begin[i]
            e = None if _bit(em, i) else end[i]
            index.append(slice(b, e, strides[i]))
        dim += 1
    return x[tuple(index)]


@kernel("StridedSlice", "StridedSliceD")
def _strided_slice(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    begin = _input_or_attr(ctx, ins, "begin")
    end = _input_or_attr(ctx, ins, "end")
    strides = _input_or_attr(ctx, ins, "strides")
    return strided_slice(ctx, x, begin, end, strides)


@kernel("StridedSliceV2")
def _strided_slice_v2(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    # ONNX Slice: begin/end per listed axis (all axes when absent), clamped.
    x = np.asarray(ins[0])
    begin = ints_of(ctx.port(ins, "begin"))
    end = ints_of(ctx.port(ins, "end"))
    a = ctx.port(ins, "axes")
    st = ctx.port(ins, "strides")
    axes = list(range(len(begin))) if a is None else ints_of(a)
    steps = [1] * len(begin) if st is None else ints_of(st)
    if any(int(ctx.attr(m, 0)) for m in ("ellipsis_mask", "new_axis_mask",
                                          "shrink_axis_mask")):
        return strided_slice(ctx, x, begin, end, steps)
    index = [slice(None)] * x.ndim
    bm, em = int(ctx.attr("begin_mask", 0)), int(ctx.attr("end_mask", 0))
    for i, ax in enumerate(axes):
        (d,) = norm_axes(ctx, [ax], x.ndim)
        if steps[i] == 0:
            raise ctx.error("a slice step is 0")
        b = None if _bit(bm, i) else begin[i]
        e = None if _bit(em, i) else end[i]
        size = x.shape[d]
        # int64 extremes (INT_MAX / INT_MIN as "to the end") clamp like python slices.
        if e is not None:
            e = max(min(e, size), -size - 1)
        if b is not None:
            b = max(min(b, size), -size - 1)
        if steps[i] < 0 and e is not None and e < -size:
            e = None
        index[d] = slice(b, e, steps[i])
    return x[tuple(index)]


@kernel("Slice", "SliceD")
def _slice(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    off = _input_or_attr(ctx, ins, "offsets")
    size = _input_or_attr(ctx, ins, "size")
    if len(off) != x.ndim or len(size) != x.ndim:
        raise ctx.error(f"offsets {off} and size {size} must have {x.ndim} values")
    index = []
    for i in range(x.ndim):
        e = x.shape[i] if size[i] == -1 else off[i] + size[i]
        if off[i] < 0 or e > x.shape[i] or e < off[i]:
            raise ctx.error(f"slice [{off[i]}, {e}) is out of range for dim {i} of "
                            f"{list(x.shape)}")
        index.append(slice(off[i], e))
    return x[tuple(index)]


@kernel("Tile", "TileD")
def _tile(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    m = _input_or_attr(ctx, ins, "multiples")
    if len(m) < x.ndim:
        raise ctx.error(f"multiples {m} are shorter than the rank of {list(x.shape)}")
    return np.tile(x, m)


@kernel("Expand", "BroadcastTo")
def _expand(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    shape = ints_of(ins[1])
    out = np.broadcast_shapes(x.shape, tuple(shape))
    return np.broadcast_to(x, out)


def _pad(ctx: Ctx, x: np.ndarray, pairs: list[tuple[int, int]], mode: str,
         value: Any) -> np.ndarray:
    if any(b < 0 or e < 0 for b, e in pairs):
        # Negative pads crop.
        index = tuple(slice(max(-b, 0), x.shape[i] - max(-e, 0)) for i, (b, e) in
                      enumerate(pairs))
        x = x[index]
        pairs = [(max(b, 0), max(e, 0)) for b, e in pairs]
    mode = mode.lower()
    if mode == "constant":
        v = 0 if value is None else np.asarray(value).reshape(-1)[0]
        return np.pad(x, pairs, mode="constant", constant_values=v)
    modes: dict[str, Literal["reflect", "edge", "symmetric", "wrap"]] = {
        "reflect": "reflect", "edge": "edge", "symmetric": "symmetric", "wrap": "wrap"}
    np_mode = modes.get(mode)
    if np_mode is None:
        raise ctx.error(f"pad mode '{mode}' is not constant, reflect, edge, symmetric or wrap")
    return np.pad(x, pairs, mode=np_mode)


@kernel("Pad")
def _pad_k(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    p = np.asarray(ins[1]).astype(np.int64).reshape(-1, 2)
    return _pad(ctx, x, [(int(b), int(e)) for b, e in p], "constant", None)


@kernel("PadD")
def _pad_d(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    p = np.asarray(ctx.require("paddings"), dtype=np.int64).reshape(-1, 2)
    return _pad(ctx, x, [(int(b), int(e)) for b, e in p], "constant", None)


@kernel("PadV3")
def _pad_v3(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    p = ints_of(ctx.port(ins, "paddings"))
    axes_v = ctx.port(ins, "axes")
    axes = list(range(x.ndim)) if axes_v is None else [
        a + x.ndim if a < 0 else a for a in ints_of(axes_v)]
    if any(not 0 <= a < x.ndim for a in axes):
        raise ctx.error(f"pad axes {ints_of(axes_v)} are out of range for rank {x.ndim}")
    n = len(axes)
    if len(p) != 2 * n:
        raise ctx.error(f"paddings {p} must have 2 values per padded axis ({n})")
    if ctx.flag("paddings_contiguous", True):
        pairs_ax = [(p[2 * i], p[2 * i + 1]) for i in range(n)]
    else:
        pairs_ax = [(p[i], p[i + n]) for i in range(n)]
    pairs = [(0, 0)] * x.ndim
    for a, pr in zip(axes, pairs_ax, strict=True):
        pairs[a] = pr
    return _pad(ctx, x, pairs, str(ctx.attr("mode", "constant")),
                ctx.port(ins, "constant_values"))


@kernel("Shape")
def _shape(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    shape = list(np.shape(ins[0]))
    r = len(shape)
    start = int(ctx.attr("start", 0))
    end = ctx.attr("end")
    start = min(max(start + r if start < 0 else start, 0), r)
    stop = r if end is None else int(end)
    stop = min(max(stop + r if stop < 0 else stop, 0), r)
    return np.asarray(shape[start:stop], dtype=ctx.out_dtype(0, "dtype", DataType.INT32))


@kernel("Size")
def _size(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    return np.asarray(np.size(ins[0]), dtype=ctx.out_dtype(0, "dtype", DataType.INT32))


@kernel("Fill")
def _fill(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    dims = ints_of(ctx.port(ins, "dims"))
    value = np.asarray(ctx.port(ins, "value"))
    if value.size != 1:
        raise ctx.error(f"value must have one element, got shape {list(value.shape)}")
    return np.full(dims, value.reshape(()), dtype=value.dtype)


@kernel("Range")
def _range(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    start, limit, delta = (np.asarray(v).reshape(()) for v in ins[:3])
    if delta == 0:
        raise ctx.error("delta is 0")
    dt = start.dtype
    n = int(max(np.ceil((limit.astype(np.float64) - start) / delta), 0))
    return (start + np.arange(n, dtype=np.float64 if dt.kind == "f" else np.int64)
            * delta).astype(dt)
