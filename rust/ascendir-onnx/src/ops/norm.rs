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
            let radius = int_of(attrs, "depth_radius").unwrap_or(5);
            let Some(size) = radius
                .checked_mul(2)
                .and_then(|d| d.checked_add(1))
                .filter(|_| radius >= 0)
            else {
                return Ok(Exported::Unmapped);
            };
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

#[cfg(test)]
mod tests {
    use super::super::{map_node, unmap_node};
    use super::*;

    /// Input `x` of a known rank (or none).
    struct Rank(Option<usize>);

    impl InputInfo for Rank {
        fn const_ints(&self, _: &str) -> Option<Vec<i64>> {
            None
        }
        fn dims(&self, _: &str) -> Option<Vec<i64>> {
            self.0.map(|r| vec![-1; r])
        }
        fn dtype(&self, _: &str) -> Option<ascendir_ir::DataType> {
            None
        }
    }

    fn node(op: &str, attrs: Vec<pb::AttributeProto>) -> pb::NodeProto {
        pb::NodeProto {
            op_type: op.to_string().into(),
            input: vec!["x".into()],
            output: vec!["y".into()],
            attribute: attrs,
            ..Default::default()
        }
    }

    fn ints(m: &Mapped, key: &str) -> Option<Vec<i64>> {
        ints_of(&m.attrs, key)
    }

    #[test]
    fn old_softmax_takes_every_axis_from_its_axis() {
        let n = node("Softmax", vec![a_int("axis", 1)]);
        let m = map_node(&n, 11, &Rank(Some(4))).unwrap().unwrap();
        assert_eq!(ints(&m, "axes"), Some(vec![-3, -2, -1]));
        // The default axis 1 of opset 9, a 2-D input: the last axis.
        let m = map_node(&node("LogSoftmax", vec![]), 9, &Rank(Some(2)))
            .unwrap()
            .unwrap();
        assert_eq!(ints(&m, "axes"), Some(vec![-1]));
        // Unknown rank, or an axis out of range: no mapping.
        assert!(map_node(&n, 11, &Rank(None)).unwrap().is_none());
        let far = node("Softmax", vec![a_int("axis", 4)]);
        assert!(map_node(&far, 11, &Rank(Some(4))).unwrap().is_none());
        // From opset 13 the axis is one axis.
        let m = map_node(&n, 13, &Rank(None)).unwrap().unwrap();
        assert_eq!(ints(&m, "axes"), Some(vec![1]));
    }

    fn exported_axis(axes: Vec<i64>, opset: i64) -> Option<i64> {
        let mut attrs = AttrMap::new();
        attrs.insert("axes", AttrValue::ListInt(axes));
        let em = unmap_node("SoftmaxV2", &attrs, &["x"], opset).unwrap()?;
        em.attrs.iter().find(|a| a.name == "axis").map(|a| a.i)
    }

    #[test]
    fn softmax_axes_export_as_one_axis_where_the_opset_means_them() {
        assert_eq!(exported_axis(vec![-3, -2, -1], 11), Some(-3));
        assert_eq!(exported_axis(vec![-1], 9), Some(-1));
        // Not running to the end: no opset < 13 form; several axes: no opset 13 form.
        assert_eq!(exported_axis(vec![-3, -2], 11), None);
        assert_eq!(exported_axis(vec![1], 11), None);
        assert_eq!(exported_axis(vec![-2, -1], 13), None);
        assert_eq!(exported_axis(vec![1], 13), Some(1));
    }

    #[test]
    fn lrn_window_and_scale_round_trip() {
        let n = node(
            "LRN",
            vec![
                a_int("size", 5),
                a_float("alpha", 1e-3),
                a_float("beta", 0.7),
            ],
        );
        let m = map_node(&n, 13, &Rank(Some(4))).unwrap().unwrap();
        assert_eq!(m.ge_type, "LRN");
        assert_eq!(int_of(&m.attrs, "depth_radius"), Some(2));
        assert!((float_of(&m.attrs, "alpha").unwrap() - 2e-4).abs() < 1e-9);
        let em = unmap_node("LRN", &m.attrs, &["x"], 13).unwrap().unwrap();
        let get = |k: &str| em.attrs.iter().find(|a| a.name == k).cloned().unwrap();
        assert_eq!(get("size").i, 5);
        assert!((get("alpha").f - 1e-3).abs() < 1e-9);
        assert!((get("beta").f - 0.7).abs() < 1e-7);
        // An even size has no symmetric window.
        let even = node("LRN", vec![a_int("size", 4)]);
        assert!(map_node(&even, 13, &Rank(Some(4))).unwrap().is_none());
    }
}
