//! The contiguous-axis merge (GE's `MergeContinuousAxis`): runs of adjacent loop axes that are
//! contiguous in every view become one ORIGINAL axis.

use rustc_hash::FxHashMap;

use super::group::node_group;
use crate::axis::{AxisId, AxisType};
use crate::error::AscResult;
use crate::expr::{Expr, TriBool};
use crate::graph::{AscGraph, ComputeType, Tensor};

use super::{err, hint_loop_axes, is_const};

pub(super) fn view_pos(t: &Tensor, a: AxisId) -> Option<usize> {
    t.axis.iter().position(|x| *x == a)
}

/// Merge runs of adjacent loop axes that are contiguous in every view (GE's
/// `MergeContinuousAxis`); merged axes become ORIGINAL axes and ids are renumbered to the
/// loop order.
pub fn merge_contiguous_axes(g: &AscGraph) -> AscResult<AscGraph> {
    let l = hint_loop_axes(g)?;
    let mut keep = vec![true; l.len().saturating_sub(1)];
    for node in g.nodes() {
        let ct = node.attr.api.compute_type;
        if ct == ComputeType::Concat || ct == ComputeType::Split {
            if let Ok(grp) = node_group(g, node, &l) {
                if let Some(first_n) = grp.n.first() {
                    if let Some(p) = l.iter().position(|a| a == first_n) {
                        if p > 0 {
                            keep[p - 1] = false;
                        }
                    }
                }
            }
        }
        if ct == ComputeType::Load {
            if let Some(t) = node.outputs.first() {
                if let Some(p) = (0..t.axis.len())
                    .rev()
                    .find(|&p| !is_const(&t.strides[p], 0))
                {
                    if !is_const(&t.strides[p], 1) {
                        if let Some(lp) = l.iter().position(|a| *a == t.axis[p]) {
                            if lp > 0 {
                                keep[lp - 1] = false;
                            }
                        }
                    }
                }
            }
        }
        for t in &node.outputs {
            if t.axis.is_empty() && !node.is_compute() {
                continue;
            }
            for (k, kp) in keep.iter_mut().enumerate() {
                if !*kp {
                    continue;
                }
                let (a, b) = (l[k], l[k + 1]);
                let ok = match (view_pos(t, a), view_pos(t, b)) {
                    (Some(pa), Some(pb)) if pb == pa + 1 => {
                        // Both entries whole (or both collapsed) so that the merged entry is
                        // again whole (or collapsed), and contiguous.
                        let full = |p: usize, ax: AxisId| {
                            g.find_axis(ax).is_some_and(|x| {
                                Expr::static_eq(&t.repeats[p], &x.size) == TriBool::True
                            })
                        };
                        let shape_ok = (full(pa, a) && full(pb, b))
                            || (is_const(&t.repeats[pa], 1) && is_const(&t.repeats[pb], 1));
                        shape_ok
                            && Expr::static_eq(
                                &t.strides[pa],
                                &Expr::mul(&t.strides[pb], &t.repeats[pb]),
                            ) == TriBool::True
                    }
                    (None, None) => !node.is_compute(),
                    _ => false,
                };
                if !ok {
                    *kp = false;
                }
            }
        }
    }
    // Runs of loop positions.
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for p in 0..l.len() {
        if p > 0 && keep[p - 1] {
            if let Some(last) = runs.last_mut() {
                last.push(p);
                continue;
            }
        }
        runs.push(vec![p]);
    }
    let mut out = g.clone();
    let loop_runs = runs.len();
    let mut new_axes = Vec::with_capacity(runs.len());
    let mut map: FxHashMap<AxisId, usize> = FxHashMap::default();
    for (ni, run) in runs.iter().enumerate() {
        let olds: Vec<&crate::axis::Axis> = run
            .iter()
            .map(|&p| g.axis_checked(l[p]))
            .collect::<AscResult<_>>()?;
        let name: String = olds.iter().map(|a| a.name.as_str()).collect();
        let size = Expr::product(olds.iter().map(|a| &a.size));
        let mut ax = crate::axis::Axis::new(ni as AxisId, &name, AxisType::Original, size);
        if olds.len() == 1 {
            ax.align = olds[0].align.clone();
            ax.allow_unaligned_tail = olds[0].allow_unaligned_tail;
            ax.allow_oversize_axis = olds[0].allow_oversize_axis;
        }
        new_axes.push(ax);
        for &p in run {
            map.insert(l[p], ni);
        }
    }
    // Axes that are not loop axes in the views of buffer nodes (the gathered axis of a
    // Gather's params) are kept after the loop axes; a compute node may not have any.
    for node in g.nodes().iter().filter(|n| !n.is_compute()) {
        for t in &node.outputs {
            for a in &t.axis {
                if !map.contains_key(a) && !l.contains(a) {
                    let old = g.axis_checked(*a)?;
                    let ni = new_axes.len();
                    let mut ax = crate::axis::Axis::new(
                        ni as AxisId,
                        &old.name,
                        AxisType::Original,
                        old.size.clone(),
                    );
                    ax.align = old.align.clone();
                    new_axes.push(ax);
                    map.insert(*a, ni);
                    runs.push(Vec::new());
                }
            }
        }
    }
    for node in out.nodes.iter_mut() {
        if !node.attr.sched.axis.is_empty() {
            node.attr.sched.axis = (0..loop_runs).map(|i| i as AxisId).collect();
        }
        for t in node.outputs.iter_mut() {
            let mut axis = Vec::new();
            let mut reps = Vec::new();
            let mut strides = Vec::new();
            let mut k = 0;
            while k < t.axis.len() {
                let a = t.axis[k];
                let ni = match map.get(&a) {
                    Some(v) => *v,
                    None => {
                        return err(format!(
                            "graph '{}': node '{}' has axis {} in a view but not in the loop axes",
                            g.name, node.name, a
                        ))
                    }
                };
                let run_len = runs[ni].len().max(1);
                let end = (k + run_len).min(t.axis.len());
                let members = &t.axis[k..end];
                if run_len > 1
                    && members.len() == run_len
                    && members.iter().all(|m| map.get(m) == Some(&ni))
                {
                    axis.push(ni as AxisId);
                    reps.push(Expr::product(t.repeats[k..end].iter()));
                    strides.push(t.strides[end - 1].clone());
                    k = end;
                } else if run_len > 1 {
                    return err(format!(
                        "graph '{}': view of node '{}' is not contiguous over merged axes",
                        g.name, node.name
                    ));
                } else {
                    axis.push(ni as AxisId);
                    reps.push(t.repeats[k].clone());
                    strides.push(t.strides[k].clone());
                    k += 1;
                }
            }
            t.axis = axis;
            t.repeats = reps;
            t.strides = strides;
            t.vectorized_axis = t
                .vectorized_axis
                .iter()
                .filter_map(|a| map.get(a).map(|v| *v as AxisId))
                .fold(Vec::new(), |mut v, a| {
                    if !v.contains(&a) {
                        v.push(a);
                    }
                    v
                });
            t.vectorized_strides.clear();
        }
    }
    out.axes = new_axes;
    out.log.clear();
    out.trans_info.clear();
    out.axis_map.clear();
    Ok(out)
}
