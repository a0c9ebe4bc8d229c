import pytest

import ascendir as air


def make(td):
    g = air.Graph("g")
    nodes = {}
    for name in ("a", "b", "c", "d"):
        od = air.OpDesc(name, "Op")
        od.add_input("x", td)
        od.add_output("y", td)
        nodes[name] = g.add_node(od)
    return g, nodes


def test_in_data_takes_one_peer(td):
    g, n = make(td)
    a_out, b_in = n["a"].out_data_anchor(0), n["b"].in_data_anchor(0)
    a_out.link_to(b_in)
    before = g.dump()
    with pytest.raises(air.LinkError):
        n["c"].out_data_anchor(0).link_to(b_in)
    with pytest.raises(air.LinkError):
        a_out.link_to(b_in)  # even the same source
    assert g.dump() == before
    assert b_in.peer == a_out and b_in.peers == [a_out]


def test_fan_out_keeps_link_order(td):
    g, n = make(td)
    out = n["a"].out_data_anchor(0)
    for name in ("d", "b", "c"):
        out.link_to(n[name].in_data_anchor("x"))
    assert [p.node.name for p in out.peers] == ["d", "b", "c"]
    assert [x.name for x in n["a"].out_data_nodes] == ["d", "b", "c"]


def test_control_links_and_mixed_kinds(td):
    g, n = make(td)
    n["a"].out_control_anchor.link_to(n["b"].in_control_anchor)
    n["a"].out_control_anchor.link_to(n["b"].in_control_anchor)  # GE keeps duplicates
    assert len(n["b"].in_control_anchor.peers) == 2
    n["c"].out_data_anchor(0).link_to(n["d"].in_control_anchor)  # data -> control
    assert n["d"].in_control_nodes == [n["c"]]
    assert n["d"].in_nodes == []  # GE excludes data->control producers from in_nodes
    n["c"].out_control_anchor.link_to(n["a"].in_data_anchor(0))  # control -> data
    assert n["a"].in_data_anchor(0).peer.kind == "out_control"
    with pytest.raises(air.LinkError):
        n["b"].out_data_anchor(0).link_to(n["a"].in_data_anchor(0))
    assert n["a"].in_control_anchor.index == -1 and n["a"].in_control_anchor.is_control
    assert g.check_invariants() == []


def test_unlink_and_unlink_all(td):
    g, n = make(td)
    out = n["a"].out_data_anchor(0)
    out.link_to(n["b"].in_data_anchor(0))
    out.link_to(n["c"].in_data_anchor(0))
    with pytest.raises(air.LinkError):
        out.unlink(n["d"].in_data_anchor(0))
    out.unlink(n["b"].in_data_anchor(0))
    assert out.peers == [n["c"].in_data_anchor(0)]
    out.unlink_all()
    assert out.peers == [] and n["c"].in_data_anchor(0).peer is None
    with pytest.raises(air.LinkError):
        out.link_to(n["b"].out_data_anchor(0))
    with pytest.raises(air.LinkError):
        n["b"].in_data_anchor(0).link_to(out)


def test_replace_peer_keeps_slot(td):
    g, n = make(td)
    out = n["a"].out_data_anchor(0)
    out.link_to(n["b"].in_data_anchor(0))
    out.link_to(n["c"].in_data_anchor(0))
    out.replace_peer(n["b"].in_data_anchor(0), n["d"].in_data_anchor(0))
    assert [p.node.name for p in out.peers] == ["d", "c"]
    assert n["b"].in_data_anchor(0).peer is None
    before = g.dump()
    with pytest.raises(air.LinkError):
        out.replace_peer(n["b"].in_data_anchor(0), n["a"].in_data_anchor(0))  # not linked
    with pytest.raises(air.LinkError):
        out.replace_peer(n["d"].in_data_anchor(0), n["c"].in_data_anchor(0))  # taken
    with pytest.raises(air.LinkError):
        out.replace_peer(n["d"].in_data_anchor(0), n["b"].in_control_anchor)  # kinds differ
    assert g.dump() == before
    n["d"].in_data_anchor(0).replace_peer(out, n["b"].out_data_anchor(0))
    assert n["d"].in_data_anchor(0).peer == n["b"].out_data_anchor(0)
    assert g.check_invariants() == []


def test_insert_splices_a_node(td):
    g, n = make(td)
    out = n["a"].out_data_anchor(0)
    out.link_to(n["b"].in_data_anchor(0))
    out.link_to(n["c"].in_data_anchor(0))
    cast = air.OpDesc("cast", "Cast")
    cast.add_input("x", td)
    cast.add_output("y", td)
    node = out.insert(cast)
    assert out.peers == [node.in_data_anchor(0)]
    assert [p.node.name for p in node.out_data_anchor(0).peers] == ["b", "c"]
    assert [x.name for x in g] == ["a", "cast", "b", "c", "d"]
    cast.attrs["t"] = 1  # the op desc became a view of the node
    assert node.attrs["t"] == 1
    ident = air.OpDesc("id", "Identity")
    ident.add_input("x", td)
    ident.add_output("y", td)
    node2 = n["b"].in_data_anchor(0).insert(ident)
    assert n["b"].in_data_nodes == [node2] and node2.in_data_nodes == [node]
    before = g.dump()
    lonely = air.OpDesc("z2", "Z")
    lonely.add_input("x", td)
    lonely.add_output("y", td)
    with pytest.raises(air.LinkError):
        n["d"].out_data_anchor(0).insert(lonely)  # no peers to insert into
    bad = air.OpDesc("z", "Z")
    with pytest.raises(air.InvalidArgumentError):
        out.insert(bad)
    assert g.dump() == before
    assert g.check_invariants() == []


def test_ports_inserted_in_the_middle_keep_links(td):
    g, n = make(td)
    n["a"].out_data_anchor(0).link_to(n["b"].in_data_anchor(0))
    n["b"].op_desc.insert_input(0, "bias", td)
    assert n["b"].in_data_anchor("x").index == 1
    assert n["b"].in_data_anchor(1).peer == n["a"].out_data_anchor(0)
    assert n["b"].in_data_anchor(0).peer is None
    n["a"].op_desc.insert_output(0, "z", td)
    assert n["b"].in_data_anchor(1).peer == n["a"].out_data_anchor(1)
    n["b"].op_desc.add_dynamic_input("d", 2)
    assert n["b"].op_desc.input_names == ["bias", "x", "d0", "d1"]
    assert len(n["b"].in_data_anchors) == 4
    assert g.check_invariants() == []


def test_anchor_lookup_errors(td):
    g, n = make(td)
    with pytest.raises(air.NotFoundError):
        n["a"].in_data_anchor(5)
    with pytest.raises(air.NotFoundError):
        n["a"].out_data_anchor("nope")
    with pytest.raises(air.InvalidArgumentError):
        n["a"].out_data_anchor(0).peer
    assert repr(n["a"].out_data_anchor(0)) == "<OutDataAnchor 'a':0>"
    assert n["a"].out_data_anchor(0) == n["a"].out(0) == n["a"].out()
    assert n["a"].out_data_anchors[0].node == n["a"]
