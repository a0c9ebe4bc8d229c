"""Generated fused patterns (elementwise chains, broadcasts, reductions over inner, outer,
middle and all axes, concat along any axis, transpose; 1–5 axes; float16 / float32 / int32;
static and symbolic sizes), the shapes to run them at, and the small-UB target that makes tiles
small and tails not divide. ``ASCENDIR_ASC_SIM_LARGE=1`` makes 400 patterns instead of 64."""

from __future__ import annotations

import os
import random
from typing import Any

from ascendir.asc.target import Target

from .hintgraph import F16, F32, HB, I32

LARGE = os.environ.get("ASCENDIR_ASC_SIM_LARGE") == "1"
N_PATTERNS = 400 if LARGE else 64
KINDS = [
    "ew", "broadcast", "reduce_inner", "reduce_outer", "reduce_mid", "reduce_all", "concat",
    "transpose",
]
SMALL = Target("small", core_num=4, ub_size=16384, block_size=32, max_que_num=4)


def _sizes(rng: random.Random, ndim: int, symbolic: bool) -> list[Any]:
    return [f"s{k}" if symbolic and rng.random() < 0.7 else rng.randint(1, 9) for k in range(ndim)]


def _small_extent(b: HB, axes: list[int]) -> bool:
    """Whether the reduced axes are static and hold at most 256 values together."""
    total = 1
    for k in axes:
        if not isinstance(b.sizes[k], int):
            return False
        total *= b.sizes[k]
    return total <= 256


def build(seed: int) -> tuple[HB, str]:
    """The pattern of ``seed`` and its kind (``KINDS[seed % len(KINDS)]``)."""
    rng = random.Random(seed)
    kind = KINDS[seed % len(KINDS)]
    lo = 2 if kind not in ("ew", "broadcast", "reduce_all") else 1
    if kind == "reduce_mid":
        lo = 3
    ndim = rng.randint(max(lo, 1), 5 if kind != "concat" else 3)
    if kind == "broadcast":
        ndim = max(ndim, 2)
    ints_ok = kind in ("ew", "broadcast", "concat", "transpose")
    dtype = rng.choice([F16, F32, F32, I32] if ints_ok else [F16, F32])
    symbolic = rng.random() < 0.6
    sizes = _sizes(rng, ndim, symbolic)
    if kind == "concat":
        d = rng.randint(0, ndim - 1)
        a, c = rng.choice([(8, 24), (5, 11), (16, 16)])
        sizes[d] = a + c
    b = HB(f"P{seed}", sizes, dtype)
    unary = ["Abs", "Neg"] if dtype == I32 else ["Abs", "Neg", "Exp", "Relu", "Sqrt"]
    binary = ["Add", "Sub", "Mul", "Maximum", "Minimum"]
    if kind == "ew":
        x = b.load()
        ys = [x]
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.5:
                ys.append(b.op(rng.choice(unary), ys[-1]))
            else:
                other = b.load() if rng.random() < 0.5 else rng.choice(ys)
                ys.append(b.op(rng.choice(binary), ys[-1], other))
        b.store(ys[-1])
    elif kind == "broadcast":
        x = b.load()
        axes = sorted(rng.sample(range(ndim), rng.randint(1, ndim - 1)))
        reps = [1 if k in axes else s for k, s in enumerate(b.sizes)]
        y = b.load(reps=reps)
        for k in axes:
            y = b.broadcast(y, k)
        b.store(b.op(rng.choice(binary), x, y))
    elif kind.startswith("reduce"):
        op = rng.choice(["Sum", "Max", "Min", "Mean"])
        if kind == "reduce_inner":
            axes = [ndim - 1] if rng.random() < 0.6 else list(range(rng.randint(1, ndim - 1), ndim))
        elif kind == "reduce_outer":
            axes = [0] if rng.random() < 0.6 else list(range(0, rng.randint(1, ndim - 1)))
        elif kind == "reduce_all":
            axes = list(range(ndim))
        else:
            axes = [rng.randint(1, ndim - 2)]
        if dtype == F16 and op in ("Sum", "Mean") and not _small_extent(b, axes):
            # A float16 sum accumulated tile by tile in UB rounds differently from numpy's
            # pairwise sum by more than any fixed tolerance once thousands of values are added.
            op = "Max" if op == "Sum" else "Min"
        x = b.load()
        if rng.random() < 0.5:
            x = b.op(rng.choice(["Abs", "Exp"]), x)
        r = b.reduce(op, x, axes)
        if rng.random() < 0.4:
            r = b.op("Abs", r)
        b.store(r)
    elif kind == "concat":
        reps1 = list(b.sizes)
        reps2 = list(b.sizes)
        reps1[d] = a
        reps2[d] = c
        x = b.load(reps=reps1)
        y = b.load(reps=reps2)
        if rng.random() < 0.5:
            x = b.op("Abs", x)
        b.store(b.concat([x, y], d))
    else:
        perm = list(range(ndim))
        i, j = sorted(rng.sample(range(ndim), 2))
        perm[i], perm[j] = perm[j], perm[i]
        x = b.op(rng.choice(unary), b.load())
        b.store(b.transpose(x, perm))
    return b, kind


def shapes_for(b: HB, seed: int, count: int) -> list[dict[str, int]]:
    """``count`` bindings of the pattern's symbols (one empty binding for a static pattern)."""
    rng = random.Random(seed * 7 + 1)
    out = []
    for _ in range(count):
        for attempt in range(100):
            choices = [1, 3, 7, 13, 17, 31, 40] if attempt < 50 else [1, 2, 3]
            sh = {s: rng.choice(choices) for s in b.sym_names}
            total = 1
            for v in b.sizes:
                total *= sh[v.expression] if not isinstance(v, int) else v
            if total <= 20000 or not b.sym_names:
                break
        out.append(sh)
    if not b.sym_names:
        out = [{}]
    return out
