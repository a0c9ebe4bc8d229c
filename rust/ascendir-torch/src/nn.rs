//! Neural-network ops: matmuls (2-D transposes folded into `transpose_x*`), linear,
//! convolution, batch and layer norm, pooling, softmax and scaled dot-product attention —
//! both their Core ATen forms and the forms `torch.export` gives before decomposition
//! (`linear`, `conv2d`, `batch_norm`, `layer_norm`, `softmax`, `matmul`, …).

use ascendir_ir::{AttrValue, DataType, Format, Tensor, TensorDesc};
use bytes::Bytes;

use crate::build::{scalar_bytes, Ctx, Out, Value};
use crate::ops::{arg, attrs, ints, meta, norm, operand, out_meta};
use crate::program::{Arg, FxNode};
use crate::TorchResult;

/// A matmul operand: the tensor and whether it is a folded transpose.
fn mm_operand(ctx: &mut Ctx<'_>, a: &Arg<'_>) -> TorchResult<(Out, bool)> {
    if let Some(src) = ctx.deferred_transpose(a) {
        return Ok((src, true));
    }
    Ok((ctx.tensor(a)?, false))
}

fn two(v: Option<Vec<i64>>, d: i64) -> Vec<i64> {
    match v {
        Some(v) if v.len() == 2 => v,
        Some(v) if v.len() == 1 => vec![v[0], v[0]],
        _ => vec![d, d],
    }
}

fn pool_lists(node: &FxNode<'_>, k_idx: usize) -> Option<(Vec<i64>, Vec<i64>, Vec<i64>)> {
    let k = two(Some(arg(node, k_idx, "kernel_size").as_ints()?), 1);
    let s = match arg(node, k_idx + 1, "stride").as_ints() {
        Some(s) if !s.is_empty() => two(Some(s), 1),
        _ => k.clone(),
    };
    let p = two(arg(node, k_idx + 2, "padding").as_ints(), 0);
    Some((k, s, p))
}

fn filled(
    ctx: &mut Ctx<'_>,
    name: &str,
    dims: &[i64],
    value: f64,
    dt: DataType,
) -> TorchResult<Out> {
    let one = scalar_bytes(value, dt).ok_or_else(|| ctx.unsupported("bad parameter dtype"))?;
    let mut count = 1usize;
    for &d in dims {
        let d = usize::try_from(d).map_err(|_| ctx.unsupported("a symbolic parameter size"))?;
        count = count
            .checked_mul(d)
            .ok_or_else(|| ctx.unsupported("parameter size overflows"))?;
    }
    let bytes: Vec<u8> = one
        .iter()
        .copied()
        .cycle()
        .take(one.len().saturating_mul(count))
        .collect();
    ctx.const_tensor(
        name,
        Tensor::new(TensorDesc::new(dims, dt, Format::ND), Bytes::from(bytes)),
    )
}

fn done(ctx: &mut Ctx<'_>, v: Value) -> TorchResult<bool> {
    ctx.set(v);
    Ok(true)
}

fn softmax(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    dim: i64,
    log: bool,
) -> TorchResult<bool> {
    let rank = meta(ctx, x)?.dims.len();
    let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
    let xi = operand(ctx, x, dt, "x")?;
    let (ty, port, out) = if log {
        ("LogSoftmaxV2", "logits", "logsoftmax")
    } else {
        ("SoftmaxV2", "x", "y")
    };
    let id = ctx.add(
        ty,
        &[(port, xi)],
        &[out],
        attrs([("axes", ints(vec![norm(dim, rank)]))]),
    )?;
    done(ctx, Value::T((id, 0)))
}

