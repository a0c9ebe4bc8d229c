"""The ``ascendir dumps``, ``ascendir diff`` and ``ascendir cycle`` commands.

``ascendir dumps DIR`` lists the graph dumps under a folder as a timeline; ``ascendir diff A
B`` prints what changed between two graphs, each a model or dump file or a stage of a dump
folder (``DIR:STAGE``, or ``ascendir diff DIR S1 S2``); ``ascendir cycle FILE`` prints the
cycle that keeps a graph from sorting. docs/VIEWING.md has the details and the JSON schemas.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

from . import dumps
from ._cli_support import CommandError, UsageError, describe, on_file, report_warnings
from ._core import Graph

__all__ = ["add_cycle_command", "add_diff_command", "add_dumps_command", "resolve"]


def _rel(path: str, root: str) -> str:
    return os.path.relpath(path, root)


def _cmd_dumps(args: argparse.Namespace) -> int:
    root = args.dir
    with on_file(root):
        folder = dumps.open(root)
    rows: list[dict[str, Any]] = []
    for e in folder:
        if args.pid is not None and e.pid != args.pid:
            continue
        count: int | None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                count = e.node_count
        except Exception as exc:  # a file that does not load: listed, count unknown
            count = None
            print(f"ascendir: warning: {e.path}: {describe(exc, e.path)}",
                  file=sys.stderr)
        rows.append({"number": e.number, "stage": e.stage, "format": e.format,
                     "graph_id": e.graph_id, "pid": e.pid, "device": e.device,
                     "nodes": count, "path": _rel(e.path, root)})
    if args.json:
        print(json.dumps({"schema": "ascendir.dumps/1", "root": root, "dumps": rows},
                         indent=2))
        return 0
    if not rows:
        print(f"no graph dumps under {root}")
        return 0
    table = [("#", "stage", "format", "nodes", "file")]
    table += [(str(r["number"]), r["stage"], r["format"],
               "?" if r["nodes"] is None else str(r["nodes"]), r["path"]) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        cells = [row[0].rjust(widths[0]), row[1].ljust(widths[1]), row[2].ljust(widths[2]),
                 row[3].rjust(widths[3]), row[4]]
        print("  ".join(cells))
    pids = folder.pids
    if len(pids) > 1 and args.pid is None:
        print(f"{len(pids)} processes: pids {', '.join(map(str, pids))} (choose with --pid)")
    return 0


def resolve(spec: str, pid: int | None = None, command: str = "diff",
            warn: bool = True) -> tuple[str, Graph]:
    """The label and graph of a command-line operand: a file, or ``DIR:STAGE`` (a stage
    number or name of the dump folder ``DIR``); the loader's warnings are printed when
    ``warn``."""
    if not os.path.exists(spec) and ":" in spec:
        root, key = spec.rsplit(":", 1)
        if not os.path.isdir(root):
            raise CommandError(spec, f"'{root}' is not a dump folder")
        with on_file(spec):
            entry = dumps.open(root).get(key, pid=pid)
        return entry.path, _load(entry.path, lambda: entry.load(), warn)
    if os.path.isdir(spec):
        raise UsageError(command, f"'{spec}' is a folder: name a stage as '{spec}:STAGE'")
    return spec, _load(spec, lambda: dumps.load_file(spec), warn)


def _load(label: str, load: Any, warn: bool) -> Graph:
    with on_file(label):
        if not warn:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                quiet: Graph = load()
            return quiet
        with report_warnings(label):
            graph: Graph = load()
    return graph


def _cmd_diff(args: argparse.Namespace) -> int:
    ops: list[str] = list(args.operands)
    if len(ops) == 3:
        root = ops[0]
        if not os.path.isdir(root):
            raise UsageError("diff", f"with three operands the first is a dump folder, and "
                             f"'{root}' is not one")
        ops = [f"{root}:{ops[1]}", f"{root}:{ops[2]}"]
    elif len(ops) != 2:
        raise UsageError("diff", "give two files or stages (A B, DIR:S1 DIR:S2, DIR S1 S2)")
    (la, a), (lb, b) = resolve(ops[0], args.pid), resolve(ops[1], args.pid)
    with on_file(lb):
        d = dumps.diff(a, b)
    if args.json:
        data = dict(d.data)
        data["old"] = dict(data["old"], file=la)
        data["new"] = dict(data["new"], file=lb)
        print(json.dumps(data, indent=2))
    else:
        print(f"--- {la}\n+++ {lb}")
        print(d.text())
    return 0


def _cmd_cycle(args: argparse.Namespace) -> int:
    spec = args.file
    # The loader's cycle warning is what this command says below.
    label, graph = resolve(spec, args.pid, "cycle", warn=False)
    with on_file(label):
        for g in [graph, *graph.subgraphs]:
            links = dumps.cycle_links(g)
            if links is None:
                continue
            if args.json:
                print(json.dumps({"schema": "ascendir.cycle/1", "graph": g.name,
                                  "nodes": [s for s, _, _, _ in links],
                                  "links": [{"src": s, "src_port": sp, "dst": d,
                                             "dst_port": dp} for s, sp, d, dp in links]},
                                 indent=2))
            else:
                print(f"graph '{g.name}' has a cycle of {len(links)} nodes:")
                for s, sp, d, dp in links:
                    print(f"  {s}:{sp} -> {d}:{dp}")
            raise CommandError(label, f"graph '{g.name}' has a cycle of {len(links)} nodes "
                               f"({' -> '.join(s for s, _, _, _ in links)})")
    if args.json:
        print(json.dumps({"schema": "ascendir.cycle/1", "graph": graph.name, "nodes": [],
                          "links": []}, indent=2))
    else:
        print(f"graph '{graph.name}' is acyclic ({len(graph)} nodes)")
    return 0


def add_dumps_command(sub: Any) -> argparse.ArgumentParser:
    """Register ``ascendir dumps``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "dumps", help="list the graph dumps of a folder as a timeline",
                       description="List the graph dumps under DIR (GE's ge_proto / ge_onnx / "
                       "ge_readable files in pid_* folders, the stage dumps of 'ascendir "
                       "compile --dump-stages') in stage order: number, stage, format, node "
                       "count, file.")
    p.add_argument("dir", metavar="DIR", help="the dump folder")
    p.add_argument("--pid", type=int, default=None, help="only the dumps of this process")
    p.add_argument("--json", action="store_true", help="print JSON (schema ascendir.dumps/1)")
    p.set_defaults(func=_cmd_dumps)
    return p


