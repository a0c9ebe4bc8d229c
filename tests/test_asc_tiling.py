"""Tiling solver: A18, the compiled tiling function, errors, templates, and an exhaustive
checker that the solver's tiles use as much UB as the best aligned tiling and never exceed it."""

from __future__ import annotations

import itertools
import random

import pytest

from ascendir.asc.schedule import schedule
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling, solve_tiling, tiling_problem
from ascendir.errors import TilingError
from support.hintgraph import F16, F32, HB


def _las() -> HB:
    b = HB("LoadAbsStore", ["s0"], F16)
    b.store(b.op("Abs", b.load()))
    return b


def test_a18_tile_and_blocks() -> None:
    impls = schedule(_las().g)
    t = solve_tiling(impls, target=Target.ascend910b(), sizes={"s0": 2**20})
    assert t["z0t_size"] == 23520
    assert t.block_dim == 45
    assert t["z0Tb_size"] == 1
    assert t.ub_size == 196352
    assert t.ub_used == 4 * 47040 + 8192 <= 196352
    assert t.tiling_key == 0
    assert t["s0"] == 2**20
    names = [c[0] for c in t.containers]
    assert names == ["q0_size", "q1_size", "b0_size"]
    assert t["q0_size"] == 47040
    assert t.containers[0] == ("q0_size", 47040, 2)
    p = tiling_problem(impls[0])
    assert [v[0] for v in p["vars"]] == ["z0t_size", "z0Tb_size"]
    assert p["vars"][0][2] == 16


def test_a18_ub_formula() -> None:
    fn = compile_tiling(schedule(_las().g))
    for t in (1, 15, 16, 17, 999, 23520, 23536):
        a = (2 * t + 31) // 32 * 32
        assert fn.ub_usage(0, {"z0t_size": t, "z0Tb_size": 1, "s0": 2**20}) == 4 * a + 8192


def test_targets() -> None:
    assert Target.ascend910b().core_num == 48
    assert Target.ascend910b3().core_num == 40
    assert Target.ascend950().ub_size == 253952 - 256
    c = Target("mine", core_num=8, ub_size=65536)
    assert c.core_num == 8 and c.ub_size == 65536 and c.block_size == 32
    with pytest.raises(ValueError):
        Target("bad", core_num=0)
    impls = schedule(_las().g)
    t = solve_tiling(impls, target=Target.ascend910b3(), sizes={"s0": 2**20})
    assert t.block_dim <= 40


def test_compiled_function_repeated_calls() -> None:
    impls = schedule(_las().g)
    fn = compile_tiling(impls, Target.ascend910b())
    assert fn.symbols == ["s0"]
    for s0 in (1, 15, 16, 1000, 2**20, 10**8):
        a = fn({"s0": s0})
        b = fn(s0=s0)
        c = fn.solve_values([s0])
        assert a == b == c
        assert a.ub_used <= 196352
        assert a.block_dim <= 48
        assert a["z0t_size"] <= max(s0, 1)


def test_errors_name_the_constraint() -> None:
    impls = schedule(_las().g)
    with pytest.raises(TilingError) as e:
        solve_tiling(impls, target=Target("tiny", core_num=2, ub_size=4096), sizes={"s0": 100})
    assert e.value.constraint == "ub"
    assert e.value.excess == 8192 + 4 * 32 - 4096
    assert "over by" in str(e.value)
    with pytest.raises(TilingError) as e:
        solve_tiling(impls, sizes={})
    assert e.value.constraint == "shape"
    assert "s0" in str(e.value)
    with pytest.raises(TilingError):
        solve_tiling(impls, sizes={"s0": -1})


def test_template_choice_prefers_lower_cost() -> None:
    b = HB("Red", ["s0", "s1"], F32)
    b.store(b.reduce("Sum", b.load(), [1]))
    impls = schedule(b.g)
    fn = compile_tiling(impls, Target.ascend910b())
    each = fn.solve_each({"s0": 64, "s1": 512})
    best = fn({"s0": 64, "s1": 512})
    ok = [t for t in each if not isinstance(t, Exception)]
    assert best.cost == min(t.cost for t in ok)
    # A reduce axis too long for all-load: only the split-reduce template fits.
    each = fn.solve_each({"s0": 4, "s1": 10**6})
    assert isinstance(each[1], TilingError)
    assert fn({"s0": 4, "s1": 10**6}).graph == "Red_B0Y0R1"


