//! What changed between two graphs (two compile stages of one model): nodes added, removed,
//! retyped and renamed, data and control edges relinked, attributes and tensor descriptors
//! changed.
//!
//! Nodes are matched first by name. A node left without a partner is then matched by
//! structure: a node of `new` whose data inputs all come from matched nodes takes the unmatched
//! node of `old` of the same type fed by the same producers at the same ports (forward); a
//! node whose data consumers are matched takes the unmatched producer of the same type that
//! feeds the matched partners at the same ports (backward). A match wakes the node's
//! neighbours, so a chain of renamed nodes is matched link by link from matched inputs or
//! outputs (only data links count: a node without any data link is matched by name only).
//! Ties are broken by the node order of `old`, nodes of `new` are visited in their
//! order: the result is deterministic, and the work is linear in the links (times the fan-out
//! of a producer for the forward candidates).
//!
//! Only the root graphs are compared (subgraphs are not). Nodes are reported by their name in
//! `new`; a node only in `old` by its name there.

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::attr::AttrValue;
use crate::graph::{Graph, NodeData, NodeId};
use crate::op_desc::Side;
use crate::tensor::TensorDesc;

/// How a node of `old` was paired with a node of `new`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// Same name.
    Name,
    /// Different names, same type and same matched neighbours.
    Structure,
}

impl MatchedBy {
    /// `"name"` or `"structure"`.
    pub fn word(self) -> &'static str {
        match self {
            MatchedBy::Name => "name",
            MatchedBy::Structure => "structure",
        }
    }
}

/// A node present in both graphs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMatch {
    /// Its name in `old`.
    pub old: String,
    /// Its name in `new`.
    pub new: String,
    /// How the two were paired.
    pub by: MatchedBy,
}

/// A node of one graph only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The node's name.
    pub name: String,
    /// The node's op type.
    pub op_type: String,
}

/// A matched node whose op type changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retyped {
    /// The node (its name in `new`).
    pub node: String,
    /// The type in `old`.
    pub old: String,
    /// The type in `new`.
    pub new: String,
}

/// A producer output: `(node name, output index)`.
pub type Source = (String, i32);

/// A data input of a matched node whose producer changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRelink {
    /// The consumer (its name in `new`).
    pub node: String,
    /// The input index.
    pub index: usize,
    /// The producer in `old` (by its name in `new` when matched), `None` when unlinked.
    pub old: Option<Source>,
    /// The producer in `new`, `None` when unlinked.
    pub new: Option<Source>,
}

/// A control link into a matched node that only one graph has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlChange {
    /// The source node.
    pub src: String,
    /// The destination (a matched node, its name in `new`).
    pub dst: String,
    /// `true`: only `new` has the link; `false`: only `old`.
    pub added: bool,
}

/// An attribute of a matched node that changed (`None`: absent on that side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrChange {
    /// The node (its name in `new`).
    pub node: String,
    /// The attribute key.
    pub key: String,
    /// The value in `old`, as the text dump shows it.
    pub old: Option<String>,
    /// The value in `new`.
    pub new: Option<String>,
}

/// The parts of a tensor descriptor the diff compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescInfo {
    /// The element type (`DT_FLOAT`).
    pub dtype: String,
    /// The dimensions.
    pub shape: Vec<i64>,
    /// The format's serial string (`NCHW`, `FRACTAL_Z:16`).
    pub format: String,
}

impl DescInfo {
    /// The compared parts of `desc`.
    pub fn of(desc: &TensorDesc) -> Self {
        DescInfo {
            dtype: desc.dtype.serial_name().to_string(),
            shape: desc.shape.to_vec(),
            format: crate::format::bits::serial_string(desc.format),
        }
    }
}

/// A port descriptor of a matched node that changed (`None`: the port is absent on that side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescChange {
    /// The node (its name in `new`).
    pub node: String,
    /// Input or output port.
    pub side: Side,
    /// The port index.
    pub index: usize,
    /// The descriptor in `old`.
    pub old: Option<DescInfo>,
    /// The descriptor in `new`.
    pub new: Option<DescInfo>,
}

