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
from ascendir.ge.es.math import (  # noqa: E402
    GEMM,
    Add,
    Concat,
    ConcatV2,
    Identity,
    MatMul,
    Split,
    TensorMove,  # noqa: E402
)
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


# --- samples 4-5: Add(x, 0) -> x ------------------------------------------------------------

def _extract_scalar_value(value: Any) -> Any:
    while isinstance(value, list):
        if len(value) != 1:
            return None
        value = value[0]
    return value


def _is_zero(tensor: Tensor) -> bool:
    scalar_value = _extract_scalar_value(tensor.data)
    if scalar_value is None:
        return False
    if tensor.data_type == DataType.DT_FLOAT:
        return fabs(float(scalar_value)) < 1e-6
    if tensor.data_type == DataType.DT_FLOAT16:
        return fabs(float(scalar_value)) < 1e-3
    if tensor.data_type == DataType.DT_INT32:
        return int(scalar_value) == 0
    return False


def _define_add_zero_pass() -> type:
    # pattern_base_pass/4 python_add_zero_pass.py: GE's default config (any Const), the
    # value checked in meet_requirements.
    @register_fusion_pass(name="PythonAddZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonAddZeroPass(PatternFusionPass):
        @pattern
        def add_zero(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + 0

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            captured_input = match_result.get_captured_tensor(0)
            for node in match_result.get_matched_nodes():
                if node.type != "Const":
                    continue
                const_tensor = node.get_attr("value")
                is_zero = _is_zero(const_tensor)
                print(f"[PythonAddZeroPass] matched={match_result.get_pattern_graph_name()} "
                      f"captured={captured_input.node.name}:{captured_input.index} "
                      f"const_dtype={const_tensor.data_type.name} zero={is_zero}")
                return is_zero
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0]

    return PythonAddZeroPass


def _add_zero_graph() -> Graph:
    # cpp/data/torch_forward.py: add(add(x, 0.0), y), x and y [2, 2]; and an Add(y, 1.0)
    # the pass must leave.
    b = GraphBuilder("add_zero")
    x = b.create_input(0, shape=[2, 2])
    y = b.create_input(1, shape=[2, 2])
    return b.build_and_reset([Add(Add(x, 0.0), y) + 1.0])


def test_sample4_add_zero_pass_removes_add_of_zero(capsys: pytest.CaptureFixture[str]) -> None:
    _define_add_zero_pass()
    g = _add_zero_graph()
    before, runs = _run_sample(g, verify=True)
    assert runs[0].rewrites == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "[PythonAddZeroPass] matched=PythonAddZeroPass_add_zero_pattern captured=input_0:0 "
        "const_dtype=DT_FLOAT zero=True",
        "[PythonAddZeroPass] matched=PythonAddZeroPass_add_zero_pattern captured=Add_4:0 "
        "const_dtype=DT_FLOAT zero=False"]
    # The C++ twin: Add(x, 0) -> x; x feeds the second Add directly.
    adds = [n for n in g.get_all_nodes() if n.type == "Add"]
    assert len(adds) == 2
    assert adds[0].get_in_data_nodes_and_port_indexes(0)[0].name == "input_0"
    assert _types(g).count("Const") == 1
    _assert_same(before, g.air)


