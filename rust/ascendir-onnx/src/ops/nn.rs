//! Convolution and pooling: ONNX Conv, MaxPool and AveragePool ↔ GE Conv2D, MaxPoolV3 and
//! AvgPoolV2 (Conv3D, MaxPool3D and AvgPool3D for 3-D windows; NCHW attribute lists, pads in
//! GE's order, auto_pad ↔ padding modes).

use ascendir_ir::{AttrMap, AttrValue};

use crate::error::{OnnxError, OnnxResult};
use crate::pb;

use super::attrs::{
    a_int, a_ints, a_str, bool_of, get_i, get_ints, get_s, input, int_of, ints_of, str_of,
};
use super::table::Entry;
use super::{Emitted, Exported, Handled, InputInfo, Mapped};

fn nchw(spatial: &[i64], fill: i64) -> Vec<i64> {
    let mut v = vec![fill, fill];
    v.extend_from_slice(spatial);
    v
}

/// ONNX pads `[b1.., e1..]` → GE `[b1, e1, b2, e2, ...]` (top, bottom, left, right for 2-D).
fn ge_pads(onnx: &[i64], spatial: usize) -> Vec<i64> {
    let mut v = Vec::with_capacity(spatial * 2);
    for i in 0..spatial {
        v.push(onnx.get(i).copied().unwrap_or(0));
        v.push(onnx.get(i + spatial).copied().unwrap_or(0));
    }
    v
}

/// Inverse of [`ge_pads`].
fn onnx_pads(ge: &[i64]) -> Vec<i64> {
    let spatial = ge.len() / 2;
    let mut v = vec![0; spatial * 2];
    for i in 0..spatial {
        v[i] = ge[2 * i];
        v[i + spatial] = ge[2 * i + 1];
    }
    v
}

fn auto_pad(node: &pb::NodeProto, attrs: &mut AttrMap, key: &str) {
    if let Some(p) = get_s(node, "auto_pad") {
        let mode = match p.as_str() {
            "SAME_UPPER" => "SAME",
            "SAME_LOWER" => "SAME_LOWER",
            "VALID" => "VALID",
            _ => return,
        };
        attrs.insert(key.to_string(), AttrValue::String(mode.to_string()));
    }
}

/// ONNX's SAME_LOWER pads `[b1.., e1..]` of a window over known spatial dims (the odd
/// element at the start), or `None` where a dim is unknown or the numbers do not fit.
fn same_lower_pads(dims: &[i64], k: &[i64], s: &[i64], d: &[i64]) -> Option<Vec<i64>> {
    let n = dims.len();
    if k.len() != n || s.len() != n || d.len() != n {
        return None;
    }
    let (mut begin, mut end) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let (len, ki, si, di) = (dims[i], k[i], s[i], d[i]);
        if len <= 0 || ki <= 0 || si <= 0 || di <= 0 {
            return None;
        }
        let out = len.checked_add(si - 1)? / si;
        let window = ki.checked_sub(1)?.checked_mul(di)?.checked_add(1)?;
        let total = (out - 1)
            .checked_mul(si)?
            .checked_add(window)?
            .checked_sub(len)?
            .max(0);
        begin.push(total - total / 2);
        end.push(total / 2);
    }
    begin.extend(end);
    Some(begin)
}

/// ONNX pads `[begin, end]` of a 1-D window as the pads of the same window over `[1, L]`.
fn unit_h_pads(p: &[i64]) -> Vec<i64> {
    match p {
        [b, e] => vec![0, *b, 0, *e],
        _ => vec![0, 0, 0, 0],
    }
}

/// Whether the node pads by `auto_pad` (other than `NOTSET`): the 1-D lift takes explicit
/// pads only.
fn has_auto_pad(node: &pb::NodeProto) -> bool {
    get_s(node, "auto_pad").is_some_and(|p| p != "NOTSET")
}

