//! The editing layer of `ascendir.Graph`: insertion points (`inserting_before` /
//! `inserting_after`) and the indexed look-up `find_nodes`. Placement and the index live in
//! `ascendir-ir` (`Graph::set_insertion_point`, `Graph::find_nodes`); this is the Python face.

use ascendir_ir::graph::InsertPoint;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::graph::PyGraph;
use super::node::PyNode;

/// A `with` block placing new nodes before or after a node (see `Graph.inserting_before`).
/// Entering it sets the graph's insertion point; leaving it restores the point that was set
/// before, so that blocks nest.
#[pyclass(name = "InsertionPoint", module = "ascendir")]
#[derive(Debug)]
pub struct PyInsertionPoint {
    graph: Py<PyGraph>,
    point: InsertPoint,
    /// The point to restore on exit (`Some` once entered).
    saved: Option<Option<InsertPoint>>,
}

#[pymethods]
impl PyInsertionPoint {
    fn __enter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| {
            let (graph, point) = {
                let me = slf.borrow();
                (me.graph.clone_ref(slf.py()), me.point)
            };
            let previous =
                PyGraph::try_write(graph.bind(slf.py()), |g| g.set_insertion_point(Some(point)))?;
            slf.borrow_mut().saved = Some(previous);
            Ok(graph)
        })
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(slf: &Bound<'_, Self>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let (graph, saved) = {
                let mut me = slf.borrow_mut();
                (me.graph.clone_ref(slf.py()), me.saved.take())
            };
            if let Some(previous) = saved {
                // The previous point may name a node removed inside the block: the point is
                // restored as it was (a later add then reports the stale node).
                PyGraph::write(graph.bind(slf.py()), |g| {
                    if g.set_insertion_point(previous).is_err() {
                        let _ = g.set_insertion_point(None);
                    }
                })?;
            }
            Ok(false)
        })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let me = slf.borrow();
            let name = PyGraph::read(me.graph.bind(slf.py()), |g| {
                g.node(me.point.node())
                    .map(|n| n.name().to_string())
                    .unwrap_or_else(|_| "<removed>".into())
            })?;
            let side = match me.point {
                InsertPoint::Before(_) => "before",
                InsertPoint::After(_) => "after",
            };
            Ok(format!("InsertionPoint({side} '{name}')"))
        })
    }
}

fn point_block(
    slf: &Bound<'_, PyGraph>,
    node: &Bound<'_, PyAny>,
    make: fn(ascendir_ir::NodeId) -> InsertPoint,
) -> PyResult<PyInsertionPoint> {
    let id = PyNode::extract_id(slf, node)?;
    Ok(PyInsertionPoint {
        graph: slf.clone().unbind(),
        point: make(id),
        saved: None,
    })
}

#[pymethods]
impl PyGraph {
    /// A `with` block in which new nodes (`add_op`, `add_node`, `add_const`, `add_input` and
    /// the builders of `ascendir.ops`) go right before `node` in the node order, in creation
    /// order. Blocks nest; leaving one restores the point before it. A removed `node` raises
    /// `StaleHandleError`.
    fn inserting_before(
        slf: &Bound<'_, Self>,
        node: &Bound<'_, PyAny>,
    ) -> PyResult<PyInsertionPoint> {
        crate::errors::guard_res(|| point_block(slf, node, InsertPoint::Before))
    }

    /// A `with` block in which new nodes go right after `node` in the node order, in creation
    /// order (each after the one made before it). See `inserting_before`.
    fn inserting_after(
        slf: &Bound<'_, Self>,
        node: &Bound<'_, PyAny>,
    ) -> PyResult<PyInsertionPoint> {
        crate::errors::guard_res(|| point_block(slf, node, InsertPoint::After))
    }

    /// The nodes of type `op_type` and/or named `name`, in graph order (every node when both
    /// are `None`). Served by indexes kept up to date by every edit: the cost follows the
    /// number of matches, not the size of the graph.
    #[pyo3(signature = (op_type=None, name=None))]
    fn find_nodes<'py>(
        slf: &Bound<'py, Self>,
        op_type: Option<&str>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = PyGraph::read(slf, |g| g.find_nodes(op_type, name))?;
            PyNode::handles(slf.py(), &slf.clone().unbind(), &ids)
        })
    }
}
