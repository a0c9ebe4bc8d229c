"""Gather in the AscGraph backend: params and indices read from GM, the output over the loop
axes (params axes before ``axis``, the indices axes, params axes after ``axis``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ascendir import asc
from ascendir.asc.schedule import schedule
from ascendir.asc.simulate import SimulationError, evaluate, simulate
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling
from support.hintgraph import F16, F32, I32, contig, solved

TARGET = Target("gather", core_num=4, ub_size=65536)


def _view(node: Any, dtype: Any, axes: list[Any], sizes: list[Any]) -> None:
    node.y.dtype = dtype
    node.y.axis = axes
    node.y.size = sizes
    node.y.strides = contig(sizes)


def gather_graph(params: list[str], axis: int, indices: list[str], dtype: Any = F32,
                 negative: bool = False, then: str = "Abs") -> Any:
    """Data params ⊕ Data indices → Gather(axis) → `then` → Store; sizes are symbols."""
    g = asc.HintGraph(f"Gather{len(params)}{axis}{len(indices)}")
    size = {s: g.create_size(s) for s in dict.fromkeys(params + indices)}
    out_names = params[:axis] + indices + params[axis + 1:]
    axes = {s: g.create_axis(f"z_{s}", size[s]) for s in out_names}
    gathered = g.create_axis("z_gathered", size[params[axis]])
    p_axes = [axes[s] for s in params[:axis]] + [gathered] + [axes[s] for s in params[axis + 1:]]
    x1 = asc.ops.Data("params", g)
    x1.attr.ir_attr.index = 0
    _view(x1, dtype, p_axes, [size[s] for s in params])
    x2 = asc.ops.Data("indices", g)
    x2.attr.ir_attr.index = 1
    _view(x2, I32, [axes[s] for s in indices], [size[s] for s in indices])
    loop = [axes[s] for s in out_names]
    reps = [size[s] for s in out_names]
    ga = asc.ops.Gather("gather")
    ga.x1 = x1
    ga.x2 = x2
    ga.attr.ir_attr.axis = axis
    ga.attr.ir_attr.negative_index_support = negative
    ga.attr.sched.axis = loop
    _view(ga, dtype, loop, reps)
    op = getattr(asc.ops, then)("then")
    op.x = ga
    op.attr.sched.axis = loop
    _view(op, dtype, loop, reps)
    st = asc.ops.Store("store")
    st.x = op
    st.attr.sched.axis = loop
    st.attr.ir_attr.offset = asc.SizeExpr(0)
    _view(st, dtype, loop, reps)
    out = asc.ops.Output("y", g)
    out.x = st
    out.attr.ir_attr.index = 0
    _view(out, dtype, loop, reps)
    return g


def _inputs(params: list[int], indices: list[int], axis: int, dtype: Any, negative: bool,
            seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    npdt = np.float16 if dtype == F16 else np.float32
    x = rng.standard_normal(params).astype(npdt)
    lo = -params[axis] if negative else 0
    idx = rng.integers(lo, params[axis], size=indices).astype(np.int32)
    want = np.abs(np.take(x, idx, axis=axis))
    return {"params": x.reshape(-1), "indices": idx.reshape(-1)}, want.reshape(-1)


CASES = [
    (["v", "h"], 0, ["b"]),
    (["v", "h"], 0, ["b", "s"]),
    (["a", "v", "h"], 1, ["b"]),
    (["a", "v"], 1, ["b", "s"]),
    (["v"], 0, ["b", "s"]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_gather_simulates_every_template(case: int) -> None:
    params, axis, indices = CASES[case]
    negative = case % 2 == 1
    g = gather_graph(params, axis, indices, negative=negative)
    impls = schedule(g)
    fn = compile_tiling(impls, TARGET)
    runs = 0
    for values in ({"v": 7, "h": 5, "a": 3, "b": 4, "s": 3},
                   {"v": 50, "h": 33, "a": 5, "b": 61, "s": 7}):
        shape = {s: values[s] for s in dict.fromkeys(params + indices)}
        inputs, want = _inputs([shape[s] for s in params], [shape[s] for s in indices], axis,
                               F32, negative)
        assert np.allclose(evaluate(g, inputs, shape)["y"], want)
        for k, t in enumerate(fn.solve_each(shape)):
            if not solved(impls[k], t, shape):
                continue
            assert np.allclose(simulate(impls[k], t, inputs)["y"], want), impls[k].name
            runs += 1
    assert runs >= 2


def test_gather_index_out_of_range_is_reported() -> None:
    g = gather_graph(["v", "h"], 0, ["b"])
    shape = {"v": 4, "h": 3, "b": 2}
    inputs, _ = _inputs([4, 3], [2], 0, F32, False)
    inputs["indices"][1] = 4
    with pytest.raises(SimulationError, match="index 4 outside"):
        evaluate(g, inputs, shape)
    inputs["indices"][1] = -1
    with pytest.raises(SimulationError, match="index -1 outside"):
        evaluate(g, inputs, shape)


def _have_cxx() -> bool:
    from ascendir.asc._cxx import find_compiler
    from ascendir.errors import CxxBuildError

    try:
        find_compiler()
    except CxxBuildError:
        return False
    return True


@pytest.mark.skipif(not _have_cxx(), reason="no C++ compiler (CXX, c++, g++, clang++)")
@pytest.mark.parametrize("case", range(len(CASES)))
def test_gather_cpu_kernel_matches_the_simulator(case: int) -> None:
    """The C++ CPU kernel of every template and tiling equals the simulator bit for bit (f32 and
    f16 params, int32 and int64 indices, negative indices where supported)."""
    params, axis, indices = CASES[case]
    negative = case % 2 == 1
    runs = 0
    for dtype in (F32, F16):
        g = gather_graph(params, axis, indices, dtype=dtype, negative=negative)
        impls = schedule(g)
        k = asc.build_cpu(impls, TARGET, name=f"gather{case}")
        fn = compile_tiling(impls, TARGET)
        for values in ({"v": 7, "h": 5, "a": 3, "b": 4, "s": 3},
                       {"v": 50, "h": 33, "a": 5, "b": 61, "s": 7}):
            shape = {s: values[s] for s in dict.fromkeys(params + indices)}
            inputs, want = _inputs([shape[s] for s in params], [shape[s] for s in indices],
                                   axis, dtype, negative)
            for impl, t in zip(impls, fn.solve_each(shape), strict=True):
                if not solved(impl, t, shape):
                    continue
                out = k.run(t, inputs)["y"]
                assert out.dtype == want.dtype
                assert np.array_equal(out, want)
                runs += 1
    assert runs >= 4


@pytest.mark.skipif(not _have_cxx(), reason="no C++ compiler (CXX, c++, g++, clang++)")
def test_gather_cpu_kernel_reports_an_index_out_of_range() -> None:
    from ascendir.errors import KernelRunError

    g = gather_graph(["v", "h"], 0, ["b"])
    impls = schedule(g)
    k = asc.build_cpu(impls, TARGET, name="gather_oob")
    shape = {"v": 4, "h": 3, "b": 2}
    t = next(t for t in compile_tiling(impls, TARGET).solve_each(shape)
             if not isinstance(t, Exception))
    inputs, _ = _inputs([4, 3], [2], 0, F32, False)
    inputs["indices"][1] = 4
    with pytest.raises(KernelRunError, match="index 4 outside"):
        k.run(t, inputs)
