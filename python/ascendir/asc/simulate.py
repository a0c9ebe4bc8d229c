"""A numpy simulator of ImplGraphs and a reference evaluator of HintGraphs.

``simulate(impl, tiling, inputs)`` runs the loop nest of one ImplGraph for the solved tiling:
for each block, each loop iteration and each node in execution order, Loads copy the addressed
GM region into their UB tensor, compute nodes read and write UB tensors, Stores write back to
GM. The Unified Buffer is one ``uint8`` array of the target's UB size; every queue and buffer
container sits at its offset (all ``buf_num`` slots), and every tensor is read and written
through its container slot with its vectorized strides — so an allocation that lets two live
tensors overlap, or a tiling whose containers are too small, gives wrong numbers.

``evaluate(hint, inputs, sizes)`` computes the HintGraph's result directly. Both return
``{output name: 1-D array}`` (the GM buffer of every Output node); inputs are given per Data
node name (any shape; flattened in C order and addressed with the Load's strides).

numpy is imported lazily.
"""

from __future__ import annotations

import math
from typing import Any

from .._core import asc_backend as _be
from ..types import _ARRAY_NAMES, DataType
from .schedule import _core_of
from .sizes import infer_sizes


class SimulationError(RuntimeError):
    """The plan cannot be executed (unsupported op, inconsistent schedule, UB overflow)."""


def _np() -> Any:
    import numpy as np

    return np


def np_dtype(ge_dtype: int) -> Any:
    """The numpy dtype of a GE data type number (the types numpy itself has)."""
    try:
        name = _ARRAY_NAMES.get(DataType(ge_dtype).name)
        if name is not None:
            return _np().dtype(name)
    except (ValueError, TypeError):
        pass
    raise SimulationError(f"data type {ge_dtype} has no numpy equivalent")


def _gm_dtype(node: dict[str, Any], ge_dtype: int) -> Any:
    """The numpy dtype of a GM node's tensor; an unset dtype names the node."""
    if ge_dtype == 28:
        raise SimulationError(
            f"node '{node['name']}' ({node['type']}) has no dtype: set its output dtype"
        )
    try:
        return np_dtype(ge_dtype)
    except SimulationError:
        raise SimulationError(
            f"node '{node['name']}' ({node['type']}): data type {ge_dtype} has no numpy "
            "equivalent"
        ) from None


def _unary(name: str) -> Any:
    np = _np()
    table = {
        "Abs": np.abs,
        "Exp": np.exp,
        "Ln": np.log,
        "Sqrt": np.sqrt,
        "Rsqrt": lambda x: 1 / np.sqrt(x),
        "Reciprocal": lambda x: 1 / x,
        "Neg": np.negative,
        "Relu": lambda x: np.maximum(x, 0).astype(x.dtype),
        "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "Tanh": np.tanh,
        "Sign": np.sign,
        "LogicalNot": np.logical_not,
        "Isnan": np.isnan,
        "IsFinite": np.isfinite,
        "Nop": lambda x: x,
        "Ub2ub": lambda x: x,
        "Pad": lambda x: x,
        "RemovePad": lambda x: x,
        "Cast": lambda x: x,
        "Transpose": lambda x: x,
        "Erf": _erf,
        "Gelu": _gelu,
    }
    return table.get(name)


def _erf(x: Any) -> Any:
    # math.erf element by element (numpy has none): through a list, about twice as fast as
    # np.vectorize.
    np = _np()
    a = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(math.erf, a.ravel().tolist()), np.float64, a.size).reshape(a.shape)


def _gelu(x: Any) -> Any:
    # The tanh form the vector units compute.
    np = _np()
    x64 = x.astype(np.float64)
    return 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))


