"""Graph plumbing and control flow: Const / Constant, Cast, IdentityN, TransData, Aipp, If /
StatelessIf, Case, While, Loop, PartitionedCall, and AscBackend (the compiler's fused
kernels, run through ``asc.evaluate`` of their HintGraph).

Subgraph Data nodes read the parent input named by their ``_parent_node_index`` (the input
anchor index of the parent node); subgraph NetOutput input ``i`` is parent output
``_parent_node_index`` (``i`` when unset). ``Loop`` is ONNX's: body inputs 0 and 1 are the
iteration number and the condition, 2... the loop-carried values (the parent's inputs at the
same index), then the captured outer values; body outputs are the condition, the carried
values, then the scan outputs (stacked along a new first axis); the body's condition output
has ``_parent_node_index`` -1 and the others ``i - 1``, so a Loop runs its body in body order.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from ..errors import AscendIRError
from ._core import Ctx, kernel, np_dtype

__all__: list[str] = []


@kernel("Const", "Constant")
def _const(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    v = ctx.cache.get("value")
    if v is None:
        t = ctx.attr("value")
        if t is None or not hasattr(t, "numpy"):
            raise ctx.error("has no tensor attribute 'value'")
        v = t.numpy()  # a read-only view of the tensor's bytes: no copy
        ctx.cache["value"] = v
    return v


@kernel("Cast")
def _cast(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    dst = ctx.attr("dst_type")
    dt = ctx.out_desc_dtype(0) if dst is None else np_dtype(dst)
    if dt is None:
        raise ctx.error("has no dst_type")
    if dt == np.bool_:
        return x != 0
    if dt.kind in "iu" and x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(dt)
    if dt.name.startswith("float8") and dt.name != "float8_e8m0fnu" and bool(
            ctx.attr("saturate", True)):
        import ml_dtypes

        info = ml_dtypes.finfo(dt)
        return np.clip(x.astype(np.float32), float(info.min), float(info.max)).astype(dt)
    return x.astype(dt)


@kernel("IdentityN")
def _identity_n(ctx: Ctx, ins: list[Any]) -> list[Any]:
    return list(ins)


# ---------------------------------------------------------------- formats


def _c0(ctx: Ctx, x: np.ndarray) -> int:
    from .._core import format_c0_value

    try:
        c0 = format_c0_value(int(ctx.node.op_desc.output_desc(0).format))
    except (AscendIRError, ValueError, TypeError):
        c0 = 0
    if c0 > 0:
        return int(c0)
    return 32 if x.dtype.itemsize == 1 else 16


def _out_shape(ctx: Ctx) -> tuple[int, ...]:
    return tuple(ctx.node.op_desc.output_desc(0).shape)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@kernel("TransData")
def _trans_data(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    x = np.asarray(ins[0])
    src = str(ctx.attr("src_format", "")).upper()
    dst = str(ctx.attr("dst_format", "")).upper()
    if src == dst:
        return x
    if {src, dst} == {"NCHW", "NHWC"}:
        return np.transpose(x, (0, 2, 3, 1) if src == "NCHW" else (0, 3, 1, 2))
    if src in ("NCHW", "NHWC") and dst == "NC1HWC0":
        nchw = x if src == "NCHW" else np.transpose(x, (0, 3, 1, 2))
        n, c, h, w = nchw.shape
        c0 = _c0(ctx, x)
        c1 = _ceil(c, c0)
        pad = np.zeros((n, c1 * c0, h, w), x.dtype)
        pad[:, :c] = nchw
        return pad.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2)
    if src == "NC1HWC0" and dst in ("NCHW", "NHWC"):
        n, c1, h, w, c0 = x.shape
        full = x.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)
        shape = _out_shape(ctx)
        c = shape[1] if dst == "NCHW" else shape[3]
        if c < 0:
            raise ctx.error("the output desc does not say how many channels to keep")
        nchw = full[:, :c]
        return nchw if dst == "NCHW" else np.transpose(nchw, (0, 2, 3, 1))
    if dst == "FRACTAL_NZ" and src in ("ND", "NCHW", "NHWC"):
        if x.ndim < 2:
            x = x.reshape((1,) * (2 - x.ndim) + x.shape)
        *lead, m, n = x.shape
        c0 = _c0(ctx, x)
        m1, n1 = _ceil(m, 16), _ceil(n, c0)
        pad = np.zeros((*lead, m1 * 16, n1 * c0), x.dtype)
        pad[..., :m, :n] = x
        r = pad.reshape(*lead, m1, 16, n1, c0)
        k = len(lead)
        return r.transpose(*range(k), k + 2, k, k + 1, k + 3)
    if src == "FRACTAL_NZ" and dst in ("ND", "NCHW", "NHWC"):
        *lead, n1, m1, m0, c0 = x.shape
        k = len(lead)
        full = x.transpose(*range(k), k + 1, k + 2, k, k + 3).reshape(*lead, m1 * m0, n1 * c0)
        shape = _out_shape(ctx)
        if len(shape) < 2 or shape[-1] < 0 or shape[-2] < 0:
            raise ctx.error("the output desc does not give the ND shape to keep")
        return full[..., : shape[-2], : shape[-1]].reshape(shape)
    raise ctx.error(f"TransData from {src or '?'} to {dst or '?'} is not supported",)


@kernel("Aipp")
def _aipp(ctx: Ctx, ins: list[Any]) -> np.ndarray:
    path = str(ctx.attr("aipp_config_path", ""))
    if path and os.path.exists(path) and os.path.getsize(path) > 0:
        raise ctx.error(f"AIPP configuration '{path}' (crop, colour conversion, "
                        "normalisation) is not evaluated; only the empty configuration is")
    x = np.asarray(ins[0])
    # The empty configuration: layout to NCHW, values as float16.
    if x.ndim == 4 and ctx.in_format(0) != "NCHW":
        x = np.transpose(x, (0, 3, 1, 2))
    return x.astype(np.float16)


# ---------------------------------------------------------------- control flow


def _truth(ctx: Ctx, v: Any) -> bool:
    a = np.asarray(v)
    if a.ndim == 0:
        return bool(a)
    if a.size == 1:
        return bool(a.reshape(()))
    return a.size > 0  # GE: a non-scalar condition is true when it is not empty


def _feeds(ins: list[Any]) -> dict[int, Any]:
    return {i: v for i, v in enumerate(ins) if v is not None}


def _outputs(ctx: Ctx, outs: list[Any]) -> list[Any]:
    if len(outs) < ctx.num_outputs:
        raise ctx.error(f"the subgraph returns {len(outs)} values for {ctx.num_outputs} outputs")
    return outs[: ctx.num_outputs]


@kernel("If", "StatelessIf")
def _if(ctx: Ctx, ins: list[Any]) -> list[Any]:
    branch = "then_branch" if _truth(ctx, ctx.port(ins, "cond")) else "else_branch"
    return _outputs(ctx, ctx.call(ctx.subgraph_of(branch), _feeds(ins)))


@kernel("Case")
def _case(ctx: Ctx, ins: list[Any]) -> list[Any]:
    n = ctx.subgraph_count()
    if n == 0:
        raise ctx.error("has no branches")
    i = int(np.asarray(ctx.port(ins, "branch_index")).reshape(-1)[0])
    if not 0 <= i < n:
        i = n - 1  # GE / TF: an out-of-range index runs the last branch
    return _outputs(ctx, ctx.call(ctx.subgraph(i), _feeds(ins)))


@kernel("PartitionedCall")
def _partitioned_call(ctx: Ctx, ins: list[Any]) -> list[Any]:
    return _outputs(ctx, ctx.call(ctx.subgraph_of("f"), _feeds(ins)))


@kernel("While")
def _while(ctx: Ctx, ins: list[Any]) -> list[Any]:
    cond_g, body_g = ctx.subgraph_of("cond"), ctx.subgraph_of("body")
    values = list(ins)
    while True:
        c = ctx.call(cond_g, _feeds(values))
        if not c or not _truth(ctx, c[0]):
            break
        new = ctx.call(body_g, _feeds(values))
        if len(new) != len(values):
            raise ctx.error(f"the body returns {len(new)} values for {len(values)} loop "
                            "variables")
        values = new
    return _outputs(ctx, values)


@kernel("Loop")
def _loop(ctx: Ctx, ins: list[Any]) -> list[Any]:
    body = ctx.subgraph_of("body")
    trip = ctx.port(ins, "max_trip_count")
    cond = ctx.port(ins, "cond")
    n_own = ctx.attr("_onnx_num_inputs")
    carried_idx = [i for i, n in enumerate(ctx.in_names)
                   if n.startswith("input") and n[5:].isdigit()]
    n_carried = len(carried_idx) if n_own is None else int(n_own) - 2
    if n_carried < 0 or n_carried > len(carried_idx):
        raise ctx.error(f"_onnx_num_inputs {n_own} does not fit its {len(ins)} inputs")
    state_idx = carried_idx[:n_carried]
    limit = None if trip is None else int(np.asarray(trip).reshape(-1)[0])
    if limit is None and cond is None:
        raise ctx.error("has neither a trip count nor a condition: it would never end")
    keep = bool(_truth(ctx, cond)) if cond is not None else True
    feeds = _feeds(ins)
    state = [ins[i] for i in state_idx]
    scans: list[list[Any]] = []
    i = 0
    while keep and (limit is None or i < limit):
        feeds[0] = np.asarray(i, np.int64)
        feeds[1] = np.asarray(keep)
        for j, p in enumerate(state_idx):
            feeds[p] = state[j]
        outs = ctx.call(body, feeds, body_order=True)
        if len(outs) < 1 + n_carried:
            raise ctx.error(f"the body returns {len(outs)} values; it needs the condition and "
                            f"{n_carried} loop-carried values")
        keep = _truth(ctx, outs[0]) if outs[0] is not None else keep
        state = outs[1: 1 + n_carried]
        scans.append(outs[1 + n_carried:])
        i += 1
    n_scan = ctx.num_outputs - n_carried
    results: list[Any] = list(state)
    for k in range(n_scan):
        if scans:
            results.append(np.stack([np.asarray(s[k]) for s in scans]))
        else:
            d = ctx.node.op_desc.output_desc(n_carried + k)
            tail = [max(int(v), 0) for v in d.shape[1:]] if d.shape[:1] else []
            dt = ctx.out_desc_dtype(n_carried + k) or np.dtype(np.float32)
            results.append(np.zeros((0, *tail), dt))
    return _outputs(ctx, results)


# ---------------------------------------------------------------- AscBackend

_SOURCE = re.compile(r"^\s*(\w+)\s*:\s*input\s+(\d+)\s+dim\s+(\d+)\s*$")


def _hint_of(ctx: Ctx) -> Any:
    hint = ctx.cache.get("hint")
    if hint is None:
        from ..asc import ASCGRAPH_ATTR_KEY, AscGraph

        raw = ctx.attr(ASCGRAPH_ATTR_KEY)
        if raw is None:
            raise ctx.error(f"has no HintGraph (attribute '{ASCGRAPH_ATTR_KEY}')")
        hint = AscGraph.from_bytes(bytes(raw))
        datas = sorted((n for n in hint.nodes if n.type == "Data"),
                       key=lambda n: int(n.attr.ir_attr.index))
        outs = sorted((n for n in hint.nodes if n.type == "Output"),
                      key=lambda n: int(n.attr.ir_attr.index))
        ctx.cache["hint"] = hint
        ctx.cache["io"] = (datas, outs)
    return hint


def _symbolic_shape(text: Any, sizes: dict[str, int]) -> list[int] | None:
    """``"[s0, 4, (32 * s1)]"`` evaluated at ``sizes``; None when it does not evaluate."""
    from ..asc import parse_expr

    body = str(text).strip()
    if not (body.startswith("[") and body.endswith("]")):
        return None
    body = body[1:-1].strip()
    if not body:
        return []
    dims: list[int] = []
    depth, start = 0, 0
    parts = []
    for i, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    try:
        for p in parts:
            dims.append(int(parse_expr(p.strip()).evaluate(sizes)))
    except (AscendIRError, ValueError, TypeError, KeyError):
        return None
    return dims


@kernel("AscBackend")
def _asc_backend(ctx: Ctx, ins: list[Any]) -> list[Any]:
    from ..asc.simulate import SimulationError
    from ..asc.simulate import evaluate as asc_evaluate

    hint = _hint_of(ctx)
    datas, outs = ctx.cache["io"]
    if len(datas) != len(ins):
        raise ctx.error(f"the HintGraph reads {len(datas)} tensors, the node has {len(ins)} "
                        "inputs")
    sizes: dict[str, int] = {}
    inputs: dict[str, Any] = {}
    for d, v in zip(datas, ins, strict=True):
        a = np.asarray(v)
        reps = list(d.y.repeats)
        if len(reps) == a.ndim:
            for e, dim in zip(reps, a.shape, strict=True):
                if e.is_symbol():
                    sizes.setdefault(str(e.expression), int(dim))
        inputs[d.name] = np.ascontiguousarray(a).reshape(-1)
    for s in ctx.attr("_ascendir_symbols") or []:
        m = _SOURCE.match(str(s))
        if m and m.group(1) not in sizes:
            src = ctx.run.root_inputs.get(int(m.group(2)))
            if src is not None and int(m.group(3)) < np.ndim(src):
                sizes[m.group(1)] = int(np.shape(src)[int(m.group(3))])
    try:
        res = asc_evaluate(hint, inputs, sizes)
    except SimulationError as e:
        raise ctx.error(f"asc.evaluate: {e}") from e
    results = []
    graph_shapes = ctx.attr("_ascendir_output_symbol_shape") or []
    for k, o in enumerate(outs):
        flat = np.asarray(res[o.name])
        # The graph-level shape first (the HintGraph drops unit dims it does not need).
        shape = _symbolic_shape(graph_shapes[k], sizes) if k < len(graph_shapes) else None
        if shape is None or int(np.prod(shape)) != flat.size:
            try:
                shape = [int(e.evaluate(sizes)) for e in o.y.repeats]
            except (AscendIRError, ValueError, TypeError, KeyError):
                shape = list(ctx.node.op_desc.output_desc(k).shape)
        want = ctx.out_desc_dtype(k)
        arr = flat.reshape(shape)
        if want is not None and arr.dtype != want:
            arr = arr.astype(want)
        results.append(arr)
    if len(results) != ctx.num_outputs:
        raise ctx.error(f"the HintGraph writes {len(results)} tensors, the node has "
                        f"{ctx.num_outputs} outputs")
    return results

