//! Shapes and data movement: ONNX Shape, ConstantOfShape, Concat, Split, Gather, Transpose,
//! Squeeze, Unsqueeze, Pad, Flatten and Reshape ↔ their GE forms (constant axes and sizes folded
//! into attributes on import, turned back into inputs at the opsets that take them).

use ascendir_ir::{AttrMap, AttrValue, DataType, Tensor};

use crate::error::OnnxResult;
use crate::pb;
use crate::types::tensor_from_proto;

use super::attrs::{
    a_int, a_ints, a_str, get, get_i, get_ints, get_s, input, int_of, ints_const, ints_of, str_of,
};
use super::table::Entry;
use super::{layout_inputs, Emitted, Exported, Handled, InputInfo, Mapped, Source};

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    _opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let n_in = node.input.len();
    let n_out = node.output.len();
    let a = &mut m.attrs;
    match e.onnx {
        "Shape" => {
            a.insert(
                "dtype",
                AttrValue::Int(i64::from(DataType::INT64.ge_value())),
            );
            if let Some(s) = get(node, "start") {
                a.insert("start", AttrValue::Int(s.i));
            }
            if let Some(s) = get(node, "end") {
                a.insert("end", AttrValue::Int(s.i));
            }
        }
        "ConstantOfShape" => {
            let value = match get(node, "value").and_then(|v| v.t.as_ref()) {
                Some(t) => tensor_from_proto(t, None)?,
                None => Tensor::new(
                    ascendir_ir::TensorDesc::new(&[1], DataType::FLOAT, ascendir_ir::Format::ND),
                    bytes::Bytes::from_static(&[0, 0, 0, 0]),
                ),
            };
            m.aux.push(("value".into(), value));
        }
        "Concat" => {
            a.insert("concat_dim", AttrValue::Int(get_i(node, "axis", 0)));
            a.insert("N", AttrValue::Int(n_in as i64));
        }
        "Split" => {
            let axis = get_i(node, "axis", 0);
            let mut sizes =
                get_ints(node, "split").or_else(|| input(node, 1).and_then(|s| info.const_ints(s)));
            if input(node, 1).is_some() && sizes.is_none() {
                // Sizes computed in the graph: GE's SplitV reads them (and the axis) as inputs.
                let Ok(dim) = i32::try_from(axis) else {
                    return Ok(Handled::Unmapped);
                };
                m.ge_type = "SplitV".into();
                m.inputs = layout_inputs(&["x", "size_splits"], 2);
                m.aux.push((
                    "split_dim".into(),
                    Tensor::new(
                        ascendir_ir::TensorDesc::new(&[], DataType::INT32, ascendir_ir::Format::ND),
                        bytes::Bytes::from(dim.to_le_bytes().to_vec()),
                    ),
                ));
                a.insert("num_split", AttrValue::Int(n_out as i64));
                return Ok(Handled::Mapped);
            }
            if sizes.is_none() {
                sizes = uneven_parts(node, axis, n_out, info);
            }
            m.inputs.truncate(1);
            match sizes {
                Some(s) => {
                    m.ge_type = "SplitVD".into();
                    a.insert("size_splits", AttrValue::ListInt(s));
                }
                None => m.ge_type = "SplitD".into(),
            }
            a.insert("split_dim", AttrValue::Int(axis));
            a.insert("num_split", AttrValue::Int(n_out as i64));
        }
        "Gather" => {
            a.insert("axis", AttrValue::Int(get_i(node, "axis", 0)));
        }
        "Transpose" => {
            let perm = match get_ints(node, "perm") {
                Some(p) => p,
                None => match input(node, 0).and_then(|x| info.rank(x)) {
                    Some(r) => (0..r as i64).rev().collect(),
                    None => return Ok(Handled::Unmapped),
                },
            };
            a.insert("perm", AttrValue::ListInt(perm));
        }
        "Squeeze" | "Unsqueeze" => {
            let key = if e.onnx == "Squeeze" { "axis" } else { "axes" };
            let const_axes = input(node, 1).and_then(|x| info.const_ints(x));
            if let Some(axes) = get_ints(node, "axes") {
                a.insert(key, AttrValue::ListInt(axes));
            } else if let Some(axes) = const_axes {
                // Constant axes become the attribute, as GE's parser folds them.
                m.inputs.truncate(1);
                a.insert(key, AttrValue::ListInt(axes));
            } else if n_in > 1 || e.onnx == "Unsqueeze" {
                m.ge_type = format!("{}V3", e.ge);
                m.inputs = layout_inputs(&["x", "?axes"], n_in);
            } else {
                a.insert(key, AttrValue::ListInt(Vec::new()));
            }
        }
        "Pad" => {
            // GE's PadV3 pads every axis: it has no `axes` input (opset 18).
            if n_in < 2 || input(node, 3).is_some() {
                return Ok(Handled::Unmapped);
            }
            m.inputs.truncate(3);
            a.insert(
                "mode",
                AttrValue::String(get_s(node, "mode").unwrap_or_else(|| "constant".into())),
            );
            a.insert("paddings_contiguous", AttrValue::Bool(false));
        }
        "Flatten" => {
            a.insert("axis", AttrValue::Int(get_i(node, "axis", 1)));
        }
        "Reshape" => {
            a.insert("axis", AttrValue::Int(0));
            a.insert("num_axes", AttrValue::Int(-1));
            let allowzero = get_i(node, "allowzero", 0);
            if allowzero != 0 {
                a.insert("allowzero", AttrValue::Int(allowzero));
            }
        }
        _ => return Ok(Handled::NotMine),
    }
    Ok(Handled::Mapped)
}

