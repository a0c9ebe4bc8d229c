//! `ascendir.OpDesc`: an operator descriptor, standalone or a view of a node's op.

use std::sync::Arc;

use ascendir_ir::{
    Graph, IrError, IrInputType, IrOutputType, IrResult, NodeId, OpDesc, Side, TensorDesc,
};
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::attrs::{AttrOwner, PyAttrMap};
use super::graph::PyGraph;
use super::tensor::{DescLoc, PyTensorDesc};
use crate::errors::IntoPyResult;

/// Where a Python `OpDesc` object's data lives.
#[derive(Debug)]
pub enum OpLoc {
    /// Not in a graph yet.
    Owned(OpDesc),
    /// The op of a node: every change goes to the node (and its anchors).
    Node {
        /// The graph.
        graph: Py<PyGraph>,
        /// The node.
        node: NodeId,
    },
}

/// An operator descriptor: name, type, named input/output ports with tensor descs, attributes,
/// IR metadata, subgraph slots and GE compile-state fields.
///
/// After `graph.add_node(od)` the object becomes a view of the node's op.
#[pyclass(name = "OpDesc", module = "ascendir")]
#[derive(Debug)]
pub struct PyOpDesc {
    /// Where the data lives.
    pub loc: OpLoc,
}

impl PyOpDesc {
    /// Read the op.
    pub fn try_with<R>(
        this: &Bound<'_, PyOpDesc>,
        f: impl FnOnce(&OpDesc) -> IrResult<R>,
    ) -> PyResult<R> {
        let me = this.try_borrow()?;
        match &me.loc {
            OpLoc::Owned(op) => f(op).py(),
            OpLoc::Node { graph, node } => {
                let graph = graph.bind(this.py()).clone();
                let node = *node;
                drop(me);
                PyGraph::try_read(&graph, |g| f(g.op(node)?))
            }
        }
    }

    /// Change the op; for a node, anchor counts follow appended/removed ports.
    pub fn try_with_mut<R>(
        this: &Bound<'_, PyOpDesc>,
        f: impl FnOnce(&mut OpDesc) -> IrResult<R>,
    ) -> PyResult<R> {
        let mut me = this.try_borrow_mut()?;
        match &mut me.loc {
            OpLoc::Owned(op) => f(op).py(),
            OpLoc::Node { graph, node } => {
                let graph = graph.bind(this.py()).clone();
                let node = *node;
                drop(me);
                PyGraph::try_write(&graph, |g| g.modify_op(node, f)?)
            }
        }
    }

    /// A copy of the current op.
    pub fn snapshot(this: &Bound<'_, PyOpDesc>) -> PyResult<OpDesc> {
        PyOpDesc::try_with(this, |op| Ok(op.clone()))
    }

    /// Make this object a view of node `node` of `graph` (after the op was added there).
    pub fn attach(this: &Bound<'_, PyOpDesc>, graph: Py<PyGraph>, node: NodeId) -> PyResult<()> {
        this.try_borrow_mut()?.loc = OpLoc::Node { graph, node };
        Ok(())
    }

    pub(super) fn node_loc(this: &Bound<'_, PyOpDesc>) -> PyResult<Option<(Py<PyGraph>, NodeId)>> {
        Ok(match &this.try_borrow()?.loc {
            OpLoc::Owned(_) => None,
            OpLoc::Node { graph, node } => Some((graph.clone_ref(this.py()), *node)),
        })
    }

    pub(super) fn resolve_index(
        this: &Bound<'_, PyOpDesc>,
        side: Side,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        if let Ok(name) = key.cast::<PyString>() {
            let name = name.to_str()?.to_string();
            return PyOpDesc::try_with(this, |op| op.port_index_of(side, &name));
        }
        let index: i64 = key.extract()?;
        PyOpDesc::try_with(this, |op| {
            let count = op.ports(side).len() as i64;
            let i = if index < 0 { index + count } else { index };
            if i < 0 || i >= count {
                return Err(IrError::NotFound(format!(
                    "op '{}' has no {} {index} (it has {count})",
                    op.name(),
                    if side == Side::Input {
                        "input"
                    } else {
                        "output"
                    }
                )));
            }
            Ok(i as usize)
        })
    }