def _binary(name: str) -> Any:
    np = _np()
    table = {
        "Add": np.add,
        "Sub": np.subtract,
        "Mul": np.multiply,
        "Div": lambda a, b: a / b if a.dtype.kind == "f" else np.floor_divide(a, b),
        "TrueDiv": np.true_divide,
        "FloorDiv": np.floor_divide,
        "Remainder": np.remainder,
        "Pow": np.power,
        "Maximum": np.maximum,
        "Minimum": np.minimum,
        "LogicalAnd": np.logical_and,
        "LogicalOr": np.logical_or,
        "BitwiseAnd": np.bitwise_and,
        "Eq": np.equal,
        "Ne": np.not_equal,
        "Gt": np.greater,
        "Ge": np.greater_equal,
        "Lt": np.less,
        "Le": np.less_equal,
    }
    return table.get(name)


_REDUCE = {"Sum", "Max", "Min", "Mean", "Prod", "All", "Any", "ArgMax"}
# Reductions that are one numpy function over the reduced axes.
_NP_REDUCE = {"Sum": "sum", "Max": "max", "Min": "min", "Prod": "prod", "All": "all",
              "Any": "any"}

_ATOMIC = {
    "add": lambda a, b: a + b,
    "max": lambda a, b: _np().maximum(a, b),
    "min": lambda a, b: _np().minimum(a, b),
}


def _atomic_identity(kind: str | None, dt: Any) -> Any:
    np = _np()
    if kind == "max":
        return -np.inf if dt.kind == "f" else np.iinfo(dt).min
    if kind == "min":
        return np.inf if dt.kind == "f" else np.iinfo(dt).max
    if kind in (None, "add"):
        return 0
    raise SimulationError(f"unknown atomic store operation '{kind}'")


class _Plan:
    def __init__(self, plan: dict[str, Any]) -> None:
        self.raw = plan
        self.axes = {a["id"]: a for a in plan["axes"]}
        self.nodes = list(plan["nodes"])
        self.by_id = {n["id"]: n for n in self.nodes}
        self.base = sorted(a["id"] for a in plan["axes"] if a["type"] == "original")
        self.base_pos = {a: k for k, a in enumerate(self.base)}
        self._bases: dict[int, set[int]] = {}

    def bases_of(self, a: int) -> set[int]:
        if a not in self._bases:
            ax = self.axes[a]
            if not ax["from"]:
                r = {a}
            else:
                r = set()
                for f in ax["from"]:
                    r |= self.bases_of(f)
            self._bases[a] = r
        return self._bases[a]

    def size(self, a: int) -> int:
        return int(self.axes[a]["size"])

    def ranges(self, env: dict[int, int]) -> dict[int, tuple[int, int]] | None:
        """Base-axis ranges `(start, len)` of a loop environment; None when out of range."""
        idx = dict(env)
        rng: dict[int, tuple[int, int]] = {}
        pending = list(env.items())
        while pending:
            a, i = pending.pop()
            ax = self.axes[a]
            t = ax["type"]
            if t == "original":
                if i >= ax["size"]:
                    return None
                rng[a] = (i, 1)
            elif t in ("block_outer", "block_inner"):
                pair = ax["split_pair"]
                p = ax["from"][0]
                if pair in idx and p not in idx:
                    outer, inner = (a, pair) if t == "block_outer" else (pair, a)
                    pi = idx[outer] * self.size(inner) + idx[inner]
                    if pi >= self.size(p):
                        return None
                    idx[p] = pi
                    pending.append((p, pi))
            elif t == "merged":
                comps = ax["from"]
                rem = i
                vals = []
                for c in reversed(comps):
                    s = self.size(c)
                    vals.append(rem % s)
                    rem //= s
                if rem:
                    return None
                for c, v in zip(reversed(comps), vals, strict=False):
                    idx[c] = v
                    pending.append((c, v))
            elif t == "tile_outer":
                p = ax["from"][0]
                tsize = self.size(ax["split_pair"])
                start = i * tsize
                psize = self.size(p)
                if start >= psize:
                    return None
                ln = min(tsize, psize - start)
                if self.axes[p]["type"] != "original":
                    raise SimulationError(f"tile split of non-original axis {self.axes[p]['name']}")
                rng[p] = (start, ln)
            else:
                raise SimulationError(f"axis {ax['name']} ({t}) cannot be a loop axis")
        return rng


