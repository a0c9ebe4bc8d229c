"""The builtin operator library: GE operator types with GE's port and attribute names.

Registered lazily by :func:`ascendir.ops._ensure_loaded` (never at ``import ascendir``). The
shape, assembling and indexing ops are declared in :mod:`ascendir.ops._builtin_shapes`.
"""

from __future__ import annotations

from typing import Any

from .. import infer as I
from ..types import DataType
from . import (
    Attr,
    DynamicInput,
    DynamicOutput,
    Input,
    OpDef,
    OptionalInput,
    Output,
    Subgraph,
    TensorType,
    TypeVar,
    register_op,
)

__all__ = ["register_all"]

_F = DataType


def _op(name: str, **decls: Any) -> None:
    """Register ``name`` from keyword declarations (kept in keyword order)."""
    cls = type(name, (OpDef,), dict(decls))
    register_op(name)(cls)


def _unary(name: str, **attrs: Any) -> None:
    _op(name, x=Input("T"), y=Output("T"), **attrs, T=TypeVar(TensorType.ANY), infer=I.same_as("x"))


def _binary(name: str, out: Any = "T", rule: I.Rule | None = None) -> None:
    _op(
        name,
        x1=Input("T"),
        x2=Input("T"),
        y=Output(out),
        T=TypeVar(TensorType.ANY),
        infer=rule or I.broadcast(),
    )


def _reduce(name: str) -> None:
    _op(
        name,
        x=Input("T"),
        axes=Input(TensorType.INDEX),
        y=Output("T"),
        keep_dims=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.reduce(),
    )
    _op(
        name + "D",
        x=Input("T"),
        y=Output("T"),
        axes=Attr(list[int]),
        keep_dims=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.reduce(),
    )


UNARY = [
    "Abs",
    "Neg",
    "Exp",
    "Log",
    "Sqrt",
    "Rsqrt",
    "Reciprocal",
    "Tanh",
    "Sigmoid",
    "Relu",
    "Relu6",
    "Gelu",
    "Erf",
    "Sign",
    "Square",
    "Floor",
    "Ceil",
    "Round",
    "Sin",
    "Cos",
    "Tan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "Asin",
    "Acos",
    "Atan",
    "Log1p",
    "Expm1",
    "Softplus",
    "Softsign",
    "HardSwish",
    "HardSigmoid",
    "Mish",
    "ZerosLike",
    "OnesLike",
    "StopGradient",
    "Invert",
    "Snapshot",
]
"""Elementwise unary ops: ``x -> y`` of the same shape and dtype."""

PREDICATES = ["IsNan", "IsInf", "IsFinite"]
"""Elementwise tests: ``x -> y`` of the same shape, bool."""

BINARY = [
    "Add",
    "AddV2",
    "Sub",
    "Mul",
    "RealDiv",
    "Div",
    "DivNoNan",
    "FloorDiv",
    "FloorMod",
    "Mod",
    "Maximum",
    "Minimum",
    "Pow",
    "SquaredDifference",
    "Atan2",
    "Xdivy",
    "Xlogy",
]
"""Elementwise broadcasting binary ops: ``x1, x2 -> y``."""

COMPARE = ["Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"]
"""Broadcasting comparisons: ``x1, x2 -> y`` (bool)."""

LOGICAL = ["LogicalAnd", "LogicalOr", "LogicalXor"]
"""Broadcasting logical ops on bool tensors."""

REDUCE = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceAll",
    "ReduceAny",
]
"""Reductions; each also has a ``...D`` form with an ``axes`` attribute."""


def _io_and_graph() -> None:
    _op("Data", x=Input(), y=Output(), index=Attr(int, 0), infer=I.data())
    _op("RefData", x=Input(), y=Output(), index=Attr(int, 0), infer=I.data())
    _op("Const", y=Output(), value=Attr("TENSOR"), infer=I.const())
    _op("Constant", y=Output(), value=Attr("TENSOR"), infer=I.const())
    _op("NetOutput", x=DynamicInput(), y=DynamicOutput(), infer=I.passthrough())
    _op("Identity", x=Input("T"), y=Output("T"), T=TypeVar(), infer=I.same_as("x"))
    # GE's TensorMove: a copy of x into a new buffer (the value is x's).
    _op("TensorMove", x=Input("T"), y=Output("T"), T=TypeVar(), infer=I.same_as("x"))
    _op("IdentityN", x=DynamicInput(), y=DynamicOutput(), infer=I.passthrough())
    _op("Cast", x=Input(), y=Output(), dst_type=Attr(int), infer=I.cast())
    _op(
        "TransData",
        src=Input(),
        dst=Output(),
        src_format=Attr(str),
        dst_format=Attr(str),
        groups=Attr(int, 1),
        infer=I.trans_data(),
    )


