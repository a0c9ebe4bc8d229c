"""GE's fusion checks (``ge.passes.fuse_inspector``): ``can_fuse`` answers from ascendir's
fusion rule (``Graph.fusion_conflict``, GE's ``IsSupportFuse``, and the cycle rule) with the
compile report's codes; ``report_fuse`` records a fusion on the pass context."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ... import _core
from ...errors import StaleHandleError
from ..error import GeError, GeTypeError
from ..graph import Node
from .base import PassContext

__all__ = ["FuseCheckResult", "can_fuse", "report_fuse"]

ORIGINAL_NAMES = "_datadump_original_op_names"


@dataclass(frozen=True)
class FuseCheckResult:
    """Whether a node set can be fused into one node (``ok``), and why not (``reason``,
    starting with the fusion rule's code)."""

    ok: bool
    reason: str = ""


def _nodes(items: Any, what: str) -> list[_core.Node]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise GeTypeError(f"{what} must be an iterable of ge.graph.Node objects")
    out = []
    for n in items:
        if not isinstance(n, Node):
            raise GeTypeError(f"{what} must contain only ge.graph.Node objects")
        if not n.air.is_alive:
            raise GeError(f"{what}: node handle is empty (the node was removed)")
        out.append(n.air)
    return out


def _cycle(nodes: list[_core.Node]) -> str | None:
    """An outside node on a path from the set back into it, or None."""
    inside = set(nodes)
    seen: set[_core.Node] = set()
    stack = [m for n in nodes for m in n.out_nodes if m not in inside]
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        for nxt in m.out_nodes:
            if nxt in inside:
                return m.name
            if nxt not in seen:
                stack.append(nxt)
    return None


def can_fuse(nodes: Iterable[Node]) -> FuseCheckResult:
    """Whether ``nodes`` can be fused into one node: not empty, one graph, no conflicting
    stream label (AF2002) or vector-core count (NF1025), no cycle through an outside node
    (NF1002)."""
    ns = _nodes(nodes, "nodes")
    if not ns:
        return FuseCheckResult(False, "nodes are empty")
    g = ns[0].graph
    if any(n.graph != g for n in ns[1:]):
        return FuseCheckResult(False, "nodes are from different graphs")
    conflict = g.fusion_conflict(ns)
    if conflict is not None:
        code = ("AF2002" if "_user_stream_label" in conflict
                else "NF1025" if "vectorcore" in conflict else "NF1000")
        return FuseCheckResult(False, f"{code}: {conflict}")
    via = _cycle(ns)
    if via is not None:
        names = ", ".join(n.name for n in ns)
        return FuseCheckResult(False, f"NF1002: fusing [{names}] makes a cycle through the "
                                      f"outside node '{via}'")
    return FuseCheckResult(True, "")


def report_fuse(nodes_before: Iterable[Node], nodes_after: Iterable[Node],
                context: PassContext) -> None:
    """Record that ``nodes_before`` were fused into ``nodes_after``: the names go to
    ``context.fuse_reports``, and each node after keeps the original names in
    ``_datadump_original_op_names`` (as GE's dump does)."""
    if not isinstance(context, PassContext):
        raise GeTypeError("context must be a PassContext")
    before = _nodes(nodes_before, "nodes_before")
    after = _nodes(nodes_after, "nodes_after")
    try:
        names = [n.name for n in before]
        for n in after:
            old = n.attrs.get(ORIGINAL_NAMES) or []
            n.op_desc.attrs[ORIGINAL_NAMES] = [*old, *[x for x in names if x not in old]]
    except StaleHandleError as e:
        msg = (f"Failed to report fusion result, pass_name={context.get_pass_name()}: {e}")
        context.set_error_message(msg)
        raise GeError(msg) from e
    context.fuse_reports.append((names, [n.name for n in after]))
