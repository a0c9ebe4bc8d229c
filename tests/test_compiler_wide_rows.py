"""Rows wider than the UB: norms and softmax at the widths real models use, and reductions whose
reduce axis is split into tiles (GE's R-tiling reduce templates).

The oracles: onnxruntime for what the compiled graph computes, and every kernel built as C++
for the CPU target (`air.compiler.verify`: the ImplGraphs, their tiling and UB allocation, run
on random inputs) against its HintGraph."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ascendir as air

N = helper.make_node
AXIS = numpy_helper.from_array(np.array([-1], np.int64), "axis")
#: GE types a norm-like ONNX op imports as (what must not be left outside a kernel).
NORM_TYPES = {"LayerNorm", "SoftmaxV2", "LogSoftmaxV2"}


def onnx_model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "m", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def norm_model(kind: str, width: int, dtype) -> bytes:
    """One norm over the last axis of x[2, 8, width]: the op as exporters write it (RMSNorm in
    the decomposed form Hugging Face models export)."""
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(width)
    x, y = value("x", [2, 8, width], elem), value("y", [2, 8, width], elem)

    def weight(name):
        return numpy_helper.from_array(rng.standard_normal(width).astype(dtype), name)

    if kind == "LayerNormalization":
        return onnx_model([N(kind, ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)], [x], [y],
                          [weight("g"), weight("b")])
    if kind in ("Softmax", "LogSoftmax"):
        return onnx_model([N(kind, ["x"], ["y"], axis=-1)], [x], [y])
    assert kind == "RMSNorm"
    consts = [weight("g"), numpy_helper.from_array(np.array(2, dtype), "two"),
              numpy_helper.from_array(np.array(1e-6, dtype), "eps"), AXIS]
    nodes = [N("Pow", ["x", "two"], ["p"]), N("ReduceMean", ["p", "axis"], ["m"]),
             N("Add", ["m", "eps"], ["a"]), N("Sqrt", ["a"], ["s"]),
             N("Div", ["x", "s"], ["d"]), N("Mul", ["d", "g"], ["y"])]
    return onnx_model(nodes, [x], [y], consts)


def check_kernels(cm) -> None:
    """Every kernel built for the CPU agrees with its HintGraph at every shape it runs."""
    rep = air.compiler.verify(cm)
    assert rep.cases, "no kernel ran"
    assert rep.ok, rep.text()


@pytest.mark.parametrize("width", [768, 1024, 4096, 8192])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("kind", ["LayerNormalization", "Softmax", "LogSoftmax", "RMSNorm"])
def test_norms_at_real_widths_fuse_tile_and_compute_what_onnxruntime_does(kind, width, dtype):
    model = norm_model(kind, width, dtype)
    x = np.random.default_rng(1).standard_normal((2, 8, width)).astype(dtype)
    want = ort.InferenceSession(model).run(None, {"x": x})[0]
    cm = air.compile(air.onnx.from_bytes(model))
    assert cm.kernels
    left = [(n.name, n.type) for n in cm.graph.nodes if n.type in NORM_TYPES]
    assert not left, f"norms outside every kernel: {left}"
    report = json.loads(cm.report.to_json())
    refused = [x["reason"] for x in report["barriers"] + report["lifted"]]
    assert not [r for r in refused if "UB" in r], refused
    (got,) = air.evaluate(cm.graph, {"x": x}).values()
    tol = 1e-5 if dtype == np.float32 else 4e-3
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol)
    # The other widths give the same kernels up to the row length (the R-tiled templates, the
    # row split into tiles with a tail): the C++ builds check one of them.
    if width == 4096:
        check_kernels(cm)


@pytest.mark.parametrize("kind", ["LayerNormalization", "Softmax", "LogSoftmax"])
def test_a_norm_whose_row_fits_stays_one_op_kernel(kind):
    cm = air.compile(air.onnx.from_bytes(norm_model(kind, 256, np.float32)))
    (k,) = cm.kernels
    assert list(k.member_types) in (["LayerNorm"], ["SoftmaxV2"], ["LogSoftmaxV2"])


def reduce_cases(width: int) -> dict[str, tuple[bytes, list[str]]]:
    """Reductions that read a value of the row's own (a [2, 8, 1] input broadcast back over the
    row) and a second output inside or after the reduction."""
    x, m = value("x", [2, 8, width]), value("m", [2, 8, 1])

    def out(*names):
        return [value(n, [2, 8, width] if n == "d" else [2, 8, 1]) for n in names]

    return {
        "centred_mean": (onnx_model([N("Sub", ["x", "m"], ["d"]),
                                     N("ReduceMean", ["d", "axis"], ["y"])],
                                    [x, m], out("y"), [AXIS]), ["y"]),
        "variance_rsqrt": (onnx_model([N("Sub", ["x", "m"], ["d"]), N("Mul", ["d", "d"], ["q"]),
                                       N("ReduceMean", ["q", "axis"], ["v"]),
                                       N("Sqrt", ["v"], ["y"])],
                                      [x, m], out("y"), [AXIS]), ["y"]),
        "log_sum_exp_and_shifted": (onnx_model([N("Sub", ["x", "m"], ["d"]),
                                                N("Exp", ["d"], ["e"]),
                                                N("ReduceSum", ["e", "axis"], ["r"]),
                                                N("Log", ["r"], ["y"])],
                                               [x, m], out("y", "d"), [AXIS]), ["y", "d"]),
    }


@pytest.mark.parametrize("width", [256, 4096])
@pytest.mark.parametrize("case", ["centred_mean", "variance_rsqrt", "log_sum_exp_and_shifted"])
def test_a_reduction_reading_a_row_value_over_tiles_of_its_row(case, width):
    model, outs = reduce_cases(width)[case]
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((2, 8, width)).astype(np.float32) + 3,
             "m": rng.standard_normal((2, 8, 1)).astype(np.float32)}
    cm = air.compile(air.onnx.from_bytes(model),
                     options=air.CompileOptions(min_cluster_ops=1))
    (k,) = cm.kernels
    assert "Reduce" in k.name or "reduce" in k.name
    want = ort.InferenceSession(model).run(outs, feeds)
    got = air.evaluate(cm.graph, feeds)
    for name, w in zip(outs, want, strict=True):
        np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5)
    check_kernels(cm)


def test_onnx_models_here_are_valid():
    """The hand-written models are what onnx itself accepts (the oracle runs them as written)."""
    for kind in ("LayerNormalization", "Softmax", "LogSoftmax", "RMSNorm"):
        onnx.checker.check_model(onnx.load_from_string(norm_model(kind, 768, np.float16)),
                                 full_check=True)
    for model, _ in reduce_cases(64).values():
        onnx.checker.check_model(onnx.load_from_string(model), full_check=True)


def test_a_concat_of_wide_rows_tiles_the_axes_after_its_concat_axis():
    """ViT's class token joined to its patches at width 768: the parts agree on every axis
    but the concat axis, so the inner axis is tiled and the kernel fits the UB."""
    width, tokens = 768, 16
    model = onnx_model([N("Concat", ["a", "b"], ["c"], axis=1), N("Add", ["c", "p"], ["y"])],
                       [value("a", [2, 1, width]), value("b", [2, tokens, width]),
                        value("p", [1, tokens + 1, width])],
                       [value("y", [2, tokens + 1, width])])
    rng = np.random.default_rng(0)
    feeds = {"a": rng.standard_normal((2, 1, width)).astype(np.float32),
             "b": rng.standard_normal((2, tokens, width)).astype(np.float32),
             "p": rng.standard_normal((1, tokens + 1, width)).astype(np.float32)}
    cm = air.compile(air.onnx.from_bytes(model))
    (k,) = cm.kernels
    assert sorted(k.member_types) == ["Add", "ConcatV2D"]
    (got,) = air.evaluate(cm.graph, feeds).values()
    want = np.concatenate([feeds["a"], feeds["b"]], axis=1) + feeds["p"]
    np.testing.assert_array_equal(got, want)
    check_kernels(cm)


@pytest.mark.parametrize("side", [16, 64])
def test_a_pooled_batch_norm_keeps_its_channel_values_over_the_row_loop(side):
    """EfficientNet's squeeze-excite pooling: BatchNorm → Swish → ReduceMean over H, W. The
    channel's scale and shift are loaded once per row and read on every tile of it: their
    buffers must outlive the row's loop (a slot reused inside it gave wrong numbers)."""
    rng = np.random.default_rng(side)
    c = 8
    params = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in (
        ("scale", rng.standard_normal(c)), ("bias", rng.standard_normal(c)),
        ("mean", rng.standard_normal(c)), ("var", rng.uniform(0.5, 2.0, c)))]
    hw = numpy_helper.from_array(np.array([2, 3], np.int64), "hw")
    model = onnx_model([N("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["b"]),
                        N("Sigmoid", ["b"], ["s"]), N("Mul", ["b", "s"], ["w"]),
                        N("ReduceMean", ["w", "hw"], ["y"])],
                       [value("x", [2, c, side, side])], [value("y", [2, c, 1, 1])],
                       [*params, hw])
    feeds = {"x": rng.standard_normal((2, c, side, side)).astype(np.float32)}
    cm = air.compile(air.onnx.from_bytes(model))
    assert len(cm.kernels) == 1
    want = ort.InferenceSession(model).run(None, feeds)[0]
    (got,) = air.evaluate(cm.graph, feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    check_kernels(cm)
