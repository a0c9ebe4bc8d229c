//! The reduce-over-cores template of a reduction over every axis.
//!
//! With no kept axis there is nothing else to split over cores, so the reduce axis itself is:
//! it is tile-split in UB, its outer part (merged with the reduce axes before it) is
//! block-split, every core reduces its own range of tiles into one partial result, and the
//! Store after the reduce combines the partial results in GM with an atomic add / max / min
//! (the output must hold the identity of that operation before the kernel runs: zero for add,
//! the lowest value for max, the highest for min). Only reductions whose partial results
//! combine that way qualify: Sum, Mean (each partial is already divided by the full count),
//! Max and Min of float32, float16 or int32 values, each feeding Stores directly.

use ascendir_ir::DataType;

use super::{
    compute_nodes, err, hint_loop_axes, reduce_nodes, set_sched_axes, set_vectorized_strides,
    AscGraph, AscResult, AxisGroup, AxisId, ComputeType, GraphType, NodeId,
};
use crate::graph::AttrValue;

/// IR attribute a Store carries when it combines its value with GM atomically.
pub const ATOMIC_ATTR: &str = "atomic";

/// The Stores of `g` and the atomic operation each combines partial results with, or `None`
/// when some reduce's partial results cannot be combined in GM.
pub(super) fn atomic_stores(g: &AscGraph) -> Option<Vec<(NodeId, &'static str)>> {
    let reds = reduce_nodes(g);
    if reds.is_empty() {
        return None;
    }
    let mut stores = Vec::new();
    for r in reds {
        let node = &g.nodes()[r.index()];
        let kind = match node.op_type() {
            "Sum" | "Mean" => "add",
            "Max" => "max",
            "Min" => "min",
            _ => return None,
        };
        let dtype = node.outputs.first()?.dtype;
        let ok_type = dtype == DataType::FLOAT
            || dtype == DataType::FLOAT16
            || (dtype == DataType::INT32 && node.op_type() != "Mean");
        if !ok_type {
            return None;
        }
        for (_, c, _) in g.consumers(r) {
            let cn = &g.nodes()[c.index()];
            if cn.attr.api.compute_type != ComputeType::Store {
                return None;
            }
            stores.push((c, kind));
        }
    }
    // Every Store must take a reduce's result directly: any other Store would be written
    // once per core.
    for n in compute_nodes(g) {
        let node = &g.nodes()[n.index()];
        if node.attr.api.compute_type == ComputeType::Store && !stores.iter().any(|s| s.0 == n) {
            return None;
        }
    }
    Some(stores)
}

/// The ImplGraph that splits reduce axis `r` over tiles and cores (case name
/// `<graph>_B0R<r>_reduce_over_cores`).
pub(super) fn schedule_reduce_over_cores(
    base: &AscGraph,
    grp: &AxisGroup,
    r: AxisId,
    stores: &[(NodeId, &'static str)],
) -> AscResult<AscGraph> {
    let l = hint_loop_axes(base)?;
    let k = match grp.r.iter().position(|a| *a == r) {
        Some(k) => k,
        None => {
            return err(format!(
                "graph '{}': axis {r} is not a reduce axis",
                base.name
            ))
        }
    };
    let mut g = base.clone();
    g.graph_type = GraphType::Impl;
    g.name = format!("{}_B0R{r}_reduce_over_cores", base.name);
    let cn = compute_nodes(&g);
    let (to, ti) = g.tile_split(r, None, None)?;
    for n in &cn {
        if g.nodes()[n.index()].attr.sched.axis.contains(&r) {
            g.apply_split(*n, to, ti)?;
        }
    }
    let mut outer: Vec<AxisId> = grp.r[..k].to_vec();
    outer.push(to);
    // Vectorized: the tile inner, the later reduce axes and the never-split axes, in loop
    // (memory) order.
    let pos = |a: AxisId| l.iter().position(|x| *x == a).unwrap_or(usize::MAX);
    let mut vect: Vec<(usize, AxisId)> = vec![(pos(r), ti)];
    vect.extend(grp.r[k + 1..].iter().map(|a| (pos(*a), *a)));
    vect.extend(grp.n.iter().map(|a| (pos(*a), *a)));
    vect.sort_by_key(|v| v.0);
    let vect: Vec<AxisId> = vect.into_iter().map(|v| v.1).collect();
    let m = if outer.len() > 1 {
        g.merge_axes(&outer, None)?
    } else {
        outer[0]
    };
    let (bo, bi) = g.block_split(m, None, None)?;
    let sched: Vec<AxisId> = [bo, bi].into_iter().chain(vect.iter().copied()).collect();
    for n in &cn {
        if outer.len() > 1 {
            g.apply_sched_axis_merge(*n, m)?;
        }
        g.apply_split(*n, bo, bi)?;
        let node = &mut g.nodes[n.index()];
        set_sched_axes(node, &g.name, sched.clone())?;
        for t in node.outputs.iter_mut() {
            t.vectorized_axis = vect.clone();
        }
    }
    for n in &cn {
        crate::alloc::attach_tmp_buffer(&mut g, *n);
    }
    set_vectorized_strides(&mut g, &cn, true);
    // Nodes up to the reduce loop over the tiles of their core; the Stores run once per core,
    // after the core's last tile.
    for n in &cn {
        let is_store = stores.iter().any(|s| s.0 == *n);
        g.nodes[n.index()].attr.sched.loop_axis = if is_store { bo } else { bi };
    }
    for (s, kind) in stores {
        g.nodes[s.index()]
            .attr
            .ir_attr
            .insert(ATOMIC_ATTR.to_string(), AttrValue::Str((*kind).to_string()));
    }
    Ok(g)
}
