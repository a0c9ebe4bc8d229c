//! Indexing and creation ops that real models write: `gather`, advanced `index` with several
//! index tensors, `repeat`, `copy`, `slice_scatter`, `select_scatter`, the `new_*` factories
//! and the Python `&` / `|` operators.
//!
//! Each maps to GE types of the builtin library (`GatherElements`, `GatherNd`, `Tile`,
//! `ScatterElements`, `Fill`, `BitwiseAnd` …), never to an `aten::` node: the evaluator, the
//! shape rules and the ONNX export know them.

use ascendir_ir::{AttrMap, AttrValue, DataType, Format, TensorDesc};

use crate::build::{Ctx, Out, Value};
use crate::ops::{arg, attrs, ints, meta, norm, operand, out_meta};
use crate::program::{Arg, FxNode};
use crate::TorchResult;

fn set(ctx: &mut Ctx<'_>, o: Out) -> TorchResult<bool> {
    ctx.set(Value::T(o));
    Ok(true)
}

/// A `Shape` node of `o` (rank `rank`), named `<FX node>/<tag>`.
pub(crate) fn shape_of(ctx: &mut Ctx<'_>, o: Out, rank: usize, tag: &str) -> TorchResult<Out> {
    let name = format!("{}/{tag}", ctx.cur_name());
    ctx.helper(
        &name,
        "Shape",
        &[("x", o)],
        TensorDesc::new(&[rank as i64], DataType::INT64, Format::ND),
        [(
            "dtype",
            AttrValue::Int(i64::from(DataType::INT64.ge_value())),
        )],
    )
}

/// `src` broadcast to the shape of `like` (an `Expand` to `Shape(like)`), unless equal.
fn broadcast_like(
    ctx: &mut Ctx<'_>,
    src: &Arg<'_>,
    like: &Arg<'_>,
    dtype: DataType,
    tag: &str,
) -> TorchResult<Out> {
    let sm = meta(ctx, src)?.clone();
    let lm = meta(ctx, like)?.clone();
    let s = operand(ctx, src, dtype, tag)?;
    if sm.same_shape(&lm) {
        return Ok(s);
    }
    let l = ctx.tensor(like)?;
    let shape = shape_of(ctx, l, lm.dims.len(), &format!("{tag}_shape"))?;
    let name = format!("{}/{tag}_expand", ctx.cur_name());
    ctx.helper(
        &name,
        "Expand",
        &[("x", s), ("shape", shape)],
        TensorDesc::new(&lm.dims, dtype, Format::ND),
        [],
    )
}

/// `torch.gather(x, dim, index)` → `GatherElements`.
fn gather(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let rank = meta(ctx, x)?.dims.len();
    let Some(dim) = arg(node, 1, "dim").as_int() else {
        return Ok(false);
    };
    let index = arg(node, 2, "index").clone();
    let xi = ctx.tensor(x)?;
    let ii = ctx.tensor(&index)?;
    let id = ctx.add(
        "GatherElements",
        &[("x", xi), ("index", ii)],
        &["y"],
        attrs([("dim", AttrValue::Int(norm(dim, rank.max(1))))]),
    )?;
    set(ctx, (id, 0))
}

