//! One tiling case into an ImplGraph: tile and block splits, the vectorized axes and their
//! strides (aligned or not), the loop axis and scheduled order, and whether the unaligned template
//! applies.

use super::group::AxisGroup;
use super::{pad, view_pos};
use crate::axis::{AxisId, AxisType};
use crate::error::AscResult;
use crate::expr::{Expr, TriBool};
use crate::graph::{AscGraph, ComputeType, GraphType, Node, NodeId, Tensor};

use super::{compute_nodes, dtype_size, err, hint_loop_axes, is_const, TilingCase};

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
pub(super) fn view_contiguous(t: &Tensor, vect: &[AxisId]) -> bool {
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
    hoist_invariants(&mut g)?;
    Ok(g)
}

/// Execution order in three runs: the loop-invariant prelude, the innermost loop's body, then
/// the rest. A node whose loop is outside the innermost one (a Load of a reduced row's value,
/// say) and that reads nothing from a deeper loop runs before that loop starts; a node of the
/// innermost loop that reads nothing computed after it (a Store of a value the reduction reads)
/// runs inside it. Placed between them otherwise, the node would split the loop in two, and a
/// tile the first loop wrote (its last tile only) would be read by the second. The nodes keep
/// their order within each run; a graph whose order already has this form is untouched.
fn hoist_invariants(g: &mut AscGraph) -> AscResult<()> {
    let order = crate::alloc::exec_order(g)?;
    let n = g.node_count();
    let depth: Vec<Option<usize>> = g.nodes().iter().map(|x| x.loop_depth()).collect();
    let Some(max) = depth.iter().flatten().max().copied() else {
        return Ok(());
    };
    // `reach`: the deepest loop among a node and its ancestors; `late`: the node or an
    // ancestor reads a value of a loop deeper than its own (it runs after that loop).
    let mut reach: Vec<Option<usize>> = vec![None; n];
    let mut late = vec![false; n];
    let mut run = vec![0u8; n];
    for &i in &order {
        let node = &g.nodes()[i.index()];
        let srcs = || node.inputs.iter().flatten().map(|r| r.node.index());
        let up = srcs().filter_map(|k| reach[k]).max();
        let k = i.index();
        late[k] = matches!((up, depth[k]), (Some(a), Some(d)) if a > d) || srcs().any(|s| late[s]);
        reach[k] = up.max(depth[k]);
        run[k] = match (late[k], reach[k].is_some_and(|r| r == max)) {
            (true, _) => 2,
            (false, true) => 1,
            (false, false) => 0,
        };
    }
    let mut new = order.clone();
    new.sort_by_key(|i| run[i.index()]);
    let compute = |o: &[NodeId]| -> Vec<NodeId> {
        o.iter()
            .copied()
            .filter(|i| g.nodes()[i.index()].is_compute())
            .collect()
    };
    if compute(&new) == compute(&order) {
        return Ok(());
    }
    for (p, i) in new.iter().enumerate() {
        g.nodes[i.index()].attr.sched.exec_order = p as i64;
    }
    Ok(())
}

/// Replace the sched axes of `node` (after its splits and merges) by `sched`, the same axes in
/// scheduled order; an error names the node when they are not the same set.
pub(super) fn set_sched_axes(node: &mut Node, case: &str, sched: Vec<AxisId>) -> AscResult<()> {
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

pub(super) fn set_vectorized_strides(g: &mut AscGraph, cn: &[NodeId], aligned: bool) {
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
        // An axis an input is collapsed on (repeat 1, stride 0) is no loop of the node when
        // its outputs are collapsed on it too: the node then runs once per outer tile (after a
        // reduce). A Broadcast expands such an axis: its output tile spans the axis' tile, so
        // it runs in that axis' loop (hoisted out of it, its tile would be the whole axis).
        let out_collapsed = |a: &AxisId| {
            node.outputs.iter().all(|t| {
                t.axis
                    .iter()
                    .position(|x| x == a)
                    .is_none_or(|p| is_const(&t.repeats[p], 1) && is_const(&t.strides[p], 0))
            })
        };
        let mut collapsed: Vec<AxisId> = Vec::new();
        if has_reduce {
            for i in 0..node.inputs.len() {
                if let Some(t) = g.input_tensor(*n, i) {
                    for (p, a) in t.axis.iter().enumerate() {
                        if is_const(&t.repeats[p], 1)
                            && is_const(&t.strides[p], 0)
                            && out_collapsed(a)
                        {
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
pub(super) fn unaligned_valid(base: &AscGraph, grp: &AxisGroup, general: &AscGraph) -> bool {
    let l = match hint_loop_axes(base) {
        Ok(l) => l,
        Err(_) => return false,
    };
    let tr = traits(base, grp, &l);
    let cn = compute_nodes(general);
    !tr.aligns_beyond_broadcast
        && (needs_align_views(general, &cn) || !pad::padded_producers(general, &cn).is_empty())
}
