//! Scheduling: a HintGraph becomes one ImplGraph per tiling case and template.
//!
//! Pipeline (spec §5): merge contiguous loop axes, compute and merge the tiling groups, build
//! the tiling cases, and for each case tile-split, choose and order the vectorized axes,
//! merge and block-split the outer axes, reorder `sched.axis`, compute vectorized strides
//! (32-byte aligned where needed), set the loop axis, attach temporary buffers; then derive
//! the unaligned template where valid and run the UB allocator on every result.

pub mod group;
mod pad;
mod rcore;

pub use rcore::ATOMIC_ATTR;

use rustc_hash::FxHashMap;

use crate::alloc::{allocate, AllocOptions};
use crate::axis::{AxisId, AxisType};
use crate::error::{AscError, AscResult};
use crate::expr::{Expr, TriBool};
use crate::graph::{AscGraph, ComputeType, GraphType, Node, NodeId, Tensor};
use group::{merge_groups, node_group, AxisGroup};

/// Options of [`schedule`] (GE's `AutofuserOptions`).
#[derive(Clone, Debug)]
pub struct ScheduleOptions {
    /// Merge contiguous loop axes first (GE's `MergeContinuousAxis`).
    pub merge_contiguous_axes: bool,
    /// Also emit the unaligned template where it is valid.
    pub unaligned_template: bool,
    /// Also emit the all-load reduce template (reduce axes entirely in UB).
    pub all_load_reduce: bool,
    /// Also emit the reduce-over-cores template for a reduction over every axis (partial
    /// results per core combined by atomic Stores).
    pub reduce_over_cores: bool,
    /// Run the UB allocator on every ImplGraph.
    pub allocate: bool,
    /// Allocator options (queue limit).
    pub alloc: AllocOptions,
}

impl Default for ScheduleOptions {
    fn default() -> ScheduleOptions {
        ScheduleOptions {
            merge_contiguous_axes: true,
            unaligned_template: true,
            all_load_reduce: true,
            reduce_over_cores: true,
            allocate: true,
            alloc: AllocOptions::default(),
        }
    }
}

/// One tiling case: the axis tile-split in each group (`None` = group empty) and whether the
/// reduce axes are kept whole in UB (all-load).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingCase {
    /// Case name `<graph>_B0[X<x>][Y<y>][R<r>]`.
    pub name: String,
    /// Split axis of the x group.
    pub x: Option<AxisId>,
    /// Split axis of the y group.
    pub y: Option<AxisId>,
    /// Split axis of the r group.
    pub r: Option<AxisId>,
    /// Reduce axes entirely in UB (r group moved to n).
    pub all_load: bool,
}

fn err<T>(msg: impl Into<String>) -> AscResult<T> {
    Err(AscError::InvalidArgument(msg.into()))
}

pub(crate) fn is_const(e: &Expr, v: i64) -> bool {
    Expr::static_eq(e, &Expr::int(v)) == TriBool::True
}

pub(crate) fn dtype_size(t: &Tensor) -> i64 {
    t.dtype
        .bit_width()
        .map(|b| ((b as i64 + 7) / 8).max(1))
        .unwrap_or(1)
}

fn compute_nodes(g: &AscGraph) -> Vec<NodeId> {
    g.node_ids()
        .filter(|n| g.nodes()[n.index()].is_compute())
        .collect()
}

/// The loop axes of the HintGraph (the `sched.axis` shared by every compute node).
pub fn hint_loop_axes(g: &AscGraph) -> AscResult<Vec<AxisId>> {
    let cn = compute_nodes(g);
    let first = match cn.first() {
        Some(n) => *n,
        None => {
            return err(format!(
                "graph '{}' has no compute node to schedule",
                g.name
            ))
        }
    };
    let l = g.nodes()[first.index()].attr.sched.axis.clone();
    if l.is_empty() {
        return err(format!(
            "graph '{}': node '{}' has no sched.axis",
            g.name,
            g.nodes()[first.index()].name
        ));
    }
    for n in &cn {
        let node = &g.nodes()[n.index()];
        if node.attr.sched.axis != l {
            return err(format!(
                "graph '{}': node '{}' loops over {:?} but node '{}' over {:?}; a HintGraph has one set of loop axes",
                g.name,
                node.name,
                node.attr.sched.axis,
                g.nodes()[first.index()].name,
                l
            ));
        }
        for (i, inp) in node.inputs.iter().enumerate() {
            if inp.is_none() {
                return err(format!(
                    "graph '{}': input {i} of node '{}' is not connected",
                    g.name, node.name
                ));
            }
        }
    }
    for a in &l {
        g.axis_checked(*a)?;
    }
    Ok(l)
}