/// `x[i0, i1, …]` with index tensors on the leading `k ≥ 2` dims (the rest `None` or
/// absent): the indices broadcast to one shape `B`, stacked on a new last axis → `GatherNd`
/// (shape `B + x.shape[k:]`, torch's result when the indexed dims lead).
fn index_leading(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let Arg::List(idx) = arg(node, 1, "indices").clone() else {
        return Ok(false);
    };
    let k = idx.iter().take_while(|a| !matches!(a, Arg::None)).count();
    if k < 2 || idx[k..].iter().any(|a| !matches!(a, Arg::None)) {
        return Ok(false);
    }
    let metas = idx[..k]
        .iter()
        .map(|a| meta(ctx, a))
        .collect::<TorchResult<Vec<_>>>()?;
    if metas
        .iter()
        .any(|m| !matches!(m.dtype, Some(DataType::INT64 | DataType::INT32)))
    {
        return Ok(false);
    }
    // The broadcast index shape: the output's first dims.
    let om = out_meta(ctx, node)?;
    let xrank = meta(ctx, x)?.dims.len();
    let brank = om.dims.len() + k - xrank;
    let bdims: Vec<i64> = om.dims[..brank].to_vec();
    // The broadcast shape as a tensor when it is symbolic: the element-wise maximum of the
    // index tensors' shapes (equal ranks; a 1 broadcasts, other dims agree).
    let symbolic = bdims.iter().any(|&d| d < 0);
    if symbolic && metas.iter().any(|m| m.dims.len() != brank) {
        return Ok(false);
    }
    let mut ins = Vec::with_capacity(k);
    for (j, a) in idx[..k].iter().enumerate() {
        ins.push(operand(ctx, a, DataType::INT64, &format!("i{j}"))?);
    }
    let shape = if symbolic {
        let mut acc: Option<Out> = None;
        for (j, &o) in ins.iter().enumerate() {
            let s = shape_of(ctx, o, brank, &format!("i{j}_shape"))?;
            acc = Some(match acc {
                None => s,
                Some(prev) => ctx.helper(
                    &format!("{}/broadcast_shape{j}", node.name),
                    "Maximum",
                    &[("x1", prev), ("x2", s)],
                    TensorDesc::new(&[brank as i64], DataType::INT64, Format::ND),
                    [],
                )?,
            });
        }
        acc
    } else {
        None
    };
    let mut parts = Vec::with_capacity(k);
    for (j, mut o) in ins.into_iter().enumerate() {
        let m = &metas[j];
        if symbolic || m.dims.len() < brank || m.dims.iter().zip(&bdims).any(|(a, b)| a != b) {
            let shape = match shape {
                Some(s) => s,
                None => {
                    let target: Vec<Arg> = bdims.iter().map(|&d| Arg::Int(d)).collect();
                    ctx.int_list_tensor(&target, &format!("{}/i{j}_shape", node.name))?
                }
            };
            o = ctx.helper(
                &format!("{}/i{j}_expand", node.name),
                "Expand",
                &[("x", o), ("shape", shape)],
                TensorDesc::new(&bdims, DataType::INT64, Format::ND),
                [],
            )?;
        }
        let mut udims = bdims.clone();
        udims.push(1);
        let u = ctx.helper(
            &format!("{}/i{j}_unsqueeze", node.name),
            "Unsqueeze",
            &[("x", o)],
            TensorDesc::new(&udims, DataType::INT64, Format::ND),
            [("axes", ints(vec![brank as i64]))],
        )?;
        parts.push(u);
    }
    let mut sdims = bdims.clone();
    sdims.push(k as i64);
    let ports: Vec<(String, Out)> = parts
        .iter()
        .enumerate()
        .map(|(j, o)| (format!("x{j}"), *o))
        .collect();
    let refs: Vec<(&str, Out)> = ports.iter().map(|(p, o)| (p.as_str(), *o)).collect();
    let stacked = ctx.helper(
        &format!("{}/indices", node.name),
        "ConcatV2D",
        &refs,
        TensorDesc::new(&sdims, DataType::INT64, Format::ND),
        [
            ("concat_dim", AttrValue::Int(brank as i64)),
            ("N", AttrValue::Int(k as i64)),
        ],
    )?;
    let xi = ctx.tensor(x)?;
    let id = ctx.add(
        "GatherNd",
        &[("x", xi), ("indices", stacked)],
        &["y"],
        AttrMap::new(),
    )?;
    set(ctx, (id, 0))
}

