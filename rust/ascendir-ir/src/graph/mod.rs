//! The compute graph: nodes in a generational arena, anchors stored inline in each node record,
//! node order kept as a separate doubly linked list, and a name index.
//!
//! This module holds the records, node creation, naming and removal; `order` the node order
//! list, `links` the anchors' links, `io` the graph's inputs, outputs and NetOutput, and
//! `invariants` the structural check.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use slotmap::{new_key_type, SlotMap};
use smallvec::SmallVec;
use thin_vec::ThinVec;

use crate::anchor::{Anchor, InAnchor, OutAnchor};
use crate::attr::AttrMap;
use crate::error::{IrError, IrResult};
use crate::intern::Interner;
use crate::op_desc::{OpDesc, Side, Sym};

mod index;
mod invariants;
mod io;
mod links;
mod order;
#[cfg(test)]
mod tests;

pub use index::InsertPoint;
pub use order::NodeIter;

new_key_type! {
    /// A node's generational id: a removed node's id never resolves again.
    pub struct NodeId;
}

impl NodeId {
    /// The arena slot of this id: dense, numbered from 1, reused after a removal (two live
    /// nodes never share one), so per-node side tables can be vectors indexed by it. slotmap's
    /// `KeyData::as_ffi` packs the slot index into the low 32 bits (the version in the high
    /// 32), which is all this reads.
    #[inline]
    pub fn slot(self) -> usize {
        use slotmap::Key;
        (self.data().as_ffi() & 0xffff_ffff) as usize
    }
}

/// Op types GE registers as graph inputs when they are added.
pub const DATA_LIKE_TYPES: [&str; 4] = ["Data", "RefData", "AippData", "AnnData"];

/// Peers of one out-data anchor, in link order.
pub type PeerList = SmallVec<[InAnchor; 2]>;

/// One node record: its op, its anchors' peers and its place in the node order.
#[derive(Clone, Debug)]
pub struct NodeData {
    pub(crate) op: OpDesc,
    pub(crate) in_data: SmallVec<[Option<OutAnchor>; 2]>,
    pub(crate) out_data: SmallVec<[PeerList; 1]>,
    // Control links are rare: a thin vector keeps an empty list at one word.
    pub(crate) in_ctrl: ThinVec<OutAnchor>,
    pub(crate) out_ctrl: ThinVec<InAnchor>,
    pub(crate) prev: Option<NodeId>,
    pub(crate) next: Option<NodeId>,
}

impl NodeData {
    fn new(op: OpDesc) -> Self {
        let in_data = SmallVec::from_elem(None, op.num_inputs());
        let out_data = SmallVec::from_elem(PeerList::new(), op.num_outputs());
        NodeData {
            op,
            in_data,
            out_data,
            in_ctrl: ThinVec::new(),
            out_ctrl: ThinVec::new(),
            prev: None,
            next: None,
        }
    }

    /// The node's operator descriptor.
    pub fn op(&self) -> &OpDesc {
        &self.op
    }

    /// The node name.
    pub fn name(&self) -> &str {
        self.op.name()
    }

    /// The op type.
    pub fn op_type(&self) -> &str {
        self.op.op_type()
    }

    /// Number of in-data anchors.
    pub fn num_in_data(&self) -> usize {
        self.in_data.len()
    }

    /// Number of out-data anchors.
    pub fn num_out_data(&self) -> usize {
        self.out_data.len()
    }

    /// The producer of in-data anchor `index` (an out-data anchor, or an out-control anchor for a
    /// control→data link).
    pub fn in_data_peer(&self, index: usize) -> Option<OutAnchor> {
        self.in_data.get(index).copied().flatten()
    }

    /// The consumers of out-data anchor `index`, in link order.
    pub fn out_data_peers(&self, index: usize) -> &[InAnchor] {
        self.out_data.get(index).map_or(&[], |p| p.as_slice())
    }

    /// The peers of the in-control anchor (out-control or out-data anchors), in link order.
    pub fn in_control_peers(&self) -> &[OutAnchor] {
        &self.in_ctrl
    }

    /// The peers of the out-control anchor (in-control or in-data anchors), in link order.
    pub fn out_control_peers(&self) -> &[InAnchor] {
        &self.out_ctrl
    }

    /// All producers of in-data anchors, in index order.
    pub fn in_data_peers(&self) -> impl Iterator<Item = Option<OutAnchor>> + '_ {
        self.in_data.iter().copied()
    }
}