class _Interp:
    """Executes nodes over logical arrays indexed by the graph's base axes."""

    def __init__(self, plan: _Plan, inputs: dict[str, Any]) -> None:
        np = _np()
        self.p = plan
        self.gm: dict[str, Any] = {}
        self.out_names: list[str] = []
        for n in plan.nodes:
            if n["type"] == "Data":
                if n["name"] not in inputs:
                    raise SimulationError(f"no input given for Data node '{n['name']}'")
                dt = _gm_dtype(n, n["outputs"][0]["dtype"])
                # Read-only: neither the simulator nor a kernel writes its inputs.
                self.gm[n["name"]] = np.ascontiguousarray(inputs[n["name"]]).reshape(-1).astype(
                    dt, copy=False)
        consumers: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for n in plan.nodes:
            for _k, src in enumerate(n["inputs"]):
                if src is not None:
                    consumers.setdefault(tuple(src), []).append(n)
        self.consumers = consumers
        # GM output buffers: one per Store (named after its Output consumer).
        self.store_target: dict[int, str] = {}
        for n in plan.nodes:
            if n["compute_type"] not in ("store", "reduce_store"):
                continue
            outs = [c for c in consumers.get((n["id"], 0), []) if c["type"] == "Output"]
            name = outs[0]["name"] if outs else n["name"]
            t = n["outputs"][0]
            size = int(n["attrs"].get("offset", 0)) + 1
            for r, s in zip(t["base_repeats"], t["base_strides"], strict=False):
                size += (max(r, 1) - 1) * abs(s)
            src = outs[0] if outs else n
            dt = _gm_dtype(src, src["outputs"][0]["dtype"])
            if name in self.gm:
                if self.gm[name].size < size:
                    self.gm[name] = np.resize(self.gm[name], size)
            else:
                # An atomic Store needs its output cleared to the identity of its operation
                # before the kernel (as the runtime does); otherwise the buffer starts at zero.
                ident = _atomic_identity(n["attrs"].get("atomic"), dt)
                self.gm[name] = (np.zeros(size, dtype=dt) if ident == 0
                                 else np.full(size, ident, dtype=dt))
                self.out_names.append(name)
            self.store_target[n["id"]] = name

    def scalar_input(self, src: list[int], consumer: str) -> Any:
        """The value of input ``src`` when a Scalar node produces it, else None."""
        prod = self.p.by_id[src[0]]
        if prod["type"] != "Scalar":
            return None
        dt = np_dtype(prod["outputs"][src[1]]["dtype"])
        text = str(prod["attrs"].get("value", ""))
        value: bool | int | float
        try:
            if dt.kind == "b":
                value = text.strip().lower() in ("1", "true")
            elif dt.kind in "iu":
                value = int(text)
            else:
                value = float(text)
        except ValueError:
            raise SimulationError(
                f"node '{consumer}': Scalar '{prod['name']}' has value {text!r}, "
                f"not a {dt.name}"
            ) from None
        return _np().asarray(value, dtype=dt)

    def gather(self, n: dict[str, Any], rng: dict[int, tuple[int, int]]) -> Any:
        """Gather's output over the current ranges: ``x1`` (params) and ``x2`` (indices) are read
        from GM; the indices replace the params axis ``axis``."""
        np = _np()
        params, indices = (self.p.by_id[s[0]] for s in n["inputs"][:2])
        for src in (params, indices):
            if src["name"] not in self.gm:
                raise SimulationError(
                    f"node '{n['name']}': Gather reads '{src['name']}' ({src['type']}), "
                    "the simulator supports Data inputs only"
                )
        t1, t2 = params["outputs"][0], indices["outputs"][0]
        axis = int(n["attrs"].get("axis", 0))
        rank = len(t1["base_axes"])
        if axis < 0:
            axis += rank
        if not 0 <= axis < rank:
            raise SimulationError(f"node '{n['name']}': Gather axis {axis} outside params rank")
        gathered = t1["base_axes"][axis]
        count = int(t1["base_repeats"][axis])
        idx = self.gm[indices["name"]][self.gm_index(t2, self.extents(t2, rng), 0)]
        idx = idx.astype(np.int64)
        if n["attrs"].get("negative_index_support"):
            idx = np.where(idx < 0, idx + count, idx)
        bad = (idx < 0) | (idx >= count)
        if bad.any():
            raise SimulationError(
                f"node '{n['name']}': index {int(idx[bad].flat[0])} outside [0, {count})"
            )
        ext1 = self.extents(t1, rng)
        ext1[self.p.base_pos[gathered]] = (0, 1)
        pos = self.gm_index(t1, ext1, 0) + idx * int(t1["base_strides"][axis])
        return self.gm[params["name"]][pos]

    # --- views -------------------------------------------------------------------------

    def extents(self, t: dict[str, Any], rng: dict[int, tuple[int, int]]) -> list[tuple[int, int]]:
        """(start, len) per base axis for tensor `t` in the current ranges."""
        out = []
        view = {
            a: (r, s)
            for a, r, s in zip(t["base_axes"], t["base_repeats"], t["base_strides"], strict=False)
        }
        for b in self.p.base:
            if b not in view:
                out.append((0, 1))
                continue
            rep, _ = view[b]
            if rep == 1:
                out.append((0, 1))
            elif b in rng:
                out.append(rng[b])
            else:
                out.append((0, rep))
        return out

    def gm_index(self, t: dict[str, Any], ext: list[tuple[int, int]], offset: int) -> Any:
        np = _np()
        view = {a: s for a, s in zip(t["base_axes"], t["base_strides"], strict=False)}
        idx = np.full([e[1] for e in ext], offset, dtype=np.int64)
        nd = len(ext)
        for k, b in enumerate(self.p.base):
            st, ln = ext[k]
            s = view.get(b, 0)
            if ln == 1 and st == 0:
                continue
            shape = [1] * nd
            shape[k] = ln
            idx = idx + ((st + np.arange(ln, dtype=np.int64)) * s).reshape(shape)
        return idx

    # --- execution ---------------------------------------------------------------------

    def compute(self, n: dict[str, Any], ins: list[Any], in_t: list[dict[str, Any]],
                ext_out: list[tuple[int, int]], rng: dict[int, tuple[int, int]]) -> Any:
        # IEEE arithmetic as the vector unit does it: inf - inf is NaN without a warning (a
        # softmax row that a -inf mask hides entirely).
        with _np().errstate(invalid="ignore", divide="ignore", over="ignore"):
            return self._compute(n, ins, in_t, ext_out, rng)

    def _compute(self, n: dict[str, Any], ins: list[Any], in_t: list[dict[str, Any]],
                 ext_out: list[tuple[int, int]], rng: dict[int, tuple[int, int]]) -> Any:
        np = _np()
        ty = n["type"]
        out_t = n["outputs"][0]
        odt = np_dtype(out_t["dtype"])
        ct = n["compute_type"]
        if ct == "broadcast" or ty == "Broadcast":
            return np.broadcast_to(ins[0], [e[1] for e in ext_out]).astype(odt)
        if ty in _REDUCE or ct == "reduce":
            return self.reduce(n, ins[0], in_t[0], out_t).astype(odt)
        if ty == "Concat" or ct == "concat":
            axis = None
            for k, _b in enumerate(self.p.base):
                if any(x.shape[k] != ext_out[k][1] for x in ins):
                    axis = k
                    break
            if axis is None:
                axis = 0
            return np.concatenate(ins, axis=axis).astype(odt)
        f = _unary(ty)
        if f is not None and len(ins) == 1:
            return np.asarray(f(ins[0])).astype(odt)
        f = _binary(ty)
        if f is not None and len(ins) == 2:
            return np.asarray(f(ins[0], ins[1])).astype(odt)
        if ty in ("Where", "Select") and len(ins) == 3:
            return np.where(ins[0], ins[1], ins[2]).astype(odt)
        if ty == "ClipByValue" and len(ins) == 3:
            return np.clip(ins[0], ins[1], ins[2]).astype(odt)
        if ty == "LeakyRelu":
            a = float(n["attrs"].get("negative_slope", 0.01))
            x = ins[0]
            return np.where(x > 0, x, x * a).astype(odt)
        if ty == "Axpy":
            a = float(n["attrs"].get("alpha", 1.0))
            return (ins[0] * a + ins[1]).astype(odt)
        raise SimulationError(f"node '{n['name']}': op {ty} is not supported by the simulator")

    def reduced_axes(self, in_t: dict[str, Any], out_t: dict[str, Any]) -> list[int]:
        inv = {a: r for a, r in zip(in_t["base_axes"], in_t["base_repeats"], strict=False)}
        outv = {a: r for a, r in zip(out_t["base_axes"], out_t["base_repeats"], strict=False)}
        ks = []
        for k, b in enumerate(self.p.base):
            if inv.get(b, 1) != 1 and outv.get(b, 1) == 1:
                ks.append(k)
        return ks

    def reduce(self, n: dict[str, Any], x: Any, in_t: dict[str, Any], out_t: dict[str, Any]) -> Any:
        np = _np()
        ks = tuple(self.reduced_axes(in_t, out_t))
        ty = n["type"]
        if ty in _NP_REDUCE:
            return getattr(np, _NP_REDUCE[ty])(x, axis=ks, keepdims=True)
        if ty == "ArgMax":
            if len(ks) != 1:
                raise SimulationError(
                    f"node '{n['name']}': ArgMax reduces one axis, not {len(ks)}"
                )
            return np.expand_dims(np.argmax(x, axis=ks[0]), ks[0])
        if ty == "Mean":
            total = 1
            inv = {a: r for a, r in zip(in_t["base_axes"], in_t["base_repeats"], strict=False)}
            for k in ks:
                total *= inv.get(self.p.base[k], 1)
            return np.sum(x.astype(np.float64), axis=ks, keepdims=True) / max(total, 1)
        raise SimulationError(f"node '{n['name']}': reduce {ty} is not supported")

    @staticmethod
    def combine(ty: str, acc: Any, part: Any) -> Any:
        np = _np()
        if ty in ("Sum", "Mean"):
            return acc + part
        if ty == "Max":
            return np.maximum(acc, part)
        if ty == "Min":
            return np.minimum(acc, part)
        if ty == "Prod":
            return acc * part
        if ty == "All":
            return np.logical_and(acc, part)
        if ty == "Any":
            return np.logical_or(acc, part)
        raise SimulationError(f"reduce {ty} cannot accumulate")


