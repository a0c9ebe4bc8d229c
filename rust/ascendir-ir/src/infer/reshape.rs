//! Layout-changing rules: Reshape (0 copies a dim, -1 is inferred, `axis` / `num_axes`),
//! Transpose, Squeeze, Unsqueeze, ExpandDims, Flatten.

use super::shape::{norm_axes, norm_axis, product, rank_unknown, unknown_dims, unknown_rank};
use super::{InferCtx, OutDesc, RuleResult};
use crate::tensor::{Shape, UNKNOWN_DIM};

/// `Reshape`: the new dims come from `shape` (input or attribute). A 0 copies the input dim
/// at the same position, one -1 is inferred from the element count. `axis` / `num_axes`
/// (Caffe) restrict the reshape to `x[axis .. axis + num_axes]`.
pub fn reshape(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let name = ctx.param_or("shape", "shape");
    let Some(target) = ctx.ints(name)? else {
        let out = match ctx.len_of(name) {
            Some(n) => unknown_dims(n),
            None => rank_unknown(),
        };
        return Ok(ctx.all_outputs(OutDesc::new(out, dtype)));
    };
    if unknown_rank(xs) {
        let known = target.iter().all(|&d| d > 0);
        let out = if known {
            Shape::from_vec(target)
        } else {
            unknown_dims(target.len())
        };
        return Ok(ctx.all_outputs(OutDesc::new(out, dtype)));
    }
    let rank = xs.len();
    let axis = ctx.attr_int("axis", 0);
    let axis = if axis < 0 {
        axis + rank as i64 + 1
    } else {
        axis
    };
    if axis < 0 || axis as usize > rank {
        return Err(format!(
            "axis {} is out of range for rank {rank}",
            ctx.attr_int("axis", 0)
        ));
    }
    let axis = axis as usize;
    let num_axes = ctx.attr_int("num_axes", -1);
    let end = if num_axes < 0 {
        rank
    } else {
        axis.saturating_add(num_axes as usize).min(rank)
    };
    let (head, mid, tail) = (&xs[..axis], &xs[axis..end], &xs[end..]);
    let mut new_mid: Shape = Shape::with_capacity(target.len());
    let mut infer_at = None;
    for (i, &d) in target.iter().enumerate() {
        match d {
            0 => new_mid.push(*mid.get(i).ok_or_else(|| {
                format!("shape {target:?} copies dim {i} (0), but the input {xs:?} has no such dim")
            })?),
            -1 => {
                if infer_at.replace(i).is_some() {
                    return Err(format!("shape {target:?} has more than one -1"));
                }
                new_mid.push(UNKNOWN_DIM);
            }
            d if d < -1 => return Err(format!("shape {target:?} has an invalid dim {d}")),
            d => new_mid.push(d),
        }
    }
    let total = product(mid);
    if let Some(at) = infer_at {
        let known: Vec<i64> = new_mid
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != at)
            .map(|(_, &d)| d)
            .collect();
        let rest = product(&known);
        if total >= 0 && rest > 0 {
            if total % rest != 0 {
                return Err(format!(
                    "cannot reshape {xs:?} to {target:?}: {total} elements do not divide by {rest}"
                ));
            }
            new_mid[at] = total / rest;
        } else if total == 0 && rest > 0 {
            new_mid[at] = 0;
        }
    } else {
        let n = product(&new_mid);
        if total >= 0 && n >= 0 && total != n {
            return Err(format!(
                "cannot reshape {xs:?} ({total} elements) to {target:?} ({n} elements)"
            ));
        }
    }
    let mut out = Shape::from_slice(head);
    out.extend_from_slice(&new_mid);
    out.extend_from_slice(tail);
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Transpose` / `TransposeD`: `out[i] = x[perm[i]]`; `perm` is an input or attribute.
pub fn transpose(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let perm_name = ctx.param_or("perm", "perm");
    let Some(perm) = ctx.ints(perm_name)? else {
        let out = if unknown_rank(xs) {
            rank_unknown()
        } else {
            unknown_dims(xs.len())
        };
        return Ok(ctx.all_outputs(OutDesc::new(out, dtype)));
    };
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(unknown_dims(perm.len()), dtype)));
    }
    if perm.len() != xs.len() {
        return Err(format!(
            "perm {perm:?} has {} entries for an input of rank {}",
            perm.len(),
            xs.len()
        ));
    }
    let axes = norm_axes(&perm, xs.len())?;
    debug_assert_eq!(axes.len(), xs.len());
    let mut out = Shape::with_capacity(xs.len());
    for &p in &perm {
        out.push(xs[norm_axis(p, xs.len())?]);
    }
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Squeeze`: removes the dims listed in the attribute `axis` (default name; each must be 1
/// or unknown), or every dim of size 1 when the list is empty.
pub fn squeeze(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let name = ctx.param_or("axes", "axis");
    let axes = if ctx.has(name) {
        ctx.ints(name)?
    } else {
        Some(Vec::new())
    };
    let Some(axes) = axes else {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    };
    let out: Shape = if axes.is_empty() {
        if xs.contains(&UNKNOWN_DIM) {
            return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
        }
        xs.iter().copied().filter(|&d| d != 1).collect()
    } else {
        let axes = norm_axes(&axes, xs.len())?;
        for &a in &axes {
            if xs[a] != 1 && xs[a] != UNKNOWN_DIM {
                return Err(format!(
                    "cannot squeeze dim {a} of {xs:?}: its size is {}",
                    xs[a]
                ));
            }
        }
        xs.iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &d)| d)
            .collect()
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// Insert size-1 dims at `axes` (positions in the output).
fn insert_ones(xs: &[i64], axes: &[i64]) -> Result<Shape, String> {
    let out_rank = xs.len() + axes.len();
    let axes = norm_axes(axes, out_rank)?;
    let mut out = Shape::with_capacity(out_rank);
    let mut src = xs.iter();
    for i in 0..out_rank {
        if axes.contains(&i) {
            out.push(1);
        } else {
            out.push(*src.next().ok_or("axes out of range")?);
        }
    }
    Ok(out)
}

/// `Unsqueeze`: inserts 1s at the attribute (or input) `axes`, counted in the output rank.
pub fn unsqueeze(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let name = ctx.param_or("axes", "axes");
    let axes = ctx.ints(name)?;
    let out = match axes {
        _ if unknown_rank(xs) => rank_unknown(),
        Some(a) => insert_ones(xs, &a)?,
        None => match ctx.len_of(name) {
            Some(n) => unknown_dims(xs.len() + n),
            None => rank_unknown(),
        },
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `ExpandDims`: inserts one 1 at `axis` (input or attribute), in `[-rank-1, rank]`.
pub fn expand_dims(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let out = match ctx.ints(ctx.param_or("axis", "axis"))? {
        _ if unknown_rank(xs) => rank_unknown(),
        Some(a) if a.len() == 1 => insert_ones(xs, &a)?,
        Some(a) => return Err(format!("axis must be one value, got {a:?}")),
        None => unknown_dims(xs.len() + 1),
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Flatten`: `[prod(x[..axis]), prod(x[axis..])]` (attribute `axis`, default 1).
pub fn flatten(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(unknown_dims(2), dtype)));
    }
    let axis = ctx.attr_int("axis", 1);
    let a = if axis < 0 {
        axis + xs.len() as i64
    } else {
        axis
    };
    if a < 0 || a as usize > xs.len() {
        return Err(format!("axis {axis} is out of range for rank {}", xs.len()));
    }
    let a = a as usize;
    let out = Shape::from_slice(&[product(&xs[..a]), product(&xs[a..])]);
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}
