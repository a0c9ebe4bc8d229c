"""``ascendir compile MODEL|DIR|GLOB... -o OUT``: compile models in parallel (threads, or a
Dask cluster) and print the summary table."""
# Optional dependencies (tqdm, dask and distributed): absent or untyped where the package is checked
# mypy: disable-error-code="import-not-found,import-untyped"

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from typing import Any

from .._cli_support import UsageError, describe, on_file
from ..errors import AscendIRError, CompileError
from ..formats import format_of_suffix
from ..onnx import opset_warning
from . import EMITS, TARGETS, CompileOptions, compile_iter, verify


def _message(exc: BaseException, path: str) -> str:
    """One line for a failed model, without repeating its path."""
    msg = describe(exc, path)
    for prefix in ("load failed: ", f"{path}: "):
        while msg.startswith(prefix):
            msg = msg[len(prefix):]
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


def _resources(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in _list(text):
        name, sep, amount = item.partition("=")
        try:
            value = float(amount)
        except ValueError:
            value = -1.0
        if not sep or not name.strip() or not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(
                f"'{item}' is not NAME=N with a positive amount N")
        out[name.strip()] = value
    return out


def add_compile_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``compile`` subcommand."""
    p = subparsers.add_parser(
        "compile", help="fuse vector regions into AscBackend kernels and write the results",
        description="Compile models (files, directories of model files, or glob patterns) "
        "in parallel and print a summary table. Exit 0 when every model compiled, 1 when some "
        "failed (each failure is one line on stderr), 2 for a usage error.")
    p.add_argument("models", nargs="+", metavar="MODEL",
                   help=".onnx, .pb, .txt or .om files, directories of them, or glob patterns")
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
    p.add_argument("--verify", action="store_true",
                   help="build every kernel for the CPU and check it against its HintGraph "
                   "(air.compiler.verify); a model whose kernels do not verify fails")
    p.add_argument("--report", choices=["text", "json"], default="text",
                   help="what to print per model")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="models compiled at once (default: the CPUs this process may use)")
    sched = p.add_mutually_exclusive_group()
    sched.add_argument("--scheduler", metavar="ADDRESS",
                       help="compile on a Dask cluster (tcp://host:8786, or 'auto' for Dask's "
                       "configured scheduler); needs ascendir[dask]")
    sched.add_argument("--scheduler-file", metavar="FILE",
                       help="compile on the Dask cluster described by a scheduler file")
    p.add_argument("--resources", type=_resources, default=None, metavar="NAME=N[,NAME=N]",
                   help="Dask worker resources each model's task needs (e.g. ascendir=1, for "
                   "workers started with --resources ascendir=1); needs --scheduler")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", metavar="DIR",
                       help="the compile cache (default: $ASCENDIR_CACHE_DIR or the user "
                       "cache directory)")
    cache.add_argument("--no-cache", action="store_true", help="do not use the compile cache")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed model")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="show a progress bar on stderr when it is a terminal")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("--quiet", "-q", action="store_true", help="no summary table")
    talk.add_argument("--verbose", "-v", action="store_true",
                      help="also print each model's report")
    p.set_defaults(func=run_compile)
    return p


def expand_models(items: list[str]) -> list[str]:
    """Model paths from the command line: files as given, directories as the model files in
    them (by suffix, sorted), glob patterns as their sorted matches (a pattern matching
    nothing is a usage error; a missing file, or a directory without models, fails as that
    model)."""
    out: list[str] = []
    for item in items:
        if os.path.isdir(item):
            found = sorted(os.path.join(item, f) for f in os.listdir(item)
                           if format_of_suffix(f) is not None
                           and os.path.isfile(os.path.join(item, f)))
            # A directory holding no model fails as that model ("is a directory").
            out.extend(found or [item])
        elif glob.has_magic(item) and not os.path.exists(item):
            found = sorted(glob.glob(item, recursive=True))
            if not found:
                raise UsageError("compile", f"no model matches '{item}'")
            out.extend(found)
        else:
            out.append(item)
    if not out:
        raise UsageError("compile", "no model files found")
    return out


def _client(args: argparse.Namespace) -> Any:
    if not args.scheduler and not args.scheduler_file:
        return None
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("compile", "--scheduler needs Dask: pip install 'ascendir[dask]'"
                         ) from None
    if args.scheduler_file:
        return Client(scheduler_file=args.scheduler_file)
    if args.scheduler == "auto":
        import dask

        address = dask.config.get("scheduler-address", None) or os.environ.get(
            "DASK_SCHEDULER_ADDRESS")
        if not address:
            raise UsageError("compile", "--scheduler auto: no Dask scheduler is configured "
                             "(set DASK_SCHEDULER_ADDRESS)")
        return Client(address)
    return Client(args.scheduler)


def _stems(paths: list[str]) -> list[str]:
    """Output names: the file stems, made unique with a counter."""
    seen: dict[str, int] = {}
    out = []
    for p in paths:
        stem = os.path.splitext(os.path.basename(p))[0] or "model"
        n = seen.get(stem, 0)
        seen[stem] = n + 1
        out.append(stem if n == 0 else f"{stem}_{n}")
    return out


def run_compile(args: argparse.Namespace) -> int:
    """Compile every model; exit 0 when all compiled, 1 when some failed."""
    bad = [e for e in args.emit if e not in EMITS]
    if bad:
        raise UsageError("compile", f"unknown --emit kind(s) {', '.join(bad)} "
                         f"(choose from {', '.join(EMITS)})")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("compile", f"--jobs must be at least 1, not {args.jobs}")
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
    opts.to_json()  # a bad option is a usage error before any model is read
    if args.resources is not None and not (args.scheduler or args.scheduler_file):
        raise UsageError("compile", "--resources needs --scheduler or --scheduler-file "
                         "(worker resources are a Dask feature)")
    paths = expand_models(args.models)
    stems = _stems(paths)
    client = _client(args)
    isatty = getattr(sys.stderr, "isatty", None)
    bar = None
    if args.progress and isatty is not None and isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(paths), unit="model", file=sys.stderr, desc="ascendir: compiling")

    def say(line: str) -> None:
        if bar is not None:
            bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    rows: list[tuple[str, ...] | None] = [None] * len(paths)
    failed = 0
    t0 = time.perf_counter()
    try:
        results = compile_iter(
            paths, options=opts, jobs=args.jobs, executor=client,
            on_error="collect", cache="off" if args.no_cache else "readwrite",
            cache_dir=args.cache_dir, dump_stages=args.dump_stages, resources=args.resources)
        for i, r in results:
            path, stem = paths[i], stems[i]
            if r.error is None:
                try:
                    out = os.path.join(args.out, stem) if len(paths) > 1 else args.out
                    r.value.save(out, args.emit, name=stem)
                    if args.verify:
                        vrep = verify(r.value)
                        say(f"ascendir: {path}: {vrep.summary()}")
                        if not vrep.ok:
                            for line in vrep.failure_lines():
                                say(f"ascendir: {path}: verify: {line}")
                            raise CompileError(
                                f"kernels do not verify ({vrep.summary()})", stage="verify",
                                node=None, reason="kernels do not verify")
                except (AscendIRError, OSError) as e:
                    r.error = e  # type: ignore[assignment]
            if r.error is not None:
                failed += 1
                say(f"ascendir: error: {path}: {_message(r.error, path)}")
                rows[i] = (stem, "-", "-", "-", "-", "-", "failed")
            else:
                opset_note = opset_warning(r.value.graph)
                if opset_note is not None:
                    say(f"ascendir: warning: {path}: {opset_note}")
                rep = r.value.report
                if args.report == "json" or args.verbose:
                    text = rep.to_json() if args.report == "json" else rep.text()
                    if bar is not None:
                        bar.write(text)
                    else:
                        print(text)
                secs = float(rep.data.get("total_seconds", 0.0))
                rows[i] = (stem, str(rep.nodes_before), str(rep.nodes_after),
                           str(len(r.value.kernels)), str(rep.bytes_saved),
                           f"{secs * 1e3:.0f} ms", "cached" if r.cached else "ok")
            if bar is not None:
                bar.update(1)
                bar.set_postfix(failed=failed, refresh=True)
            if failed and args.fail_fast:
                results.close()
                break
    finally:
        if bar is not None:
            bar.close()
        if client is not None:
            client.close()
    wall = time.perf_counter() - t0
    if not args.quiet:
        head = ("model", "nodes before", "nodes after", "kernels", "bytes saved", "time",
                "status")
        done = [row if row is not None else (stems[i], "-", "-", "-", "-", "-", "skipped")
                for i, row in enumerate(rows)]
        widths = [max(len(h), *(len(row[k]) for row in done)) for k, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
        for row in done:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        ok = sum(1 for row in rows if row is not None and row[-1] != "failed")
        print(f"{ok} compiled, {failed} failed, {len(paths) - ok - failed} skipped "
              f"in {wall:.1f} s")
    return 1 if failed else 0
