"""Kernels of GE's ONNX-compatible recurrent ops: CommonLSTM and CommonGRU.

Semantics are ONNX's LSTM / GRU with their default activations (sigmoid for the gates, tanh
for the cell and hidden candidates): ``x`` is ``[seq, batch, input]``, ``w`` / ``r`` /
``b`` / ``p`` hold one slice per direction with the gates in ONNX's order (LSTM ``i, o, f,
c``; GRU ``z, r, h``). ``sequence_lens`` ends each batch entry early: ``y`` is zero past it
and ``y_h`` / ``y_c`` are the last computed states; the reverse direction starts from each
entry's last valid step. ``y`` is ``[seq, directions, batch, hidden]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import Ctx, kernel

__all__: list[str] = []


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def _check_defaults(ctx: Ctx) -> None:
    for name in ("activations", "activation_alpha", "activation_beta"):
        if ctx.attr(name):
            raise ctx.error(f"{name} other than the defaults are not evaluated")
    clip = ctx.attr("clip", -1.0)
    if clip is not None and float(clip) >= 0:
        raise ctx.error("a cell clip is not evaluated")
    if int(ctx.attr("input_forget", 0) or 0):
        raise ctx.error("input_forget is not evaluated")


def _setup(ctx: Ctx, ins: list[Any], gates: int) -> dict[str, Any]:
    x = np.asarray(ctx.port(ins, "x"))
    w = np.asarray(ctx.port(ins, "w")).astype(np.float64)
    r = np.asarray(ctx.port(ins, "r")).astype(np.float64)
    hidden = int(ctx.attr("hidden_size"))
    direction = str(ctx.attr("direction", "forward") or "forward")
    dirs = 2 if direction == "bidirectional" else 1
    if x.ndim != 3 or w.shape != (dirs, gates * hidden, x.shape[2]) \
            or r.shape != (dirs, gates * hidden, hidden):
        raise ctx.error(f"x {list(x.shape)}, w {list(w.shape)}, r {list(r.shape)} do not fit "
                        f"hidden_size {hidden} and direction {direction}")
    seq, batch = x.shape[:2]
    b = ctx.port(ins, "b")
    b = np.zeros((dirs, 2 * gates * hidden)) if b is None else np.asarray(b, np.float64)
    lens = ctx.port(ins, "sequence_lens")
    lens = np.full(batch, seq) if lens is None else np.asarray(lens).reshape(-1)
    if lens.shape != (batch,) or np.any(lens < 0) or np.any(lens > seq):
        raise ctx.error(f"sequence_lens {lens.tolist()} must be in [0, {seq}] per batch entry")
    h0 = ctx.port(ins, "initial_h")
    h0 = np.zeros((dirs, batch, hidden)) if h0 is None else np.asarray(h0, np.float64)
    return {"x": x, "w": w, "r": r, "b": b, "lens": lens, "h0": h0, "hidden": hidden,
            "dirs": dirs, "reverse": direction == "reverse", "seq": seq, "batch": batch}


def _steps(s: dict[str, Any], d: int, n: int) -> range:
    back = s["reverse"] or d == 1
    return range(n - 1, -1, -1) if back else range(n)


@kernel("CommonLSTM")
def _lstm(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    _check_defaults(ctx)
    s = _setup(ctx, ins, 4)
    hs, dirs, batch, seq = s["hidden"], s["dirs"], s["batch"], s["seq"]
    c0 = ctx.port(ins, "initial_c")
    c0 = np.zeros((dirs, batch, hs)) if c0 is None else np.asarray(c0, np.float64)
    p = ctx.port(ins, "p")
    p = np.zeros((dirs, 3 * hs)) if p is None else np.asarray(p, np.float64)
    x = s["x"].astype(np.float64)
    y = np.zeros((seq, dirs, batch, hs))
    yh, yc = np.array(s["h0"]), np.array(c0)
    for d in range(dirs):
        wb, rb = s["b"][d, :4 * hs], s["b"][d, 4 * hs:]
        pi, po, pf = p[d, :hs], p[d, hs:2 * hs], p[d, 2 * hs:]
        for n in range(batch):
            h, c = s["h0"][d, n], c0[d, n]
            for t in _steps(s, d, int(s["lens"][n])):
                g = s["w"][d] @ x[t, n] + wb + s["r"][d] @ h + rb
                i = _sigmoid(g[:hs] + pi * c)
                f = _sigmoid(g[2 * hs:3 * hs] + pf * c)
                c = f * c + i * np.tanh(g[3 * hs:])
                o = _sigmoid(g[hs:2 * hs] + po * c)
                h = o * np.tanh(c)
                y[t, d, n] = h
            yh[d, n], yc[d, n] = h, c
    dt = s["x"].dtype
    return [y.astype(dt), yh.astype(dt), yc.astype(dt)]


@kernel("CommonGRU")
def _gru(ctx: Ctx, ins: list[Any]) -> list[np.ndarray]:
    _check_defaults(ctx)
    s = _setup(ctx, ins, 3)
    hs, dirs, batch, seq = s["hidden"], s["dirs"], s["batch"], s["seq"]
    linear_before_reset = bool(int(ctx.attr("linear_before_reset", 0) or 0))
    x = s["x"].astype(np.float64)
    y = np.zeros((seq, dirs, batch, hs))
    yh = np.array(s["h0"])
    for d in range(dirs):
        wb, rb = s["b"][d, :3 * hs], s["b"][d, 3 * hs:]
        w, r = s["w"][d], s["r"][d]
        for n in range(batch):
            h = s["h0"][d, n]
            for t in _steps(s, d, int(s["lens"][n])):
                gx = w @ x[t, n] + wb
                gr = r[:2 * hs] @ h + rb[:2 * hs]
                z = _sigmoid(gx[:hs] + gr[:hs])
                rr = _sigmoid(gx[hs:2 * hs] + gr[hs:])
                if linear_before_reset:
                    cand = np.tanh(gx[2 * hs:] + rr * (r[2 * hs:] @ h + rb[2 * hs:]))
                else:
                    cand = np.tanh(gx[2 * hs:] + r[2 * hs:] @ (rr * h) + rb[2 * hs:])
                h = (1 - z) * cand + z * h
                y[t, d, n] = h
            yh[d, n] = h
    dt = s["x"].dtype
    return [y.astype(dt), yh.astype(dt)]
