//! Stage 7, realize: one HintGraph per cluster. The cluster's loop space gives the axes; every
//! tensor read from outside becomes a Data + Load (one per tensor: loads are shared), broadcast
//! explicitly one axis per Broadcast right after the Load; each member's template steps become
//! AscIR nodes (fp16/bf16 computed in fp32 under the precision policy); every value used
//! outside the cluster gets a Store + Output.

use crate::error::{ErrorKind, KindResult};
use ascendir_asc::graph::OutRef;
use ascendir_asc::{AscGraph, AttrValue as AscAttr, AxisId, Expr, NodeId as AscId};
use ascendir_ir::{DataType, Graph, NodeId};
use rustc_hash::FxHashMap;

use crate::loopspace::{loop_space, LoopSpace};
use crate::lower::{compute_dtype, Arg, Lowered, ShapeRule, StepAttr, StepDtype};
use crate::options::CompileOptions;
use crate::symbolize::{SymTable, TRef};

mod members;
use members::{contiguous, gather, load, set_tensor, View};

/// A realized cluster: its HintGraph and how its ports map to the original graph.
#[derive(Clone, Debug)]
pub struct Realized {
    /// The HintGraph.
    pub hint: AscGraph,
    /// The graph tensors it reads, in Data index order.
    pub inputs: Vec<TRef>,
    /// The graph tensors it writes, in Output index order.
    pub outputs: Vec<TRef>,
    /// Number of AscIR compute nodes (Load, Store, Broadcast and precision Casts excluded).
    pub compute_ops: usize,
}

/// A value in the HintGraph: the producing node and the loop axes it spans.
#[derive(Clone, Debug, PartialEq)]
struct Val {
    node: AscId,
    set: Vec<bool>,
    dtype: DataType,
    /// Produced by (or downstream of) a reduction: its Broadcasts are not after a Load.
    after_reduce: bool,
}

