//! Stage 3, symbolize: every `-1` dim of a graph input becomes a fresh symbol `s0, s1, …`
//! (input order, then dim order, GE's rule) bound to a hint; then symbolic shape inference
//! for every op the lowering table covers, into a side table keyed by out anchor. A broadcast
//! of two unequal symbolic dims takes the branch the hints give and records a guard.

use crate::error::KindResult;
use std::collections::BTreeMap;

use ascendir_asc::expr::Bindings;
use ascendir_asc::Expr;
use ascendir_ir::{Graph, NodeId};
use rustc_hash::FxHashMap;

use ascendir_ir::infer::CustomInfer;

use crate::lower::{self, ShapeRule};
use crate::options::CompileOptions;

mod store;

/// An out anchor: (node, output index).
pub type TRef = (NodeId, u32);

/// Elements of a shape at `hints`.
fn numel_at(hints: &Bindings, shape: &[Expr]) -> Option<i64> {
    let mut n: i64 = 1;
    for d in shape {
        n = n.checked_mul(d.evaluate(hints).ok()?)?;
    }
    Some(n)
}

/// Symbolic shapes and what they are bound to.
#[derive(Clone, Debug, Default)]
pub struct SymTable {
    shapes: store::Shapes,
    /// Hint value of every symbol.
    pub hints: BTreeMap<String, i64>,
    /// Where each symbol comes from (`"input 0 dim 1"`), GE's symbol_source_info.
    pub sources: BTreeMap<String, String>,
    /// Guards recorded by broadcasts (`Eq(s1, s3)`).
    pub guards: Vec<String>,
    subst: FxHashMap<String, Expr>,
    bindings: Bindings,
    /// Values of small integer tensors (shape arithmetic), element by element.
    values: FxHashMap<TRef, Vec<Expr>>,
    next_sym: usize,
}

impl SymTable {
    /// The symbolic shape of an out anchor (None when not symbolic).
    pub fn shape(&self, t: TRef) -> Option<&Vec<Expr>> {
        self.shapes.shape(self.shapes.class(t)?)
    }

    /// The class of an out anchor's symbolic shape: equal shapes have one class (numbered in
    /// the order symbolize first met them), different shapes different ones.
    pub fn shape_class(&self, t: TRef) -> Option<u32> {
        self.shapes.class(t)
    }

    /// Evaluate `e` at the hints.
    pub fn eval(&self, e: &Expr) -> Option<i64> {
        e.evaluate(&self.bindings).ok()
    }

    /// Elements of a tensor at the hints.
    pub fn numel(&self, t: TRef) -> Option<i64> {
        let c = self.shapes.class(t)?;
        match self.shapes.numel(c) {
            Some(n) => n,
            None => self.numel_of(self.shapes.shape(c)?),
        }
    }

    /// Elements of a shape at the hints.
    pub fn numel_of(&self, shape: &[Expr]) -> Option<i64> {
        numel_at(&self.bindings, shape)
    }

    /// The hints as expression bindings.
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    /// The propagated value of a small integer tensor.
    pub fn value(&self, t: TRef) -> Option<&Vec<Expr>> {
        self.values.get(&t)
    }

    /// A new symbol bound to `hint`, recorded with where it comes from.
    pub(crate) fn fresh(&mut self, hint: i64, source: String) -> Expr {
        let name = format!("s{}", self.next_sym);
        self.next_sym += 1;
        self.hints.insert(name.clone(), hint);
        self.bindings.insert(name.clone(), hint);
        self.sources.insert(name.clone(), source);
        Expr::sym(&name)
    }

    /// Numpy broadcast of two dims (guards recorded as in the element-wise rule).
    pub(crate) fn broadcast(&mut self, a: &Expr, b: &Expr) -> Option<Expr> {
        self.broadcast_dim(a, b)
    }

    /// Record `name := val`, keeping earlier substitutions pointing at the newest value.
    fn unify(&mut self, name: String, val: Expr) {
        let one: FxHashMap<String, Expr> = [(name.clone(), val.clone())].into_iter().collect();
        for v in self.subst.values_mut() {
            if v.contains_symbol(&name) {
                *v = v.subs(&one);
            }
        }
        self.subst.insert(name, val);
    }

