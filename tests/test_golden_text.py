"""Golden text: what the verifiers report and what the scheduler builds, as reviewed files.

Each case prints a result as text and compares it with a file under ``tests/golden/``:

- ``tests/golden/verifier/*.txt`` — the problems of the IR verifier (``Graph.problems()``, the
  same list ``Graph.validate()`` raises in ``ValidationError.problems``) and of the AscGraph
  checks (``problems()`` / ``hint_problems()``) on graphs broken on purpose;
- ``tests/golden/impl_graphs/*.txt`` — ``debug_str()`` of every ImplGraph the scheduler makes
  from a few HintGraphs (elementwise, broadcast, reduction, a softmax chain).

After an intended change, regenerate them with one command and review the diff::

    ASCENDIR_UPDATE_GOLDEN=1 python -m pytest tests/test_golden_text.py
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import ascendir as air
from ascendir.asc.schedule import schedule
from support.asc_graphs import broken_views_graph, implicit_broadcast_graph
from support.golden_files import assert_golden
from support.graphs import plain_op
from support.hintgraph import F16, F32, HB


def _problems_text(problems: list[str]) -> str:
    assert problems, "a broken graph must report at least one problem"
    return "".join(f"{p}\n" for p in problems)


# ----- the IR verifier ---------------------------------------------------------------------


def _ir_open_inputs() -> air.Graph:
    """Required inputs left unconnected, on a plain op and on a registered one."""
    g = air.Graph("open_inputs")
    a = g.add_input("a")
    plain_op(g, "mul", "Mul", [a, None])
    plain_op(g, "split", "Split", [None])
    relu = g.add_op("Relu", [a], name="relu")
    relu.in_data_anchor(0).unlink_all()
    g.set_outputs([relu])
    return g


def _ir_control_cycle() -> air.Graph:
    """A data chain closed into a cycle by two control edges."""
    g = air.Graph("control_cycle")
    a = g.add_input("a")
    b = g.add_op("Abs", [a], name="b")
    c = g.add_op("Neg", [b], name="c")
    g.set_outputs([c])
    c.out_control_anchor.link_to(g.add_node(air.OpDesc("gate", "NoOp")).in_control_anchor)
    g.node("gate").out_control_anchor.link_to(b.in_control_anchor)
    return g


def _ir_subgraph_tree() -> air.Graph:
    """A subgraph body whose op is left with an open input, checked from the root."""
    root = air.Graph("root")
    x = root.add_input("x")
    call = plain_op(root, "call", "PartitionedCall", [x])
    root.set_outputs([call])
    body = air.Graph("body")
    d = body.add_input("d")
    plain_op(body, "sub", "Sub", [d, None])
    root.add_subgraph(body, parent=call, slot="f")
    return root


IR_CASES: dict[str, Callable[[], air.Graph]] = {
    "ir_open_inputs": _ir_open_inputs,
    "ir_control_cycle": _ir_control_cycle,
    "ir_subgraph_tree": _ir_subgraph_tree,
}


@pytest.mark.parametrize("case", sorted(IR_CASES))
def test_ir_verifier_problems_golden(case: str) -> None:
    g = IR_CASES[case]()
    problems = g.problems()
    with pytest.raises(air.ValidationError) as info:
        g.validate()
    assert info.value.problems == problems
    assert_golden(f"verifier/{case}.txt", _problems_text(problems))


# ----- the AscGraph checks -------------------------------------------------------------------


ASC_CASES: dict[str, Callable[[], list[str]]] = {
    "asc_broken_views": lambda: broken_views_graph("broken_views").problems(),
    "asc_implicit_broadcast": (
        lambda: implicit_broadcast_graph("implicit_broadcast").hint_problems()
    ),
}


@pytest.mark.parametrize("case", sorted(ASC_CASES))
def test_asc_check_problems_golden(case: str) -> None:
    assert_golden(f"verifier/{case}.txt", _problems_text(ASC_CASES[case]()))


# ----- scheduled ImplGraphs -------------------------------------------------------------------


def _abs_2d() -> HB:
    b = HB("AbsTwoAxes", ["s0", "s1"], F16)
    b.store(b.op("Abs", b.load()))
    return b


def _broadcast_add() -> HB:
    b = HB("BroadcastAdd", ["s0", "s1"], F32)
    x = b.load()
    row = b.load(reps=[1, b.sizes[1]], strides=[0, 1])
    b.store(b.op("Add", x, b.broadcast(row, 0)))
    return b


def _row_sum() -> HB:
    b = HB("RowSum", ["s0", "s1"], F32)
    b.store(b.reduce("Sum", b.op("Exp", b.load()), [1]))
    return b


def _softmax() -> HB:
    b = HB("Softmax", ["s0", "s1"], F32)
    x = b.load()
    m = b.broadcast(b.reduce("Max", x, [1]), 1)
    e = b.op("Exp", b.op("Sub", x, m))
    s = b.broadcast(b.reduce("Sum", e, [1]), 1)
    b.store(b.op("Div", e, s))
    return b


SCHEDULE_CASES: dict[str, Callable[[], HB]] = {
    "abs_two_axes": _abs_2d,
    "broadcast_add": _broadcast_add,
    "row_sum": _row_sum,
    "softmax": _softmax,
}


@pytest.mark.parametrize("case", sorted(SCHEDULE_CASES))
def test_scheduled_impl_graphs_golden(case: str) -> None:
    hint = SCHEDULE_CASES[case]().g
    assert hint.problems() == []
    impls = schedule(hint)
    assert impls, "the scheduler made no ImplGraph"
    for impl in impls:
        assert impl.problems() == [], impl.name
    text = "".join(f"=== {impl.name} (tiling key {impl.tiling_key})\n{impl.debug_str()}\n"
                   for impl in impls)
    # The same HintGraph schedules to the same text on every call.
    again = "".join(f"=== {impl.name} (tiling key {impl.tiling_key})\n{impl.debug_str()}\n"
                    for impl in schedule(SCHEDULE_CASES[case]().g))
    assert again == text
    assert_golden(f"impl_graphs/{case}.txt", text)
