//! Whole-graph inference: nodes in topological order (Kahn, stable in node order), input descs
//! refreshed from their producers, the registered rule run, outputs and formats written back;
//! control-flow nodes infer their subgraphs (GE registers every subgraph on the root).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use slotmap::SecondaryMap;
use smallvec::SmallVec;

use super::format::{default_infer_format, physical_shape};
use super::side::{keep_recorded, known_value, origin_static, Recorded, Side};
use super::values::propagate;
use super::{is_transformed, run_rule, InferCtx, OutDesc, Param, RuleKind};
use crate::attr::AttrValue;
use crate::format::{bits, Format};
use crate::graph::{Graph, NodeId};
use crate::op_desc::{OpDesc, Sym};
use crate::registry::{self, OpProto};
use crate::subgraph::{ATTR_PARENT_NODE_INDEX, MAX_SUBGRAPH_DEPTH};
use crate::tensor::{Shape, Tensor, TensorDesc, UNKNOWN_DIM, UNKNOWN_RANK};

/// An inference failure, naming the graph, the node, its type and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("inference failed at node '{node}' ({op_type}) of graph '{graph}', rule {rule}: {message}")]
pub struct InferError {
    /// The graph holding the node.
    pub graph: String,
    /// The node name (empty for graph-level failures such as a cycle).
    pub node: String,
    /// The node's op type.
    pub op_type: String,
    /// The rule that failed.
    pub rule: String,
    /// What went wrong.
    pub message: String,
}

/// How an inference message about a size that does not fit in 64 bits starts: such a failure
/// is a size overflow (`SizeOverflowError` in Python), not a rule error.
pub const OVERFLOW_PREFIX: &str = "size overflow: ";

/// An inference message for a size that does not fit in 64 bits.
pub fn overflow_message(what: impl std::fmt::Display) -> String {
    format!("{OVERFLOW_PREFIX}{what} does not fit in 64 bits")
}

impl InferError {
    /// Whether the failure is a size overflow (see [`OVERFLOW_PREFIX`]).
    pub fn is_overflow(&self) -> bool {
        self.message.starts_with(OVERFLOW_PREFIX)
    }
}

/// Inference functions written outside Rust (Python callbacks), for `custom` rules.
pub trait CustomInfer {
    /// Infer the outputs of `op` (registered as `proto`); `values(i)` is the constant feeding
    /// input `i`, if any.
    fn infer(
        &mut self,
        proto: &OpProto,
        op: &OpDesc,
        values: &dyn Fn(usize) -> Option<Tensor>,
    ) -> Result<Vec<OutDesc>, String>;
}

/// No custom functions: a `custom` rule fails.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCustom;

impl CustomInfer for NoCustom {
    fn infer(
        &mut self,
        proto: &OpProto,
        _: &OpDesc,
        _: &dyn Fn(usize) -> Option<Tensor>,
    ) -> Result<Vec<OutDesc>, String> {
        Err(format!(
            "'{}' has a custom inference function, which is not available here",
            proto.op_type
        ))
    }
}

/// Counters of one `infer_graph` run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InferStats {
    /// Nodes visited (all graphs).
    pub nodes: usize,
    /// Nodes whose type is registered with a rule that ran.
    pub inferred: usize,
    /// Nodes of unregistered types (left unchanged).
    pub unknown: usize,
    /// Outputs where the rule left a dim, the rank or the dtype unknown although no graph input
    /// upstream is dynamic, and the recorded value was kept (never replaced by an unknown one).
    pub kept: usize,
    /// Outputs whose recorded static shape or dtype disagreed with the inferred one (the
    /// inferred value is written).
    pub conflicts: usize,
}

/// Infer the outputs of one op: its rule, or `custom` for custom rules.
pub fn infer_op(
    proto: &OpProto,
    op: &OpDesc,
    values: &dyn Fn(usize) -> Option<Tensor>,
    custom: &mut dyn CustomInfer,
) -> Result<Vec<OutDesc>, String> {
    if proto.rule.kind == RuleKind::Custom {
        return custom.infer(proto, op, values);
    }
    let ctx = InferCtx {
        op,
        params: &proto.rule.params,
        values,
    };
    run_rule(&proto.rule, &ctx)
}

/// The constant value of a `Const` / `Constant` op.
pub fn const_value(op: &OpDesc) -> Option<Tensor> {
    if !matches!(op.op_type(), "Const" | "Constant") {
        return None;
    }
    match op.attr("value") {
        Some(AttrValue::Tensor(t)) => Some(t.clone()),
        _ => None,
    }
}

