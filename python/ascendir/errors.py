"""The exception tree of ascendir.

Every error raised by ascendir is an :class:`AscendIRError`. Lookup failures are also
:class:`KeyError`, malformed arguments also :class:`ValueError`, so generic handlers keep working.
Messages name the node, anchor index, attribute, field path or byte offset involved.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AscendIRError",
    "CompileError",
    "ConcurrentUseError",
    "CxxBuildError",
    "CycleError",
    "DecodeError",
    "DuplicateNameError",
    "EvaluateError",
    "ExternalDataError",
    "ForeignHandleError",
    "InferenceError",
    "InternalError",
    "InvalidArgumentError",
    "KernelRunError",
    "LinkError",
    "NotFoundError",
    "RegistryError",
    "SizeOverflowError",
    "StaleHandleError",
    "TilingError",
    "TorchExportError",
    "UnsupportedOpError",
    "ValidationError",
]


class AscendIRError(Exception):
    """Root of every ascendir error."""

    def __init__(self, message: str = "", **details: Any) -> None:
        super().__init__(message)
        self.message = message
        for key, value in details.items():
            setattr(self, key, value)

    def __str__(self) -> str:
        return self.message


class StaleHandleError(AscendIRError):
    """A node or anchor handle whose node was removed from its graph."""


class ForeignHandleError(AscendIRError, ValueError):
    """A handle of one graph was passed to another graph."""


class InvalidArgumentError(AscendIRError, ValueError):
    """An argument has the wrong value or kind (bad index, unknown name, wrong type)."""


class NotFoundError(AscendIRError, KeyError):
    """A lookup by name or index found nothing."""

    def __str__(self) -> str:
        return self.message


class DuplicateNameError(AscendIRError, ValueError):
    """A name that must be unique (node, output port, subgraph) is already taken."""


class LinkError(AscendIRError):
    """A link or unlink that breaks the anchor rules (an in-data anchor takes one peer)."""


class CycleError(AscendIRError):
    """The graph has a cycle; :attr:`nodes` lists the names of one cycle, in edge order."""

    nodes: list[str]

    def __init__(self, message: str = "", nodes: list[str] | None = None, **details: Any) -> None:
        super().__init__(message, **details)
        self.nodes = list(nodes or [])


class ValidationError(AscendIRError):
    """The verifier found broken invariants; :attr:`problems` lists every one."""

    problems: list[str]

    def __init__(
        self, message: str = "", problems: list[str] | None = None, **details: Any
    ) -> None:
        super().__init__(message, **details)
        self.problems = list(problems or [])


class DecodeError(AscendIRError, ValueError):
    """Malformed serialized input; :attr:`offset` (bytes) or :attr:`path` (field) say where."""

    offset: int | None
    path: str | None

    def __init__(
        self,
        message: str = "",
        offset: int | None = None,
        path: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message, **details)
        self.offset = offset
        self.path = path


class ExternalDataError(AscendIRError, OSError):
    """An ONNX tensor's external data file cannot be found or read: :attr:`tensor` names the
    tensor, :attr:`location` the file as the model gives it (relative to the model's
    directory)."""

    tensor: str
    location: str

    def __init__(self, message: str = "", **details: Any) -> None:
        details.setdefault("tensor", "")
        details.setdefault("location", "")
        super().__init__(message, **details)


class RegistryError(AscendIRError):
    """Operator registration failed (duplicate type, bad prototype)."""


class InferenceError(AscendIRError):
    """Shape, dtype or format inference failed for a node."""


class TilingError(AscendIRError):
    """No tiling satisfies the target's constraints; the message says which and by how much."""


class SizeOverflowError(AscendIRError, OverflowError):
    """A size computation overflowed 64-bit integers."""


class InternalError(AscendIRError):
    """A bug in ascendir: an internal check of the Rust core failed (a panic).

    The binding converts such a failure into this error instead of letting it escape as a
    ``PanicException``; the message says what failed. Please report it with the input.
    """


class ConcurrentUseError(AscendIRError):
    """A graph was used by one call while another call was writing it (or, for a write, while
    another call was reading or writing it): from another thread, or from a callback run by the
    call in progress. A graph takes many readers or one writer at a time; the call that cannot
    have its turn fails with this error and changes nothing."""


class CompileError(AscendIRError):
    """A model did not compile: ``stage`` (a pipeline stage name), ``node`` (the node to blame,
    or None) and ``reason``; ``kind`` says what failed (``"ir"``, ``"infer"``, ``"asc"``,
    ``"schedule"``, ``"tiling"``, ``"realize"``, ``"options"``, ``"lowering"``,
    ``"overflow"``, ``"cancelled"``, ``"order"`` or ``"other"``, docs/COMPILER.md), and for
    ``"tiling"`` ``constraint`` and ``excess`` name the constraint that cannot be met and by
    how much (None otherwise)."""

    stage: str
    node: str | None
    reason: str
    kind: str
    constraint: str | None
    excess: int | None

    def __init__(self, message: str = "", **details: Any) -> None:
        details.setdefault("stage", "load")
        details.setdefault("node", None)
        details.setdefault("reason", message)
        details.setdefault("kind", "other")
        details.setdefault("constraint", None)
        details.setdefault("excess", None)
        super().__init__(message, **details)


class EvaluateError(AscendIRError):
    """:func:`ascendir.evaluate` could not run a graph: a bad feed, or a node that failed.

    ``node`` and ``op_type`` name the node (None for feed errors), ``graph`` the (sub)graph,
    ``input`` the feed (None for node errors).
    """

    node: str | None
    op_type: str | None
    graph: str | None
    input: str | None

    def __init__(self, message: str = "", **details: Any) -> None:
        for key in ("node", "op_type", "graph", "input"):
            details.setdefault(key, None)
        super().__init__(message, **details)


class UnsupportedOpError(EvaluateError, NotImplementedError):
    """:func:`ascendir.evaluate` has no kernel for a node's op type (or for this form of it)."""


class CxxBuildError(AscendIRError):
    """A generated C++ kernel could not be built: no C++ compiler was found (``compiler`` is
    None), or the compiler failed (``compiler`` names it and ``log`` holds its output)."""

    compiler: str | None
    log: str

    def __init__(self, message: str = "", **details: Any) -> None:
        details.setdefault("compiler", None)
        details.setdefault("log", "")
        super().__init__(message, **details)


class KernelRunError(AscendIRError):
    """A CPU kernel stopped: ``code`` (the runtime's error number), ``kind`` (``"ub"``,
    ``"align"``, ``"slot"``, ``"stale"``, ``"unwritten"``, ``"vectorized"``, ``"tiling_key"``,
    ``"size"``, ``"op"``, ``"input"``), ``node`` (the node that did it, when known) and
    ``kernel``."""

    code: int
    kind: str
    node: str | None
    kernel: str

    def __init__(self, message: str = "", **details: Any) -> None:
        details.setdefault("code", 0)
        details.setdefault("kind", "")
        details.setdefault("node", None)
        details.setdefault("kernel", "")
        super().__init__(message, **details)


class TorchExportError(AscendIRError):
    """A PyTorch program has a construct the frontend cannot convert.

    ``node`` is the FX node name and ``target`` its target (``aten.foo.default``,
    ``torch.ops.higher_order.cond``), when the error is about one node.
    """

    node: str | None
    target: str | None

    def __init__(self, message: str = "", **details: Any) -> None:
        details.setdefault("node", None)
        details.setdefault("target", None)
        super().__init__(message, **details)
