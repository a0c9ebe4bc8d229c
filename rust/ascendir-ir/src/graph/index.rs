//! What the editing layer looks nodes up and places them with: the index of nodes by op type,
//! the order keys that sort a set of nodes into graph order without walking the list, and the
//! insertion point new nodes go to.
//!
//! The type index and the order keys are built on their first use and kept up to date by every
//! edit afterwards (a graph that is only built and serialized never pays for them); an edit
//! that rewrites the whole order drops the keys, to be rebuilt by the next query.

use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::IrResult;

use super::{Graph, NodeId};

/// Gap between consecutive order keys when they are (re)numbered: room for 20 insertions at
/// one place before the keys must be renumbered.
const KEY_SPACING: u64 = 1 << 20;

/// Nodes by op type.
#[derive(Clone, Debug, Default)]
pub(super) struct TypeIndex {
    by_type: FxHashMap<Box<str>, FxHashSet<NodeId>>,
}

impl TypeIndex {
    pub(super) fn insert(&mut self, ty: &str, id: NodeId) {
        match self.by_type.get_mut(ty) {
            Some(set) => {
                set.insert(id);
            }
            None => {
                let mut set = FxHashSet::default();
                set.insert(id);
                self.by_type.insert(ty.into(), set);
            }
        }
    }

    pub(super) fn remove(&mut self, ty: &str, id: NodeId) {
        if let Some(set) = self.by_type.get_mut(ty) {
            set.remove(&id);
            if set.is_empty() {
                self.by_type.remove(ty);
            }
        }
    }

    fn get(&self, ty: &str) -> impl Iterator<Item = NodeId> + '_ {
        self.by_type.get(ty).into_iter().flatten().copied()
    }
}

/// Where new nodes go in the node order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertPoint {
    /// Right before this node: successive nodes keep their creation order.
    Before(NodeId),
    /// Right after this node; the point then moves to the new node, so that successive nodes
    /// keep their creation order.
    After(NodeId),
}

impl InsertPoint {
    /// The node the point is relative to.
    pub fn node(self) -> NodeId {
        match self {
            InsertPoint::Before(n) | InsertPoint::After(n) => n,
        }
    }
}

/// The lazily built lookup state of a graph. A copy of the graph keeps the indexes and starts
/// with no insertion point (the point belongs to the edit under way on the original).
#[derive(Debug, Default)]
pub(super) struct Lookup {
    pub(super) types: OnceLock<TypeIndex>,
    /// Order keys by arena slot: increasing along the node order.
    pub(super) order: OnceLock<Vec<u64>>,
    pub(super) point: Option<InsertPoint>,
}

impl Clone for Lookup {
    fn clone(&self) -> Self {
        Lookup {
            types: self.types.clone(),
            order: self.order.clone(),
            point: None,
        }
    }
}

impl Graph {
    fn type_index(&self) -> &TypeIndex {
        self.lookup.types.get_or_init(|| {
            let mut ix = TypeIndex::default();
            for (id, n) in self.nodes.iter() {
                ix.insert(n.op.op_type(), id);
            }
            ix
        })
    }

    fn order_keys(&self) -> &Vec<u64> {
        self.lookup.order.get_or_init(|| {
            let mut keys = vec![0u64; self.nodes.capacity() + 1];
            for (i, id) in self.node_ids().enumerate() {
                let slot = id.slot();
                if slot >= keys.len() {
                    keys.resize(slot + 1, 0);
                }
                keys[slot] = (i as u64 + 1).saturating_mul(KEY_SPACING);
            }
            keys
        })
    }

    /// Keep the order keys (if built) right after `id` was linked into the order.
    pub(super) fn key_linked(&mut self, id: NodeId) {
        let (prev, next) = {
            let n = &self.nodes[id];
            (n.prev, n.next)
        };
        let Some(keys) = self.lookup.order.get_mut() else {
            return;
        };
        let key_of = |keys: &Vec<u64>, n: NodeId| keys.get(n.slot()).copied().unwrap_or(0);
        let lo = prev.map_or(0, |p| key_of(keys, p));
        let hi = match next {
            Some(n) => key_of(keys, n),
            None => lo.saturating_add(2 * KEY_SPACING),
        };
        if hi <= lo || hi - lo < 2 {
            self.lookup.order.take();
            return;
        }
        let key = match next {
            None => lo + KEY_SPACING,
            Some(_) => lo + (hi - lo) / 2,
        };
        let slot = id.slot();
        if slot >= keys.len() {
            keys.resize(slot + 1, 0);
        }
        keys[slot] = key;
    }

    /// Drop the order keys (the whole order was rewritten); the next query renumbers.
    pub(super) fn keys_invalidated(&mut self) {
        self.lookup.order.take();
    }