/// `x.repeat(repeats)` → `Tile` (leading unit dims added first when `repeats` is longer).
fn repeat(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let Arg::List(reps) = arg(node, 1, "repeats").clone() else {
        return Ok(false);
    };
    let m = meta(ctx, x)?.clone();
    let (r, k) = (reps.len(), m.dims.len());
    if r < k {
        return Ok(false);
    }
    let mut xi = ctx.tensor(x)?;
    if r > k {
        let mut dims = vec![1i64; r - k];
        dims.extend_from_slice(&m.dims);
        xi = ctx.helper(
            &format!("{}/unsqueeze", node.name),
            "Unsqueeze",
            &[("x", xi)],
            TensorDesc::new(&dims, m.dtype.unwrap_or(DataType::FLOAT), Format::ND),
            [("axes", ints((0..(r - k) as i64).collect()))],
        )?;
    }
    let mult = ctx.int_list_tensor(&reps, &format!("{}/multiples", node.name))?;
    let id = ctx.add(
        "Tile",
        &[("x", xi), ("multiples", mult)],
        &["y"],
        AttrMap::new(),
    )?;
    set(ctx, (id, 0))
}

/// `copy(self, src)` (functional `copy_`): `src` cast to `self`'s dtype, broadcast to its
/// shape.
fn copy(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>) -> TorchResult<bool> {
    let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
    let src = arg(node, 1, "src").clone();
    if !ctx.is_tensor(&src) {
        return Ok(false);
    }
    let o = broadcast_like(ctx, &src, x, dt, "src")?;
    ctx.set(Value::T(o));
    Ok(true)
}

/// `slice_scatter(self, src, dim, start, end, step)` and `select_scatter(self, src, dim,
/// index)` → `ScatterElements` along `dim`, the positions an index tensor (a constant
/// `start + step·i` along `dim`, expanded to `src`'s shape).
fn scatter(ctx: &mut Ctx<'_>, node: &FxNode<'_>, x: &Arg<'_>, select: bool) -> TorchResult<bool> {
    let m = meta(ctx, x)?.clone();
    let rank = m.dims.len();
    let dim = norm(arg(node, 2, "dim").as_int().unwrap_or(0), rank);
    let Some(&size) = m.dims.get(dim as usize) else {
        return Ok(false);
    };
    if size < 0 {
        return Ok(false);
    }
    let clamp = |v: i64| {
        if v < 0 {
            (v + size).max(0)
        } else {
            v.min(size)
        }
    };
    let (start, step, count) = if select {
        let Some(i) = ctx.int_of(arg(node, 3, "index")) else {
            return Ok(false);
        };
        let i = if i < 0 { i + size } else { i };
        if !(0..size).contains(&i) {
            return Ok(false);
        }
        (i, 1, 1)
    } else {
        let start = match arg(node, 3, "start") {
            Arg::None => 0,
            a => match ctx.int_of(a) {
                Some(v) => clamp(v),
                None => return Ok(false),
            },
        };
        let end = match arg(node, 4, "end") {
            Arg::None => size,
            a => match ctx.int_of(a) {
                Some(v) => clamp(v),
                None => return Ok(false),
            },
        };
        let step = arg(node, 5, "step").as_int().unwrap_or(1);
        if step <= 0 {
            return Ok(false);
        }
        let count = if end > start {
            (end - start + step - 1) / step
        } else {
            0
        };
        (start, step, count)
    };
    let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
    let src = arg(node, 1, "src").clone();
    let sm = meta(ctx, &src)?.clone();
    if count == 0 {
        let v = ctx.alias(x)?;
        ctx.set(v);
        return Ok(true);
    }
    let mut s = operand(ctx, &src, dt, "src")?;
    let mut udims = m.dims.clone();
    udims[dim as usize] = count;
    if select {
        // select_scatter's src lacks `dim`.
        s = ctx.helper(
            &format!("{}/src_unsqueeze", node.name),
            "Unsqueeze",
            &[("x", s)],
            TensorDesc::new(&udims, dt, Format::ND),
            [("axes", ints(vec![dim]))],
        )?;
    } else if sm.dims.len() != rank {
        return Ok(false);
    }
    let positions: Vec<i64> = (0..count).map(|i| start + step * i).collect();
    let mut pdims = vec![1i64; rank];
    pdims[dim as usize] = count;
    let pos = ctx.const_i64(&format!("{}/positions", node.name), &positions, &pdims)?;
    let sdims: Vec<i64> = if select {
        udims.to_vec()
    } else {
        sm.dims.to_vec()
    };
    let items: Vec<Arg> = if sdims.iter().all(|&d| d >= 0) {
        sdims.iter().map(|&d| Arg::Int(d)).collect()
    } else {
        Vec::new()
    };
    let shape = if items.is_empty() {
        shape_of(ctx, s, rank, "src_shape")?
    } else {
        ctx.int_list_tensor(&items, &format!("{}/src_shape", node.name))?
    };
    let idx = ctx.helper(
        &format!("{}/indices", node.name),
        "Expand",
        &[("x", pos), ("shape", shape)],
        TensorDesc::new(&sdims, DataType::INT64, Format::ND),
        [],
    )?;
    let xi = operand(ctx, x, dt, "x")?;
    let id = ctx.add(
        "ScatterElements",
        &[("data", xi), ("indices", idx), ("updates", s)],
        &["y"],
        attrs([
            ("axis", AttrValue::Int(dim)),
            ("reduction", AttrValue::String("none".into())),
        ]),
    )?;
    set(ctx, (id, 0))
}