def _elementwise() -> None:
    for name in UNARY:
        _unary(name)
    for name in PREDICATES:
        _op(name, x=Input("T"), y=Output(_F.BOOL), T=TypeVar(TensorType.ANY),
            infer=I.same_as("x", dtype=_F.BOOL))
    _unary("LeakyRelu", negative_slope=Attr(float, 0.0))
    _unary("Elu", alpha=Attr(float, 1.0))
    _unary("Selu")
    _unary("Swish", scale=Attr(float, 1.0))
    _unary("ThresholdedRelu", alpha=Attr(float, 1.0))
    _unary("HardMax", axis=Attr(int, -1))
    for name in ("HardShrink", "SoftShrink"):
        _op(name, input_x=Input("T"), output_y=Output("T"), lambd=Attr(float, 0.5),
            T=TypeVar(TensorType.FLOAT), infer=I.same_as("input_x"))
    for name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        _op(name, x1=Input("T"), x2=Input("T"), y=Output("T"), T=TypeVar(TensorType.INT),
            infer=I.broadcast())
    _op("LogicalNot", x=Input(_F.BOOL), y=Output(_F.BOOL), infer=I.same_as("x"))
    for name in BINARY:
        _binary(name)
    for name in COMPARE:
        _binary(name, out=_F.BOOL, rule=I.broadcast(dtype=_F.BOOL))
    for name in LOGICAL:
        _op(
            name,
            x1=Input(_F.BOOL),
            x2=Input(_F.BOOL),
            y=Output(_F.BOOL),
            infer=I.broadcast(),
        )
    _op(
        "AddN",
        x=DynamicInput("T"),
        y=Output("T"),
        N=Attr(int),
        T=TypeVar(TensorType.ANY),
        infer=I.broadcast("x"),
    )
    _op(
        "Eltwise",
        x=DynamicInput("T"),
        y=Output("T"),
        N=Attr(int),
        mode=Attr(int, 1),
        coeff=Attr(list[float], []),
        T=TypeVar(TensorType.ANY),
        infer=I.broadcast("x"),
    )
    _op(
        "BiasAdd",
        x=Input("T"),
        bias=Input("T"),
        y=Output("T"),
        data_format=Attr(str, "NHWC"),
        T=TypeVar(TensorType.ANY),
        infer=I.same_as("x"),
    )
    _op(
        "Select",
        condition=Input(_F.BOOL),
        x1=Input("T"),
        x2=Input("T"),
        y=Output("T"),
        T=TypeVar(TensorType.ANY),
        infer=I.select(),
    )
    _op(
        "SelectV2",
        condition=Input(_F.BOOL),
        x1=Input("T"),
        x2=Input("T"),
        y=Output("T"),
        T=TypeVar(TensorType.ANY),
        infer=I.select(broadcast_condition=True),
    )


