//! Arithmetic, casts, constants and TopK: ONNX Mod, Cast, Sum, Einsum, Max, Min, Constant and
//! TopK ↔ GE FloorMod / Mod, Cast, AddN, Einsum, Maximum, Minimum, Const and TopKV2.

use ascendir_ir::{AttrMap, AttrValue, DataType};

use crate::error::{OnnxError, OnnxResult};
use crate::pb;
use crate::types::{ge_dtype, onnx_dtype};

use super::attrs::{
    a_int, a_str, constant_value, generic_attrs, get, get_i, input, int_of, require_int64, str_of,
};
use super::table::Entry;
use super::{Emitted, Exported, Handled, InputInfo, Mapped};

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    _opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let n_in = node.input.len();
    // The node name, validated only for a message (most nodes never need it).
    let name = || pb::text(&node.name);
    let a = &mut m.attrs;
    match e.onnx {
        "Mod" => {
            // ONNX's default (`fmod=0`) takes the divisor's sign, GE's FloorMod; `fmod=1` is
            // C's fmod, GE's Mod.
            if get_i(node, "fmod", 0) == 0 {
                m.ge_type = "FloorMod".into();
            }
        }
        "Cast" => {
            let to = get_i(node, "to", 0) as i32;
            let dt = ge_dtype(to);
            if dt == DataType::UNDEFINED {
                return Ok(Handled::Unmapped);
            }
            a.insert("dst_type", AttrValue::Int(i64::from(dt.ge_value())));
            if let Some(s) = get(node, "saturate") {
                a.insert("saturate", AttrValue::Int(s.i));
            }
        }
        "CastLike" => {
            // GE has no CastLike: a target whose type is known at import makes it a Cast.
            let Some(dt) = input(node, 1).and_then(|t| info.dtype(t)) else {
                return Ok(Handled::Unmapped);
            };
            m.inputs.truncate(1);
            a.insert("dst_type", AttrValue::Int(i64::from(dt.ge_value())));
            if let Some(s) = get(node, "saturate") {
                a.insert("saturate", AttrValue::Int(s.i));
            }
        }
        "NonZero" => {
            // ONNX's NonZero is [rank, count]: GE's with `transpose` (its default is
            // [count, rank]).
            a.insert("transpose", AttrValue::Bool(true));
        }
        "Size" => {
            // ONNX's Size is int64 (GE's defaults to int32).
            a.insert(
                "dtype",
                AttrValue::Int(i64::from(DataType::INT64.ge_value())),
            );
        }
        "Sum" | "Einsum" => {
            generic_attrs(node, e, &[], a)?;
            a.insert("N", AttrValue::Int(n_in as i64));
        }
        "Max" | "Min" => {
            if n_in != 2 {
                return Ok(Handled::Unmapped);
            }
        }
        "Constant" => {
            let Some(attr) = node.attribute.first() else {
                return Err(OnnxError::Invalid(format!(
                    "Constant '{}' has no value",
                    name()
                )));
            };
            let t = constant_value(attr).map_err(|err| match err {
                OnnxError::Invalid(msg) => {
                    OnnxError::Invalid(format!("Constant '{}': {msg}", name()))
                }
                other => other,
            })?;
            a.insert("value", AttrValue::Tensor(t));
        }
        "TopK" => {
            generic_attrs(node, e, &[], a)?;
            a.get_or_insert("dim", AttrValue::Int(-1));
            a.get_or_insert("largest", AttrValue::Int(1));
            a.get_or_insert("sorted", AttrValue::Int(1));
            // ONNX's indices are int64 (GE's TopKV2 defaults to int32).
            a.insert(
                "indices_dtype",
                AttrValue::Int(i64::from(DataType::INT64.ge_value())),
            );
            for key in ["largest", "sorted"] {
                if let Some(AttrValue::Int(v)) = a.get(key) {
                    let b = *v != 0;
                    a.insert(key, AttrValue::Bool(b));
                }
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
    _opset: i64,
    em: &mut Emitted,
) -> OnnxResult<Exported<'a>> {
    let at = &mut em.attrs;
    let onnx = match ge_type {
        "Mod" | "FloorMod" => {
            at.push(a_int("fmod", i64::from(ge_type == "Mod")));
            "Mod"
        }
        "Cast" => {
            let dt = int_of(attrs, "dst_type")
                .and_then(DataType::from_ge)
                .and_then(onnx_dtype)
                .ok_or_else(|| OnnxError::Unsupported("Cast without a valid dst_type".into()))?;
            at.push(a_int("to", i64::from(dt)));
            if let Some(s) = int_of(attrs, "saturate") {
                at.push(a_int("saturate", s));
            }
            "Cast"
        }
        "Const" | "Constant" => {
            let Some(AttrValue::Tensor(t)) = attrs.get("value") else {
                return Err(OnnxError::Unsupported(
                    "Const without a tensor value".into(),
                ));
            };
            em.attrs.push(pb::AttributeProto {
                name: "value".into(),
                r#type: pb::attribute_proto::AttributeType::Tensor as i32,
                t: Some(Box::new(crate::types::tensor_to_proto("", t)?)),
                ..Default::default()
            });
            em.inputs.clear();
            "Constant"
        }
        "NonZero" => {
            // GE's NonZero is [count, rank] unless `transpose`; ONNX's is [rank, count].
            if !super::attrs::bool_of(attrs, "transpose") {
                return Err(OnnxError::Unsupported(
                    "NonZero without transpose has no ONNX form (ONNX's NonZero is [rank, count])"
                        .into(),
                ));
            }
            // GE's NonZero defaults to int64.
            if int_of(attrs, "dtype").is_some() {
                require_int64(attrs, "dtype", ge_type, "NonZero")?;
            }
            "NonZero"
        }
        "Size" => {
            require_int64(attrs, "dtype", ge_type, "Size")?;
            "Size"
        }
        "TopKV2" => {
            require_int64(attrs, "indices_dtype", ge_type, "TopK")?;
            at.push(a_int("axis", int_of(attrs, "dim").unwrap_or(-1)));
            at.push(a_int("largest", int_of(attrs, "largest").unwrap_or(1)));
            at.push(a_int("sorted", int_of(attrs, "sorted").unwrap_or(1)));
            "TopK"
        }
        "AddN" | "Einsum" => {
            if let Some(eq) = str_of(attrs, "equation") {
                at.push(a_str("equation", eq));
            }
            if ge_type == "AddN" {
                "Sum"
            } else {
                "Einsum"
            }
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}
