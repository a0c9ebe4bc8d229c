//! Stage 4, simplify: a nested [`PassManager`] of named rewrites ([`passes`]) — constants
//! folded, Identity and Cast-to-same-dtype removed, float computations on constants folded
//! (`fold.rs`), cascaded Reshapes collapsed, softmax attention replaced by
//! `FlashAttentionScore` (`attention.rs`), splits replaced by slices when the split family is
//! on (`split.rs`), common subexpressions merged, and pure nodes whose values reach no output
//! pruned.

use ascendir_ir::{
    AttrValue, DataType, Graph, InAnchor, NodeId, OpDesc, OutAnchor, TopoMode, TopoOptions,
};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{CompileError, CompileResult, ErrorKind, KindResult, Stage};
use crate::passes::{CompileCtx, Pass, PassManager};
use crate::rewrite::{forward, replace_by_const};
use crate::symbolize::SymTable;

/// Shape arithmetic the constant folder replaces by a Const when its value is known.
const FOLDABLE: &[&str] = &[
    "Shape",
    "Size",
    "GatherV2D",
    "GatherV2",
    "Gather",
    "ConcatV2D",
    "ConcatD",
    "ConcatV2",
    "Concat",
    "Unsqueeze",
    "Squeeze",
    "Reshape",
    "ExpandDims",
    "Flatten",
    "Cast",
    "Add",
    "Sub",
    "Mul",
    "RealDiv",
    "Div",
    "FloorDiv",
    "Maximum",
    "Minimum",
    "StridedSliceV2",
    "Slice",
];

/// What stage 4 did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimplifyStats {
    /// Identity nodes removed.
    pub identities: usize,
    /// Casts to the same dtype removed.
    pub casts: usize,
    /// Integer tensors computed from shapes and constants, and float computations on
    /// constants (`fold.rs`), replaced by Consts.
    pub folded: usize,
    /// Reshapes of a Reshape rewired to read the inner one's input.
    pub reshapes: usize,
    /// Nodes merged into an equal one (same type, attributes, inputs, output descs).
    pub cse: usize,
    /// Nodes pruned because no output depends on them.
    pub pruned: usize,
    /// Softmax attentions replaced by a `FlashAttentionScore` node.
    pub attention: usize,
    /// Splits replaced by one slice per output (the `split` family on).
    pub splits: usize,
}

/// Pure nodes: a lowering, shape arithmetic, or a constant (equal values merge).
fn pure(g: &Graph, id: NodeId) -> bool {
    let Ok(n) = g.node(id) else { return false };
    let op = n.op();
    op.subgraph_instance_names().is_empty()
        && n.in_control_peers().is_empty()
        && n.out_control_peers().is_empty()
        && (crate::lower::lookup(op.op_type()).is_some()
            || matches!(
                op.op_type(),
                "Const"
                    | "Constant"
                    | "Shape"
                    | "Size"
                    | "GatherV2D"
                    | "ConcatV2D"
                    | "Unsqueeze"
                    | "Squeeze"
                    | "TransposeD"
                    | "Reshape"
            ))
}

