//! The composite ATen forms that `torch.export` leaves in real models' programs before any
//! decomposition (`pad`, `chunk`, `unbind`, `diff`, `min` / `max` of two tensors
//! or along a dim, `_weight_norm`, `adaptive_avg_pool1d`), each written with the GE ops it
//! means, so that the import needs no Core ATen re-trace.

use ascendir_ir::{AttrMap, AttrValue, DataType, Format, TensorDesc};

use crate::build::{Ctx, Out, Value};
use crate::ops::{arg, attrs, ints, is_float, meta, norm, operand, out_meta};
use crate::program::{Arg, FxNode};
use crate::TorchResult;

fn set(ctx: &mut Ctx<'_>, o: Out) -> TorchResult<bool> {
    ctx.set(Value::T(o));
    Ok(true)
}

/// `F.pad(x, pad, mode, value)` → `PadV3` (`constant`, `reflect`, `replicate` → `edge`).
fn pad(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let rank = meta(ctx, x)?.dims.len();
    let Some(p) = arg(node, 1, "pad").as_ints() else {
        return Ok(false);
    };
    let mode = match arg(node, 2, "mode") {
        Arg::None => "constant",
        Arg::Str(s) => match *s {
            "constant" => "constant",
            "reflect" => "reflect",
            "replicate" => "edge",
            _ => return Ok(false),
        },
        _ => return Ok(false),
    };
    if p.len() % 2 != 0 || p.len() / 2 > rank || p.iter().any(|&v| v < 0) {
        return Ok(false);
    }
    // torch: (last dim begin, end, second-last begin, end, …); PadV3 with
    // paddings_contiguous=false: every begin, then every end.
    let mut v = vec![0i64; 2 * rank];
    for (k, pair) in p.chunks(2).enumerate() {
        let d = rank - 1 - k;
        v[d] = pair[0];
        v[rank + d] = pair[1];
    }
    let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
    let xi = ctx.tensor(x)?;
    let pv = ctx.const_i64(&format!("{}/paddings", node.name), &v, &[2 * rank as i64])?;
    let mut ins = vec![("x", xi), ("paddings", pv)];
    if mode == "constant" {
        let value = arg(node, 3, "value").as_f64().unwrap_or(0.0);
        ins.push((
            "constant_values",
            ctx.const_scalar(&format!("{}/value", node.name), value, dt)?,
        ));
    }
    let id = ctx.add(
        "PadV3",
        &ins,
        &["y"],
        attrs([
            ("mode", AttrValue::String(mode.into())),
            ("paddings_contiguous", AttrValue::Bool(false)),
        ]),
    )?;
    set(ctx, (id, 0))
}

/// `chunk(x, n, dim)` / `unbind(x, dim)` → `SplitVD` (unbind: each piece `Squeeze`d).
fn split(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>, unbind: bool) -> TorchResult<bool> {
    let m = meta(ctx, x)?.clone();
    let rank = m.dims.len();
    let dim_arg = if unbind { 1 } else { 2 };
    let dim = norm(arg(node, dim_arg, "dim").as_int().unwrap_or(0), rank);
    let Some(&total) = m.dims.get(dim as usize) else {
        return Ok(false);
    };
    if total < 0 {
        return Ok(false);
    }
    let sizes: Vec<i64> = if unbind {
        vec![1; total as usize]
    } else {
        let Some(n) = arg(node, 1, "chunks").as_int().filter(|&n| n > 0) else {
            return Ok(false);
        };
        let each = (total + n - 1) / n;
        let mut v = Vec::new();
        let mut left = total;
        while left > 0 {
            v.push(each.min(left));
            left -= each.min(left);
        }
        v
    };
    if sizes.is_empty() || node.outs.len() != sizes.len() {
        return Ok(false);
    }
    let n = sizes.len();
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    let xi = ctx.tensor(x)?;
    let names: Vec<String> = (0..n).map(|k| format!("y{k}")).collect();
    let split_attrs = attrs([
        ("size_splits", ints(sizes.clone())),
        ("split_dim", AttrValue::Int(dim)),
        ("num_split", AttrValue::Int(n as i64)),
    ]);
    let id = if unbind {
        // The pieces keep the split axis (of size 1) until their Squeeze: their descs are
        // not the FX outputs'.
        let mut piece = m.dims.to_vec();
        piece[dim as usize] = 1;
        let desc = std::sync::Arc::new(TensorDesc::new(&piece, dt, Format::ND));
        let outs: Vec<(&str, std::sync::Arc<TensorDesc>)> =
            names.iter().map(|p| (p.as_str(), desc.clone())).collect();
        let name = format!("{}/split", node.name);
        ctx.add_named(&name, ctx.cur, "SplitVD", &[("x", xi)], &outs, split_attrs)?
    } else {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        ctx.add("SplitVD", &[("x", xi)], &refs, split_attrs)?
    };
    if !unbind {
        ctx.set(Value::Tuple((0..n).map(|k| Some((id, k))).collect()));
        return Ok(true);
    }
    let mut sq_dims = m.dims.to_vec();
    sq_dims.remove(dim as usize);
    let mut items = Vec::with_capacity(n);
    for k in 0..n {
        let o = ctx.helper(
            &format!("{}/squeeze{k}", node.name),
            "Squeeze",
            &[("x", (id, k))],
            TensorDesc::new(&sq_dims, dt, Format::ND),
            [("axis", ints(vec![dim]))],
        )?;
        items.push(Some(o));
    }
    ctx.set(Value::Tuple(items));
    Ok(true)
}

