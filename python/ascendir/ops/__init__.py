"""Operator registration (Python declares, Rust executes), the op registry, and the typed op
builders: ``ascendir.ops.<OpType>(inputs..., attr=...)`` adds a node of a registered type to
the graph of its input values (see :mod:`ascendir.ops._builders`).

Declare an operator with a class::

    @air.register_op("ScaledLeakyRelu")
    class ScaledLeakyRelu(air.OpDef):
        x = air.Input("T")
        y = air.Output("T")
        negative_slope = air.Attr(float, default=0.0)
        scale = air.Attr(float, default=1.0)
        T = air.TypeVar(air.float16, air.float32)
        infer = air.infer.same_as("x")

The prototype (ports in declaration order, attributes with kinds and defaults, type
variables, subgraph slots, the inference rule) is pushed once into the Rust registry;
``Graph.add_op`` then builds ops from it and ``Graph.infer_shapes`` runs its rule.

The builtin library (GE operator names, port names and attributes) is declared in
:mod:`ascendir.ops.builtin`; its prototypes reach the Rust registry through a checked-in table
generated from these declarations (``python -m ascendir.ops._table``), read by the Rust core on
its first registry look-up, so a compile driven from Rust sees the same operators. The Python
side of the library (its declaration classes and the Python infer functions of a few ops) loads
lazily: on the first ``add_op`` of an unknown type, the first :func:`get`, the first
``infer_shapes`` or compile, or the first user :func:`register_op`; a user registration of a
builtin name fails naming the builtin. Op libraries are Python modules found through the
entry-point group ``ascendir.op_libraries`` and the ``ASCENDIR_OPS_PATH`` variable
(directories or ``.py`` files separated by ``os.pathsep``); they load after the builtin
library, inside a loading window where ``register_op(..., override=True)`` may replace an
existing registration.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import marshal
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from typing import TypeVar as _TV

from .. import _core
from ..errors import NotFoundError, RegistryError
from ..infer import Rule
from ..types import DataType
from ._context import InferContext
from ._decl import (
    Attr,
    DynamicInput,
    DynamicOutput,
    Input,
    OptionalInput,
    Output,
    Subgraph,
    TensorType,
    TypeVar,
)

if TYPE_CHECKING:
    # The typed builders (``ascendir.ops.Conv2D(x, w, strides=...)``), stubbed from the
    # registry in ``_builders.pyi``; at run time ``__getattr__`` below makes them.
    from ._builders import *  # noqa: F403

__all__ = [
    "Attr",
    "DynamicInput",
    "DynamicOutput",
    "InferContext",
    "Input",
    "OpDef",
    "OptionalInput",
    "Output",
    "Subgraph",
    "TensorType",
    "TypeVar",
    "get",
    "is_builtin",
    "is_registered",
    "library",
    "list_ops",
    "load_library",
    "register_op",
    "unregister",
]

ENTRY_POINT_GROUP = "ascendir.op_libraries"
"""The entry-point group op libraries are discovered through."""

PATH_VARIABLE = "ASCENDIR_OPS_PATH"
"""The environment variable listing extra op library files or directories."""


class OpDef:
    """Base class of operator declarations; see :func:`register_op`.

    After registration the class carries ``op_type``, ``inputs``, ``outputs``, ``attrs``,
    ``type_vars``, ``subgraphs`` (each a list of the declaration objects, with their names
    set), ``rule`` (a :class:`ascendir.infer.Rule`, or ``None`` for a Python function) and
    ``infer_fn`` / ``verify_fn``.
    """

    op_type: str = ""
    inputs: list[Input] = []
    outputs: list[Output] = []
    attrs: list[Attr] = []
    type_vars: list[TypeVar] = []
    subgraphs: list[Subgraph] = []
    rule: Rule | None = None
    infer_fn: Callable[[InferContext], Any] | None = None
    verify_fn: Callable[[InferContext], Any] | None = None

    @classmethod
    def describe(cls) -> str:
        """A one-line summary: ``Type(inputs) -> (outputs) [attrs]``."""
        ins = ", ".join(i.describe() for i in cls.inputs)
        outs = ", ".join(o.describe() for o in cls.outputs)
        attrs = ", ".join(a.describe() for a in cls.attrs)
        return f"{cls.op_type}({ins}) -> ({outs})" + (f" [{attrs}]" if attrs else "")

    @classmethod
    def attr_names(cls) -> list[str]:
        """Declared attribute names, in order."""
        return [a.name for a in cls.attrs]

    @classmethod
    def input_names(cls) -> list[str]:
        """Declared input names, in order."""
        return [i.name for i in cls.inputs]

    @classmethod
    def output_names(cls) -> list[str]:
        """Declared output names, in order."""
        return [o.name for o in cls.outputs]


_lock = threading.RLock()
_registry: dict[str, type[OpDef]] = {}
_loading_depth = 0
_builtins_state = "no"  # "no" | "loading" | "yes"
_loaded_libraries: list[str] = []
_builtin_specs: list[dict[str, Any]] = []

_T = _TV("_T", bound=type)

# Rules whose output dtype never comes from a fixed output type.
_NO_DTYPE_RULES = ("cast", "const", "data", "custom", "none", "topk", "if", "while")


def _collect(cls: type) -> tuple[list[Any], Any, Any]:
    """Declaration objects of ``cls`` (own and inherited, in definition order)."""
    decls: dict[str, Any] = {}
    infer: Any = None
    verify: Any = None
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, (Input, Output, Attr, TypeVar, Subgraph)):
                decls.pop(name, None)
                decls[name] = value
            elif name == "infer" and value is not None:
                infer = value
            elif name == "verify" and value is not None:
                verify = value
    out = []
    for name, d in decls.items():
        d = d.bound(name)
        out.append(d)
    return out, infer, verify


def _spec(op_type: str, decls: list[Any], rule: Rule) -> dict[str, Any]:
    inputs: list[tuple[str, str, str | None]] = []
    outputs: list[tuple[str, str, str | None]] = []
    attrs: list[tuple[str, int, Any, bool]] = []
    type_vars: list[tuple[str, list[int]]] = []
    subgraphs: list[tuple[str, str]] = []
    count_attr = None
    for d in decls:
        if isinstance(d, TypeVar):
            type_vars.append((d.name, [int(t) for t in d.allowed]))
    for d in decls:
        if isinstance(d, Input):
            tv = d.type_var_name()
            if d.fixed is not None and tv is not None:
                type_vars.append((tv, [int(t) for t in d.fixed]))
            inputs.append((d.name, d.kind, tv))
        elif isinstance(d, Output):
            tv = d.type_var_name()
            if d.fixed is not None and tv is not None:
                type_vars.append((tv, [int(t) for t in d.fixed]))
            outputs.append((d.name, d.kind, tv))
            if isinstance(d, DynamicOutput) and d.count_attr:
                count_attr = d.count_attr
        elif isinstance(d, Attr):
            attrs.append((d.name, int(d.attr_kind), d.default, d.has_default))
        elif isinstance(d, Subgraph):
            subgraphs.append((d.name, "dynamic" if d.dynamic else "static"))
    kind, params = rule.spec()
    # A rule without an explicit dtype uses the single dtype all outputs are fixed to.
    outs = [d for d in decls if isinstance(d, Output)]
    if "dtype" not in params and outs and kind not in _NO_DTYPE_RULES:
        if all(d.fixed is not None and len(d.fixed) == 1 for d in outs):
            fixed = {d.fixed[0] for d in outs if d.fixed is not None}
            if len(fixed) == 1:
                params["dtype"] = DataType(next(iter(fixed))).name
    return {
        "type": op_type,
        "inputs": inputs,
        "outputs": outputs,
        "attrs": attrs,
        "type_vars": type_vars,
        "subgraphs": subgraphs,
        "rule": (kind, params),
        "dynamic_output_count_attr": count_attr,
    }


def register_op(name: str | None = None, *, override: bool = False) -> Callable[[_T], _T]:
    """Class decorator registering an :class:`OpDef` subclass as operator ``name``.

    ``name`` defaults to the class name. Class attributes declare the operator, in order:
    :class:`Input` / :class:`OptionalInput` / :class:`DynamicInput`, :class:`Output` /
    :class:`DynamicOutput`, :class:`Attr`, :class:`TypeVar`, :class:`Subgraph`; ``infer`` is a
    rule from :mod:`ascendir.infer` or a Python function ``f(ctx) -> [TensorDesc | (shape,
    dtype)]``; ``verify`` an optional function ``f(ctx)`` returning ``None`` / ``True`` when
    the op is valid, ``False`` or a message otherwise (run by ``Graph.add_op``).

    A type can be registered once: a second registration raises :class:`RegistryError`,
    unless ``override=True`` is given while an op library is loading. The builtin library is
    registered before the first user registration, so a builtin name (``LeakyRelu``,
    ``Relu``, ...) registered outside an op library's override window fails with a message
    naming the builtin, and the registry stays as it was.
    """

    def deco(cls: _T) -> _T:
        op_type = name or cls.__name__
        decls, infer, verify = _collect(cls)
        if isinstance(infer, Rule):
            rule, infer_fn = infer, None
        elif infer is None:
            rule, infer_fn = Rule("none"), None
        elif callable(infer):
            rule, infer_fn = Rule("custom"), infer
        else:
            raise RegistryError(
                f"op '{op_type}': infer must be an ascendir.infer rule or a function, "
                f"got {type(infer).__name__}"
            )
        if verify is not None and not callable(verify):
            raise RegistryError(f"op '{op_type}': verify must be a function")
        spec = _spec(op_type, decls, rule)
        with _lock:
            if _builtins_state == "no":
                _ensure_loaded()
            if (
                _builtins_state == "yes"
                and _core._ops_is_builtin(op_type)
                and not (override and _loading_depth > 0)
            ):
                raise RegistryError(
                    f"cannot register '{op_type}': it is a builtin operator "
                    f"(ascendir.ops.builtin: {_registry[op_type].describe()}); pick another "
                    "name, or replace it with register_op(..., override=True) inside an op "
                    "library (ascendir.ops.library(), load_library or ASCENDIR_OPS_PATH)"
                )
            if override and _loading_depth == 0:
                raise RegistryError(
                    f"cannot register '{op_type}' with override=True: overriding is allowed "
                    "only while an op library is loading"
                )
            infer_f, verify_f = _unwrap(infer_fn), _unwrap(verify)
            behaviour = _behaviour(infer_f, verify_f)
            if _builtins_state == "loading" and _core._ops_contains(op_type):
                # The prototype is in the Rust registry already (the builtin table); only
                # the Python functions are attached. (A declaration the table does not hold
                # yet registers below; tests/test_op_table.py says the table is stale.)
                _builtin_specs.append(spec)
                if infer_f is not None or verify_f is not None:
                    _core._ops_attach(op_type, infer=infer_f, verify=verify_f, behaviour=behaviour)
            else:
                if _builtins_state == "loading":
                    _builtin_specs.append(spec)
                _core._ops_register(
                    spec,
                    overriding=override and op_type in _registry,
                    infer=infer_f,
                    verify=verify_f,
                    behaviour=behaviour,
                )
            cls.op_type = op_type  # type: ignore[attr-defined]
            cls.inputs = [d for d in decls if isinstance(d, Input)]  # type: ignore[attr-defined]
            cls.outputs = [d for d in decls if isinstance(d, Output)]  # type: ignore[attr-defined]
            cls.attrs = [d for d in decls if isinstance(d, Attr)]  # type: ignore[attr-defined]
            cls.type_vars = [d for d in decls if isinstance(d, TypeVar)]  # type: ignore[attr-defined]
            cls.subgraphs = [d for d in decls if isinstance(d, Subgraph)]  # type: ignore[attr-defined]
            cls.rule = None if infer_fn is not None else rule  # type: ignore[attr-defined]
            cls.infer_fn = infer_fn  # type: ignore[attr-defined]
            cls.verify_fn = verify  # type: ignore[attr-defined]
            _registry[op_type] = cls  # type: ignore[assignment]
        return cls

    return deco


def _unwrap(f: Any) -> Any:
    """Plain functions declared in a class body come back as functions; staticmethods too."""
    if isinstance(f, staticmethod):
        return f.__func__
    return f


def _behaviour(*functions: Any) -> str | None:
    """What identifies an op's Python functions for the registry's content hash: each one's
    qualified name and a digest of its code (``None`` without functions)."""
    parts = []
    for f in functions:
        if f is None:
            continue
        code = getattr(f, "__code__", None)
        try:
            digest = hashlib.sha256(marshal.dumps(code)).hexdigest()[:16] if code else ""
        except ValueError:  # a code object holding an unmarshallable constant
            digest = str(id(f))
        name = f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', repr(f))}"
        parts.append(f"{name}:{digest}")
    return " ".join(parts) or None


def _ensure_loaded() -> None:
    """Load the builtin library's Python side (all of it or, on a failure, none of it) and
    discover op libraries (once)."""
    global _builtins_state
    with _lock:
        if _builtins_state != "no":
            return
        _builtins_state = "loading"
        try:
            from . import builtin

            builtin.register_all()
            _builtins_state = "yes"
        except BaseException:
            for spec in _builtin_specs:
                _registry.pop(spec["type"], None)
            _builtin_specs.clear()
            _builtins_state = "no"
            raise
        _discover_libraries()


@contextlib.contextmanager
def library(name: str = "<library>") -> Iterator[None]:
    """A loading window: registrations with ``override=True`` are accepted inside it."""
    global _loading_depth
    with _lock:
        _loading_depth += 1
        _core._ops_begin_library()
        try:
            yield
        finally:
            _core._ops_end_library()
            _loading_depth -= 1
            _loaded_libraries.append(name)


def load_library(target: str | os.PathLike[str]) -> None:
    """Load an op library: a module name, a ``.py`` file, or a directory of ``.py`` files.

    Registrations inside it may use ``override=True`` to replace existing ones. A failing
    library raises :class:`RegistryError` naming it; registrations it made before failing stay.
    """
    _ensure_loaded()
    _load(target)


def _load(target: str | os.PathLike[str]) -> None:
    path = Path(target)
    try:
        if path.is_dir():
            for f in sorted(path.glob("*.py")):
                _load(f)
            return
        with library(str(target)):
            if path.suffix == ".py" and path.is_file():
                mod_name = f"_ascendir_oplib_{abs(hash(str(path.resolve())))}"
                spec = importlib.util.spec_from_file_location(mod_name, path)
                if spec is None or spec.loader is None:
                    raise RegistryError(f"cannot load op library file {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[mod_name] = module
                spec.loader.exec_module(module)
            else:
                importlib.import_module(str(target))
    except RegistryError:
        raise
    except Exception as e:  # a broken library names itself
        raise RegistryError(f"op library {target!s} failed to load: {e}") from e


def _discover_libraries() -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            with library(ep.name):
                obj = ep.load()
                if callable(obj):
                    obj()
        except RegistryError:
            raise
        except Exception as e:
            raise RegistryError(f"op library entry point '{ep.name}' failed to load: {e}") from e
    for part in os.environ.get(PATH_VARIABLE, "").split(os.pathsep):
        if part.strip():
            _load(part.strip())


def get(op_type: str) -> type[OpDef]:
    """The declaration class of a registered operator (:class:`NotFoundError` if none)."""
    _ensure_loaded()
    try:
        return _registry[op_type]
    except KeyError:
        raise NotFoundError(f"operator type '{op_type}' is not registered") from None


def is_builtin(op_type: str) -> bool:
    """Whether ``op_type`` is registered by the builtin library."""
    _ensure_loaded()
    return bool(_core._ops_is_builtin(op_type))


def is_registered(op_type: str) -> bool:
    """Whether ``op_type`` is registered (the builtin library is loaded first)."""
    _ensure_loaded()
    return op_type in _registry


def list_ops() -> list[str]:
    """Every registered operator type, sorted."""
    _ensure_loaded()
    return sorted(_registry)


def unregister(op_type: str) -> bool:
    """Remove a registration (for tests and interactive work); returns whether it existed."""
    with _lock:
        _registry.pop(op_type, None)
        return bool(_core._ops_unregister(op_type))


def __getattr__(name: str) -> Any:
    """``ascendir.ops.<OpType>``: the typed builder of a registered op type (see
    :mod:`ascendir.ops._builders`)."""
    if name.startswith("_"):
        raise AttributeError(f"module 'ascendir.ops' has no attribute '{name}'")
    from . import _builders

    return _builders._builder(name)
