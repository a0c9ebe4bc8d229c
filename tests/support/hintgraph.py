"""Builders of fused HintGraph patterns for the backend tests: a HintGraph builder (``HB``) and
``check_all``, which holds every template of a pattern to the reference interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascendir import asc
from ascendir._core import asc as _casc
from ascendir.asc.schedule import schedule
from ascendir.asc.simulate import evaluate, simulate
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling
from ascendir.errors import TilingError

F16 = asc.dtypes.float16
F32 = asc.dtypes.float32
I32 = asc.dtypes.int32

NP_OF = {F16: np.float16, F32: np.float32, I32: np.int32}


def contig(reps: list[Any]) -> list[Any]:
    """The contiguous strides of a view of repeats ``reps`` (0 on a unit axis)."""
    strides: list[Any] = [0] * len(reps)
    acc: Any = 1
    for k in range(len(reps) - 1, -1, -1):
        if reps[k] == 1:
            strides[k] = 0
        else:
            strides[k] = acc
            acc = reps[k] * acc
    return strides


class HB:
    """A HintGraph builder: one set of loop axes, explicit Load/Store, keep-dims views."""

    def __init__(self, name: str, sizes: list[Any], dtype: Any = F16) -> None:
        self.g = asc.HintGraph(name)
        self.dtype = dtype
        self.sizes: list[Any] = []
        self.sym_names: list[str] = []
        for _k, s in enumerate(sizes):
            if isinstance(s, str):
                e = self.g.create_size(s)
                self.sym_names.append(s)
            else:
                e = s
            self.sizes.append(e)
        self.axes = [self.g.create_axis(f"z{k}", s) for k, s in enumerate(self.sizes)]
        self.n = 0
        self.inputs: list[tuple[str, list[Any], Any]] = []
        self.outputs: list[str] = []

    def _name(self, p: str) -> str:
        self.n += 1
        return f"{p}{self.n}"

    def _view(self, node: Any, reps: list[Any], dtype: Any, axes: list[Any] | None = None,
              strides: list[Any] | None = None) -> None:
        node.y.dtype = dtype
        node.y.axis = axes if axes is not None else self.axes
        node.y.size = reps
        node.y.strides = strides if strides is not None else contig(reps)

    def _sched(self, node: Any) -> None:
        node.attr.sched.axis = self.axes

    def load(self, reps: list[Any] | None = None, dtype: Any = None,
             strides: list[Any] | None = None,
             name: str | None = None) -> Any:
        dt = dtype or self.dtype
        reps = reps if reps is not None else list(self.sizes)
        nm = name or self._name("x")
        d = asc.ops.Data(nm, self.g)
        d.attr.ir_attr.index = len(self.inputs)
        self._view(d, reps, dt, strides=strides)
        ld = asc.ops.Load(self._name("load"))
        ld.x = d
        self._sched(ld)
        ld.attr.ir_attr.offset = asc.SizeExpr(0)
        self._view(ld, reps, dt, strides=strides)
        self.inputs.append((nm, reps, dt))
        return ld

    def op(self, ty: str, *ins: Any, reps: list[Any] | None = None, dtype: Any = None,
           axes: list[Any] | None = None, **attrs: Any) -> Any:
        node = getattr(asc.ops, ty)(self._name(ty.lower()))
        names = [p[0] for p in _casc.op_info(ty)["inputs"]]
        for p, v in zip(names, ins, strict=False):
            setattr(node, p, v)
        for k, v in attrs.items():
            setattr(node.attr.ir_attr, k, v)
        self._sched(node)
        r = reps if reps is not None else list(ins[0].y.size)
        self._view(node, r, dtype or ins[0].y.dtype, axes=axes)
        return node

    def reduce(self, ty: str, x: Any, axes: list[int]) -> Any:
        reps = [1 if k in axes else s for k, s in enumerate(x.y.size)]
        return self.op(ty, x, reps=reps)

    def broadcast(self, x: Any, axis: int) -> Any:
        reps = list(x.y.size)
        reps[axis] = self.sizes[axis]
        return self.op("Broadcast", x, reps=reps)

    def transpose(self, x: Any, perm: list[int]) -> Any:
        node = asc.ops.Transpose(self._name("transpose"))
        node.x = x
        self._sched(node)
        reps = [self.sizes[p] for p in perm]
        self._view(node, reps, x.y.dtype, axes=[self.axes[p] for p in perm])
        return node

    def concat(self, xs: list[Any], dim: int) -> Any:
        node = asc.ops.Concat(self._name("concat"))
        node.x = xs
        self._sched(node)
        reps = list(self.sizes)
        self._view(node, reps, xs[0].y.dtype)
        return node

    def store(self, x: Any, name: str | None = None) -> Any:
        st = asc.ops.Store(self._name("store"))
        st.x = x
        self._sched(st)
        st.attr.ir_attr.offset = asc.SizeExpr(0)
        axes = list(x.y.axis)
        reps = list(x.y.size)
        self._view(st, reps, x.y.dtype, axes=axes, strides=contig(reps))
        nm = name or self._name("y")
        out = asc.ops.Output(nm, self.g)
        out.x = st
        out.attr.ir_attr.index = len(self.outputs)
        self._view(out, reps, x.y.dtype, axes=axes, strides=contig(reps))
        self.outputs.append(nm)
        return out

    def bindings(self, values: list[int]) -> dict[str, int]:
        return dict(zip(self.sym_names, values, strict=False))

    def make_inputs(self, sizes: dict[str, int], seed: int = 0) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        out = {}
        for nm, reps, dt in self.inputs:
            count = 1
            for r in reps:
                count *= int(r.evaluate(sizes)) if hasattr(r, "evaluate") else int(r)
            npdt = NP_OF[dt]
            if np.issubdtype(npdt, np.integer):
                out[nm] = rng.integers(-50, 50, size=count).astype(npdt)
            else:
                out[nm] = rng.uniform(0.5, 2.0, size=count).astype(npdt)
        return out


def solved(impl: Any, res: Any, shape: dict[str, int]) -> bool:
    """Whether template ``impl`` solved ``shape`` (``res`` is an item of ``solve_each``).

    A template may not fit a shape on a target (its UB or its core limit): that is a
    ``TilingError`` whose constraint is ``"ub"`` or ``"cores"``. Any other failure is a defect,
    and this asserts so rather than passing over it."""
    if not isinstance(res, Exception):
        return True
    assert isinstance(res, TilingError), (impl.name, shape, res)
    assert res.constraint in ("ub", "cores"), (impl.name, shape, res)
    return False


def check_all(b: HB, shapes: list[dict[str, int]], target: Any = None, seed: int = 0) -> int:
    """Schedule, solve every template for every shape, simulate, compare with evaluate.

    Every shape must be solved by at least one template, and a template that does not solve
    a shape must fail on a resource limit (UB or cores), nothing else."""
    impls = schedule(b.g)
    tgt = target or Target.ascend910b()
    fn = compile_tiling(impls, tgt)
    runs = 0
    for shape in shapes:
        inputs = b.make_inputs(shape, seed)
        ref = evaluate(b.g, inputs, shape)
        ran = 0
        for impl, res in zip(impls, fn.solve_each(shape), strict=True):
            if not solved(impl, res, shape):
                continue
            out = simulate(impl, res, inputs)
            for name in b.outputs:
                a, r = out[name], ref[name]
                if np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_:
                    assert np.array_equal(a, r), (impl.name, shape, name)
                else:
                    tol = 2e-2 if a.dtype == np.float16 else 1e-4
                    assert np.allclose(a.astype(np.float64), r.astype(np.float64), rtol=tol,
                                       atol=tol, equal_nan=True), (impl.name, shape, name)
            ran += 1
        assert ran > 0, f"no template of {b.g.name} solves {shape}"
        runs += ran
    return runs