def _reductions_and_norms() -> None:
    for name in REDUCE:
        _reduce(name)
    for name in ("ArgMaxV2", "ArgMin"):
        _op(
            name,
            x=Input(),
            dimension=Input(TensorType.INDEX),
            y=Output(),
            dtype=Attr(int, int(_F.INT32)),
            infer=I.arg_max(),
        )
    for name in ("ArgMaxD", "ArgMinD"):
        _op(
            name,
            x=Input(),
            y=Output(),
            dimension=Attr(int),
            dtype=Attr(int, int(_F.INT32)),
            infer=I.arg_max(),
        )
    for name in ("TopK", "TopKV2"):
        # GE's TopKV2 chooses its index type (`indices_dtype`); TopK's indices are int32.
        index_attr = {"indices_dtype": Attr(int, int(_F.INT32))} if name == "TopKV2" else {}
        _op(
            name,
            x=Input("T"),
            k=Input(_F.INT32),
            values=Output("T"),
            indices=Output(TensorType.INDEX if name == "TopKV2" else _F.INT32),
            sorted=Attr(bool, True),
            dim=Attr(int, -1),
            largest=Attr(bool, True),
            **index_attr,
            T=TypeVar(TensorType.ANY),
            infer=I.topk(),
        )
    _op(
        "SoftmaxV2",
        x=Input("T"),
        y=Output("T"),
        axes=Attr(list[int], [-1]),
        T=TypeVar(TensorType.ANY),
        infer=I.same_as("x"),
    )
    # GE names LogSoftmaxV2's ports after TensorFlow's LogSoftmax.
    _op(
        "LogSoftmaxV2",
        logits=Input("T"),
        logsoftmax=Output("T"),
        axes=Attr(list[int], [-1]),
        T=TypeVar(TensorType.ANY),
        infer=I.same_as("logits"),
    )
    _op(
        "BatchNorm",
        x=Input("T"),
        scale=Input("U"),
        offset=Input("U"),
        mean=OptionalInput("U"),
        variance=OptionalInput("U"),
        y=Output("T"),
        batch_mean=Output("U"),
        batch_variance=Output("U"),
        reserve_space_1=Output("U"),
        reserve_space_2=Output("U"),
        epsilon=Attr(float, 0.0001),
        data_format=Attr(str, "NHWC"),
        is_training=Attr(bool, True),
        T=TypeVar(TensorType.ANY),
        U=TypeVar(TensorType.ANY),
        infer=I.same_as(outputs=["x", "scale", "scale", "scale", "scale"]),
    )
    _op(
        "LayerNorm",
        x=Input("T"),
        gamma=Input("T"),
        beta=Input("T"),
        y=Output("T"),
        mean=Output("T"),
        variance=Output("T"),
        begin_norm_axis=Attr(int, 0),
        begin_params_axis=Attr(int, 0),
        epsilon=Attr(float, 1e-7),
        T=TypeVar(TensorType.ANY),
        infer=I.layer_norm(),
    )
    _op(
        "LayerNormV3",
        x=Input("T"),
        gamma=Input("T"),
        beta=Input("T"),
        y=Output("T"),
        mean=Output("T"),
        rstd=Output("T"),
        begin_norm_axis=Attr(int, 0),
        begin_params_axis=Attr(int, 0),
        epsilon=Attr(float, 1e-5),
        T=TypeVar(TensorType.ANY),
        infer=I.layer_norm(),
    )