/// Identity of the node that owns a subgraph, recorded on the subgraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParentLink {
    /// Name of the graph holding the parent node.
    pub graph: String,
    /// The parent node, in that graph.
    pub node: NodeId,
}

/// A compute graph (GE `ComputeGraph`).
#[derive(Clone, Debug)]
pub struct Graph {
    name: String,
    nodes: SlotMap<NodeId, NodeData>,
    head: Option<NodeId>,
    tail: Option<NodeId>,
    names: HashTable<NodeId>,
    inputs: Vec<NodeId>,
    outputs: Vec<(NodeId, i32)>,
    targets: Vec<NodeId>,
    /// Graph attributes.
    pub attrs: AttrMap,
    strings: Interner,
    /// The node owning this graph when it is a subgraph.
    pub parent: Option<ParentLink>,
    /// Subgraphs registered on this (root) graph, in registration order. GE registers every
    /// subgraph of any depth on the root.
    pub subgraphs: Vec<Graph>,
    /// A process-wide unique number, given when the graph is made and again each time it is
    /// registered as a subgraph: a handle that remembers it can tell a re-registered graph of
    /// the same name from the one it was made for.
    uid: u64,
    /// The type index, order keys and insertion point (see `index`).
    lookup: index::Lookup,
}

/// The next graph uid (never 0).
pub(crate) fn next_graph_uid() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn name_hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

impl Graph {
    /// An empty graph.
    pub fn new(name: &str) -> Self {
        Graph {
            name: name.to_string(),
            nodes: SlotMap::with_key(),
            head: None,
            tail: None,
            names: HashTable::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            targets: Vec::new(),
            attrs: AttrMap::new(),
            strings: Interner::default(),
            parent: None,
            subgraphs: Vec::new(),
            uid: next_graph_uid(),
            lookup: index::Lookup::default(),
        }
    }

    /// The graph's uid (see the field): unique among the graphs of the process, renewed when
    /// the graph is registered as a subgraph.
    pub fn uid(&self) -> u64 {
        self.uid
    }

    /// Give the graph a new uid: every handle made for it before then goes stale.
    pub fn renew_uid(&mut self) {
        self.uid = next_graph_uid();
    }

    /// An empty graph with room for `nodes` nodes.
    pub fn with_capacity(name: &str, nodes: usize) -> Self {
        let mut g = Graph::new(name);
        g.nodes.reserve(nodes);
        g.names.reserve(nodes, |_| 0);
        g
    }

    /// The graph name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Rename the graph.
    pub fn set_name(&mut self, name: &str) {
        self.name = name.to_string();
    }

    /// Number of (direct) nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `id` resolves to a live node of this graph.
    pub fn contains(&self, id: NodeId) -> bool {
        self.nodes.contains_key(id)
    }

    /// The node record of `id`, or `StaleHandle`.
    pub fn node(&self, id: NodeId) -> IrResult<&NodeData> {
        self.nodes.get(id).ok_or_else(|| IrError::StaleHandle {
            node: id,
            graph: self.name.clone(),
        })
    }

    fn node_mut(&mut self, id: NodeId) -> IrResult<&mut NodeData> {
        let graph = &self.name;
        self.nodes.get_mut(id).ok_or_else(|| IrError::StaleHandle {
            node: id,
            graph: graph.clone(),
        })
    }

    /// The op of `id`.
    pub fn op(&self, id: NodeId) -> IrResult<&OpDesc> {
        Ok(&self.node(id)?.op)
    }

    /// Change the op of `id` through `edit`. Ports appended or removed at the end are reflected
    /// in the anchors afterwards (removed anchors are unlinked first); the name must stay (use
    /// `rename_node`). To insert ports in the middle use `insert_ports`.
    pub fn modify_op<R>(&mut self, id: NodeId, edit: impl FnOnce(&mut OpDesc) -> R) -> IrResult<R> {
        let node = self.node_mut(id)?;
        let name = node.op.name.clone();
        let ty = node.op.ty.clone();
        let result = edit(&mut node.op);
        node.op.name = name;
        let retyped = node.op.ty.as_str() != ty.as_str();
        if retyped {
            let mut new_ty = self.nodes[id].op.ty.clone();
            self.strings.intern_in_place(&mut new_ty);
            self.nodes[id].op.ty = new_ty;
            self.index_retyped(id, Some(ty.as_str()));
        }
        self.sync_anchor_counts(id);
        Ok(result)
    }

