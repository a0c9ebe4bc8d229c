//! Symbolic shapes across the ops the lowering table does not cover, so a dynamic model keeps
//! its symbols through MatMul, Reshape, Transpose, Concat, Gather, Conv and the rest.
//!
//! Three parts, used by the symbolize stage for every node whose recorded output is not static:
//! - **values**: small integer tensors (shape arithmetic: `Shape → Gather → Unsqueeze → Concat
//!   → Reshape`, slice bounds) carried as symbolic expressions, ONNX's data propagation;
//! - **rules** for the common barriers, exact in the symbols;
//! - a **fallback** for everything else: the op's registered inference rule run on a copy of
//!   the op at the hints, each dim it leaves unknown in the recorded desc a fresh symbol bound
//!   to the value the rule gives (later broadcasts unify it with the others, with a guard).

use ascendir_asc::Expr;
use ascendir_ir::infer::engine::{const_value, infer_op};
use ascendir_ir::infer::CustomInfer;
use ascendir_ir::{registry, DataType, Graph, NodeId, OpDesc, Side, Tensor};

use crate::lower::{attr_ints, int_tensor, tensor_ints};
use crate::symbolize::{SymTable, TRef};

/// The most elements a propagated value may have.
const MAX_VALUE: usize = 64;

/// Types whose output dim 0 is the batch dim of input 0 (NCHW / NHWC alike).
const BATCH_PASSTHROUGH: &[&str] = &[
    "Conv2D",
    "Conv3D",
    "DepthwiseConv2D",
    "Conv2DTranspose",
    "Conv2DTransposeD",
    "MaxPool",
    "MaxPoolV3",
    "MaxPool3D",
    "AvgPool",
    "AvgPoolV2",
    "AvgPool3D",
    "Pooling",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "AdaptiveAvgPool2d",
    "ResizeBilinearV2",
    "ResizeNearestNeighborV2",
    "Resize",
];

fn attr_int(op: &OpDesc, name: &str) -> Option<i64> {
    op.attr(name).and_then(|a| a.as_int())
}

fn attr_bool(op: &OpDesc, name: &str) -> bool {
    op.attr(name).and_then(|a| a.as_bool()).unwrap_or(false)
}

fn norm_axis(a: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let n = if a < 0 { a.checked_add(r)? } else { a };
    usize::try_from(n).ok().filter(|_| n < r)
}

/// What a rule sees of one node.
struct View<'a> {
    g: &'a Graph,
    id: NodeId,
    op: &'a OpDesc,
    peers: Vec<Option<TRef>>,
}

impl<'a> View<'a> {
    fn new(g: &'a Graph, id: NodeId, node: &'a ascendir_ir::NodeData) -> View<'a> {
        View {
            g,
            id,
            op: node.op(),
            peers: (0..node.num_in_data())
                .map(|k| node.in_data_peer(k).map(|p| (p.node, p.index as u32)))
                .collect(),
        }
    }

    fn shape(&self, t: &SymTable, k: usize) -> Option<Vec<Expr>> {
        let p = (*self.peers.get(k)?)?;
        if let Some(s) = t.shape(p) {
            return Some(s.clone());
        }
        let desc = &self.g.op(p.0).ok()?.outputs().get(p.1 as usize)?.desc;
        desc.shape
            .iter()
            .map(|&d| (d >= 0).then(|| Expr::int(d)))
            .collect()
    }

    /// The value of input `k`: a propagated one, or the Const's integers.
    fn value(&self, t: &SymTable, k: usize) -> Option<Vec<Expr>> {
        let p = (*self.peers.get(k)?)?;
        if let Some(v) = t.value(p) {
            return Some(v.clone());
        }
        let c = const_value(self.g.op(p.0).ok()?)?;
        let ints = whole_numbers(&c).filter(|v| v.len() <= MAX_VALUE)?;
        Some(ints.into_iter().map(Expr::int).collect())
    }

    /// The value of input `k` as plain integers (constant, or evaluable without symbols).
    fn ints(&self, t: &SymTable, k: usize) -> Option<Vec<i64>> {
        self.value(t, k)?
            .iter()
            .map(|e| if e.is_const() { e.as_i64() } else { None })
            .collect()
    }

    /// The Concat axis and data inputs of the concat family.
    fn concat_args(&self, t: &SymTable) -> Option<(i64, Vec<usize>)> {
        let n = self.peers.len();
        match self.op.op_type() {
            "ConcatV2D" | "ConcatD" => Some((attr_int(self.op, "concat_dim")?, (0..n).collect())),
            "ConcatV2" => Some((
                *self.ints(t, n.checked_sub(1)?)?.first()?,
                (0..n - 1).collect(),
            )),
            "Concat" => Some((*self.ints(t, 0)?.first()?, (1..n).collect())),
            _ => None,
        }
    }
}

