//! Norms and convolutions whose ATen form has no GE op of the same rank.
//!
//! GE's `Conv2D` and `BatchNorm` are 4-D (NCHW). A 1-D convolution (`[N, C, L]`, audio front
//! ends, wav2vec2's positional convolution) and a 1-D batch norm (`[N, C, L]` or `[N, C]`)
//! get a unit `H` axis (`Unsqueeze`), run as the 2-D op, and lose the axis again
//! (`Squeeze`): the same numbers, every stage (inference, evaluate, compile, export) served
//! by the 2-D op. Group norm has no GE op in the builtin library: it is written with the GE
//! ops it is made of (`Reshape` to `[N, G, -1]`, `ReduceMeanD`, `Sub`, `Mul`, `Rsqrt`, the
//! affine `Mul` / `Add`), as the decomposed form of an ONNX `GroupNormalization` reads.

use std::sync::Arc;

use ascendir_ir::{AttrValue, DataType, Format, TensorDesc};

use crate::build::{Ctx, Out, Value};
use crate::ops::{arg, attrs, ints, meta, out_meta};
use crate::program::{Arg, FxNode};
use crate::TorchResult;

/// One spatial value of a 1-D convolution's list argument (`[v]` or `v`).
fn one(a: &Arg<'_>, default: i64) -> Option<i64> {
    match a {
        Arg::None => Some(default),
        a => match a.as_ints() {
            Some(v) if v.is_empty() => Some(default),
            Some(v) if v.len() == 1 => Some(v[0]),
            _ => a.as_int(),
        },
    }
}

fn unsqueeze(
    ctx: &mut Ctx<'_>,
    o: Out,
    dims: &[i64],
    dt: DataType,
    axes: Vec<i64>,
    tag: &str,
) -> TorchResult<Out> {
    let name = format!("{}/{tag}", ctx.cur_name());
    ctx.helper(
        &name,
        "Unsqueeze",
        &[("x", o)],
        TensorDesc::new(dims, dt, Format::ND),
        [("axes", ints(axes))],
    )
}

