//! ascendir [`Graph`] → ONNX `ModelProto` bytes, for graphs made of mapped ops.
//!
//! `Data` nodes become graph inputs (ordered by their `index`), `Const` nodes initializers,
//! the `NetOutput` inputs graph outputs, every other node one ONNX node through
//! [`crate::ops::unmap_node`] (ops kept as `onnx::<OpType>` go back verbatim). Value names come
//! from the port descs' names when set and unique. Subgraphs become `GRAPH` attributes; values
//! a body captured from its parent are referred to by their outer names again.

use ascendir_ir::{AttrValue, Graph, NodeId, Side, TensorDesc};
use prost::Message;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{OnnxError, OnnxResult};
use crate::import::{
    ATTR_AUX, ATTR_CONSTANT_NODE, ATTR_DOMAIN, ATTR_IR_VERSION, ATTR_OPSET, ATTR_OPSET_IMPORT,
};
use crate::ops::{attr_to_proto, unmap_node, Source};
use crate::pb;
use crate::types::{has_kept_type, tensor_to_proto, tensor_type, type_from_desc};

/// Options of [`export_model`].
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Standard-domain opset to write (default: the one the graph was imported from, else 17).
    pub opset: Option<i64>,
    /// Producer name written in the model.
    pub producer: Option<String>,
}

/// Op attribute: the number of ONNX inputs of a node whose bodies captured outer values (the
/// inputs after it are captures and are dropped on export).
pub use ascendir_ir::subgraph::ATTR_NUM_INPUTS;

fn ir_version_for(opset: i64) -> i64 {
    match opset {
        ..=11 => 6,
        12..=13 => 7,
        14..=18 => 8,
        19..=20 => 9,
        _ => 10,
    }
}

/// Encode `g` (a root graph with its subgraphs) as an ONNX model.
pub fn export_model(g: &Graph, opts: &ExportOptions) -> OnnxResult<Vec<u8>> {
    Ok(export_proto(g, opts)?.encode_to_vec())
}

/// Build the ONNX model of `g`.
pub fn export_proto(g: &Graph, opts: &ExportOptions) -> OnnxResult<pb::ModelProto> {
    let opset = opts
        .opset
        .or_else(|| g.attrs.get(ATTR_OPSET).and_then(AttrValue::as_int))
        .unwrap_or(17);
    let mut ex = Exporter {
        root: g,
        opset,
        domains: FxHashSet::default(),
    };
    let ir_version = match (
        opts.opset,
        g.attrs.get(ATTR_IR_VERSION).and_then(AttrValue::as_int),
    ) {
        (None, Some(v)) if v > 0 => v,
        _ => ir_version_for(opset),
    };
    let mut graph = ex.graph(g, &[], None)?;
    if ir_version < 4 {
        initializers_as_inputs(&mut graph);
    }
    let mut opset_import = vec![pb::OperatorSetIdProto {
        domain: String::new(),
        version: opset,
    }];
    if let Some(AttrValue::ListString(list)) = g.attrs.get(ATTR_OPSET_IMPORT) {
        for entry in list {
            if let Some((d, v)) = entry.rsplit_once(':') {
                if d.is_empty() || d == "ai.onnx" {
                    continue;
                }
                if let Ok(v) = v.parse() {
                    opset_import.push(pb::OperatorSetIdProto {
                        domain: d.to_string(),
                        version: v,
                    });
                }
            }
        }
    }
    for d in &ex.domains {
        if !opset_import.iter().any(|o| &o.domain == d) {
            opset_import.push(pb::OperatorSetIdProto {
                domain: d.clone(),
                version: 1,
            });
        }
    }
    Ok(pb::ModelProto {
        ir_version,
        opset_import,
        producer_name: opts.producer.clone().unwrap_or_else(|| "ascendir".into()),
        producer_version: String::new(),
        graph: Some(graph),
        ..Default::default()
    })
}

/// Before IR version 4 every initializer is also a graph input (the checker and the runtimes of
/// that era require it): list the ones that are not, with their tensor types.
fn initializers_as_inputs(graph: &mut pb::GraphProto) {
    let listed: FxHashSet<String> = graph.input.iter().map(|v| v.name.clone()).collect();
    let extra: Vec<pb::ValueInfoProto> = graph
        .initializer
        .iter()
        .filter(|t| !listed.contains(t.name.as_str()))
        .map(|t| pb::ValueInfoProto {
            name: t.name.clone(),
            r#type: Some(tensor_type(t.data_type, Some(&t.dims))),
            ..Default::default()
        })
        .collect();
    graph.input.extend(extra);
}