    /// Keep the type index (if built) after `id` was created or its type changed from `old`.
    pub(super) fn index_retyped(&mut self, id: NodeId, old: Option<&str>) {
        let Some(ix) = self.lookup.types.get_mut() else {
            return;
        };
        if let Some(old) = old {
            ix.remove(old, id);
        }
        if let Some(n) = self.nodes.get(id) {
            ix.insert(n.op.op_type(), id);
        }
    }

    /// Keep the type index (if built) before `id` leaves the graph.
    pub(super) fn index_removed(&mut self, id: NodeId) {
        let Some(ix) = self.lookup.types.get_mut() else {
            return;
        };
        if let Some(n) = self.nodes.get(id) {
            ix.remove(n.op.op_type(), id);
        }
    }

    /// Sort `ids` (live nodes) into graph order.
    pub fn sort_by_order(&self, ids: &mut [NodeId]) {
        let keys = self.order_keys();
        ids.sort_by_key(|id| keys.get(id.slot()).copied().unwrap_or(u64::MAX));
    }

    /// The nodes of op type `op_type` and/or named `name`, in graph order (GE
    /// `FindNode` / the nodes of one type). Backed by the name index and the type index: the
    /// cost is the number of matches (and a sort of them), not the graph's size. With neither
    /// filter every node is returned.
    pub fn find_nodes(&self, op_type: Option<&str>, name: Option<&str>) -> Vec<NodeId> {
        match (op_type, name) {
            (_, Some(name)) => self
                .find(name)
                .filter(|&id| op_type.is_none_or(|t| self.nodes[id].op.op_type() == t))
                .into_iter()
                .collect(),
            (Some(t), None) => {
                let mut ids: Vec<NodeId> = self.type_index().get(t).collect();
                self.sort_by_order(&mut ids);
                ids
            }
            (None, None) => self.node_ids().collect(),
        }
    }

    /// How many nodes have op type `op_type` (from the type index).
    pub fn count_type(&self, op_type: &str) -> usize {
        self.type_index()
            .by_type
            .get(op_type)
            .map_or(0, |s| s.len())
    }

    /// The insertion point: where `add_node` (and every builder over it) places new nodes;
    /// `None` is the end of the order.
    pub fn insertion_point(&self) -> Option<InsertPoint> {
        self.lookup.point
    }

    /// Set the insertion point (`None`: the end of the order) and return the previous one. A
    /// point relative to a node that is not in the graph fails with `StaleHandle` (and changes
    /// nothing).
    pub fn set_insertion_point(
        &mut self,
        point: Option<InsertPoint>,
    ) -> IrResult<Option<InsertPoint>> {
        if let Some(p) = point {
            self.node(p.node())?;
        }
        Ok(std::mem::replace(&mut self.lookup.point, point))
    }

    /// The node a new node goes after (`None`: first) at the current insertion point; a point
    /// whose node has left the graph fails with `StaleHandle`.
    pub(super) fn placement(&self) -> IrResult<Option<NodeId>> {
        match self.lookup.point {
            None => Ok(self.tail),
            Some(InsertPoint::After(n)) => self.node(n).map(|_| Some(n)),
            Some(InsertPoint::Before(n)) => self.node(n).map(|d| d.prev),
        }
    }

    /// After a node was placed at the insertion point: an `After` point moves to it.
    pub(super) fn placed(&mut self, id: NodeId) {
        if let Some(InsertPoint::After(_)) = self.lookup.point {
            self.lookup.point = Some(InsertPoint::After(id));
        }
    }

    /// Check the index and the order keys against the graph (for the invariant checker).
    pub(super) fn lookup_problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(ix) = self.lookup.types.get() {
            let mut count = 0;
            for (ty, set) in &ix.by_type {
                for &id in set {
                    count += 1;
                    match self.nodes.get(id) {
                        Some(n) if n.op.op_type() == &**ty => {}
                        Some(n) => out.push(format!(
                            "type index lists '{}' under '{ty}', its type is '{}'",
                            n.op.name(),
                            n.op.op_type()
                        )),
                        None => out.push(format!("type index lists a removed node under '{ty}'")),
                    }
                }
            }
            if count != self.nodes.len() {
                out.push(format!(
                    "type index holds {count} nodes, the graph {}",
                    self.nodes.len()
                ));
            }
        }
        if let Some(keys) = self.lookup.order.get() {
            let mut last = 0u64;
            for id in self.node_ids() {
                let k = keys.get(id.slot()).copied().unwrap_or(0);
                if k <= last {
                    out.push(format!(
                        "order key of '{}' does not follow its predecessor's",
                        self.nodes[id].op.name()
                    ));
                }
                last = k;
            }
        }
        out
    }
}
