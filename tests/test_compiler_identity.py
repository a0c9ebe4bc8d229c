"""Byte identity of compiled output: every model of ``benches/models.py`` (at small sizes) and
``examples/transformer_block.onnx``, compiled with stage dumps, hashed part by part and
compared with the reviewed hashes under ``tests/golden/compiled/``.

The hashed parts are the packaged graph (GE ModelDef bytes, every AscBackend node carrying
its HintGraph and ImplGraphs), the report (JSON, without its seconds), every kernel (its
metadata, HintGraph and ImplGraph bytes), the fusion DOT and every stage dump (tilings in
``09_tile.json``). Kernel cache keys
carry the build id, which changes with any source change: each run of 64 hex digits reads as
``<key>``. A change of the compiler that moves its output fails here; after reviewing it,
regenerate with ``ASCENDIR_UPDATE_GOLDEN=1 python -m pytest tests/test_compiler_identity.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest

import ascendir as air
from support.golden_files import assert_golden

ROOT = Path(__file__).resolve().parents[1]
_KEY = re.compile(rb"[0-9a-fA-F]{64}")


def _models() -> dict[str, Callable[[], onnx.ModelProto]]:
    sys.path.insert(0, str(ROOT / "benches"))
    import models

    return {
        "resnet50": lambda: models.resnet50(width=4, image=32),
        "bert": lambda: models.bert(layers=2),
        "decoder": lambda: models.decoder(layers=3),
        "transformer_block": lambda: onnx.load(str(ROOT / "examples" / "transformer_block.onnx")),
    }


def _digest(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else bytes(data)
    return hashlib.sha256(_KEY.sub(b"<key>", raw)).hexdigest()


def _report_without_seconds(report: dict[str, Any]) -> dict[str, Any]:
    out = dict(report)
    out.pop("total_seconds", None)
    out["stages"] = [s["stage"] for s in report["stages"]]
    return out


def identity_text(cm: air.compiler.CompiledModel) -> str:
    """One line per hashed part of ``cm``: ``<part> <sha256>``."""
    lines = [f"model.pb {_digest(cm.to_bytes())}"]
    report = _report_without_seconds(cm.report.data)
    lines.append(f"report.json {_digest(json.dumps(report, sort_keys=True))}")
    lines.append(f"stages {' '.join(report['stages'])}")
    lines.append(f"fusion.dot {_digest(cm.report.to_dot())}")
    for k in cm.kernels:
        meta = json.dumps([k.name, k.fuse_type, k.members, k.member_types, k.from_cache])
        parts = [meta.encode(), k.hint.to_bytes(), *(i.to_bytes() for i in k.impls)]
        lines.append(f"kernel {k.name} {_digest(b'|'.join(parts))}")
    for name, text in cm.dumps:
        lines.append(f"dump {name} {_digest(text)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("which", ["resnet50", "bert", "decoder", "transformer_block"])
def test_compiled_output_is_byte_identical_to_the_golden_hashes(which: str) -> None:
    """The compiled model, report, kernels and stage dumps hash as recorded."""
    graph = air.onnx.load(_models()[which](), warn_unknown=False)
    cm = air.compile(graph, dump_stages=True)
    assert cm.kernels, "the model compiles to kernels"
    text = identity_text(cm)
    # Compiling again gives the same bytes (the hashes are of a deterministic output).
    assert identity_text(air.compile(graph, dump_stages=True)) == text
    assert_golden(f"compiled/{which}.txt", text)


def test_the_identity_hash_sees_a_changed_report() -> None:
    """A differing report changes the hashed text (the guard can fail)."""
    graph = air.onnx.load(_models()["transformer_block"](), warn_unknown=False)
    cm = air.compile(graph)
    before = identity_text(cm)
    cm.report.data["nodes_after"] = cm.report.data["nodes_after"] + 1
    assert identity_text(cm) != before
