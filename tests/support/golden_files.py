"""Golden files of the text tests: compare, or rewrite with ``ASCENDIR_UPDATE_GOLDEN=1``."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
"""Where the golden files live."""


def assert_golden(rel: str, text: str) -> None:
    """``text`` equals the golden file ``tests/golden/<rel>`` (rewritten first when
    ``ASCENDIR_UPDATE_GOLDEN=1``)."""
    path = GOLDEN / rel
    if os.environ.get("ASCENDIR_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"golden file {rel} missing: run with ASCENDIR_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{rel} differs (ASCENDIR_UPDATE_GOLDEN=1 regenerates it)")
