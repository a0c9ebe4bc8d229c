"""The pattern rewriter: declarative rules, one merged matcher, why_not, verify, provenance."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air
from ascendir import passes, rewriter

F32 = air.TensorDesc([2, 3], air.float32)


def _mul_one(op, x):  # type: ignore[no-untyped-def]
    return op.Mul(x, op.Const(1.0))


def _identity(op, x):  # type: ignore[no-untyped-def]
    return x


def _mul_graph() -> tuple[air.Graph, air.Value]:
    g = air.Graph("g")
    x = g.add_input("x", F32).outputs[0]
    one = g.add_const("one", np.ones((2, 3), np.float32)).outputs[0]
    two = g.add_const("two", np.full((1,), 2.0, np.float32)).outputs[0]
    m1 = air.ops.Mul(x, one, name="m1")
    r = air.ops.Relu(m1, name="r")
    m2 = air.ops.Mul(r, two, name="m2")
    m3 = air.ops.Mul(m2, one, name="m3")
    g.set_outputs([m3])
    return g, x


def test_fold_mul_by_one_and_find_matches_without_rewriting() -> None:
    g, _ = _mul_graph()
    rules = rewriter.RewriteRuleSet([rewriter.RewriteRule(_mul_one, _identity, name="mul1")])
    feed = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    want = next(iter(air.evaluate(g, [feed]).values()))
    before = g.to_bytes()
    ms = rules.find_matches(g)
    assert [(m.rule.name, m.root.name) for m in ms] == [("mul1", "m1"), ("mul1", "m3")]
    assert ms[0].captures["x"].producer().name == "x"
    assert [n.name for n in ms[0].nodes] == ["one", "m1"]
    assert g.to_bytes() == before                   # finding does not rewrite
    assert rules.apply(g) == 2
    assert [n.name for n in g.find_nodes(op_type="Mul")] == ["m2"]
    assert g.find("one") is None and g.problems() == []
    got = next(iter(air.evaluate(g, [feed]).values()))
    np.testing.assert_array_equal(got, want)
    assert rules.find_matches(g) == []


def _leaky_pattern(op, x, y):  # type: ignore[no-untyped-def]
    m = op.Mul(x, op.Const(2.0, name="two"), name="mul")
    return op.LeakyRelu(op.Add(m, y, name="add"), negative_slope=0.2, name="act")


def _leaky_replacement(op, x, y):  # type: ignore[no-untyped-def]
    return op.LeakyRelu(op.Add(op.Add(x, x), y), negative_slope=0.2)


def _leaky_graph(*, add: str = "Add", slope: float = 0.2, factor: float = 2.0,
                 extra_use: bool = False, swap: bool = False) -> air.Graph:
    g = air.Graph("g")
    x = g.add_input("x", F32).outputs[0]
    y = g.add_input("y", F32).outputs[0]
    c = g.add_const("c", np.full((1,), factor, np.float32)).outputs[0]
    m = air.ops.Mul(x, c, name="m")
    s = getattr(air.ops, add)(*((y, m) if swap else (m, y)), name="s")
    outs = [air.ops.LeakyRelu(s, negative_slope=slope, name="a")]
    if extra_use:
        outs.append(air.ops.Exp(s, name="spy"))
    g.set_outputs(outs)
    return g


def test_why_not_names_the_failing_predicate_on_five_near_misses() -> None:
    rule = rewriter.RewriteRule(_leaky_pattern, _leaky_replacement, name="leaky")
    rules = rewriter.RewriteRuleSet([rule])
    ok = _leaky_graph()
    assert rules.why_not(rule, ok.node("a")) is None
    cases = {
        "wrong op type": (_leaky_graph(add="Sub"), "Add 'add': op type is Sub, not Add"),
        "wrong attribute": (_leaky_graph(slope=0.1), "LeakyRelu 'act': attribute "
                            "'negative_slope' is Float(0.1), not Float(0.2)"),
        "wrong constant": (_leaky_graph(factor=3.0),
                           "input 1 of Mul 'mul': Const 'two': Const value is 3.0, not 2.0"),
        "extra use": (_leaky_graph(extra_use=True),
                      "Add 'add': output 0 of 's' has 2 uses, the pattern allows 1"),
        "wrong wiring": (_leaky_graph(swap=True),
                         "input 0 of Add 'add': Mul 'mul': op type is Data, not Mul"),
    }
    for what, (g, expected) in cases.items():
        reason = rules.why_not("leaky", g.node("a"))
        assert reason is not None and expected in reason, (what, reason)
        assert rules.find_matches(g) == [], what
    assert rules.apply(ok) == 1
    assert [n.type for n in ok.nodes].count("Mul") == 0


def test_verify_rejects_a_replacement_that_swaps_inputs() -> None:
    def sub(op, x, y):  # type: ignore[no-untyped-def]
        return op.Sub(x, y)

    def swapped(op, x, y):  # type: ignore[no-untyped-def]
        return op.Sub(y, x)

    def via_neg(op, x, y):  # type: ignore[no-untyped-def]
        return op.Add(x, op.Neg(y))

    g = air.Graph("g")
    a = g.add_input("a", F32).outputs[0]
    b = g.add_input("b", F32).outputs[0]
    g.set_outputs([air.ops.Relu(air.ops.Sub(a, b, name="s"), name="r")])
    before = g.to_bytes()
    bad = rewriter.RewriteRuleSet([rewriter.RewriteRule(sub, swapped, name="swap")])
    with pytest.raises(rewriter.VerificationError, match="rule 'swap' at 's'"):
        bad.apply(g, verify=True)
    assert g.to_bytes() == before
    assert issubclass(rewriter.VerificationError, passes.PassError)
    assert bad.apply(g, max_rounds=1) == 1           # unchecked, it rewrites anyway
    g2 = air.Graph.from_bytes(before)
    good = rewriter.RewriteRuleSet([rewriter.RewriteRule(sub, via_neg, name="neg")],
                                   pass_name="SubToAdd")
    assert good.apply(g2, verify=True) == 1
    assert sorted(n.type for n in g2.nodes if passes.created_by(n) == "SubToAdd") == [
        "Add", "Neg"]
    feeds = [np.ones((2, 3), np.float32), np.full((2, 3), 3, np.float32)]
    want = next(iter(air.evaluate(air.Graph.from_bytes(before), feeds).values()))
    np.testing.assert_allclose(next(iter(air.evaluate(g2, feeds).values())), want)


def test_failed_rewrite_leaves_the_graph_unchanged() -> None:
    def broken(op, x):  # type: ignore[no-untyped-def]
        op.Relu(x)
        return op.Relu(x, no_such_attr=1)

    g, _ = _mul_graph()
    before = g.to_bytes()
    rules = rewriter.RewriteRuleSet([rewriter.RewriteRule(_mul_one, broken, name="bad")])
    with pytest.raises(rewriter.RewriteError, match="no_such_attr"):
        rules.apply(g)
    assert g.to_bytes() == before


def test_bad_rules_are_refused() -> None:
    with pytest.raises(rewriter.RewriteError, match="does not capture"):
        rewriter.RewriteRule(_mul_one, lambda op, z: z)
    with pytest.raises(rewriter.RewriteError, match="an op's value"):
        rewriter.RewriteRule(_identity, _identity)
    r = rewriter.RewriteRule(_mul_one, _identity, name="same")
    with pytest.raises(rewriter.RewriteError, match="repeat"):
        rewriter.RewriteRuleSet([r, r])
    assert passes.RewriteRule is rewriter.RewriteRule


def test_rules_share_one_matcher_and_conditions_filter() -> None:
    def relu_mul_one(op, x):  # type: ignore[no-untyped-def]
        return op.Relu(op.Mul(x, op.Const(1.0)))

    def relu(op, x):  # type: ignore[no-untyped-def]
        return op.Relu(x)

    both = rewriter.RewriteRuleSet([
        rewriter.RewriteRule(relu_mul_one, relu, name="relu_mul1"),
        rewriter.RewriteRule(_mul_one, _identity, name="mul1"),
    ])
    assert both.shared_nodes == 4                    # x, 1, Mul(x, 1) shared; Relu
    g, _ = _mul_graph()
    assert [(m.rule.name, m.root.name) for m in both.find_matches(g)] == [
        ("relu_mul1", "r"), ("mul1", "m3")]
    only_big = rewriter.RewriteRuleSet([
        rewriter.RewriteRule(_mul_one, _identity, name="mul1",
                             condition=lambda m: m.root.name != "m1"),
    ])
    assert [m.root.name for m in only_big.find_matches(g)] == ["m3"]
    assert only_big.why_not("mul1", g.node("m1")) == \
        "the condition of rule 'mul1' refused the match"


def test_pattern_rewrite_pass_in_a_pass_manager_on_bert() -> None:
    import torch

    from support.torch_models import small_bert

    model, ids = small_bert()
    g = air.torch.export(model, (ids,))
    with torch.no_grad():
        want = model(ids).last_hidden_state.numpy()

    # Scale the query instead of the scores: Mul(q @ k^T, s) -> (q * s) @ k^T.
    def scaled_scores(op, q, k, s):  # type: ignore[no-untyped-def]
        return op.Mul(op.BatchMatMulV2(q, k, adj_x1=False, adj_x2=True), s)

    def scaled_query(op, q, k, s):  # type: ignore[no-untyped-def]
        return op.BatchMatMulV2(op.Mul(q, s), k, adj_x1=False, adj_x2=True)

    assert len(g.find_nodes(op_type="Mul")) == 2
    p = rewriter.PatternRewritePass(
        [rewriter.RewriteRule(scaled_scores, scaled_query, name="scale_query")],
        verify=True, name="ScaleQuery")
    result = passes.PassManager([p])(g)
    assert result.modified
    muls = g.find_nodes(op_type="Mul")
    assert len(muls) == 2 and all(passes.created_by(n) == "ScaleQuery" for n in muls)
    assert all(m.outputs[0].uses()[0].node.type == "BatchMatMulV2" for m in muls)
    got = list(air.evaluate(g, [ids.numpy()]).values())[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_capture_only_rules_rewrite_in_bulk_like_the_checked_path() -> None:
    rule = rewriter.RewriteRule(_mul_one, _identity, name="mul1")
    assert rule.returns_capture == "x"
    assert rewriter.RewriteRule(_leaky_pattern, _leaky_replacement).returns_capture is None
    bulk, checked = _mul_graph()[0], _mul_graph()[0]
    rules = rewriter.RewriteRuleSet([rule])
    assert rules.apply(bulk) == 2                    # in Rust
    assert rules.apply(checked, verify=True) == 2    # match by match, verified
    assert bulk.to_bytes() == checked.to_bytes()