    /// Record a guard once (first-seen order).
    fn add_guard(&mut self, g: String) {
        if !self.guards.contains(&g) {
            self.guards.push(g);
        }
    }

    fn guard(&mut self, rel: &str, a: &Expr, b: &Expr) {
        if !(a.is_const() && b.is_const()) {
            self.add_guard(format!("{rel}({a}, {b})"));
        }
    }

    /// The size of `d` sliced `[b, e)` with step `step` (ONNX clamping, branches taken at the
    /// hints and recorded as guards).
    pub(crate) fn slice_dim(&mut self, d: &Expr, b: &Expr, e: &Expr, step: i64) -> Option<Expr> {
        const BIG: i64 = i64::MAX / 4;
        let (d, b, e) = (self.canon(d), self.canon(b), self.canon(e));
        if step != 1 {
            // Only fully known slices with other steps.
            let (n, mut b, mut e) = (d.as_i64()?, b.as_i64()?, e.as_i64()?);
            if step == 0 {
                return None;
            }
            if b < 0 {
                b = b.saturating_add(n);
            }
            if e < 0 {
                e = e.saturating_add(n);
            }
            let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
            let (b, e) = (b.clamp(lo, hi), e.clamp(lo, hi));
            let len = if step > 0 {
                (e - b + step - 1).div_euclid(step)
            } else {
                (b - e - step - 1).div_euclid(-step)
            };
            return Some(Expr::int(len.max(0)));
        }
        let resolve = |t: &mut SymTable, x: &Expr| -> Option<Expr> {
            if let Some(v) = x.as_i64() {
                if v >= BIG {
                    return Some(d.clone());
                }
                if v < 0 {
                    let r = Expr::add(&d, x);
                    if t.hint(&r)? < 0 {
                        return Some(Expr::int(0));
                    }
                    return Some(r);
                }
            }
            if t.hint(x)? >= t.hint(&d)? {
                t.guard("Ge", x, &d);
                Some(d.clone())
            } else {
                t.guard("Lt", x, &d);
                Some(x.clone())
            }
        };
        let bb = resolve(self, &b)?;
        let ee = resolve(self, &e)?;
        let len = Expr::sub(&ee, &bb);
        if self.hint(&len)? < 0 {
            self.guard("Le", &ee, &bb);
            return Some(Expr::int(0));
        }
        Some(len)
    }

