import copy

import numpy as np
import pytest

import ascendir as air


def test_defaults_follow_ge():
    d = air.TensorDesc()
    assert d.shape == () and d.dtype is air.float32 and d.format is air.Format.ND
    assert d.origin_format is air.Format.ND and d.origin_dtype is air.DataType.UNDEFINED
    assert d.origin_shape is None and d.name is None and d.is_valid


def test_properties_are_settable():
    d = air.TensorDesc([8, 3, 224, 224], air.float16, format=air.Format.NCHW, name="x")
    assert d.shape == (8, 3, 224, 224) and d.dtype is air.float16 and d.name == "x"
    d.shape = [1, 2]
    d.dtype = "int8"
    d.format = "NHWC"
    d.origin_shape = [4, 4]
    d.origin_format = air.Format.NCHW
    d.origin_dtype = air.float32
    assert (d.shape, d.dtype, d.format) == ((1, 2), air.int8, air.Format.NHWC)
    assert d.origin_shape == (4, 4) and d.origin_dtype is air.float32
    d.format = air.make_format("FRACTAL_Z", 16)
    assert d.format == 4100
    for field, value in [("size", 96), ("weight_size", 8), ("data_offset", 32),
                         ("reuse_input", True), ("reuse_input_index", 2),
                         ("output_tensor", True), ("input_tensor", True), ("real_dim_cnt", 4),
                         ("device_type", "CPU"), ("cmps_size", 3), ("cmps_tab", "t"),
                         ("cmps_tab_offset", 5)]:
        setattr(d, field, value)
        assert getattr(d, field) == value
    with pytest.raises(air.InvalidArgumentError):
        d.device_type = "GPU"


def test_bad_shapes_and_types_raise():
    with pytest.raises(air.InvalidArgumentError):
        air.TensorDesc([2, -3])
    with pytest.raises(air.InvalidArgumentError):
        air.TensorDesc([2, -2])
    with pytest.raises(air.InvalidArgumentError):
        air.TensorDesc([2], 999)
    with pytest.raises(air.InvalidArgumentError):
        air.TensorDesc([2], air.float32, format="NOPE")
    assert air.TensorDesc([-2]).shape == (-2,)


def test_mem_size():
    assert air.TensorDesc([2, 3], air.float32).mem_size() == 24
    assert air.TensorDesc([], air.float32).mem_size() == 4
    assert air.TensorDesc([9], air.int4).mem_size() == 5
    assert air.TensorDesc([2, 3], air.float32).memory_size() == 64
    assert air.TensorDesc([2, 3]).shape_size() == 6
    assert air.TensorDesc([]).shape_size() == 0
    with pytest.raises(air.InvalidArgumentError):
        air.TensorDesc([-1, 3]).mem_size()
    with pytest.raises(air.InvalidArgumentError):
        air.TensorDesc([2, 3], air.float32, format=air.Format.NC).mem_size()


def test_value_semantics_and_equality():
    a = air.TensorDesc([2], air.float16)
    b = a.copy()
    b.shape = [3]
    assert a.shape == (2,)
    assert a == air.TensorDesc([2], air.float16)
    assert a != b
    c = copy.deepcopy(a)
    assert c == a
    assert "FLOAT16" in repr(a)


def test_tensor_numpy_is_zero_copy_and_read_only():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = air.Tensor(arr)
    view = t.numpy()
    assert view.shape == (2, 3) and view.dtype == np.float32
    np.testing.assert_array_equal(view, arr)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0, 0] = 5
    again = t.numpy()
    assert np.shares_memory(view, again)
    arr[0, 0] = 100  # the tensor took a copy of a writeable array
    assert t.numpy()[0, 0] == 0


def test_tensor_shares_only_memory_nobody_can_write():
    # A read-only array over an immutable bytes (or over one of our tensors) is shared.
    raw = np.arange(4, dtype=np.int64).tobytes()
    arr = np.frombuffer(raw, dtype=np.int64)
    t = air.Tensor(arr)
    assert np.shares_memory(t.numpy(), arr)
    assert np.shares_memory(air.Tensor(t.numpy()).numpy(), arr)
    # A read-only array owning its memory is copied: its owner can make it writeable again.
    own = np.arange(4, dtype=np.int64)
    own.flags.writeable = False
    t = air.Tensor(own)
    assert not np.shares_memory(t.numpy(), own)
    own.flags.writeable = True
    own[0] = 99
    assert t.numpy()[0] == 0


