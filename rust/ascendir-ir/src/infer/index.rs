//! Indexing and assembling rules: Concat, Split, Gather, Slice, StridedSlice, Tile, Expand,
//! Pad.

use super::shape::{
    add_dim, broadcast, merge_dim, norm_axis, rank_unknown, unknown_dims, unknown_rank,
};
use super::{InferCtx, OutDesc, RuleResult};
use crate::dtype::DataType;
use crate::tensor::{Shape, UNKNOWN_DIM};

/// The dynamic input group `inputs` (default `x`) of a concat or pack: its size, the output
/// dtype and the shapes of known rank (an empty group is an error: nothing to `verb`).
fn group_shapes<'c>(
    ctx: &'c InferCtx<'_>,
    verb: &str,
) -> Result<(usize, DataType, Vec<&'c [i64]>), String> {
    let idx = ctx.group(ctx.param_or("inputs", "x"));
    let Some(&first) = idx.first() else {
        return Err(format!("has no inputs to {verb}"));
    };
    let dtype = ctx.out_dtype(first)?;
    let known = idx
        .iter()
        .map(|&i| ctx.shape(i))
        .filter(|s| !unknown_rank(s))
        .collect();
    Ok((idx.len(), dtype, known))
}

/// `ConcatV2` / `ConcatV2D` / `Concat` / `ConcatD`: the dynamic inputs `inputs` (default `x`)
/// joined along `axis` (input or attribute, default `concat_dim`).
pub fn concat(ctx: &InferCtx<'_>) -> RuleResult {
    let (count, dtype, known) = group_shapes(ctx, "concatenate")?;
    let Some(&base) = known.first() else {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    };
    let rank = base.len();
    let axis = match ctx.ints(ctx.param_or("axis", "concat_dim"))? {
        Some(v) if v.len() == 1 => norm_axis(v[0], rank)?,
        Some(v) => return Err(format!("the concat axis must be one value, got {v:?}")),
        None => return Ok(ctx.all_outputs(OutDesc::new(unknown_dims(rank), dtype))),
    };
    if known.len() < count {
        let mut out = Shape::from_slice(base);
        out[axis] = UNKNOWN_DIM;
        return Ok(ctx.all_outputs(OutDesc::new(out, dtype)));
    }
    let mut out = Shape::from_slice(base);
    out[axis] = 0;
    for (k, s) in known.iter().enumerate() {
        if s.len() != rank {
            return Err(format!(
                "input {k} has rank {} but input 0 has rank {rank} ({s:?} vs {base:?})",
                s.len()
            ));
        }
        for d in 0..rank {
            if d == axis {
                out[d] = add_dim(out[d], s[d]);
            } else {
                out[d] = merge_dim(out[d], s[d]).ok_or_else(|| {
                    format!("input {k} {s:?} differs from input 0 {base:?} in dim {d} (concat axis {axis})")
                })?;
            }
        }
    }
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Pack` (TensorFlow's stack): the dynamic input group `x`, all of one shape, joined along a
/// new dim inserted at `axis` (attribute, default 0, counted in the output's rank).
pub fn pack(ctx: &InferCtx<'_>) -> RuleResult {
    let (count, dtype, known) = group_shapes(ctx, "pack")?;
    let Some(&base) = known.first() else {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    };
    let rank = base.len();
    let axis = norm_axis(ctx.attr_int("axis", 0), rank + 1)?;
    let mut item = Shape::from_slice(base);
    for (k, s) in known.iter().enumerate() {
        if s.len() != rank {
            return Err(format!(
                "input {k} has rank {} but input 0 has rank {rank} ({s:?} vs {base:?})",
                s.len()
            ));
        }
        for d in 0..rank {
            item[d] = merge_dim(item[d], s[d]).ok_or_else(|| {
                format!("input {k} {s:?} differs from input 0 {base:?} in dim {d}")
            })?;
        }
    }
    let n = i64::try_from(count).map_err(|e| e.to_string())?;
    let mut out = Shape::with_capacity(rank + 1);
    out.extend_from_slice(&item[..axis]);
    out.push(n);
    out.extend_from_slice(&item[axis..]);
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Split` / `SplitD` / `SplitV` / `SplitVD`: `x` cut along `axis` (input or attribute,
/// default `split_dim`) into the op's outputs, equally or by `size_splits` (one -1 inferred).
pub fn split(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let n = ctx.op.num_outputs();
    if n == 0 {
        return Ok(Vec::new());
    }
    if unknown_rank(xs) {
        return Ok(vec![OutDesc::new(rank_unknown(), dtype); n]);
    }
    let Some(axis) = ctx.ints(ctx.param_or("axis", "split_dim"))? else {
        return Ok(vec![OutDesc::new(unknown_dims(xs.len()), dtype); n]);
    };
    let axis = match axis.as_slice() {
        [a] => norm_axis(*a, xs.len())?,
        v => return Err(format!("the split axis must be one value, got {v:?}")),
    };
    let Some(&total) = xs.get(axis) else {
        return Err(format!(
            "cannot split a tensor of rank {} (shape {xs:?})",
            xs.len()
        ));
    };
    let sizes_name = ctx.param_or("size_splits", "size_splits");
    let sizes: Vec<i64> = if ctx.has(sizes_name) {
        match ctx.ints(sizes_name)? {
            Some(mut s) => {
                if s.len() != n {
                    return Err(format!(
                        "size_splits {s:?} has {} entries for {n} outputs",
                        s.len()
                    ));
                }
                let unknown: Vec<usize> = (0..n).filter(|&i| s[i] == -1).collect();
                if unknown.len() > 1 {
                    return Err(format!("size_splits {s:?} has more than one -1"));
                }
                if let Some(&u) = unknown.first() {
                    let rest: i64 = s.iter().filter(|&&d| d >= 0).sum();
                    s[u] = if total >= 0 {
                        total - rest
                    } else {
                        UNKNOWN_DIM
                    };
                    if total >= 0 && s[u] < 0 {
                        return Err(format!("size_splits {s:?} exceed dim {axis} of {xs:?}"));
                    }
                } else if total >= 0 && s.iter().sum::<i64>() != total {
                    return Err(format!(
                        "size_splits {s:?} do not add up to dim {axis} of {xs:?}"
                    ));
                }
                s
            }
            None => vec![UNKNOWN_DIM; n],
        }
    } else if total < 0 {
        vec![UNKNOWN_DIM; n]
    } else {
        if total % n as i64 != 0 {
            return Err(format!(
                "dim {axis} of {xs:?} does not split into {n} equal parts"
            ));
        }
        vec![total / n as i64; n]
    };
    Ok(sizes
        .into_iter()
        .map(|s| {
            let mut o = Shape::from_slice(xs);
            o[axis] = s;
            OutDesc::new(o, dtype)
        })
        .collect())
}

/// `GatherV2` / `Gather` / `GatherV2D`: `x[..axis] + indices[batch_dims..] + x[axis+1..]`;
/// `axis` is an input or attribute (0 when absent).
pub fn gather(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let ind = ctx.input_param("indices", "indices")?;
    let dtype = ctx.out_dtype(x)?;
    let (xs, is) = (ctx.shape(x), ctx.shape(ind));
    if unknown_rank(xs) || unknown_rank(is) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let name = ctx.param_or("axis", "axis");
    let axis = if ctx.has(name) {
        ctx.ints(name)?
    } else {
        Some(vec![0])
    };
    let batch_dims = ctx.attr_int("batch_dims", 0);
    let bd = if batch_dims < 0 {
        batch_dims + is.len() as i64
    } else {
        batch_dims
    };
    if bd < 0 || bd as usize > is.len() {
        return Err(format!(
            "batch_dims {batch_dims} is out of range for indices {is:?}"
        ));
    }
    let Some(axis) = axis else {
        return Ok(ctx.all_outputs(OutDesc::new(
            unknown_dims((xs.len() + is.len()).saturating_sub(1 + bd as usize)),
            dtype,
        )));
    };
    let axis = match axis.as_slice() {
        [a] => norm_axis(*a, xs.len())?,
        v => return Err(format!("the gather axis must be one value, got {v:?}")),
    };
    let mut out = Shape::from_slice(&xs[..axis]);
    out.extend_from_slice(&is[bd as usize..]);
    out.extend_from_slice(&xs[axis + 1..]);
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Slice` / `SliceD`: `size[i]` (or `x[i] - offsets[i]` for -1) per dim.
pub fn slice(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let offsets = ctx.ints(ctx.param_or("offsets", "offsets"))?;
    let size = ctx.ints(ctx.param_or("size", "size"))?;
    let out = match size {
        None if unknown_rank(xs) => rank_unknown(),
        None => unknown_dims(xs.len()),
        Some(size) => {
            if !unknown_rank(xs) && size.len() != xs.len() {
                return Err(format!(
                    "size {size:?} has {} entries for an input of rank {}",
                    size.len(),
                    xs.len()
                ));
            }
            let mut out = Shape::with_capacity(size.len());
            for (i, &s) in size.iter().enumerate() {
                let d = if s >= 0 {
                    if let (Some(off), false) = (&offsets, unknown_rank(xs)) {
                        let (o, dim) = (off.get(i).copied().unwrap_or(0), xs[i]);
                        if dim >= 0 && (o < 0 || o + s > dim) {
                            return Err(format!(
                                "slice [{o}, {o} + {s}) is out of range for dim {i} of {xs:?}"
                            ));
                        }
                    }
                    s
                } else if s == -1 {
                    match (&offsets, unknown_rank(xs)) {
                        (Some(off), false) if xs[i] >= 0 => {
                            xs[i] - off.get(i).copied().unwrap_or(0)
                        }
                        _ => UNKNOWN_DIM,
                    }
                } else {
                    return Err(format!("size {size:?} has an invalid entry {s}"));
                };
                out.push(d);
            }
            out
        }
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// Number of elements of `range(begin, end, stride)` clamped to `[0, dim]` (TF semantics).
fn slice_len(dim: i64, begin: i64, end: i64, stride: i64, begin_full: bool, end_full: bool) -> i64 {
    if dim < 0 {
        return UNKNOWN_DIM;
    }
    let norm = |v: i64| if v < 0 { v + dim } else { v };
    let (lo, hi) = if stride > 0 { (0, dim) } else { (-1, dim - 1) };
    let clamp = |v: i64| v.clamp(lo, hi);
    let b = if begin_full {
        if stride > 0 {
            0
        } else {
            dim - 1
        }
    } else {
        clamp(norm(begin))
    };
    let e = if end_full {
        if stride > 0 {
            dim
        } else {
            -1
        }
    } else {
        clamp(norm(end))
    };
    if stride > 0 {
        if e > b {
            (e - b).saturating_add(stride - 1) / stride
        } else {
            0
        }
    } else if b > e {
        (b - e).saturating_add(stride.saturating_neg() - 1) / stride.saturating_neg()
    } else {
        0
    }
}

/// `StridedSlice` / `StridedSliceD` with TF's masks (`begin_mask`, `end_mask`,
/// `ellipsis_mask`, `new_axis_mask`, `shrink_axis_mask`).
pub fn strided_slice(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let begin = ctx.ints(ctx.param_or("begin", "begin"))?;
    let end = ctx.ints(ctx.param_or("end", "end"))?;
    let strides = ctx.ints(ctx.param_or("strides", "strides"))?;
    let (Some(begin), Some(end)) = (begin, end) else {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    };
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let strides = strides.unwrap_or_else(|| vec![1; begin.len()]);
    let n = begin.len();
    if end.len() != n || strides.len() != n {
        return Err(format!(
            "begin {begin:?}, end {end:?} and strides {strides:?} differ in length"
        ));
    }
    if let Some(&z) = strides.iter().find(|&&s| s == 0) {
        return Err(format!("strides {strides:?} contain {z}"));
    }
    let mask = |name: &str| ctx.attr_int(name, 0);
    let (bm, em, elm, nam, sam) = (
        mask("begin_mask"),
        mask("end_mask"),
        mask("ellipsis_mask"),
        mask("new_axis_mask"),
        mask("shrink_axis_mask"),
    );
    let bit = |m: i64, i: usize| i < 63 && (m >> i) & 1 == 1;
    // Expand the sparse spec into one entry per input dim (plus new axes).
    let specified = (0..n).filter(|&i| !bit(nam, i) && !bit(elm, i)).count();
    let mut out = Shape::new();
    let mut dim = 0usize;
    let mut seen_ellipsis = false;
    for i in 0..n {
        if bit(elm, i) {
            if seen_ellipsis {
                return Err("more than one ellipsis in ellipsis_mask".into());
            }
            seen_ellipsis = true;
            let covered = xs.len().saturating_sub(specified);
            for _ in 0..covered {
                out.push(xs[dim]);
                dim += 1;
            }
            continue;
        }
        if bit(nam, i) {
            out.push(1);
            continue;
        }
        let Some(&d) = xs.get(dim) else {
            return Err(format!(
                "the slice spec has more dims than the input {xs:?}"
            ));
        };
        if bit(sam, i) {
            if d >= 0 {
                let b = if begin[i] < 0 { begin[i] + d } else { begin[i] };
                if b < 0 || b >= d {
                    return Err(format!(
                        "shrink index {} is out of range for dim {dim} of {xs:?}",
                        begin[i]
                    ));
                }
            }
        } else {
            out.push(slice_len(
                d,
                begin[i],
                end[i],
                strides[i],
                bit(bm, i),
                bit(em, i),
            ));
        }
        dim += 1;
    }
    out.extend_from_slice(&xs[dim.min(xs.len())..]);
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Tile` / `TileD`: `x[i] * multiples[i]` (x is left-padded with 1s to the multiples' length).
pub fn tile(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let name = ctx.param_or("multiples", "multiples");
    let out = match ctx.ints(name)? {
        None => match (ctx.len_of(name), unknown_rank(xs)) {
            (Some(n), _) => unknown_dims(n.max(if unknown_rank(xs) { 0 } else { xs.len() })),
            (None, false) => unknown_dims(xs.len()),
            (None, true) => rank_unknown(),
        },
        Some(m) if unknown_rank(xs) => unknown_dims(m.len()),
        Some(m) => {
            if m.len() < xs.len() {
                return Err(format!(
                    "multiples {m:?} are shorter than the rank of {xs:?}"
                ));
            }
            let pad = m.len() - xs.len();
            let mut out = Shape::with_capacity(m.len());
            for (i, &k) in m.iter().enumerate() {
                let d = if i < pad { 1 } else { xs[i - pad] };
                out.push(if d < 0 || k < 0 {
                    UNKNOWN_DIM
                } else {
                    d.checked_mul(k).ok_or_else(|| {
                        super::engine::overflow_message(format_args!(
                            "dim {i} of {xs:?} tiled {k} times"
                        ))
                    })?
                });
            }
            out
        }
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Expand` / `BroadcastTo`: broadcast of `x` with the value of `shape`.
pub fn expand(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let name = ctx.param_or("shape", "shape");
    let out = match ctx.ints(name)? {
        Some(s) => broadcast(ctx.shape(x), &s)?,
        None => match ctx.len_of(name) {
            Some(n) if !unknown_rank(ctx.shape(x)) => unknown_dims(n.max(ctx.shape(x).len())),
            _ => rank_unknown(),
        },
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `Pad` / `PadD` / `PadV3`: `x[i] + begin[i] + end[i]` (`paddings` an `[n, 2]` input or a
/// list-of-pairs attribute). With `paddings_contiguous` (the default) the paddings are
/// `[b0, e0, b1, e1, ...]`; PadV3 with `paddings_contiguous = false` (what the ONNX and torch
/// frontends write) has `[b0, b1, ..., e0, e1, ...]`.
pub fn pad(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    let contiguous = ctx.attr_bool("paddings_contiguous", true);
    let out = match ctx.ints(ctx.param_or("paddings", "paddings"))? {
        _ if unknown_rank(xs) => rank_unknown(),
        None => unknown_dims(xs.len()),
        Some(p) => {
            let n = xs.len();
            if p.len() != 2 * n {
                return Err(format!(
                    "paddings {p:?} must have 2 values per dim of {xs:?}"
                ));
            }
            let mut out = Shape::with_capacity(n);
            for (i, &d) in xs.iter().enumerate() {
                let (b, e) = if contiguous {
                    (p[2 * i], p[2 * i + 1])
                } else {
                    (p[i], p[i + n])
                };
                let v = if d < 0 {
                    UNKNOWN_DIM
                } else {
                    d.checked_add(b)
                        .and_then(|v| v.checked_add(e))
                        .ok_or_else(|| {
                            super::engine::overflow_message(format_args!(
                                "dim {i} of {xs:?} padded by {:?}",
                                [b, e]
                            ))
                        })?
                };
                if d >= 0 && v < 0 {
                    return Err(format!("paddings {p:?} make dim {i} of {xs:?} negative"));
                }
                out.push(v);
            }
            out
        }
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// ONNX-style slicing (`StridedSliceV2`): `begin`, `end` and optional `axes` / `strides`
/// inputs (or attributes); dims not listed in `axes` are kept. Non-constant bounds keep the
/// rank with every dim unknown.
pub fn slice_axes(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let dtype = ctx.out_dtype(x)?;
    let xs = ctx.shape(x);
    if unknown_rank(xs) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let rank = xs.len();
    let opt = |name: &str| -> Result<Option<Vec<i64>>, String> {
        if ctx.opt_input(name).is_some() || ctx.attr(name).is_some() {
            ctx.ints(name)
        } else {
            Ok(Some(Vec::new()))
        }
    };
    let begin = ctx.ints(ctx.param_or("begin", "begin"))?;
    let end = ctx.ints(ctx.param_or("end", "end"))?;
    let axes = opt("axes")?;
    let strides = opt("strides")?;
    let (Some(begin), Some(end), Some(axes), Some(strides)) = (begin, end, axes, strides) else {
        // Non-constant bounds: the rank is kept, every dim unknown (as GE and ONNX do).
        return Ok(ctx.all_outputs(OutDesc::new(unknown_dims(rank), dtype)));
    };
    let n = begin.len();
    if end.len() != n {
        return Err(format!("begin {begin:?} and end {end:?} differ in length"));
    }
    let axes: Vec<i64> = if axes.is_empty() {
        (0..n as i64).collect()
    } else {
        axes
    };
    let strides = if strides.is_empty() {
        vec![1; n]
    } else {
        strides
    };
    if axes.len() != n || strides.len() != n {
        return Err(format!(
            "begin {begin:?}, axes {axes:?} and strides {strides:?} differ in length"
        ));
    }
    let mut out = Shape::from_slice(xs);
    for k in 0..n {
        if strides[k] == 0 {
            return Err(format!("strides {strides:?} contain 0"));
        }
        let a = norm_axis(axes[k], rank)?;
        out[a] = slice_len(xs[a], begin[k], end[k], strides[k], false, false);
    }
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}
