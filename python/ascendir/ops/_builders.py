"""Typed op builders: ``ascendir.ops.<OpType>(inputs..., attr=...)``.

A builder adds one node of a registered type to the graph of its input values, at the graph's
insertion point (see ``Graph.inserting_before``), and returns its output :class:`Value` (a
tuple of values for an op with several or dynamic outputs, the :class:`Node` for an op without
outputs). Its parameters come from the op registry, the one source of truth: the declared
inputs in order (required ones first-class positional parameters, optional ones defaulting to
``None``, a dynamic one a sequence of values), then keyword-only the declared attributes with
their kinds and defaults, ``name`` (the node name; a fresh one by default) and ``graph`` (for
an op without input values). The node is built as ``Graph.add_op`` builds a registered type:
attributes converted to their declared kinds, dtypes checked, shapes inferred.

The stub ``_builders.pyi`` is generated from the same registry by ``python -m
ascendir._stubgen`` (:func:`_render_stub`), so a type checker sees every builtin builder's
parameter types and defaults.
"""

from __future__ import annotations

import inspect
import keyword
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .. import _core
from ..errors import InvalidArgumentError
from ..types import AttrKind, DataType

_lock = threading.Lock()
_cache: dict[str, tuple[Any, Callable[..., Any]]] = {}

# Attribute kinds as annotations (text for the stub).
_ANNOTATIONS = {
    AttrKind.INT: "int",
    AttrKind.FLOAT: "float",
    AttrKind.BOOL: "bool",
    AttrKind.STRING: "str",
    AttrKind.EXPRESSION: "str",
    AttrKind.BYTES: "bytes",
    AttrKind.DATA_TYPE: "DataType",
    AttrKind.TENSOR: "Tensor | Any",
    AttrKind.TENSOR_DESC: "TensorDesc",
    AttrKind.GRAPH: "Graph",
    AttrKind.NAMED_ATTRS: "NamedAttrs",
    AttrKind.LIST_INT: "Sequence[int]",
    AttrKind.LIST_FLOAT: "Sequence[float]",
    AttrKind.LIST_BOOL: "Sequence[bool]",
    AttrKind.LIST_STRING: "Sequence[str]",
    AttrKind.LIST_BYTES: "Sequence[bytes]",
    AttrKind.LIST_DATA_TYPE: "Sequence[DataType]",
    AttrKind.LIST_LIST_INT: "Sequence[Sequence[int]]",
    AttrKind.LIST_LIST_FLOAT: "Sequence[Sequence[float]]",
    AttrKind.LIST_TENSOR: "Sequence[Tensor]",
    AttrKind.LIST_TENSOR_DESC: "Sequence[TensorDesc]",
    AttrKind.LIST_GRAPH: "Sequence[Graph]",
    AttrKind.LIST_NAMED_ATTRS: "Sequence[NamedAttrs]",
}


def _f32(v: float) -> float:
    """The shortest decimal that names the same float32 as ``v`` (registry floats are f32)."""
    import numpy as np

    return float(str(np.float32(v)))


def _default(kind: int, value: Any) -> Any:
    """A registry default as a signature default: lists as tuples, floats shortest."""
    if isinstance(value, float):
        return _f32(value)
    if isinstance(value, list):
        return tuple(_default(kind, v) for v in value)
    if kind == AttrKind.DATA_TYPE and isinstance(value, int):
        return DataType(value)
    return value


def _param_name(name: str) -> str:
    """A Python parameter name for a port or attribute (keywords get a trailing ``_``)."""
    return f"{name}_" if keyword.iskeyword(name) or name in ("name", "graph") else name