/// `a @ b (+ bias)`: `MatMulV2` for 2-D operands (transposes folded), else `BatchMatMulV2`.
fn matmul(
    ctx: &mut Ctx<'_>,
    a: &Arg<'_>,
    b: &Arg<'_>,
    bias: Option<&Arg>,
    b_transposed: bool,
) -> TorchResult<Out> {
    let ra = meta(ctx, a)?.dims.len();
    let rb = meta(ctx, b)?.dims.len();
    let (x1, t1) = mm_operand(ctx, a)?;
    let (x2, t2) = if b_transposed {
        (ctx.tensor(b)?, true)
    } else {
        mm_operand(ctx, b)?
    };
    let mut ins = vec![("x1", x1), ("x2", x2)];
    if let Some(bias) = bias {
        ins.push(("bias", ctx.tensor(bias)?));
    }
    let id = if ra == 2 && rb == 2 {
        ctx.add(
            "MatMulV2",
            &ins,
            &["y"],
            attrs([
                ("transpose_x1", AttrValue::Bool(t1)),
                ("transpose_x2", AttrValue::Bool(t2)),
                ("offset_x", AttrValue::Int(0)),
            ]),
        )?
    } else {
        // A folded 2-D transpose is a transpose of the last two dims here as well.
        ctx.add(
            "BatchMatMulV2",
            &ins,
            &["y"],
            attrs([
                ("adj_x1", AttrValue::Bool(t1)),
                ("adj_x2", AttrValue::Bool(t2)),
                ("offset_x", AttrValue::Int(0)),
            ]),
        )?
    };
    Ok((id, 0))
}

#[allow(clippy::too_many_arguments)]
fn conv2d(
    ctx: &mut Ctx<'_>,
    x: &Arg<'_>,
    w: &Arg<'_>,
    b: &Arg<'_>,
    stride: &Arg<'_>,
    padding: &Arg<'_>,
    dilation: &Arg<'_>,
    groups: i64,
) -> TorchResult<bool> {
    if meta(ctx, x)?.dims.len() != 4 {
        return Ok(false);
    }
    let p = match padding {
        Arg::Str(s) if *s == "valid" => vec![0, 0],
        Arg::Str(_) => return Ok(false),
        p => two(p.as_ints(), 0),
    };
    let s = two(stride.as_ints(), 1);
    let d = two(dilation.as_ints(), 1);
    let xi = ctx.tensor(x)?;
    let wi = ctx.tensor(w)?;
    let mut ins = vec![("x", xi), ("filter", wi)];
    if !matches!(b, Arg::None) {
        ins.push(("bias", ctx.tensor(b)?));
    }
    let id = ctx.add(
        "Conv2D",
        &ins,
        &["y"],
        attrs([
            ("strides", ints(vec![1, 1, s[0], s[1]])),
            ("pads", ints(vec![p[0], p[0], p[1], p[1]])),
            ("dilations", ints(vec![1, 1, d[0], d[1]])),
            ("groups", AttrValue::Int(groups)),
            ("data_format", AttrValue::String("NCHW".into())),
            ("offset_x", AttrValue::Int(0)),
        ]),
    )?;
    done(ctx, Value::T((id, 0)))
}

