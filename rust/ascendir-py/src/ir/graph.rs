//! `ascendir.Graph`: the Python face of a compute graph.

use ascendir_ir::{Graph, IrError, NodeId};
use pyo3::prelude::*;

use crate::errors::{concurrent_err, foreign_handle_error, guard, raise, IntoPyResult};

/// Where a Python `Graph` object's data lives.
// `Own` is the common case and is read on every call; keeping it inline avoids an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum GraphSlot {
    /// A root (or standalone) graph owned by this object.
    Own(Graph),
    /// A subgraph registered on `root`, found by its name and checked by its uid (a subgraph
    /// removed and replaced by another of the same name leaves the view stale).
    Sub {
        /// The root graph object that owns the subgraph.
        root: Py<PyGraph>,
        /// The subgraph's (unique) name.
        name: String,
        /// The subgraph's uid when the view was made (`Graph::uid`).
        uid: u64,
    },
}

/// A compute graph: nodes with anchors, inputs, outputs, attributes and subgraphs.
#[pyclass(name = "Graph", module = "ascendir")]
#[derive(Debug)]
pub struct PyGraph {
    /// The graph's data, or the way to find it.
    pub slot: GraphSlot,
}

fn stale_subgraph(name: &str) -> PyErr {
    crate::errors::py_err(IrError::StaleSubgraph(format!(
        "subgraph '{name}' is no longer registered on its root graph"
    )))
}

impl PyGraph {
    /// A Python graph owning `graph`.
    pub fn from_graph(graph: Graph) -> Self {
        PyGraph {
            slot: GraphSlot::Own(graph),
        }
    }

