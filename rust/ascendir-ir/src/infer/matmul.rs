//! Matrix products: MatMul / MatMulV2 (2-D), BatchMatMul(V2) (broadcast batch dims),
//! FullyConnection, FlashAttentionScore.

use super::shape::{broadcast, merge_dim, rank_unknown, unknown_rank};
use super::{InferCtx, OutDesc, RuleResult};
use crate::format::Format;
use crate::tensor::{Shape, UNKNOWN_DIM};

/// `a @ b` with optional transposes (attributes named by `transpose_a` / `transpose_b`,
/// defaults `transpose_x1` / `transpose_x2`). `batch`: leading dims broadcast, 1-D operands
/// are promoted as numpy does.
pub fn matmul(ctx: &InferCtx<'_>, batch: bool) -> RuleResult {
    let a = ctx.input_param("a", "x1")?;
    let b = ctx.input_param("b", "x2")?;
    let ta = ctx.attr_bool(ctx.param_or("transpose_a", "transpose_x1"), false);
    let tb = ctx.attr_bool(ctx.param_or("transpose_b", "transpose_x2"), false);
    let dtype = ctx.out_dtype(a)?;
    let (sa, sb) = (ctx.shape(a), ctx.shape(b));
    if unknown_rank(sa) || unknown_rank(sb) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    if !batch && (sa.len() != 2 || sb.len() != 2) {
        return Err(format!("needs 2-D operands, got {sa:?} and {sb:?}"));
    }
    let a_vec = sa.len() == 1;
    let b_vec = sb.len() == 1;
    if sa.is_empty() || sb.is_empty() {
        return Err(format!(
            "operands must have rank >= 1, got {sa:?} and {sb:?}"
        ));
    }
    let ma: Vec<i64> = if a_vec { vec![1, sa[0]] } else { sa.to_vec() };
    let mb: Vec<i64> = if b_vec { vec![sb[0], 1] } else { sb.to_vec() };
    let (ra, rb) = (ma.len(), mb.len());
    let (m, ka) = if ta && !a_vec {
        (ma[ra - 1], ma[ra - 2])
    } else {
        (ma[ra - 2], ma[ra - 1])
    };
    let (kb, n) = if tb && !b_vec {
        (mb[rb - 1], mb[rb - 2])
    } else {
        (mb[rb - 2], mb[rb - 1])
    };
    if merge_dim(ka, kb).is_none() {
        return Err(format!(
            "inner dimensions differ: {ka} vs {kb} (shapes {sa:?}{} and {sb:?}{})",
            if ta { " transposed" } else { "" },
            if tb { " transposed" } else { "" }
        ));
    }
    let batch_dims = if batch {
        broadcast(&ma[..ra - 2], &mb[..rb - 2])?
    } else {
        let longer = if ra >= rb {
            &ma[..ra - 2]
        } else {
            &mb[..rb - 2]
        };
        Shape::from_slice(longer)
    };
    let mut out = batch_dims;
    if !a_vec {
        out.push(m);
    }
    if !b_vec {
        out.push(n);
    }
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// `FullyConnection`: `x[..axis] + [num_output]`; a 4-D `x` with axis 1 gives
/// `[N, num_output, 1, 1]` (NCHW) or `[N, 1, 1, num_output]` (NHWC), as GE does.
pub fn fully_connection(ctx: &InferCtx<'_>) -> RuleResult {
    let x = ctx.input_param("x", "x")?;
    let shape = ctx.shape(x);
    let dtype = ctx.out_dtype(x)?;
    if unknown_rank(shape) {
        return Ok(ctx.all_outputs(OutDesc::new(rank_unknown(), dtype)));
    }
    let num_output = ctx.attr_int("num_output", UNKNOWN_DIM);
    let axis = super::shape::norm_axis(ctx.attr_int("axis", 1), shape.len())?;
    let out: Shape = if shape.len() == 4 && axis == 1 {
        if ctx.format(x) == Format::NHWC {
            Shape::from_slice(&[shape[0], 1, 1, num_output])
        } else {
            Shape::from_slice(&[shape[0], num_output, 1, 1])
        }
    } else {
        let mut s = Shape::from_slice(&shape[..axis]);
        s.push(num_output);
        s
    };
    Ok(ctx.all_outputs(OutDesc::new(out, dtype)))
}

/// GE's `FlashAttentionScore`: `attention_out` is the query's shape with the value's head
/// size; `softmax_max` / `softmax_sum` are float32 `[B, N, Sq, 8]`; `softmax_out` (reserved)
/// is `[0]`. Layouts `BNSD`, `BSND`, `BSH` and `SBH` (`head_num` splits H).
pub fn flash_attention(ctx: &InferCtx<'_>) -> RuleResult {
    let q = ctx.input("query")?;
    let v = ctx.input("value")?;
    let dtype = ctx.dtype(q);
    let (sq, sv) = (ctx.shape(q), ctx.shape(v));
    let layout = ctx.attr_str("input_layout", "BSH");
    let heads = ctx.attr_int("head_num", 0);
    let stats_dtype = crate::dtype::DataType::FLOAT;
    let reserved = OutDesc::new(Shape::from_slice(&[0]), dtype);
    if unknown_rank(sq) || unknown_rank(sv) {
        let u = OutDesc::new(rank_unknown(), stats_dtype);
        return Ok(vec![
            u.clone(),
            u,
            reserved,
            OutDesc::new(rank_unknown(), dtype),
        ]);
    }
    let need = |r: usize| -> Result<(), String> {
        if sq.len() == r && sv.len() == r {
            Ok(())
        } else {
            Err(format!(
                "layout {layout} needs rank-{r} query and value, got {sq:?} and {sv:?}"
            ))
        }
    };
    // (B, N, Sq) and the output shape.
    let (b, n, s, out): (i64, i64, i64, Vec<i64>) = match layout {
        "BNSD" => {
            need(4)?;
            (sq[0], sq[1], sq[2], vec![sq[0], sq[1], sq[2], sv[3]])
        }
        "BSND" => {
            need(4)?;
            (sq[0], sq[2], sq[1], vec![sq[0], sq[1], sq[2], sv[3]])
        }
        "BSH" | "SBH" => {
            need(3)?;
            if heads < 1 {
                return Err(format!("layout {layout} needs head_num >= 1, got {heads}"));
            }
            let (b, s) = if layout == "BSH" {
                (sq[0], sq[1])
            } else {
                (sq[1], sq[0])
            };
            (b, heads, s, vec![sq[0], sq[1], sv[2]])
        }
        other => return Err(format!("unknown input_layout '{other}'")),
    };
    let stats = OutDesc::new(Shape::from_slice(&[b, n, s, 8]), stats_dtype);
    Ok(vec![
        stats.clone(),
        stats,
        reserved,
        OutDesc::new(Shape::from_slice(&out), dtype),
    ])
}
