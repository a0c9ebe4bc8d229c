//! The tiling cases of a graph: which axis of each tiling group is tile-split, and whether the
//! reduce axes stay whole in UB.

use super::group::AxisGroup;
use super::view_pos;
use crate::axis::AxisId;
use crate::error::AscResult;
use crate::graph::{AscGraph, ComputeType, NodeId};

use super::{compute_nodes, err, is_const, ScheduleOptions, TilingCase};

pub(super) fn reduce_nodes(g: &AscGraph) -> Vec<NodeId> {
    compute_nodes(g)
        .into_iter()
        .filter(|n| g.nodes()[n.index()].attr.api.compute_type == ComputeType::Reduce)
        .collect()
}

/// Whether splitting the reduce axes is valid: every node after a reduce is collapsed on them.
fn split_reduce_valid(g: &AscGraph, r: &[AxisId]) -> bool {
    let reds = reduce_nodes(g);
    if reds.is_empty() {
        return true;
    }
    // An arg-reduction keeps no value to compare the next tile's partial result with.
    if reds
        .iter()
        .any(|n| matches!(g.nodes()[n.index()].op_type(), "ArgMax" | "ArgMin"))
    {
        return false;
    }
    // Downstream of any reduce.
    let mut down = vec![false; g.node_count()];
    for rn in &reds {
        down[rn.index()] = true;
    }
    let order = match g.topo_order() {
        Ok(o) => o,
        Err(_) => return false,
    };
    for n in &order {
        let node = &g.nodes()[n.index()];
        if node.inputs.iter().flatten().any(|i| down[i.node.index()]) {
            down[n.index()] = true;
        }
    }
    for n in order {
        let node = &g.nodes()[n.index()];
        if !down[n.index()] || !node.is_compute() {
            continue;
        }
        for t in &node.outputs {
            for a in r {
                if let Some(p) = view_pos(t, *a) {
                    if !(is_const(&t.repeats[p], 1) || is_const(&t.strides[p], 0)) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// The tiling cases of a graph with merged group `grp`.
pub fn tiling_cases(
    g: &AscGraph,
    grp: &AxisGroup,
    opts: &ScheduleOptions,
) -> AscResult<Vec<TilingCase>> {
    let opt = |v: &[AxisId]| -> Vec<Option<AxisId>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().map(|a| Some(*a)).collect()
        }
    };
    let mut cases = Vec::new();
    let has_r = !grp.r.is_empty();
    let split_ok = !has_r || split_reduce_valid(g, &grp.r);
    for x in opt(&grp.x) {
        for y in opt(&grp.y) {
            if split_ok {
                for r in opt(&grp.r) {
                    cases.push((x, y, r, false));
                }
            }
            if has_r && opts.all_load_reduce {
                cases.push((x, y, None, true));
            }
        }
    }
    let size1 = |a: Option<AxisId>| {
        a.and_then(|a| g.find_axis(a))
            .is_some_and(|ax| is_const(&ax.size, 1))
    };
    let pruned: Vec<_> = cases
        .iter()
        .filter(|(x, y, r, _)| !(size1(*x) || size1(*y) || size1(*r)))
        .cloned()
        .collect();
    let cases = if pruned.is_empty() { cases } else { pruned };
    if cases.is_empty() {
        return err(format!("graph '{}' has no tiling case", g.name));
    }
    Ok(cases
        .into_iter()
        .map(|(x, y, r, all_load)| {
            let mut name = format!("{}_B0", g.name);
            if let Some(x) = x {
                name.push_str(&format!("X{x}"));
            }
            if let Some(y) = y {
                name.push_str(&format!("Y{y}"));
            }
            if let Some(r) = r {
                name.push_str(&format!("R{r}"));
            }
            TilingCase {
                name,
                x,
                y,
                r,
                all_load,
            }
        })
        .collect())
}
