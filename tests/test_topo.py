"""Topological sorting from Python: GE's modes, options mapping, cycles, whole-model ids."""

from __future__ import annotations

import copy

import pytest

import ascendir as air
from ascendir.topo import TopoMode, memory_priority_from_options, sort_options
from support.graphs import plain_op as _op


def diamond() -> air.Graph:
    g = air.Graph("diamond")
    a = g.add_input("a", air.TensorDesc([1, 4], air.float32))
    b = _op(g, "b", "Relu", [a])
    c = _op(g, "c", "Relu", [a])
    _op(g, "d", "Add", [b, c])
    return g


@pytest.mark.parametrize(
    ("mode", "kwargs", "expected"),
    [
        ("dfs", {}, ["a", "c", "b", "d"]),
        ("dfs", {"reverse": True}, ["a", "b", "c", "d"]),
        ("bfs", {}, ["a", "b", "c", "d"]),
        ("rdfs", {}, ["a", "c", "b", "d"]),
        ("rdfs", {"delay_const_chains": False}, ["a", "b", "c", "d"]),
        ("stable_rdfs", {}, ["a", "b", "c", "d"]),
        (TopoMode.DFS, {}, ["a", "c", "b", "d"]),
        (2, {}, ["a", "c", "b", "d"]),
    ],
)
def test_diamond_orders(mode, kwargs, expected):
    g = diamond()
    order = g.topo_sort(mode, **kwargs)
    assert [n.name for n in order] == expected
    assert order.names == expected
    assert [n.name for n in g.nodes] == expected
    assert [n.id for n in g.nodes] == list(range(4))


def test_default_mode_is_dfs_and_result_is_a_sequence():
    g = diamond()
    order = g.topo_sort()
    assert len(order) == 4
    assert order[0].name == "a"
    assert order[-1].name == "d"
    assert [n.name for n in order[1:3]] == ["c", "b"]
    assert order == list(g.nodes)
    assert "NodeSeq" in repr(order)


def test_topo_order_does_not_mutate():
    g = diamond()
    before = g.dump()
    assert g.topo_order("dfs").names == ["a", "c", "b", "d"]
    assert g.dump() == before


def test_bfs_drains_one_seed_region_first():
    g = air.Graph("bfs")
    x1 = g.add_input("x1")
    x2 = g.add_input("x2")
    m2 = _op(g, "m2", "Relu", [x1])
    m1 = _op(g, "m1", "Relu", [x1])
    _op(g, "a2", "Relu", [m1])
    _op(g, "b1", "Relu", [x2])
    assert g.topo_order("bfs").names == ["x1", "m1", "m2", "a2", "x2", "b1"]
    assert g.topo_order("dfs").names == ["x1", "m1", "a2", "m2", "x2", "b1"]
    del m2


def test_rdfs_smallest_producer_first_and_memory_priority():
    g = air.Graph("sizes")
    big = _op(g, "a_big", "Source", shape=(1, 1024))
    small = _op(g, "z_small", "Source", shape=(1, 2))
    mid = _op(g, "m_mid", "Source", shape=(1, 64))
    _op(g, "sink", "AddN", [big, small, mid])
    assert g.topo_order("rdfs").names == ["z_small", "m_mid", "a_big", "sink"]
    assert g.topo_order("dfs", memory_priority=True).names == [
        "z_small",
        "m_mid",
        "a_big",
        "sink",
    ]


def test_cycle_error_names_one_cycle_and_changes_nothing():
    g = air.Graph("cyc")
    x = g.add_input("x")
    a = _op(g, "a", "Add", [x, None])
    b = _op(g, "b", "Relu", [a])
    c = _op(g, "c", "Relu", [b])
    c.out_data_anchor(0).link_to(a.in_data_anchor(1))
    before = g.dump()
    for mode in ("bfs", "dfs", "rdfs", "stable_rdfs"):
        with pytest.raises(air.CycleError) as info:
            g.topo_sort(mode)
        nodes = info.value.nodes
        assert sorted(nodes) == ["a", "b", "c"]
        start = nodes.index("a")
        assert nodes[start:] + nodes[:start] == ["a", "b", "c"]
        assert g.dump() == before
    assert g.find_cycle() is not None
    assert sorted(g.find_cycle().names) == ["a", "b", "c"]


