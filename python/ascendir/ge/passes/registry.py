"""GE's pass registry (``ge.passes.registry``): ``register_fusion_pass`` /
``register_decompose_pass`` decorators and the lookups."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..error import GeTypeError, GeValueError
from .base import DecomposePass, FusionBasePass, PassStage, PatternFusionPass

__all__ = [
    "PASS_KIND_DECOMPOSE",
    "PASS_KIND_FUSION_BASE",
    "PASS_KIND_PATTERN_FUSION",
    "PassDescriptor",
    "clear_registered_passes",
    "get_registered_pass_by_descriptor_key",
    "get_registered_pass_dicts",
    "get_registered_passes",
    "register_decompose_pass",
    "register_fusion_pass",
]

PASS_KIND_FUSION_BASE = "fusion_base"
PASS_KIND_PATTERN_FUSION = "pattern_fusion"
PASS_KIND_DECOMPOSE = "decompose"

_C = TypeVar("_C", bound=type)


@dataclass(frozen=True)
class PassDescriptor:
    """A registered pass: its key (``module:class:name``), name, class, stage and kind."""

    descriptor_key: str
    pass_name: str
    module_name: str
    class_name: str
    stage: PassStage
    kind: str
    cls: type[FusionBasePass]
    op_types: list[str] = field(default_factory=list)

    def to_bridge_dict(self) -> dict[str, Any]:
        """The descriptor as a plain dict (GE's bridge format; ``stage`` is its value)."""
        return {
            "descriptor_key": self.descriptor_key,
            "pass_name": self.pass_name,
            "module_name": self.module_name,
            "class_name": self.class_name,
            "stage": self.stage.value,
            "kind": self.kind,
            "op_types": list(self.op_types),
        }


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._by_key: dict[str, PassDescriptor] = {}
        self._by_name: dict[str, PassDescriptor] = {}

    def clear(self) -> None:
        with self._lock:
            self._by_key.clear()
            self._by_name.clear()

    def register(self, d: PassDescriptor) -> None:
        with self._lock:
            if d.descriptor_key in self._by_key:
                raise GeValueError(f"python pass descriptor_key already exists: "
                                   f"{d.descriptor_key}")
            if d.pass_name in self._by_name:
                raise GeValueError(f"python pass name already exists: {d.pass_name}")
            self._by_key[d.descriptor_key] = d
            self._by_name[d.pass_name] = d

    def get(self, key: str) -> PassDescriptor | None:
        with self._lock:
            return self._by_key.get(key)

    def all(self) -> list[PassDescriptor]:
        with self._lock:
            return list(self._by_key.values())


_REGISTRY = _Registry()


def _stage(stage: Any) -> PassStage:
    if isinstance(stage, PassStage):
        return stage
    if isinstance(stage, str):
        for s in PassStage:
            if stage in (s.value, s.name):
                return s
    raise GeValueError(f"stage must be a PassStage (one of "
                       f"{', '.join(s.name for s in PassStage)}), got {stage!r}")


def _name(name: Any) -> str:
    if not isinstance(name, str):
        raise GeTypeError("pass name must be a string")
    if not name:
        raise GeValueError("pass name must not be empty")
    return name


def _register(cls: type[FusionBasePass], *, kind: str, name: str, stage: PassStage,
              op_types: Iterable[str] = ()) -> None:
    d = PassDescriptor(
        descriptor_key=f"{cls.__module__}:{cls.__name__}:{name}", pass_name=name,
        module_name=cls.__module__, class_name=cls.__name__, stage=stage, kind=kind,
        cls=cls, op_types=list(op_types))
    _REGISTRY.register(d)
    cls.__ge_pass_descriptor__ = d  # type: ignore[attr-defined]


def register_fusion_pass(*, name: str, stage: PassStage,
                         kind: str | None = None) -> Callable[[_C], _C]:
    """Class decorator registering a ``FusionBasePass`` / ``PatternFusionPass`` under
    ``name`` at ``stage``."""
    pass_name = _name(name)
    pass_stage = _stage(stage)

    def decorator(cls: _C) -> _C:
        if not inspect.isclass(cls) or not issubclass(cls, FusionBasePass):
            raise GeTypeError("register_fusion_pass expects a FusionBasePass subclass")
        k = kind if kind is not None else (
            PASS_KIND_PATTERN_FUSION if issubclass(cls, PatternFusionPass)
            else PASS_KIND_FUSION_BASE)
        _register(cls, kind=k, name=pass_name, stage=pass_stage)
        return cls

    return decorator


def register_decompose_pass(*, name: str, stage: PassStage,
                            op_types: Iterable[str]) -> Callable[[_C], _C]:
    """Class decorator registering a ``DecomposePass`` for the nodes of ``op_types``."""
    if isinstance(op_types, (str, bytes)) or not isinstance(op_types, Iterable):
        raise GeTypeError("register_decompose_pass op_types must be an iterable of strings")
    types = list(op_types)
    if not types:
        raise GeValueError("register_decompose_pass requires at least one op type")
    for t in types:
        if not isinstance(t, str) or not t:
            raise GeTypeError("register_decompose_pass op_types must contain non-empty strings")
    pass_name = _name(name)
    pass_stage = _stage(stage)

    def decorator(cls: _C) -> _C:
        if not inspect.isclass(cls) or not issubclass(cls, DecomposePass):
            raise GeTypeError("register_decompose_pass expects a DecomposePass subclass")
        cls.op_types = list(types)
        _register(cls, kind=PASS_KIND_DECOMPOSE, name=pass_name, stage=pass_stage,
                  op_types=types)
        return cls

    return decorator


def clear_registered_passes() -> None:
    """Forget every registered pass."""
    _REGISTRY.clear()


def get_registered_passes() -> list[PassDescriptor]:
    """Every registered pass, in registration order."""
    return _REGISTRY.all()


def get_registered_pass_dicts() -> list[dict[str, Any]]:
    """Every registered pass as a dict (:meth:`PassDescriptor.to_bridge_dict`)."""
    return [d.to_bridge_dict() for d in get_registered_passes()]


def get_registered_pass_by_descriptor_key(descriptor_key: str) -> PassDescriptor | None:
    """The pass registered under ``descriptor_key`` (``module:class:name``), or None."""
    return _REGISTRY.get(descriptor_key)