    /// Borrow the graph object itself (its slot); `ConcurrentUseError` while another call
    /// writes it.
    pub fn borrow_slot<'py>(this: &Bound<'py, PyGraph>) -> PyResult<PyRef<'py, PyGraph>> {
        this.try_borrow()
            .map_err(|_| concurrent_err("a read while it is being written"))
    }

    /// Borrow the graph object mutably; `ConcurrentUseError` while another call uses it.
    pub fn borrow_slot_mut<'py>(this: &Bound<'py, PyGraph>) -> PyResult<PyRefMut<'py, PyGraph>> {
        this.try_borrow_mut()
            .map_err(|_| concurrent_err("a write while it is being read or written"))
    }

    /// The root object and subgraph name when `this` is a subgraph view.
    pub(crate) fn sub_of<'py>(
        this: &Bound<'py, PyGraph>,
    ) -> PyResult<Option<(Bound<'py, PyGraph>, String, u64)>> {
        Ok(match &PyGraph::borrow_slot(this)?.slot {
            GraphSlot::Own(_) => None,
            GraphSlot::Sub { root, name, uid } => {
                Some((root.bind(this.py()).clone(), name.clone(), *uid))
            }
        })
    }

    /// A view of the subgraph `name` registered on `root` (its uid read now).
    pub fn view_of(root: &Bound<'_, PyGraph>, name: &str) -> PyResult<PyGraph> {
        let uid = PyGraph::read(root, |g| g.subgraph(name).map(Graph::uid))?
            .ok_or_else(|| stale_subgraph(name))?;
        Ok(PyGraph {
            slot: GraphSlot::Sub {
                root: root.clone().unbind(),
                name: name.to_string(),
                uid,
            },
        })
    }

    /// Run `f` on the graph (through the root for a subgraph).
    pub fn read<R>(this: &Bound<'_, PyGraph>, f: impl FnOnce(&Graph) -> R) -> PyResult<R> {
        let (holder, name) = match PyGraph::sub_of(this)? {
            None => (this.clone(), None),
            Some((root, name, uid)) => (root, Some((name, uid))),
        };
        let me = holder
            .try_borrow()
            .map_err(|_| concurrent_err("a read while it is being written"))?;
        let GraphSlot::Own(g) = &me.slot else {
            return Err(stale_subgraph(name.as_ref().map_or("", |n| n.0.as_str())));
        };
        let g = match name {
            None => g,
            Some((name, uid)) => g
                .subgraph(&name)
                .filter(|s| s.uid() == uid)
                .ok_or_else(|| stale_subgraph(&name))?,
        };
        guard(|| f(g))
    }

    /// Run `f` on the graph mutably (through the root for a subgraph).
    pub fn write<R>(this: &Bound<'_, PyGraph>, f: impl FnOnce(&mut Graph) -> R) -> PyResult<R> {
        let (holder, name) = match PyGraph::sub_of(this)? {
            None => (this.clone(), None),
            Some((root, name, uid)) => (root, Some((name, uid))),
        };
        let mut me = holder
            .try_borrow_mut()
            .map_err(|_| concurrent_err("a write while it is being read or written"))?;
        let GraphSlot::Own(g) = &mut me.slot else {
            return Err(stale_subgraph(name.as_ref().map_or("", |n| n.0.as_str())));
        };
        let g = match name {
            None => g,
            Some((name, uid)) => g
                .subgraph_mut(&name)
                .filter(|s| s.uid() == uid)
                .ok_or_else(|| stale_subgraph(&name))?,
        };
        guard(|| f(g))
    }

    /// Like `read` for closures returning IR results.
    pub fn try_read<R>(
        this: &Bound<'_, PyGraph>,
        f: impl FnOnce(&Graph) -> Result<R, IrError>,
    ) -> PyResult<R> {
        PyGraph::read(this, f)?.py()
    }

    /// Like `write` for closures returning IR results.
    pub fn try_write<R>(
        this: &Bound<'_, PyGraph>,
        f: impl FnOnce(&mut Graph) -> Result<R, IrError>,
    ) -> PyResult<R> {
        PyGraph::write(this, f)?.py()
    }

    /// The object that identifies the graph for handle checks: the graph itself, or for a
    /// subgraph view the same `(root, name)` pair.
    pub fn same_graph(a: &Bound<'_, PyGraph>, b: &Bound<'_, PyGraph>) -> bool {
        if a.is(b) {
            return true;
        }
        let (Ok(x), Ok(y)) = (a.try_borrow(), b.try_borrow()) else {
            return false;
        };
        match (&x.slot, &y.slot) {
            (
                GraphSlot::Sub {
                    root: r1,
                    name: n1,
                    uid: u1,
                },
                GraphSlot::Sub {
                    root: r2,
                    name: n2,
                    uid: u2,
                },
            ) => r1.is(r2) && n1 == n2 && u1 == u2,
            _ => false,
        }
    }

    /// Fail with `ForeignHandleError` unless `other` is this graph.
    pub fn check_same(
        this: &Bound<'_, PyGraph>,
        other: &Bound<'_, PyGraph>,
        what: &str,
    ) -> PyResult<()> {
        if PyGraph::same_graph(this, other) {
            return Ok(());
        }
        let here = PyGraph::read(this, |g| g.name().to_string()).unwrap_or_default();
        let there = PyGraph::read(other, |g| g.name().to_string()).unwrap_or_default();
        Err(raise(
            this.py(),
            foreign_handle_error(this.py()),
            format!("{what} belongs to graph '{there}', not to graph '{here}'"),
            &[],
        ))
    }

    /// Check that `id` is live in this graph.
    pub fn check_node(this: &Bound<'_, PyGraph>, id: NodeId) -> PyResult<()> {
        PyGraph::try_read(this, |g| g.node(id).map(|_| ()))
    }
}

impl Drop for PyGraph {
    /// A large graph is freed on a helper thread (`ascendir_ir::threads::free_in_background`),
    /// so that `del g` (or a graph replaced in a loop) returns at once. A graph holds no
    /// reference that needs the GIL to be released safely (Python objects it keeps are released
    /// through PyO3's deferred pool).
    fn drop(&mut self) {
        if let GraphSlot::Own(g) = &mut self.slot {
            let g = std::mem::replace(g, Graph::new(""));
            let nodes = g.len();
            ascendir_ir::threads::free_in_background(g, nodes);
        }
    }
}
