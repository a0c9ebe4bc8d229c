//! Transposed convolution and recurrences: ONNX ConvTranspose (2-D, NCHW), LSTM and GRU ↔ GE
//! Conv2DTransposeD, CommonLSTM and CommonGRU.
//!
//! GE's op takes the output size (`input_size`, NCHW) as an attribute and crops the full
//! transposed convolution from the top / left pads on. The import computes that size from the
//! node's shapes, strides, dilations, pads (or auto_pad) and output_padding, so it maps only
//! where the input and filter dims are known (an `output_shape` gives the size, and the pads
//! follow ONNX's rule for it).

use ascendir_ir::{AttrMap, AttrValue};

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{a_int, a_ints, a_str, get_i, get_ints, get_s, input, int_of, ints_of, str_of};
use super::table::Entry;
use super::{Emitted, Exported, Handled, InputInfo, Mapped};

/// One spatial axis of a transposed convolution.
#[derive(Clone, Copy)]
struct Axis {
    /// Input length.
    len: i64,
    /// Kernel size.
    k: i64,
    /// Stride.
    s: i64,
    /// Dilation.
    d: i64,
    /// Output padding.
    op: i64,
}

/// One spatial axis: `(pad_begin, pad_end, output size)`, or `None` when it does not fit.
fn axis_size(
    ax: &Axis,
    pads: (i64, i64),
    auto: &str,
    target: Option<i64>,
) -> Option<(i64, i64, i64)> {
    let Axis { len, k, s, d, op } = *ax;
    // The full output: s * (len - 1) + output_padding + (k - 1) * d + 1.
    let full = s
        .checked_mul(len.checked_sub(1)?)?
        .checked_add(op)?
        .checked_add(k.checked_sub(1)?.checked_mul(d)?)?
        .checked_add(1)?;
    if let Some(out) = target {
        // ONNX's rule for an output_shape: the padding the size leaves, the odd element at
        // the start unless SAME_UPPER.
        let total = full.checked_sub(out)?;
        if total < 0 || out <= 0 || auto == "VALID" {
            return None;
        }
        let half = total / 2;
        let (b, e) = if auto == "SAME_UPPER" {
            (half, total - half)
        } else {
            (total - half, half)
        };
        return Some((b, e, out));
    }
    let (b, e) = match auto {
        "NOTSET" => pads,
        "VALID" => (0, 0),
        "SAME_UPPER" | "SAME_LOWER" => {
            let total = full.checked_sub(len.checked_mul(s)?)?;
            if total < 0 {
                return None;
            }
            let half = total / 2;
            if auto == "SAME_UPPER" {
                (half, total - half)
            } else {
                (total - half, half)
            }
        }
        _ => return None,
    };
    let out = full.checked_sub(b)?.checked_sub(e)?;
    (b >= 0 && e >= 0 && out > 0).then_some((b, e, out))
}

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    _opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    if matches!(e.onnx, "LSTM" | "GRU") {
        return rnn_import(e, node, m);
    }
    if e.onnx != "ConvTranspose" {
        return Ok(Handled::NotMine);
    }
    let dims = |i: usize| input(node, i).and_then(|x| info.dims(x));
    let (Some(x), Some(w)) = (dims(0), dims(1)) else {
        return Ok(Handled::Unmapped);
    };
    if x.len() != 4 || w.len() != 4 || x.iter().chain(&w).any(|&v| v <= 0) {
        return Ok(Handled::Unmapped);
    }
    // The output's spatial dims (ONNX also allows the whole shape).
    let target = match get_ints(node, "output_shape") {
        None => None,
        Some(v) if v.len() == 2 => Some(v),
        Some(v) if v.len() == 4 => Some(v[2..].to_vec()),
        Some(_) => return Ok(Handled::Unmapped),
    };
    let two = |name: &str, default: i64| -> Option<Vec<i64>> {
        let v = get_ints(node, name).unwrap_or_else(|| vec![default; 2]);
        (v.len() == 2).then_some(v)
    };
    let (Some(s), Some(d), Some(op)) = (
        two("strides", 1),
        two("dilations", 1),
        two("output_padding", 0),
    ) else {
        return Ok(Handled::Unmapped);
    };
    if let Some(ks) = get_ints(node, "kernel_shape") {
        if ks.as_slice() != &w[2..] {
            return Ok(Handled::Unmapped);
        }
    }
    let pads = get_ints(node, "pads").unwrap_or_else(|| vec![0; 4]);
    if pads.len() != 4 {
        return Ok(Handled::Unmapped);
    }
    let auto = get_s(node, "auto_pad").unwrap_or_else(|| "NOTSET".into());
    let group = get_i(node, "group", 1);
    let Some(c_out) = w[1].checked_mul(group).filter(|_| group > 0) else {
        return Ok(Handled::Unmapped);
    };
    let mut ge_pads = Vec::with_capacity(4);
    let mut size = vec![x[0], c_out];
    for i in 0..2 {
        let ax = Axis {
            len: x[2 + i],
            k: w[2 + i],
            s: s[i],
            d: d[i],
            op: op[i],
        };
        let Some((b, e, out)) = axis_size(
            &ax,
            (pads[i], pads[2 + i]),
            &auto,
            target.as_ref().map(|t| t[i]),
        ) else {
            return Ok(Handled::Unmapped);
        };
        ge_pads.extend([b, e]);
        size.push(out);
    }
    let a = &mut m.attrs;
    a.insert("input_size", AttrValue::ListInt(size));
    a.insert("strides", AttrValue::ListInt(vec![1, 1, s[0], s[1]]));
    a.insert("pads", AttrValue::ListInt(ge_pads));
    a.insert("dilations", AttrValue::ListInt(vec![1, 1, d[0], d[1]]));
    a.insert("groups", AttrValue::Int(group));
    a.insert("data_format", AttrValue::String("NCHW".into()));
    a.insert(
        "output_padding",
        AttrValue::ListInt(vec![0, 0, op[0], op[1]]),
    );
    a.insert("offset_x", AttrValue::Int(0));
    Ok(Handled::Mapped)
}

