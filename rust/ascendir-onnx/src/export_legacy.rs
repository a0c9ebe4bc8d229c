//! Constant GE inputs that old opsets take as attributes: `ClipByValue` → Clip's `min` / `max`
//! before opset 11, `StridedSliceV2` → Slice's `starts` / `ends` / `axes` before opset 10,
//! `PadV3` → Pad's `pads` (`paddings` at opset 1) and `value` before opset 11 (the inverse of
//! `ops::legacy`). From those opsets on, an input fed by a constant the import made for an
//! attribute (which the export writes no initializer for) becomes an initializer of its own.

use ascendir_ir::{AttrValue, DataType, Graph, NodeData, Tensor};

use crate::error::{OnnxError, OnnxResult};
use crate::import::ATTR_AUX;
use crate::ops::{Emitted, Source};
use crate::pb;
use crate::types::tensor_ints;

/// The value of the constant feeding GE input `port` of `nd`, with whether the import made it
/// for an attribute.
fn const_input<'g>(g: &'g Graph, nd: &NodeData, port: usize) -> Option<(&'g Tensor, bool)> {
    let peer = nd.in_data_peer(port)?;
    let op = g.op(peer.node).ok()?;
    if !matches!(op.op_type(), "Const" | "Constant") {
        return None;
    }
    match op.attr("value") {
        Some(AttrValue::Tensor(t)) => Some((t, op.attr(ATTR_AUX).is_some())),
        _ => None,
    }
}

/// The one value of a floating constant.
fn one_float(t: &Tensor) -> Option<f32> {
    let d = &t.data;
    match t.desc.dtype {
        DataType::FLOAT if d.len() == 4 => Some(f32::from_le_bytes(d[..4].try_into().ok()?)),
        DataType::DOUBLE if d.len() == 8 => {
            Some(f64::from_le_bytes(d[..8].try_into().ok()?) as f32)
        }
        DataType::FLOAT16 if d.len() == 2 => {
            Some(half::f16::from_le_bytes(d[..2].try_into().ok()?).to_f32())
        }
        _ => None,
    }
}

fn a_float(name: &str, f: f32) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Float as i32,
        f,
        ..Default::default()
    }
}

fn a_ints(name: &str, ints: Vec<i64>) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints,
        ..Default::default()
    }
}

/// The opset from which `ge_type`'s ONNX form takes the values as inputs.
fn inputs_since(ge_type: &str) -> Option<i64> {
    match ge_type {
        "ClipByValue" | "PadV3" => Some(11),
        "StridedSliceV2" => Some(10),
        _ => None,
    }
}

/// Rewrite `em` (the ONNX form of GE node `nd` of type `ge_type`, input ports `ports`) for
/// `opset`: the constant inputs as attributes before [`inputs_since`], else the import's
/// attribute constants as initializers.
pub(crate) fn fold(
    g: &Graph,
    nd: &NodeData,
    ge_type: &str,
    ports: &[&str],
    opset: i64,
    em: &mut Emitted,
) -> OnnxResult<()> {
    let Some(since) = inputs_since(ge_type) else {
        return Ok(());
    };
    let name = nd.op().name();
    let port = |p: &str| ports.iter().position(|q| *q == p);
    if opset >= since {
        for s in &mut em.inputs {
            if let Source::Port(k) = *s {
                if let Some((t, true)) = const_input(g, nd, k) {
                    em.consts.push(t.clone());
                    *s = Source::Const(em.consts.len() - 1);
                }
            }
        }
        return Ok(());
    }
    let need = |what: &str| {
        OnnxError::Unsupported(format!(
            "{ge_type} '{name}' needs a constant {what} to be exported at opset {opset}"
        ))
    };
    let value = |p: &str| port(p).and_then(|k| const_input(g, nd, k)).map(|c| c.0);
    match ge_type {
        "ClipByValue" => {
            for (p, attr) in [("clip_value_min", "min"), ("clip_value_max", "max")] {
                if port(p).is_none() {
                    continue;
                }
                let v = value(p).and_then(one_float).ok_or_else(|| need(p))?;
                em.attrs.push(a_float(attr, v));
            }
        }
        "StridedSliceV2" => {
            let ints = |p: &str| value(p).and_then(tensor_ints);
            if let Some(k) = port("strides") {
                let ones = const_input(g, nd, k)
                    .and_then(|c| tensor_ints(c.0))
                    .is_some_and(|s| s.iter().all(|&v| v == 1));
                if !ones {
                    return Err(need("strides input of ones"));
                }
            }
            em.attrs.push(a_ints(
                "starts",
                ints("begin").ok_or_else(|| need("begin"))?,
            ));
            em.attrs
                .push(a_ints("ends", ints("end").ok_or_else(|| need("end"))?));
            if port("axes").is_some() {
                em.attrs
                    .push(a_ints("axes", ints("axes").ok_or_else(|| need("axes"))?));
            }
        }
        _ => {
            // PadV3: ONNX's order is every begin, then every end.
            let p = value("paddings")
                .and_then(tensor_ints)
                .ok_or_else(|| need("paddings"))?;
            let contiguous = !matches!(
                nd.op().attr("paddings_contiguous"),
                Some(AttrValue::Bool(false))
            );
            let pads = if contiguous {
                let (b, e): (Vec<i64>, Vec<i64>) =
                    p.chunks(2).map(|c| (c[0], c[c.len() - 1])).unzip();
                b.into_iter().chain(e).collect()
            } else {
                p
            };
            em.attrs
                .push(a_ints(if opset < 2 { "paddings" } else { "pads" }, pads));
            if port("constant_values").is_some() {
                let v = value("constant_values")
                    .and_then(one_float)
                    .ok_or_else(|| need("constant value"))?;
                em.attrs.push(a_float("value", v));
            }
        }
    }
    em.inputs.truncate(1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floating_constant_reads_as_its_one_value() {
        let t = crate::ops::legacy_scalar(-0.5, DataType::FLOAT16).unwrap();
        assert_eq!(one_float(&t), Some(-0.5));
        let t = crate::ops::legacy_scalar(0.25, DataType::DOUBLE).unwrap();
        assert_eq!(one_float(&t), Some(0.25));
        assert!(crate::ops::legacy_scalar(1.0, DataType::INT32).is_none());
    }

    #[test]
    fn only_the_attribute_forms_of_old_opsets_fold() {
        assert_eq!(inputs_since("ClipByValue"), Some(11));
        assert_eq!(inputs_since("StridedSliceV2"), Some(10));
        assert_eq!(inputs_since("PadV3"), Some(11));
        assert_eq!(inputs_since("Conv2D"), None);
    }
}