/// A `StridedSliceV2` of `x` along `dim`, `[begin, end)`.
fn slice_along(
    ctx: &mut Ctx<'_>,
    x: Out,
    dims: &[i64],
    dt: DataType,
    dim: i64,
    (begin, end): (i64, i64),
    tag: &str,
) -> TorchResult<Out> {
    let name = format!("{}/{tag}", ctx.cur_name());
    let b = ctx.const_i64(&format!("{name}_begin"), &[begin], &[1])?;
    let e = ctx.const_i64(&format!("{name}_end"), &[end], &[1])?;
    let a = ctx.const_i64(&format!("{name}_axes"), &[dim], &[1])?;
    let s = ctx.const_i64(&format!("{name}_strides"), &[1], &[1])?;
    let mut out = dims.to_vec();
    if let Some(d) = out.get_mut(dim as usize) {
        if *d >= 0 {
            let end = if end < 0 { end + *d } else { end.min(*d) };
            *d = (end - begin).max(0);
        }
    }
    ctx.helper(
        &name,
        "StridedSliceV2",
        &[
            ("x", x),
            ("begin", b),
            ("end", e),
            ("axes", a),
            ("strides", s),
        ],
        TensorDesc::new(&out, dt, Format::ND),
        [],
    )
}

/// `diff(x, n=1, dim, prepend, append)` → `y[1:] - y[:-1]` along `dim`, `y` the
/// concatenation `[prepend, x, append]` (`LogicalXor` for bools, as torch).
fn diff(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    if arg(node, 1, "n").as_int().unwrap_or(1) != 1 {
        return Ok(false);
    }
    let m = meta(ctx, x)?.clone();
    let rank = m.dims.len();
    if rank == 0 {
        return Ok(false);
    }
    let dim = norm(arg(node, 2, "dim").as_int().unwrap_or(-1), rank);
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    let mut parts: Vec<Out> = Vec::new();
    let mut dims = m.dims.to_vec();
    for (k, key) in [(3usize, "prepend"), (usize::MAX, ""), (4, "append")] {
        let a = if k == usize::MAX {
            x.clone()
        } else {
            arg(node, k, key).clone()
        };
        if matches!(a, Arg::None) {
            continue;
        }
        if k != usize::MAX {
            let pm = meta(ctx, &a)?.clone();
            if pm.dims.len() != rank {
                return Ok(false);
            }
            let (d, p) = (dims[dim as usize], pm.dims[dim as usize]);
            dims[dim as usize] = if d >= 0 && p >= 0 { d + p } else { -1 };
        }
        parts.push(operand(
            ctx,
            &a,
            dt,
            if k == 3 { "prepend" } else { "append" },
        )?);
    }
    let xi = if parts.len() == 1 {
        parts[0]
    } else {
        let ports: Vec<(String, Out)> = parts
            .iter()
            .enumerate()
            .map(|(k, o)| (format!("x{k}"), *o))
            .collect();
        let refs: Vec<(&str, Out)> = ports.iter().map(|(p, o)| (p.as_str(), *o)).collect();
        ctx.helper(
            &format!("{}/joined", node.name),
            "ConcatV2D",
            &refs,
            TensorDesc::new(&dims, dt, Format::ND),
            [
                ("concat_dim", AttrValue::Int(dim)),
                ("N", AttrValue::Int(parts.len() as i64)),
            ],
        )?
    };
    let ge = if dt == DataType::BOOL {
        "LogicalXor"
    } else {
        "Sub"
    };
    let hi = slice_along(ctx, xi, &dims, dt, dim, (1, i64::MAX), "upper")?;
    let lo = slice_along(ctx, xi, &dims, dt, dim, (0, -1), "lower")?;
    let id = ctx.add(ge, &[("x1", hi), ("x2", lo)], &["y"], AttrMap::new())?;
    set(ctx, (id, 0))
}

