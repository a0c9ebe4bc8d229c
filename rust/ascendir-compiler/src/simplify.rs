//! Stage 4, simplify (the part implemented so far): Identity removal, Cast-to-same-dtype
//! removal, and pruning of pure nodes whose values reach no output.

use ascendir_ir::{Graph, InAnchor, NodeId, OutAnchor};
use rustc_hash::FxHashSet;

/// What stage 4 did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimplifyStats {
    /// Identity nodes removed.
    pub identities: usize,
    /// Casts to the same dtype removed.
    pub casts: usize,
    /// Nodes pruned because no output depends on them.
    pub pruned: usize,
}

/// Replace every use of `from` by `to` (data consumers and graph outputs).
fn forward(g: &mut Graph, from: OutAnchor, to: OutAnchor) -> Result<(), String> {
    let peers: Vec<InAnchor> = g.out_peers(from).to_vec();
    for p in peers {
        g.unlink(from, p).map_err(|e| e.to_string())?;
        g.link(to, p).map_err(|e| e.to_string())?;
    }
    g.replace_output((from.node, from.index), (to.node, to.index))
        .map_err(|e| e.to_string())
}

fn is_noop(g: &Graph, id: NodeId) -> Option<bool> {
    let n = g.node(id).ok()?;
    let op = n.op();
    if n.num_out_data() != 1 || n.in_data_peer(0).is_none() || !n.in_control_peers().is_empty() {
        return None;
    }
    match op.op_type() {
        "Identity" => Some(true),
        "Cast" => {
            let a = op.inputs().first()?.desc.dtype;
            let b = op.outputs().first()?.desc.dtype;
            (a == b && n.num_in_data() == 1).then_some(false)
        }
        _ => None,
    }
}

/// Run stage 4 on `g` (which must not be the caller's graph).
pub fn simplify(g: &mut Graph) -> Result<SimplifyStats, String> {
    let mut st = SimplifyStats::default();
    let ids: Vec<NodeId> = g.node_ids().collect();
    for id in ids {
        let Some(identity) = is_noop(g, id) else {
            continue;
        };
        let src = g
            .node(id)
            .ok()
            .and_then(|n| n.in_data_peer(0))
            .ok_or("no input")?;
        if !g
            .out_control_nodes(id)
            .map_err(|e| e.to_string())?
            .is_empty()
        {
            continue;
        }
        forward(g, OutAnchor::data(id, 0), src)?;
        g.erase_node(id).map_err(|e| e.to_string())?;
        if identity {
            st.identities += 1;
        } else {
            st.casts += 1;
        }
    }
    // Prune pure (lowerable or constant) nodes that reach no output.
    let Some(net) = g.net_output() else {
        return Ok(st);
    };
    let mut live: FxHashSet<NodeId> = FxHashSet::default();
    let mut stack = vec![net];
    stack.extend(g.targets().iter().copied());
    stack.extend(g.outputs().iter().map(|o| o.0));
    while let Some(n) = stack.pop() {
        if !live.insert(n) {
            continue;
        }
        stack.extend(g.predecessors(n));
    }
    let dead: Vec<NodeId> = g
        .node_ids()
        .filter(|id| !live.contains(id))
        .filter(|id| {
            g.op(*id).is_ok_and(|o| {
                o.subgraph_instance_names().is_empty()
                    && (matches!(o.op_type(), "Const" | "Constant")
                        || crate::lower::lookup(o.op_type()).is_some())
            })
        })
        .collect();
    // A dead node that is kept (a barrier) keeps its inputs: pruning the constants it reads
    // would leave its required inputs unconnected. Walk back from every pruned node that feeds
    // a kept one; each node leaves the set once.
    let mut pruned: FxHashSet<NodeId> = dead.iter().copied().collect();
    let mut keep: Vec<NodeId> = dead
        .iter()
        .copied()
        .filter(|&id| g.successors(id).any(|s| !pruned.contains(&s)))
        .collect();
    while let Some(id) = keep.pop() {
        if pruned.remove(&id) {
            keep.extend(g.predecessors(id).filter(|p| pruned.contains(p)));
        }
    }
    for id in dead.into_iter().filter(|id| pruned.contains(id)) {
        g.erase_node(id).map_err(|e| e.to_string())?;
        st.pruned += 1;
    }
    Ok(st)
}
