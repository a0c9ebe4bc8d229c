"""Graph edits from Python: atomic, lossless, with GE's semantics."""

from __future__ import annotations

import pytest

import ascendir as air
from support.graphs import plain_op


def _od(name: str, ty: str, n_in: int = 1, n_out: int = 1, **attrs) -> air.OpDesc:
    od = air.OpDesc(name, ty, attrs=attrs or None)
    for i in range(n_in):
        od.add_input(f"x{i}", air.TensorDesc([1, 4], air.float32))
    for i in range(n_out):
        od.add_output(f"y{i}", air.TensorDesc([1, 4], air.float32))
    return od


def star() -> air.Graph:
    """a(Data) -> n.0, w(Const) -> n.1, x -ctrl-> n; n -> b, n -> c, n -ctrl-> y."""
    g = air.Graph("star")
    a = g.add_input("a")
    w = plain_op(g, "w", "Const")
    w.attrs["value"] = air.Tensor(air.TensorDesc([1, 4], air.float32), bytes(16))
    x = plain_op(g, "x", "NoOp", outputs=0)
    n = plain_op(g, "n", "Mul", [a, w])
    plain_op(g, "b", "Relu", [n])
    plain_op(g, "c", "Relu", [n])
    y = plain_op(g, "y", "NoOp", outputs=0)
    x.out_control_anchor.link_to(n.in_control_anchor)
    n.out_control_anchor.link_to(y.in_control_anchor)
    return g


def ctrl_out(g: air.Graph, name: str) -> list[str]:
    return sorted(n.name for n in g.node(name).out_control_nodes)


def test_isolate_relinks_and_full_connects():
    g = star()
    n = g.node("n")
    assert g.isolate_node(n) is None
    assert g.node("b").in_data_anchor(0).peer.node.name == "a"
    assert g.node("c").in_data_anchor(0).peer.node.name == "a"
    assert ctrl_out(g, "a") == ["y"]
    assert ctrl_out(g, "x") == ["b", "c", "y"]
    assert ctrl_out(g, "w") == ["b", "c", "y"]
    assert n.in_nodes == [] and n.out_nodes == []
    assert "n" in g
    # the isolated node stays, its required inputs now unconnected (GE Node::Verify)
    assert g.problems() == [
        f"graph 'star': node 'n' (Mul) input {i} 'x{i}' is required but not connected"
        for i in range(2)
    ]
    g.remove_node(n)
    g.validate()


def test_isolate_io_map_errors_change_nothing():
    g = star()
    before = g.dump()
    with pytest.raises(air.InvalidArgumentError):
        g.isolate_node(g.node("n"), [0, 0])
    with pytest.raises(air.InvalidArgumentError):
        g.isolate_node(g.node("n"), [5])
    assert g.dump() == before
    g.isolate_node(g.node("n"), [-1])
    assert g.node("b").in_data_anchor(0).peer is None
    assert ctrl_out(g, "a") == ["b", "c", "y"]


def test_isolate_hub_above_a_thousand_pairs():
    g = air.Graph("hub")
    n = plain_op(g, "n", "NoOp", outputs=0)
    for i in range(40):
        p = plain_op(g, f"p{i}", "NoOp", outputs=0)
        p.out_control_anchor.link_to(n.in_control_anchor)
    for i in range(30):
        c = plain_op(g, f"c{i}", "NoOp", outputs=0)
        n.out_control_anchor.link_to(c.in_control_anchor)
    hub = g.isolate_node(n)
    assert hub is not None and hub.name == "n_noop" and hub.type == "NoOp"
    assert len(hub.in_control_nodes) == 40 and len(hub.out_control_nodes) == 30


def test_remove_node_drops_orphan_const_and_goes_stale():
    g = star()
    n = g.node("n")
    assert g.remove_node(n) == ["w"]
    assert "n" not in g and "w" not in g
    with pytest.raises(air.StaleHandleError):
        _ = n.name
    with pytest.raises(air.StaleHandleError):
        g.remove_node(n)
    assert ctrl_out(g, "x") == ["b", "c", "y"]
    g.validate()


def test_foreign_node_is_refused_before_anything_changes():
    g, h = star(), star()
    before = g.dump()
    with pytest.raises(air.ForeignHandleError):
        g.remove_node(h.node("n"))
    with pytest.raises(air.ForeignHandleError):
        g.isolate_node(h.node("n"))
    assert g.dump() == before


