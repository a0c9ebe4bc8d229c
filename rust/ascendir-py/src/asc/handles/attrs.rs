//! The attribute proxies of nodes and outputs: `node.attr` ([`PyNodeAttr`]) with `sched`
//! ([`PySched`]), `api` ([`PyApi`]) and `ir_attr` ([`PyIrAttr`]); `out.mem` / `.que` / `.buf` /
//! `.opt` ([`PyTensorGroup`]).

use ascendir_asc::{ApiType, AscError, ComputeType, ComputeUnit};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyType};
use pyo3::{PyTraverseError, PyVisit};

use super::axis::axis_ids_for;
use super::node::PyNode;
use super::output::PyOutput;
use super::At;
use crate::asc::graph::{attr_from_py, attr_to_py, enum_by_name, exec_condition, set_mem_field};
use crate::errors::{py_err, IntoPyResult};
use crate::ir::types::class_in;

fn invalid(msg: String) -> PyErr {
    py_err(AscError::InvalidArgument(msg))
}

/// `node.attr`: `sched`, `api`, `ir_attr`.
#[pyclass(name = "NodeAttr", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyNodeAttr {
    node: Py<PyNode>,
}

impl PyNodeAttr {
    pub(super) fn new(node: Py<PyNode>) -> PyNodeAttr {
        PyNodeAttr { node }
    }
}

#[pymethods]
impl PyNodeAttr {
    /// Scheduling info.
    #[getter]
    fn sched(&self, py: Python<'_>) -> PyResult<PySched> {
        crate::errors::guard(|| PySched {
            node: self.node.clone_ref(py),
        })
    }

    /// API info.
    #[getter]
    fn api(&self, py: Python<'_>) -> PyResult<PyApi> {
        crate::errors::guard(|| PyApi {
            node: self.node.clone_ref(py),
        })
    }

    /// Per-op IR attributes.
    #[getter]
    fn ir_attr(&self, py: Python<'_>) -> PyResult<PyIrAttr> {
        crate::errors::guard(|| PyIrAttr {
            node: self.node.clone_ref(py),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || visit.call(&self.node))
    }
}

/// `node.attr.sched`: `axis`, `loop_axis`, `exec_order`, `exec_condition`.
#[pyclass(name = "SchedProxy", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PySched {
    node: Py<PyNode>,
}

#[pymethods]
impl PySched {
    /// Loop axis ids, outer to inner.
    #[getter]
    fn axis(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?.read(|g, id| Ok(g.node(id).py()?.attr.sched.axis.clone()))
        })
    }

    #[setter]
    fn set_axis(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let node = self.node.bind(value.py());
            let ids = axis_ids_for(node, value)?;
            At::of(node)?.write(|g, id| g.set_sched_axis(id, &ids).py())
        })
    }

    /// The innermost loop axis id (-1 = unset).
    #[getter]
    fn loop_axis(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?.read(|g, id| Ok(g.node(id).py()?.attr.sched.loop_axis))
        })
    }

    #[setter]
    fn set_loop_axis(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let node = self.node.bind(value.py());
            let one = pyo3::types::PyList::new(value.py(), [value])?;
            let a = axis_ids_for(node, one.as_any())?[0];
            At::of(node)?.write(|g, id| {
                if a != -1 && g.find_axis(a).is_none() {
                    return Err(py_err(AscError::NotFound(format!("no axis with id {a}"))));
                }
                g.node_mut(id).py()?.attr.sched.loop_axis = a;
                Ok(())
            })
        })
    }

    /// Execution order (-1 = node order).
    #[getter]
    fn exec_order(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?.read(|g, id| Ok(g.node(id).py()?.attr.sched.exec_order))
        })
    }

    #[setter]
    fn set_exec_order(&self, py: Python<'_>, value: i64) -> PyResult<()> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?.write(|g, id| {
                g.node_mut(id).py()?.attr.sched.exec_order = value;
                Ok(())
            })
        })
    }

    /// Caching condition name (`no_cache` ...).
    #[getter]
    fn exec_condition(&self, py: Python<'_>) -> PyResult<&'static str> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?
                .read(|g, id| Ok(g.node(id).py()?.attr.sched.exec_condition.name()))
        })
    }

    #[setter]
    fn set_exec_condition(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let c = exec_condition(value)?;
            At::of(self.node.bind(value.py()))?.write(|g, id| {
                g.node_mut(id).py()?.attr.sched.exec_condition = c;
                Ok(())
            })
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || visit.call(&self.node))
    }
}

