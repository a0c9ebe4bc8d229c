"""The AscGraph handle classes: node, output and axis identity, equality and hashing; reads see
writes at once; a node made without a graph moves into one; graphs and their handles are
collected when unreachable; a graph in use by another call refuses a handle's write."""

from __future__ import annotations

import gc
import weakref

import pytest

from ascendir import asc
from ascendir.errors import AscendIRError, InvalidArgumentError, NotFoundError


def _graph() -> tuple[asc.HintGraph, asc.Axis, asc.Node, asc.Node]:
    g = asc.HintGraph("h")
    z = g.create_axis("z", g.create_size("s"))
    x = asc.ops.Data("x", g)
    a = asc.ops.Abs("a", g)
    a.x = x
    return g, z, x, a


def test_the_same_node_is_the_same_object() -> None:
    g, _, x, a = _graph()
    assert g.node("a") is a
    assert g.nodes == [x, a]
    assert a.input("x") == x.y
    assert a.input("x").node is x
    assert type(g.node("a")) is asc.ops.Abs and isinstance(a, asc.Node)


def test_outputs_and_axes_compare_and_hash_by_value() -> None:
    g, z, x, a = _graph()
    assert x.y == x.outputs[0] == x.output("y") == x.output(0)
    assert x.y != a.y and x.y != "y"
    d = {x.y: 1, a.y: 2}
    assert d[x.output(0)] == 1 and d[a.output("y")] == 2
    assert g.axis("z") == z == g.axes[0] and hash(g.axis(0)) == hash(z)
    other = asc.HintGraph("h")
    other.create_axis("z", 4)
    assert other.axis(0) != z
    assert repr(x.y) == "Output(x.y)" and repr(a) == "Abs('a')"
    assert repr(z) == "Axis(z, id=0, size=s)"


def test_reads_see_writes_through_every_handle() -> None:
    g, z, x, a = _graph()
    a.attr.sched.axis = [z]
    assert g.node("a").attr.sched.axis == [z.id]
    a.y.axis = [z]
    a.y.size = [z.size]
    assert g.node("a").outputs[0].axis == [0]
    assert g.node("a").y.size[0] == z.size
    mem = a.y.mem
    mem.reuse_id = 7
    assert a.y.mem.reuse_id == 7 and mem.reuse_id == 7
    assert a.y.mem.as_dict()["reuse_id"] == 7
    z.align = 8
    assert g.axis(0).align == 8
    with pytest.raises(AttributeError):
        _ = a.y.mem.no_such_field
    with pytest.raises(InvalidArgumentError):
        a.y.mem.no_such_field = 1


def test_a_node_made_alone_moves_into_a_graph() -> None:
    g, z, x, _ = _graph()
    b = asc.ops.Abs("b")
    assert b.graph is None
    b.x = x.y
    assert b.graph is g and g.node("b") is b and b.id == 2
    c = asc.ops.Abs("c")
    c.attr.sched.axis = [z]
    assert c.graph is g and c.attr.sched.axis == [0]
    lone1, lone2 = asc.ops.Abs("l1"), asc.ops.Abs("l2")
    with pytest.raises(InvalidArgumentError, match="neither node belongs to a graph"):
        lone2.x = lone1
    other = asc.HintGraph("other")
    o = asc.ops.Data("o", other)
    with pytest.raises(InvalidArgumentError, match="graph 'other'"):
        b.x = o


def test_ports_errors_and_plain_attributes() -> None:
    _, _, x, a = _graph()
    with pytest.raises(InvalidArgumentError, match="cannot be assigned"):
        a.y = x
    with pytest.raises(InvalidArgumentError, match="takes a node or an output"):
        a.x = 3
    with pytest.raises(NotFoundError):
        a.output("nope")
    with pytest.raises(NotFoundError):
        a.output(5)
    with pytest.raises(AttributeError, match="no attribute or port 'nope'"):
        _ = a.nope
    a.note = "kept"  # not a port: a plain Python attribute of the handle
    assert a.note == "kept"
    del a.attr  # GE scripts do this; a no-op
    assert a.attr.api.compute_type == "elewise"


def test_graphs_and_handles_are_collected() -> None:
    g, z, x, a = _graph()
    ref = weakref.ref(g)
    out = a.y
    del g, z, x, a, out
    gc.collect()
    assert ref() is None


def test_a_graph_in_use_refuses_a_handle_write() -> None:
    """A write through a handle while the engine graph is held by another write fails with an
    AscendIRError (the value below converts itself while the graph is held, and writes) and
    leaves the graph as it was."""
    g, _, _, a = _graph()

    class Reenter:
        def __index__(self) -> int:
            a.attr.sched.exec_order = 3  # a second write while the first holds the graph
            return 1

    before = g.debug_str()
    with pytest.raises(AscendIRError):
        a.y.que.depth = Reenter()
    assert g.debug_str() == before
