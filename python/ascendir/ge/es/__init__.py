"""``ascendir.ge.es``: GE's eager-style graph construction (``ge.es``) over ascendir graphs.

``GraphBuilder`` builds an :class:`ascendir.Graph` node by node, ``TensorHolder`` is one
output of a node being built, and the op functions come in GE's groups: ``math``, ``nn`` and
``all`` (every registered type), made from ascendir's op registry.
"""

from __future__ import annotations

from types import ModuleType

from . import all, math, nn  # noqa: A004 - GE's plugin names
from .graph_builder import GraphBuilder, InputType, attr_scope, control_dependency_scope
from .tensor_holder import TensorHolder

__all__ = [
    "GraphBuilder",
    "InputType",
    "TensorHolder",
    "all",
    "attr_scope",
    "control_dependency_scope",
    "get_plugin",
    "list_plugins",
    "math",
    "nn",
]

_plugins: dict[str, ModuleType] = {"math": math, "nn": nn, "all": all}


def list_plugins() -> list[str]:
    """The names of the op-function groups (GE's loaded ES plugins)."""
    return list(_plugins)


def get_plugin(plugin_name: str) -> ModuleType | None:
    """The op-function module named ``plugin_name``, or ``None``."""
    return _plugins.get(plugin_name)
