"""Find the functions the binding crate exposes to Python (``#[pyfunction]`` items and the
methods of ``#[pymethods]`` blocks) in its Rust sources, with their return types and bodies.

Used by ``test_bindings_guarded.py`` to check that every exposed function runs its body behind
the panic guard, so that no Rust panic reaches Python as ``PanicException``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BINDINGS = Path(__file__).resolve().parents[2] / "rust" / "ascendir-py" / "src"


@dataclass
class RustFn:
    """One exposed function: its name, return type text and the span of its body."""

    file: Path
    name: str
    ret: str
    ret_span: tuple[int, int]  # from the `)` after the parameters to the body's `{`
    body: tuple[int, int]  # indices of the body's `{` and its matching `}`
    line: int


_RAW = re.compile(r'b?r(#*)"')


def mask(src: str) -> str:
    """``src`` with comments, strings and char literals blanked (same length), so that braces
    and keywords can be matched on the result."""
    out = list(src)
    i, n = 0, len(src)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := _RAW.match(src, i)) and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j + len(end)
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            m = re.compile(r"'(\\.[^']*|[^\\'])'").match(src, i)
            if m:
                blank(i, m.end())
                i = m.end()
            else:
                i += 1  # a lifetime
        else:
            i += 1
    return "".join(out)


def _match(masked: str, open_at: int, o: str, c: str) -> int:
    depth = 0
    for k in range(open_at, len(masked)):
        if masked[k] == o:
            depth += 1
        elif masked[k] == c:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unbalanced {o}{c} from {open_at}")


_FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def _fn_at(file: Path, src: str, masked: str, at: int) -> RustFn:
    m = _FN.search(masked, at)
    assert m is not None
    lp = masked.index("(", m.end())
    rp = _match(masked, lp, "(", ")")
    lb = masked.index("{", rp)
    rb = _match(masked, lb, "{", "}")
    ret = src[rp + 1 : lb].strip()
    ret = ret[2:].strip() if ret.startswith("->") else ""
    return RustFn(file, m.group(1), ret, (rp + 1, lb), (lb, rb), src.count("\n", 0, m.start()) + 1)


def exposed(file: Path) -> list[RustFn]:
    """Every ``#[pyfunction]`` and ``#[pymethods]`` method of ``file``."""
    src = file.read_text()
    masked = mask(src)
    fns: list[RustFn] = []
    for a in re.finditer(r"#\[pyfunction\]", masked):
        fns.append(_fn_at(file, src, masked, a.end()))
    for a in re.finditer(r"#\[pymethods\]", masked):
        lb = masked.index("{", a.end())
        rb = _match(masked, lb, "{", "}")
        k = lb + 1
        while True:
            m = _FN.search(masked, k, rb)
            if m is None:
                break
            f = _fn_at(file, src, masked, m.start())
            fns.append(f)
            k = f.body[1] + 1
    return sorted(fns, key=lambda f: f.body)


def binding_files() -> list[Path]:
    """The binding crate's Rust sources."""
    return sorted(BINDINGS.rglob("*.rs"))


# The panic guards, and the funnel of long calls (it catches panics too); `guard_gc` is the
# guard of the garbage-collector slots, which may not raise.
GUARDS = ("crate::errors::guard(", "crate::errors::guard_res(", "crate::errors::enter(",
          "crate::errors::guard_gc(")


def is_guarded(src: str, f: RustFn) -> bool:
    """Whether ``f``'s whole body is one call of the panic guard."""
    inner = src[f.body[0] + 1 : f.body[1]].strip()
    return inner.startswith(GUARDS) and inner.endswith(")")
