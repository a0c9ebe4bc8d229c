//! `ascendir._core.asc.Node`: the node handle, base of `ascendir.asc.Node` and its per-op-type
//! subclasses (`asc.ops.Abs` ...).

use ascendir_asc::registry::{self, PortKind};
use ascendir_asc::{AscError, AscGraph, NodeId, OutRef};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

use super::attrs::PyNodeAttr;
use super::output::PyOutput;
use super::{core_of, write, At};
use crate::asc::graph::PyAscGraph;
use crate::errors::{concurrent_err, py_err, IntoPyResult};

fn invalid(msg: String) -> PyErr {
    py_err(AscError::InvalidArgument(msg))
}

fn not_found(msg: String) -> PyErr {
    py_err(AscError::NotFound(msg))
}

pub(super) fn not_initialized() -> PyErr {
    invalid("the node was not initialized (its class' __init__ did not run)".to_string())
}

/// A node of an AscGraph. Made by its op class (`asc.ops.Abs("abs", graph)`); a node made
/// without a graph lives in a private graph of its own until it is linked to a node of a graph
/// or given axes of one (it is then moved there: its graph and id change).
#[pyclass(name = "Node", module = "ascendir._core.asc", subclass)]
#[derive(Debug)]
pub struct PyNode {
    /// The Python graph object (`asc.HintGraph` ...) owning the node; None while it has none.
    pub(super) graph: Option<Py<PyAny>>,
    /// The engine graph holding the node: the owner's `_core`, or the node's private graph.
    pub(super) core: Option<Py<PyAscGraph>>,
    /// Node id in `core`.
    pub(super) id: u32,
}

impl PyNode {
    fn new_handle(graph: Option<Py<PyAny>>, core: Py<PyAscGraph>, id: u32) -> PyNode {
        PyNode {
            graph,
            core: Some(core),
            id,
        }
    }
}

/// The owner of `node` (None while it has none).
pub(super) fn graph_of<'py>(node: &Bound<'py, PyNode>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let n = node
        .try_borrow()
        .map_err(|_| concurrent_err("a node handle"))?;
    Ok(n.graph.as_ref().map(|g| g.bind(node.py()).clone()))
}

/// The name of a graph object, for messages.
fn graph_name(graph: &Bound<'_, PyAny>) -> String {
    graph
        .getattr("name")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_default()
}

fn node_name(node: &Bound<'_, PyNode>) -> PyResult<String> {
    At::of(node)?.read(|g, id| Ok(g.node(id).py()?.name.clone()))
}

/// Move `node` into `graph` unless it is already there (see the class doc). Fails when the
/// node belongs to another graph, or has connected inputs in its private graph.
pub(super) fn attach_to(
    node: &Bound<'_, PyNode>,
    graph: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let Some(graph) = graph else { return Ok(()) };
    if let Some(own) = graph_of(node)? {
        if own.is(graph) {
            return Ok(());
        }
        return Err(invalid(format!(
            "node '{}' belongs to graph '{}', not '{}'",
            node_name(node)?,
            graph_name(&own),
            graph_name(graph)
        )));
    }
    let at = At::of(node)?;
    let value = at.read(|g, id| {
        let n = g.node(id).py()?;
        if n.inputs.iter().any(Option::is_some) {
            return Err(invalid(format!(
                "node '{}' has connected inputs in its own graph",
                n.name
            )));
        }
        Ok(n.clone())
    })?;
    let core = core_of(graph)?;
    let id = write(&core, |g| Ok(g.add_node_value(value).py()?.0))?;
    {
        let mut n = node
            .try_borrow_mut()
            .map_err(|_| concurrent_err("a node handle"))?;
        n.graph = Some(graph.clone().unbind());
        n.core = Some(core.unbind());
        n.id = id;
    }
    graph.getattr("_nodes")?.set_item(id, node)?;
    Ok(())
}