def test_sample4_const_value_match_pass_matches_zero_only(
        capsys: pytest.CaptureFixture[str]) -> None:
    # python_add_zero_pass_const_value_match.py: the matcher compares the Const's value, so
    # meet_requirements sees only the Add of 0.0.
    @register_fusion_pass(name="PythonAddZeroConstValueMatchPass",
                          stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonAddZeroConstValueMatchPass(PatternFusionPass):
        def __init__(self):  # type: ignore[no-untyped-def]
            super().__init__(PatternMatcherConfigBuilder().enable_const_value_match().build())

        @pattern
        def add_zero(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + 0.0

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            captured_input = match_result.get_captured_tensor(0)
            print(f"[PythonAddZeroConstValueMatchPass] "
                  f"matched={match_result.get_pattern_graph_name()} "
                  f"captured={captured_input.node.name}:{captured_input.index}")
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0]

    g = _add_zero_graph()
    before, runs = _run_sample(g, verify=True)
    assert runs[0].rewrites == 1
    assert capsys.readouterr().out.splitlines() == [
        "[PythonAddZeroConstValueMatchPass] matched=PythonAddZeroConstValueMatchPass_add_zero"
        "_pattern captured=input_0:0"]
    assert _types(g).count("Add") == 2
    _assert_same(before, g.air)
    # GE compares the whole constant: a [2, 2] tensor of zeros is not the scalar 0.0.
    b = GraphBuilder("zeros")
    x = b.create_input(0, shape=[2, 2])
    wide = b.build_and_reset([Add(x, [[0.0, 0.0], [0.0, 0.0]])])
    assert run_passes(wide)[0].rewrites == 0 and "Add" in _types(wide)


def test_sample5_add_custom_zero_pass() -> None:
    # pattern_base_pass/5: AddCustom(AddCustom(x, Identity(0)), y) and its TensorMove
    # variant -> AddCustom(x, y); the custom op from ascendir.ge.es.custom.
    @register_fusion_pass(name="PythonAddCustomZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonAddCustomZeroPass(PatternFusionPass):
        @pattern
        def addcustom_zero(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            builder = x.get_owner_builder()
            const_tensor = builder.create_const_float(0.0)
            identity_tensor = Identity(const_tensor)
            add_zero_tensor = AddCustom(x, identity_tensor)
            return AddCustom(add_zero_tensor, y)

        @pattern
        def addcustom_zero_with_tensormove(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            builder = x.get_owner_builder()
            const_tensor = builder.create_const_float(0.0)
            moved_const_tensor = TensorMove(Identity(const_tensor))
            add_zero_tensor = AddCustom(x, moved_const_tensor)
            return AddCustom(add_zero_tensor, y)

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            for node in match_result.get_matched_nodes():
                if node.type == "Const" and not _is_zero(node.get_attr("value")):
                    return False
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            return AddCustom(x, y)

    def target(move: bool, zero: float) -> Graph:
        # cpp/data/torch_forward.py: float16 x, y [8, 2048] (here [8, 16]) and a float16 zero.
        b = GraphBuilder("addcustom")
        x = b.create_input(0, data_type=DataType.DT_FLOAT16, shape=[8, 16])
        y = b.create_input(1, data_type=DataType.DT_FLOAT16, shape=[8, 16])
        c = Const(b, value=Tensor([zero], data_type=DataType.DT_FLOAT16, shape=[]))
        c = TensorMove(Identity(c)) if move else Identity(c)
        return b.build_and_reset([AddCustom(AddCustom(x, c), y)])

    for move in (False, True):
        g = target(move, 0.0)
        before, runs = _run_sample(g, verify=True)
        assert runs[0].rewrites == 1
        assert _types(g) == ["Data", "Data", "AddCustom", "NetOutput"]
        add = next(n for n in g.get_all_nodes() if n.type == "AddCustom")
        assert [add.get_in_data_nodes_and_port_indexes(i)[0].name for i in (0, 1)] == [
            "input_0", "input_1"]
        _assert_same(before, g.air, rtol=1e-3)
    nonzero = target(False, 2.0)
    types = _types(nonzero)
    assert run_passes(nonzero)[0].rewrites == 0 and _types(nonzero) == types


# --- sample 6: grouped Conv2D -> Split + Conv2D + Concat (DecomposePass) --------------------

def test_sample6_decompose_grouped_conv() -> None:
    @register_decompose_pass(name="PythonDecomposeGroupedConvToSplitedPass",
                             stage=PassStage.AFTER_INFER_SHAPE, op_types=["Conv2D"])
    class PythonDecomposeGroupedConvToSplitedPass(DecomposePass):
        def meet_requirements(self, node: Node) -> bool:
            return node.get_attr("groups") != 1 and node.get_attr("data_format") == "NCHW"

        def replacement(self, node: Node) -> Graph:
            groups = node.get_attr("groups")
            strides = node.get_attr("strides")
            pads = node.get_attr("pads")
            dilations = node.get_attr("dilations")
            builder = GraphBuilder("replacement")
            input_tensor, filter_tensor = builder.create_inputs(2)
            input_slices = Split(1, input_tensor, groups, num_split=groups)
            filter_slices = Split(0, filter_tensor, groups, num_split=groups)
            conv_outputs: list[TensorHolder] = []
            for input_slice, filter_slice in zip(input_slices, filter_slices, strict=True):
                r_conv = Conv2D(input_slice, filter_slice, None, None, strides=strides,
                                pads=pads, dilations=dilations, groups=1, data_format="NCHW")
                desc = TensorDesc([], Format.FORMAT_NCHW, DataType.DT_FLOAT)
                desc.set_origin_format(Format.FORMAT_NCHW)
                conv_node = r_conv._get_node_snapshot()
                conv_node.update_input_desc(0, desc)
                conv_node.update_input_desc(1, desc)
                conv_node.update_output_desc(0, desc)
                conv_outputs.append(r_conv)
            result = Concat(1, conv_outputs, N=len(conv_outputs))
            replacement_graph = builder.build_and_reset([result])
            input_shapes = [node.get_input_desc(i).get_shape()
                            for i in range(node.get_inputs_size())]
            GeUtils.infer_shape(replacement_graph, input_shapes)
            return replacement_graph

    # cpp/data/torch_forward.py: Conv2d(3, 3, 3, stride 3, groups=3, no bias) on
    # [1, 3, 9, 9], then MaxPool2d(3, 3).
    b = GraphBuilder("grouped_conv")
    x = b.create_input(0, format=Format.FORMAT_NCHW, shape=[1, 3, 9, 9])
    w = b.create_input(1, format=Format.FORMAT_NCHW, shape=[3, 1, 3, 3])
    y = Conv2D(x, w, None, None, strides=[1, 1, 3, 3], pads=[0, 0, 0, 0], groups=3,
               data_format="NCHW")
    g = b.build_and_reset([MaxPool(y, ksize=[1, 1, 3, 3], strides=[1, 1, 3, 3],
                                   padding="VALID", data_format="NCHW")])
    before, runs = _run_sample(g, stage=PassStage.AFTER_INFER_SHAPE, verify=True)
    assert [(r.kind, r.rewrites) for r in runs] == [("decompose", 1)]
    # The C++ twin: Split(x) and Split(filter) into 3, a Conv2D of groups 1 each, Concat.
    types = _types(g)
    assert types.count("Conv2D") == 3 and types.count("Split") == 2
    assert types.count("Concat") == 1 and "MaxPool" in types
    assert all(n.get_attr("groups") == 1 for n in g.get_all_nodes() if n.type == "Conv2D")
    pool = next(n for n in g.get_all_nodes() if n.type == "MaxPool")
    assert pool.get_in_data_nodes_and_port_indexes(0)[0].type == "Concat"
    assert pool.get_output_desc(0).get_shape() == [1, 3, 1, 1]
    _assert_same(before, g.air, rtol=1e-4)


# --- sample 7 (graph_base_pass/2): ConcatV2 -> Relu becomes Relu each -> ConcatV2 -----------

def test_sample7_move_relu_before_concat() -> None:
    @register_fusion_pass(name="PythonMoveReluBeforeConcatPass",
                          stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonMoveReluBeforeConcatPass(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> bool:
            for concat_node in self._concats(graph):
                replacement = self._replacement(concat_node)
                boundary = self._boundary(concat_node)
                SubgraphRewriter.replace(boundary, replacement, context=context)
            return True

        @staticmethod
        def _concats(graph: Graph) -> list[Node]:
            out = []
            for node in graph.get_direct_nodes():
                if node.type != "ConcatV2" or node.get_outputs_size() != 1:
                    continue
                users = node.get_out_data_nodes_and_port_indexes(0)
                if users and users[0][0].type == "Relu":
                    out.append(node)
            return out

        @staticmethod
        def _replacement(concat_node: Node) -> Graph:
            builder = GraphBuilder("replacement")
            input_size = concat_node.get_inputs_size()
            relued = [Relu(builder.create_input(idx)) for idx in range(input_size - 1)]
            concat_dim = builder.create_input(input_size - 1)
            out = ConcatV2(relued, concat_dim, N=len(relued))
            return builder.build_and_reset([out])

        @staticmethod
        def _boundary(concat_node: Node) -> SubgraphBoundary:
            boundary = SubgraphBoundary()
            for input_idx in range(concat_node.get_inputs_size()):
                subgraph_input = SubgraphInput()
                subgraph_input.add_input(concat_node, int(input_idx))
                boundary.add_input(int(input_idx), subgraph_input)
            relu_node, _ = concat_node.get_out_data_nodes_and_port_indexes(0)[0]
            boundary.add_output(0, SubgraphOutput(relu_node, 0))
            return boundary

    # cpp/data/es_gen_air.py: ConcatV2 of [8,64,128], [2,64,128], [6,64,128] on dim 0, Relu.
    builder = GraphBuilder("MakeConcatV2FedtoReluGraph")
    t1 = builder.create_input(index=0, name="tensor1", data_type=DataType.DT_FLOAT,
                              shape=[8, 64, 128])
    t2 = builder.create_input(index=1, name="tensor2", data_type=DataType.DT_FLOAT,
                              shape=[2, 64, 128])
    t3 = builder.create_input(index=2, name="tensor3", data_type=DataType.DT_FLOAT,
                              shape=[6, 64, 128])
    builder.set_graph_output(Relu(ConcatV2([t1, t2, t3], 0, N=3)), 0)
    g = builder.build_and_reset()
    before, runs = _run_sample(g, verify=True)
    assert runs[0].kind == "fusion_base" and runs[0].rewrites == 1
    # The C++ twin: a Relu on each input, then ConcatV2 on the same axis constant.
    types = _types(g)
    assert types.count("Relu") == 3 and types.count("ConcatV2") == 1
    concat = next(n for n in g.get_all_nodes() if n.type == "ConcatV2")
    assert [concat.get_in_data_nodes_and_port_indexes(i)[0].type for i in range(4)] == [
        "Relu", "Relu", "Relu", "Const"]
    assert concat.get_output_desc(0).get_shape() == [16, 64, 128]
    _assert_same(before, g.air)


# --- sample 8 (graph_base_pass/3): Conv2D NCHW -> NHWC, the Transpose pair removed --------

def test_sample8_modify_conv_data_format() -> None:
    perm0, perm1 = [0, 2, 3, 1], [0, 3, 1, 2]

    def read_perm(transpose: Node) -> list[int] | None:
        perm_node, _ = transpose.get_in_data_nodes_and_port_indexes(1)
        if perm_node.type not in ("Const", "Constant"):
            return None
        const_tensor = perm_node.get_attr("value")
        if const_tensor.data_type not in (DataType.DT_INT32, DataType.DT_INT64):
            return None
        return [int(v) for v in np.asarray(const_tensor.data).reshape(-1)]

    def remove_transpose(graph: Graph, transpose_node: Node, context: PassContext) -> bool:
        result = can_fuse([transpose_node])
        if not result.ok:
            context.set_error_message(result.reason)
            return False
        data_node, data_out_idx = transpose_node.get_in_data_nodes_and_port_indexes(0)
        perm_node, perm_out_idx = transpose_node.get_in_data_nodes_and_port_indexes(1)
        consumers = list(transpose_node.get_out_data_nodes_and_port_indexes(0))
        graph.remove_edge(data_node, data_out_idx, transpose_node, 0)
        graph.remove_edge(perm_node, perm_out_idx, transpose_node, 1)
        for out_node, out_in_idx in consumers:
            graph.remove_edge(transpose_node, 0, out_node, out_in_idx)
            graph.add_data_edge(data_node, data_out_idx, out_node, out_in_idx)
        report_fuse([transpose_node], [], context)
        graph.remove_node(perm_node)
        graph.remove_node(transpose_node)
        return True

    @register_fusion_pass(name="PythonConvTransFormatPass", stage=PassStage.BEFORE_INFER_SHAPE)
    class PythonConvTransFormatPass(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> bool:
            convs = [n for n in graph.get_direct_nodes()
                     if n.type in ("Conv2D", "Conv2DV2") and n.get_attr("data_format") == "NCHW"]
            for node in convs:
                node.set_attr("data_format", "NHWC")
                queue = [n for i in range(node.get_outputs_size())
                         for n, _ in node.get_out_data_nodes_and_port_indexes(i)]
                count = 0
                while queue and count < 2:
                    cur = queue.pop(0)
                    for i in range(cur.get_outputs_size()):
                        queue.extend(n for n, _ in cur.get_out_data_nodes_and_port_indexes(i))
                    if cur.type != "Transpose":
                        continue
                    if read_perm(cur) != (perm0 if count == 0 else perm1):
                        continue
                    if not remove_transpose(graph, cur, context):
                        raise RuntimeError("DeleteTransposePairBehindIfExist failed: "
                                           + context.get_error_message())
                    count += 1
            return True

    # cpp/data/torch_forward.py: Conv2d(6, 6, 3, stride 3, no bias) on [3, 6, 9, 9], permute
    # (0, 2, 3, 1), add 1.0, permute (0, 3, 1, 2).
    b = GraphBuilder("conv_format")
    x = b.create_input(0, format=Format.FORMAT_NCHW, shape=[3, 6, 9, 9])
    w = b.create_input(1, format=Format.FORMAT_NCHW, shape=[6, 6, 3, 3])
    y = Conv2D(x, w, None, None, strides=[1, 1, 3, 3], pads=[0, 0, 0, 0], data_format="NCHW")
    g = b.build_and_reset([Transpose(Transpose(y, perm0) + 1.0, perm1)])
    before, runs = _run_sample(g)
    assert runs[0].name == "PythonConvTransFormatPass"
    # The C++ twin: the Conv2D's data_format becomes NHWC and the Transpose pair goes.
    assert _types(g) == ["Data", "Data", "Conv2D", "Const", "Add", "NetOutput"]
    conv = next(n for n in g.get_all_nodes() if n.type == "Conv2D")
    assert conv.get_attr("data_format") == "NHWC"
    # data_format is a layout tag GE acts on when it infers formats (inserting TransData);
    # ascendir's evaluator reads it literally, so the numbers are compared with the tag read
    # as the tensors' own NCHW layout: removing the pair changed nothing.
    check = g.air.copy()
    check.node(conv.name).op_desc.attrs["data_format"] = "NCHW"
    _assert_same(before, check, rtol=1e-4)


# --- GE's documented rules ------------------------------------------------------------------

def test_register_fusion_pass_validates_and_describes() -> None:
    class NotAPass:
        pass

    with pytest.raises(TypeError, match="FusionBasePass subclass"):
        register_fusion_pass(name="x", stage=PassStage.BEFORE_INFER_SHAPE)(NotAPass)
    with pytest.raises(ValueError, match="stage must be a PassStage"):
        register_fusion_pass(name="x", stage="Later")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pass name must be a string"):
        register_fusion_pass(name=3, stage=PassStage.BEFORE_INFER_SHAPE)  # type: ignore[arg-type]

    @register_fusion_pass(name="P", stage=PassStage.AFTER_INFER_SHAPE)
    class P(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> None:
            return None

    (d,) = get_registered_passes()
    assert d.descriptor_key == f"{__name__}:P:P" and d.kind == "fusion_base"
    assert d.to_bridge_dict()["stage"] == "AfterInferShape"
    assert P.__ge_pass_descriptor__ is d  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="descriptor_key already exists"):
        register_fusion_pass(name="P", stage=PassStage.BEFORE_INFER_SHAPE)(P)

    class Q(FusionBasePass):
        pass

    with pytest.raises(ValueError, match="python pass name already exists: P"):
        register_fusion_pass(name="P", stage=PassStage.BEFORE_INFER_SHAPE)(Q)
    assert issubclass(PassStage, str)
    assert PassStage("AfterInferShape") is PassStage.AFTER_INFER_SHAPE
    assert [s.name for s in PassStage] == ["BEFORE_INFER_SHAPE", "AFTER_INFER_SHAPE",
                                           "AFTER_BUILTIN_FUSION_PASS",
                                           "AFTER_ORIGIN_GRAPH_OPTIMIZE"]


def test_register_decompose_pass_validates_op_types() -> None:
    s = PassStage.AFTER_INFER_SHAPE
    with pytest.raises(TypeError, match="iterable of strings"):
        register_decompose_pass(name="d", stage=s, op_types="Conv2D")
    with pytest.raises(ValueError, match="at least one op type"):
        register_decompose_pass(name="d", stage=s, op_types=[])
    with pytest.raises(TypeError, match="non-empty strings"):
        register_decompose_pass(name="d", stage=s, op_types=["Conv2D", ""])

    class F(FusionBasePass):
        pass

    with pytest.raises(TypeError, match="DecomposePass subclass"):
        register_decompose_pass(name="d", stage=s, op_types=["Relu"])(F)

    @register_decompose_pass(name="d", stage=s, op_types=("Relu",))
    class D(DecomposePass):
        pass

    assert D.op_types == ["Relu"] and get_registered_pass_dicts()[0]["kind"] == "decompose"


def test_overriding_run_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="overrides run"):
        class Bad(PatternFusionPass):
            def run(self, graph: Graph, context: PassContext) -> None:
                return None
    with pytest.raises(TypeError, match="overrides run"):
        class BadD(DecomposePass):
            def run(self, graph: Graph, context: PassContext) -> None:
                return None
    with pytest.raises(TypeError, match="cannot combine @pattern"):
        class Both(PatternFusionPass):
            @pattern
            def p(self, inputs):  # type: ignore[no-untyped-def]
                return inputs[0]

            def patterns(self):  # type: ignore[no-untyped-def]
                return []
    with pytest.raises(TypeError, match=r"method\(self, inputs\)"):
        class Arity(PatternFusionPass):
            @pattern
            def p(self, inputs, extra):  # type: ignore[no-untyped-def]
                return inputs[0]


def test_pattern_inputs_rules() -> None:
    seen: list[str] = []

    @register_fusion_pass(name="Inputs", stage=PassStage.BEFORE_INFER_SHAPE)
    class Inputs(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            for bad, exc in ((lambda: list(inputs), TypeError), (lambda: inputs[-1], ValueError),
                             (lambda: inputs[1:], ValueError), (lambda: inputs[::2], ValueError),
                             (lambda: inputs["a"], TypeError)):
                with pytest.raises(exc):
                    bad()
                seen.append(exc.__name__)
            return Relu(inputs[0])

    run_passes(_add_zero_graph())
    assert seen == ["TypeError", "ValueError", "ValueError", "ValueError", "TypeError"]


def test_meet_requirements_false_skips_and_match_result_is_scoped() -> None:
    kept: list[Any] = []

    @register_fusion_pass(name="Skip", stage=PassStage.BEFORE_INFER_SHAPE)
    class Skip(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + inputs[1]

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            kept.append(match_result)
            with pytest.raises(RuntimeError, match="capture_index=9"):
                match_result.get_captured_tensor(9)
            with pytest.raises(TypeError):
                match_result.get_captured_tensor("0")
            assert [io.node.name for io in (match_result.get_captured_tensor(i)
                                            for i in range(3))][:2] == ["input_0", "input_1"]
            return False

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            raise AssertionError("replacement is not called for a skipped match")

    b = GraphBuilder("g")
    x, y = b.create_input(0, shape=[2]), b.create_input(1, shape=[2])
    g = b.build_and_reset([x + y])
    types = _types(g)
    assert run_passes(g)[0].rewrites == 0 and _types(g) == types
    assert len(kept) == 1
    with pytest.raises(RuntimeError, match="no longer valid"):
        kept[0].get_matched_nodes()


def test_stage_order_and_single_stage() -> None:
    calls: list[str] = []
    for stage in reversed(list(PassStage)):
        def run(self: Any, graph: Graph, context: PassContext, s: PassStage = stage) -> int:
            calls.append(f"{s.name}:{context.get_pass_name()}")
            return 0

        cls = type(f"P_{stage.name}", (FusionBasePass,), {"run": run})
        register_fusion_pass(name=f"pass_{stage.value}", stage=stage)(cls)
    g = _add_zero_graph()
    runs = run_passes(g)
    assert [r.stage for r in runs] == list(PassStage)
    assert calls == [f"{s.name}:pass_{s.value}" for s in PassStage]
    calls.clear()
    run_passes(g.air, PassStage.AFTER_BUILTIN_FUSION_PASS)
    assert calls == ["AFTER_BUILTIN_FUSION_PASS:pass_AfterBuiltinFusionPass"]
    with pytest.raises(TypeError, match="ge.graph.Graph or an ascendir.Graph"):
        run_passes("graph")  # type: ignore[arg-type]


def test_run_status_and_context() -> None:
    @register_fusion_pass(name="Fails", stage=PassStage.BEFORE_INFER_SHAPE)
    class Fails(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> bool:
            assert context.get_option_value("ge.opt") == "1"
            with pytest.raises(RuntimeError, match="key=missing"):
                context.get_option_value("missing")
            context.set_error_message("invariant violated")
            return False

    with pytest.raises(GeError, match="pass 'Fails' failed .*invariant violated"):
        run_passes(_add_zero_graph(), options={"ge.opt": "1"})
    clear_registered_passes()

    @register_fusion_pass(name="Odd", stage=PassStage.BEFORE_INFER_SHAPE)
    class Odd(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> Any:
            return "done"

    with pytest.raises(TypeError, match="None, a bool or an int"):
        run_passes(_add_zero_graph())


def test_replacement_must_return_a_graph_and_patterns_have_one_output() -> None:
    @register_fusion_pass(name="NoGraph", stage=PassStage.BEFORE_INFER_SHAPE)
    class NoGraph(PatternFusionPass):
        def patterns(self):  # type: ignore[no-untyped-def]
            b = GraphBuilder("p")
            return [b.build_and_reset([Relu(b.create_input(0))])]

        def replacement(self, match_result):  # type: ignore[no-untyped-def]
            return None

    b = GraphBuilder("g")
    g = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    types = _types(g)
    with pytest.raises(TypeError, match="must return ge.graph.Graph, got NoneType"):
        run_passes(g)
    assert _types(g) == types
    clear_registered_passes()

    @register_fusion_pass(name="TwoOut", stage=PassStage.BEFORE_INFER_SHAPE)
    class TwoOut(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            r = Relu(inputs[0])
            return [r, Relu(r)]

    with pytest.raises(ValueError, match="has 2 outputs"):
        run_passes(g)


def test_verify_rejects_a_wrong_replacement_and_leaves_the_graph() -> None:
    @register_fusion_pass(name="WrongAddZero", stage=PassStage.BEFORE_INFER_SHAPE)
    class WrongAddZero(PatternFusionPass):
        @pattern
        def add_zero(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + 0

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return Relu(inputs[0])  # not x: negative values change

    g = _add_zero_graph()
    before = g.air.to_bytes()
    with pytest.raises(VerificationError) as info:
        run_passes(g, verify=True)
    msg = str(info.value)
    assert "pass 'WrongAddZero'" in msg and "WrongAddZero_add_zero_pattern" in msg
    assert "matched at 'Add_3'" in msg and "changes the result" in msg
    assert g.air.to_bytes() == before
    # Without verify the (wrong) rewrite is made: verify is what caught it.
    assert run_passes(g)[0].rewrites == 2 and "Relu" in _types(g)


def test_verify_checks_graph_level_rewrites_too() -> None:
    @register_fusion_pass(name="WrongMove", stage=PassStage.BEFORE_INFER_SHAPE)
    class WrongMove(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> None:
            relu = next(n for n in graph.get_all_nodes() if n.type == "Relu")
            boundary = SubgraphBoundary()
            boundary.add_input(0, SubgraphInput([(relu, 0)]))
            boundary.add_output(0, SubgraphOutput(relu, 0))
            rb = GraphBuilder("r")
            SubgraphRewriter.replace(boundary, rb.build_and_reset([rb.create_input(0) * 2.0]))

    b = GraphBuilder("g")
    g = b.build_and_reset([Relu(b.create_input(0, shape=[4]))])
    before = g.air.to_bytes()
    with pytest.raises(VerificationError, match="pass 'WrongMove', subgraph at 'Relu_1'"):
        run_passes(g, verify=True)
    assert g.air.to_bytes() == before


def test_subgraph_rewriter_status_and_argument_rules() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[4])
    g = b.build_and_reset([Relu(Relu(x))])
    r1, r2 = [n for n in g.get_all_nodes() if n.type == "Relu"]
    rb = GraphBuilder("r")
    repl = rb.build_and_reset([Relu(rb.create_input(0))])
    with pytest.raises(TypeError):
        SubgraphRewriter.replace("boundary", repl)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SubgraphInput([(r1, "0")])  # type: ignore[list-item]
    with pytest.raises(RuntimeError, match="2-tuples"):
        SubgraphInput([(r1,)])  # type: ignore[list-item]
    gap = SubgraphBoundary()
    gap.add_input(1, SubgraphInput([(r1, 0)]))
    gap.add_output(0, SubgraphOutput(r2, 0))
    before = g.air.to_bytes()
    assert SubgraphRewriter.replace(gap, repl) == 1 and g.air.to_bytes() == before
    with pytest.raises(ValueError, match="already set"):
        gap.add_input(1, SubgraphInput())
    ok = SubgraphBoundary()
    assert ok.add_input(0, SubgraphInput([(r1, 0)])) == 0
    assert ok.add_output(0, SubgraphOutput(r2, 0)) == 0
    feeds = {"input_0": np.array([-1.0, 2.0, -3.0, 4.0], np.float32)}
    want = list(air.evaluate(g.air, feeds).values())[0]
    assert SubgraphRewriter.replace(ok, repl) == 0
    assert _types(g) == ["Data", "Relu", "NetOutput"]
    np.testing.assert_array_equal(list(air.evaluate(g.air, feeds).values())[0], want)


def test_can_fuse_and_report_fuse() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[4])
    a = Relu(x)
    m = Relu(a)
    c = Add(a, m)
    g = b.build_and_reset([c])
    na, nm, nc = (g.find_node_by_name(t.name) for t in (a, m, c))
    res = can_fuse(iter([na, nm, nc]))
    assert res.ok and res.reason == ""
    with pytest.raises(AttributeError):
        res.ok = False  # type: ignore[misc]
    assert not can_fuse([]).ok and "empty" in can_fuse([]).reason
    # a -> m -> c with m outside: fusing a and c makes a cycle.
    cyc = can_fuse([na, nc])
    assert not cyc.ok and cyc.reason.startswith("NF1002") and repr(nm.name) in cyc.reason
    na.set_attr("_user_stream_label", "stream_a")
    nm.set_attr("_user_stream_label", "stream_b")
    lab = can_fuse([na, nm])
    assert not lab.ok and lab.reason.startswith("AF2002")
    assert "stream_a" in lab.reason and "stream_b" in lab.reason
    b2 = GraphBuilder("h")
    other = b2.build_and_reset([Relu(b2.create_input(0, shape=[4]))])
    diff = can_fuse([na, other.get_all_nodes()[1]])
    assert not diff.ok and "different graphs" in diff.reason
    with pytest.raises(TypeError, match="ge.graph.Node"):
        can_fuse([na, "m"])  # type: ignore[list-item]
    ctx = PassContext("P")
    report_fuse([na, nm], [nc], ctx)
    assert ctx.fuse_reports == [([na.name, nm.name], [nc.name])]
    assert nc.air.attrs["_datadump_original_op_names"] == [na.name, nm.name]
    with pytest.raises(TypeError, match="PassContext"):
        report_fuse([na], [nc], None)  # type: ignore[arg-type]


def test_matcher_config_builder_and_pattern_objects() -> None:
    cfg = PatternMatcherConfigBuilder().build()
    assert not cfg.is_enable_const_value_match() and not cfg.is_enable_ir_attr_match()
    cfg = PatternMatcherConfigBuilder().enable_ir_attr_match().build()
    assert cfg.is_enable_ir_attr_match() and not cfg.is_enable_const_value_match()
    b = GraphBuilder("p")
    x = b.create_input(0)
    r = Relu(x)
    pat = create_pattern(b.build_and_reset([r]))
    assert pat.capture_tensor(r) is pat
    (io,) = pat.get_captured_tensors()
    assert (io.node.name, io.index) == (r.name, 0)
    with pytest.raises(ValueError, match="not in the pattern graph"):
        b2 = GraphBuilder("q")
        pat.capture_tensor(Relu(b2.create_input(0)))
    with pytest.raises(TypeError):
        pat.capture_tensor(3)  # type: ignore[arg-type]
    assert isinstance(pat.release(), int) and not pat.is_valid()
    with pytest.raises(RuntimeError, match="released"):
        pat.capture_tensor(r)
    with pytest.raises(TypeError):
        create_replacement(pat)  # type: ignore[arg-type]


def test_discovery_from_ascend_ge_py_pass_path(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    body = textwrap.dedent('''
        from ascendir.ge.passes import FusionBasePass, PassStage, register_fusion_pass

        @register_fusion_pass(name="{name}", stage=PassStage.{stage})
        class {name}(FusionBasePass):
            def run(self, graph, context):
                graph.set_attr("{name}", "ran")
                return True
    ''')
    d = tmp_path / "passes"
    d.mkdir()
    (d / "a_pass.py").write_text(body.format(name="APass", stage="AFTER_INFER_SHAPE"))
    (d / "_helper.py").write_text("raise AssertionError('files starting with _ are skipped')")
    pkg = d / "gp_pkg_pass"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(body.format(name="PkgPass", stage="BEFORE_INFER_SHAPE"))
    single = tmp_path / "single_pass.py"
    single.write_text(body.format(name="SinglePass", stage="BEFORE_INFER_SHAPE"))
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", f"{d}:{single}")
    monkeypatch.syspath_prepend(str(d))
    try:
        mods = load_pass_plugins()
        assert len(mods) == 3
        assert sorted(p.pass_name for p in get_registered_passes()) == [
            "APass", "PkgPass", "SinglePass"]
        assert load_pass_plugins() == mods  # loaded once
        g = _add_zero_graph()
        run_passes(g)
        assert [g.get_attr(n) for n in ("APass", "PkgPass", "SinglePass")] == ["ran"] * 3
    finally:
        clear_loaded_pass_modules()
        import sys
        sys.modules.pop("gp_pkg_pass", None)
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_pass_plugins()
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(tmp_path / "notes.txt"))
    with pytest.raises(ValueError, match=r"must end with \.py"):
        load_pass_plugins()


def test_compile_runs_ge_passes_at_their_stage_points(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, int]] = []
    for stage in PassStage:
        def run(self: Any, graph: Graph, context: PassContext, s: PassStage = stage) -> None:
            seen.append((s.name, [n.type for n in graph.get_all_nodes()].count("Add")))

        register_fusion_pass(name=f"seen_{stage.value}", stage=stage)(
            type(f"Seen{stage.name}", (FusionBasePass,), {"run": run}))
    _define_add_zero_pass()
    monkeypatch.delenv("ASCEND_GE_PY_PASS_PATH", raising=False)
    g = _add_zero_graph()
    before = g.air.to_bytes()
    cm = air.compile(g.air, ge_passes=True)
    assert g.air.to_bytes() == before  # compile works on a copy
    assert [s for s, _ in seen] == [s.name for s in PassStage]
    # The add-zero pass (BEFORE_INFER_SHAPE, registered after that stage's observer) removed
    # one of the three Adds before infer.
    assert [n for _, n in seen] == [3, 2, 2, 2]
    feeds = _random_feeds(g.air)
    want = list(air.evaluate(g.air, feeds).values())[0]
    np.testing.assert_allclose(list(air.evaluate(cm.graph, feeds).values())[0], want,
                               rtol=1e-5)


def test_ge_utils() -> None:
    b = GraphBuilder("g")
    x, w = b.create_inputs(2)
    g = b.build_and_reset([MatMul(x, w)])
    GeUtils.infer_shape(g, [[2, 3], [3, 5]])
    mm = next(n for n in g.get_all_nodes() if n.type == "MatMul")
    assert mm.get_output_desc(0).get_shape() == [2, 5]
    with pytest.raises(ValueError, match="2 inputs"):
        GeUtils.infer_shape(g, [[2, 3]])
    with pytest.raises(TypeError):
        GeUtils.infer_shape(g, [[2, "3"], [3, 5]])
    assert GeUtils.check_node_support_on_aicore(mm) == (True, "")
    ok, why = GeUtils.check_node_support_on_aicore(g.get_all_nodes()[0])
    assert not ok and "Data" in why


def test_passes_load_no_cann_and_not_with_ascendir() -> None:
    import os
    import subprocess
    import sys

    code = ("import sys, ascendir; assert not any(m.startswith('ascendir.ge') "
            "for m in sys.modules); import ascendir.ge.passes, ascendir.ge.utils; "
            "assert not any('cann' in m.lower() or m == 'ge' or m.startswith('ge.') "
            "for m in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_hook_errors_keep_their_type_and_name_the_pass() -> None:
    @register_fusion_pass(name="BadReplacement", stage=PassStage.BEFORE_INFER_SHAPE)
    class BadReplacement(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            return Relu(inputs[0])

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return 3  # not a TensorHolder

    b = GraphBuilder("g")
    g = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    with pytest.raises(TypeError, match="Expression-style replacement must return"):
        run_passes(g)
    clear_registered_passes()

    @register_fusion_pass(name="Crashes", stage=PassStage.BEFORE_INFER_SHAPE)
    class Crashes(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            return Relu(inputs[0])

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            raise KeyError("boom")

    with pytest.raises(RuntimeError, match=r"pass 'Crashes': meet_requirements\(\) raised "
                                           r"KeyError"):
        run_passes(g)
    assert _types(g) == ["Data", "Relu", "NetOutput"]