def _linear_and_conv() -> None:
    mm = dict(x1=Input("T"), x2=Input("T"), bias=OptionalInput("T"))
    _op(
        "MatMul",
        **mm,
        y=Output("T"),
        transpose_x1=Attr(bool, False),
        transpose_x2=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.matmul(),
    )
    _op(
        "MatMulV2",
        **mm,
        offset_w=OptionalInput(),
        y=Output("T"),
        transpose_x1=Attr(bool, False),
        transpose_x2=Attr(bool, False),
        offset_x=Attr(int, 0),
        T=TypeVar(TensorType.ANY),
        infer=I.matmul(),
    )
    _op(
        "BatchMatMul",
        **mm,
        y=Output("T"),
        adj_x1=Attr(bool, False),
        adj_x2=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.batch_matmul(),
    )
    _op(
        "BatchMatMulV2",
        **mm,
        offset_w=OptionalInput(),
        y=Output("T"),
        adj_x1=Attr(bool, False),
        adj_x2=Attr(bool, False),
        offset_x=Attr(int, 0),
        T=TypeVar(TensorType.ANY),
        infer=I.batch_matmul(),
    )
    # GE's GEMM (nn_matrix_calculation_ops): y = alpha * (a @ b) + beta * c, alpha and beta
    # one-element tensors; written by GE's matmul + add fusion samples.
    _op(
        "GEMM",
        a=Input("T"),
        b=Input("T"),
        c=Input("T"),
        alpha=Input("T"),
        beta=Input("T"),
        y=Output("T"),
        transpose_a=Attr(bool, False),
        transpose_b=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.matmul("a", "b", "transpose_a", "transpose_b"),
    )
    # GE's fused attention (ops-transformer); the compiler's attention pass writes it.
    _op(
        "FlashAttentionScore",
        query=Input("T"),
        key=Input("T"),
        value=Input("T"),
        real_shift=OptionalInput("T"),
        drop_mask=OptionalInput(),
        padding_mask=OptionalInput("T"),
        atten_mask=OptionalInput(),
        prefix=OptionalInput(),
        actual_seq_qlen=OptionalInput(),
        actual_seq_kvlen=OptionalInput(),
        q_start_idx=OptionalInput(),
        kv_start_idx=OptionalInput(),
        softmax_max=Output(DataType.FLOAT),
        softmax_sum=Output(DataType.FLOAT),
        softmax_out=Output("T"),
        attention_out=Output("T"),
        scale_value=Attr(float, 1.0),
        keep_prob=Attr(float, 1.0),
        pre_tockens=Attr(int, 2147483647),
        next_tockens=Attr(int, 2147483647),
        head_num=Attr(int),
        input_layout=Attr(str),
        inner_precise=Attr(int, 0),
        sparse_mode=Attr(int, 0),
        pse_type=Attr(int, 1),
        T=TypeVar(TensorType.ANY),
        infer=I.flash_attention(),
    )
    _op(
        "FullyConnection",
        x=Input(),
        w=Input(),
        b=OptionalInput(),
        offset_w=OptionalInput(),
        y=Output(),
        num_output=Attr(int),
        transpose=Attr(bool, False),
        axis=Attr(int, 1),
        offset_x=Attr(int, 0),
        infer=I.fully_connection(),
    )
    conv_attrs = dict(
        strides=Attr(list[int]),
        pads=Attr(list[int], [0, 0, 0, 0]),
        dilations=Attr(list[int], [1, 1, 1, 1]),
        groups=Attr(int, 1),
        data_format=Attr(str, "NHWC"),
    )
    _op(
        "Conv2D",
        x=Input(),
        filter=Input(),
        bias=OptionalInput(),
        offset_w=OptionalInput(),
        y=Output(),
        **conv_attrs,
        offset_x=Attr(int, 0),
        infer=I.conv(),
    )
    _op(
        "Conv2DBackpropInput",
        input_size=Input(TensorType.INDEX),
        filter=Input(),
        out_backprop=Input(),
        y=Output(),
        **conv_attrs,
        infer=I.conv_backprop_input(),
    )
    _op(
        "Conv2DTransposeD",
        x=Input(),
        filter=Input(),
        bias=OptionalInput(),
        offset_w=OptionalInput(),
        y=Output(),
        input_size=Attr(list[int]),
        **conv_attrs,
        output_padding=Attr(list[int], [0, 0, 0, 0]),
        offset_x=Attr(int, 0),
        infer=I.conv_backprop_input(out_backprop="x"),
    )
    _op(
        "Conv2DBackpropInputD",
        filter=Input(),
        out_backprop=Input(),
        y=Output(),
        input_size=Attr(list[int]),
        **conv_attrs,
        infer=I.conv_backprop_input(),
    )
    for name in ("MaxPool", "AvgPool"):
        _op(
            name,
            x=Input("T"),
            y=Output("T"),
            ksize=Attr(list[int]),
            strides=Attr(list[int]),
            padding=Attr(str),
            data_format=Attr(str, "NHWC"),
            T=TypeVar(TensorType.ANY),
            infer=I.pool(),
        )
    _op(
        "MaxPoolV3",
        x=Input("T"),
        y=Output("T"),
        ksize=Attr(list[int]),
        strides=Attr(list[int]),
        padding_mode=Attr(str, "CALCULATED"),
        pads=Attr(list[int], [0, 0, 0, 0]),
        data_format=Attr(str, "NCHW"),
        global_pooling=Attr(bool, False),
        ceil_mode=Attr(bool, False),
        T=TypeVar(TensorType.ANY),
        infer=I.pool(),
    )
    _op(
        "Pooling",
        x=Input("T"),
        y=Output("T"),
        mode=Attr(int, 0),
        global_pooling=Attr(bool, False),
        window=Attr(list[int], [1, 1]),
        stride=Attr(list[int], [1, 1]),
        pad=Attr(list[int], [0, 0, 0, 0]),
        dilation=Attr(list[int], [1, 1, 1, 1]),
        ceil_mode=Attr(int, 0),
        data_format=Attr(str, "NCHW"),
        T=TypeVar(TensorType.ANY),
        infer=I.caffe_pool(),
    )


