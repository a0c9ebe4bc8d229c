//! `ascendir.Anchor`: a handle to one anchor of a node (in/out, data/control).

use ascendir_ir::{Anchor, InAnchor, IrError, NodeId, OutAnchor};
use pyo3::prelude::*;

use super::graph::PyGraph;
use super::node::PyNode;
use super::op_desc::PyOpDesc;
use crate::errors::IntoPyResult;

/// The four anchor kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnchorKind {
    /// In-data anchor.
    InData,
    /// Out-data anchor.
    OutData,
    /// In-control anchor.
    InControl,
    /// Out-control anchor.
    OutControl,
}

impl AnchorKind {
    fn class_name(self) -> &'static str {
        match self {
            AnchorKind::InData => "InDataAnchor",
            AnchorKind::OutData => "OutDataAnchor",
            AnchorKind::InControl => "InControlAnchor",
            AnchorKind::OutControl => "OutControlAnchor",
        }
    }
}

/// An anchor of a node: `kind` is `"in_data"`, `"out_data"`, `"in_control"` or
/// `"out_control"`; control anchors have index -1.
#[pyclass(name = "Anchor", module = "ascendir", frozen)]
#[derive(Debug)]
pub struct PyAnchor {
    /// The graph.
    pub graph: Py<PyGraph>,
    /// The owning node.
    pub node: NodeId,
    /// Which anchor.
    pub kind: AnchorKind,
    /// Port index, or -1 for control.
    pub index: i32,
}

impl PyAnchor {
    /// The anchor handle for an output-side anchor.
    pub fn out(graph: Py<PyGraph>, a: OutAnchor) -> Self {
        PyAnchor {
            graph,
            node: a.node,
            kind: if a.is_control() {
                AnchorKind::OutControl
            } else {
                AnchorKind::OutData
            },
            index: a.index,
        }
    }

    /// The anchor handle for an input-side anchor.
    pub fn input(graph: Py<PyGraph>, a: InAnchor) -> Self {
        PyAnchor {
            graph,
            node: a.node,
            kind: if a.is_control() {
                AnchorKind::InControl
            } else {
                AnchorKind::InData
            },
            index: a.index,
        }
    }

    /// The IR address of this anchor.
    pub fn ir(&self) -> Anchor {
        match self.kind {
            AnchorKind::InData | AnchorKind::InControl => Anchor::In(InAnchor {
                node: self.node,
                index: self.index,
            }),
            AnchorKind::OutData | AnchorKind::OutControl => Anchor::Out(OutAnchor {
                node: self.node,
                index: self.index,
            }),
        }
    }

    /// A readable name for messages.
    pub fn describe(&self, py: Python<'_>) -> String {
        PyGraph::read(self.graph.bind(py), |g| g.describe(self.ir())).unwrap_or_default()
    }

    fn checked(&self, py: Python<'_>) -> PyResult<Anchor> {
        let a = self.ir();
        PyGraph::try_read(self.graph.bind(py), |g| g.check_anchor(a))?;
        Ok(a)
    }

    fn other(&self, other: &Bound<'_, PyAny>) -> PyResult<Anchor> {
        let py = other.py();
        let o = other.cast::<PyAnchor>()?.get();
        PyGraph::check_same(self.graph.bind(py), o.graph.bind(py), "anchor")?;
        o.checked(py)
    }

    fn pair(&self, other: &Bound<'_, PyAny>) -> PyResult<(OutAnchor, InAnchor)> {
        let py = other.py();
        let me = self.checked(py)?;
        let them = self.other(other)?;
        match (me, them) {
            (Anchor::Out(o), Anchor::In(i)) | (Anchor::In(i), Anchor::Out(o)) => Ok((o, i)),
            _ => Err(IrError::Link(format!(
                "{} and {} are both {} anchors",
                self.describe(py),
                other.cast::<PyAnchor>()?.get().describe(py),
                if matches!(me, Anchor::Out(_)) {
                    "output"
                } else {
                    "input"
                }
            )))
            .py(),
        }
    }
}

