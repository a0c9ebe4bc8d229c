"""The PyTorch frontend against the path users have today (``torch.onnx.export(dynamo=True)``
then ``air.onnx.load``), in the same run:

* ``import ascendir`` in a fresh interpreter (best of 5; torch must stay unimported);
* BERT-base (12 layers, 768 hidden, random init, dynamic batch and sequence): the whole
  ``air.torch.export`` against ``torch.onnx.export`` + ``air.onnx.load``, each after a
  warm-up export of a small model, with the node counts of both graphs;
* the conversion after flattening, in FX nodes per second (BERT-base's program and a
  synthetic 1M-node program in the flattened form);
* node counts of the test models of ``tests/test_torch.py`` on both paths.

Needs torch 2.9.1 and torchvision 0.24.1 (``pip install '.[torch,bench]'``; onnxscript for the
ONNX exporter. Run: ``python benches/bench_torch.py [--quick] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def import_time() -> dict[str, Any]:
    code = ("import sys, time; t = time.perf_counter(); import ascendir; "
            "d = time.perf_counter() - t; print(d, 'torch' in sys.modules)")
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
        runs.append(float(out[0]))
        assert out[1] == "False", "import ascendir imported torch"
    return {"best_ms": min(runs) * 1e3, "median_ms": statistics.median(runs) * 1e3}


def bert_base(layers: int) -> tuple[Any, tuple[Any, ...], Any]:
    import torch
    from torch import nn
    from torch.export import Dim

    class Layer(nn.Module):
        def __init__(self, d: int, heads: int, ff: int) -> None:
            super().__init__()
            self.heads = heads
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.ln1 = nn.LayerNorm(d, eps=1e-12)
            self.inter = nn.Linear(d, ff)
            self.out = nn.Linear(ff, d)
            self.ln2 = nn.LayerNorm(d, eps=1e-12)

        def forward(self, x: torch.Tensor, ext: torch.Tensor) -> torch.Tensor:
            b, t, d = x.shape
            hd = d // self.heads

            def heads(v: torch.Tensor) -> torch.Tensor:
                return v.view(b, t, self.heads, hd).permute(0, 2, 1, 3)

            att = torch.matmul(heads(self.q(x)), heads(self.k(x)).transpose(-1, -2)) / hd**0.5
            att = nn.functional.softmax(att + ext, dim=-1)
            c = torch.matmul(att, heads(self.v(x))).permute(0, 2, 1, 3).contiguous()
            x = self.ln1(x + self.o(c.view(b, t, d)))
            return self.ln2(x + self.out(nn.functional.gelu(self.inter(x))))

    class BertBase(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            d = 768
            self.word = nn.Embedding(30522, d)
            self.position = nn.Embedding(512, d)
            self.token_type = nn.Embedding(2, d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList([Layer(d, 12, 3072) for _ in range(layers)])
            self.pool = nn.Linear(d, d)

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
            b, t = ids.shape
            pos = torch.arange(t).unsqueeze(0).expand(b, t)
            x = self.ln(self.word(ids) + self.position(pos)
                        + self.token_type(torch.zeros_like(ids)))
            ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(
                torch.float32).min
            for layer in self.layers:
                x = layer(x, ext)
            return x, torch.tanh(self.pool(x[:, 0]))

    torch.manual_seed(0)
    model = BertBase().eval()
    ids = torch.randint(0, 30522, (2, 128))
    mask = torch.ones(2, 128, dtype=torch.int64)
    b, t = Dim("batch", min=1, max=64), Dim("seq", min=2, max=512)
    return model, (ids, mask), ({0: b, 1: t}, {0: b, 1: t})


def warm_up() -> None:
    import torch

    import ascendir as air

    tiny = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval()
    air.torch.export(tiny, (torch.randn(2, 4),))
    with tempfile.TemporaryDirectory() as d:
        torch.onnx.export(tiny, (torch.randn(2, 4),), dynamo=True).save(os.path.join(d, "t.onnx"))


def onnx_path(model: Any, args: tuple[Any, ...], dyn: Any) -> tuple[float, Any]:
    import torch

    import ascendir as air

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        t = time.perf_counter()
        prog = torch.onnx.export(model, args, dynamic_shapes=dyn, dynamo=True)
        prog.save(path)
        g = air.onnx.load(path)
        return time.perf_counter() - t, g


def bert(layers: int) -> dict[str, Any]:
    import torch

    import ascendir as air

    model, args, dyn = bert_base(layers)
    warm_up()
    # Best of 3 (the machine is shared): torch.export alone, the conversion of its program,
    # and the whole air.torch.export.
    t_export = t_convert = t_ours = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        ep = torch.export.export(model, args, dynamic_shapes=dyn)
        t_export = min(t_export, time.perf_counter() - t)
        t = time.perf_counter()
        g, rep = air.torch.from_exported_program(ep, report=True)
        t_convert = min(t_convert, time.perf_counter() - t)
        t = time.perf_counter()
        g2 = air.torch.export(model, args, dynamic_shapes=dyn)
        t_ours = min(t_ours, time.perf_counter() - t)
    t = time.perf_counter()
    core, rep_core = air.torch.from_exported_program(ep, decompose=True, report=True)
    t_core = time.perf_counter() - t
    t_onnx = float("inf")
    for _ in range(2):
        dt, og = onnx_path(model, args, dyn)
        t_onnx = min(t_onnx, dt)
    feeds = [a.numpy() for a in args]
    with torch.no_grad():
        ref = [o.numpy() for o in model(*args)]
    outs = list(air.evaluate(g, feeds).values())
    err = max(float(np.abs(o - r).max()) for o, r in zip(outs, ref, strict=True))
    return {
        "layers": layers,
        "params": sum(p.numel() for p in model.parameters()),
        "ours_s": t_ours,
        "torch_export_s": t_export,
        "from_exported_program_s": t_convert,
        "from_exported_program_decompose_s": t_core,
        "onnx_path_s": t_onnx,
        "ratio": t_onnx / t_ours,
        "ratio_given_ep": t_onnx / t_convert,
        "fx_nodes": rep.fx_nodes,
        "flatten_s": rep.flatten_seconds,
        "convert_s": rep.convert_seconds,
        "nodes_per_s": rep.fx_nodes / rep.convert_seconds,
        "load_average": os.getloadavg()[0],
        "core_fx_nodes": rep_core.fx_nodes,
        "core_nodes_per_s": rep_core.fx_nodes / rep_core.convert_seconds,
        "nodes_ours": len(g.nodes),
        "nodes_ours_core_aten": len(core.nodes),
        "nodes_onnx": len(og.nodes),
        "max_abs_err": err,
        "same_graph_twice": len(g2.nodes) == len(g.nodes),
    }


def synthetic(n: int) -> dict[str, Any]:
    """A chain Data -> (Add, Relu) x n/2 in the flattened form: the conversion alone."""
    from ascendir import _core

    d = 64
    kinds, names, targets = [0, 1], ["x", "w"], ["x", "w"]
    code: list[int] = []
    off = [0, 0, 0]
    meta = [1, 0, 2, -1, d, 1, 0, 1, d]
    moff = [0, 5, 9]
    info = [-1] * 6
    strings = ["s0", "aten::relu(Tensor self) -> Tensor",
               "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"]
    prev = 0
    for i in range(n):
        kinds.append(2)
        names.append(f"n{i}")
        if i % 2 == 0:
            targets.append("aten.add.Tensor")
            code += [1, prev, 1, 1]
            info += [-1, -1, 2]
        else:
            targets.append("aten.relu.default")
            code += [1, prev]
            info += [-1, -1, 1]
        off.append(len(code))
        meta += [1, 0, 2, -1, d]
        moff.append(len(meta))
        prev = len(kinds) - 1
    kinds.append(3)
    names.append("output")
    targets.append("output")
    code += [6, 1, 1, prev]
    off.append(len(code))
    meta.append(0)
    moff.append(len(meta))
    info += [-1, -1, -1]
    w = np.ones(d, np.float32)
    args = ("main", kinds, names, targets, code, off, meta, moff, info, strings, [(1, w)],
            [("s0", 1, -1, "input 0 dim 0")], [])
    best = total = cpu = float("inf")
    for _ in range(5):
        t, c = time.perf_counter(), time.thread_time()
        g, rep = _core._torch_convert(*args)
        total = min(total, time.perf_counter() - t)
        cpu = min(cpu, time.thread_time() - c)
        best = min(best, rep["convert_seconds"])
        assert len(g.nodes) == n + 3
        del g
    # thread CPU time: the figure a loaded, shared machine does not inflate by waiting.
    return {"fx_nodes": len(kinds), "convert_s": best, "nodes_per_s": len(kinds) / best,
            "with_argument_conversion_s": total,
            "nodes_per_s_with_arguments": len(kinds) / total,
            "cpu_s_with_arguments": cpu, "nodes_per_cpu_s_with_arguments": len(kinds) / cpu}


def counts() -> list[dict[str, Any]]:
    from torch.export import Dim

    import ascendir as air
    from support.torch_models import MODELS, build, example

    rows = []
    for name in MODELS:
        model, rest, kind = build(name)
        x = example(rest, kind, 2, seed=0)
        # min 2: the ONNX exporter specializes batch 1 of nn.TransformerEncoderLayer.
        dyn = ({0: Dim("batch", min=2, max=64)},)
        g = air.torch.export(model, (x,), dynamic_shapes=dyn)
        core = air.torch.export(model, (x,), dynamic_shapes=dyn, decompose=True)
        _, og = onnx_path(model, (x,), dyn)
        t = time.perf_counter()
        air.compile(g)
        rows.append({"model": name, "ours": len(g.nodes), "ours_core_aten": len(core.nodes),
                     "onnx_path": len(og.nodes), "compile_s": time.perf_counter() - t})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 BERT layers, 100k-node program")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    res: dict[str, Any] = {"import": import_time()}
    print("import ascendir", res["import"], flush=True)
    res["bert"] = bert(2 if a.quick else 12)
    print("bert", res["bert"], flush=True)
    res["synthetic"] = synthetic(100_000 if a.quick else 1_000_000)
    print("synthetic", res["synthetic"], flush=True)
    res["counts"] = counts()
    for row in res["counts"]:
        print(row, flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
