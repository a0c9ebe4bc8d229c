"""The builtin library's shape, assembling and indexing ops (part of :mod:`.builtin`).

Reshapes, transposes, concatenations and splits, gathers and slices, tiles, broadcasts, pads,
``Shape`` / ``Size`` / ``Fill`` / ``Range``; registered by :func:`.builtin.register_all` in its
place in the builtin order.
"""

from __future__ import annotations

from .. import infer as I
from . import (
    Attr,
    DynamicInput,
    DynamicOutput,
    Input,
    OptionalInput,
    Output,
    TensorType,
    TypeVar,
)
from .builtin import _F, _op

__all__ = ["register_shapes"]


def register_shapes() -> None:
    """Register the shape, assembling and indexing ops (Reshape ... Range)."""
    T = dict(T=TypeVar(TensorType.ANY))
    _op(
        "Reshape",
        x=Input("T"),
        shape=Input(TensorType.INDEX),
        y=Output("T"),
        axis=Attr(int, 0),
        num_axes=Attr(int, -1),
        **T,
        infer=I.reshape(),
    )
    _op(
        "Transpose",
        x=Input("T"),
        perm=Input(TensorType.INDEX),
        y=Output("T"),
        **T,
        infer=I.transpose(),
    )
    _op("TransposeD", x=Input("T"), y=Output("T"), perm=Attr(list[int]), **T, infer=I.transpose())
    _op("Squeeze", x=Input("T"), y=Output("T"), axis=Attr(list[int], []), **T, infer=I.squeeze())
    _op(
        "Unsqueeze", x=Input("T"), y=Output("T"), axes=Attr(list[int], []), **T, infer=I.unsqueeze()
    )
    _op(
        "ExpandDims",
        x=Input("T"),
        axis=Input(TensorType.INDEX),
        y=Output("T"),
        **T,
        infer=I.expand_dims(),
    )
    _op("Flatten", x=Input("T"), y=Output("T"), axis=Attr(int, 1), **T, infer=I.flatten())
    _op(
        "ConcatV2",
        x=DynamicInput("T"),
        concat_dim=Input(TensorType.INDEX),
        y=Output("T"),
        N=Attr(int, 1),
        **T,
        infer=I.concat(),
    )
    _op(
        "ConcatV2D",
        x=DynamicInput("T"),
        y=Output("T"),
        concat_dim=Attr(int),
        N=Attr(int, 1),
        **T,
        infer=I.concat(),
    )
    # TensorFlow's stack: the inputs joined along a new dim at `axis`.
    _op(
        "Pack",
        x=DynamicInput("T"),
        y=Output("T"),
        axis=Attr(int, 0),
        N=Attr(int, 1),
        **T,
        infer=I.pack(),
    )
    _op(
        "Concat",
        concat_dim=Input(TensorType.INDEX),
        x=DynamicInput("T"),
        y=Output("T"),
        N=Attr(int, 1),
        **T,
        infer=I.concat(),
    )
    _op(
        "ConcatD",
        x=DynamicInput("T"),
        y=Output("T"),
        concat_dim=Attr(int),
        N=Attr(int, 1),
        **T,
        infer=I.concat(),
    )
    _op(
        "Split",
        split_dim=Input(_F.INT32),
        x=Input("T"),
        y=DynamicOutput("T", count_attr="num_split"),
        num_split=Attr(int),
        **T,
        infer=I.split(),
    )
    _op(
        "SplitD",
        x=Input("T"),
        y=DynamicOutput("T", count_attr="num_split"),
        split_dim=Attr(int),
        num_split=Attr(int),
        **T,
        infer=I.split(),
    )
    _op(
        "SplitV",
        x=Input("T"),
        size_splits=Input(TensorType.INDEX),
        split_dim=Input(_F.INT32),
        y=DynamicOutput("T", count_attr="num_split"),
        num_split=Attr(int),
        **T,
        infer=I.split(size_splits="size_splits"),
    )
    _op(
        "SplitVD",
        x=Input("T"),
        y=DynamicOutput("T", count_attr="num_split"),
        size_splits=Attr(list[int]),
        split_dim=Attr(int),
        num_split=Attr(int),
        **T,
        infer=I.split(size_splits="size_splits"),
    )
    _op(
        "GatherV2",
        x=Input("T"),
        indices=Input(TensorType.INDEX),
        axis=Input(TensorType.INDEX),
        y=Output("T"),
        batch_dims=Attr(int, 0),
        **T,
        infer=I.gather(),
    )
    _op(
        "GatherV2D",
        x=Input("T"),
        indices=Input(TensorType.INDEX),
        y=Output("T"),
        axis=Attr(int),
        **T,
        infer=I.gather(),
    )
    _op(
        "Gather",
        x=Input("T"),
        indices=Input(TensorType.INDEX),
        y=Output("T"),
        validate_indices=Attr(bool, True),
        batch_dims=Attr(int, 0),
        **T,
        infer=I.gather(axis=None),
    )
    masks = dict(
        begin_mask=Attr(int, 0),
        end_mask=Attr(int, 0),
        ellipsis_mask=Attr(int, 0),
        new_axis_mask=Attr(int, 0),
        shrink_axis_mask=Attr(int, 0),
    )
    _op(
        "StridedSlice",
        x=Input("T"),
        begin=Input(TensorType.INDEX),
        end=Input(TensorType.INDEX),
        strides=Input(TensorType.INDEX),
        y=Output("T"),
        **masks,
        **T,
        infer=I.strided_slice(),
    )
    _op(
        "StridedSliceD",
        x=Input("T"),
        y=Output("T"),
        begin=Attr(list[int]),
        end=Attr(list[int]),
        strides=Attr(list[int]),
        **masks,
        **T,
        infer=I.strided_slice(),
    )
    _op(
        "Slice",
        x=Input("T"),
        offsets=Input(TensorType.INDEX),
        size=Input(TensorType.INDEX),
        y=Output("T"),
        **T,
        infer=I.slice_(),
    )
    _op(
        "SliceD",
        x=Input("T"),
        y=Output("T"),
        offsets=Attr(list[int]),
        size=Attr(list[int]),
        **T,
        infer=I.slice_(),
    )
    _op("Tile", x=Input("T"), multiples=Input(TensorType.INDEX), y=Output("T"), **T, infer=I.tile())
    _op("TileD", x=Input("T"), y=Output("T"), multiples=Attr(list[int]), **T, infer=I.tile())
    _op("Expand", x=Input("T"), shape=Input(TensorType.INDEX), y=Output("T"), **T, infer=I.expand())
    _op(
        "BroadcastTo",
        x=Input("T"),
        shape=Input(TensorType.INDEX),
        y=Output("T"),
        **T,
        infer=I.expand(),
    )
    _op("Pad", x=Input("T"), paddings=Input(TensorType.INDEX), y=Output("T"), **T, infer=I.pad())
    _op("PadD", x=Input("T"), y=Output("T"), paddings=Attr(list[list[int]]), **T, infer=I.pad())
    _op(
        "PadV3",
        x=Input("T"),
        paddings=Input(TensorType.INDEX),
        constant_values=OptionalInput("T"),
        y=Output("T"),
        mode=Attr(str, "constant"),
        paddings_contiguous=Attr(bool, True),
        **T,
        infer=I.pad(),
    )
    _op("Shape", x=Input(), y=Output(), dtype=Attr(int, int(_F.INT32)), infer=I.shape())
    _op("Size", x=Input(), y=Output(), dtype=Attr(int, int(_F.INT32)), infer=I.size())
    _op("Fill", dims=Input(TensorType.INDEX), value=Input("T"), y=Output("T"), **T, infer=I.fill())
    _op(
        "Range",
        start=Input("T"),
        limit=Input("T"),
        delta=Input("T"),
        y=Output("T"),
        **T,
        infer=I.range_(),
    )
