"""``ascendir view MODEL``: the graph in Model Explorer, or its graph JSON with ``--json``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._cli_support import on_file

__all__ = ["add_view_command"]


def _cmd_view(args: argparse.Namespace) -> int:
    from .. import load
    from . import graphs_json, view

    with on_file(args.model):
        obj: Any = load(args.model)
    report = None
    if args.report is not None:
        with on_file(args.report), open(args.report, encoding="utf-8") as f:
            report = json.load(f)
    if args.compile:
        from ..compiler import compile as _compile

        with on_file(args.model):
            obj = _compile(obj)
    if args.json is not None:
        with on_file(args.json), open(args.json, "w", encoding="utf-8") as f:
            json.dump(graphs_json(obj, report=report), f, separators=(",", ":"))
        print(f"wrote {args.json}")
        return 0
    with on_file(args.model):
        view(obj, host=args.host, port=args.port, open_browser=not args.no_open,
             report=report)
    return 0


def add_view_command(sub: Any) -> argparse.ArgumentParser:
    """Register ``ascendir view``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "view", help="show a model in Model Explorer (pip install 'ascendir[explorer]')",
        description="Show MODEL (any format ascendir reads, a GE dump file, a compiled model) "
        "in Model Explorer: layers from the node names' scopes, subgraphs as graphs of their "
        "own, AscBackend kernels as groups holding their HintGraph. With --json, write Model "
        "Explorer's graph JSON instead (no viewer needed).")
    p.add_argument("model", metavar="MODEL", help="the model or dump file")
    p.add_argument("--compile", action="store_true",
                   help="compile MODEL first and show the compiled graph with its report")
    p.add_argument("--report", metavar="JSON", default=None,
                   help="a compile report (report.json) for a compiled MODEL: kernel figures, "
                   "refusal codes")
    p.add_argument("--json", metavar="OUT", default=None,
                   help="write Model Explorer's graph JSON to OUT and exit")
    p.add_argument("--host", default="localhost", help="the server's host (default localhost)")
    p.add_argument("--port", type=int, default=8080,
                   help="the server's port (default 8080: the first free from 8080)")
    p.add_argument("--no-open", action="store_true", help="do not open a browser tab")
    p.set_defaults(func=_cmd_view)
    return p