struct Builder {
    g: AscGraph,
    axes: Vec<AxisId>,
    sizes: Vec<Expr>,
    names: FxHashMap<String, usize>,
    bcast: FxHashMap<(AscId, Vec<bool>), Val>,
    casts: FxHashMap<(AscId, DataType), Val>,
    compute_ops: usize,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Builder {
    fn unique(&mut self, base: &str) -> String {
        let n = self.names.entry(base.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base.to_string()
        } else {
            format!("{base}_{}", *n - 1)
        }
    }

    /// Contiguous view over the present axes: repeats = sizes there, 1 elsewhere; strides the
    /// suffix products over present axes, 0 elsewhere.
    fn set_view(&mut self, id: AscId, set: &[bool], dtype: DataType) -> Result<(), String> {
        let n = self.axes.len();
        let mut repeats = vec![Expr::int(1); n];
        let mut strides = vec![Expr::int(0); n];
        let mut acc = Expr::int(1);
        for i in (0..n).rev() {
            if set[i] {
                repeats[i] = self.sizes[i].clone();
                strides[i] = acc.clone();
                acc = Expr::mul(&acc, &self.sizes[i]);
            }
        }
        self.set_strided_view(id, &repeats, &strides, dtype)
    }

    /// A view with the given repeats and strides over every axis (a slice's window).
    fn set_strided_view(
        &mut self,
        id: AscId,
        repeats: &[Expr],
        strides: &[Expr],
        dtype: DataType,
    ) -> Result<(), String> {
        let axes = self.axes.clone();
        let t = self.g.tensor_mut(id, 0).map_err(err)?;
        t.axis = axes;
        t.repeats = repeats.to_vec();
        t.strides = strides.to_vec();
        t.dtype = dtype;
        Ok(())
    }

    fn node(&mut self, name: &str, op: &str, inputs: &[AscId]) -> Result<AscId, String> {
        let name = self.unique(name);
        let id = self.g.add_node_of_type(&name, op).map_err(err)?;
        for (k, src) in inputs.iter().enumerate() {
            self.g
                .connect(
                    OutRef {
                        node: *src,
                        index: 0,
                    },
                    id,
                    k,
                )
                .map_err(err)?;
        }
        if self.g.node(id).map_err(err)?.is_compute() {
            let axes = self.axes.clone();
            self.g.set_sched_axis(id, &axes).map_err(err)?;
        }
        Ok(id)
    }

    /// `v` broadcast to `target` (a superset of its axes), one Broadcast per axis, inner first.
    fn broadcast(&mut self, v: &Val, target: &[bool]) -> Result<Val, String> {
        if v.set == target {
            return Ok(v.clone());
        }
        if let Some(c) = self.bcast.get(&(v.node, target.to_vec())) {
            return Ok(c.clone());
        }
        let mut cur = v.clone();
        for i in (0..target.len()).rev() {
            if target[i] && !cur.set[i] {
                let mut set = cur.set.clone();
                set[i] = true;
                if let Some(c) = self.bcast.get(&(v.node, set.clone())) {
                    cur = c.clone();
                    continue;
                }
                let base = format!("{}_brc", self.g.node(cur.node).map_err(err)?.name);
                let id = self.node(&base, "Broadcast", &[cur.node])?;
                self.set_view(id, &set, cur.dtype)?;
                cur = Val {
                    node: id,
                    set: set.clone(),
                    dtype: cur.dtype,
                    after_reduce: cur.after_reduce,
                };
                self.bcast.insert((v.node, set), cur.clone());
            }
        }
        Ok(cur)
    }

    fn cast(&mut self, v: &Val, dt: DataType) -> Result<Val, String> {
        if v.dtype == dt {
            return Ok(v.clone());
        }
        if let Some(c) = self.casts.get(&(v.node, dt)) {
            return Ok(c.clone());
        }
        let base = format!("{}_cast", self.g.node(v.node).map_err(err)?.name);
        let id = self.node(&base, "Cast", &[v.node])?;
        self.set_view(id, &v.set, dt)?;
        let out = Val {
            node: id,
            set: v.set.clone(),
            dtype: dt,
            after_reduce: v.after_reduce,
        };
        self.casts.insert((v.node, dt), out.clone());
        Ok(out)
    }

    fn scalar(
        &mut self,
        name: &str,
        value: f64,
        dt: DataType,
        set: &[bool],
    ) -> Result<Val, String> {
        let id = self.node(&format!("{name}_scalar"), "Scalar", &[])?;
        let text = if matches!(dt, DataType::FLOAT | DataType::FLOAT16 | DataType::BF16) {
            format!("{value:?}")
        } else if dt == DataType::BOOL {
            (value != 0.0).to_string()
        } else {
            format!("{}", value as i64)
        };
        self.g
            .set_ir_attr(id, "value", AscAttr::Str(text))
            .map_err(err)?;
        // A scalar spans the consumer's axes with stride 0 (broadcast in the view).
        let axes = self.axes.clone();
        let n = axes.len();
        let repeats = (0..n)
            .map(|i| {
                if set[i] {
                    self.sizes[i].clone()
                } else {
                    Expr::int(1)
                }
            })
            .collect();
        let t = self.g.tensor_mut(id, 0).map_err(err)?;
        t.axis = axes;
        t.repeats = repeats;
        t.strides = vec![Expr::int(0); n];
        t.dtype = dt;
        Ok(Val {
            node: id,
            set: set.to_vec(),
            dtype: dt,
            after_reduce: false,
        })
    }
}

fn union(a: &[bool], b: &[bool]) -> Vec<bool> {
    a.iter().zip(b).map(|(x, y)| *x || *y).collect()
}

/// Node `id`'s float attribute `name` (an integer one converted), or `default`.
pub(crate) fn float_attr(g: &Graph, id: NodeId, name: &str, default: f64) -> f64 {
    match g.op(id).ok().and_then(|o| o.attr(name)) {
        Some(ascendir_ir::AttrValue::Float(v)) => f64::from(*v),
        Some(ascendir_ir::AttrValue::Int(v)) => *v as f64,
        _ => default,
    }
}

/// The dtype of tensor `t` (its producer's output desc), `UNDEFINED` when there is none.
pub(crate) fn out_dtype(g: &Graph, t: TRef) -> DataType {
    g.op(t.0)
        .ok()
        .and_then(|o| o.outputs().get(t.1 as usize).map(|p| p.desc.dtype))
        .unwrap_or(DataType::UNDEFINED)
}

/// Symbols in `e`, sorted by name length then name (`s2` before `s10`).
fn sorted_symbols(exprs: &[Expr]) -> Vec<String> {
    let mut v: Vec<String> = exprs.iter().flat_map(|e| e.free_symbols()).collect();
    v.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    v.dedup();
    v
}

/// Whether `t` is used outside `members` (another node, or the graph output).
pub fn used_outside(g: &Graph, t: TRef, inside: &dyn Fn(NodeId) -> bool) -> bool {
    let Ok(n) = g.node(t.0) else { return false };
    n.out_data_peers(t.1 as usize)
        .iter()
        .any(|p| !inside(p.node))
}

/// Whether a member's output `t` gets a Store and an Output: it is a graph output (port 0) or
/// is used outside the members.
pub(crate) fn stored(g: &Graph, t: TRef, inside: &dyn Fn(NodeId) -> bool) -> bool {
    let graph_out = t.1 == 0 && g.outputs().iter().any(|&(n, i)| n == t.0 && i == 0);
    graph_out || used_outside(g, t, inside)
}

/// Realize `members` (topological order) as HintGraph `name`; its nodes are named after the
/// graph nodes (structural twins are told apart by `ascendir_asc::schedule::structure_key`,
/// which ignores names).
pub fn realize(
    g: &Graph,
    name: &str,
    members: &[(NodeId, &Lowered)],
    syms: &SymTable,
    opts: &CompileOptions,
) -> KindResult<Realized> {
    build_hint(g, name, members, syms, opts).map_err(ErrorKind::Realize)
}

/// [`realize`], its failures as text.
fn build_hint(
    g: &Graph,
    name: &str,
    members: &[(NodeId, &Lowered)],
    syms: &SymTable,
    opts: &CompileOptions,
) -> Result<Realized, String> {
    let ls: LoopSpace = loop_space(members, syms)?;
    let mut b = Builder {
        g: AscGraph::new(name),
        axes: Vec::new(),
        sizes: ls.axes.clone(),
        names: FxHashMap::default(),
        bcast: FxHashMap::default(),
        casts: FxHashMap::default(),
        compute_ops: 0,
    };
    if b.sizes.is_empty() {
        b.sizes.push(Expr::int(1));
    }
    for s in sorted_symbols(&b.sizes) {
        b.g.create_size(&s).map_err(err)?;
    }
    for (i, s) in b.sizes.clone().iter().enumerate() {
        let a = b.g.create_axis(&format!("z{i}"), s.clone()).map_err(err)?;
        b.axes.push(a);
    }
    let n_axes = b.axes.len();
    let set_of = |t: TRef| -> Vec<bool> {
        let mut s = ls.set_of(t);
        s.resize(n_axes, false);
        s
    };
    let member_set: FxHashMap<NodeId, usize> = members
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i))
        .collect();
    let inside = |id: NodeId| member_set.contains_key(&id);
    let mut values: FxHashMap<TRef, Val> = FxHashMap::default();
    let mut inputs: Vec<TRef> = Vec::new();
    // Transpose outputs: stored in their own dim order (axes, extents, strides).
    let mut permuted: FxHashMap<TRef, View> = FxHashMap::default();
    for (id, l) in members {
        let node_name = g.op(*id).map_err(err)?.name().to_string();
        let node_out_dt = out_dtype(g, (*id, 0));
        if let ShapeRule::Slice { dims } = &l.lowering.shape {
            let Some(Some(x)) = l.inputs.first() else {
                return Err("a slice without an operand".into());
            };
            if inside(x.0) {
                return Err("a slice reads a tensor computed inside the kernel".into());
            }
            let y = (*id, 0u32);
            let x_shape = syms
                .shape(*x)
                .ok_or("a slice operand has no symbolic shape")?;
            let y_view = ls.views.get(&y).ok_or("a slice output has no view")?;
            if x_shape.len() != dims.len() || y_view.len() != dims.len() {
                return Err("a slice's rank differs from its operand's".into());
            }
            // The operand's contiguous strides; the window's offset and strides over them.
            let xs = contiguous(x_shape);
            let mut offset = Expr::int(0);
            let mut repeats = vec![Expr::int(1); n_axes];
            let mut strides = vec![Expr::int(0); n_axes];
            for (j, d) in dims.iter().enumerate() {
                if d.begin != 0 {
                    offset = Expr::add(&offset, &Expr::mul(&Expr::int(d.begin), &xs[j]));
                }
                if let Some(a) = y_view[j] {
                    repeats[a] = b.sizes[a].clone();
                    strides[a] = Expr::mul(&xs[j], &Expr::int(d.step));
                }
            }
            let k = inputs.len();
            inputs.push(*x);
            let dt = out_dtype(g, *x);
            let data = b.node(&format!("data{k}"), "Data", &[])?;
            b.g.set_ir_attr(data, "index", AscAttr::Int(k as i64))
                .map_err(err)?;
            b.set_strided_view(data, &repeats, &strides, dt)?;
            let load = b.node(&format!("load{k}"), "Load", &[data])?;
            b.g.set_ir_attr(load, "offset", AscAttr::Expr(offset))
                .map_err(err)?;
            b.set_strided_view(load, &repeats, &strides, dt)?;
            values.insert(
                y,
                Val {
                    node: load,
                    set: set_of(y),
                    dtype: dt,
                    after_reduce: false,
                },
            );
            continue;
        }
        if let ShapeRule::Transpose { .. } = &l.lowering.shape {
            let Some(Some(x)) = l.inputs.first() else {
                return Err("a transpose without an operand".into());
            };
            let v = match values.get(x) {
                Some(v) => v.clone(),
                None => {
                    let v = load(&mut b, &mut inputs, *x, set_of(*x), out_dtype(g, *x))?;
                    values.insert(*x, v.clone());
                    v
                }
            };
            // A transpose moves the node's own dtype; its output is stored as it is.
            let y = (*id, 0u32);
            let dt = out_dtype(g, y);
            let v = b.cast(&v, dt)?;
            let y_view = ls.views.get(&y).ok_or("a transpose output has no view")?;
            let axes: Vec<AxisId> = y_view.iter().flatten().map(|&a| b.axes[a]).collect();
            let sizes: Vec<Expr> = y_view
                .iter()
                .flatten()
                .map(|&a| b.sizes[a].clone())
                .collect();
            let strides = contiguous(&sizes);
            let t = b.node(&node_name, "Transpose", &[v.node])?;
            let view = (axes, sizes, strides);
            set_tensor(&mut b, t, &view, dt)?;
            b.compute_ops += 1;
            permuted.insert(y, view);
            values.insert(
                y,
                Val {
                    node: t,
                    set: set_of(y),
                    dtype: dt,
                    after_reduce: v.after_reduce,
                },
            );
            continue;
        }
        if let ShapeRule::Gather { axis } = &l.lowering.shape {
            gather(
                &mut b,
                g,
                syms,
                &ls,
                (*id, l),
                *axis,
                &inside,
                &mut inputs,
                &mut values,
            )?;
            continue;
        }
        if let ShapeRule::Concat { axis, stack } = &l.lowering.shape {
            let y = (*id, 0u32);
            let y_view = ls.views.get(&y).ok_or("a concat output has no view")?;
            let a = crate::lower::norm_axis(*axis, y_view.len()).ok_or("a concat axis")?;
            let dt = out_dtype(g, y);
            let mut loads = Vec::new();
            for x in l.inputs.iter() {
                let Some(x) = x else {
                    return Err("a concat operand is absent".into());
                };
                if inside(x.0) {
                    return Err("a concat reads a tensor computed inside the kernel".into());
                }
                if out_dtype(g, *x) != dt {
                    return Err("a concat operand's dtype differs from the output's".into());
                }
                let x_shape = syms
                    .shape(*x)
                    .ok_or("a concat operand has no symbolic shape")?;
                if x_shape.len() + usize::from(*stack) != y_view.len() {
                    return Err("a concat operand's rank does not match the output's".into());
                }
                // The operand's own contiguous strides; its extent on the concat axis (1 for a
                // Pack: the new dim), the output's elsewhere.
                let r = x_shape.len();
                let xs = contiguous(x_shape);
                let mut repeats = vec![Expr::int(1); n_axes];
                let mut strides = vec![Expr::int(0); n_axes];
                for j in 0..r {
                    let oj = if *stack && j >= a { j + 1 } else { j };
                    let Some(ax) = y_view[oj] else { continue };
                    let size = if oj == a && !*stack {
                        x_shape[j].clone()
                    } else {
                        b.sizes[ax].clone()
                    };
                    if !size.is_int_value(1) {
                        strides[ax] = xs[j].clone();
                    }
                    repeats[ax] = size;
                }
                let k = inputs.len();
                inputs.push(*x);
                let data = b.node(&format!("data{k}"), "Data", &[])?;
                b.g.set_ir_attr(data, "index", AscAttr::Int(k as i64))
                    .map_err(err)?;
                b.set_strided_view(data, &repeats, &strides, dt)?;
                let load = b.node(&format!("load{k}"), "Load", &[data])?;
                b.g.set_ir_attr(load, "offset", AscAttr::Expr(Expr::int(0)))
                    .map_err(err)?;
                b.set_strided_view(load, &repeats, &strides, dt)?;
                loads.push(load);
            }
            let set = set_of(y);
            let cat = b.node(&node_name, "Concat", &[])?;
            let refs: Vec<OutRef> = loads
                .iter()
                .map(|&node| OutRef { node, index: 0 })
                .collect();
            b.g.set_dynamic_inputs(cat, "x", &refs).map_err(err)?;
            b.set_view(cat, &set, dt)?;
            b.compute_ops += 1;
            values.insert(
                y,
                Val {
                    node: cat,
                    set,
                    dtype: dt,
                    after_reduce: false,
                },
            );
            continue;
        }
        // Operand values (Loads on first use).
        let mut ins: Vec<Option<Val>> = Vec::new();
        for t in &l.inputs {
            let Some(t) = t else {
                ins.push(None);
                continue;
            };
            if let Some(v) = values.get(t) {
                ins.push(Some(v.clone()));
                continue;
            }
            let v = load(&mut b, &mut inputs, *t, set_of(*t), out_dtype(g, *t))?;
            values.insert(*t, v.clone());
            ins.push(Some(v));
        }
        let reduce_set: Vec<bool> = {
            let mut s = vec![false; n_axes];
            if let Some(Some(t0)) = l.inputs.first() {
                if let Some(view) = ls.views.get(t0) {
                    for &a in &l.reduce_axes {
                        if let Some(Some(x)) = view.get(a) {
                            s[*x] = true;
                        }
                    }
                }
            }
            s
        };
        let mut steps: Vec<Val> = Vec::new();
        let n_steps = l.lowering.steps.len();
        for (si, s) in l.lowering.steps.iter().enumerate() {
            if let Some(k) = s.needs_input {
                if ins.get(k).is_none_or(|x| x.is_none()) {
                    let first = match &s.args[0] {
                        Arg::In(k) => ins[*k].clone().ok_or("absent operand")?,
                        Arg::Step(j) => steps[*j].clone(),
                        _ => return Err("a skipped step must start with a value".into()),
                    };
                    steps.push(first);
                    continue;
                }
            }
            let mut vals: Vec<Option<Val>> = Vec::new();
            for a in &s.args {
                vals.push(match a {
                    Arg::In(k) => Some(ins.get(*k).cloned().flatten().ok_or("absent operand")?),
                    Arg::Step(j) => Some(steps[*j].clone()),
                    _ => None,
                });
            }
            // Compute dtype: the first value's (Where: the first after the condition),
            // promoted by the precision policy.
            let skip = usize::from(s.op == "Where");
            let first_dt = vals
                .iter()
                .skip(skip)
                .flatten()
                .map(|v| v.dtype)
                .next()
                .unwrap_or(node_out_dt);
            let cd = if opts.precision_blacklist.iter().any(|p| p == &s.op) {
                first_dt
            } else {
                compute_dtype(first_dt, opts)
            };
            let mut out_set = vec![false; n_axes];
            for v in vals.iter().flatten() {
                out_set = union(&out_set, &v.set);
            }
            if s.reduce {
                out_set = out_set
                    .iter()
                    .zip(&reduce_set)
                    .map(|(x, r)| *x && !*r)
                    .collect();
            }
            let res_dt = match s.dtype {
                StepDtype::Same => cd,
                StepDtype::Mask => DataType::BOOL,
                StepDtype::NodeOut => compute_dtype(node_out_dt, opts),
                StepDtype::Fixed(d) => d,
            };
            if s.op == "Cast" {
                let v = vals[0].clone().ok_or("Cast of a scalar")?;
                let v = b.cast(&v, cd)?;
                // An explicit narrowing Cast (f32 → f16 / bf16) keeps its rounding even where
                // the precision policy computes the result in f32: the value is rounded to the
                // node's dtype, then widened again for the steps that follow.
                let narrows = matches!(node_out_dt, DataType::FLOAT16 | DataType::BF16)
                    && res_dt != node_out_dt
                    && v.dtype != node_out_dt;
                let out = if narrows {
                    let r = b.cast(&v, node_out_dt)?;
                    b.compute_ops += 1;
                    b.cast(&r, res_dt)?
                } else {
                    b.cast(&v, res_dt)?
                };
                // A conversion the precision policy defers to the Store (f32 → f16 computed
                // in f32) is still the kernel's work.
                if out.node != v.node || first_dt != node_out_dt {
                    b.compute_ops += 1;
                }
                steps.push(out);
                continue;
            }
            let bcast_set = if s.reduce {
                vals[0].as_ref().map(|v| v.set.clone()).unwrap_or_default()
            } else {
                out_set.clone()
            };
            let mut operand_ids = Vec::new();
            let mut after_reduce = s.reduce;
            for (k, (a, v)) in s.args.iter().zip(&vals).enumerate() {
                let v = match v {
                    Some(v) => {
                        let want = if s.op == "Where" && k == 0 {
                            v.dtype
                        } else {
                            cd
                        };
                        let v = b.broadcast(v, &bcast_set)?;
                        after_reduce |= v.after_reduce;
                        b.cast(&v, want)?
                    }
                    None => {
                        let value = match a {
                            Arg::Scalar(x) => *x,
                            Arg::AttrScalar(name, d) => float_attr(g, *id, name, *d),
                            _ => 0.0,
                        };
                        b.scalar(&node_name, value, cd, &bcast_set)?
                    }
                };
                operand_ids.push(v.node);
            }
            let step_name = if si + 1 == n_steps {
                node_name.clone()
            } else {
                format!("{node_name}_{}", s.op.to_lowercase())
            };
            let nid = b.node(&step_name, &s.op, &operand_ids)?;
            for at in &s.attrs {
                let (k, v) = match at {
                    StepAttr::Fixed(k, v) => (k.clone(), v.clone()),
                    StepAttr::FromGeFloat { asc, ge, default } => (
                        asc.clone(),
                        AscAttr::Float(float_attr(g, *id, ge, *default)),
                    ),
                };
                b.g.set_ir_attr(nid, &k, v).map_err(err)?;
            }
            b.set_view(nid, &out_set, res_dt)?;
            b.compute_ops += 1;
            steps.push(Val {
                node: nid,
                set: out_set,
                dtype: res_dt,
                after_reduce,
            });
        }
        let out_val = match &l.lowering.out {
            Arg::In(k) => ins.get(*k).cloned().flatten().ok_or("absent operand")?,
            Arg::Step(j) => steps[*j].clone(),
            _ => return Err("scalar output".into()),
        };
        let want = set_of((*id, 0));
        let out_val = b.broadcast(&out_val, &union(&want, &out_val.set))?;
        values.insert((*id, 0), out_val);
    }
    // Stores for every value used outside.
    let mut outputs = Vec::new();
    for (id, _) in members {
        let t = (*id, 0u32);
        if !stored(g, t, &inside) {
            continue;
        }
        let v = values.get(&t).cloned().ok_or("missing value")?;
        let dt = out_dtype(g, t);
        let v = b.cast(&v, dt)?;
        let j = outputs.len();
        outputs.push(t);
        let store = b.node(&format!("store{j}"), "Store", &[v.node])?;
        b.g.set_ir_attr(store, "offset", AscAttr::Expr(Expr::int(0)))
            .map_err(err)?;
        let out = b.node(&format!("output{j}"), "Output", &[store])?;
        b.g.set_ir_attr(out, "index", AscAttr::Int(j as i64))
            .map_err(err)?;
        match permuted.get(&t) {
            Some(view) => {
                set_tensor(&mut b, store, view, dt)?;
                set_tensor(&mut b, out, view, dt)?;
            }
            None => {
                b.set_view(store, &v.set, dt)?;
                b.set_view(out, &v.set, dt)?;
            }
        }
    }
    if outputs.is_empty() {
        return Err("the cluster has no output".into());
    }
    let mut problems = b.g.problems();
    problems.extend(
        b.g.hint_problems()
            .into_iter()
            .filter(|p| !(p.contains("Broadcast input") && p.contains("not from a Load"))),
    );
    if !problems.is_empty() {
        return Err(format!(
            "HintGraph '{name}' is invalid: {}",
            problems.join("; ")
        ));
    }
    Ok(Realized {
        hint: b.g,
        inputs,
        outputs,
        compute_ops: b.compute_ops,
    })
}