/// The part sizes of a Split without sizes whose input dim is known and not divisible by the
/// number of parts: ONNX (opset 18) makes the last part smaller, GE's SplitD cannot, so the
/// sizes go to SplitVD.
fn uneven_parts(
    node: &pb::NodeProto,
    axis: i64,
    parts: usize,
    info: &dyn InputInfo,
) -> Option<Vec<i64>> {
    let dims = info.dims(input(node, 0)?)?;
    let rank = i64::try_from(dims.len()).ok()?;
    let a = if axis < 0 { axis + rank } else { axis };
    let d = *dims.get(usize::try_from(a).ok()?)?;
    let n = i64::try_from(parts).ok()?;
    if d < 0 || n == 0 || d % n == 0 {
        return None;
    }
    let chunk = d / n + 1; // d % n != 0 here
    let last = d - chunk * (n - 1);
    (last > 0).then(|| {
        let mut v = vec![chunk; parts - 1];
        v.push(last);
        v
    })
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
        "Shape" => {
            for key in ["start", "end"] {
                if let Some(v) = int_of(attrs, key) {
                    at.push(a_int(key, v));
                }
            }
            "Shape"
        }
        "Fill" => "ConstantOfShape",
        "ConcatV2D" | "ConcatD" => {
            at.push(a_int("axis", int_of(attrs, "concat_dim").unwrap_or(0)));
            "Concat"
        }
        "SplitV" => {
            // The axis is the constant `split_dim` input (the exporter makes it the attribute);
            // the sizes stay an input, which Split takes from opset 13.
            if opset < 13 {
                return Ok(Exported::Unmapped);
            }
            em.inputs.truncate(2);
            "Split"
        }
        "SplitD" | "SplitVD" => {
            at.push(a_int("axis", int_of(attrs, "split_dim").unwrap_or(0)));
            if let Some(sizes) = ints_of(attrs, "size_splits") {
                if opset >= 13 {
                    em.consts.push(ints_const(&sizes));
                    em.inputs.push(Source::Const(0));
                } else {
                    at.push(a_ints("split", sizes));
                }
            } else if opset >= 18 {
                // From opset 18 a Split without sizes must say how many parts it makes.
                if let Some(n) = int_of(attrs, "num_split") {
                    at.push(a_int("num_outputs", n));
                }
            }
            "Split"
        }
        "GatherV2D" => {
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(0)));
            "Gather"
        }
        "TransposeD" => {
            at.push(a_ints("perm", ints_of(attrs, "perm").unwrap_or_default()));
            "Transpose"
        }
        "Squeeze" | "Unsqueeze" => {
            let key = if ge_type == "Squeeze" { "axis" } else { "axes" };
            let axes = ints_of(attrs, key).unwrap_or_default();
            if opset >= 13 {
                if !axes.is_empty() || ge_type == "Unsqueeze" {
                    em.consts.push(ints_const(&axes));
                    em.inputs.push(Source::Const(0));
                }
            } else if !axes.is_empty() {
                at.push(a_ints("axes", axes));
            }
            ge_type
        }
        "SqueezeV3" | "UnsqueezeV3" => {
            if opset < 13 {
                return Ok(Exported::Unmapped);
            }
            &ge_type[..ge_type.len() - 2]
        }
        "Reshape" => {
            if let Some(z) = int_of(attrs, "allowzero") {
                at.push(a_int("allowzero", z));
            }
            "Reshape"
        }
        "Flatten" => {
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(1)));
            "Flatten"
        }
        "PadV3" => {
            at.push(a_str("mode", str_of(attrs, "mode").unwrap_or("constant")));
            "Pad"
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}