/// `convolution` / `conv1d` of a 3-D input → `Unsqueeze` → `Conv2D` → `Squeeze`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv1d(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    w: &Arg<'_>,
    b: &Arg<'_>,
    stride: &Arg<'_>,
    padding: &Arg<'_>,
    dilation: &Arg<'_>,
    groups: i64,
) -> TorchResult<bool> {
    let xm = meta(ctx, x)?.clone();
    let wm = meta(ctx, w)?.clone();
    if xm.dims.len() != 3 || wm.dims.len() != 3 {
        return Ok(false);
    }
    let om = out_meta(ctx, node)?;
    let (Some(s), Some(d)) = (one(stride, 1), one(dilation, 1)) else {
        return Ok(false);
    };
    let k = wm.dims[2];
    let (begin, end) = match padding {
        Arg::Str(p) if *p == "valid" => (0, 0),
        Arg::Str(p) if *p == "same" && k >= 0 => {
            let total = d * (k - 1);
            (total / 2, total - total / 2)
        }
        Arg::Str(_) => return Ok(false),
        p => match one(p, 0) {
            Some(v) => (v, v),
            None => return Ok(false),
        },
    };
    let dt = xm.dtype.unwrap_or(DataType::FLOAT);
    let x4 = [xm.dims[0], xm.dims[1], 1, xm.dims[2]];
    let w4 = [wm.dims[0], wm.dims[1], 1, wm.dims[2]];
    let xi = ctx.tensor(x)?;
    let xi = unsqueeze(ctx, xi, &x4, dt, vec![2], "x_2d")?;
    let wi = ctx.tensor(w)?;
    let wi = unsqueeze(ctx, wi, &w4, wm.dtype.unwrap_or(dt), vec![2], "filter_2d")?;
    let mut ins = vec![("x", xi), ("filter", wi)];
    if !matches!(b, Arg::None) {
        ins.push(("bias", ctx.tensor(b)?));
    }
    let y4 = [om.dims[0], om.dims[1], 1, om.dims[2]];
    let name = format!("{}/conv2d", ctx.cur_name());
    let a = attrs([
        ("strides", ints(vec![1, 1, 1, s])),
        ("pads", ints(vec![0, 0, begin, end])),
        ("dilations", ints(vec![1, 1, 1, d])),
        ("groups", AttrValue::Int(groups)),
        ("data_format", AttrValue::String("NCHW".into())),
        ("offset_x", AttrValue::Int(0)),
    ]);
    let conv = ctx.add_named(
        &name,
        ctx.cur,
        "Conv2D",
        &ins,
        &[("y", Arc::new(TensorDesc::new(&y4, dt, Format::ND)))],
        a,
    )?;
    let id = ctx.add(
        "Squeeze",
        &[("x", (conv, 0))],
        &["y"],
        attrs([("axis", ints(vec![2]))]),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// Inference batch norm of a 2-D or 3-D input (`[N, C]`, `[N, C, L]`): the input gets unit
/// trailing axes up to 4-D, `BatchNorm` runs, a `Squeeze` takes them away. `p` is `[x, w, b,
/// mean, var]`, `fill(ctx, tag, value)` makes a missing parameter.
pub(crate) fn batch_norm_low_rank(
    ctx: &mut Ctx<'_>,
    p: [&Arg<'_>; 5],
    eps: f64,
    params: [Out; 4],
) -> TorchResult<Option<Out>> {
    let m = meta(ctx, p[0])?.clone();
    let rank = m.dims.len();
    if !(2..=3).contains(&rank) {
        return Ok(None);
    }
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    let mut d4: Vec<i64> = m.dims.to_vec();
    d4.resize(4, 1);
    let axes: Vec<i64> = (rank as i64..4).collect();
    let xi = ctx.tensor(p[0])?;
    let x4 = unsqueeze(ctx, xi, &d4, dt, axes.clone(), "x_4d")?;
    let c = Arc::new(TensorDesc::new(&[m.dims[1]], DataType::FLOAT, Format::ND));
    let y4 = Arc::new(TensorDesc::new(&d4, dt, Format::ND));
    let name = format!("{}/batch_norm", ctx.cur_name());
    let bn = ctx.add_named(
        &name,
        ctx.cur,
        "BatchNorm",
        &[
            ("x", x4),
            ("scale", params[0]),
            ("offset", params[1]),
            ("mean", params[2]),
            ("variance", params[3]),
        ],
        &[
            ("y", y4),
            ("batch_mean", c.clone()),
            ("batch_variance", c.clone()),
            ("reserve_space_1", c.clone()),
            ("reserve_space_2", c),
        ],
        attrs([
            ("epsilon", AttrValue::Float(eps as f32)),
            ("data_format", AttrValue::String("NCHW".into())),
            ("is_training", AttrValue::Bool(false)),
        ]),
    )?;
    let id = ctx.add(
        "Squeeze",
        &[("x", (bn, 0))],
        &["y"],
        attrs([("axis", ints(axes))]),
    )?;
    Ok(Some((id, 0)))
}

/// A helper node of one output with `dims` of `dt`.
fn op(
    ctx: &mut Ctx<'_>,
    tag: &str,
    ty: &str,
    inputs: &[(&str, Out)],
    dims: &[i64],
    dt: DataType,
) -> TorchResult<Out> {
    let name = format!("{}/{tag}", ctx.cur_name());
    ctx.helper(&name, ty, inputs, TensorDesc::new(dims, dt, Format::ND), [])
}

/// `group_norm(x, G, w, b, eps)` / `native_group_norm(x, w, b, N, C, HxW, G, eps)`:
/// `x` as `[N, G, -1]`, normalized over the last axis (biased variance), reshaped back,
/// then `· w + b` per channel. `native` gives the `(y, mean, rstd)` tuple, the last two
/// unused by inference programs.
pub(crate) fn group_norm(ctx: &mut Ctx<'_>, node: &FxNode<'_>, native: bool) -> TorchResult<bool> {
    let x = arg(node, 0, "input").clone();
    let (groups, w, b, eps) = if native {
        (
            arg(node, 6, "group").as_int(),
            arg(node, 1, "weight").clone(),
            arg(node, 2, "bias").clone(),
            arg(node, 7, "eps").as_f64(),
        )
    } else {
        (
            arg(node, 1, "num_groups").as_int(),
            arg(node, 2, "weight").clone(),
            arg(node, 3, "bias").clone(),
            Some(arg(node, 4, "eps").as_f64().unwrap_or(1e-5)),
        )
    };
    let (Some(groups), Some(eps)) = (groups, eps) else {
        return Ok(false);
    };
    let m = meta(ctx, &x)?.clone();
    let rank = m.dims.len();
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    if rank < 2 || groups <= 0 || !crate::ops::is_float(dt) {
        return Ok(false);
    }
    let om = out_meta(ctx, node)?;
    let xi = ctx.tensor(&x)?;
    // [N, G, -1]: N is the input's (maybe symbolic) first dim.
    let n = m.dims[0];
    let items = if n >= 0 {
        vec![Arg::Int(n), Arg::Int(groups), Arg::Int(-1)]
    } else {
        vec![Arg::Int(0), Arg::Int(groups), Arg::Int(-1)]
    };
    let shape = ctx.int_list_tensor(&items, &format!("{}/group_shape", node.name))?;
    let per: i64 = if m.dims[1..].iter().all(|&d| d >= 0) {
        m.dims[1..].iter().product::<i64>() / groups
    } else {
        -1
    };
    let gd = [n, groups, per];
    let r = ctx.helper(
        &format!("{}/grouped", node.name),
        "Reshape",
        &[("x", xi), ("shape", shape)],
        TensorDesc::new(&gd, dt, Format::ND),
        [
            ("axis", AttrValue::Int(0)),
            ("num_axes", AttrValue::Int(-1)),
        ],
    )?;
    let kd = [n, groups, 1];
    let reduce = |ctx: &mut Ctx<'_>, o: Out, tag: &str| -> TorchResult<Out> {
        let name = format!("{}/{tag}", node.name);
        ctx.helper(
            &name,
            "ReduceMeanD",
            &[("x", o)],
            TensorDesc::new(&kd, dt, Format::ND),
            [
                ("axes", ints(vec![2])),
                ("keep_dims", AttrValue::Bool(true)),
            ],
        )
    };
    let mean = reduce(ctx, r, "mean")?;
    let centered = op(ctx, "centered", "Sub", &[("x1", r), ("x2", mean)], &gd, dt)?;
    let sq = op(
        ctx,
        "square",
        "Mul",
        &[("x1", centered), ("x2", centered)],
        &gd,
        dt,
    )?;
    let var = reduce(ctx, sq, "variance")?;
    let e = ctx.const_scalar(&format!("{}/epsilon", node.name), eps, dt)?;
    let ve = op(
        ctx,
        "variance_eps",
        "Add",
        &[("x1", var), ("x2", e)],
        &kd,
        dt,
    )?;
    let rstd = op(ctx, "rstd", "Rsqrt", &[("x", ve)], &kd, dt)?;
    let normed = op(
        ctx,
        "normalized",
        "Mul",
        &[("x1", centered), ("x2", rstd)],
        &gd,
        dt,
    )?;
    let src = ctx.tensor(&x)?;
    let xs = crate::index::shape_of(ctx, src, rank, "input_shape")?;
    // The affine parameters as [C, 1, …] against [N, C, …]; the last node is the FX node's.
    let affine: Vec<(Arg, &str, &str)> = [(w, "Mul", "scale"), (b, "Add", "shift")]
        .into_iter()
        .filter(|(p, _, _)| !matches!(p, Arg::None))
        .collect();
    let mut y = if affine.is_empty() {
        let id = ctx.add(
            "Reshape",
            &[("x", normed), ("shape", xs)],
            &["y"],
            attrs([
                ("axis", AttrValue::Int(0)),
                ("num_axes", AttrValue::Int(-1)),
            ]),
        )?;
        (id, 0)
    } else {
        ctx.helper(
            &format!("{}/ungrouped", node.name),
            "Reshape",
            &[("x", normed), ("shape", xs)],
            TensorDesc::new(&om.dims, dt, Format::ND),
            [
                ("axis", AttrValue::Int(0)),
                ("num_axes", AttrValue::Int(-1)),
            ],
        )?
    };
    let mut pd = vec![m.dims[1]];
    pd.resize(rank - 1, 1);
    let n_affine = affine.len();
    for (k, (p, ge, tag)) in affine.into_iter().enumerate() {
        let pi = ctx.tensor(&p)?;
        let pshape = ctx.const_i64(
            &format!("{}/{tag}_shape", node.name),
            &pd,
            &[pd.len() as i64],
        )?;
        let pr = ctx.helper(
            &format!("{}/{tag}_param", node.name),
            "Reshape",
            &[("x", pi), ("shape", pshape)],
            TensorDesc::new(&pd, dt, Format::ND),
            [
                ("axis", AttrValue::Int(0)),
                ("num_axes", AttrValue::Int(-1)),
            ],
        )?;
        y = if k + 1 == n_affine {
            (ctx.add(ge, &[("x1", y), ("x2", pr)], &["y"], attrs([]))?, 0)
        } else {
            op(ctx, tag, ge, &[("x1", y), ("x2", pr)], &om.dims, dt)?
        };
    }
    if native {
        ctx.set(Value::Tuple(vec![Some(y), None, None]));
    } else {
        ctx.set(Value::T(y));
    }
    Ok(true)
}
