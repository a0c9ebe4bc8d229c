//! The kernel plan: one per scheduled, allocated ImplGraph, read by every code printer.
//!
//! A plan is symbolic: every size, stride and byte count is an [`Expr`] over the graph's
//! shape symbols and tiling sizes (the TilingData fields). It holds the loop nest (the loop
//! axes outermost first), the base (ORIGINAL) axes every view is folded back onto, per node in
//! execution order its operands and output views, the UB containers with the reuse-family
//! offset of every member, and per UB tensor its producer and readers (the queue events).

use ascendir_asc::alloc::{containers_of, exec_order, Container, ContainerKind, TensorBytes};
use ascendir_asc::axis::{AxisId, AxisType};
use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::expr::Expr;
use ascendir_asc::graph::{
    AllocType, AscGraph, AttrValue, ComputeType, GraphType, MemHardware, NodeId, Position, Tensor,
};
use ascendir_asc::tiling::base_of;
use ascendir_ir::DataType;

/// One axis of the plan.
#[derive(Clone, Debug)]
pub struct PlanAxis {
    /// Axis id.
    pub id: AxisId,
    /// Axis name.
    pub name: String,
    /// Kind.
    pub kind: AxisType,
    /// Length.
    pub size: Expr,
    /// Parent axes (split: one; merge: the merged axes).
    pub from: Vec<AxisId>,
    /// The other axis of the same split, if any.
    pub split_pair: Option<AxisId>,
}

/// One output view of a node, folded back onto base axes.
#[derive(Clone, Debug)]
pub struct PlanTensor {
    /// Element type.
    pub dtype: DataType,
    /// Base axes of the GM view.
    pub base_axes: Vec<AxisId>,
    /// Extent per base axis.
    pub base_repeats: Vec<Expr>,
    /// GM stride per base axis (elements).
    pub base_strides: Vec<Expr>,
    /// Vectorized axes (UB).
    pub vect_axes: Vec<AxisId>,
    /// The single base axis of each vectorized axis, if it has one.
    pub vect_base: Vec<Option<AxisId>>,
    /// Extent per vectorized axis.
    pub vect_repeats: Vec<Expr>,
    /// UB stride per vectorized axis (elements).
    pub vect_strides: Vec<Expr>,
    /// Allocation kind.
    pub alloc: AllocType,
    /// Memory.
    pub hardware: MemHardware,
    /// Queue/buffer position.
    pub position: Position,
    /// Reuse family (queues).
    pub reuse_id: i64,
    /// Queue id.
    pub que_id: i64,
    /// Queue depth.
    pub buf_num: i64,
    /// Buffer id.
    pub buf_id: i64,
    /// UB bytes of one slot's worth of this tensor (0 outside the UB).
    pub bytes: Expr,
    /// Index of its container in [`KernelPlan::containers`].
    pub container: Option<usize>,
    /// Byte offset inside its container slot (reuse family members follow each other).
    pub fam_offset: Expr,
    /// Positions (in [`KernelPlan::nodes`]) of the nodes that read this tensor, in order.
    pub readers: Vec<usize>,
    /// The tensor's own (unfolded) view axes: for GM tensors and Loads / Stores the GM layout.
    pub axes: Vec<AxisId>,
    /// Extent per view axis.
    pub repeats: Vec<Expr>,
    /// Stride per view axis (elements).
    pub strides: Vec<Expr>,
}

impl PlanTensor {
    /// The extent of view axis `a` (1 when absent).
    pub fn repeat_of(&self, a: AxisId) -> Expr {
        self.axes
            .iter()
            .position(|x| *x == a)
            .map(|k| self.repeats[k].clone())
            .unwrap_or_else(|| Expr::int(1))
    }

    /// The stride of view axis `a` (0 when absent).
    pub fn stride_of(&self, a: AxisId) -> Expr {
        self.axes
            .iter()
            .position(|x| *x == a)
            .map(|k| self.strides[k].clone())
            .unwrap_or_else(|| Expr::int(0))
    }
}

