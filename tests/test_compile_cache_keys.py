"""The compile cache keys cover everything that changes a result: a registration in any of
the three registries (GE ops, lowerings, AscIR prototypes) between two compiles of one model
gives a fresh compile; an ONNX model whose external weights file alone changed compiles again
and carries the new weights; an unchanged model under unchanged registries is a cache hit.
Real compiles into a cache directory of the test's own."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir.asc.ops import REG_ASC_IR
from support.external_data import mul_exp_model


def _model() -> bytes:
    """A small model with one fusable region."""
    g = air.Graph("keys")
    x = g.add_input("x", air.TensorDesc([8, 64], air.float32))
    v = g.add_op("Exp", [g.add_op("Abs", [x], name="abs")], name="exp")
    g.set_outputs([g.add_op("Relu", [v], name="relu")])
    return bytes(g.to_bytes())


def _compile(models: list, cache_dir: Path) -> air.compiler.CompileResult:
    (r,) = air.compile_many(models, jobs=1, cache="readwrite", cache_dir=cache_dir)
    assert r.ok, r.error
    return r


def test_unchanged_model_and_registries_hit_the_cache(tmp_path: Path) -> None:
    m = _model()
    first = _compile([m], tmp_path)
    second = _compile([m], tmp_path)
    assert not first.cached
    assert second.cached
    assert second.value.to_bytes() == first.value.to_bytes()


def test_a_registration_between_two_compiles_gives_a_fresh_result(tmp_path: Path) -> None:
    m = _model()
    tag = uuid.uuid4().hex[:8]
    assert not _compile([m], tmp_path).cached
    assert _compile([m], tmp_path).cached

    # A new GE op (taken out of the registry again at the end: other tests list the ops).
    @air.register_op(f"KeyProbe{tag}")
    class _Probe(air.OpDef):
        x = air.Input("T")
        y = air.Output("T")
        T = air.TypeVar(air.float32)
        infer = air.infer.same_as("x")

    try:
        _registrations_refresh_the_cache(m, tmp_path, tag)
    finally:
        air.ops.unregister(f"KeyProbe{tag}")


def _registrations_refresh_the_cache(m, tmp_path: Path, tag: str) -> None:  # noqa: ANN001
    assert not _compile([m], tmp_path).cached
    assert _compile([m], tmp_path).cached

    # A new lowering (of the new op).
    @air.compiler.lowering(f"KeyProbe{tag}")
    def _(b, x):  # noqa: ANN001, ANN202 - the lowering builder's signature
        return b.Exp(x)

    assert not _compile([m], tmp_path).cached
    assert _compile([m], tmp_path).cached

    # A new AscIR prototype.
    (REG_ASC_IR(f"KeyProbeAsc{tag}").input("x", "T").output("y", "T")
     .dtypes("T", [air.float32]).compute_type("elewise").register())
    fresh = _compile([m], tmp_path)
    assert not fresh.cached
    assert _compile([m], tmp_path).cached
    # Fresh compiles of an unchanged model under changed registries are the same model.
    assert fresh.value.to_bytes() == air.compile_many([m], cache="off")[0].value.to_bytes()


def test_new_external_weights_alone_give_a_fresh_result_with_them(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    folder = tmp_path / "model"
    folder.mkdir()
    cache = tmp_path / "cache"
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    w1 = np.full((2, 3, 4), 0.5, dtype=np.float32)
    w2 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 24
    path = mul_exp_model(folder, w1)
    model_bytes = path.read_bytes()
    first = _compile([path], cache)
    assert not first.cached
    assert _compile([path], cache).cached

    # New weights in the weights file alone (one tensor, stored raw from offset 0).
    data = folder / "model.onnx.data"
    assert data.read_bytes() == w1.tobytes()
    data.write_bytes(w2.tobytes())
    assert path.read_bytes() == model_bytes
    second = _compile([path], cache)
    assert not second.cached
    (got,) = air.evaluate(second.value.graph, {"x": x}).values()
    np.testing.assert_allclose(got, np.exp(x * w2), rtol=1e-5)
    (old,) = air.evaluate(first.value.graph, {"x": x}).values()
    np.testing.assert_allclose(old, np.exp(x * w1), rtol=1e-5)
    assert _compile([path], cache).cached
