"""Symbol values implied by input lengths (used by :func:`ascendir.asc.evaluate`)."""

from __future__ import annotations

from typing import Any


def _extent(view: Any, offset: Any, bindings: dict[str, int]) -> int | None:
    """Elements a Load's view reaches (``offset + 1 + Σ (repeat − 1)·|stride|``), or None
    when a size does not evaluate with ``bindings``."""
    try:
        total = int(offset.evaluate(bindings)) if hasattr(offset, "evaluate") else int(offset)
        total += 1
        for r, st in zip(view.size, view.strides, strict=False):
            rv, sv = int(r.evaluate(bindings)), int(st.evaluate(bindings))
            total += (max(rv, 1) - 1) * abs(sv)
    except Exception:  # unbound symbol, overflow: this view cannot decide anything yet
        return None
    return total


def infer_sizes(hint: Any, inputs: dict[str, Any],
                sizes: dict[str, int] | None = None) -> dict[str, int]:
    """Symbol values the inputs' lengths imply: for each Load whose view has exactly one
    unbound symbol, the value that makes its extent equal to its input's length (the extent
    grows with the symbol, so a binary search finds it). Given ``sizes`` are kept; symbols that
    no input decides stay unbound."""
    out = dict(sizes or {})
    loads = []
    for n in hint.nodes:
        if n.type != "Load":
            continue
        src = n.input("x")
        if src is None or src.node.type != "Data" or src.node.name not in inputs:
            continue
        length = int(getattr(inputs[src.node.name], "size", 0))
        attrs = n.attr.ir_attr
        offset = attrs.offset if "offset" in attrs.names() else 0
        loads.append((n.outputs[0], offset, length))
    for _ in range(len(loads) + 1):
        progress = False
        for view, offset, length in loads:
            free: set[str] = set()
            for e in (*view.size, *view.strides):
                free |= {str(x) for x in e.free_symbols()}
            if hasattr(offset, "free_symbols"):
                free |= {str(x) for x in offset.free_symbols()}
            unknown = sorted(free - set(out))
            if len(unknown) != 1:
                continue
            sym = unknown[0]
            lo, hi = 1, max(length, 1)
            while lo < hi:
                mid = (lo + hi) // 2
                got = _extent(view, offset, {**out, sym: mid})
                if got is None:
                    break
                if got < length:
                    lo = mid + 1
                else:
                    hi = mid
            if _extent(view, offset, {**out, sym: lo}) == length:
                out[sym] = lo
                progress = True
        if not progress:
            break
    return out


__all__ = ["infer_sizes"]