/// The constant value feeding input `i` of node `id`.
pub fn input_value(g: &Graph, id: NodeId, i: usize) -> Option<Tensor> {
    let src = g.arena().get(id)?.in_data_peer(i)?;
    if src.is_control() {
        return None;
    }
    const_value(&g.arena().get(src.node)?.op)
}

/// Check inferred output shapes before anything is written: every dim is a size (>= 0), -1
/// (unknown) or a lone -2 (unknown rank) — what a rule of any kind, including a Python infer
/// function, may produce.
pub fn check_outputs(outs: &[OutDesc]) -> Result<(), String> {
    for (k, out) in outs.iter().enumerate() {
        let shape: &[i64] = &out.shape;
        // Rules compute dims with saturating arithmetic: a dim at the limit is an overflow.
        if shape.contains(&i64::MAX) {
            return Err(overflow_message(format_args!(
                "output {k}: a dim of shape {shape:?}"
            )));
        }
        let bad = shape.iter().any(|&d| d < UNKNOWN_RANK)
            || (shape.contains(&UNKNOWN_RANK) && shape.len() != 1);
        if bad {
            return Err(format!(
                "output {k}: shape {shape:?} is not valid (dims are sizes >= 0, -1 for unknown, or a lone -2 for unknown rank)"
            ));
        }
    }
    Ok(())
}

/// Write inferred outputs into `op` (shape, dtype; the origin shape of transformed descs).
/// More outputs than the op has, or a shape [`check_outputs`] refuses, is an error (and
/// nothing is written).
pub fn write_outputs(op: &mut OpDesc, outs: &[OutDesc]) -> Result<(), String> {
    check_outputs(outs)?;
    if outs.len() > op.num_outputs() {
        return Err(format!(
            "the rule produced {} outputs but the op has {}",
            outs.len(),
            op.num_outputs()
        ));
    }
    for (port, out) in op.outputs.iter_mut().zip(outs) {
        write_desc(&mut port.desc, out);
    }
    Ok(())
}

fn write_desc(desc: &mut Arc<TensorDesc>, out: &OutDesc) {
    if let Some((format, origin)) = out.layout {
        write_layout(desc, out, format, origin);
        return;
    }
    let cur: &TensorDesc = desc;
    let transformed = is_transformed(cur);
    let shape_ok = if transformed {
        cur.origin_shape.as_deref().is_some_and(|s| *s == out.shape)
            && physical_shape(&out.shape, cur.origin_format, cur.format, out.dtype)
                .is_none_or(|p| p == cur.shape)
    } else {
        cur.shape == out.shape && cur.origin_shape.as_deref().is_none_or(|s| *s == out.shape)
    };
    if shape_ok && cur.dtype == out.dtype {
        return;
    }
    let d = Arc::make_mut(desc);
    if transformed {
        d.origin_shape = Some(Box::new(out.shape.clone()));
        // The stored (physical) shape follows the logical one where the layout is known.
        if let Some(p) = physical_shape(&out.shape, d.origin_format, d.format, out.dtype) {
            d.shape = p;
        }
    } else {
        d.shape = out.shape.clone();
        if d.origin_shape.is_some() {
            d.origin_shape = Some(Box::new(out.shape.clone()));
        }
    }
    d.dtype = out.dtype;
}

/// Write an output whose rule decided its layout: the logical shape as the origin shape (and
/// as the shape when the layout keeps it), the physical shape of `format` as the shape.
fn write_layout(desc: &mut Arc<TensorDesc>, out: &OutDesc, format: Format, origin: Format) {
    let transformed = bits::primary(format.value()) != bits::primary(origin.value());
    let shape = if transformed {
        physical_shape(&out.shape, origin.value(), format.value(), out.dtype)
            .unwrap_or_else(|| out.shape.clone())
    } else {
        out.shape.clone()
    };
    // Sub-format and C0 bits the desc already carries stay when the primary format agrees.
    let fmt = if bits::primary(desc.format) == format.value() {
        desc.format
    } else {
        format.value()
    };
    let keep_origin = desc.origin_shape.is_some() || transformed;
    let origin_shape = keep_origin.then(|| Box::new(out.shape.clone()));
    let cur: &TensorDesc = desc;
    if cur.shape == shape
        && cur.dtype == out.dtype
        && cur.format == fmt
        && cur.origin_format == origin.value()
        && cur.origin_shape == origin_shape
    {
        return;
    }
    let d = Arc::make_mut(desc);
    d.shape = shape;
    d.dtype = out.dtype;
    d.format = fmt;
    d.origin_format = origin.value();
    d.origin_shape = origin_shape;
}