class _Direct(_Interp):
    """The HintGraph evaluated in one pass (no loops, no UB)."""

    def run(self) -> dict[str, Any]:
        vals: dict[tuple[int, int], Any] = {}
        rng: dict[int, tuple[int, int]] = {}
        for n in self.p.nodes:
            if not n["compute"]:
                continue
            ct = n["compute_type"]
            t = n["outputs"][0]
            if ct == "load":
                src = self.p.by_id[n["inputs"][0][0]]
                ext = self.extents(t, rng)
                idx = self.gm_index(t, ext, int(n["attrs"].get("offset", 0)))
                vals[(n["id"], 0)] = self.gm[src["name"]][idx].astype(np_dtype(t["dtype"]))
                continue
            if ct == "gather":
                vals[(n["id"], 0)] = self.gather(n, rng).astype(np_dtype(t["dtype"]))
                continue
            ins = []
            for s in n["inputs"]:
                v = self.scalar_input(s, n["name"])
                if v is None:
                    if tuple(s) not in vals:
                        prod = self.p.by_id[s[0]]
                        raise SimulationError(
                            f"node '{n['name']}': input from '{prod['name']}' ({prod['type']}) "
                            "is not supported by the simulator"
                        )
                    v = vals[tuple(s)]
                ins.append(v)
            if ct in ("store", "reduce_store"):
                ext = self.extents(t, rng)
                idx = self.gm_index(t, ext, int(n["attrs"].get("offset", 0)))
                g = self.gm[self.store_target[n["id"]]]
                g[idx] = _bc(ins[0], idx.shape).astype(g.dtype)
                continue
            in_t = [self.p.by_id[s[0]]["outputs"][s[1]] for s in n["inputs"]]
            vals[(n["id"], 0)] = self.compute(n, ins, in_t, self.extents(t, rng), rng)
        return {k: self.gm[k] for k in self.out_names}


