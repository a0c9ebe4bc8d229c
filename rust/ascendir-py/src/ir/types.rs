//! Data types, formats and attribute kinds: tables for the Python enums, conversions of enum
//! arguments, and GE's size functions.

use ascendir_ir::dtype::checked_size_in_bytes;
use ascendir_ir::format::bits;
use ascendir_ir::tensor::{calc_tensor_mem_size, memory_size_in_bytes};
use ascendir_ir::{AttrKind, DataType, Format, IrError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyInt, PyString, PyType};

use crate::errors::IntoPyResult;

/// The class `name` of the Python module `module`, looked up once per `cell`.
pub(crate) fn class_in<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyType>> {
    cell.get_or_try_init(py, || {
        py.import(module)?
            .getattr(name)?
            .cast_into::<PyType>()
            .map(Bound::unbind)
            .map_err(PyErr::from)
    })
    .map(|c| c.bind(py).clone())
}

/// The class `name` of `ascendir.types`, looked up once per `cell`.
pub(crate) fn types_class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<Bound<'py, PyType>> {
    class_in(py, cell, "ascendir.types", name)
}

/// The member of value `value` of the enum class `name` of `ascendir.types`. The members are
/// read into a table once per `cell` (an enum's members never change), so a conversion is a
/// dictionary lookup instead of a call of the enum class; a value no member has goes through
/// the class (its `_missing_` or its `ValueError`).
fn enum_member(
    py: Python<'_>,
    cell: &'static PyOnceLock<(Py<PyType>, Py<PyDict>)>,
    name: &str,
    value: i64,
) -> PyResult<Py<PyAny>> {
    let (class, members) = cell.get_or_try_init(py, || -> PyResult<_> {
        let class = py
            .import("ascendir.types")?
            .getattr(name)?
            .cast_into::<PyType>()
            .map_err(PyErr::from)?;
        let members = PyDict::new(py);
        for member in class.try_iter()? {
            let member = member?;
            members.set_item(member.getattr("value")?, member)?;
        }
        Ok((class.unbind(), members.unbind()))
    })?;
    match members.bind(py).get_item(value)? {
        Some(m) => Ok(m.unbind()),
        None => Ok(class.bind(py).call1((value,))?.unbind()),
    }
}

/// The Python `DataType` member for `dt`.
pub fn py_dtype(py: Python<'_>, dt: DataType) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<(Py<PyType>, Py<PyDict>)> = PyOnceLock::new();
    enum_member(py, &CELL, "DataType", i64::from(dt.ge_value()))
}

/// The Python `Format` member for a full format int, or the plain int when it carries
/// sub-format or C0 bits (no enum member has those).
pub fn py_format(py: Python<'_>, format: i32) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<(Py<PyType>, Py<PyDict>)> = PyOnceLock::new();
    if Format::from_value(i64::from(format)).is_some() {
        enum_member(py, &CELL, "Format", i64::from(format))
    } else {
        Ok(format.into_pyobject(py)?.into_any().unbind())
    }
}

/// The Python `AttrKind` member for `kind`.
pub fn py_attr_kind(py: Python<'_>, kind: AttrKind) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<(Py<PyType>, Py<PyDict>)> = PyOnceLock::new();
    enum_member(py, &CELL, "AttrKind", kind as i64)
}

/// Accept a `DataType` member, its number, or its name (`"float16"`, `"DT_FLOAT16"`).
pub fn extract_dtype(obj: &Bound<'_, PyAny>) -> PyResult<DataType> {
    if let Ok(s) = obj.cast::<PyString>() {
        return DataType::from_name(s.to_str()?).py();
    }
    if obj.is_instance_of::<PyInt>() {
        let v: i64 = obj.extract()?;
        return DataType::from_ge(v)
            .ok_or_else(|| IrError::InvalidArgument(format!("{v} is not a DataType number")))
            .py();
    }
    // numpy dtypes and types: let the Python side map them.
    let py = obj.py();
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let cls = types_class(py, &CELL, "DataType")?;
    let member = cls.call_method1("from_numpy", (obj,))?;
    extract_dtype(&member)
}

/// Accept a `Format` member, a full format int, or a GE serial string (`"FRACTAL_Z:16"`).
pub fn extract_format(obj: &Bound<'_, PyAny>) -> PyResult<i32> {
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_str()?;
        if let Ok(f) = Format::from_name(text) {
            return Ok(f.value());
        }
        let parsed = bits::parse_serial_string(text);
        if parsed == Format::RESERVED.value() && !text.contains("RESERVED") {
            return Err(IrError::InvalidArgument(format!("unknown format '{text}'"))).py();
        }
        return Ok(parsed);
    }
    let v: i64 = obj.extract()?;
    let primary = v & 0xFF;
    if !(0..=i64::from(u32::MAX)).contains(&v) || Format::from_value(primary).is_none() {
        return Err(IrError::InvalidArgument(format!(
            "{v} is not a valid format"
        )))
        .py();
    }
    Ok(v as u32 as i32)
}

