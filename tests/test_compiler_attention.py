"""The compiler's attention pass: ``BatchMatMul → scale → + mask → Softmax → BatchMatMul``
becomes GE's ``FlashAttentionScore`` (stage 4), and the compiled graph evaluates equal to the
original (``air.evaluate``) at two batch sizes of a dynamic batch dim. Forms the real op does
not take, and shared intermediates, are left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ascendir as air

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import models  # noqa: E402

N, S, D = 2, 8, 4


def attention(variant: str) -> air.Graph:
    """One attention over q, k, v of [B, N, S, D] (B dynamic) in the form ``variant`` names."""
    g = air.Graph(variant)
    f32 = air.float32
    q = g.add_input("q", air.TensorDesc([-1, N, S, D], f32))
    v = g.add_input("v", air.TensorDesc([-1, N, S, D], f32))
    if variant == "key_given_transposed":
        kt = g.add_input("k", air.TensorDesc([-1, N, D, S], f32))
        s = g.add_op("BatchMatMulV2", [q, kt], name="qk")
    else:
        k = g.add_input("k", air.TensorDesc([-1, N, S, D], f32))
        if variant == "adj_x2":
            s = g.add_op("BatchMatMulV2", [q, k], name="qk", attrs={"adj_x2": True})
        else:
            kt = g.add_op("TransposeD", [k], name="kt", attrs={"perm": [0, 1, 3, 2]})
            s = g.add_op("BatchMatMulV2", [q, kt], name="qk")
    mask = None
    if variant in ("bert", "add_then_mul", "shared_softmax", "key_given_transposed", "adj_x2"):
        m = g.add_input("m", air.TensorDesc([-1, 1, 1, S], f32))
        mask = g.add_op("Mul", [m, g.add_const("big", np.float32(-10000.0))], name="mask")
    elif variant == "full_mask":
        mask = g.add_input("m", air.TensorDesc([-1, N, S, S], f32))
    elif variant == "causal":
        tri = np.triu(np.full((S, S), -1e4, np.float32), 1)[None, None]
        mask = g.add_const("causal", tri)
    elif variant == "row_mask":  # [1, 1, 1, S]: no form of the real op
        mask = g.add_const("row", np.linspace(-1, 1, S, dtype=np.float32)[None, None, None])
    scale = g.add_const("scale", np.float32(np.sqrt(D)))
    if variant == "add_then_mul":
        s = g.add_op("Add", [s, mask], name="plus")
        s = g.add_op("Mul", [s, g.add_const("inv", np.float32(1 / np.sqrt(D)))], name="scaled")
    else:
        if variant != "no_scale":
            s = g.add_op("RealDiv", [s, scale], name="scaled")
        if mask is not None:
            s = g.add_op("Add", [s, mask], name="plus")
    p = g.add_op("SoftmaxV2", [s], name="probs", attrs={"axes": [-1]})
    o = g.add_op("BatchMatMulV2", [p, v], name="ctx")
    y = g.add_op("Relu", [g.add_op("Add", [o, q], name="res")], name="y")
    g.set_outputs([y, p] if variant == "shared_softmax" else [y])
    return g


def feeds(g: air.Graph, batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for n in g.inputs:
        shape = [batch if d == -1 else d for d in n.op_desc.output_desc(0).shape]
        x = rng.standard_normal(shape).astype(np.float32)
        out[n.name] = (x > 0).astype(np.float32) if n.name == "m" and shape[1] == 1 else x
    return out


def hints(g: air.Graph, batch: int = 2) -> dict[str, list[int]]:
    """One batch hint for every input (each -1 dim is its own symbol until a broadcast or a
    matmul meets it with another)."""
    return {n.name: [batch if d == -1 else d for d in n.op_desc.output_desc(0).shape]
            for n in g.inputs}


def assert_same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for k in a:
        assert a[k].shape == b[k].shape, k
        np.testing.assert_allclose(b[k], a[k], rtol=1e-4, atol=1e-5, err_msg=k)


def flash(cm: air.compiler.CompiledModel) -> list[air.Node]:
    return [n for n in cm.graph.nodes if n.type == "FlashAttentionScore"]


FUSED = {
    # variant: (pse_type, tiled mask)
    "bert": (0, True),
    "add_then_mul": (1, True),
    "full_mask": (0, False),
    "causal": (0, True),
    "no_scale": (1, False),
    "key_given_transposed": (0, True),
    "adj_x2": (0, True),
}


@pytest.mark.parametrize("variant", sorted(FUSED))
def test_attention_becomes_flash_attention_score_and_evaluates_equal(variant):
    g = attention(variant)
    before = g.to_bytes()
    cm = air.compile(g, input_shapes=hints(g))
    assert g.to_bytes() == before  # the caller's graph is untouched
    (fa,) = flash(cm)
    pse_type, tiled = FUSED[variant]
    assert fa.attrs["input_layout"] == "BNSD" and fa.attrs["head_num"] == N
    scale = 1.0 if variant == "no_scale" else 1 / np.sqrt(D)
    assert fa.attrs["scale_value"] == pytest.approx(scale, rel=1e-6)
    has_mask = variant != "no_scale"
    if has_mask:
        assert fa.attrs["pse_type"] == pse_type
    assert (fa.input_source("real_shift") is not None) == has_mask
    assert any(n.type == "Tile" for n in cm.graph.nodes) == tiled
    assert not any(n.type == "SoftmaxV2" for n in cm.graph.nodes)
    assert "SoftmaxV2" not in {t for k in cm.kernels for t in k.member_types}
    assert list(fa.attrs["_datadump_original_op_types"])[-2:] == ["SoftmaxV2", "BatchMatMulV2"]
    assert cm.report.data["simplify"]["attention_fused"] == 1
    for batch in (2, 3):
        f = feeds(g, batch, seed=batch)
        assert_same(air.evaluate(g, f), air.evaluate(cm.graph, f))


@pytest.mark.parametrize("variant", ["row_mask", "shared_softmax"])
def test_forms_the_op_does_not_take_are_left_alone(variant):
    g = attention(variant)
    cm = air.compile(g, input_shapes=hints(g))
    assert not flash(cm)
    assert "SoftmaxV2" in {t for k in cm.kernels for t in k.member_types}
    f = feeds(g, 2)
    assert_same(air.evaluate(g, f), air.evaluate(cm.graph, f))


def test_the_pass_can_be_switched_off():
    g = attention("bert")
    assert flash(air.compile(g, options=air.CompileOptions(fuse_attention=False))) == []
    assert flash(air.compile(g, options=air.CompileOptions(fusion=False))) == []


def test_grouped_or_broadcast_heads_are_left_alone():
    g = air.Graph("gqa")
    q = g.add_input("q", air.TensorDesc([2, N, S, D], air.float32))
    k = g.add_input("k", air.TensorDesc([2, 1, S, D], air.float32))
    v = g.add_input("v", air.TensorDesc([2, 1, S, D], air.float32))
    s = g.add_op("BatchMatMulV2", [q, k], attrs={"adj_x2": True})
    p = g.add_op("SoftmaxV2", [s], attrs={"axes": [-1]})
    g.set_outputs([g.add_op("BatchMatMulV2", [p, v])])
    cm = air.compile(g)
    assert not flash(cm)
    f = feeds(g, 2)
    assert_same(air.evaluate(g, f), air.evaluate(cm.graph, f))


def test_the_registered_rule_gives_the_recorded_shapes_and_a_saved_model_keeps_the_node(tmp_path):
    g = attention("bert")
    cm = air.compile(g, input_shapes=hints(g))
    (fa,) = flash(cm)
    od = fa.op_desc
    got = air.infer.infer_node(fa)
    assert got is not None
    recorded = [tuple(od.output_desc(i).shape) for i in range(od.num_outputs)]
    assert [tuple(s) for s, _ in got] == recorded == [
        (-1, N, S, 8), (-1, N, S, 8), (0,), (-1, N, S, D)]
    assert [dt for _, dt in got] == [air.float32] * 4
    cm.save(tmp_path, emit=("om",))
    back = air.compiler.load(str(tmp_path / "bert.om"))
    assert [n.name for n in back.graph.nodes if n.type == "FlashAttentionScore"] == [fa.name]
    f = feeds(g, 2)
    assert_same(air.evaluate(g, f), air.evaluate(back.graph, f))


def _reference(q, k, v, scale, pse=None, pse_type=1, mask=None):
    s = q @ np.swapaxes(k, -1, -2)
    if pse is not None:
        s = scale * (s + pse) if pse_type == 1 else scale * s + pse
    else:
        s = scale * s
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("layout", ["BNSD", "BSND", "BSH", "SBH"])
def test_the_evaluator_runs_every_layout_with_a_boolean_mask(layout):
    rng = np.random.default_rng(1)
    b, n, s, d = 2, 3, 5, 4
    q, k, v = (rng.standard_normal((b, n, s, d)).astype(np.float32) for _ in range(3))
    mask = np.triu(np.ones((s, s), bool), 1)
    pse = rng.standard_normal((b, n, s, s)).astype(np.float32)

    def to(x):
        if layout == "BNSD":
            return x
        if layout == "BSND":
            return x.transpose(0, 2, 1, 3)
        bsh = x.transpose(0, 2, 1, 3).reshape(b, s, n * d)
        return bsh.transpose(1, 0, 2) if layout == "SBH" else bsh

    g = air.Graph("fa")
    ins = [g.add_input(name, air.TensorDesc(list(to(x).shape), air.float32))
           for name, x in (("q", q), ("k", k), ("v", v))]
    ps = g.add_input("pse", air.TensorDesc(list(pse.shape), air.float32))
    am = g.add_const("mask", mask)
    fa = g.add_op("FlashAttentionScore", [*ins, ps, None, None, am],
                  attrs={"head_num": n, "input_layout": layout, "scale_value": 0.5,
                         "pse_type": 0})
    g.set_outputs([(fa, 0), (fa, 1), (fa, 3)])
    out = air.evaluate(g, {"q": to(q), "k": to(k), "v": to(v), "pse": pse})
    want = _reference(q, k, v, 0.5, pse, 0, mask)
    res = list(out.values())
    np.testing.assert_allclose(res[2], to(want), rtol=1e-5, atol=1e-6)
    assert res[0].shape == res[1].shape == (b, n, s, 8) and res[0].dtype == np.float32
    # softmax_max is the row max of the masked, scaled scores.
    sc = np.where(mask, -np.inf, 0.5 * (q @ np.swapaxes(k, -1, -2)) + pse)
    np.testing.assert_allclose(res[0][..., 0], sc.max(-1), rtol=1e-5)


def test_bert_base_layout_attention_is_one_library_call_per_layer():
    g = air.onnx.load(models.bert(layers=2, hidden=32, heads=4, vocab=100, max_pos=64))
    shapes = {"input_ids": [2, 16], "attention_mask": [2, 16], "token_type_ids": [2, 16]}
    cm = air.compile(g, input_shapes=shapes)
    assert len(flash(cm)) == 2
    # The mask's head dim is tiled once for every layer (one Tile after CSE), inside the
    # kernel that computes the mask.
    assert sum(n.type == "Tile" for n in cm.graph.nodes) == 0
    assert any("Tile" in k.member_types for k in cm.kernels)
    rng = np.random.default_rng(0)
    for batch, seq in ((2, 16), (3, 9)):
        f = {"input_ids": rng.integers(0, 100, (batch, seq)).astype(np.int64),
             "attention_mask": (rng.random((batch, seq)) > 0.3).astype(np.int64),
             "token_type_ids": np.zeros((batch, seq), np.int64)}
        assert_same(air.evaluate(g, f), air.evaluate(cm.graph, f))


def masked_fill(fill: float, keep_shape: list[int] | None, dtype=np.float32,
                with_bias: bool = False, select_first: bool = False,
                safe: str | None = None) -> air.Graph:
    """``Select(keep, scores / c [+ bias], fill) → Softmax → · v`` (the causal decoder form);
    ``keep`` a bool input of ``keep_shape`` (None: a causal constant [1, 1, S, S]). ``safe``
    adds torch's safe-softmax step ``Select(ReduceAnyD(m, [-1]), p, 0)`` after the softmax, of
    ``m`` = ``"keep"`` (the form the PyTorch frontend writes) or ``"other"`` (another mask)."""
    dt = air.float16 if dtype == np.float16 else air.float32
    g = air.Graph("masked_fill")
    q = g.add_input("q", air.TensorDesc([-1, N, S, D], dt))
    k = g.add_input("k", air.TensorDesc([-1, N, S, D], dt))
    v = g.add_input("v", air.TensorDesc([-1, N, S, D], dt))
    if keep_shape is None:
        keep = g.add_const("causal", np.tril(np.ones((S, S), dtype=bool))[None, None])
    else:
        keep = g.add_input("keep", air.TensorDesc(keep_shape, air.bool_))
    s = g.add_op("BatchMatMulV2", [q, g.add_op("TransposeD", [k], attrs={"perm": [0, 1, 3, 2]},
                                               name="kt")], name="qk")
    fill_c = g.add_const("fill", np.array(fill, dtype))
    if select_first:
        s = g.add_op("Select", [keep, s, fill_c], name="masked")
    s = g.add_op("RealDiv", [s, g.add_const("scale", np.array(np.sqrt(D), dtype))], name="sc")
    if with_bias:
        s = g.add_op("Add", [s, g.add_input("bias", air.TensorDesc([-1, N, S, S], dt))],
                     name="plus")
    if not select_first:
        s = g.add_op("Select", [keep, s, fill_c], name="masked")
    p = g.add_op("SoftmaxV2", [s], name="probs", attrs={"axes": [-1]})
    if safe is not None:
        m = keep if safe == "keep" else g.add_input("other", air.TensorDesc(keep_shape, air.bool_))
        rows = g.add_op("ReduceAnyD", [m], attrs={"axes": [-1], "keep_dims": True}, name="rows")
        p = g.add_op("SelectV2", [rows, p, g.add_const("zero", np.array(0, dtype))], name="safe")
    g.set_outputs([g.add_op("Relu", [g.add_op("BatchMatMulV2", [p, v], name="ctx")], name="y")])
    return g


def masked_feeds(g: air.Graph, batch: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for n in g.inputs:
        d = n.op_desc.output_desc(0)
        shape = [batch if x == -1 else x for x in d.shape]
        if n.name in ("keep", "other"):
            x = rng.random(shape) > 0.4
            x[..., 0] = True  # some rows keep one score, others all
            if x.shape[-2] > 1:
                x[..., 1, :] = False  # a fully masked row: uniform probabilities
            out[n.name] = x
        else:
            out[n.name] = rng.standard_normal(shape).astype(
                np.float16 if d.dtype == air.float16 else np.float32)
    return out


@pytest.mark.parametrize(("fill", "keep_shape", "dtype", "with_bias"), [
    (-3.4e38, None, np.float32, False),          # the decoder's causal form
    (float(np.finfo(np.float32).min), [-1, 1, S, S], np.float32, False),
    (-2e38, [-1, N, S, S], np.float32, True),
    (-65504.0, [1, 1, S, S], np.float16, False),
    (-3.4e38, [S, S], np.float32, True),
])
def test_a_masked_fill_becomes_the_atten_mask(fill, keep_shape, dtype, with_bias):
    g = masked_fill(fill, keep_shape, dtype, with_bias)
    before = g.to_bytes()
    cm = air.compile(g, input_shapes=hints(g))
    assert g.to_bytes() == before
    (fa,) = flash(cm)
    src = fa.input_source("atten_mask")
    assert src is not None and src.node.type == "LogicalNot"
    assert (fa.input_source("real_shift") is not None) == with_bias
    assert "Select" in list(fa.attrs["_datadump_original_op_types"])
    assert not any(n.type in ("Select", "SoftmaxV2") for n in cm.graph.nodes)
    for batch in (2, 3):
        f = masked_feeds(g, batch, seed=batch)
        want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
        for key in want:
            tol = 2e-3 if dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got[key].astype(np.float64),
                                       want[key].astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize(("fill", "keep_shape", "select_first"), [
    (-1e4, None, False),             # not low enough: the probabilities could differ
    (-3.4e38, [1, N, S, S], False),  # [1, N, Sq, Skv] is not an atten_mask form
    (-3.4e38, [-1, 1, 1, S], False),  # a row mask: not an atten_mask form
    (-3.4e38, None, True),           # the fill before the scale: not GE's order
    (float("-inf"), None, False),    # a fully masked row is NaN, GE's op gives it uniform
])
def test_masked_fills_the_op_does_not_take_are_left_alone(fill, keep_shape, select_first):
    g = masked_fill(fill, keep_shape, select_first=select_first)
    cm = air.compile(g, input_shapes=hints(g))
    assert not flash(cm)
    assert cm.report.data["simplify"]["attention_fused"] == 0


@pytest.mark.parametrize(("fill", "keep_shape", "dtype"), [
    (float("-inf"), [-1, 1, S, S], np.float32),   # torch's SDPA with a bool mask
    (float("-inf"), [S, S], np.float32),
    (float("-inf"), [1, 1, S, S], np.float16),
    (-3.4e38, [-1, N, S, S], np.float32),          # a finite fill with the step: also the same
])
def test_the_safe_softmax_step_lets_a_minus_inf_fill_match(fill, keep_shape, dtype):
    """torch's SDPA zeroes the rows that its mask hides entirely (not NaN): with that step
    after the softmax a -inf fill means the same as GE's atten_mask on every other row, and the
    step stays, zeroing the same rows of the output."""
    g = masked_fill(fill, keep_shape, dtype, safe="keep")
    cm = air.compile(g, input_shapes=hints(g))
    (fa,) = flash(cm)
    assert "SelectV2" not in list(fa.attrs["_datadump_original_op_types"])  # the step stays
    assert not any(n.type == "SoftmaxV2" for n in cm.graph.nodes)
    for batch in (2, 3):
        f = masked_feeds(g, batch, seed=batch)
        want, got = air.evaluate(g, f), air.evaluate(cm.graph, f)
        for key in want:
            assert np.isfinite(want[key]).all()
            tol = 2e-3 if dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got[key].astype(np.float64),
                                       want[key].astype(np.float64), rtol=tol, atol=tol)


def test_a_safe_step_over_another_mask_is_left_alone():
    g = masked_fill(float("-inf"), [-1, 1, S, S], safe="other")
    cm = air.compile(g, input_shapes=hints(g))
    assert not flash(cm)


def test_the_decoder_attention_is_one_library_call_per_layer():
    g = air.onnx.load(models.decoder(layers=2, hidden=8, heads=2))
    cm = air.compile(g)
    assert cm.report.data["simplify"]["attention_fused"] == 2
    assert len(flash(cm)) == 2
