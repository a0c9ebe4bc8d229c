//! Norms wider than the UB (stage 5, before fusion). A norm-like op (LayerNorm, SoftmaxV2,
//! LogSoftmaxV2) lowers into one kernel that keeps its whole reduced row in the UB (all-load):
//! each step's row is a buffer, so a row of 768 fp32 elements and up does not fit however the
//! kept axes are tiled. Such an op is computed in passes, as GE's reduce templates do for a
//! reduce axis they must tile: the op is replaced by the GE ops of its own lowering steps
//! (every reduction a `Reduce*D` with kept dims, every other step its elementwise GE op). The
//! fuser then makes each reduction a kernel that splits its reduce axis and accumulates (the
//! R tiling case), and the normalization a broadcast kernel; where the one-op kernel fits, the
//! op stays whole. Half-precision inputs are computed in fp32 (one Cast at each end), as the
//! one-op kernel computes them, so no intermediate is rounded to half between the kernels.

use crate::error::KindResult;
use std::sync::Arc;

use ascendir_asc::target::Target;
use ascendir_asc::tiling::TilingFunction;
use ascendir_ir::{
    AttrValue, DataType, Format, Graph, InAnchor, NodeId, OpDesc, OutAnchor, Tensor, TensorDesc,
};
use bytes::Bytes;
use rustc_hash::FxHashMap;

use crate::kernel::schedule_kernel;
use crate::lower::{Arg, Decision, Decisions, Lowered, StepDtype};
use crate::options::CompileOptions;
use crate::realize::{float_attr, realize};
use crate::rewrite::{forward, fresh_name};
use crate::symbolize::SymTable;
use crate::twins;

/// The GE op computing an AscIR step of a norm-like lowering (reductions keep their dims).
fn ge_op(asc: &str, reduce: bool) -> Option<&'static str> {
    Some(match (asc, reduce) {
        ("Mean", true) => "ReduceMeanD",
        ("Max", true) => "ReduceMaxD",
        ("Min", true) => "ReduceMinD",
        ("Sum", true) => "ReduceSumD",
        ("Sub", false) => "Sub",
        ("Add", false) => "Add",
        ("Mul", false) => "Mul",
        ("TrueDiv", false) => "RealDiv",
        ("Exp", false) => "Exp",
        ("Ln", false) => "Log",
        ("Rsqrt", false) => "Rsqrt",
        ("Sqrt", false) => "Sqrt",
        _ => return None,
    })
}

/// Whether the one-op kernel of norm-like node `id` fails the UB at the hints even at its
/// smallest tiles (memoized by the kernel's structure: a model's layers share one answer).
fn too_wide(
    g: &Graph,
    (id, l): (NodeId, &Lowered),
    syms: &SymTable,
    opts: &CompileOptions,
    target: &Target,
    memo: &mut FxHashMap<twins::Key, bool>,
) -> bool {
    let Ok(r) = realize(g, "row", &[(id, l)], syms, opts) else {
        return false;
    };
    let key = twins::key(&r.hint);
    if let Some(v) = memo.get(&key) {
        return *v;
    }
    let shape: FxHashMap<String, i64> = syms.hints.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let wide = schedule_kernel(&r.hint).is_ok_and(|impls| {
        TilingFunction::new(&impls, target)
            .is_ok_and(|f| f.call(&shape).is_err_and(|e| e.constraint == "ub"))
    });
    memo.insert(key, wide);
    wide
}

fn desc_of(g: &Graph, a: OutAnchor) -> Option<TensorDesc> {
    let op = g.op(a.node).ok()?;
    op.outputs()
        .get(usize::try_from(a.index).ok()?)
        .map(|p| (*p.desc).clone())
}

/// Numpy broadcasting of two shapes (-1: unknown).
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], k: usize| {
        let off = n - s.len();
        if k < off {
            1
        } else {
            s[k - off]
        }
    };
    (0..n)
        .map(|k| match (at(a, k), at(b, k)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            (-1, y) | (y, -1) => Some(y),
            _ => None,
        })
        .collect()
}

fn scalar(value: f64, dtype: DataType) -> Option<Tensor> {
    let data = match dtype {
        DataType::FLOAT => Bytes::copy_from_slice(&(value as f32).to_le_bytes()),
        DataType::DOUBLE => Bytes::copy_from_slice(&value.to_le_bytes()),
        _ => return None,
    };
    Some(Tensor::new(TensorDesc::new(&[], dtype, Format::ND), data))
}

/// Adds the steps' nodes before the norm (in link order), each named after it.
struct Steps<'g> {
    g: &'g mut Graph,
    before: NodeId,
    name: String,
}

