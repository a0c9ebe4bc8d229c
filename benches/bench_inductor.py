"""Side by side with torch.compile (Inductor, CPU) on the BERT-base layout of ``models.bert``
(12 layers, the same widths): Inductor's first-compile time against ours (``air.compile``, no
codegen), and the number of kernels each emits (Inductor's generated kernels counted from its
output code; matrix multiplications are library calls on both sides).

Needs torch (``pip install torch==2.9.1``); without it the peer columns stay empty. Inductor's
compile runs in a fresh process each time (its caches off), so its first compile is measured
cold, as a user meets it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, row  # noqa: E402

LAYERS, HIDDEN, HEADS, VOCAB, MAX_POS = 12, 32, 4, 100, 64
BATCH, SEQ = 2, 16

_CHILD = r"""
import json, math, re, sys, time
import torch
from torch import nn

L, H, NH, V, P, B, S = (int(a) for a in sys.argv[1:8])

class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(H, H) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(H, eps=1e-12), nn.LayerNorm(H, eps=1e-12)
        self.up, self.down = nn.Linear(H, 4 * H), nn.Linear(4 * H, H)

    def heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, NH, H // NH).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        s = q @ k.transpose(-1, -2) / math.sqrt(H // NH)
        p = torch.softmax(s + mask, dim=-1)
        c = (p @ v).transpose(1, 2).reshape(x.shape)
        x = self.ln1(self.o(c) + x)
        h = self.up(x)
        h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
        return self.ln2(self.down(h) + x)

class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos, self.tok = nn.Embedding(V, H), nn.Embedding(P, H), nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H, eps=1e-12)
        self.layers = nn.ModuleList(Layer() for _ in range(L))
        self.pool = nn.Linear(H, H)

    def forward(self, ids, attn, tt):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.ln(self.word(ids) + self.tok(tt) + self.pos(pos))
        mask = (1.0 - attn[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        pooled = torch.tanh(self.pool(x[:, 0]))
        return x, pooled

import torch._inductor.config as cfg
cfg.fx_graph_cache = False
from torch._inductor.utils import run_and_get_code
torch.manual_seed(0)
m = Bert().eval()
args = (torch.randint(0, V, (B, S)), torch.ones(B, S, dtype=torch.int64),
        torch.zeros(B, S, dtype=torch.int64))
fn = torch.compile(m)
t = time.perf_counter()
with torch.no_grad():
    _, codes = run_and_get_code(fn, *args)
dt = time.perf_counter() - t
code = "\n".join(codes)
kernels = set(re.findall(r"^(cpp_fused_\w+|triton_\w+) = async_compile\.", code, re.M))
print(json.dumps({"seconds": dt, "kernels": len(kernels)}))
"""


def _inductor() -> dict | None:
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    args = [str(v) for v in (LAYERS, HIDDEN, HEADS, VOCAB, MAX_POS, BATCH, SEQ)]
    out = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True,
                         check=True, env=env, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[dict]:
    """Rows: first compile, ours vs Inductor; kernel counts in the note."""
    import ascendir as air
    import models

    g = air.onnx.load(models.bert(layers=LAYERS, hidden=HIDDEN, heads=HEADS, vocab=VOCAB,
                                  max_pos=MAX_POS))
    shapes = {"input_ids": [BATCH, SEQ], "attention_mask": [BATCH, SEQ],
              "token_type_ids": [BATCH, SEQ]}
    last: list = []

    def ours() -> None:
        last[:] = [air.compile(g, input_shapes=shapes)]

    t = measure(ours, 3 if quick else 5)[0]
    n_ours = len(last[0].kernels)
    start = time.perf_counter()
    peer = _inductor()
    note = f"kernels: ours {n_ours}"
    if peer is not None:
        note += f", Inductor {peer['kernels']} (its run took {time.perf_counter() - start:.1f} s)"
    else:
        note += "; torch not installed"
    return [row("first compile BERT-base layout (12 layers)", t, "torch.compile (Inductor, CPU)",
                None if peer is None else peer["seconds"], note)]


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
