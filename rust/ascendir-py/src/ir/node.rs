//! `ascendir.Node`: a handle (graph + generational id) to a node.

use ascendir_ir::{Graph, InAnchor, IrError, NodeId, OutAnchor, Side};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::anchor::{AnchorKind, PyAnchor};
use super::attrs::{AttrOwner, PyAttrMap};
use super::graph::PyGraph;
use super::op_desc::{OpLoc, PyOpDesc};
use crate::errors::{py_err, IntoPyResult};

/// A node of a graph. The handle stays valid while the node is in its graph; afterwards every
/// use raises `StaleHandleError`. A node stands for its output 0 when used as an input.
#[pyclass(name = "Node", module = "ascendir", frozen)]
#[derive(Debug)]
pub struct PyNode {
    /// The graph holding the node.
    pub graph: Py<PyGraph>,
    /// The node's id.
    pub id: NodeId,
}

impl PyNode {
    /// A handle to `id` in `graph`.
    pub fn new(graph: Py<PyGraph>, id: NodeId) -> Self {
        PyNode { graph, id }
    }

    /// Read the node's graph, checking the handle first.
    pub fn read<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Graph, NodeId) -> Result<R, IrError>,
    ) -> PyResult<R> {
        let id = self.id;
        PyGraph::try_read(self.graph.bind(py), |g| {
            g.node(id)?;
            f(g, id)
        })
    }

    /// The node id behind a Python `Node` argument, checking that it belongs to `graph` and is
    /// live.
    pub fn extract_id(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<NodeId> {
        let node = obj.cast::<PyNode>()?.get();
        PyGraph::check_same(graph, node.graph.bind(obj.py()), "node")?;
        PyGraph::check_node(graph, node.id)?;
        Ok(node.id)
    }

    /// Python handles for a list of ids of the same graph.
    pub fn handles<'py>(
        py: Python<'py>,
        graph: &Py<PyGraph>,
        ids: &[NodeId],
    ) -> PyResult<Bound<'py, PyList>> {
        let items: PyResult<Vec<Py<PyNode>>> = ids
            .iter()
            .map(|&id| Py::new(py, PyNode::new(graph.clone_ref(py), id)))
            .collect();
        PyList::new(py, items?)
    }

    fn anchor(&self, py: Python<'_>, kind: AnchorKind, index: i32) -> PyAnchor {
        PyAnchor {
            graph: self.graph.clone_ref(py),
            node: self.id,
            kind,
            index,
        }
    }

    fn port_index(&self, py: Python<'_>, side: Side, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = key.cast::<PyString>() {
            let name = name.to_str()?;
            return self.read(py, |g, id| g.op(id)?.port_index_of(side, name));
        }
        let index: i64 = key.extract()?;
        self.read(py, |g, id| {
            let op = g.op(id)?;
            let count = op.ports(side).len() as i64;
            if index < 0 || index >= count {
                return Err(IrError::NotFound(format!(
                    "node '{}' has no {} anchor {index} (it has {count})",
                    op.name(),
                    if side == Side::Input {
                        "in-data"
                    } else {
                        "out-data"
                    }
                )));
            }
            Ok(index as usize)
        })
    }
}

