//! Axis transforms: splits, merges, block binding, and their application to the
//! loop axes and output views of nodes. Every transform validates first and mutates second,
//! is recorded in the graph's transform log, and the log can be replayed on a copy.

use crate::axis::{Axis, AxisId, AxisType};
use crate::error::{invalid, not_found, AscError, AscResult};
use crate::expr::{Expr, TriBool};
use crate::graph::{AscGraph, NodeId};

/// GE's `TransType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransType {
    /// A split (0).
    Split = 0,
    /// A merge (1).
    Merge = 1,
    /// Valid marker (2).
    Valid = 2,
}

/// One entry of GE's `trans_info_road`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransInfo {
    /// Kind.
    pub trans_type: TransType,
    /// Source axes.
    pub src: Vec<AxisId>,
    /// Produced axes.
    pub dst: Vec<AxisId>,
}

/// A replayable transform (names are the ones actually used).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transform {
    /// `tile_split(axis)`.
    TileSplit {
        /// Parent.
        axis: AxisId,
        /// Outer name.
        outer: String,
        /// Inner name.
        inner: String,
    },
    /// `block_split(axis)`.
    BlockSplit {
        /// Parent.
        axis: AxisId,
        /// Outer name.
        outer: String,
        /// Inner name.
        inner: String,
    },
    /// `merge_axes(axes)`.
    Merge {
        /// Merged axes in order.
        axes: Vec<AxisId>,
        /// Name of the merged axis.
        name: String,
    },
    /// `bind_block(outer, inner)`.
    BindBlock {
        /// Outer axis.
        outer: AxisId,
        /// Inner axis.
        inner: AxisId,
    },
    /// `apply_split(node, outer, inner)`.
    ApplySplit {
        /// Node name.
        node: String,
        /// Outer axis.
        outer: AxisId,
        /// Inner axis.
        inner: AxisId,
    },
    /// `apply_merge(node, merged)` (sched and views).
    ApplyMerge {
        /// Node name.
        node: String,
        /// Merged axis.
        merged: AxisId,
    },
    /// `apply_sched_axis_merge(node, merged)`.
    ApplySchedMerge {
        /// Node name.
        node: String,
        /// Merged axis.
        merged: AxisId,
    },
    /// `apply_reorder(node, order)`.
    ApplyReorder {
        /// Node name.
        node: String,
        /// New order.
        order: Vec<AxisId>,
    },
    /// `try_apply_axis_replace(node, src, dst)` (GE's `TryApplyAxisReplace`).
    AxisReplace {
        /// Node name.
        node: String,
        /// Replaced axis.
        src: AxisId,
        /// Its replacement.
        dst: AxisId,
    },
}

/// What an `apply_merge` left unchanged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Output indices whose view holds the originals but not contiguously (left unchanged).
    pub skipped_outputs: Vec<usize>,
}

impl AscGraph {
    /// The replayable transform log.
    pub fn transform_log(&self) -> &[Transform] {
        &self.log
    }

    /// Re-apply `log` to this graph (e.g. a copy taken before the transforms were made).
    pub fn replay(&mut self, log: &[Transform]) -> AscResult<()> {
        for t in log {
            match t {
                Transform::TileSplit { axis, outer, inner } => {
                    self.tile_split(*axis, Some(outer), Some(inner))?;
                }
                Transform::BlockSplit { axis, outer, inner } => {
                    self.block_split(*axis, Some(outer), Some(inner))?;
                }
                Transform::Merge { axes, name } => {
                    self.merge_axes(axes, Some(name))?;
                }
                Transform::BindBlock { outer, inner } => self.bind_block(*outer, *inner)?,
                Transform::ApplySplit { node, outer, inner } => {
                    let id = self.node_by_name(node)?;
                    self.apply_split(id, *outer, *inner)?;
                }
                Transform::ApplyMerge { node, merged } => {
                    let id = self.node_by_name(node)?;
                    self.apply_merge(id, *merged)?;
                }
                Transform::ApplySchedMerge { node, merged } => {
                    let id = self.node_by_name(node)?;
                    self.apply_sched_axis_merge(id, *merged)?;
                }
                Transform::ApplyReorder { node, order } => {
                    let id = self.node_by_name(node)?;
                    self.apply_reorder(id, order)?;
                }
                Transform::AxisReplace { node, src, dst } => {
                    let id = self.node_by_name(node)?;
                    self.try_apply_axis_replace(id, *src, *dst)?;
                }
            }
        }
        Ok(())
    }