fn spatial(v: &[i64]) -> Vec<i64> {
    v.get(2..).map_or_else(Vec::new, <[i64]>::to_vec)
}

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    _opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let n_out = node.output.len();
    // The node name, validated only for a message (most nodes never need it).
    let name = || pb::text(&node.name);
    let a = &mut m.attrs;
    match e.onnx {
        "Conv" => {
            let k = get_ints(node, "kernel_shape")
                .map(|k| k.len())
                .or_else(|| {
                    // The weight's rank, else the input's.
                    input(node, 1)
                        .and_then(|w| info.rank(w))
                        .or_else(|| input(node, 0).and_then(|x| info.rank(x)))
                        .map(|r| r.saturating_sub(2))
                })
                .unwrap_or(2);
            if k == 3 {
                return conv_3d(node, m);
            }
            // A 1-D convolution runs as Conv2D over a unit H axis (explicit pads only).
            let one_d = k == 1 && !has_auto_pad(node);
            if k != 2 && !one_d {
                return Ok(Handled::Unmapped);
            }
            let lift = |v: Vec<i64>, unit: i64| if one_d { [vec![unit], v].concat() } else { v };
            let strides = lift(get_ints(node, "strides").unwrap_or_else(|| vec![1; k]), 1);
            let dil = lift(get_ints(node, "dilations").unwrap_or_else(|| vec![1; k]), 1);
            let pads = get_ints(node, "pads").unwrap_or_else(|| vec![0; 2 * k]);
            let pads = if one_d { unit_h_pads(&pads) } else { pads };
            a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
            a.insert("pads", AttrValue::ListInt(ge_pads(&pads, 2)));
            a.insert("dilations", AttrValue::ListInt(nchw(&dil, 1)));
            a.insert("groups", AttrValue::Int(get_i(node, "group", 1)));
            a.insert("data_format", AttrValue::String("NCHW".into()));
            a.insert("offset_x", AttrValue::Int(0));
            if let Some(ks) = get_ints(node, "kernel_shape") {
                a.insert("kernel_shape", AttrValue::ListInt(lift(ks, 1)));
            }
            auto_pad(node, a, "padding");
            if one_d {
                m.unit_h = vec![0, 1];
            }
        }
        "MaxPool" | "AveragePool" => {
            let Some(ks) = get_ints(node, "kernel_shape") else {
                return Err(OnnxError::Invalid(format!(
                    "{} '{}' has no kernel_shape",
                    e.onnx,
                    name()
                )));
            };
            // A 1-D MaxPool runs as MaxPool over a unit H axis (explicit pads only).
            let one_d = ks.len() == 1 && e.onnx == "MaxPool" && n_out == 1 && !has_auto_pad(node);
            let lift = |v: Vec<i64>, unit: i64| if one_d { [vec![unit], v].concat() } else { v };
            let ks = lift(ks, 1);
            let k = ks.len();
            if k == 3 && e.onnx == "MaxPool" && n_out == 1 && !one_d {
                return max_pool_3d(node, &ks, m);
            }
            if k == 3 && e.onnx == "AveragePool" {
                return avg_pool_3d(node, &ks, m);
            }
            if k != 2 || (e.onnx == "MaxPool" && n_out > 1) {
                return Ok(Handled::Unmapped);
            }
            // AvgPoolV2 has no dilations: that form stays an ONNX op rather than change
            // meaning.
            let dilated = get_ints(node, "dilations").is_some_and(|d| d.iter().any(|&v| v != 1));
            if e.onnx == "AveragePool" && dilated {
                return Ok(Handled::Unmapped);
            }
            let strides = match get_ints(node, "strides") {
                Some(s) => lift(s, 1),
                None => vec![1; k],
            };
            let mut pads = match get_ints(node, "pads") {
                Some(p) if one_d => unit_h_pads(&p),
                Some(p) => p,
                None => vec![0; 2 * k],
            };
            let same_lower = get_s(node, "auto_pad").as_deref() == Some("SAME_LOWER");
            if same_lower && e.onnx == "MaxPool" {
                // The explicit pads would export as asymmetric MaxPool pads, which ONNX's
                // reference evaluator sizes wrongly: MaxPool's SAME_LOWER stays an ONNX op.
                return Ok(Handled::Unmapped);
            }
            if same_lower {
                // GE's padding mode SAME pads at the end (ONNX's SAME_UPPER): SAME_LOWER
                // becomes explicit pads where the input's spatial dims are known.
                let dil = get_ints(node, "dilations").unwrap_or_else(|| vec![1; k]);
                let dims = super::attrs::input(node, 0).and_then(|x| info.dims(x));
                let lower = dims.and_then(|d| same_lower_pads(d.get(2..)?, &ks, &strides, &dil));
                match lower {
                    Some(p) if get_i(node, "ceil_mode", 0) == 0 => pads = p,
                    _ => return Ok(Handled::Unmapped),
                }
            }
            a.insert("ksize", AttrValue::ListInt(nchw(&ks, 1)));
            a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
            a.insert("pads", AttrValue::ListInt(ge_pads(&pads, k)));
            let mode = match get_s(node, "auto_pad").as_deref() {
                Some("SAME_UPPER") => "SAME",
                Some("SAME_LOWER") => "CALCULATED",
                Some("VALID") => "VALID",
                _ => "CALCULATED",
            };
            a.insert("padding_mode", AttrValue::String(mode.into()));
            a.insert("data_format", AttrValue::String("NCHW".into()));
            a.insert("global_pooling", AttrValue::Bool(false));
            a.insert(
                "ceil_mode",
                AttrValue::Bool(get_i(node, "ceil_mode", 0) != 0),
            );
            if e.onnx == "AveragePool" {
                a.insert(
                    "exclusive",
                    AttrValue::Bool(get_i(node, "count_include_pad", 0) == 0),
                );
            } else if let Some(d) = get_ints(node, "dilations") {
                a.insert("dilations", AttrValue::ListInt(nchw(&lift(d, 1), 1)));
            }
            if one_d {
                m.unit_h = vec![0];
            }
        }
        _ => return Ok(Handled::NotMine),
    }
    Ok(Handled::Mapped)
}