/// `value` as an output: an output handle, or output 0 of a node handle.
fn as_output<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyOutput>> {
    if let Ok(o) = value.cast::<PyOutput>() {
        return Ok(o.clone());
    }
    if let Ok(n) = value.cast::<PyNode>() {
        return Bound::new(value.py(), PyOutput::new(n.clone().unbind(), 0));
    }
    Err(invalid(format!(
        "an input takes a node or an output, got {}",
        value.repr()?
    )))
}

/// Put the producer of `src` and `dst` in one graph before linking them.
fn join(dst: &Bound<'_, PyNode>, src: &Bound<'_, PyOutput>) -> PyResult<()> {
    let sn = src.get().node.bind(dst.py()).clone();
    match (graph_of(&sn)?, graph_of(dst)?) {
        (None, None) => Err(invalid(format!(
            "cannot link '{}' to '{}': neither node belongs to a graph",
            node_name(&sn)?,
            node_name(dst)?
        ))),
        (Some(sg), None) => attach_to(dst, Some(&sg)),
        (None, Some(dg)) => attach_to(&sn, Some(&dg)),
        (Some(sg), Some(dg)) if !sg.is(&dg) => Err(invalid(format!(
            "cannot link '{}' (graph '{}') to '{}' (graph '{}')",
            node_name(&sn)?,
            graph_name(&sg),
            node_name(dst)?,
            graph_name(&dg)
        ))),
        _ => Ok(()),
    }
}

/// The engine reference of an output handle (after [`join`], in the consumer's graph).
fn out_ref(src: &Bound<'_, PyOutput>) -> PyResult<OutRef> {
    let o = src.get();
    let n = o
        .node
        .bind(src.py())
        .try_borrow()
        .map_err(|_| concurrent_err("a node handle"))?;
    Ok(OutRef {
        node: NodeId(n.id),
        index: u32::try_from(o.index).map_err(|_| invalid("output index too large".into()))?,
    })
}

fn node_ref(g: &AscGraph, id: NodeId) -> PyResult<&ascendir_asc::Node> {
    g.node(id).py()
}

