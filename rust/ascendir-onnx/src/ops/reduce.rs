//! Reductions: ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2,
//! ReduceLogSumExp and ReduceLogSum ↔ GE's `Reduce*D` (axes as an attribute) and `Reduce*` (axes as an input);
//! ArgMax / ArgMin ↔ ArgMaxD / ArgMinD.

use ascendir_ir::{AttrMap, AttrValue, DataType};

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{
    a_int, a_ints, bool_of, get_i, get_ints, int_of, ints_const, ints_of, require_int64,
};
use super::table::Entry;
use super::{layout_inputs, Emitted, Exported, Handled, InputInfo, Mapped, Source};

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    _opset: i64,
    _info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let n_in = node.input.len();
    let a = &mut m.attrs;
    match e.onnx {
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
            a.insert(
                "keep_dims",
                AttrValue::Bool(get_i(node, "keepdims", 1) != 0),
            );
            let noop = get_i(node, "noop_with_empty_axes", 0);
            if noop != 0 {
                a.insert("noop_with_empty_axes", AttrValue::Bool(true));
            }
            if let Some(axes) = get_ints(node, "axes") {
                a.insert("axes", AttrValue::ListInt(axes));
            } else if n_in > 1 {
                m.ge_type = e.ge.trim_end_matches('D').to_string();
                m.inputs = layout_inputs(&["x", "?axes"], n_in);
            } else {
                a.insert("axes", AttrValue::ListInt(Vec::new()));
            }
        }
        "ReduceL2" | "ReduceLogSumExp" | "ReduceLogSum" => {
            if e.onnx == "ReduceLogSum" && get_i(node, "noop_with_empty_axes", 0) != 0 {
                return Ok(Handled::Unmapped);
            }
            a.insert(
                "keep_dims",
                AttrValue::Bool(get_i(node, "keepdims", 1) != 0),
            );
            if let Some(axes) = get_ints(node, "axes") {
                a.insert("axes", AttrValue::ListInt(axes));
            }
        }
        "ArgMax" | "ArgMin" => {
            // ONNX's defaults written out (axis 0, keepdims 1), and its int64 indices as GE's
            // `dtype` (ArgMaxD's default is int32).
            a.insert("dimension", AttrValue::Int(get_i(node, "axis", 0)));
            a.insert(
                "keep_dims",
                AttrValue::Bool(get_i(node, "keepdims", 1) != 0),
            );
            a.insert(
                "dtype",
                AttrValue::Int(i64::from(DataType::INT64.ge_value())),
            );
            if get_i(node, "select_last_index", 0) != 0 {
                a.insert("select_last_index", AttrValue::Bool(true));
            }
        }
        _ => return Ok(Handled::NotMine),
    }
    Ok(Handled::Mapped)
}

/// Export: the ONNX form of a GE op of this family at `opset`.
pub(super) fn export<'a>(
    ge_type: &'a str,
    attrs: &AttrMap,
    input_ports: &[&str],
    opset: i64,
    em: &mut Emitted,
) -> OnnxResult<Exported<'a>> {
    let at = &mut em.attrs;
    let onnx = match ge_type {
        "ReduceSumD" | "ReduceMeanD" | "ReduceMaxD" | "ReduceMinD" | "ReduceProdD"
        | "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL2"
        | "ReduceLogSumExp" | "ReduceLogSum" => {
            let base = ge_type.trim_end_matches('D');
            at.push(a_int(
                "keepdims",
                i64::from(int_of(attrs, "keep_dims").is_none_or(|v| v != 0)),
            ));
            if bool_of(attrs, "noop_with_empty_axes") {
                at.push(a_int("noop_with_empty_axes", 1));
            }
            let axes_as_input = if base == "ReduceSum" {
                opset >= 13
            } else {
                opset >= 18
            };
            if let Some(axes) = ints_of(attrs, "axes") {
                if axes_as_input {
                    if !axes.is_empty() {
                        em.consts.push(ints_const(&axes));
                        em.inputs.push(Source::Const(0));
                    }
                } else if !axes.is_empty() {
                    at.push(a_ints("axes", axes));
                }
            } else if !axes_as_input && input_ports.len() > 1 {
                return Ok(Exported::Unmapped);
            }
            base
        }
        "ArgMaxD" | "ArgMinD" => {
            require_int64(attrs, "dtype", ge_type, &ge_type[..ge_type.len() - 1])?;
            at.push(a_int("axis", int_of(attrs, "dimension").unwrap_or(0)));
            at.push(a_int("keepdims", i64::from(bool_of(attrs, "keep_dims"))));
            if bool_of(attrs, "select_last_index") {
                at.push(a_int("select_last_index", 1));
            }
            if ge_type == "ArgMaxD" {
                "ArgMax"
            } else {
                "ArgMin"
            }
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}