def add_diff_command(sub: Any) -> argparse.ArgumentParser:
    """Register ``ascendir diff``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "diff", help="what changed between two graphs or two dump stages",
                       description="Print what changed from graph A to graph B: nodes "
                       "added, removed, retyped or renamed, links relinked, attributes and "
                       "tensor descriptors changed. A and B are model or dump files, or "
                       "stages of a dump folder as DIR:STAGE (a number or stage name); "
                       "'ascendir diff DIR S1 S2' is 'ascendir diff DIR:S1 DIR:S2'.")
    p.add_argument("operands", nargs="+", metavar="A B",
                   help="two files or DIR:STAGE, or DIR S1 S2")
    p.add_argument("--pid", type=int, default=None,
                   help="the process whose dumps a stage names (several pid_* folders)")
    p.add_argument("--json", action="store_true", help="print JSON (schema ascendir.diff/1)")
    p.set_defaults(func=_cmd_diff)
    return p


def add_cycle_command(sub: Any) -> argparse.ArgumentParser:
    """Register ``ascendir cycle``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "cycle", help="print the cycle that keeps a graph from sorting",
                       description="Print one cycle of the graph in FILE (or DIR:STAGE) in "
                       "link order, each link as src:port -> dst:port (port 'ctrl' for a "
                       "control link), and exit 1; an acyclic graph prints so and exits 0.")
    p.add_argument("file", metavar="FILE", help="a model or dump file, or DIR:STAGE")
    p.add_argument("--pid", type=int, default=None,
                   help="the process whose dumps a stage names (several pid_* folders)")
    p.add_argument("--json", action="store_true", help="print JSON (schema ascendir.cycle/1)")
    p.set_defaults(func=_cmd_cycle)
    return p
