//! Patterns of several outputs: how the outputs after the first are found.
//!
//! The first output is the root: the matcher's walk tries it at every node of its type and
//! binds its cone (the pattern nodes it reads, transitively). Each further output `k` is found
//! from what the outputs before it bound. When compiling, a *search path* is chosen: the
//! pattern node nearest to output `k`'s node (breadth first over inputs, in input order) that
//! the earlier outputs' cones contain, and the chain of readers from it up to output `k`'s
//! node. When matching, that chain is followed in the graph from the bound node's value
//! through the consumers reading it at the chain's input slots with the chain's op types;
//! every node reached is a candidate for output `k`, tried in graph consumer order, its cone
//! bound against what is bound already. The first candidate whose cone binds (and whose later
//! outputs bind) wins. Op nodes of one match are distinct graph nodes.

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use crate::anchor::OutAnchor;
use crate::graph::{Graph, NodeId};

use super::{describe, BindState, Local, PatternSet, Place, Pred, Rule};

/// One step of a search path: the pattern node reached, and its input slot that reads the
/// previous node's output `out`.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    local: usize,
    slot: usize,
    out: i32,
}

/// How a further output is found: from pattern node `from` (bound by the outputs before it)
/// through `steps` to the output's node (no steps: the earlier outputs bind it).
#[derive(Clone, Debug)]
pub(crate) struct SearchPath {
    from: usize,
    steps: Vec<Step>,
}

/// The pattern nodes `t` reads, transitively, and `t`.
fn cone(nodes: &[Local], t: usize, into: &mut FxHashSet<usize>) {
    let mut stack = vec![t];
    while let Some(n) = stack.pop() {
        if into.insert(n) {
            stack.extend(nodes[n].inputs.iter().flatten().map(|&(c, _)| c));
        }
    }
}

/// The search path of every output after the first; an error when an output shares no
/// pattern node with the outputs before it (nothing to find it from).
pub(crate) fn search_paths(
    nodes: &[Local],
    outputs: &[(usize, i32)],
) -> Result<Vec<SearchPath>, String> {
    let mut bound = FxHashSet::default();
    let mut paths = Vec::with_capacity(outputs.len().saturating_sub(1));
    for (k, &(t, _)) in outputs.iter().enumerate() {
        if k > 0 {
            paths.push(path_to(nodes, &bound, t).ok_or_else(|| {
                format!(
                    "output {k} ({}) shares no node with the outputs before it",
                    describe(&nodes[t])
                )
            })?);
        }
        cone(nodes, t, &mut bound);
    }
    Ok(paths)
}

/// The nearest node of `bound` below `t` and the readers from it up to `t`.
fn path_to(nodes: &[Local], bound: &FxHashSet<usize>, t: usize) -> Option<SearchPath> {
    if bound.contains(&t) {
        return Some(SearchPath {
            from: t,
            steps: Vec::new(),
        });
    }
    // Breadth first over inputs; `via[c] = (reader, slot, out)` the first edge that reached c.
    let mut via: Vec<Option<(usize, usize, i32)>> = vec![None; nodes.len()];
    let mut seen = FxHashSet::default();
    seen.insert(t);
    let mut queue = std::collections::VecDeque::from([t]);
    while let Some(n) = queue.pop_front() {
        for (slot, inp) in nodes[n].inputs.iter().enumerate() {
            let Some((c, out)) = *inp else { continue };
            if !seen.insert(c) {
                continue;
            }
            via[c] = Some((n, slot, out));
            if bound.contains(&c) {
                let mut steps = Vec::new();
                let mut at = c;
                while let Some((reader, slot, out)) = via[at] {
                    steps.push(Step {
                        local: reader,
                        slot,
                        out,
                    });
                    at = reader;
                }
                return Some(SearchPath { from: c, steps });
            }
            queue.push_back(c);
        }
    }
    None
}

/// Bind the outputs after the first of `rule` on top of `st` (the root's cone bound).
pub(crate) fn bind_outputs<'r>(
    set: &PatternSet,
    g: &Graph,
    rule: &'r Rule,
    st: BindState<'r>,
) -> Result<BindState<'r>, String> {
    let st = bind_from(set, g, rule, 1, st)?;
    // One graph node per pattern op node.
    let mut ops: SmallVec<[NodeId; 8]> = rule
        .nodes
        .iter()
        .zip(&st.nodes)
        .filter(|(l, _)| matches!(l.pred, Pred::Op(..)))
        .filter_map(|(_, n)| *n)
        .collect();
    ops.sort_unstable();
    if ops.windows(2).any(|w| w[0] == w[1]) {
        return Err("two op nodes of the pattern match one graph node".into());
    }
    Ok(st)
}

/// Bind outputs `k..` on top of `st`, trying the candidates of output `k` in order.
fn bind_from<'r>(
    set: &PatternSet,
    g: &Graph,
    rule: &'r Rule,
    k: usize,
    st: BindState<'r>,
) -> Result<BindState<'r>, String> {
    let Some(&(t, out)) = rule.outputs.get(k) else {
        return Ok(st);
    };
    if let Some(n) = st.nodes[t] {
        let has = g
            .node(n)
            .map(|node| (out.max(0) as usize) < node.num_out_data());
        if has != Ok(true) {
            return Err(format!(
                "output {k}: {} has no output {out}",
                describe(&rule.nodes[t])
            ));
        }
        return bind_from(set, g, rule, k + 1, st);
    }
    let candidates = candidates(g, rule, &rule.paths[k - 1], &st);
    let mut last = format!(
        "output {k}: no node reads the match as {} does",
        describe(&rule.nodes[t])
    );
    for c in candidates {
        let mut trial = st.clone();
        let v = OutAnchor::data(c, out.max(0) as usize);
        let bound = set
            .bind_node(g, rule, t, v, Place::Output(k), &mut trial)
            .and_then(|()| bind_from(set, g, rule, k + 1, trial));
        match bound {
            Ok(done) => return Ok(done),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The graph nodes `path` reaches from the value its start node is bound to, in consumer
/// order, without repeats.
fn candidates(g: &Graph, rule: &Rule, path: &SearchPath, st: &BindState<'_>) -> Vec<NodeId> {
    let start = &rule.nodes[path.from];
    let mut frontier: Vec<OutAnchor> = Vec::new();
    match (&start.pred, path.steps.first()) {
        (_, None) => return Vec::new(),
        (Pred::Any, _) => frontier.extend(st.capture(&start.name)),
        (_, Some(first)) => frontier
            .extend(st.nodes[path.from].map(|n| OutAnchor::data(n, first.out.max(0) as usize))),
    }
    let mut reached: Vec<NodeId> = Vec::new();
    for (i, step) in path.steps.iter().enumerate() {
        let Pred::Op(ty, _) = &rule.nodes[step.local].pred else {
            return Vec::new();
        };
        reached.clear();
        for v in &frontier {
            let Ok(node) = g.node(v.node) else { continue };
            for reader in node.out_data_peers(v.index.max(0) as usize) {
                let hit = usize::try_from(reader.index) == Ok(step.slot)
                    && g.node(reader.node).is_ok_and(|r| r.op_type() == ty)
                    && !reached.contains(&reader.node);
                if hit {
                    reached.push(reader.node);
                }
            }
        }
        if let Some(next) = path.steps.get(i + 1) {
            frontier = reached
                .iter()
                .map(|&n| OutAnchor::data(n, next.out.max(0) as usize))
                .collect();
        }
    }
    reached
}