/// Refresh an input desc from its producer's output desc (shape, dtype, formats, origin shape).
fn refresh_input(dst: &mut Arc<TensorDesc>, src: &Arc<TensorDesc>) {
    if Arc::ptr_eq(dst, src) {
        return;
    }
    let d: &TensorDesc = dst;
    if d.shape == src.shape
        && d.dtype == src.dtype
        && d.format == src.format
        && d.origin_format == src.origin_format
        && d.origin_shape == src.origin_shape
    {
        return;
    }
    if d.attrs.is_none() && d.name.is_none() && d.ext.is_none() {
        *dst = src.clone();
        return;
    }
    let d = Arc::make_mut(dst);
    d.shape = src.shape.clone();
    d.dtype = src.dtype;
    d.format = src.format;
    d.origin_format = src.origin_format;
    d.origin_shape = src.origin_shape.clone();
}

/// Kahn order of the direct nodes, stable in node order; a cycle is an error naming the nodes
/// left over.
pub fn kahn_order(g: &Graph) -> Result<Vec<NodeId>, Vec<String>> {
    let arena = g.arena();
    let mut indeg: SecondaryMap<NodeId, u32> = SecondaryMap::with_capacity(arena.len());
    let mut queue: VecDeque<NodeId> = VecDeque::new();
    for id in g.node_ids() {
        let n = &arena[id];
        let d = n.in_data.iter().filter(|p| p.is_some()).count() + n.in_ctrl.len();
        indeg.insert(id, d as u32);
        if d == 0 {
            queue.push_back(id);
        }
    }
    let mut order = Vec::with_capacity(arena.len());
    while let Some(id) = queue.pop_front() {
        order.push(id);
        let n = &arena[id];
        for dst in n.out_data.iter().flatten().chain(n.out_ctrl.iter()) {
            if let Some(c) = indeg.get_mut(dst.node) {
                *c -= 1;
                if *c == 0 {
                    queue.push_back(dst.node);
                }
            }
        }
    }
    if order.len() < arena.len() {
        let left: Vec<String> = g
            .node_ids()
            .filter(|&id| indeg.get(id).is_some_and(|&c| c > 0))
            .map(|id| arena[id].name().to_string())
            .collect();
        return Err(left);
    }
    Ok(order)
}

/// The dense slot index of a node id (for bitsets over the arena: [`NodeId::slot`]).
fn slot(id: NodeId) -> usize {
    id.slot()
}

/// The node order itself when every producer (data or control) comes before its consumers —
/// the common case, checked with a bitset over arena slots — else `None`.
pub fn list_order_if_topological(g: &Graph) -> Option<Vec<NodeId>> {
    let arena = g.arena();
    let order: Vec<NodeId> = g.node_ids().collect();
    let max = order.iter().map(|&id| slot(id)).max().unwrap_or(0);
    let mut seen = vec![0u64; max / 64 + 1];
    let is_seen = |seen: &[u64], id: NodeId| {
        let s = slot(id);
        seen.get(s / 64).is_some_and(|w| (w >> (s % 64)) & 1 == 1)
    };
    for &id in &order {
        let n = &arena[id];
        let producers = n.in_data.iter().flatten().chain(n.in_ctrl.iter());
        for p in producers {
            if !is_seen(&seen, p.node) {
                return None;
            }
        }
        let s = slot(id);
        seen[s / 64] |= 1 << (s % 64);
    }
    Some(order)
}

/// One port desc as it was before inference changed it: the tree graph (`None` = root), the
/// node, input (`false`) or output (`true`), the port index and the old desc.
type Undo = (Option<usize>, NodeId, bool, usize, Arc<TensorDesc>);

struct Engine<'a> {
    custom: &'a mut dyn CustomInfer,
    /// The old descs of every port changed so far, to put back when inference fails.
    undo: Vec<Undo>,
    /// The tree graph being inferred (`None` = root).
    current: Option<usize>,
    cache: Vec<(Sym, Option<Arc<OpProto>>)>,
    names: HashMap<String, usize>,
    done: Vec<bool>,
    stats: InferStats,
    /// How many control-flow nodes the current graph is nested in.
    depth: usize,
    /// Per tree graph (root first, then subgraph `k` at `k + 1`): what this run learnt beside
    /// the descs. Indexed by node slot, so a look-up costs no hashing.
    side: Vec<Side>,
}

