"""The compiler's own graph passes as ``ascendir.passes`` objects (run one at a time, they give
the graph of the compile's stage 4), and user passes inside ``air.compile`` (their point, log,
dumps and errors)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir import passes
from ascendir.errors import CompileError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import models  # noqa: E402

CLASSES = {
    "infer": passes.InferShapes, "fold_constants": passes.ConstantFolding,
    "remove_noops": passes.RemoveNoops, "fold_floats": passes.FoldFloats,
    "collapse_reshapes": passes.CollapseReshapes, "fuse_attention": passes.FuseAttention,
    "splits_to_slices": passes.SplitsToSlices, "cse": passes.CSE, "prune": passes.Prune,
}


@pytest.fixture(scope="module")
def bert_torch():
    from support.torch_models import small_bert

    model, ids = small_bert()
    return air.torch.export(model, (ids,)), [ids.numpy()]


@pytest.fixture(scope="module")
def decoder():
    g = air.onnx.load(models.decoder(layers=2, hidden=16, heads=2))
    rng = np.random.default_rng(0)
    feeds = []
    for node in g.inputs:
        desc = node.outputs[0].desc
        shape = [d if d > 0 else 4 for d in desc.shape]
        if desc.dtype in (air.int64, air.int32):
            feeds.append(rng.integers(0, 10, shape).astype(np.int64))
        else:
            feeds.append(rng.standard_normal(shape).astype(np.float32))
    return g, feeds


def test_the_compiler_passes_come_from_the_rust_pipeline():
    names = [p.name for p in passes.compiler_passes()]
    assert names == list(air._core.compiler.compiler_passes())
    assert names == ["infer", "fold_constants", "remove_noops", "fold_floats",
                     "collapse_reshapes", "fuse_attention", "splits_to_slices", "cse", "prune"]
    for p in passes.compiler_passes():
        assert type(p) is CLASSES[p.name] and isinstance(p, passes.InPlacePass)
    assert passes.CompilerPass("cse").name == "cse"
    with pytest.raises(ValueError, match="unknown compiler pass 'nope'"):
        passes.CompilerPass("nope")


@pytest.mark.parametrize("which", ["bert_torch", "decoder"])
def test_the_pass_list_gives_the_graph_of_stage_4(which, request):
    """``Sequential(compiler_passes())`` over the model equals (dump text and bytes of a
    reload) the compile's ``04_simplify`` graph, and evaluates as the model does."""
    g, feeds = request.getfixturevalue(which)
    cm = air.compile(g, dump_stages=True)
    stage4 = dict(cm.dumps)["04_simplify.txt"]
    before = g.to_bytes()
    ref = air.evaluate(g, feeds)
    h = g.copy()
    result = passes.Sequential(passes.compiler_passes())(h)
    assert result.graph is h and result.modified
    assert h.dump() == stage4
    assert g.to_bytes() == before
    got = air.evaluate(h, feeds)
    assert list(got) == list(ref)
    for a, b in zip(got.values(), ref.values(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_the_manager_runs_compiler_and_python_passes_together(decoder):
    g, feeds = decoder
    ref = air.evaluate(g, feeds)
    h = g.copy()
    n = len(h.nodes)
    pm = passes.PassManager([passes.InferShapes(), passes.ConstantFolding(), passes.CSE(),
                             passes.Prune()], steps=2)
    assert pm(h).modified
    assert [r.name for r in pm.log][:4] == ["infer", "fold_constants", "cse", "prune"]
    assert len(h.nodes) < n
    for a, b in zip(air.evaluate(h, feeds).values(), ref.values(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_options_turn_a_pass_off(decoder):
    g, _ = decoder
    h = g.copy()
    passes.InferShapes()(h)
    off = passes.FuseAttention(options=air.CompileOptions(fusion=False))
    before = h.to_bytes()
    assert not off(h).modified and h.to_bytes() == before


class TagMuls(passes.InPlacePass):
    """Renames nothing, adds an attribute to every Mul: a visible, harmless change."""

    def __init__(self) -> None:
        self.calls = 0

    def call(self, graph: air.Graph) -> passes.PassResult:
        self.calls += 1
        muls = graph.find_nodes(op_type="Mul")
        for m in muls:
            m.op_desc.attrs["_tagged"] = True
        return passes.PassResult(graph, bool(muls))


class Boom(passes.InPlacePass):
    def call(self, graph: air.Graph) -> passes.PassResult:
        raise RuntimeError("boom")


def test_a_user_pass_runs_at_its_point_and_is_logged_and_dumped(decoder):
    g, _ = decoder
    tag = TagMuls()
    cm = air.compile(g, passes=[("after", "simplify", tag)], dump_stages=True)
    assert tag.calls == 1
    dumps = dict(cm.dumps)
    assert "04_TagMuls.txt" in dumps and "_tagged" in dumps["04_TagMuls.txt"]
    assert "_tagged" not in dumps["04_simplify.txt"]
    names = [d for d, _ in cm.dumps]
    assert names.index("04_simplify.txt") < names.index("04_TagMuls.txt")
    assert names.index("04_TagMuls.txt") < names.index("05_lower.json")
    before = air.compile(g, passes=[("before", "infer", TagMuls())], dump_stages=True)
    assert "_tagged" in dict(before.dumps)["02_infer.txt"]
    plain = air.compile(g)
    assert len(plain.kernels) == len(cm.kernels)


def test_a_user_pass_changes_the_result_and_no_pass_keeps_it():
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([4, 8], air.float32)).outputs[0]
    y = air.ops.Relu(air.ops.Exp(x, name="e"), name="r")
    g.set_outputs([y.producer()])

    class DropExp(passes.InPlacePass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            graph.bypass(graph.find("e"), input=0)
            return passes.PassResult(graph, True)

    plain = air.compile(g)
    user = air.compile(g, passes=[("after", "symbolize", DropExp())])
    assert "Exp" in {t for k in plain.kernels for t in k.member_types}
    assert "Exp" not in {t for k in user.kernels for t in k.member_types}
    assert user.graph.find("e") is None
    assert g.find("e") is not None
    assert air.compile(g, passes=[]).to_bytes() == plain.to_bytes()


def test_a_failing_user_pass_is_a_compile_error_naming_it(decoder):
    g, _ = decoder
    with pytest.raises(CompileError, match="user pass 'Boom' failed") as info:
        air.compile(g, passes=[("before", "simplify", Boom())])
    assert isinstance(info.value.__cause__, RuntimeError)
    assert str(info.value.__cause__) == "boom"


def test_bad_points_are_refused(decoder):
    g, _ = decoder
    with pytest.raises(CompileError, match="unknown point 'nowhere'"):
        air.compile(g, passes=[("after", "nowhere", TagMuls())])
    with pytest.raises(CompileError, match="before 'lower' at the latest"):
        air.compile(g, passes=[("after", "lower", TagMuls())])
    with pytest.raises(ValueError, match="'before' or 'after'"):
        air.compile(g, passes=[("during", "simplify", TagMuls())])
    with pytest.raises(TypeError, match="not an ascendir.passes.Pass"):
        air.compile(g, passes=[("after", "simplify", object())])  # type: ignore[list-item]
