"""The real-architecture corpus (``corpus.py``) through every stage, each against an
independent oracle.

Per model, built once: the ``torch.export`` import with a static and with a dynamic batch
(``air.evaluate`` == eager PyTorch, at two batch sizes for the dynamic one; no unmapped op),
``air.compile`` (evaluate of the compiled graph == eager; every kernel's Ascend C and CPU
sources print), the ONNX path (``torch.onnx.export(dynamo=True)`` → ``air.onnx.load``,
``air.evaluate`` == onnxruntime) and the round trips (GE ModelDef binary, text and OM
message-identical; the graph exported as ONNX passes ``onnx.checker`` and onnxruntime gives
eager's numbers). A per-model, per-stage table is printed in the terminal summary.

A stage that does not pass yet is listed in ``OPEN`` with its reason; such a stage is run and
must fail (``pytest.xfail`` after the failure is seen), so a fix shows up as an unexpected
pass that asks for the entry's removal.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the corpus needs the torch extra")
pytest.importorskip("transformers", reason="the corpus needs transformers")
pytest.importorskip("timm", reason="the corpus needs timm")

from corpus import ENTRIES, REAL_WIDTH, Entry, dynamic_shapes, with_batch  # noqa: E402
from zoo_table import CPU_SAMPLE, KEY, STAGES  # noqa: E402

import ascendir as air  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4

# Stages known not to pass, with the reason. Causes outside this package are marked
# "external"; the others are open defects of issue 49.
OPEN: dict[tuple[str, str], str] = {}


def _flat(out) -> list[np.ndarray]:
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    return [t.detach().numpy() for t in leaves if isinstance(t, torch.Tensor)]


def _same(got: dict, ref: list[np.ndarray], what: str) -> None:
    vals = list(got.values())
    assert len(vals) == len(ref), f"{what}: {len(vals)} outputs, the oracle has {len(ref)}"
    for k, (g, r) in enumerate(zip(vals, ref, strict=True)):
        assert g.shape == r.shape, f"{what}: output {k} shape {g.shape} != {r.shape}"
        if r.dtype.kind == "f":
            err = float(np.max(np.abs(g.astype(np.float64) - r))) if r.size else 0.0
            assert np.allclose(g, r, rtol=RTOL, atol=ATOL), f"{what}: output {k} max diff {err:.3g}"
        else:
            assert np.array_equal(g, r), f"{what}: output {k} differs"


class _Run:
    """One model's stages: outcomes and figures for the table."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self.outcome: dict[str, str] = {}
        self.figures: dict[str, object] = {}
        self.seconds: dict[str, float] = {}

    def stage(self, name: str, fn) -> None:
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as ex:  # recorded, then raised at the end of the test
            self.outcome[name] = f"FAIL: {type(ex).__name__}: {str(ex).splitlines()[0][:160]}"
        else:
            self.outcome[name] = "ok"
        finally:
            self.seconds[name] = time.perf_counter() - t0


def _torch_stages(run: _Run, model, args, ep) -> tuple[air.Graph | None, list[np.ndarray]]:
    entry = run.entry
    ref = _flat(ep.module()(*args))
    holder: dict[str, air.Graph] = {}

    def static() -> None:
        t0 = time.perf_counter()
        g, rep = air.torch.from_exported_program(ep, report=True, warn_unknown=False)
        run.figures["import s"] = time.perf_counter() - t0
        run.figures["nodes"] = rep.ge_nodes
        run.figures["unmapped"] = sum(rep.unknown_ops.values())
        assert not rep.unknown_ops, f"unmapped ATen ops: {rep.unknown_ops}"
        holder["g"] = g
        _same(air.evaluate(g, [a.numpy() for a in args]), ref, "evaluate")

    def dynamic() -> None:
        dep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes(entry, args),
                                  strict=False)
        g, rep = air.torch.from_exported_program(dep, report=True, warn_unknown=False)
        assert not rep.unknown_ops, f"unmapped ATen ops: {rep.unknown_ops}"
        for batch in (3, 1):
            feeds = with_batch(args, entry, batch)
            _same(air.evaluate(g, [a.numpy() for a in feeds]), _flat(model(*feeds)),
                  f"evaluate at batch {batch}")

    run.stage("torch static", static)
    run.stage("torch dynamic", dynamic)
    return holder.get("g"), ref


def _compile_stages(run: _Run, g: air.Graph, args, ref: list[np.ndarray]) -> None:
    holder: dict[str, object] = {}

    def compiled() -> None:
        t0 = time.perf_counter()
        cm = air.compile(g)
        run.figures["compile s"] = time.perf_counter() - t0
        run.figures["kernels"] = len(cm.kernels)
        # Attention matched as GE's fused op by the attention pass (stage 4).
        run.figures["attention"] = sum(n.type == "FlashAttentionScore" for n in cm.graph.nodes)
        holder["cm"] = cm
        _same(air.evaluate(cm.graph, [a.numpy() for a in args]), ref, "evaluate(compiled)")

    def sources() -> None:
        from ascendir.asc.cpu import cpu_sources

        cm = holder["cm"]
        refused = []
        for k in cm.kernels:
            try:
                assert k.sources
                assert cpu_sources(k.impls, k.name)
            except Exception as ex:
                refused.append(f"{k.name}: {type(ex).__name__}: {str(ex)[:80]}")
        assert not refused, f"{len(refused)} of {len(cm.kernels)} kernels do not print: " \
            f"{refused[0]}"

    def cpu_kernels() -> None:
        cm = holder["cm"]
        names = largest_kernels(cm, CPU_SAMPLE)
        rep = air.compiler.verify(cm, kernels=names, tails=False)
        run.figures["cpu kernels"] = len(names)
        assert rep.ok, rep.text()

    run.stage("compile", compiled)
    if "cm" in holder:
        run.stage("sources", sources)
        run.stage("cpu kernels", cpu_kernels)
    else:
        run.outcome["sources"] = run.outcome["cpu kernels"] = "FAIL: no compiled model"


