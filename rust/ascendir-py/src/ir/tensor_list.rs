//! `Tensor.tolist()`: a tensor's values as nested Python lists, as numpy's `tolist` gives them,
//! made directly from the payload bytes for the plain numeric types (no array in between).

use ascendir_ir::{DataType, IrError, Tensor};
use half::{bf16, f16};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::IntoPyObjectExt;

use crate::errors::IntoPyResult;

/// The elements of `data` decoded as `dtype`, each as the Python object numpy's `tolist`
/// gives (`bool`, `int` or `float`), or `None` for a type without a plain element.
fn elements<'py>(
    py: Python<'py>,
    dtype: DataType,
    data: &[u8],
) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    fn each<'py, const N: usize, T: IntoPyObject<'py>>(
        py: Python<'py>,
        data: &[u8],
        f: impl Fn([u8; N]) -> T,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        data.chunks_exact(N)
            .map(|c| {
                let mut b = [0u8; N];
                b.copy_from_slice(c);
                f(b).into_bound_py_any(py)
            })
            .collect()
    }
    Ok(Some(match dtype {
        DataType::BOOL => each(py, data, |[b]: [u8; 1]| b != 0)?,
        DataType::INT8 => each(py, data, i8::from_le_bytes)?,
        DataType::UINT8 => each(py, data, u8::from_le_bytes)?,
        DataType::INT16 => each(py, data, i16::from_le_bytes)?,
        DataType::UINT16 => each(py, data, u16::from_le_bytes)?,
        DataType::INT32 => each(py, data, i32::from_le_bytes)?,
        DataType::UINT32 => each(py, data, u32::from_le_bytes)?,
        DataType::INT64 => each(py, data, i64::from_le_bytes)?,
        DataType::UINT64 => each(py, data, u64::from_le_bytes)?,
        DataType::FLOAT16 => each(py, data, |b| f64::from(f16::from_le_bytes(b)))?,
        DataType::BF16 => each(py, data, |b| f64::from(bf16::from_le_bytes(b)))?,
        DataType::FLOAT => each(py, data, |b| f64::from(f32::from_le_bytes(b)))?,
        DataType::DOUBLE => each(py, data, f64::from_le_bytes)?,
        _ => return Ok(None),
    }))
}

/// `elems` nested by `dims` (row-major), one list per leading dimension.
fn nest<'py>(
    py: Python<'py>,
    elems: &[Bound<'py, PyAny>],
    dims: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    match dims {
        [] => Ok(elems[0].clone()),
        [_] => Ok(PyList::new(py, elems)?.into_any()),
        [d, rest @ ..] => {
            let step: usize = rest.iter().product();
            let rows = (0..*d)
                .map(|i| nest(py, &elems[i * step..(i + 1) * step], rest))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, rows)?.into_any())
        }
    }
}

/// The most empty lists an empty tensor's values may nest (its payload is empty, so its shape
/// alone would set the size).
const MAX_EMPTY_LISTS: usize = 1 << 20;

/// numpy's nesting of an empty array: fresh lists down to the first zero dimension.
fn empty<'py>(py: Python<'py>, dims: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    match dims {
        [] | [0, ..] => Ok(PyList::empty(py).into_any()),
        [d, rest @ ..] => {
            let rows = (0..*d)
                .map(|_| empty(py, rest))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, rows)?.into_any())
        }
    }
}

/// The values of `t` as nested lists (a scalar for a tensor of shape `[]`), or `None` when
/// its type has no plain Python element (the caller then goes through numpy).
pub fn tolist<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Option<Bound<'py, PyAny>>> {
    let dims = t.desc.shape.as_slice();
    if dims.iter().any(|&d| d < 0) {
        return Err(IrError::InvalidArgument(format!(
            "cannot list the values of a tensor of unknown shape {dims:?}"
        )))
        .py();
    }
    let Some(elems) = elements(py, t.desc.dtype, &t.data)? else {
        return Ok(None);
    };
    let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let count = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if count != Some(elems.len()) {
        return Err(IrError::InvalidArgument(format!(
            "the tensor's payload holds {} {} elements, its shape {:?} needs {}",
            elems.len(),
            t.desc.dtype.name(),
            dims,
            count.map_or_else(|| "more than fit in memory".to_string(), |c| c.to_string()),
        )))
        .py();
    }
    if elems.is_empty() {
        let lists: usize = dims
            .iter()
            .take_while(|&&d| d != 0)
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .unwrap_or(usize::MAX);
        if lists > MAX_EMPTY_LISTS {
            return Err(IrError::InvalidArgument(format!(
                "an empty tensor of shape {dims:?} would list more than {MAX_EMPTY_LISTS} \
                 empty lists"
            )))
            .py();
        }
        return empty(py, &dims).map(Some);
    }
    nest(py, &elems, &dims).map(Some)
}
