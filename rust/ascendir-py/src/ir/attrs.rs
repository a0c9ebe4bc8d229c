//! `ascendir.AttrMap`: the mutable mapping behind `graph.attrs`, `op_desc.attrs` and
//! `tensor_desc.attrs`, reading and writing the owner in place.

use ascendir_ir::{AttrMap, IrError, NodeId};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::convert::{attr_to_py, extract_kind, py_to_attr};
use super::graph::PyGraph;
use super::op_desc::PyOpDesc;
use super::tensor::PyTensorDesc;
use super::types::py_attr_kind;
use crate::errors::py_err;

/// Who holds the attributes.
#[derive(Debug)]
pub enum AttrOwner {
    /// A graph's attributes.
    Graph(Py<PyGraph>),
    /// The op attributes of a node.
    Node {
        /// The graph.
        graph: Py<PyGraph>,
        /// The node.
        node: NodeId,
    },
    /// A standalone op desc.
    Op(Py<PyOpDesc>),
    /// A tensor desc (standalone or a port view).
    Desc(Py<PyTensorDesc>),
}

/// A mutable mapping `str -> value` whose values keep their GE attribute kind.
#[pyclass(name = "AttrMap", module = "ascendir")]
#[derive(Debug)]
pub struct PyAttrMap {
    /// The holder of the attributes.
    pub owner: AttrOwner,
}

static EMPTY: AttrMap = AttrMap::new();

impl PyAttrMap {
    fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&AttrMap) -> R) -> PyResult<R> {
        match &self.owner {
            AttrOwner::Graph(g) => PyGraph::read(g.bind(py), |g| f(&g.attrs)),
            AttrOwner::Node { graph, node } => {
                PyGraph::try_read(graph.bind(py), |g| g.op(*node).map(|op| f(&op.attrs)))
            }
            AttrOwner::Op(op) => PyOpDesc::try_with(op.bind(py), |od| Ok(f(&od.attrs))),
            AttrOwner::Desc(d) => d
                .bind(py)
                .borrow()
                .with(py, |d| f(d.attrs.as_deref().unwrap_or(&EMPTY))),
        }
    }

    fn write<R>(&self, py: Python<'_>, f: impl FnOnce(&mut AttrMap) -> R) -> PyResult<R> {
        match &self.owner {
            AttrOwner::Graph(g) => PyGraph::write(g.bind(py), |g| f(&mut g.attrs)),
            AttrOwner::Node { graph, node } => PyGraph::try_write(graph.bind(py), |g| {
                g.modify_op(*node, |op| f(&mut op.attrs))
            }),
            AttrOwner::Op(op) => PyOpDesc::try_with_mut(op.bind(py), |od| Ok(f(&mut od.attrs))),
            AttrOwner::Desc(d) => d.bind(py).borrow_mut().with_mut(py, |d| f(d.attrs_mut())),
        }
    }

    fn missing(key: &str) -> PyErr {
        py_err(IrError::NotFound(format!("no attribute named '{key}'")))
    }
}

#[pymethods]
impl PyAttrMap {
    fn __getitem__(&self, py: Python<'_>, key: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let v = self.read(py, |m| m.get(key).cloned())?;
            match v {
                Some(v) => attr_to_py(py, &v),
                None => Err(PyAttrMap::missing(key)),
            }
        })
    }

    fn __setitem__(&self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let v = py_to_attr(key, value, None)?;
            self.write(py, |m| {
                m.insert(key.to_string(), v);
            })
        })
    }

    fn __delitem__(&self, py: Python<'_>, key: &str) -> PyResult<()> {
        crate::errors::guard_res(|| match self.write(py, |m| m.remove(key))? {
            Some(_) => Ok(()),
            None => Err(PyAttrMap::missing(key)),
        })
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let Ok(key) = key.extract::<String>() else {
                return Ok(false);
            };
            self.read(py, |m| m.contains_key(&key))
        })
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        crate::errors::guard_res(|| self.read(py, |m| m.len()))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| self.keys(py)?.into_any().try_iter().map(|i| i.into_any()))
    }

    /// The attribute names, sorted.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let keys = self.read(py, |m| m.keys().map(str::to_string).collect::<Vec<_>>())?;
            PyList::new(py, keys)
        })
    }

    /// The values, in name order.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let vals = self.read(py, |m| m.values().cloned().collect::<Vec<_>>())?;
            let items: PyResult<Vec<_>> = vals.iter().map(|v| attr_to_py(py, v)).collect();
            PyList::new(py, items?)
        })
    }

    /// `(name, value)` pairs, in name order.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let pairs = self.read(py, |m| {
                m.iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect::<Vec<_>>()
            })?;
            let items: PyResult<Vec<_>> = pairs
                .iter()
                .map(|(k, v)| Ok((k.clone(), attr_to_py(py, v)?)))
                .collect();
            PyList::new(py, items?)
        })
    }

    /// The value of `key`, or `default`.
    #[pyo3(signature = (key, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &str,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        crate::errors::guard_res(|| match self.read(py, |m| m.get(key).cloned())? {
            Some(v) => Ok(Some(attr_to_py(py, &v)?)),
            None => Ok(default),
        })
    }

    /// The kind of attribute `key` (an `AttrKind`).
    fn kind(&self, py: Python<'_>, key: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| match self.read(py, |m| m.get(key).map(|v| v.kind()))? {
            Some(k) => py_attr_kind(py, k),
            None => Err(PyAttrMap::missing(key)),
        })
    }

    /// Set `key` to `value`, forcing `kind` when given (e.g. FLOAT for an int, BYTES for a str).
    #[pyo3(signature = (key, value, *, kind=None))]
    fn set(
        &self,
        py: Python<'_>,
        key: &str,
        value: &Bound<'_, PyAny>,
        kind: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let kind = kind.map(extract_kind).transpose()?;
            let v = py_to_attr(key, value, kind)?;
            self.write(py, |m| {
                m.insert(key.to_string(), v);
            })
        })
    }

    /// Update from a mapping (kinds inferred), like `dict.update`.
    fn update(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let parsed = super::convert::dict_to_attrs(other)?;
            self.write(py, |m| m.extend(parsed))
        })
    }

    /// Remove every attribute.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        crate::errors::guard_res(|| self.write(py, |m| m.clear()))
    }

    /// Remove `key` and return its value (or `default`; `KeyError` when neither).
    #[pyo3(signature = (key, default=None))]
    fn pop(&self, py: Python<'_>, key: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| match self.write(py, |m| m.remove(key))? {
            Some(v) => attr_to_py(py, &v),
            None => default.ok_or_else(|| PyAttrMap::missing(key)),
        })
    }

    /// A plain `dict` copy.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::errors::guard_res(|| {
            let map = self.read(py, |m| m.clone())?;
            super::convert::attrs_to_dict(py, &map)
        })
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let mine = self.to_dict(py)?;
            if let Ok(o) = other.cast::<PyAttrMap>() {
                return mine.eq(o.borrow().to_dict(py)?);
            }
            mine.eq(other)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| Ok(format!("AttrMap({})", self.to_dict(py)?.repr()?)))
    }
}
