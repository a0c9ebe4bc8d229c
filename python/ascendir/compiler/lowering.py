"""``@air.compiler.lowering("OpType")``: a lowering written in Python, traced once into the
Rust lowering registry, so compiling needs no Python callback.

The decorated function receives a builder ``b`` and one value per data input of the GE op; it
calls AscIR ops on the builder (``b.Exp(x)``, ``b.Mul(x, 0.5)``, ``b.Gt(x, 0.0, dtype="mask")``
…) and returns the result::

    @air.compiler.lowering("FastGelu")
    def _(b, x):
        return b.Mul(x, b.Sigmoid(b.Mul(x, 1.702)))

Python numbers become scalars in the step's compute dtype. ``shape="reduce"`` lowers a
reduction (``axes_attr`` names the GE attribute holding the axes; reducing steps pass
``reduce=True``). The trace is checked in Rust (every AscIR op must be registered, operands
must come before their use); errors raise :class:`ascendir.CompileError` with stage
``"lower"``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _core

_F = TypeVar("_F", bound=Callable[..., Any])


class Value:
    """A traced value: a data input of the GE op or the result of an earlier step."""

    def __init__(self, kind: str, index: int) -> None:
        self.kind = kind
        self.index = index

    def __repr__(self) -> str:
        return f"<lowering value {self.kind} {self.index}>"


class Builder:
    """Records AscIR steps: every attribute is an AscIR op taking values and numbers."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []

    def __getattr__(self, op: str) -> Callable[..., Value]:
        if op.startswith("_"):
            raise AttributeError(op)

        def step(*args: Value | float, dtype: str = "same", reduce: bool = False) -> Value:
            spec: list[dict[str, Any]] = []
            for a in args:
                if isinstance(a, Value):
                    spec.append({"in" if a.kind == "in" else "step": a.index})
                elif isinstance(a, bool) or not isinstance(a, int | float):
                    raise TypeError(f"lowering step {op}: operand {a!r} is neither a traced "
                                    "value nor a number")
                else:
                    spec.append({"scalar": float(a)})
            entry: dict[str, Any] = {"op": op, "args": spec, "dtype": dtype}
            if reduce:
                entry["reduce"] = True
            self.steps.append(entry)
            return Value("step", len(self.steps) - 1)

        return step


def trace(op_type: str, fn: Callable[..., Any], *, inputs: int | None = None,
          family: str = "elementwise", shape: str = "broadcast", axes_attr: str | None = None,
          keep_dims_attr: str | None = None, replace: bool = False) -> dict[str, Any]:
    """The lowering spec (JSON-ready) that ``fn`` traces to."""
    if inputs is None:
        params = list(inspect.signature(fn).parameters.values())
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            raise TypeError(f"lowering of '{op_type}': give inputs= for a function with *args")
        inputs = len(params) - 1
    if inputs < 1:
        raise TypeError(f"lowering of '{op_type}': the function takes the builder and at least "
                        "one input")
    b = Builder()
    out = fn(b, *(Value("in", k) for k in range(inputs)))
    if not isinstance(out, Value):
        raise TypeError(f"lowering of '{op_type}': the function returned {out!r}, not a traced "
                        "value")
    spec: dict[str, Any] = {
        "op_type": op_type, "family": family, "shape": shape, "inputs": inputs,
        "steps": b.steps, "out": {"in" if out.kind == "in" else "step": out.index},
        "replace": replace,
    }
    if axes_attr is not None:
        spec["axes_attr"] = axes_attr
    if keep_dims_attr is not None:
        spec["keep_dims_attr"] = keep_dims_attr
    return spec


def lowering(op_type: str, *, inputs: int | None = None, family: str = "elementwise",
             shape: str = "broadcast", axes_attr: str | None = None,
             keep_dims_attr: str | None = None,
             replace: bool = False) -> Callable[[_F], _F]:
    """Decorator: trace the function into a lowering of GE type ``op_type`` and register it
    (``replace=True`` to override an existing one). Returns the function unchanged."""

    def deco(fn: _F) -> _F:
        spec = trace(op_type, fn, inputs=inputs, family=family, shape=shape,
                     axes_attr=axes_attr, keep_dims_attr=keep_dims_attr, replace=replace)
        _core.compiler.register_lowering(json.dumps(spec))
        return fn

    return deco


__all__ = ["Builder", "Value", "lowering", "trace"]
