//! Part of stage 4: scaled dot-product attention → GE's `FlashAttentionScore`.
//!
//! The pattern, on 4-D `[B, N, S, D]` tensors (layout `BNSD`):
//!
//! ```text
//! s = BatchMatMul(q, kᵀ)          kᵀ: a transpose of k, or `adj_x2` on k itself
//! s = s · c  |  s / c             optional, c a scalar constant      (scale_value)
//! s = s + m                       optional, m broadcast to s's shape (real_shift)
//! s = Select(keep, s, fill)       optional, last; fill a finite constant at or below half the
//!                                 dtype's lowest value, or -inf with the safe step (atten_mask = ¬keep)
//! p = Softmax(s, -1)
//! p = Select(any(keep, -1), p, 0)  optional: torch's safe softmax          (kept, on o)
//! o = BatchMatMul(p, v)
//! ```
//!
//! with the scale and the additive term in either order (`pse_type` 0: `scale·qkᵀ + m`, 1:
//! `scale·(qkᵀ + m)`). Every intermediate has one consumer. The kernel the vector engine would
//! build for the softmax becomes one library call, as Inductor hands the same pattern to its
//! flash-attention kernel. `m` must have a form the real op takes (`BNSS`, `BN1S`, `1NSS`): a
//! head dim of 1 is tiled to `N` by a `Tile` (which the lowering turns into a Broadcast, so it
//! fuses with whatever computes the mask); other forms leave the pattern alone.
//!
//! The masked fill: GE's `atten_mask` gives the masked scores the lowest value of the dtype
//! before the softmax. A `Select` filling with another very negative constant gives the same
//! probabilities wherever the exponent underflows to 0 for both — which it does for every
//! unmasked score above `fill / 2`, and a fully masked row is uniform either way — so the fill
//! must be at most half the dtype's lowest value. Not -inf on its own: a fully masked row is NaN
//! then, and uniform with GE's op. torch's SDPA computes its softmax "safely" (a fully masked row
//! gives probabilities 0), which the PyTorch frontend writes as the step
//! `Select(ReduceAnyD(keep, [-1], keep_dims), p, 0)` (for an additive mask `m`, `keep` is
//! `NotEqual(m, -inf)`: the scores are finite); with that step the -inf fill matches too,
//! and the step stays, applied to the attention's output (`0 · v = 0`: the same rows are zeroed
//! with the same condition), so every row means what torch computes. The keep mask must be bool, of a
//! form GE's `atten_mask` takes (`[B|1, N|1, Sq, Skv]` but not `[1, N, ..]`, or `[Sq, Skv]`); a
//! `LogicalNot` makes it GE's "masked where set".

use crate::error::KindResult;
use ascendir_asc::Expr;
use std::sync::Arc;

use ascendir_ir::{
    AttrValue, DataType, Format, Graph, InAnchor, NodeId, OpDesc, OutAnchor, Shape, Side,
    TensorDesc,
};

use crate::rewrite::{forward, fresh_name};
use crate::symbolize::SymTable;

/// GE's optional inputs after `query, key, value` (the prototype's order).
const OPTIONAL_INPUTS: [&str; 9] = [
    "real_shift",
    "drop_mask",
    "padding_mask",
    "atten_mask",
    "prefix",
    "actual_seq_qlen",
    "actual_seq_kvlen",
    "q_start_idx",
    "kv_start_idx",
];

/// GE's outputs (the prototype's order); `attention_out` is the result.
const OUTPUTS: [&str; 4] = ["softmax_max", "softmax_sum", "softmax_out", "attention_out"];

/// How the key reaches the first matmul.
enum Key {
    /// `adj_x2`: the key itself.
    Direct(OutAnchor),
    /// A `TransposeD` used only here: its permutation is changed to give the key.
    Retarget(NodeId, Vec<i64>),
    /// Anything else: a `TransposeD` swapping the last two dims is inserted.
    Insert(OutAnchor),
}