/// Export: the ONNX form of a GE op of this family at `opset`.
pub(super) fn export<'a>(
    ge_type: &'a str,
    attrs: &AttrMap,
    _input_ports: &[&str],
    _opset: i64,
    em: &mut Emitted,
) -> OnnxResult<Exported<'a>> {
    if matches!(ge_type, "CommonLSTM" | "CommonGRU") {
        return rnn_export(ge_type, attrs, em);
    }
    if ge_type != "Conv2DTransposeD" {
        return Ok(Exported::NotMine);
    }
    let four = |name: &str, default: i64| {
        ints_of(attrs, name)
            .unwrap_or_else(|| vec![default; 4])
            .into_iter()
            .collect::<Vec<_>>()
    };
    let (s, d, p, op) = (
        four("strides", 1),
        four("dilations", 1),
        four("pads", 0),
        four("output_padding", 0),
    );
    let nchw = str_of(attrs, "data_format") == Some("NCHW");
    if !nchw || s.len() != 4 || d.len() != 4 || p.len() != 4 || op.len() != 4 {
        return Ok(Exported::Unmapped);
    }
    if int_of(attrs, "offset_x").is_some_and(|v| v != 0) {
        return Ok(Exported::Unmapped);
    }
    let at = &mut em.attrs;
    at.push(a_ints("strides", s[2..].to_vec()));
    at.push(a_ints("dilations", d[2..].to_vec()));
    // GE's [top, bottom, left, right] as ONNX's [top, left, bottom, right].
    at.push(a_ints("pads", vec![p[0], p[2], p[1], p[3]]));
    at.push(a_ints("output_padding", op[2..].to_vec()));
    at.push(a_int("group", int_of(attrs, "groups").unwrap_or(1)));
    Ok(Exported::As("ConvTranspose"))
}

/// LSTM / GRU with ONNX's default activations, no clip, no coupled input-forget gate and the
/// time-major layout: GE's CommonLSTM / CommonGRU (the same ports and attributes).
fn rnn_import(e: &Entry, node: &pb::NodeProto, m: &mut Mapped) -> OnnxResult<Handled> {
    let custom = ["activations", "activation_alpha", "activation_beta", "clip"]
        .iter()
        .any(|n| node.attribute.iter().any(|a| a.name == *n));
    let hidden = get_i(node, "hidden_size", 0);
    if custom || hidden <= 0 || get_i(node, "layout", 0) != 0 || get_i(node, "input_forget", 0) != 0
    {
        return Ok(Handled::Unmapped);
    }
    let direction = get_s(node, "direction").unwrap_or_else(|| "forward".into());
    if !matches!(direction.as_str(), "forward" | "reverse" | "bidirectional") {
        return Ok(Handled::Unmapped);
    }
    let a = &mut m.attrs;
    a.insert("hidden_size", AttrValue::Int(hidden));
    a.insert("direction", AttrValue::String(direction));
    if e.onnx == "GRU" {
        a.insert(
            "linear_before_reset",
            AttrValue::Int(get_i(node, "linear_before_reset", 0)),
        );
    }
    Ok(Handled::Mapped)
}

fn rnn_export<'a>(ge_type: &'a str, attrs: &AttrMap, em: &mut Emitted) -> OnnxResult<Exported<'a>> {
    let custom = ["activations", "activation_alpha", "activation_beta"]
        .iter()
        .any(|n| match attrs.get(n) {
            Some(AttrValue::ListFloat(v)) => !v.is_empty(),
            Some(AttrValue::ListString(v)) => !v.is_empty(),
            Some(AttrValue::ListInt(v)) => !v.is_empty(),
            Some(_) => true,
            None => false,
        });
    let clip = matches!(attrs.get("clip"), Some(AttrValue::Float(c)) if *c >= 0.0);
    let Some(hidden) = int_of(attrs, "hidden_size") else {
        return Ok(Exported::Unmapped);
    };
    if custom || clip || int_of(attrs, "input_forget").is_some_and(|v| v != 0) {
        return Ok(Exported::Unmapped);
    }
    let at = &mut em.attrs;
    at.push(a_int("hidden_size", hidden));
    at.push(a_str(
        "direction",
        str_of(attrs, "direction").unwrap_or("forward"),
    ));
    if ge_type == "CommonGRU" {
        at.push(a_int(
            "linear_before_reset",
            int_of(attrs, "linear_before_reset").unwrap_or(0),
        ));
        return Ok(Exported::As("GRU"));
    }
    Ok(Exported::As("LSTM"))
}