/// The `ComputeUnit` enum of `ascendir.asc`.
fn compute_unit_enum(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    class_in(py, &CELL, "ascendir.asc._axis", "ComputeUnit")
}

/// `node.attr.api`: `compute_type`, `type`, `unit` (lower-case names; `unit` reads as a
/// `ComputeUnit`).
#[pyclass(name = "ApiProxy", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyApi {
    node: Py<PyNode>,
}

#[pymethods]
impl PyApi {
    /// Compute type (`load`, `elewise`, ...); setting it also sets type and unit.
    #[getter]
    fn compute_type(&self, py: Python<'_>) -> PyResult<&'static str> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?
                .read(|g, id| Ok(g.node(id).py()?.attr.api.compute_type.name()))
        })
    }

    #[setter]
    fn set_compute_type(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let ct = if let Ok(s) = value.extract::<String>() {
                ComputeType::parse(&s).py()?
            } else {
                let v: i64 = value.extract()?;
                if !(0..=11).contains(&v) {
                    return Err(invalid(format!("compute type {v} is out of range")));
                }
                ComputeType::from_i64(v)
            };
            At::of(self.node.bind(value.py()))?.write(|g, id| {
                let api = &mut g.node_mut(id).py()?.attr.api;
                let (t, u) = ct.api_completion();
                api.compute_type = ct;
                api.api_type = t;
                api.unit = u;
                Ok(())
            })
        })
    }

    /// API type (`buffer` or `compute`).
    #[getter(r#type)]
    fn api_type(&self, py: Python<'_>) -> PyResult<&'static str> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?.read(|g, id| Ok(g.node(id).py()?.attr.api.api_type.name()))
        })
    }

    #[setter(r#type)]
    fn set_api_type(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let s: String = value.extract()?;
            let t = enum_by_name(ApiType::ALL, ApiType::name, &s, "api type")?;
            At::of(self.node.bind(value.py()))?.write(|g, id| {
                g.node_mut(id).py()?.attr.api.api_type = t;
                Ok(())
            })
        })
    }

    /// Compute unit (`ComputeUnit`: `VECTOR`, `MTE2`, ...).
    #[getter]
    fn unit(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let u = At::of(self.node.bind(py))?.read(|g, id| Ok(g.node(id).py()?.attr.api.unit))?;
            Ok(compute_unit_enum(py)?
                .get_item(u.name().to_ascii_uppercase())?
                .unbind())
        })
    }

    #[setter]
    fn set_unit(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let py = value.py();
            let cls = compute_unit_enum(py)?;
            let name = if value.is_instance(&cls)? {
                value
                    .getattr("name")?
                    .extract::<String>()?
                    .to_ascii_lowercase()
            } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                let v: i64 = value.extract()?;
                match cls.call1((v,)) {
                    Ok(m) => m.getattr("name")?.extract::<String>()?.to_ascii_lowercase(),
                    Err(_) => {
                        let all = ComputeUnit::ALL
                            .iter()
                            .map(|u| (*u as i64).to_string())
                            .collect::<Vec<_>>()
                            .join(", ");
                        return Err(invalid(format!(
                            "compute unit {v} is not one of GE's [{all}]"
                        )));
                    }
                }
            } else {
                value.str()?.to_string()
            };
            let unit = enum_by_name(ComputeUnit::ALL, ComputeUnit::name, &name, "compute unit")?;
            At::of(self.node.bind(py))?.write(|g, id| {
                g.node_mut(id).py()?.attr.api.unit = unit;
                Ok(())
            })
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || visit.call(&self.node))
    }
}

