//! Small graph builders shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use ascendir_ir::{DataType, Format, Graph, InAnchor, NodeId, OpDesc, OutAnchor, TensorDesc};

/// A float32 ND desc of `shape`.
pub fn desc(shape: &[i64]) -> Arc<TensorDesc> {
    Arc::new(TensorDesc::new(shape, DataType::FLOAT, Format::ND))
}

/// An op with `n_in` inputs `x0..` and `n_out` outputs `y0..`, all `[1, 4]` float32.
pub fn op(name: &str, ty: &str, n_in: usize, n_out: usize) -> OpDesc {
    op_sized(name, ty, n_in, n_out, &[1, 4])
}

/// Like `op` with outputs of `shape`.
pub fn op_sized(name: &str, ty: &str, n_in: usize, n_out: usize, shape: &[i64]) -> OpDesc {
    let mut od = OpDesc::new(name, ty);
    for i in 0..n_in {
        od.add_input(&format!("x{i}"), desc(&[1, 4]));
    }
    for i in 0..n_out {
        od.add_output(&format!("y{i}"), desc(shape)).unwrap();
    }
    od
}

/// Add a node.
pub fn add(g: &mut Graph, name: &str, ty: &str, n_in: usize, n_out: usize) -> NodeId {
    g.add_node(op(name, ty, n_in, n_out)).unwrap()
}

/// Data link `src:o -> dst:i`.
pub fn data(g: &mut Graph, src: NodeId, o: usize, dst: NodeId, i: usize) {
    g.link(OutAnchor::data(src, o), InAnchor::data(dst, i))
        .unwrap();
}

/// Control link `src -> dst`.
pub fn ctrl(g: &mut Graph, src: NodeId, dst: NodeId) {
    g.link(OutAnchor::control(src), InAnchor::control(dst))
        .unwrap();
}

/// Data→control link `src:o -> dst:ctrl`.
pub fn data_ctrl(g: &mut Graph, src: NodeId, o: usize, dst: NodeId) {
    g.link(OutAnchor::data(src, o), InAnchor::control(dst))
        .unwrap();
}

/// Node names in graph order.
pub fn names(g: &Graph) -> Vec<String> {
    g.node_ids()
        .map(|id| g.node(id).unwrap().name().to_string())
        .collect()
}

/// Names of a list of ids.
pub fn names_of(g: &Graph, ids: &[NodeId]) -> Vec<String> {
    ids.iter()
        .map(|&id| g.node(id).unwrap().name().to_string())
        .collect()
}

/// `["a", "b"]` → owned strings.
pub fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Whether every link of `g` goes forward in the current order.
pub fn respects_links(g: &Graph) -> bool {
    let pos: std::collections::HashMap<NodeId, usize> =
        g.node_ids().enumerate().map(|(i, id)| (id, i)).collect();
    g.links()
        .iter()
        .all(|(src, dst)| pos[&src.node] < pos[&dst.node])
}
