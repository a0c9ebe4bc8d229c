//! Tiling groups (GE's `AxisGroup`): which axes a compute node lets the scheduler split, and
//! the merge table that combines the groups of all nodes of a graph.

use crate::axis::AxisId;
use crate::expr::{Expr, TriBool};
use crate::graph::{AscGraph, ComputeType, Node, Tensor};

/// The axis groups of a node or graph: `x` and `y` (splittable, non-reduce), `r` (reduce) and
/// `n` (not splittable: the concat dimension, all-load reduce axes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AxisGroup {
    /// X group (transpose: the axes whose order changes on the input side).
    pub x: Vec<AxisId>,
    /// Y group (loop axes of elementwise nodes, kept axes of a reduce).
    pub y: Vec<AxisId>,
    /// R group (reduced axes).
    pub r: Vec<AxisId>,
    /// N group (never split).
    pub n: Vec<AxisId>,
}

/// The shape of a group: which of x, y, r are non-empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupKind {
    /// Nothing splittable.
    Empty,
    /// Only x.
    X,
    /// Only y.
    Y,
    /// Only r.
    R,
    /// x and y.
    XY,
    /// y and r.
    YR,
    /// x, y and r.
    XYR,
    /// x and r.
    XR,
}

impl AxisGroup {
    /// A group with only a y part.
    pub fn y(y: Vec<AxisId>) -> AxisGroup {
        AxisGroup {
            y,
            ..AxisGroup::default()
        }
    }

    /// The group's kind.
    pub fn kind(&self) -> GroupKind {
        match (!self.x.is_empty(), !self.y.is_empty(), !self.r.is_empty()) {
            (false, false, false) => GroupKind::Empty,
            (true, false, false) => GroupKind::X,
            (false, true, false) => GroupKind::Y,
            (false, false, true) => GroupKind::R,
            (true, true, false) => GroupKind::XY,
            (false, true, true) => GroupKind::YR,
            (true, true, true) => GroupKind::XYR,
            (true, false, true) => GroupKind::XR,
        }
    }

    fn remove_n(&mut self, n: &[AxisId]) {
        self.x.retain(|a| !n.contains(a));
        self.y.retain(|a| !n.contains(a));
        self.r.retain(|a| !n.contains(a));
    }
}