/// The integers of a constant: an integer tensor, or a float one holding whole numbers (the
/// `0.0` and `1.0` of a `Range` over a float length).
fn whole_numbers(c: &ascendir_ir::Tensor) -> Option<Vec<i64>> {
    if let Some(v) = tensor_ints(c) {
        return Some(v);
    }
    ascendir_ir::infer::shape::tensor_f64(c)
        .ok()?
        .into_iter()
        .map(|x| (x.fract() == 0.0 && x.abs() <= 9.0e15).then_some(x as i64))
        .collect()
}

/// The value of output 0 of node `id`, when it is a small integer tensor computed from shapes
/// (or such a tensor cast to a float type: a dim's value survives `Cast<float>` exactly).
pub(crate) fn value(t: &SymTable, g: &Graph, id: NodeId) -> Option<Vec<Expr>> {
    let node = g.node(id).ok()?;
    let op = node.op();
    let out = op.outputs().first()?;
    let float_cast =
        op.op_type() == "Cast" && matches!(out.desc.dtype, DataType::FLOAT | DataType::DOUBLE);
    if !matches!(out.desc.dtype, DataType::INT64 | DataType::INT32) && !float_cast {
        return None;
    }
    let v = View::new(g, id, node);
    let res = match op.op_type() {
        "Shape" => {
            let s = v.shape(t, 0)?;
            let (start, end) = shape_range(op, s.len());
            s.get(start..end)?.to_vec()
        }
        "Size" => vec![Expr::product(v.shape(t, 0)?.iter())],
        "GatherV2D" | "GatherV2" | "Gather" => {
            let axis = match op.op_type() {
                "GatherV2" => *v.ints(t, 2)?.first()?,
                _ => attr_int(op, "axis").unwrap_or(0),
            };
            let params = v.value(t, 0)?;
            if axis != 0 || v.shape(t, 0)?.len() != 1 {
                return None;
            }
            let n = params.len();
            let mut res = Vec::new();
            for i in v.ints(t, 1)? {
                res.push(params.get(norm_axis(i, n)?)?.clone());
            }
            res
        }
        "Unsqueeze" | "Squeeze" | "Reshape" | "Flatten" | "ExpandDims" | "Identity" | "Cast"
        | "FlattenV2" => v.value(t, 0)?,
        "ConcatV2D" | "ConcatD" | "ConcatV2" | "Concat" => {
            let (_, data) = v.concat_args(t)?;
            let mut res = Vec::new();
            for k in data {
                res.extend(v.value(t, k)?);
            }
            res
        }
        "Add" | "Sub" | "Mul" | "RealDiv" | "Div" | "FloorDiv" | "Maximum" | "Minimum" => {
            let (a, b) = (v.value(t, 0)?, v.value(t, 1)?);
            let n = a.len().max(b.len());
            if (a.len() != n && a.len() != 1) || (b.len() != n && b.len() != 1) {
                return None;
            }
            // Element by element only where no axis broadcasts: `[8, 1] - [1, 8]` has 8
            // values on each side but 64 results.
            if a.len() > 1 && b.len() > 1 && v.shape(t, 0)? != v.shape(t, 1)? {
                return None;
            }
            let mut res = Vec::with_capacity(n);
            for i in 0..n {
                let x = &a[if a.len() == 1 { 0 } else { i }];
                let y = &b[if b.len() == 1 { 0 } else { i }];
                res.push(match op.op_type() {
                    "Add" => Expr::add(x, y),
                    "Sub" => Expr::sub(x, y),
                    "Mul" => Expr::mul(x, y),
                    "Maximum" => Expr::max(x, y),
                    "Minimum" => Expr::min(x, y),
                    _ => {
                        if y.is_int_value(0) {
                            return None;
                        }
                        Expr::floor(&Expr::div(x, y))
                    }
                });
            }
            res
        }
        "StridedSliceV2" | "StridedSlice" | "Slice" | "SliceD" => {
            let x = v.value(t, 0)?;
            if v.shape(t, 0)?.len() != 1 {
                return None;
            }
            let (b, e, s) = slice_bounds(&v, t)?;
            let n = x.len() as i64;
            let (b, e, s) = (b.first()?, e.first()?, s.first().copied().unwrap_or(1));
            let (Some(b), Some(e)) = (b.as_i64(), e.as_i64()) else {
                return None;
            };
            if s != 1 {
                return None;
            }
            let cl = |a: i64| if a < 0 { (a + n).max(0) } else { a.min(n) } as usize;
            let (b, e) = (cl(b), cl(e));
            x.get(b..e.max(b))?.to_vec()
        }
        _ => return None,
    };
    (res.len() <= MAX_VALUE).then_some(res)
}