#[pymethods]
impl PyNode {
    /// The node name (assigning renames it; the new name must be free).
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| self.read(py, |g, id| Ok(g.op(id)?.name().to_string())))
    }
    #[setter]
    fn set_name(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyGraph::try_write(self.graph.bind(py), |g| g.rename_node(self.id, name))
        })
    }

    /// The op type.
    #[getter]
    fn r#type(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| self.read(py, |g, id| Ok(g.op(id)?.op_type().to_string())))
    }

    /// The op id (topological position after a sort).
    #[getter]
    fn id(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.read(py, |g, id| Ok(g.op(id)?.id)))
    }

    /// The node's op desc (a view: changes apply to the node).
    #[getter]
    fn op_desc(&self, py: Python<'_>) -> PyResult<PyOpDesc> {
        crate::errors::guard_res(|| {
            self.read(py, |_, _| Ok(()))?;
            Ok(PyOpDesc {
                loc: OpLoc::Node {
                    graph: self.graph.clone_ref(py),
                    node: self.id,
                },
            })
        })
    }

    /// The graph holding the node.
    #[getter]
    fn graph(&self, py: Python<'_>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard(|| self.graph.clone_ref(py))
    }

    /// The op's attributes (a mutable mapping).
    #[getter]
    fn attrs(&self, py: Python<'_>) -> PyResult<PyAttrMap> {
        crate::errors::guard_res(|| {
            self.read(py, |_, _| Ok(()))?;
            Ok(PyAttrMap {
                owner: AttrOwner::Node {
                    graph: self.graph.clone_ref(py),
                    node: self.id,
                },
            })
        })
    }

    /// Whether the handle still resolves.
    #[getter]
    fn is_alive(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| PyGraph::read(self.graph.bind(py), |g| g.contains(self.id)))
    }

    /// The in-data anchors, in index order.
    #[getter]
    fn in_data_anchors(&self, py: Python<'_>) -> PyResult<Vec<PyAnchor>> {
        crate::errors::guard_res(|| {
            let n = self.read(py, |g, id| Ok(g.node(id)?.num_in_data()))?;
            Ok((0..n)
                .map(|i| self.anchor(py, AnchorKind::InData, i as i32))
                .collect())
        })
    }

    /// The out-data anchors, in index order.
    #[getter]
    fn out_data_anchors(&self, py: Python<'_>) -> PyResult<Vec<PyAnchor>> {
        crate::errors::guard_res(|| {
            let n = self.read(py, |g, id| Ok(g.node(id)?.num_out_data()))?;
            Ok((0..n)
                .map(|i| self.anchor(py, AnchorKind::OutData, i as i32))
                .collect())
        })
    }

    /// The in-control anchor (index -1).
    #[getter]
    fn in_control_anchor(&self, py: Python<'_>) -> PyResult<PyAnchor> {
        crate::errors::guard_res(|| {
            self.read(py, |_, _| Ok(()))?;
            Ok(self.anchor(py, AnchorKind::InControl, -1))
        })
    }

    /// The out-control anchor (index -1).
    #[getter]
    fn out_control_anchor(&self, py: Python<'_>) -> PyResult<PyAnchor> {
        crate::errors::guard_res(|| {
            self.read(py, |_, _| Ok(()))?;
            Ok(self.anchor(py, AnchorKind::OutControl, -1))
        })
    }

    /// In-data anchor by index or input name.
    fn in_data_anchor(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyAnchor> {
        crate::errors::guard_res(|| {
            let i = self.port_index(py, Side::Input, key)?;
            Ok(self.anchor(py, AnchorKind::InData, i as i32))
        })
    }

    /// Out-data anchor by index or output name.
    fn out_data_anchor(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyAnchor> {
        crate::errors::guard_res(|| {
            let i = self.port_index(py, Side::Output, key)?;
            Ok(self.anchor(py, AnchorKind::OutData, i as i32))
        })
    }

    /// Output `key` (index or name) as an anchor, to use as an input of another op.
    #[pyo3(signature = (key=None))]
    fn out(&self, py: Python<'_>, key: Option<&Bound<'_, PyAny>>) -> PyResult<PyAnchor> {
        crate::errors::guard_res(|| match key {
            Some(k) => self.out_data_anchor(py, k),
            None => {
                let zero = 0i64.into_pyobject(py)?;
                self.out_data_anchor(py, zero.as_any())
            }
        })
    }

    /// Producers over data links, in input order.
    #[getter]
    fn in_data_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = self.read(py, |g, id| g.in_data_nodes(id))?;
            PyNode::handles(py, &self.graph, &ids)
        })
    }

    /// Consumers over data links, in output then link order.
    #[getter]
    fn out_data_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = self.read(py, |g, id| g.out_data_nodes(id))?;
            PyNode::handles(py, &self.graph, &ids)
        })
    }

    /// Every peer of the in-control anchor (data→control producers included, as GE).
    #[getter]
    fn in_control_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = self.read(py, |g, id| g.in_control_nodes(id))?;
            PyNode::handles(py, &self.graph, &ids)
        })
    }

    /// Every peer of the out-control anchor.
    #[getter]
    fn out_control_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = self.read(py, |g, id| g.out_control_nodes(id))?;
            PyNode::handles(py, &self.graph, &ids)
        })
    }

    /// GE `GetInNodes`: data producers, then control producers.
    #[getter]
    fn in_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = self.read(py, |g, id| g.in_nodes(id))?;
            PyNode::handles(py, &self.graph, &ids)
        })
    }

    /// GE `GetOutNodes`: data consumers, then control consumers.
    #[getter]
    fn out_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = self.read(py, |g, id| g.out_nodes(id))?;
            PyNode::handles(py, &self.graph, &ids)
        })
    }

    /// The producer anchor linked to input `key`, or `None`.
    fn input_source(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<PyAnchor>> {
        crate::errors::guard_res(|| {
            let i = self.port_index(py, Side::Input, key)?;
            let peer = self.read(py, |g, id| Ok(g.in_peer(InAnchor::data(id, i))))?;
            Ok(peer.map(|p: OutAnchor| PyAnchor::out(self.graph.clone_ref(py), p)))
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other
                .cast::<PyNode>()
                .is_ok_and(|o| o.get().id == self.id && o.get().graph.is(&self.graph))
        })
    }

    fn __hash__(&self) -> PyResult<u64> {
        crate::errors::guard(|| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            self.id.hash(&mut h);
            (self.graph.as_ptr() as usize).hash(&mut h);
            h.finish()
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            match self.read(py, |g, id| {
                let op = g.op(id)?;
                Ok(format!(
                    "<Node '{}' {} #{}>",
                    op.name(),
                    op.op_type(),
                    op.id
                ))
            }) {
                Ok(s) => s,
                Err(_) => "<Node (removed)>".to_string(),
            }
        })
    }
}