#[pymethods]
impl PyNode {
    /// An uninitialized handle; the class' `__init__` (or `_wrap`) fills it in.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyNode> {
        crate::errors::guard(|| PyNode {
            graph: None,
            core: None,
            id: 0,
        })
    }

    /// Create the node (of the class' `op_type`) named `name`, in `graph` or in a private graph.
    #[pyo3(signature = (name, graph = None))]
    fn _create(
        slf: &Bound<'_, PyNode>,
        name: &str,
        graph: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let op_type: String = slf.get_type().getattr("op_type")?.extract()?;
            let (core, owner) = match graph {
                Some(g) => (core_of(g)?, Some(g.clone())),
                None => (
                    Bound::new(
                        py,
                        PyAscGraph {
                            g: AscGraph::new(""),
                        },
                    )?,
                    None,
                ),
            };
            let id = write(&core, |g| Ok(g.add_node_of_type(name, &op_type).py()?.0))?;
            {
                let mut n = slf
                    .try_borrow_mut()
                    .map_err(|_| concurrent_err("a node handle"))?;
                *n = PyNode::new_handle(
                    owner.as_ref().map(|g| g.clone().unbind()),
                    core.unbind(),
                    id,
                );
            }
            if let Some(g) = owner {
                g.getattr("_nodes")?.set_item(id, slf)?;
            }
            Ok(())
        })
    }

    /// A handle of class `cls` for node `nid` of `graph` (no node is created).
    #[classmethod]
    fn _wrap<'py>(
        cls: &Bound<'py, PyType>,
        graph: &Bound<'py, PyAny>,
        nid: u32,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| {
            let core = core_of(graph)?;
            super::read(&core, |g| node_ref(g, NodeId(nid)).map(|_| ()))?;
            let obj = cls.call_method1("__new__", (cls,))?;
            let node = obj.cast::<PyNode>()?;
            *node
                .try_borrow_mut()
                .map_err(|_| concurrent_err("a node handle"))? =
                PyNode::new_handle(Some(graph.clone().unbind()), core.unbind(), nid);
            Ok(obj)
        })
    }

    /// Move this node into `graph` (no-op for None or its own graph); see the class doc.
    fn _attach_to(slf: &Bound<'_, PyNode>, graph: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        crate::errors::guard_res(|| attach_to(slf, graph))
    }

    /// The owning graph (None until the node joins one).
    #[getter]
    fn graph(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        crate::errors::guard(|| self.graph.as_ref().map(|g| g.clone_ref(py)))
    }

    /// Node id in its graph.
    #[getter]
    fn id(&self) -> PyResult<u32> {
        crate::errors::guard(|| self.id)
    }

    /// Node name.
    #[getter]
    fn name(slf: &Bound<'_, PyNode>) -> PyResult<String> {
        crate::errors::guard_res(|| node_name(slf))
    }

    /// AscIR op type.
    #[getter(r#type)]
    fn op_type_of(slf: &Bound<'_, PyNode>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            At::of(slf)?.read(|g, id| Ok(node_ref(g, id)?.op_type().to_string()))
        })
    }

    /// `sched`, `api` and `ir_attr`.
    #[getter]
    fn attr(slf: &Bound<'_, PyNode>) -> PyResult<PyNodeAttr> {
        crate::errors::guard(|| PyNodeAttr::new(slf.clone().unbind()))
    }

    /// Input port names.
    #[getter]
    fn input_names(slf: &Bound<'_, PyNode>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            At::of(slf)?.read(|g, id| Ok(node_ref(g, id)?.input_names.clone()))
        })
    }

    /// Output port names.
    #[getter]
    fn output_names(slf: &Bound<'_, PyNode>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            At::of(slf)?.read(|g, id| Ok(node_ref(g, id)?.output_names.clone()))
        })
    }

    /// Output handles.
    #[getter]
    fn outputs(slf: &Bound<'_, PyNode>) -> PyResult<Vec<PyOutput>> {
        crate::errors::guard_res(|| {
            let n = At::of(slf)?.read(|g, id| Ok(node_ref(g, id)?.output_names.len()))?;
            Ok((0..n)
                .map(|i| PyOutput::new(slf.clone().unbind(), i))
                .collect())
        })
    }

    /// An output by index or port name.
    fn output(slf: &Bound<'_, PyNode>, index_or_name: &Bound<'_, PyAny>) -> PyResult<PyOutput> {
        crate::errors::guard_res(|| {
            let (name, names) = At::of(slf)?.read(|g, id| {
                let n = node_ref(g, id)?;
                Ok((n.name.clone(), n.output_names.clone()))
            })?;
            let index = if let Ok(s) = index_or_name.cast::<PyString>() {
                let s = s.to_str()?;
                names
                    .iter()
                    .position(|p| p == s)
                    .ok_or_else(|| not_found(format!("node '{name}' has no output '{s}'")))?
            } else if index_or_name.is_instance_of::<PyInt>() {
                let i: i64 = index_or_name.extract()?;
                usize::try_from(i)
                    .ok()
                    .filter(|i| *i < names.len())
                    .ok_or_else(|| not_found(format!("node '{name}' has no output {i}")))?
            } else {
                return Err(invalid(format!(
                    "an output is named by its index or port name, got {}",
                    index_or_name.repr()?
                )));
            };
            Ok(PyOutput::new(slf.clone().unbind(), index))
        })
    }

    /// Set the number of instances of a dynamic output (named `<port>0` ...).
    fn set_dynamic_outputs(slf: &Bound<'_, PyNode>, port: &str, count: usize) -> PyResult<()> {
        crate::errors::guard_res(|| {
            At::of(slf)?.write(|g, id| g.set_dynamic_outputs(id, port, count).py())
        })
    }

    /// The producer output feeding input `name` (None when unconnected).
    fn input(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<Option<PyOutput>> {
        crate::errors::guard_res(|| {
            let src = At::of(slf)?.read(|g, id| {
                let n = node_ref(g, id)?;
                let i = n
                    .input_names
                    .iter()
                    .position(|p| p == name)
                    .ok_or_else(|| not_found(format!("node '{}' has no input '{name}'", n.name)))?;
                Ok(n.inputs.get(i).copied().flatten())
            })?;
            let (Some(src), Some(graph)) = (src, graph_of(slf)?) else {
                return Ok(None);
            };
            let producer = graph.call_method1("_node", (src.node.0,))?;
            let producer = producer.cast::<PyNode>()?;
            Ok(Some(PyOutput::new(
                producer.clone().unbind(),
                src.index as usize,
            )))
        })
    }

    /// What assigning attribute `name` does: `in` (link an input), `in_dynamic` (link the
    /// instances of a dynamic input), `out` (refused) or None (a plain attribute). The ports are
    /// the registered prototype's; for an unregistered type, the node's own port names.
    fn _port_kind(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<Option<&'static str>> {
        crate::errors::guard_res(|| {
            At::of(slf)?.read(|g, id| {
                let n = node_ref(g, id)?;
                let Some(def) = registry::lookup(n.op_type()) else {
                    return Ok(if n.input_names.iter().any(|p| p == name) {
                        Some("in")
                    } else if n.output_names.iter().any(|p| p == name) {
                        Some("out")
                    } else {
                        None
                    });
                };
                if let Some(p) = def.inputs.iter().find(|p| p.name == name) {
                    return Ok(Some(if p.kind == PortKind::Dynamic {
                        "in_dynamic"
                    } else {
                        "in"
                    }));
                }
                Ok(def.outputs.iter().any(|p| p.name == name).then_some("out"))
            })
        })
    }

    /// Ports read as attributes: an output port gives its handle, an input port its producer.
    fn __getattr__(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            if !name.starts_with('_') {
                let (output, is_input) = At::of(slf)?.read(|g, id| {
                    let n = node_ref(g, id)?;
                    Ok((
                        n.output_names.iter().position(|p| p == name),
                        n.input_names.iter().any(|p| p == name),
                    ))
                })?;
                if let Some(i) = output {
                    return Ok(Py::new(py, PyOutput::new(slf.clone().unbind(), i))?.into_any());
                }
                if is_input {
                    return Ok(PyNode::input(slf, name)?
                        .into_pyobject(py)?
                        .into_any()
                        .unbind());
                }
            }
            let cls = slf.get_type().name()?;
            Err(PyAttributeError::new_err(format!(
                "{cls} node has no attribute or port '{name}'"
            )))
        })
    }

    /// Link input port `port` to `value` (a node or an output), moving either node into the
    /// other's graph first when it has none.
    fn _link(slf: &Bound<'_, PyNode>, port: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let src = as_output(value)?;
            join(slf, &src)?;
            let r = out_ref(&src)?;
            At::of(slf)?.write(|g, id| g.connect_by_name(r, id, port).py())
        })
    }

    /// Link the instances of dynamic input `port` to `values` (nodes or outputs).
    fn _link_dynamic(
        slf: &Bound<'_, PyNode>,
        port: &str,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let mut srcs = Vec::new();
            for v in values.try_iter()? {
                srcs.push(as_output(&v?)?);
            }
            for s in &srcs {
                join(slf, s)?;
            }
            let refs = srcs.iter().map(out_ref).collect::<PyResult<Vec<_>>>()?;
            At::of(slf)?.write(|g, id| g.set_dynamic_inputs(id, port, &refs).py())
        })
    }

    fn __repr__(slf: &Bound<'_, PyNode>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let (name, ty) = At::of(slf)?.read(|g, id| {
                let n = node_ref(g, id)?;
                Ok((n.name.clone(), n.op_type().to_string()))
            })?;
            Ok(format!("{ty}({})", PyString::new(slf.py(), &name).repr()?))
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        crate::errors::guard_gc(Ok(()), || {
            if let Some(g) = &self.graph {
                visit.call(g)?;
            }
            if let Some(c) = &self.core {
                visit.call(c)?;
            }
            Ok(())
        })
    }

    fn __clear__(&mut self) {
        crate::errors::guard_gc((), || {
            self.graph = None;
            self.core = None;
        })
    }
}
