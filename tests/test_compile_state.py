"""The compile as a pass manager of the compiler's own pass objects over a ``CompileState``:
the pipeline's names and order come from Rust, driving it pass by pass gives the model
``air.compile`` gives, passes over the compile's state run after ``lower`` (read decisions,
keep nodes out of fusion, read clusters and kernels), and the order rules refuse without
changing anything."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import ascendir as air
from ascendir import passes
from ascendir.compiler import CompileState
from ascendir.errors import CompileError, ConcurrentUseError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import models  # noqa: E402

PIPELINE = ["validate", "infer", "symbolize", "simplify", "lower", "fuse", "build", "package"]


@pytest.fixture(scope="module")
def bert():
    from support.torch_models import small_bert

    model, ids = small_bert()
    with __import__("torch").no_grad():
        want = model(ids)[0].numpy()
    return air.torch.export(model, (ids,)), ids.numpy(), want


@pytest.fixture(scope="module")
def decoder():
    return air.onnx.load(models.decoder(layers=2, hidden=16, heads=2))


def _kernel_summary(cm: air.compiler.CompiledModel) -> list[tuple[str, list[str]]]:
    return [(k.name, list(k.members)) for k in cm.kernels]


def test_the_pipeline_is_a_pass_manager_of_the_compilers_pass_objects():
    assert CompileState.pipeline() == list(air._core.compiler.CompileState.pipeline())
    assert CompileState.pipeline() == PIPELINE
    pm = passes.compile_pipeline()
    assert isinstance(pm, passes.PassManager)
    assert [p.name for p in pm.passes] == PIPELINE
    assert [type(p) for p in pm.passes] == [
        passes.Validate, passes.InferShapes, passes.Symbolize, passes.Simplify, passes.Lower,
        passes.Fuse, passes.Build, passes.Package]
    assert passes.CompileStage("fuse").name == "fuse"
    with pytest.raises(ValueError, match="unknown pipeline pass 'nope'"):
        passes.CompileStage("nope")


def test_running_the_pipeline_over_a_state_is_air_compile(bert, decoder):
    for g in (bert[0], decoder):
        before = g.to_bytes()
        plain = air.compile(g, dump_stages=True)
        state = CompileState(g, dump_stages=True)
        pm = passes.compile_pipeline()
        pm(state)
        assert [r.name for r in pm.log] == PIPELINE
        cm = state.finish()
        assert cm.to_bytes() == plain.to_bytes()
        assert _kernel_summary(cm) == _kernel_summary(plain)
        assert [d for d, _ in cm.dumps] == [d for d, _ in plain.dumps]
        assert [t for _, t in cm.dumps] == [t for _, t in plain.dumps]
        assert g.to_bytes() == before
        assert state.finished


def test_step_by_step_the_state_shows_what_each_pass_made(bert):
    g, ids, want = bert
    state = CompileState(g)
    assert state.next_pass == "validate" and state.decisions == {} and state.clusters == []
    for name in PIPELINE[:4]:
        state.run(name)
    assert state.next_pass == "lower" and not state.lowered
    state.run("lower")
    assert state.lowered
    decisions = state.decisions
    assert set(decisions) <= {n.name for n in state.graph.nodes}
    lowered = {n for n, why in decisions.items() if why is None}
    assert lowered, "a BERT lowers some nodes"
    barriers = {n: why for n, why in decisions.items() if why is not None}
    assert all(cat in ("Node Info Incorrect", "Backend Not Support", "Temporary Skip Lowering")
               for cat, _ in barriers.values())
    state.run("fuse")
    clusters = state.clusters
    assert clusters and all(set(c) <= lowered for c in clusters)
    assert state.kernels == []
    state.run("build")
    state.run("package")
    kernels = state.kernels
    assert kernels and {m for k in kernels for m in k.members} <= {m for c in clusters for m in c}
    names = [r[0] for r in state.log]
    assert [n for n in names if "." not in n] == PIPELINE
    assert "simplify.cse" in names                          # stage 4's own passes
    cm = state.finish()
    assert [k.name for k in cm.kernels] == [k.name for k in kernels]
    got = next(iter(air.evaluate(cm.graph, [ids]).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _bytes_of(state: CompileState) -> bytes:
    return state.graph.to_bytes()


def test_out_of_order_runs_are_refused_and_change_nothing(decoder):
    state = CompileState(decoder)
    before = _bytes_of(state)
    with pytest.raises(CompileError, match="runs in pipeline order") as info:
        state.run("fuse")
    assert info.value.kind == "order"
    assert state.next_pass == "validate" and _bytes_of(state) == before
    with pytest.raises(CompileError, match="unknown compiler pass 'nope'"):
        state.run("nope")
    with pytest.raises(CompileError, match="not finished: the next pass is 'validate'"):
        state.finish()
    with pytest.raises(CompileError, match="after 'lower' and before 'fuse'"):
        state.keep_out("x", "no")
    for name in PIPELINE:
        state.run(name)
    with pytest.raises(CompileError, match="every pass has run"):
        state.run("package")
    state.finish()
    with pytest.raises(CompileError, match="finished"):
        state.run("validate")
    with pytest.raises(CompileError, match="finished"):
        state.finish()


class Boom(passes.InPlacePass):
    def call(self, graph: air.Graph) -> passes.PassResult:
        raise RuntimeError("boom")


class DropExp(passes.InPlacePass):
    def call(self, graph: air.Graph) -> passes.PassResult:
        graph.bypass(graph.find("e"), input=0)
        return passes.PassResult(graph, True)


def _exp_graph() -> air.Graph:
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([4, 8], air.float32)).outputs[0]
    y = air.ops.Relu(air.ops.Mul(air.ops.Exp(x, name="e"), x, name="m"), name="r")
    g.set_outputs([y.producer()])
    return g


def test_a_failed_pass_ends_the_compile():
    state = CompileState(_exp_graph())
    state.run("validate")
    with pytest.raises(CompileError, match="user pass 'Boom' failed") as info:
        state.run_graph_pass(Boom())
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(CompileError, match="failed in pass 'Boom'") as again:
        state.run("infer")
    assert again.value.kind == "order"


def test_graph_passes_run_before_lower_only():
    state = CompileState(_exp_graph())
    for name in PIPELINE[:3]:
        state.run(name)
    assert state.run("cse") is False                       # a compiler graph pass by name
    assert state.run_graph_pass(DropExp(), "symbolize") is True
    assert state.graph.find("e") is None
    state.run("simplify")
    state.run("lower")
    before = _bytes_of(state)
    with pytest.raises(CompileError, match="before 'lower' at the latest") as info:
        state.run_graph_pass(DropExp())
    assert info.value.kind == "order" and _bytes_of(state) == before
    with pytest.raises(CompileError, match="before 'lower' at the latest"):
        state.run("cse")
    # a manager over the state refuses the same way
    with pytest.raises(CompileError, match="before 'lower' at the latest"):
        passes.PassManager([DropExp()])(state)


class KeepOut(passes.CompileStatePass):
    """Keeps the named nodes out of fusion; records what the decisions said before."""

    def __init__(self, *names: str) -> None:
        self.names = names
        self.seen: dict[str, object] = {}

    def call(self, graph: CompileState) -> passes.PassResult:  # type: ignore[override]
        for n in self.names:
            self.seen[n] = graph.decisions.get(n)
            graph.keep_out(n, "measured slower fused")
        return passes.PassResult(graph, bool(self.names))


def test_a_state_pass_after_lower_keeps_nodes_out_of_fusion():
    g = _exp_graph()
    plain = air.compile(g)
    fused = {m for k in plain.kernels for m in k.members}
    assert {"e", "m", "r"} <= fused
    keep = KeepOut("m")
    cm = air.compile(g, passes=[("after", "lower", keep)])
    assert keep.seen == {"m": None}                        # it was lowered
    assert "m" not in {m for k in cm.kernels for m in k.members}
    (bar,) = [b for b in cm.report.data["barriers"] if b["name"] == "m"]
    assert bar["category"] == "Node Info Incorrect"
    assert bar["reason"] == "kept out by a user pass: measured slower fused"
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    (got,) = air.evaluate(cm.graph, [x]).values()
    np.testing.assert_allclose(got, np.maximum(np.exp(x) * x, 0), rtol=1e-5)
    with pytest.raises(CompileError, match="after 'lower' and before 'fuse'"):
        air.compile(g, passes=[("after", "fuse", KeepOut("m"))])
    with pytest.raises(CompileError, match="no node 'ghost'"):
        air.compile(g, passes=[("before", "fuse", KeepOut("ghost"))])


def test_a_state_pass_reads_clusters_and_kernels_anywhere(decoder):
    seen: dict[str, object] = {}

    class Look(passes.CompileStatePass):
        def __init__(self, what: str) -> None:
            self.what = what

        @property
        def name(self) -> str:
            return f"Look_{self.what}"

        def call(self, graph: CompileState) -> passes.PassResult:  # type: ignore[override]
            seen[self.what] = getattr(graph, self.what)
            return passes.PassResult(graph, False)

    cm = air.compile(decoder, passes=[("after", "fuse", Look("clusters")),
                                      ("after", "package", Look("kernels")),
                                      ("before", "validate", Look("decisions"))])
    assert seen["decisions"] == {}
    assert seen["clusters"] and isinstance(seen["clusters"][0], list)
    assert [k.name for k in seen["kernels"]] == [k.name for k in cm.kernels]  # type: ignore[attr-defined]


def test_stage_passes_over_a_plain_graph(decoder):
    g = decoder.copy()
    assert passes.Validate()(g).modified is False
    with pytest.raises(passes.PassError, match="runs over a compile in progress"):
        passes.Lower()(g)
    h = g.copy()
    passes.InferShapes()(g)
    passes.InferShapes()(h)
    passes.Simplify()(g)
    passes.Sequential(passes.compiler_passes()[1:])(h)
    assert g.to_bytes() == h.to_bytes()


def test_the_state_is_used_by_one_call_at_a_time():
    state = CompileState(_exp_graph())
    state.run("validate")
    inside: list[BaseException] = []

    class Reenter(passes.InPlacePass):
        def call(self, graph: air.Graph) -> passes.PassResult:
            try:
                state.next_pass  # noqa: B018 - the access under test
            except ConcurrentUseError as e:
                inside.append(e)
            return passes.PassResult(graph, False)

    state.run_graph_pass(Reenter())
    assert len(inside) == 1 and "in use by another call" in str(inside[0])
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            CompileState(_exp_graph()).run("validate")
        except BaseException as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
