"""The pass being run by the offline runner (read by ``SubgraphRewriter.replace``)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .base import PassContext


@dataclass
class RunState:
    """The running pass: its name, context, whether to verify, and what it did."""

    pass_name: str
    context: PassContext
    verify: bool
    rewrites: int = 0
    created: int = 0


_CURRENT: contextvars.ContextVar[RunState | None] = contextvars.ContextVar(
    "ascendir_ge_pass_run", default=None)


def current() -> RunState | None:
    """The running pass, or None outside the runner."""
    return _CURRENT.get()


@contextmanager
def running(state: RunState) -> Iterator[RunState]:
    """Make ``state`` the running pass for the block."""
    token = _CURRENT.set(state)
    try:
        yield state
    finally:
        _CURRENT.reset(token)