def largest_kernels(cm, n: int) -> list[str]:
    """The names of the ``n`` kernels with the most member ops (ties by name)."""
    return [k.name for k in sorted(cm.kernels, key=lambda k: (-len(k.members), k.name))[:n]]


def _onnx_stages(run: _Run, ep, args, g: air.Graph | None, ref) -> None:
    import onnx
    import onnxruntime as ort

    def onnx_path() -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # From the program the torch stages exported: the same graph as exporting the
                # module, without tracing it again.
                torch.onnx.export(ep, args, path, dynamo=True, verbose=False)
            og = air.onnx.load(path)
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args, strict=True)}
            oref = sess.run(None, feeds)
            _same(air.evaluate(og, [a.numpy() for a in args]), oref, "evaluate == onnxruntime")

    def ge_round_trips() -> None:
        assert g is not None, "no imported graph"
        m = air.Model("zoo", [g])
        for enc, dec in ((m.to_bytes, air.Model.from_bytes), (m.to_text, air.Model.from_text),
                         (m.to_om, air.Model.from_om)):
            back = dec(enc())
            assert back.to_bytes() == m.to_bytes(), f"{enc.__name__} round trip differs"

    def onnx_export() -> None:
        assert g is not None, "no imported graph"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "export.onnx")
            air.onnx.save(g, path)
            onnx.checker.check_model(onnx.load(path), full_check=True)
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args, strict=True)}
            got = dict(enumerate(sess.run(None, feeds)))
            _same(got, ref, "onnxruntime on the exported graph")

    run.stage("onnx", onnx_path)
    run.stage("ge round trips", ge_round_trips)
    run.stage("onnx export", onnx_export)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_corpus_model(entry: Entry, request) -> None:
    run = _Run(entry)
    model, args = entry.build()
    with torch.no_grad():
        ep = torch.export.export(model, args, strict=False)
        g, ref = _torch_stages(run, model, args, ep)
        if g is not None:
            _compile_stages(run, g, args, ref)
        else:
            for s in ("compile", "sources", "cpu kernels"):
                run.outcome[s] = "FAIL: no imported graph"
        _onnx_stages(run, ep, args, g, ref)
    request.node.user_properties.append((KEY, {
        "name": entry.name, "family": entry.family, "stages": list(STAGES), "outcome": run.outcome,
        "figures": run.figures, "seconds": run.seconds}))
    failed = {s: o for s, o in run.outcome.items() if o != "ok"}
    unexpected = {s: o for s, o in failed.items() if (entry.name, s) not in OPEN}
    fixed = [s for s in STAGES if (entry.name, s) in OPEN and s not in failed]
    assert not unexpected, f"{entry.name}: " + "; ".join(f"{s}: {o}" for s, o in
                                                          unexpected.items())
    assert not fixed, f"{entry.name}: listed as open but passing now: {fixed}"
    if failed:
        pytest.xfail("; ".join(f"{s}: {OPEN[(entry.name, s)]}" for s in failed))


#: GE types whose kernels keep a whole row in the UB (norms, softmax).
ROW_TYPES = {"LayerNorm", "SoftmaxV2", "LogSoftmaxV2", "ReduceMeanD", "ReduceSumD",
             "ReduceMaxD", "ReduceMean", "ReduceSum", "ReduceMax"}


@pytest.mark.parametrize("entry", REAL_WIDTH, ids=[e.name for e in REAL_WIDTH])
def test_corpus_model_at_real_width(entry: Entry, real_width_summary) -> None:
    """One layer at the model's real width: every norm and softmax fuses and tiles within the
    UB (none lifted for it), the compiled graph computes what eager PyTorch does, and every
    kernel holding a reduction builds and runs on the CPU equal to its HintGraph."""
    import json

    model, args = entry.build()
    with torch.no_grad():
        ep = torch.export.export(model, args, strict=False)
        ref = _flat(ep.module()(*args))
        g = air.torch.from_exported_program(ep)
        t0 = time.perf_counter()
        cm = air.compile(g)
        seconds = time.perf_counter() - t0
    report = json.loads(cm.report.to_json())
    ub = [x for x in report["barriers"] + report["lifted"] if "UB" in x["reason"]]
    assert not ub, f"lifted for the UB: {ub}"
    rows = [k for k in cm.kernels if ROW_TYPES & set(k.member_types)]
    assert rows, "no kernel holds a norm or a softmax"
    _same(air.evaluate(cm.graph, [a.numpy() for a in args]), ref, "evaluate(compiled)")
    rep = air.compiler.verify(cm, kernels=[k.name for k in rows], tails=False)
    assert rep.ok, rep.text()
    real_width_summary.append(
        f"{entry.name:16s} kernels {len(cm.kernels):3d}, with a reduction {len(rows):3d} "
        f"(verified on the CPU), lifted {len(report['lifted']):2d}, compile {seconds:.2f} s")