/// Replace every foldable node whose integer value is fully known by a Const of it.
fn fold_constants(g: &mut Graph, syms: &SymTable) -> KindResult<usize> {
    let ids: Vec<NodeId> = g.node_ids().collect();
    let mut n = 0;
    for id in ids {
        let (name, desc) = {
            let Ok(node) = g.node(id) else { continue };
            let op = node.op();
            if !FOLDABLE.contains(&op.op_type())
                || node.num_out_data() != 1
                || !node.in_control_peers().is_empty()
                || !op.subgraph_instance_names().is_empty()
            {
                continue;
            }
            (op.name().to_string(), op.outputs()[0].desc.clone())
        };
        if !matches!(desc.dtype, DataType::INT64 | DataType::INT32) {
            continue;
        }
        let Some(vals) = syms
            .value((id, 0))
            .and_then(|v| v.iter().map(|e| e.as_i64()).collect::<Option<Vec<i64>>>())
        else {
            continue;
        };
        let len = i64::try_from(vals.len()).map_err(|e| ErrorKind::Overflow(e.to_string()))?;
        let rec = &desc.shape;
        let static_rec = rec.iter().all(|&d| d >= 0);
        let shape: Vec<i64> = if static_rec && rec.iter().product::<i64>() == len {
            rec.to_vec()
        } else if static_rec && !rec.is_empty() {
            // A value whose length is not the recorded shape's element count is not this
            // tensor's value: folding it would change the graph's meaning.
            continue;
        } else if rec.is_empty() && len == 1 {
            Vec::new()
        } else {
            vec![len]
        };
        let tensor = crate::lower::int_tensor(&vals, &shape, desc.dtype).ok_or_else(|| {
            ErrorKind::Overflow(format!(
                "'{name}': a value overflows {}",
                desc.dtype.serial_name()
            ))
        })?;
        replace_by_const(g, id, &name, tensor)?;
        n += 1;
    }
    Ok(n)
}

/// A plain GE Reshape (the whole shape: `axis` 0, `num_axes` -1).
fn plain_reshape(g: &Graph, id: NodeId) -> bool {
    g.op(id).is_ok_and(|o| {
        o.op_type() == "Reshape"
            && o.attr("axis").and_then(|a| a.as_int()).unwrap_or(0) == 0
            && o.attr("num_axes").and_then(|a| a.as_int()).unwrap_or(-1) == -1
    })
}

/// `Reshape(Reshape(x, a), b)` → `Reshape(x, b)`: only the last target counts (the inner one,
/// left without consumers, is pruned).
fn cascaded_reshapes(g: &mut Graph) -> KindResult<usize> {
    let ids: Vec<NodeId> = g.node_ids().collect();
    let mut n = 0;
    for id in ids {
        if !plain_reshape(g, id) {
            continue;
        }
        // Follow the chain of plain Reshapes feeding input 0 down to its source.
        let mut src = match g.in_peer(InAnchor::data(id, 0)) {
            Some(s) => s,
            None => continue,
        };
        let first = src;
        while plain_reshape(g, src.node) && src.index == 0 {
            match g.in_peer(InAnchor::data(src.node, 0)) {
                Some(s) => src = s,
                None => break,
            }
        }
        if src == first {
            continue;
        }
        g.unlink(first, InAnchor::data(id, 0))?;
        g.link(src, InAnchor::data(id, 0))?;
        n += 1;
    }
    Ok(n)
}

/// A node's type, data inputs (producer, output index) and a hash of its attributes.
type CseKey = (String, Vec<Option<(NodeId, i32)>>, u64);

/// A hash of an op's attributes (a Const's value by its bytes, so equal constants meet in
/// one bucket and unequal ones are not compared).
fn attrs_hash(op: &OpDesc) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    for e in op.attrs.entries() {
        e.key().hash(&mut h);
        match e.value() {
            AttrValue::Tensor(t) => {
                t.data.as_ref().hash(&mut h);
                t.desc.shape.hash(&mut h);
                (t.desc.dtype as i32).hash(&mut h);
            }
            v => format!("{v:?}").hash(&mut h),
        }
    }
    h.finish()
}

