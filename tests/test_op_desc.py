import pytest

import ascendir as air


def test_ports_by_name_and_index(td):
    od = air.OpDesc("add1", "Add")
    assert od.add_input("x1", td) == 0
    assert od.add_input("x2", td) == 1
    assert od.add_input("x1", air.TensorDesc([5])) == 0  # existing name updates, as GE
    assert od.input_desc("x1").shape == (5,)
    assert od.num_inputs == 2
    od.add_output("y", td)
    with pytest.raises(air.DuplicateNameError):
        od.add_output("y", td)
    assert od.output_desc(0) == td and od.output_desc("y") == td
    assert od.input_index("x2") == 1 and od.input_index("zz") == -1
    with pytest.raises(air.NotFoundError):
        od.input_desc("zz")
    with pytest.raises(air.NotFoundError):
        od.input_desc(7)
    assert od.input_desc(-1).shape == td.shape


def test_dynamic_inputs_and_insert(td):
    od = air.OpDesc("c", "ConcatV2")
    od.add_input("concat_dim", td)
    assert od.add_dynamic_input("x", 3) == 1
    assert od.input_names == ["concat_dim", "x0", "x1", "x2"]
    od.add_dynamic_input("p", 2, front=True)
    assert od.input_names[:3] == ["p0", "p1", "concat_dim"]
    with pytest.raises(air.DuplicateNameError):
        od.add_dynamic_input("p", 1, front=True)
    od.add_dynamic_input("q", 1, index=2)
    assert od.input_names[2] == "q0"
    with pytest.raises(air.InvalidArgumentError):
        od.add_dynamic_input("r", 1, index=99)
    od.insert_input(1, "bias", td)
    assert od.input_names[1] == "bias" and od.input_index("p1") == 2
    od.rename_input("bias", "b")
    assert od.input_index("b") == 1 and od.input_desc("b") == td
    with pytest.raises(air.DuplicateNameError):
        od.rename_input("b", "x0")
    assert od.dynamic_input_indexes("x") == [5, 6, 7]
    od.add_dynamic_output("y", 2)
    assert od.output_names == ["y0", "y1"]


def test_optional_inputs(td):
    od = air.OpDesc("conv", "Conv2D")
    od.add_input("x", td)
    od.add_optional_input("bias")
    assert od.num_inputs == 2 and od.num_valid_inputs == 1
    assert not od.input_desc("bias").is_valid
    assert od.is_optional_input("bias") and od.optional_inputs == ["bias"]


def test_metadata_and_compile_state():
    od = air.OpDesc("n", "Relu", attrs={"a": 1})
    assert od.attrs["a"] == 1
    od.id = 4
    od.stream_id = 2
    od.input_offsets = [0, 64]
    od.output_offsets = [128]
    od.workspace = [1]
    od.workspace_bytes = [32]
    od.src_names = ["a"]
    od.src_indices = [0]
    od.dst_names = ["b"]
    od.dst_indices = [1]
    od.is_input_const = [False, True]
    od.compile_input_names = ["x"]
    od.ir_inputs = [("x", "required"), ("b", "optional"), ("d", "dynamic")]
    od.ir_outputs = [("y", "required")]
    od.ir_attr_names = ["alpha"]
    od.has_out_attr = False
    assert (od.id, od.stream_id, od.input_offsets, od.workspace_bytes) == (4, 2, [0, 64], [32])
    assert od.is_input_const == [False, True] and od.src_names == ["a"]
    assert od.ir_inputs[2] == ("d", "dynamic") and od.ir_outputs == [("y", "required")]
    assert od.ir_attr_names == ["alpha"] and od.has_out_attr is False
    with pytest.raises(air.InvalidArgumentError):
        od.ir_inputs = [("x", "sometimes")]
    assert od.ir_inputs[0] == ("x", "required")


def test_subgraph_slots():
    od = air.OpDesc("if", "If")
    od.add_subgraph_name("then_branch")
    od.add_subgraph_name("else_branch")
    with pytest.raises(air.DuplicateNameError):
        od.add_subgraph_name("then_branch")
    od.set_subgraph_instance_name(0, "g_then")
    assert od.subgraph_names == ["g_then", ""]
    assert od.subgraph_ir_names == [("then_branch", "static"), ("else_branch", "static")]
    with pytest.raises(air.InvalidArgumentError):
        od.set_subgraph_instance_name(5, "x")


def test_copy_equality_repr(td):
    od = air.OpDesc("a", "Add")
    od.add_input("x", td)
    c = od.copy()
    assert c == od
    c.add_input("z", td)
    assert c != od and od.num_inputs == 1
    assert repr(od) == "<OpDesc 'a' Add in=1 out=0>"


def test_view_of_a_node_writes_through(td):
    g = air.Graph("g")
    od = air.OpDesc("relu", "Relu")
    od.add_input("x", td)
    od.add_output("y", td)
    n = g.add_node(od)
    od.output_desc(0).shape = [7]  # od is now a view of the node's op
    assert n.op_desc.output_desc("y").shape == (7,)
    n.op_desc.attrs["alpha"] = 0.5
    assert n.attrs["alpha"] == 0.5
    od.add_input("extra", td)  # appended ports get anchors
    assert len(n.in_data_anchors) == 2
    od.name = "relu2"
    assert n.name == "relu2" and g.node("relu2") == n and "relu" not in g
