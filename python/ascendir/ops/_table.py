"""Generate the builtin op table the Rust core reads (``builtin_ops.txt`` of ``ascendir-ir``).

The builtin library is declared in Python (:mod:`ascendir.ops.builtin`); the Rust registry
holds its prototypes from its first use by reading a table generated from those declarations,
so that a compile driven from Rust sees every builtin operator. Regenerate the table after
changing a declaration::

    python -m ascendir.ops._table            # rewrite the checked-in table
    python -m ascendir.ops._table --check    # exit 1 when it is stale

``tests/test_op_table.py`` fails when the checked-in table differs from what this generates.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import _core

__all__ = ["TABLE_PATH", "generate"]

TABLE_PATH = (Path(__file__).resolve().parents[3] / "rust" / "ascendir-ir" / "src" / "registry"
              / "builtin_ops.txt")
"""Where the table lives in a source tree."""


def generate() -> str:
    """The table text of the builtin library's declarations, sorted by type."""
    from . import _builtin_specs, _ensure_loaded

    _ensure_loaded()
    return str(_core._ops_table_text(list(_builtin_specs)))


def main(argv: list[str] | None = None) -> int:
    """Write the table (or, with ``--check``, compare it); returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m ascendir.ops._table",
                                 description="Generate the builtin op table.")
    ap.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    ap.add_argument("--path", type=Path, default=TABLE_PATH, help="the table file")
    args = ap.parse_args(argv)
    text = generate()
    if args.check:
        current = args.path.read_text(encoding="utf-8") if args.path.is_file() else ""
        if current != text:
            print(f"{args.path} is stale: run python -m ascendir.ops._table", file=sys.stderr)
            return 1
        return 0
    args.path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