/// One node of the plan, in execution order.
#[derive(Clone, Debug)]
pub struct PlanNode {
    /// Node id in the graph.
    pub id: NodeId,
    /// Node name.
    pub name: String,
    /// Operator type.
    pub op_type: String,
    /// Compute type.
    pub compute_type: ComputeType,
    /// Whether it is a compute node (GM nodes and scalars are not).
    pub compute: bool,
    /// Producer of each input: position in [`KernelPlan::nodes`] and output index.
    pub inputs: Vec<Option<(usize, usize)>>,
    /// Scheduled axes.
    pub sched: Vec<AxisId>,
    /// The loop axis it runs in.
    pub loop_axis: AxisId,
    /// Loop depth (number of enclosing loops); compute nodes only.
    pub depth: usize,
    /// IR attributes.
    pub attrs: Vec<(String, AttrValue)>,
    /// Output views.
    pub outputs: Vec<PlanTensor>,
    /// Reductions: the loop axes (by level) whose first iteration initialises the result.
    pub reduce_loops: Vec<usize>,
    /// Reductions: the base axes reduced.
    pub reduced_base: Vec<AxisId>,
    /// Temporary buffers of the node: indices in [`KernelPlan::containers`] (Tmp containers).
    pub tmps: Vec<usize>,
}

impl PlanNode {
    /// An IR attribute by name.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// A UB container of the plan.
#[derive(Clone, Debug)]
pub struct PlanContainer {
    /// TilingData field name (`q<id>_size`, `b<id>_size`).
    pub name: String,
    /// Queue, buffer or temporary buffer.
    pub kind: ContainerKind,
    /// que/buf id.
    pub id: i64,
    /// Position.
    pub position: Position,
    /// Slots.
    pub buf_num: i64,
    /// Bytes of one slot as a function of the tile sizes.
    pub slot_bytes: Expr,
    /// Member tensors: (node position, output index, reuse id).
    pub members: Vec<(usize, usize, i64)>,
    /// Temporary buffers held (Tmp containers): (node position, temporary buffer index).
    pub tmps: Vec<(usize, usize)>,
}

/// The plan of one ImplGraph (or HintGraph: then no loops and no containers).
#[derive(Clone, Debug)]
pub struct KernelPlan {
    /// Graph name.
    pub name: String,
    /// Template key.
    pub tiling_key: i64,
    /// Whether this is an ImplGraph.
    pub is_impl: bool,
    /// Every axis.
    pub axes: Vec<PlanAxis>,
    /// The base (ORIGINAL) axes, ascending ids: the index space of every view.
    pub base: Vec<AxisId>,
    /// Loop axes, outermost first.
    pub loops: Vec<AxisId>,
    /// Nodes in execution order.
    pub nodes: Vec<PlanNode>,
    /// UB containers in allocation order (queues, then buffers).
    pub containers: Vec<PlanContainer>,
}

fn bad(graph: &str, what: String) -> AscError {
    AscError::InvalidArgument(format!("graph '{graph}': {what}"))
}

/// Fold split pairs of a view back into their base axis: `[(axis, repeat, stride)]`.
pub fn base_view(g: &AscGraph, t: &Tensor) -> Vec<(AxisId, Expr, Expr)> {
    let mut v: Vec<(AxisId, Expr, Expr)> = t
        .axis
        .iter()
        .zip(t.repeats.iter().zip(t.strides.iter()))
        .map(|(a, (r, s))| (*a, r.clone(), s.clone()))
        .collect();
    let mut k = 0;
    while k + 1 < v.len() {
        let (a, b) = (v[k].0, v[k + 1].0);
        if let (Some(ax), Some(bx)) = (g.find_axis(a), g.find_axis(b)) {
            if ax.split_pair_other_id == b
                && bx.split_pair_other_id == a
                && ax.from.len() == 1
                && ax.from == bx.from
            {
                let rep = Expr::mul(&v[k].1, &v[k + 1].1);
                let st = v[k + 1].2.clone();
                v[k] = (ax.from[0], rep, st);
                v.remove(k + 1);
                // The folded axis may pair with its left neighbour now.
                k = k.saturating_sub(1);
                continue;
            }
        }
        k += 1;
    }
    v
}

fn is_one(e: &Expr) -> bool {
    e.as_i64() == Some(1)
}

impl KernelPlan {
    /// The plan of `g` (UB byte counts rounded to `block` bytes).
    pub fn build(g: &AscGraph, block: i64) -> AscResult<KernelPlan> {
        Ok(KernelPlan::build_shared(&TensorBytes::new(g, block))?.0)
    }

