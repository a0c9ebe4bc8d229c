"""Values and uses (the pass-writing layer over the anchors): ``node.outputs[i]`` /
``node.inputs[i]``, ``Value.uses()`` in link order, ``replace_all_uses_with`` all or nothing,
and the stale-handle rules of nodes."""

from __future__ import annotations

import numpy as np
import pytest

import ascendir as air

F32 = air.TensorDesc([2, 3], air.float32)


def _graph() -> tuple[air.Graph, dict[str, air.Node]]:
    g = air.Graph("g")
    x = g.add_input("x", F32)
    a = g.add_op("Relu", [x], name="a")
    b = g.add_op("Abs", [a], name="b")
    c = g.add_op("Add", [a, a], name="c")
    g.set_outputs([b, c])
    return g, {"x": x, "a": a, "b": b, "c": c}


def test_outputs_inputs_and_uses_in_link_order() -> None:
    g, n = _graph()
    (v,) = n["a"].outputs
    assert isinstance(v, air.Value) and v.index == 0 and v.producer() == n["a"]
    assert n["c"].inputs == [v, v] and n["x"].inputs == [None]  # a Data's input is unlinked
    uses = v.uses()
    assert [(u.node.name, u.index) for u in uses] == [("b", 0), ("c", 0), ("c", 1)]
    node, index = uses[0]
    assert (node, index) == (n["b"], 0) and uses[0] == v.uses()[0] != uses[1]
    # The uses are the anchors' peers, in the same order.
    peers = n["a"].out_data_anchor(0).peers
    assert [(p.node.name, p.index) for p in peers] == [(u.node.name, u.index) for u in uses]
    assert v.desc.shape == (2, 3)
    # A value is a producer wherever one is taken.
    e = g.add_op("Exp", [v], name="e")
    assert e.inputs == [v] and len(v.uses()) == 4


def test_replace_all_uses_moves_every_use_and_the_graph_outputs() -> None:
    g, n = _graph()
    x = n["x"]
    neg = g.add_op("Neg", [x], name="neg")
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)}
    assert n["a"].outputs[0].replace_all_uses_with(neg.outputs[0]) == 3
    assert n["a"].outputs[0].uses() == []
    assert [u.node.name for u in neg.outputs[0].uses()] == ["b", "c", "c"]
    out = air.evaluate(g, feeds)
    np.testing.assert_allclose(out["b"], np.abs(-feeds["x"]))
    np.testing.assert_allclose(out["c"], -2 * feeds["x"])
    # A graph output naming the value follows it.
    h = air.Graph("h")
    y = h.add_input("y", F32)
    r = h.add_op("Relu", [y], name="r")
    h.set_outputs([r])
    s = h.add_op("Sigmoid", [y], name="s")
    r.outputs[0].replace_all_uses_with(s)
    assert [(o.name, i) for o, i in h.outputs] == [("s", 0)]
    assert h.problems() == []


def test_a_failed_replacement_changes_nothing() -> None:
    g, n = _graph()
    before = g.to_bytes()
    # b reads a: moving a's uses to b would make b read itself.
    with pytest.raises(air.InvalidArgumentError, match="cycle"):
        n["a"].outputs[0].replace_all_uses_with(n["b"].outputs[0])
    other = air.Graph("other")
    z = other.add_op("Relu", [other.add_input("z_in", F32)], name="z")
    with pytest.raises(air.ForeignHandleError):
        n["a"].outputs[0].replace_all_uses_with(z.outputs[0])
    with pytest.raises(air.InvalidArgumentError):
        n["a"].outputs[0].replace_all_uses_with(n["b"].out_control_anchor)
    assert g.to_bytes() == before


