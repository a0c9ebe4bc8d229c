import math

import numpy as np
import pytest

import ascendir as air
from ascendir import AttrKind


@pytest.mark.parametrize(
    "value,kind",
    [
        (3, AttrKind.INT),
        (1.5, AttrKind.FLOAT),
        (True, AttrKind.BOOL),
        ("s", AttrKind.STRING),
        (b"\x00\x01", AttrKind.BYTES),
        (air.float16, AttrKind.DATA_TYPE),
        ([1, 2], AttrKind.LIST_INT),
        ([1.0, 2], AttrKind.LIST_FLOAT),
        ([True, False], AttrKind.LIST_BOOL),
        (["a", "b"], AttrKind.LIST_STRING),
        ([b"a", b""], AttrKind.LIST_BYTES),
        ([[1, 2], [3]], AttrKind.LIST_LIST_INT),
        ([[1.5], [2.0, 3]], AttrKind.LIST_LIST_FLOAT),
        ([air.float32, air.int8], AttrKind.LIST_DATA_TYPE),
        ([], AttrKind.LIST_INT),
    ],
)
def test_kinds_are_inferred_and_kept(value, kind):
    g = air.Graph("g")
    g.attrs["k"] = value
    assert g.attrs.kind("k") == kind
    got = g.attrs["k"]
    if kind == AttrKind.FLOAT:
        assert math.isclose(got, value)
    elif kind == AttrKind.LIST_FLOAT:
        assert np.allclose(got, value)
    elif kind == AttrKind.LIST_LIST_FLOAT:
        assert all(np.allclose(a, b) for a, b in zip(got, value, strict=True))
    else:
        assert got == value


def test_object_kinds(td):
    od = air.OpDesc("a", "Add")
    od.attrs["desc"] = td
    od.attrs["tensor"] = np.ones(3, np.float32)
    od.attrs["named"] = air.NamedAttrs("f", {"x": 1})
    od.attrs["descs"] = [td, td]
    od.attrs["named_list"] = [air.NamedAttrs("a"), air.NamedAttrs("b", {"y": "z"})]
    sub = air.Graph("body")
    sub.add_input("d", td)
    od.attrs["graph"] = sub
    od.attrs["graphs"] = [sub]
    od.attrs["tensors"] = [air.Tensor(np.zeros(2, np.int8))]
    assert od.attrs.kind("desc") == AttrKind.TENSOR_DESC and od.attrs["desc"] == td
    assert od.attrs.kind("tensor") == AttrKind.TENSOR
    assert od.attrs["tensor"].numpy().tolist() == [1.0, 1.0, 1.0]
    assert od.attrs["named"] == air.NamedAttrs("f", {"x": 1})
    assert od.attrs.kind("named_list") == AttrKind.LIST_NAMED_ATTRS
    g2 = od.attrs["graph"]
    assert isinstance(g2, air.Graph) and len(g2) == 1 and g2.name == "body"
    assert od.attrs.kind("graphs") == AttrKind.LIST_GRAPH
    assert od.attrs.kind("tensors") == AttrKind.LIST_TENSOR
    assert od.attrs.kind("descs") == AttrKind.LIST_TENSOR_DESC


def test_forced_kinds():
    g = air.Graph("g")
    g.attrs.set("f", 1, kind=AttrKind.FLOAT)
    assert g.attrs.kind("f") == AttrKind.FLOAT and g.attrs["f"] == 1.0
    g.attrs.set("b", "abc", kind="BYTES")
    assert g.attrs["b"] == b"abc"
    g.attrs.set("e", [], kind=AttrKind.LIST_STRING)
    assert g.attrs.kind("e") == AttrKind.LIST_STRING and g.attrs["e"] == []
    g.attrs.set("x", "a + b", kind=AttrKind.EXPRESSION)
    assert g.attrs.kind("x") == AttrKind.EXPRESSION
    with pytest.raises(air.InvalidArgumentError):
        g.attrs.set("bad", "text", kind=AttrKind.INT)
    with pytest.raises(air.InvalidArgumentError):
        g.attrs.set("bad", 1, kind="NOPE")
    assert "bad" not in g.attrs


def test_mapping_protocol():
    g = air.Graph("g")
    g.attrs.update({"b": 2, "a": 1})
    assert list(g.attrs) == ["a", "b"] and len(g.attrs) == 2
    assert g.attrs.items() == [("a", 1), ("b", 2)]
    assert g.attrs.get("zz", 7) == 7
    with pytest.raises(KeyError):
        g.attrs["zz"]
    with pytest.raises(air.NotFoundError):
        del g.attrs["zz"]
    assert g.attrs.pop("a") == 1
    assert g.attrs == {"b": 2}
    g.attrs.clear()
    assert len(g.attrs) == 0


def test_unsupported_values_raise_and_change_nothing():
    g = air.Graph("g")
    with pytest.raises(air.InvalidArgumentError):
        g.attrs["x"] = object()
    with pytest.raises(air.InvalidArgumentError):
        g.attrs["x"] = [1, "a"]
    with pytest.raises(air.InvalidArgumentError):
        g.attrs["x"] = 2**70
    assert "x" not in g.attrs


def test_tensor_desc_attrs_are_lazy_and_live(td):
    d = td.copy()
    assert len(d.attrs) == 0
    d.attrs["_k"] = 1
    assert d.attrs["_k"] == 1