/// One matched attention.
struct Match {
    mm1: NodeId,
    softmax: NodeId,
    mm2: NodeId,
    /// The scale and add nodes between the first matmul and the softmax.
    between: Vec<NodeId>,
    query: OutAnchor,
    key: Key,
    value: OutAnchor,
    scale: f64,
    /// The additive term and whether its head dim is tiled.
    pse: Option<(OutAnchor, bool)>,
    /// The keep mask of a masked fill (true: the score is kept).
    keep: Option<OutAnchor>,
    /// torch's safe softmax after the softmax: `Select(any(keep, -1), p, 0)` (kept in place,
    /// applied to the attention's output instead of its probabilities).
    safe: Option<NodeId>,
    pse_type: i64,
    heads: i64,
}

fn is_bmm(op: &OpDesc) -> bool {
    matches!(op.op_type(), "BatchMatMulV2" | "BatchMatMul")
}

/// A plain product of two operands: `x1` and `x2` linked, no `bias` / `offset_w`.
fn plain_bmm(g: &Graph, id: NodeId) -> bool {
    g.node(id).is_ok_and(|n| {
        is_bmm(n.op())
            && n.num_in_data() >= 2
            && n.in_data_peer(0).is_some()
            && n.in_data_peer(1).is_some()
            && (2..n.num_in_data()).all(|k| n.in_data_peer(k).is_none())
    })
}

fn attr_bool(op: &OpDesc, name: &str) -> bool {
    op.attr(name).and_then(|a| a.as_bool()).unwrap_or(false)
}

/// The one data consumer of output 0 of `id` (None when it has several, or feeds a graph output
/// or a control edge, or is not a single-output node).
fn sole_consumer(g: &Graph, id: NodeId) -> Option<InAnchor> {
    let n = g.node(id).ok()?;
    if n.num_out_data() != 1
        || !n.out_control_peers().is_empty()
        || !n.in_control_peers().is_empty()
        || g.outputs().iter().any(|o| o.0 == id)
    {
        return None;
    }
    match n.out_data_peers(0) {
        [one] => Some(*one),
        _ => None,
    }
}

/// The value of a finite float scalar constant (one element of f16 / bf16 / f32 / f64).
fn float_scalar(g: &Graph, a: OutAnchor) -> Option<f64> {
    float_scalar_any(g, a).filter(|v| v.is_finite())
}

/// The value of a float scalar constant (one element of f16 / bf16 / f32 / f64), NaN excluded.
fn float_scalar_any(g: &Graph, a: OutAnchor) -> Option<f64> {
    let op = g.op(a.node).ok()?;
    if !matches!(op.op_type(), "Const" | "Constant") {
        return None;
    }
    let AttrValue::Tensor(t) = op.attr("value")? else {
        return None;
    };
    let b: &[u8] = &t.data;
    let v = match t.desc.dtype {
        DataType::FLOAT => f64::from(f32::from_le_bytes(b.try_into().ok()?)),
        DataType::DOUBLE => f64::from_le_bytes(b.try_into().ok()?),
        DataType::FLOAT16 => half::f16::from_le_bytes(b.try_into().ok()?).to_f64(),
        DataType::BF16 => half::bf16::from_le_bytes(b.try_into().ok()?).to_f64(),
        _ => return None,
    };
    (!v.is_nan()).then_some(v)
}

/// Half the lowest finite value of a float dtype: a masked fill at or below it is GE's.
fn fill_limit(dt: DataType) -> Option<f64> {
    match dt {
        DataType::FLOAT => Some(f64::from(f32::MIN) / 2.0),
        DataType::FLOAT16 => Some(half::f16::MIN.to_f64() / 2.0),
        DataType::BF16 => Some(half::bf16::MIN.to_f64() / 2.0),
        _ => None,
    }
}

/// The data producer of input `k` of `id`.
fn input(g: &Graph, id: NodeId, k: usize) -> Option<OutAnchor> {
    g.node(id).ok()?.in_data_peer(k)
}

fn shape(syms: &SymTable, a: OutAnchor) -> Option<&Vec<Expr>> {
    syms.shape((a.node, u32::try_from(a.index).ok()?))
}

