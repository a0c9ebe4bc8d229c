"""The builtin op table the Rust core reads is generated from the Python declarations: it is
not stale, and the Rust registry holds the builtin operators before any Python op library
loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ascendir.ops import _table

TABLE = (Path(__file__).resolve().parents[1] / "rust" / "ascendir-ir" / "src" / "registry"
         / "builtin_ops.txt")


def test_builtin_op_table_is_generated_from_the_declarations() -> None:
    assert TABLE.read_text(encoding="utf-8") == _table.generate(), (
        "the builtin op table is stale: run python -m ascendir.ops._table")


def test_builtin_ops_are_registered_without_loading_the_python_library() -> None:
    code = (
        "import sys\n"
        "from ascendir import _core\n"
        "assert _core._ops_contains('Relu') and _core._ops_is_builtin('MatMulV2')\n"
        "assert 'ascendir.ops.builtin' not in sys.modules\n"
        "print(len(_core._ops_types()))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) > 200
