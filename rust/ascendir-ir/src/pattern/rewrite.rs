//! Rewriting the matches of rules whose replacement is one of their captures (`x * 1 → x`)
//! in bulk, without a round trip per match.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::anchor::OutAnchor;
use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeId};

use super::PatternSet;

impl PatternSet {
    /// Find the matches (greedy) in graph `owner` of `root`'s tree and rewrite those of every
    /// rule `r` with `capture[r] = Some(name)`: the root value's uses (and graph outputs) move
    /// to the value capture `name` matched, and the matched nodes nothing reads any more are
    /// removed (with the subgraphs below them). Returns how many matches were rewritten. Each
    /// rewrite is all or nothing; an error stops the walk with the earlier rewrites kept.
    pub fn rewrite_to_captures(
        &self,
        root: &mut Graph,
        owner: Option<usize>,
        capture: &[Option<String>],
    ) -> IrResult<usize> {
        let graph = |root: &Graph| {
            root.tree_graph(owner)
                .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))
                .map(|_| ())
        };
        graph(root)?;
        for (r, cap) in capture.iter().enumerate() {
            if let (Some(_), Some(rule)) = (cap, self.rules.get(r)) {
                if rule.outputs.len() > 1 {
                    return Err(IrError::InvalidArgument(format!(
                        "rule '{}' has {} outputs: a rewrite to a capture replaces one",
                        rule.name,
                        rule.outputs.len()
                    )));
                }
            }
        }
        let matches = self.find_matches(root.tree_graph(owner).expect("checked above"), true);
        let mut moved: FxHashMap<OutAnchor, OutAnchor> = FxHashMap::default();
        // The matched nodes nothing reads any more are removed together after the walk (one
        // pass over each producer's consumer list); until then they are `gone`.
        let mut readers = Readers::default();
        let mut dead: Vec<NodeId> = Vec::new();
        let mut done = 0;
        let mut failure = None;
        for m in &matches {
            let Some(Some(name)) = capture.get(m.rule) else {
                continue;
            };
            let Some(&(_, mut to)) = m.captures.iter().find(|(k, _)| &**k == name.as_str()) else {
                continue;
            };
            // A capture an earlier rewrite replaced reads what replaced it (chains are at
            // most as long as the rewrites so far).
            for _ in 0..=done {
                match moved.get(&to) {
                    Some(next) => to = *next,
                    None => break,
                }
            }
            let g = root.tree_graph_mut(owner).expect("checked above");
            let here = |n: NodeId| g.contains(n) && !readers.gone.contains(&n);
            if !m.nodes.iter().all(|n| here(*n)) || !here(to.node) {
                continue;
            }
            let from = OutAnchor::data(m.root, m.root_out.max(0) as usize);
            // `to` feeds the matched nodes, which feed `from`: no cycle can form.
            let live = match g.node(from.node) {
                Ok(n) if from.index >= 0 && (from.index as usize) < n.num_out_data() => n
                    .out_data_peers(from.index as usize)
                    .iter()
                    .filter(|u| !readers.gone.contains(&u.node))
                    .count(),
                Ok(_) => 0,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            if let Err(e) = g.replace_upstream_uses(from, to) {
                failure = Some(e);
                break;
            }
            readers.moved(g, from.node, to.node, live);
            moved.insert(from, to);
            readers.mark_unread(g, &m.nodes, &mut dead);
            done += 1;
        }
        root.remove_tree_nodes_unnamed(owner, &dead, true)?;
        match failure {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }
}

/// The data readers outside `gone` of each node asked about (counted once, then kept up to
/// date as uses move and nodes go), and the nodes marked gone.
#[derive(Default)]
struct Readers {
    left: FxHashMap<NodeId, usize>,
    gone: FxHashSet<NodeId>,
}

impl Readers {
    fn count(&mut self, g: &Graph, n: NodeId) -> usize {
        let gone = &self.gone;
        *self.left.entry(n).or_insert_with(|| {
            g.node(n).map_or(0, |node| {
                (0..node.num_out_data())
                    .map(|i| {
                        node.out_data_peers(i)
                            .iter()
                            .filter(|p| !gone.contains(&p.node))
                            .count()
                    })
                    .sum()
            })
        })
    }

    /// `live` uses moved from `from`'s output to `to`.
    fn moved(&mut self, g: &Graph, from: NodeId, to: NodeId, live: usize) {
        if self.left.remove(&from).is_some() {
            self.count(g, from);
        }
        if let Some(c) = self.left.get_mut(&to) {
            *c += live;
        }
    }

    /// Of `nodes` (inputs before their readers), mark those that nothing outside the gone
    /// ones reads and that are no graph output, last first, appending them to `dead`.
    fn mark_unread(&mut self, g: &Graph, nodes: &[NodeId], dead: &mut Vec<NodeId>) {
        for &n in nodes.iter().rev() {
            if self.gone.contains(&n) {
                continue;
            }
            let output = g.outputs().iter().any(|&(o, _)| o == n);
            if output || self.count(g, n) > 0 {
                continue;
            }
            self.gone.insert(n);
            dead.push(n);
            let Ok(node) = g.node(n) else { continue };
            for k in 0..node.num_in_data() {
                if let Some(p) = node.in_data_peer(k) {
                    if let Some(c) = self.left.get_mut(&p.node) {
                        *c = c.saturating_sub(1);
                    }
                }
            }
        }
    }
}