/// `min` / `max`: of two tensors (`.other`) → `Minimum` / `Maximum`; of all elements
/// (`.default`) → `ReduceMinD` / `ReduceMaxD`; along a dim (`.dim`) → the values and
/// `ArgMinD` / `ArgMaxD`'s indices.
fn min_max(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    op: &str,
    overload: &str,
) -> TorchResult<bool> {
    let max = op == "max";
    let om = out_meta(ctx, node)?;
    let dt = om.dtype.unwrap_or(DataType::FLOAT);
    let rank = meta(ctx, x)?.dims.len();
    match overload {
        "other" => {
            let a = operand(ctx, x, dt, "x1")?;
            let b = operand(ctx, arg(node, 1, "other"), dt, "x2")?;
            let ge = if max { "Maximum" } else { "Minimum" };
            let id = ctx.add(ge, &[("x1", a), ("x2", b)], &["y"], AttrMap::new())?;
            set(ctx, (id, 0))
        }
        "default" => {
            let xi = ctx.tensor(x)?;
            let ge = if max { "ReduceMaxD" } else { "ReduceMinD" };
            let id = ctx.add(
                ge,
                &[("x", xi)],
                &["y"],
                attrs([
                    ("axes", ints((0..rank as i64).collect())),
                    ("keep_dims", AttrValue::Bool(false)),
                ]),
            )?;
            set(ctx, (id, 0))
        }
        "dim" => {
            let Some(d) = arg(node, 1, "dim").as_int() else {
                return Ok(false);
            };
            let keep = arg(node, 2, "keepdim").as_int().unwrap_or(0) != 0;
            let d = norm(d, rank.max(1));
            let xi = ctx.tensor(x)?;
            let vals_dims = om.dims.to_vec();
            let ge = if max { "ReduceMaxD" } else { "ReduceMinD" };
            let v = ctx.add(
                ge,
                &[("x", xi)],
                &["y"],
                attrs([
                    ("axes", ints(vec![d])),
                    ("keep_dims", AttrValue::Bool(keep)),
                ]),
            )?;
            let mut idx = ctx.helper(
                &format!("{}/indices", node.name),
                if max { "ArgMaxD" } else { "ArgMinD" },
                &[("x", xi)],
                TensorDesc::new(
                    &{
                        let mut v = vals_dims.clone();
                        if keep {
                            v.remove(d as usize);
                        }
                        v
                    },
                    DataType::INT64,
                    Format::ND,
                ),
                [
                    ("dimension", AttrValue::Int(d)),
                    (
                        "dtype",
                        AttrValue::Int(i64::from(DataType::INT64.ge_value())),
                    ),
                ],
            )?;
            if keep {
                idx = ctx.helper(
                    &format!("{}/indices_keep", node.name),
                    "Unsqueeze",
                    &[("x", idx)],
                    TensorDesc::new(&vals_dims, DataType::INT64, Format::ND),
                    [("axes", ints(vec![d]))],
                )?;
            }
            ctx.set(Value::Tuple(vec![Some((v, 0)), Some(idx)]));
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// `_weight_norm(v, g, dim)`: `v · g / ‖v‖`, the norm over every axis but `dim`.
fn weight_norm(ctx: &mut Ctx<'_>, node: &FxNode<'_>, v: &Arg<'_>) -> TorchResult<bool> {
    let m = meta(ctx, v)?.clone();
    let rank = m.dims.len();
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    if !is_float(dt) || rank == 0 {
        return Ok(false);
    }
    let dim = arg(node, 2, "dim").as_int().unwrap_or(0);
    let axes: Vec<i64> = if dim == -1 {
        (0..rank as i64).collect()
    } else {
        let d = norm(dim, rank);
        (0..rank as i64).filter(|&a| a != d).collect()
    };
    let mut kd: Vec<i64> = m.dims.to_vec();
    for &a in &axes {
        kd[a as usize] = 1;
    }
    let vi = ctx.tensor(v)?;
    let gi = operand(ctx, arg(node, 1, "g"), dt, "g")?;
    let name = |t: &str| format!("{}/{t}", node.name);
    let desc = |d: &[i64]| TensorDesc::new(d, dt, Format::ND);
    let sq = ctx.helper(
        &name("square"),
        "Mul",
        &[("x1", vi), ("x2", vi)],
        desc(&m.dims),
        [],
    )?;
    let sum = ctx.helper(
        &name("sum"),
        "ReduceSumD",
        &[("x", sq)],
        desc(&kd),
        [("axes", ints(axes)), ("keep_dims", AttrValue::Bool(true))],
    )?;
    let nrm = ctx.helper(&name("norm"), "Sqrt", &[("x", sum)], desc(&kd), [])?;
    let scale = ctx.helper(
        &name("scale"),
        "RealDiv",
        &[("x1", gi), ("x2", nrm)],
        desc(&kd),
        [],
    )?;
    let id = ctx.add("Mul", &[("x1", vi), ("x2", scale)], &["y"], AttrMap::new())?;
    set(ctx, (id, 0))
}

/// `adaptive_avg_pool1d(x, [out])` where `out` divides the length: `Reshape` to
/// `[…, out, L/out]` and a `ReduceMeanD` over the last axis.
fn adaptive_avg_pool1d(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let m = meta(ctx, x)?.clone();
    let rank = m.dims.len();
    let Some(out) = arg(node, 1, "output_size")
        .as_ints()
        .and_then(|v| (v.len() == 1).then(|| v[0]))
    else {
        return Ok(false);
    };
    let len = m.dims[rank - 1];
    if rank < 2 || out <= 0 || len < 0 || len % out != 0 {
        return Ok(false);
    }
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    let mut xi = ctx.tensor(x)?;
    let mut rd: Vec<i64> = m.dims.to_vec();
    rd[rank - 1] = out;
    rd.push(len / out);
    let items: Vec<Arg> = (0..rank - 1)
        .map(|_| Arg::Int(0))
        .chain([Arg::Int(out), Arg::Int(len / out)])
        .collect();
    let shape = ctx.int_list_tensor(&items, &format!("{}/shape", node.name))?;
    xi = ctx.helper(
        &format!("{}/windows", node.name),
        "Reshape",
        &[("x", xi), ("shape", shape)],
        TensorDesc::new(&rd, dt, Format::ND),
        [
            ("axis", AttrValue::Int(0)),
            ("num_axes", AttrValue::Int(-1)),
        ],
    )?;
    let id = ctx.add(
        "ReduceMeanD",
        &[("x", xi)],
        &["y"],
        attrs([
            ("axes", ints(vec![rank as i64])),
            ("keep_dims", AttrValue::Bool(false)),
        ]),
    )?;
    set(ctx, (id, 0))
}

/// Map a composite form; `None` when `op` is none of them.
pub(crate) fn map(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    op: &str,
    overload: &str,
    x: &Arg<'_>,
) -> TorchResult<Option<bool>> {
    let r = match op {
        "pad" => pad(ctx, node, x)?,
        "chunk" => split(ctx, node, x, false)?,
        "unbind" => split(ctx, node, x, true)?,
        "diff" => diff(ctx, node, x)?,
        "min" | "max" => min_max(ctx, node, x, op, overload)?,
        "_weight_norm" => weight_norm(ctx, node, x)?,
        "adaptive_avg_pool1d" => adaptive_avg_pool1d(ctx, node, x)?,
        _ => return Ok(None),
    };
    Ok(Some(r))
}