    fn set(&mut self, t: TRef, s: Vec<Expr>) {
        self.shapes.set(t, s);
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
            // Equal at the hints: assume equal (expect-guard). Two symbols keep the older one
            // (graph inputs before the fresh symbols of barrier outputs).
            self.add_guard(format!("Eq({a}, {b})"));
            let age = |e: &Expr| e.as_sym().and_then(|n| n[1..].parse::<usize>().ok());
            let (keep, drop) = match (age(&a), age(&b)) {
                (Some(x), Some(y)) if y < x => (b, a),
                (_, Some(_)) => (a, b),
                (Some(_), None) => (b, a),
                (None, None) => return Some(a),
            };
            if let Some(name) = drop.as_sym().filter(|n| !keep.contains_symbol(n)) {
                self.unify(name.to_string(), keep.clone());
            }
            return Some(keep);
        }
        for (x, y) in [(&a, &b), (&b, &a)] {
            if self.hint(x)? == 1 {
                self.add_guard(format!("Eq({x}, 1)"));
                if let Some(name) = x.as_sym() {
                    self.unify(name.to_string(), Expr::int(1));
                }
                return Some(y.clone());
            }
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
pub fn symbolize(
    g: &Graph,
    order: &[NodeId],
    opts: &CompileOptions,
    custom: &mut dyn CustomInfer,
) -> KindResult<SymTable> {
    let mut t = SymTable::default();
    let inputs = graph_inputs(g);
    let names: Vec<&str> = inputs
        .iter()
        .filter_map(|id| g.op(*id).ok().map(|op| op.name()))
        .collect();
    let mut unknown: Vec<&String> = opts
        .input_shapes
        .keys()
        .filter(|k| !names.contains(&k.as_str()))
        .collect();
    unknown.sort();
    if let Some(k) = unknown.first() {
        return Err(format!(
            "input_shapes names '{k}', which is not an input of the graph (its inputs: {})",
            names.join(", ")
        )
        .into());
    }
    for (i, id) in inputs.into_iter().enumerate() {
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
                )
                .into());
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
                        )
                        .into());
                    }
                }
                shape.push(Expr::int(d));
            } else {
                shape.push(t.fresh(
                    hint.unwrap_or(opts.default_hint),
                    format!("input {i} dim {j}"),
                ));
            }
        }
        t.set((id, 0), shape);
    }
    // Dims a frontend proved equal (the PyTorch frontend's `Eq(s0, s1)` for one `Dim` used
    // twice) are one symbol from the start: the later one takes the earlier one.
    if let Some(ascendir_ir::AttrValue::ListString(gs)) = g.attrs.get("_ascendir_torch_guards") {
        for gd in gs {
            let Some(args) = gd.strip_prefix("Eq(").and_then(|r| r.strip_suffix(')')) else {
                continue;
            };
            let Some((a, b)) = args.split_once(", ") else {
                continue;
            };
            let known = |n: &str| t.sources.contains_key(n) && !t.subst.contains_key(n);
            if a != b && known(a) && known(b) {
                t.add_guard(format!("Eq({a}, {b})"));
                t.unify(b.to_string(), Expr::sym(a));
            }
        }
    }
    for &id in order {
        let node = g.node(id).map_err(|e| e.to_string())?;
        let op = node.op();
        if t.shapes.contains((id, 0)) {
            continue;
        }
        let inferred = lower::for_node(g, id)
            .and_then(|l| l.ok())
            .and_then(|l| infer_node(&mut t, g, id, &l));
        // Outputs the lowering rule does not give and the desc does not record statically:
        // the barrier rules (exact) or the op's own rule at the hints (fresh symbols).
        let dynamic = op.outputs().iter().enumerate().any(|(k, p)| {
            let given = k == 0 && inferred.is_some();
            let used = !node.out_data_peers(k).is_empty();
            !given && used && static_shape(&p.desc.shape).is_none()
        });
        let extra = if dynamic && !matches!(op.op_type(), "NetOutput" | "Data") {
            crate::shapes::infer(&mut t, g, id, custom)
        } else {
            Vec::new()
        };
        if let Some(v) = crate::shapes::value(&t, g, id) {
            t.values.insert((id, 0), v);
        }
        for (k, port) in op.outputs().iter().enumerate() {
            let desc = static_shape(&port.desc.shape);
            let s = if k == 0 && inferred.is_some() {
                inferred.clone()
            } else {
                extra.get(k).cloned().flatten()
            };
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
        t.shapes.rewrite(|d| d.subs(&subst));
        for v in t.values.values_mut() {
            for d in v.iter_mut() {
                *d = d.subs(&subst);
            }
        }
        t.subst = subst;
    }
    let hints = &t.bindings;
    t.shapes.count(|s| numel_at(hints, s));
    Ok(t)
}

