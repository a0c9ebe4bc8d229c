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
        | "new_zeros" | "new_full" | "ones" | "zeros" => {
            let value = match op {
                "ones" => Some(1.0),
                "zeros" => Some(0.0),
                "full" => arg(node, 1, "fill_value").as_f64(),
                "full_like" => arg(node, 1, "fill_value").as_f64(),
                "zeros_like" | "new_zeros" => Some(0.0),
                "ones_like" | "new_ones" => Some(1.0),
                "new_full" => arg(node, 2, "fill_value").as_f64(),
                _ => x.as_f64(),
            };
            let Some(value) = value else {
                return Ok(Some(false));
            };
            if let Some(o) = filled_const(ctx, node, value)? {
                ctx.set(Value::T(o));
                return Ok(Some(true));
            }
            let dims = if op.starts_with("new_") {
                let Arg::List(size) = arg(node, 1, "size").clone() else {
                    return Ok(Some(false));
                };
                ctx.int_list_tensor(&size, &format!("{}/dims", node.name))?
            } else if matches!(op, "full" | "ones" | "zeros") {
                let Arg::List(size) = x.clone() else {
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
