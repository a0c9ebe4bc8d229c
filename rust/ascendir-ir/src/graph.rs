//! The compute graph: nodes in a generational arena, anchors stored inline in each node record,
//! node order kept as a separate doubly linked list, and a name index.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use slotmap::{new_key_type, SlotMap};
use smallvec::SmallVec;
use thin_vec::ThinVec;

use crate::anchor::{Anchor, InAnchor, OutAnchor, CONTROL};
use crate::attr::{AttrMap, AttrValue};
use crate::error::{IrError, IrResult};
use crate::intern::Interner;
use crate::op_desc::{OpDesc, Side, Sym};
use crate::tensor::TensorDesc;

new_key_type! {
    /// A node's generational id: a removed node's id never resolves again.
    pub struct NodeId;
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
        self.nodes.get(id).ok_or_else(|| {
            IrError::StaleHandle(format!("node {id:?} is not in graph '{}'", self.name))
        })
    }

    fn node_mut(&mut self, id: NodeId) -> IrResult<&mut NodeData> {
        let graph = &self.name;
        self.nodes
            .get_mut(id)
            .ok_or_else(|| IrError::StaleHandle(format!("node {id:?} is not in graph '{graph}'")))
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
        let result = edit(&mut node.op);
        node.op.name = name;
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

    /// Node ids in graph order.
    pub fn node_ids(&self) -> NodeIter<'_> {
        NodeIter {
            graph: self,
            cursor: self.head,
        }
    }

    /// The first node in order.
    pub fn first(&self) -> Option<NodeId> {
        self.head
    }

    /// The node after `id` in order.
    pub fn next_of(&self, id: NodeId) -> Option<NodeId> {
        self.nodes.get(id).and_then(|n| n.next)
    }

    /// The node before `id` in order.
    pub fn prev_of(&self, id: NodeId) -> Option<NodeId> {
        self.nodes.get(id).and_then(|n| n.prev)
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
    pub fn add_node(&mut self, op: OpDesc) -> IrResult<NodeId> {
        let id = self.create_node(op, None)?;
        self.link_order_after(id, self.tail);
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
        Ok(id)
    }

    /// Put `id` (not yet in the order) after `prev` (`None` = at the front).
    fn link_order_after(&mut self, id: NodeId, prev: Option<NodeId>) {
        let next = match prev {
            Some(p) => self.nodes[p].next,
            None => self.head,
        };
        {
            let n = &mut self.nodes[id];
            n.prev = prev;
            n.next = next;
        }
        match prev {
            Some(p) => self.nodes[p].next = Some(id),
            None => self.head = Some(id),
        }
        match next {
            Some(n) => self.nodes[n].prev = Some(id),
            None => self.tail = Some(id),
        }
    }

    fn unlink_order(&mut self, id: NodeId) {
        let (prev, next) = {
            let n = &self.nodes[id];
            (n.prev, n.next)
        };
        match prev {
            Some(p) => self.nodes[p].next = next,
            None => self.head = next,
        }
        match next {
            Some(n) => self.nodes[n].prev = prev,
            None => self.tail = prev,
        }
        let n = &mut self.nodes[id];
        n.prev = None;
        n.next = None;
    }

    /// Move `id` so that it comes right after `prev` in order (`None` = first).
    pub fn move_after(&mut self, id: NodeId, prev: Option<NodeId>) -> IrResult<()> {
        self.node(id)?;
        if let Some(p) = prev {
            self.node(p)?;
            if p == id {
                return Err(IrError::InvalidArgument(format!(
                    "cannot move node '{}' after itself",
                    self.nodes[id].op.name()
                )));
            }
        }
        self.unlink_order(id);
        self.link_order_after(id, prev);
        Ok(())
    }

    /// Replace the node order by `order`, which must be a permutation of the live nodes.
    pub fn set_order(&mut self, order: &[NodeId]) -> IrResult<()> {
        if order.len() != self.nodes.len() {
            return Err(IrError::InvalidArgument(format!(
                "order of graph '{}' lists {} nodes, the graph has {}",
                self.name,
                order.len(),
                self.nodes.len()
            )));
        }
        let mut seen = slotmap::SecondaryMap::with_capacity(order.len());
        for &id in order {
            self.node(id)?;
            if seen.insert(id, ()).is_some() {
                return Err(IrError::InvalidArgument(format!(
                    "order of graph '{}' lists node '{}' twice",
                    self.name,
                    self.nodes[id].op.name()
                )));
            }
        }
        let mut prev: Option<NodeId> = None;
        for &id in order {
            let n = &mut self.nodes[id];
            n.prev = prev;
            n.next = None;
            match prev {
                Some(p) => self.nodes[p].next = Some(id),
                None => self.head = Some(id),
            }
            prev = Some(id);
        }
        self.tail = prev;
        if order.is_empty() {
            self.head = None;
        }
        Ok(())
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
        self.unlink_node(id);
        self.unlink_order(id);
        let name = self.nodes[id].op.name().to_string();
        self.remove_name(id, &name);
        self.inputs.retain(|&n| n != id);
        self.outputs.retain(|&(n, _)| n != id);
        self.targets.retain(|&n| n != id);
        Ok(self.nodes.remove(id).map(|n| n.op).expect("checked above"))
    }

    /// Replace graph output `old` (producer, index) by `new` wherever it is listed (a pass that
    /// moves a value to another node keeps the graph's output list pointing at it).
    pub fn replace_output(&mut self, old: (NodeId, i32), new: (NodeId, i32)) -> IrResult<()> {
        self.check_out(OutAnchor {
            node: new.0,
            index: new.1,
        })?;
        for o in self.outputs.iter_mut() {
            if *o == old {
                *o = new;
            }
        }
        Ok(())
    }

    /// Remove every link of every anchor of `id`.
    pub fn unlink_node(&mut self, id: NodeId) {
        let (n_in, n_out) = {
            let n = &self.nodes[id];
            (n.in_data.len(), n.out_data.len())
        };
        for i in 0..n_in {
            let _ = self.unlink_all(Anchor::In(InAnchor::data(id, i)));
        }
        for i in 0..n_out {
            let _ = self.unlink_all(Anchor::Out(OutAnchor::data(id, i)));
        }
        let _ = self.unlink_all(Anchor::In(InAnchor::control(id)));
        let _ = self.unlink_all(Anchor::Out(OutAnchor::control(id)));
    }

    fn check_out(&self, a: OutAnchor) -> IrResult<()> {
        let n = self.node(a.node)?;
        if a.index == CONTROL || (a.index >= 0 && (a.index as usize) < n.out_data.len()) {
            Ok(())
        } else {
            Err(IrError::NotFound(format!(
                "node '{}' has no output anchor {} (it has {} outputs)",
                n.op.name(),
                a.index,
                n.out_data.len()
            )))
        }
    }

    fn check_in(&self, a: InAnchor) -> IrResult<()> {
        let n = self.node(a.node)?;
        if a.index == CONTROL || (a.index >= 0 && (a.index as usize) < n.in_data.len()) {
            Ok(())
        } else {
            Err(IrError::NotFound(format!(
                "node '{}' has no input anchor {} (it has {} inputs)",
                n.op.name(),
                a.index,
                n.in_data.len()
            )))
        }
    }

    /// Check that an anchor exists (its node is live and the index in range).
    pub fn check_anchor(&self, a: Anchor) -> IrResult<()> {
        match a {
            Anchor::Out(o) => self.check_out(o),
            Anchor::In(i) => self.check_in(i),
        }
    }

    /// A readable anchor name for messages: `'conv1' input 2`.
    pub fn describe(&self, a: Anchor) -> String {
        let name = self
            .nodes
            .get(a.node())
            .map_or("<removed>".to_string(), |n| n.op.name().to_string());
        match a {
            Anchor::Out(o) if o.is_control() => format!("'{name}' out-control"),
            Anchor::Out(o) => format!("'{name}' output {}", o.index),
            Anchor::In(i) if i.is_control() => format!("'{name}' in-control"),
            Anchor::In(i) => format!("'{name}' input {}", i.index),
        }
    }

    /// The producer linked to an in-data anchor (any kind of peer).
    pub fn in_peer(&self, a: InAnchor) -> Option<OutAnchor> {
        if a.is_control() {
            return None;
        }
        self.nodes.get(a.node)?.in_data_peer(a.index as usize)
    }

    /// Whether the in-data anchor `a` has a peer.
    fn in_data_taken(&self, a: InAnchor) -> bool {
        !a.is_control() && self.in_peer(a).is_some()
    }

    /// `LinkTo`: link `src` to `dst`. An in-data anchor takes at most one peer (a second link
    /// fails and changes nothing); out-data fans out; control links are not deduplicated (GE).
    pub fn link(&mut self, src: OutAnchor, dst: InAnchor) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(dst)?;
        if let Some(peer) = self.in_peer(dst) {
            return Err(IrError::Link(format!(
                "{} already has a peer ({}); unlink it first",
                self.describe(Anchor::In(dst)),
                self.describe(Anchor::Out(peer))
            )));
        }
        self.push_out_peer(src, dst);
        self.push_in_peer(dst, src);
        Ok(())
    }

    fn push_out_peer(&mut self, src: OutAnchor, dst: InAnchor) {
        let n = &mut self.nodes[src.node];
        if src.is_control() {
            n.out_ctrl.push(dst);
        } else {
            n.out_data[src.index as usize].push(dst);
        }
    }

    fn push_in_peer(&mut self, dst: InAnchor, src: OutAnchor) {
        let n = &mut self.nodes[dst.node];
        if dst.is_control() {
            n.in_ctrl.push(src);
        } else {
            n.in_data[dst.index as usize] = Some(src);
        }
    }

    /// Position of `dst` in `src`'s peer list.
    fn out_slot(&self, src: OutAnchor, dst: InAnchor) -> Option<usize> {
        self.out_peers(src).iter().position(|&p| p == dst)
    }

    /// Position of `src` in `dst`'s peer list (0 for a linked in-data anchor).
    fn in_slot(&self, dst: InAnchor, src: OutAnchor) -> Option<usize> {
        if dst.is_control() {
            self.nodes[dst.node].in_ctrl.iter().position(|&p| p == src)
        } else {
            (self.in_peer(dst) == Some(src)).then_some(0)
        }
    }

    /// Peers of an output-side anchor, in link order.
    pub fn out_peers(&self, a: OutAnchor) -> &[InAnchor] {
        match self.nodes.get(a.node) {
            Some(n) if a.is_control() => &n.out_ctrl,
            Some(n) => n.out_data_peers(a.index as usize),
            None => &[],
        }
    }

    /// Peers of an input-side anchor, in link order.
    pub fn in_peers(&self, a: InAnchor) -> SmallVec<[OutAnchor; 2]> {
        match self.nodes.get(a.node) {
            Some(n) if a.is_control() => n.in_ctrl.iter().copied().collect(),
            Some(n) => n.in_data_peer(a.index as usize).into_iter().collect(),
            None => SmallVec::new(),
        }
    }

    /// Whether `src` and `dst` are linked.
    pub fn is_linked(&self, src: OutAnchor, dst: InAnchor) -> bool {
        self.nodes.contains_key(src.node) && self.out_slot(src, dst).is_some()
    }

    /// `Unlink`: remove one link between `src` and `dst`; fails if they are not linked.
    pub fn unlink(&mut self, src: OutAnchor, dst: InAnchor) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(dst)?;
        let (Some(o), Some(i)) = (self.out_slot(src, dst), self.in_slot(dst, src)) else {
            return Err(IrError::Link(format!(
                "{} is not linked to {}",
                self.describe(Anchor::Out(src)),
                self.describe(Anchor::In(dst))
            )));
        };
        self.remove_out_slot(src, o);
        self.remove_in_slot(dst, i);
        Ok(())
    }

    fn remove_out_slot(&mut self, src: OutAnchor, slot: usize) {
        let n = &mut self.nodes[src.node];
        if src.is_control() {
            n.out_ctrl.remove(slot);
        } else {
            n.out_data[src.index as usize].remove(slot);
        }
    }

    fn remove_in_slot(&mut self, dst: InAnchor, slot: usize) {
        let n = &mut self.nodes[dst.node];
        if dst.is_control() {
            n.in_ctrl.remove(slot);
        } else {
            n.in_data[dst.index as usize] = None;
        }
    }

    /// `UnlinkAll`: remove every link of `a`.
    pub fn unlink_all(&mut self, a: Anchor) -> IrResult<()> {
        self.check_anchor(a)?;
        match a {
            Anchor::Out(src) => {
                let peers: SmallVec<[InAnchor; 4]> = self.out_peers(src).iter().copied().collect();
                for dst in peers {
                    self.unlink(src, dst)?;
                }
            }
            Anchor::In(dst) => {
                for src in self.in_peers(dst) {
                    self.unlink(src, dst)?;
                }
            }
        }
        Ok(())
    }

    /// `ReplacePeer` on an output-side anchor: `new` takes `old`'s slot in `src`'s peer list,
    /// `old` loses `src`, `new` gets `src` appended. `old` and `new` must be the same kind and
    /// `new` must not be a linked in-data anchor.
    pub fn replace_out_peer(
        &mut self,
        src: OutAnchor,
        old: InAnchor,
        new: InAnchor,
    ) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(old)?;
        self.check_in(new)?;
        if old.is_control() != new.is_control() {
            return Err(IrError::Link(format!(
                "cannot replace {} by {}: the anchors are of different kinds",
                self.describe(Anchor::In(old)),
                self.describe(Anchor::In(new))
            )));
        }
        if self.in_data_taken(new) {
            return Err(IrError::Link(format!(
                "{} already has a peer",
                self.describe(Anchor::In(new))
            )));
        }
        let (Some(o), Some(i)) = (self.out_slot(src, old), self.in_slot(old, src)) else {
            return Err(IrError::Link(format!(
                "{} is not linked to {}",
                self.describe(Anchor::Out(src)),
                self.describe(Anchor::In(old))
            )));
        };
        match src.is_control() {
            true => self.nodes[src.node].out_ctrl[o] = new,
            false => self.nodes[src.node].out_data[src.index as usize][o] = new,
        }
        self.remove_in_slot(old, i);
        self.push_in_peer(new, src);
        Ok(())
    }

    /// `ReplacePeer` on an input-side anchor: `new` takes `old`'s slot in `dst`'s peer list.
    pub fn replace_in_peer(
        &mut self,
        dst: InAnchor,
        old: OutAnchor,
        new: OutAnchor,
    ) -> IrResult<()> {
        self.check_in(dst)?;
        self.check_out(old)?;
        self.check_out(new)?;
        if old.is_control() != new.is_control() {
            return Err(IrError::Link(format!(
                "cannot replace {} by {}: the anchors are of different kinds",
                self.describe(Anchor::Out(old)),
                self.describe(Anchor::Out(new))
            )));
        }
        let (Some(i), Some(o)) = (self.in_slot(dst, old), self.out_slot(old, dst)) else {
            return Err(IrError::Link(format!(
                "{} is not linked to {}",
                self.describe(Anchor::In(dst)),
                self.describe(Anchor::Out(old))
            )));
        };
        match dst.is_control() {
            true => self.nodes[dst.node].in_ctrl[i] = new,
            false => self.nodes[dst.node].in_data[dst.index as usize] = Some(new),
        }
        self.remove_out_slot(old, o);
        self.push_out_peer(new, dst);
        Ok(())
    }

    /// `Anchor::Insert` seen from an output-side anchor: splice `first` (an input of the new node)
    /// and `second` (its output) into the link `src → old`: `src → first`, `second → old`, with
    /// `first` taking `old`'s slot in `src`'s list and `second` taking `src`'s slot in `old`'s.
    pub fn insert_between(
        &mut self,
        src: OutAnchor,
        old: InAnchor,
        first: InAnchor,
        second: OutAnchor,
    ) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(old)?;
        self.check_in(first)?;
        self.check_out(second)?;
        if first.is_control() != old.is_control() || second.is_control() != src.is_control() {
            return Err(IrError::Link(format!(
                "cannot insert {} / {} into {} -> {}: anchor kinds differ",
                self.describe(Anchor::In(first)),
                self.describe(Anchor::Out(second)),
                self.describe(Anchor::Out(src)),
                self.describe(Anchor::In(old))
            )));
        }
        if self.in_data_taken(first) {
            return Err(IrError::Link(format!(
                "{} already has a peer",
                self.describe(Anchor::In(first))
            )));
        }
        let (Some(o), Some(i)) = (self.out_slot(src, old), self.in_slot(old, src)) else {
            return Err(IrError::Link(format!(
                "{} is not linked to {}",
                self.describe(Anchor::Out(src)),
                self.describe(Anchor::In(old))
            )));
        };
        match src.is_control() {
            true => self.nodes[src.node].out_ctrl[o] = first,
            false => self.nodes[src.node].out_data[src.index as usize][o] = first,
        }
        match old.is_control() {
            true => self.nodes[old.node].in_ctrl[i] = second,
            false => self.nodes[old.node].in_data[old.index as usize] = Some(second),
        }
        self.push_in_peer(first, src);
        self.push_out_peer(second, old);
        Ok(())
    }

    /// Producers of in-data anchors (data→data links only), in input order.
    pub fn in_data_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let n = self.node(id)?;
        Ok(n.in_data
            .iter()
            .flatten()
            .filter(|p| !p.is_control())
            .map(|p| p.node)
            .collect())
    }

    /// Consumers of out-data anchors (data→data links only), in anchor then link order.
    pub fn out_data_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let n = self.node(id)?;
        Ok(n.out_data
            .iter()
            .flat_map(|peers| peers.iter())
            .filter(|p| !p.is_control())
            .map(|p| p.node)
            .collect())
    }

    /// Every peer of the in-control anchor (a data→control producer counts, as in GE).
    pub fn in_control_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        Ok(self.node(id)?.in_ctrl.iter().map(|p| p.node).collect())
    }

    /// Every peer of the out-control anchor.
    pub fn out_control_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        Ok(self.node(id)?.out_ctrl.iter().map(|p| p.node).collect())
    }

    /// `GetInNodes`: data producers, then owners of peer out-control anchors (duplicates kept).
    pub fn in_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let mut out = self.in_data_nodes(id)?;
        out.extend(
            self.nodes[id]
                .in_ctrl
                .iter()
                .filter(|p| p.is_control())
                .map(|p| p.node),
        );
        Ok(out)
    }

    /// `GetOutNodes`: data consumers, then in-control peers of the out-control anchor.
    pub fn out_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let mut out = self.out_data_nodes(id)?;
        out.extend(
            self.nodes[id]
                .out_ctrl
                .iter()
                .filter(|p| p.is_control())
                .map(|p| p.node),
        );
        Ok(out)
    }

    /// Every successor over any link (data, control, data→control, control→data), in anchor
    /// order; the edges a topological order must respect.
    pub fn successors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let n = &self.nodes[id];
        n.out_data
            .iter()
            .flat_map(|p| p.iter())
            .chain(n.out_ctrl.iter())
            .map(|p| p.node)
    }

    /// Every predecessor over any link.
    pub fn predecessors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let n = &self.nodes[id];
        n.in_data
            .iter()
            .flatten()
            .chain(n.in_ctrl.iter())
            .map(|p| p.node)
    }

    /// Insert ports into a node's op at `index` and shift its anchors so that every existing
    /// link stays on the same port.
    pub fn insert_ports(
        &mut self,
        id: NodeId,
        side: Side,
        index: usize,
        ports: &[(String, Arc<TensorDesc>)],
    ) -> IrResult<()> {
        self.node_mut(id)?.op.insert_ports(side, index, ports)?;
        let shift = ports.len() as i32;
        let first = index as i32;
        // Renumber the peers' references to the moved anchors, then shift our anchor lists.
        match side {
            Side::Input => {
                let moved: Vec<(usize, OutAnchor)> = self.nodes[id]
                    .in_data
                    .iter()
                    .enumerate()
                    .skip(index)
                    .filter_map(|(i, p)| p.map(|p| (i, p)))
                    .collect();
                for (i, src) in moved {
                    let old = InAnchor::data(id, i);
                    let new = InAnchor {
                        node: id,
                        index: i as i32 + shift,
                    };
                    let list: &mut [InAnchor] = if src.is_control() {
                        &mut self.nodes[src.node].out_ctrl
                    } else {
                        &mut self.nodes[src.node].out_data[src.index as usize]
                    };
                    for p in list.iter_mut().filter(|p| **p == old) {
                        *p = new;
                    }
                }
                let n = &mut self.nodes[id];
                for _ in 0..ports.len() {
                    n.in_data.insert(index, None);
                }
            }
            Side::Output => {
                let moved: Vec<(usize, PeerList)> = self.nodes[id]
                    .out_data
                    .iter()
                    .enumerate()
                    .skip(index)
                    .map(|(i, p)| (i, p.clone()))
                    .collect();
                for (i, peers) in moved {
                    for dst in peers {
                        let old = OutAnchor::data(id, i);
                        let new = OutAnchor {
                            node: id,
                            index: i as i32 + shift,
                        };
                        let n = &mut self.nodes[dst.node];
                        if dst.is_control() {
                            for p in n.in_ctrl.iter_mut().filter(|p| **p == old) {
                                *p = new;
                            }
                        } else if n.in_data[dst.index as usize] == Some(old) {
                            n.in_data[dst.index as usize] = Some(new);
                        }
                    }
                }
                let n = &mut self.nodes[id];
                for _ in 0..ports.len() {
                    n.out_data.insert(index, PeerList::new());
                }
            }
        }
        let _ = first;
        Ok(())
    }

    /// The graph's input nodes (data-like nodes in insertion order, plus explicit additions).
    pub fn inputs(&self) -> &[NodeId] {
        &self.inputs
    }

    /// `AddInputNode`: register `id` as an input (deduplicated).
    pub fn add_input_node(&mut self, id: NodeId) -> IrResult<()> {
        self.node(id)?;
        if !self.inputs.contains(&id) {
            self.inputs.push(id);
        }
        Ok(())
    }

    /// Replace the input-node list.
    pub fn set_input_nodes(&mut self, ids: Vec<NodeId>) -> IrResult<()> {
        for &id in &ids {
            self.node(id)?;
        }
        self.inputs = ids;
        Ok(())
    }

    /// The graph's outputs as `(node, output index)`.
    pub fn outputs(&self) -> &[(NodeId, i32)] {
        &self.outputs
    }

    /// The target nodes (control dependencies of the NetOutput).
    pub fn targets(&self) -> &[NodeId] {
        &self.targets
    }

    /// `AddOutputNodeByIndex`: append `(id, index)` unless the same pair is present.
    pub fn add_output_node(&mut self, id: NodeId, index: i32) -> IrResult<()> {
        self.check_out(OutAnchor { node: id, index })?;
        if !self.outputs.contains(&(id, index)) {
            self.outputs.push((id, index));
        }
        Ok(())
    }

    /// The name GE gives the NetOutput node of this graph.
    pub fn net_output_name(&self) -> String {
        if self.parent.is_some() {
            format!("{}_Node_Output", self.name)
        } else {
            "Node_Output".to_string()
        }
    }

    /// The first NetOutput node, if any.
    pub fn net_output(&self) -> Option<NodeId> {
        self.node_ids()
            .find(|&id| self.nodes[id].op.op_type() == "NetOutput")
    }

    /// `SetGraphOutNodesInfo` + `SetGraphTargetNodesInfo` + `CreateOrUpdateNetoutput`: store the
    /// outputs and targets, then create (or rewire) the NetOutput node: data input `i` comes
    /// from output `i` (desc copied from the producer), every target not already an output gets
    /// a control edge. Nothing is built when the graph has a node of type `Output`. Returns the
    /// NetOutput node. Validated first: a bad entry changes nothing.
    pub fn set_outputs(
        &mut self,
        outputs: &[(NodeId, i32)],
        targets: &[NodeId],
    ) -> IrResult<Option<NodeId>> {
        for &(id, index) in outputs {
            if index < 0 {
                return Err(IrError::InvalidArgument(format!(
                    "graph output index {index} of '{}' must be ≥ 0",
                    self.node(id)?.op.name()
                )));
            }
            self.check_out(OutAnchor { node: id, index })?;
        }
        for &id in targets {
            self.node(id)?;
        }
        let existing = self.net_output();
        if let Some(net) = existing {
            if outputs.iter().any(|&(n, _)| n == net) || targets.contains(&net) {
                return Err(IrError::InvalidArgument(format!(
                    "the NetOutput node '{}' cannot be its own output",
                    self.nodes[net].op.name()
                )));
            }
        }
        let has_output_op = self
            .node_ids()
            .any(|id| self.nodes[id].op.op_type() == "Output");
        if existing.is_none() && !has_output_op {
            // Checked before anything changes: the NetOutput's name must be free.
            let name = self.net_output_name();
            if self.find(&name).is_some() {
                return Err(IrError::Duplicate(format!(
                    "graph '{}' already has a node named '{name}'",
                    self.name
                )));
            }
        }
        self.outputs = outputs.to_vec();
        self.targets = targets.to_vec();
        if has_output_op {
            return Ok(None);
        }
        let net = match existing {
            Some(net) => {
                self.unlink_node(net);
                self.modify_op(net, |op| op.truncate_ports(Side::Input, 0))?;
                net
            }
            None => {
                let mut op = OpDesc::new(&self.net_output_name(), "NetOutput");
                op.set_attr("_inner_net_output", AttrValue::Bool(true));
                op.set_attr(
                    "_datadump_original_op_names",
                    AttrValue::ListString(Vec::new()),
                );
                op.set_attr("true_branch_stream", AttrValue::Int(0));
                self.add_node(op)?
            }
        };
        for (i, &(id, index)) in outputs.iter().enumerate() {
            let desc = self.nodes[id].op.output_desc(index as usize)?.clone();
            self.modify_op(net, |op| op.add_input(&format!("__input{i}"), desc))?;
            self.link(OutAnchor::data(id, index as usize), InAnchor::data(net, i))?;
        }
        for &t in targets {
            if !outputs.iter().any(|&(n, _)| n == t) {
                self.link(OutAnchor::control(t), InAnchor::control(net))?;
            }
        }
        Ok(Some(net))
    }

    /// Every link of the graph as `(source, destination)`, in node order then anchor order.
    pub fn links(&self) -> Vec<(OutAnchor, InAnchor)> {
        let mut out = Vec::new();
        for id in self.node_ids() {
            let n = &self.nodes[id];
            for (i, peers) in n.out_data.iter().enumerate() {
                out.extend(peers.iter().map(|&d| (OutAnchor::data(id, i), d)));
            }
            out.extend(n.out_ctrl.iter().map(|&d| (OutAnchor::control(id), d)));
        }
        out
    }

    /// Number of links (data and control).
    pub fn num_links(&self) -> usize {
        self.nodes
            .values()
            .map(|n| n.out_data.iter().map(|p| p.len()).sum::<usize>() + n.out_ctrl.len())
            .sum()
    }

    /// Check the structural invariants: both ends of every link present, in-data ≤ 1 peer,
    /// anchor counts equal port counts, the order is a permutation of the live nodes, names
    /// unique and indexed. Returns every problem found.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut count = 0usize;
        let mut prev = None;
        let mut cursor = self.head;
        let mut seen = slotmap::SecondaryMap::new();
        while let Some(id) = cursor {
            let Some(n) = self.nodes.get(id) else {
                problems.push(format!(
                    "the order of graph '{}' refers to a removed node",
                    self.name
                ));
                break;
            };
            if seen.insert(id, ()).is_some() {
                problems.push(format!("node '{}' appears twice in the order", n.op.name()));
                break;
            }
            if n.prev != prev {
                problems.push(format!(
                    "node '{}' has a wrong back link in the order",
                    n.op.name()
                ));
            }
            prev = Some(id);
            cursor = n.next;
            count += 1;
        }
        if self.tail != prev {
            problems.push(format!("graph '{}' has a wrong order tail", self.name));
        }
        if count != self.nodes.len() {
            problems.push(format!(
                "the order of graph '{}' lists {count} nodes, the graph has {}",
                self.name,
                self.nodes.len()
            ));
        }
        for (id, n) in &self.nodes {
            let name = n.op.name();
            if self.find(name) != Some(id) {
                problems.push(format!(
                    "node '{name}' is missing from the name index (or its name is not unique)"
                ));
            }
            if n.in_data.len() != n.op.num_inputs() || n.out_data.len() != n.op.num_outputs() {
                problems.push(format!(
                    "node '{name}' has {} in / {} out anchors but {} / {} ports",
                    n.in_data.len(),
                    n.out_data.len(),
                    n.op.num_inputs(),
                    n.op.num_outputs()
                ));
            }
        }
        // Links are two-sided: every link seen from its consumer is seen from its producer,
        // as often. Counted in one pass each way (searching the producer's peer list per link
        // would be quadratic in the fan-out).
        let mut links: hashbrown::HashMap<(OutAnchor, InAnchor), i64, FxBuildHasher> =
            hashbrown::HashMap::default();
        for (id, n) in &self.nodes {
            for (i, peers) in n.out_data.iter().enumerate() {
                for dst in peers {
                    *links.entry((OutAnchor::data(id, i), *dst)).or_default() += 1;
                }
            }
            for dst in &n.out_ctrl {
                *links.entry((OutAnchor::control(id), *dst)).or_default() += 1;
            }
        }
        for (id, n) in &self.nodes {
            let ins = n
                .in_data
                .iter()
                .enumerate()
                .filter_map(|(i, p)| p.map(|src| (src, InAnchor::data(id, i))))
                .chain(n.in_ctrl.iter().map(|&src| (src, InAnchor::control(id))));
            for (src, dst) in ins {
                let left = links.entry((src, dst)).or_default();
                *left -= 1;
                if self.check_out(src).is_err() || *left < 0 {
                    problems.push(format!(
                        "{} has a one-sided link",
                        self.describe(Anchor::In(dst))
                    ));
                }
            }
        }
        for (id, n) in &self.nodes {
            let outs = n
                .out_data
                .iter()
                .enumerate()
                .flat_map(|(i, peers)| peers.iter().map(move |&dst| (OutAnchor::data(id, i), dst)))
                .chain(n.out_ctrl.iter().map(|&dst| (OutAnchor::control(id), dst)));
            for (src, dst) in outs {
                let left = links.entry((src, dst)).or_default();
                if self.check_in(dst).is_err() || *left > 0 {
                    *left -= 1;
                    problems.push(format!(
                        "{} has a one-sided link",
                        self.describe(Anchor::Out(src))
                    ));
                }
            }
        }
        if self.names.len() != self.nodes.len() {
            problems.push(format!(
                "graph '{}' indexes {} names for {} nodes",
                self.name,
                self.names.len(),
                self.nodes.len()
            ));
        }
        problems
    }
}