    pub(super) fn desc_view(
        this: &Bound<'_, PyOpDesc>,
        side: Side,
        index: usize,
    ) -> PyResult<PyTensorDesc> {
        let loc = match PyOpDesc::node_loc(this)? {
            Some((graph, node)) => DescLoc::Port {
                graph,
                node,
                side,
                index,
            },
            None => DescLoc::Op {
                op: this.clone().unbind(),
                side,
                index,
            },
        };
        Ok(PyTensorDesc { loc })
    }

    pub(super) fn insert_at(
        this: &Bound<'_, PyOpDesc>,
        side: Side,
        index: usize,
        ports: Vec<(String, Arc<TensorDesc>)>,
    ) -> PyResult<()> {
        match PyOpDesc::node_loc(this)? {
            Some((graph, node)) => PyGraph::try_write(graph.bind(this.py()), |g| {
                g.insert_ports(node, side, index, &ports)
            }),
            None => PyOpDesc::try_with_mut(this, |op| op.insert_ports(side, index, &ports)),
        }
    }
}

/// Parse `(name, kind)` pairs of IR ports, naming the first bad kind.
fn parse_ir_ports<T>(
    value: Vec<(String, String)>,
    side: &str,
    parse: fn(&str) -> Option<T>,
) -> PyResult<Vec<(Arc<str>, T)>> {
    value
        .into_iter()
        .map(|(name, kind)| match parse(&kind) {
            Some(t) => Ok((Arc::<str>::from(name.as_str()), t)),
            None => Err(IrError::InvalidArgument(format!(
                "IR {side} '{name}': '{kind}' is not a valid kind"
            )))
            .py(),
        })
        .collect()
}

/// IR ports as `(name, kind)` pairs for Python (the inverse of [`parse_ir_ports`]).
fn ir_port_list<T: Copy>(
    ports: &[(Arc<str>, T)],
    kind: fn(T) -> &'static str,
) -> Vec<(String, &'static str)> {
    ports
        .iter()
        .map(|(n, t)| (n.to_string(), kind(*t)))
        .collect()
}

/// A port's desc argument: the given desc, or an empty one.
pub(super) fn desc_arg(desc: Option<&Bound<'_, PyAny>>) -> PyResult<Arc<TensorDesc>> {
    match desc {
        Some(d) => PyTensorDesc::extract_arc(d),
        None => Ok(Arc::new(TensorDesc::default())),
    }
}