def test_node_replace_all_uses_with_is_all_or_nothing_over_its_outputs() -> None:
    g = air.Graph("g")
    x = g.add_input("x", air.TensorDesc([4, 6], air.float32))
    axis = g.add_const("axis", np.array(1, np.int32))
    sp = g.add_op("Split", [axis, x], name="sp", attrs={"num_split": 2})
    l0 = g.add_op("Relu", [sp.outputs[0]], name="l0")
    l1 = g.add_op("Abs", [sp.outputs[1]], name="l1")
    g.set_outputs([l0, l1])
    other = g.add_op("Split", [axis, x], name="other", attrs={"num_split": 2})
    assert sp.replace_all_uses_with(other) == 2
    assert l0.inputs == [other.outputs[0]] and l1.inputs == [other.outputs[1]]
    # The second output's move makes a cycle: the first output's move is undone too.
    bad = g.add_op("Split", [axis, l1], name="bad", attrs={"num_split": 2})
    before = g.to_bytes()
    with pytest.raises(air.InvalidArgumentError, match="cycle"):
        other.replace_all_uses_with(bad)
    assert g.to_bytes() == before
    with pytest.raises(air.InvalidArgumentError, match="outputs"):
        other.replace_all_uses_with(l0)


def test_values_go_stale_with_their_producer() -> None:
    g, n = _graph()
    v = n["b"].outputs[0]
    w = n["a"].outputs[0]
    g.remove_node(n["b"])
    for call in (v.uses, v.producer, lambda: v.desc,
                 lambda: v.replace_all_uses_with(w), lambda: w.replace_all_uses_with(v)):
        with pytest.raises(air.StaleHandleError):
            call()
    assert "stale" in repr(v)


def test_graph_outputs_follow_the_netoutput_when_their_node_is_removed() -> None:
    g = air.Graph("g")
    x = g.add_input("x", F32)
    a = g.add_op("Relu", [x], name="a")
    b = g.add_op("Abs", [a], name="b")
    g.set_outputs([b])
    g.remove_node(b)  # the NetOutput now reads a; so do the graph outputs
    assert [(n.name, i) for n, i in g.outputs] == [("a", 0)]
    assert g.problems() == []
    feeds = {"x": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)}
    np.testing.assert_array_equal(next(iter(air.evaluate(g, feeds).values())),
                                  np.maximum(feeds["x"], 0))
    # A disagreement between the two is a problem.
    h = air.Graph("h")
    y = h.add_input("y", F32)
    r, s = h.add_op("Relu", [y], name="r"), h.add_op("Abs", [y], name="s")
    h.set_outputs([r])
    net = next(n for n in h.nodes if n.type == "NetOutput")
    net.in_data_anchor(0).unlink(r.out_data_anchor(0))
    s.out_data_anchor(0).link_to(net.in_data_anchor(0))
    assert any("are not what" in p for p in h.problems()), h.problems()


def test_remove_a_set_dead_code_and_bypass() -> None:
    g, n = _graph()
    one = g.add_const("one", np.ones((2, 3), np.float32))
    dead = g.add_op("Mul", [n["a"], one], name="dead")
    g.add_op("Exp", [dead], name="dead2")
    before = g.to_bytes()
    with pytest.raises(air.InvalidArgumentError, match="read by 'b'"):
        g.remove([n["a"], dead])
    with pytest.raises(air.InvalidArgumentError, match="read by 'Node_Output'"):
        g.remove([n["b"]])
    assert g.to_bytes() == before
    assert g.eliminate_dead_code() == ["one", "dead", "dead2"]
    with pytest.raises(air.StaleHandleError):
        dead.name  # noqa: B018
    # Bypass a by its input: b and c read x.
    g.bypass(n["a"])
    assert [u.node.name for u in n["x"].outputs[0].uses()] == ["b", "c", "c"]
    feeds = {"x": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)}
    out = air.evaluate(g, feeds)
    np.testing.assert_array_equal(out["b"], np.abs(feeds["x"]))
    assert g.problems() == []
    assert g.remove([n["c"], n["b"]], safe=False) == ["c", "b"]
    assert g.outputs == []


def test_dead_code_in_a_subgraph_takes_the_subgraphs_below() -> None:
    g = air.Graph("root")
    x = g.add_input("x", air.TensorDesc([], air.DataType.BOOL))
    if_node = g.add_op("If", [x], name="if")
    body = air.Graph("then")
    body.set_outputs([body.add_op("Relu", [body.add_input("t_in")], name="t_relu")])
    g.add_subgraph(body, parent=if_node, slot="then_branch")
    keep = g.add_op("Abs", [g.add_input("y", F32)], name="keep")
    g.set_outputs([keep])
    assert g.eliminate_dead_code() == ["if"]
    assert g.subgraphs == [] and g.problems() == []