fn dtype_of(g: &Graph, a: OutAnchor) -> Option<DataType> {
    let op = g.op(a.node).ok()?;
    Some(op.outputs().get(usize::try_from(a.index).ok()?)?.desc.dtype)
}

/// The safe-softmax step `Select(ReduceAnyD(keep, [-1], keep_dims), p, 0)` consuming the
/// softmax at `at`: returns the Select and `keep`.
fn safe_step(g: &Graph, syms: &SymTable, at: InAnchor) -> Option<(NodeId, OutAnchor)> {
    let sel = at.node;
    let op = g.op(sel).ok()?;
    if !matches!(op.op_type(), "Select" | "SelectV2")
        || at.index != 1
        || g.node(sel).ok()?.num_in_data() != 3
        || float_scalar(g, input(g, sel, 2)?)? != 0.0
    {
        return None;
    }
    let rows = input(g, sel, 0)?;
    let any = g.op(rows.node).ok()?;
    let keep = input(g, rows.node, 0)?;
    let rank = i64::try_from(shape(syms, keep)?.len()).ok()?;
    let axes = crate::lower::attr_ints(any, "axes")?;
    (any.op_type() == "ReduceAnyD"
        && rows.index == 0
        && attr_bool(any, "keep_dims")
        && (axes == [-1] || axes == [rank - 1]))
    .then_some((sel, keep))
}

/// Whether `a` is `NotEqual(x, -inf)` (either operand order).
fn above_minus_inf(g: &Graph, a: OutAnchor, x: OutAnchor) -> bool {
    let ne = g.op(a.node).is_ok_and(|o| o.op_type() == "NotEqual");
    let ninf =
        |k| input(g, a.node, k).and_then(|c| float_scalar_any(g, c)) == Some(f64::NEG_INFINITY);
    ne && a.index == 0
        && ((input(g, a.node, 0) == Some(x) && ninf(1))
            || (input(g, a.node, 1) == Some(x) && ninf(0)))
}