#[pymethods]
impl PyOpDesc {
    #[new]
    #[pyo3(signature = (name, r#type, *, attrs=None))]
    fn py_new(name: &str, r#type: &str, attrs: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            let mut op = OpDesc::new(name, r#type);
            if let Some(a) = attrs {
                op.attrs = super::convert::dict_to_attrs(a)?;
            }
            Ok(PyOpDesc {
                loc: OpLoc::Owned(op),
            })
        })
    }

    /// An op of the registered type `type` (see `ascendir.register_op`), named `name` (the
    /// type by default): its required inputs, its outputs and the IR metadata from the
    /// registry, every attribute with its default unless given in `attrs` (converted to its
    /// declared kind). Optional and dynamic inputs get no slot (add them with
    /// `add_optional_input` / `add_input`). An unregistered type raises `NotFoundError` naming
    /// the nearest registered types; a missing required attribute or a value of the wrong kind
    /// `InvalidArgumentError`.
    #[staticmethod]
    #[pyo3(signature = (r#type, name=None, *, attrs=None))]
    fn from_type(
        py: Python<'_>,
        r#type: &str,
        name: Option<&str>,
        attrs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            let Some(proto) = crate::ops::lookup(py, r#type)? else {
                return crate::ops::unknown_type(r#type);
            };
            let attr_map = crate::ops::attrs_for(&proto, attrs)?;
            let op = proto
                .build_default(name.unwrap_or(r#type), attr_map)
                .map_err(crate::errors::py_err)?;
            Ok(PyOpDesc {
                loc: OpLoc::Owned(op),
            })
        })
    }

    /// The op name (renaming a node's op keeps the graph's name index).
    #[getter]
    fn name(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.name().to_string())))
    }
    #[setter]
    fn set_name(slf: &Bound<'_, Self>, name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| match PyOpDesc::node_loc(slf)? {
            Some((graph, node)) => {
                PyGraph::try_write(graph.bind(slf.py()), |g| g.rename_node(node, name))
            }
            None => PyOpDesc::try_with_mut(slf, |op| {
                op.set_name(name);
                Ok(())
            }),
        })
    }

    /// The op type.
    #[getter]
    fn r#type(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.op_type().to_string())))
    }
    #[setter]
    fn set_type(slf: &Bound<'_, Self>, ty: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| {
                op.set_type(ty);
                Ok(())
            })
        })
    }

    /// Topological id.
    #[getter]
    fn id(slf: &Bound<'_, Self>) -> PyResult<i64> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.id)))
    }
    #[setter]
    fn set_id(slf: &Bound<'_, Self>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| {
                op.id = v;
                Ok(())
            })
        })
    }

    /// Stream id.
    #[getter]
    fn stream_id(slf: &Bound<'_, Self>) -> PyResult<i64> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.stream_id)))
    }
    #[setter]
    fn set_stream_id(slf: &Bound<'_, Self>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| {
                op.stream_id = v;
                Ok(())
            })
        })
    }

    /// The op's attributes (a mutable mapping).
    #[getter]
    fn attrs(slf: &Bound<'_, Self>) -> PyResult<PyAttrMap> {
        crate::errors::guard_res(|| {
            let owner = match PyOpDesc::node_loc(slf)? {
                Some((graph, node)) => AttrOwner::Node { graph, node },
                None => AttrOwner::Op(slf.clone().unbind()),
            };
            Ok(PyAttrMap { owner })
        })
    }

    /// Subgraph instance names in slot order (`""` for an empty slot).
    #[getter]
    fn subgraph_names(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| Ok(op.subgraph_instance_names().to_vec()))
        })
    }

    /// Subgraph IR names with their kind (`"static"` / `"dynamic"`).
    #[getter]
    fn subgraph_ir_names(slf: &Bound<'_, Self>) -> PyResult<Vec<(String, &'static str)>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op.meta().map_or(Vec::new(), |m| {
                    m.subgraph_ir_names
                        .iter()
                        .map(|(n, t)| {
                            (
                                n.clone(),
                                if *t == ascendir_ir::SubgraphType::Static {
                                    "static"
                                } else {
                                    "dynamic"
                                },
                            )
                        })
                        .collect()
                }))
            })
        })
    }

    /// Register a static subgraph IR name with one empty instance slot.
    fn add_subgraph_name(slf: &Bound<'_, Self>, ir_name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| PyOpDesc::try_with_mut(slf, |op| op.add_subgraph_name(ir_name)))
    }

    /// Set the instance name of subgraph slot `index`.
    fn set_subgraph_instance_name(slf: &Bound<'_, Self>, index: usize, name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| op.set_subgraph_instance_name(index, name))
        })
    }

    /// IR inputs as `(name, "required" | "optional" | "dynamic")`.
    #[getter]
    fn ir_inputs(slf: &Bound<'_, Self>) -> PyResult<Vec<(String, &'static str)>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op
                    .meta()
                    .map_or(Vec::new(), |m| ir_port_list(&m.ir_inputs, |t| t.name())))
            })
        })
    }
    #[setter]
    fn set_ir_inputs(slf: &Bound<'_, Self>, value: Vec<(String, String)>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let parsed = parse_ir_ports(value, "input", IrInputType::from_name)?;
            PyOpDesc::try_with_mut(slf, |op| {
                op.meta_mut().ir_inputs = parsed;
                Ok(())
            })
        })
    }

    /// IR outputs as `(name, "required" | "dynamic")`.
    #[getter]
    fn ir_outputs(slf: &Bound<'_, Self>) -> PyResult<Vec<(String, &'static str)>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op
                    .meta()
                    .map_or(Vec::new(), |m| ir_port_list(&m.ir_outputs, |t| t.name())))
            })
        })
    }
    #[setter]
    fn set_ir_outputs(slf: &Bound<'_, Self>, value: Vec<(String, String)>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let parsed = parse_ir_ports(value, "output", IrOutputType::from_name)?;
            PyOpDesc::try_with_mut(slf, |op| {
                op.meta_mut().ir_outputs = parsed;
                Ok(())
            })
        })
    }

    /// IR attribute names in registration order.
    #[getter]
    fn ir_attr_names(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op.meta().map_or(Vec::new(), |m| m.ir_attr_names.clone()))
            })
        })
    }
    #[setter]
    fn set_ir_attr_names(slf: &Bound<'_, Self>, value: Vec<String>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| {
                op.meta_mut().ir_attr_names = value;
                Ok(())
            })
        })
    }

    /// Names of the inputs declared optional.
    #[getter]
    fn optional_inputs(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op.meta().map_or(Vec::new(), |m| {
                    m.optional_inputs.iter().map(|s| s.to_string()).collect()
                }))
            })
        })
    }

    /// GE's `has_out_attr` flag (default true).
    #[getter]
    fn has_out_attr(slf: &Bound<'_, Self>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| Ok(op.meta().is_none_or(|m| m.has_out_attr)))
        })
    }
    #[setter]
    fn set_has_out_attr(slf: &Bound<'_, Self>, v: bool) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| {
                op.meta_mut().has_out_attr = v;
                Ok(())
            })
        })
    }

    /// A standalone deep copy.
    fn copy(slf: &Bound<'_, Self>) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            Ok(PyOpDesc {
                loc: OpLoc::Owned(PyOpDesc::snapshot(slf)?),
            })
        })
    }

    fn __copy__(slf: &Bound<'_, Self>) -> PyResult<Self> {
        crate::errors::guard_res(|| PyOpDesc::copy(slf))
    }

    fn __deepcopy__(slf: &Bound<'_, Self>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard_res(|| PyOpDesc::copy(slf))
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let Ok(other) = other.cast::<PyOpDesc>() else {
                return Ok(false);
            };
            let b = PyOpDesc::snapshot(other)?;
            PyOpDesc::try_with(slf, |a| Ok(*a == b))
        })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(format!(
                    "<OpDesc '{}' {} in={} out={}>",
                    op.name(),
                    op.op_type(),
                    op.num_inputs(),
                    op.num_outputs()
                ))
            })
        })
    }
}