def test_replace_node():
    g = star()
    before = g.dump()
    with pytest.raises(air.AscendIRError):
        g.replace_node(g.node("n"), _od("n2", "Relu", 1, 1))
    with pytest.raises(air.DuplicateNameError):
        g.replace_node(g.node("n"), _od("b", "Mul", 2, 1))
    assert g.dump() == before
    od = _od("n", "MulV2", 2, 1)
    new = g.replace_node(g.node("n"), od)
    assert new.type == "MulV2" and od.name == "n"
    assert g.node("b").in_data_anchor(0).peer.node == new
    assert [p.name for p in new.in_data_nodes] == ["a", "w"]
    assert [n.name for n in g.nodes] == ["a", "w", "x", "n", "b", "c", "y"]
    g.validate()


def test_insertions_and_move_outputs():
    g = star()
    n, b, c = g.node("n"), g.node("b"), g.node("c")
    cast = g.insert_between(n.out_data_anchor(0), c.in_data_anchor(0), _od("cast", "Cast"))
    assert c.in_data_anchor(0).peer.node == cast
    assert [x.name for x in g.nodes].index("cast") == [x.name for x in g.nodes].index("n") + 1
    ident = g.insert_after(n, _od("ident", "Identity"))
    assert b.in_data_anchor(0).peer.node == ident
    assert [x.name for x in ident.out_control_nodes] == ["y"]
    pre = g.insert_before(b.in_data_anchor(0), _od("pre", "Cast"))
    assert b.in_data_anchor(0).peer.node == pre
    m = plain_op(g, "m", "Mul", [None, None])
    g.move_output_edges(ident, m)
    assert pre.in_data_anchor(0).peer.node == m
    with pytest.raises(air.InvalidArgumentError):
        g.move_output_edges(m, plain_op(g, "split", "Split", [None], outputs=2))
    front = g.add_node_front(_od("front", "NoOp", 0, 0))
    assert [x.name for x in g.nodes][:2] == ["a", "front"]
    after_b = g.insert_node(_od("tail", "NoOp", 0, 0), after=b)
    assert after_b.id == b.id
    with pytest.raises(air.InvalidArgumentError):
        g.insert_node(_od("bad", "NoOp", 0, 0))
    del front
    # m and split were made with open inputs
    assert g.problems() == [
        "graph 'star': node 'm' (Mul) input 0 'x0' is required but not connected",
        "graph 'star': node 'm' (Mul) input 1 'x1' is required but not connected",
        "graph 'star': node 'split' (Split) input 0 'x0' is required but not connected",
    ]


def test_fuse_nodes():
    g = air.Graph("fuse")
    d = g.add_input("d")
    a = plain_op(g, "a", "Relu", [d])
    b = plain_op(g, "b", "Relu", [a])
    c = plain_op(g, "c", "Relu", [b])
    a.attrs["_user_stream_label"] = "s1"
    b.attrs["_user_stream_label"] = "s1"
    b.attrs["_deterministic"] = "1"
    fused = g.fuse_nodes([b, a], [_od("ab", "Fused"), _od("ab2", "Cast")])
    assert [n.name for n in g.nodes] == ["d", "a", "ab", "ab2", "b", "c"]
    for f in fused:
        assert f.id == a.id
        assert f.attrs["_user_stream_label"] == "s1"
        assert f.attrs["_deterministic"] == "1"
    assert g.fusion_conflict([a, b]) is None
    reason = g.fusion_conflict([a, c])
    assert reason is not None and "_user_stream_label" in reason
    before = g.dump()
    with pytest.raises(air.InvalidArgumentError):
        g.fuse_nodes([a, c], [_od("f", "X")])
    with pytest.raises(air.InvalidArgumentError):
        g.fuse_nodes([b], [_od("f", "X", _deterministic="0")])
    assert g.dump() == before


def test_copy_is_deep_and_validate_reports_problems():
    g = star()
    h = g.copy()
    h.remove_node(h.node("n"))
    assert "n" in g and "n" not in h
    g.validate()
    assert g.problems() == []
    x, a = g.node("x"), g.node("a")
    g.node("y").out_control_anchor.link_to(x.in_control_anchor)
    x.out_control_anchor.link_to(g.node("y").in_control_anchor)
    with pytest.raises(air.ValidationError) as info:
        g.validate()
    assert any("cycle" in p for p in info.value.problems)
    del a
