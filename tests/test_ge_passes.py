"""ascendir.ge.passes: GE's Python pass API offline.

The nine Python fusion-pass samples of GE's sources (examples/fusion_pass/*/python/src) are
reproduced here with GE's own API calls and ``ascendir.ge`` imports: each registers, matches
and rewrites the graph its sample data builds, the result evaluates equal to the original,
and the rewrite is the one the sample's C++ twin makes. Then one test per documented rule.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from math import fabs
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ascendir as air
from ascendir.evaluator import kernel, kernels
from ascendir.ge.error import GeError
from ascendir.ge.es import GraphBuilder, TensorHolder
from ascendir.ge.graph import DataType, Format, Graph, Node, Tensor, TensorDesc
from ascendir.ge.passes import (
    DecomposePass,
    FusionBasePass,
    PassContext,
    PassStage,
    PatternFusionPass,
    PatternMatcherConfigBuilder,
    SubgraphBoundary,
    SubgraphInput,
    SubgraphOutput,
    SubgraphRewriter,
    can_fuse,
    clear_registered_passes,
    create_pattern,
    create_replacement,
    get_registered_pass_dicts,
    get_registered_passes,
    load_pass_plugins,
    pattern,
    register_decompose_pass,
    register_fusion_pass,
    report_fuse,
    run_passes,
)
from ascendir.ge.passes.bootstrap import clear_loaded_pass_modules
from ascendir.ge.utils import GeUtils
from ascendir.rewriter import VerificationError


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    clear_registered_passes()
    yield
    clear_registered_passes()


# --- ops the samples use that ascendir's builtin library lacks -----------------------------
# GE's GEMM (samples 1-3), the custom AddCustom (sample 5) and TensorMove (sample 5) are not
# builtins: they are registered here with air.register_op, with their GE semantics and a
# numpy kernel for air.evaluate, as a GE user registers a custom op.

def _gemm_infer(ctx: Any) -> Any:
    a, b = ctx.input("a"), ctx.input("b")
    if len(a.shape) < 2 or len(b.shape) < 2:
        return [([], a.dtype)]
    m = a.shape[-1] if ctx.attr("transpose_a") else a.shape[-2]
    n = b.shape[-2] if ctx.attr("transpose_b") else b.shape[-1]
    return [([*a.shape[:-2], m, n], a.dtype)]


def _register_sample_ops() -> None:
    if not air.ops.is_registered("GEMM"):
        @air.register_op("GEMM")
        class GEMM(air.OpDef):  # noqa: N801 - GE's type name
            a = air.Input("T")
            b = air.Input("T")
            c = air.Input("T")
            alpha = air.Input("T")
            beta = air.Input("T")
            y = air.Output("T")
            transpose_a = air.Attr(bool, default=False)
            transpose_b = air.Attr(bool, default=False)
            T = air.TypeVar(air.float16, air.float32)
            infer = _gemm_infer

        @air.register_op("AddCustom")
        class AddCustom(air.OpDef):
            x = air.Input("T")
            y = air.Input("T")
            z = air.Output("T")
            T = air.TypeVar(air.float16, air.float32)
            infer = air.infer.same_as("x")

        @air.register_op("TensorMove")
        class TensorMove(air.OpDef):
            x = air.Input("T")
            y = air.Output("T")
            T = air.TypeVar(*air.TensorType.ALL)
            infer = air.infer.same_as("x")
    if "GEMM" not in kernels():
        @kernel("GEMM")
        def _gemm(ctx: Any, ins: list[Any]) -> np.ndarray:
            a, b, c, alpha, beta = (np.asarray(v) for v in ins)
            a = a.swapaxes(-1, -2) if ctx.attr("transpose_a") else a
            b = b.swapaxes(-1, -2) if ctx.attr("transpose_b") else b
            return (alpha * np.matmul(a, b) + beta * c).astype(a.dtype)

        @kernel("AddCustom")
        def _add_custom(ctx: Any, ins: list[Any]) -> np.ndarray:
            return np.asarray(ins[0] + ins[1]).astype(np.asarray(ins[0]).dtype)

        @kernel("TensorMove")
        def _tensor_move(ctx: Any, ins: list[Any]) -> np.ndarray:
            return np.array(ins[0])


_register_sample_ops()

from ascendir.ge.es.all import Const, Transpose  # noqa: E402
from ascendir.ge.es.custom import AddCustom  # noqa: E402
from ascendir.ge.es.math import GEMM, Add, Concat, ConcatV2, Identity, MatMul, Split  # noqa: E402
from ascendir.ge.es.math import TensorMove  # noqa: E402
from ascendir.ge.es.nn import BatchMatMulV2, Conv2D, MaxPool, Relu  # noqa: E402


def _types(g: Graph | air.Graph) -> list[str]:
    ag = g.air if isinstance(g, Graph) else g
    return [n.type for n in ag.nodes]


def _random_feeds(g: air.Graph, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for n in g.nodes:
        if n.type == "Data":
            d = n.op_desc.output_desc(0)
            feeds[n.name] = rng.standard_normal(list(d.shape)).astype(d.dtype.to_numpy())
    return feeds


def _assert_same(before: air.Graph, after: air.Graph, rtol: float = 1e-5) -> None:
    feeds = _random_feeds(before)
    want = list(air.evaluate(before, feeds).values())
    got = list(air.evaluate(after, feeds).values())
    assert len(want) == len(got)
    for w, r in zip(want, got, strict=True):
        assert w.shape == r.shape and w.dtype == r.dtype
        np.testing.assert_allclose(r, w, rtol=rtol, atol=rtol)


def _run_sample(g: Graph, **kwargs: Any) -> tuple[air.Graph, list[Any]]:
    before = g.air.copy()
    runs = run_passes(g, **kwargs)
    return before, runs


# --- samples 1-3: MatMul + Add -> GEMM ----------------------------------------------------

def _require(*pairs: tuple[str, Any]) -> None:
    missing = [name for name, obj in pairs if obj is None]
    if missing:
        raise RuntimeError("ES API not found: " + ", ".join(missing))


def _define_fuse_matmul_add_pass() -> type:
    # pattern_base_pass/1: two @pattern methods, expression-style replacement.
    @register_fusion_pass(name="PythonFuseMatMulAndAddPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonFuseMatMulAndAddPass(PatternFusionPass):
        @pattern
        def matmul_add(self, inputs):  # type: ignore[no-untyped-def]
            _require(("MatMul", MatMul), ("GEMM", GEMM))
            a, b, c = inputs[:3]
            return MatMul(a, b) + c

        @pattern
        def batch_matmul_add(self, inputs):  # type: ignore[no-untyped-def]
            _require(("BatchMatMulV2", BatchMatMulV2), ("GEMM", GEMM))
            a, b, c = inputs[:3]
            return BatchMatMulV2(a, b) + c

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            r_a, r_b, r_c = inputs[:3]
            return GEMM(r_a, r_b, r_c, 1.0, 1.0)

    return PythonFuseMatMulAndAddPass


def _matmul_add_graph(mm: Any, dtype: DataType = DataType.DT_FLOAT) -> Graph:
    # cpp/data/torch_forward.py: add(matmul(x[2,3], y[3,2]), z[2,2]).
    b = GraphBuilder("matmul_add")
    x = b.create_input(0, data_type=dtype, shape=[2, 3])
    y = b.create_input(1, data_type=dtype, shape=[3, 2])
    z = b.create_input(2, data_type=dtype, shape=[2, 2])
    return b.build_and_reset([Add(mm(x, y), z)])


@pytest.mark.parametrize("mm", [MatMul, BatchMatMulV2])
def test_sample1_fuse_matmul_add_to_gemm(mm: Any) -> None:
    _define_fuse_matmul_add_pass()
    assert [d["pass_name"] for d in get_registered_pass_dicts()] == ["PythonFuseMatMulAndAddPass"]
    g = _matmul_add_graph(mm)
    before, runs = _run_sample(g, verify=True)
    assert [(r.name, r.rewrites) for r in runs] == [("PythonFuseMatMulAndAddPass", 1)]
    # The C++ twin: MatMul + Add -> GEMM(a, b, c, alpha=1, beta=1).
    assert sorted(_types(g)) == sorted(["Data", "Data", "Data", "Const", "Const", "GEMM",
                                        "NetOutput"])
    gemm = next(n for n in g.get_all_nodes() if n.type == "GEMM")
    ins = [gemm.get_in_data_nodes_and_port_indexes(i)[0].name for i in range(3)]
    assert ins == ["input_0", "input_1", "input_2"]
    assert gemm.get_output_desc(0).get_shape() == [2, 2]
    _assert_same(before, g.air)


def test_sample2_capture_tensor_pass_rewrites_float_only() -> None:
    # pattern_base_pass/2: patterns() with create_pattern + capture_tensor, a
    # meet_requirements reading the captured Add's input dtypes, a replacement graph read
    # from the captured MatMul's attributes.
    @register_fusion_pass(name="PythonFuseMatMulAndAddCaptureTensorPass",
                          stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonFuseMatMulAndAddCaptureTensorPass(PatternFusionPass):
        def patterns(self):  # type: ignore[no-untyped-def]
            pattern_builder0 = GraphBuilder("pattern0")
            a0, b0, c0 = pattern_builder0.create_inputs(3)
            matmul0 = MatMul(a0, b0)
            add0 = Add(matmul0, c0)
            pat0 = create_pattern(pattern_builder0.build_and_reset([add0]))
            pat0.capture_tensor(matmul0).capture_tensor(add0)
            pattern_builder1 = GraphBuilder("pattern1")
            a1, b1, c1 = pattern_builder1.create_inputs(3)
            matmul1 = BatchMatMulV2(a1, b1)
            add1 = Add(matmul1, c1)
            pat1 = create_pattern(pattern_builder1.build_and_reset([add1]))
            pat1.capture_tensor(matmul1).capture_tensor(add1)
            return [pat0, pat1]

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            add_node = match_result.get_captured_tensor(1).node
            return (add_node.get_input_desc(0).get_data_type() == DataType.DT_FLOAT
                    and add_node.get_input_desc(1).get_data_type() == DataType.DT_FLOAT)

        def replacement(self, match_result):  # type: ignore[no-untyped-def]
            mnode = match_result.get_captured_tensor(0).node
            transpose_a = bool(mnode.get_attr("transpose_x1"))
            transpose_b = bool(mnode.get_attr("transpose_x2"))
            replace_builder = GraphBuilder("replacement")
            r_a, r_b, r_c = replace_builder.create_inputs(3)
            alpha_const = replace_builder.create_scalar_float(1.0)
            beta_const = replace_builder.create_scalar_float(1.0)
            gemm = GEMM(r_a, r_b, r_c, alpha_const, beta_const,
                        transpose_a=transpose_a, transpose_b=transpose_b)
            return create_replacement(replace_builder.build_and_reset([gemm]))

    g32 = _matmul_add_graph(MatMul)
    before, runs = _run_sample(g32, verify=True)
    assert runs[0].rewrites == 1 and "GEMM" in _types(g32) and "MatMul" not in _types(g32)
    _assert_same(before, g32.air)
    # torch_forward_2.py: float16 inputs; meet_requirements refuses, the graph stays.
    g16 = _matmul_add_graph(BatchMatMulV2, DataType.DT_FLOAT16)
    types = _types(g16)
    runs = run_passes(g16)
    assert runs[0].rewrites == 0 and _types(g16) == types


def _matcher_config_graph(transpose_x1: bool, values: list[list[float]]) -> Graph:
    # cpp/data/es_forward_{1,2,3}.py: Add(MatMul(x, y), Const([[0.1, 0.1], [0.1, 0.1]])).
    builder = GraphBuilder("MakeMatmulAddGraph")
    input1 = builder.create_input(0, shape=[2, 2])
    input2 = builder.create_input(1, shape=[2, 2])
    data = np.array(values, dtype=np.float32)
    input3 = Tensor(data.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 2])
    mm = MatMul(input1, input2, None, transpose_x1=transpose_x1, transpose_x2=False)
    return builder.build_and_reset([Add(mm, Const(builder, value=input3))])


def test_sample3_matcher_config_compares_attributes_and_constants() -> None:
    # pattern_base_pass/3: enable_const_value_match + enable_ir_attr_match.
    @register_fusion_pass(name="PythonMatmulAddFusionPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonMatmulAddFusionPass(PatternFusionPass):
        def __init__(self):  # type: ignore[no-untyped-def]
            super().__init__(PatternMatcherConfigBuilder().enable_const_value_match()
                             .enable_ir_attr_match().build())

        @pattern
        def matmul_add(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            return MatMul(x, y, None, transpose_x1=False, transpose_x2=False) + [
                [0.1, 0.1], [0.1, 0.1]]

        @pattern
        def batch_matmul_add(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            return BatchMatMulV2(x, y) + [[0.1, 0.1], [0.1, 0.1]]

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            r_a, r_b = inputs[:2]
            return GEMM(r_a, r_b, [[0.1, 0.1], [0.1, 0.1]], 1.0, 1.0)

    g1 = _matcher_config_graph(False, [[0.1, 0.1], [0.1, 0.1]])
    before, runs = _run_sample(g1, verify=True)
    assert runs[0].rewrites == 1 and "GEMM" in _types(g1) and "MatMul" not in _types(g1)
    _assert_same(before, g1.air)
    # es_forward_2: transpose_x1=True differs from the pattern's attribute: no match.
    g2 = _matcher_config_graph(True, [[0.1, 0.1], [0.1, 0.1]])
    assert run_passes(g2)[0].rewrites == 0 and "MatMul" in _types(g2)
    # es_forward_3: the constant's values differ: no match.
    g3 = _matcher_config_graph(False, [[0.1, 0.1], [0.2, 0.2]])
    assert run_passes(g3)[0].rewrites == 0 and "MatMul" in _types(g3)


def test_default_matcher_config_ignores_attributes_and_constant_values() -> None:
    # Without the config (GE's default) the same pattern matches all three graphs.
    seen: list[list[str]] = []

    @register_fusion_pass(name="DefaultConfig", stage=PassStage.BEFORE_INFER_SHAPE)
    class DefaultConfig(PatternFusionPass):
        @pattern
        def matmul_add(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            return MatMul(x, y, None, transpose_x1=False, transpose_x2=False) + [
                [0.1, 0.1], [0.1, 0.1]]

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            seen.append([n.type for n in match_result.get_matched_nodes()])
            return False  # count the matches only

    for t, v in ((False, 0.1), (True, 0.1), (False, 0.2)):
        run_passes(_matcher_config_graph(t, [[0.1, 0.1], [v, v]]))
    assert seen == [["MatMul", "Const", "Add"]] * 3
