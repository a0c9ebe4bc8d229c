"""The corpus table in the terminal summary."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    from test_zoo import STAGES, TABLE

    runs = config.stash.get(TABLE, {})
    if not runs:
        return
    terminalreporter.section("real-architecture corpus: stage by stage")
    head = f"{'model':18s} {'family':18s} " + " ".join(f"{s[:14]:14s}" for s in STAGES)
    terminalreporter.write_line(head + "  nodes kernels import-s compile-s")
    for name, run in sorted(runs.items()):
        cells = " ".join(f"{('ok' if run.outcome.get(s) == 'ok' else 'FAIL')[:14]:14s}"
                         for s in STAGES)
        f = run.figures
        terminalreporter.write_line(
            f"{name:18s} {run.entry.family:18s} {cells}  {f.get('nodes', '-')!s:>5} "
            f"{f.get('kernels', '-')!s:>7} {f.get('import s', 0):8.3f} "
            f"{f.get('compile s', 0):9.3f}")
    totals = {s: sum(r.seconds.get(s, 0.0) for r in runs.values()) for s in STAGES}
    terminalreporter.write_line("seconds per stage over the corpus: " + ", ".join(
        f"{s} {v:.1f}" for s, v in totals.items()))
    for name, run in sorted(runs.items()):
        for s, o in run.outcome.items():
            if o != "ok":
                terminalreporter.write_line(f"  {name} / {s}: {o}")
