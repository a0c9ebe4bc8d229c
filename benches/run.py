"""Run the peer benchmarks and print one table.

    python benches/run.py [--quick] [--only NAME[,NAME...]]

Each ``benches/bench_<name>.py`` exposes ``run(quick: bool) -> list[dict]``; a row has ``name``,
``ours_s`` and, per peer, ``peer`` / ``peer_s`` / ``ratio`` (peer time / our time: > 1 means we
are faster), plus optional ``note``. Results go to ``benches/results.json``.

Every bench runs in a fresh interpreter: the gigabytes one bench allocates and frees leave the
allocators of the process (ours and Python's) in states that would otherwise be charged to the
benches after it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--only", default="", help="comma-separated bench names")
    parser.add_argument("--markdown", default="", help="also write the table to this file")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    if args.child:
        # One bench, rows as JSON on stdout (see `_run_isolated`).
        module = importlib.import_module(f"bench_{args.child}")
        print(json.dumps(module.run(args.quick)))
        return 0
    names = sorted(p.stem[len("bench_"):] for p in HERE.glob("bench_*.py"))
    if args.only:
        wanted = set(args.only.split(","))
        names = [n for n in names if n in wanted]
    rows = []
    for name in names:
        start = time.perf_counter()
        got = _run_isolated(name, args.quick)
        for row in got:
            row.setdefault("bench", name)
        rows.extend(got)
        print(f"[{name}] {len(got)} rows in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    header = f"{'benchmark':<46} {'ours':>11} {'peer':<28} {'peer time':>11} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    for row in rows:
        ratio = row.get("ratio")
        print(f"{row['name']:<46} {_fmt(row.get('ours_s')):>11} {row.get('peer', ''):<28} "
              f"{_fmt(row.get('peer_s')):>11} {'' if ratio is None else f'{ratio:.2f}x':>8}"
              f"  {row.get('note', '')}")
    out = {"machine": platform.platform(), "python": sys.version.split()[0],
           "quick": args.quick, "rows": rows}
    (HERE / "results.json").write_text(json.dumps(out, indent=2))
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, argv if argv is not None else sys.argv[1:]))
    return 0


def _run_isolated(name: str, quick: bool) -> list[dict]:
    """The rows of bench ``name``, run in a fresh interpreter; a broken bench is reported as a
    row and the others still run."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    if quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        note = lines[-1] if lines else f"exit {proc.returncode}"
        return [{"name": f"{name}: failed", "note": note}]
    sys.stderr.write(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def markdown(rows: list[dict], argv: list[str]) -> str:
    """The results as a markdown table (ratio = peer time / our time; > 1: we are faster)."""
    lines = [
        "| benchmark | ours | peer | peer time | ratio | note |",
        "|---|---:|---|---:|---:|---|",
    ]
    for row in rows:
        ratio = row.get("ratio")
        lines.append(
            f"| {row['name']} | {_fmt(row.get('ours_s'))} | {row.get('peer', '')} | "
            f"{_fmt(row.get('peer_s'))} | {'' if ratio is None else f'{ratio:.2f}x'} | "
            f"{row.get('note', '')} |"
        )
    command = " ".join(["python benches/run.py", *argv])
    return (f"Command: `{command}` on {platform.platform()}, Python {sys.version.split()[0]}\n\n"
            + "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
