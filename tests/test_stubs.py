"""The type stubs: ``mypy.stubtest`` finds no mismatch against the installed package, the enum
stub is what the Rust tables generate, and a typed script passes ``mypy --strict``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ascendir
from ascendir import _core, _stubgen
from ascendir.types import AttrKind, DataType, Format

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(ascendir.__file__).parent


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=str(ROOT.parent),
                          capture_output=True, text=True, check=False, timeout=900)


def test_types_stub_is_generated_from_the_rust_tables() -> None:
    text = (PACKAGE / "types.pyi").read_text()
    assert text == _stubgen.render_types_stub(), "run python -m ascendir._stubgen"
    for enum_cls, table in ((DataType, _core._data_type_table()),
                            (Format, _core._format_table()),
                            (AttrKind, _core._attr_kind_table())):
        for row in table:
            assert f"    {row[0]} = {row[1]}\n" in text
            assert enum_cls[row[0]].value == row[1]


def test_stubs_only_where_runtime_modules_are() -> None:
    import importlib

    for stub in PACKAGE.rglob("*.pyi"):
        rel = stub.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        importlib.import_module(".".join(parts))  # raises when no such module exists


def test_stubtest_is_clean_for_a_user_outside_the_repo(tmp_path: Path) -> None:
    # As a user runs it: from a folder of their own, with no configuration file and no
    # allowlist, whichever optional dependencies happen to be installed.
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "ascendir"], cwd=str(tmp_path),
                       capture_output=True, text=True, check=False, timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert "Success: no issues found" in r.stdout


def test_proto_stub_is_generated_from_the_module() -> None:
    text = _stubgen.PROTO_STUB.read_text()
    assert text == _stubgen.render_proto_stub(), "run python -m ascendir._stubgen"
    assert "google" not in text  # usable without protobuf's type stubs


def test_typed_example_passes_mypy_strict() -> None:
    r = _mypy("mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"),
              str(ROOT / "examples" / "typed_pipeline.py"))
    assert r.returncode == 0, r.stdout + r.stderr
    bad = ROOT / "tests" / "data" / "typing_mistake.py"
    r = _mypy("mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"), str(bad))
    assert r.returncode == 1, r.stdout
    assert 'has no attribute "FLAOT16"' in r.stdout
    assert 'Argument 1 to "add_input" of "Graph" has incompatible type "int"' in r.stdout


def test_typed_example_runs(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "typed_pipeline.py"),
                        str(tmp_path)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "dtype FLOAT16" in r.stdout and "block.onnx: 6 nodes" in r.stdout