/// `node.attr.ir_attr.<name>`: the op's IR attributes, type-checked by its prototype.
#[pyclass(name = "IrAttrProxy", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyIrAttr {
    node: Py<PyNode>,
}

#[pymethods]
impl PyIrAttr {
    /// An attribute value (None when unset; NotFoundError when the prototype has no such
    /// attribute).
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            if name.starts_with("__") {
                return Err(PyAttributeError::new_err(name.to_string()));
            }
            At::of(self.node.bind(py))?.read(|g, id| {
                let n = g.node(id).py()?;
                match n.attr.ir_attr.get(name) {
                    Some(v) => attr_to_py(py, v),
                    None if n.op.find_attr(name).is_some() || n.op.attrs.is_empty() => {
                        Ok(py.None())
                    }
                    None => Err(py_err(AscError::NotFound(format!(
                        "node '{}' ({}): no IR attribute '{name}'",
                        n.name,
                        n.op_type()
                    )))),
                }
            })
        })
    }

    /// Set an attribute (a `DataType` is stored as its number).
    fn __setattr__(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(value.py()))?.write(|g, id| {
                let ty = g.node(id).py()?.op.find_attr(name).map(|a| a.ty);
                let v = attr_from_py(name, ty, value)?;
                g.set_ir_attr(id, name, v).py()
            })
        })
    }

    /// Names of the attributes that are set.
    fn names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            At::of(self.node.bind(py))?
                .read(|g, id| Ok(g.node(id).py()?.attr.ir_attr.keys().cloned().collect()))
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || visit.call(&self.node))
    }
}

/// `out.mem` / `out.que` / `out.buf` / `out.opt`: one memory attribute group of an output.
#[pyclass(name = "TensorAttrGroup", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyTensorGroup {
    out: Py<PyOutput>,
    group: &'static str,
}

impl PyTensorGroup {
    pub(super) fn new(out: Py<PyOutput>, group: &'static str) -> PyTensorGroup {
        PyTensorGroup { out, group }
    }

    fn dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        self.out.get().read(py, |t| {
            match self.group {
                "mem" => {
                    d.set_item("tensor_id", t.mem.tensor_id)?;
                    d.set_item("alloc_type", t.mem.alloc_type.name())?;
                    d.set_item("hardware", t.mem.hardware.name())?;
                    d.set_item("position", t.mem.position.name())?;
                    d.set_item("reuse_id", t.mem.reuse_id)?;
                }
                "que" => {
                    d.set_item("id", t.que.id)?;
                    d.set_item("depth", t.que.depth)?;
                    d.set_item("buf_num", t.que.buf_num)?;
                }
                "buf" => d.set_item("id", t.buf.id)?,
                _ => {
                    d.set_item("reuse_id", t.opt.reuse_id)?;
                    d.set_item("ref_tensor", t.opt.ref_tensor)?;
                    d.set_item("merge_scope", t.opt.merge_scope)?;
                }
            }
            Ok(())
        })?;
        Ok(d)
    }
}

#[pymethods]
impl PyTensorGroup {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| match self.dict(py)?.get_item(name)? {
            Some(v) => Ok(v.unbind()),
            None => Err(PyAttributeError::new_err(name.to_string())),
        })
    }

    fn __setattr__(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let group = self.group;
            self.out.get().write(value.py(), |g, id, i| {
                set_mem_field(g.tensor_mut(id, i).py()?, group, name, value)
            })
        })
    }

    /// The group's fields as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard_res(|| self.dict(py))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| Ok(self.dict(py)?.repr()?.to_string()))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || visit.call(&self.out))
    }
}
