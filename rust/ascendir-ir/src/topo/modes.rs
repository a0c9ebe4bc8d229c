//! The walks of each mode over the sorter's side tables: DFS and reverse DFS (with memory
//! priority), BFS, RDFS and StableRDFS.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use slotmap::SlotMap;

use crate::graph::{Graph, NodeData, NodeId};

use super::{slot, TopoSorter, NOT_WALKED, WALKED, WALKING};

impl TopoSorter {
    pub(super) fn dfs(&mut self, g: &Graph, reverse: bool, memory_priority: bool) {
        let nodes = g.arena();
        if memory_priority && !reverse {
            let mut heap = BinaryHeap::new();
            let seeds = std::mem::take(&mut self.seeds);
            for &id in &seeds {
                heap.push(Reverse(self.mp_key(nodes, id)));
            }
            self.seeds = seeds;
            while let Some(Reverse((_, _, _, _, _, id))) = heap.pop() {
                self.out.push(id);
                let n = &nodes[id];
                let ni = self.is_ni(id);
                for peers in n.out_data.iter() {
                    for &p in peers.iter() {
                        if self.release(ni, p) {
                            heap.push(Reverse(self.mp_key(nodes, p.node)));
                        }
                    }
                }
                for &p in n.out_ctrl.iter() {
                    if self.release(ni, p) {
                        heap.push(Reverse(self.mp_key(nodes, p.node)));
                    }
                }
            }
            return;
        }
        self.stack.clear();
        self.stack.extend_from_slice(&self.seeds);
        while let Some(id) = self.stack.pop() {
            self.out.push(id);
            let n = &nodes[id];
            let ni = self.is_ni(id);
            for peers in n.out_data.iter() {
                // In-data consumers, then data→control consumers: two batches.
                for want_ctrl in [false, true] {
                    let start = self.stack.len();
                    for &p in peers.iter() {
                        if p.is_control() == want_ctrl && self.release(ni, p) {
                            self.stack.push(p.node);
                        }
                    }
                    if reverse {
                        self.stack[start..].reverse();
                    }
                }
            }
            let start = self.stack.len();
            for &p in n.out_ctrl.iter() {
                if self.release(ni, p) {
                    self.stack.push(p.node);
                }
            }
            if reverse {
                self.stack[start..].reverse();
            }
        }
    }

