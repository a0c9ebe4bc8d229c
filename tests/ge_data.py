"""The real GE dumps the acceptance tests read: ``shared/testdata/ge`` next to the repository,
or the directory the environment variable ``ASCENDIR_GE_TESTDATA`` names.

Without them a test skips on a developer's machine, and fails in CI (``CI=true``): there a
missing data file means the acceptance tests checked nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

DATA = Path(
    os.environ.get("ASCENDIR_GE_TESTDATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "testdata" / "ge"
)
IN_CI = os.environ.get("CI", "").lower() == "true"
DUMPS = sorted(DATA.glob("ge_proto_*.txt")) if DATA.is_dir() else []


def missing(what: str) -> None:
    """Skip (or, in CI, fail) the running test for want of `what`."""
    message = f"{what} not found under {DATA} (set ASCENDIR_GE_TESTDATA to their directory)"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def dump_params() -> list[Any]:
    """Parameters over the GE text dumps: one per dump, or one that reports them missing."""
    if DUMPS:
        return [pytest.param(p, id=p.name[:16]) for p in DUMPS]
    return [pytest.param(None, id="no-dumps")]


def need_dump(path: Path | None) -> Path:
    """The dump `path`, or skip / fail (in CI) when there is none."""
    if path is None:
        missing("GE dumps (ge_proto_*.txt)")
    assert path is not None
    return path


def need_file(name: str) -> Path:
    """The data file `name`, or skip / fail (in CI) when it is missing."""
    path = DATA / name
    if not path.is_file():
        missing(name)
    return path
