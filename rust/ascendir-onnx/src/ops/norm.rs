//! Softmax and normalization: ONNX Softmax, LogSoftmax, BatchNormalization, LayerNormalization
//! and LRN ↔ GE SoftmaxV2, LogSoftmaxV2, BatchNorm, LayerNorm, LayerNormV3 and LRN.

use std::borrow::Cow;

use ascendir_ir::{AttrMap, AttrValue};

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{
    a_float, a_int, bool_of, float_of, get, get_f, get_i, input, int_of, ints_of, str_of,
};
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
            let axis = get_i(node, "axis", default);
            let axes = if opset >= 13 || axis == -1 {
                vec![axis]
            } else {
                // Before opset 13 softmax flattens to 2-D at `axis`: one softmax over every
                // axis from `axis` on, which GE's SoftmaxV2 takes as its axes (recorded
                // from the end, the form the old opsets export).
                let Some(r) = input(node, 0).and_then(|x| info.rank(x)) else {
                    return Ok(Handled::Unmapped);
                };
                let r = r as i64;
                let first = if axis < 0 { axis + r } else { axis };
                if !(0..r).contains(&first) {
                    return Ok(Handled::Unmapped);
                }
                (first - r..0).collect()
            };
            a.insert("axes", AttrValue::ListInt(axes));
        }
        "LRN" => {
            // GE's LRN (TensorFlow's) sums a symmetric window of `depth_radius` channels on
            // each side and scales the sum by `alpha`; ONNX's window has `size` channels and
            // scales by `alpha / size`. An even size has no symmetric window.
            let size = get_i(node, "size", 0);
            if size <= 0 || size % 2 == 0 {
                return Ok(Handled::Unmapped);
            }
            a.insert("depth_radius", AttrValue::Int((size - 1) / 2));
            a.insert("bias", AttrValue::Float(get_f(node, "bias", 1.0)));
            a.insert(
                "alpha",
                AttrValue::Float(get_f(node, "alpha", 1e-4) / size as f32),
            );
            a.insert("beta", AttrValue::Float(get_f(node, "beta", 0.75)));
            a.insert("norm_region", AttrValue::String("ACROSS_CHANNELS".into()));
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
            // Before opset 13 the op flattens at `axis`: the axes must run to the end (-k..-1);
            // from 13 on it takes one axis.
            let to_end = axes.iter().rev().zip(1..).all(|(&a, k)| a == -k);
            let one = if opset < 13 {
                to_end.then(|| axes.first().copied()).flatten()
            } else {
                axes.first().copied().filter(|_| axes.len() == 1)
            };
            let Some(axis) = one else {
                return Ok(Exported::Unmapped);
            };
            at.push(a_int("axis", axis));
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
        "LRN" => {
            if str_of(attrs, "norm_region").is_some_and(|r| r != "ACROSS_CHANNELS") {
                return Ok(Exported::Unmapped);
            }
            let size = 2 * int_of(attrs, "depth_radius").unwrap_or(5) + 1;
            at.push(a_int("size", size));
            let alpha = float_of(attrs, "alpha").unwrap_or(1.0);
            at.push(a_float("alpha", alpha * size as f32));
            at.push(a_float("beta", float_of(attrs, "beta").unwrap_or(0.5)));
            at.push(a_float("bias", float_of(attrs, "bias").unwrap_or(1.0)));
            "LRN"
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
