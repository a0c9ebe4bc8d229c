"""Packaging metadata, the license and the wheel-building workflow."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_file_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(text.splitlines()) > 150


def test_project_metadata() -> None:
    project = _pyproject()["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert project["authors"] and all(a.get("name") for a in project["authors"])
    assert len(project["keywords"]) >= 4
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert not any(c.startswith("License ::") for c in classifiers)  # the SPDX field says it
    assert project["scripts"]["ascendir"] == "ascendir.cli:main"
    test_extra = " ".join(project["optional-dependencies"]["test"])
    assert "mypy" in test_extra and "pyyaml" in test_extra


def test_sdist_includes_the_protos() -> None:
    include = _pyproject()["tool"]["maturin"]["include"]
    assert {"path": "proto/*.proto", "format": "sdist"} in include
    assert sorted(p.name for p in (ROOT / "proto").glob("*.proto")) == [
        "ascendc_ir.proto", "ge_ir.proto", "onnx.proto",
    ]


def test_wheels_workflow_builds_every_platform() -> None:
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "wheels.yml").read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert "push" in on and "pull_request" in on
    jobs = wf["jobs"]
    assert set(jobs) >= {"linux", "macos", "windows", "sdist", "publish"}

    def uses(job: str) -> list[dict[str, Any]]:
        return [s for s in jobs[job]["steps"] if str(s.get("uses", "")).startswith(
            "PyO3/maturin-action@")]

    for job in ("linux", "macos", "windows", "sdist"):
        assert uses(job), job
    assert jobs["linux"]["strategy"]["matrix"]["target"] == ["x86_64", "aarch64"]
    linux = uses("linux")[0]["with"]
    assert linux["manylinux"] == "2014" and "--compatibility manylinux2014" in linux["args"]
    mac = {m["target"] for m in jobs["macos"]["strategy"]["matrix"]["include"]}
    assert mac == {"x86_64", "aarch64"}
    assert jobs["windows"]["runs-on"].startswith("windows")
    assert uses("sdist")[0]["with"]["command"] == "sdist"
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"linux", "macos", "windows", "sdist"}
    assert publish["permissions"]["id-token"] == "write"
    assert uses("publish")[0]["with"]["command"] == "upload"
    for name, job in jobs.items():
        for step in job["steps"]:
            assert "uses" in step or "run" in step, (name, step)