impl Engine<'_> {
    /// The index in `side` of tree graph `key`'s tables, made on first use.
    fn side_index(&mut self, key: Option<usize>) -> usize {
        let i = key.map_or(0, |k| k + 1);
        if self.side.len() <= i {
            self.side.resize_with(i + 1, Side::default);
        }
        i
    }
}

impl Engine<'_> {
    fn proto(&mut self, ty: &Sym) -> Option<Arc<OpProto>> {
        if let Some((_, p)) = self
            .cache
            .iter()
            .find(|(s, _)| Sym::ptr_eq(s, ty) || s == ty)
        {
            return p.clone();
        }
        let p = registry::lookup(ty);
        self.cache.push((ty.clone(), p.clone()));
        p
    }

    fn graph(&mut self, g: &mut Graph, subs: &mut Vec<Graph>) -> Result<(), InferError> {
        if let Some(order) = list_order_if_topological(g) {
            for id in order {
                self.node(g, subs, id)?;
            }
            return Ok(());
        }
        let order = kahn_order(g).map_err(|left| InferError {
            graph: g.name().to_string(),
            node: left.first().cloned().unwrap_or_default(),
            op_type: String::new(),
            rule: "topological order".into(),
            message: format!("the graph has a cycle through {}", left.join(", ")),
        })?;
        for id in order {
            self.node(g, subs, id)?;
        }
        Ok(())
    }

    fn node(&mut self, g: &mut Graph, subs: &mut Vec<Graph>, id: NodeId) -> Result<(), InferError> {
        self.stats.nodes += 1;
        // This graph's side tables (an index: subgraph inference below may grow `side`).
        let k = self.side_index(self.current);
        // 1. Refresh input descs from the producers.
        let peers: SmallVec<[(usize, Arc<TensorDesc>); 4]> = {
            let arena = g.arena();
            let me = &arena[id];
            me.in_data
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let a = (*p)?;
                    if a.is_control() {
                        return None;
                    }
                    let desc = &arena.get(a.node)?.op.outputs.get(a.index as usize)?.desc;
                    // Shared with the input already: nothing to refresh.
                    if me
                        .op
                        .inputs
                        .get(i)
                        .is_some_and(|p| Arc::ptr_eq(&p.desc, desc))
                    {
                        return None;
                    }
                    Some((i, desc.clone()))
                })
                .collect()
        };
        {
            let key = self.current;
            let op = &mut g.arena_mut()[id].op;
            for (i, src) in &peers {
                if let Some(port) = op.inputs.get_mut(*i) {
                    let old = port.desc.clone();
                    refresh_input(&mut port.desc, src);
                    if !Arc::ptr_eq(&old, &port.desc) {
                        self.undo.push((key, id, false, *i, old));
                    }
                }
            }
        }
        // 2. The rule.
        let ty = g.arena()[id].op.op_type_sym().clone();
        let Some(proto) = self.proto(&ty) else {
            self.stats.unknown += 1;
            return Ok(());
        };
        let fail = |g: &Graph, message: String| InferError {
            graph: g.name().to_string(),
            node: g.arena()[id].name().to_string(),
            op_type: ty.to_string(),
            rule: proto.rule.kind.name().to_string(),
            message,
        };
        let has_subgraphs = g.arena()[id]
            .op
            .subgraph_instance_names()
            .iter()
            .any(|s| !s.is_empty());
        let outs = if has_subgraphs && matches!(proto.rule.kind, RuleKind::If | RuleKind::While) {
            self.control_flow(g, subs, id, proto.rule.kind)
                .map_err(|m| fail(g, m))?
        } else {
            let arena_graph: &Graph = g;
            let computed = &self.side[k].computed;
            let values = |i: usize| known_value(arena_graph, computed, id, i);
            infer_op(&proto, &g.arena()[id].op, &values, &mut *self.custom)
                .map_err(|m| fail(g, m))?
        };
        self.stats.inferred += 1;
        // 3. Write back.
        // A rule that decides its outputs' layout (TransData) is not followed by GE's default
        // format inference.
        let keep_format = matches!(proto.rule.params.get("format"), Some(Param::Str(s)) if s == "keep")
            || outs.iter().any(|o| o.layout.is_some());
        // The old descs are held while writing, so a changed desc is a new `Arc` (copy on
        // write): only those go to the undo log.
        let key = self.current;
        let mut outs = outs;
        // Static unless a graph input upstream is dynamic: then an unknown dim is the truth, and
        // a recorded static one may predate the change.
        let side = &mut self.side[k];
        let static_inputs = origin_static(g, &side.dynamic, id);
        if !static_inputs {
            side.dynamic.insert(id, ());
        }
        let op = &mut g.arena_mut()[id].op;
        for (out, port) in outs.iter_mut().zip(op.outputs.iter()) {
            match keep_recorded(out, &port.desc, static_inputs) {
                Recorded::Agrees => {}
                Recorded::Kept => self.stats.kept += 1,
                Recorded::Conflict => self.stats.conflicts += 1,
            }
        }
        let before: SmallVec<[Arc<TensorDesc>; 2]> =
            op.outputs.iter().map(|p| p.desc.clone()).collect();
        let written = write_outputs(op, &outs);
        if written.is_ok() && !keep_format {
            default_infer_format(op);
        }
        for (i, (old, port)) in before.into_iter().zip(op.outputs.iter()).enumerate() {
            if !Arc::ptr_eq(&old, &port.desc) {
                self.undo.push((key, id, true, i, old));
            }
        }
        written.map_err(|m| fail(g, m))?;
        // 4. Data propagation: the value of a small integer output computed from known inputs.
        let arena_graph: &Graph = g;
        let side = &mut self.side[k];
        let values = |i: usize| known_value(arena_graph, &side.computed, id, i);
        if let Some(v) = propagate(&arena_graph.arena()[id].op, &values) {
            side.computed.insert(id, v);
        }
        Ok(())
    }

    /// Infer the subgraphs of a control-flow node and derive its outputs: `If` / `Case` /
    /// `PartitionedCall` from the subgraphs' NetOutputs (branches merged: differing dims become
    /// -1, differing ranks -2); `While` passes its inputs through.
    fn control_flow(
        &mut self,
        g: &mut Graph,
        subs: &mut Vec<Graph>,
        id: NodeId,
        kind: RuleKind,
    ) -> Result<Vec<OutDesc>, String> {
        let op = g.arena()[id].op.clone();
        let mut merged: Vec<Option<OutDesc>> = vec![None; op.num_outputs()];
        // An `If` whose condition is known (a constant, or propagated: a rank test) infers the
        // branch it takes only: the other need not fit these shapes.
        let taken = if kind == RuleKind::If && op.subgraph_instance_names().len() == 2 {
            let k = self.side_index(self.current);
            known_value(g, &self.side[k].computed, id, 0)
                .and_then(|t| super::shape::tensor_ints(&t).ok())
                .filter(|v| v.len() == 1)
                .map(|v| usize::from(v[0] == 0))
        } else {
            None
        };
        for (branch, inst) in op.subgraph_instance_names().iter().enumerate() {
            if taken.is_some_and(|t| t != branch) {
                continue;
            }
            let Some(&k) = self.names.get(inst) else {
                continue;
            };
            if self.done[k] && kind == RuleKind::While {
                continue;
            }
            if self.depth >= MAX_SUBGRAPH_DEPTH {
                return Err(format!(
                    "subgraph '{inst}' is nested more than {MAX_SUBGRAPH_DEPTH} levels deep"
                ));
            }
            self.done[k] = true;
            let mut sub = std::mem::replace(&mut subs[k], Graph::new(""));
            seed_subgraph_inputs(&mut sub, &op, Some(k), &mut self.undo);
            self.depth += 1;
            let outer = self.current.replace(k);
            let r = self.graph(&mut sub, subs);
            self.current = outer;
            self.depth -= 1;
            let results = subgraph_outputs(&sub);
            subs[k] = sub;
            r.map_err(|e| format!("in subgraph '{inst}': {e}"))?;
            if kind == RuleKind::If {
                for (p, out) in results {
                    if let Some(slot) = merged.get_mut(p) {
                        *slot = Some(match slot.take() {
                            None => out,
                            Some(prev) => merge_branch(prev, &out),
                        });
                    }
                }
            }
        }
        if kind == RuleKind::While {
            let values = |_: usize| None;
            let ctx = InferCtx {
                op: &op,
                params: &Default::default(),
                values: &values,
            };
            return super::elementwise::passthrough(&ctx);
        }
        // Keep outputs no branch produced.
        Ok(merged
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                m.unwrap_or_else(|| {
                    let d = &op.outputs()[i].desc;
                    OutDesc::new(Shape::from_slice(super::logical_shape(d)), d.dtype)
                })
            })
            .collect())
    }
}

