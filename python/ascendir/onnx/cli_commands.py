"""The ``convert`` and ``inspect`` commands of the ``ascendir`` command line.

``ascendir.cli`` registers them with :func:`add_convert_command` and :func:`add_inspect_command`;
each registers a sub-command whose handler is stored as ``func`` in the parsed namespace
(``args.func(args)`` returns the process exit code).
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from typing import Any

__all__ = ["add_convert_command", "add_inspect_command", "convert", "inspect_file", "summarize"]

_GE_SUFFIXES = (".pb", ".txt", ".om")


def _load_any(path: str) -> tuple[Any, dict[str, Any]]:
    """Load an ONNX model or a GE dump; returns the graph and extra facts for the summary."""
    from .. import onnx as air_onnx

    if path.endswith(".onnx"):
        graph, report = air_onnx.load(path, return_report=True, warn_unknown=False)
        return graph, {
            "format": f"ONNX (opset {report.opset}, IR {report.ir_version})",
            "unknown_ops": dict(report.unknown_ops),
            "onnx_nodes": report.onnx_nodes,
        }
    from .. import serialization

    graph = serialization.load(path)
    if not hasattr(graph, "nodes") and hasattr(graph, "graph"):
        graph = graph.graph
    unknown = Counter(n.type for n in graph.nodes if n.type.startswith("onnx::"))
    return graph, {"format": "GE ModelDef", "unknown_ops": dict(unknown)}


def _dt(dtype: Any) -> str:
    """A dtype's name (``FLOAT``), whatever form the binding returns it in."""
    from ..types import DataType

    try:
        return DataType(dtype).name
    except (ValueError, TypeError):
        return str(dtype).split(".")[-1]


def summarize(graph: Any, extra: dict[str, Any] | None = None) -> str:
    """A readable summary: node counts by type, inputs/outputs, subgraphs, dtypes, unknown ops."""
    extra = extra or {}
    lines = [f"graph '{graph.name}': {len(graph)} nodes"]
    if "format" in extra:
        lines.append(f"  format: {extra['format']}")
    counts = Counter(n.type for n in graph.nodes)
    lines.append("  node types:")
    for ty, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"    {ty:<24} {n}")
    dtypes: Counter[str] = Counter()
    for n in graph.nodes:
        od = n.op_desc
        for i in range(od.num_outputs):
            dtypes[_dt(od.output_desc(i).dtype)] += 1
    lines.append("  inputs:")
    for n in graph.inputs:
        d = n.op_desc.output_desc(0)
        lines.append(f"    {n.name}: {_dt(d.dtype)} {list(d.shape)}")
    lines.append("  outputs:")
    for entry in graph.outputs:
        node, index = entry if isinstance(entry, tuple) else (entry.node, entry.index)
        d = node.op_desc.output_desc(index)
        lines.append(f"    {node.name}:{index}: {_dt(d.dtype)} {list(d.shape)}")
    subs = list(getattr(graph, "subgraphs", []) or [])
    lines.append(f"  subgraphs: {len(subs)}")
    for s in subs:
        lines.append(f"    {s.name}: {len(s)} nodes")
    lines.append("  output dtypes: " + ", ".join(f"{k} x{v}" for k, v in sorted(dtypes.items())))
    unknown = extra.get("unknown_ops") or {}
    if unknown:
        lines.append("  unknown ops: " + ", ".join(f"{k} x{v}" for k, v in sorted(unknown.items())))
    else:
        lines.append("  unknown ops: none")
    return "\n".join(lines)


def inspect_file(path: str) -> str:
    """The summary of an ONNX model or GE dump file (shapes inferred first when possible)."""
    graph, extra = _load_any(path)
    infer = getattr(graph, "infer_shapes", None)
    if infer is not None:
        try:
            infer()
        except Exception as exc:  # the summary still shows what the file holds
            extra["format"] = f"{extra.get('format', '')} (shape inference stopped: {exc})"
    return summarize(graph, extra)


def convert(src: str, dst: str) -> None:
    """Convert an ONNX model to a GE dump (``.pb`` binary ModelDef, ``.txt`` text, ``.om``),
    or a GE dump / ONNX model to ONNX (``.onnx``)."""
    from .. import onnx as air_onnx

    graph, _ = _load_any(src)
    if dst.endswith(".onnx"):
        air_onnx.save(graph, dst)
        return
    if not dst.endswith(_GE_SUFFIXES):
        raise ValueError(f"cannot tell the output format of '{dst}' (use .pb, .txt, .om or .onnx)")
    from .. import serialization

    serialization.save(graph, dst)


def _run_convert(args: argparse.Namespace) -> int:
    convert(args.src, args.dst)
    print(f"wrote {args.dst} ({os.path.getsize(args.dst)} bytes)")
    return 0


def _run_inspect(args: argparse.Namespace) -> int:
    print(inspect_file(args.file))
    return 0


def add_convert_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``ascendir convert SRC DST``."""
    p = subparsers.add_parser(
        "convert", help="convert model.onnx to model.pb | model.txt | model.om (or back to .onnx)"
    )
    p.add_argument("src", help="input model (.onnx, or a GE dump .pb/.txt/.om)")
    p.add_argument("dst", help="output file; the suffix picks the format")
    p.set_defaults(func=_run_convert)
    return p


def add_inspect_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``ascendir inspect FILE``."""
    p = subparsers.add_parser(
        "inspect", help="summarize a model: node counts by type, inputs/outputs, subgraphs, dtypes"
    )
    p.add_argument("file", help="an .onnx model or a GE dump (.pb/.txt/.om)")
    p.set_defaults(func=_run_inspect)
    return p