/// Everything that differs between two graphs; each list in a fixed order (the node order of
/// `new`, `removed` in the order of `old`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphDiff {
    /// The name of `old`.
    pub old_graph: String,
    /// The name of `new`.
    pub new_graph: String,
    /// Nodes of `old`.
    pub old_nodes: usize,
    /// Nodes of `new`.
    pub new_nodes: usize,
    /// Every matched pair (kept nodes), `new`'s order.
    pub kept: Vec<NodeMatch>,
    /// Nodes only `new` has.
    pub added: Vec<NodeInfo>,
    /// Nodes only `old` has.
    pub removed: Vec<NodeInfo>,
    /// Matched nodes whose type changed.
    pub retyped: Vec<Retyped>,
    /// Data inputs of matched nodes whose producer changed.
    pub data_edges: Vec<DataRelink>,
    /// Control links into matched nodes found on one side only.
    pub control_edges: Vec<ControlChange>,
    /// Attributes of matched nodes that changed.
    pub attrs: Vec<AttrChange>,
    /// Port descriptors of matched nodes that changed.
    pub descs: Vec<DescChange>,
    /// The graph outputs (`name:index`) of `old` and `new`, when they differ.
    pub outputs: Option<(Vec<String>, Vec<String>)>,
}

impl GraphDiff {
    /// Whether the two graphs are the same (names matched, nothing changed).
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.retyped.is_empty()
            && self.data_edges.is_empty()
            && self.control_edges.is_empty()
            && self.attrs.is_empty()
            && self.descs.is_empty()
            && self.outputs.is_none()
            && self.kept.iter().all(|m| m.by == MatchedBy::Name)
    }
}

/// The pairing of the nodes of two graphs.
struct Matcher<'g> {
    a: &'g Graph,
    b: &'g Graph,
    a2b: FxHashMap<NodeId, NodeId>,
    b2a: FxHashMap<NodeId, NodeId>,
    a_pos: FxHashMap<NodeId, usize>,
    by: FxHashMap<NodeId, MatchedBy>,
}

fn node(g: &Graph, id: NodeId) -> Option<&NodeData> {
    g.node(id).ok()
}

impl<'g> Matcher<'g> {
    fn new(a: &'g Graph, b: &'g Graph) -> Self {
        let a_pos = a.node_ids().enumerate().map(|(i, id)| (id, i)).collect();
        Matcher {
            a,
            b,
            a2b: FxHashMap::default(),
            b2a: FxHashMap::default(),
            a_pos,
            by: FxHashMap::default(),
        }
    }

    fn pair(&mut self, a: NodeId, b: NodeId, by: MatchedBy) {
        self.a2b.insert(a, b);
        self.b2a.insert(b, a);
        self.by.insert(b, by);
    }

    fn by_name(&mut self) {
        for b in self.b.node_ids() {
            let Some(nb) = node(self.b, b) else { continue };
            if let Some(a) = self.a.find(nb.name()) {
                self.pair(a, b, MatchedBy::Name);
            }
        }
    }

    /// The inputs of `b` in `old`'s ids: `None` when a producer is not matched yet.
    fn mapped_inputs(&self, nb: &NodeData) -> Option<Vec<Option<(NodeId, i32)>>> {
        let mut out = Vec::with_capacity(nb.op().inputs().len());
        for i in 0..nb.op().inputs().len() {
            match nb.in_data_peer(i) {
                None => out.push(None),
                Some(p) => out.push(Some((*self.b2a.get(&p.node)?, p.index))),
            }
        }
        Some(out)
    }

    fn inputs_of(na: &NodeData) -> Vec<Option<(NodeId, i32)>> {
        (0..na.op().inputs().len())
            .map(|i| na.in_data_peer(i).map(|p| (p.node, p.index)))
            .collect()
    }

    fn better(&self, best: Option<NodeId>, cand: NodeId) -> Option<NodeId> {
        let pos = |id: &NodeId| self.a_pos.get(id).copied().unwrap_or(usize::MAX);
        match best {
            Some(b) if pos(&b) <= pos(&cand) => Some(b),
            _ => Some(cand),
        }
    }

    /// The unmatched node of `old` fed exactly as `b` is (through matched producers).
    fn forward(&self, b: NodeId) -> Option<NodeId> {
        let nb = node(self.b, b)?;
        let ins = self.mapped_inputs(nb)?;
        let (i0, (src, idx)) = ins
            .iter()
            .enumerate()
            .find_map(|(i, s)| s.map(|s| (i, s)))?;
        let src_node = node(self.a, src)?;
        let mut best = None;
        for c in src_node.out_data_peers(usize::try_from(idx).ok()?) {
            if c.index as usize != i0 || self.a2b.contains_key(&c.node) {
                continue;
            }
            let Some(na) = node(self.a, c.node) else {
                continue;
            };
            if na.op_type() != nb.op_type() || Self::inputs_of(na) != ins {
                continue;
            }
            best = self.better(best, c.node);
        }
        best
    }