class _Spec:
    """One registered type's builder signature, read from the registry."""

    def __init__(self, op_type: str, raw: Any) -> None:
        inputs, outputs, attrs, count_attr = raw
        self.op_type = op_type
        self.inputs: list[tuple[str, str]] = [(n, k) for n, k in inputs]
        self.outputs: list[tuple[str, str]] = [(n, k) for n, k in outputs]
        self.attrs: list[tuple[str, int, Any, bool]] = [
            (n, int(k), _default(int(k), d) if has else None, bool(has))
            for n, k, d, has in attrs
        ]
        self.count_attr: str | None = count_attr
        params: list[inspect.Parameter] = []
        # Parameter name -> ("input", index) or ("attr", declared name).
        self.targets: dict[str, tuple[str, int | str]] = {}
        defaulted = False
        kinds = {"required": "Value", "optional": "Value | None", "dynamic": "Sequence[Value]"}
        self.input_annotations: list[str] = []
        for i, (n, kind) in enumerate(self.inputs):
            p = _param_name(n)
            defaulted = defaulted or kind == "optional"
            ann = kinds[kind]
            if defaulted and kind != "optional":
                ann += " | None"
            self.input_annotations.append(ann)
            default = None if defaulted else inspect.Parameter.empty
            params.append(inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=default))
            self.targets[p] = ("input", i)
        for n, _kind, d, has in self.attrs:
            p = _param_name(n)
            while p in self.targets:
                p += "_"
            params.append(inspect.Parameter(
                p, inspect.Parameter.KEYWORD_ONLY,
                default=d if has else inspect.Parameter.empty))
            self.targets[p] = ("attr", n)
        params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
        params.append(inspect.Parameter("graph", inspect.Parameter.KEYWORD_ONLY, default=None))
        self.signature = inspect.Signature(params)

    def returns(self) -> str:
        """The return annotation: ``Value``, ``tuple[Value, ...]`` or ``Node``."""
        if not self.outputs:
            return "Node"
        if len(self.outputs) == 1 and self.outputs[0][1] == "required":
            return "Value"
        return "tuple[Value, ...]"


def _graph_of(spec: _Spec, inputs: list[Any], graph: Any, where: str) -> Any:
    """The graph the inputs live in (``graph`` for an op without input values)."""
    for item in inputs:
        for v in item if isinstance(item, (list, tuple)) else (item,):
            if isinstance(v, _core.Value):
                return v.producer().graph
            if isinstance(v, _core.Node):
                return v.graph
            if v is not None:
                raise InvalidArgumentError(
                    f"{where}: inputs are ascendir.Value handles (or Nodes), got "
                    f"{type(v).__name__}")
    if graph is None:
        raise InvalidArgumentError(
            f"{where}: no input value tells which graph to build in; pass graph=")
    return graph


def _make(spec: _Spec) -> Callable[..., Any]:
    op_type = spec.op_type

    def build(*args: Any, **kwargs: Any) -> Any:
        where = f"ascendir.ops.{op_type}"
        if isinstance(kwargs.get("name"), str):
            where += f" (node '{kwargs['name']}')"
        unknown = [k for k in kwargs if k not in spec.signature.parameters]
        if unknown:
            known = [p for p, t in spec.targets.items() if t[0] == "attr"]
            raise InvalidArgumentError(
                f"{where}: unknown attribute '{unknown[0]}' (the attributes of {op_type}: "
                f"{', '.join(known) or 'none'})")
        try:
            bound = spec.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise InvalidArgumentError(f"{where}: {e}") from None
        inputs: list[Any] = [None] * len(spec.inputs)
        attrs: dict[str, Any] = {}
        for p, value in bound.arguments.items():
            target = spec.targets.get(p)
            if target is None:
                continue
            what, key = target
            if what == "input":
                assert isinstance(key, int)
                if spec.inputs[key][1] == "dynamic":
                    if value is None or not isinstance(value, (list, tuple)):
                        raise InvalidArgumentError(
                            f"{where}: input '{spec.inputs[key][0]}' is dynamic and takes a "
                            f"sequence of values, got {type(value).__name__}")
                    value = list(value)
                inputs[key] = value
            else:
                attrs[str(key)] = value
        for (n, kind), value in zip(spec.inputs, inputs, strict=True):
            if kind == "required" and value is None:
                raise InvalidArgumentError(f"{where}: the required input '{n}' is missing")
        g = _graph_of(spec, inputs, bound.arguments.get("graph"), where)
        try:
            node = g.add_op(op_type, inputs, name=bound.arguments.get("name"), attrs=attrs)
        except InvalidArgumentError as e:
            # The registry's message names the attribute or port; add the builder and node.
            raise type(e)(f"{where}: {e}") from e
        outs = node.outputs
        if not spec.outputs:
            return node
        if len(spec.outputs) == 1 and spec.outputs[0][1] == "required":
            return outs[0]
        return tuple(outs)

    build.__name__ = op_type
    build.__qualname__ = op_type
    build.__module__ = "ascendir.ops"
    build.__doc__ = f"Build one ``{op_type}`` node (see :mod:`ascendir.ops._builders`)."
    build.__signature__ = spec.signature  # type: ignore[attr-defined]
    return build