# --- exhaustive checker ----------------------------------------------------------------------


def _candidates(align: int, upper: int) -> list[int]:
    vals = set(range(align, upper + 1, align)) | {upper}
    if align > upper:
        vals = {upper}
    return sorted(v for v in vals if v >= 1)


def _exhaustive(fn, index: int, problem, shape, ub_size: int) -> tuple[int, dict[str, int]]:
    tiles = [v for v in problem["vars"] if v[1] == "tile"]
    blocks = [v for v in problem["vars"] if v[1] == "block"]
    uppers = []
    for _name, _, align, upper in tiles:
        from ascendir.asc import SizeExpr

        up = SizeExpr.parse(upper).evaluate(shape)
        uppers.append(_candidates(align, max(up, 1)))
    best = -1
    best_vals: dict[str, int] = {}
    for combo in itertools.product(*uppers):
        vals = dict(shape)
        vals.update({t[0]: v for t, v in zip(tiles, combo, strict=False)})
        vals.update({b[0]: 1 for b in blocks})
        ub = fn.ub_usage(index, vals)
        if ub <= ub_size and ub > best:
            best, best_vals = ub, vals
    return best, best_vals


def _graphs():
    out = []
    b = HB("E1", ["s0"], F16)
    b.store(b.op("Exp", b.op("Abs", b.load())))
    out.append(b)
    b = HB("E2", ["s0", "s1"], F32)
    x, y = b.load(), b.load(reps=[1, b.sizes[1]])
    b.store(b.op("Add", x, b.broadcast(y, 0)))
    out.append(b)
    b = HB("R2", ["s0", "s1"], F16)
    b.store(b.reduce("Sum", b.load(), [1]))
    out.append(b)
    b = HB("T2", ["s0", "s1"], F32)
    b.store(b.transpose(b.load(), [1, 0]))
    out.append(b)
    return out


@pytest.mark.parametrize("gi", range(4))
def test_solver_matches_exhaustive_search(gi: int) -> None:
    b = _graphs()[gi]
    target = Target("small", core_num=4, ub_size=12288)
    impls = schedule(b.g)
    fn = compile_tiling(impls, target)
    problems = fn.problems()
    rng = random.Random(gi)
    for _ in range(4):
        shape = {s: rng.choice([1, 5, 17, 40, 100, 333]) for s in b.sym_names}
        each = fn.solve_each(shape)
        for k, t in enumerate(each):
            best, _vals = _exhaustive(fn, k, problems[k], shape, target.ub_size)
            if isinstance(t, Exception):
                assert best < 0, (problems[k]["graph"], shape)
                continue
            assert t.ub_used <= target.ub_size
            assert t.block_dim <= target.core_num
            assert t.ub_used == best, (problems[k]["graph"], shape, t, best)


def test_two_variable_cases_reach_the_exhaustive_optimum() -> None:
    # Transpose (x and y split) and split reduce (y and r split) over shapes where the
    # priority-greedy choice (first variable as large as possible) is not the optimum.
    target = Target("small", core_num=4, ub_size=12288)
    checked = 0
    for b in (_graphs()[3], _graphs()[2]):
        fn = compile_tiling(schedule(b.g), target)
        problems = fn.problems()
        for s0 in (3, 7, 33, 100, 257):
            for s1 in (5, 31, 64, 333):
                shape = {"s0": s0, "s1": s1}
                each = fn.solve_each(shape)
                for k, t in enumerate(each):
                    if sum(1 for v in problems[k]["vars"] if v[1] == "tile") < 2:
                        continue
                    best, _ = _exhaustive(fn, k, problems[k], shape, target.ub_size)
                    assert not isinstance(t, Exception), (problems[k]["graph"], shape, t)
                    assert t.ub_used == best, (problems[k]["graph"], shape, t, best)
                    assert fn.ub_usage(k, {**shape, **dict(t.sizes)}) == t.ub_used
                    checked += 1
    assert checked >= 20
