"""ascendir.ge.passes: GE's nine Python fusion-pass samples, offline.

The samples of GE's sources (examples/fusion_pass/*/python/src) are reproduced here with GE's
own API calls and ``ascendir.ge`` imports: each registers, matches and rewrites the graph its
sample data builds, the result evaluates equal to the original, and the rewrite is the one
the sample's C++ twin makes. GE's documented rules are in test_ge_passes_rules.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ascendir as air
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
    create_pattern,
    create_replacement,
    get_registered_pass_dicts,
    pattern,
    register_decompose_pass,
    register_fusion_pass,
    report_fuse,
    run_passes,
)
from ascendir.ge.utils import GeUtils
from support.ge_passes import (
    add_zero_graph,
    assert_same,
    define_add_zero_pass,
    fresh_registry,
    is_zero,
    op_types,
    register_sample_ops,
)

__all__ = ["fresh_registry"]  # the autouse fixture, used by every test

register_sample_ops()

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
    TensorMove,
)
from ascendir.ge.es.nn import BatchMatMulV2, Conv2D, MaxPool, Relu  # noqa: E402


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
    assert sorted(op_types(g)) == sorted(["Data", "Data", "Data", "Const", "Const", "GEMM",
                                        "NetOutput"])
    gemm = next(n for n in g.get_all_nodes() if n.type == "GEMM")
    ins = [gemm.get_in_data_nodes_and_port_indexes(i)[0].name for i in range(3)]
    assert ins == ["input_0", "input_1", "input_2"]
    assert gemm.get_output_desc(0).get_shape() == [2, 2]
    assert_same(before, g.air)


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
    assert runs[0].rewrites == 1 and "GEMM" in op_types(g32) and "MatMul" not in op_types(g32)
    assert_same(before, g32.air)
    # torch_forward_2.py: float16 inputs; meet_requirements refuses, the graph stays.
    g16 = _matmul_add_graph(BatchMatMulV2, DataType.DT_FLOAT16)
    types = op_types(g16)
    runs = run_passes(g16)
    assert runs[0].rewrites == 0 and op_types(g16) == types


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
    assert runs[0].rewrites == 1 and "GEMM" in op_types(g1) and "MatMul" not in op_types(g1)
    assert_same(before, g1.air)
    # es_forward_2: transpose_x1=True differs from the pattern's attribute: no match.
    g2 = _matcher_config_graph(True, [[0.1, 0.1], [0.1, 0.1]])
    assert run_passes(g2)[0].rewrites == 0 and "MatMul" in op_types(g2)
    # es_forward_3: the constant's values differ: no match.
    g3 = _matcher_config_graph(False, [[0.1, 0.1], [0.2, 0.2]])
    assert run_passes(g3)[0].rewrites == 0 and "MatMul" in op_types(g3)


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

def test_sample4_add_zero_pass_removes_add_of_zero(capsys: pytest.CaptureFixture[str]) -> None:
    define_add_zero_pass()
    g = add_zero_graph()
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
    assert op_types(g).count("Const") == 1
    assert_same(before, g.air)


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

    g = add_zero_graph()
    before, runs = _run_sample(g, verify=True)
    assert runs[0].rewrites == 1
    assert capsys.readouterr().out.splitlines() == [
        "[PythonAddZeroConstValueMatchPass] matched=PythonAddZeroConstValueMatchPass_add_zero"
        "_pattern captured=input_0:0"]
    assert op_types(g).count("Add") == 2
    assert_same(before, g.air)
    # GE compares the whole constant: a [2, 2] tensor of zeros is not the scalar 0.0.
    b = GraphBuilder("zeros")
    x = b.create_input(0, shape=[2, 2])
    wide = b.build_and_reset([Add(x, [[0.0, 0.0], [0.0, 0.0]])])
    assert run_passes(wide)[0].rewrites == 0 and "Add" in op_types(wide)


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
                if node.type == "Const" and not is_zero(node.get_attr("value")):
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
        assert op_types(g) == ["Data", "Data", "AddCustom", "NetOutput"]
        add = next(n for n in g.get_all_nodes() if n.type == "AddCustom")
        assert [add.get_in_data_nodes_and_port_indexes(i)[0].name for i in (0, 1)] == [
            "input_0", "input_1"]
        assert_same(before, g.air, rtol=1e-3)
    nonzero = target(False, 2.0)
    types = op_types(nonzero)
    assert run_passes(nonzero)[0].rewrites == 0 and op_types(nonzero) == types


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
    types = op_types(g)
    assert types.count("Conv2D") == 3 and types.count("Split") == 2
    assert types.count("Concat") == 1 and "MaxPool" in types
    assert all(n.get_attr("groups") == 1 for n in g.get_all_nodes() if n.type == "Conv2D")
    pool = next(n for n in g.get_all_nodes() if n.type == "MaxPool")
    assert pool.get_in_data_nodes_and_port_indexes(0)[0].type == "Concat"
    assert pool.get_output_desc(0).get_shape() == [1, 3, 1, 1]
    assert_same(before, g.air, rtol=1e-4)


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
    types = op_types(g)
    assert types.count("Relu") == 3 and types.count("ConcatV2") == 1
    concat = next(n for n in g.get_all_nodes() if n.type == "ConcatV2")
    assert [concat.get_in_data_nodes_and_port_indexes(i)[0].type for i in range(4)] == [
        "Relu", "Relu", "Relu", "Const"]
    assert concat.get_output_desc(0).get_shape() == [16, 64, 128]
    assert_same(before, g.air)


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
    assert op_types(g) == ["Data", "Data", "Conv2D", "Const", "Add", "NetOutput"]
    conv = next(n for n in g.get_all_nodes() if n.type == "Conv2D")
    assert conv.get_attr("data_format") == "NHWC"
    # data_format is a layout tag GE acts on when it infers formats (inserting TransData);
    # ascendir's evaluator reads it literally, so the numbers are compared with the tag read
    # as the tensors' own NCHW layout: removing the pair changed nothing.
    check = g.air.copy()
    check.node(conv.name).op_desc.attrs["data_format"] = "NCHW"
    assert_same(before, check, rtol=1e-4)


