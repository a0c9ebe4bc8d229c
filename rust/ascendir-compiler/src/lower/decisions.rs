//! The decisions of stage 5 for a graph: stored in the order they were made, found by node
//! slot. The fuse stage walks them in order and its checks read a member's record at random;
//! both stay reads of arrays instead of hash probes.

use ascendir_ir::NodeId;

use super::Decision;

/// No decision at a slot.
const NONE: u32 = u32::MAX;

/// Every node's lowering decision (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Decisions {
    /// The decisions in the order they were made.
    list: Vec<(NodeId, Decision)>,
    /// Per node slot, the node (an id whose slot holds another node finds nothing) and where
    /// its decision is in `list` (`NONE`: no decision).
    at: Vec<(NodeId, u32)>,
}

impl Decisions {
    /// Record `id`'s decision (a later one for the same node replaces it).
    pub fn insert(&mut self, id: NodeId, d: Decision) {
        let slot = id.slot();
        if self.at.len() <= slot {
            self.at.resize(slot + 1, (NodeId::default(), NONE));
        }
        match self.at[slot] {
            (at, i) if at == id && i != NONE => self.list[i as usize].1 = d,
            _ => {
                // Slots are 32-bit: fewer decisions than `u32::MAX`.
                self.at[slot] = (id, u32::try_from(self.list.len()).unwrap_or(NONE));
                self.list.push((id, d));
            }
        }
    }

    /// The decision for `id`.
    pub fn get(&self, id: &NodeId) -> Option<&Decision> {
        let &(at, i) = self.at.get(id.slot())?;
        if at != *id || i == NONE {
            return None;
        }
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