def test_data_to_control_cycle_detected():
    g = air.Graph("d2c")
    a = _op(g, "a", "Relu", [None])
    b = _op(g, "b", "Relu", [a])
    b.out_data_anchor(0).link_to(a.in_control_anchor)
    for mode in ("bfs", "dfs", "rdfs", "stable_rdfs"):
        with pytest.raises(air.CycleError):
            g.topo_sort(mode)


def test_stable_rdfs_keeps_legal_order():
    g = air.Graph("stable")
    a = g.add_input("a")
    x = _op(g, "x", "Relu", [a])
    y = _op(g, "y", "Relu", [x])
    z = _op(g, "z", "Add", [y, None])
    late = _op(g, "late", "Cast", [a])
    late.out_data_anchor(0).link_to(z.in_data_anchor(1))
    assert g.topo_sort("stable_rdfs").names == ["a", "x", "y", "late", "z"]


def test_bad_mode_is_rejected():
    g = diamond()
    with pytest.raises(air.InvalidArgumentError):
        g.topo_sort("sideways")
    with pytest.raises(air.InvalidArgumentError):
        g.topo_sort(7)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, TopoMode.DFS),
        ({"ge.graphRunMode": "1"}, TopoMode.BFS),
        ({"ge.topoSortingMode": "2", "ge.graphRunMode": "1"}, TopoMode.RDFS),
        ({"ge.topoSortingMode": "3"}, TopoMode.STABLE_RDFS),
        ({"ge.topoSortingMode": "abc"}, TopoMode.BFS),
        ({"ge.topoSortingMode": "9"}, TopoMode.DFS),
        ({"ge.topoSortingMode": "9", "ge.graphRunMode": "1"}, TopoMode.BFS),
        ({"ge.topoSortingMode": ""}, TopoMode.DFS),
        ({"ge.topoSortingMode": " 1x"}, TopoMode.DFS),
    ],
)
def test_mode_from_options(options, expected):
    assert TopoMode.from_options(options) is expected
    assert air.TopoMode.from_options(options) is expected


def test_memory_priority_option_and_sort_options():
    assert memory_priority_from_options({"ge.exec.memoryOptimizationPolicy": "MemoryPriority"})
    assert not memory_priority_from_options({"ge.exec.memoryOptimizationPolicy": "memory"})
    kw = sort_options({"ge.graphRunMode": "1"})
    assert kw == {"mode": TopoMode.BFS, "memory_priority": False}
    assert diamond().topo_sort(**kw).names == ["a", "b", "c", "d"]
    assert TopoMode.from_name("Stable_RDFS") is TopoMode.STABLE_RDFS
    assert TopoMode.RDFS.label == "rdfs"


def test_whole_model_sort_numbers_ids_over_all_nodes():
    g = air.Graph("root")
    x = g.add_input("x")
    cond = _op(g, "if", "If", [x])
    _op(g, "out", "Relu", [cond])
    then = air.Graph("then")
    t_in = then.add_input("t_in")
    _op(then, "t_op", "Relu", [t_in])
    g.add_subgraph(then, parent=cond, slot="then_branch")
    order = g.topo_sort(subgraphs=True)
    assert order.names == ["x", "if", "out"]
    walk = g.all_nodes()
    assert [n.name for n in walk] == ["x", "if", "t_in", "t_op", "out"]
    assert [n.id for n in walk] == list(range(5))
    with pytest.raises(air.InvalidArgumentError):
        g.subgraph("then").topo_sort(subgraphs=True)


def test_copy_then_sort_leaves_original():
    g = diamond()
    h = copy.deepcopy(g)
    h.topo_sort("dfs")
    assert [n.name for n in g.nodes] == ["a", "b", "c", "d"]
    assert [n.name for n in h.nodes] == ["a", "c", "b", "d"]
