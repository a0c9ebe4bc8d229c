"""The installed command-line interface."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def script() -> str:
    """The path of the installed ``ascendir`` console script (next to this interpreter first)."""
    found = Path(sys.executable).with_name("ascendir")
    if found.exists():
        return str(found)
    which = shutil.which("ascendir")
    assert which, "the ascendir console script is not installed"
    return which