/// The symbolic output 0 of a node with a lowering, from its data operands' shapes.
fn infer_node(t: &mut SymTable, g: &Graph, id: NodeId, l: &lower::Lowering) -> Option<Vec<Expr>> {
    let node = g.node(id).ok()?;
    let mut ins: Vec<Option<Vec<Expr>>> = Vec::new();
    for k in l.data_ports(node.num_in_data()) {
        match node.in_data_peer(k) {
            Some(p) => {
                let s = t.shape((p.node, p.index as u32))?.clone();
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
            let target: Option<Vec<Expr>> = match &l.target {
                lower::Target::Operands => None,
                // Expand / BroadcastTo / Fill: the shape input's value, else the recorded
                // static shape; a shape known neither way is not inferred.
                lower::Target::Input(k) => {
                    let p = node.in_data_peer(*k)?;
                    let tr = (p.node, p.index as u32);
                    let v = match t.value(tr) {
                        Some(v) => Some(v.clone()),
                        None => lower::const_ints(g, p.node)
                            .map(|v| v.into_iter().map(Expr::int).collect()),
                    };
                    match v {
                        Some(v) if v.iter().all(|e| !e.is_const() || e.as_i64() >= Some(0)) => {
                            Some(v)
                        }
                        Some(_) => return None,
                        None => Some(static_shape(out_desc)?),
                    }
                }
                lower::Target::Multiples(m) => {
                    let r = m.len().max(out.len());
                    let mut res = vec![Expr::int(1); r];
                    for (j, &x) in m.iter().enumerate() {
                        res[r - m.len() + j] = Expr::int(x);
                    }
                    Some(res)
                }
            };
            if let Some(target) = target {
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
            let keep = l.keeps_dims(node.op());
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
        ShapeRule::MatVec { x2_transposed } => {
            let x2 = ins.get(1)?.clone()?;
            let (r1, r2) = (first.len(), x2.len());
            if r1 < 2 || r2 < 2 {
                return None;
            }
            let (k2, n2) = if *x2_transposed {
                (&x2[r2 - 1], &x2[r2 - 2])
            } else {
                (&x2[r2 - 2], &x2[r2 - 1])
            };
            if !n2.is_int_value(1) || t.canon(k2) != t.canon(&first[r1 - 1]) {
                return None;
            }
            let (b1, b2) = (&first[..r1 - 2], &x2[..r2 - 2]);
            let rb = b1.len().max(b2.len());
            let mut out = vec![Expr::int(1); rb];
            for b in [b1, b2] {
                for (j, d) in b.iter().enumerate() {
                    let k = rb - b.len() + j;
                    out[k] = t.broadcast_dim(&out[k], d)?;
                }
            }
            out.push(first[r1 - 2].clone());
            out.push(Expr::int(1));
            Some(out)
        }
        ShapeRule::Concat { axis, stack: true } => {
            let a = lower::norm_axis(*axis, first.len() + 1)?;
            for s in ins.iter().skip(1) {
                let s = s.as_ref()?;
                if s.len() != first.len()
                    || s.iter().zip(&first).any(|(x, y)| t.hint(x) != t.hint(y))
                {
                    return None;
                }
            }
            let mut out = first.clone();
            out.insert(a, Expr::int(i64::try_from(ins.len()).ok()?));
            Some(out)
        }
        ShapeRule::Concat { axis, stack: false } => {
            let a = lower::norm_axis(*axis, first.len())?;
            let mut out = first.clone();
            for s in ins.iter().skip(1) {
                let s = s.as_ref()?;
                if s.len() != out.len() {
                    return None;
                }
                for (j, d) in s.iter().enumerate() {
                    if j == a {
                        out[j] = Expr::add(&out[j], d);
                    } else if t.canon(d) != t.canon(&out[j]) {
                        // Equal extents only (no broadcasting): unify equal hints.
                        if d.is_int_value(1)
                            || out[j].is_int_value(1)
                            || t.hint(d) != t.hint(&out[j])
                        {
                            return None;
                        }
                        out[j] = t.broadcast_dim(&out[j], d)?;
                    }
                }
            }
            Some(out)
        }
        ShapeRule::Transpose { perm } => perm
            .iter()
            .map(|&p| lower::norm_axis(p, first.len()).map(|a| first[a].clone()))
            .collect(),
        ShapeRule::Gather { axis } => {
            let a = lower::norm_axis(*axis, first.len())?;
            let idx = ins.get(1)?.clone()?;
            let mut out = first[..a].to_vec();
            out.extend(idx);
            out.extend_from_slice(&first[a + 1..]);
            Some(out)
        }
        ShapeRule::Slice { dims } => {
            if dims.len() != first.len() {
                return None;
            }
            Some(
                dims.iter()
                    .zip(&first)
                    .map(|(d, x)| d.size.map_or_else(|| x.clone(), Expr::int))
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