def _bc(x: Any, shape: Any) -> Any:
    return _np().broadcast_to(x, shape)



class _Sim(_Interp):
    """The ImplGraph's loop nest over a UB byte array."""

    def __init__(self, plan: _Plan, inputs: dict[str, Any], tiling: Any, ub_size: int) -> None:
        super().__init__(plan, inputs)
        npm = _np()
        self.ub_size = ub_size
        self.ub = npm.zeros((ub_size + 7) // 8 * 8, dtype=npm.uint8)
        self.warnings: list[str] = []
        sizes = {}
        if tiling is not None:
            for name, slot, bn in tiling.containers:
                sizes[name] = (int(slot), int(bn))
        self.containers = []
        off = 0
        self.tensor_cont: dict[tuple[int, int], tuple[int, int]] = {}
        for ci, c in enumerate(plan.raw["containers"]):
            slot, bn = sizes.get(c["name"], (int(c["slot_bytes"]), int(c["buf_num"])))
            fam_off: dict[tuple[int, int], int] = {}
            fam_acc: dict[int, int] = {}
            for node, out, rid in c["members"]:
                b = int(self.p.by_id[node]["outputs"][out]["bytes"])
                if c["kind"] == "queue" and rid >= 0:
                    fam_off[(node, out)] = fam_acc.get(rid, 0)
                    fam_acc[rid] = fam_acc.get(rid, 0) + b
                else:
                    fam_off[(node, out)] = 0
                self.tensor_cont[(node, out)] = (ci, rid)
            self.containers.append(
                {"name": c["name"], "kind": c["kind"], "offset": off, "slot": slot,
                 "buf_num": bn, "fam": fam_off, "counter": -1, "rid": None, "round": set()}
            )
            off += slot * bn
        self.ub_used = off
        if off > ub_size:
            raise SimulationError(
                f"containers need {off} bytes but the UB has {ub_size} (graph '{plan.raw['name']}')"
            )
        self.loc: dict[tuple[int, int], int] = {}
        compute = [n for n in plan.nodes if n["compute"]]
        self.compute_nodes = compute
        ref: list[int] = []
        for n in compute:
            if n["loop_axis"] not in n["sched"]:
                raise SimulationError(f"node '{n['name']}': loop axis not in sched.axis")
            d = n["sched"].index(n["loop_axis"]) + 1
            n["_depth"] = d
            pre = n["sched"][:d]
            if pre[: len(ref)] != ref[: len(pre)]:
                raise SimulationError(f"node '{n['name']}': loop axes {pre} do not nest with {ref}")
            if len(pre) > len(ref):
                ref = pre
        self.loops = ref
        self.red_loops: dict[int, list[int]] = {}
        for n in compute:
            if n["compute_type"] == "reduce":
                src = n["inputs"][0]
                in_t = self.p.by_id[src[0]]["outputs"][src[1]]
                rks = {self.p.base[k] for k in self.reduced_axes(in_t, n["outputs"][0])}
                # Each core starts its own partial result: block loops never accumulate.
                self.red_loops[n["id"]] = [
                    a for a in n["sched"][: n["_depth"]]
                    if self.p.bases_of(a) & rks and self.p.axes[a]["type"] != "block_outer"
                ]

    # --- UB placement ------------------------------------------------------------------

    def ub_offsets(self, t: dict[str, Any], ext: list[tuple[int, int]], what: str) -> Any:
        npm = _np()
        vs: dict[int, int] = {}
        for b, s in zip(t["vect_base"], t["vect_strides"], strict=False):
            if b >= 0 and s != 0:
                vs[b] = s
        nd = len(ext)
        off = npm.zeros([e[1] for e in ext], dtype=npm.int64)
        for k, b in enumerate(self.p.base):
            ln = ext[k][1]
            if ln == 1:
                continue
            if b not in vs:
                raise SimulationError(
                    f"{what}: base axis {self.p.axes[b]['name']} has extent {ln} "
                    "but is not vectorized"
                )
            shape = [1] * nd
            shape[k] = ln
            off = off + (npm.arange(ln, dtype=npm.int64) * vs[b]).reshape(shape)
        return off

    def acquire(self, key: tuple[int, int], fresh: bool) -> int:
        ci, rid = self.tensor_cont[key]
        c = self.containers[ci]
        if not fresh and key in self.loc:
            return self.loc[key]
        if c["kind"] == "queue":
            if c["rid"] == rid and rid >= 0 and key not in c["round"]:
                c["round"].add(key)
            else:
                c["counter"] += 1
                c["rid"] = rid
                c["round"] = {key}
            slot = c["counter"] % c["buf_num"]
        else:
            slot = 0
        off = c["offset"] + slot * c["slot"] + c["fam"].get(key, 0)
        self.loc[key] = off
        return off

    def ub_write(self, key: tuple[int, int], t: dict[str, Any], val: Any,
                 ext: list[tuple[int, int]], base: int, name: str) -> None:
        dt = np_dtype(t["dtype"])
        if base % dt.itemsize:
            raise SimulationError(f"node '{name}': UB offset {base} not aligned to {dt.itemsize}")
        off = self.ub_offsets(t, ext, f"node '{name}'")
        end = base + (int(off.max()) + 1) * dt.itemsize if off.size else base
        if end > self.ub_size:
            raise SimulationError(
                f"node '{name}': write [{base}, {end}) beyond the UB ({self.ub_size})"
            )
        ci, _ = self.tensor_cont[key]
        c = self.containers[ci]
        rel = base - c["offset"]
        slot_end = c["offset"] + (rel // max(c["slot"], 1) + 1) * c["slot"]
        if end > slot_end:
            self.warnings.append(f"node '{name}' writes {end - slot_end} bytes past its slot")
        view = self.ub.view(dt)
        view[base // dt.itemsize + off] = _bc(val, off.shape).astype(dt)

    def ub_read(self, key: tuple[int, int], t: dict[str, Any], ext: list[tuple[int, int]],
                name: str) -> Any:
        if key not in self.loc:
            raise SimulationError(f"node '{name}' reads a tensor that was never written")
        base = self.loc[key]
        dt = np_dtype(t["dtype"])
        off = self.ub_offsets(t, ext, f"input of '{name}'")
        return self.ub.view(dt)[base // dt.itemsize + off].copy()

    # --- loops -------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        self._run(0, self.compute_nodes, {})
        return {k: self.gm[k] for k in self.out_names}

    def _run(self, level: int, nodes: list[dict[str, Any]], env: dict[int, int]) -> None:
        i = 0
        while i < len(nodes):
            n = nodes[i]
            if n["_depth"] == level:
                self.exec_node(n, env)
                i += 1
                continue
            j = i
            while j < len(nodes) and nodes[j]["_depth"] > level:
                j += 1
            group = nodes[i:j]
            a = self.loops[level]
            for k in range(self.p.size(a)):
                env2 = dict(env)
                env2[a] = k
                if self.p.ranges(env2) is None:
                    continue
                self._run(level + 1, group, env2)
            i = j

    def exec_node(self, n: dict[str, Any], env: dict[int, int]) -> None:
        rng = self.p.ranges(env)
        if rng is None:
            return
        ct = n["compute_type"]
        t = n["outputs"][0]
        key = (n["id"], 0)
        ext = self.extents(t, rng)
        if ct == "load":
            src = self.p.by_id[n["inputs"][0][0]]
            idx = self.gm_index(t, ext, int(n["attrs"].get("offset", 0)))
            val = self.gm[src["name"]][idx]
            base = self.acquire(key, True)
            self.ub_write(key, t, val, ext, base, n["name"])
            return
        if ct == "gather":
            base = self.acquire(key, True)
            self.ub_write(key, t, self.gather(n, rng), ext, base, n["name"])
            return
        ins = []
        in_t = []
        for s in n["inputs"]:
            pt = self.p.by_id[s[0]]["outputs"][s[1]]
            in_t.append(pt)
            v = self.scalar_input(s, n["name"])
            if v is None:
                v = self.ub_read(tuple(s), pt, self.extents(pt, rng), n["name"])
            ins.append(v)
        if ct in ("store", "reduce_store"):
            idx = self.gm_index(t, ext, int(n["attrs"].get("offset", 0)))
            g = self.gm[self.store_target[n["id"]]]
            val = _bc(ins[0], idx.shape).astype(g.dtype)
            atomic = n["attrs"].get("atomic")
            if atomic:
                val = _ATOMIC[atomic](g[idx], val).astype(g.dtype)
            g[idx] = val
            return
        val = self.compute(n, ins, in_t, ext, rng)
        if n["id"] in self.red_loops:
            loops = self.red_loops[n["id"]]
            first = all(env.get(a, 0) == 0 for a in loops)
            if not first:
                prev = self.ub_read(key, t, ext, n["name"])
                val = self.combine(n["type"], prev, val)
            base = self.acquire(key, first)
        else:
            base = self.acquire(key, True)
        self.ub_write(key, t, val, ext, base, n["name"])


def export_plan(graph: Any, bindings: dict[str, int]) -> dict[str, Any]:
    """The numeric plan of ``graph`` (sizes evaluated with ``bindings``) the simulator runs."""
    return dict(_be.export_plan(_core_of(graph), dict(bindings)))


def simulate(impl: Any, tiling: Any, inputs: dict[str, Any], *, plan: dict[str, Any] | None = None,
             ub_size: int | None = None) -> dict[str, Any]:
    """Run ``impl`` with ``tiling`` on numpy; ``{output name: 1-D array}``.

    ``plan`` may be given (e.g. a deliberately modified :func:`export_plan` result) to run
    something other than the graph's own allocation.
    """
    bindings = dict(tiling.shape)
    bindings.update(dict(tiling.sizes))
    if plan is None:
        plan = export_plan(impl, bindings)
    if plan.get("tiling_key", -1) != tiling.tiling_key:
        raise SimulationError(
            f"tiling is for template {tiling.tiling_key}, "
            f"graph '{plan['name']}' is {plan['tiling_key']}"
        )
    sim = _Sim(_Plan(plan), inputs, tiling, int(ub_size or tiling.ub_size))
    return sim.run()


def simulate_detailed(impl: Any, tiling: Any, inputs: dict[str, Any],
                      plan: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Like :func:`simulate`, also returning the slot-overflow warnings."""
    bindings = dict(tiling.shape)
    bindings.update(dict(tiling.sizes))
    if plan is None:
        plan = export_plan(impl, bindings)
    sim = _Sim(_Plan(plan), inputs, tiling, int(tiling.ub_size))
    return sim.run(), sim.warnings


def evaluate(
    hint: Any, inputs: dict[str, Any], sizes: dict[str, int] | None = None
) -> dict[str, Any]:
    """The HintGraph's result computed directly; ``{output name: 1-D array}``. Symbols not in
    ``sizes`` are inferred from the inputs' lengths where a Load's view decides them
    (:func:`infer_sizes`)."""
    bindings = infer_sizes(hint, inputs, sizes)
    plan = export_plan(hint, bindings)
    return _Direct(_Plan(plan), inputs).run()


__all__ = ["SimulationError", "evaluate", "export_plan", "infer_sizes", "simulate",
           "simulate_detailed"]