/// Merge every pure node into an earlier equal one (topological order, so inputs are merged
/// first): same type, attributes, data inputs and output descs.
fn cse(g: &mut Graph) -> KindResult<usize> {
    let order = g.topo_order(&TopoOptions::new(TopoMode::Dfs))?;
    let mut seen: FxHashMap<CseKey, Vec<NodeId>> = FxHashMap::default();
    let mut merged = 0;
    for id in order {
        if !pure(g, id) {
            continue;
        }
        let (key, n_out) = {
            let n = g.node(id)?;
            let ins = (0..n.num_in_data())
                .map(|k| n.in_data_peer(k).map(|p| (p.node, p.index)))
                .collect();
            (
                (n.op_type().to_string(), ins, attrs_hash(n.op())),
                n.num_out_data(),
            )
        };
        let same = |r: NodeId| -> bool {
            match (g.op(id), g.op(r)) {
                (Ok(a), Ok(b)) => {
                    a.attrs == b.attrs
                        && a.outputs().len() == b.outputs().len()
                        && a.outputs().iter().zip(b.outputs()).all(|(x, y)| {
                            // The tensor, not its name or other annotations.
                            x.desc.shape == y.desc.shape
                                && x.desc.dtype == y.desc.dtype
                                && x.desc.format == y.desc.format
                        })
                }
                _ => false,
            }
        };
        let reps = seen.entry(key).or_default();
        match reps.iter().copied().find(|&r| same(r)) {
            Some(r) => {
                for k in 0..n_out {
                    forward(g, OutAnchor::data(id, k), OutAnchor::data(r, k))?;
                }
                g.erase_node(id)?;
                merged += 1;
            }
            None => reps.push(id),
        }
    }
    Ok(merged)
}

fn is_noop(g: &Graph, id: NodeId) -> Option<bool> {
    let n = g.node(id).ok()?;
    let op = n.op();
    if n.num_out_data() != 1 || n.in_data_peer(0).is_none() || !n.in_control_peers().is_empty() {
        return None;
    }
    match op.op_type() {
        "Identity" => Some(true),
        "Cast" => {
            let a = op.inputs().first()?.desc.dtype;
            let b = op.outputs().first()?.desc.dtype;
            (a == b && n.num_in_data() == 1).then_some(false)
        }
        _ => None,
    }
}

/// Identity nodes and Casts to the same dtype bypassed and removed; returns how many of each.
fn remove_noops(g: &mut Graph) -> KindResult<(usize, usize)> {
    let (mut identities, mut casts) = (0, 0);
    let ids: Vec<NodeId> = g.node_ids().collect();
    for id in ids {
        let Some(identity) = is_noop(g, id) else {
            continue;
        };
        let src = g
            .node(id)
            .ok()
            .and_then(|n| n.in_data_peer(0))
            .ok_or("no input")?;
        if !g.out_control_nodes(id)?.is_empty() {
            continue;
        }
        forward(g, OutAnchor::data(id, 0), src)?;
        g.erase_node(id)?;
        if identity {
            identities += 1;
        } else {
            casts += 1;
        }
    }
    Ok((identities, casts))
}

/// Prune pure (lowerable or constant) nodes that reach no output; returns how many.
fn prune(g: &mut Graph) -> KindResult<usize> {
    let Some(net) = g.net_output() else {
        return Ok(0);
    };
    let mut live: FxHashSet<NodeId> = FxHashSet::default();
    let mut stack = vec![net];
    stack.extend(g.targets().iter().copied());
    stack.extend(g.outputs().iter().map(|o| o.0));
    while let Some(n) = stack.pop() {
        if !live.insert(n) {
            continue;
        }
        stack.extend(g.predecessors(n));
    }
    let dead: Vec<NodeId> = g
        .node_ids()
        .filter(|id| !live.contains(id))
        .filter(|id| {
            g.op(*id).is_ok_and(|o| {
                o.subgraph_instance_names().is_empty()
                    && (matches!(o.op_type(), "Const" | "Constant")
                        || FOLDABLE.contains(&o.op_type())
                        || crate::lower::lookup(o.op_type()).is_some())
            })
        })
        .collect();
    // A dead node that is kept (a barrier) keeps its inputs: pruning the constants it reads
    // would leave its required inputs unconnected. Walk back from every pruned node that feeds
    // a kept one; each node leaves the set once.
    let mut pruned: FxHashSet<NodeId> = dead.iter().copied().collect();
    let mut keep: Vec<NodeId> = dead
        .iter()
        .copied()
        .filter(|&id| g.successors(id).any(|s| !pruned.contains(&s)))
        .collect();
    while let Some(id) = keep.pop() {
        if pruned.remove(&id) {
            keep.extend(g.predecessors(id).filter(|p| pruned.contains(p)));
        }
    }
    let mut n = 0;
    for id in dead.into_iter().filter(|id| pruned.contains(id)) {
        g.erase_node(id)?;
        n += 1;
    }
    Ok(n)
}

