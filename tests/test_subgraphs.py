"""Subgraphs from Python: registration on the root, slots, parent links, walk, removal."""

from __future__ import annotations

import pytest

import ascendir as air


def branch(name: str, op: str) -> air.Graph:
    b = air.Graph(name)
    d = b.add_input(f"{name}_in")
    r = b.add_op("Relu", [d], name=op)
    b.set_outputs([r])
    return b


def model() -> air.Graph:
    g = air.Graph("root")
    x = g.add_input("x")
    cond = g.add_op("If", [x], name="if")
    g.add_op("Relu", [cond], name="out")
    assert g.add_subgraph(branch("then", "t_op"), parent=cond, slot="then_branch") == "then_branch"
    assert g.add_subgraph(branch("else", "e_op"), parent=cond, slot="else_branch") == "else_branch"
    return g


def test_registration_and_parent_links():
    g = model()
    cond = g.node("if")
    assert cond.op_desc.subgraph_names == ["then", "else"]
    then = g.subgraph("then")
    assert then.name == "then"
    assert then.parent_graph.name == "root"
    assert then.parent_node == cond
    assert then.root_graph.name == "root"
    assert g.parent_graph is None and g.parent_node is None
    assert [s.name for s in g.subgraphs] == ["then", "else"]
    d = then.node("then_in")
    assert d.attrs["_parent_node_index"] == 0
    # Lookup by name works from any graph of the tree.
    assert then.subgraph("else").name == "else"
    with pytest.raises(KeyError):
        g.subgraph("nope")
    g.validate()


def test_moved_graph_becomes_a_view():
    g = air.Graph("root")
    x = g.add_input("x")
    cond = g.add_op("If", [x], name="if")
    body = branch("body", "b_op")
    g.add_subgraph(body, parent=cond, slot="then_branch")
    assert body.parent_node == cond
    body.add_op("Relu", [body.node("b_op")], name="extra")
    assert "extra" in g.subgraph("body")
    with pytest.raises(air.InvalidArgumentError):
        g.add_subgraph(body, parent=cond, slot="else_branch")


def test_bad_registrations_change_nothing():
    g = model()
    before = g.dump()
    with pytest.raises(air.DuplicateNameError):
        g.add_subgraph(air.Graph("then"), parent=g.node("out"), slot="s")
    with pytest.raises(air.InvalidArgumentError):
        g.add_subgraph(air.Graph("z"), parent=g.node("if"), slot="then_branch")
    other = model()
    with pytest.raises(air.ForeignHandleError):
        g.add_subgraph(air.Graph("z"), parent=other.node("if"), slot="s")
    assert g.dump() == before


def test_dynamic_slots_nested_walk_and_removal():
    g = model()
    out = g.node("out")
    assert g.add_subgraph(air.Graph("b0"), parent=out, slot="branches", dynamic=True) == "branches0"
    assert g.add_subgraph(air.Graph("b1"), parent=out, slot="branches", dynamic=True) == "branches1"
    b0 = g.subgraph("b0")
    k = b0.add_op("NoOp", [], name="k", outputs=0, allow_unregistered=True)
    deep = air.Graph("deep")
    deep.add_op("NoOp", [], name="deep_op", outputs=0, allow_unregistered=True)
    b0.add_subgraph(deep, parent=k, slot="body")
    assert deep.parent_graph.name == "b0"
    walk = [n.name for n in g.all_nodes()]
    assert walk == ["x", "if", "then_in", "t_op", "Node_Output", "else_in", "e_op",
                    "Node_Output", "out", "k", "deep_op"]
    assert [n.name for n in b0.all_nodes()] == ["k", "deep_op"]
    assert [s.name for s in b0.subgraphs] == ["deep"]
    g.validate()
    g.remove_subgraph("b0")
    with pytest.raises(KeyError):
        g.subgraph("deep")
    with pytest.raises(air.StaleHandleError):
        _ = len(b0)
    g.validate()


def test_remove_node_removes_its_subgraphs():
    g = model()
    g.remove_node(g.node("if"))
    assert g.subgraphs == []
    g.validate()


def test_sorting_a_subgraph_view():
    g = model()
    then = g.subgraph("then")
    order = then.topo_sort("bfs")
    assert order.names == ["then_in", "t_op", "Node_Output"]
    assert [n.id for n in then.nodes] == [0, 1, 2]
    assert all(n.graph.name == "then" for n in order)


def test_copy_of_subgraph_is_standalone():
    g = model()
    then = g.subgraph("then")
    c = then.copy()
    assert c.parent_graph is None
    c.add_op("NoOp", [], name="only_in_copy", outputs=0, allow_unregistered=True)
    assert "only_in_copy" not in then
