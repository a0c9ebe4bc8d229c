//! Shape, indexing, creation and reduction ops: views and reshapes (SymInt sizes become shape
//! arithmetic), permutes (2-D ones deferred for matmuls), expand, cat, split, select, slice,
//! gather-style indexing, arange / full, reductions, cumsum and constant padding.

use ascendir_ir::{AttrMap, AttrValue, DataType, Format, Tensor, TensorDesc};
use bytes::Bytes;

use crate::build::{scalar_bytes, Ctx, Out, SymDef, Value};
use crate::ops::{arg, attrs, ints, is_float, meta, norm, operand, out_meta, set_sym};
use crate::program::{Arg, FxNode};
use crate::TorchResult;

fn reshape(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    size: &[Arg<'_>],
) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    if meta(ctx, x)?.same_shape(&om) {
        let v = ctx.alias(x)?;
        ctx.set(v);
        return Ok(true);
    }
    // One unknown entry becomes -1 (the element count fixes it); more need shape arithmetic.
    let unknown = size.iter().filter(|a| ctx.int_of(a).is_none()).count();
    let has_minus_one = size.iter().any(|a| ctx.int_of(a) == Some(-1));
    let items: Vec<Arg> = if unknown == 1 && !has_minus_one {
        size.iter()
            .map(|a| Arg::Int(ctx.int_of(a).unwrap_or(-1)))
            .collect()
    } else {
        size.to_vec()
    };
    let xi = ctx.tensor(x)?;
    let shape = ctx.int_list_tensor(&items, &format!("{}/shape", node.name))?;
    let id = ctx.add(
        "Reshape",
        &[("x", xi), ("shape", shape)],
        &["y"],
        attrs([
            ("axis", AttrValue::Int(0)),
            ("num_axes", AttrValue::Int(-1)),
        ]),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

fn permute(
    ctx: &mut Ctx<'_>,
    _node: &FxNode<'_>,
    x: &Arg<'_>,
    perm: Vec<i64>,
) -> TorchResult<bool> {
    let rank = meta(ctx, x)?.dims.len();
    let perm: Vec<i64> = perm.into_iter().map(|d| norm(d, rank)).collect();
    if perm.iter().enumerate().all(|(i, &d)| d == i as i64) {
        let v = ctx.alias(x)?;
        ctx.set(v);
        return Ok(true);
    }
    if perm == [1, 0] {
        // Deferred: a matmul folds it into transpose_x*; a double transpose cancels.
        if let Some(src) = ctx.deferred_transpose(x) {
            ctx.set(Value::T(src));
        } else {
            let xi = ctx.tensor(x)?;
            ctx.set(Value::Trans(xi));
        }
        return Ok(true);
    }
    let xi = ctx.tensor(x)?;
    let id = ctx.add(
        "TransposeD",
        &[("x", xi)],
        &["y"],
        attrs([("perm", ints(perm))]),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

fn reduce(ctx: &mut Ctx<'_>, node: &FxNode<'_>, ge: &str, all_axes: bool) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    let x = arg(node, 0, "self").clone();
    let rank = meta(ctx, &x)?.dims.len();
    let (axes, keep) = if all_axes {
        ((0..rank as i64).collect::<Vec<_>>(), false)
    } else {
        let axes = match arg(node, 1, "dim") {
            Arg::None => (0..rank as i64).collect(),
            a => match a.as_ints() {
                Some(v) if v.is_empty() => (0..rank as i64).collect(),
                Some(v) => v.into_iter().map(|d| norm(d, rank)).collect(),
                None => return Ok(false),
            },
        };
        let keep = arg(node, 2, "keepdim").as_int().unwrap_or(0) != 0;
        (axes, keep)
    };
    let dt = om.dtype.unwrap_or(DataType::FLOAT);
    let xi = if matches!(ge, "ReduceAnyD" | "ReduceAllD") {
        let m = meta(ctx, &x)?.clone();
        let o = ctx.tensor(&x)?;
        ctx.cast(
            o,
            m.dtype.unwrap_or(DataType::BOOL),
            DataType::BOOL,
            &m.dims,
        )?
    } else {
        operand(ctx, &x, dt, "x")?
    };
    let id = ctx.add(
        ge,
        &[("x", xi)],
        &["y"],
        attrs([("axes", ints(axes)), ("keep_dims", AttrValue::Bool(keep))]),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// A constant filled with `value` of the node's output shape (static), or `None` when too big
/// or symbolic.
fn filled_const(ctx: &mut Ctx<'_>, node: &FxNode<'_>, value: f64) -> TorchResult<Option<Out>> {
    let om = out_meta(ctx, node)?;
    let dt = om.dtype.unwrap_or(DataType::FLOAT);
    if !om.is_static() {
        return Ok(None);
    }
    let n = om
        .dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?));
    let Some(n) = n.filter(|&n| n <= 1 << 16) else {
        return Ok(None);
    };
    let one = scalar_bytes(value, dt)
        .ok_or_else(|| ctx.unsupported(format!("cannot fill a {} tensor", dt.name())))?;
    let mut bytes = Vec::with_capacity(one.len().saturating_mul(n));
    for _ in 0..n {
        bytes.extend_from_slice(&one);
    }
    let t = Tensor::new(
        TensorDesc::new(&om.dims, dt, Format::ND),
        Bytes::from(bytes),
    );
    let name = node.name;
    Ok(Some(ctx.const_tensor(name, t)?))
}

fn fill(ctx: &mut Ctx<'_>, node: &FxNode<'_>, dims: Out, value: f64) -> TorchResult<bool> {
    let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
    let v = ctx.const_scalar(&format!("{}/value", node.name), value, dt)?;
    let id = ctx.add(
        "Fill",
        &[("dims", dims), ("value", v)],
        &["y"],
        AttrMap::new(),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}
/// `aten.diff(x, n=1, dim, prepend, append)`: `x[1:] - x[:-1]` along `dim` of `x` with
/// `prepend` and `append` concatenated; other orders and boolean tensors stay unmapped.
fn diff(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    let Some(dt) = om.dtype.filter(|&d| d != DataType::BOOL) else {
        return Ok(false);
    };
    if arg(node, 1, "n").as_int().unwrap_or(1) != 1 {
        return Ok(false);
    }
    let xm = meta(ctx, x)?;
    let rank = xm.dims.len();
    if rank == 0 || om.dims.len() != rank {
        return Ok(false);
    }
    let dim = norm(arg(node, 2, "dim").as_int().unwrap_or(-1), rank);
    let Ok(d) = usize::try_from(dim) else {
        return Ok(false);
    };
    if d >= rank {
        return Ok(false);
    }
    let base = node.name.to_string();
    let mut parts = Vec::new();
    for a in [
        arg(node, 3, "prepend").clone(),
        x.clone(),
        arg(node, 4, "append").clone(),
    ] {
        if !matches!(a, Arg::None) {
            parts.push(ctx.tensor(&a)?);
        }
    }
    // The operand's dims: the output's, one longer along `dim`.
    let mut src_dims: Vec<i64> = om.dims.to_vec();
    src_dims[d] = if src_dims[d] >= 0 {
        src_dims[d] + 1
    } else {
        -1
    };
    let src = if parts.len() == 1 {
        parts[0]
    } else {
        let ports: Vec<String> = (0..parts.len()).map(|k| format!("x{k}")).collect();
        let refs: Vec<(&str, Out)> = ports
            .iter()
            .map(String::as_str)
            .zip(parts.iter().copied())
            .collect();
        let mut a = AttrMap::new();
        a.insert("concat_dim", AttrValue::Int(dim));
        a.insert("N", AttrValue::Int(refs.len() as i64));
        ctx.helper_with(
            &format!("{base}/operand"),
            "ConcatV2D",
            &refs,
            TensorDesc::new(&src_dims, dt, Format::ND),
            a,
        )?
    };
    let axes = ctx.const_i64(&format!("{base}/axes"), &[dim], &[1])?;
    let steps = ctx.const_i64(&format!("{base}/steps"), &[1], &[1])?;
    let slice = |ctx: &mut Ctx<'_>, role: &str, begin: i64, end: i64| -> TorchResult<Out> {
        let b = ctx.const_i64(&format!("{base}/{role}_begin"), &[begin], &[1])?;
        let e = ctx.const_i64(&format!("{base}/{role}_end"), &[end], &[1])?;
        ctx.helper(
            &format!("{base}/{role}"),
            "StridedSliceV2",
            &[
                ("x", src),
                ("begin", b),
                ("end", e),
                ("axes", axes),
                ("strides", steps),
            ],
            TensorDesc::new(&om.dims, dt, Format::ND),
            [],
        )
    };
    let hi = slice(ctx, "next", 1, i64::MAX)?;
    let lo = slice(ctx, "prev", 0, -1)?;
    let id = ctx.add("Sub", &[("x1", hi), ("x2", lo)], &["y"], AttrMap::new())?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// Right-aligned broadcast of two shapes (`-1` where symbolic and not decided by the other).
fn broadcast_dims(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let pick = |s: &[i64]| (i + s.len()).checked_sub(n).map_or(1, |j| s[j]);
            match (pick(a), pick(b)) {
                (1, d) | (d, 1) => d,
                (d, e) if d == e => d,
                (d, -1) | (-1, d) => d,
                (d, _) => d,
            }
        })
        .collect()
}

/// `aten.index.Tensor` with several index tensors on the leading dims (`x[i, j]`, as causal
/// masks index a batch and a position): the indices broadcast against each other (added to
/// zeros of the others), stacked on a last axis (`Pack`) and gathered with `GatherNd`. Other
/// forms (an index after a `None`, boolean or mixed-type indices) are left unmapped.
fn index_nd(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    idx: &[Arg<'_>],
) -> TorchResult<bool> {
    if idx.iter().any(|a| matches!(a, Arg::None)) {
        return Ok(false);
    }
    let mut metas = Vec::with_capacity(idx.len());
    for a in idx {
        let m = meta(ctx, a)?;
        if m.dtype != Some(DataType::INT64) {
            return Ok(false);
        }
        metas.push(m.dims.to_vec());
    }
    let rank = meta(ctx, x)?.dims.len();
    if idx.len() > rank {
        return Ok(false);
    }
    let desc = |dims: &[i64]| TensorDesc::new(dims, DataType::INT64, Format::ND);
    let base = node.name.to_string();
    let zero = ctx.const_i64(&format!("{base}/zero"), &[0], &[])?;
    // The sum of every index times zero: zeros of the broadcast index shape.
    let mut acc: Option<(Out, Vec<i64>)> = None;
    for (k, a) in idx.iter().enumerate() {
        let t = ctx.tensor(a)?;
        let z = ctx.helper(
            &format!("{base}/zeros{k}"),
            "Mul",
            &[("x1", t), ("x2", zero)],
            desc(&metas[k]),
            [],
        )?;
        acc = Some(match acc {
            None => (z, metas[k].clone()),
            Some((prev, dims)) => {
                let dims = broadcast_dims(&dims, &metas[k]);
                let sum = ctx.helper(
                    &format!("{base}/zeros_sum{k}"),
                    "Add",
                    &[("x1", prev), ("x2", z)],
                    desc(&dims),
                    [],
                )?;
                (sum, dims)
            }
        });
    }
    let Some((zeros, bdims)) = acc else {
        return Ok(false);
    };
    let mut cols = Vec::with_capacity(idx.len());
    for (k, a) in idx.iter().enumerate() {
        let t = ctx.tensor(a)?;
        cols.push(ctx.helper(
            &format!("{base}/index{k}"),
            "Add",
            &[("x1", t), ("x2", zeros)],
            desc(&bdims),
            [],
        )?);
    }
    let ports: Vec<String> = (0..cols.len()).map(|k| format!("x{k}")).collect();
    let refs: Vec<(&str, Out)> = ports
        .iter()
        .map(String::as_str)
        .zip(cols.iter().copied())
        .collect();
    let mut stacked = bdims.clone();
    stacked.push(idx.len() as i64);
    let mut pack_attrs = AttrMap::new();
    pack_attrs.insert("axis", AttrValue::Int(-1));
    pack_attrs.insert("N", AttrValue::Int(cols.len() as i64));
    let pack = ctx.helper_with(
        &format!("{base}/indices"),
        "Pack",
        &refs,
        desc(&stacked),
        pack_attrs,
    )?;
    let xi = ctx.tensor(x)?;
    let id = ctx.add(
        "GatherNd",
        &[("x", xi), ("indices", pack)],
        &["y"],
        AttrMap::new(),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// Map a shape-family op; `None` when `op` is none of them.
#[allow(clippy::too_many_lines)]
pub(crate) fn map(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    op: &str,
    overload: &str,
    x: &Arg<'_>,
) -> TorchResult<Option<bool>> {
    let x = x.clone();
    let done: TorchResult<bool> = match op {
        "dropout" | "dropout_" | "feature_dropout" | "alpha_dropout" => {
            if arg(node, 2, "train").as_int().unwrap_or(1) != 0 {
                return Ok(Some(false));
            }
            let v = ctx.alias(&x)?;
            ctx.set(v);
            Ok(true)
        }
        "flatten" | "unflatten" => {
            let om = out_meta(ctx, node)?;
            let symbolic = om.dims.iter().filter(|&&d| d < 0).count();
            if symbolic > 1 {
                return Ok(Some(false));
            }
            let items: Vec<Arg> = om.dims.iter().map(|&d| Arg::Int(d)).collect();
            reshape(ctx, node, &x, &items)
        }
        "sym_size" => {
            let d = arg(node, 1, "dim").as_int().unwrap_or(0);
            let rank = meta(ctx, &x)?.dims.len();
            let known = node
                .out()
                .is_some_and(|m| m.dims.first().is_some_and(|&v| v >= 0));
            let o = if known { None } else { Some(ctx.tensor(&x)?) };
            set_sym(ctx, node, |ctx| match o {
                Some(o) => Ok(SymDef::Size(o, norm(d, rank))),
                None => Err(ctx.unsupported("sym_size without a value")),
            })?;
            Ok(true)
        }
        "view" | "_unsafe_view" | "reshape" => {
            let Arg::List(size) = arg(node, 1, "size").clone() else {
                return Ok(Some(false));
            };
            reshape(ctx, node, &x, &size)
        }
        "permute" => {
            let Some(p) = arg(node, 1, "dims").as_ints() else {
                return Ok(Some(false));
            };
            permute(ctx, node, &x, p)
        }
        "t" => {
            if meta(ctx, &x)?.dims.len() < 2 {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(Some(true));
            }
            permute(ctx, node, &x, vec![1, 0])
        }
        "transpose" => {
            let rank = meta(ctx, &x)?.dims.len();
            let (Some(a), Some(b)) = (arg(node, 1, "dim0").as_int(), arg(node, 2, "dim1").as_int())
            else {
                return Ok(Some(false));
            };
            let mut p: Vec<i64> = (0..rank as i64).collect();
            let (a, b) = (norm(a, rank) as usize, norm(b, rank) as usize);
            if a >= rank || b >= rank {
                return Ok(Some(false));
            }
            p.swap(a, b);
            permute(ctx, node, &x, p)
        }
        "unsqueeze" => {
            let rank = out_meta(ctx, node)?.dims.len();
            let Some(d) = arg(node, 1, "dim").as_int() else {
                return Ok(Some(false));
            };
            let xi = ctx.tensor(&x)?;
            let id = ctx.add(
                "Unsqueeze",
                &[("x", xi)],
                &["y"],
                attrs([("axes", ints(vec![norm(d, rank)]))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "squeeze" => {
            let m = meta(ctx, &x)?.clone();
            let rank = m.dims.len();
            let wanted: Vec<i64> = match arg(node, 1, "dim") {
                Arg::None => (0..rank as i64).collect(),
                a => match a.as_ints() {
                    Some(v) => v.into_iter().map(|d| norm(d, rank)).collect(),
                    None => return Ok(Some(false)),
                },
            };
            let axes: Vec<i64> = wanted
                .into_iter()
                .filter(|&d| m.dims.get(d as usize) == Some(&1))
                .collect();
            if axes.is_empty() {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(Some(true));
            }
            let xi = ctx.tensor(&x)?;
            let id = ctx.add(
                "Squeeze",
                &[("x", xi)],
                &["y"],
                attrs([("axis", ints(axes))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "expand" => {
            let om = out_meta(ctx, node)?;
            let im = meta(ctx, &x)?.clone();
            if im.same_shape(&om) {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(Some(true));
            }
            let Arg::List(size) = arg(node, 1, "size").clone() else {
                return Ok(Some(false));
            };
            let (r, k) = (om.dims.len(), im.dims.len());
            let mut items = Vec::with_capacity(r);
            for i in 0..r {
                let same = i >= r - k.min(r) && im.same_dim(i - (r - k), &om, i);
                if same {
                    items.push(Arg::Int(1));
                } else if om.dims[i] >= 0 {
                    items.push(Arg::Int(om.dims[i]));
                } else {
                    items.push(size.get(i).cloned().unwrap_or(Arg::Int(1)));
                }
            }
            let xi = ctx.tensor(&x)?;
            let shape = ctx.int_list_tensor(&items, &format!("{}/shape", node.name))?;
            let id = ctx.add(
                "Expand",
                &[("x", xi), ("shape", shape)],
                &["y"],
                AttrMap::new(),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "cat" => {
            let Arg::List(items) = x.clone() else {
                return Ok(Some(false));
            };
            let om = out_meta(ctx, node)?;
            let rank = om.dims.len();
            let dim = norm(arg(node, 1, "dim").as_int().unwrap_or(0), rank);
            let dt = om.dtype.unwrap_or(DataType::FLOAT);
            let mut ins = Vec::with_capacity(items.len());
            for (k, it) in items.iter().enumerate() {
                // Legacy: 1-D empty tensors are skipped by torch.cat.
                if meta(ctx, it)?.dims.as_slice() == [0] && rank != 1 {
                    continue;
                }
                ins.push((format!("x{k}"), operand(ctx, it, dt, &format!("x{k}"))?));
            }
            let ports: Vec<(String, Out)> = ins
                .iter()
                .enumerate()
                .map(|(k, (_, o))| (format!("x{k}"), *o))
                .collect();
            let refs: Vec<(&str, Out)> = ports.iter().map(|(p, o)| (p.as_str(), *o)).collect();
            let id = ctx.add(
                "ConcatV2D",
                &refs,
                &["y"],
                attrs([
                    ("concat_dim", AttrValue::Int(dim)),
                    ("N", AttrValue::Int(refs.len() as i64)),
                ]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "split_with_sizes" | "split" => {
            let m = meta(ctx, &x)?.clone();
            let rank = m.dims.len();
            let dim = norm(arg(node, 2, "dim").as_int().unwrap_or(0), rank);
            let sizes: Vec<i64> = if op == "split" {
                let (Some(size), Some(&total)) = (
                    arg(node, 1, "split_size").as_int(),
                    m.dims.get(dim as usize),
                ) else {
                    return Ok(Some(false));
                };
                if size <= 0 || total < 0 {
                    return Ok(Some(false));
                }
                let mut v = Vec::new();
                let mut left = total;
                while left > 0 {
                    v.push(size.min(left));
                    left -= size.min(left);
                }
                v
            } else {
                match arg(node, 1, "split_sizes").as_ints() {
                    Some(v) => v,
                    None => return Ok(Some(false)),
                }
            };
            let n = sizes.len();
            let xi = ctx.tensor(&x)?;
            let names: Vec<String> = (0..n).map(|k| format!("y{k}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let id = ctx.add(
                "SplitVD",
                &[("x", xi)],
                &refs,
                attrs([
                    ("size_splits", ints(sizes)),
                    ("split_dim", AttrValue::Int(dim)),
                    ("num_split", AttrValue::Int(n as i64)),
                ]),
            )?;
            ctx.set(Value::Tuple((0..n).map(|k| Some((id, k))).collect()));
            Ok(true)
        }
        "select" => {
            let rank = meta(ctx, &x)?.dims.len();
            let (Some(d), Some(i)) = (
                arg(node, 1, "dim").as_int(),
                ctx.int_of(arg(node, 2, "index")),
            ) else {
                return Ok(Some(false));
            };
            let xi = ctx.tensor(&x)?;
            let idx = ctx.const_i64(&format!("{}/index", node.name), &[i], &[])?;
            let id = ctx.add(
                "GatherV2D",
                &[("x", xi), ("indices", idx)],
                &["y"],
                attrs([("axis", AttrValue::Int(norm(d, rank)))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "slice" => {
            let m = meta(ctx, &x)?.clone();
            let rank = m.dims.len();
            let dim = norm(arg(node, 1, "dim").as_int().unwrap_or(0), rank);
            let start = match arg(node, 2, "start") {
                Arg::None => Arg::Int(0),
                a => a.clone(),
            };
            let end = match arg(node, 3, "end") {
                Arg::None => Arg::Int(i64::MAX),
                a => a.clone(),
            };
            let step = arg(node, 4, "step").as_int().unwrap_or(1);
            let full_end = match ctx.int_of(&end) {
                Some(e) => {
                    e == i64::MAX || m.dims.get(dim as usize).is_some_and(|&d| d >= 0 && e >= d)
                }
                None => false,
            };
            if ctx.int_of(&start) == Some(0) && full_end && step == 1 {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(Some(true));
            }
            let xi = ctx.tensor(&x)?;
            let b = ctx.int_list_tensor(&[start], &format!("{}/begin", node.name))?;
            let e = ctx.int_list_tensor(&[end], &format!("{}/end", node.name))?;
            let a = ctx.const_i64(&format!("{}/axes", node.name), &[dim], &[1])?;
            let s = ctx.const_i64(&format!("{}/strides", node.name), &[step], &[1])?;
            let id = ctx.add(
                "StridedSliceV2",
                &[
                    ("x", xi),
                    ("begin", b),
                    ("end", e),
                    ("axes", a),
                    ("strides", s),
                ],
                &["y"],
                AttrMap::new(),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "index" if overload == "Tensor" => {
            let Arg::List(idx) = arg(node, 1, "indices").clone() else {
                return Ok(Some(false));
            };
            let given: Vec<usize> = (0..idx.len())
                .filter(|&k| !matches!(idx[k], Arg::None))
                .collect();
            if given.len() > 1 {
                return index_nd(ctx, node, &x, &idx).map(Some);
            }
            if given.len() != 1 {
                return Ok(Some(false));
            }
            let k = given[0];
            let im = meta(ctx, &idx[k])?;
            if !matches!(im.dtype, Some(DataType::INT64 | DataType::INT32)) {
                return Ok(Some(false));
            }
            let xi = ctx.tensor(&x)?;
            let ii = ctx.tensor(&idx[k])?;
            let id = ctx.add(
                "GatherV2D",
                &[("x", xi), ("indices", ii)],
                &["y"],
                attrs([("axis", AttrValue::Int(k as i64))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "embedding" => {
            let w = ctx.tensor(&x)?;
            let i = ctx.tensor(arg(node, 1, "indices"))?;
            let id = ctx.add(
                "GatherV2D",
                &[("x", w), ("indices", i)],
                &["y"],
                attrs([("axis", AttrValue::Int(0))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "arange" => {
            let om = out_meta(ctx, node)?;
            let dt = om.dtype.unwrap_or(DataType::INT64);
            let (start, end, step) = match overload {
                "default" => (Arg::Int(0), x.clone(), Arg::Int(1)),
                "start" => (x.clone(), arg(node, 1, "end").clone(), Arg::Int(1)),
                _ => (
                    x.clone(),
                    arg(node, 1, "end").clone(),
                    match arg(node, 2, "step") {
                        Arg::None => Arg::Int(1),
                        a => a.clone(),
                    },
                ),
            };
            let known = |a: &Arg<'_>| a.as_f64().or_else(|| ctx.int_of(a).map(|v| v as f64));
            if let (Some(s), Some(_), Some(st)) = (known(&start), known(&end), known(&step)) {
                if let Some(&n) = om.dims.first().filter(|&&n| n >= 0) {
                    let mut bytes = Vec::new();
                    for i in 0..n {
                        let v = s + (i as f64) * st;
                        bytes.extend(
                            scalar_bytes(v, dt).ok_or_else(|| ctx.unsupported("arange dtype"))?,
                        );
                    }
                    let t = Tensor::new(TensorDesc::new(&[n], dt, Format::ND), Bytes::from(bytes));
                    let name = node.name;
                    let o = ctx.const_tensor(name, t)?;
                    ctx.set(Value::T(o));
                    return Ok(Some(true));
                }
            }
            if is_float(dt) {
                return Ok(Some(false));
            }
            let mut scalars = Vec::new();
            for (k, a) in [("start", &start), ("limit", &end), ("delta", &step)] {
                let s = ctx
                    .sym_of(a)
                    .ok_or_else(|| ctx.unsupported("arange of a non-integer bound"))?;
                let t = ctx.sym_tensor(s)?;
                let t = ctx.cast(t, DataType::INT64, dt, &[1])?;
                let name = format!("{}/{k}", node.name);
                let sq = ctx.helper(
                    &name,
                    "Squeeze",
                    &[("x", t)],
                    TensorDesc::new(&[], dt, Format::ND),
                    [("axis", ints(vec![0]))],
                )?;
                scalars.push((k, sq));
            }
            let id = ctx.add("Range", &scalars, &["y"], AttrMap::new())?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "full" | "full_like" | "zeros_like" | "ones_like" | "scalar_tensor" | "new_ones"
        | "new_zeros" | "new_full" => {
            let value = match op {
                "full" => arg(node, 1, "fill_value").as_f64(),
                "full_like" => arg(node, 1, "fill_value").as_f64(),
                "new_full" => arg(node, 2, "fill_value").as_f64(),
                "zeros_like" | "new_zeros" => Some(0.0),
                "ones_like" | "new_ones" => Some(1.0),
                _ => x.as_f64(),
            };
            let Some(value) = value else {
                return Ok(Some(false));
            };
            if let Some(o) = filled_const(ctx, node, value)? {
                ctx.set(Value::T(o));
                return Ok(Some(true));
            }
            // `full(size, v)`; `new_*(self, size, ...)` take the size second.
            let size = match op {
                "full" => Some(x.clone()),
                "new_ones" | "new_zeros" | "new_full" => Some(arg(node, 1, "size").clone()),
                _ => None,
            };
            let dims = if let Some(size) = size {
                let Arg::List(size) = size else {
                    return Ok(Some(false));
                };
                ctx.int_list_tensor(&size, &format!("{}/dims", node.name))?
            } else {
                let src = ctx.tensor(&x)?;
                let rank = meta(ctx, &x)?.dims.len() as i64;
                ctx.helper(
                    &format!("{}/dims", node.name),
                    "Shape",
                    &[("x", src)],
                    TensorDesc::new(&[rank], DataType::INT64, Format::ND),
                    [(
                        "dtype",
                        AttrValue::Int(i64::from(DataType::INT64.ge_value())),
                    )],
                )?
            };
            fill(ctx, node, dims, value)
        }
        "diff" => diff(ctx, node, &x),
        "mean" | "sum" | "amax" | "amin" | "any" | "all" | "prod" => {
            let ge = match op {
                "mean" => "ReduceMeanD",
                "sum" => "ReduceSumD",
                "amax" => "ReduceMaxD",
                "amin" => "ReduceMinD",
                "any" => "ReduceAnyD",
                "all" => "ReduceAllD",
                _ => "ReduceProdD",
            };
            reduce(ctx, node, ge, overload == "default")
        }
        "cumsum" => {
            let rank = meta(ctx, &x)?.dims.len();
            let Some(d) = arg(node, 1, "dim").as_int() else {
                return Ok(Some(false));
            };
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let xi = operand(ctx, &x, dt, "x")?;
            let axis = ctx.const_i64(&format!("{}/axis", node.name), &[norm(d, rank)], &[])?;
            let id = ctx.add(
                "Cumsum",
                &[("x", xi), ("axis", axis)],
                &["y"],
                AttrMap::new(),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "constant_pad_nd" => {
            let rank = meta(ctx, &x)?.dims.len();
            let Some(pad) = arg(node, 1, "pad").as_ints() else {
                return Ok(Some(false));
            };
            if pad.len() % 2 != 0 || pad.len() / 2 > rank || pad.iter().any(|&v| v < 0) {
                return Ok(Some(false));
            }
            // torch: (last dim begin, end, second-last begin, end, …); GE (ONNX layout):
            // every begin, then every end.
            let mut v = vec![0i64; 2 * rank];
            for (k, pair) in pad.chunks(2).enumerate() {
                let d = rank - 1 - k;
                v[d] = pair[0];
                v[rank + d] = pair[1];
            }
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let value = arg(node, 2, "value").as_f64().unwrap_or(0.0);
            let xi = ctx.tensor(&x)?;
            let p = ctx.const_i64(&format!("{}/paddings", node.name), &v, &[2 * rank as i64])?;
            let c = ctx.const_scalar(&format!("{}/value", node.name), value, dt)?;
            let id = ctx.add(
                "PadV3",
                &[("x", xi), ("paddings", p), ("constant_values", c)],
                &["y"],
                attrs([
                    ("mode", AttrValue::String("constant".into())),
                    ("paddings_contiguous", AttrValue::Bool(false)),
                ]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        _ => return Ok(None),
    };
    Ok(Some(done?))
}
