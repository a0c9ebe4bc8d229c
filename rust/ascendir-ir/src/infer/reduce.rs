//! Reductions and their relatives: reduce with axes / keep_dims, ArgMax, TopK, LayerNorm.

use super::shape::{norm_axes, norm_axis, rank_unknown, unknown_dims, unknown_rank};
use super::{InferCtx, OutDesc, RuleResult};
use crate::dtype::DataType;
use crate::tensor::{Shape, UNKNOWN_DIM};

/// Reduce input `input` (default `x`) over `axes` (an input or attribute, default `axes`),
/// keeping reduced dims as 1 when the attribute `keep_dims` (default `keep_dims`) is true.
/// Empty axes reduce every dim, unless the attribute `noop_with_empty_axes` is true. Axes that
/// are not constant give unknown dims (rank known when keep_dims, or when the axes count is).
pub fn reduce(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("input", "x")?;
    let keep = ctx.attr_bool(ctx.param_or("keep_dims", "keep_dims"), false);
    let dtype = ctx.out_dtype(x)?;
    let shape = ctx.shape(x);
    let axes_name = ctx.param_or("axes", "axes");
    let axes = if ctx.has(axes_name) {
        ctx.ints(axes_name)?
    } else {
        Some(Vec::new())
    };
    if unknown_rank(shape) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let Some(axes) = axes else {
        let out = if keep {
            unknown_dims(shape.len())
        } else {
            match ctx.len_of(axes_name) {
                Some(n) if n <= shape.len() => unknown_dims(shape.len() - n),
                _ => rank_unknown(),
            }
        };
        return Ok(ctx.all_outputs(OutDesc::new(out, dtype)));
    };
    let axes: Vec<usize> = if axes.is_empty() {
        if ctx.attr_bool("noop_with_empty_axes", false) {
            return Ok(ctx.all_outputs(OutDesc::new(Shape::from_slice(shape), dtype)));
        }
        (0..shape.len()).collect()
    } else {
        norm_axes(&axes, shape.len())?
    };
    let mut out = Shape::new();
    for (i, &d) in shape.iter().enumerate() {
        if axes.contains(&i) {
            if keep {
                out.push(1);
            }
        } else {
            out.push(d);
        }
    }
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `ArgMax` / `ArgMin`: removes the axis given by `axis` (input or attribute, default
/// `dimension`); dtype from the `dtype` parameter (default the attribute `dtype`, INT32).
pub fn arg_max(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("input", "x")?;
    let dtype = match ctx.param("dtype") {
        Some(_) => ctx.out_dtype(x)?,
        None => ctx.resolve_dtype(&super::DtypeSpec::Attr("dtype".into(), DataType::INT32), x)?,
    };
    let shape = ctx.shape(x);
    if unknown_rank(shape) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let name = ctx.param_or("axis", "dimension");
    let keep = ctx.attr_bool("keep_dims", false);
    let out = match ctx.ints(name)? {
        Some(v) if !v.is_empty() => {
            let a = norm_axis(v[0], shape.len())?;
            let mut s = Shape::from_slice(shape);
            if keep {
                s[a] = 1;
            } else {
                s.remove(a);
            }
            s
        }
        _ => unknown_dims(if keep {
            shape.len()
        } else {
            shape.len().saturating_sub(1)
        }),
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `TopK` / `TopKV2`: `values` and `indices` take the input shape with the `dim` axis
/// (attribute, default -1) replaced by `k` (input or attribute `k`); indices are of the
/// attribute `indices_dtype` (GE's TopKV2; default INT32).
pub fn topk(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("input", "x")?;
    let index_dtype = ctx.resolve_dtype(
        &super::DtypeSpec::Attr("indices_dtype".into(), DataType::INT32),
        x,
    )?;
    let shape = ctx.shape(x);
    let dtype = ctx.dtype(x);
    let out = if unknown_rank(shape) {
        rank_unknown()
    } else {
        let axis = norm_axis(ctx.attr_int("dim", -1), shape.len())?;
        let k = match ctx.ints(ctx.param_or("k", "k"))? {
            Some(v) if !v.is_empty() => v[0],
            _ => UNKNOWN_DIM,
        };
        if k >= 0 && shape[axis] >= 0 && k > shape[axis] {
            return Err(format!("k = {k} exceeds dim {axis} of {shape:?}"));
        }
        let mut s = Shape::from_slice(shape);
        s[axis] = k;
        s
    };
    let mut outs = vec![OutDesc::new(out.clone(), dtype)];
    for _ in 1..ctx.op.num_outputs() {
        outs.push(OutDesc::new(out.clone(), index_dtype));
    }
    Ok(outs)
}

/// `LayerNorm`: `y` like `x`; `mean` and `variance` like `x` with the dims from
/// `begin_norm_axis` on set to 1.
pub fn layer_norm(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("input", "x")?;
    let shape = ctx.shape(x);
    let dtype = ctx.dtype(x);
    let mut outs = vec![OutDesc::new(Shape::from_slice(shape), dtype)];
    let stats = if unknown_rank(shape) {
        rank_unknown()
    } else {
        let begin = norm_axis(ctx.attr_int("begin_norm_axis", 0), shape.len())?;
        shape
            .iter()
            .enumerate()
            .map(|(i, &d)| if i >= begin { 1 } else { d })
            .collect()
    };
    for _ in 1..ctx.op.num_outputs() {
        outs.push(OutDesc::new(stats.clone(), dtype));
    }
    Ok(outs)
}