fn merge_branch(a: OutDesc, b: &OutDesc) -> OutDesc {
    if a.shape.len() != b.shape.len()
        || a.shape.contains(&UNKNOWN_RANK)
        || b.shape.contains(&UNKNOWN_RANK)
    {
        return OutDesc::new(Shape::from_slice(&[UNKNOWN_RANK]), a.dtype);
    }
    let shape = a
        .shape
        .iter()
        .zip(&b.shape)
        .map(|(&x, &y)| if x == y { x } else { UNKNOWN_DIM })
        .collect();
    OutDesc::new(shape, a.dtype)
}

/// Copy the parent's input descs onto the subgraph's Data nodes (by `_parent_node_index`,
/// else `index`).
fn seed_subgraph_inputs(
    sub: &mut Graph,
    parent: &OpDesc,
    key: Option<usize>,
    undo: &mut Vec<Undo>,
) {
    let ids: Vec<NodeId> = sub.node_ids().collect();
    for id in ids {
        let op = &mut sub.arena_mut()[id].op;
        if op.op_type() != "Data" {
            continue;
        }
        let p = op
            .attr(ATTR_PARENT_NODE_INDEX)
            .or_else(|| op.attr("index"))
            .and_then(AttrValue::as_int);
        let Some(src) = p
            .and_then(|p| usize::try_from(p).ok())
            .and_then(|p| parent.inputs().get(p))
        else {
            continue;
        };
        let src = src.desc.clone();
        for (output, ports) in [(false, &mut op.inputs[..]), (true, &mut op.outputs[..])] {
            for (i, port) in ports.iter_mut().enumerate() {
                let old = port.desc.clone();
                refresh_input(&mut port.desc, &src);
                if !Arc::ptr_eq(&old, &port.desc) {
                    undo.push((key, id, output, i, old));
                }
            }
        }
    }
}

