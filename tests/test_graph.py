import copy  # noqa: F401

import numpy as np
import pytest

import ascendir as air


def test_build_like_the_spec(td):
    g = air.Graph("main")
    x = g.add_input("x", air.TensorDesc([8, 3, 224, 224], air.float16, format="NCHW"))
    w = g.add_const("w", np.zeros((64, 3, 7, 7), np.float16))
    conv = g.add_op("Conv2D", inputs=[x, w], name="conv1", attrs={"strides": [1, 1, 2, 2]})
    relu = g.add_op("Relu", inputs=[conv])
    net = g.set_outputs([relu])
    assert len(g) == 5 and "conv1" in g and g.node("conv1") == conv
    assert [n.name for n in g] == ["x", "w", "conv1", relu.name, "Node_Output"]
    assert net.type == "NetOutput" and net.name == "Node_Output"
    assert net.attrs["_inner_net_output"] is True
    assert g.inputs == [x] and g.outputs == [(relu, 0)]
    assert x.attrs["index"] == 0
    assert conv.in_data_nodes == [x, w] and conv.out_data_nodes == [relu]
    assert conv.op_desc.input_desc(0).shape == (8, 3, 224, 224)
    assert w.attrs["value"].numpy().shape == (64, 3, 7, 7)
    assert repr(conv) == "<Node 'conv1' Conv2D #2>"
    assert g.check_invariants() == []


def test_duplicate_names_are_rejected(chain, td):
    before = chain.dump()
    with pytest.raises(air.DuplicateNameError):
        chain.add_input("x", td)
    od = air.OpDesc("relu", "Relu")
    with pytest.raises(air.DuplicateNameError):
        chain.add_node(od)
    assert chain.dump() == before


def test_node_lookup_errors(chain):
    with pytest.raises(air.NotFoundError):
        chain.node("missing")
    with pytest.raises(KeyError):
        chain.node("missing")
    assert chain.find("missing") is None
    assert chain.find("relu").name == "relu"


def test_stale_handles_raise(chain):
    relu = chain.node("relu")
    anchor = relu.out_data_anchor(0)
    chain.erase_node(relu)
    assert not relu.is_alive
    with pytest.raises(air.StaleHandleError):
        relu.name
    with pytest.raises(air.StaleHandleError):
        anchor.peers
    with pytest.raises(air.StaleHandleError):
        relu.op_desc
    assert repr(relu) == "<Node (removed)>"
    # the slot is reused by a new node, but the old handle still does not resolve
    chain.add_op("Relu", [chain.node("x")], name="relu_new")
    with pytest.raises(air.StaleHandleError):
        relu.type
    assert chain.check_invariants() == []


def test_foreign_handles_raise(chain, td):
    other = air.Graph("other")
    y = other.add_input("y", td)
    before = chain.dump()
    with pytest.raises(air.ForeignHandleError):
        chain.add_op("Relu", [y])
    with pytest.raises(air.ForeignHandleError):
        chain.node("relu").in_data_anchor(0).unlink(y.out_data_anchor(0))
    with pytest.raises(air.ForeignHandleError):
        chain.set_outputs([y])
    with pytest.raises(air.ForeignHandleError):
        chain.erase_node(y)
    assert y not in chain
    assert chain.dump() == before


def test_add_op_is_atomic(chain, td):
    before = chain.dump()
    add = chain.node("add")
    with pytest.raises(air.InvalidArgumentError):
        chain.add_op("Add", [add], input_names=["a", "b"])
    with pytest.raises(air.DuplicateNameError):
        chain.add_op("Add", [add, add], input_names=["a", "a"])
    with pytest.raises(air.DuplicateNameError):
        chain.add_op("Relu", [add], name="relu")
    net = chain.node("Node_Output")
    with pytest.raises(air.InvalidArgumentError):
        chain.add_op("Relu", [net])  # NetOutput has no outputs
    with pytest.raises(TypeError):
        chain.add_op("Relu", [42])
    assert chain.dump() == before


def test_add_op_names_and_outputs(chain, td):
    x = chain.node("x")
    # Types without a registered prototype take GE's automatic port names.
    n = chain.add_op("MySplit", [x], outputs=2, allow_unregistered=True)
    assert n.op_desc.output_names == ["__output0", "__output1"]
    assert n.op_desc.input_names == ["__input0"]
    m = chain.add_op("MyIdentity", [n.out(1), None], outputs=["y"],
                     allow_unregistered=True)
    assert m.in_data_nodes == [n] and m.input_source(0) == n.out_data_anchor(1)
    assert m.input_source(1) is None
    assert n.name.startswith("MySplit_")


