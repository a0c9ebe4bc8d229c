//! Conversion between Python values and attribute values, keeping the kind exact.

use std::sync::Arc;

use ascendir_ir::{AttrKind, AttrMap, AttrValue, DataType, GraphAttr, IrError, NamedAttrs};
use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use super::graph::PyGraph;
use super::tensor::{payload_of, PyTensor, PyTensorDesc};
use super::types::{extract_dtype, py_dtype, types_class};
use crate::errors::IntoPyResult;

fn named_attrs_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    types_class(py, &CELL, "NamedAttrs")
}

fn data_type_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    types_class(py, &CELL, "DataType")
}

fn is_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    obj.get_type()
        .fully_qualified_name()
        .is_ok_and(|n| n.to_str().is_ok_and(|s| s == "numpy.ndarray"))
}

fn bad(key: &str, what: String) -> PyErr {
    crate::errors::py_err(IrError::InvalidArgument(format!(
        "attribute '{key}': {what}"
    )))
}

/// Python value for an attribute value.
pub fn attr_to_py(py: Python<'_>, v: &AttrValue) -> PyResult<Py<PyAny>> {
    let any = |o: Bound<'_, PyAny>| o.unbind();
    Ok(match v {
        AttrValue::Int(i) => any(i.into_pyobject(py)?.into_any()),
        AttrValue::Float(f) => any(f64::from(*f).into_pyobject(py)?.into_any()),
        AttrValue::Bool(b) => any(PyBool::new(py, *b).to_owned().into_any()),
        AttrValue::String(s) | AttrValue::Expression(s) => any(PyString::new(py, s).into_any()),
        AttrValue::Bytes(b) | AttrValue::RawString(b) => {
            any(crate::errors::py_bytes(py, b)?.into_any())
        }
        AttrValue::TensorDesc(d) => Py::new(py, PyTensorDesc::owned(d.clone()))?.into_any(),
        AttrValue::Tensor(t) => Py::new(py, PyTensor { inner: t.clone() })?.into_any(),
        AttrValue::Graph(g) => Py::new(py, PyGraph::from_graph((*g.0).clone()))?.into_any(),
        AttrValue::NamedAttrs(n) => named_to_py(py, n)?,
        AttrValue::DataType(d) => py_dtype(py, *d)?,
        AttrValue::ListInt(l) => any(PyList::new(py, l)?.into_any()),
        AttrValue::ListFloat(l) => {
            any(PyList::new(py, l.iter().map(|f| f64::from(*f)))?.into_any())
        }
        AttrValue::ListBool(l) => any(PyList::new(py, l)?.into_any()),
        AttrValue::ListString(l) => any(PyList::new(py, l)?.into_any()),
        AttrValue::ListBytes(l) => {
            let items = l
                .iter()
                .map(|b| crate::errors::py_bytes(py, b))
                .collect::<PyResult<Vec<_>>>()?;
            any(PyList::new(py, items)?.into_any())
        }
        AttrValue::ListTensorDesc(l) => {
            let items: PyResult<Vec<_>> = l
                .iter()
                .map(|d| Py::new(py, PyTensorDesc::owned(d.clone())))
                .collect();
            any(PyList::new(py, items?)?.into_any())
        }
        AttrValue::ListTensor(l) => {
            let items: PyResult<Vec<_>> = l
                .iter()
                .map(|t| Py::new(py, PyTensor { inner: t.clone() }))
                .collect();
            any(PyList::new(py, items?)?.into_any())
        }
        AttrValue::ListGraph(l) => {
            let items: PyResult<Vec<_>> = l
                .iter()
                .map(|g| Py::new(py, PyGraph::from_graph((*g.0).clone())))
                .collect();
            any(PyList::new(py, items?)?.into_any())
        }
        AttrValue::ListNamedAttrs(l) => {
            let items: PyResult<Vec<_>> = l.iter().map(|n| named_to_py(py, n)).collect();
            any(PyList::new(py, items?)?.into_any())
        }
        AttrValue::ListDataType(l) => {
            let items: PyResult<Vec<_>> = l.iter().map(|d| py_dtype(py, *d)).collect();
            any(PyList::new(py, items?)?.into_any())
        }
        AttrValue::ListListInt(l) => {
            any(PyList::new(py, l.iter().map(|r| PyList::new(py, r).ok()))?.into_any())
        }
        AttrValue::ListListFloat(l) => any(PyList::new(
            py,
            l.iter()
                .map(|r| PyList::new(py, r.iter().map(|f| f64::from(*f))).ok()),
        )?
        .into_any()),
    })
}

