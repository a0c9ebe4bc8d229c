//! `ascendir.Value` and `ascendir.Usage`: a node's output as a value with its uses, the layer
//! passes are written with (`node.outputs[i]`, `node.inputs[i]`, `value.uses()`,
//! `value.replace_all_uses_with(other)`), over the anchors of `ascendir-ir`.

use ascendir_ir::{Graph, InAnchor, IrError, NodeId, OutAnchor, Side};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::graph::PyGraph;
use super::node::{extract_source, PyNode};
use super::tensor::{DescLoc, PyTensorDesc};

/// Output `index` of a node: a value. The handle follows the node's staleness rules (every use
/// after the node left its graph raises `StaleHandleError`); it stands for itself wherever a
/// producer is taken (`add_op` inputs, `link_to`).
#[pyclass(name = "Value", module = "ascendir", frozen)]
#[derive(Debug)]
pub struct PyValue {
    /// The graph.
    pub graph: Py<PyGraph>,
    /// The producing node.
    pub node: NodeId,
    /// Its output index.
    pub index: usize,
}

/// One use of a value: input `index` of `node`.
#[pyclass(name = "Usage", module = "ascendir", frozen)]
#[derive(Debug)]
pub struct PyUsage {
    node: Py<PyNode>,
    index: usize,
}

impl PyValue {
    fn out(&self) -> OutAnchor {
        OutAnchor::data(self.node, self.index)
    }

    /// Read the graph after checking that the producer is alive and has this output.
    fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&Graph) -> Result<R, IrError>) -> PyResult<R> {
        let a = self.out();
        PyGraph::try_read(self.graph.bind(py), |g| {
            g.check_anchor(ascendir_ir::Anchor::Out(a))?;
            f(g)
        })
    }

    /// The values of every output of node `id`.
    pub fn of_node(py: Python<'_>, graph: &Py<PyGraph>, id: NodeId, n: usize) -> Vec<PyValue> {
        (0..n)
            .map(|index| PyValue {
                graph: graph.clone_ref(py),
                node: id,
                index,
            })
            .collect()
    }
}

/// The output a Python object stands for: a `Value`, a `Node` (its output 0) or an out-data
/// anchor, of `graph`.
pub fn value_source(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<OutAnchor> {
    let a = extract_source(graph, obj)?;
    if a.is_control() {
        return Err(crate::errors::py_err(IrError::InvalidArgument(
            "a control anchor is not a value".into(),
        )));
    }
    Ok(a)
}

/// The out-data anchor of a Python `Value` of `graph` (checked: same graph, live producer).
pub fn extract_value(graph: &Bound<'_, PyGraph>, v: &Bound<'_, PyValue>) -> PyResult<OutAnchor> {
    let v = v.get();
    PyGraph::check_same(graph, v.graph.bind(graph.py()), "value")?;
    let a = v.out();
    PyGraph::try_read(graph, |g| g.check_anchor(ascendir_ir::Anchor::Out(a)))?;
    Ok(a)
}

#[pymethods]
impl PyValue {
    /// The node that produces the value.
    fn producer(&self, py: Python<'_>) -> PyResult<PyNode> {
        crate::errors::guard_res(|| {
            self.read(py, |_| Ok(()))?;
            Ok(PyNode::new(self.graph.clone_ref(py), self.node))
        })
    }

    /// The output index of the value on its producer.
    #[getter]
    fn index(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.index)
    }

    /// The value's tensor desc (a view of the producer's output desc: changes apply to it).
    #[getter]
    fn desc(&self, py: Python<'_>) -> PyResult<PyTensorDesc> {
        crate::errors::guard_res(|| {
            self.read(py, |_| Ok(()))?;
            Ok(PyTensorDesc {
                loc: DescLoc::Port {
                    graph: self.graph.clone_ref(py),
                    node: self.node,
                    side: Side::Output,
                    index: self.index,
                },
            })
        })
    }

    /// The uses of the value: one `Usage(node, index)` per consumer input, in link order.
    fn uses(&self, py: Python<'_>) -> PyResult<Vec<PyUsage>> {
        crate::errors::guard_res(|| {
            let uses = self.read(py, |g| g.uses(self.out()))?;
            uses.into_iter()
                .map(|u: InAnchor| {
                    Ok(PyUsage {
                        node: Py::new(py, PyNode::new(self.graph.clone_ref(py), u.node))?,
                        index: u.index as usize,
                    })
                })
                .collect()
        })
    }

    /// Every use of this value (and every graph output naming it) reads `other` instead, each
    /// consumer keeping its input slot; returns how many uses moved. All or nothing: a foreign
    /// or stale `other`, or a move that would make a cycle, raises and changes nothing.
    fn replace_all_uses_with(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let graph = self.graph.bind(py);
            let to = value_source(graph, other)?;
            let from = self.out();
            PyGraph::try_write(graph, |g| g.replace_all_uses_with(from, to))
        })
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other.cast::<PyValue>().is_ok_and(|o| {
                let o = o.get();
                o.node == self.node
                    && o.index == self.index
                    && PyGraph::same_graph(o.graph.bind(py), self.graph.bind(py))
            })
        })
    }

    fn __hash__(&self) -> PyResult<u64> {
        crate::errors::guard(|| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (self.node, self.index).hash(&mut h);
            h.finish()
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let name = PyGraph::read(self.graph.bind(py), |g| {
                g.op(self.node).map(|o| o.name().to_string()).ok()
            })?;
            Ok(match name {
                Some(n) => format!("<Value '{n}':{}>", self.index),
                None => format!("<Value (stale):{}>", self.index),
            })
        })
    }
}

