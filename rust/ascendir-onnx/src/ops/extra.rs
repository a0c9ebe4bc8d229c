//! Bit shifts, losses, RMS normalization, grid sampling and quantization: ONNX BitShift,
//! SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, RMSNormalization, GridSample and
//! QuantizeLinear, ScatterElements, the bitwise ops, Swish, Hardmax and Shrink ↔ GE LeftShift / RightShift, SoftmaxCrossEntropyLoss, NLLLoss,
//! RmsNorm, GridSampler2D / GridSampler3D, Quantize, ScatterElements, BitwiseAnd / BitwiseOr /
//! BitwiseXor / Invert, Swish, HardMax and HardShrink / SoftShrink (these families only need an opset check on export).
//!
//! Only the forms with an exact GE equivalent map; the others stay `onnx::<OpType>`.

use std::borrow::Cow;

use ascendir_ir::{AttrMap, AttrValue, DataType};

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{
    a_float, a_int, a_str, bool_of, float_of, get, get_f, get_i, get_s, input, int_of, str_of,
};
use super::table::Entry;
use super::{Emitted, Exported, Handled, InputInfo, Mapped};

/// The ignore index a loss gets when the ONNX node has none. ONNX then ignores nothing, and a
/// valid label is never negative, so any negative index keeps the meaning; GE's
/// SoftmaxCrossEntropyLoss defaults to 0 (a valid label), its NLLLoss to this value.
const NO_IGNORE_INDEX: i64 = -100;

fn all_outputs(m: &mut Mapped, names: &[&'static str]) {
    m.outputs = names.iter().map(|n| Cow::Borrowed(*n)).collect();
}

/// The GE `Quantize.dtype` name of an ONNX quantized element type.
fn quantize_dtype(dt: DataType) -> Option<&'static str> {
    match dt {
        DataType::INT8 => Some("torch.qint8"),
        DataType::UINT8 => Some("torch.quint8"),
        _ => None,
    }
}

/// Import: the GE form of an ONNX node of this family.
/// The attributes ONNX's losses and GE's share: `reduction` (ONNX's default "mean") and
/// `ignore_index` (none: [`NO_IGNORE_INDEX`]).
fn loss_attrs(node: &pb::NodeProto, a: &mut AttrMap) {
    a.insert(
        "reduction",
        AttrValue::String(get_s(node, "reduction").unwrap_or_else(|| "mean".into())),
    );
    a.insert(
        "ignore_index",
        AttrValue::Int(get_i(node, "ignore_index", NO_IGNORE_INDEX)),
    );
}

pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let rank = |i: usize| input(node, i).and_then(|x| info.rank(x));
    let dims = |i: usize| input(node, i).and_then(|x| info.dims(x));
    let dtype = |i: usize| input(node, i).and_then(|x| info.dtype(x));
    let a = &mut m.attrs;
    match e.onnx {
        "Gelu" => {
            // ONNX's default is the exact Gelu; GE's (no attribute) the tanh form.
            if get_s(node, "approximate").as_deref() != Some("tanh") {
                a.insert("approximate", AttrValue::String("none".into()));
            }
        }
        "BitShift" => match get_s(node, "direction").as_deref() {
            Some("LEFT") => m.ge_type = "LeftShift".into(),
            Some("RIGHT") => m.ge_type = "RightShift".into(),
            _ => return Ok(Handled::Unmapped),
        },
        "SoftmaxCrossEntropyLoss" => {
            loss_attrs(node, a);
            all_outputs(m, &["loss", "log_prop"]);
        }
        "NegativeLogLikelihoodLoss" => {
            // GE's NLLLoss takes (N, C) with (N) targets or (N, C, H, W) with (N, H, W).
            match (rank(0), rank(1)) {
                (Some(2), Some(1)) | (Some(4), Some(3)) => {}
                _ => return Ok(Handled::Unmapped),
            }
            loss_attrs(node, a);
            all_outputs(m, &["y", "total_weight"]);
        }
        "RMSNormalization" => {
            // GE's RmsNorm normalizes over the trailing dims gamma has, and gamma has exactly
            // those dims (ONNX's scale may broadcast); it computes in float32 (ONNX's default
            // stash_type 1).
            let (Some(x), Some(s)) = (dims(0), dims(1)) else {
                return Ok(Handled::Unmapped);
            };
            let r = x.len() as i64;
            let axis = get_i(node, "axis", -1);
            let axis = if axis < 0 { axis + r } else { axis };
            if !(0..r).contains(&axis) || s.len() as i64 != r - axis {
                return Ok(Handled::Unmapped);
            }
            let same = x[axis as usize..]
                .iter()
                .zip(&s)
                .all(|(&xd, &sd)| sd > 1 || (sd == 1 && xd == 1) || (sd >= 0 && sd == xd));
            let float = matches!(
                dtype(0),
                Some(DataType::FLOAT | DataType::FLOAT16 | DataType::BF16)
            );
            if !same || !float || get_i(node, "stash_type", 1) != 1 {
                return Ok(Handled::Unmapped);
            }
            a.insert("epsilon", AttrValue::Float(get_f(node, "epsilon", 1e-5)));
            all_outputs(m, &["y", "rstd"]);
        }
        "GridSample" => {
            let default = if opset >= 20 { "linear" } else { "bilinear" };
            let mode = get_s(node, "mode").unwrap_or_else(|| default.into());
            let spatial3 = match rank(0) {
                Some(4) => false,
                Some(5) => true,
                _ => return Ok(Handled::Unmapped),
            };
            let mode = match mode.as_str() {
                "linear" | "bilinear" => "bilinear",
                "nearest" => "nearest",
                "cubic" | "bicubic" if !spatial3 => "bicubic",
                _ => return Ok(Handled::Unmapped),
            };
            let padding = get_s(node, "padding_mode").unwrap_or_else(|| "zeros".into());
            if !matches!(padding.as_str(), "zeros" | "border" | "reflection") {
                return Ok(Handled::Unmapped);
            }
            m.ge_type = if spatial3 {
                "GridSampler3D"
            } else {
                "GridSampler2D"
            }
            .into();
            a.insert("interpolation_mode", AttrValue::String(mode.into()));
            a.insert("padding_mode", AttrValue::String(padding));
            a.insert(
                "align_corners",
                AttrValue::Bool(get_i(node, "align_corners", 0) != 0),
            );
        }
        "QuantizeLinear" => {
            // GE's Quantize: round(x / scales) + zero_points (half to even), saturated; per
            // tensor or along `axis`. Blocked scales and the other output types stay ONNX ops.
            if get_i(node, "block_size", 0) != 0 {
                return Ok(Handled::Unmapped);
            }
            let out = match (get(node, "output_dtype"), input(node, 2)) {
                (Some(t), _) if t.i != 0 => crate::types::ge_dtype(t.i as i32),
                (_, Some(_)) => match dtype(2) {
                    Some(d) => d,
                    None => return Ok(Handled::Unmapped),
                },
                _ => DataType::UINT8,
            };
            let Some(name) = quantize_dtype(out) else {
                return Ok(Handled::Unmapped);
            };
            let x_ok = matches!(
                dtype(0),
                Some(DataType::FLOAT | DataType::FLOAT16 | DataType::BF16)
            );
            let s_ok = matches!(dtype(1), Some(DataType::FLOAT | DataType::BF16));
            let per_axis = rank(1).is_some_and(|r| r > 0);
            if !x_ok || !s_ok || rank(1).is_none_or(|r| r > 1) {
                return Ok(Handled::Unmapped);
            }
            if per_axis && rank(0).is_none() {
                return Ok(Handled::Unmapped);
            }
            a.insert("dtype", AttrValue::String(name.into()));
            a.insert("axis", AttrValue::Int(get_i(node, "axis", 1)));
        }
        "ScatterElements" | "Scatter" => {
            // GE's reductions: none, add, mul (ONNX's max / min stay ONNX ops).
            let reduction = get_s(node, "reduction").unwrap_or_else(|| "none".into());
            if !matches!(reduction.as_str(), "none" | "add" | "mul") {
                return Ok(Handled::Unmapped);
            }
            a.insert("axis", AttrValue::Int(get_i(node, "axis", 0)));
            a.insert("reduction", AttrValue::String(reduction));
        }
        "Shrink" => {
            // Bias 0 is GE's HardShrink, bias = lambd its SoftShrink (a non-negative lambd, a
            // float input); other biases stay ONNX ops.
            let lambd = get_f(node, "lambd", 0.5);
            let bias = get_f(node, "bias", 0.0);
            let float = matches!(dtype(0), Some(DataType::FLOAT | DataType::FLOAT16));
            if !float || lambd.is_nan() || lambd < 0.0 {
                return Ok(Handled::Unmapped);
            }
            if bias == lambd && bias != 0.0 {
                m.ge_type = "SoftShrink".into();
            } else if bias != 0.0 {
                return Ok(Handled::Unmapped);
            }
            a.insert("lambd", AttrValue::Float(lambd));
        }
        "Hardmax" => {
            // Opset 13's Hardmax works along one axis, as GE's HardMax; older ones flatten the
            // input to 2-D from `axis` on.
            if opset < 13 {
                return Ok(Handled::Unmapped);
            }
            a.insert("axis", AttrValue::Int(get_i(node, "axis", -1)));
        }
        _ => return Ok(Handled::NotMine),
    }
    Ok(Handled::Mapped)
}

