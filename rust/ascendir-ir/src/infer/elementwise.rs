//! Elementwise families: same-as-input, broadcasting, cast, select, passthrough, Data and Const.

use super::shape::broadcast as bcast;
use super::{InferCtx, OutDesc, Param, RuleResult};
use crate::attr::AttrValue;
use crate::subgraph::ATTR_NUM_INPUTS;
use crate::tensor::Shape;

/// Every output takes the shape of input `input` (default: the first input) and the dtype
/// chosen by `dtype` (default: that input's). With `outputs = [a, b, ...]` output `k` takes
/// the shape and dtype of input `a`, `b`, ... instead.
pub fn same_as(ctx: &InferCtx<'_>) -> RuleResult {
    if let Some(Param::Strs(per_output)) = ctx.params.get("outputs") {
        let mut outs = Vec::with_capacity(per_output.len());
        for name in per_output {
            let i = ctx.input(name)?;
            outs.push(OutDesc::new(Shape::from_slice(ctx.shape(i)), ctx.dtype(i)));
        }
        return Ok(outs);
    }
    let i = match ctx.param("input") {
        Some(name) => ctx.input(name)?,
        None if ctx.op.num_inputs() > 0 => 0,
        None => return Err("has no input to copy the shape from".into()),
    };
    let dtype = ctx.out_dtype(i)?;
    Ok(ctx.all_outputs(OutDesc::new(Shape::from_slice(ctx.shape(i)), dtype)))
}

/// Numpy broadcasting of `inputs` (default: every set input, dynamic groups included); the
/// dtype is chosen by `dtype` (default: the first input's).
pub fn broadcast(ctx: &InferCtx<'_>) -> RuleResult {
    let idx: Vec<usize> = match ctx.param_list("inputs") {
        Some(names) => {
            let mut v = Vec::new();
            for n in &names {
                v.extend(ctx.group(n));
            }
            v
        }
        None => (0..ctx.op.num_inputs())
            .filter(|&i| ctx.desc(i).is_valid())
            .collect(),
    };
    let Some(&first) = idx.first() else {
        return Err("has no inputs to broadcast".into());
    };
    let mut shape = Shape::from_slice(ctx.shape(first));
    for &i in &idx[1..] {
        shape = bcast(&shape, ctx.shape(i))
            .map_err(|e| format!("inputs '{}' and earlier: {e}", ctx.op.inputs()[i].name))?;
    }
    let dtype = ctx.out_dtype(first)?;
    Ok(ctx.all_outputs(OutDesc::new(shape, dtype)))
}

/// `Cast`: the shape of `x`, the dtype of attribute `dst_type`.
pub fn cast(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("input", "x")?;
    let attr = ctx.param_or("attr", "dst_type");
    let dtype = match ctx.attr(attr) {
        Some(AttrValue::Int(i)) => crate::dtype::DataType::from_ge(*i)
            .ok_or_else(|| format!("attribute '{attr}' = {i} is not a data type"))?,
        Some(AttrValue::DataType(d)) => *d,
        _ => return Err(format!("needs the data type attribute '{attr}'")),
    };
    Ok(ctx.all_outputs(OutDesc::new(Shape::from_slice(ctx.shape(x)), dtype)))
}

/// `Select` / `SelectV2` / `Where`: broadcast of `x1` and `x2` (and of `condition` when
/// `broadcast_condition` is 1, as SelectV2); dtype of `x1`. Without `broadcast_condition` a
/// lower-rank condition (TF `Select` with a vector condition) is accepted as is, and a
/// condition of the values' rank or more broadcasts with them (ONNX `Where`, imported as
/// `Select`, broadcasts all three).
pub fn select(ctx: &InferCtx<'_>) -> RuleResult {
    let c = ctx.input_param("condition", "condition")?;
    let a = ctx.input_param("x1", "x1")?;
    let b = ctx.input_param("x2", "x2")?;
    let mut shape = bcast(ctx.shape(a), ctx.shape(b))?;
    if ctx.param_int("broadcast_condition") == Some(1) {
        shape = bcast(&shape, ctx.shape(c))?;
    } else {
        let cs = ctx.shape(c);
        if cs.len() >= shape.len() && !cs.contains(&crate::tensor::UNKNOWN_RANK) {
            shape = bcast(&shape, cs)?;
        }
    }
    Ok(ctx.all_outputs(OutDesc::new(shape, ctx.out_dtype(a)?)))
}

/// Output `i` is input `i` (`Identity`, `IdentityN`, `While`). With the integer parameter
/// `skip = k`, output `i` is input `i + k` and outputs beyond the inputs are left as they are
/// (ONNX `Loop`: loop-carried values follow the trip count and condition; the inputs after
/// the [`ATTR_NUM_INPUTS`] formal ones are captured outer values, and the outputs after the
/// loop-carried ones are scan outputs, left as they are).
pub fn passthrough(ctx: &InferCtx<'_>) -> RuleResult {
    let n = ctx.op.num_outputs();
    let skip = ctx.param_int("skip").unwrap_or(0).max(0) as usize;
    if skip == 0 && ctx.op.num_inputs() < n {
        return Err(format!(
            "has {n} outputs but only {} inputs to pass through",
            ctx.op.num_inputs()
        ));
    }
    let formal = match ctx.attr(ATTR_NUM_INPUTS).and_then(AttrValue::as_int) {
        Some(k) if skip > 0 => usize::try_from(k).unwrap_or(0).min(ctx.op.num_inputs()),
        _ => ctx.op.num_inputs(),
    };
    let avail = formal.saturating_sub(skip).min(n);
    Ok((0..avail)
        .map(|i| OutDesc::new(Shape::from_slice(ctx.shape(i + skip)), ctx.dtype(i + skip)))
        .collect())
}

/// `Data`: the output is the input desc when there is one; otherwise the output is kept.
pub fn data(ctx: &InferCtx<'_>) -> RuleResult {
    match ctx.op.inputs().first() {
        Some(p) if p.desc.is_valid() => Ok(ctx.all_outputs(OutDesc::new(
            Shape::from_slice(super::logical_shape(&p.desc)),
            p.desc.dtype,
        ))),
        _ => Ok(Vec::new()),
    }
}

/// `Const`: the shape and dtype of the `value` tensor (the output is kept when it has none).
pub fn constant(ctx: &InferCtx<'_>) -> RuleResult {
    match ctx.attr(ctx.param_or("attr", "value")) {
        Some(AttrValue::Tensor(t)) => Ok(vec![OutDesc::new(t.desc.shape.clone(), t.desc.dtype)]),
        _ => Ok(Vec::new()),
    }
}
