"""The example scripts run and say what they should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(script: str, *args: str) -> str:
    r = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                       text=True, check=False, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_ascgraph_pipeline_simulates_what_evaluate_computes() -> None:
    for s0 in ("4096", "1000", "7"):
        out = _run("ascgraph_pipeline.py", s0)
        assert f"for s0={s0}" in out
        assert out.strip().endswith("= 0.0"), out


def test_the_example_passes_run_over_bert_and_keep_onnxruntime_numbers() -> None:
    out = _run("passes.py")
    assert "FuseMatMulBias             step 0 modified True" in out, out
    diff = float(out.strip().rsplit("=", 1)[1])
    assert diff < 1e-4, out
