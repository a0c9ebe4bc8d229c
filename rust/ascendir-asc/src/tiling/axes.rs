//! Base (ORIGINAL) axes of an ImplGraph: what each axis derives from, and the collapsed, reduce
//! and broadcast base axes the model orders its variables by.

use crate::axis::AxisId;
use crate::graph::{AscGraph, ComputeType};
use crate::schedule::is_const;

/// Base (ORIGINAL) axes an axis derives from.
pub fn base_of(g: &AscGraph, a: AxisId) -> Vec<AxisId> {
    let mut out = Vec::new();
    let mut stack = vec![a];
    let mut guard = 0;
    while let Some(x) = stack.pop() {
        guard += 1;
        if guard > 10_000 {
            break;
        }
        match g.find_axis(x) {
            Some(ax) if ax.from.is_empty() && !out.contains(&x) => out.push(x),
            Some(ax) if ax.from.is_empty() => {}
            Some(ax) => stack.extend(ax.from.iter().copied()),
            None => {}
        }
    }
    out
}

fn collapsed_base_axes(g: &AscGraph, t: &crate::graph::Tensor) -> Vec<AxisId> {
    let mut v = Vec::new();
    for (p, a) in t.axis.iter().enumerate() {
        if is_const(&t.repeats[p], 1) || is_const(&t.strides[p], 0) {
            let full1 = g.find_axis(*a).is_some_and(|ax| is_const(&ax.size, 1));
            if !full1 {
                v.extend(base_of(g, *a));
            }
        }
    }
    v
}

pub(super) fn reduce_base_axes(g: &AscGraph) -> Vec<AxisId> {
    let mut v = Vec::new();
    for (i, n) in g.nodes().iter().enumerate() {
        if n.attr.api.compute_type != ComputeType::Reduce {
            continue;
        }
        if let (Some(inp), Some(out)) = (
            g.input_tensor(crate::graph::NodeId(i as u32), 0),
            n.outputs.first(),
        ) {
            let ci = collapsed_base_axes(g, inp);
            for a in collapsed_base_axes(g, out) {
                if !ci.contains(&a) && !v.contains(&a) {
                    v.push(a);
                }
            }
        }
    }
    v
}

pub(super) fn broadcast_base_axes(g: &AscGraph) -> Vec<AxisId> {
    let mut v = Vec::new();
    for (i, n) in g.nodes().iter().enumerate() {
        if n.attr.api.compute_type != ComputeType::Broadcast {
            continue;
        }
        if let Some(inp) = g.input_tensor(crate::graph::NodeId(i as u32), 0) {
            for a in collapsed_base_axes(g, inp) {
                if !v.contains(&a) {
                    v.push(a);
                }
            }
        }
    }
    v
}