/// Iterator over node ids in graph order.
#[derive(Debug)]
pub struct NodeIter<'a> {
    graph: &'a Graph,
    cursor: Option<NodeId>,
}

impl Iterator for NodeIter<'_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        let id = self.cursor?;
        self.cursor = self.graph.nodes.get(id).and_then(|n| n.next);
        Some(id)
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

    /// Rewrite the node order from `order`, which the caller guarantees to be a permutation of
    /// the live nodes (no validation: used by the sorter on its own output).
    pub(crate) fn relink_order(&mut self, order: &[NodeId]) {
        let mut prev: Option<NodeId> = None;
        for &id in order {
            if let Some(p) = prev {
                self.nodes[p].next = Some(id);
            }
            let n = &mut self.nodes[id];
            n.prev = prev;
            n.next = None;
            prev = Some(id);
        }
        self.head = order.first().copied();
        self.tail = prev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_strings_are_the_ones_nodes_keep() {
        let mut table = Interner::default();
        let relu = table.intern("Relu");
        let mut g = Graph::new("g");
        g.share_strings(&table);
        let a = g
            .add_node(OpDesc::with_type_sym("a", relu.clone()))
            .unwrap();
        let b = g.add_node(OpDesc::new("b", "Relu")).unwrap();
        for id in [a, b] {
            assert!(Sym::ptr_eq(g.op(id).unwrap().op_type_sym(), &relu));
        }
        assert_eq!(g.interned_strings(), 1);
        // A string the graph already has keeps the graph's copy.
        let mut other = Interner::default();
        let copy = other.intern("Relu");
        g.share_strings(&other);
        let c = g.add_node(OpDesc::with_type_sym("c", copy)).unwrap();
        assert!(Sym::ptr_eq(g.op(c).unwrap().op_type_sym(), &relu));
    }

    #[test]
    fn one_sided_links_are_found_from_either_side() {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 0, 1)).unwrap();
        let b = g.add_node(op("b", 2, 0)).unwrap();
        g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
        g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap();
        g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap(); // GE keeps duplicates
        assert!(
            g.check_invariants().is_empty(),
            "{:?}",
            g.check_invariants()
        );
        // The consumer side forgets one of the two control links.
        let mut c = g.clone();
        c.nodes[b].in_ctrl.pop();
        let p = c.check_invariants();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("one-sided"));
        // The producer side forgets the data link.
        let mut c = g.clone();
        c.nodes[a].out_data[0].clear();
        let p = c.check_invariants();
        assert_eq!(p.len(), 1, "{p:?}");
        // The consumer points at a link the producer does not list.
        let mut c = g.clone();
        c.nodes[b].in_data[1] = Some(OutAnchor::data(a, 0));
        let p = c.check_invariants();
        assert_eq!(p.len(), 1, "{p:?}");
    }

    fn op(name: &str, inputs: usize, outputs: usize) -> OpDesc {
        let d = Arc::new(TensorDesc::default());
        let mut op = OpDesc::new(name, "Op");
        for i in 0..inputs {
            op.add_input(&format!("x{i}"), d.clone());
        }
        for i in 0..outputs {
            op.add_output(&format!("y{i}"), d.clone()).unwrap();
        }
        op
    }

    #[test]
    fn hot_records_stay_small() {
        // Pin the size of the node record so that growth is a conscious decision.
        assert!(
            std::mem::size_of::<NodeData>() <= 248,
            "{}",
            std::mem::size_of::<NodeData>()
        );
        assert_eq!(std::mem::size_of::<Sym>(), 8);
        assert_eq!(std::mem::size_of::<InAnchor>(), 12);
        assert_eq!(std::mem::size_of::<Option<NodeId>>(), 8);
    }

    #[test]
    fn add_node_linked_is_all_or_nothing() {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 0, 1)).unwrap();
        let b = g
            .add_node_linked(op("b", 2, 1), &[Some(OutAnchor::data(a, 0)), None])
            .unwrap();
        assert_eq!(g.in_peer(InAnchor::data(b, 0)), Some(OutAnchor::data(a, 0)));
        let before = g.dump();
        // Output 5 of `a` does not exist: the new node must not stay behind.
        let err = g.add_node_linked(op("c", 1, 1), &[Some(OutAnchor::data(a, 5))]);
        assert!(err.is_err());
        assert_eq!(g.dump(), before);
        assert!(g.find("c").is_none());
    }

    #[test]
    fn names_are_unique_and_indexed() {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 0, 1)).unwrap();
        assert!(matches!(
            g.add_node(op("a", 0, 1)),
            Err(IrError::Duplicate(_))
        ));
        assert!(g.add_node(op("", 0, 1)).is_err());
        assert_eq!(g.find("a"), Some(a));
        g.rename_node(a, "b").unwrap();
        assert_eq!(g.find("a"), None);
        assert_eq!(g.find("b"), Some(a));
        g.erase_node(a).unwrap();
        assert_eq!(g.find("b"), None);
        assert!(g.node(a).is_err());
        let c = g.add_node(op("c", 0, 1)).unwrap();
        assert!(g.node(a).is_err(), "the reused slot has a new generation");
        assert!(g.node(c).is_ok());
    }

    #[test]
    fn order_insertions_follow_ge() {
        let mut g = Graph::new("g");
        let mut data = op("data", 0, 1);
        data.set_type("Data");
        let d = g.add_node(data).unwrap();
        let x = g.add_node(op("x", 0, 1)).unwrap();
        let front = g.add_node_front(op("front", 0, 0)).unwrap();
        let after = g.insert_node_after(d, op("after", 0, 0)).unwrap();
        let before = g.insert_node_before(x, op("before", 0, 0)).unwrap();
        let names: Vec<&str> = g.node_ids().map(|id| g.op(id).unwrap().name()).collect();
        assert_eq!(names, ["data", "after", "front", "before", "x"]);
        assert_eq!(g.op(front).unwrap().id, 2);
        assert_eq!(g.op(after).unwrap().id, g.op(d).unwrap().id);
        assert_eq!(g.op(before).unwrap().id, g.op(x).unwrap().id);
        assert_eq!(g.inputs(), &[d]);
        let order: Vec<NodeId> = g.node_ids().collect();
        let reversed: Vec<NodeId> = order.iter().rev().copied().collect();
        g.set_order(&reversed).unwrap();
        assert_eq!(g.node_ids().collect::<Vec<_>>(), reversed);
        assert!(g.set_order(&order[..2]).is_err());
        assert!(g
            .set_order(&[order[0], order[0], order[1], order[2], order[3]])
            .is_err());
        assert!(g.check_invariants().is_empty());
    }

    #[test]
    fn links_follow_the_anchor_rules() {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 1, 1)).unwrap();
        let b = g.add_node(op("b", 2, 1)).unwrap();
        g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
        assert!(matches!(
            g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)),
            Err(IrError::Link(_))
        ));
        assert!(matches!(
            g.link(OutAnchor::data(a, 3), InAnchor::data(b, 1)),
            Err(IrError::NotFound(_))
        ));
        g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap();
        g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap();
        g.link(OutAnchor::data(a, 0), InAnchor::control(b)).unwrap();
        g.link(OutAnchor::control(b), InAnchor::data(a, 0)).unwrap();
        assert_eq!(g.in_control_nodes(b).unwrap(), vec![a, a, a]);
        assert_eq!(g.in_nodes(b).unwrap(), vec![a, a, a]);
        assert_eq!(g.in_data_nodes(a).unwrap(), Vec::<NodeId>::new());
        assert_eq!(g.num_links(), 5);
        g.unlink_all(Anchor::In(InAnchor::control(b))).unwrap();
        assert_eq!(g.num_links(), 2);
        assert!(g.check_invariants().is_empty());
    }

    #[test]
    fn inserted_ports_keep_links() {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 0, 2)).unwrap();
        let b = g.add_node(op("b", 2, 0)).unwrap();
        g.link(OutAnchor::data(a, 1), InAnchor::data(b, 1)).unwrap();
        g.insert_ports(
            b,
            Side::Input,
            0,
            &[("p".into(), Arc::new(TensorDesc::default()))],
        )
        .unwrap();
        assert_eq!(g.in_peer(InAnchor::data(b, 2)), Some(OutAnchor::data(a, 1)));
        g.insert_ports(
            a,
            Side::Output,
            1,
            &[("q".into(), Arc::new(TensorDesc::default()))],
        )
        .unwrap();
        assert_eq!(g.in_peer(InAnchor::data(b, 2)), Some(OutAnchor::data(a, 2)));
        assert!(g.check_invariants().is_empty());
    }

    #[test]
    fn net_output_is_created_and_rewired() {
        let mut g = Graph::new("g");
        let a = g.add_node(op("a", 0, 2)).unwrap();
        let t = g.add_node(op("t", 0, 0)).unwrap();
        let net = g.set_outputs(&[(a, 1), (a, 0)], &[t]).unwrap().unwrap();
        assert_eq!(g.op(net).unwrap().name(), "Node_Output");
        assert_eq!(
            g.in_peer(InAnchor::data(net, 0)),
            Some(OutAnchor::data(a, 1))
        );
        assert_eq!(g.in_control_nodes(net).unwrap(), vec![t]);
        let again = g.set_outputs(&[(a, 0)], &[]).unwrap().unwrap();
        assert_eq!(again, net);
        assert_eq!(g.op(net).unwrap().num_inputs(), 1);
        assert!(g.set_outputs(&[(a, 5)], &[]).is_err());
        assert!(g.check_invariants().is_empty());
    }
}