/// Inference batch norm (`[x, w, b, mean, var]` FX arguments) → `BatchNorm`'s `y`.
fn batch_norm(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    p: [&Arg<'_>; 5],
    eps: f64,
) -> TorchResult<Option<Out>> {
    let m = meta(ctx, p[0])?.clone();
    let rank = m.dims.len();
    if !(2..=4).contains(&rank) || m.dims[1] < 0 {
        return Ok(None);
    }
    let c = m.dims[1];
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    let param = |ctx: &mut Ctx<'_>, a: &Arg<'_>, fill: f64, tag: &str| -> TorchResult<Out> {
        match a {
            Arg::None => filled(ctx, &format!("{}/{tag}", node.name), &[c], fill, dt),
            a => ctx.tensor(a),
        }
    };
    let scale = param(ctx, p[1], 1.0, "scale")?;
    let offset = param(ctx, p[2], 0.0, "offset")?;
    let mean = param(ctx, p[3], 0.0, "mean")?;
    let var = param(ctx, p[4], 1.0, "variance")?;
    if rank < 4 {
        return crate::unit_axis::batch_norm_low_rank(ctx, p, eps, [scale, offset, mean, var]);
    }
    let xi = ctx.tensor(p[0])?;
    let id = ctx.add(
        "BatchNorm",
        &[
            ("x", xi),
            ("scale", scale),
            ("offset", offset),
            ("mean", mean),
            ("variance", var),
        ],
        &[
            "y",
            "batch_mean",
            "batch_variance",
            "reserve_space_1",
            "reserve_space_2",
        ],
        attrs([
            ("epsilon", AttrValue::Float(eps as f32)),
            ("data_format", AttrValue::String("NCHW".into())),
            ("is_training", AttrValue::Bool(false)),
        ]),
    )?;
    Ok(Some((id, 0)))
}

/// Layer norm over the trailing `shape` → `LayerNorm`'s `y`.
fn layer_norm(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    shape: &Arg<'_>,
    w: &Arg<'_>,
    b: &Arg<'_>,
    eps: f64,
) -> TorchResult<Option<Out>> {
    let m = meta(ctx, x)?.clone();
    let Some(shape) = shape.as_ints() else {
        return Ok(None);
    };
    let rank = m.dims.len();
    if shape.len() > rank || shape.is_empty() {
        return Ok(None);
    }
    let axis = (rank - shape.len()) as i64;
    let dt = m.dtype.unwrap_or(DataType::FLOAT);
    let xi = ctx.tensor(x)?;
    let param = |ctx: &mut Ctx<'_>, a: &Arg<'_>, fill: f64, tag: &str| -> TorchResult<Out> {
        match a {
            Arg::None => filled(ctx, &format!("{}/{tag}", node.name), &shape, fill, dt),
            a => ctx.tensor(a),
        }
    };
    let gamma = param(ctx, w, 1.0, "gamma")?;
    let beta = param(ctx, b, 0.0, "beta")?;
    let id = ctx.add(
        "LayerNorm",
        &[("x", xi), ("gamma", gamma), ("beta", beta)],
        &["y", "mean", "variance"],
        attrs([
            ("begin_norm_axis", AttrValue::Int(axis)),
            ("begin_params_axis", AttrValue::Int(axis)),
            ("epsilon", AttrValue::Float(eps as f32)),
        ]),
    )?;
    Ok(Some((id, 0)))
}

fn pool(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    x: &Arg<'_>,
    max: bool,
    tuple: bool,
) -> TorchResult<bool> {
    if meta(ctx, x)?.dims.len() != 4 {
        return Ok(false);
    }
    let Some((k, s, p)) = pool_lists(node, 1) else {
        return Ok(false);
    };
    let mut a = attrs([
        ("ksize", ints(vec![1, 1, k[0], k[1]])),
        ("strides", ints(vec![1, 1, s[0], s[1]])),
        ("padding_mode", AttrValue::String("CALCULATED".into())),
        ("pads", ints(vec![p[0], p[0], p[1], p[1]])),
        ("data_format", AttrValue::String("NCHW".into())),
        ("global_pooling", AttrValue::Bool(false)),
    ]);
    if max {
        let d = arg(node, 4, "dilation")
            .as_ints()
            .unwrap_or_else(|| vec![1]);
        if d.iter().any(|&v| v != 1) {
            return Ok(false);
        }
        let ceil = arg(node, 5, "ceil_mode").as_int().unwrap_or(0) != 0;
        a.insert("ceil_mode", AttrValue::Bool(ceil));
    } else {
        if !matches!(arg(node, 6, "divisor_override"), Arg::None) {
            return Ok(false);
        }
        let include = arg(node, 5, "count_include_pad").as_int().unwrap_or(1) != 0;
        a.insert(
            "ceil_mode",
            AttrValue::Bool(arg(node, 4, "ceil_mode").as_int().unwrap_or(0) != 0),
        );
        a.insert("exclusive", AttrValue::Bool(!include));
    }
    let xi = ctx.tensor(x)?;
    let id = ctx.add(
        if max { "MaxPoolV3" } else { "AvgPoolV2" },
        &[("x", xi)],
        &["y"],
        a,
    )?;
    let v = if tuple {
        Value::Tuple(vec![Some((id, 0)), None])
    } else {
        Value::T((id, 0))
    };
    done(ctx, v)
}

fn adaptive_avg_pool(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let m = meta(ctx, x)?.clone();
    let Some(os) = arg(node, 1, "output_size").as_ints() else {
        return Ok(false);
    };
    let os = two(Some(os), 1);
    if m.dims.len() != 4 {
        return Ok(false);
    }
    let xi = ctx.tensor(x)?;
    let id = if os == [1, 1] {
        ctx.add(
            "ReduceMeanD",
            &[("x", xi)],
            &["y"],
            attrs([
                ("axes", ints(vec![2, 3])),
                ("keep_dims", AttrValue::Bool(true)),
            ]),
        )?
    } else {
        let (h, w) = (m.dims[2], m.dims[3]);
        if h < 0 || w < 0 || os[0] <= 0 || os[1] <= 0 || h % os[0] != 0 || w % os[1] != 0 {
            return Ok(false);
        }
        let (kh, kw) = (h / os[0], w / os[1]);
        ctx.add(
            "AvgPoolV2",
            &[("x", xi)],
            &["y"],
            attrs([
                ("ksize", ints(vec![1, 1, kh, kw])),
                ("strides", ints(vec![1, 1, kh, kw])),
                ("padding_mode", AttrValue::String("CALCULATED".into())),
                ("pads", ints(vec![0, 0, 0, 0])),
                ("data_format", AttrValue::String("NCHW".into())),
                ("global_pooling", AttrValue::Bool(false)),
                ("ceil_mode", AttrValue::Bool(false)),
                ("exclusive", AttrValue::Bool(true)),
            ]),
        )?
    };
    done(ctx, Value::T((id, 0)))
}

/// Half the lowest finite value of a float dtype.
fn half_lowest(dt: DataType) -> f64 {
    let lowest = match dt {
        DataType::FLOAT16 => f64::from(half::f16::MIN),
        DataType::BF16 => f64::from(half::bf16::MIN),
        DataType::DOUBLE => f64::MIN,
        _ => f64::from(f32::MIN),
    };
    lowest / 2.0
}

/// `softmax(q kᵀ · scale + mask) v` from `BatchMatMulV2`, `Mul`, `Add` / `SelectV2` and
/// `SoftmaxV2` (no dropout; a causal mask needs static sequence lengths).
fn attention(ctx: &mut Ctx<'_>, node: &FxNode<'_>) -> TorchResult<bool> {
    let (q, k, v) = (
        arg(node, 0, "query"),
        arg(node, 1, "key"),
        arg(node, 2, "value"),
    );
    let mask = arg(node, 3, "attn_mask").clone();
    if arg(node, 4, "dropout_p").as_f64().unwrap_or(0.0) != 0.0
        || arg(node, 7, "enable_gqa").as_int().unwrap_or(0) != 0
    {
        return Ok(false);
    }
    let causal = arg(node, 5, "is_causal").as_int().unwrap_or(0) != 0;
    let qm = meta(ctx, q)?.clone();
    let km = meta(ctx, k)?.clone();
    let dt = qm.dtype.unwrap_or(DataType::FLOAT);
    let Some(&e) = qm.dims.last().filter(|&&e| e > 0) else {
        return Ok(false);
    };
    let scale = match arg(node, 6, "scale") {
        Arg::None => 1.0 / (e as f64).sqrt(),
        a => match a.as_f64() {
            Some(s) => s,
            None => return Ok(false),
        },
    };
    let (lq, lk) = (qm.dims[qm.dims.len() - 2], km.dims[km.dims.len() - 2]);
    if causal && (lq < 0 || lk < 0 || !matches!(mask, Arg::None)) {
        return Ok(false);
    }
    let mut sdims = qm.dims.clone();
    if let Some(last) = sdims.last_mut() {
        *last = lk;
    }
    let sdesc = || TensorDesc::new(&sdims, dt, Format::ND);
    let name = node.name;
    let qi = ctx.tensor(q)?;
    let ki = ctx.tensor(k)?;
    let vi = ctx.tensor(v)?;
    let bmm = [
        ("adj_x1", AttrValue::Bool(false)),
        ("adj_x2", AttrValue::Bool(true)),
        ("offset_x", AttrValue::Int(0)),
    ];
    let s = ctx.helper(
        &format!("{name}/scores"),
        "BatchMatMulV2",
        &[("x1", qi), ("x2", ki)],
        sdesc(),
        bmm,
    )?;
    let c = ctx.const_scalar(&format!("{name}/scale"), scale, dt)?;
    let mut s = ctx.helper(
        &format!("{name}/scaled"),
        "Mul",
        &[("x1", s), ("x2", c)],
        sdesc(),
        [],
    )?;
    let mask_meta = ctx.meta_of(&mask);
    // torch computes SDPA's softmax "safely": a row whose masked scores are all -inf gives
    // probabilities 0 (so an output row of 0), not NaN. `keep_rows` is the row test of that
    // rule, applied to the probabilities below.
    let mut keep_rows = None;
    if causal {
        let keep: Vec<u8> = (0..lq)
            .flat_map(|i| (0..lk).map(move |j| u8::from(j <= i)))
            .collect();
        let t = Tensor::new(
            TensorDesc::new(&[lq, lk], DataType::BOOL, Format::ND),
            Bytes::from(keep),
        );
        let m = ctx.const_tensor(&format!("{name}/causal"), t)?;
        // Every causal row keeps its first key, so no row is fully masked: a fill of half the
        // dtype's lowest value gives softmax exactly torch's probabilities (the masked
        // exponents underflow to 0 either way), and it is the form the compiler's attention
        // pass turns into FlashAttentionScore (whose atten_mask means the same).
        let ninf = ctx.const_scalar(&format!("{name}/fill"), half_lowest(dt), dt)?;
        s = ctx.helper(
            &format!("{name}/masked"),
            "SelectV2",
            &[("condition", m), ("x1", s), ("x2", ninf)],
            sdesc(),
            [],
        )?;
    } else if let Some(mm) = mask_meta {
        let m = ctx.tensor(&mask)?;
        // The rows with a kept score (the scores are finite): for a bool mask, the rows of the
        // mask with a true entry; for an additive one, the rows of the mask with an entry
        // above -inf.
        let (row_src, row_dims) = if mm.dtype == Some(DataType::BOOL) {
            let ninf = ctx.const_scalar(&format!("{name}/ninf"), f64::NEG_INFINITY, dt)?;
            s = ctx.helper(
                &format!("{name}/masked"),
                "SelectV2",
                &[("condition", m), ("x1", s), ("x2", ninf)],
                sdesc(),
                [],
            )?;
            (m, mm.dims.clone())
        } else {
            let m = ctx.cast(m, mm.dtype.unwrap_or(dt), dt, &mm.dims)?;
            s = ctx.helper(
                &format!("{name}/masked"),
                "Add",
                &[("x1", s), ("x2", m)],
                sdesc(),
                [],
            )?;
            let ninf = ctx.const_scalar(&format!("{name}/ninf"), f64::NEG_INFINITY, dt)?;
            let live = ctx.helper(
                &format!("{name}/live"),
                "NotEqual",
                &[("x1", m), ("x2", ninf)],
                TensorDesc::new(&mm.dims, DataType::BOOL, Format::ND),
                [],
            )?;
            (live, mm.dims.clone())
        };
        let mut rdims = row_dims;
        if let Some(last) = rdims.last_mut() {
            *last = 1;
        }
        keep_rows = Some(ctx.helper(
            &format!("{name}/kept_rows"),
            "ReduceAnyD",
            &[("x", row_src)],
            TensorDesc::new(&rdims, DataType::BOOL, Format::ND),
            [
                ("axes", ints(vec![-1])),
                ("keep_dims", AttrValue::Bool(true)),
            ],
        )?);
    }
    let mut p = ctx.helper(
        &format!("{name}/probs"),
        "SoftmaxV2",
        &[("x", s)],
        sdesc(),
        [("axes", ints(vec![-1]))],
    )?;
    if let Some(rows) = keep_rows {
        let zero = ctx.const_scalar(&format!("{name}/zero"), 0.0, dt)?;
        p = ctx.helper(
            &format!("{name}/safe_probs"),
            "SelectV2",
            &[("condition", rows), ("x1", p), ("x2", zero)],
            sdesc(),
            [],
        )?;
    }
    let id = ctx.add(
        "BatchMatMulV2",
        &[("x1", p), ("x2", vi)],
        &["y"],
        attrs([
            ("adj_x1", AttrValue::Bool(false)),
            ("adj_x2", AttrValue::Bool(false)),
            ("offset_x", AttrValue::Int(0)),
        ]),
    )?;
    done(ctx, Value::T((id, 0)))
}

/// Map a neural-network op; `None` when `op` is none of them.
pub(crate) fn map(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    op: &str,
    _overload: &str,
    x: &Arg<'_>,
) -> TorchResult<Option<bool>> {
    let r = match op {
        "_softmax" | "_log_softmax" => softmax(
            ctx,
            node,
            x,
            arg(node, 1, "dim").as_int().unwrap_or(-1),
            op == "_log_softmax",
        )?,
        "softmax" | "log_softmax" => {
            // With `dtype` the input is cast to it first: `softmax` computes in the output
            // dtype, which is `dtype`.
            softmax(
                ctx,
                node,
                x,
                arg(node, 1, "dim").as_int().unwrap_or(-1),
                op == "log_softmax",
            )?
        }
        "mm" | "bmm" | "matmul" => {
            let b = arg(node, 1, "other").clone();
            let (ra, rb) = (meta(ctx, x)?.dims.len(), meta(ctx, &b)?.dims.len());
            if ra < 2 || rb < 2 {
                return Ok(Some(false));
            }
            let o = matmul(ctx, x, &b, None, false)?;
            done(ctx, Value::T(o))?
        }
        "addmm" => {
            let beta = node.kwarg("beta").and_then(Arg::as_f64).unwrap_or(1.0);
            let alpha = node.kwarg("alpha").and_then(Arg::as_f64).unwrap_or(1.0);
            if beta != 1.0 || alpha != 1.0 {
                return Ok(Some(false));
            }
            let (a, b) = (arg(node, 1, "mat1").clone(), arg(node, 2, "mat2").clone());
            let o = matmul(ctx, &a, &b, Some(x), false)?;
            done(ctx, Value::T(o))?
        }
        "linear" => {
            let (w, b) = (arg(node, 1, "weight").clone(), arg(node, 2, "bias").clone());
            if meta(ctx, x)?.dims.len() < 2 || meta(ctx, &w)?.dims.len() != 2 {
                return Ok(Some(false));
            }
            let bias = (!matches!(b, Arg::None)).then_some(&b);
            let o = matmul(ctx, x, &w, bias, true)?;
            done(ctx, Value::T(o))?
        }
        "convolution" => {
            if arg(node, 6, "transposed").as_int().unwrap_or(0) != 0 {
                return Ok(Some(false));
            }
            let groups = arg(node, 8, "groups").as_int().unwrap_or(1);
            if meta(ctx, x)?.dims.len() == 3 {
                return Ok(Some(crate::unit_axis::conv1d(
                    ctx,
                    node,
                    x,
                    arg(node, 1, "weight"),
                    arg(node, 2, "bias"),
                    arg(node, 3, "stride"),
                    arg(node, 4, "padding"),
                    arg(node, 5, "dilation"),
                    groups,
                )?));
            }
            conv2d(
                ctx,
                x,
                arg(node, 1, "weight"),
                arg(node, 2, "bias"),
                arg(node, 3, "stride"),
                arg(node, 4, "padding"),
                arg(node, 5, "dilation"),
                groups,
            )?
        }
        "conv1d" => {
            let groups = arg(node, 6, "groups").as_int().unwrap_or(1);
            crate::unit_axis::conv1d(
                ctx,
                node,
                x,
                arg(node, 1, "weight"),
                arg(node, 2, "bias"),
                arg(node, 3, "stride"),
                arg(node, 4, "padding"),
                arg(node, 5, "dilation"),
                groups,
            )?
        }
        "native_group_norm" => crate::unit_axis::group_norm(ctx, node, true)?,
        "group_norm" => crate::unit_axis::group_norm(ctx, node, false)?,
        "conv2d" => {
            let groups = arg(node, 6, "groups").as_int().unwrap_or(1);
            conv2d(
                ctx,
                x,
                arg(node, 1, "weight"),
                arg(node, 2, "bias"),
                arg(node, 3, "stride"),
                arg(node, 4, "padding"),
                arg(node, 5, "dilation"),
                groups,
            )?
        }
        "_native_batch_norm_legit_no_training" => {
            let p = [
                x,
                arg(node, 1, "weight"),
                arg(node, 2, "bias"),
                arg(node, 3, "running_mean"),
                arg(node, 4, "running_var"),
            ];
            let eps = arg(node, 6, "eps").as_f64().unwrap_or(1e-5);
            match batch_norm(ctx, node, p, eps)? {
                Some(o) => done(ctx, Value::Tuple(vec![Some(o), None, None]))?,
                None => false,
            }
        }
        "batch_norm" => {
            if arg(node, 5, "training").as_int().unwrap_or(0) != 0 {
                return Ok(Some(false));
            }
            let p = [
                x,
                arg(node, 1, "weight"),
                arg(node, 2, "bias"),
                arg(node, 3, "running_mean"),
                arg(node, 4, "running_var"),
            ];
            let eps = arg(node, 7, "eps").as_f64().unwrap_or(1e-5);
            match batch_norm(ctx, node, p, eps)? {
                Some(o) => done(ctx, Value::T(o))?,
                None => false,
            }
        }
        "native_layer_norm" | "layer_norm" => {
            let eps = arg(node, 4, "eps").as_f64().unwrap_or(1e-5);
            let o = layer_norm(
                ctx,
                node,
                x,
                arg(node, 1, "normalized_shape"),
                arg(node, 2, "weight"),
                arg(node, 3, "bias"),
                eps,
            )?;
            match (o, op) {
                (Some(o), "layer_norm") => done(ctx, Value::T(o))?,
                (Some(o), _) => done(ctx, Value::Tuple(vec![Some(o), None, None]))?,
                (None, _) => false,
            }
        }
        "max_pool2d_with_indices" => pool(ctx, node, x, true, true)?,
        "max_pool2d" => pool(ctx, node, x, true, false)?,
        "avg_pool2d" => pool(ctx, node, x, false, false)?,
        "_adaptive_avg_pool2d" | "adaptive_avg_pool2d" => adaptive_avg_pool(ctx, node, x)?,
        "scaled_dot_product_attention" => attention(ctx, node)?,
        _ => return Ok(None),
    };
    Ok(Some(r))
}