#[pymethods]
impl PyAnchor {
    /// The owning node.
    #[getter]
    fn node(&self, py: Python<'_>) -> PyResult<PyNode> {
        crate::errors::guard_res(|| {
            PyGraph::check_node(self.graph.bind(py), self.node)?;
            Ok(PyNode::new(self.graph.clone_ref(py), self.node))
        })
    }

    /// The port index (-1 for control anchors).
    #[getter]
    fn index(&self) -> PyResult<i32> {
        crate::errors::guard(|| self.index)
    }

    /// `"in_data"`, `"out_data"`, `"in_control"` or `"out_control"`.
    #[getter]
    fn kind(&self) -> PyResult<&'static str> {
        crate::errors::guard(|| match self.kind {
            AnchorKind::InData => "in_data",
            AnchorKind::OutData => "out_data",
            AnchorKind::InControl => "in_control",
            AnchorKind::OutControl => "out_control",
        })
    }

    /// Whether this is a control anchor.
    #[getter]
    fn is_control(&self) -> PyResult<bool> {
        crate::errors::guard(|| self.index == -1)
    }

    /// Whether this is an input-side anchor.
    #[getter]
    fn is_input(&self) -> PyResult<bool> {
        crate::errors::guard(|| matches!(self.kind, AnchorKind::InData | AnchorKind::InControl))
    }

    /// The peer anchors, in link order.
    #[getter]
    fn peers(&self, py: Python<'_>) -> PyResult<Vec<PyAnchor>> {
        crate::errors::guard_res(|| {
            let a = self.checked(py)?;
            let g = &self.graph;
            PyGraph::read(g.bind(py), |gr| match a {
                Anchor::Out(o) => gr
                    .out_peers(o)
                    .iter()
                    .map(|&i| PyAnchor::input(g.clone_ref(py), i))
                    .collect(),
                Anchor::In(i) => gr
                    .in_peers(i)
                    .iter()
                    .map(|&o| PyAnchor::out(g.clone_ref(py), o))
                    .collect(),
            })
        })
    }

    /// For an in-data anchor: its only peer, or `None`.
    #[getter]
    fn peer(&self, py: Python<'_>) -> PyResult<Option<PyAnchor>> {
        crate::errors::guard_res(|| {
            if self.kind != AnchorKind::InData {
                return Err(IrError::InvalidArgument(format!(
                    "{} may have several peers; use .peers",
                    self.describe(py)
                )))
                .py();
            }
            Ok(self.peers(py)?.into_iter().next())
        })
    }

    /// Link to `other` (output → input). An in-data anchor takes one peer: a second link
    /// raises `LinkError` and changes nothing.
    fn link_to(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let (o, i) = self.pair(other)?;
            if !matches!(self.kind, AnchorKind::OutData | AnchorKind::OutControl) {
                return Err(IrError::Link(format!(
                    "link_to goes from an output anchor; {} is an input (use link_from)",
                    self.describe(other.py())
                )))
                .py();
            }
            PyGraph::try_write(self.graph.bind(other.py()), |g| g.link(o, i))
        })
    }

    /// Link from `other` (an output anchor) to this input anchor.
    fn link_from(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let (o, i) = self.pair(other)?;
            if !self.is_input()? {
                return Err(IrError::Link(format!(
                    "link_from goes into an input anchor; {} is an output (use link_to)",
                    self.describe(other.py())
                )))
                .py();
            }
            PyGraph::try_write(self.graph.bind(other.py()), |g| g.link(o, i))
        })
    }

    /// Remove the link with `other` (`LinkError` if they are not linked).
    fn unlink(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let (o, i) = self.pair(other)?;
            PyGraph::try_write(self.graph.bind(other.py()), |g| g.unlink(o, i))
        })
    }

    /// Remove every link of this anchor.
    fn unlink_all(&self, py: Python<'_>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let a = self.checked(py)?;
            PyGraph::try_write(self.graph.bind(py), |g| g.unlink_all(a))
        })
    }

    /// Whether this anchor is linked with `other`.
    fn is_linked_with(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let py = other.py();
            let Ok((o, i)) = self.pair(other) else {
                return Ok(false);
            };
            PyGraph::read(self.graph.bind(py), |g| g.is_linked(o, i))
        })
    }

    /// GE `ReplacePeer`: `new` takes `old`'s place in this anchor's peer list.
    fn replace_peer(&self, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let py = old.py();
            let me = self.checked(py)?;
            let old = self.other(old)?;
            let new = self.other(new)?;
            PyGraph::try_write(self.graph.bind(py), |g| match (me, old, new) {
                (Anchor::Out(s), Anchor::In(o), Anchor::In(n)) => g.replace_out_peer(s, o, n),
                (Anchor::In(d), Anchor::Out(o), Anchor::Out(n)) => g.replace_in_peer(d, o, n),
                _ => Err(IrError::Link(format!(
                    "replace_peer on {} needs two {} anchors",
                    g.describe(me),
                    if matches!(me, Anchor::Out(_)) {
                        "input"
                    } else {
                        "output"
                    }
                ))),
            })
        })
    }

    /// Insert a new node built from `op_desc` on this anchor's links: for an out-data anchor,
    /// between it and all its peers (new node input 0 / output 0); for an in-data anchor,
    /// between its producer and it. Returns the new node. Atomic.
    #[pyo3(signature = (op_desc, *, in_index=0, out_index=0))]
    fn insert(
        &self,
        op_desc: &Bound<'_, PyOpDesc>,
        in_index: usize,
        out_index: usize,
    ) -> PyResult<PyNode> {
        crate::errors::guard_res(|| {
            let py = op_desc.py();
            let me = self.checked(py)?;
            let op = PyOpDesc::snapshot(op_desc)?;
            if in_index >= op.num_inputs() || out_index >= op.num_outputs() {
                return Err(IrError::InvalidArgument(format!(
                "op '{}' needs input {in_index} and output {out_index} to be inserted (it has {} inputs, {} outputs)",
                op.name(),
                op.num_inputs(),
                op.num_outputs()
            )))
            .py();
            }
            let graph = self.graph.bind(py);
            let id = PyGraph::try_write(graph, |g| {
                let links: Vec<(OutAnchor, InAnchor)> = match me {
                    Anchor::Out(o) if !o.is_control() => {
                        g.out_peers(o).iter().map(|&i| (o, i)).collect()
                    }
                    Anchor::In(i) if !i.is_control() => match g.in_peer(i) {
                        Some(o) => vec![(o, i)],
                        None => {
                            return Err(IrError::Link(format!(
                                "{} has no peer to insert into",
                                g.describe(me)
                            )))
                        }
                    },
                    _ => {
                        return Err(IrError::Link(format!(
                            "insert works on data anchors, not on {}",
                            g.describe(me)
                        )))
                    }
                };
                if links.is_empty() {
                    return Err(IrError::Link(format!(
                        "{} has no peer to insert into",
                        g.describe(me)
                    )));
                }
                let at = links[0].0.node;
                let id = g.insert_node_after(at, op)?;
                let first = InAnchor::data(id, in_index);
                let second = OutAnchor::data(id, out_index);
                let (src, dst0) = links[0];
                g.insert_between(src, dst0, first, second)?;
                for &(s, d) in &links[1..] {
                    g.unlink(s, d)?;
                    g.link(second, d)?;
                }
                Ok(id)
            })?;
            PyOpDesc::attach(op_desc, self.graph.clone_ref(py), id)?;
            Ok(PyNode::new(self.graph.clone_ref(py), id))
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other.cast::<PyAnchor>().is_ok_and(|o| {
                let o = o.get();
                o.node == self.node
                    && o.kind == self.kind
                    && o.index == self.index
                    && o.graph.is(&self.graph)
            })
        })
    }

    fn __hash__(&self) -> PyResult<u64> {
        crate::errors::guard(|| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (
                self.node,
                self.kind,
                self.index,
                self.graph.as_ptr() as usize,
            )
                .hash(&mut h);
            h.finish()
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            let name = PyGraph::read(self.graph.bind(py), |g| {
                g.node(self.node).ok().map(|n| n.name().to_string())
            })
            .ok()
            .flatten()
            .unwrap_or_else(|| "(removed)".to_string());
            format!("<{} '{name}':{}>", self.kind.class_name(), self.index)
        })
    }
}
