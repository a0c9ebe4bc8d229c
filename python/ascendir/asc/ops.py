"""AscIR operators: ``REG_ASC_IR`` declarations pushed into the Rust registry, and the node
classes built from them (``asc.ops.Abs("abs", graph)``).

The builtin set (GE's AscIR ops: Data, Load, Store, Abs, Add, Sum, Concat, ...) is declared in
Rust (``ascendir_asc::builtins``) and is always present; :func:`REG_ASC_IR` registers more (or
replaces one with ``replace=True``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import asc as _casc
from ..types import DataType
from ._node import Node

__all__ = ["REG_ASC_IR", "AscIrDef", "registered_ops"]

class AscIrDef:
    """A ``REG_ASC_IR`` prototype under construction; :meth:`register` pushes it into Rust."""

    def __init__(self, op_type: str) -> None:
        self.op_type = op_type
        self._inputs: list[tuple[str, str, str]] = []
        self._outputs: list[tuple[str, str, str]] = []
        self._attrs: list[tuple[str, str, Any]] = []
        self._dtypes: dict[str, list[int]] = {}
        self._combos: list[list[int]] = []
        self._compute_type = "invalid"
        self._inplace = False
        self._tmp: Any = None

    def input(self, name: str, dtype_var: str = "T", kind: str = "required") -> AscIrDef:
        """Add an input port (kind ``required``, ``optional`` or ``dynamic``)."""
        self._inputs.append((name, kind, dtype_var))
        self._dtypes.setdefault(dtype_var, [])
        return self

    def output(self, name: str, dtype_var: str = "T", kind: str = "required") -> AscIrDef:
        """Add an output port."""
        self._outputs.append((name, kind, dtype_var))
        self._dtypes.setdefault(dtype_var, [])
        return self

    def attr(self, name: str, attr_type: str, default: Any = None) -> AscIrDef:
        """Add an IR attribute (``int``, ``float``, ``bool``, ``str``, ``expr``, ``list_int``,
        ``dtype``)."""
        self._attrs.append((name, attr_type, default))
        return self

    def dtypes(self, var: str, allowed: Sequence[DataType | int]) -> AscIrDef:
        """Allowed dtypes of a type variable (empty = any)."""
        self._dtypes[var] = [int(d) for d in allowed]
        return self

    def combos(self, combos: Sequence[Sequence[DataType | int]]) -> AscIrDef:
        """Allowed joint assignments of the type variables (in declaration order)."""
        self._combos = [[int(d) for d in c] for c in combos]
        return self

    def compute_type(self, compute_type: str) -> AscIrDef:
        """GE compute type (``elewise``, ``load``, ...; ``invalid`` for buffers)."""
        self._compute_type = compute_type
        return self

    def inplace(self, flag: bool = True) -> AscIrDef:
        """Whether the output may reuse an input's buffer."""
        self._inplace = flag
        return self

    def tmp_buffer(self, size: Any) -> AscIrDef:
        """Temporary UB bytes the API needs (int or SizeExpr; None = none)."""
        self._tmp = size
        return self

    def register(self, replace: bool = False) -> type[Node]:
        """Push the prototype into the Rust registry; returns the node class."""
        self._push(replace)
        return _class_for(self.op_type)

    def _push(self, replace: bool = False) -> None:
        _casc.register_op(
            self.op_type,
            self._inputs,
            self._outputs,
            self._attrs,
            list(self._dtypes.items()),
            self._combos,
            self._compute_type,
            self._inplace,
            self._tmp,
            replace,
        )
        _CLASSES.pop(self.op_type, None)


def REG_ASC_IR(op_type: str) -> AscIrDef:  # noqa: N802 - GE's name
    """Start declaring an AscIR operator (finish with ``.register()``)."""
    return AscIrDef(op_type)


def registered_ops() -> list[str]:
    """Every registered op type, sorted."""
    return _casc.registered_ops()


_CLASSES: dict[str, type[Node]] = {}


def _class_for(op_type: str) -> type[Node]:
    cls = _CLASSES.get(op_type)
    if cls is None:
        # Types only known from deserialized graphs get a handle class too.
        cls = type(op_type, (Node,), {"op_type": op_type, "__module__": __name__,
                                      "__doc__": f"The AscIR op ``{op_type}``."})
        _CLASSES[op_type] = cls
    return cls


def __getattr__(name: str) -> type[Node]:
    if name.startswith("_"):
        raise AttributeError(name)
    if name in _CLASSES:
        return _CLASSES[name]
    if name in _casc.registered_ops():
        return _class_for(name)
    raise AttributeError(f"no AscIR op named '{name}' is registered")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_casc.registered_ops()))
