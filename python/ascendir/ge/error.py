"""GE's error types, as ascendir errors.

GE's Python API reports a failed call with a :class:`RuntimeError` (``GeError`` for failures
of its C API), bad argument types with :class:`TypeError` and bad argument values with
:class:`ValueError`. The classes here are those built-in exceptions and
:class:`ascendir.AscendIRError` at once, so code written for GE (``except RuntimeError``) and
code written for ascendir (``except ascendir.AscendIRError``) both catch them.
"""

from __future__ import annotations

from typing import Any

from ..errors import AscendIRError, InvalidArgumentError

__all__ = ["GeError", "GeTypeError", "GeValueError", "raise_ge_error"]


class GeError(AscendIRError, RuntimeError):
    """A GE call failed (GE's ``ge.error.GeError``, a :class:`RuntimeError`).

    ``error_message`` is the underlying cause's text, ``api_name`` the failing call and
    ``context`` the arguments that locate the failure.
    """

    def __init__(
        self,
        message: str = "",
        error_message: str | None = None,
        api_name: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.error_message = error_message
        self.api_name = api_name
        self.context = dict(context or {})


class GeTypeError(AscendIRError, TypeError):
    """An argument of the wrong type (GE raises :class:`TypeError`)."""


class GeValueError(InvalidArgumentError):
    """An argument of the right type but a wrong value (GE raises :class:`ValueError`)."""


def raise_ge_error(api_name: str, cause: BaseException | None = None, **context: Any) -> None:
    """Raise :class:`GeError` for ``api_name`` in GE's message layout:
    ``"<api_name> failed; key=value, ...; <cause>"`` (the cause chained as ``__cause__``)."""
    error_message = str(cause) if cause is not None else ""
    parts = [f"{api_name} failed"]
    if context:
        parts.append(", ".join(f"{k}={v}" for k, v in context.items()))
    if error_message:
        parts.append(error_message)
    raise GeError(
        "; ".join(parts), error_message=error_message, api_name=api_name, context=context
    ) from cause