fn named_to_py(py: Python<'_>, n: &NamedAttrs) -> PyResult<Py<PyAny>> {
    let dict = attrs_to_dict(py, &n.attrs)?;
    Ok(named_attrs_class(py)?
        .call1((n.name.clone(), dict))?
        .unbind())
}

/// A plain dict of an attribute map.
pub fn attrs_to_dict<'py>(py: Python<'py>, attrs: &AttrMap) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in attrs {
        dict.set_item(k, attr_to_py(py, v)?)?;
    }
    Ok(dict)
}

/// An attribute map from a Python mapping (kinds inferred).
pub fn dict_to_attrs(obj: &Bound<'_, PyAny>) -> PyResult<AttrMap> {
    let mut out = AttrMap::new();
    let items = obj.call_method0("items")?;
    for item in items.try_iter()? {
        let (k, v): (String, Bound<'_, PyAny>) = item?.extract()?;
        let value = py_to_attr(&k, &v, None)?;
        out.insert(k, value);
    }
    Ok(out)
}

fn is_dtype_member(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.is_instance(data_type_class(obj.py())?.as_any())
}

/// Infer the kind of a scalar Python value.
fn scalar_kind(obj: &Bound<'_, PyAny>) -> PyResult<Option<AttrKind>> {
    let py = obj.py();
    Ok(Some(if obj.is_instance_of::<PyBool>() {
        AttrKind::Bool
    } else if is_dtype_member(obj)? {
        AttrKind::DataType
    } else if obj.is_instance_of::<PyInt>() {
        AttrKind::Int
    } else if obj.is_instance_of::<PyFloat>() {
        AttrKind::Float
    } else if obj.is_instance_of::<PyString>() {
        AttrKind::String
    } else if obj.is_instance_of::<PyBytes>() {
        AttrKind::Bytes
    } else if obj.is_instance_of::<PyTensorDesc>() {
        AttrKind::TensorDesc
    } else if obj.is_instance_of::<PyTensor>() || is_ndarray(obj) {
        AttrKind::Tensor
    } else if obj.is_instance_of::<PyGraph>() {
        AttrKind::Graph
    } else if obj.is_instance(named_attrs_class(py)?.as_any())? {
        AttrKind::NamedAttrs
    } else if let Ok(b) = obj.cast::<PyBool>() {
        let _ = b;
        AttrKind::Bool
    } else if obj.hasattr("__index__")? && !obj.hasattr("__float__")? {
        AttrKind::Int
    } else {
        return Ok(None);
    }))
}

fn list_kind_of(scalar: AttrKind) -> AttrKind {
    match scalar {
        AttrKind::Int => AttrKind::ListInt,
        AttrKind::Float => AttrKind::ListFloat,
        AttrKind::Bool => AttrKind::ListBool,
        AttrKind::String => AttrKind::ListString,
        AttrKind::Bytes => AttrKind::ListBytes,
        AttrKind::TensorDesc => AttrKind::ListTensorDesc,
        AttrKind::Tensor => AttrKind::ListTensor,
        AttrKind::Graph => AttrKind::ListGraph,
        AttrKind::NamedAttrs => AttrKind::ListNamedAttrs,
        AttrKind::DataType => AttrKind::ListDataType,
        other => other,
    }
}

/// Infer the kind of any Python value (lists by their elements; an empty list is LIST_INT).
pub fn infer_kind(key: &str, obj: &Bound<'_, PyAny>) -> PyResult<AttrKind> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        let Some(first) = items.first() else {
            return Ok(AttrKind::ListInt);
        };
        if first.is_instance_of::<PyList>() || first.is_instance_of::<PyTuple>() {
            let mut any_float = false;
            for row in &items {
                for x in row.try_iter()? {
                    if x?.is_instance_of::<PyFloat>() {
                        any_float = true;
                    }
                }
            }
            return Ok(if any_float {
                AttrKind::ListListFloat
            } else {
                AttrKind::ListListInt
            });
        }
        let mut kind = scalar_kind(first)?;
        for x in &items[1..] {
            let k = scalar_kind(x)?;
            kind = match (kind, k) {
                (Some(a), Some(b)) if a == b => Some(a),
                (Some(AttrKind::Int), Some(AttrKind::Float))
                | (Some(AttrKind::Float), Some(AttrKind::Int)) => Some(AttrKind::Float),
                _ => {
                    return Err(bad(key, "a list must hold values of one kind".to_string()));
                }
            };
        }
        return kind.map(list_kind_of).ok_or_else(|| {
            bad(
                key,
                format!("unsupported list element type {}", first.get_type()),
            )
        });
    }
    scalar_kind(obj)?.ok_or_else(|| bad(key, format!("unsupported value type {}", obj.get_type())))
}

