//! Stage 3, symbolize: every `-1` dim of a graph input becomes a fresh symbol `s0, s1, …`
//! (input order, then dim order, GE's rule) bound to a hint; then symbolic shape inference
//! for every op the lowering table covers, into a side table keyed by out anchor. A broadcast
//! of two unequal symbolic dims takes the branch the hints give and records a guard.

use std::collections::BTreeMap;

use ascendir_asc::expr::Bindings;
use ascendir_asc::Expr;
use ascendir_ir::{Graph, NodeId};
use rustc_hash::FxHashMap;

use crate::lower::{self, ShapeRule};
use crate::options::CompileOptions;

/// An out anchor: (node, output index).
pub type TRef = (NodeId, u32);

/// Symbolic shapes and what they are bound to.
#[derive(Clone, Debug, Default)]
pub struct SymTable {
    shapes: FxHashMap<TRef, Vec<Expr>>,
    /// Hint value of every symbol.
    pub hints: BTreeMap<String, i64>,
    /// Where each symbol comes from (`"input 0 dim 1"`), GE's symbol_source_info.
    pub sources: BTreeMap<String, String>,
    /// Guards recorded by broadcasts (`Eq(s1, s3)`).
    pub guards: Vec<String>,
    subst: FxHashMap<String, Expr>,
    bindings: Bindings,
}

impl SymTable {
    /// The symbolic shape of an out anchor (None when not symbolic).
    pub fn shape(&self, t: TRef) -> Option<&Vec<Expr>> {
        self.shapes.get(&t)
    }

    /// Evaluate `e` at the hints.
    pub fn eval(&self, e: &Expr) -> Option<i64> {
        e.evaluate(&self.bindings).ok()
    }

    /// Elements of a tensor at the hints.
    pub fn numel(&self, t: TRef) -> Option<i64> {
        let s = self.shapes.get(&t)?;
        let mut n: i64 = 1;
        for d in s {
            n = n.checked_mul(self.eval(d)?)?;
        }
        Some(n)
    }

    /// The hints as expression bindings.
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    fn set(&mut self, t: TRef, s: Vec<Expr>) {
        self.shapes.insert(t, s);
    }

    fn hint(&self, e: &Expr) -> Option<i64> {
        self.eval(e)
    }

    fn canon(&self, e: &Expr) -> Expr {
        if self.subst.is_empty() {
            e.clone()
        } else {
            e.subs(&self.subst)
        }
    }

    /// Numpy broadcast of two dims; records guards for unequal symbolic dims.
    fn broadcast_dim(&mut self, a: &Expr, b: &Expr) -> Option<Expr> {
        let a = self.canon(a);
        let b = self.canon(b);
        if a == b {
            return Some(a);
        }
        if a.is_int_value(1) {
            return Some(b);
        }
        if b.is_int_value(1) {
            return Some(a);
        }
        if a.is_const() && b.is_const() {
            return None;
        }
        let (ha, hb) = (self.hint(&a)?, self.hint(&b)?);
        if ha == hb {
            // Equal at the hints: assume equal (expect-guard), keep the first.
            self.guards.push(format!("Eq({a}, {b})"));
            if let Some(name) = b.as_sym() {
                self.subst.insert(name.to_string(), a.clone());
            } else if let Some(name) = a.as_sym() {
                self.subst.insert(name.to_string(), b.clone());
                return Some(b);
            }
            return Some(a);
        }
        if ha == 1 {
            self.guards.push(format!("Eq({a}, 1)"));
            if let Some(name) = a.as_sym() {
                self.subst.insert(name.to_string(), Expr::int(1));
            }
            return Some(b);
        }
        if hb == 1 {
            self.guards.push(format!("Eq({b}, 1)"));
            if let Some(name) = b.as_sym() {
                self.subst.insert(name.to_string(), Expr::int(1));
            }
            return Some(a);
        }
        None
    }
}

/// Graph inputs in GE's order: the registered inputs, else Data nodes by their `index`.
pub fn graph_inputs(g: &Graph) -> Vec<NodeId> {
    if !g.inputs().is_empty() {
        return g.inputs().to_vec();
    }
    let mut v: Vec<(i64, usize, NodeId)> = g
        .node_ids()
        .enumerate()
        .filter_map(|(pos, id)| {
            let op = g.op(id).ok()?;
            (op.op_type() == "Data").then(|| {
                (
                    op.attr("index")
                        .and_then(|a| a.as_int())
                        .unwrap_or(i64::MAX),
                    pos,
                    id,
                )
            })
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, _, id)| id).collect()
}

fn static_shape(dims: &[i64]) -> Option<Vec<Expr>> {
    dims.iter()
        .map(|&d| (d >= 0).then(|| Expr::int(d)))
        .collect()
}