/// The merged tiling group of the whole graph; the error names the nodes that disagree.
pub fn graph_group(g: &AscGraph) -> AscResult<AxisGroup> {
    let l = hint_loop_axes(g)?;
    let mut acc: Option<(AxisGroup, String)> = None;
    for n in compute_nodes(g) {
        let node = &g.nodes()[n.index()];
        let grp = node_group(g, node, &l).map_err(AscError::InvalidArgument)?;
        acc = Some(match acc {
            None => (grp, node.name.clone()),
            Some((cur, names)) => match merge_groups(&cur, &grp) {
                Some(m) => (m, names),
                None => {
                    return err(format!(
                        "graph '{}' cannot be scheduled: the tiling group of node '{}' ({:?}) does not merge with that of nodes [{}] ({:?})",
                        g.name, node.name, grp, names, cur
                    ))
                }
            },
        });
        if let Some((_, names)) = &mut acc {
            if !names.split(", ").any(|s| s == node.name) {
                names.push_str(", ");
                names.push_str(&node.name);
            }
        }
    }
    Ok(acc.map(|a| a.0).unwrap_or_default())
}

// ----- contiguous-axis merge ----------------------------------------------------------------

fn view_pos(t: &Tensor, a: AxisId) -> Option<usize> {
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

// ----- cases ----------------------------------------------------------------------------------

fn reduce_nodes(g: &AscGraph) -> Vec<NodeId> {
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

// ----- one case -------------------------------------------------------------------------------

const ORDER_OFFSET: i64 = 1 << 20;

/// Which template a case graph is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Template {
    /// General template (aligned strides where needed).
    General,
    /// Dense vectorized strides (`_unaligned`).
    Unaligned,
}

struct GraphTraits {
    has_reduce: bool,
    reduce_last: bool,
    needs_align_ops: bool,
    /// An op other than Broadcast needs aligned strides (no unaligned template).
    aligns_beyond_broadcast: bool,
}

fn traits(g: &AscGraph, grp: &AxisGroup, l: &[AxisId]) -> GraphTraits {
    let mut t = GraphTraits {
        has_reduce: false,
        reduce_last: false,
        needs_align_ops: false,
        aligns_beyond_broadcast: false,
    };
    for n in g.nodes() {
        match n.attr.api.compute_type {
            ComputeType::Reduce => {
                t.has_reduce = true;
                t.aligns_beyond_broadcast = true;
            }
            ComputeType::Transpose
            | ComputeType::Concat
            | ComputeType::Split
            | ComputeType::Gather => t.aligns_beyond_broadcast = true,
            ComputeType::Broadcast => t.needs_align_ops = true,
            _ => {}
        }
    }
    t.needs_align_ops |= t.aligns_beyond_broadcast;
    if let Some(last) = l.last() {
        t.reduce_last = grp.r.contains(last);
    }
    t
}

/// Whether the view of `t` restricted to `vect` (nontrivial entries, in view order) is dense.
fn view_contiguous(t: &Tensor, vect: &[AxisId]) -> bool {
    let mut ents: Vec<(usize, &Expr, &Expr)> = vect
        .iter()
        .filter_map(|a| view_pos(t, *a))
        .map(|p| (p, &t.repeats[p], &t.strides[p]))
        .filter(|(_, r, s)| !is_const(r, 1) && !is_const(s, 0))
        .collect();
    ents.sort_by_key(|e| e.0);
    let n = ents.len();
    if n == 0 {
        return true;
    }
    if !is_const(ents[n - 1].2, 1) {
        return false;
    }
    for k in 0..n - 1 {
        let want = Expr::mul(ents[k + 1].1, ents[k + 1].2);
        if Expr::static_eq(ents[k].2, &want) != TriBool::True {
            return false;
        }
    }
    true
}

/// Vectorized strides of `t` over `t.vectorized_axis` (innermost first, running product; the
/// innermost non-trivial axis aligned to `32 / dtype_size` elements when `aligned`).
pub fn vectorized_strides(t: &Tensor, aligned: bool, block: i64) -> Vec<Expr> {
    let mut out = vec![Expr::int(0); t.vectorized_axis.len()];
    let mut p = Expr::int(1);
    let mut first = true;
    let elems = (block / dtype_size(t)).max(1);
    for k in (0..t.vectorized_axis.len()).rev() {
        let a = t.vectorized_axis[k];
        let (r, s) = match view_pos(t, a) {
            Some(pos) => (t.repeats[pos].clone(), t.strides[pos].clone()),
            None => (Expr::int(1), Expr::int(0)),
        };
        if is_const(&s, 0) || is_const(&r, 1) {
            continue;
        }
        out[k] = p.clone();
        let grow = if first && aligned {
            Expr::align(&r, &Expr::int(elems))
        } else {
            r
        };
        first = false;
        p = Expr::mul(&p, &grow);
    }
    out
}

/// Build the ImplGraph of one tiling case (no allocation, tiling_key unset).
pub fn schedule_case(
    base: &AscGraph,
    grp: &AxisGroup,
    case: &TilingCase,
    template: Template,
) -> AscResult<AscGraph> {
    let l = hint_loop_axes(base)?;
    let tr = traits(base, grp, &l);
    let mut g = base.clone();
    g.graph_type = GraphType::Impl;
    g.name = match template {
        Template::General => case.name.clone(),
        Template::Unaligned => format!("{}_unaligned", case.name),
    };
    let cn = compute_nodes(&g);
    let pos = |a: AxisId| l.iter().position(|x| *x == a).unwrap_or(0) as i64;
    let r_set: Vec<AxisId> = grp.r.clone();
    let mut n_axes = grp.n.clone();
    let r_groups: Vec<AxisId> = if case.all_load {
        for a in &grp.r {
            if !n_axes.contains(a) {
                n_axes.push(*a);
            }
        }
        Vec::new()
    } else {
        grp.r.clone()
    };
    let key = |a_base: AxisId| -> i64 {
        let k = pos(a_base);
        if !tr.has_reduce {
            return k;
        }
        let is_r = r_set.contains(&a_base);
        if tr.reduce_last == is_r {
            k + ORDER_OFFSET
        } else {
            k
        }
    };
    let mut vect: Vec<(i64, AxisId)> = Vec::new();
    let mut nonred_outer: Vec<AxisId> = Vec::new();
    let mut red_outer: Vec<AxisId> = Vec::new();
    let groups: [(&Vec<AxisId>, Option<AxisId>, bool); 3] = [
        (&grp.x, case.x, false),
        (&grp.y, case.y, false),
        (&r_groups, case.r, true),
    ];
    for (axes, chosen, is_r) in groups {
        let ch = match chosen {
            Some(c) => c,
            None => continue,
        };
        let k = match axes.iter().position(|a| *a == ch) {
            Some(k) => k,
            None => {
                return err(format!(
                    "case '{}': axis {ch} is not in its group",
                    case.name
                ))
            }
        };
        let (to, ti) = g.tile_split(ch, None, None)?;
        for n in &cn {
            if g.nodes()[n.index()].attr.sched.axis.contains(&ch) {
                g.apply_split(*n, to, ti)?;
            }
        }
        let outer = if is_r {
            &mut red_outer
        } else {
            &mut nonred_outer
        };
        outer.extend_from_slice(&axes[..k]);
        outer.push(to);
        vect.push((key(ch), ti));
        for a in &axes[k + 1..] {
            vect.push((key(*a), *a));
        }
    }
    for a in &n_axes {
        vect.push((key(*a), *a));
    }
    vect.sort_by_key(|v| v.0);
    let vect: Vec<AxisId> = vect.into_iter().map(|v| v.1).collect();
    if nonred_outer.is_empty() {
        return err(format!(
            "case '{}': no non-reduce axis to split over cores (a full reduction needs the R-over-cores template, which is not implemented)",
            case.name
        ));
    }
    let m = if nonred_outer.len() > 1 {
        g.merge_axes(&nonred_outer, None)?
    } else {
        nonred_outer[0]
    };
    let (bo, bi) = g.block_split(m, None, None)?;
    let rm = match red_outer.len() {
        0 => None,
        1 => Some(red_outer[0]),
        _ => Some(g.merge_axes(&red_outer, None)?),
    };
    for n in &cn {
        if nonred_outer.len() > 1 {
            g.apply_sched_axis_merge(*n, m)?;
        }
        g.apply_split(*n, bo, bi)?;
        if red_outer.len() > 1 {
            if let Some(rm) = rm {
                g.apply_sched_axis_merge(*n, rm)?;
            }
        }
        let mut sched = vec![bo, bi];
        if let Some(rm) = rm {
            sched.push(rm);
        }
        sched.extend_from_slice(&vect);
        let node = &mut g.nodes[n.index()];
        set_sched_axes(node, &case.name, sched)?;
        for t in node.outputs.iter_mut() {
            let mut v = vect.clone();
            if !tr.has_reduce {
                v.sort_by_key(|a| view_pos(t, *a).unwrap_or(usize::MAX));
            }
            t.vectorized_axis = v;
        }
    }
    for n in &cn {
        crate::alloc::attach_tmp_buffer(&mut g, *n);
    }
    // Alignment of vectorized strides: all or nothing in the general template; in the
    // unaligned one only the producers that cannot write densely, each followed by a RemovePad.
    let (aligned, padded) = match template {
        Template::Unaligned => (false, pad::insert_remove_pads(&mut g, &cn)?),
        Template::General => (tr.needs_align_ops || needs_align_views(&g, &cn), Vec::new()),
    };
    let cn = compute_nodes(&g);
    set_vectorized_strides_by(&mut g, &cn, |n| aligned || padded.contains(&n));
    set_loop_axes(&mut g, &cn, tr.has_reduce)?;
    Ok(g)
}

/// Replace the sched axes of `node` (after its splits and merges) by `sched`, the same axes in
/// scheduled order; an error names the node when they are not the same set.
fn set_sched_axes(node: &mut Node, case: &str, sched: Vec<AxisId>) -> AscResult<()> {
    let mut have = node.attr.sched.axis.clone();
    let mut want = sched.clone();
    have.sort_unstable();
    want.sort_unstable();
    if have != want {
        return err(format!(
            "case '{case}': node '{}' sched.axis {:?} does not match the scheduled axes {:?}",
            node.name, node.attr.sched.axis, sched
        ));
    }
    node.attr.sched.axis = sched;
    Ok(())
}

fn needs_align_views(g: &AscGraph, cn: &[NodeId]) -> bool {
    cn.iter().any(|n| {
        let node = &g.nodes()[n.index()];
        matches!(
            node.attr.api.compute_type,
            ComputeType::Load | ComputeType::Store
        ) && node
            .outputs
            .iter()
            .any(|t| !view_contiguous(t, &t.vectorized_axis))
    })
}

fn set_vectorized_strides(g: &mut AscGraph, cn: &[NodeId], aligned: bool) {
    set_vectorized_strides_by(g, cn, |_| aligned);
}

/// Vectorized strides of every output of `cn`, aligned where `aligned(producer)` says so;
/// a Store copies the strides of its input.
fn set_vectorized_strides_by(g: &mut AscGraph, cn: &[NodeId], aligned: impl Fn(NodeId) -> bool) {
    for n in cn {
        let is_store = g.nodes()[n.index()].attr.api.compute_type == ComputeType::Store;
        let input_vs = if is_store {
            let src = g.nodes()[n.index()].inputs.first().copied().flatten();
            src.and_then(|r| {
                let t = g.input_tensor(*n, 0)?;
                Some((
                    t.vectorized_axis.clone(),
                    vectorized_strides(t, aligned(r.node), 32),
                ))
            })
        } else {
            None
        };
        let aligned = aligned(*n);
        let node = &mut g.nodes[n.index()];
        for t in node.outputs.iter_mut() {
            match &input_vs {
                Some((va, vs)) => {
                    // Store copies its input's vectorized strides (matched by axis).
                    t.vectorized_strides = t
                        .vectorized_axis
                        .iter()
                        .map(|a| {
                            va.iter()
                                .position(|x| x == a)
                                .map(|p| vs[p].clone())
                                .unwrap_or_else(|| Expr::int(0))
                        })
                        .collect();
                }
                None => t.vectorized_strides = vectorized_strides(t, aligned, 32),
            }
        }
    }
}

fn set_loop_axes(g: &mut AscGraph, cn: &[NodeId], has_reduce: bool) -> AscResult<()> {
    for n in cn {
        let node = &g.nodes()[n.index()];
        let mut notloop: Vec<AxisId> = Vec::new();
        for t in &node.outputs {
            notloop.extend_from_slice(&t.vectorized_axis);
        }
        let mut collapsed: Vec<AxisId> = Vec::new();
        if has_reduce {
            for i in 0..node.inputs.len() {
                if let Some(t) = g.input_tensor(*n, i) {
                    for (p, a) in t.axis.iter().enumerate() {
                        if is_const(&t.repeats[p], 1) && is_const(&t.strides[p], 0) {
                            collapsed.push(*a);
                        }
                    }
                }
            }
        }
        let is_not_loop = |a: AxisId| -> bool { axis_not_loop(g, a, &notloop, &collapsed) };
        let la = node
            .attr
            .sched
            .axis
            .iter()
            .rev()
            .find(|a| !is_not_loop(**a))
            .copied();
        let la = match la {
            Some(a) => a,
            None => {
                return err(format!(
                    "graph '{}': node '{}' has no loop axis",
                    g.name, node.name
                ))
            }
        };
        g.nodes[n.index()].attr.sched.loop_axis = la;
    }
    Ok(())
}

fn axis_not_loop(g: &AscGraph, a: AxisId, notloop: &[AxisId], collapsed: &[AxisId]) -> bool {
    if notloop.contains(&a) {
        return true;
    }
    let ax = match g.find_axis(a) {
        Some(ax) => ax,
        None => return false,
    };
    if matches!(ax.axis_type, AxisType::BlockOuter | AxisType::BlockInner) {
        return false;
    }
    if collapsed.contains(&a) {
        return true;
    }
    !ax.from.is_empty()
        && ax
            .from
            .iter()
            .all(|f| collapsed.contains(f) || axis_not_loop(g, *f, &[], collapsed))
}

/// Whether the unaligned template is valid for an ImplGraph built with the general template:
/// the general one uses aligned strides only because of discontinuous Loads/Stores.
fn unaligned_valid(base: &AscGraph, grp: &AxisGroup, general: &AscGraph) -> bool {
    let l = match hint_loop_axes(base) {
        Ok(l) => l,
        Err(_) => return false,
    };
    let tr = traits(base, grp, &l);
    let cn = compute_nodes(general);
    !tr.aligns_beyond_broadcast
        && (needs_align_views(general, &cn) || !pad::padded_producers(general, &cn).is_empty())
}

/// The HintGraph with a size-1 ORIGINAL axis in front of every loop nest and view (repeat 1,
/// stride 0): the y group of a graph that has none (a reduction over every axis, a concat along
/// the first axis), so that the general case applies with one block (`block_dim` = 1). The
/// results are the same: the axis only adds a loop of one iteration.
fn with_unit_outer_axis(hint: &AscGraph) -> AscResult<AscGraph> {
    let mut g = hint.clone();
    let mut name = String::from("z_unit");
    while g.axes().iter().any(|a| a.name == name) {
        name.push('_');
    }
    let one = g.create_size_const(1);
    let a = g.create_axis(&name, one)?;
    for node in g.nodes.iter_mut() {
        if node.is_compute() {
            node.attr.sched.axis.insert(0, a);
        }
        for t in node.outputs.iter_mut() {
            t.axis.insert(0, a);
            t.repeats.insert(0, Expr::int(1));
            t.strides.insert(0, Expr::int(0));
        }
    }
    Ok(g)
}

/// Schedule a HintGraph into ImplGraphs (one per tiling case and template), each with its
/// `tiling_key` and (unless disabled) its UB allocation.
pub fn schedule(hint: &AscGraph, opts: &ScheduleOptions) -> AscResult<Vec<AscGraph>> {
    hint.check()?;
    let base = if opts.merge_contiguous_axes {
        merge_contiguous_axes(hint)?
    } else {
        hint.clone()
    };
    let hint_grp = graph_group(&base)?;
    let no_kept_axis = hint_grp.x.is_empty() && hint_grp.y.is_empty();
    // A reduction over every axis: besides the one-core cases below, split the reduce over
    // cores when the partial results can be combined in GM.
    let mut over_cores = Vec::new();
    if no_kept_axis && opts.reduce_over_cores {
        if let Some(stores) = rcore::atomic_stores(&base) {
            for r in &hint_grp.r {
                let size1 = base.find_axis(*r).is_some_and(|ax| is_const(&ax.size, 1));
                if !size1 {
                    over_cores.push(rcore::schedule_reduce_over_cores(
                        &base, &hint_grp, *r, &stores,
                    ));
                }
            }
        }
    }
    let (base, grp) = if no_kept_axis {
        let b = with_unit_outer_axis(&base)?;
        let grp = graph_group(&b)?;
        (b, grp)
    } else {
        (base, hint_grp)
    };
    let cases = tiling_cases(&base, &grp, opts)?;
    let mut out = Vec::new();
    let mut first_err = None;
    for g in over_cores {
        match g {
            Ok(g) => out.push(g),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    for case in &cases {
        let general = match schedule_case(&base, &grp, case, Template::General) {
            Ok(g) => g,
            Err(e) => {
                first_err.get_or_insert(e);
                continue;
            }
        };
        let unaligned = opts.unaligned_template && unaligned_valid(&base, &grp, &general);
        out.push(general);
        if unaligned {
            out.push(schedule_case(&base, &grp, case, Template::Unaligned)?);
        }
    }
    if out.is_empty() {
        return Err(first_err.unwrap_or_else(|| {
            AscError::InvalidArgument(format!("graph '{}' produced no ImplGraph", hint.name))
        }));
    }
    for (k, g) in out.iter_mut().enumerate() {
        g.tiling_key = k as i64;
        if opts.allocate {
            allocate(g, &opts.alloc)?;
        }
    }
    Ok(out)
}
