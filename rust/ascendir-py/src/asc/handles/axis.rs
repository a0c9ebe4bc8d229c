//! `ascendir._core.asc.Axis`: one axis of a graph (GE's `ge::Axis`), and the resolution of
//! axis arguments (`Axis` handles or ids).

use ascendir_asc::{AscError, AscGraph, Axis};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PyType};
use pyo3::{PyTraverseError, PyVisit};

use super::node::{attach_to, graph_of, PyNode};
use super::{core_of, read, write};
use crate::asc::expr::{to_expr, PyExpr};
use crate::asc::graph::PyAscGraph;
use crate::errors::py_err;
use crate::ir::types::class_in;

/// A handle to one axis of a graph: compare and hash it (by graph identity and id) and use it
/// in views, loop axes and axis maps.
#[pyclass(name = "Axis", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyAxis {
    /// The Python graph object owning the axis.
    graph: Py<PyAny>,
    /// Its engine graph.
    core: Py<PyAscGraph>,
    /// Axis id (its index in the graph).
    id: i64,
}

/// The `AxisType` member numbered `v`.
fn axis_type(py: Python<'_>, v: i64) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    Ok(class_in(py, &CELL, "ascendir.asc._axis", "AxisType")?
        .call1((v,))?
        .unbind())
}

impl PyAxis {
    /// A handle to axis `id` of `graph` (NotFoundError when it has none).
    pub(crate) fn of(graph: &Bound<'_, PyAny>, id: i64) -> PyResult<PyAxis> {
        let core = core_of(graph)?;
        read(&core, |g| found(g, id).map(|_| ()))?;
        Ok(PyAxis {
            graph: graph.clone().unbind(),
            core: core.unbind(),
            id,
        })
    }

    fn get<R>(&self, py: Python<'_>, f: impl FnOnce(&Axis) -> R) -> PyResult<R> {
        let id = self.id;
        read(self.core.bind(py), |g| found(g, id).map(f))
    }

    fn set(&self, py: Python<'_>, f: impl FnOnce(&mut Axis)) -> PyResult<()> {
        let id = self.id;
        write(self.core.bind(py), |g| {
            f(g.axis_mut(id).map_err(py_err)?);
            Ok(())
        })
    }
}

fn found(g: &AscGraph, id: i64) -> PyResult<&Axis> {
    g.find_axis(id).ok_or_else(|| {
        py_err(AscError::NotFound(format!(
            "graph '{}': no axis with id {id} (it has {})",
            g.name,
            g.axes().len()
        )))
    })
}

fn expr(py: Python<'_>, e: &ascendir_asc::Expr) -> PyResult<Py<PyExpr>> {
    Py::new(py, PyExpr { e: e.clone() })
}

/// The id of an axis argument: an `Axis` (of `graph` when given) or an int id.
#[pyfunction]
#[pyo3(name = "_axis_id", signature = (graph, value))]
pub fn axis_id(graph: Option<&Bound<'_, PyAny>>, value: &Bound<'_, PyAny>) -> PyResult<i64> {
    crate::errors::guard_res(|| {
        if let Ok(a) = value.cast::<PyAxis>() {
            let a = a.get();
            if let Some(g) = graph {
                if !a.graph.is(g) {
                    let name = a.get(value.py(), |x| x.name.clone())?;
                    return Err(py_err(AscError::InvalidArgument(format!(
                        "axis {name} belongs to another graph"
                    ))));
                }
            }
            return Ok(a.id);
        }
        if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
            return value.extract();
        }
        Err(py_err(AscError::InvalidArgument(format!(
            "expected an Axis or an axis id, got {}",
            value.repr()?
        ))))
    })
}

/// The ids of the axis arguments `values` for `node`: the node first joins the graph of the
/// first `Axis` among them (when it has no graph yet), and every `Axis` must be of its graph.
pub(super) fn axis_ids_for(
    node: &Bound<'_, PyNode>,
    values: &Bound<'_, PyAny>,
) -> PyResult<Vec<i64>> {
    let items = values
        .try_iter()?
        .collect::<PyResult<Vec<Bound<'_, PyAny>>>>()?;
    let first = items.iter().find_map(|v| v.cast::<PyAxis>().ok());
    if let Some(a) = first {
        attach_to(node, Some(a.get().graph.bind(node.py())))?;
    }
    let graph = graph_of(node)?;
    items.iter().map(|v| axis_id(graph.as_ref(), v)).collect()
}