/// Match the attention ending in the softmax `sm`.
fn match_at(g: &Graph, syms: &SymTable, sm: NodeId) -> Option<Match> {
    let op = g.op(sm).ok()?;
    if op.op_type() != "SoftmaxV2" || g.node(sm).ok()?.num_in_data() != 1 {
        return None;
    }
    let scores = input(g, sm, 0)?;
    let s_shape = shape(syms, scores)?.clone();
    if s_shape.len() != 4 {
        return None;
    }
    let axes = crate::lower::attr_ints(op, "axes").unwrap_or_else(|| vec![-1]);
    if !(axes == [-1] || axes == [3]) {
        return None;
    }
    // The second matmul: probabilities @ value, maybe through the safe-softmax step.
    let mut use2 = sole_consumer(g, sm)?;
    let safe = safe_step(g, syms, use2);
    if let Some((sel, _)) = safe {
        use2 = sole_consumer(g, sel)?;
    }
    let mm2 = use2.node;
    let mm2_op = g.op(mm2).ok()?;
    if !plain_bmm(g, mm2)
        || use2.index != 0
        || attr_bool(mm2_op, "adj_x1")
        || attr_bool(mm2_op, "adj_x2")
    {
        return None;
    }
    let n2 = g.node(mm2).ok()?;
    if !n2.in_control_peers().is_empty() || !n2.out_control_peers().is_empty() {
        return None;
    }
    let value = input(g, mm2, 1)?;
    // Walk up from the softmax to the first matmul through at most one scale and one add.
    let mut between = Vec::new();
    let mut order = Vec::new(); // 's' a scale, 'a' an add, from the softmax up
    let mut scale = 1.0f64;
    let mut pse: Option<OutAnchor> = None;
    let mut keep: Option<(OutAnchor, f64)> = None;
    let mut cur = scores;
    loop {
        let cop = g.op(cur.node).ok()?;
        if is_bmm(cop) {
            break;
        }
        if between.len() == 3 || cur.index != 0 || sole_consumer(g, cur.node).is_none() {
            return None;
        }
        let arity = g.node(cur.node).ok()?.num_in_data();
        if matches!(cop.op_type(), "Select" | "SelectV2") {
            // The masked fill, only as the last step before the softmax.
            if !between.is_empty() || arity != 3 {
                return None;
            }
            let fill = float_scalar_any(g, input(g, cur.node, 2)?)?;
            keep = Some((input(g, cur.node, 0)?, fill));
            between.push(cur.node);
            cur = input(g, cur.node, 1)?;
            continue;
        }
        let (a, b) = (input(g, cur.node, 0)?, input(g, cur.node, 1)?);
        if arity != 2 {
            return None;
        }
        match cop.op_type() {
            "Mul" | "RealDiv" | "Div" if !order.contains(&'s') => {
                let (c, x) = match (float_scalar(g, b), float_scalar(g, a)) {
                    (Some(c), _) => (c, a),
                    (None, Some(c)) if cop.op_type() == "Mul" => (c, b),
                    _ => return None,
                };
                if c == 0.0 {
                    return None;
                }
                scale = if cop.op_type() == "Mul" { c } else { 1.0 / c };
                order.push('s');
                between.push(cur.node);
                cur = x;
            }
            "Add" | "AddV2" if !order.contains(&'a') => {
                // The chain is the operand with the scores' own shape; the other is the term.
                let full = |x: OutAnchor| shape(syms, x) == Some(&s_shape);
                let chain_like = |x: OutAnchor| {
                    g.op(x.node).is_ok_and(|o| {
                        is_bmm(o) || matches!(o.op_type(), "Mul" | "RealDiv" | "Div")
                    })
                };
                let (x, m) = if full(a) && chain_like(a) {
                    (a, b)
                } else if full(b) && chain_like(b) {
                    (b, a)
                } else {
                    return None;
                };
                pse = Some(m);
                order.push('a');
                between.push(cur.node);
                cur = x;
            }
            _ => return None,
        }
    }
    let mm1 = cur.node;
    let mm1_op = g.op(mm1).ok()?;
    if cur.index != 0
        || !plain_bmm(g, mm1)
        || attr_bool(mm1_op, "adj_x1")
        || sole_consumer(g, mm1).is_none()
    {
        return None;
    }
    let query = input(g, mm1, 0)?;
    let kt = input(g, mm1, 1)?;
    let q = shape(syms, query)?;
    let kts = shape(syms, kt)?;
    let v = shape(syms, value)?;
    if q.len() != 4 || kts.len() != 4 || v.len() != 4 {
        return None;
    }
    let adj2 = attr_bool(mm1_op, "adj_x2");
    // The key in BNSD: [B, N, Skv, D].
    let k: Vec<Expr> = if adj2 {
        kts.clone()
    } else {
        vec![
            kts[0].clone(),
            kts[1].clone(),
            kts[3].clone(),
            kts[2].clone(),
        ]
    };
    // One batch and head count for all three (no broadcasting, no grouped heads), one head
    // size, and the key's sequence length on the value.
    let same = q[0] == k[0] && k[0] == v[0] && q[1] == k[1] && k[1] == v[1];
    if !same || q[3] != k[3] || k[2] != v[2] || v[3] != q[3] {
        return None;
    }
    let heads = q[1].as_i64().filter(|&n| n >= 1)?;
    let dt = dtype_of(g, query)?;
    if !matches!(dt, DataType::FLOAT | DataType::FLOAT16 | DataType::BF16)
        || dtype_of(g, kt)? != dt
        || dtype_of(g, value)? != dt
        || dtype_of(g, scores)? != dt
    {
        return None;
    }
    // The additive term: same dtype, rank 4, broadcast only on B (with N), N or Sq.
    let pse = match pse {
        None => None,
        Some(m) => {
            let ms = shape(syms, m)?;
            if dtype_of(g, m)? != dt || ms.len() != 4 || ms[3] != s_shape[3] {
                return None;
            }
            let one = |e: &Expr| e.is_int_value(1);
            let b_ok = ms[0] == s_shape[0] || one(&ms[0]);
            let n_full = ms[1] == s_shape[1];
            let n_ok = n_full || one(&ms[1]);
            let s_full = ms[2] == s_shape[2];
            let s_ok = s_full || one(&ms[2]);
            // BNSS, BN1S, 1NSS (after the head dim is tiled).
            let b_full = ms[0] == s_shape[0];
            let form_ok = b_full || s_full;
            if !(b_ok && n_ok && s_ok && form_ok) {
                return None;
            }
            Some((m, !n_full))
        }
    };
    // The keep mask: bool, a form `atten_mask` takes, the fill low enough (module docs); -inf
    // when the safe-softmax step of the same mask follows.
    let keep = match keep {
        None => None,
        Some((k, fill)) => {
            let safe_of_k = safe.is_some_and(|(_, sk)| sk == k);
            let fill_ok = (fill.is_finite() && fill <= fill_limit(dt)?)
                || (fill == f64::NEG_INFINITY && safe_of_k);
            if !fill_ok || dtype_of(g, k)? != DataType::BOOL {
                return None;
            }
            let ks = shape(syms, k)?;
            let one = |e: &Expr| e.is_int_value(1);
            let ok = match ks.len() {
                2 => ks[0] == s_shape[2] && ks[1] == s_shape[3],
                4 => {
                    let b = ks[0] == s_shape[0] || one(&ks[0]);
                    let n = ks[1] == s_shape[1] || one(&ks[1]);
                    // `[1, N, Sq, Skv]` is not one of GE's forms.
                    let form = !(one(&ks[0]) && !one(&ks[1]) && !one(&s_shape[0]));
                    b && n && form && ks[2] == s_shape[2] && ks[3] == s_shape[3]
                }
                _ => false,
            };
            if !ok {
                return None;
            }
            Some(k)
        }
    };
    // `order` lists the steps bottom-up: ['a', 's'] has the add below the scale (scale first,
    // then the term: `pse_type` 0); GE's default 1 otherwise (the same value without a term).
    let pse_type = if order == ['a', 's'] { 0 } else { 1 };
    // The safe step must test the mask of the fill, or the additive term's entries above -inf.
    if let Some((_, src)) = safe {
        let of_pse = keep.is_none() && pse.is_some_and(|(m, _)| above_minus_inf(g, src, m));
        if keep != Some(src) && !of_pse {
            return None;
        }
    }
    let key = if adj2 {
        Key::Direct(kt)
    } else {
        let top = g.op(kt.node).ok()?;
        let perm = crate::lower::attr_ints(top, "perm");
        match perm {
            Some(p)
                if top.op_type() == "TransposeD"
                    && p.len() == 4
                    && kt.index == 0
                    && sole_consumer(g, kt.node).is_some() =>
            {
                Key::Retarget(kt.node, vec![p[0], p[1], p[3], p[2]])
            }
            _ => Key::Insert(kt),
        }
    };
    Some(Match {
        mm1,
        softmax: sm,
        mm2,
        between,
        query,
        key,
        value,
        scale,
        pse,
        keep,
        safe: safe.map(|(sel, _)| sel),
        pse_type,
        heads,
    })
}