/// A `StaleHandleError` for a node id that no longer resolves.
pub fn stale(graph: &str, id: NodeId) -> PyErr {
    py_err(IrError::StaleHandle {
        node: id,
        graph: graph.to_string(),
    })
}

/// Resolve a Python value standing for a producer: a `Value`, a `Node` (its output 0) or an
/// out-data / out-control anchor. Checks the graph.
pub fn extract_source(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<OutAnchor> {
    if let Ok(v) = obj.cast::<super::value::PyValue>() {
        return super::value::extract_value(graph, v);
    }
    if obj.is_instance_of::<PyNode>() {
        let id = PyNode::extract_id(graph, obj)?;
        let outs = PyGraph::try_read(graph, |g| Ok(g.node(id)?.num_out_data()))?;
        if outs == 0 {
            let name = PyGraph::try_read(graph, |g| Ok(g.op(id)?.name().to_string()))?;
            return Err(IrError::InvalidArgument(format!(
                "node '{name}' has no outputs and cannot be used as an input"
            )))
            .py();
        }
        return Ok(OutAnchor::data(id, 0));
    }
    let anchor = obj.cast::<PyAnchor>()?.get();
    PyGraph::check_same(graph, anchor.graph.bind(obj.py()), "anchor")?;
    match anchor.kind {
        AnchorKind::OutData | AnchorKind::OutControl => {
            let a = OutAnchor {
                node: anchor.node,
                index: anchor.index,
            };
            PyGraph::try_read(graph, |g| g.check_anchor(ascendir_ir::Anchor::Out(a)))?;
            Ok(a)
        }
        _ => Err(IrError::InvalidArgument(format!(
            "an input anchor cannot be a producer ({})",
            anchor.describe(obj.py())
        )))
        .py(),
    }
}
