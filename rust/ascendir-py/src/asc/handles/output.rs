//! `ascendir._core.asc.Output`: an output tensor of a node (`node.y`): dtype, view and memory
//! attributes.

use ascendir_asc::{AscError, AscGraph, Expr, NodeId, Tensor};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use pyo3::{PyTraverseError, PyVisit};

use super::attrs::PyTensorGroup;
use super::axis::axis_ids_for;
use super::node::PyNode;
use super::At;
use crate::asc::graph::{exprs_of, wrap_exprs};
use crate::errors::{py_err, IntoPyResult};
use crate::ir::types::py_dtype;

/// An output tensor of a node: compare and hash it (by node identity and index), read and set
/// its dtype and view, and reach its memory attributes (`mem`, `que`, `buf`).
#[pyclass(name = "Output", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyOutput {
    /// The producing node.
    pub(super) node: Py<PyNode>,
    /// Output index.
    pub(super) index: usize,
}

impl PyOutput {
    pub(super) fn new(node: Py<PyNode>, index: usize) -> PyOutput {
        PyOutput { node, index }
    }

    fn at<'py>(&self, py: Python<'py>) -> PyResult<At<'py>> {
        At::of(self.node.bind(py))
    }

    /// Read the tensor.
    pub(super) fn read<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Tensor) -> PyResult<R>,
    ) -> PyResult<R> {
        let index = self.index;
        self.at(py)?.read(|g, id| f(g.tensor(id, index).py()?))
    }

    /// Change the tensor (after checks that see the whole graph).
    pub(super) fn write<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut AscGraph, NodeId, usize) -> PyResult<R>,
    ) -> PyResult<R> {
        let index = self.index;
        self.at(py)?.write(|g, id| {
            g.tensor(id, index).py()?;
            f(g, id, index)
        })
    }

    fn set_exprs(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        field: fn(&mut Tensor) -> &mut Vec<Expr>,
    ) -> PyResult<()> {
        let es = exprs_of(value)?;
        self.write(py, |g, id, i| {
            *field(g.tensor_mut(id, i).py()?) = es;
            Ok(())
        })
    }

    /// Set an axis-id list field, moving the node into the axes' graph first.
    fn set_axes(
        slf: &Bound<'_, PyOutput>,
        value: &Bound<'_, PyAny>,
        field: fn(&mut Tensor) -> &mut Vec<i64>,
    ) -> PyResult<()> {
        let me = slf.get();
        let ids = axis_ids_for(me.node.bind(slf.py()), value)?;
        me.write(slf.py(), |g, id, i| {
            if let Some(a) = ids.iter().find(|a| g.find_axis(**a).is_none()) {
                return Err(py_err(AscError::NotFound(format!(
                    "graph '{}': no axis with id {a}",
                    g.name
                ))));
            }
            *field(g.tensor_mut(id, i).py()?) = ids;
            Ok(())
        })
    }
}

/// `ascendir.asc.dtypes.to_dtype` (names as GE's pyascir spells them).
fn to_dtype<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = CELL.get_or_try_init(value.py(), || {
        Ok::<_, PyErr>(
            value
                .py()
                .import("ascendir.asc.dtypes")?
                .getattr("to_dtype")?
                .unbind(),
        )
    })?;
    f.bind(value.py()).call1((value,))
}

#[pymethods]
impl PyOutput {
    /// The output `index` of `node`.
    #[new]
    fn py_new(node: Py<PyNode>, index: usize) -> PyResult<PyOutput> {
        crate::errors::guard(|| PyOutput::new(node, index))
    }

    /// The producing node.
    #[getter]
    fn node(&self, py: Python<'_>) -> PyResult<Py<PyNode>> {
        crate::errors::guard(|| self.node.clone_ref(py))
    }

