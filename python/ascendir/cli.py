"""The ``ascendir`` command line.

``ascendir demo`` builds a small ResNet-style block through the Python API, sorts it and
prints a readable summary; ``ascendir convert SRC DST`` converts between ONNX, GE ModelDef
(binary or text) and OM files; ``ascendir inspect FILE`` summarizes a model; ``ascendir
compile`` fuses vector regions into AscBackend kernels.

Exit codes: 0 success, 1 a file could not be processed (one line on stderr,
``ascendir: error: <file>: <message>``), 2 a usage error, 130 interrupted, 141 the reader of
the output went away (``ascendir inspect model.onnx | head``). ``--debug`` shows the
traceback of an error; ``python -m ascendir`` is the same command.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from . import Graph, Node, TensorDesc, float16
from ._cli_support import (
    EXIT_FAILURE,
    EXIT_USAGE,
    CommandError,
    Parser,
    UsageError,
    one_line,
)

__all__ = ["build_demo_graph", "build_parser", "main"]

EXIT_INTERRUPTED = 130
"""Interrupted with Ctrl-C (128 + SIGINT)."""
EXIT_BROKEN_PIPE = 141
"""The reader of the output closed it early (128 + SIGPIPE, as other Unix tools)."""


def build_demo_graph() -> Graph:
    """A ResNet basic block: two 3x3 convolutions with batch norm, a skip connection, ReLU."""
    import numpy as np

    g = Graph("resnet_block")
    x = g.add_input("x", TensorDesc([1, 64, 56, 56], float16, format="NCHW"))
    rng = np.random.default_rng(0)

    def conv_bn(src: Node, prefix: str, relu: bool) -> Node:
        w = g.add_const(f"{prefix}_w", rng.standard_normal((64, 64, 3, 3)).astype(np.float16))
        out_desc = TensorDesc([1, 64, 56, 56], float16, format="NCHW")
        conv = g.add_op(
            "Conv2D",
            [src, w],
            name=f"{prefix}_conv",
            input_names=["x", "filter"],
            outputs=["y"],
            output_descs=[out_desc],
            attrs={"strides": [1, 1, 1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1]},
        )
        params = [
            g.add_const(f"{prefix}_{p}", np.ones(64, np.float32))
            for p in ("scale", "offset", "mean", "variance")
        ]
        bn = g.add_op(
            "BatchNorm",
            [conv, *params],
            name=f"{prefix}_bn",
            input_names=["x", "scale", "offset", "mean", "variance"],
            outputs=["y"],
            output_descs=[out_desc],
            attrs={"epsilon": 1e-5, "is_training": False},
        )
        if not relu:
            return bn
        return g.add_op("Relu", [bn], name=f"{prefix}_relu", input_names=["x"],
                        outputs=["y"], output_descs=[out_desc])

    branch = conv_bn(conv_bn(x, "conv1", relu=True), "conv2", relu=False)
    out_desc = TensorDesc([1, 64, 56, 56], float16, format="NCHW")
    add = g.add_op("Add", [branch, x], name="skip_add", input_names=["x1", "x2"],
                   outputs=["y"], output_descs=[out_desc])
    relu = g.add_op("Relu", [add], name="out_relu", input_names=["x"], outputs=["y"],
                    output_descs=[out_desc])
    g.set_outputs([relu])
    return g


def _cmd_demo(args: argparse.Namespace) -> int:
    graph = build_demo_graph()
    graph.topo_sort(mode=args.mode)
    problems = graph.problems()
    from .onnx.cli_commands import summarize

    print(summarize(graph, order=True))
    if problems:
        print("invariant problems:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``ascendir`` argument parser with every sub-command."""
    from . import __version__

    parser = Parser(prog="ascendir", description=__doc__.splitlines()[0].rstrip("."),
                    epilog="Run 'ascendir COMMAND --help' for the options of a command.")
    parser.add_argument("--version", action="version", version=f"ascendir {__version__}",
                        help="print the version and exit")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="the command to run")
    demo = sub.add_parser("demo", help="build, sort and summarize a small ResNet block",
                          description="Build a ResNet basic block through the Python API, "
                          "sort it and print a summary.")
    demo.add_argument("--mode", default="dfs", choices=["bfs", "dfs", "rdfs", "stable_rdfs"],
                      help="topological sort order (default: dfs)")
    demo.set_defaults(func=_cmd_demo)
    from .onnx.cli_commands import add_convert_command, add_inspect_command

    add_convert_command(sub)
    add_inspect_command(sub)
    from .compiler.cli import add_compile_command

    add_compile_command(sub)
    from .dumps_cli import add_cycle_command, add_diff_command, add_dumps_command

    add_dumps_command(sub)
    add_diff_command(sub)
    add_cycle_command(sub)
    from .explorer.cli import add_view_command

    add_view_command(sub)
    for p in sub.choices.values():
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the full traceback of an error")
    return parser


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush is
    silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ascendir`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        debug = bool(getattr(args, "debug", False))
        code = int(args.func(args))
        sys.stdout.flush()
        return code
    except UsageError as e:
        hint = f"ascendir {e.command} --help" if e.command else "ascendir --help"
        where = f"{e.command}: " if e.command else ""
        print(f"ascendir: error: {where}{one_line(e.message)} (see '{hint}')", file=sys.stderr)
        return EXIT_USAGE
    except CommandError as e:
        if debug:
            traceback.print_exception(e.__cause__ or e)
        print(f"ascendir: error: {e.file}: {e.message}", file=sys.stderr)
        return EXIT_FAILURE
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("ascendir: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # a bug: still one line, the traceback with --debug
        if debug:
            traceback.print_exc()
        name = type(e).__name__
        print(f"ascendir: error: internal error ({name}: {one_line(str(e))}); "
              "run with --debug for the traceback", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