def test_tensor_from_desc_and_bytes():
    d = air.TensorDesc([2], air.int32)
    t = air.Tensor(d, np.array([1, 2], np.int32).tobytes())
    assert t.numpy().tolist() == [1, 2]
    assert t.nbytes == 8 and bytes(t.data) == np.array([1, 2], np.int32).tobytes()
    with pytest.raises(air.InvalidArgumentError):
        air.Tensor(d, b"\x00" * 3)
    assert t.desc == d
    assert t == air.Tensor(d, np.array([1, 2], np.int32).tobytes())


def test_tensor_without_numpy_dtype():
    t = air.Tensor(air.TensorDesc([2], air.hifloat8), b"\x01\x02")
    with pytest.raises(air.InvalidArgumentError):
        t.numpy()
    assert bytes(t.data) == b"\x01\x02"


def test_a_bytes_subclass_that_refers_to_its_graph_does_not_leak_the_graph() -> None:
    import gc
    import weakref

    class Payload(bytes):
        pass

    class Marker:
        pass

    def build() -> weakref.ref[Marker]:
        g = air.Graph("g")
        data = Payload(np.arange(4, dtype=np.float32).tobytes())
        marker = Marker()
        data.graph, data.marker = g, marker  # type: ignore[attr-defined]
        g.add_const("c", air.Tensor(air.TensorDesc([4], air.float32), data))
        g.add_const("d", np.frombuffer(data, np.float32))  # a read-only view of it too
        np.testing.assert_array_equal(g.node("c").op_desc.attrs["value"].numpy(),
                                      np.arange(4, dtype=np.float32))
        return weakref.ref(marker)

    ref = build()
    gc.collect()
    # The graph held the payload, the payload the graph: only a copy breaks the cycle.
    assert ref() is None


_LIST_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                np.int64, np.uint64, np.float16, np.float32, np.float64]


def _leaf_types(x: object) -> list[type]:
    if isinstance(x, list):
        return [t for v in x for t in _leaf_types(v)]
    return [type(x)]


@pytest.mark.parametrize("dtype", _LIST_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3), (2, 1, 4), (1, 1, 1, 1)])
def test_tolist_equals_numpy_tolist(dtype: type, shape: tuple[int, ...]) -> None:
    a = (np.random.default_rng(7).standard_normal(shape) * 300).astype(dtype)
    got = air.Tensor(a).tolist()
    want = a.tolist()
    assert got == want
    assert _leaf_types(got) == _leaf_types(want)


def test_tolist_special_floats_and_narrow_types() -> None:
    import ml_dtypes

    h = np.array([np.nan, -0.0, np.inf, 65504, 6e-8], np.float16)
    got = air.Tensor(h).tolist()
    assert np.isnan(got[0]) and got[1:] == h.tolist()[1:]
    assert str(got[1]) == "-0.0"
    b = np.array([[1.5, -3.25], [1e30, 0.0]], ml_dtypes.bfloat16)
    assert air.Tensor(b).tolist() == b.astype(np.float64).tolist()
    c = np.array([1 + 2j, 3j], np.complex64)  # no plain element: numpy's own tolist
    assert air.Tensor(c).tolist() == c.tolist()


def test_tolist_rows_are_distinct_lists_and_bad_shapes_raise() -> None:
    rows = air.Tensor(np.zeros((3, 0), np.float32)).tolist()
    assert rows == [[], [], []]
    rows[0].append(1)
    assert rows[1] == []
    huge = air.TensorDesc([1 << 40, 0], air.float32)
    with pytest.raises(air.InvalidArgumentError, match="empty lists"):
        air.Tensor(huge, b"").tolist()
    unknown = air.TensorDesc([-1], air.float32)
    with pytest.raises(air.InvalidArgumentError, match="unknown shape"):
        air.Tensor(unknown, b"").tolist()