/// A 3-D MaxPool (one output): GE's MaxPool3D (NCDHW, pads front, back, top, bottom, left,
/// right). SAME_LOWER stays an ONNX op (GE's SAME pads at the end).
fn max_pool_3d(node: &pb::NodeProto, ks: &[i64], m: &mut Mapped) -> OnnxResult<Handled> {
    let padding = match get_s(node, "auto_pad").as_deref() {
        None | Some("NOTSET") => "CALCULATED",
        Some("SAME_UPPER") => "SAME",
        Some("VALID") => "VALID",
        _ => return Ok(Handled::Unmapped),
    };
    let strides = get_ints(node, "strides").unwrap_or_else(|| vec![1; 3]);
    let dil = get_ints(node, "dilations").unwrap_or_else(|| vec![1; 3]);
    let pads = get_ints(node, "pads").unwrap_or_else(|| vec![0; 6]);
    if strides.len() != 3 || dil.len() != 3 || pads.len() != 6 {
        return Ok(Handled::Unmapped);
    }
    m.ge_type = "MaxPool3D".into();
    let a = &mut m.attrs;
    a.insert("ksize", AttrValue::ListInt(nchw(ks, 1)));
    a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
    a.insert("padding", AttrValue::String(padding.into()));
    a.insert("pads", AttrValue::ListInt(ge_pads(&pads, 3)));
    a.insert("dilation", AttrValue::ListInt(nchw(&dil, 1)));
    a.insert("ceil_mode", AttrValue::Int(get_i(node, "ceil_mode", 0)));
    a.insert("data_format", AttrValue::String("NCDHW".into()));
    Ok(Handled::Mapped)
}

/// The explicit pads of a 3-D window: ONNX's pads for NOTSET, zeros for VALID; `None` for
/// the SAME modes (GE's 3-D ops here take explicit pads only) or lists of other lengths.
fn pads_3d(node: &pb::NodeProto) -> Option<(Vec<i64>, Vec<i64>)> {
    let pads = match get_s(node, "auto_pad").as_deref() {
        None | Some("NOTSET") => get_ints(node, "pads").unwrap_or_else(|| vec![0; 6]),
        Some("VALID") => vec![0; 6],
        _ => return None,
    };
    let strides = get_ints(node, "strides").unwrap_or_else(|| vec![1; 3]);
    (pads.len() == 6 && strides.len() == 3).then_some((pads, strides))
}