def _spec_of(op_type: str) -> _Spec | None:
    raw = _core._ops_signature(op_type)
    return None if raw is None else _Spec(op_type, raw)


def _builder(op_type: str) -> Callable[..., Any]:
    """The builder of the registered type ``op_type`` (``AttributeError`` if none): rebuilt
    when the registration changed."""
    raw = _core._ops_signature(op_type)
    if raw is None:
        raise AttributeError(f"ascendir.ops has no builder '{op_type}': no such op type is "
                             "registered")
    with _lock:
        hit = _cache.get(op_type)
        if hit is not None and hit[0] == raw:
            return hit[1]
        fn = _make(_Spec(op_type, raw))
        _cache[op_type] = (raw, fn)
        return fn


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(name)
    return _builder(name)


def _literal(value: Any) -> str | None:
    """``value`` as a stub literal, or ``None`` when it has none."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str, bytes)) and not isinstance(value, DataType):
        return repr(value)
    if isinstance(value, tuple):
        parts = [_literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        inner = ", ".join(p for p in parts if p is not None)
        return f"({inner},)" if len(parts) == 1 else f"({inner})"
    return None


def _stub_def(spec: _Spec) -> list[str]:
    params: list[str] = []
    inputs = [p for p, t in spec.targets.items() if t[0] == "input"]
    for p, ann in zip(inputs, spec.input_annotations, strict=True):
        default = spec.signature.parameters[p].default
        params.append(f"{p}: {ann}" + ("" if default is inspect.Parameter.empty else " = None"))
    params.append("*")
    for p, (what, key) in spec.targets.items():
        if what != "attr":
            continue
        _n, kind, d, has = next(a for a in spec.attrs if a[0] == key)
        ann = next((a for k, a in _ANNOTATIONS.items() if int(k) == kind), "Any")
        if not has:
            params.append(f"{p}: {ann}")
        else:
            lit = _literal(d)
            params.append(f"{p}: {ann} = {lit if lit is not None else '...'}")
    params.append("name: str | None = None")
    params.append("graph: Graph | None = None")
    doc = f'    """Build one ``{spec.op_type}`` node (see :mod:`ascendir.ops._builders`)."""'
    return [f"def {spec.op_type}({', '.join(params)}) -> {spec.returns()}:", doc, "    ..."]


def _render_stub(op_types: Sequence[str]) -> str:
    """The text of ``_builders.pyi`` for the registered types ``op_types``."""
    import re

    body: list[str] = []
    for t in op_types:
        spec = _spec_of(t)
        if spec is None or not t.isidentifier() or keyword.iskeyword(t):
            continue
        body.extend(_stub_def(spec))
        body.append("")
    body += [
        "def _builder(op_type: str) -> Callable[..., Any]: ...",
        "def _render_stub(op_types: Sequence[str]) -> str: ...",
        "",
    ]
    text = "\n".join(body)

    def used(names: Sequence[str]) -> list[str]:
        return [n for n in names if re.search(rf"\b{n}\b", text)]

    lines = [
        '"""Type stubs of the op builders of :mod:`ascendir.ops`, generated by',
        '``python -m ascendir._stubgen`` from the op registry (do not edit by hand)."""',
        "",
    ]
    imports = [
        ("collections.abc", used(["Callable", "Sequence"])),
        ("typing", used(["Any"])),
        ("", []),
        (".._core", used(["Graph", "Node", "Tensor", "TensorDesc", "Value"])),
        ("..types", used(["DataType", "NamedAttrs"])),
    ]
    for module, names in imports:
        if not module:
            lines.append("")
        elif names:
            lines.append(f"from {module} import {', '.join(names)}")
    lines.append("")
    return "\n".join(lines) + "\n" + text
