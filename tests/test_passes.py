"""``ascendir.passes``: the pass classes and the pass manager, and the three example passes of
``examples/passes.py`` on models nobody here wrote (Hugging Face BERT through the PyTorch
frontend and through ``torch.onnx.export``), each checked against eager PyTorch or
onnxruntime."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir import passes

_SPEC = importlib.util.spec_from_file_location(
    "example_passes", Path(__file__).resolve().parents[1] / "examples" / "passes.py")
assert _SPEC is not None and _SPEC.loader is not None
ex = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(ex)


def chain(n_identities: int) -> air.Graph:
    """``x → (Mul by 1)×n → Relu``."""
    g = air.Graph("chain")
    v = g.add_input("x", air.TensorDesc([2, 3], air.float32)).outputs[0]
    for i in range(n_identities):
        one = g.add_const(f"one{i}", np.ones((2, 3), np.float32))
        v = air.ops.Mul(v, one.outputs[0], name=f"m{i}")
    g.set_outputs([g.add_op("Relu", [v], name="y")])
    return g


class FoldFirst(passes.InPlacePass):
    """Folds one ``Mul`` by one per call (to see rounds)."""

    def call(self, graph: air.Graph) -> passes.PassResult:
        for node in graph.find_nodes(op_type="Mul"):
            graph.bypass(node, input=0)
            return passes.PassResult(graph, True)
        return passes.PassResult(graph, False)


def test_the_manager_runs_to_a_fixed_point_and_logs_each_pass():
    g = chain(3)
    pm = passes.PassManager([FoldFirst()], steps=10)
    result = pm(g)
    assert result.graph is g and result.modified
    assert [(r.name, r.step, r.modified) for r in pm.log] == [
        ("FoldFirst", 0, True), ("FoldFirst", 1, True), ("FoldFirst", 2, True),
        ("FoldFirst", 3, False)]
    assert [(r.nodes_before, r.nodes_after) for r in pm.log][0] == (9, 8)
    assert all(r.seconds >= 0 for r in pm.log)
    assert g.find_nodes(op_type="Mul") == []


def test_steps_bound_the_rounds_and_early_stop_can_be_off():
    g = chain(3)
    pm = passes.PassManager([FoldFirst()], steps=2)
    assert pm(g).modified and len(g.find_nodes(op_type="Mul")) == 1
    g2 = chain(0)
    pm2 = passes.PassManager([FoldFirst()], steps=3, early_stop=False)
    assert not pm2(g2).modified and [r.step for r in pm2.log] == [0, 1, 2]
    with pytest.raises(ValueError, match="steps"):
        passes.PassManager([FoldFirst()], steps=0)
    with pytest.raises(TypeError, match="not a Pass"):
        passes.Sequential([FoldFirst(), "fold"])  # type: ignore[list-item]


def test_requires_and_ensures_name_the_pass_and_keep_the_cause():
    class NeedsRelu(FoldFirst):
        def requires(self, graph: air.Graph) -> None:
            if not graph.find_nodes(op_type="Softmax"):
                raise ValueError("no Softmax to work on")

    class LeavesNoMul(FoldFirst):
        def ensures(self, graph: air.Graph) -> None:
            assert not graph.find_nodes(op_type="Mul"), "a Mul is left"

    g = chain(2)
    before = g.to_bytes()
    with pytest.raises(passes.PreconditionError, match="'NeedsRelu': requires failed: no "
                       "Softmax") as e:
        passes.PassManager([NeedsRelu()])(g)
    assert isinstance(e.value, air.AscendIRError) and e.value.pass_name == "NeedsRelu"
    assert isinstance(e.value.__cause__, ValueError) and g.to_bytes() == before
    with pytest.raises(passes.PostconditionError, match="a Mul is left"):
        LeavesNoMul()(g)


def test_invariants_are_checked_between_passes():
    class Dangling(passes.InPlacePass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            graph.add_node(air.OpDesc.from_type("Relu", name="dangling"))
            return passes.PassResult(graph, True)

    class Swaps(passes.InPlacePass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            return passes.PassResult(graph.copy(), True)

    class Sneaky(passes.FunctionalPass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            out = graph.copy()
            graph.bypass(graph.find_nodes(op_type="Mul")[0], input=0)
            return passes.PassResult(out, True)

    class Wrong(passes.InPlacePass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            return graph  # type: ignore[return-value]

    with pytest.raises(passes.InvariantError, match="after pass 'Dangling'") as e:
        passes.PassManager([Dangling()])(chain(1))
    assert e.value.pass_name == "Dangling"
    passes.PassManager([Dangling()], check_invariants=False)(chain(1))  # not checked
    with pytest.raises(passes.InvariantError, match="in place but returned another graph"):
        passes.PassManager([Swaps()])(chain(1))
    with pytest.raises(passes.InvariantError, match="functional but changed its input"):
        passes.PassManager([Sneaky()])(chain(1))
    with pytest.raises(passes.PassError, match="returned Graph, not a PassResult"):
        passes.PassManager([Wrong()])(chain(1))


def test_a_functional_pass_leaves_its_input_alone():
    class Folded(passes.FunctionalPass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            out = graph.copy()
            return ex.FoldIdentityArithmetic()(out)

    g = chain(2)
    before = g.to_bytes()
    result = passes.PassManager([Folded()])(g)
    assert g.to_bytes() == before and result.graph is not g
    assert result.graph.find_nodes(op_type="Mul") == [] and result.modified
    assert passes.Sequential([Folded(), ex.FoldIdentityArithmetic()]).in_place is False


def test_nodes_a_pass_creates_carry_its_name():
    class ReluToMax(passes.InPlacePass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            for relu in graph.find_nodes(op_type="Relu"):
                with graph.inserting_before(relu):
                    zero = graph.add_const(relu.name + "_zero", np.zeros((1,), np.float32))
                    m = air.ops.Maximum(relu.inputs[0], zero.outputs[0], name=relu.name + "_max")
                relu.outputs[0].replace_all_uses_with(m)
                graph.remove_node(relu)
            return passes.PassResult(graph, True)

    g = chain(1)
    passes.PassManager([ReluToMax()])(g)
    tags = {n.name: passes.created_by(n) for n in g.nodes}
    assert tags["y_zero"] == tags["y_max"] == "ReluToMax"
    assert tags["m0"] is None and tags["x"] is None
    again = air.Graph.from_bytes(g.to_bytes())
    assert passes.created_by(again.node("y_max")) == "ReluToMax"


# ---------------------------------------------------------------- the examples on real models


@pytest.fixture(scope="module")
def bert():
    import torch

    from support.torch_models import small_bert

    model, ids = small_bert()
    with torch.no_grad():
        ref = model(ids).last_hidden_state.numpy()
    return model, ids, ref


def _reroute(uses: list[air.Usage], old: air.Value, new: air.Value) -> None:
    """The consumers in ``uses`` (of ``old``) read ``new`` instead."""
    src = old.producer().out_data_anchor(old.index)
    dst = new.producer().out_data_anchor(new.index)
    for u in uses:
        a = u.node.in_data_anchor(u.index)
        src.unlink(a)
        dst.link_to(a)


def _hidden(g: air.Graph, ids) -> np.ndarray:
    return list(air.evaluate(g, [ids.numpy()]).values())[0]


def test_fold_identity_arithmetic_on_bert(bert):
    """Identities injected at every Add of a BERT imported from PyTorch: the foldable ones
    (ones / zeros of the value's shape, or broadcast scalars) go; a constant that broadcasts the
    value to a bigger shape stays; torch's numbers are kept."""
    model, ids, ref = bert
    g = air.torch.export(model, (ids,))
    adds = [n for n in g.find_nodes(op_type="Add") if n.outputs[0].desc.dtype == air.float32]
    assert len(adds) >= 6
    for i, add in enumerate(adds):
        v = add.outputs[0]
        shape = list(v.desc.shape)
        uses = v.uses()
        with g.inserting_after(add):
            one = g.add_const(f"one{i}", np.ones(shape if i % 2 else [1], np.float32))
            m = air.ops.Mul(v, one.outputs[0], name=f"inj_mul{i}")
            zero = g.add_const(f"zero{i}", np.zeros([1], np.float32))
            a = air.ops.Add(zero.outputs[0], m, name=f"inj_add{i}")
        _reroute(uses, v, a)  # the consumers read the injected chain
    keep = g.add_const("wide_one", np.ones([3] + shape, np.float32))
    wide = air.ops.Mul(adds[0].outputs[0], keep.outputs[0], name="wide")
    g.set_outputs([n for n, _ in g.outputs] + [wide.producer()])
    assert g.problems() == []
    np.testing.assert_allclose(_hidden(g, ids), ref, rtol=1e-4, atol=1e-5)
    pm = passes.PassManager([ex.FoldIdentityArithmetic()], steps=3)
    assert pm(g).modified
    assert [n.name for n in g.nodes if n.name.startswith("inj_")] == []
    assert g.find("wide") is not None
    np.testing.assert_allclose(_hidden(g, ids), ref, rtol=1e-4, atol=1e-5)


def test_fuse_matmul_bias_on_bert_from_onnx(bert, tmp_path):
    import onnxruntime as ort
    import torch

    model, ids, _ = bert
    path = tmp_path / "bert.onnx"
    torch.onnx.export(model, (ids,), str(path), dynamo=True, verbose=False, external_data=False)
    data = path.read_bytes()
    g = air.onnx.from_bytes(data)
    adds = len(g.find_nodes(op_type="Add"))
    result = passes.PassManager([ex.FuseMatMulBias()])(g)
    assert result.modified
    fused = [n for n in g.nodes if n.type in ("MatMulV2", "BatchMatMulV2")
             and len(n.inputs) > 2 and n.inputs[2] is not None]
    assert len(fused) >= 12  # q, k, v, output and two FFN linears per layer
    assert len(g.find_nodes(op_type="Add")) == adds - len(fused)
    assert all(passes.created_by(n) == "FuseMatMulBias" for n in fused)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: ids.numpy()})[0]
    np.testing.assert_allclose(_hidden(g, ids), want, rtol=1e-4, atol=1e-5)
    out = air.onnx.to_bytes(g)  # the fused graph exports and onnxruntime agrees
    sess2 = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    got = sess2.run(None, {sess2.get_inputs()[0].name: ids.numpy()})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_remove_lossless_cast_pairs_on_bert(bert):
    """Cast pairs injected after every LayerNorm-feeding Add of a BERT: f32 → f64 → f32 is
    exact and goes, f32 → f16 → f32 rounds and stays (its rounding is part of the numbers)."""
    model, ids, ref = bert
    g = air.torch.export(model, (ids,))
    sites = [n for n in g.find_nodes(op_type="Add")
             if n.outputs[0].desc.dtype == air.float32][:6]
    lossy = []
    for i, site in enumerate(sites):
        v = site.outputs[0]
        uses = v.uses()
        mid_t = air.float16 if i % 2 else air.float64
        with g.inserting_after(site):
            c1 = air.ops.Cast(v, dst_type=int(mid_t), name=f"c{i}_in")
            c2 = air.ops.Cast(c1, dst_type=int(air.float32), name=f"c{i}_out")
        _reroute(uses, v, c2)
        if mid_t == air.float16:
            lossy.append(f"c{i}_out")
    assert g.problems() == []
    with_pairs = _hidden(g, ids)
    np.testing.assert_allclose(with_pairs, ref, rtol=5e-2, atol=5e-2)
    pm = passes.PassManager([ex.RemoveLosslessCastPairs()])
    assert pm(g).modified
    left = sorted(n.name for n in g.find_nodes(op_type="Cast") if n.name.startswith("c"))
    assert left == sorted([n.replace("_out", "_in") for n in lossy] + lossy)
    np.testing.assert_array_equal(_hidden(g, ids), with_pairs)  # nothing exact was dropped