/// Begin, end and strides of the slice family over the axes they name (in order).
fn slice_bounds(v: &View<'_>, t: &SymTable) -> Option<(Vec<Expr>, Vec<Expr>, Vec<i64>)> {
    match v.op.op_type() {
        "StridedSliceV2" | "StridedSlice" => {
            let b = v.value(t, 1)?;
            let e = v.value(t, 2)?;
            let s = if v.op.op_type() == "StridedSliceV2" {
                v.ints(t, 4).unwrap_or_else(|| vec![1; b.len()])
            } else {
                v.ints(t, 3)?
            };
            Some((b, e, s))
        }
        "Slice" => {
            let b = v.value(t, 1)?;
            let size = v.value(t, 2)?;
            if size.iter().any(|d| d.is_int_value(-1)) {
                return None;
            }
            let e = b.iter().zip(&size).map(|(b, s)| Expr::add(b, s)).collect();
            let n = b.len();
            Some((b, e, vec![1; n]))
        }
        _ => None,
    }
}

/// Exact symbolic output shapes of the barriers this module knows (per output).
fn rule(t: &mut SymTable, v: &View<'_>) -> Option<Vec<Vec<Expr>>> {
    let op = v.op;
    let one = |s: Vec<Expr>| Some(vec![s]);
    match op.op_type() {
        "Shape" => one(vec![Expr::int(v.value_len(t)?)]),
        "Range" => {
            // ceil((limit - start) / delta) elements, for a constant delta.
            let (start, limit) = (v.value(t, 0)?, v.value(t, 1)?);
            let delta = *v.ints(t, 2)?.first()?;
            let span = match delta {
                0 => return None,
                d if d > 0 => Expr::sub(limit.first()?, start.first()?),
                _ => Expr::sub(start.first()?, limit.first()?),
            };
            let step = delta.abs();
            let len = if step == 1 {
                span
            } else {
                Expr::floor(&Expr::div(
                    &Expr::add(&span, &Expr::int(step - 1)),
                    &Expr::int(step),
                ))
            };
            // Only where the hints give a length (an empty or negative range stays unknown).
            (t.eval(&len)? > 0).then(|| vec![vec![len]])
        }
        "GatherV2D" | "GatherV2" | "Gather" => {
            if attr_int(op, "batch_dims").unwrap_or(0) != 0 {
                return None;
            }
            let p = v.shape(t, 0)?;
            let i = v.shape(t, 1)?;
            let axis = match op.op_type() {
                "GatherV2" => *v.ints(t, 2)?.first()?,
                _ => attr_int(op, "axis").unwrap_or(0),
            };
            let a = norm_axis(axis, p.len())?;
            let mut s = p[..a].to_vec();
            s.extend(i);
            s.extend_from_slice(&p[a + 1..]);
            one(s)
        }
        "Unsqueeze" | "ExpandDims" => {
            let x = v.shape(t, 0)?;
            let axes = attr_ints(op, "axes")
                .or_else(|| attr_ints(op, "axis"))
                .or_else(|| v.ints(t, 1))?;
            let r = x.len().checked_add(axes.len())?;
            let mut ax: Vec<usize> = axes
                .iter()
                .map(|&a| norm_axis(a, r))
                .collect::<Option<_>>()?;
            ax.sort_unstable();
            ax.dedup();
            if ax.len() != axes.len() {
                return None;
            }
            let mut it = x.into_iter();
            one((0..r)
                .map(|j| {
                    if ax.contains(&j) {
                        Some(Expr::int(1))
                    } else {
                        it.next()
                    }
                })
                .collect::<Option<_>>()?)
        }
        "Squeeze" => {
            let x = v.shape(t, 0)?;
            let axes = attr_ints(op, "axis")
                .or_else(|| attr_ints(op, "axes"))
                .unwrap_or_default();
            let ax: Vec<usize> = axes
                .iter()
                .map(|&a| norm_axis(a, x.len()))
                .collect::<Option<_>>()?;
            let keep = |j: usize, d: &Expr| {
                if ax.is_empty() {
                    !d.is_int_value(1)
                } else {
                    !ax.contains(&j)
                }
            };
            one(x
                .iter()
                .enumerate()
                .filter(|(j, d)| keep(*j, d))
                .map(|(_, d)| d.clone())
                .collect())
        }
        "Reshape" => {
            if attr_int(op, "axis").unwrap_or(0) != 0
                || attr_int(op, "num_axes").unwrap_or(-1) != -1
            {
                return None;
            }
            let x = v.shape(t, 0)?;
            let target = v.value(t, 1).or_else(|| {
                attr_ints(op, "shape").map(|s| s.into_iter().map(Expr::int).collect())
            })?;
            one(reshape(t, &x, &target, attr_bool(op, "allowzero"))?)
        }
        "Flatten" | "FlattenV2" => {
            let x = v.shape(t, 0)?;
            let a = match attr_int(op, "axis").unwrap_or(1) {
                a if a < 0 => usize::try_from(a + x.len() as i64).ok()?,
                a => usize::try_from(a).ok()?.min(x.len()),
            };
            one(vec![
                Expr::product(x[..a].iter()),
                Expr::product(x[a..].iter()),
            ])
        }
        "TransposeD" | "Transpose" => {
            let x = v.shape(t, 0)?;
            let perm = attr_ints(op, "perm").or_else(|| v.ints(t, 1))?;
            if perm.len() != x.len() {
                return None;
            }
            one(perm
                .iter()
                .map(|&p| norm_axis(p, x.len()).map(|p| x[p].clone()))
                .collect::<Option<_>>()?)
        }
        "ConcatV2D" | "ConcatD" | "ConcatV2" | "Concat" => {
            let (axis, data) = v.concat_args(t)?;
            let first = v.shape(t, *data.first()?)?;
            let a = norm_axis(axis, first.len())?;
            let mut s = first.clone();
            for &k in &data[1..] {
                let o = v.shape(t, k)?;
                if o.len() != s.len() {
                    return None;
                }
                s[a] = Expr::add(&s[a], &o[a]);
            }
            one(s)
        }
        "MatMulV2" | "MatMul" | "BatchMatMulV2" | "BatchMatMul" => {
            let (ta, tb) = if op.op_type().starts_with("Batch") {
                (attr_bool(op, "adj_x1"), attr_bool(op, "adj_x2"))
            } else {
                (attr_bool(op, "transpose_x1"), attr_bool(op, "transpose_x2"))
            };
            let a = v.shape(t, 0)?;
            let b = v.shape(t, 1)?;
            if a.len() < 2 || b.len() < 2 {
                return None;
            }
            let (ra, rb) = (a.len(), b.len());
            let m = if ta { &a[ra - 1] } else { &a[ra - 2] };
            let n = if tb { &b[rb - 2] } else { &b[rb - 1] };
            let (ba, bb) = (&a[..ra - 2], &b[..rb - 2]);
            let r = ba.len().max(bb.len());
            let mut s = Vec::with_capacity(r + 2);
            for j in 0..r {
                let x = (j + ba.len())
                    .checked_sub(r)
                    .map_or(Expr::int(1), |i| ba[i].clone());
                let y = (j + bb.len())
                    .checked_sub(r)
                    .map_or(Expr::int(1), |i| bb[i].clone());
                s.push(t.broadcast(&x, &y)?);
            }
            s.push(m.clone());
            s.push(n.clone());
            one(s)
        }
        "FlashAttentionScore" => {
            // The layout the attention pass writes: [B, N, S, D].
            if op.attr("input_layout").and_then(|a| a.as_str()) != Some("BNSD") {
                return None;
            }
            let q = v.shape(t, 0)?;
            let val = v.shape(t, 2)?;
            if q.len() != 4 || val.len() != 4 {
                return None;
            }
            let stats = vec![q[0].clone(), q[1].clone(), q[2].clone(), Expr::int(8)];
            let out = vec![q[0].clone(), q[1].clone(), q[2].clone(), val[3].clone()];
            Some(vec![stats.clone(), stats, vec![Expr::int(0)], out])
        }
        "StridedSliceV2" | "Slice" => {
            let x = v.shape(t, 0)?;
            let (b, e, st) = slice_bounds(v, t)?;
            let axes: Vec<i64> = if op.op_type() == "StridedSliceV2" {
                v.ints(t, 3)
                    .unwrap_or_else(|| (0..b.len() as i64).collect())
            } else {
                (0..b.len() as i64).collect()
            };
            if axes.len() != b.len() || e.len() != b.len() || st.len() != b.len() {
                return None;
            }
            let mut s = x.clone();
            for (k, &a) in axes.iter().enumerate() {
                let a = norm_axis(a, x.len())?;
                s[a] = t.slice_dim(&x[a], &b[k], &e[k], st[k])?;
            }
            one(s)
        }
        _ => None,
    }
}

