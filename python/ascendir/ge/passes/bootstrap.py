"""GE's pass discovery (``ge.passes.bootstrap``): the pass files named by
``ASCEND_GE_PY_PASS_PATH`` (``os.pathsep``-separated ``.py`` files and directories; in a
directory every ``.py`` file and package whose name does not start with ``_``, by name)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .registry import get_registered_pass_dicts

__all__ = ["ENV_PY_PASS_PATH", "get_registered_passes", "load_pass_plugins"]

ENV_PY_PASS_PATH = "ASCEND_GE_PY_PASS_PATH"
_PREFIX = "_ge_py_pass_"


def _load_file(path: Path) -> ModuleType:
    name = f"{_PREFIX}{path.stem}_{abs(hash(str(path)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load python pass file: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _scan(item: str) -> list[ModuleType]:
    path = Path(item)
    if not path.exists():
        raise FileNotFoundError(f"python pass path does not exist: {path}")
    if path.is_file():
        if path.suffix != ".py":
            raise ValueError(f"python pass file must end with .py: {path}")
        return [_load_file(path)]
    out: list[ModuleType] = []
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    for child in sorted(path.iterdir(), key=lambda c: c.name):
        if child.name.startswith("_"):
            continue
        if child.is_file() and child.suffix == ".py":
            out.append(_load_file(child))
        elif child.is_dir() and (child / "__init__.py").exists():
            out.append(importlib.import_module(child.name))
    return out


def load_pass_plugins() -> list[ModuleType]:
    """Import the pass modules ``ASCEND_GE_PY_PASS_PATH`` names (their decorators register
    the passes); a module already loaded is not loaded again. Raises ``FileNotFoundError``
    for a missing path, ``ValueError`` for a file that is not ``.py``."""
    loaded: list[ModuleType] = []
    seen: set[str] = set()
    for item in os.environ.get(ENV_PY_PASS_PATH, "").split(os.pathsep):
        if not item.strip():
            continue
        for m in _scan(item.strip()):
            if m.__name__ not in seen:
                seen.add(m.__name__)
                loaded.append(m)
    return loaded


def get_registered_passes() -> list[dict[str, Any]]:
    """Every registered pass as a dict."""
    return get_registered_pass_dicts()


def clear_loaded_pass_modules() -> None:
    """Forget the pass modules loaded from files (a later load imports them again)."""
    for key in [k for k in sys.modules if k.startswith(_PREFIX)]:
        del sys.modules[key]