/// A stage 4 rewrite error.
fn failed(e: ErrorKind) -> CompileError {
    CompileError::from_kind(Stage::Simplify, e)
}

/// One named rewrite of stage 4, run over the graph (`$g`) and its stage 3 symbols (`$syms`)
/// when `$enabled` holds for the context: `$run` counts what it did into the counter `$field`
/// of the context's [`SimplifyStats`]; the pass changed the graph when the count grew.
macro_rules! rewrite {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $field:ident,
     |$cx:ident| $enabled:expr, |$g:ident, $syms:ident| $run:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $ty;

        impl Pass for $ty {
            fn name(&self) -> &'static str {
                $name
            }

            fn stage(&self) -> Stage {
                Stage::Simplify
            }

            fn enabled(&self, $cx: &CompileCtx<'_>) -> bool {
                $enabled
            }

            fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
                let ($g, $syms): (&mut Graph, &SymTable) = (&mut cx.graph, &cx.syms);
                let n: usize = $run.map_err(failed)?;
                cx.simplify.$field += n;
                Ok(n > 0)
            }
        }
    };
}

rewrite!(
    /// Foldable shape arithmetic whose integer value is fully known replaced by a Const.
    FoldConstants, "fold_constants", folded,
    |_cx| true,
    |g, syms| fold_constants(g, syms)
);
rewrite!(
    /// Float computations on constants replaced by a Const (`fold.rs`; the fusion switch on).
    FoldFloats, "fold_floats", folded,
    |cx| cx.opts.fusion,
    |g, _syms| crate::fold::fold_floats(g)
);
rewrite!(
    /// `Reshape(Reshape(x, a), b)` rewired as `Reshape(x, b)`.
    CollapseReshapes, "collapse_reshapes", reshapes,
    |_cx| true,
    |g, _syms| cascaded_reshapes(g)
);
rewrite!(
    /// Softmax attention replaced by `FlashAttentionScore` (`attention.rs`; fusion and
    /// `fuse_attention` on).
    FuseAttention, "fuse_attention", attention,
    |cx| cx.opts.fusion && cx.opts.fuse_attention,
    |g, syms| crate::attention::fuse_attention(g, syms)
);
rewrite!(
    /// Splits replaced by one slice per output (`split.rs`; fusion and the split family on).
    SplitsToSlices, "splits_to_slices", splits,
    |cx| cx.opts.fusion && cx.opts.family_on(crate::options::Family::Split),
    |g, syms| crate::split::splits_to_slices(g, syms)
);
rewrite!(
    /// Pure nodes merged into an earlier equal one.
    Cse, "cse", cse,
    |_cx| true,
    |g, _syms| cse(g)
);
rewrite!(
    /// Pure nodes whose values reach no output removed.
    Prune, "prune", pruned,
    |_cx| true,
    |g, _syms| prune(g)
);

/// Identity and Cast-to-same-dtype nodes removed.
#[derive(Debug)]
pub struct RemoveNoops;

impl Pass for RemoveNoops {
    fn name(&self) -> &'static str {
        "remove_noops"
    }

    fn stage(&self) -> Stage {
        Stage::Simplify
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let (identities, casts) = remove_noops(&mut cx.graph).map_err(failed)?;
        cx.simplify.identities += identities;
        cx.simplify.casts += casts;
        Ok(identities + casts > 0)
    }
}

/// The rewrites of stage 4, in order (over the graph and its symbols of stage 3).
pub fn passes() -> PassManager {
    PassManager::nested(
        "simplify",
        vec![
            Box::new(FoldConstants),
            Box::new(RemoveNoops),
            Box::new(FoldFloats),
            Box::new(CollapseReshapes),
            Box::new(FuseAttention),
            Box::new(SplitsToSlices),
            Box::new(Cse),
            Box::new(Prune),
        ],
    )
}