/// One row of the data type table: name, GE number, wire (proto) number, GE size code, serial
/// name, array-library name (numpy / `ml_dtypes` / torch) or `None`.
type DataTypeRow = (
    &'static str,
    i32,
    i32,
    i32,
    &'static str,
    Option<&'static str>,
);

#[pyfunction]
fn _data_type_table() -> PyResult<Vec<DataTypeRow>> {
    crate::errors::guard(|| {
        DataType::VALUES
            .iter()
            .map(|d| {
                (
                    d.name(),
                    d.ge_value(),
                    d.to_proto(),
                    d.size_code(),
                    d.serial_name(),
                    d.array_name(),
                )
            })
            .collect()
    })
}

#[pyfunction]
fn _format_table() -> PyResult<Vec<(&'static str, i32, &'static str, bool)>> {
    crate::errors::guard(|| {
        Format::VALUES
            .iter()
            .map(|f| (f.name(), f.value(), f.serial_name(), f.supports_mem_size()))
            .collect()
    })
}

#[pyfunction]
fn _attr_kind_table() -> PyResult<Vec<(&'static str, i64)>> {
    crate::errors::guard(|| {
        AttrKind::ALL
            .iter()
            .map(|k| (k.name(), *k as i64))
            .collect()
    })
}

/// GE's `GetSizeInBytes(count, dtype)`: -1 for negative counts or unsized types; an overflow
/// raises `SizeOverflowError` (the rule of every size helper).
#[pyfunction]
fn size_in_bytes_of(count: i64, dtype: &Bound<'_, PyAny>) -> PyResult<i64> {
    crate::errors::guard_res(|| {
        Ok(checked_size_in_bytes(count, extract_dtype(dtype)?)
            .py()?
            .unwrap_or(-1))
    })
}

/// GE's `CalcTensorMemSize(shape, format, dtype)`.
#[pyfunction]
fn calc_tensor_mem_size_of(
    shape: Vec<i64>,
    format: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
) -> PyResult<i64> {
    crate::errors::guard_res(|| {
        calc_tensor_mem_size(&shape, extract_format(format)?, extract_dtype(dtype)?).py()
    })
}

/// GE's `GetTensorMemorySizeInBytes` rounding of a byte size (round up to 32, plus 32); -1
/// (unknown) stays -1, an overflow raises `SizeOverflowError`.
#[pyfunction]
fn memory_size_of(size: i64) -> PyResult<i64> {
    crate::errors::guard_res(|| memory_size_in_bytes(size).py())
}

/// Format bit helpers: `(primary, sub_format, c0_format)` of a full format int.
#[pyfunction]
fn format_parts(format: i64) -> PyResult<(i32, i32, i32)> {
    crate::errors::guard(|| {
        let f = format as i32;
        (bits::primary(f), bits::sub_format(f), bits::c0_format(f))
    })
}

/// Compose a full format int from a primary format, a sub-format and a C0 format.
#[pyfunction]
#[pyo3(signature = (primary, sub_format=0, c0_format=0))]
fn make_format(primary: &Bound<'_, PyAny>, sub_format: i32, c0_format: i32) -> PyResult<i64> {
    crate::errors::guard_res(|| {
        let p = extract_format(primary)?;
        if !(0..=0xFFFF).contains(&sub_format) || !(0..=0xF).contains(&c0_format) {
            return Err(IrError::InvalidArgument(format!(
                "sub-format {sub_format} must be in 0..=65535 and C0 format {c0_format} in 0..=15"
            )))
            .py();
        }
        Ok(i64::from(
            bits::with_c0_format(bits::with_sub_format(p, sub_format), c0_format) as u32,
        ))
    })
}

/// GE's serial string of a full format int (`"FRACTAL_Z:16"`).
#[pyfunction]
fn format_serial_string(format: i64) -> PyResult<String> {
    crate::errors::guard(|| bits::serial_string(format as i32))
}

/// `GetC0Value`: `2^(c0_format-1)`, or -1 when the format has no C0 bits.
#[pyfunction]
fn format_c0_value(format: i64) -> PyResult<i64> {
    crate::errors::guard(|| bits::c0_value(format as i32))
}

/// Register the functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_data_type_table, m)?)?;
    m.add_function(wrap_pyfunction!(_format_table, m)?)?;
    m.add_function(wrap_pyfunction!(_attr_kind_table, m)?)?;
    m.add_function(wrap_pyfunction!(size_in_bytes_of, m)?)?;
    m.add_function(wrap_pyfunction!(calc_tensor_mem_size_of, m)?)?;
    m.add_function(wrap_pyfunction!(memory_size_of, m)?)?;
    m.add_function(wrap_pyfunction!(format_parts, m)?)?;
    m.add_function(wrap_pyfunction!(make_format, m)?)?;
    m.add_function(wrap_pyfunction!(format_serial_string, m)?)?;
    m.add_function(wrap_pyfunction!(format_c0_value, m)?)?;
    Ok(())
}
