"""``air.evaluate`` of GE's internal op types: the host ops that fold a Caffe BatchNorm or Scale
layer into a convolution must give the convolution the same result as the layer after it; the
quantization family follows GE's definitions."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _same_draws() -> None:
    """Each test draws the same inputs from ``RNG`` whatever ran before it (random order,
    pytest-xdist)."""
    RNG.bit_generator.state = np.random.default_rng(11).bit_generator.state
F32 = air.float32


def _conv(g, x, w, b):
    return g.add_op("Conv2D", [x, w, b], attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1],
                                                "data_format": "NCHW"})


def test_batchnorm_folded_into_the_filter_and_bias_matches_the_layer():
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    factor = np.array([2.0], np.float32)
    mean = RNG.standard_normal(4).astype(np.float32) * factor
    var = (RNG.random(4).astype(np.float32) + 0.5) * factor
    eps = 1e-5

    # Reference: the convolution, then inference-mode batch norm with Caffe's statistics.
    ref = air.Graph("ref")
    xi = ref.add_input("x", air.TensorDesc([1, 3, 6, 6], F32, format=air.Format.NCHW))
    y = _conv(ref, xi, ref.add_const("w", w), ref.add_const("b", b))
    ones, zeros = np.ones(4, np.float32), np.zeros(4, np.float32)
    bn = ref.add_op("BatchNorm", [y, ref.add_const("s", ones), ref.add_const("o", zeros),
                                  ref.add_const("m", mean / factor),
                                  ref.add_const("v", var / factor)],
                    attrs={"epsilon": eps, "data_format": "NCHW", "is_training": False})
    ref.set_outputs([(bn, 0)])
    want = next(iter(air.evaluate(ref, [x]).values()))

    g = air.Graph("folded")
    xi = g.add_input("x", air.TensorDesc([1, 3, 6, 6], F32, format=air.Format.NCHW))
    stats = [g.add_const(n, v) for n, v in (("m", mean), ("v", var), ("f", factor))]
    wf = g.add_op("ConvBnFilterHost", [g.add_const("w", w), *stats], attrs={"epsilon": eps})
    bf = g.add_op("ConvBnBiasHost", [g.add_const("b", b), *stats],
                  attrs={"epsilon": eps, "kernelNum": 4})
    g.set_outputs([_conv(g, xi, wf, bf)])
    got = next(iter(air.evaluate(g, [x]).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_scale_folded_into_the_filter_and_bias_matches_the_layer():
    x = RNG.standard_normal((1, 3, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    s = RNG.standard_normal((1, 4, 1, 1)).astype(np.float32)
    t = RNG.standard_normal((1, 4, 1, 1)).astype(np.float32)
    ref = air.Graph("ref")
    xi = ref.add_input("x", air.TensorDesc([1, 3, 5, 5], F32, format=air.Format.NCHW))
    y = _conv(ref, xi, ref.add_const("w", w), ref.add_const("b", b))
    ref.set_outputs([ref.add_op("Add", [ref.add_op("Mul", [y, ref.add_const("s", s)]),
                                        ref.add_const("t", t)])])
    want = next(iter(air.evaluate(ref, [x]).values()))
    g = air.Graph("folded")
    xi = g.add_input("x", air.TensorDesc([1, 3, 5, 5], F32, format=air.Format.NCHW))
    sc = [g.add_const("s", s), g.add_const("t", t)]
    wf = g.add_op("ConvScaleFilterHost", [g.add_const("w", w), *sc])
    bf = g.add_op("ConvScaleBiasHost", [g.add_const("b", b), *sc], attrs={"kernelNum": 4})
    g.set_outputs([_conv(g, xi, wf, bf)])
    got = next(iter(air.evaluate(g, [x]).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_convolution_without_bias_folds_a_scalar_zero():
    mean = np.array([1.0, 2.0], np.float32)
    var = np.array([4.0, 9.0], np.float32)
    g = air.Graph("g")
    ins = [g.add_const(n, v) for n, v in (("z", np.array(0.0, np.float32)), ("m", mean),
                                           ("v", var), ("f", np.array([1.0], np.float32)))]
    b = g.add_op("ConvBnBiasHost", ins, attrs={"epsilon": 0.0, "kernelNum": 2})
    assert b.op_desc.output_desc(0).shape == (2,)
    g.set_outputs([b])
    got = next(iter(air.evaluate(g, {}).values()))
    np.testing.assert_allclose(got, [-1 / 2, -2 / 3], rtol=1e-6)


@pytest.mark.parametrize("sqrt_mode", [False, True])
def test_quantize_and_antiquantize(sqrt_mode: bool):
    x = np.array([[-300.0, -1.26, 0.0, 0.74, 2.5, 400.0]], np.float32)
    g = air.Graph("q")
    xi = g.add_input("x", air.TensorDesc([1, 6], F32))
    scale = 2.0 if sqrt_mode else 4.0
    q = g.add_op("AscendQuant", [xi], attrs={"scale": scale, "offset": 1.0,
                                            "sqrt_mode": sqrt_mode})
    a = g.add_op("AscendAntiQuant", [q], attrs={"scale": 0.25, "offset": -1.0})
    g.set_outputs([q, a])
    got_q, got_a = air.evaluate(g, [x]).values()
    assert got_q.dtype == np.int8
    np.testing.assert_array_equal(got_q, [[-128, -4, 1, 4, 11, 127]])
    np.testing.assert_allclose(got_a, (got_q.astype(np.float32) - 1.0) * 0.25)


def test_dequantize_and_requantize_with_uint64_scales():
    acc = np.arange(-4, 4, dtype=np.int32).reshape(1, 2, 2, 2)
    scales = np.array([0.5, 2.0], np.float32)
    packed = scales.view(np.uint32).astype(np.uint64)  # the float in the low 32 bits
    g = air.Graph("dq")
    xi = g.add_input("x", air.TensorDesc([1, 2, 2, 2], air.int32))
    s = g.add_const("s", packed)
    dq = g.add_op("AscendDequant", [xi, s], attrs={"relu_flag": True})
    rq = g.add_op("AscendRequant", [xi, s])
    g.set_outputs([dq, rq])
    got_dq, got_rq = air.evaluate(g, [acc]).values()
    want = acc.astype(np.float32) * scales.reshape(1, 2, 1, 1)
    np.testing.assert_allclose(got_dq, np.maximum(want, 0))
    assert got_dq.dtype == np.float32
    np.testing.assert_array_equal(got_rq, np.rint(want).astype(np.int8))