impl Steps<'_> {
    fn add(
        &mut self,
        suffix: &str,
        ty: &str,
        inputs: &[(&str, OutAnchor)],
        out: TensorDesc,
        attrs: Vec<(&str, AttrValue)>,
    ) -> KindResult<OutAnchor> {
        let mut op = OpDesc::new(&fresh_name(self.g, &format!("{}_{suffix}", self.name)), ty);
        for (port, src) in inputs {
            let d = desc_of(self.g, *src).ok_or("operand without a desc")?;
            op.add_input(port, Arc::new(d));
        }
        op.add_output("y", Arc::new(out))
            .map_err(|e| e.to_string())?;
        for (k, v) in attrs {
            op.set_attr(k, v);
        }
        let id = self
            .g
            .insert_node_before(self.before, op)
            .map_err(|e| e.to_string())?;
        for (i, (_, src)) in inputs.iter().enumerate() {
            self.g
                .link(*src, InAnchor::data(id, i))
                .map_err(|e| e.to_string())?;
        }
        Ok(OutAnchor::data(id, 0))
    }

    fn cast(&mut self, src: OutAnchor, to: DataType, suffix: &str) -> KindResult<OutAnchor> {
        let mut d = desc_of(self.g, src).ok_or("operand without a desc")?;
        if d.dtype == to {
            return Ok(src);
        }
        d.dtype = to;
        let dst = AttrValue::Int(i64::from(to.ge_value()));
        self.add(suffix, "Cast", &[("x", src)], d, vec![("dst_type", dst)])
    }
}

fn with_shape(mut d: TensorDesc, shape: &[i64], dtype: DataType) -> TensorDesc {
    d.shape = shape.into();
    if d.origin_shape.is_some() {
        d.origin_shape = Some(Box::new(d.shape.clone()));
    }
    d.dtype = dtype;
    d
}

/// What the replacement of norm-like node `id` needs, read before the graph changes; None
/// when a step has no GE op, a value cannot be described or an extra output is used.
struct Plan {
    name: String,
    /// The output's desc (its dtype is the result's).
    out: TensorDesc,
    /// The data input's desc, and the dtype the steps compute in.
    xd: TensorDesc,
    compute: DataType,
    /// The shape of a reduction's result (reduce axes kept as 1).
    reduced: Vec<i64>,
    /// Every step's scalar operands (0 for the others).
    scalars: Vec<Vec<f64>>,
}

fn plan(g: &Graph, id: NodeId, l: &Lowered) -> KindResult<Option<Plan>> {
    let row = &l.lowering;
    let plain = row.steps.iter().all(|s| {
        s.attrs.is_empty() && s.dtype == StepDtype::Same && ge_op(&s.op, s.reduce).is_some()
    });
    let (name, out) = {
        let op = g.op(id).map_err(|e| e.to_string())?;
        (
            op.name().to_string(),
            op.outputs().first().map(|p| (*p.desc).clone()),
        )
    };
    let Some(out) = out else { return Ok(None) };
    let node = g.node(id).map_err(|e| e.to_string())?;
    let extra_outputs_used = (1..node.num_out_data()).any(|k| {
        !node.out_data_peers(k).is_empty()
            || g.outputs().iter().any(|&(n, i)| n == id && i as usize == k)
    });
    let Some(x) = l.inputs.first().copied().flatten() else {
        return Ok(None);
    };
    let x = OutAnchor::data(x.0, x.1 as usize);
    let Some(xd) = desc_of(g, x) else {
        return Ok(None);
    };
    let compute = match xd.dtype {
        DataType::FLOAT16 | DataType::BF16 | DataType::FLOAT => DataType::FLOAT,
        DataType::DOUBLE => DataType::DOUBLE,
        _ => return Ok(None),
    };
    if !plain || extra_outputs_used {
        return Ok(None);
    }
    let scalar_args_ok = row.steps.iter().flat_map(|s| &s.args).all(|a| match a {
        Arg::Scalar(v) | Arg::AttrScalar(_, v) => scalar(*v, compute).is_some(),
        _ => true,
    });
    if !scalar_args_ok {
        return Ok(None);
    }
    let mut reduced: Vec<i64> = xd.shape.to_vec();
    for &a in &l.reduce_axes {
        match reduced.get_mut(a) {
            Some(d) => *d = 1,
            None => return Ok(None),
        }
    }
    // Every scalar operand's value, read before the graph changes.
    let scalars: Vec<Vec<f64>> = row
        .steps
        .iter()
        .map(|s| {
            s.args
                .iter()
                .map(|a| match a {
                    Arg::Scalar(v) => *v,
                    Arg::AttrScalar(attr, v) => float_attr(g, id, attr, *v),
                    _ => 0.0,
                })
                .collect()
        })
        .collect();
    Ok(Some(Plan {
        name,
        out,
        xd,
        compute,
        reduced,
        scalars,
    }))
}

