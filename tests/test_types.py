import numpy as np
import pytest

import ascendir as air
from ascendir import DataType, Format


def test_data_type_numbers_and_wire_numbers():
    assert DataType.FLOAT == 0 and DataType.FLOAT16 == 1 and DataType.INT8 == 2
    assert DataType.BF16 == 27 and DataType.INT4 == 29 and DataType.HIFLOAT4 == 42
    assert DataType.FLOAT16.proto_value == 2
    assert DataType.UNDEFINED.proto_value == 0
    assert DataType.BF16.serial_name == "DT_BFLOAT16"
    assert air.float32 is DataType.FLOAT and air.bfloat16 is DataType.BF16


def test_bit_widths_and_sizes():
    assert DataType.INT4.bit_width == 4
    assert DataType.UINT1.bit_width == 1
    assert DataType.FLOAT.bit_width == 32
    assert DataType.STRING.bit_width is None
    assert DataType.INT4.itemsize == 1004
    assert air.size_in_bytes_of(9, air.int4) == 5
    assert air.size_in_bytes_of(10, "float32") == 40
    assert air.size_in_bytes_of(-1, air.float32) == -1
    assert air.size_in_bytes_of(10, DataType.UNDEFINED) == -1


def test_numpy_mapping_round_trip():
    for dt in (air.float32, air.float16, air.int8, air.int64, air.uint8, air.bool_, air.float64):
        assert DataType.from_numpy(dt.to_numpy()) is dt
    assert DataType.from_numpy(np.int32) is air.int32
    with pytest.raises(air.InvalidArgumentError):
        DataType.HIFLOAT8.to_numpy()
    with pytest.raises(air.InvalidArgumentError):
        DataType.from_numpy(np.dtype("datetime64[s]"))


def test_names():
    assert DataType.from_name("float16") is air.float16
    assert DataType.from_name("DT_BFLOAT16") is air.bfloat16
    assert DataType.from_name("float32") is air.float32
    with pytest.raises(KeyError):
        DataType.from_name("nope")
    assert Format.from_name("NCHW") is Format.NCHW
    assert Format.NCHW.name == "NCHW"
    assert Format.FRACTAL_DECONV_SP_STRIDE8_TRANS.serial_name == "DECONV_SP_STRIDE8_TRANS"
    with pytest.raises(air.NotFoundError):
        Format.from_name("NOPE")


def test_format_bits():
    f = air.make_format(Format.FRACTAL_Z, 16)
    assert f == 4100
    assert air.format_serial_string(f) == "FRACTAL_Z:16"
    assert air.format_parts(air.make_format("FRACTAL_Z", 16, 5)) == (4, 16, 5)
    assert air.format_c0_value(air.make_format("FRACTAL_Z", 16, 5)) == 16
    assert air.format_c0_value(f) == -1
    with pytest.raises(air.InvalidArgumentError):
        air.make_format(Format.ND, 70000)


def test_mem_size_functions():
    assert air.calc_tensor_mem_size_of([2, 3], "ND", air.float32) == 24
    assert air.calc_tensor_mem_size_of([-1, 3], "ND", air.float32) == -1
    with pytest.raises(air.InvalidArgumentError):
        air.calc_tensor_mem_size_of([2, 3], Format.NC, air.float32)
    with pytest.raises(air.SizeOverflowError):
        air.calc_tensor_mem_size_of([2**62, 4], "ND", air.float32)
    for size, want in [(0, 32), (4, 64), (32, 64), (33, 96), (240, 288)]:
        assert air.memory_size_of(size) == want
    # One rule for every size helper: -1 is unknown, an overflow is an error.
    assert air.memory_size_of(-1) == -1
    with pytest.raises(air.SizeOverflowError):
        air.memory_size_of(2**63 - 1)


def test_import_is_lazy():
    import subprocess
    import sys

    code = "import sys, ascendir; print('numpy' in sys.modules, 'google.protobuf' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_one_dtype_table_drives_numpy_the_simulator_and_torch():
    """The numpy, simulator and torch dtype maps all come from the Rust table's array names."""
    from ascendir import _core
    from ascendir.asc.simulate import SimulationError, np_dtype
    from ascendir.torch._flatten import GE_DTYPES

    names = {row[0]: row[5] for row in _core._data_type_table()}
    assert names["FLOAT"] == "float32" and names["BF16"] == "bfloat16"
    assert names["HIFLOAT8"] is None
    for member, name in names.items():
        dt = DataType[member]
        if name is None:
            with pytest.raises(air.InvalidArgumentError):
                dt.to_numpy()
            continue
        try:
            native = np.dtype(name)
        except TypeError:
            native = None
        if native is not None:
            assert dt.to_numpy() == native
            assert np_dtype(int(dt)) == native
        else:
            with pytest.raises(SimulationError, match="no numpy equivalent"):
                np_dtype(int(dt))
        if (dt.bit_width or 0) % 8 == 0:
            assert GE_DTYPES[name] == int(dt), name
        else:
            assert name not in GE_DTYPES
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for member in ("BF16", "FLOAT8_E5M2", "FLOAT8_E4M3FN", "INT4"):
        dt = DataType[member]
        assert dt.to_numpy() == np.dtype(getattr(ml_dtypes, names[member]))
        assert DataType.from_numpy(dt.to_numpy()) is dt