    fn node_by_name(&self, name: &str) -> AscResult<NodeId> {
        self.find_node(name).ok_or_else(|| {
            AscError::NotFound(format!("graph '{}': no node named '{name}'", self.name))
        })
    }

    /// Tile split (UB): outer `<name>T`, inner `<name>t` unless names are given.
    pub fn tile_split(
        &mut self,
        axis: AxisId,
        outer: Option<&str>,
        inner: Option<&str>,
    ) -> AscResult<(AxisId, AxisId)> {
        self.do_split(axis, outer, inner, true)
    }

    /// Block split (multi-core): outer `<name>B`, inner `<name>b` unless names are given.
    pub fn block_split(
        &mut self,
        axis: AxisId,
        outer: Option<&str>,
        inner: Option<&str>,
    ) -> AscResult<(AxisId, AxisId)> {
        self.do_split(axis, outer, inner, false)
    }

    fn do_split(
        &mut self,
        axis: AxisId,
        outer: Option<&str>,
        inner: Option<&str>,
        tile: bool,
    ) -> AscResult<(AxisId, AxisId)> {
        let parent = self.axis_checked(axis)?.clone();
        let (os, is) = if tile { ("T", "t") } else { ("B", "b") };
        let outer_name = outer
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}{os}", parent.name));
        let inner_name = inner
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}{is}", parent.name));
        if outer_name == inner_name {
            return invalid(format!(
                "split of axis '{}': outer and inner names are both '{outer_name}'",
                parent.name
            ));
        }
        self.check_new_axis_name(&outer_name)?;
        self.check_new_axis_name(&inner_name)?;
        let size_name = format!("{inner_name}_size");
        let one = parent.size.is_int_value(1);
        if !one && self.find_size(&size_name).is_some() {
            return invalid(format!(
                "split of axis '{}': size variable '{size_name}' already exists",
                parent.name
            ));
        }
        // Validation done: mutate.
        let (inner_size, outer_size) = if one {
            (Expr::int(1), Expr::int(1))
        } else {
            let s = self.create_size(&size_name)?;
            let o = Expr::ceiling(&Expr::div(&parent.size, &s));
            (s, o)
        };
        let n = self.axes.len() as AxisId;
        let (ot, it) = if tile {
            (AxisType::TileOuter, AxisType::TileInner)
        } else {
            (AxisType::BlockOuter, AxisType::BlockInner)
        };
        let mut o = Axis::new(n, &outer_name, ot, outer_size);
        o.from = vec![axis];
        o.split_pair_other_id = n + 1;
        let mut i = Axis::new(n + 1, &inner_name, it, inner_size);
        i.from = vec![axis];
        i.split_pair_other_id = n;
        self.axes.push(o);
        self.axes.push(i);
        self.trans_info.push(TransInfo {
            trans_type: TransType::Split,
            src: vec![axis],
            dst: vec![n, n + 1],
        });
        let rec = if tile {
            Transform::TileSplit {
                axis,
                outer: outer_name,
                inner: inner_name,
            }
        } else {
            Transform::BlockSplit {
                axis,
                outer: outer_name,
                inner: inner_name,
            }
        };
        self.log.push(rec);
        Ok((n, n + 1))
    }

    /// Merge axes into one MERGED axis: name = concatenation, size = product, `from` = the list.
    pub fn merge_axes(&mut self, axes: &[AxisId], name: Option<&str>) -> AscResult<AxisId> {
        if axes.is_empty() {
            return invalid(format!(
                "graph '{}': merge_axes needs at least one axis",
                self.name
            ));
        }
        let mut size = Expr::int(1);
        let mut cat = String::new();
        for (k, a) in axes.iter().enumerate() {
            let ax = self.axis_checked(*a)?;
            if axes[..k].contains(a) {
                return invalid(format!(
                    "graph '{}': merge_axes lists axis '{}' twice",
                    self.name, ax.name
                ));
            }
            size = Expr::mul(&size, &ax.size);
            cat.push_str(&ax.name);
        }
        let name = name.map(str::to_string).unwrap_or(cat);
        self.check_new_axis_name(&name)?;
        let id = self.axes.len() as AxisId;
        let mut m = Axis::new(id, &name, AxisType::Merged, size);
        m.from = axes.to_vec();
        self.axes.push(m);
        self.trans_info.push(TransInfo {
            trans_type: TransType::Merge,
            src: axes.to_vec(),
            dst: vec![id],
        });
        self.log.push(Transform::Merge {
            axes: axes.to_vec(),
            name,
        });
        Ok(id)
    }

    /// Retype `outer` → BLOCK_OUTER (+`B`) and `inner` → BLOCK_INNER (+`b`).
    pub fn bind_block(&mut self, outer: AxisId, inner: AxisId) -> AscResult<()> {
        let o = self.axis_checked(outer)?.name.clone();
        let i = self.axis_checked(inner)?.name.clone();
        if outer == inner {
            return invalid(format!(
                "bind_block: outer and inner are the same axis '{o}'"
            ));
        }
        let (on, inn) = (format!("{o}B"), format!("{i}b"));
        self.check_new_axis_name(&on)?;
        self.check_new_axis_name(&inn)?;
        let ax = &mut self.axes[outer as usize];
        ax.axis_type = AxisType::BlockOuter;
        ax.name = on;
        let ax = &mut self.axes[inner as usize];
        ax.axis_type = AxisType::BlockInner;
        ax.name = inn;
        self.log.push(Transform::BindBlock { outer, inner });
        Ok(())
    }

    fn split_parent(&self, outer: AxisId, inner: AxisId) -> AscResult<(AxisId, Expr)> {
        let o = self.axis_checked(outer)?;
        let i = self.axis_checked(inner)?;
        let ok = matches!(
            (o.axis_type, i.axis_type),
            (AxisType::BlockOuter, AxisType::BlockInner)
                | (AxisType::TileOuter, AxisType::TileInner)
        );
        if !ok {
            return invalid(format!(
                "apply_split: axes '{}' ({}) and '{}' ({}) are not an outer/inner pair of one split kind",
                o.name,
                o.axis_type.dump_name(),
                i.name,
                i.axis_type.dump_name()
            ));
        }
        if o.from.len() != 1 || i.from.len() != 1 || o.from[0] != i.from[0] {
            return invalid(format!(
                "apply_split: axes '{}' and '{}' do not come from the same parent",
                o.name, i.name
            ));
        }
        Ok((o.from[0], i.size.clone()))
    }

    /// Apply a split to a node: in `sched.axis` and every output view the parent becomes
    /// `outer, inner` (view repeat `r / inner`, stride `s * inner`; a repeat-1 parent gives
    /// (1, 0) and (1, s)).
    pub fn apply_split(&mut self, node: NodeId, outer: AxisId, inner: AxisId) -> AscResult<()> {
        let (parent, inner_size) = self.split_parent(outer, inner)?;
        let name = self.node(node)?.name.clone();
        let n = self.node_mut(node)?;
        let mut sched = Vec::with_capacity(n.attr.sched.axis.len() + 1);
        for a in &n.attr.sched.axis {
            if *a == parent {
                sched.push(outer);
                sched.push(inner);
            } else {
                sched.push(*a);
            }
        }
        let mut new_views = Vec::with_capacity(n.outputs.len());
        for t in &n.outputs {
            if t.axis.len() != t.repeats.len() || t.axis.len() != t.strides.len() {
                if t.axis.contains(&parent) {
                    return invalid(format!(
                        "apply_split on node '{name}': an output view has {} axes, {} repeats and {} strides",
                        t.axis.len(),
                        t.repeats.len(),
                        t.strides.len()
                    ));
                }
                new_views.push(None);
                continue;
            }
            let Some(pos) = t.axis.iter().position(|a| *a == parent) else {
                new_views.push(None);
                continue;
            };
            let (r, s) = (&t.repeats[pos], &t.strides[pos]);
            let (or, os, ir, is) = if r.is_int_value(1) {
                (Expr::int(1), Expr::int(0), Expr::int(1), s.clone())
            } else {
                (
                    Expr::div(r, &inner_size),
                    Expr::mul(s, &inner_size),
                    inner_size.clone(),
                    s.clone(),
                )
            };
            let mut axis = t.axis.clone();
            let mut rep = t.repeats.clone();
            let mut st = t.strides.clone();
            axis.splice(pos..=pos, [outer, inner]);
            rep.splice(pos..=pos, [or, ir]);
            st.splice(pos..=pos, [os, is]);
            new_views.push(Some((axis, rep, st)));
        }
        n.attr.sched.axis = sched;
        for (t, v) in n.outputs.iter_mut().zip(new_views) {
            if let Some((a, r, s)) = v {
                t.axis = a;
                t.repeats = r;
                t.strides = s;
            }
        }
        self.log.push(Transform::ApplySplit {
            node: name,
            outer,
            inner,
        });
        Ok(())
    }

    fn merge_originals(&self, merged: AxisId) -> AscResult<Vec<AxisId>> {
        let m = self.axis_checked(merged)?;
        if m.axis_type != AxisType::Merged || m.from.len() < 2 {
            return invalid(format!(
                "apply_merge: axis '{}' is {} with {} source(s), not a MERGED axis of at least two",
                m.name,
                m.axis_type.dump_name(),
                m.from.len()
            ));
        }
        for (k, a) in m.from.iter().enumerate() {
            if m.from[..k].contains(a) {
                return invalid(format!(
                    "apply_merge: merged axis '{}' lists '{}' twice",
                    m.name,
                    self.axis_name(*a)
                ));
            }
        }
        Ok(m.from.clone())
    }

    fn sched_merge_result(
        &self,
        node: NodeId,
        merged: AxisId,
        originals: &[AxisId],
    ) -> AscResult<Option<Vec<AxisId>>> {
        let n = self.node(node)?;
        let present: Vec<AxisId> = originals
            .iter()
            .copied()
            .filter(|a| n.attr.sched.axis.contains(a))
            .collect();
        if present.is_empty() {
            return Ok(None);
        }
        if present.len() != originals.len() {
            let missing: Vec<String> = originals
                .iter()
                .filter(|a| !present.contains(a))
                .map(|a| self.axis_name(*a))
                .collect();
            return invalid(format!(
                "apply_merge on node '{}': sched.axis holds only some axes of '{}' (missing {})",
                n.name,
                self.axis_name(merged),
                missing.join(", ")
            ));
        }
        let mut out = Vec::with_capacity(n.attr.sched.axis.len());
        let mut inserted = false;
        for a in &n.attr.sched.axis {
            if originals.contains(a) {
                if !inserted {
                    out.push(merged);
                    inserted = true;
                }
            } else {
                out.push(*a);
            }
        }
        Ok(Some(out))
    }

    /// Views after a tensor merge; `Err` on partial presence; `None` entries = unchanged.
    #[allow(clippy::type_complexity)]
    fn tensor_merge_result(
        &self,
        node: NodeId,
        merged: AxisId,
        originals: &[AxisId],
    ) -> AscResult<(
        Vec<Option<(Vec<AxisId>, Vec<Expr>, Vec<Expr>)>>,
        MergeReport,
    )> {
        let n = self.node(node)?;
        let mut views = Vec::with_capacity(n.outputs.len());
        let mut report = MergeReport::default();
        for (oi, t) in n.outputs.iter().enumerate() {
            let pos: Vec<usize> = t
                .axis
                .iter()
                .enumerate()
                .filter(|(_, a)| originals.contains(a))
                .map(|(i, _)| i)
                .collect();
            if pos.is_empty() {
                views.push(None);
                continue;
            }
            let out_name = n.output_names.get(oi).cloned().unwrap_or_default();
            if pos.len() != originals.len() {
                return invalid(format!(
                    "apply_merge on node '{}': output '{out_name}' holds only some axes of '{}'",
                    n.name,
                    self.axis_name(merged)
                ));
            }
            if t.repeats.len() != t.axis.len() || t.strides.len() != t.axis.len() {
                return invalid(format!(
                    "apply_merge on node '{}': output '{out_name}' has {} axes, {} repeats and {} strides",
                    n.name,
                    t.axis.len(),
                    t.repeats.len(),
                    t.strides.len()
                ));
            }
            let contiguous = pos.windows(2).all(|w| {
                let expect = Expr::mul(&t.repeats[w[1]], &t.strides[w[1]]);
                Expr::static_eq(&t.strides[w[0]], &expect) == TriBool::True
            });
            if !contiguous {
                report.skipped_outputs.push(oi);
                views.push(None);
                continue;
            }
            let rep = Expr::product(pos.iter().map(|&i| &t.repeats[i]));
            let last = *pos.last().unwrap_or(&0);
            let stride = t.strides[last].clone();
            let (mut a, mut r, mut s) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..t.axis.len() {
                if i == last {
                    a.push(merged);
                    r.push(rep.clone());
                    s.push(stride.clone());
                } else if !pos.contains(&i) {
                    a.push(t.axis[i]);
                    r.push(t.repeats[i].clone());
                    s.push(t.strides[i].clone());
                }
            }
            views.push(Some((a, r, s)));
        }
        Ok((views, report))
    }

    /// Merge in `sched.axis` and in every output view (contiguous views only; the report lists
    /// the views left unchanged).
    pub fn apply_merge(&mut self, node: NodeId, merged: AxisId) -> AscResult<MergeReport> {
        let originals = self.merge_originals(merged)?;
        let sched = self.sched_merge_result(node, merged, &originals)?;
        let (views, report) = self.tensor_merge_result(node, merged, &originals)?;
        let name = self.node(node)?.name.clone();
        let n = self.node_mut(node)?;
        if let Some(s) = sched {
            n.attr.sched.axis = s;
        }
        for (t, v) in n.outputs.iter_mut().zip(views) {
            if let Some((a, r, s)) = v {
                t.axis = a;
                t.repeats = r;
                t.strides = s;
            }
        }
        self.log.push(Transform::ApplyMerge { node: name, merged });
        Ok(report)
    }

    /// Merge in `sched.axis` only.
    pub fn apply_sched_axis_merge(&mut self, node: NodeId, merged: AxisId) -> AscResult<()> {
        let originals = self.merge_originals(merged)?;
        let sched = self.sched_merge_result(node, merged, &originals)?;
        let name = self.node(node)?.name.clone();
        if let Some(s) = sched {
            self.node_mut(node)?.attr.sched.axis = s;
        }
        self.log
            .push(Transform::ApplySchedMerge { node: name, merged });
        Ok(())
    }

    /// Reorder `sched.axis` to `order` (same set of ids) and rebuild every view in that order
    /// (view axes not in `order` are dropped, as in GE).
    pub fn apply_reorder(&mut self, node: NodeId, order: &[AxisId]) -> AscResult<()> {
        let n = self.node(node)?;
        for (k, a) in order.iter().enumerate() {
            self.axis_checked(*a)?;
            if order[..k].contains(a) {
                return invalid(format!(
                    "apply_reorder on node '{}': axis '{}' listed twice",
                    n.name,
                    self.axis_name(*a)
                ));
            }
            if !n.attr.sched.axis.contains(a) {
                return not_found(format!(
                    "apply_reorder on node '{}': axis '{}' is not in its sched.axis",
                    n.name,
                    self.axis_name(*a)
                ));
            }
        }
        if order.len() != n.attr.sched.axis.len() {
            return invalid(format!(
                "apply_reorder on node '{}': order has {} axes, sched.axis has {}",
                n.name,
                order.len(),
                n.attr.sched.axis.len()
            ));
        }
        for (oi, t) in n.outputs.iter().enumerate() {
            if t.repeats.len() != t.axis.len() || t.strides.len() != t.axis.len() {
                return invalid(format!(
                    "apply_reorder on node '{}': output {oi} has {} axes, {} repeats and {} strides",
                    n.name,
                    t.axis.len(),
                    t.repeats.len(),
                    t.strides.len()
                ));
            }
        }
        let name = n.name.clone();
        let n = self.node_mut(node)?;
        n.attr.sched.axis = order.to_vec();
        for t in n.outputs.iter_mut() {
            let (mut a, mut r, mut s) = (Vec::new(), Vec::new(), Vec::new());
            for id in order {
                if let Some(p) = t.axis.iter().position(|x| x == id) {
                    a.push(*id);
                    r.push(t.repeats[p].clone());
                    s.push(t.strides[p].clone());
                }
            }
            if !a.is_empty() || t.axis.is_empty() {
                t.axis = a;
                t.repeats = r;
                t.strides = s;
            }
        }
        self.log.push(Transform::ApplyReorder {
            node: name,
            order: order.to_vec(),
        });
        Ok(())
    }

    /// Replace axis `src` by `dst` in `sched.axis` and every view (repeats/strides kept);
    /// returns whether anything changed. A change is recorded in the transform log.
    pub fn try_apply_axis_replace(
        &mut self,
        node: NodeId,
        src: AxisId,
        dst: AxisId,
    ) -> AscResult<bool> {
        self.axis_checked(src)?;
        self.axis_checked(dst)?;
        let n = self.node_mut(node)?;
        let mut changed = false;
        for a in n
            .attr
            .sched
            .axis
            .iter_mut()
            .chain(n.outputs.iter_mut().flat_map(|t| t.axis.iter_mut()))
        {
            if *a == src {
                *a = dst;
                changed = true;
            }
        }
        if changed {
            let name = n.name.clone();
            self.log.push(Transform::AxisReplace {
                node: name,
                src,
                dst,
            });
        }
        Ok(changed)
    }
}