/// `x & y`, `x | y`, `x ^ y` (`__and__` …, `bitwise_*` of integers): logical ops on bools,
/// `Bitwise*` on integers.
fn bitwise(ctx: &mut Ctx<'_>, node: &FxNode<'_>, op: &str) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    let dt = om.dtype.unwrap_or(DataType::BOOL);
    let ge = match (op, dt == DataType::BOOL) {
        ("and", true) => "LogicalAnd",
        ("or", true) => "LogicalOr",
        ("xor", true) => "LogicalXor",
        ("and", false) => "BitwiseAnd",
        ("or", false) => "BitwiseOr",
        ("xor", false) => "BitwiseXor",
        _ => return Ok(false),
    };
    if dt != DataType::BOOL
        && !matches!(
            dt,
            DataType::INT64 | DataType::INT32 | DataType::INT8 | DataType::UINT8 | DataType::INT16
        )
    {
        return Ok(false);
    }
    let a = operand(ctx, arg(node, 0, "self"), dt, "x1")?;
    let b = operand(ctx, arg(node, 1, "other"), dt, "x2")?;
    let id = ctx.add(ge, &[("x1", a), ("x2", b)], &["y"], AttrMap::new())?;
    set(ctx, (id, 0))
}

/// Map an indexing or creation op; `None` when `op` is none of them.
pub(crate) fn map(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    op: &str,
    overload: &str,
    x: &Arg<'_>,
) -> TorchResult<Option<bool>> {
    let r = match op {
        "gather" => gather(ctx, node, x)?,
        "index" if overload == "Tensor" => {
            if !index_leading(ctx, node, x)? {
                return Ok(None);
            }
            true
        }
        "repeat" => repeat(ctx, node, x)?,
        "copy" => copy(ctx, node, x)?,
        "slice_scatter" => scatter(ctx, node, x, false)?,
        "select_scatter" => scatter(ctx, node, x, true)?,
        "__and__" | "bitwise_and" => bitwise(ctx, node, "and")?,
        "__or__" | "bitwise_or" => bitwise(ctx, node, "or")?,
        "__xor__" | "bitwise_xor" | "logical_xor" => bitwise(ctx, node, "xor")?,
        _ => return Ok(None),
    };
    Ok(Some(r))
}