    /// Output index.
    #[getter]
    fn index(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.index)
    }

    /// Output port name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let index = self.index;
            self.at(py)?.read(|g, id| {
                let n = g.node(id).py()?;
                n.output_names.get(index).cloned().ok_or_else(|| {
                    py_err(AscError::NotFound(format!(
                        "node '{}' has no output {index}",
                        n.name
                    )))
                })
            })
        })
    }

    /// Element type.
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let dt = self.read(py, |t| Ok(t.dtype))?;
            py_dtype(py, dt)
        })
    }

    #[setter]
    fn set_dtype(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let v: i64 = to_dtype(value)?.extract()?;
            let dt = ascendir_ir::DataType::from_ge(v).ok_or_else(|| {
                py_err(AscError::InvalidArgument(format!(
                    "unknown data type number {v}"
                )))
            })?;
            self.write(value.py(), |g, id, i| {
                g.tensor_mut(id, i).py()?.dtype = dt;
                Ok(())
            })
        })
    }

    /// Axis ids of the view.
    #[getter]
    fn axis(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        crate::errors::guard_res(|| self.read(py, |t| Ok(t.axis.clone())))
    }

    #[setter]
    fn set_axis(slf: &Bound<'_, PyOutput>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| PyOutput::set_axes(slf, value, |t| &mut t.axis))
    }

    /// Repeats (extent per view axis); GE's name.
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| self.read(py, |t| wrap_exprs(py, &t.repeats)))
    }

    #[setter]
    fn set_size(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| self.set_exprs(value.py(), value, |t| &mut t.repeats))
    }

    /// Repeats (extent per view axis); the same as `size`.
    #[getter]
    fn repeats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| self.size(py))
    }

    #[setter]
    fn set_repeats(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| self.set_size(value))
    }

    /// Index step per view axis.
    #[getter]
    fn strides(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| self.read(py, |t| wrap_exprs(py, &t.strides)))
    }

    #[setter]
    fn set_strides(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| self.set_exprs(value.py(), value, |t| &mut t.strides))
    }

    /// Axes held in UB for one API call.
    #[getter]
    fn vectorized_axis(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        crate::errors::guard_res(|| self.read(py, |t| Ok(t.vectorized_axis.clone())))
    }

    #[setter]
    fn set_vectorized_axis(slf: &Bound<'_, PyOutput>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| PyOutput::set_axes(slf, value, |t| &mut t.vectorized_axis))
    }

    /// UB strides of the vectorized axes.
    #[getter]
    fn vectorized_strides(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| self.read(py, |t| wrap_exprs(py, &t.vectorized_strides)))
    }

    #[setter]
    fn set_vectorized_strides(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            self.set_exprs(value.py(), value, |t| &mut t.vectorized_strides)
        })
    }

    /// Placement: `tensor_id`, `alloc_type`, `hardware`, `position`, `reuse_id`.
    #[getter]
    fn mem(slf: &Bound<'_, PyOutput>) -> PyResult<PyTensorGroup> {
        crate::errors::guard(|| PyTensorGroup::new(slf.clone().unbind(), "mem"))
    }

    /// Queue binding: `id`, `depth`, `buf_num`.
    #[getter]
    fn que(slf: &Bound<'_, PyOutput>) -> PyResult<PyTensorGroup> {
        crate::errors::guard(|| PyTensorGroup::new(slf.clone().unbind(), "que"))
    }

    /// Buffer binding: `id`.
    #[getter]
    fn buf(slf: &Bound<'_, PyOutput>) -> PyResult<PyTensorGroup> {
        crate::errors::guard(|| PyTensorGroup::new(slf.clone().unbind(), "buf"))
    }

    /// Memory optimisation hints: `reuse_id`, `ref_tensor`, `merge_scope`.
    #[getter]
    fn opt(slf: &Bound<'_, PyOutput>) -> PyResult<PyTensorGroup> {
        crate::errors::guard(|| PyTensorGroup::new(slf.clone().unbind(), "opt"))
    }

    /// Make this a contiguous view over `axes` (repeats = sizes, strides = suffix products,
    /// last 1), moving the node into the axes' graph first.
    fn set_contiguous(slf: &Bound<'_, PyOutput>, axes: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let me = slf.get();
            let ids = axis_ids_for(me.node.bind(slf.py()), axes)?;
            me.write(slf.py(), |g, id, i| g.set_contiguous_view(id, i, &ids).py())
        })
    }

    /// Write-only: `out.contiguous = [z0, z1]` is `out.set_contiguous([z0, z1])`.
    #[getter]
    fn contiguous(&self) -> PyResult<()> {
        crate::errors::guard_res(|| {
            Err(PyAttributeError::new_err(
                "contiguous is write-only (out.contiguous = [axes])",
            ))
        })
    }

    #[setter(contiguous)]
    fn set_contiguous_attr(slf: &Bound<'_, PyOutput>, axes: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| PyOutput::set_contiguous(slf, axes))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other
                .cast::<PyOutput>()
                .is_ok_and(|o| o.get().node.is(&self.node) && o.get().index == self.index)
        })
    }

    fn __hash__(&self) -> PyResult<isize> {
        crate::errors::guard(|| {
            // The pair (node identity, index), mixed like a tuple hash.
            let addr = self.node.as_ptr() as usize as isize;
            addr.wrapping_mul(1_000_003) ^ (self.index as isize)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let node = self.node.bind(py);
            let name = node.getattr("name")?;
            let port = self.name(py)?;
            Ok(format!(
                "Output({}.{})",
                name.cast::<PyString>()?.to_str()?,
                port
            ))
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || visit.call(&self.node))
    }
}