macro_rules! meta_list {
    ($getter:ident, $setter:ident, $field:ident, $ty:ty, $doc:literal) => {
        #[pymethods]
        impl PyOpDesc {
            #[doc = $doc]
            #[getter]
            fn $getter(slf: &Bound<'_, Self>) -> PyResult<Vec<$ty>> {
                PyOpDesc::try_with(slf, |op| {
                    Ok(op.meta().map_or(Vec::new(), |m| m.$field.clone()))
                })
            }
            #[setter]
            fn $setter(slf: &Bound<'_, Self>, value: Vec<$ty>) -> PyResult<()> {
                PyOpDesc::try_with_mut(slf, |op| {
                    op.meta_mut().$field = value;
                    Ok(())
                })
            }
        }
    };
}

meta_list!(
    input_offsets,
    set_input_offsets,
    input_offsets,
    i64,
    "Compile state: input memory offsets."
);
meta_list!(
    output_offsets,
    set_output_offsets,
    output_offsets,
    i64,
    "Compile state: output memory offsets."
);
meta_list!(
    workspace,
    set_workspace,
    workspace,
    i64,
    "Compile state: workspace offsets."
);
meta_list!(
    workspace_bytes,
    set_workspace_bytes,
    workspace_bytes,
    i64,
    "Compile state: workspace sizes in bytes."
);
meta_list!(
    src_names,
    set_src_names,
    src_name,
    String,
    "Compile state: source op names."
);
meta_list!(
    src_indices,
    set_src_indices,
    src_index,
    i64,
    "Compile state: source output indices."
);
meta_list!(
    dst_names,
    set_dst_names,
    dst_name,
    String,
    "Compile state: destination op names."
);
meta_list!(
    dst_indices,
    set_dst_indices,
    dst_index,
    i64,
    "Compile state: destination input indices."
);
meta_list!(
    is_input_const,
    set_is_input_const,
    is_input_const,
    bool,
    "Compile state: which inputs are constants."
);
meta_list!(
    compile_input_names,
    set_compile_input_names,
    input_name,
    String,
    "Compile state: GE's `input_name` list (not the port names)."
);

/// A node made by `add` from a snapshot of `op_desc` in `graph`; the `OpDesc` object becomes a
/// view of the node's op.
pub(crate) fn add_from_op_desc(
    graph: &Bound<'_, PyGraph>,
    op_desc: &Bound<'_, PyOpDesc>,
    add: impl FnOnce(&mut Graph, OpDesc) -> IrResult<NodeId>,
) -> PyResult<Py<super::node::PyNode>> {
    let op = PyOpDesc::snapshot(op_desc)?;
    let id = PyGraph::try_write(graph, |g| add(g, op))?;
    PyOpDesc::attach(op_desc, graph.clone().unbind(), id)?;
    Py::new(
        graph.py(),
        super::node::PyNode::new(graph.clone().unbind(), id),
    )
}
