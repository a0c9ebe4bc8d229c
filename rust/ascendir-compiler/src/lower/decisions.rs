//! The decisions of stage 5 for a graph: stored in the order they were made, found by node
//! slot. The fuse stage walks them in order and its checks read a member's record at random;
//! both stay reads of arrays instead of hash probes.

use ascendir_ir::NodeId;
use slotmap::secondary::Entry;
use slotmap::SecondaryMap;

use super::Decision;

/// Every node's lowering decision (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Decisions {
    /// The decisions in the order they were made.
    list: Vec<(NodeId, Decision)>,
    /// Where each node's decision is in `list`.
    at: SecondaryMap<NodeId, u32>,
}

impl Decisions {
    /// Record `id`'s decision (a later one for the same node replaces it).
    pub fn insert(&mut self, id: NodeId, d: Decision) {
        // The map gives no entry for an id older than one it holds for the slot: such an id
        // gets no decision. Fewer decisions than nodes, whose arena slots are 32-bit.
        match self.at.entry(id) {
            Some(Entry::Occupied(e)) => {
                if let Some(x) = self.list.get_mut(*e.get() as usize) {
                    x.1 = d;
                }
            }
            Some(Entry::Vacant(e)) => {
                if let Ok(i) = u32::try_from(self.list.len()) {
                    e.insert(i);
                    self.list.push((id, d));
                }
            }
            None => {}
        }
    }

    /// The decision for `id`.
    pub fn get(&self, id: &NodeId) -> Option<&Decision> {
        let &i = self.at.get(*id)?;
        self.list.get(i as usize).map(|e| &e.1)
    }

    /// The decisions in the order they were made.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &Decision)> {
        self.list.iter().map(|(id, d)| (*id, d))
    }

    /// How many nodes have a decision.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no node has a decision.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use ascendir_ir::{Graph, OpDesc};

    use super::*;
    use crate::lower::{Barrier, Category};

    fn barrier(reason: &str) -> Decision {
        Decision::Barrier(Barrier {
            category: Category::TemporarySkip,
            reason: reason.into(),
        })
    }

    fn reason(d: Option<&Decision>) -> Option<&str> {
        match d {
            Some(Decision::Barrier(b)) => Some(&b.reason),
            _ => None,
        }
    }

    #[test]
    fn decisions_are_found_by_id_kept_in_order_and_refuse_a_reused_slot() {
        let mut g = Graph::new("g");
        let a = g.add_node(OpDesc::new("a", "Relu")).expect("add");
        let b = g.add_node(OpDesc::new("b", "Relu")).expect("add");
        let mut d = Decisions::default();
        d.insert(b, barrier("first b"));
        d.insert(a, barrier("a"));
        d.insert(b, barrier("second b"));
        assert_eq!(d.len(), 2);
        assert_eq!(reason(d.get(&a)), Some("a"));
        assert_eq!(reason(d.get(&b)), Some("second b"));
        let order: Vec<NodeId> = d.iter().map(|(id, _)| id).collect();
        assert_eq!(order, vec![b, a]);
        // A node added in a removed node's slot has no decision.
        g.remove_node(a).expect("remove");
        let c = g.add_node(OpDesc::new("c", "Relu")).expect("add");
        assert_eq!(c.slot(), a.slot());
        assert!(d.get(&c).is_none());
        assert!(Decisions::default().get(&a).is_none() && Decisions::default().is_empty());
    }
}