/// Replace norm-like node `id` by the GE ops of its lowering steps; false (graph untouched)
/// when [`plan`] finds it cannot be.
fn split(g: &mut Graph, id: NodeId, l: &Lowered) -> KindResult<bool> {
    let Some(Plan {
        name,
        out,
        xd,
        compute,
        reduced,
        scalars,
    }) = plan(g, id, l)?
    else {
        return Ok(false);
    };
    let row = &l.lowering;
    let mut p = Steps {
        g,
        before: id,
        name,
    };
    let Arg::Step(last) = row.out else {
        return Ok(false);
    };
    // Every step once, in order (the fuser groups them into kernels as it groups the
    // decomposed norm a frontend writes); operands cast to the compute dtype once.
    let mut operands: Vec<Option<OutAnchor>> = vec![None; l.inputs.len()];
    let mut vals: Vec<Option<OutAnchor>> = vec![None; row.steps.len()];
    for (k, s) in row.steps.iter().enumerate().take(last + 1) {
        let mut args: Vec<OutAnchor> = Vec::new();
        let mut absent = false;
        for (j, a) in s.args.iter().enumerate() {
            args.push(match a {
                Arg::In(i) => match (operands.get(*i).copied().flatten(), l.inputs.get(*i)) {
                    (Some(v), _) => v,
                    (None, Some(Some((src, idx)))) => {
                        let src = OutAnchor::data(*src, *idx as usize);
                        let v = p.cast(src, compute, &format!("in{i}"))?;
                        operands[*i] = Some(v);
                        v
                    }
                    _ => {
                        absent = true;
                        continue;
                    }
                },
                Arg::Step(i) => vals[*i].ok_or("a step before its operand")?,
                Arg::Scalar(_) | Arg::AttrScalar(..) => {
                    let t = scalar(scalars[k][j], compute).ok_or("scalar")?;
                    let d = (*t.desc).clone();
                    let value = vec![("value", AttrValue::Tensor(t))];
                    p.add(&format!("s{k}_c{j}"), "Const", &[], d, value)?
                }
            });
        }
        let skipped = s
            .needs_input
            .is_some_and(|i| l.inputs.get(i).is_none_or(|o| o.is_none()));
        if skipped {
            vals[k] = Some(*args.first().ok_or("a skipped step without operands")?);
            continue;
        }
        if absent {
            return Err(format!("step {k} of '{}' reads an absent operand", row.op_type).into());
        }
        let ty = ge_op(&s.op, s.reduce).ok_or("no GE op")?;
        let out_shape = if s.reduce {
            reduced.clone()
        } else {
            let mut sh: Vec<i64> = Vec::new();
            for a in &args {
                let d = desc_of(p.g, *a).ok_or("operand without a desc")?;
                sh = broadcast(&sh, &d.shape).ok_or("operands do not broadcast")?;
            }
            sh
        };
        let d = with_shape(xd.clone(), &out_shape, compute);
        let ports: Vec<(&str, OutAnchor)> = match args.len() {
            1 => vec![("x", args[0])],
            2 => vec![("x1", args[0]), ("x2", args[1])],
            _ => {
                return Err(
                    format!("step {k} of '{}' has {} operands", row.op_type, args.len()).into(),
                )
            }
        };
        let attrs = if s.reduce {
            let axes = l.reduce_axes.iter().map(|&a| a as i64).collect();
            vec![
                ("axes", AttrValue::ListInt(axes)),
                ("keep_dims", AttrValue::Bool(true)),
            ]
        } else {
            Vec::new()
        };
        vals[k] = Some(p.add(&format!("s{k}"), ty, &ports, d, attrs)?);
    }
    let y = vals[last];
    let y = y.ok_or("no output step")?;
    let y = p.cast(y, out.dtype, "out_cast")?;
    forward(p.g, OutAnchor::data(id, 0), y)?;
    p.g.erase_node(id).map_err(|e| e.to_string())?;
    Ok(true)
}

/// Replace every norm-like node whose one-op kernel does not fit the UB by its passes;
/// returns how many were replaced (the caller then symbolizes and lowers again).
pub fn split_wide_rows(
    g: &mut Graph,
    decisions: &Decisions,
    syms: &SymTable,
    opts: &CompileOptions,
    target: &Target,
) -> KindResult<usize> {
    let mut memo = FxHashMap::default();
    let mut wide: Vec<NodeId> = Vec::new();
    for id in g.node_ids() {
        if let Some(Decision::Lowered(l)) = decisions.get(&id) {
            if l.lowering.norm_like && too_wide(g, (id, l), syms, opts, target, &mut memo) {
                wide.push(id);
            }
        }
    }
    let mut done = 0;
    for id in wide {
        if let Some(Decision::Lowered(l)) = decisions.get(&id) {
            if split(g, id, l)? {
                done += 1;
            }
        }
    }
    Ok(done)
}
