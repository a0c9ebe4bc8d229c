"""The corpus table in the terminal summary, gathered from the test reports (whole under
``pytest -n``, where the tests run in worker processes)."""

from __future__ import annotations

from zoo_table import KEY, STAGES

_ROWS: dict[str, dict] = {}


def pytest_runtest_logreport(report) -> None:
    if report.when != "call":
        return
    for key, value in getattr(report, "user_properties", ()):
        if key == KEY:
            _ROWS[value["name"]] = value


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    if not _ROWS:
        return
    terminalreporter.section("real-architecture corpus: stage by stage")
    head = f"{'model':18s} {'family':18s} " + " ".join(f"{s[:14]:14s}" for s in STAGES)
    terminalreporter.write_line(head + "  nodes kernels import-s compile-s")
    for name, r in sorted(_ROWS.items()):
        cells = " ".join(f"{('ok' if r['outcome'].get(s) == 'ok' else 'FAIL'):14s}"
                         for s in STAGES)
        f = r["figures"]
        terminalreporter.write_line(
            f"{name:18s} {r['family']:18s} {cells}  {f.get('nodes', '-')!s:>5} "
            f"{f.get('kernels', '-')!s:>7} {f.get('import s', 0):8.3f} "
            f"{f.get('compile s', 0):9.3f}")
    totals = {s: sum(r["seconds"].get(s, 0.0) for r in _ROWS.values()) for s in STAGES}
    terminalreporter.write_line("seconds per stage over the corpus: " + ", ".join(
        f"{s} {v:.1f}" for s, v in totals.items()))
    for name, r in sorted(_ROWS.items()):
        for s, o in r["outcome"].items():
            if o != "ok":
                terminalreporter.write_line(f"  {name} / {s}: {o}")