/// `(parent output index, desc)` for each input of the subgraph's NetOutput.
fn subgraph_outputs(sub: &Graph) -> Vec<(usize, OutDesc)> {
    let Some(net) = sub
        .node_ids()
        .find(|&id| sub.arena()[id].op_type() == "NetOutput")
    else {
        return Vec::new();
    };
    let op = &sub.arena()[net].op;
    op.inputs()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let given = p
                .desc
                .attrs
                .as_deref()
                .and_then(|a| a.get(ATTR_PARENT_NODE_INDEX))
                .and_then(AttrValue::as_int);
            // A negative index (a Loop body's condition) feeds no parent output.
            let idx = match given {
                Some(v) => usize::try_from(v).ok()?,
                None => i,
            };
            Some((
                idx,
                OutDesc::new(
                    Shape::from_slice(super::logical_shape(&p.desc)),
                    p.desc.dtype,
                ),
            ))
        })
        .collect()
}

/// Infer the whole graph tree of `root` (the root graph, then every subgraph reached through
/// a control-flow node, then subgraphs not reached that way). On error the graph keeps the
/// descs inferred so far.
pub fn infer_graph(
    root: &mut Graph,
    custom: &mut dyn CustomInfer,
) -> Result<InferStats, InferError> {
    let mut subs = std::mem::take(&mut root.subgraphs);
    let names = subs
        .iter()
        .enumerate()
        .map(|(i, g)| (g.name().to_string(), i))
        .collect();
    let mut engine = Engine {
        custom,
        undo: Vec::new(),
        current: None,
        cache: Vec::new(),
        names,
        done: vec![false; subs.len()],
        stats: InferStats::default(),
        depth: 0,
        side: Vec::new(),
    };
    let mut result = engine.graph(root, &mut subs);
    if result.is_ok() {
        for k in 0..subs.len() {
            if engine.done[k] {
                continue;
            }
            engine.done[k] = true;
            let mut sub = std::mem::replace(&mut subs[k], Graph::new(""));
            engine.current = Some(k);
            result = engine.graph(&mut sub, &mut subs);
            subs[k] = sub;
            if result.is_err() {
                break;
            }
        }
    }
    root.subgraphs = subs;
    if result.is_err() {
        // Failure-atomic: every desc changed so far goes back, newest first.
        for (graph, id, output, i, old) in engine.undo.into_iter().rev() {
            let Some(g) = root.tree_graph_mut(graph) else {
                continue;
            };
            let Some(n) = g.arena_mut().get_mut(id) else {
                continue;
            };
            let port = if output {
                n.op.outputs.get_mut(i)
            } else {
                n.op.inputs.get_mut(i)
            };
            if let Some(port) = port {
                port.desc = old;
            }
        }
    }
    result.map(|()| engine.stats)
}
