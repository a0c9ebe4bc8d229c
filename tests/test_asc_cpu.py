"""The CPU C++ verification target (docs/CPU.md): generated C++ kernels built with
the system compiler and run through ctypes, against the numpy simulator and the evaluator."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from ascendir import asc
from ascendir.asc._cxx import find_compiler
from ascendir.asc.schedule import schedule
from ascendir.asc.simulate import evaluate, export_plan, simulate
from ascendir.asc.target import Target
from ascendir.asc.tiling import compile_tiling, solve_tiling
from ascendir.errors import CxxBuildError, KernelRunError
from support import patterns as pat
from support.hintgraph import F16, F32, HB, I32, solved

try:
    find_compiler()
    HAVE_CXX = True
except CxxBuildError:
    HAVE_CXX = False

pytestmark = pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler (CXX, c++, g++, clang++)")

SMALL = Target("small", core_num=4, ub_size=16384, block_size=32, max_que_num=4)
# Ops whose numpy and C++ results may differ in the last bit (libm vs numpy's own loops).
INEXACT = {"Exp", "Ln", "Tanh", "Sigmoid", "Erf", "Gelu", "Pow"}


def _exact(b: HB, kind: str) -> bool:
    ops = {n.type for n in b.g.nodes}
    return b.dtype in (F32, I32) and kind in ("ew", "broadcast", "concat", "transpose") \
        and not ops & INEXACT


def _tiling(impl: Any, target: Any, shape: dict[str, int], sizes: dict[str, int],
            block_dim: int, containers: dict[str, int] | None = None) -> Any:
    """A hand-made TilingData (what GE's ST cases take from their stub tiling functions)."""
    bind = dict(shape)
    bind.update(sizes)
    plan = export_plan(impl, bind)
    conts = [(c["name"], int(c["slot_bytes"]), int(c["buf_num"])) for c in plan["containers"]]
    if containers:
        conts = [(n, containers.get(n, s), bn) for n, s, bn in conts]
    return SimpleNamespace(block_dim=block_dim, core_num=target.core_num,
                           ub_size=target.ub_size, tiling_key=impl.tiling_key,
                           shape=list(shape.items()), sizes=list(sizes.items()),
                           containers=conts)


@pytest.mark.parametrize("seed", range(64))
def test_pattern_cpu_kernel_matches_the_simulator(seed: int) -> None:
    """C21: every template and tiling of the generated patterns (small UB, non-dividing tails):
    bit-exact against ``asc.simulate`` for f32/int element-wise, close to ``asc.evaluate``."""
    b, kind = pat.build(seed)
    impls = schedule(b.g)
    k = asc.build_cpu(impls, SMALL, name=f"pattern{seed}")
    fn = compile_tiling(impls, SMALL)
    for shape in pat.shapes_for(b, seed, 2):
        runs = 0
        inputs = b.make_inputs(shape, seed)
        ref = evaluate(b.g, inputs, shape)
        for impl, res in zip(impls, fn.solve_each(shape), strict=True):
            if not solved(impl, res, shape):
                continue
            sim = simulate(impl, res, inputs)
            out = k.run(res, inputs)
            for name in b.outputs:
                a, s, r = out[name], sim[name], ref[name]
                assert a.dtype == s.dtype and a.shape == s.shape
                if _exact(b, kind) or a.dtype.kind in "iub":
                    assert np.array_equal(a, s, equal_nan=True), (impl.name, shape, name)
                tol = 2e-2 if a.dtype == np.float16 else 1e-4
                assert np.allclose(a.astype(np.float64), r.astype(np.float64), rtol=tol,
                                   atol=tol, equal_nan=True), (impl.name, shape, name)
                assert np.allclose(a.astype(np.float64), s.astype(np.float64), rtol=tol,
                                   atol=tol, equal_nan=True), (impl.name, shape, name)
            runs += 1
        assert runs > 0, f"no template of {b.g.name} solves {shape}"


def _load_abs_store(dims: list[int]) -> HB:
    b = HB("LoadAbsStore", dims, F16)
    b.store(b.op("Abs", b.load()))
    return b


@pytest.mark.parametrize("dims", [[96, 16, 16], [95, 16, 16], [97, 16, 16], [4, 10, 16]])
def test_ge_codegen_st_load_abs_store_half(dims: list[int]) -> None:
    """C22: GE's codegen ST cases — Load→Abs→Store in half, all inputs −1, expect 1 within
    1e-4 — with the solver's tiling and with hand tilings that force block and tile tails as
    GE's stub tilings do (48 blocks; 2 blocks of 6 or 7 tiles of 4 rows)."""
    b = _load_abs_store(dims)
    impls = schedule(b.g)
    impl = impls[0]
    tgt = Target.ascend910b()
    k = asc.build_cpu(impls, tgt, name="load_abs_store")
    n = int(np.prod(dims))
    x = {b.inputs[0][0]: np.full(n, -1.0, dtype=np.float16)}
    tilings = [solve_tiling(impls, tgt, {})]
    names = {str(v[0]) for v in asc.tiling.tiling_problem(impl, tgt)["vars"]}
    tile = next(v for v in names if v.endswith("t_size"))
    block = next(v for v in names if v.endswith("Tb_size"))
    row = dims[-1] * dims[-2]
    if dims[0] >= 48:
        # 48 blocks of one tile of a (possibly partial) row block: block and tile tails.
        t = -(-n // 48)
        t = -(-t // 16) * 16
        tiles = -(-n // t)
        tilings.append(_tiling(impl, tgt, {}, {tile: t, block: 1}, tiles))
    else:
        for per_block in (6, 7):
            t = 4 * dims[-1]  # four rows of 16
            tiles = -(-n // t)
            tilings.append(_tiling(impl, tgt, {}, {tile: t, block: per_block},
                                   -(-tiles // per_block)))
    assert row > 0
    for td in tilings:
        out = k.run(td, x)[b.outputs[0]]
        assert out.dtype == np.float16 and out.size == n
        assert np.max(np.abs(out.astype(np.float32) - 1.0)) <= 1e-4


def _add_graph() -> HB:
    b = HB("AddXY", ["s0"], F32)
    x = b.load()
    y = b.load()
    b.store(b.op("Add", x, y))
    return b


def test_checked_build_reports_a_corrupted_allocation() -> None:
    """C23: two live tensors in one slot (the simulator test's corruption) — the checked
    build names the stale read; unchecked, the kernel computes y + y like the simulator."""
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    inputs = b.make_inputs(shape)
    impl.node("load4").outputs[0].mem.reuse_id = 99
    for name in ("load2", "load4"):
        impl.node(name).outputs[0].que.buf_num = 1
    bad = solve_tiling([impl], tgt, shape)
    k = asc.build_cpu([impl], tgt, name="corrupt")
    with pytest.raises(KernelRunError) as e:
        k.run(bad, inputs)
    assert e.value.kind == "stale"
    assert "load2" in str(e.value)
    out = k.run(bad, inputs, checked=False)[b.outputs[0]]
    sim = simulate(impl, bad, inputs)[b.outputs[0]]
    np.testing.assert_array_equal(out, sim)
    y = inputs["x3"].astype(np.float32)
    np.testing.assert_allclose(out, y + y, rtol=1e-6)


def test_checked_build_reports_an_out_of_slot_write() -> None:
    """C23: a tiling whose tile is twice what the containers were sized for."""
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    good = solve_tiling([impl], tgt, shape)
    sizes = dict(good.sizes)
    tile = next(n for n in sizes if n.endswith("t_size"))
    small = {n: s for n, s, _ in good.containers}
    sizes[tile] *= 2
    td = _tiling(impl, tgt, shape, sizes, good.block_dim, containers=small)
    k = asc.build_cpu([impl], tgt, name="overflow")
    inputs = b.make_inputs(shape)
    np.testing.assert_allclose(k.run(good, inputs)[b.outputs[0]],
                               evaluate(b.g, inputs, shape)[b.outputs[0]], rtol=1e-6)
    with pytest.raises(KernelRunError) as e:
        k.run(td, inputs)
    assert e.value.kind == "slot"
    assert e.value.node is not None and e.value.node in {n.name for n in impl.nodes}


def test_checked_build_reports_a_misaligned_base() -> None:
    """C23: a queue slot size that is not a multiple of 32 bytes puts slot 1 off alignment."""
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    good = solve_tiling([impl], tgt, shape)
    conts = {n: s for n, s, _ in good.containers}
    first = next(n for n in conts if n.startswith("q"))
    conts[first] += 4
    td = _tiling(impl, tgt, shape, dict(good.sizes), good.block_dim, containers=conts)
    k = asc.build_cpu([impl], tgt, name="misaligned")
    with pytest.raises(KernelRunError) as e:
        k.run(td, b.make_inputs(shape))
    assert e.value.kind == "align"


def test_containers_beyond_the_ub_are_refused() -> None:
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    good = solve_tiling([impl], tgt, shape)
    k = asc.build_cpu([impl], tgt, name="too_big")
    with pytest.raises(KernelRunError) as e:
        k.run(good, b.make_inputs(shape), ub_size=1024)
    assert e.value.kind == "ub"


def test_short_input_is_refused_before_the_kernel_runs() -> None:
    b = _add_graph()
    impl = schedule(b.g)[0]
    shape = {"s0": 3000}
    tgt = Target("t", core_num=4, ub_size=16384)
    good = solve_tiling([impl], tgt, shape)
    k = asc.build_cpu([impl], tgt, name="short")
    inputs = b.make_inputs(shape)
    inputs[b.inputs[0][0]] = inputs[b.inputs[0][0]][:100]
    with pytest.raises(KernelRunError) as e:
        k.run(good, inputs)
    assert e.value.kind == "input"


def test_builds_are_cached_by_source(tmp_path: Any) -> None:
    b = _add_graph()
    impls = schedule(b.g)
    k1 = asc.build_cpu(impls, SMALL, name="cached", cache_dir=str(tmp_path))
    k2 = asc.build_cpu(impls, SMALL, name="cached", cache_dir=str(tmp_path))
    assert k1.library == k2.library and k1.library.exists()
    assert k1.source == k2.source
    # Kernels that differ only in their names share one build (the canonical source) ...
    k3 = asc.build_cpu(impls, SMALL, name="cached2", cache_dir=str(tmp_path))
    assert k3.library == k1.library and k3.name == "cached2"
    # ... a different computation does not.
    other = HB("SubXY", ["s0"], F32)
    other.store(other.op("Sub", other.load(), other.load()))
    k4 = asc.build_cpu(schedule(other.g), SMALL, name="cached", cache_dir=str(tmp_path))
    assert k4.library != k1.library


def test_missing_compiler_is_a_clear_error(monkeypatch: Any) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler-ascendir")
    b = _add_graph()
    with pytest.raises(CxxBuildError, match="no-such-compiler-ascendir"):
        asc.build_cpu(schedule(b.g), SMALL, name="nocxx", cache_dir=None)


def test_generated_files_compile_standalone(tmp_path: Any) -> None:
    """The files a user gets (`files()`) build on their own with -Wall -Werror."""
    import subprocess

    from ascendir.asc.cpu import cpu_sources

    b = _add_graph()
    for name, text in cpu_sources(schedule(b.g), "standalone", SMALL).items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    cxx = find_compiler()
    res = subprocess.run([*cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror",
                          "-I", str(tmp_path), str(tmp_path / "standalone_cpu.cpp")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]


def test_reduction_and_broadcast_kernels_run_on_the_cpu() -> None:
    b = HB("SumRows", ["s0", "s1"], F32)
    x = b.load()
    b.store(b.reduce("Sum", x, [1]))
    impls = schedule(b.g)
    k = asc.build_cpu(impls, SMALL, name="sum_rows")
    fn = compile_tiling(impls, SMALL)
    shape = b.bindings([7, 3001])
    inputs = b.make_inputs(shape)
    ref = evaluate(b.g, inputs, shape)[b.outputs[0]]
    ran = 0
    for impl, res in zip(impls, fn.solve_each(shape), strict=True):
        if not solved(impl, res, shape):
            continue
        np.testing.assert_allclose(k.run(res, inputs)[b.outputs[0]], ref, rtol=1e-4)
        ran += 1
    assert ran > 0


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])



@pytest.mark.sweep
@pytest.mark.parametrize("which", ["bert", "decoder", "resnet"])
def test_every_kernel_of_the_benchmark_models_verifies(which: str) -> None:
    """Every kernel of the models of ``benches/models.py`` (smaller configurations of the
    same layouts; kernels that differ only in names share one build) builds for the CPU and
    matches its HintGraph at the hint shapes, at shapes
    off the hints and on a small-UB target that forces block and tile tails."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    import ascendir as air
    import models

    model = {"bert": lambda: models.bert(layers=1),
             "decoder": lambda: models.decoder(layers=1),
             "resnet": lambda: models.resnet50(width=4, image=16)}[which]()
    cm = air.compile(air.onnx.load(model))
    assert cm.kernels
    rep = air.compiler.verify(cm)
    assert rep.ok, rep.text()
    # Every kernel ran, or its structural twin did.
    ran = {c.kernel for c in rep.cases}
    assert ran | set(rep.twins) == {k.name for k in cm.kernels}
    assert set(rep.twins.values()) <= ran and not ran & set(rep.twins)
    assert any(c.target == "tails" for c in rep.cases)


def test_cli_emits_cpp_and_verifies(tmp_path: Any) -> None:
    """``ascendir compile --emit cpp --verify``: every kernel's files are written and verified."""
    import subprocess
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    import onnx

    import models

    src = tmp_path / "bert1.onnx"
    onnx.save(models.bert(layers=1), str(src))
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "ascendir", "compile", str(src), "-o", str(out),
                          "--emit", "om,cpp", "--verify", "--no-progress"],
                         capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "0 failed" in res.stderr
    kernels = sorted(p for p in (out / "kernels").iterdir() if p.is_dir())
    assert kernels
    for d in kernels:
        names = {p.name for p in d.iterdir()}
        assert f"{d.name}_cpu.cpp" in names and "autofuse_tiling_data.h" in names
        assert f"{d.name}_tiling_func.cpp" in names
        assert (d / "kernel_tiling" / "kernel_tiling.h").exists()


def test_kernel_sources_and_generate_give_each_kernels_files(tmp_path: Any) -> None:
    """``Kernel.sources`` is the kernel's generated files; ``CompiledModel.generate``
    makes every kernel's at once and ``save(emit=cpp)`` writes exactly those."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    import ascendir as air
    import models

    cm = air.compile(air.onnx.load(models.bert(layers=1)))
    first = cm.kernels[0]
    alone = asc.generate_kernel(first.impls, first.name, hint=first.hint,
                                cache_key=first.cache_key)
    assert first.sources == alone  # generated on first use, for that kernel only
    every = cm.generate()
    assert list(every) == [k.name for k in cm.kernels]
    assert every[first.name] is first.sources
    for k in cm.kernels[1:]:
        assert every[k.name] == asc.generate_kernel(k.impls, k.name, hint=k.hint,
                                                    cache_key=k.cache_key)
        assert k.sources is every[k.name]
    written = cm.save(tmp_path, emit=("cpp",))
    assert len(written) == sum(len(f) for f in every.values())
    for k in cm.kernels:
        for fname, text in k.sources.items():
            assert (tmp_path / "kernels" / k.name / fname).read_text() == text


_SANITIZED = r'''
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from support import patterns as pat
from support.hintgraph import solved
from ascendir import asc
from ascendir.asc.schedule import schedule
from ascendir.asc.simulate import simulate
from ascendir.asc.tiling import compile_tiling

flags = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
runs = 0
for seed in range(8):  # one pattern of every kind
    b, kind = pat.build(seed)
    impls = schedule(b.g)
    k = asc.build_cpu(impls, pat.SMALL, name=f"san{seed}", flags=flags)
    fn = compile_tiling(impls, pat.SMALL)
    for shape in pat.shapes_for(b, seed, 1):
        inputs = b.make_inputs(shape, seed)
        for impl, res in zip(impls, fn.solve_each(shape), strict=True):
            if not solved(impl, res, shape):
                continue
            out = k.run(res, inputs)
            sim = simulate(impl, res, inputs)
            for name in b.outputs:
                assert np.allclose(out[name].astype(float), sim[name].astype(float),
                                   rtol=2e-2, atol=2e-2, equal_nan=True)
            runs += 1
print("runs", runs)
'''


def test_kernels_are_clean_under_address_and_undefined_sanitizers(tmp_path: Any) -> None:
    """The generated kernels built with ``-fsanitize=address,undefined`` (every
    pattern kind, small UB, tails) run without a sanitizer report. A subprocess, because the
    ASan runtime must be loaded first (``LD_PRELOAD``)."""
    import subprocess
    import sys
    from pathlib import Path

    cxx = find_compiler()
    libasan = subprocess.run([*cxx, "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()
    if not libasan or not Path(libasan).is_file():
        pytest.skip("the C++ compiler has no shared ASan runtime")
    env = dict(os.environ)
    env["LD_PRELOAD"] = libasan
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    script = tmp_path / "sanitized.py"
    script.write_text(_SANITIZED)
    res = subprocess.run([sys.executable, str(script), str(Path(__file__).resolve().parent)],
                         capture_output=True, text=True, env=env, timeout=1200)
    assert res.returncode == 0, res.stderr[-4000:]
    assert "runtime error" not in res.stderr and "AddressSanitizer" not in res.stderr
    assert "runs " in res.stdout and int(res.stdout.split("runs ")[1].split()[0]) > 0


def test_blocks_on_threads_give_the_same_result() -> None:
    """``threads=N`` runs the blocks on N threads, each with its own UB; same bytes out."""
    b = _add_graph()
    impls = schedule(b.g)
    shape = {"s0": 50_000}
    tgt = Target("t", core_num=8, ub_size=16384)
    td = solve_tiling(impls, tgt, shape)
    assert td.block_dim > 1
    k = asc.build_cpu(impls, tgt, name="threads")
    inputs = b.make_inputs(shape)
    one = k.run(td, inputs)[b.outputs[0]]
    four = k.run(td, inputs, threads=4)[b.outputs[0]]
    np.testing.assert_array_equal(one, four)
    with pytest.raises(KernelRunError):
        k.run(td, inputs, threads=0)
    # Errors from worker threads reach the caller, naming the node.
    with pytest.raises(KernelRunError) as e:
        k.run(td, inputs, threads=4, ub_size=1024)
    assert e.value.kind == "ub"
