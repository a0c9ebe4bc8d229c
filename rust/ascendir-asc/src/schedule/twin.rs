//! Structural twins: HintGraphs that differ only in their nodes' names (a model's repeated
//! layers). [`schedule`](super::schedule) decides nothing by a node's name except the names of
//! the nodes it inserts (`<prefix>_<producer>`, with `_<k>` on a clash), so a twin's ImplGraphs
//! are its sibling's with the names carried over: [`rename_for_twin`] does that, and refuses
//! (the caller then schedules the twin itself) wherever the carried-over name could differ
//! from the one scheduling would give.

use rustc_hash::{FxHashMap, FxHashSet};

use prost::Message;

use crate::graph::AscGraph;
use crate::transform::Transform;
use crate::wire::pb;

/// The graph's bytes with every node named after its index: equal for two graphs exactly when
/// they differ in nothing but their nodes' names.
pub fn structure_key(g: &AscGraph) -> Vec<u8> {
    g.structure_bytes()
}

/// `impls`, scheduled from HintGraph `from`, renamed for `to`, a graph of the same
/// [`structure_key`] (the caller's to check; the cheap part, node count and operator per
/// node, is checked here). Node `i` of `from` is node `i` of `to`; a node the scheduler
/// inserted (named `<prefix>_<producer>`) takes its producer's new name. `None` when a
/// carried-over name would not be the one scheduling `to` gives (an inserted name with a
/// clash suffix, or a new name that clashes).
pub fn rename_for_twin(
    impls: &[AscGraph],
    from: &AscGraph,
    to: &AscGraph,
) -> Option<Vec<AscGraph>> {
    let map = name_map(from, to)?;
    impls
        .iter()
        .map(|g| rename_impl(g, &twin_names(g, &map)?))
        .collect()
}

/// Node `i` of `from` to node `i` of `to`; `None` when the graphs differ in size or in a node's
/// operator.
fn name_map<'a>(from: &'a AscGraph, to: &'a AscGraph) -> Option<FxHashMap<&'a str, &'a str>> {
    let same_ops = from.nodes.len() == to.nodes.len()
        && from
            .nodes
            .iter()
            .zip(&to.nodes)
            .all(|(a, b)| a.op.op_type == b.op.op_type);
    if !same_ops {
        return None;
    }
    Some(
        from.nodes
            .iter()
            .zip(&to.nodes)
            .map(|(a, b)| (a.name.as_str(), b.name.as_str()))
            .collect(),
    )
}

/// A kernel's ImplGraphs ready for its structural twins: each converted to its message once
/// (when the first twin asks); a twin's bytes are those messages under the twin's names, the
/// bytes `to_bytes` of [`rename_for_twin`]'s graphs gives.
#[derive(Debug)]
pub struct TwinSource {
    hint: AscGraph,
    impls: Vec<AscGraph>,
    protos: std::sync::OnceLock<Vec<pb::AscGraphDef>>,
}

impl TwinSource {
    /// The ImplGraphs `impls` scheduled from `hint`.
    pub fn new(hint: AscGraph, impls: Vec<AscGraph>) -> TwinSource {
        TwinSource {
            hint,
            impls,
            protos: std::sync::OnceLock::new(),
        }
    }

    /// Name and bytes of each ImplGraph renamed for twin `to` (see [`rename_for_twin`]);
    /// `None` when the names cannot be carried over.
    pub fn bytes_for(&self, to: &AscGraph) -> Option<Vec<(String, Vec<u8>)>> {
        let map = name_map(&self.hint, to)?;
        let protos = self
            .protos
            .get_or_init(|| self.impls.iter().map(AscGraph::to_proto).collect());
        let mut out = Vec::with_capacity(self.impls.len());
        for (g, proto) in self.impls.iter().zip(protos) {
            let new = twin_names(g, &map)?;
            let mut p = proto.clone();
            for (pn, (n, name)) in p.asc_node.iter_mut().zip(g.nodes.iter().zip(&new)) {
                if let Some(a) = pn.attr.as_mut() {
                    a.name.clone_from(name);
                }
                for (src, inp) in pn.input_src.iter_mut().zip(&n.inputs) {
                    if let Some(r) = inp {
                        if let Some(m) = new.get(r.node.index()) {
                            src.src_node_name.clone_from(m);
                        }
                    }
                }
            }
            out.push((g.name.clone(), p.encode_to_vec()));
        }
        Some(out)
    }
}

/// The prefixes of the nodes the scheduler and the allocator insert (`insert_after`).
const INSERTED: [&str; 2] = [crate::alloc::UB2UB_PREFIX, super::pad::REMOVE_PAD_PREFIX];

/// The names of `g`'s nodes in the twin: hint nodes by `map`, inserted ones after their
/// producer's new name; `None` when that is not what scheduling the twin would give.
fn twin_names(g: &AscGraph, map: &FxHashMap<&str, &str>) -> Option<Vec<String>> {
    // Node order is creation order: an inserted node's producer comes before it.
    let mut new: Vec<String> = Vec::with_capacity(g.nodes.len());
    for n in &g.nodes {
        let name = match map.get(n.name.as_str()) {
            Some(m) => (*m).to_string(),
            None => {
                let p = n.inputs.first().copied().flatten()?.node.index();
                let (old_p, new_p) = (&g.nodes.get(p)?.name, new.get(p)?);
                let prefix = INSERTED.iter().find(|pre| {
                    n.name.strip_prefix(**pre).and_then(|r| r.strip_prefix('_')) == Some(old_p)
                })?;
                format!("{prefix}_{new_p}")
            }
        };
        new.push(name);
    }
    let mut seen = FxHashSet::default();
    if !new.iter().all(|n| seen.insert(n.as_str())) {
        return None;
    }
    Some(new)
}

/// `g` with its nodes named `new`.
fn rename_impl(g: &AscGraph, new: &[String]) -> Option<AscGraph> {
    let mut out = g.clone();
    let renamed: FxHashMap<&str, &str> = g
        .nodes
        .iter()
        .zip(new)
        .map(|(a, b)| (a.name.as_str(), b.as_str()))
        .collect();
    for t in out.log.iter_mut() {
        match t {
            Transform::ApplySplit { node, .. }
            | Transform::ApplyMerge { node, .. }
            | Transform::ApplySchedMerge { node, .. }
            | Transform::ApplyReorder { node, .. }
            | Transform::AxisReplace { node, .. } => {
                *node = (*renamed.get(node.as_str())?).to_string();
            }
            Transform::TileSplit { .. }
            | Transform::BlockSplit { .. }
            | Transform::Merge { .. }
            | Transform::BindBlock { .. } => {}
        }
    }
    out.by_name.clear();
    for (i, (n, name)) in out.nodes.iter_mut().zip(new).enumerate() {
        out.by_name
            .insert(name.clone(), crate::graph::NodeId(i as u32));
        n.name.clone_from(name);
    }
    Some(out)
}