    /// [`KernelPlan::build`] of `bytes`' graph reading its tensor-byte memo, with the UB
    /// containers (`containers_of`, empty for a HintGraph) for the tiling model to share.
    pub fn build_shared(bytes: &TensorBytes<'_>) -> AscResult<(KernelPlan, Vec<Container>)> {
        let g = bytes.graph();
        let gname = g.name.clone();
        let order = exec_order(g)?;
        let mut pos_of = vec![usize::MAX; g.nodes().len()];
        for (p, nid) in order.iter().enumerate() {
            pos_of[nid.index()] = p;
        }
        let axes: Vec<PlanAxis> = g
            .axes()
            .iter()
            .map(|a| PlanAxis {
                id: a.id,
                name: a.name.clone(),
                kind: a.axis_type,
                size: a.size.clone(),
                from: a.from.clone(),
                split_pair: (a.split_pair_other_id >= 0).then_some(a.split_pair_other_id),
            })
            .collect();
        let mut base: Vec<AxisId> = axes
            .iter()
            .filter(|a| a.kind == AxisType::Original)
            .map(|a| a.id)
            .collect();
        base.sort_unstable();
        let zero = Expr::int(0);
        let mut nodes = Vec::with_capacity(order.len());
        for nid in &order {
            let n = &g.nodes()[nid.index()];
            let mut inputs = Vec::with_capacity(n.inputs.len());
            for r in &n.inputs {
                inputs.push(match r {
                    Some(r) => {
                        let p = pos_of.get(r.node.index()).copied().unwrap_or(usize::MAX);
                        if p == usize::MAX {
                            return Err(bad(
                                &gname,
                                format!("node '{}' reads a node outside the graph", n.name),
                            ));
                        }
                        Some((p, r.index as usize))
                    }
                    None => None,
                });
            }
            let mut outputs = Vec::with_capacity(n.outputs.len());
            for (o, t) in n.outputs.iter().enumerate() {
                let bv = base_view(g, t);
                let vect_base = t
                    .vectorized_axis
                    .iter()
                    .map(|a| {
                        let b = base_of(g, *a);
                        (b.len() == 1).then(|| b[0])
                    })
                    .collect();
                let tb = if t.mem.hardware == MemHardware::Ub {
                    bytes.at(nid.index(), o)
                } else {
                    zero.clone()
                };
                outputs.push(PlanTensor {
                    dtype: t.dtype,
                    base_axes: bv.iter().map(|x| x.0).collect(),
                    base_repeats: bv.iter().map(|x| x.1.clone()).collect(),
                    base_strides: bv.iter().map(|x| x.2.clone()).collect(),
                    vect_axes: t.vectorized_axis.clone(),
                    vect_base,
                    vect_repeats: t.vectorized_axis.iter().map(|a| t.repeat_of(*a)).collect(),
                    vect_strides: t.vectorized_strides.clone(),
                    alloc: t.mem.alloc_type,
                    hardware: t.mem.hardware,
                    position: t.mem.position,
                    reuse_id: t.mem.reuse_id,
                    que_id: t.que.id,
                    buf_num: t.que.buf_num,
                    buf_id: t.buf.id,
                    bytes: tb,
                    container: None,
                    fam_offset: zero.clone(),
                    readers: Vec::new(),
                    axes: t.axis.clone(),
                    repeats: t.repeats.clone(),
                    strides: t.strides.clone(),
                });
            }
            nodes.push(PlanNode {
                id: *nid,
                name: n.name.clone(),
                op_type: n.op_type().to_string(),
                compute_type: n.attr.api.compute_type,
                compute: n.is_compute(),
                inputs,
                sched: n.attr.sched.axis.clone(),
                loop_axis: n.attr.sched.loop_axis,
                depth: 0,
                attrs: n
                    .attr
                    .ir_attr
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                outputs,
                reduce_loops: Vec::new(),
                reduced_base: Vec::new(),
                tmps: Vec::new(),
            });
        }
        for p in 0..nodes.len() {
            for k in 0..nodes[p].inputs.len() {
                if let Some((q, o)) = nodes[p].inputs[k] {
                    if let Some(t) = nodes[q].outputs.get_mut(o) {
                        if !t.readers.contains(&p) {
                            t.readers.push(p);
                        }
                    }
                }
            }
        }
        let is_impl = g.graph_type == GraphType::Impl;
        let mut plan = KernelPlan {
            name: gname,
            tiling_key: g.tiling_key,
            is_impl,
            axes,
            base,
            loops: Vec::new(),
            nodes,
            containers: Vec::new(),
        };
        let mut containers = Vec::new();
        if is_impl {
            plan.nest()?;
            containers = containers_of(g)?;
            plan.attach_containers(bytes, &containers, &pos_of);
        }
        plan.reductions();
        Ok((plan, containers))
    }

