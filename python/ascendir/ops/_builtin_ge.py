"""The builtin library's GE-internal ops (part of :mod:`.builtin`).

What GE's own passes put into graphs and its dumps record: the partition boundaries
``PlaceHolder`` / ``End``, the host-side weight folding ops of the fusion engine
(``ConvBnFilterHost`` ...), and the quantization family (``AscendQuant`` ... and the host ops
that fold quantization parameters into weights). Port and attribute names are GE's: from the
operator prototypes (``AscendQuant``, ``AscendDequant``, ``AscendRequant``,
``AscendAntiQuant``), from the tensor names the fusion engine gives the host ops it creates
(``requant_input``, ``cube_filter``, ``dequant_scale`` ...), and for the BN / scale folding ops
from the input names recorded in GE's dumps (``Conv_filter``, ``BNInference_mean`` ...; their
output name is not recorded and is ours).
"""

from __future__ import annotations

from typing import Any

from .. import infer as I
from ..types import DataType
from . import Attr, Input, Output
from .builtin import _F, _op

__all__ = ["register_ge_internal"]


def _bias_host_infer(ctx: Any) -> list[tuple[list[int], DataType]]:
    """A folded bias has one value per kernel (``kernelNum``); a convolution without a bias
    feeds a scalar zero, so the input's shape is not the output's."""
    x = ctx.input("Conv_bias")
    n = ctx.attr("kernelNum")
    if isinstance(n, int) and n > 0:
        return [([n], x.dtype)]
    return [(list(x.shape), x.dtype)]


def register_ge_internal() -> None:
    """Register the partition boundaries, the host folding ops and the quantization family."""
    # Partition boundaries: a PlaceHolder stands for a value produced in another partition (its
    # output is what the partitioner recorded); an End sends a value to another partition.
    _op(
        "PlaceHolder",
        y=Output(),
        parentId=Attr(str, ""),
        parentOpType=Attr(str, ""),
        anchorIndex=Attr(int, 0),
        peerIndex=Attr(int, 0),
        infer=I.none(),
    )
    _op(
        "End",
        x=Input(),
        parentOpType=Attr(str, ""),
        peerIndex=Attr(int, 0),
        infer=I.none(),
    )
    # Host-side folding of BatchNorm / Scale into a convolution's filter and bias: the result
    # has the filter's (or bias') shape and dtype.
    bn = dict(
        BNInference_mean=Input(),
        BNInference_variance=Input(),
        BNInference_momentum=Input(),
        epsilon=Attr(float, 1e-5),
        need_adding_eps_and_rsqrting=Attr(bool, True),
    )
    scale = dict(Scale_scale=Input(), Scale_bias=Input())
    filter_out = dict(y=Output(), infer=I.same_as("Conv_filter"))
    bias_out = dict(y=Output(), hasbias=Attr(bool, True), kernelNum=Attr(int, 0),
                    infer=_bias_host_infer)
    _op("ConvBnFilterHost", Conv_filter=Input(), **bn, **filter_out)
    _op("ConvBnBiasHost", Conv_bias=Input(), **bn, **bias_out)
    _op("ConvScaleFilterHost", Conv_filter=Input(), **scale, **filter_out)
    _op("ConvScaleBiasHost", Conv_bias=Input(), **scale, **bias_out)
    # Quantization.
    _op(
        "AscendQuant",
        x=Input(),
        y=Output(),
        scale=Attr(float),
        offset=Attr(float),
        sqrt_mode=Attr(bool, False),
        round_mode=Attr(str, "Round"),
        dst_type=Attr(int, int(_F.INT8)),
        infer=I.same_as("x", dtype="attr:dst_type=INT8"),
    )
    _op(
        "AscendDequant",
        x=Input(_F.INT32),
        deq_scale=Input(),
        y=Output(),
        sqrt_mode=Attr(bool, False),
        relu_flag=Attr(bool, False),
        dtype=Attr(int, int(_F.FLOAT)),
        infer=I.same_as("x", dtype="attr:dtype=FLOAT"),
    )
    _op(
        "AscendRequant",
        x=Input(_F.INT32),
        req_scale=Input(),
        y=Output(_F.INT8),
        relu_flag=Attr(bool, False),
        infer=I.same_as("x", dtype=_F.INT8),
    )
    _op(
        "AscendAntiQuant",
        x=Input(),
        y=Output(),
        scale=Attr(float),
        offset=Attr(float),
        dtype=Attr(int, int(_F.FLOAT)),
        sqrt_mode=Attr(bool, False),
        infer=I.same_as("x", dtype="attr:dtype=FLOAT"),
    )
    # Host ops of the quantization passes: the output describes the main (first) input; a
    # roll-back gives the float weights back.
    _op(
        "RequantHostCpuOp",
        requant_input=Input(),
        requant_output=Output(),
        quant_scale=Attr(float, 1.0),
        infer=I.same_as("requant_input"),
    )
    host = dict(
        dequant_scale=Input(),
        cube_quant_roll_back_output=Output(),
        groups=Attr(int, 1),
        cube_op_type=Attr(str, ""),
        dst_type=Attr(int, int(_F.INT8)),
    )
    _op("QuantWeightRollBack", cube_filter=Input(), **host, scale=Attr(float, 0.0),
        infer=I.same_as("cube_filter", dtype=_F.FLOAT))
    _op("QuantBiasRollBack", cube_bias=Input(), **host, scale=Attr(float, 0.0),
        infer=I.same_as("cube_bias", dtype=_F.FLOAT))
    _op(
        "QuantBiasOptimization",
        cube_optimization_bias=Input(),
        cube_optimization_filter=Input(),
        **host,
        offset=Attr(float, 0.0),
        soc_version=Attr(str, ""),
        infer=I.same_as("cube_optimization_bias"),
    )


