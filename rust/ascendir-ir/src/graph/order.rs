//! The node order: a doubly linked list through the node records (GE keeps nodes in a list
//! beside the arena), its iterator and the edits that move nodes in it.

use crate::error::{IrError, IrResult};

use super::{Graph, NodeId};

impl Graph {
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

    /// The last node in order.
    pub fn last(&self) -> Option<NodeId> {
        self.tail
    }

    /// The node after `id` in order.
    pub fn next_of(&self, id: NodeId) -> Option<NodeId> {
        self.nodes.get(id).and_then(|n| n.next)
    }

    /// The node before `id` in order.
    pub fn prev_of(&self, id: NodeId) -> Option<NodeId> {
        self.nodes.get(id).and_then(|n| n.prev)
    }

    /// Put `id` (not yet in the order) after `prev` (`None` = at the front).
    pub(super) fn link_order_after(&mut self, id: NodeId, prev: Option<NodeId>) {
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
        self.key_linked(id);
    }

    pub(super) fn unlink_order(&mut self, id: NodeId) {
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
        self.keys_invalidated();
        Ok(())
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
        self.keys_invalidated();
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
