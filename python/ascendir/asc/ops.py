"""AscIR operators: ``REG_ASC_IR`` declarations pushed into the Rust registry, and the node
classes built from them (``asc.ops.Abs("abs", graph)``).

The builtin set is declared below; :func:`REG_ASC_IR` registers more (or replaces one with
``replace=True``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import asc as _casc
from ..types import DataType
from ._graph import _PORTS_CACHE, Node

__all__ = ["REG_ASC_IR", "AscIrDef", "registered_ops"]

_D = DataType
FLOATS = [_D.FLOAT, _D.FLOAT16, _D.BF16]
INTS = [_D.INT8, _D.INT16, _D.INT32, _D.INT64, _D.UINT8]
NUMERIC = FLOATS + INTS
# Load/Store move these; int64 is not supported by the v1 data movement APIs.
MOVABLE = [_D.FLOAT, _D.FLOAT16, _D.BF16, _D.INT8, _D.UINT8, _D.INT16, _D.UINT16, _D.INT32,
           _D.UINT32, _D.BOOL]
LOGICAL = [_D.BOOL, _D.UINT8, _D.INT8]
MASK = [_D.UINT8, _D.BOOL]
TMP = 8192  # GE's default temporary buffer size in bytes

CAST_PAIRS = [
    (_D.FLOAT, _D.FLOAT16), (_D.FLOAT16, _D.FLOAT), (_D.FLOAT, _D.BF16), (_D.BF16, _D.FLOAT),
    (_D.FLOAT, _D.INT32), (_D.INT32, _D.FLOAT), (_D.FLOAT, _D.INT64), (_D.INT64, _D.FLOAT),
    (_D.FLOAT16, _D.INT32), (_D.INT32, _D.FLOAT16), (_D.FLOAT16, _D.INT8), (_D.INT8, _D.FLOAT16),
    (_D.FLOAT16, _D.UINT8), (_D.UINT8, _D.FLOAT16), (_D.FLOAT16, _D.INT16),
    (_D.INT16, _D.FLOAT16), (_D.INT32, _D.INT64), (_D.INT64, _D.INT32), (_D.UINT8, _D.FLOAT),
    (_D.BOOL, _D.FLOAT), (_D.BOOL, _D.FLOAT16), (_D.BOOL, _D.INT32), (_D.INT8, _D.FLOAT),
    (_D.INT32, _D.INT16), (_D.FLOAT, _D.UINT8), (_D.INT16, _D.FLOAT),
]


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
        _PORTS_CACHE.pop(self.op_type, None)
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


def _unary(name: str, *, allowed: Sequence[DataType] = NUMERIC, inplace: bool = False,
           tmp: Any = None, out: Sequence[DataType] | None = None) -> None:
    d = REG_ASC_IR(name).input("x", "T").compute_type("elewise").inplace(inplace).tmp_buffer(tmp)
    if out is None:
        d.output("y", "T").dtypes("T", allowed)
    else:
        d.output("y", "T2").dtypes("T", allowed).dtypes("T2", out)
    d._push()


def _binary(name: str, *, allowed: Sequence[DataType] = NUMERIC, inplace: bool = False,
            tmp: Any = None, out: Sequence[DataType] | None = None) -> None:
    d = REG_ASC_IR(name).input("x1", "T").input("x2", "T").compute_type("elewise")
    d.inplace(inplace).tmp_buffer(tmp)
    if out is None:
        d.output("y", "T").dtypes("T", allowed)
    else:
        d.output("y", "T2").dtypes("T", allowed).dtypes("T2", out)
    d._push()


def _register_builtins() -> None:
    if "Data" in _casc.registered_ops():
        return
    REG_ASC_IR("Data").output("y").attr("index", "int")._push()
    REG_ASC_IR("Scalar").output("y").attr("value", "str").attr("index", "int")._push()
    REG_ASC_IR("IndexExpr").output("y").attr("expr", "int")._push()
    REG_ASC_IR("Output").input("x").output("y").attr("index", "int")._push()
    REG_ASC_IR("Workspace").input("x", kind="optional").output("y")._push()
    (REG_ASC_IR("Load").input("x").output("y").dtypes("T", MOVABLE).attr("offset", "expr")
     .compute_type("load")._push())
    (REG_ASC_IR("Store").input("x").output("y").dtypes("T", MOVABLE).attr("offset", "expr")
     .compute_type("store")._push())
    (REG_ASC_IR("Gather").input("x1", "T1").input("x2", "T2").output("y", "T1")
     .dtypes("T1", NUMERIC).dtypes("T2", [_D.INT32, _D.INT64]).attr("axis", "int")
     .attr("negative_index_support", "bool", False).compute_type("gather").tmp_buffer(TMP)
     ._push())
    (REG_ASC_IR("Broadcast").input("x").output("y").dtypes("T", MOVABLE)
     .compute_type("broadcast").tmp_buffer(TMP)._push())
    inplace_ops = {"Abs", "Add", "Axpy", "Div", "Exp", "LeakyRelu", "Ln", "LogicalAnd",
                   "LogicalNot", "LogicalOr", "Maximum", "Minimum", "Mul", "Neg", "Reciprocal",
                   "Relu", "Rsqrt", "Sqrt", "Sub"}
    for name in ["Abs", "Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal", "Erf", "Sign", "Tanh",
                 "Sigmoid", "Gelu"]:
        allowed = NUMERIC if name in ("Abs", "Sign") else FLOATS
        _unary(name, allowed=allowed, inplace=name in inplace_ops, tmp=TMP)
    _unary("Relu", allowed=NUMERIC, inplace=True)
    _unary("Neg", allowed=NUMERIC, inplace=True)
    _unary("Isnan", allowed=FLOATS, out=[_D.UINT8], tmp=TMP)
    _unary("IsFinite", allowed=FLOATS, out=[_D.UINT8], tmp=TMP)
    _unary("LogicalNot", allowed=LOGICAL, inplace=True)
    (REG_ASC_IR("LeakyRelu").input("x").output("y").dtypes("T", FLOATS)
     .attr("negative_slope", "float", 0.0).compute_type("elewise").inplace().tmp_buffer(TMP)
     ._push())
    (REG_ASC_IR("Cast").input("x", "T1").output("y", "T2").dtypes("T1", []).dtypes("T2", [])
     .combos([[a, b] for a, b in CAST_PAIRS]).compute_type("elewise").tmp_buffer(TMP)
     ._push())
    for name in ["RemovePad", "Pad", "Nop", "Ub2ub"]:
        _unary(name, allowed=[], tmp=TMP if name == "Pad" else None)
    for name in ["Add", "Sub", "Mul", "Maximum", "Minimum"]:
        _binary(name, inplace=name in inplace_ops)
    for name in ["Div", "TrueDiv", "FloorDiv", "Remainder", "Pow"]:
        _binary(name, allowed=NUMERIC, inplace=name in inplace_ops, tmp=TMP)
    for name in ["LogicalAnd", "LogicalOr"]:
        _binary(name, allowed=LOGICAL, inplace=True)
    _binary("BitwiseAnd", allowed=INTS)
    for name in ["Eq", "Ne", "Gt", "Ge", "Lt", "Le"]:
        _binary(name, allowed=NUMERIC, out=MASK, tmp=TMP)
    (REG_ASC_IR("Axpy").input("x1").input("x2").output("y").dtypes("T", FLOATS)
     .attr("alpha", "float", 1.0).compute_type("elewise").inplace()._push())
    for name in ["Where", "Select"]:
        (REG_ASC_IR(name).input("x1", "T1").input("x2", "T").input("x3", "T").output("y", "T")
         .dtypes("T1", MASK).dtypes("T", NUMERIC).compute_type("elewise").tmp_buffer(TMP)
         ._push())
    (REG_ASC_IR("ClipByValue").input("x1").input("x2").input("x3").output("y")
     .dtypes("T", NUMERIC).compute_type("elewise").tmp_buffer(TMP)._push())
    for name in ["Sum", "Max", "Min", "Mean", "Prod"]:
        (REG_ASC_IR(name).input("x").output("y").dtypes("T", NUMERIC).compute_type("reduce")
         .tmp_buffer(TMP)._push())
    for name in ["All", "Any"]:
        (REG_ASC_IR(name).input("x").output("y").dtypes("T", LOGICAL).compute_type("reduce")
         .tmp_buffer(TMP)._push())
    (REG_ASC_IR("ArgMax").input("x", "T").output("y", "T2").dtypes("T", NUMERIC)
     .dtypes("T2", [_D.INT64]).compute_type("reduce").tmp_buffer(TMP)._push())
    (REG_ASC_IR("Transpose").input("x").output("y").dtypes("T", NUMERIC)
     .compute_type("transpose").tmp_buffer(TMP)._push())
    (REG_ASC_IR("Concat").input("x", kind="dynamic").output("y").dtypes("T", MOVABLE)
     .compute_type("concat").tmp_buffer(TMP)._push())
    (REG_ASC_IR("Split").input("x").output("y", kind="dynamic").dtypes("T", MOVABLE)
     .attr("index", "int").attr("gid", "int").compute_type("split")._push())
    (REG_ASC_IR("MatMul").input("x1").input("x2").output("y").dtypes("T", FLOATS)
     .attr("enable_hf32", "int", 0).attr("transpose_x1", "int", 0).attr("transpose_x2", "int", 0)
     .attr("has_relu", "int", 0).attr("offset_x", "int", 0).compute_type("cube")._push())


_register_builtins()


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
