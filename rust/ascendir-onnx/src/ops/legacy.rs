//! The attribute forms of old opsets: ONNX Clip before opset 11 (`min` / `max`), Slice before
//! opset 10 (`starts` / `ends` / `axes`) and Pad before opset 11 (`pads` / `paddings`, `value`)
//! ↔ the GE ops that take those values as inputs (ClipByValue, StridedSliceV2, PadV3): the
//! import makes constant inputs of the attributes. The export turns the constants back into
//! attributes at those opsets (`export_legacy`).

use ascendir_ir::{AttrValue, DataType, Format, Tensor, TensorDesc};
use bytes::Bytes;

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{get, get_f, get_ints, get_s, input, ints_const};
use super::table::Entry;
use super::{Handled, InputInfo, Mapped};

/// A scalar of a floating type holding `v` (`None` for other types).
pub(crate) fn float_scalar(v: f32, dt: DataType) -> Option<Tensor> {
    let bytes = match dt {
        DataType::FLOAT => v.to_le_bytes().to_vec(),
        DataType::DOUBLE => f64::from(v).to_le_bytes().to_vec(),
        DataType::FLOAT16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
        _ => return None,
    };
    Some(Tensor::new(
        TensorDesc::new(&[], dt, Format::ND),
        Bytes::from(bytes),
    ))
}

/// The floating type of `node`'s first input (FLOAT when it is not known).
fn float_type(node: &pb::NodeProto, info: &dyn InputInfo) -> DataType {
    input(node, 0)
        .and_then(|x| info.dtype(x))
        .unwrap_or(DataType::FLOAT)
}

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    match e.onnx {
        "Clip" if opset < 11 => {
            // ONNX's defaults are the type's lowest and highest values.
            let dt = float_type(node, info);
            let lo = get(node, "min").map_or(f32::MIN, |a| a.f);
            let hi = get(node, "max").map_or(f32::MAX, |a| a.f);
            let (Some(lo), Some(hi)) = (float_scalar(lo, dt), float_scalar(hi, dt)) else {
                return Ok(Handled::Unmapped);
            };
            m.inputs.truncate(1);
            m.aux.push(("clip_value_min".into(), lo));
            m.aux.push(("clip_value_max".into(), hi));
        }
        "Slice" if opset < 10 => {
            let (Some(starts), Some(ends)) = (get_ints(node, "starts"), get_ints(node, "ends"))
            else {
                return Ok(Handled::Unmapped);
            };
            let axes = get_ints(node, "axes").unwrap_or_else(|| (0..starts.len() as i64).collect());
            if ends.len() != starts.len() || axes.len() != starts.len() {
                return Ok(Handled::Unmapped);
            }
            m.inputs.truncate(1);
            m.aux.push(("begin".into(), ints_const(&starts)));
            m.aux.push(("end".into(), ints_const(&ends)));
            m.aux.push(("axes".into(), ints_const(&axes)));
        }
        "Pad" if opset < 11 => {
            let Some(pads) = get_ints(node, "pads").or_else(|| get_ints(node, "paddings")) else {
                return Ok(Handled::Unmapped);
            };
            let mode = get_s(node, "mode").unwrap_or_else(|| "constant".into());
            m.inputs.truncate(1);
            m.aux.push(("paddings".into(), ints_const(&pads)));
            if mode == "constant" {
                let Some(v) = float_scalar(get_f(node, "value", 0.0), float_type(node, info))
                else {
                    return Ok(Handled::Unmapped);
                };
                m.aux.push(("constant_values".into(), v));
            }
            m.attrs.insert("mode", AttrValue::String(mode));
            // ONNX's order: every begin, then every end.
            m.attrs
                .insert("paddings_contiguous", AttrValue::Bool(false));
        }
        _ => return Ok(Handled::NotMine),
    }
    Ok(Handled::Mapped)
}