#[pymethods]
impl PyAxis {
    /// The handle of axis `axis_id` of `graph`.
    #[new]
    fn py_new(graph: &Bound<'_, PyAny>, axis_id: i64) -> PyResult<PyAxis> {
        crate::errors::guard_res(|| PyAxis::of(graph, axis_id))
    }

    /// The owning graph.
    #[getter]
    fn graph(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| self.graph.clone_ref(py))
    }

    /// Axis id (its index in the graph).
    #[getter]
    fn id(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.id)
    }

    /// Axis name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| self.get(py, |a| a.name.clone()))
    }

    /// Axis length.
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<Py<PyExpr>> {
        crate::errors::guard_res(|| {
            let e = self.get(py, |a| a.size.clone())?;
            expr(py, &e)
        })
    }

    /// GE's axis type (`AxisType`, an `int`: ORIGINAL=0 ... MERGED=5).
    #[getter(r#type)]
    fn axis_type(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let t = self.get(py, |a| a.axis_type as i64)?;
            axis_type(py, t)
        })
    }

    /// GE's dump name of the type (`ORIGINAL`, `TILE_IN`, ...).
    #[getter]
    fn type_name(&self, py: Python<'_>) -> PyResult<&'static str> {
        crate::errors::guard_res(|| self.get(py, |a| a.axis_type.dump_name()))
    }

    /// Parent axes (split: the parent; merge: the merged axes).
    #[getter(from_axes)]
    fn parents(&self, py: Python<'_>) -> PyResult<Vec<PyAxis>> {
        crate::errors::guard_res(|| {
            let from = self.get(py, |a| a.from.clone())?;
            let g = self.graph.bind(py);
            from.into_iter().map(|i| PyAxis::of(g, i)).collect()
        })
    }

    /// The sibling of the same split, or None.
    #[getter]
    fn split_pair(&self, py: Python<'_>) -> PyResult<Option<PyAxis>> {
        crate::errors::guard_res(|| {
            let other = self.get(py, |a| a.split_pair_other_id)?;
            if other < 0 {
                return Ok(None);
            }
            PyAxis::of(self.graph.bind(py), other).map(Some)
        })
    }

    /// Hard alignment of the tile size.
    #[getter]
    fn align(&self, py: Python<'_>) -> PyResult<Py<PyExpr>> {
        crate::errors::guard_res(|| {
            let e = self.get(py, |a| a.align.clone())?;
            expr(py, &e)
        })
    }

    #[setter]
    fn set_align(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let e = to_expr(value)?;
            self.set(value.py(), |a| a.align = e)
        })
    }

    /// `False` requires the parent size to be a multiple of this axis' size.
    #[getter]
    fn allow_unaligned_tail(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.get(py, |a| a.allow_unaligned_tail))
    }

    #[setter]
    fn set_allow_unaligned_tail(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let b = value.is_truthy()?;
            self.set(value.py(), |a| a.allow_unaligned_tail = b)
        })
    }

    /// Allow padding beyond the size (tiling).
    #[getter]
    fn allow_oversize_axis(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.get(py, |a| a.allow_oversize_axis))
    }

    #[setter]
    fn set_allow_oversize_axis(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let b = value.is_truthy()?;
            self.set(value.py(), |a| a.allow_oversize_axis = b)
        })
    }

    /// Whether this is a block axis.
    #[getter]
    fn bind_block(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.get(py, |a| a.bind_block))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other
                .cast::<PyAxis>()
                .is_ok_and(|o| o.get().graph.is(&self.graph) && o.get().id == self.id)
        })
    }

    fn __hash__(&self) -> PyResult<isize> {
        crate::errors::guard(|| {
            // The pair (graph identity, id), mixed like a tuple hash.
            let addr = self.graph.as_ptr() as usize as isize;
            addr.wrapping_mul(1_000_003) ^ (self.id as isize)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let (name, size) = self.get(py, |a| (a.name.clone(), a.size.clone()))?;
            let size = expr(py, &size)?.bind(py).str()?.to_string();
            Ok(format!("Axis({name}, id={}, size={size})", self.id))
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || {
            visit.call(&self.graph)?;
            visit.call(&self.core)
        })
    }
}