    /// An axis by id.
    pub fn axis(&self, id: AxisId) -> Option<&PlanAxis> {
        self.axes.iter().find(|a| a.id == id)
    }

    /// The base axes an axis derives from.
    pub fn bases_of(&self, a: AxisId) -> Vec<AxisId> {
        let mut out = Vec::new();
        let mut stack = vec![a];
        let mut seen = 0usize;
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > 4 * self.axes.len() + 4 {
                break;
            }
            match self.axis(x) {
                Some(ax) if ax.from.is_empty() && !out.contains(&x) => out.push(x),
                Some(ax) if ax.from.is_empty() => {}
                Some(ax) => stack.extend(ax.from.iter().copied()),
                None => {}
            }
        }
        out
    }

    fn nest(&mut self) -> AscResult<()> {
        let mut reference: Vec<AxisId> = Vec::new();
        for n in self.nodes.iter_mut().filter(|n| n.compute) {
            let d = n
                .sched
                .iter()
                .position(|a| *a == n.loop_axis)
                .ok_or_else(|| {
                    bad(
                        &self.name,
                        format!("node '{}': loop axis not in sched.axis", n.name),
                    )
                })?
                + 1;
            n.depth = d;
            let pre = &n.sched[..d];
            let m = pre.len().min(reference.len());
            if pre[..m] != reference[..m] {
                return Err(bad(
                    &self.name,
                    format!(
                        "node '{}': loop axes {:?} do not nest with {:?}",
                        n.name, pre, reference
                    ),
                ));
            }
            if pre.len() > reference.len() {
                reference = pre.to_vec();
            }
        }
        self.loops = reference;
        Ok(())
    }