struct Exporter<'g> {
    root: &'g Graph,
    opset: i64,
    domains: FxHashSet<String>,
}

/// Graph nodes in a topological order that keeps the existing order where it is valid.
fn topo_order(g: &Graph) -> OnnxResult<Vec<NodeId>> {
    let ids: Vec<NodeId> = g.node_ids().collect();
    let pos: FxHashMap<NodeId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut indeg = vec![0usize; ids.len()];
    for (i, id) in ids.iter().enumerate() {
        indeg[i] = g.predecessors(*id).filter(|p| pos.contains_key(p)).count();
    }
    // Kahn with a min-heap on the original position keeps the given order when it is valid.
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..ids.len())
        .filter(|&i| indeg[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut out = Vec::with_capacity(ids.len());
    while let Some(std::cmp::Reverse(i)) = heap.pop() {
        out.push(ids[i]);
        for s in g.successors(ids[i]) {
            if let Some(&j) = pos.get(&s) {
                indeg[j] = indeg[j].saturating_sub(1);
                if indeg[j] == 0 {
                    heap.push(std::cmp::Reverse(j));
                }
            }
        }
    }
    if out.len() != ids.len() {
        return Err(OnnxError::Unsupported(format!(
            "graph '{}' has a cycle",
            g.name()
        )));
    }
    Ok(out)
}

/// The type of a graph input or output. A body's value of unknown type is written without one,
/// as ONNX allows inside subgraphs (writing a guessed element type would contradict what the
/// parent passes in); the root graph's inputs and outputs always carry a type.
fn io_type(desc: &TensorDesc, body: bool) -> Option<pb::TypeProto> {
    if body && desc.dtype == ascendir_ir::DataType::UNDEFINED && !has_kept_type(desc) {
        None
    } else {
        Some(type_from_desc(desc))
    }
}

impl Exporter<'_> {
    /// Export one graph. `outer` gives, for a body, the value names of the parent node's inputs
    /// (a `Data` node with index `i` ≥ `formal` reads `outer[i]`); `formal` is the number of
    /// parent inputs that are the body's own ONNX inputs (`None` for the root: every `Data` is
    /// an input).
    fn graph(
        &mut self,
        g: &Graph,
        outer: &[String],
        formal: Option<usize>,
    ) -> OnnxResult<pb::GraphProto> {
        let order = topo_order(g)?;
        let mut used: FxHashSet<String> = FxHashSet::default();
        used.extend(outer.iter().cloned());
        let mut names: FxHashMap<(NodeId, usize), String> = FxHashMap::default();
        let mut gp = pb::GraphProto {
            name: g.name().to_string(),
            ..Default::default()
        };
        let mut inputs: Vec<(i64, pb::ValueInfoProto)> = Vec::new();
        let mut value_info: Vec<pb::ValueInfoProto> = Vec::new();
        let mut fresh =
            |used: &mut FxHashSet<String>, wanted: Option<&str>, fallback: String| -> String {
                if let Some(w) = wanted {
                    if !w.is_empty() && used.insert(w.to_string()) {
                        return w.to_string();
                    }
                }
                let mut name = fallback;
                let mut k = 1;
                while used.contains(&name) {
                    name = format!("{name}_{k}");
                    k += 1;
                }
                used.insert(name.clone());
                name
            };
        let mut net_outputs: Vec<NodeId> = Vec::new();
        for &id in &order {
            let nd = g.node(id)?;
            let op = nd.op();
            match op.op_type() {
                "Data" => {
                    let index = op
                        .attr("index")
                        .and_then(AttrValue::as_int)
                        .unwrap_or(inputs.len() as i64);
                    let desc = op.output_desc(0)?;
                    let captured = match formal {
                        None => false,
                        Some(f) => index < 0 || index as usize >= f,
                    };
                    if captured {
                        let outer_name = usize::try_from(index)
                            .ok()
                            .and_then(|i| outer.get(i))
                            .ok_or_else(|| {
                                OnnxError::Unsupported(format!(
                                    "Data '{}' of body '{}' has index {index} but the parent has {} inputs",
                                    op.name(),
                                    g.name(),
                                    outer.len()
                                ))
                            })?;
                        names.insert((id, 0), outer_name.clone());
                    } else {
                        let name = fresh(&mut used, desc.name.as_deref(), op.name().to_string());
                        inputs.push((
                            index,
                            pb::ValueInfoProto {
                                name: name.clone(),
                                r#type: io_type(desc, formal.is_some()),
                                ..Default::default()
                            },
                        ));
                        names.insert((id, 0), name);
                    }
                }
                "Const" | "Constant" if op.attr(ATTR_AUX).is_some() => {}
                "Const" | "Constant" if op.attr(ATTR_CONSTANT_NODE).is_none() => {
                    let Some(AttrValue::Tensor(t)) = op.attr("value") else {
                        return Err(OnnxError::Unsupported(format!(
                            "Const '{}' has no tensor value",
                            op.name()
                        )));
                    };
                    let desc = op.output_desc(0)?;
                    let name = fresh(&mut used, desc.name.as_deref(), op.name().to_string());
                    gp.initializer.push(tensor_to_proto(&name, t)?);
                    names.insert((id, 0), name);
                }
                "NetOutput" => net_outputs.push(id),
                _ => {
                    let node = self.node(g, id, &names, &mut used, &mut gp, &mut fresh)?;
                    for (k, out) in node.output.iter().enumerate() {
                        let out = pb::text(out).to_string();
                        names.insert((id, k), out.clone());
                        let desc = op.output_desc(k)?;
                        if desc.dtype != ascendir_ir::DataType::UNDEFINED || has_kept_type(desc) {
                            value_info.push(pb::ValueInfoProto {
                                name: out,
                                r#type: Some(type_from_desc(desc)),
                                ..Default::default()
                            });
                        }
                    }
                    gp.node.push(node);
                }
            }
        }
        inputs.sort_by_key(|(i, _)| *i);
        gp.input = inputs.into_iter().map(|(_, v)| v).collect();
        // Outputs: the graph's output list when set, else the NetOutput inputs.
        let outs: Vec<(NodeId, usize)> = if !g.outputs().is_empty() {
            g.outputs().iter().map(|&(n, i)| (n, i as usize)).collect()
        } else if let Some(&net) = net_outputs.first() {
            g.node(net)?
                .in_data_peers()
                .flatten()
                .map(|a| (a.node, a.index as usize))
                .collect()
        } else {
            Vec::new()
        };
        let out_names: FxHashSet<String> =
            outs.iter().filter_map(|k| names.get(k).cloned()).collect();
        for (n, i) in outs {
            let name = names.get(&(n, i)).cloned().ok_or_else(|| {
                OnnxError::Unsupported(format!(
                    "graph '{}' outputs a value that was not exported",
                    g.name()
                ))
            })?;
            let desc: &TensorDesc = g.op(n)?.output_desc(i)?;
            gp.output.push(pb::ValueInfoProto {
                name,
                r#type: io_type(desc, formal.is_some()),
                ..Default::default()
            });
        }
        gp.value_info = value_info
            .into_iter()
            .filter(|v| !out_names.contains(&v.name))
            .collect();
        Ok(gp)
    }

    fn node(
        &mut self,
        g: &Graph,
        id: NodeId,
        names: &FxHashMap<(NodeId, usize), String>,
        used: &mut FxHashSet<String>,
        gp: &mut pb::GraphProto,
        fresh: &mut impl FnMut(&mut FxHashSet<String>, Option<&str>, String) -> String,
    ) -> OnnxResult<pb::NodeProto> {
        let nd = g.node(id)?;
        let op = nd.op();
        let ports: Vec<&str> = op.inputs().iter().map(|p| &*p.name).collect();
        let input_name = |k: usize| -> OnnxResult<String> {
            match nd.in_data_peer(k) {
                Some(a) if a.index >= 0 => names
                    .get(&(a.node, a.index as usize))
                    .cloned()
                    .ok_or_else(|| {
                        OnnxError::Unsupported(format!(
                            "input {k} of '{}' is not a data value",
                            op.name()
                        ))
                    }),
                _ => Ok(String::new()),
            }
        };
        let ty = op.op_type();
        if !ty.starts_with("onnx::")
            && crate::composite::needed(ty, &op.attrs, ports.len(), self.opset)
        {
            let inputs = (0..ports.len())
                .map(&input_name)
                .collect::<OnnxResult<Vec<_>>>()?;
            let ranks = op
                .inputs()
                .iter()
                .map(|p| {
                    (!ascendir_ir::infer::shape::unknown_rank(&p.desc.shape))
                        .then(|| p.desc.shape.len())
                })
                .collect();
            let n = crate::composite::Node {
                name: op.name(),
                ty,
                attrs: &op.attrs,
                inputs,
                ranks,
                dtype: op.output_desc(0)?.dtype,
                opset: self.opset,
            };
            let mut alloc = |s: String| fresh(used, None, s);
            let (last, ins, attrs) = crate::composite::expand(&n, gp, &mut alloc)?;
            let out = op.outputs().first().map(|p| {
                let wanted = p.desc.name.as_deref();
                fresh(used, wanted, format!("{}_{}", op.name(), p.name))
            });
            return Ok(pb::NodeProto {
                name: bytes::Bytes::copy_from_slice(op.name().as_bytes()),
                op_type: bytes::Bytes::from(last),
                input: ins.into_iter().map(bytes::Bytes::from).collect(),
                output: out.into_iter().map(bytes::Bytes::from).collect(),
                attribute: attrs,
                ..Default::default()
            });
        }
        let mut em = if let Some(raw) = ty.strip_prefix("onnx::") {
            let mut attrs = Vec::new();
            for (k, v) in &op.attrs {
                if k.starts_with('_') {
                    continue;
                }
                if let Some(a) = attr_to_proto(k, v)? {
                    attrs.push(a);
                }
            }
            let domain = op
                .attr(ATTR_DOMAIN)
                .and_then(AttrValue::as_str)
                .unwrap_or("")
                .to_string();
            if !domain.is_empty() {
                self.domains.insert(domain.clone());
            }
            crate::ops::Emitted {
                op_type: raw.to_string(),
                attrs,
                inputs: (0..ports.len()).map(Source::Port).collect(),
                consts: Vec::new(),
                domain,
            }
        } else {
            unmap_node(ty, &op.attrs, &ports, self.opset)?.ok_or_else(|| {
                OnnxError::Unsupported(format!(
                    "op '{}' of type {ty} has no ONNX mapping",
                    op.name()
                ))
            })?
        };
        if !ty.starts_with("onnx::") {
            crate::export_legacy::fold(g, nd, ty, &ports, self.opset, &mut em)?;
        }
        // ConstantOfShape takes its value from the Const GE feeds into Fill.
        if ty == "Fill" {
            let value = nd
                .in_data_peer(1)
                .and_then(|a| g.op(a.node).ok())
                .and_then(|p| match p.attr("value") {
                    Some(AttrValue::Tensor(t)) => Some(t.clone()),
                    _ => None,
                });
            let Some(t) = value else {
                return Err(OnnxError::Unsupported(format!(
                    "Fill '{}' needs a constant value input to become ConstantOfShape",
                    op.name()
                )));
            };
            em.inputs.truncate(1);
            em.attrs.push(pb::AttributeProto {
                name: "value".into(),
                r#type: pb::attribute_proto::AttributeType::Tensor as i32,
                t: Some(Box::new(tensor_to_proto("", &t)?)),
                ..Default::default()
            });
        }
        // Split takes its axis as an attribute: GE's SplitV from its constant `split_dim`.
        if ty == "SplitV" {
            let dim = nd
                .in_data_peer(2)
                .and_then(|a| g.op(a.node).ok())
                .and_then(|p| match p.attr("value") {
                    Some(AttrValue::Tensor(t)) => crate::types::tensor_ints(t),
                    _ => None,
                });
            let Some(&[dim]) = dim.as_deref() else {
                return Err(OnnxError::Unsupported(format!(
                    "SplitV '{}' needs a constant one-value split_dim to become Split",
                    op.name()
                )));
            };
            em.attrs.push(pb::AttributeProto {
                name: "axis".into(),
                r#type: pb::attribute_proto::AttributeType::Int as i32,
                i: dim,
                ..Default::default()
            });
        }
        // RMSNormalization normalizes from `axis`: GE's RmsNorm over the dims gamma has.
        if ty == "RmsNorm" {
            let rank = op
                .inputs()
                .get(1)
                .filter(|p| !ascendir_ir::infer::shape::unknown_rank(&p.desc.shape))
                .map(|p| p.desc.shape.len());
            let Some(rank) = rank.filter(|&r| r > 0) else {
                return Err(OnnxError::Unsupported(format!(
                    "RmsNorm '{}' needs gamma's rank to become RMSNormalization",
                    op.name()
                )));
            };
            em.attrs.push(pb::AttributeProto {
                name: "axis".into(),
                r#type: pb::attribute_proto::AttributeType::Int as i32,
                i: -(rank as i64),
                ..Default::default()
            });
        }
        let mut node = pb::NodeProto {
            name: bytes::Bytes::copy_from_slice(op.name().as_bytes()),
            op_type: bytes::Bytes::from(em.op_type.clone()),
            domain: bytes::Bytes::from(em.domain.clone()),
            attribute: em.attrs,
            ..Default::default()
        };
        let mut const_names = Vec::with_capacity(em.consts.len());
        for (j, t) in em.consts.iter().enumerate() {
            let name = fresh(used, None, format!("{}_const{j}", op.name()));
            gp.initializer.push(tensor_to_proto(&name, t)?);
            const_names.push(name);
        }
        // Bodies.
        let slots: Vec<String> = op.subgraph_instance_names().to_vec();
        let ir_names: Vec<(String, ascendir_ir::SubgraphType)> = op
            .meta()
            .map(|m| m.subgraph_ir_names.clone())
            .unwrap_or_default();
        let n_formal = match op.attr(ATTR_NUM_INPUTS).and_then(AttrValue::as_int) {
            Some(n) => n.max(0) as usize,
            None if ty == "If" => 1,
            None => ports.len(),
        };
        if !slots.is_empty() {
            let parent_names: Vec<String> = (0..ports.len())
                .map(&input_name)
                .collect::<OnnxResult<_>>()?;
            let body_formal = if ty == "If" { 0 } else { n_formal };
            let mut graphs: Vec<(String, bool, pb::GraphProto)> = Vec::new();
            for (k, inst) in slots.iter().enumerate() {
                if inst.is_empty() {
                    continue;
                }
                let sub = self.root.subgraph(inst).ok_or_else(|| {
                    OnnxError::Unsupported(format!(
                        "subgraph '{inst}' of '{}' is not registered",
                        op.name()
                    ))
                })?;
                let body = self.graph(sub, &parent_names, Some(body_formal))?;
                let (ir, kind) = ir_names
                    .get(k)
                    .cloned()
                    .unwrap_or((format!("body{k}"), ascendir_ir::SubgraphType::Static));
                let dynamic = kind == ascendir_ir::SubgraphType::Dynamic;
                let attr = if dynamic {
                    ir.trim_end_matches(|c: char| c.is_ascii_digit())
                        .to_string()
                } else {
                    ir
                };
                graphs.push((attr, dynamic, body));
            }
            for (attr, dynamic, body) in graphs {
                if dynamic {
                    match node.attribute.iter_mut().find(|a| a.name == attr) {
                        Some(a) => a.graphs.push(body),
                        None => node.attribute.push(pb::AttributeProto {
                            name: attr,
                            r#type: pb::attribute_proto::AttributeType::Graphs as i32,
                            graphs: vec![body],
                            ..Default::default()
                        }),
                    }
                } else {
                    node.attribute.push(pb::AttributeProto {
                        name: attr,
                        r#type: pb::attribute_proto::AttributeType::Graph as i32,
                        g: Some(body),
                        ..Default::default()
                    });
                }
            }
            em.inputs
                .retain(|s| !matches!(s, Source::Port(k) if *k >= n_formal));
        }
        for s in &em.inputs {
            node.input.push(bytes::Bytes::from(match s {
                Source::Port(k) => input_name(*k)?,
                Source::Absent => String::new(),
                Source::Const(j) => const_names[*j].clone(),
            }));
        }
        while node.input.last().is_some_and(|b| b.is_empty()) {
            node.input.pop();
        }
        // GE ops with more outputs than the ONNX op needs drop their unused trailing ones.
        let mut n_out = op.num_outputs();
        if matches!(
            ty,
            "BatchNorm" | "LayerNorm" | "MaxPoolV3" | "RmsNorm" | "NLLLoss"
        ) {
            let used_out = |k: usize| {
                !nd.out_data_peers(k).is_empty()
                    || g.outputs().iter().any(|&(n, i)| n == id && i as usize == k)
            };
            while n_out > 1 && !used_out(n_out - 1) {
                n_out -= 1;
            }
        }
        for port in &op.outputs()[..n_out] {
            let wanted = port.desc.name.as_deref();
            let name = fresh(used, wanted, format!("{}_{}", op.name(), port.name));
            node.output.push(bytes::Bytes::from(name));
        }
        let _ = Side::Input;
        Ok(node)
    }
}