    /// The unmatched node of `old` that feeds the matched partners of `b`'s consumers at the
    /// same ports.
    fn backward(&self, b: NodeId) -> Option<NodeId> {
        let nb = node(self.b, b)?;
        let outs = nb.op().outputs().len();
        let mut cand = None;
        'find: for o in 0..outs {
            for c in nb.out_data_peers(o) {
                if let Some(&ac) = self.b2a.get(&c.node) {
                    let p = node(self.a, ac)?.in_data_peer(c.index as usize)?;
                    if p.index as usize != o {
                        return None;
                    }
                    cand = Some(p.node);
                    break 'find;
                }
            }
        }
        let cand = cand?;
        if self.a2b.contains_key(&cand) {
            return None;
        }
        let na = node(self.a, cand)?;
        if na.op_type() != nb.op_type()
            || na.op().outputs().len() != outs
            || na.op().inputs().len() != nb.op().inputs().len()
        {
            return None;
        }
        // Every matched consumer of `b` must be a consumer of `cand` at the same ports.
        for o in 0..outs {
            for c in nb.out_data_peers(o) {
                if let Some(&ac) = self.b2a.get(&c.node) {
                    let p = node(self.a, ac)?.in_data_peer(c.index as usize)?;
                    if p.node != cand || p.index as usize != o {
                        return None;
                    }
                }
            }
        }
        Some(cand)
    }

    fn neighbours(&self, b: NodeId) -> Vec<NodeId> {
        let Some(nb) = node(self.b, b) else {
            return Vec::new();
        };
        let mut out: Vec<NodeId> = nb.in_data_peers().flatten().map(|p| p.node).collect();
        for o in 0..nb.op().outputs().len() {
            out.extend(nb.out_data_peers(o).iter().map(|c| c.node));
        }
        out
    }

    fn by_structure(&mut self) {
        let mut queue: VecDeque<NodeId> = self
            .b
            .node_ids()
            .filter(|b| !self.b2a.contains_key(b))
            .collect();
        let mut queued: FxHashSet<NodeId> = queue.iter().copied().collect();
        while let Some(b) = queue.pop_front() {
            queued.remove(&b);
            if self.b2a.contains_key(&b) {
                continue;
            }
            let Some(a) = self.forward(b).or_else(|| self.backward(b)) else {
                continue;
            };
            self.pair(a, b, MatchedBy::Structure);
            for n in self.neighbours(b) {
                if !self.b2a.contains_key(&n) && queued.insert(n) {
                    queue.push_back(n);
                }
            }
        }
    }
}

/// `value` as the text dump shows it.
fn value_text(v: &AttrValue) -> String {
    crate::dump::value_text(v)
}

fn source_name(g: &Graph, id: NodeId) -> String {
    node(g, id)
        .map(|n| n.name().to_string())
        .unwrap_or_default()
}

/// The name in `new` of a node of `old` (its own name when unmatched).
fn a_name(m: &Matcher<'_>, a: NodeId) -> String {
    match m.a2b.get(&a) {
        Some(&b) => source_name(m.b, b),
        None => source_name(m.a, a),
    }
}