#[pymethods]
impl PyUsage {
    /// The consumer.
    #[getter]
    fn node(&self, py: Python<'_>) -> PyResult<Py<PyNode>> {
        crate::errors::guard(|| self.node.clone_ref(py))
    }

    /// The consumer's input index.
    #[getter]
    fn index(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.index)
    }

    /// `node, index = usage`.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| {
            PyTuple::new(
                py,
                [
                    self.node.clone_ref(py).into_any(),
                    self.index.into_pyobject(py)?.into_any().unbind(),
                ],
            )?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
        })
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other.cast::<PyUsage>().is_ok_and(|o| {
                let o = o.get();
                o.index == self.index && o.node.bind(py).eq(self.node.bind(py)).unwrap_or(false)
            })
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            Ok(format!(
                "Usage({}, {})",
                self.node.bind(py).repr()?,
                self.index
            ))
        })
    }
}

#[pymethods]
impl PyNode {
    /// The node's outputs as values, in index order.
    #[getter]
    fn outputs(&self, py: Python<'_>) -> PyResult<Vec<PyValue>> {
        crate::errors::guard_res(|| {
            let n = self.read(py, |g, id| Ok(g.node(id)?.num_out_data()))?;
            Ok(PyValue::of_node(py, &self.graph, self.id, n))
        })
    }

    /// The values the node reads, in input order (`None` for an unlinked input).
    #[getter]
    fn inputs(&self, py: Python<'_>) -> PyResult<Vec<Option<PyValue>>> {
        crate::errors::guard_res(|| {
            let peers = self.read(py, |g, id| {
                let n = g.node(id)?;
                Ok((0..n.num_in_data())
                    .map(|k| n.in_data_peer(k))
                    .collect::<Vec<_>>())
            })?;
            Ok(peers
                .into_iter()
                .map(|p| {
                    p.map(|a| PyValue {
                        graph: self.graph.clone_ref(py),
                        node: a.node,
                        index: a.index as usize,
                    })
                })
                .collect())
        })
    }

    /// Every use of every output of this node reads the same output of `other` instead
    /// (`other` must have at least as many outputs); returns how many uses moved. All or
    /// nothing.
    fn replace_all_uses_with(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let graph = self.graph.bind(py);
            let to = PyNode::extract_id(graph, other)?;
            let from = self.id;
            PyGraph::try_write(graph, |g| g.replace_all_node_uses(from, to))
        })
    }
}