    fn attach_containers(
        &mut self,
        bytes: &TensorBytes<'_>,
        containers: &[Container],
        pos_of: &[usize],
    ) {
        for c in containers {
            let ci = self.containers.len();
            let mut fam_acc: Vec<(i64, Expr)> = Vec::new();
            let mut members = Vec::new();
            for (nid, o, rid) in &c.members {
                let p = pos_of[nid.index()];
                let t = &mut self.nodes[p].outputs[*o];
                let fam = if c.kind == ContainerKind::Queue && *rid >= 0 {
                    match fam_acc.iter_mut().find(|(r, _)| r == rid) {
                        Some((_, acc)) => {
                            let off = acc.clone();
                            *acc = Expr::add(acc, &t.bytes);
                            off
                        }
                        None => {
                            fam_acc.push((*rid, t.bytes.clone()));
                            Expr::int(0)
                        }
                    }
                } else {
                    Expr::int(0)
                };
                t.container = Some(ci);
                t.fam_offset = fam;
                members.push((p, *o, *rid));
            }
            let mut tmps = Vec::with_capacity(c.tmps.len());
            for (nid, k) in &c.tmps {
                let p = pos_of[nid.index()];
                if !self.nodes[p].tmps.contains(&ci) {
                    self.nodes[p].tmps.push(ci);
                }
                tmps.push((p, *k));
            }
            self.containers.push(PlanContainer {
                name: c.size_name(),
                kind: c.kind,
                id: c.id,
                position: c.position,
                buf_num: c.buf_num,
                slot_bytes: bytes.slot_bytes(c),
                members,
                tmps,
            });
        }
    }

    fn reductions(&mut self) {
        let base = self.base.clone();
        for p in 0..self.nodes.len() {
            if self.nodes[p].compute_type != ComputeType::Reduce {
                continue;
            }
            let Some(Some((q, o))) = self.nodes[p].inputs.first().cloned() else {
                continue;
            };
            let Some(inp) = self.nodes[q].outputs.get(o) else {
                continue;
            };
            let Some(out) = self.nodes[p].outputs.first() else {
                continue;
            };
            let rep = |t: &PlanTensor, b: AxisId| {
                t.base_axes
                    .iter()
                    .position(|a| *a == b)
                    .map(|k| t.base_repeats[k].clone())
                    .unwrap_or_else(|| Expr::int(1))
            };
            let reduced: Vec<AxisId> = base
                .iter()
                .copied()
                .filter(|b| !is_one(&rep(inp, *b)) && is_one(&rep(out, *b)))
                .collect();
            let n = &self.nodes[p];
            let mut levels = Vec::new();
            if self.is_impl {
                for (lvl, a) in n.sched.iter().take(n.depth).enumerate() {
                    let kind = self.axis(*a).map(|x| x.kind);
                    if kind != Some(AxisType::BlockOuter)
                        && self.bases_of(*a).iter().any(|b| reduced.contains(b))
                    {
                        levels.push(lvl);
                    }
                }
            }
            let n = &mut self.nodes[p];
            n.reduced_base = reduced;
            n.reduce_loops = levels;
        }
    }

    /// The extent of base axis `b` in tensor `t`'s view (1 when absent).
    pub fn repeat(t: &PlanTensor, b: AxisId) -> Expr {
        t.base_axes
            .iter()
            .position(|a| *a == b)
            .map(|k| t.base_repeats[k].clone())
            .unwrap_or_else(|| Expr::int(1))
    }

    /// The GM stride of base axis `b` in tensor `t`'s view (0 when absent).
    pub fn gm_stride(t: &PlanTensor, b: AxisId) -> Expr {
        t.base_axes
            .iter()
            .position(|a| *a == b)
            .map(|k| t.base_strides[k].clone())
            .unwrap_or_else(|| Expr::int(0))
    }

    /// The shape and tile symbols the plan's expressions use, first-seen order.
    pub fn symbols(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |e: &Expr| {
            for s in e.free_symbols() {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        };
        for a in &self.axes {
            add(&a.size);
        }
        for n in &self.nodes {
            for t in &n.outputs {
                for e in t
                    .base_repeats
                    .iter()
                    .chain(&t.base_strides)
                    .chain(&t.vect_repeats)
                    .chain(&t.vect_strides)
                {
                    add(e);
                }
                add(&t.bytes);
            }
            for (_, v) in &n.attrs {
                if let AttrValue::Expr(e) = v {
                    add(e);
                }
            }
        }
        for c in &self.containers {
            add(&c.slot_bytes);
        }
        out
    }
}
