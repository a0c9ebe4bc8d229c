//! The handle classes of `ascendir.asc`: [`PyNode`] (subclassed per op type in Python),
//! [`PyOutput`] (a node's output tensor), [`PyAxis`] and the attribute proxies
//! (`node.attr.sched`, `.api`, `.ir_attr`, `out.mem` / `.que` / `.buf`).
//!
//! A handle names its graph object and an id; every read and write goes straight to the
//! engine graph (`PyAscGraph`). The Python graph classes (`asc.HintGraph` ...) hold the engine
//! graph as `_core` and the node handles they gave out as `_nodes`, so the same node is the
//! same Python object every time.

use ascendir_asc::{AscGraph, NodeId};
use pyo3::prelude::*;

use super::graph::PyAscGraph;
use crate::errors::concurrent_err;

mod attrs;
mod axis;
mod node;
mod output;

pub use attrs::{PyApi, PyIrAttr, PyNodeAttr, PySched, PyTensorGroup};
pub use axis::PyAxis;
pub use node::PyNode;
pub use output::PyOutput;

/// Register the handle classes and the axis-argument helper in `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNode>()?;
    m.add_class::<PyOutput>()?;
    m.add_class::<PyAxis>()?;
    m.add_class::<PyNodeAttr>()?;
    m.add_class::<PySched>()?;
    m.add_class::<PyApi>()?;
    m.add_class::<PyIrAttr>()?;
    m.add_class::<PyTensorGroup>()?;
    m.add_function(wrap_pyfunction!(axis::axis_id, m)?)?;
    Ok(())
}

/// The engine graph of a Python graph object (its `_core`).
fn core_of<'py>(graph: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAscGraph>> {
    Ok(graph.getattr("_core")?.cast_into::<PyAscGraph>()?)
}

/// Run `f` on the engine graph with a shared borrow; a panic becomes `InternalError`.
fn read<R>(core: &Bound<'_, PyAscGraph>, f: impl FnOnce(&AscGraph) -> PyResult<R>) -> PyResult<R> {
    let g = core
        .try_borrow()
        .map_err(|_| concurrent_err("reading an AscGraph"))?;
    crate::errors::guard_res(|| f(&g.g))
}

/// Run `f` on the engine graph with an exclusive borrow; a panic becomes `InternalError`.
fn write<R>(
    core: &Bound<'_, PyAscGraph>,
    f: impl FnOnce(&mut AscGraph) -> PyResult<R>,
) -> PyResult<R> {
    let mut g = core
        .try_borrow_mut()
        .map_err(|_| concurrent_err("writing an AscGraph"))?;
    crate::errors::guard_res(|| f(&mut g.g))
}

/// Where a node handle points: its engine graph and id (copied out of the handle, so no
/// borrow of the handle is held while the graph is used).
struct At<'py> {
    core: Bound<'py, PyAscGraph>,
    id: NodeId,
}

impl<'py> At<'py> {
    fn of(node: &Bound<'py, PyNode>) -> PyResult<At<'py>> {
        let n = node
            .try_borrow()
            .map_err(|_| concurrent_err("a node handle"))?;
        let core = n.core.as_ref().ok_or_else(node::not_initialized)?;
        Ok(At {
            core: core.bind(node.py()).clone(),
            id: NodeId(n.id),
        })
    }

    fn read<R>(&self, f: impl FnOnce(&AscGraph, NodeId) -> PyResult<R>) -> PyResult<R> {
        read(&self.core, |g| f(g, self.id))
    }

    fn write<R>(&self, f: impl FnOnce(&mut AscGraph, NodeId) -> PyResult<R>) -> PyResult<R> {
        write(&self.core, |g| f(g, self.id))
    }
}
