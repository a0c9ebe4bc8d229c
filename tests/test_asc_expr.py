"""Symbolic size expressions (asc.SizeExpr): printing, parsing, arithmetic, evaluation."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascendir import asc
from ascendir.errors import InvalidArgumentError, NotFoundError

b, c, d, x = (asc.Symbol(n) for n in "bcdx")


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (b / c, "(b / (c))"),
        (1 / c, "Pow(c, -1)"),
        (b**3, "(b * b * b)"),
        (asc.Pow(b, c), "Pow(b, c)"),
        (asc.Mod(b, c), "Mod(b, c)"),
        (asc.Ceiling(b), "Ceiling(b)"),
        (asc.Abs(b), "Abs(b)"),
        (2 - 3 * b, "(2 - (3 * b))"),
        (asc.Max(asc.Max(b, c), d), "Max(Max(b, c), d)"),
        (-x, "(-1 * x)"),
        (-(x + 2), "((2 + x) * -1)"),
    ],
)
def test_a10_printing_and_parsing(expr: asc.SizeExpr, text: str) -> None:
    assert expr.expression == text
    assert str(expr) == text
    assert asc.parse_expr(text) == expr
    assert hash(asc.parse_expr(text)) == hash(expr)


def test_a11_constants() -> None:
    assert asc.SizeExpr(1) + asc.SizeExpr(2) == 3
    assert asc.SizeExpr(100) * 2 == 200
    assert asc.SizeExpr() == 1
    assert asc.SizeExpr(0) == 0
    assert hash(asc.SizeExpr(5)) == hash(5)
    with pytest.raises(InvalidArgumentError, match="Only support type of SizeExpr or long"):
        asc.SizeExpr("100")


def test_canonical_equality_and_hash() -> None:
    s0, s1 = asc.Symbol("s0"), asc.Symbol("s1")
    assert s0 + 2 + 4 == s0 + 6
    assert s0 * s1 == s1 * s0
    assert s0 * s0 == s0**2
    assert (s0 + s1) - s1 == s0
    assert len({s0 * s1, s1 * s0, s0 * s1 + 0}) == 1
    assert (s0 + 100).expression == "(100 + s0)"
    assert (s0 // 4).expression == "Floor((Rational(1 , 4) * s0))"


def test_evaluate() -> None:
    s0, t = asc.Symbol("s0"), asc.Symbol("t")
    assert asc.Ceiling(s0 / t).evaluate({"s0": 10, "t": 4}) == 3
    assert asc.Floor(s0 / t).evaluate({s0: 10, t: 4}) == 2
    assert (s0 / t).evaluate({"s0": 10, "t": 4}) == Fraction(5, 2)
    assert asc.Mod(s0, t).evaluate({"s0": -7, "t": 3}) == 2
    assert asc.Max(s0, t, 3).evaluate({"s0": 1, "t": 2}) == 3
    with pytest.raises(NotFoundError, match="'t' has no value"):
        (s0 + t).evaluate({"s0": 1})
    with pytest.raises(InvalidArgumentError, match="division by zero"):
        (s0 / t).evaluate({"s0": 1, "t": 0})


def test_static_comparisons() -> None:
    s0, s1 = asc.Symbol("s0"), asc.Symbol("s1")
    assert s0.static_le(s0 + 1) is True
    assert (s0 + 2).static_lt(s0) is False
    assert s0.static_eq(s1) is None
    assert asc.SizeExpr(1).static_le(s0) is True
    assert (s0 < s0 + 1) is True
    with pytest.raises(InvalidArgumentError, match="cannot decide"):
        _ = s0 < s1


def test_subs_replace_free_symbols() -> None:
    s0, s1 = asc.Symbol("s0"), asc.Symbol("s1")
    e = asc.Ceiling(s0 / s1) * s1
    assert e.subs({"s1": 4}).expression == "(4 * Ceiling((Rational(1 , 4) * s0)))"
    assert e.subs({s1: 4, s0: 10}) == 12
    assert e.replace(s1, asc.SizeExpr(2)) == asc.Ceiling(s0 / 2) * 2
    assert e.free_symbols() == ["s0", "s1"]
    assert asc.align(s0, 16) == asc.Ceiling(s0 / 16) * 16


def test_parse_errors() -> None:
    for bad in ["(1 +", "Foo(1)", "Mod(1)", "1 2", "Rational(1 , 0)", ""]:
        with pytest.raises(InvalidArgumentError):
            asc.parse_expr(bad)


def test_pickle() -> None:
    import pickle

    e = asc.Ceiling(asc.Symbol("s0") / 3) + 1
    assert pickle.loads(pickle.dumps(e)) == e


_names = st.sampled_from(["s0", "s1", "z0t_size", "b"])
_leaf = st.one_of(st.integers(-5, 20).map(asc.SizeExpr), _names.map(asc.Symbol))


def _combine(children: st.SearchStrategy) -> st.SearchStrategy:
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        pair.map(lambda p: p[0] * p[1]),
        pair.map(lambda p: p[0] / p[1]),
        children.map(lambda a: -a),
        children.map(asc.Ceiling),
        pair.map(lambda p: asc.Max(p[0], p[1])),
        pair.map(lambda p: asc.Mod(p[0], p[1])),
        st.tuples(children, st.integers(0, 3)).map(lambda p: p[0] ** p[1]),
    )


_exprs = st.recursive(_leaf, _combine, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_exprs)
def test_property_print_parse_round_trip(e: asc.SizeExpr) -> None:
    back = asc.parse_expr(e.expression)
    assert back == e
    assert back.expression == e.expression


@settings(max_examples=300, deadline=None)
@given(_exprs, st.lists(st.integers(1, 40), min_size=4, max_size=4))
def test_property_reparse_preserves_value(e: asc.SizeExpr, vals: list[int]) -> None:
    env = dict(zip(["s0", "s1", "z0t_size", "b"], vals, strict=True))
    try:
        expected = e.evaluate(env)
    except InvalidArgumentError:
        return
    assert asc.parse_expr(e.expression).evaluate(env) == expected