fn out_desc(g: &Graph, a: OutAnchor) -> KindResult<TensorDesc> {
    let op = g.op(a.node)?;
    let k = usize::try_from(a.index).map_err(|e| e.to_string())?;
    op.outputs()
        .get(k)
        .map(|p| (*p.desc).clone())
        .ok_or_else(|| format!("'{}' has no output {k}", op.name()).into())
}

fn add(g: &mut Graph, before: NodeId, op: OpDesc) -> KindResult<NodeId> {
    Ok(g.insert_node_before(before, op)?)
}

fn link(g: &mut Graph, src: OutAnchor, dst: InAnchor) -> KindResult<()> {
    Ok(g.link(src, dst)?)
}

/// Rewrite one match.
fn rewrite(g: &mut Graph, m: Match) -> KindResult<()> {
    let sm_name = g
        .op(m.softmax)
        .map_err(|e| e.to_string())?
        .name()
        .to_string();
    let members: Vec<NodeId> = std::iter::once(m.mm1)
        .chain(m.between.iter().rev().copied())
        .chain([m.softmax, m.mm2])
        .collect();
    let mut names = Vec::new();
    let mut types = Vec::new();
    for &id in &members {
        let op = g.op(id).map_err(|e| e.to_string())?;
        names.push(op.name().to_string());
        types.push(op.op_type().to_string());
    }
    // The key in BNSD.
    let key = match m.key {
        Key::Direct(a) => a,
        Key::Retarget(t, perm) => {
            g.modify_op(t, |op| {
                op.set_attr("perm", AttrValue::ListInt(perm));
                let d = op.port_desc_mut(Side::Output, 0)?;
                if d.shape.len() == 4 {
                    d.shape.swap(2, 3);
                }
                if let Some(os) = d.origin_shape.as_mut().filter(|s| s.len() == 4) {
                    os.swap(2, 3);
                }
                Ok::<(), ascendir_ir::IrError>(())
            })
            .and_then(|r| r)
            .map_err(|e| e.to_string())?;
            OutAnchor::data(t, 0)
        }
        Key::Insert(a) => {
            let src = out_desc(g, a)?;
            let mut d = src.clone();
            if d.shape.len() == 4 {
                d.shape.swap(2, 3);
            }
            d.origin_shape = Some(Box::new(d.shape.clone()));
            let mut op = OpDesc::new(&fresh_name(g, &format!("{sm_name}_key")), "TransposeD");
            op.add_input("x", Arc::new(src));
            op.add_output("y", Arc::new(d)).map_err(|e| e.to_string())?;
            op.set_attr("perm", AttrValue::ListInt(vec![0, 1, 3, 2]));
            let id = add(g, m.mm1, op)?;
            link(g, a, InAnchor::data(id, 0))?;
            OutAnchor::data(id, 0)
        }
    };
    // The additive term, its head dim tiled to N where it is 1.
    let pse = match m.pse {
        None => None,
        Some((a, false)) => Some(a),
        Some((a, true)) => {
            let mult = crate::lower::int_tensor(&[1, m.heads, 1, 1], &[4], DataType::INT64)
                .ok_or("tile multiples")?;
            let cname = fresh_name(g, &format!("{sm_name}_pse_multiples"));
            let mut c = OpDesc::new(&cname, "Const");
            c.add_output("y", mult.desc.clone())
                .map_err(|e| e.to_string())?;
            c.set_attr("value", AttrValue::Tensor(mult));
            let cid = add(g, m.mm1, c)?;
            let src = out_desc(g, a)?;
            let mut d = src.clone();
            if d.shape.len() == 4 {
                d.shape[1] = m.heads;
            }
            d.origin_shape = Some(Box::new(d.shape.clone()));
            let mut t = OpDesc::new(&fresh_name(g, &format!("{sm_name}_pse_tile")), "Tile");
            t.add_input("x", Arc::new(src));
            t.add_input(
                "multiples",
                Arc::new(TensorDesc::new(&[4], DataType::INT64, Format::ND)),
            );
            t.add_output("y", Arc::new(d)).map_err(|e| e.to_string())?;
            let tid = add(g, m.mm1, t)?;
            link(g, a, InAnchor::data(tid, 0))?;
            link(g, OutAnchor::data(cid, 0), InAnchor::data(tid, 1))?;
            Some(OutAnchor::data(tid, 0))
        }
    };
    // GE's atten_mask: set where the score is masked.
    let mask = match m.keep {
        None => None,
        Some(k) => {
            let d = out_desc(g, k)?;
            let mut op = OpDesc::new(
                &fresh_name(g, &format!("{sm_name}_atten_mask")),
                "LogicalNot",
            );
            op.add_input("x", Arc::new(d.clone()));
            op.add_output("y", Arc::new(d)).map_err(|e| e.to_string())?;
            let id = add(g, m.mm1, op)?;
            link(g, k, InAnchor::data(id, 0))?;
            Some(OutAnchor::data(id, 0))
        }
    };
    // The FlashAttentionScore node.
    let q = out_desc(g, m.query)?;
    let result = out_desc(g, OutAnchor::data(m.mm2, 0))?;
    let name = fresh_name(g, &format!("{sm_name}_flash_attention"));
    let mut op = OpDesc::new(&name, "FlashAttentionScore");
    op.add_input("query", Arc::new(q.clone()));
    op.add_input("key", Arc::new(out_desc(g, key)?));
    op.add_input("value", Arc::new(out_desc(g, m.value)?));
    for (k, port) in OPTIONAL_INPUTS.iter().enumerate() {
        let d = match (k, pse, mask) {
            (0, Some(p), _) | (3, _, Some(p)) => out_desc(g, p)?,
            _ => TensorDesc::invalid(),
        };
        op.add_optional_input(port, Arc::new(d));
    }
    let mut stats = q.clone();
    stats.dtype = DataType::FLOAT;
    if stats.shape.len() == 4 {
        stats.shape[3] = 8;
    }
    stats.origin_shape = Some(Box::new(stats.shape.clone()));
    let mut reserved = q;
    reserved.shape = Shape::from_slice(&[0]);
    reserved.origin_shape = Some(Box::new(reserved.shape.clone()));
    for (port, d) in OUTPUTS.iter().zip([stats.clone(), stats, reserved, result]) {
        op.add_output(port, Arc::new(d))
            .map_err(|e| e.to_string())?;
    }
    op.set_attr("scale_value", AttrValue::Float(m.scale as f32));
    op.set_attr("keep_prob", AttrValue::Float(1.0));
    op.set_attr("pre_tockens", AttrValue::Int(2_147_483_647));
    op.set_attr("next_tockens", AttrValue::Int(2_147_483_647));
    op.set_attr("head_num", AttrValue::Int(m.heads));
    op.set_attr("input_layout", AttrValue::String("BNSD".into()));
    op.set_attr("inner_precise", AttrValue::Int(0));
    op.set_attr("sparse_mode", AttrValue::Int(0));
    op.set_attr("pse_type", AttrValue::Int(m.pse_type));
    op.set_attr("_datadump_original_op_names", AttrValue::ListString(names));
    op.set_attr("_datadump_original_op_types", AttrValue::ListString(types));
    let fa = add(g, m.mm2, op)?;
    link(g, m.query, InAnchor::data(fa, 0))?;
    link(g, key, InAnchor::data(fa, 1))?;
    link(g, m.value, InAnchor::data(fa, 2))?;
    if let Some(p) = pse {
        link(g, p, InAnchor::data(fa, 3))?;
    }
    if let Some(k) = mask {
        link(g, k, InAnchor::data(fa, 6))?;
    }
    // The safe step now zeroes the output rows of fully masked query rows (0 · v = 0).
    let out = match m.safe {
        None => OutAnchor::data(fa, 3),
        Some(sel) => {
            let d = out_desc(g, OutAnchor::data(fa, 3))?;
            g.modify_op(sel, |op| {
                *op.port_desc_mut(Side::Input, 1)? = d.clone();
                *op.port_desc_mut(Side::Output, 0)? = d;
                Ok::<(), ascendir_ir::IrError>(())
            })
            .and_then(|r| r)
            .map_err(|e| e.to_string())?;
            OutAnchor::data(sel, 0)
        }
    };
    forward(g, OutAnchor::data(m.mm2, 0), out)?;
    for id in members.into_iter().rev() {
        g.erase_node(id).map_err(|e| e.to_string())?;
    }
    if let Some(sel) = m.safe {
        link(g, OutAnchor::data(fa, 3), InAnchor::data(sel, 1))?;
    }
    Ok(())
}

/// Replace every matched attention of `g` by a `FlashAttentionScore` node (softmaxes in node
/// order); `syms` are the symbolic shapes of `g`. Returns how many were replaced.
pub fn fuse_attention(g: &mut Graph, syms: &SymTable) -> KindResult<usize> {
    let softmaxes: Vec<NodeId> = g
        .node_ids()
        .filter(|&id| g.op(id).is_ok_and(|o| o.op_type() == "SoftmaxV2"))
        .collect();
    let mut n = 0;
    for sm in softmaxes {
        if let Some(m) = match_at(g, syms, sm) {
            rewrite(g, m)?;
            n += 1;
        }
    }
    Ok(n)
}
