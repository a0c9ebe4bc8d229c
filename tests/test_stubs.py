"""The type stubs of the extension module describe exactly what the module exports."""

import ast
import inspect
from pathlib import Path

import ascendir
from ascendir import _core

STUB = Path(ascendir.__file__).with_name("_core.pyi")


def _stub_tree() -> dict[str, set[str] | None]:
    """Top-level names of the stub; classes map to their member names."""
    tree = ast.parse(STUB.read_text())
    out: dict[str, set[str] | None] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    members.update(t.id for t in item.targets if isinstance(t, ast.Name))
            out[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
    return out


_PROTOCOL = {"__len__", "__iter__", "__contains__", "__getitem__", "__setitem__",
             "__delitem__", "__call__", "__copy__", "__deepcopy__"}


def _keep(name: str) -> bool:
    """Names whose presence is compared: public ones and container/copy protocol methods."""
    return not name.startswith("__") or name in _PROTOCOL


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if _keep(name)}


def test_every_export_has_a_stub():
    stub = _stub_tree()
    exported = {n for n in dir(_core) if not n.startswith("__") or n == "__version__"}
    exported -= {"_core"}
    missing = sorted(
        n for n in exported if n not in stub and not inspect.ismodule(getattr(_core, n))
    )
    assert not missing, f"exported but not in _core.pyi: {missing}"


def test_every_stub_exists():
    stub = _stub_tree()
    ghosts = sorted(n for n in stub if not hasattr(_core, n))
    assert not ghosts, f"in _core.pyi but not exported: {ghosts}"


def test_class_members_match():
    problems = []
    for name, members in _stub_tree().items():
        if members is None:
            continue
        cls = getattr(_core, name)
        real = _public(cls) - {"__init__"}
        declared = {m for m in members if _keep(m)}
        for m in sorted(declared - real - set(dir(object))):
            problems.append(f"{name}.{m} is in the stub but not in the class")
        for m in sorted(real - declared - set(dir(object))):
            if not m.startswith("_"):
                problems.append(f"{name}.{m} is in the class but not in the stub")
    assert not problems, "\n".join(problems)
