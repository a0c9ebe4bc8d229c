import pytest

import ascendir as air
from ascendir import asc
from ascendir.asc.storage import load_from_node, store_on_node


def _hint() -> asc.HintGraph:
    graph = asc.HintGraph("LoadAbsStore")
    s0 = graph.create_size("s0")
    z0 = graph.create_axis("z0", s0)
    x = asc.ops.Data("x", graph)
    x.attr.ir_attr.index = 0
    x.y.dtype = asc.dtypes.float16
    load = asc.ops.Load("load", graph)
    load.x = x
    load.attr.sched.axis = [z0]
    load.y.dtype = asc.dtypes.float16
    load.y.axis = [z0]
    load.y.size = [s0]
    load.y.strides = [1]
    return graph


def test_ascgraph_rides_on_an_ascbackend_node():
    g = air.Graph("fused")
    node = g.add_op("AscBackend", [], name="kernel0", outputs=["y"], allow_unregistered=True)
    hint = _hint()
    store_on_node(node, hint)
    assert g.node("kernel0").attrs.kind("_ascendir_ascgraph") == air.AttrKind.BYTES
    back = load_from_node(node)
    assert asc.utils.debug_str(back) == asc.utils.debug_str(hint)
    with pytest.raises(KeyError):
        load_from_node(
            g.add_op("AscBackend", [], name="empty", outputs=["y"], allow_unregistered=True)
        )
