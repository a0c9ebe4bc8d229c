"""HintGraphs with a defect for the checks and the text printer to report."""

from __future__ import annotations

from ascendir import asc


def broken_views_graph(name: str = "g") -> asc.HintGraph:
    """An unconnected input, a view with mismatched lengths, a queue without its binding ."""
    g = asc.HintGraph(name)
    a = g.create_axis("z0", g.create_size("s0"))
    x = asc.ops.Data("x", g)
    x.y.contiguous = [a]
    ab = asc.ops.Abs("abs", g)
    ab.attr.sched.axis = [a]
    ab.y.axis = [a]
    ab.y.mem.alloc_type = "queue"
    return g


def implicit_broadcast_graph(name: str = "g") -> asc.HintGraph:
    """A HintGraph that broadcasts a Load's size-1 axis without a Broadcast node."""
    g = asc.HintGraph(name)
    z0 = g.create_axis("z0", g.create_size("s0"))
    z1 = g.create_axis("z1", g.create_size("s1"))
    x = asc.ops.Data("x", g)
    load = asc.ops.Load("load", g)
    load.x = x
    load.attr.sched.axis = [z0, z1]
    load.y.axis = [z0, z1]
    load.y.size = [1, g.axis("z1").size]
    load.y.strides = [0, 1]
    ab = asc.ops.Abs("abs", g)
    ab.x = load
    ab.attr.sched.axis = [z0, z1]
    ab.y.contiguous = [z0, z1]
    return g