impl View<'_> {
    fn value_len(&self, t: &SymTable) -> Option<i64> {
        let (start, end) = shape_range(self.op, self.shape(t, 0)?.len());
        i64::try_from(end - start).ok()
    }
}

/// The dims a `Shape` op returns, `[start, end)` of a rank-`rank` input (ONNX clamping).
fn shape_range(op: &OpDesc, rank: usize) -> (usize, usize) {
    let r = rank as i64;
    let clamp = |a: i64| if a < 0 { (a + r).max(0) } else { a.min(r) } as usize;
    let start = clamp(attr_int(op, "start").unwrap_or(0));
    let end = clamp(attr_int(op, "end").unwrap_or(r));
    (start, end.max(start))
}

/// `x` reshaped to `target` (0 copies the input dim unless `allowzero`, one -1 is inferred).
fn reshape(t: &SymTable, x: &[Expr], target: &[Expr], allowzero: bool) -> Option<Vec<Expr>> {
    let mut out = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (j, d) in target.iter().enumerate() {
        if d.is_int_value(-1) {
            if infer_at.replace(j).is_some() {
                return None;
            }
            out.push(Expr::int(1));
        } else if d.is_int_value(0) && !allowzero {
            out.push(x.get(j)?.clone());
        } else {
            if t.eval(d)? < 0 {
                return None;
            }
            out.push(d.clone());
        }
    }
    let numel = Expr::product(x.iter());
    if let Some(j) = infer_at {
        let known = Expr::product(out.iter());
        let q = Expr::div(&numel, &known);
        let (n, k) = (t.eval(&numel)?, t.eval(&known)?);
        if k == 0 || n % k != 0 {
            return None;
        }
        out[j] = q;
    } else if t.eval(&numel)? != t.eval(&Expr::product(out.iter()))? {
        return None;
    }
    Some(out)
}

