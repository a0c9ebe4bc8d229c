//! Replacing a realized cluster by its AscBackend node with the IR's fuse edit:
//! GE's type, port and attribute names plus ours; data inputs are the tensors the kernel
//! loads, outputs take over the original anchors' consumers, control edges move over.

use crate::error::KindResult;
use std::sync::Arc;

use ascendir_ir::{AttrValue, Graph, InAnchor, NodeId, OpDesc, OutAnchor, TensorDesc};
use rustc_hash::FxHashSet;

use crate::symbolize::TRef;

/// What the AscBackend node needs to know about its kernel.
#[derive(Clone, Debug)]
pub struct BackendSpec<'a> {
    /// Node name.
    pub name: &'a str,
    /// Fuse type (`pointwise`, `reduce`, ...).
    pub fuse_type: &'a str,
    /// Original nodes, topological.
    pub members: &'a [NodeId],
    /// Tensors read (Data index order).
    pub inputs: &'a [TRef],
    /// Tensors written (Output index order).
    pub outputs: &'a [TRef],
    /// HintGraph bytes.
    pub hint_bytes: bytes::Bytes,
    /// ImplGraph bytes in tiling-key order.
    pub impl_bytes: Vec<bytes::Bytes>,
    /// Symbol → source, GE's symbol_source_info.
    pub symbols: Vec<String>,
    /// Per output the symbolic dims as strings.
    pub output_symbol_shape: Vec<Vec<String>>,
    /// Guards.
    pub guards: Vec<String>,
    /// Cache key.
    pub cache_key: String,
    /// Position of the kernel in the compiled model's kernel (cluster) order.
    pub index: usize,
}

fn desc_of(g: &Graph, t: TRef) -> KindResult<Arc<TensorDesc>> {
    let op = g.op(t.0)?;
    op.outputs()
        .get(t.1 as usize)
        .map(|p| p.desc.clone())
        .ok_or_else(|| format!("node '{}' has no output {}", op.name(), t.1).into())
}

fn strings(v: &[String]) -> AttrValue {
    AttrValue::ListString(v.to_vec())
}

/// The AscBackend OpDesc of a kernel.
pub fn backend_op(g: &Graph, s: &BackendSpec<'_>) -> KindResult<OpDesc> {
    let mut op = OpDesc::new(s.name, "AscBackend");
    for (i, t) in s.inputs.iter().enumerate() {
        op.add_input(&format!("inputs{i}"), desc_of(g, *t)?);
    }
    for (j, t) in s.outputs.iter().enumerate() {
        let mut d = (*desc_of(g, *t)?).clone();
        let origin = g.op(t.0).map_err(|e| e.to_string())?.name().to_string();
        d.attrs_mut()
            .insert("_datadump_origin_name", AttrValue::String(origin));
        d.attrs_mut().insert(
            "_datadump_origin_output_index",
            AttrValue::Int(i64::from(t.1)),
        );
        op.add_output(&format!("outputs{j}"), Arc::new(d))
            .map_err(|e| e.to_string())?;
    }
    let n_in = s.inputs.len();
    let n_out = s.outputs.len();
    op.set_attr(
        "_input_name_list",
        strings(&vec!["inputs".to_string(); n_in]),
    );
    op.set_attr(
        "_input_para_type_list",
        strings(&vec!["dynamic".to_string(); n_in]),
    );
    op.set_attr(
        "_output_name_list",
        strings(&vec!["outputs".to_string(); n_out]),
    );
    op.set_attr(
        "_output_para_type_list",
        strings(&vec!["dynamic".to_string(); n_out]),
    );
    let mut names = Vec::new();
    let mut types = Vec::new();
    for &m in s.members {
        let o = g.op(m).map_err(|e| e.to_string())?;
        names.push(o.name().to_string());
        types.push(o.op_type().to_string());
    }
    op.set_attr("_datadump_original_op_names", strings(&names));
    op.set_attr("_datadump_original_op_types", strings(&types));
    op.set_attr(
        "_ge_attr_lowering_func",
        AttrValue::String("kAutoFuseLoweringFunc".into()),
    );
    op.set_attr("imply_type", AttrValue::Int(1));
    op.set_attr(
        "_ge_attr_op_kernel_lib_name",
        AttrValue::String("AIcoreEngine".into()),
    );
    op.set_attr(
        ascendir_asc::wire::ASCGRAPH_ATTR_KEY,
        AttrValue::Bytes(s.hint_bytes.clone()),
    );
    op.set_attr(
        "_ascendir_fuse_type",
        AttrValue::String(s.fuse_type.to_string()),
    );
    op.set_attr("_ascendir_symbols", strings(&s.symbols));
    op.set_attr(
        "_ascendir_output_symbol_shape",
        AttrValue::ListString(
            s.output_symbol_shape
                .iter()
                .map(|dims| format!("[{}]", dims.join(", ")))
                .collect(),
        ),
    );
    op.set_attr("_ascendir_guards", strings(&s.guards));
    op.set_attr(
        "_ascendir_cache_key",
        AttrValue::String(s.cache_key.clone()),
    );
    op.set_attr(
        "_ascendir_impl_graphs",
        AttrValue::ListBytes(s.impl_bytes.clone()),
    );
    op.set_attr(
        "_ascendir_kernel_index",
        AttrValue::Int(i64::try_from(s.index).unwrap_or(i64::MAX)),
    );
    Ok(op)
}

/// Replace `s.members` by one AscBackend node; returns its id.
pub fn replace_cluster(g: &mut Graph, s: &BackendSpec<'_>) -> KindResult<NodeId> {
    let op = backend_op(g, s)?;
    let e = |x: ascendir_ir::IrError| x.to_string();
    let members: FxHashSet<NodeId> = s.members.iter().copied().collect();
    let k = g.fuse_nodes(s.members, vec![op]).map_err(e)?[0];
    for (i, t) in s.inputs.iter().enumerate() {
        g.link(OutAnchor::data(t.0, t.1 as usize), InAnchor::data(k, i))
            .map_err(e)?;
    }
    for (j, t) in s.outputs.iter().enumerate() {
        let from = OutAnchor::data(t.0, t.1 as usize);
        let to = OutAnchor::data(k, j);
        let peers: Vec<InAnchor> = g.out_peers(from).to_vec();
        for p in peers {
            if !members.contains(&p.node) {
                g.unlink(from, p).map_err(e)?;
                g.link(to, p).map_err(e)?;
            }
        }
        g.replace_output((t.0, t.1 as i32), (k, j as i32))
            .map_err(e)?;
    }
    // Control edges between members and outside nodes move to the fused node.
    let mut ctrl_in: Vec<NodeId> = Vec::new();
    let mut ctrl_out: Vec<NodeId> = Vec::new();
    for &m in s.members {
        for p in g.in_control_nodes(m).map_err(e)? {
            if !members.contains(&p) && !ctrl_in.contains(&p) {
                ctrl_in.push(p);
            }
        }
        for p in g.out_control_nodes(m).map_err(e)? {
            if !members.contains(&p) && !ctrl_out.contains(&p) {
                ctrl_out.push(p);
            }
        }
    }
    for p in ctrl_in {
        g.link(OutAnchor::control(p), InAnchor::control(k))
            .map_err(e)?;
    }
    for p in ctrl_out {
        g.link(OutAnchor::control(k), InAnchor::control(p))
            .map_err(e)?;
    }
    for &m in s.members {
        g.erase_node(m).map_err(e)?;
    }
    Ok(k)
}
