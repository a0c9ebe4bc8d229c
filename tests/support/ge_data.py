"""The real GE dumps the acceptance tests read: the directory the environment variable
``ASCENDIR_GE_TESTDATA`` names, else ``shared/testdata/ge`` next to the repository, else the
copies committed compressed under ``tests/data/ge`` (unpacked once into a cache directory).

Without them a test skips on a developer's machine, and fails in CI (``CI=true``): there a
missing data file means the acceptance tests checked nothing."""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

COMMITTED = Path(__file__).resolve().parents[1] / "data" / "ge"


def _unpacked() -> Path:
    """The committed dumps unpacked into a cache directory named by their contents."""
    packed = sorted(COMMITTED.glob("*.gz"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in packed)).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"ascendir-ge-testdata-{digest}"
    for p in packed:
        target = out / p.name[: -len(".gz")]
        if not target.is_file():
            out.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(target.suffix + f".{os.getpid()}.tmp")
            tmp.write_bytes(gzip.decompress(p.read_bytes()))
            tmp.replace(target)
    return out


def _data_dir() -> Path:
    env = os.environ.get("ASCENDIR_GE_TESTDATA")
    if env:
        return Path(env)
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "testdata" / "ge"
    if shared.is_dir() or not COMMITTED.is_dir():
        return shared
    return _unpacked()


DATA = _data_dir()
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