def test_set_outputs_rewires_and_targets(chain, td):
    relu, add, x = chain.node("relu"), chain.node("add"), chain.node("x")
    net = chain.set_outputs([relu, (add, 0)], targets=[x])
    assert net.in_data_nodes == [relu, add] and net.in_control_nodes == [x]
    assert chain.outputs == [(relu, 0), (add, 0)] and chain.targets == [x]
    net2 = chain.set_outputs([add])
    assert net2 == net and net.in_data_nodes == [add] and net.in_control_nodes == []
    before = chain.dump()
    with pytest.raises(air.NotFoundError):
        chain.set_outputs([(add, 3)])
    with pytest.raises(air.InvalidArgumentError):
        chain.set_outputs([net])
    assert chain.dump() == before
    assert chain.check_invariants() == []


def test_output_node_type_suppresses_netoutput(td):
    g = air.Graph("g")
    x = g.add_input("x", td)
    od = air.OpDesc("out", "Output")
    od.add_input("x", td)
    g.add_node(od)
    assert g.set_outputs([x]) is None
    assert g.outputs == [(x, 0)]


def test_graph_attrs_and_repr(chain):
    chain.attrs["version"] = 3
    assert chain.attrs["version"] == 3
    assert repr(chain) == "<Graph 'chain' 4 nodes>"
    chain.name = "renamed"
    assert chain.name == "renamed"
    assert chain.op_type_counts() == {"Add": 1, "Data": 1, "NetOutput": 1, "Relu": 1}


def test_data_like_nodes_are_inputs(td):
    g = air.Graph("g")
    for t in ("Data", "RefData", "AippData", "AnnData", "Relu"):
        od = air.OpDesc(t.lower(), t)
        od.add_output("y", td)
        g.add_node(od)
    assert [n.type for n in g.inputs] == ["Data", "RefData", "AippData", "AnnData"]


def test_from_edges_bulk_builder(td):
    types = np.array([0, 1, 2, 2])
    edges = np.array([[0, 0, 1, 0], [1, 0, 2, 0], [0, 0, 2, 1], [2, 0, 3, 0], [1, 0, 3, 1],
                      [0, -1, 3, -1]])
    ports = {"Data": (["x"], ["y"]), "Relu": (["x"], ["y"]), "Add": (["x0", "x1"], ["y"])}
    g = air.Graph.from_edges(types, edges, type_names=["Data", "Relu", "Add"], ports=ports,
                             desc=td, name="bulk")
    assert len(g) == 4 and g.name == "bulk" and g.num_links == 6
    assert [n.name for n in g] == ["Data_0", "Relu_1", "Add_2", "Add_3"]
    add3 = g.node("Add_3")
    assert [n.name for n in add3.in_data_nodes] == ["Add_2", "Relu_1"]
    assert [n.name for n in add3.in_control_nodes] == ["Data_0"]
    assert add3.op_desc.input_names == ["x0", "x1"]
    assert add3.op_desc.input_desc(0) == td
    assert [n.name for n in g.inputs] == ["Data_0"]
    assert g.check_invariants() == []
    named = air.Graph.from_edges([0, 0], np.zeros((0, 4)), type_names=["Foo"], names=["a", "b"])
    assert [n.name for n in named] == ["a", "b"]
    auto = air.Graph.from_edges([0, 0], [[0, 2, 1, 1]], type_names=["Foo"])
    assert auto.node("Foo_0").op_desc.output_names == ["__output0", "__output1", "__output2"]
    assert auto.node("Foo_1").op_desc.input_names == ["__input0", "__input1"]


@pytest.mark.parametrize(
    "types,edges,err",
    [
        ([0, 5], [], air.InvalidArgumentError),
        ([0, 0], [[0, 0, 9, 0]], air.InvalidArgumentError),
        ([0, 0], [[0, 0, 1, -5]], air.InvalidArgumentError),
        ([0, 0], [[0, 0, 1, 0], [0, 0, 1, 0]], air.LinkError),
        ([1, 1], [[0, 3, 1, 0]], air.InvalidArgumentError),
    ],
)
def test_from_edges_errors(types, edges, err):
    with pytest.raises(err):
        air.Graph.from_edges(types, np.array(edges, dtype=np.int64).reshape(-1, 4),
                             type_names=["Foo", "Relu"], ports={"Relu": (["x"], ["y"])})


def test_from_edges_rejects_bad_shapes_and_names():
    with pytest.raises(air.InvalidArgumentError):
        air.Graph.from_edges([0], np.zeros((1, 3)), type_names=["A"])
    with pytest.raises(air.InvalidArgumentError):
        air.Graph.from_edges([0, 0], [], type_names=["A"], names=["only_one"])
    with pytest.raises(air.DuplicateNameError):
        air.Graph.from_edges([0, 0], [], type_names=["A"], names=["same", "same"])


def test_iteration_and_containment(chain):
    names = [n.name for n in chain.nodes]
    assert names == [n.name for n in chain]
    assert chain.node("x") in chain and "x" in chain and 3 not in chain
    assert {chain.node("x"), chain.node("x")} == {chain.node("x")}
