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
        let matches = self.find_matches(root.tree_graph(owner).expect("checked above"), true);
        let mut moved: FxHashMap<OutAnchor, OutAnchor> = FxHashMap::default();
        let mut done = 0;
        for m in &matches {
            let Some(Some(name)) = capture.get(m.rule) else {
                continue;
            };
            let Some(&(_, mut to)) = m.captures.iter().find(|(k, _)| k == name) else {
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
            if !m.nodes.iter().all(|n| g.contains(*n)) || !g.contains(to.node) {
                continue;
            }
            let from = OutAnchor::data(m.root, m.root_out.max(0) as usize);
            // `to` feeds the matched nodes, which feed `from`: no cycle can form.
            g.replace_upstream_uses(from, to)?;
            moved.insert(from, to);
            let dead = unread(g, &m.nodes);
            root.remove_tree_nodes(owner, &dead, true)?;
            done += 1;
        }
        Ok(done)
    }
}

/// Of `nodes` (inputs before their readers), those that nothing outside the removed ones
/// reads and that are no graph output, last first.
fn unread(g: &Graph, nodes: &[NodeId]) -> Vec<NodeId> {
    let mut gone: FxHashSet<NodeId> = FxHashSet::default();
    let mut dead = Vec::new();
    for &n in nodes.iter().rev() {
        let Ok(node) = g.node(n) else { continue };
        let read = (0..node.num_out_data()).any(|i| {
            node.out_data_peers(i)
                .iter()
                .any(|p| !gone.contains(&p.node))
                || g.outputs().iter().any(|&(o, k)| o == n && k as usize == i)
        });
        if !read && gone.insert(n) {
            dead.push(n);
        }
    }
    dead
}