    /// The memory-priority key: (data consumers, output bytes, name, id). Names up to 16
    /// bytes are ordered exactly by (prefix, length); longer ones need the full name.
    #[allow(clippy::type_complexity)]
    pub(super) fn mp_key<'a>(
        &self,
        nodes: &'a SlotMap<NodeId, NodeData>,
        id: NodeId,
    ) -> (u32, i64, u128, u32, &'a str, NodeId) {
        let s = slot(id);
        let (len, name) = if self.long_names {
            (0, nodes[id].name())
        } else {
            (self.name_len[s], "")
        };
        (
            self.consumers[s],
            self.bytes[s],
            self.prefix[s],
            len,
            name,
            id,
        )
    }

    pub(super) fn bfs(&mut self, g: &Graph, memory_priority: bool) {
        let nodes = g.arena();
        let mut heap = BinaryHeap::new();
        self.queue.clear();
        loop {
            let id = if memory_priority {
                match heap.pop() {
                    Some(Reverse((_, _, _, _, _, id))) => id,
                    None => match self.seeds.pop() {
                        Some(id) => id,
                        None => break,
                    },
                }
            } else {
                match self.queue.pop_front() {
                    Some(id) => id,
                    None => match self.seeds.pop() {
                        Some(id) => id,
                        None => break,
                    },
                }
            };
            self.out.push(id);
            let n = &nodes[id];
            let ni = self.is_ni(id);
            self.batch.clear();
            for peers in n.out_data.iter() {
                for &p in peers.iter().filter(|p| !p.is_control()) {
                    if self.release(ni, p) {
                        self.batch.push(p.node);
                    }
                }
                for &p in peers.iter().filter(|p| p.is_control()) {
                    if self.release(ni, p) {
                        self.batch.push(p.node);
                    }
                }
            }
            for &p in n.out_ctrl.iter() {
                if self.release(ni, p) {
                    self.batch.push(p.node);
                }
            }
            // Nodes made ready by this node are queued by name.
            if self.batch.len() > 1 {
                let mut batch = std::mem::take(&mut self.batch);
                batch.sort_unstable_by(|a, b| self.name_cmp(nodes, *a, *b));
                self.batch = batch;
            }
            let batch = std::mem::take(&mut self.batch);
            for &b in &batch {
                if memory_priority {
                    heap.push(Reverse(self.mp_key(nodes, b)));
                } else {
                    self.queue.push_back(b);
                }
            }
            self.batch = batch;
        }
    }

    /// Every producer RDFS/StableRDFS follow: data producers, control→data producers and every
    /// peer of the in-control anchor; NextIteration data links excluded.
    pub(super) fn producers(&self, n: &NodeData, into: &mut Vec<NodeId>) {
        into.clear();
        for p in n.in_data.iter().flatten() {
            if p.is_control() || !self.is_ni(p.node) {
                into.push(p.node);
            }
        }
        into.extend(n.in_ctrl.iter().map(|p| p.node));
    }

    /// GE's reverse DFS from the sinks; returns false when a cycle was met.
    pub(super) fn rdfs(&mut self, g: &Graph) -> bool {
        let nodes = g.arena();
        self.reverse_dfs(
            g,
            |this, root| {
                // GE's sink: no in-data consumers and no peer at all on the out-control anchor
                // (a NextIteration's loop-closing data links do not count).
                let n = &nodes[root];
                n.out_ctrl.is_empty()
                    && (this.is_ni(root)
                        || n.out_data.iter().all(|p| p.iter().all(|a| a.is_control())))
            },
            |this, producers| {
                // Largest (bytes, name) first, so the smallest ends on top.
                if producers.len() > 1 {
                    producers.sort_unstable_by(|a, b| {
                        this.bytes[slot(*b)]
                            .cmp(&this.bytes[slot(*a)])
                            .then_with(|| this.name_cmp(nodes, *b, *a))
                    });
                }
            },
        )
    }

    /// Reverse DFS from every node in list order, producers by position; returns false when a
    /// cycle was met.
    pub(super) fn stable_rdfs(&mut self, g: &Graph) -> bool {
        self.reverse_dfs(
            g,
            |_, _| true,
            |this, producers| {
                // Highest position first, so the lowest ends on top.
                producers.sort_unstable_by_key(|p| Reverse(this.pos[slot(*p)]));
            },
        )
    }

    /// Post-order walk over producers from the roots `is_root` picks among `self.list` (in list
    /// order), each node's unwalked producers pushed in the order `order` leaves them (the last
    /// one is walked first); appends to `self.out`. Returns false when a cycle was met.
    pub(super) fn reverse_dfs(
        &mut self,
        g: &Graph,
        is_root: impl Fn(&Self, NodeId) -> bool,
        order: impl Fn(&Self, &mut Vec<NodeId>),
    ) -> bool {
        let nodes = g.arena();
        for i in 0..self.list.len() {
            self.count[slot(self.list[i])] = u32::from(NOT_WALKED);
        }
        let mut producers = std::mem::take(&mut self.batch);
        let mut ok = true;
        'outer: for i in 0..self.list.len() {
            let root = self.list[i];
            if self.count[slot(root)] != u32::from(NOT_WALKED) || !is_root(self, root) {
                continue;
            }
            self.stack.clear();
            self.stack.push(root);
            while let Some(&cur) = self.stack.last() {
                let s = slot(cur);
                if self.count[s] == u32::from(NOT_WALKED) {
                    self.count[s] = u32::from(WALKING);
                    self.producers(&nodes[cur], &mut producers);
                    if producers
                        .iter()
                        .any(|p| self.count[slot(*p)] == u32::from(WALKING))
                    {
                        ok = false;
                        break 'outer;
                    }
                    producers.retain(|p| self.count[slot(*p)] == u32::from(NOT_WALKED));
                    order(self, &mut producers);
                    producers.dedup();
                    self.stack.extend_from_slice(&producers);
                    continue;
                }
                self.stack.pop();
                if self.count[s] == u32::from(WALKING) {
                    self.count[s] = u32::from(WALKED);
                    self.out.push(cur);
                }
            }
        }
        self.batch = producers;
        ok
    }
}
