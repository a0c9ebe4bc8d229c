//! Softmax and normalization: ONNX Softmax, LogSoftmax, BatchNormalization and
//! LayerNormalization ↔ GE SoftmaxV2, LogSoftmaxV2, BatchNorm, LayerNorm and LayerNormV3.

use std::borrow::Cow;

use ascendir_ir::{AttrMap, AttrValue};

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{a_float, a_int, bool_of, float_of, get, get_f, get_i, input, int_of, ints_of};
use super::table::Entry;
use super::{Emitted, Exported, Handled, InputInfo, Mapped};

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let a = &mut m.attrs;
    match e.onnx {
        "Softmax" | "LogSoftmax" => {
            let default = if opset >= 13 { -1 } else { 1 };
            if opset < 13 && get_i(node, "axis", default) != -1 {
                // Before opset 13 softmax flattens to 2-D at `axis`; only the last-axis form maps.
                if let Some(r) = input(node, 0).and_then(|x| info.rank(x)) {
                    let axis = get_i(node, "axis", default);
                    if axis != r as i64 - 1 {
                        return Ok(Handled::Unmapped);
                    }
                } else {
                    return Ok(Handled::Unmapped);
                }
            }
            // Before opset 13 only the last axis maps: it is recorded as -1 (the form every
            // opset exports).
            let axis = if opset < 13 {
                -1
            } else {
                get_i(node, "axis", default)
            };
            a.insert("axes", AttrValue::ListInt(vec![axis]));
        }
        "BatchNormalization" => {
            // GE's BatchNorm always has its five outputs; ONNX's fill the first ones.
            m.outputs = [
                "y",
                "batch_mean",
                "batch_variance",
                "reserve_space_1",
                "reserve_space_2",
            ]
            .into_iter()
            .map(Cow::Borrowed)
            .collect();
            a.insert("epsilon", AttrValue::Float(get_f(node, "epsilon", 1e-5)));
            a.insert("data_format", AttrValue::String("NCHW".into()));
            a.insert(
                "is_training",
                AttrValue::Bool(get_i(node, "training_mode", 0) != 0),
            );
            if let Some(mo) = get(node, "momentum") {
                a.insert("momentum", AttrValue::Float(mo.f));
            }
        }
        "LayerNormalization" => {
            // ONNX's third output is the inverse standard deviation: GE's LayerNormV3 (`rstd`)
            // when it is used, else LayerNorm (whose third output is the variance).
            let rstd = node.output.get(2).is_some_and(|o| !pb::text(o).is_empty());
            let third = if rstd {
                m.ge_type = "LayerNormV3".into();
                "rstd"
            } else {
                "variance"
            };
            m.outputs = ["y", "mean", third]
                .into_iter()
                .map(Cow::Borrowed)
                .collect();
            let axis = get_i(node, "axis", -1);
            a.insert("begin_norm_axis", AttrValue::Int(axis));
            a.insert("begin_params_axis", AttrValue::Int(axis));
            a.insert("epsilon", AttrValue::Float(get_f(node, "epsilon", 1e-5)));
            if let Some(st) = get(node, "stash_type") {
                a.insert("stash_type", AttrValue::Int(st.i));
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
    _input_ports: &[&str],
    opset: i64,
    em: &mut Emitted,
) -> OnnxResult<Exported<'a>> {
    let at = &mut em.attrs;
    let onnx = match ge_type {
        "SoftmaxV2" | "LogSoftmaxV2" => {
            let axes = ints_of(attrs, "axes").unwrap_or_else(|| vec![-1]);
            if axes.len() != 1 {
                return Ok(Exported::Unmapped);
            }
            if opset < 13 && axes[0] != -1 {
                return Ok(Exported::Unmapped);
            }
            at.push(a_int("axis", axes[0]));
            if ge_type == "SoftmaxV2" {
                "Softmax"
            } else {
                "LogSoftmax"
            }
        }
        "BatchNorm" => {
            at.push(a_float(
                "epsilon",
                float_of(attrs, "epsilon").unwrap_or(1e-5),
            ));
            if let Some(m) = float_of(attrs, "momentum") {
                at.push(a_float("momentum", m));
            }
            if opset >= 14 && bool_of(attrs, "is_training") {
                at.push(a_int("training_mode", 1));
            }
            if opset < 7 {
                // Opset 6 and earlier default `is_test` to 0 (training).
                at.push(a_int("is_test", i64::from(!bool_of(attrs, "is_training"))));
            }
            "BatchNormalization"
        }
        "LayerNorm" | "LayerNormV3" => {
            at.push(a_int(
                "axis",
                int_of(attrs, "begin_norm_axis").unwrap_or(-1),
            ));
            at.push(a_float(
                "epsilon",
                float_of(attrs, "epsilon").unwrap_or(1e-5),
            ));
            if let Some(st) = int_of(attrs, "stash_type") {
                at.push(a_int("stash_type", st));
            }
            "LayerNormalization"
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}