def _onnx_style() -> None:
    """Types produced by the ONNX frontend's mapping."""
    T = dict(T=TypeVar(TensorType.ANY))
    for name in ("GlobalAveragePool", "GlobalMaxPool"):
        _op(name, x=Input("T"), y=Output("T"), **T, infer=I.global_pool())
    _op(
        "StridedSliceV2",
        x=Input("T"),
        begin=Input(TensorType.INDEX),
        end=Input(TensorType.INDEX),
        axes=OptionalInput(TensorType.INDEX),
        strides=OptionalInput(TensorType.INDEX),
        y=Output("T"),
        begin_mask=Attr(int, 0),
        end_mask=Attr(int, 0),
        ellipsis_mask=Attr(int, 0),
        new_axis_mask=Attr(int, 0),
        shrink_axis_mask=Attr(int, 0),
        **T,
        infer=I.slice_axes(),
    )
    _op(
        "AvgPoolV2",
        x=Input("T"),
        y=Output("T"),
        ksize=Attr(list[int]),
        strides=Attr(list[int]),
        padding_mode=Attr(str, "CALCULATED"),
        pads=Attr(list[int], [0, 0, 0, 0]),
        data_format=Attr(str, "NCHW"),
        global_pooling=Attr(bool, False),
        ceil_mode=Attr(bool, False),
        exclusive=Attr(bool, True),
        **T,
        infer=I.pool(),
    )
    _op(
        "ClipByValue",
        x=Input("T"),
        clip_value_min=Input("T"),
        clip_value_max=Input("T"),
        y=Output("T"),
        **T,
        infer=I.same_as("x"),
    )
    _op("PRelu", x=Input("T"), weight=Input("T"), y=Output("T"), **T, infer=I.same_as("x"))
    _unary("Celu", alpha=Attr(float, 1.0))
    _op(
        "Cumsum",
        x=Input("T"),
        axis=Input(TensorType.INDEX),
        y=Output("T"),
        exclusive=Attr(bool, False),
        reverse=Attr(bool, False),
        **T,
        infer=I.same_as("x"),
    )
    _op(
        "ScatterElements",
        data=Input("T"),
        indices=Input(TensorType.INDEX),
        updates=Input("T"),
        y=Output("T"),
        axis=Attr(int, 0),
        reduction=Attr(str, "none"),
        **T,
        infer=I.same_as("data"),
    )
    _op(
        "Cumprod",
        x=Input("T"),
        axis=Input(TensorType.INDEX),
        y=Output("T"),
        exclusive=Attr(bool, False),
        reverse=Attr(bool, False),
        **T,
        infer=I.same_as("x"),
    )
    _op(
        "GatherElements",
        x=Input("T"),
        index=Input(TensorType.INDEX),
        y=Output("T"),
        dim=Attr(int, 0),
        **T,
        infer=I.same_as("index", dtype="input:x"),
    )


def _control_flow() -> None:
    _op(
        "If",
        cond=Input(),
        input=DynamicInput(),
        output=DynamicOutput(),
        then_branch=Subgraph(),
        else_branch=Subgraph(),
        infer=I.if_(),
    )
    _op(
        "StatelessIf",
        cond=Input(),
        input=DynamicInput(),
        output=DynamicOutput(),
        then_branch=Subgraph(),
        else_branch=Subgraph(),
        infer=I.if_(),
    )
    _op(
        "Case",
        branch_index=Input(_F.INT32),
        input=DynamicInput(),
        output=DynamicOutput(),
        branches=Subgraph(dynamic=True),
        infer=I.if_(),
    )
    _op(
        "While",
        input=DynamicInput(),
        output=DynamicOutput(),
        cond=Subgraph(),
        body=Subgraph(),
        parallel_iterations=Attr(int, 10),
        infer=I.while_(),
    )
    _op(
        "Loop",
        max_trip_count=OptionalInput(),
        cond=OptionalInput(),
        input=DynamicInput(),
        output=DynamicOutput(),
        body=Subgraph(),
        infer=I.passthrough(skip=2),
    )
    _op(
        "PartitionedCall",
        args=DynamicInput(),
        output=DynamicOutput(),
        f=Subgraph(),
        config=Attr(str, ""),
        config_proto=Attr(str, ""),
        executor_type=Attr(str, ""),
        infer=I.if_(),
    )


def _aipp_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """AIPP: NHWC images become NCHW float16 features."""
    x = ctx.input("images")
    s = list(x.shape)
    if len(s) != 4:
        return [([-2], _F.FLOAT16)]
    fmt = getattr(x.format, "name", str(x.format))
    if fmt == "NCHW":
        return [(s, _F.FLOAT16)]
    return [([s[0], s[3], s[1], s[2]], _F.FLOAT16)]


def _custom() -> None:
    _op(
        "Aipp",
        images=Input(),
        params=OptionalInput(),
        features=Output(),
        aipp_config_path=Attr(str, "./aipp.cfg"),
        infer=_aipp_infer,
    )


def register_all() -> None:
    """Register every builtin operator (called once, lazily)."""
    # Imported here: the shape ops build on this module's helpers.
    from ._builtin_frontend import register_frontend
    from ._builtin_ge import register_ge_internal
    from ._builtin_shapes import register_shapes
    from ._builtin_window import register_window

    _io_and_graph()
    _elementwise()
    _reductions_and_norms()
    _linear_and_conv()
    register_shapes()
    _onnx_style()
    _control_flow()
    _custom()
    register_ge_internal()
    register_frontend()
    register_window()
