"""``ascendir view MODEL``: the graph in Model Explorer, or its graph JSON with ``--json``."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from typing import Any

from .._cli_support import on_file

__all__ = ["add_view_command"]


def _cmd_view(args: argparse.Namespace) -> int:
    from .. import load
    from . import graphs_json, report_beside, view_file

    path = args.model
    with tempfile.TemporaryDirectory(prefix="ascendir-view-") as tmp:
        if args.compile:
            from ..compiler import compile as _compile

            with on_file(args.model):
                cm = _compile(load(args.model))
                stem = os.path.splitext(os.path.basename(args.model))[0] or "model"
                cm.save(tmp, ["pb", "report"], name=stem)
            path = os.path.join(tmp, f"{stem}.pb")
        if args.json is not None:
            with on_file(path):
                g = load(path)
                data = graphs_json(g, report=report_beside(path, g))
            with on_file(args.json), open(args.json, "w", encoding="utf-8") as f:
                json.dump(data, f, separators=(",", ":"))
            print(f"wrote {args.json}")
            return 0
        with on_file(args.model):
            view_file(path, host=args.host, port=args.port, open_browser=not args.no_open)
    return 0


def add_view_command(sub: Any) -> argparse.ArgumentParser:
    """Register ``ascendir view``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "view", help="show a model in Model Explorer (pip install 'ascendir[explorer]')",
        description="Show MODEL (any format ascendir reads, a GE dump file, a compiled model) "
        "in Model Explorer: layers from the node names' scopes, subgraphs as graphs of their "
        "own, AscBackend kernels as groups holding their HintGraph (with the figures of the "
        "report.json beside a compiled model). With --json, write Model Explorer's graph "
        "JSON instead (no viewer needed).")
    p.add_argument("model", metavar="MODEL", help="the model or dump file")
    p.add_argument("--compile", action="store_true",
                   help="compile MODEL first and show the compiled graph with its report")
    p.add_argument("--json", metavar="OUT", default=None,
                   help="write Model Explorer's graph JSON to OUT and exit")
    p.add_argument("--host", default="localhost", help="the server's host (default localhost)")
    p.add_argument("--port", type=int, default=8080,
                   help="the server's port (default 8080: the first free from 8080)")
    p.add_argument("--no-open", action="store_true", help="do not open a browser tab")
    p.set_defaults(func=_cmd_view)
    return p
