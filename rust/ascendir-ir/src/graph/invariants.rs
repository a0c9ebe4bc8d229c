//! The structural invariant check over links, anchor counts, the node order and the name
//! index.

use rustc_hash::FxBuildHasher;

use crate::anchor::{Anchor, InAnchor, OutAnchor};

use super::Graph;

impl Graph {
    /// Check the structural invariants: both ends of every link present, in-data ≤ 1 peer,
    /// anchor counts equal port counts, the order is a permutation of the live nodes, names
    /// unique and indexed, the type index and order keys (when built) agreeing. Returns every problem found.
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
        problems.extend(self.lookup_problems());
        problems
    }
}
