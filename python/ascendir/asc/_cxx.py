"""Building generated C++ with the system compiler: finding it, caching builds by content.

The compiler is ``CXX`` (it may carry arguments, e.g. ``"ccache g++"``), else the first of
``c++``, ``g++``, ``clang++`` on ``PATH``. A build is a shared library compiled with
``-std=c++17 -O3 -fPIC -shared -pthread -fwrapv -ffp-contract=off -march=native`` (``-O3``: the
strided maps only vectorize there, about 3× faster than ``-O2``; ``-march=native`` when the
compiler accepts it, with the machine's CPU flags in the cache key; no FMA contraction, so the
numbers do not depend on the instruction set) (plus the caller's flags) from a set of files written
to a fresh directory; it is stored in the cache directory under the SHA-256 of the compiler's
identity, the flags and every file's name and text, written atomically, and reused by every
later build of the same sources.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import CxxBuildError

BASE_FLAGS = ("-std=c++17", "-O3", "-fPIC", "-shared", "-pthread", "-fwrapv",
              "-ffp-contract=off")
#: Tuned for the machine that runs the kernel (these libraries are built where they run); no
#: FMA contraction, so results do not depend on the instruction set.
NATIVE_FLAGS = ("-march=native",)


def find_compiler() -> list[str]:
    """The C++ compiler command (a list: program and arguments); raises
    :class:`ascendir.CxxBuildError` when there is none."""
    env = os.environ.get("CXX", "").strip()
    if env:
        cmd = shlex.split(env)
        if shutil.which(cmd[0]) is None:
            raise CxxBuildError(f"CXX={env!r} is not an executable on PATH", compiler=env)
        return cmd
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return [path]
    raise CxxBuildError(
        "no C++ compiler found: set CXX or install g++ or clang++", compiler=None
    )


_NATIVE: dict[tuple[str, ...], bool] = {}
_IDENT: dict[tuple[str, ...], str] = {}


def _native_ok(cmd: tuple[str, ...]) -> bool:
    """Whether the compiler accepts ``-march=native`` (asked once per compiler)."""
    if cmd not in _NATIVE:
        _NATIVE[cmd] = _probe_native(cmd)
    return _NATIVE[cmd]


def _probe_native(cmd: tuple[str, ...]) -> bool:
    with tempfile.TemporaryDirectory(prefix="ascendir-cxx-") as tmp:
        src = Path(tmp, "probe.cpp")
        src.write_text("int ascendir_probe() { return 0; }\n")
        try:
            res = subprocess.run([*cmd, *NATIVE_FLAGS, "-c", str(src), "-o",
                                  str(Path(tmp, "probe.o"))], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return False
        return res.returncode == 0


def _cpu_flags() -> str:
    """The machine and its CPU feature flags (part of the cache key of native builds)."""
    text = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features", "model name")):
                    text += "|" + line.strip()
    except OSError:
        pass
    return text


def _identity(cmd: tuple[str, ...]) -> str:
    """The compiler's ``--version`` line (asked once per compiler)."""
    if cmd not in _IDENT:
        _IDENT[cmd] = _ask_identity(cmd)
    return _IDENT[cmd]


def _ask_identity(cmd: tuple[str, ...]) -> str:
    try:
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise CxxBuildError(f"cannot run {cmd[0]}: {e}", compiler=cmd[0]) from None
    return out.stdout.splitlines()[0] if out.stdout else cmd[0]


#: Headers every kernel includes, built once as precompiled headers (per compiler, flags and
#: text): parsing the runtime header is most of an unoptimized kernel build.
PRECOMPILED = ("ascendir_cpu_rt.h",)


def _precompiled(cmd: Sequence[str], ident: str, compile_flags: Sequence[str], name: str,
                 text: str, cache_dir: Path) -> Path | None:
    """The precompiled form of header ``name`` for these flags (built on first use and kept in
    the cache directory); None when the compiler cannot make one (the header is then parsed)."""
    h = hashlib.sha256()
    for part in (ident, " ".join(cmd), " ".join(compile_flags), name, text):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    out = cache_dir / "cpu" / "pch" / key[:2] / f"{key}.gch"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ascendir-pch-") as tmp:
        header = Path(tmp, name)
        header.write_text(text)
        made = Path(tmp, name + ".gch")
        argv = [*cmd, *compile_flags, "-x", "c++-header", str(header), "-o", str(made)]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError):
            return None
        if res.returncode != 0 or not made.exists():
            return None
        _publish(made, out)
    return out


def _publish(made: Path, out: Path) -> None:
    """Copy ``made`` to ``out`` atomically (through a file of its own in ``out``'s folder, so
    that threads and processes building the same file do not meet)."""
    fd, staged = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        shutil.copyfile(made, staged)
        os.replace(staged, out)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise


def build_library(
    files: Mapping[str, str],
    main: str,
    *,
    flags: Sequence[str] = (),
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Compile ``files[main]`` (with the other files beside it on the include path) into a
    shared library and return its path; cached by content."""
    if main not in files:
        raise CxxBuildError(f"no source file {main!r} among {sorted(files)}")
    cmd = find_compiler()
    ident = _identity(tuple(cmd))
    native = NATIVE_FLAGS if _native_ok(tuple(cmd)) else ()
    if native:
        ident += "|" + _cpu_flags()
    h = hashlib.sha256()
    for part in (ident, " ".join(cmd), " ".join(BASE_FLAGS + native), " ".join(flags), main):
        h.update(part.encode())
        h.update(b"\0")
    for name in sorted(files):
        h.update(name.encode())
        h.update(b"\0")
        h.update(files[name].encode())
        h.update(b"\0")
    key = h.hexdigest()
    if cache_dir is None:
        from ..compiler.batch import default_cache_dir

        cache_dir = default_cache_dir()
    out = Path(cache_dir) / "cpu" / key[:2] / f"{key}.so"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    compile_flags = [*BASE_FLAGS, *native, *flags]
    pch = {name: _precompiled(cmd, ident, compile_flags, name, files[name], Path(cache_dir))
           for name in PRECOMPILED if name in files and name != main}
    with tempfile.TemporaryDirectory(prefix="ascendir-cxx-") as tmp:
        for name, text in files.items():
            parts = Path(name).parts
            if not parts or Path(name).is_absolute() or ".." in parts:
                raise CxxBuildError(f"file name {name!r} is not a relative path inside the build")
            dest = Path(tmp, *parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            made = pch.get(name)
            if made is not None:
                # Beside the header it was made from: the compiler takes it instead of
                # parsing the header, when the flags agree (else it parses the header).
                with contextlib.suppress(OSError):
                    os.symlink(made, dest.with_name(dest.name + ".gch"))
        lib = Path(tmp, "kernel.so")
        argv = [*cmd, *compile_flags, "-I", tmp, str(Path(tmp, main)), "-o", str(lib)]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            raise CxxBuildError(f"cannot run {cmd[0]}: {e}", compiler=cmd[0]) from None
        if res.returncode != 0:
            raise CxxBuildError(
                f"{cmd[0]} failed on {main} (exit {res.returncode}):\n{res.stderr[-4000:]}",
                compiler=cmd[0],
                log=res.stderr,
            )
        _publish(lib, out)
    return out


__all__ = ["BASE_FLAGS", "NATIVE_FLAGS", "build_library", "find_compiler"]
