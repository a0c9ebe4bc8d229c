//! Shape queries and generators: Shape, Size, Fill, Range; TransData; control flow without
//! subgraphs at hand.

use super::shape::{rank_unknown, tensor_f64, unknown_rank};
use super::{logical_format, logical_shape, InferCtx, OutDesc, RuleResult};
use crate::dtype::DataType;
use crate::format::Format;
use crate::tensor::{Shape, UNKNOWN_DIM};

/// `Shape`: a 1-D tensor of the input rank; dtype from the `dtype` attribute (INT32 default).
pub fn shape_of(ctx: &InferCtx<'_>) -> RuleResult {
    let dtype = ctx.resolve_dtype(&super::DtypeSpec::Attr("dtype".into(), DataType::INT32), 0)?;
    let mut outs = Vec::new();
    for i in 0..ctx.op.num_outputs().min(ctx.op.num_inputs()) {
        let xs = ctx.shape(i);
        let n = if unknown_rank(xs) {
            UNKNOWN_DIM
        } else {
            let (start, end) = shape_range(ctx.op, xs.len());
            (end - start) as i64
        };
        outs.push(OutDesc::new(Shape::from_slice(&[n]), dtype));
    }
    Ok(outs)
}

/// The dims `[start, end)` that `Shape` gives of a rank-`rank` input, from ONNX's optional
/// `start` / `end` attributes of `op` (negative values count from the back; both are clamped to
/// `[0, rank]`; an empty range when `end` < `start`).
pub(super) fn shape_range(op: &crate::op_desc::OpDesc, rank: usize) -> (usize, usize) {
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    let clamp = |key: &str, default: i64| {
        let v = op
            .attr(key)
            .and_then(crate::attr::AttrValue::as_int)
            .unwrap_or(default);
        let v = if v < 0 { v.saturating_add(r) } else { v };
        usize::try_from(v.clamp(0, r)).unwrap_or(0)
    };
    let (start, end) = (clamp("start", 0), clamp("end", r));
    (start, end.max(start))
}

/// `Size`: a scalar; dtype from the `dtype` attribute (INT32 default).
pub fn size(ctx: &InferCtx<'_>) -> RuleResult {
    let dtype = ctx.resolve_dtype(&super::DtypeSpec::Attr("dtype".into(), DataType::INT32), 0)?;
    Ok(ctx.all_outputs(OutDesc::new(Shape::new(), dtype)))
}

/// `Fill`: the shape is the value of `dims`, the dtype that of `value`.
pub fn fill(ctx: &InferCtx<'_>) -> RuleResult {
    let v = ctx.input_param("value", "value")?;
    let dtype = ctx.out_dtype(v)?;
    let name = ctx.param_or("dims", "dims");
    let out = match ctx.ints(name)? {
        Some(d) => {
            if let Some(bad) = d.iter().find(|&&x| x < 0) {
                return Err(format!("dims {d:?} contain a negative size {bad}"));
            }
            Shape::from_vec(d)
        }
        None => match ctx.len_of(name) {
            Some(n) => super::shape::unknown_dims(n),
            None => rank_unknown(),
        },
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Range`: `ceil((limit - start) / delta)` elements when all three are constant, else `[-1]`;
/// dtype of `start`.
pub fn range(ctx: &InferCtx<'_>) -> RuleResult {
    let s = ctx.input_param("start", "start")?;
    let dtype = ctx.out_dtype(s)?;
    let value = |name: &str| -> Result<Option<f64>, String> {
        let Some(i) = ctx.opt_input(ctx.param_or(name, name)) else {
            return Ok(None);
        };
        match (ctx.values)(i) {
            Some(t) => Ok(tensor_f64(&t)?.first().copied()),
            None => Ok(None),
        }
    };
    let n = match (value("start")?, value("limit")?, value("delta")?) {
        (Some(a), Some(b), Some(d)) => {
            if d == 0.0 {
                return Err("delta must not be 0".into());
            }
            let n = ((b - a) / d).ceil().max(0.0);
            if n.is_nan() {
                return Err(format!("Range({a}, {b}, {d}) has no element count"));
            }
            // `as` saturates: a count from 2^63 up is an overflow, not i64::MAX elements.
            if n >= 9_223_372_036_854_775_808.0 {
                return Err(super::engine::overflow_message(format_args!(
                    "the element count of Range({a}, {b}, {d})"
                )));
            }
            n as i64
        }
        _ => UNKNOWN_DIM,
    };
    Ok(ctx.all_outputs(OutDesc::new(Shape::from_slice(&[n]), dtype)))
}

/// `TransData`: the logical shape is the input's (its origin shape when it is stored in a
/// device format); the output is stored in `dst_format` with the input's logical format as
/// its origin, so its shape is the physical one (NC1HWC0 splits C into C1 × C0, FRACTAL_Z is
/// GE's (C1·H·W, N1, 16, C0), see [`super::format::physical_shape`]) and its origin shape the
/// logical one. An unknown `dst_format` keeps the input's shape. The dtype is kept.
pub fn trans_data(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "src")?;
    let d = ctx.desc(x);
    let logical = Shape::from_slice(logical_shape(d));
    let out = match Format::from_name(ctx.attr_str("dst_format", "")) {
        Ok(dst) => OutDesc::with_layout(logical, d.dtype, dst, logical_format(d)),
        Err(_) => OutDesc::new(d.shape.clone(), d.dtype),
    };
    Ok(ctx.all_outputs(out))
}

/// `If` / `Case` seen without their subgraphs: nothing can be inferred, outputs are kept.
pub fn if_without_subgraphs(_ctx: &InferCtx<'_>) -> RuleResult {
    Ok(Vec::new())
}