/// Symbolic shapes of every output of `id` (None for an output nothing could give).
pub(crate) fn infer(
    t: &mut SymTable,
    g: &Graph,
    id: NodeId,
    custom: &mut dyn CustomInfer,
) -> Vec<Option<Vec<Expr>>> {
    let Ok(node) = g.node(id) else {
        return Vec::new();
    };
    let op = node.op();
    let v = View::new(g, id, node);
    let n_out = op.outputs().len();
    if let Some(s) = rule(t, &v) {
        let mut res: Vec<Option<Vec<Expr>>> = s.into_iter().map(Some).collect();
        res.resize(n_out, None);
        return res;
    }
    fallback(t, &v, custom).unwrap_or_else(|| vec![None; n_out])
}

/// The op's own rule at the hints; unknown recorded dims become fresh symbols.
fn fallback(
    t: &mut SymTable,
    v: &View<'_>,
    custom: &mut dyn CustomInfer,
) -> Option<Vec<Option<Vec<Expr>>>> {
    let proto = registry::lookup(v.op.op_type())?;
    let mut op = v.op.clone();
    let mut ins: Vec<Option<Vec<Expr>>> = Vec::with_capacity(v.peers.len());
    for k in 0..v.peers.len() {
        let s = if v.peers[k].is_some() {
            Some(v.shape(t, k)?)
        } else {
            None
        };
        if let Some(s) = &s {
            let dims: Vec<i64> = s.iter().map(|d| t.eval(d)).collect::<Option<_>>()?;
            if let Ok(desc) = op.port_desc_mut(Side::Input, k) {
                desc.shape = dims.as_slice().into();
            }
        }
        ins.push(s);
    }
    let mut vals: Vec<Option<Tensor>> = Vec::with_capacity(v.peers.len());
    for k in 0..v.peers.len() {
        let Some(p) = v.peers[k] else {
            vals.push(None);
            continue;
        };
        let c = v.g.op(p.0).ok().and_then(const_value);
        let c = c.or_else(|| {
            let ints: Vec<i64> = t
                .value(p)?
                .iter()
                .map(|e| t.eval(e))
                .collect::<Option<_>>()?;
            let desc = &v.g.op(p.0).ok()?.outputs().get(p.1 as usize)?.desc;
            let shape: Vec<i64> = if desc.shape.is_empty() && ints.len() == 1 {
                Vec::new()
            } else {
                vec![ints.len() as i64]
            };
            int_tensor(&ints, &shape, desc.dtype)
        });
        vals.push(c);
    }
    let values = |i: usize| vals.get(i).cloned().flatten();
    let outs = infer_op(&proto, &op, &values, custom).ok()?;
    let batch = BATCH_PASSTHROUGH
        .contains(&v.op.op_type())
        .then(|| {
            ins.first()
                .cloned()
                .flatten()
                .and_then(|s| s.first().cloned())
        })
        .flatten();
    let name = v.op.name().to_string();
    let mut res = Vec::with_capacity(v.op.outputs().len());
    for (k, port) in v.op.outputs().iter().enumerate() {
        let used =
            v.g.node(v.id)
                .is_ok_and(|n| !n.out_data_peers(k).is_empty());
        let Some(o) = outs.get(k).filter(|_| used) else {
            res.push(None);
            continue;
        };
        let rec = &port.desc.shape;
        let rank_known = !rec.iter().any(|&d| d < -1);
        if rank_known && rec.len() != o.shape.len() {
            res.push(None);
            continue;
        }
        let mut s = Vec::with_capacity(o.shape.len());
        let mut ok = true;
        for (j, &c) in o.shape.iter().enumerate() {
            let r = if rank_known { rec[j] } else { -1 };
            if r >= 0 {
                s.push(Expr::int(r));
            } else if c < 0 {
                ok = false;
                break;
            } else if let Some(b) = batch.as_ref().filter(|b| j == 0 && t.eval(b) == Some(c)) {
                s.push(b.clone());
            } else {
                s.push(t.fresh(c, format!("node '{name}' output {k} dim {j}")));
            }
        }
        res.push(ok.then_some(s));
    }
    Some(res)
}
