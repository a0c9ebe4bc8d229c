"""``ascendir compile MODEL... -o OUT``: compile models and print the summary table."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from .._cli_support import Progress, UsageError, describe, on_file
from ..errors import AscendIRError
from . import EMITS, TARGETS, CompileOptions, compile


def _message(exc: BaseException, path: str) -> str:
    """One line for a failed model, without repeating its path."""
    msg = describe(exc, path)
    while msg.startswith(f"{path}: "):
        msg = msg[len(path) + 2:]
    if msg[:1].isupper() and msg[1:2].islower():  # an OS reason: "No such file or directory"
        msg = msg[:1].lower() + msg[1:]
    return msg


def _shape(text: str) -> tuple[str, list[int]]:
    name, sep, dims = text.rpartition(":")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME:D,D,...")
    try:
        return name, [int(d) for d in dims.split(",") if d.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': dims must be integers") from None


def _list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def add_compile_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``compile`` subcommand."""
    p = subparsers.add_parser(
        "compile", help="fuse vector regions into AscBackend kernels and write the results",
        description="Compile models and print a summary table. Exit 0 when every model "
        "compiled, 1 when some failed (each failure is one line on stderr), 2 for a usage error.")
    p.add_argument("models", nargs="+", metavar="MODEL", help=".onnx, .pb, .txt or .om files")
    p.add_argument("-o", "--out", required=True, metavar="OUT_DIR", help="output directory")
    p.add_argument("--target", default="ascend910b", choices=TARGETS,
                   help="the chip to compile for (default: ascend910b)")
    p.add_argument("--input-shape", action="append", type=_shape, default=[],
                   metavar="NAME:D,D,...", help="hint for an input's -1 dims (repeatable)")
    p.add_argument("--config", metavar="FILE", help="CompileOptions from a TOML file")
    p.add_argument("--emit", type=_list, default=["om", "report"],
                   help=f"comma-separated subset of {','.join(EMITS)} (default om,report)")
    p.add_argument("--enable", type=_list, default=[], help="op families to switch on")
    p.add_argument("--disable", type=_list, default=[], help="op families to switch off")
    p.add_argument("--max-fusion-size", type=int, default=None, help="AscGraph nodes per kernel")
    p.add_argument("--dump-stages", action="store_true", help="write one file per stage")
    p.add_argument("--report", choices=["text", "json"], default="text",
                   help="what to print per model")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="show progress on stderr when it is a terminal")
    p.set_defaults(func=run_compile)
    return p


def run_compile(args: argparse.Namespace) -> int:
    """Compile every model; exit 0 when all compiled, 1 when some failed."""
    bad = [e for e in args.emit if e not in EMITS]
    if bad:
        raise UsageError("compile", f"unknown --emit kind(s) {', '.join(bad)} "
                         f"(choose from {', '.join(EMITS)})")
    if args.config:
        with on_file(args.config):
            opts = CompileOptions.from_toml(args.config)
    else:
        opts = CompileOptions()
    opts.target = args.target
    opts.input_shapes.update(dict(args.input_shape))
    opts.enable += args.enable
    opts.disable += args.disable
    if args.max_fusion_size is not None:
        opts.max_fusion_size = args.max_fusion_size
    rows = []
    failed = 0
    progress = Progress(enabled=None if args.progress else False)
    for k, path in enumerate(args.models, 1):
        progress.step(f"compiling {path} ({k}/{len(args.models)}, {failed} failed)")
        stem = os.path.splitext(os.path.basename(path))[0]
        t = time.perf_counter()
        try:
            cm = compile(path, options=opts, dump_stages=args.dump_stages)
            out = os.path.join(args.out, stem) if len(args.models) > 1 else args.out
            cm.save(out, args.emit, name=stem)
        except (AscendIRError, OSError) as e:
            failed += 1
            progress.done()
            print(f"ascendir: error: {path}: {_message(e, path)}", file=sys.stderr)
            rows.append((stem, "-", "-", "-", "-", f"{(time.perf_counter() - t) * 1e3:.0f} ms",
                         "failed"))
            continue
        r = cm.report
        if args.report == "json":
            progress.done()
            print(r.to_json())
        rows.append((stem, str(r.nodes_before), str(r.nodes_after), str(len(cm.kernels)),
                     str(r.bytes_saved), f"{(time.perf_counter() - t) * 1e3:.0f} ms", "ok"))
    progress.done()
    head = ("model", "nodes before", "nodes after", "kernels", "bytes saved", "time", "status")
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    return 1 if failed else 0
