"""Generated fused patterns (``support.patterns``): every ImplGraph × solved tiling simulates to
the HintGraph result. The CI suite runs 64 patterns on two shapes each, with a small-UB target
so that tiles are small and tails do not divide; ``ASCENDIR_ASC_SIM_LARGE=1`` runs 400 patterns
with more shapes. A template that does not solve a shape must fail on a resource limit."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ascendir import asc
from ascendir.asc.schedule import AutofuserOptions, schedule
from ascendir.asc.simulate import SimulationError, evaluate, simulate
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling
from support.hintgraph import F16, F32, HB, I32, check_all, solved
from support.patterns import KINDS, LARGE, N_PATTERNS, SMALL, build, shapes_for


@pytest.mark.parametrize("seed", range(N_PATTERNS))
def test_pattern_simulates_exactly(seed: int) -> None:
    b, kind = build(seed)
    shapes = shapes_for(b, seed, 6 if LARGE else 2)
    runs = check_all(b, shapes, target=SMALL, seed=seed)
    assert runs >= 1, kind


def test_pattern_kinds_cover_the_suite() -> None:
    kinds = {build(s)[1] for s in range(N_PATTERNS)}
    assert kinds == set(KINDS)
    dims = {len(build(s)[0].sizes) for s in range(N_PATTERNS)}
    assert dims >= {1, 2, 3, 4, 5}


def test_large_shape_on_real_target() -> None:
    b = HB("Big", ["s0", "s1"], F16)
    x = b.load()
    y = b.load(reps=[1, b.sizes[1]])
    b.store(b.op("Mul", b.op("Exp", x), b.broadcast(y, 0)))
    assert check_all(b, [{"s0": 301, "s1": 1999}], target=Target.ascend910b()) >= 1


def test_int_chain_is_exact() -> None:
    b = HB("Ints", ["s0"], I32)
    x = b.load()
    y = b.load()
    b.store(b.op("Mul", b.op("Sub", x, y), b.op("Abs", y)))
    assert check_all(b, [{"s0": 1000}, {"s0": 33}], target=SMALL) >= 1
    assert np.int32(0).dtype == np.int32


@pytest.mark.parametrize("op", ["Sum", "Max", "Min", "Mean", "Prod"])
def test_reduction_over_every_axis(op: str) -> None:
    # No kept axis: Sum/Mean/Max/Min split the reduce over cores (partial results combined by
    # atomic Stores); every op also has one-core cases on a unit outer axis.
    b = HB(f"All{op}", ["s0", 7], F32)
    b.store(b.reduce(op, b.op("Abs", b.load()), [0, 1]))
    impls = schedule(b.g)
    over = [i for i in impls if i.name.endswith("_reduce_over_cores")]
    assert len(over) == (0 if op == "Prod" else 1)
    fn = compile_tiling(impls, SMALL)
    t = fn({"s0": 3001})
    if op == "Prod":
        assert t.block_dim == 1
    else:
        assert t.graph == over[0].name and t.block_dim == SMALL.core_num
        assert all(k.block_dim == 1 for k in fn.solve_each({"s0": 3001})
                   if not isinstance(k, Exception) and k.graph != t.graph)
    shapes = [{"s0": 1}, {"s0": 3001}] if op != "Prod" else [{"s0": 1}, {"s0": 5}]
    assert check_all(b, shapes, target=SMALL) >= 2
    off = schedule(b.g, AutofuserOptions(reduce_over_cores=False))
    assert not any(i.name.endswith("_reduce_over_cores") for i in off)


def test_reduction_over_cores_needs_combinable_partials() -> None:
    # A node after the reduce would run once per core on a partial result.
    b = HB("AllSumAbs", ["s0"], F32)
    b.store(b.op("Abs", b.reduce("Sum", b.load(), [0])))
    assert not any(i.name.endswith("_reduce_over_cores") for i in schedule(b.g))
    assert check_all(b, [{"s0": 5}, {"s0": 999}], target=SMALL) >= 2


def test_concat_along_the_first_axis() -> None:
    b = HB("Cat0", [24, "s1"], F16)
    x = b.op("Exp", b.load(reps=[8, b.sizes[1]]))
    y = b.load(reps=[16, b.sizes[1]])
    b.store(b.concat([x, y], 0))
    # The concat axis and everything after it stay whole in UB, on one core.
    assert check_all(b, [{"s1": 5}, {"s1": 17}], target=SMALL) >= 2


@pytest.mark.parametrize("op", ["Erf", "Gelu"])
def test_erf_and_gelu_simulate(op: str) -> None:
    b = HB(f"U{op}", ["s0", 5], F32)
    b.store(b.op(op, b.op("Neg", b.load())))
    assert check_all(b, [{"s0": 3}, {"s0": 1001}], target=SMALL) >= 2
    inputs = b.make_inputs({"s0": 3})
    (x,) = (v.astype(np.float64) for v in inputs.values())
    ref = evaluate(b.g, inputs, {"s0": 3})[b.outputs[0]]
    if op == "Erf":
        want = np.array([-math.erf(v) for v in x])
    else:
        want = 0.5 * -x * (1 + np.tanh(math.sqrt(2 / math.pi) * (-x - 0.044715 * x**3)))
    assert np.allclose(ref, want, rtol=1e-5, atol=1e-6)


def test_argmax_keeps_the_reduce_axis_whole() -> None:
    b = HB("Arg", ["s0", "s1"], F32)
    x = b.op("Exp", b.load())
    b.store(b.op("ArgMax", x, reps=[b.sizes[0], 1], dtype=asc.dtypes.int64))
    impls = schedule(b.g)
    # Partial arg-maxima of two tiles cannot be combined: only the all-load case exists.
    assert [i.name for i in impls if "R" in i.name.split("_B0")[1]] == []
    shapes = [{"s0": 7, "s1": 33}, {"s0": 100, "s1": 9}]
    runs = 0
    fn = compile_tiling(impls, SMALL)
    for shape in shapes:
        inputs = b.make_inputs(shape)
        (x,) = inputs.values()
        want = np.argmax(x.reshape(shape["s0"], shape["s1"]), axis=1)
        assert np.array_equal(evaluate(b.g, inputs, shape)[b.outputs[0]], want)
        for k, impl in enumerate(impls):
            t = fn.solve_each(shape)[k]
            if not solved(impl, t, shape):
                continue
            assert np.array_equal(simulate(impl, t, inputs)[b.outputs[0]], want), impl.name
            runs += 1
    assert runs >= 2


def test_scalar_operands() -> None:
    b = HB("Scal", ["s0", 8], F32)
    sc = asc.ops.Scalar("c", b.g)
    sc.attr.ir_attr.value = "2.5"
    sc.y.dtype = F32
    y = b.op("Maximum", b.op("Mul", b.load(), sc), sc)
    b.store(y)
    assert check_all(b, [{"s0": 5}, {"s0": 1000}], target=SMALL) >= 2
    inputs = b.make_inputs({"s0": 5})
    (x,) = inputs.values()
    got = evaluate(b.g, inputs, {"s0": 5})[b.outputs[0]]
    assert np.allclose(got, np.maximum(x * 2.5, 2.5))
    sc.attr.ir_attr.value = "two"
    with pytest.raises(SimulationError, match="Scalar 'c' has value 'two'"):
        evaluate(b.g, inputs, {"s0": 5})


def test_builder_elementwise_evaluates() -> None:
    b = HB("Eval", ["s0", "s1"])
    x = b.load()
    b.store(b.op("Abs", x))
    shape = b.bindings([3, 5])
    inputs = b.make_inputs(shape)
    ref = evaluate(b.g, inputs, shape)
    assert np.array_equal(ref[b.outputs[0]], np.abs(inputs["x1"]))


def test_builder_random_is_deterministic() -> None:
    random.seed(1)
    b = HB("Det", [4, 6], F32)
    b.store(b.op("Exp", b.load()))
    i1 = b.make_inputs({}, 3)
    i2 = b.make_inputs({}, 3)
    assert all(np.array_equal(i1[k], i2[k]) for k in i1)


