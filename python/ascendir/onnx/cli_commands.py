"""The ``convert`` and ``inspect`` commands of the ``ascendir`` command line.

``ascendir.cli`` registers them with :func:`add_convert_command` and :func:`add_inspect_command`;
each registers a sub-command whose handler is stored as ``func`` in the parsed namespace
(``args.func(args)`` returns the process exit code). Both read any model format
(:mod:`ascendir.formats` tells them apart from the bytes) and go through
:class:`ascendir.serialization.Model`, so model attributes and OM partitions survive a
conversion between GE formats; what a target cannot hold is named in a warning.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from collections import Counter
from typing import Any

from .._cli_support import (
    CommandError,
    Progress,
    UsageError,
    file_size,
    on_file,
    report_warnings,
)

__all__ = [
    "add_convert_command",
    "add_inspect_command",
    "convert",
    "inspect_file",
    "read_model",
    "summarize",
]

_FORMAT_HELP = (
    "onnx, pb (binary GE ModelDef), txt (GE text dump), om (OM file), readable "
    "(GE readable dump) or onnx_txt (GE ONNX dump, ge_onnx*.pbtxt)"
)


def read_model(
    path: str, format: str | None = None, *, expand_functions: bool = False
) -> tuple[Any, dict[str, Any]]:
    """Read a model file of any format; returns the :class:`~ascendir.serialization.Model` and
    extra facts for the summary (``format``, ``unknown_ops``). ``expand_functions`` is passed
    to :func:`ascendir.onnx.load` for ONNX files."""
    from .. import formats, serialization
    from .. import onnx as air_onnx

    data = formats.read_model_bytes(path)
    kind = format if format is not None else formats.detect(path, data)
    if kind == "onnx":
        graph, report = air_onnx.load(
            data,
            base_dir=os.path.dirname(path) or ".",
            return_report=True,
            warn_unknown=False,
            expand_functions=expand_functions,
        )
        air_onnx.warn_opset(graph)
        return serialization.Model(graph.name, [graph]), {
            "kind": kind,
            "format": f"ONNX (opset {report.opset}, IR {report.ir_version})",
            "unknown_ops": dict(report.unknown_ops),
        }
    model = serialization.model_from_bytes(data, kind, where=path)
    air_onnx.warn_opset(model.graph)
    names = {
        "pb": "GE ModelDef (binary)",
        "txt": "GE ModelDef (text)",
        "om": "OM file",
        "readable": "GE readable dump",
        "onnx_txt": "GE ONNX dump (text)",
    }
    graph = model.graph
    unknown = Counter(n.type for n in graph.nodes if n.type.startswith("onnx::"))
    return model, {"kind": kind, "format": names[kind], "unknown_ops": dict(unknown)}


def _dt(dtype: Any) -> str:
    """A dtype's name (``FLOAT``), whatever form the binding returns it in."""
    from ..types import DataType

    try:
        return DataType(dtype).name
    except (ValueError, TypeError):
        return str(dtype).split(".")[-1]


def summarize(graph: Any, extra: dict[str, Any] | None = None, model: Any = None,
              order: bool = False) -> str:
    """A readable summary: node counts by type, inputs/outputs, subgraphs, dtypes, unknown ops
    and, for a :class:`~ascendir.serialization.Model`, its attributes and OM partitions; with
    ``order``, every node in the graph's order with its producers (the CLI's one summary)."""
    extra = extra or {}
    lines = [f"graph '{graph.name}': {len(graph)} nodes"]
    if "format" in extra:
        lines.append(f"  format: {extra['format']}")
    if model is not None:
        from ..serialization import PARTITION_NAMES

        lines.append(f"  model: '{model.name}' version {model.version}, {len(model.graphs)} "
                     f"graph(s), {len(model.attrs)} attribute(s)")
        if model.partitions:
            parts = ", ".join(
                f"{PARTITION_NAMES.get(k, f'type {k}')} ({len(d)} B)" for k, d in model.partitions
            )
            lines.append(f"  other OM partitions: {parts}")
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
    if order:
        lines.append("  order:")
        for node in graph:
            producers = ", ".join(n.name for n in node.in_data_nodes) or "-"
            lines.append(f"    #{node.id:<3} {node.type:<10} {node.name:<16} <- {producers}")
    return "\n".join(lines)


def inspect_file(path: str, format: str | None = None, *, expand_functions: bool = False) -> str:
    """The summary of a model file of any format (shapes inferred first when possible)."""
    model, extra = read_model(path, format, expand_functions=expand_functions)
    graph = model.graph
    try:
        graph.infer_shapes()
    except Exception as exc:  # the summary still shows what the file holds
        extra["format"] = f"{extra.get('format', '')} (shape inference stopped: {exc})"
    return summarize(graph, extra, model if extra["kind"] != "onnx" else None)


