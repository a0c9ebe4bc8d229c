"""What every ``ascendir`` sub-command shares: one-line errors, usage errors, progress.

A command reports a failure on a file by raising :class:`CommandError` (or by letting an
expected exception escape :func:`on_file`); :func:`ascendir.cli.main` prints it as the single
line ``ascendir: error: <file>: <message>`` and exits 1. Usage errors print
``ascendir: error: <command>: <message> (see 'ascendir <command> --help')`` and exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings
from collections.abc import Iterator
from typing import IO, NoReturn

from .errors import AscendIRError

__all__ = [
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandError",
    "Parser",
    "Progress",
    "UsageError",
    "describe",
    "fail",
    "file_size",
    "one_line",
    "on_file",
    "report_warnings",
]

EXIT_OK = 0
"""Every file was processed."""
EXIT_FAILURE = 1
"""A file could not be read, converted or written (the error names it)."""
EXIT_USAGE = 2
"""The command line itself is wrong (unknown option, missing argument, bad value)."""


class CommandError(AscendIRError):
    """A command failed on ``file``; printed as ``ascendir: error: <file>: <message>``."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(message)
        self.file = file
        self.message = message


class UsageError(AscendIRError):
    """The command line is wrong; printed with a pointer to ``--help``, exit code 2."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command
        self.message = message


def one_line(text: str) -> str:
    """``text`` on one line: line breaks become ``; `` and runs of blanks one space."""
    parts = [" ".join(p.split()) for p in str(text).splitlines()]
    return "; ".join(p for p in parts if p)


def describe(exc: BaseException, file: str | None = None) -> str:
    """A one-line message for an expected exception (an ``OSError`` gives its reason only);
    quoted mentions of ``file`` read ``the file`` since the line names it already."""
    if isinstance(exc, IsADirectoryError):
        msg = "is a directory"
    elif isinstance(exc, OSError) and exc.strerror:
        msg = exc.strerror[:1].lower() + exc.strerror[1:]
        if exc.filename is not None and file is not None and os.fspath(exc.filename) != file:
            msg = f"'{os.fspath(exc.filename)}': {msg}"
    elif type(exc).__name__ == "TOMLDecodeError":
        msg = f"not valid TOML: {exc}"
    else:
        msg = str(exc) or type(exc).__name__
    if file:
        msg = msg.replace(f"'{file}'", "the file")
    return one_line(msg)


@contextlib.contextmanager
def on_file(file: str) -> Iterator[None]:
    """Turn the expected failures of work on ``file`` (I/O errors, malformed models, invalid
    graphs, values out of range) into a :class:`CommandError` naming the file."""
    try:
        yield
    except CommandError:
        raise
    except (AscendIRError, OSError, ValueError, UnicodeError, OverflowError, KeyError) as e:
        raise CommandError(file, describe(e, file)) from e


@contextlib.contextmanager
def report_warnings(file: str, stream: IO[str] | None = None) -> Iterator[None]:
    """Print the warnings raised inside the block as ``ascendir: warning: <file>: <msg>``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            out = stream if stream is not None else sys.stderr
            seen: set[str] = set()
            for w in caught:
                msg = one_line(str(w.message)).replace(f"'{file}'", "the file")
                if msg not in seen:
                    seen.add(msg)
                    print(f"ascendir: warning: {file}: {msg}", file=out)


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and exit with code 2."""

    def error(self, message: str) -> NoReturn:
        """Report a usage error on one line and exit 2."""
        command = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise UsageError(command, message)


class Progress:
    """Progress of a long step on stderr, shown only when stderr is a terminal.

    ``step(text)`` replaces the current line (``ascendir: <text>...`` and the elapsed time);
    ``done()`` clears it so that the command's own output stays clean.
    """

    def __init__(self, enabled: bool | None = None, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.start = time.perf_counter()
        self._shown = False

    def step(self, text: str) -> None:
        """Show ``text`` as the current step."""
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        self.stream.write(f"\r\x1b[Kascendir: {text}... ({elapsed:.1f} s)")
        self.stream.flush()
        self._shown = True

    def done(self) -> None:
        """Clear the progress line."""
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def file_size(path: str) -> str:
    """The size of ``path`` for progress lines (``12.3 MB``), or ``?`` when unknown."""
    try:
        n = float(os.path.getsize(path))
    except OSError:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return "?"


def fail(file: str, message: str) -> NoReturn:
    """Raise a :class:`CommandError` for ``file``."""
    raise CommandError(file, message)
