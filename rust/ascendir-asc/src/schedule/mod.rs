//! Scheduling: a HintGraph becomes one ImplGraph per tiling case and template.
//!
//! Pipeline: merge contiguous loop axes, compute and merge the tiling groups, build
//! the tiling cases, and for each case tile-split, choose and order the vectorized axes,
//! merge and block-split the outer axes, reorder `sched.axis`, compute vectorized strides
//! (32-byte aligned where needed), set the loop axis, attach temporary buffers; then derive
//! the unaligned template where valid and run the UB allocator on every result.

mod case;
mod cases;
pub mod group;
mod merge;
mod pad;
mod rcore;
mod twin;

pub use case::{schedule_case, vectorized_strides, Template};
use case::{set_sched_axes, set_vectorized_strides, unaligned_valid, view_contiguous};
use cases::reduce_nodes;
pub use cases::tiling_cases;
pub use merge::merge_contiguous_axes;
use merge::view_pos;
pub use rcore::ATOMIC_ATTR;
pub use twin::{rename_for_twin, structure_key, TwinSource};

use crate::alloc::{allocate, AllocOptions};
use crate::axis::AxisId;
use crate::error::{AscError, AscResult};
use crate::expr::{Expr, TriBool};
use crate::graph::{AscGraph, ComputeType, GraphType, NodeId, Tensor};
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
    hint.validate()?;
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