fn same_set(a: &[AxisId], b: &[AxisId]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

fn concat(a: &[AxisId], b: &[AxisId]) -> Vec<AxisId> {
    let mut v = a.to_vec();
    v.extend_from_slice(b);
    v
}

/// Merge two groups (GE's `MergeAxesGroup`); `None` when they cannot be fused.
pub fn merge_groups(target: &AxisGroup, src: &AxisGroup) -> Option<AxisGroup> {
    let mut n = target.n.clone();
    for a in &src.n {
        if !n.contains(a) {
            n.push(*a);
        }
    }
    let mut t = target.clone();
    let mut s = src.clone();
    t.remove_n(&n);
    s.remove_n(&n);
    t.n = n.clone();
    s.n = n;
    use GroupKind::*;
    let keep_t = Some(t.clone());
    let keep_s = Some(s.clone());
    match (t.kind(), s.kind()) {
        (Empty, _) => keep_s,
        (_, Empty) => keep_t,
        (Y, Y) if t.y == s.y => keep_t,
        (Y, YR) if t.y.len() == s.y.len() + s.r.len() && same_set(&t.y, &concat(&s.y, &s.r)) => {
            keep_s
        }
        (YR, Y) if s.y.len() == t.y.len() + t.r.len() && same_set(&s.y, &concat(&t.y, &t.r)) => {
            keep_t
        }
        (YR, YR) if t.y == s.y && t.r == s.r => keep_t,
        (Y, XY) if same_set(&t.y, &concat(&s.x, &s.y)) => keep_s,
        (XY, Y) if same_set(&s.y, &concat(&t.x, &t.y)) => keep_t,
        (XY, XY) if t.x == s.x && t.y == s.y => keep_t,
        (Y, R) if t.y == s.r => keep_s,
        (R, Y) if s.y == t.r => keep_t,
        (R, R) if t.r == s.r => keep_t,
        _ => None,
    }
}

fn is_zero(e: &Expr) -> bool {
    Expr::static_eq(e, &Expr::int(0)) == TriBool::True
}

fn is_one(e: &Expr) -> bool {
    Expr::static_eq(e, &Expr::int(1)) == TriBool::True
}

fn view_entry(t: &Tensor, a: AxisId) -> Option<(Expr, Expr)> {
    let p = t.axis.iter().position(|x| *x == a)?;
    Some((t.repeats.get(p)?.clone(), t.strides.get(p)?.clone()))
}

/// Whether axis `a` is reduced from `inp` to `out` (output stride 0 or repeat 1, input not).
pub fn is_reduced(inp: &Tensor, out: &Tensor, a: AxisId) -> bool {
    let (ir, is) = match view_entry(inp, a) {
        Some(v) => v,
        None => return false,
    };
    let (or, os) = match view_entry(out, a) {
        Some(v) => v,
        None => return true,
    };
    let out_collapsed = is_zero(&os) || is_one(&or);
    let in_collapsed = is_zero(&is) || is_one(&ir);
    out_collapsed && !in_collapsed
}

/// The tiling group of one compute node whose loop axes are `loop_axes`.
pub fn node_group(g: &AscGraph, node: &Node, loop_axes: &[AxisId]) -> Result<AxisGroup, String> {
    let ct = node.attr.api.compute_type;
    let input = |i: usize| -> Option<&Tensor> {
        let r = (*node.inputs.get(i)?)?;
        g.nodes().get(r.node.index())?.outputs.get(r.index as usize)
    };
    match ct {
        ComputeType::Reduce => {
            let (inp, out) = match (input(0), node.outputs.first()) {
                (Some(i), Some(o)) => (i, o),
                _ => {
                    return Err(format!(
                        "reduce node '{}' has no input or output",
                        node.name
                    ))
                }
            };
            let mut grp = AxisGroup::default();
            for a in loop_axes {
                if is_reduced(inp, out, *a) {
                    grp.r.push(*a);
                } else {
                    grp.y.push(*a);
                }
            }
            Ok(grp)
        }
        ComputeType::Concat | ComputeType::Split => {
            let out = match node.outputs.first() {
                Some(o) => o,
                None => return Err(format!("node '{}' has no output", node.name)),
            };
            let views: Vec<&Tensor> = if ct == ComputeType::Concat {
                (0..node.inputs.len()).filter_map(input).collect()
            } else {
                node.outputs.iter().collect()
            };
            let whole = if ct == ComputeType::Concat {
                out
            } else {
                match input(0) {
                    Some(i) => i,
                    None => return Err(format!("split node '{}' has no input", node.name)),
                }
            };
            let mut d = None;
            for (p, a) in whole.axis.iter().enumerate() {
                let wr = &whole.repeats[p];
                if views.iter().any(|v| match view_entry(v, *a) {
                    Some((r, _)) => Expr::static_eq(&r, wr) != TriBool::True,
                    None => true,
                }) {
                    d = Some(p);
                    break;
                }
            }
            let d = d.unwrap_or(whole.axis.len());
            if d == 0 {
                // Along the first axis the later axes are the same in every part: they are
                // tiled (y) while the concat axis stays whole in UB (n). A one-axis concat
                // leaves nothing to split; the scheduler then adds a unit outer axis.
                return Ok(AxisGroup {
                    y: whole.axis[1..].to_vec(),
                    n: whole.axis[..1].to_vec(),
                    ..AxisGroup::default()
                });
            }
            // The axes before and after the concat axis are the same in every part: they
            // are tiled (y) while the concat axis stays whole in UB (n).
            let mut y = whole.axis[..d].to_vec();
            y.extend_from_slice(whole.axis.get(d + 1..).unwrap_or(&[]));
            Ok(AxisGroup {
                y,
                n: whole.axis.get(d..=d).map(<[_]>::to_vec).unwrap_or_default(),
                ..AxisGroup::default()
            })
        }
        ComputeType::Transpose => {
            let (inp, out) = match (input(0), node.outputs.first()) {
                (Some(i), Some(o)) => (i, o),
                _ => {
                    return Err(format!(
                        "transpose node '{}' has no input or output",
                        node.name
                    ))
                }
            };
            Ok(transpose_group(&inp.axis, &out.axis))
        }
        _ => Ok(AxisGroup::y(loop_axes.to_vec())),
    }
}

/// GE's transpose grouping: the common tail goes to n, then x / y by walking outward.
pub fn transpose_group(i_axes: &[AxisId], o_axes: &[AxisId]) -> AxisGroup {
    let mut grp = AxisGroup::default();
    let len = i_axes.len().min(o_axes.len());
    let mut i = len;
    while i > 0 && i_axes[i - 1] == o_axes[i - 1] {
        grp.n.insert(0, i_axes[i - 1]);
        i -= 1;
    }
    while i > 0 {
        let k = i - 1;
        let ii = i_axes[k];
        let oo = o_axes[k];
        if grp.y.contains(&ii) && grp.x.contains(&oo) {
            for j in (0..=k).rev() {
                let a = o_axes[j];
                if !grp.x.contains(&a) && !grp.y.contains(&a) {
                    grp.y.insert(0, a);
                }
            }
            break;
        }
        if !grp.y.contains(&ii) && !grp.x.contains(&ii) {
            grp.x.insert(0, ii);
        }
        if !grp.x.contains(&oo) && !grp.y.contains(&oo) {
            grp.y.insert(0, oo);
        }
        i -= 1;
    }
    grp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_table_a13() {
        let y01 = AxisGroup::y(vec![0, 1]);
        assert!(merge_groups(&y01, &y01).is_some());
        assert!(merge_groups(&y01, &AxisGroup::y(vec![1, 0])).is_none());
        assert!(merge_groups(&y01, &AxisGroup::y(vec![0])).is_none());
        let yr = AxisGroup {
            y: vec![0],
            r: vec![1],
            ..AxisGroup::default()
        };
        assert_eq!(merge_groups(&y01, &yr), Some(yr.clone()));
        let xy = AxisGroup {
            x: vec![0],
            y: vec![1],
            ..AxisGroup::default()
        };
        assert_eq!(merge_groups(&xy, &y01), Some(xy.clone()));
        assert!(merge_groups(&xy, &AxisGroup::y(vec![0, 1, 2])).is_none());
    }

    #[test]
    fn transpose_groups() {
        let g = transpose_group(&[0, 1], &[1, 0]);
        assert_eq!(g.x, vec![1]);
        assert_eq!(g.y, vec![0]);
        let g = transpose_group(&[0, 1, 2], &[1, 0, 2]);
        assert_eq!(g.n, vec![2]);
        assert_eq!(g.x, vec![1]);
        assert_eq!(g.y, vec![0]);
    }
}
