"""ascendir.ge.passes: GE's documented rules of its pass API (argument validation, error
types, the run() override, meet_requirements, stages, discovery, verify, fusion checks)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ascendir as air
from ascendir.ge.error import GeError
from ascendir.ge.es import GraphBuilder
from ascendir.ge.graph import Graph
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
from support.ge_passes import (
    add_zero_graph,
    assert_same,
    define_add_zero_pass,
    fresh_registry,
    op_types,
    random_feeds,
    register_sample_ops,
)

__all__ = ["fresh_registry"]  # the autouse fixture, used by every test

register_sample_ops()

from ascendir.ge.es.math import Add, MatMul  # noqa: E402
from ascendir.ge.es.nn import Relu  # noqa: E402

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


def test_register_decompose_pass_validates_opop_types() -> None:
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

    run_passes(add_zero_graph())
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
    types = op_types(g)
    assert run_passes(g)[0].rewrites == 0 and op_types(g) == types
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
    g = add_zero_graph()
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
        run_passes(add_zero_graph(), options={"ge.opt": "1"})
    clear_registered_passes()

    @register_fusion_pass(name="Odd", stage=PassStage.BEFORE_INFER_SHAPE)
    class Odd(FusionBasePass):
        def run(self, graph: Graph, context: PassContext) -> Any:
            return "done"

    with pytest.raises(TypeError, match="None, a bool or an int"):
        run_passes(add_zero_graph())


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
    types = op_types(g)
    with pytest.raises(TypeError, match="must return ge.graph.Graph, got NoneType"):
        run_passes(g)
    assert op_types(g) == types


def test_multi_output_patterns_match_capture_and_rewrite() -> None:
    # GE: a @pattern returning a list is one pattern of several outputs; the captures are the
    # visited inputs by index, then the outputs in return order.
    seen: list[list[str]] = []

    @register_fusion_pass(name="SumAndProduct", stage=PassStage.BEFORE_INFER_SHAPE)
    class SumAndProduct(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            return [x * y, x + y]

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            seen.append([match_result.get_captured_tensor(i).node.type for i in range(4)])
            return True

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            x, y = inputs[:2]
            return [y * x, y + x]

    b = GraphBuilder("g")
    x, y = b.create_input(0, shape=[3]), b.create_input(1, shape=[3])
    prod, total = x * y, x + y
    g = b.build_and_reset([Relu(prod) + total, prod])
    original = g.air.copy()
    before = {n.name for n in g.air.nodes}
    matched = {n.name for n in g.air.nodes if n.type in ("Mul", "Add")
               and all(v.producer().type == "Data" for v in n.inputs)}
    assert len(matched) == 2
    runs = run_passes(g, verify=True)
    assert runs[0].rewrites == 1
    assert seen == [["Data", "Data", "Mul", "Add"]]
    names = {n.name for n in g.air.nodes}
    assert before - names == matched
    assert sorted(n.type for n in g.air.nodes if n.name not in before) == ["Add", "Mul"]
    assert_same(original, g.air)


def test_multi_output_pattern_whose_outputs_nest() -> None:
    # Outputs Relu(x) and Relu(Relu(x)): the inner one is read outside the match too. Relu
    # is idempotent, so both outputs become one Relu (a replacement output used twice).
    @register_fusion_pass(name="ReluTwice", stage=PassStage.BEFORE_INFER_SHAPE)
    class ReluTwice(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            r = Relu(inputs[0])
            return [r, Relu(r)]

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            r = Relu(inputs[0])
            return [r, r]

    b = GraphBuilder("g")
    x = b.create_input(0, shape=[4])
    inner = Relu(x)
    g = b.build_and_reset([Relu(inner), inner + x])
    original = g.air.copy()
    assert run_passes(g, verify=True)[0].rewrites == 1
    assert op_types(g).count("Relu") == 1
    assert_same(original, g.air)


def test_multi_output_patterns_the_matcher_cannot_find_are_refused() -> None:
    # Two outputs sharing no node: nothing leads from the first to the second.
    @register_fusion_pass(name="Apart", stage=PassStage.BEFORE_INFER_SHAPE)
    class Apart(PatternFusionPass):
        @pattern
        def p(self, inputs):  # type: ignore[no-untyped-def]
            return [Relu(inputs[0]), Relu(inputs[1])]

    b = GraphBuilder("g")
    g = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    with pytest.raises(GeError, match="shares no node"):
        run_passes(g)


def test_verify_rejects_a_wrong_replacement_and_leaves_the_graph() -> None:
    @register_fusion_pass(name="WrongAddZero", stage=PassStage.BEFORE_INFER_SHAPE)
    class WrongAddZero(PatternFusionPass):
        @pattern
        def add_zero(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0] + 0

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return Relu(inputs[0])  # not x: negative values change

    g = add_zero_graph()
    before = g.air.to_bytes()
    with pytest.raises(VerificationError) as info:
        run_passes(g, verify=True)
    msg = str(info.value)
    assert "pass 'WrongAddZero'" in msg and "WrongAddZero_add_zero_pattern" in msg
    assert "matched at 'Add_3'" in msg and "changes the result" in msg
    assert g.air.to_bytes() == before
    # Without verify the (wrong) rewrite is made: verify is what caught it.
    assert run_passes(g)[0].rewrites == 2 and "Relu" in op_types(g)


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
    assert op_types(g) == ["Data", "Relu", "NetOutput"]
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
        g = add_zero_graph()
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
    define_add_zero_pass()
    monkeypatch.delenv("ASCEND_GE_PY_PASS_PATH", raising=False)
    g = add_zero_graph()
    before = g.air.to_bytes()
    cm = air.compile(g.air, ge_passes=True)
    assert g.air.to_bytes() == before  # compile works on a copy
    assert [s for s, _ in seen] == [s.name for s in PassStage]
    # The add-zero pass (BEFORE_INFER_SHAPE, registered after that stage's observer) removed
    # one of the three Adds before infer.
    assert [n for _, n in seen] == [3, 2, 2, 2]
    feeds = random_feeds(g.air)
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
    assert op_types(g) == ["Data", "Relu", "NetOutput"]


def test_patterns_are_tried_in_declaration_order_at_a_node() -> None:
    tried: list[str] = []

    @register_fusion_pass(name="Order", stage=PassStage.BEFORE_INFER_SHAPE)
    class Order(PatternFusionPass):
        @pattern
        def first(self, inputs):  # type: ignore[no-untyped-def]
            return Relu(inputs[0])

        @pattern
        def second(self, inputs):  # type: ignore[no-untyped-def]
            return Relu(inputs[0])

        def meet_requirements(self, match_result):  # type: ignore[no-untyped-def]
            tried.append(match_result.get_pattern_graph_name())
            return len(tried) > 1  # refuse the first try: the other pattern is tried next

        def replacement(self, inputs):  # type: ignore[no-untyped-def]
            return inputs[0]

    b = GraphBuilder("g")
    g = b.build_and_reset([Relu(b.create_input(0, shape=[2])) + 1.0])
    assert run_passes(g)[0].rewrites == 1
    assert tried == ["Order_first_pattern", "Order_second_pattern"]
    assert "Relu" not in op_types(g)


def test_a_failed_rewrite_with_several_outputs_leaves_the_graph() -> None:
    # C -> M (outside) -> A; the boundary's outputs are A and C. The replacement's second
    # output reads M, so moving C's use (M) onto it would make a cycle: the move fails after
    # the first output's uses have moved, and those move back.
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[3])
    c = Relu(x)
    m = Relu(c)
    a = Relu(m)
    g = b.build_and_reset([Relu(a)])
    na, nc = g.find_node_by_name(a.name), g.find_node_by_name(c.name)
    boundary = SubgraphBoundary()
    boundary.add_input(0, SubgraphInput([(nc, 0)]))
    boundary.add_input(1, SubgraphInput([(na, 0)]))
    boundary.add_output(0, SubgraphOutput(na, 0))
    boundary.add_output(1, SubgraphOutput(nc, 0))
    rb = GraphBuilder("r")
    rb.create_input(0)
    m_in = rb.create_input(1)
    repl = rb.build_and_reset([Relu(m_in), Relu(m_in)])
    before = g.air.to_bytes()
    # With a context, can_fuse refuses first (the cycle rule).
    ctx = PassContext("P")
    with pytest.raises(RuntimeError, match="NF1002"):
        SubgraphRewriter.replace(boundary, repl, context=ctx)
    assert "NF1002" in ctx.get_error_message() and g.air.to_bytes() == before
    # Without, the rewrite is tried, fails on the cycle, and undoes its first move.
    assert SubgraphRewriter.replace(boundary, repl) == 1
    assert g.air.to_bytes() == before
    feeds = {"input_0": np.array([-1.0, 0.5, 2.0], np.float32)}
    np.testing.assert_array_equal(list(air.evaluate(g.air, feeds).values())[0],
                                  np.maximum(feeds["input_0"], 0))
    assert [n.type for n in g.get_all_nodes()] == ["Data", "Relu", "Relu", "Relu", "Relu",
                                                   "NetOutput"]