    /// Grow or shrink the anchor lists to the op's port counts.
    fn sync_anchor_counts(&mut self, id: NodeId) {
        let (n_in, n_out, have_in, have_out) = {
            let n = &self.nodes[id];
            (
                n.op.num_inputs(),
                n.op.num_outputs(),
                n.in_data.len(),
                n.out_data.len(),
            )
        };
        for index in n_in..have_in {
            let _ = self.unlink_all(Anchor::In(InAnchor::data(id, index)));
        }
        for index in n_out..have_out {
            let _ = self.unlink_all(Anchor::Out(OutAnchor::data(id, index)));
        }
        let node = &mut self.nodes[id];
        node.in_data.resize(n_in, None);
        node.out_data.resize(n_out, PeerList::new());
    }

    /// Find a direct node by name.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        let nodes = &self.nodes;
        self.names
            .find(name_hash(name), |&id| nodes[id].op.name() == name)
            .copied()
    }

    /// Intern a string in this graph's table.
    pub fn intern(&mut self, s: &str) -> Sym {
        self.strings.intern(s)
    }

    /// Make the strings of `table` this graph's shared copies where it has none yet: a builder
    /// that interned its ops' types and port names ahead (a decoder) then adds them without a
    /// copy being swapped for another.
    pub fn share_strings(&mut self, table: &Interner) {
        for sym in table.iter() {
            self.strings.intern_sym(sym);
        }
    }

    fn intern_op(&mut self, op: &mut OpDesc) {
        self.strings.intern_in_place(&mut op.ty);
        for side in [Side::Input, Side::Output] {
            for port in op.ports_mut(side).iter_mut() {
                self.strings.intern_in_place(&mut port.name);
            }
        }
    }

    /// Add a node at the end of the order (`AddNode`). The name must be new; `op.id` becomes the
    /// node count before the add; data-like types are registered as graph inputs.
    ///
    /// The node goes to the insertion point (see [`Graph::set_insertion_point`]): the end of
    /// the order unless one is set; a point whose node has left the graph fails with
    /// `StaleHandle` before anything is added.
    pub fn add_node(&mut self, op: OpDesc) -> IrResult<NodeId> {
        let prev = self.placement()?;
        let id = self.create_node(op, None)?;
        self.link_order_after(id, prev);
        self.placed(id);
        Ok(id)
    }

    /// Add a node at the end of the order with input `i` fed by `sources[i]` (`None`: left
    /// unlinked); all or nothing — when a link is refused the node is removed again and the
    /// graph is as before.
    pub fn add_node_linked(
        &mut self,
        op: OpDesc,
        sources: &[Option<OutAnchor>],
    ) -> IrResult<NodeId> {
        let id = self.add_node(op)?;
        for (i, src) in sources.iter().enumerate() {
            if let Some(s) = src {
                if let Err(e) = self.link(*s, InAnchor::data(id, i)) {
                    self.erase_node(id)?;
                    return Err(e);
                }
            }
        }
        Ok(id)
    }

    /// Add a node keeping the id already on its op (deserialization).
    pub fn add_node_keep_id(&mut self, op: OpDesc) -> IrResult<NodeId> {
        let keep = op.id;
        let id = self.create_node(op, Some(keep))?;
        self.link_order_after(id, self.tail);
        Ok(id)
    }

    /// `AddNodeFront`: at position 0, or position 1 when the first node is a `Data`.
    pub fn add_node_front(&mut self, op: OpDesc) -> IrResult<NodeId> {
        let id = self.create_node(op, None)?;
        match self.head {
            Some(h) if self.nodes[h].op.op_type() == "Data" => self.link_order_after(id, Some(h)),
            _ => self.link_order_after(id, None),
        }
        Ok(id)
    }

    /// `InsertNode`: immediately after `anchor` in order, with `anchor`'s id.
    pub fn insert_node_after(&mut self, anchor: NodeId, op: OpDesc) -> IrResult<NodeId> {
        let anchor_id = self.node(anchor)?.op.id;
        let id = self.create_node(op, Some(anchor_id))?;
        self.link_order_after(id, Some(anchor));
        Ok(id)
    }

    /// `InsertNodeBefore`: immediately before `anchor` in order, with `anchor`'s id.
    pub fn insert_node_before(&mut self, anchor: NodeId, op: OpDesc) -> IrResult<NodeId> {
        let (anchor_id, prev) = {
            let n = self.node(anchor)?;
            (n.op.id, n.prev)
        };
        let id = self.create_node(op, Some(anchor_id))?;
        self.link_order_after(id, prev);
        Ok(id)
    }

    fn create_node(&mut self, mut op: OpDesc, id: Option<i64>) -> IrResult<NodeId> {
        if op.name().is_empty() {
            return Err(IrError::InvalidArgument(format!(
                "cannot add a node of type '{}' without a name to graph '{}'",
                op.op_type(),
                self.name
            )));
        }
        let hash = name_hash(op.name());
        let nodes = &self.nodes;
        if self
            .names
            .find(hash, |&k| nodes[k].op.name() == op.name())
            .is_some()
        {
            return Err(IrError::Duplicate(format!(
                "graph '{}' already has a node named '{}'",
                self.name,
                op.name()
            )));
        }
        op.id = id.unwrap_or(self.nodes.len() as i64);
        self.intern_op(&mut op);
        let data_like = DATA_LIKE_TYPES.contains(&op.op_type());
        let id = self.nodes.insert(NodeData::new(op));
        let nodes = &self.nodes;
        self.names
            .insert_unique(hash, id, |&k| name_hash(nodes[k].op.name()));
        if data_like {
            self.inputs.push(id);
        }
        self.index_retyped(id, None);
        Ok(id)
    }
    /// Rename a node, keeping the name index (the new name must be free).
    pub fn rename_node(&mut self, id: NodeId, name: &str) -> IrResult<()> {
        let old = self.node(id)?.op.name().to_string();
        if old == name {
            return Ok(());
        }
        if name.is_empty() {
            return Err(IrError::InvalidArgument(format!(
                "node '{old}' cannot get an empty name"
            )));
        }
        if self.find(name).is_some() {
            return Err(IrError::Duplicate(format!(
                "graph '{}' already has a node named '{name}'",
                self.name
            )));
        }
        self.remove_name(id, &old);
        self.nodes[id].op.set_name(name);
        let nodes = &self.nodes;
        self.names
            .insert_unique(name_hash(name), id, |&k| name_hash(nodes[k].op.name()));
        Ok(())
    }

    fn remove_name(&mut self, id: NodeId, name: &str) {
        if let Ok(entry) = self.names.find_entry(name_hash(name), |&k| k == id) {
            entry.remove();
        }
    }

    /// Remove a node without relinking anything: every link of its anchors is removed, then the
    /// node leaves the order, the name index and the input/output lists (GE
    /// `RemoveNodeWithoutRelink`). Its id never resolves again.
    pub fn erase_node(&mut self, id: NodeId) -> IrResult<OpDesc> {
        self.node(id)?;
        self.index_removed(id);
        self.unlink_node(id);
        self.unlink_order(id);
        self.inputs.retain(|&n| n != id);
        self.outputs.retain(|&(n, _)| n != id);
        self.targets.retain(|&n| n != id);
        let op = self.nodes.remove(id).map(|n| n.op).expect("checked above");
        // The name index holds ids by name hash: the removed op's name finds the entry.
        self.remove_name(id, op.name());
        Ok(op)
    }
}
impl Graph {
    /// A registered subgraph (of any depth) by instance name. Only a root graph holds them.
    pub fn subgraph(&self, name: &str) -> Option<&Graph> {
        self.subgraphs.iter().find(|g| g.name == name)
    }

    /// Mutable access to a registered subgraph by name.
    pub fn subgraph_mut(&mut self, name: &str) -> Option<&mut Graph> {
        self.subgraphs.iter_mut().find(|g| g.name == name)
    }

    /// Number of interned strings (for memory accounting).
    pub fn interned_strings(&self) -> usize {
        self.strings.len()
    }
}

/// Crate-internal raw access for the algorithm modules (sorting, edits, subgraphs, verifier).
impl Graph {
    /// The node arena.
    pub(crate) fn arena(&self) -> &SlotMap<NodeId, NodeData> {
        &self.nodes
    }

    /// The node arena, mutably (callers keep the links two-sided).
    pub(crate) fn arena_mut(&mut self) -> &mut SlotMap<NodeId, NodeData> {
        &mut self.nodes
    }
}