/// Run stage 3 over `g` (nodes in `order`, topological).
pub fn symbolize(g: &Graph, order: &[NodeId], opts: &CompileOptions) -> Result<SymTable, String> {
    let mut t = SymTable::default();
    let mut next = 0usize;
    for (i, id) in graph_inputs(g).into_iter().enumerate() {
        let op = g.op(id).map_err(|e| e.to_string())?;
        let Some(port) = op.outputs().first() else {
            continue;
        };
        let dims = port.desc.shape.clone();
        if dims.iter().any(|&d| d < -1) {
            continue; // unknown rank: not symbolic
        }
        let given = opts.input_shapes.get(op.name());
        if let Some(gv) = given {
            if gv.len() != dims.len() {
                return Err(format!(
                    "input_shapes['{}'] has {} dims, the input has rank {}",
                    op.name(),
                    gv.len(),
                    dims.len()
                ));
            }
        }
        let mut shape = Vec::with_capacity(dims.len());
        for (j, &d) in dims.iter().enumerate() {
            let hint = given.and_then(|v| v.get(j)).copied().filter(|&h| h >= 0);
            if d >= 0 {
                if let Some(h) = hint {
                    if h != d {
                        return Err(format!(
                            "input_shapes['{}'] dim {j} is {h}, the input's static dim is {d}",
                            op.name()
                        ));
                    }
                }
                shape.push(Expr::int(d));
            } else {
                let name = format!("s{next}");
                next += 1;
                t.hints
                    .insert(name.clone(), hint.unwrap_or(opts.default_hint));
                t.bindings
                    .insert(name.clone(), hint.unwrap_or(opts.default_hint));
                t.sources.insert(name.clone(), format!("input {i} dim {j}"));
                shape.push(Expr::sym(&name));
            }
        }
        t.set((id, 0), shape);
    }
    for &id in order {
        let node = g.node(id).map_err(|e| e.to_string())?;
        let op = node.op();
        if t.shapes.contains_key(&(id, 0)) {
            continue;
        }
        let inferred = lower::lookup(op.op_type()).and_then(|l| infer_node(&mut t, g, id, &l));
        for (k, port) in op.outputs().iter().enumerate() {
            let desc = static_shape(&port.desc.shape);
            let s = if k == 0 { inferred.clone() } else { None };
            let chosen = match (s, desc) {
                (Some(s), Some(d)) => {
                    // The recorded static shape must agree with the symbolic one.
                    let agree =
                        s.len() == d.len() && s.iter().zip(&d).all(|(a, b)| t.hint(a) == t.hint(b));
                    agree.then_some(s)
                }
                (Some(s), None) => {
                    let rank_ok = port.desc.shape.len() == s.len() || port.desc.shape.is_empty();
                    rank_ok.then_some(s)
                }
                (None, d) => d,
            };
            if let Some(c) = chosen {
                t.set((id, k as u32), c);
            }
        }
    }
    if !t.subst.is_empty() {
        let subst = std::mem::take(&mut t.subst);
        for v in t.shapes.values_mut() {
            for d in v.iter_mut() {
                *d = d.subs(&subst);
            }
        }
        t.subst = subst;
    }
    Ok(t)
}

/// The symbolic output 0 of a node with a lowering, from its data operands' shapes.
fn infer_node(t: &mut SymTable, g: &Graph, id: NodeId, l: &lower::Lowering) -> Option<Vec<Expr>> {
    let node = g.node(id).ok()?;
    let n_data = l
        .data_inputs
        .unwrap_or(node.num_in_data())
        .min(node.num_in_data());
    let mut ins: Vec<Option<Vec<Expr>>> = Vec::new();
    for k in 0..n_data {
        match node.in_data_peer(k) {
            Some(p) => {
                let s = t.shapes.get(&(p.node, p.index as u32))?.clone();
                ins.push(Some(s));
            }
            None => ins.push(None),
        }
    }
    let first = ins.first()?.clone()?;
    let out_desc = &node.op().outputs().first()?.desc.shape;
    match &l.shape {
        ShapeRule::Broadcast { align } => {
            let present: Vec<(usize, Vec<Expr>)> = ins
                .iter()
                .enumerate()
                .filter_map(|(k, s)| s.clone().map(|s| (k, s)))
                .collect();
            let rank = present.iter().map(|(_, s)| s.len()).max()?;
            let mut out = vec![Expr::int(1); rank];
            for (k, s) in &present {
                let start = match align.get(*k).copied().flatten() {
                    Some(a) => a,
                    None => rank - s.len(),
                };
                if start + s.len() > rank {
                    return None;
                }
                for (j, d) in s.iter().enumerate() {
                    out[start + j] = t.broadcast_dim(&out[start + j], d)?;
                }
            }
            // Expand / BroadcastTo: the target shape is the recorded one.
            if let Some(target) = static_shape(out_desc) {
                if target != out {
                    let r = target.len().max(out.len());
                    let mut res = vec![Expr::int(1); r];
                    for (j, d) in out.iter().enumerate() {
                        res[r - out.len() + j] = d.clone();
                    }
                    for (j, d) in target.iter().enumerate() {
                        let k = r - target.len() + j;
                        res[k] = t.broadcast_dim(&res[k], d)?;
                    }
                    out = res;
                }
            }
            Some(out)
        }
        ShapeRule::Reduce => {
            let src = l.axes.as_ref()?;
            let axes = lower::reduce_axes(g, id, src, first.len()).ok()?;
            let keep = l
                .keep_dims_attr
                .as_deref()
                .and_then(|k| node.op().attr(k))
                .and_then(|v| v.as_bool())
                .unwrap_or(true);
            Some(
                first
                    .iter()
                    .enumerate()
                    .filter_map(|(j, d)| match (axes.contains(&j), keep) {
                        (true, true) => Some(Expr::int(1)),
                        (true, false) => None,
                        (false, _) => Some(d.clone()),
                    })
                    .collect(),
            )
        }
        ShapeRule::View => {
            if out_desc.iter().any(|&d| d < -1) {
                return None;
            }
            let in_nu: Vec<&Expr> = first.iter().filter(|d| !d.is_int_value(1)).collect();
            let out_nu = out_desc.iter().filter(|&&d| d != 1).count();
            if in_nu.len() != out_nu {
                return None;
            }
            let mut it = in_nu.into_iter();
            let mut out = Vec::with_capacity(out_desc.len());
            for &d in out_desc.iter() {
                if d == 1 {
                    out.push(Expr::int(1));
                } else {
                    let src = it.next()?;
                    if d >= 0 && t.hint(src) != Some(d) {
                        return None;
                    }
                    out.push(src.clone());
                }
            }
            Some(out)
        }
    }
}
