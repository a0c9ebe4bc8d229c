//! Convolution and pooling: Conv2D (pads / SAME / VALID, strides, dilations, groups),
//! Conv2DBackpropInput, TF-style MaxPool / AvgPool, Caffe-style Pooling.

use super::shape::{rank_unknown, unknown_dims, unknown_rank};
use super::{InferCtx, OutDesc, RuleResult};
use crate::dtype::DataType;
use crate::format::Format;
use crate::tensor::{Shape, UNKNOWN_DIM};

/// Positions (N, C, H, W) of a 4-D layout.
#[derive(Clone, Copy, Debug)]
struct Layout {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
}

const NCHW: Layout = Layout {
    n: 0,
    c: 1,
    h: 2,
    w: 3,
};
const NHWC: Layout = Layout {
    n: 0,
    c: 3,
    h: 1,
    w: 2,
};
const HWCN: Layout = Layout {
    n: 3,
    c: 2,
    h: 0,
    w: 1,
};
const CHWN: Layout = Layout {
    n: 3,
    c: 0,
    h: 1,
    w: 2,
};

fn layout_of(format: Format) -> Option<Layout> {
    match format {
        Format::NCHW => Some(NCHW),
        Format::NHWC => Some(NHWC),
        Format::HWCN => Some(HWCN),
        Format::CHWN => Some(CHWN),
        _ => None,
    }
}

/// The layout of the data input: its (logical) format, else the `data_format` attribute.
fn data_layout(ctx: &InferCtx<'_>, x: usize) -> Layout {
    layout_of(ctx.format(x)).unwrap_or_else(|| {
        if ctx.attr_str("data_format", "NCHW") == "NHWC" {
            NHWC
        } else {
            NCHW
        }
    })
}

/// A 4-element attribute indexed by the data layout's H and W positions (a 2-element one is
/// `[h, w]`); `default` when absent.
fn hw_attr(ctx: &InferCtx<'_>, name: &str, l: Layout, default: i64) -> Result<(i64, i64), String> {
    match ctx.attr_ints(name) {
        None => Ok((default, default)),
        Some(v) if v.len() == 4 => Ok((v[l.h], v[l.w])),
        Some(v) if v.len() == 2 => Ok((v[0], v[1])),
        Some(v) if v.len() == 1 => Ok((v[0], v[0])),
        Some(v) => Err(format!(
            "attribute '{name}' must have 4 (or 2) values, got {v:?}"
        )),
    }
}

/// How a window count with explicit pads rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    Floor,
    /// Up, keeping every window (Caffe clips its own way).
    Ceil,
    /// Up, but a last window that would start in the end padding is dropped.
    CeilInside,
}

/// Output size of one spatial dim. `pads` = (before, after); `mode` SAME / VALID / explicit.
fn window_out(
    input: i64,
    k: i64,
    stride: i64,
    dilation: i64,
    pads: (i64, i64),
    mode: &str,
    rounding: Rounding,
) -> Result<i64, String> {
    if stride <= 0 || dilation <= 0 {
        return Err(format!(
            "strides and dilations must be positive, got {stride} and {dilation}"
        ));
    }
    if input < 0 || k < 0 {
        return Ok(UNKNOWN_DIM);
    }
    let overflow = || super::engine::overflow_message("the window or padded input size");
    let dk = dilation
        .checked_mul(k.saturating_sub(1))
        .and_then(|v| v.checked_add(1))
        .ok_or_else(overflow)?;
    let out = match mode {
        // GE's SAME pads at the end, SAME_LOWER (ONNX's) at the start: the size is the same.
        "SAME" | "SAME_UPPER" | "SAME_LOWER" => {
            input.checked_add(stride - 1).ok_or_else(overflow)? / stride
        }
        "VALID" => {
            if input < dk {
                return Err(format!(
                    "input size {input} is smaller than the window {dk}"
                ));
            }
            (input - dk).checked_add(stride).ok_or_else(overflow)? / stride
        }
        _ => {
            if pads.0 < 0 || pads.1 < 0 {
                return Err(format!("pads must not be negative, got {pads:?}"));
            }
            let padded = input
                .checked_add(pads.0)
                .and_then(|v| v.checked_add(pads.1))
                .ok_or_else(overflow)?;
            let span = padded - dk;
            if span < 0 {
                return Err(format!(
                    "window {dk} is larger than the padded input {}",
                    padded
                ));
            }
            if rounding != Rounding::Floor {
                let out = span.checked_add(stride - 1).ok_or_else(overflow)? / stride + 1;
                // A last window that would start in the end padding is dropped (ONNX,
                // PyTorch and GE's MaxPoolV3 / AvgPoolV2 agree; Caffe only with padding).
                if rounding == Rounding::CeilInside
                    && (out - 1).saturating_mul(stride) >= input.saturating_add(pads.0)
                {
                    out - 1
                } else {
                    out
                }
            } else {
                span / stride + 1
            }
        }
    };
    Ok(out)
}