fn items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    obj.try_iter()?.collect()
}

fn graph_of(obj: &Bound<'_, PyAny>) -> PyResult<GraphAttr> {
    let g = obj.cast::<PyGraph>()?;
    Ok(GraphAttr(Arc::new(PyGraph::read(g, |g| g.clone())?)))
}

fn named_of(key: &str, obj: &Bound<'_, PyAny>) -> PyResult<NamedAttrs> {
    if !obj.is_instance(named_attrs_class(obj.py())?.as_any())? {
        return Err(bad(
            key,
            format!("expected NamedAttrs, got {}", obj.get_type()),
        ));
    }
    Ok(NamedAttrs {
        name: obj.getattr("name")?.extract()?,
        attrs: dict_to_attrs(&obj.getattr("attrs")?)?,
    })
}

fn tensor_of(obj: &Bound<'_, PyAny>) -> PyResult<ascendir_ir::Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(t.get().inner.clone());
    }
    PyTensor::from_array(obj, None)
}

fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Bytes::copy_from_slice(s.to_str()?.as_bytes()));
    }
    payload_of(obj)
}

fn float_of(obj: &Bound<'_, PyAny>) -> PyResult<f32> {
    Ok(obj.extract::<f64>()? as f32)
}

/// Convert a Python value to an attribute value of `kind` (inferred when `None`).
pub fn py_to_attr(
    key: &str,
    obj: &Bound<'_, PyAny>,
    kind: Option<AttrKind>,
) -> PyResult<AttrValue> {
    let kind = match kind {
        Some(k) => k,
        None => infer_kind(key, obj)?,
    };
    let wrap = |e: PyErr| bad(key, format!("cannot store as {}: {e}", kind.name()));
    let value = (|| -> PyResult<AttrValue> {
        Ok(match kind {
            AttrKind::Int => AttrValue::Int(obj.extract()?),
            AttrKind::Float => AttrValue::Float(float_of(obj)?),
            AttrKind::Bool => AttrValue::Bool(obj.extract()?),
            // `bytes` for a string: kept as text when it is UTF-8, else as the raw bytes GE's
            // `AttrDef.s` holds (what reading such an attribute gives).
            AttrKind::String => match obj.extract::<String>() {
                Ok(s) => AttrValue::String(s),
                Err(e) => match obj.cast::<pyo3::types::PyBytes>() {
                    Ok(b) => match std::str::from_utf8(b.as_bytes()) {
                        Ok(s) => AttrValue::String(s.to_string()),
                        Err(_) => AttrValue::RawString(bytes::Bytes::copy_from_slice(b.as_bytes())),
                    },
                    Err(_) => return Err(e),
                },
            },
            AttrKind::Expression => AttrValue::Expression(obj.str()?.to_string()),
            AttrKind::Bytes => AttrValue::Bytes(bytes_of(obj)?),
            AttrKind::TensorDesc => AttrValue::TensorDesc(PyTensorDesc::extract_arc(obj)?),
            AttrKind::Tensor => AttrValue::Tensor(tensor_of(obj)?),
            AttrKind::Graph => AttrValue::Graph(graph_of(obj)?),
            AttrKind::NamedAttrs => AttrValue::NamedAttrs(Box::new(named_of(key, obj)?)),
            AttrKind::DataType => AttrValue::DataType(extract_dtype(obj)?),
            AttrKind::ListInt => AttrValue::ListInt(
                items(obj)?
                    .iter()
                    .map(|x| x.extract())
                    .collect::<PyResult<_>>()?,
            ),
            AttrKind::ListFloat => {
                AttrValue::ListFloat(items(obj)?.iter().map(float_of).collect::<PyResult<_>>()?)
            }
            AttrKind::ListBool => AttrValue::ListBool(
                items(obj)?
                    .iter()
                    .map(|x| x.extract())
                    .collect::<PyResult<_>>()?,
            ),
            AttrKind::ListString => AttrValue::ListString(
                items(obj)?
                    .iter()
                    .map(|x| x.extract())
                    .collect::<PyResult<_>>()?,
            ),
            AttrKind::ListBytes => {
                AttrValue::ListBytes(items(obj)?.iter().map(bytes_of).collect::<PyResult<_>>()?)
            }
            AttrKind::ListTensorDesc => AttrValue::ListTensorDesc(
                items(obj)?
                    .iter()
                    .map(PyTensorDesc::extract_arc)
                    .collect::<PyResult<_>>()?,
            ),
            AttrKind::ListTensor => {
                AttrValue::ListTensor(items(obj)?.iter().map(tensor_of).collect::<PyResult<_>>()?)
            }
            AttrKind::ListGraph => {
                AttrValue::ListGraph(items(obj)?.iter().map(graph_of).collect::<PyResult<_>>()?)
            }
            AttrKind::ListNamedAttrs => AttrValue::ListNamedAttrs(
                items(obj)?
                    .iter()
                    .map(|x| named_of(key, x))
                    .collect::<PyResult<_>>()?,
            ),
            AttrKind::ListDataType => AttrValue::ListDataType(
                items(obj)?
                    .iter()
                    .map(extract_dtype)
                    .collect::<PyResult<Vec<DataType>>>()?,
            ),
            AttrKind::ListListInt => AttrValue::ListListInt(
                items(obj)?
                    .iter()
                    .map(|row| items(row)?.iter().map(|x| x.extract()).collect())
                    .collect::<PyResult<_>>()?,
            ),
            AttrKind::ListListFloat => AttrValue::ListListFloat(
                items(obj)?
                    .iter()
                    .map(|row| items(row)?.iter().map(float_of).collect())
                    .collect::<PyResult<_>>()?,
            ),
        })
    })();
    value.map_err(|e| {
        if e.is_instance_of::<pyo3::exceptions::PyTypeError>(obj.py())
            || e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py())
        {
            wrap(e)
        } else {
            e
        }
    })
}

/// Parse an `AttrKind` argument (member, number or name).
pub fn extract_kind(obj: &Bound<'_, PyAny>) -> PyResult<AttrKind> {
    if let Ok(s) = obj.cast::<PyString>() {
        let name = s.to_str()?.to_ascii_uppercase();
        return AttrKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| IrError::InvalidArgument(format!("unknown attribute kind '{name}'")))
            .py();
    }
    let v: i64 = obj.extract()?;
    AttrKind::from_value(v)
        .ok_or_else(|| IrError::InvalidArgument(format!("{v} is not an attribute kind")))
        .py()
}