def _output_kind(dst: str, to: str | None) -> str:
    from ..formats import SUFFIXES, format_of_suffix

    kind = to or format_of_suffix(dst)
    if kind is None:
        raise UsageError(
            "convert",
            f"cannot tell the output format of '{dst}' from its suffix "
            f"(use {', '.join(sorted(SUFFIXES))} or --to FORMAT)",
        )
    return kind


def convert(src: str, dst: str, *, from_format: str | None = None, to: str | None = None,
            progress: Progress | None = None, expand_functions: bool = False) -> None:
    """Convert the model file ``src`` to ``dst`` (format from ``to`` or the suffix of ``dst``).

    The model goes through :class:`~ascendir.serialization.Model`: GE model attributes and
    OM partitions are kept between GE formats, and whatever the target cannot hold is named
    in a :class:`~ascendir.serialization.DataLossWarning`. ``dst`` is written through a
    temporary file in its directory, so a failed conversion leaves no partial file.
    """
    from .. import serialization

    progress = progress or Progress(enabled=False)
    kind = _output_kind(dst, to)
    progress.step(f"reading {src} ({file_size(src)})")
    with on_file(src):
        model, _ = read_model(src, from_format, expand_functions=expand_functions)
    progress.step(f"writing {dst}")
    with on_file(dst):
        if os.path.isdir(dst):
            raise IsADirectoryError(21, "Is a directory", dst)
        directory = os.path.dirname(os.path.abspath(dst))
        if not os.path.isdir(directory):
            raise CommandError(dst, f"directory '{os.path.dirname(dst)}' does not exist")
        try:
            fd, tmp = tempfile.mkstemp(prefix=".ascendir-", suffix=".part", dir=directory)
        except OSError as e:
            raise OSError(e.errno, e.strerror, dst) from None
        os.close(fd)
        # What the writer warns of names the file it writes: the temporary one. The warnings
        # are held until the file is in place, and then name the destination.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                serialization.save(model, tmp, format=kind)
                os.replace(tmp, dst)
            except BaseException:
                os.unlink(tmp)
                raise
            finally:
                held = [(str(w.message).replace(tmp, dst), w.category) for w in caught]
        for text, category in held:
            warnings.warn(text, category, stacklevel=2)
    progress.done()


def _run_convert(args: argparse.Namespace) -> int:
    progress = Progress(enabled=None if args.progress else False)
    with report_warnings(args.src):
        convert(args.src, args.dst, from_format=args.from_format, to=args.to, progress=progress,
                expand_functions=args.expand_functions)
    print(f"wrote {args.dst} ({os.path.getsize(args.dst)} bytes)")
    return 0


def _run_inspect(args: argparse.Namespace) -> int:
    progress = Progress(enabled=None if args.progress else False)
    progress.step(f"reading {args.file} ({file_size(args.file)})")
    with on_file(args.file), report_warnings(args.file):
        text = inspect_file(args.file, args.format, expand_functions=args.expand_functions)
    progress.done()
    print(text)
    return 0


def _add_expand(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expand-functions", action="store_true", default=False,
                   help="ONNX: replace ops the mapping cannot express by their ONNX function "
                   "bodies or equivalent mapped ops (needs the onnx package)")


def _add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="show progress on stderr when it is a terminal")


def add_convert_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``ascendir convert SRC DST``."""
    from ..formats import FORMATS

    p = subparsers.add_parser(
        "convert",
        help="convert between ONNX, GE ModelDef (.pb binary, .txt text) and OM files",
        description="Convert a model file; the input format is read from its bytes, the "
        "output format from the suffix of DST (or --to). Model attributes and OM partitions "
        "are kept between GE formats; what the output cannot hold is named in a warning.",
    )
    p.add_argument("src", help="input model: .onnx, or a GE .pb/.txt/.pbtxt/.om file")
    p.add_argument("dst", help="output file; its suffix picks the format unless --to is given")
    p.add_argument("--from", dest="from_format", choices=FORMATS, default=None,
                   help=f"read SRC as this format instead of sniffing it: {_FORMAT_HELP}")
    p.add_argument("--to", choices=FORMATS, default=None,
                   help=f"write DST in this format whatever its suffix: {_FORMAT_HELP}")
    _add_expand(p)
    _add_progress(p)
    p.set_defaults(func=_run_convert)
    return p


def add_inspect_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``ascendir inspect FILE``."""
    from ..formats import FORMATS

    p = subparsers.add_parser(
        "inspect",
        help="summarize a model: node counts by type, inputs/outputs, subgraphs, dtypes",
        description="Print a summary of a model file of any format (read from its bytes).",
    )
    p.add_argument("file", help="a model: .onnx, or a GE .pb/.txt/.pbtxt/.om file")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help=f"read FILE as this format instead of sniffing it: {_FORMAT_HELP}")
    _add_expand(p)
    _add_progress(p)
    p.set_defaults(func=_run_inspect)
    return p