fn compare_edges(m: &Matcher<'_>, na: &NodeData, nb: &NodeData, d: &mut GraphDiff) {
    let n = na.op().inputs().len().max(nb.op().inputs().len());
    for i in 0..n {
        let old_src = if i < na.op().inputs().len() {
            na.in_data_peer(i)
        } else {
            None
        };
        let new_src = if i < nb.op().inputs().len() {
            nb.in_data_peer(i)
        } else {
            None
        };
        let same = match (old_src, new_src) {
            (None, None) => true,
            (Some(o), Some(p)) => m.a2b.get(&o.node) == Some(&p.node) && o.index == p.index,
            _ => false,
        };
        if !same {
            d.data_edges.push(DataRelink {
                node: nb.name().to_string(),
                index: i,
                old: old_src.map(|o| (a_name(m, o.node), o.index)),
                new: new_src.map(|p| (source_name(m.b, p.node), p.index)),
            });
        }
    }
    let old_ctrl: Vec<String> = na
        .in_control_peers()
        .iter()
        .map(|p| a_name(m, p.node))
        .collect();
    let new_ctrl: Vec<String> = nb
        .in_control_peers()
        .iter()
        .map(|p| source_name(m.b, p.node))
        .collect();
    let old_set: FxHashSet<&String> = old_ctrl.iter().collect();
    let new_set: FxHashSet<&String> = new_ctrl.iter().collect();
    let mut changes: Vec<ControlChange> = old_ctrl
        .iter()
        .filter(|s| !new_set.contains(s))
        .map(|s| (s, false))
        .chain(
            new_ctrl
                .iter()
                .filter(|s| !old_set.contains(s))
                .map(|s| (s, true)),
        )
        .map(|(s, added)| ControlChange {
            src: s.clone(),
            dst: nb.name().to_string(),
            added,
        })
        .collect();
    changes.sort_by(|x, y| (&x.src, x.added).cmp(&(&y.src, y.added)));
    changes.dedup();
    d.control_edges.extend(changes);
}

fn compare_op(na: &NodeData, nb: &NodeData, d: &mut GraphDiff) {
    let name = nb.name();
    if na.op_type() != nb.op_type() {
        d.retyped.push(Retyped {
            node: name.to_string(),
            old: na.op_type().to_string(),
            new: nb.op_type().to_string(),
        });
    }
    let (oa, ob) = (&na.op().attrs, &nb.op().attrs);
    let mut keys: Vec<&str> = oa.keys().collect();
    keys.extend(ob.keys().filter(|k| oa.get(k).is_none()));
    keys.sort_unstable();
    for key in keys {
        let (va, vb) = (oa.get(key), ob.get(key));
        if va != vb {
            d.attrs.push(AttrChange {
                node: name.to_string(),
                key: key.to_string(),
                old: va.map(value_text),
                new: vb.map(value_text),
            });
        }
    }
    for side in [Side::Input, Side::Output] {
        let (pa, pb) = (na.op().ports(side), nb.op().ports(side));
        for i in 0..pa.len().max(pb.len()) {
            let old = pa.get(i).map(|p| DescInfo::of(&p.desc));
            let new = pb.get(i).map(|p| DescInfo::of(&p.desc));
            if old != new {
                d.descs.push(DescChange {
                    node: name.to_string(),
                    side,
                    index: i,
                    old,
                    new,
                });
            }
        }
    }
}

fn outputs_of(g: &Graph) -> Vec<String> {
    g.outputs()
        .iter()
        .map(|&(id, i)| format!("{}:{i}", source_name(g, id)))
        .collect()
}

/// What changed from `old` to `new` (see the module documentation for the matching rule).
pub fn diff(old: &Graph, new: &Graph) -> GraphDiff {
    let mut m = Matcher::new(old, new);
    m.by_name();
    m.by_structure();
    let mut d = GraphDiff {
        old_graph: old.name().to_string(),
        new_graph: new.name().to_string(),
        old_nodes: old.len(),
        new_nodes: new.len(),
        ..GraphDiff::default()
    };
    for b in new.node_ids() {
        let Some(nb) = node(new, b) else { continue };
        let Some(&a) = m.b2a.get(&b) else {
            d.added.push(NodeInfo {
                name: nb.name().to_string(),
                op_type: nb.op_type().to_string(),
            });
            continue;
        };
        let Some(na) = node(old, a) else { continue };
        d.kept.push(NodeMatch {
            old: na.name().to_string(),
            new: nb.name().to_string(),
            by: m.by.get(&b).copied().unwrap_or(MatchedBy::Name),
        });
        compare_op(na, nb, &mut d);
        compare_edges(&m, na, nb, &mut d);
    }
    for a in old.node_ids() {
        if m.a2b.contains_key(&a) {
            continue;
        }
        if let Some(na) = node(old, a) {
            d.removed.push(NodeInfo {
                name: na.name().to_string(),
                op_type: na.op_type().to_string(),
            });
        }
    }
    let (oo, no) = (outputs_of(old), outputs_of(new));
    let mapped: Vec<String> = old
        .outputs()
        .iter()
        .map(|&(id, i)| format!("{}:{i}", a_name(&m, id)))
        .collect();
    if mapped != no {
        d.outputs = Some((oo, no));
    }
    d
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
