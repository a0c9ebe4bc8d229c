//! The Python methods of `ascendir.Graph`: construction, lookup, inputs/outputs, bulk building.

use std::collections::BTreeMap;
use std::sync::Arc;

use ascendir_ir::{
    AttrValue, Graph, InAnchor, IrError, NodeId, OpDesc, OutAnchor, Side, Sym, Tensor, TensorDesc,
};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::attrs::{AttrOwner, PyAttrMap};
use super::convert::dict_to_attrs;
use super::graph::PyGraph;
use super::node::{extract_source, PyNode};
use super::op_desc::{add_from_op_desc, PyOpDesc};
use super::tensor::{PyTensor, PyTensorDesc};
use super::types::extract_dtype;
use crate::errors::IntoPyResult;

fn handle(py: Python<'_>, graph: &Bound<'_, PyGraph>, id: NodeId) -> PyResult<Py<PyNode>> {
    Py::new(py, PyNode::new(graph.clone().unbind(), id))
}

fn free_name(g: &Graph, base: &str) -> String {
    let mut k = g.len();
    loop {
        let candidate = format!("{base}_{k}");
        if g.find(&candidate).is_none() {
            return candidate;
        }
        k += 1;
    }
}

/// Parse a graph output entry: a Node (output 0), an out-data anchor, or `(node, index)`.
fn output_entry(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<(NodeId, i32)> {
    if let Ok(t) = obj.cast::<PyTuple>() {
        if t.len() == 2 {
            let id = PyNode::extract_id(graph, &t.get_item(0)?)?;
            let index: i32 = t.get_item(1)?.extract()?;
            return Ok((id, index));
        }
    }
    let src = extract_source(graph, obj)?;
    if src.is_control() {
        return Err(IrError::InvalidArgument(
            "a graph output must be a data output, not a control anchor".into(),
        ))
        .py();
    }
    Ok((src.node, src.index))
}

/// Interned port names of one side of a bulk-built type (`None`: as many automatic names as the
/// edges use).
type PortNames = Option<Vec<Sym>>;

/// One node type of the bulk builder: its name and port names.
struct BulkType {
    name: Sym,
    inputs: Option<Vec<String>>,
    outputs: Option<Vec<String>>,
}

#[allow(clippy::too_many_arguments)]
fn build_bulk(
    name: &str,
    types: &[i64],
    table: &[BulkType],
    edges: &[[i64; 4]],
    names: Option<Vec<String>>,
    desc: Arc<TensorDesc>,
) -> Result<Graph, IrError> {
    let n = types.len();
    if let Some(names) = &names {
        if names.len() != n {
            return Err(IrError::InvalidArgument(format!(
                "{} names given for {n} nodes",
                names.len()
            )));
        }
    }
    for t in table {
        for (side, list) in [("input", &t.inputs), ("output", &t.outputs)] {
            if let Some(list) = list {
                for (k, name) in list.iter().enumerate() {
                    if list[..k].contains(name) {
                        return Err(IrError::Duplicate(format!(
                            "type '{}' lists the {side} name '{name}' twice",
                            t.name
                        )));
                    }
                }
            }
        }
    }
    let mut n_in = vec![0usize; n];
    let mut n_out = vec![0usize; n];
    for (i, &t) in types.iter().enumerate() {
        if t < 0 || t as usize >= table.len() {
            return Err(IrError::InvalidArgument(format!(
                "node {i} has type index {t}, but only {} type names were given",
                table.len()
            )));
        }
        let bt = &table[t as usize];
        n_in[i] = bt.inputs.as_ref().map_or(0, Vec::len);
        n_out[i] = bt.outputs.as_ref().map_or(0, Vec::len);
    }
    for (k, e) in edges.iter().enumerate() {
        let [src, so, dst, di] = *e;
        for (what, v) in [("source", src), ("destination", dst)] {
            if v < 0 || v as usize >= n {
                return Err(IrError::InvalidArgument(format!(
                    "edge {k}: {what} node {v} is out of range 0..{n}"
                )));
            }
        }
        if so < -1 || di < -1 {
            return Err(IrError::InvalidArgument(format!(
                "edge {k}: anchor indices must be ≥ 0, or -1 for control"
            )));
        }
        let (s, d) = (src as usize, dst as usize);
        let fixed_out = table[types[s] as usize].outputs.is_some();
        let fixed_in = table[types[d] as usize].inputs.is_some();
        if so >= 0 {
            if fixed_out && so as usize >= n_out[s] {
                return Err(IrError::InvalidArgument(format!(
                    "edge {k}: node {s} ({}) has {} outputs, no output {so}",
                    table[types[s] as usize].name, n_out[s]
                )));
            }
            n_out[s] = n_out[s].max(so as usize + 1);
        }
        if di >= 0 {
            if fixed_in && di as usize >= n_in[d] {
                return Err(IrError::InvalidArgument(format!(
                    "edge {k}: node {d} ({}) has {} inputs, no input {di}",
                    table[types[d] as usize].name, n_in[d]
                )));
            }
            n_in[d] = n_in[d].max(di as usize + 1);
        }
    }
    let mut g = Graph::with_capacity(name, n);
    let auto_in: Vec<Sym> = (0..n_in.iter().copied().max().unwrap_or(0))
        .map(|i| g.intern(&format!("__input{i}")))
        .collect();
    let auto_out: Vec<Sym> = (0..n_out.iter().copied().max().unwrap_or(0))
        .map(|i| g.intern(&format!("__output{i}")))
        .collect();
    let type_syms: Vec<(Sym, PortNames, PortNames)> = table
        .iter()
        .map(|t| {
            let ty = g.intern(&t.name);
            let ins = t
                .inputs
                .as_ref()
                .map(|v| v.iter().map(|s| g.intern(s)).collect());
            let outs = t
                .outputs
                .as_ref()
                .map(|v| v.iter().map(|s| g.intern(s)).collect());
            (ty, ins, outs)
        })
        .collect();
    let mut ids = Vec::with_capacity(n);
    let mut default_name = String::new();
    for i in 0..n {
        let (ty, ins, outs) = &type_syms[types[i] as usize];
        let node_name: &str = match &names {
            Some(v) => &v[i],
            None => {
                default_name.clear();
                use std::fmt::Write;
                let _ = write!(default_name, "{ty}_{i}");
                &default_name
            }
        };
        let mut op = OpDesc::with_type_sym(node_name, ty.clone());
        for k in 0..n_in[i] {
            let port = ins.as_ref().map_or(&auto_in[k], |v| &v[k]);
            op.push_port(Side::Input, port.clone(), desc.clone());
        }
        for k in 0..n_out[i] {
            let port = outs.as_ref().map_or(&auto_out[k], |v| &v[k]);
            op.push_port(Side::Output, port.clone(), desc.clone());
        }
        ids.push(g.add_node(op)?);
    }
    for (k, e) in edges.iter().enumerate() {
        let [src, so, dst, di] = *e;
        let s = OutAnchor {
            node: ids[src as usize],
            index: so as i32,
        };
        let d = InAnchor {
            node: ids[dst as usize],
            index: di as i32,
        };
        g.link(s, d)
            .map_err(|e| IrError::Link(format!("edge {k}: {e}")))?;
    }
    Ok(g)
}

#[pymethods]
impl PyGraph {
    #[new]
    #[pyo3(signature = (name="graph"))]
    fn py_new(name: &str) -> PyResult<Self> {
        crate::errors::guard(|| PyGraph::from_graph(Graph::new(name)))
    }

    /// The graph name.
    #[getter]
    fn name(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| PyGraph::read(slf, |g| g.name().to_string()))
    }
    #[setter]
    fn set_name(slf: &Bound<'_, Self>, name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            if let GraphSlot::Sub { .. } = PyGraph::borrow_slot(slf)?.slot {
                return Err(IrError::InvalidArgument(
                    "a registered subgraph is renamed through its parent".into(),
                ))
                .py();
            }
            PyGraph::write(slf, |g| g.set_name(name))
        })
    }

    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        crate::errors::guard_res(|| PyGraph::read(slf, |g| g.len()))
    }

    fn __contains__(slf: &Bound<'_, Self>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            if let Ok(name) = item.cast::<PyString>() {
                let name = name.to_str()?;
                return PyGraph::read(slf, |g| g.find(name).is_some());
            }
            if let Ok(node) = item.cast::<PyNode>() {
                let node = node.get();
                if !PyGraph::same_graph(slf, node.graph.bind(item.py())) {
                    return Ok(false);
                }
                return PyGraph::read(slf, |g| g.contains(node.id));
            }
            Ok(false)
        })
    }

    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| Ok(PyGraph::nodes(slf)?.into_any().try_iter()?.into_any()))
    }

    /// The nodes in graph order.
    #[getter]
    fn nodes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids: Vec<NodeId> = PyGraph::read(slf, |g| g.node_ids().collect())?;
            PyNode::handles(slf.py(), &slf.clone().unbind(), &ids)
        })
    }

    /// The node called `name` (`NotFoundError` if none).
    fn node(slf: &Bound<'_, Self>, name: &str) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let id = PyGraph::try_read(slf, |g| {
                g.find(name).ok_or_else(|| {
                    IrError::NotFound(format!("graph '{}' has no node named '{name}'", g.name()))
                })
            })?;
            handle(slf.py(), slf, id)
        })
    }

    /// The node called `name`, or `None`.
    fn find(slf: &Bound<'_, Self>, name: &str) -> PyResult<Option<Py<PyNode>>> {
        crate::errors::guard_res(|| match PyGraph::read(slf, |g| g.find(name))? {
            Some(id) => Ok(Some(handle(slf.py(), slf, id)?)),
            None => Ok(None),
        })
    }

    /// The graph attributes (a mutable mapping).
    #[getter]
    fn attrs(slf: &Bound<'_, Self>) -> PyResult<PyAttrMap> {
        crate::errors::guard(|| PyAttrMap {
            owner: AttrOwner::Graph(slf.clone().unbind()),
        })
    }

    /// Add a node built from `op_desc` at the insertion point — the end of the order unless
    /// inside a `Graph.inserting_before` / `inserting_after` block (GE `AddNode`); the name
    /// must be new. The `OpDesc` object becomes a view of the node's op.
    fn add_node(slf: &Bound<'_, Self>, op_desc: &Bound<'_, PyOpDesc>) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| add_from_op_desc(slf, op_desc, |g, op| g.add_node(op)))
    }

    /// Add a graph input: a `Data` node with input `x` and output `y` described by `desc`,
    /// and the int attribute `index` (its input position unless given); at the insertion
    /// point.
    #[pyo3(signature = (name, desc=None, *, index=None))]
    fn add_input(
        slf: &Bound<'_, Self>,
        name: &str,
        desc: Option<&Bound<'_, PyAny>>,
        index: Option<i64>,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let d = match desc {
                Some(d) => PyTensorDesc::extract_arc(d)?,
                None => Arc::new(TensorDesc::default()),
            };
            let id = PyGraph::try_write(slf, |g| {
                let position = index.unwrap_or(g.inputs().len() as i64);
                let mut op = OpDesc::new(name, "Data");
                op.add_input("x", d.clone());
                op.add_output("y", d)?;
                op.set_attr("index", AttrValue::Int(position));
                g.add_node(op)
            })?;
            handle(slf.py(), slf, id)
        })
    }

    /// Add a `Const` node holding `value` (a numpy array, array-like or `Tensor`) in its
    /// `value` attribute; output `y` is described by the tensor's desc. At the insertion point.
    #[pyo3(signature = (name, value, *, dtype=None))]
    fn add_const(
        slf: &Bound<'_, Self>,
        name: &str,
        value: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let dt = dtype.map(extract_dtype).transpose()?;
            let tensor: Tensor = match value.cast::<PyTensor>() {
                Ok(t) => t.get().inner.clone(),
                Err(_) => PyTensor::from_array(value, dt)?,
            };
            let id = PyGraph::try_write(slf, |g| {
                let mut op = OpDesc::new(name, "Const");
                op.add_output("y", tensor.desc.clone())?;
                op.set_attr("value", AttrValue::Tensor(tensor));
                g.add_node(op)
            })?;
            handle(slf.py(), slf, id)
        })
    }

    /// Add an op of `type` fed by `inputs` (each a Node = its output 0, an out-data anchor, or
    /// `None` for an unconnected slot). Input descs are copied from the producers' outputs.
    /// For a registered type (see `ascendir.register_op`) the ports, IR metadata and default
    /// attributes come from its prototype: inputs map to the IR inputs in order (a list for a
    /// dynamic input, `None` for an unset optional one), attributes are checked and converted,
    /// dtypes checked against the type variables, and the outputs inferred when the rule can
    /// run (`output_descs` overrides). Giving `input_names` or a list of output names builds
    /// the ports as listed instead, registered or not. Otherwise port names default to GE's automatic
    /// `__input<i>` / `__output<i>`; `outputs` is a count or a list of names; `output_descs`
    /// describes the outputs. A type that is not registered is refused (`NotFoundError` naming
    /// the nearest registered types) unless `allow_unregistered` is set: the node is then built
    /// with the ports as given. The node goes to the insertion point (see `inserting_before`).
    /// Atomic.
    #[pyo3(signature = (r#type, inputs=None, *, name=None, attrs=None, input_names=None, outputs=None, output_descs=None, allow_unregistered=false))]
    #[allow(clippy::too_many_arguments)]
    fn add_op(
        slf: &Bound<'_, Self>,
        r#type: &str,
        inputs: Option<&Bound<'_, PyAny>>,
        name: Option<&str>,
        attrs: Option<&Bound<'_, PyAny>>,
        input_names: Option<Vec<String>>,
        outputs: Option<&Bound<'_, PyAny>>,
        output_descs: Option<&Bound<'_, PyAny>>,
        allow_unregistered: bool,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            // A registered type: ports, attributes, validation and inference from its prototype.
            // An explicit port layout (`input_names=`, or `outputs=` as a list of names) asks for
            // the low-level construction below, registered or not.
            let explicit_layout = input_names.is_some()
                || outputs
                    .is_some_and(|o| o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>());
            match crate::ops::lookup(slf.py(), r#type)? {
                Some(proto) if !explicit_layout => {
                    return crate::ops::add_registered(
                        slf,
                        proto,
                        inputs,
                        name,
                        attrs,
                        outputs,
                        output_descs,
                    );
                }
                None if !allow_unregistered => {
                    return crate::ops::unknown_type(r#type);
                }
                _ => {}
            }
            let mut sources: Vec<Option<OutAnchor>> = Vec::new();
            if let Some(list) = inputs {
                for item in list.try_iter()? {
                    let item = item?;
                    sources.push(if item.is_none() {
                        None
                    } else {
                        Some(extract_source(slf, &item)?)
                    });
                }
            }
            if let Some(names) = &input_names {
                if names.len() != sources.len() {
                    return Err(IrError::InvalidArgument(format!(
                        "{} input names for {} inputs",
                        names.len(),
                        sources.len()
                    )))
                    .py();
                }
            }
            let output_names: Vec<String> = match outputs {
                None => vec!["__output0".to_string()],
                Some(o) => match o.extract::<usize>() {
                    Ok(count) => (0..count).map(|i| format!("__output{i}")).collect(),
                    Err(_) => o.extract()?,
                },
            };
            let descs: Vec<Arc<TensorDesc>> = match output_descs {
                None => Vec::new(),
                Some(list) => list
                    .try_iter()?
                    .map(|d| PyTensorDesc::extract_arc(&d?))
                    .collect::<PyResult<_>>()?,
            };
            if !descs.is_empty() && descs.len() != output_names.len() {
                return Err(IrError::InvalidArgument(format!(
                    "{} output descs for {} outputs",
                    descs.len(),
                    output_names.len()
                )))
                .py();
            }
            let attr_map = attrs.map(dict_to_attrs).transpose()?;
            let id = PyGraph::try_write(slf, |g| {
                let node_name = match name {
                    Some(n) => n.to_string(),
                    None => free_name(g, r#type),
                };
                let mut op = OpDesc::new(&node_name, r#type);
                for (i, src) in sources.iter().enumerate() {
                    let desc = match src {
                        Some(s) if !s.is_control() => {
                            g.op(s.node)?.output_desc(s.index as usize)?.clone()
                        }
                        _ => Arc::new(TensorDesc::default()),
                    };
                    match &input_names {
                        Some(names) => {
                            if op.input_index(&names[i]).is_some() {
                                return Err(IrError::Duplicate(format!(
                                    "op '{node_name}' would get two inputs named '{}'",
                                    names[i]
                                )));
                            }
                            op.add_input(&names[i], desc);
                        }
                        None => {
                            op.add_input_auto(desc);
                        }
                    }
                }
                for (i, out) in output_names.iter().enumerate() {
                    let desc = descs
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| Arc::new(TensorDesc::default()));
                    op.add_output(out, desc)?;
                }
                if let Some(a) = attr_map {
                    op.attrs = a;
                }
                g.add_node_linked(op, &sources)
            })?;
            handle(slf.py(), slf, id)
        })
    }

    /// Set the graph outputs (Nodes, out-data anchors or `(node, index)` pairs) and targets,
    /// then create or rewire the `NetOutput` node (returned; `None` when the graph has an
    /// `Output` node, as GE does).
    #[pyo3(signature = (outputs, *, targets=None))]
    fn set_outputs(
        slf: &Bound<'_, Self>,
        outputs: &Bound<'_, PyAny>,
        targets: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyNode>>> {
        crate::errors::guard_res(|| {
            let mut outs = Vec::new();
            for item in outputs.try_iter()? {
                outs.push(output_entry(slf, &item?)?);
            }
            let mut tgts = Vec::new();
            if let Some(t) = targets {
                for item in t.try_iter()? {
                    tgts.push(PyNode::extract_id(slf, &item?)?);
                }
            }
            let net = PyGraph::try_write(slf, |g| g.set_outputs(&outs, &tgts))?;
            net.map(|id| handle(slf.py(), slf, id)).transpose()
        })
    }

    /// The graph's input nodes.
    #[getter]
    fn inputs<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = PyGraph::read(slf, |g| g.inputs().to_vec())?;
            PyNode::handles(slf.py(), &slf.clone().unbind(), &ids)
        })
    }

    /// The graph outputs as `(node, output index)` pairs.
    #[getter]
    fn outputs<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let outs = PyGraph::read(slf, |g| g.outputs().to_vec())?;
            let items: PyResult<Vec<(Py<PyNode>, i32)>> = outs
                .iter()
                .map(|&(id, i)| Ok((handle(py, slf, id)?, i)))
                .collect();
            PyList::new(py, items?)
        })
    }

    /// The target nodes (control dependencies of the NetOutput).
    #[getter]
    fn targets<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids = PyGraph::read(slf, |g| g.targets().to_vec())?;
            PyNode::handles(slf.py(), &slf.clone().unbind(), &ids)
        })
    }

    /// Remove `node` and every link of its anchors without relinking anything (GE
    /// `RemoveNodeWithoutRelink`). Its handles go stale.
    fn erase_node(slf: &Bound<'_, Self>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let id = PyNode::extract_id(slf, node)?;
            // Through the root: the subgraphs below the node go with it.
            let (root, name) = match &PyGraph::borrow_slot(slf)?.slot {
                GraphSlot::Own(_) => (slf.clone(), None),
                GraphSlot::Sub { root, name, .. } => {
                    (root.bind(slf.py()).clone(), Some(name.clone()))
                }
            };
            let uid = PyGraph::read(slf, Graph::uid)?;
            PyGraph::try_write(&root, |g| {
                let owner = match &name {
                    None => None,
                    Some(n) => Some(
                        g.subgraph_index(n)
                            .filter(|&k| g.subgraphs[k].uid() == uid)
                            .ok_or_else(|| {
                                IrError::StaleSubgraph(format!(
                                    "subgraph '{n}' is no longer registered"
                                ))
                            })?,
                    ),
                };
                g.erase_tree_node(owner, id).map(|_| ())
            })
        })
    }

    /// Number of links (data and control).
    #[getter]
    fn num_links(slf: &Bound<'_, Self>) -> PyResult<usize> {
        crate::errors::guard_res(|| PyGraph::read(slf, |g| g.num_links()))
    }

    /// Node counts by op type, most frequent first.
    fn op_type_counts<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard_res(|| {
            let counts = PyGraph::read(slf, |g| {
                let mut m: BTreeMap<String, usize> = BTreeMap::new();
                for id in g.node_ids() {
                    if let Ok(op) = g.op(id) {
                        *m.entry(op.op_type().to_string()).or_default() += 1;
                    }
                }
                let mut v: Vec<(String, usize)> = m.into_iter().collect();
                v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                v
            })?;
            let d = PyDict::new(slf.py());
            for (k, v) in counts {
                d.set_item(k, v)?;
            }
            Ok(d)
        })
    }

    /// A deterministic text dump of the graph (nodes, ports, descs, links, attributes).
    fn dump(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let me = PyGraph::borrow_slot(slf)?;
            match &me.slot {
                GraphSlot::Own(g) => crate::errors::enter(py, || Ok::<_, IrError>(g.dump())),
                GraphSlot::Sub { .. } => {
                    drop(me);
                    PyGraph::read(slf, |g| g.dump())
                }
            }
        })
    }

    /// Structural invariant problems (empty when the graph is consistent).
    fn check_invariants(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| PyGraph::read(slf, |g| g.check_invariants()))
    }

    /// Build a graph in one call from numpy arrays, without a Python call per node.
    ///
    /// `types[i]` indexes `type_names`; `edges` is an `(E, 4)` integer array of
    /// `(src, src_output, dst, dst_input)` rows (-1 = control anchor), linked in row order;
    /// `ports` maps a type name to `(input_names, output_names)` (other types get GE's automatic
    /// names, with as many ports as the edges use); `names` gives node names (default
    /// `<type>_<i>`); every port is described by `desc`. Nothing is built on error.
    #[staticmethod]
    #[pyo3(signature = (types, edges, *, type_names, ports=None, names=None, desc=None, name="graph"))]
    #[allow(clippy::too_many_arguments)]
    fn from_edges(
        py: Python<'_>,
        types: &Bound<'_, PyAny>,
        edges: &Bound<'_, PyAny>,
        type_names: Vec<String>,
        ports: Option<&Bound<'_, PyDict>>,
        names: Option<Vec<String>>,
        desc: Option<&Bound<'_, PyAny>>,
        name: &str,
    ) -> PyResult<PyGraph> {
        crate::errors::guard_res(|| {
            let np = py.import("numpy")?;
            let types_arr = np.call_method1("ascontiguousarray", (types, "int64"))?;
            let edges_arr = np.call_method1("ascontiguousarray", (edges, "int64"))?;
            let edges_arr = if edges_arr.getattr("size")?.extract::<usize>()? == 0 {
                edges_arr.call_method1("reshape", ((0, 4),))?
            } else {
                edges_arr
            };
            let types_ro: PyReadonlyArray1<'_, i64> = types_arr.extract()?;
            let edges_ro: PyReadonlyArray2<'_, i64> = edges_arr.extract()?;
            let shape = edges_ro.as_array().shape().to_vec();
            if shape[1] != 4 {
                return Err(IrError::InvalidArgument(format!(
                    "edges must have shape (E, 4), got ({}, {})",
                    shape[0], shape[1]
                )))
                .py();
            }
            let types_slice = types_ro.as_slice()?;
            let flat = edges_ro.as_slice()?;
            let edge_rows: Vec<[i64; 4]> = flat
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect();
            let mut table = Vec::with_capacity(type_names.len());
            for t in &type_names {
                let (inputs, outputs) = match ports.map(|p| p.get_item(t)).transpose()?.flatten() {
                    Some(spec) => {
                        let (i, o): (Vec<String>, Vec<String>) = spec.extract()?;
                        (Some(i), Some(o))
                    }
                    None => (None, None),
                };
                table.push(BulkType {
                    name: Sym::new(t),
                    inputs,
                    outputs,
                });
            }
            let desc = match desc {
                Some(d) => PyTensorDesc::extract_arc(d)?,
                None => Arc::new(TensorDesc::default()),
            };
            let graph = crate::errors::enter(py, || {
                build_bulk(name, types_slice, &table, &edge_rows, names, desc)
            })?;
            Ok(PyGraph::from_graph(graph))
        })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            PyGraph::read(slf, |g| format!("<Graph '{}' {} nodes>", g.name(), g.len()))
        })
    }
}

use super::graph::GraphSlot;