/// Export: the ONNX form of a GE op of this family at `opset`.
pub(super) fn export<'a>(
    ge_type: &'a str,
    attrs: &AttrMap,
    _input_ports: &[&str],
    opset: i64,
    em: &mut Emitted,
) -> OnnxResult<Exported<'a>> {
    let at = &mut em.attrs;
    let onnx = match ge_type {
        "LeftShift" | "RightShift" => {
            let dir = if ge_type == "LeftShift" {
                "LEFT"
            } else {
                "RIGHT"
            };
            at.push(a_str("direction", dir));
            "BitShift"
        }
        "SoftmaxCrossEntropyLoss" | "NLLLoss" => {
            if opset < 12 {
                return Ok(Exported::Unmapped);
            }
            at.push(a_str(
                "reduction",
                str_of(attrs, "reduction").unwrap_or("mean"),
            ));
            // GE's defaults: 0 for SoftmaxCrossEntropyLoss, -100 for NLLLoss.
            let default = if ge_type == "NLLLoss" { -100 } else { 0 };
            at.push(a_int(
                "ignore_index",
                int_of(attrs, "ignore_index").unwrap_or(default),
            ));
            if ge_type == "NLLLoss" {
                "NegativeLogLikelihoodLoss"
            } else {
                "SoftmaxCrossEntropyLoss"
            }
        }
        "RmsNorm" => {
            if opset < 23 {
                return Ok(Exported::Unmapped);
            }
            // The axis comes from gamma's rank (the exporter adds it).
            at.push(a_float(
                "epsilon",
                float_of(attrs, "epsilon").unwrap_or(1e-6),
            ));
            "RMSNormalization"
        }
        "GridSampler2D" | "GridSampler3D" => {
            if opset < 16 || (ge_type == "GridSampler3D" && opset < 20) {
                return Ok(Exported::Unmapped);
            }
            let mode = str_of(attrs, "interpolation_mode").unwrap_or("bilinear");
            let mode = match (mode, opset >= 20) {
                ("bilinear", true) => "linear",
                ("bicubic", true) => "cubic",
                ("bilinear" | "bicubic" | "nearest", _) => mode,
                _ => return Ok(Exported::Unmapped),
            };
            at.push(a_str("mode", mode));
            at.push(a_str(
                "padding_mode",
                str_of(attrs, "padding_mode").unwrap_or("zeros"),
            ));
            at.push(a_int(
                "align_corners",
                i64::from(bool_of(attrs, "align_corners")),
            ));
            "GridSample"
        }
        "Quantize" => {
            let out = match str_of(attrs, "dtype") {
                Some("torch.qint8") => DataType::INT8,
                Some("torch.quint8") => DataType::UINT8,
                _ => return Ok(Exported::Unmapped),
            };
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(1)));
            // Without a zero point ONNX quantizes to uint8; int8 needs the type said.
            if out == DataType::INT8 && em.inputs.len() < 3 {
                if opset < 21 {
                    return Ok(Exported::Unmapped);
                }
                if let Some(t) = crate::types::onnx_dtype(out) {
                    at.push(a_int("output_dtype", i64::from(t)));
                }
            }
            "QuantizeLinear"
        }
        "ScatterElements" => {
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(0)));
            let reduction = str_of(attrs, "reduction").unwrap_or("none");
            if reduction != "none" {
                if opset < 16 {
                    return Ok(Exported::Unmapped);
                }
                at.push(a_str("reduction", reduction));
            }
            // ScatterElements is opset 11's name for Scatter.
            if opset < 11 {
                "Scatter"
            } else {
                "ScatterElements"
            }
        }
        "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" | "Invert" => {
            if opset < 18 {
                return Ok(Exported::Unmapped);
            }
            match ge_type {
                "Invert" => "BitwiseNot",
                other => other,
            }
        }
        "HardShrink" | "SoftShrink" => {
            let lambd = float_of(attrs, "lambd").unwrap_or(0.5);
            at.push(a_float("lambd", lambd));
            let bias = if ge_type == "SoftShrink" { lambd } else { 0.0 };
            at.push(a_float("bias", bias));
            "Shrink"
        }
        "HardMax" => {
            if opset < 13 {
                return Ok(Exported::Unmapped);
            }
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(-1)));
            "Hardmax"
        }
        "Gelu" => {
            // GE's Gelu is the tanh form unless `approximate` is "none"; ONNX's default is
            // the exact one (opset 20 on; earlier opsets get the formula, `composite`).
            let exact = str_of(attrs, "approximate") == Some("none");
            at.push(a_str("approximate", if exact { "none" } else { "tanh" }));
            "Gelu"
        }
        "Swish" => {
            if opset < 24 {
                return Ok(Exported::Unmapped);
            }
            at.push(a_float("alpha", float_of(attrs, "scale").unwrap_or(1.0)));
            "Swish"
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}
