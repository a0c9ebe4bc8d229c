"""Every code block of README.md, CONTRIBUTING.md and docs/*.md runs as a test.

``python`` blocks are executed in order, one namespace per Markdown file, in a scratch
directory holding a copy of ``examples/``: exactly as shown, as a reader pasting them one after
another would (no hidden setup: an HTML comment closing right before a block fails). A
block preceded by ``<!-- doctest: skip: REASON -->`` is skipped with that reason (shown by
``pytest -rs``); shell blocks are skipped with the reason that they are shell commands,
unless marked ``<!-- doctest: run -->``, in which case they run under ``bash -euo pipefail``
in the scratch directory. A block in any other language fails: it must be marked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell", "console"}
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARK = re.compile(r"<!--\s*doctest:\s*(skip|run)\s*(?::\s*(.*?))?\s*-->")


@dataclass
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int
    lang: str
    code: str
    mark: str | None
    reason: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def parse_blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` with their language and doctest mark."""
    lines = path.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        mark, reason = None, ""
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        assert j < 0 or lines[j].strip() != "-->", (
            f"{path}:{j + 1}: a comment closes right before a block (hidden setup code?)")
        if j >= 0:
            mm = _MARK.search(lines[j])
            if mm:
                mark, reason = mm.group(1), (mm.group(2) or "")
        out.append(Block(path, start + 1, lang, textwrap.dedent("\n".join(body)) + "\n",
                         mark, reason))
        i += 1
    return out


BLOCKS = [b for p in DOCS for b in parse_blocks(p)]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "examples", d / "examples")
    return d


_NAMESPACES: dict[Path, dict[str, Any]] = {}
_RAN: dict[Path, int] = {}
"""How many of a file's runnable blocks have run in its namespace in this process."""
_OUTCOME: dict[str, BaseException | str | None] = {}
"""Per block id: None (it ran), the exception it raised, or why it did not run."""


def _runnable(block: Block) -> bool:
    if block.mark == "skip":
        return False
    return block.lang == "python" or (block.lang in SHELL and block.mark == "run")


def _run(block: Block, scratch: Path) -> None:
    if block.lang in SHELL:
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=scratch,
                           capture_output=True, text=True, check=False, timeout=600,
                           env=dict(os.environ))
        assert r.returncode == 0, f"{block.id}\n{r.stdout}\n{r.stderr}"
        return
    ns = _NAMESPACES.setdefault(block.path, {"__name__": f"doc_{block.path.stem}"})
    from ascendir import ops

    before = set(ops.list_ops())
    try:
        exec(compile(block.code, block.id, "exec"), ns)
    finally:  # operators a page registers stay out of the rest of the suite
        for op_type in set(ops.list_ops()) - before:
            ops.unregister(op_type)


def _run_through(block: Block, scratch: Path) -> None:
    """Run the file's runnable blocks in order up to ``block``, as a reader pasting them one
    after another would, whatever order the tests run in: each block's outcome is kept for
    its own test. After a failure the rest of the file is not run."""
    seq = [b for b in BLOCKS if b.path == block.path and _runnable(b)]
    upto = seq.index(block)
    for b in seq[_RAN.get(block.path, 0):upto + 1]:
        _RAN[block.path] = _RAN.get(block.path, 0) + 1
        failed = next((o for o in (_OUTCOME.get(x.id) for x in seq[:seq.index(b)])
                       if isinstance(o, (BaseException, str))), None)
        if failed is not None:
            _OUTCOME[b.id] = f"{b.id}: an earlier block of the file failed"
            continue
        try:
            _run(b, scratch)
        except Exception as e:  # noqa: BLE001 - kept and raised by the block's own test
            _OUTCOME[b.id] = e
        else:
            _OUTCOME[b.id] = None


def test_blocks_were_found() -> None:
    assert len([b for b in BLOCKS if b.lang == "python"]) >= 10
    assert {b.path.name for b in BLOCKS} >= {"README.md", "OPERATORS.md"}


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_markdown_block(block: Block, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.mark == "skip":
        assert block.reason, f"{block.id}: a skip mark needs a reason"
        pytest.skip(f"{block.id}: {block.reason}")
    if block.lang in SHELL and block.mark != "run":
        pytest.skip(f"{block.id}: shell commands (build, install or benchmark steps)")
    assert block.lang == "python" or block.lang in SHELL, (
        f"{block.id}: a ```{block.lang or '(no language)'} block must be python, shell, or "
        "marked <!-- doctest: skip: REASON -->"
    )
    monkeypatch.chdir(scratch)
    _run_through(block, scratch)
    outcome = _OUTCOME[block.id]
    if isinstance(outcome, str):
        pytest.fail(outcome)
    if outcome is not None:
        raise outcome