/// `Conv2D`: inputs `x` and `filter`, attributes `strides`, `pads` (top, bottom, left,
/// right), `dilations`, `groups`, `data_format` and optional `padding` (SAME / VALID).
/// Positions of H and W follow the data format; int8 data gives int32 output.
pub fn conv(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let f = ctx.input_param("filter", "filter")?;
    let dt = ctx.dtype(x);
    let dtype = if ctx.param("dtype").is_some() {
        ctx.out_dtype(x)?
    } else if matches!(dt, DataType::INT8 | DataType::UINT8 | DataType::INT4) {
        DataType::INT32
    } else {
        dt
    };
    let (xs, fs) = (ctx.shape(x), ctx.shape(f));
    let l = data_layout(ctx, x);
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    if xs.len() != 4 {
        return Err(format!("x must be 4-D, got {xs:?}"));
    }
    let fl = layout_of(ctx.format(f)).unwrap_or(if matches!(ctx.format(x), Format::NHWC) {
        HWCN
    } else {
        l
    });
    let (kh, kw, cout, cin_f) = if unknown_rank(fs) {
        (UNKNOWN_DIM, UNKNOWN_DIM, UNKNOWN_DIM, UNKNOWN_DIM)
    } else if fs.len() != 4 {
        return Err(format!("filter must be 4-D, got {fs:?}"));
    } else {
        (fs[fl.h], fs[fl.w], fs[fl.n], fs[fl.c])
    };
    let groups = ctx.attr_int("groups", 1).max(1);
    let cin = xs[l.c];
    if cin >= 0 && cin_f >= 0 && cin != cin_f * groups {
        return Err(format!(
            "x has {cin} channels but the filter expects {cin_f} x {groups} groups (x {xs:?}, filter {fs:?})"
        ));
    }
    let (sh, sw) = hw_attr(ctx, "strides", l, 1)?;
    let (dh, dw) = hw_attr(ctx, "dilations", l, 1)?;
    let pads = ctx.attr_ints("pads").unwrap_or_else(|| vec![0, 0, 0, 0]);
    if pads.len() != 4 {
        return Err(format!("attribute 'pads' must have 4 values, got {pads:?}"));
    }
    let mode = ctx.attr_str("padding", "");
    let window = |input, k, s, d, p| window_out(input, k, s, d, p, mode, Rounding::Floor);
    let oh = window(xs[l.h], kh, sh, dh, (pads[0], pads[1]))?;
    let ow = window(xs[l.w], kw, sw, dw, (pads[2], pads[3]))?;
    let mut out = Shape::from_elem(0, 4);
    out[l.n] = xs[l.n];
    out[l.c] = cout;
    out[l.h] = oh;
    out[l.w] = ow;
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Conv2DBackpropInput`: the output shape is the value of `input_size` (input or attribute).
pub fn conv_backprop_input(ctx: &InferCtx<'_>) -> RuleResult {
    let grad = ctx.input_param("x", "out_backprop")?;
    let dtype = ctx.out_dtype(grad)?;
    let out = match ctx.ints_param("input_size", "input_size")? {
        Some(v) => {
            if v.len() != 4 {
                return Err(format!("input_size must have 4 values, got {v:?}"));
            }
            Shape::from_vec(v)
        }
        None => unknown_dims(4),
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// TF-style `MaxPool` / `AvgPool` (and V3 with explicit pads): `ksize` and `strides` indexed
/// by the data format, `padding` SAME / VALID / CALCULATED with `pads`, `dilations`,
/// `ceil_mode` (a last window starting in the end padding is dropped), `global_pooling`.
pub fn pool(ctx: &InferCtx<'_>) -> RuleResult {
    pool_rule(ctx, |l, h, w| {
        let (kh, kw) = hw_attr(ctx, "ksize", *l, 1)?;
        let (sh, sw) = hw_attr(ctx, "strides", *l, 1)?;
        let mode = ctx
            .attr_str("padding", ctx.attr_str("padding_mode", "VALID"))
            .to_string();
        let pads = ctx.attr_ints("pads").unwrap_or_else(|| vec![0, 0, 0, 0]);
        if pads.len() != 4 {
            return Err(format!("attribute 'pads' must have 4 values, got {pads:?}"));
        }
        let ceil = if ctx.attr_bool("ceil_mode", false) {
            Rounding::CeilInside
        } else {
            Rounding::Floor
        };
        let (dh, dw) = hw_attr(ctx, "dilations", *l, 1)?;
        Ok((
            window_out(h, kh, sh, dh, (pads[0], pads[1]), &mode, ceil)?,
            window_out(w, kw, sw, dw, (pads[2], pads[3]), &mode, ceil)?,
        ))
    })
}

/// Caffe-style `Pooling`: `window` [h, w], `stride` [h, w], `pad` [top, bottom, left,
/// right], `ceil_mode` (0 = ceil, 1 = floor), `global_pooling`; a last window that starts in
/// the padding is dropped, as Caffe does.
pub fn caffe_pool(ctx: &InferCtx<'_>) -> RuleResult {
    pool_rule(ctx, |_, h, w| {
        let two = |name: &str, default: i64| -> Result<(i64, i64), String> {
            match ctx.attr_ints(name) {
                None => Ok((default, default)),
                Some(v) if v.len() == 2 => Ok((v[0], v[1])),
                Some(v) if v.len() == 1 => Ok((v[0], v[0])),
                Some(v) => Err(format!("attribute '{name}' must have 2 values, got {v:?}")),
            }
        };
        let (kh, kw) = two("window", 1)?;
        let (sh, sw) = two("stride", 1)?;
        let pad = ctx.attr_ints("pad").unwrap_or_else(|| vec![0, 0, 0, 0]);
        let pad = match pad.len() {
            4 => pad,
            2 => vec![pad[0], pad[0], pad[1], pad[1]],
            _ => return Err(format!("attribute 'pad' must have 4 values, got {pad:?}")),
        };
        let ceil = if ctx.attr_int("ceil_mode", 0) == 0 {
            Rounding::Ceil
        } else {
            Rounding::Floor
        };
        let axis = |input: i64, k: i64, s: i64, (p0, p1): (i64, i64)| {
            let mut o = window_out(input, k, s, 1, (p0, p1), "", ceil)?;
            if o > 0 && (p0 > 0 || p1 > 0) && (o - 1).saturating_mul(s) >= input.saturating_add(p0)
            {
                o -= 1;
            }
            Ok::<i64, String>(o)
        };
        Ok((
            axis(h, kh, sh, (pad[0], pad[1]))?,
            axis(w, kw, sw, (pad[2], pad[3]))?,
        ))
    })
}

/// The frame both pooling rules share: `x` 4-D in its data layout, H and W replaced by 1 with
/// `global_pooling`, else by `spatial(layout, h, w)`; the other dims are kept.
fn pool_rule(
    ctx: &InferCtx<'_>,
    spatial: impl FnOnce(&Layout, i64, i64) -> Result<(i64, i64), String>,
) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let xs = ctx.shape(x);
    let dtype = ctx.out_dtype(x)?;
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    if xs.len() != 4 {
        return Err(format!("x must be 4-D, got {xs:?}"));
    }
    let l = data_layout(ctx, x);
    let mut out = Shape::from_slice(xs);
    (out[l.h], out[l.w]) = if ctx.attr_bool("global_pooling", false) {
        (1, 1)
    } else {
        spatial(&l, xs[l.h], xs[l.w])?
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `GlobalAveragePool` / `GlobalMaxPool` (ONNX layout): `x[..2]` followed by 1s.
pub fn global_pool(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let xs = ctx.shape(x);
    let dtype = ctx.out_dtype(x)?;
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    if xs.len() < 3 {
        return Err(format!("x must have rank >= 3, got {xs:?}"));
    }
    let out: Shape = xs
        .iter()
        .enumerate()
        .map(|(i, &d)| if i < 2 { d } else { 1 })
        .collect();
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}