/// A 3-D Conv: GE's Conv3D (NCDHW data, OIDHW filter, pads front, back, top, bottom, left,
/// right). The SAME modes stay an ONNX op.
fn conv_3d(node: &pb::NodeProto, m: &mut Mapped) -> OnnxResult<Handled> {
    let Some((pads, strides)) = pads_3d(node) else {
        return Ok(Handled::Unmapped);
    };
    let dil = get_ints(node, "dilations").unwrap_or_else(|| vec![1; 3]);
    if dil.len() != 3 {
        return Ok(Handled::Unmapped);
    }
    m.ge_type = "Conv3D".into();
    let a = &mut m.attrs;
    a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
    a.insert("pads", AttrValue::ListInt(ge_pads(&pads, 3)));
    a.insert("dilations", AttrValue::ListInt(nchw(&dil, 1)));
    a.insert("groups", AttrValue::Int(get_i(node, "group", 1)));
    a.insert("data_format", AttrValue::String("NCDHW".into()));
    a.insert("offset_x", AttrValue::Int(0));
    if let Some(ks) = get_ints(node, "kernel_shape") {
        a.insert("kernel_shape", AttrValue::ListInt(ks));
    }
    Ok(Handled::Mapped)
}

/// A 3-D AveragePool: GE's AvgPool3D (NCDHW). Dilated windows and the SAME modes stay an ONNX
/// op.
fn avg_pool_3d(node: &pb::NodeProto, ks: &[i64], m: &mut Mapped) -> OnnxResult<Handled> {
    let dilated = get_ints(node, "dilations").is_some_and(|d| d.iter().any(|&v| v != 1));
    let Some((pads, strides)) = pads_3d(node).filter(|_| !dilated) else {
        return Ok(Handled::Unmapped);
    };
    m.ge_type = "AvgPool3D".into();
    let a = &mut m.attrs;
    a.insert("ksize", AttrValue::ListInt(nchw(ks, 1)));
    a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
    a.insert("pads", AttrValue::ListInt(ge_pads(&pads, 3)));
    a.insert(
        "ceil_mode",
        AttrValue::Bool(get_i(node, "ceil_mode", 0) != 0),
    );
    a.insert(
        "count_include_pad",
        AttrValue::Bool(get_i(node, "count_include_pad", 0) != 0),
    );
    a.insert("divisor_override", AttrValue::Int(0));
    a.insert("data_format", AttrValue::String("NCDHW".into()));
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
    // MaxPool/AveragePool got `ceil_mode` (and MaxPool `dilations`) at opset 10, AveragePool
    // `count_include_pad` at 7: before those, a default value is left out, another one has no
    // ONNX form.
    let since = |what: &str, first: i64, default: bool| -> OnnxResult<bool> {
        if opset >= first {
            Ok(true)
        } else if default {
            Ok(false)
        } else {
            Err(OnnxError::Unsupported(format!(
                "{ge_type}: {what} needs opset {first} (exporting opset {opset})"
            )))
        }
    };
    let onnx = match ge_type {
        "Conv2D" => {
            at.push(a_ints(
                "strides",
                spatial(&ints_of(attrs, "strides").unwrap_or_default()),
            ));
            at.push(a_ints(
                "dilations",
                spatial(&ints_of(attrs, "dilations").unwrap_or_default()),
            ));
            let pads = ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 4]);
            match str_of(attrs, "padding") {
                Some("SAME") => at.push(a_str("auto_pad", "SAME_UPPER")),
                Some("SAME_LOWER") => at.push(a_str("auto_pad", "SAME_LOWER")),
                Some("VALID") => at.push(a_str("auto_pad", "VALID")),
                _ => at.push(a_ints("pads", onnx_pads(&pads))),
            }
            at.push(a_int("group", int_of(attrs, "groups").unwrap_or(1)));
            if let Some(ks) = ints_of(attrs, "kernel_shape") {
                at.push(a_ints("kernel_shape", ks));
            }
            "Conv"
        }
        "Conv3D" => {
            if str_of(attrs, "data_format") != Some("NCDHW") {
                return Ok(Exported::Unmapped);
            }
            let five = |key: &str| {
                let v = ints_of(attrs, key).unwrap_or_else(|| vec![1; 5]);
                (v.len() == 5).then(|| spatial(&v))
            };
            let (Some(s), Some(d)) = (five("strides"), five("dilations")) else {
                return Ok(Exported::Unmapped);
            };
            at.push(a_ints("strides", s));
            at.push(a_ints("dilations", d));
            at.push(a_ints(
                "pads",
                onnx_pads(&ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 6])),
            ));
            at.push(a_int("group", int_of(attrs, "groups").unwrap_or(1)));
            if let Some(ks) = ints_of(attrs, "kernel_shape") {
                at.push(a_ints("kernel_shape", ks));
            }
            "Conv"
        }
        "AvgPool3D" => {
            let five = |key: &str| {
                let v = ints_of(attrs, key).unwrap_or_else(|| vec![1; 5]);
                (v.len() == 5).then(|| spatial(&v))
            };
            let (Some(k), Some(s)) = (five("ksize"), five("strides")) else {
                return Ok(Exported::Unmapped);
            };
            if str_of(attrs, "data_format") != Some("NCDHW")
                || int_of(attrs, "divisor_override").is_some_and(|v| v != 0)
            {
                return Ok(Exported::Unmapped);
            }
            at.push(a_ints("kernel_shape", k));
            at.push(a_ints("strides", s));
            at.push(a_ints(
                "pads",
                onnx_pads(&ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 6])),
            ));
            let ceil = bool_of(attrs, "ceil_mode");
            if since("ceil_mode", 10, !ceil)? {
                at.push(a_int("ceil_mode", i64::from(ceil)));
            }
            // GE's default counts the padding, ONNX's does not.
            let include = int_of(attrs, "count_include_pad").is_none_or(|v| v != 0);
            if since("count_include_pad", 7, !include)? {
                at.push(a_int("count_include_pad", i64::from(include)));
            }
            "AveragePool"
        }
        "MaxPool3D" => {
            if str_of(attrs, "data_format") != Some("NCDHW") {
                return Ok(Exported::Unmapped);
            }
            let five = |key: &str, default: i64| {
                let v = ints_of(attrs, key).unwrap_or_else(|| vec![default; 5]);
                (v.len() == 5).then(|| spatial(&v))
            };
            let (Some(k), Some(s), Some(d)) =
                (five("ksize", 1), five("strides", 1), five("dilation", 1))
            else {
                return Ok(Exported::Unmapped);
            };
            at.push(a_ints("kernel_shape", k));
            at.push(a_ints("strides", s));
            if since("dilations", 10, d.iter().all(|&v| v == 1))? {
                at.push(a_ints("dilations", d));
            }
            match str_of(attrs, "padding") {
                Some("SAME") => at.push(a_str("auto_pad", "SAME_UPPER")),
                Some("VALID") => at.push(a_str("auto_pad", "VALID")),
                _ => at.push(a_ints(
                    "pads",
                    onnx_pads(&ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 6])),
                )),
            }
            let ceil = int_of(attrs, "ceil_mode").is_some_and(|c| c != 0);
            if since("ceil_mode", 10, !ceil)? {
                at.push(a_int("ceil_mode", i64::from(ceil)));
            }
            "MaxPool"
        }
        "MaxPoolV3" | "AvgPoolV2" => {
            at.push(a_ints(
                "kernel_shape",
                spatial(&ints_of(attrs, "ksize").unwrap_or_default()),
            ));
            at.push(a_ints(
                "strides",
                spatial(&ints_of(attrs, "strides").unwrap_or_default()),
            ));
            match str_of(attrs, "padding_mode") {
                Some("SAME") => at.push(a_str("auto_pad", "SAME_UPPER")),
                Some("VALID") => at.push(a_str("auto_pad", "VALID")),
                _ => at.push(a_ints(
                    "pads",
                    onnx_pads(&ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 4])),
                )),
            }
            let ceil = bool_of(attrs, "ceil_mode");
            if since("ceil_mode", 10, !ceil)? {
                at.push(a_int("ceil_mode", i64::from(ceil)));
            }
            if ge_type == "AvgPoolV2" {
                let exclusive = int_of(attrs, "exclusive").is_none_or(|v| v != 0);
                if since("count_include_pad", 7, exclusive)? {
                    at.push(a_int("count_include_pad", i64::from(!exclusive)));
                }
                "AveragePool"
            } else {
                if let Some(d) = ints_of(attrs, "dilations") {
                    let d = spatial(&d);
                    if since("dilations", 10, d.iter().all(|&v| v == 1))? {
                        at.push(a_ints("dilations", d));
                    }
                }
                "MaxPool"
            }
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_round_trip() {
        let ge = ge_pads(&[1, 2, 3, 4], 2);
        assert_eq!(ge, vec![1, 3, 2, 4]);
        assert_eq!(onnx_pads(&ge), vec![1, 2, 3, 4]);
    }
}
