//! Attribute conversion both ways: ONNX attribute protos ↔ GE attribute values, the typed
//! getters the family mappings use, and `Constant` values.

use ascendir_ir::{AttrMap, AttrValue, DataType, Tensor};

use crate::error::{OnnxError, OnnxResult};
use crate::pb;
use crate::types::{onnx_dtype, tensor_from_proto};

use super::table::Entry;

/// Convert an ONNX attribute value (graphs excluded: the builder turns them into subgraphs).
pub fn attr_value(a: &pb::AttributeProto) -> OnnxResult<Option<AttrValue>> {
    use pb::attribute_proto::AttributeType as T;
    let ty = T::try_from(a.r#type).unwrap_or(T::Undefined);
    Ok(Some(match ty {
        T::Float => AttrValue::Float(a.f),
        T::Int => AttrValue::Int(a.i),
        // `s` is bytes: a value that is not UTF-8 is kept as its bytes, not replaced.
        T::String => match std::str::from_utf8(&a.s) {
            Ok(text) => AttrValue::String(text.to_string()),
            Err(_) => AttrValue::RawString(a.s.clone()),
        },
        T::Tensor => match &a.t {
            Some(t) => AttrValue::Tensor(tensor_from_proto(t, None)?),
            None => return Ok(None),
        },
        T::Floats => AttrValue::ListFloat(a.floats.clone()),
        T::Ints => AttrValue::ListInt(a.ints.clone()),
        T::Strings => AttrValue::ListString(
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        ),
        T::Tensors => AttrValue::ListTensor(
            a.tensors
                .iter()
                .map(|t| tensor_from_proto(t, None))
                .collect::<OnnxResult<_>>()?,
        ),
        // A type attribute (`Optional.type`, ...) is kept as its encoded `TypeProto`.
        T::TypeProto => match &a.tp {
            Some(tp) => AttrValue::Bytes(prost::Message::encode_to_vec(tp).into()),
            None => return Ok(None),
        },
        T::TypeProtos => AttrValue::ListBytes(
            a.type_protos
                .iter()
                .map(|tp| prost::Message::encode_to_vec(tp).into())
                .collect(),
        ),
        T::Undefined => {
            // Files written without `type` (old exporters): infer from the set field.
            if !a.ints.is_empty() {
                AttrValue::ListInt(a.ints.clone())
            } else if !a.floats.is_empty() {
                AttrValue::ListFloat(a.floats.clone())
            } else if !a.s.is_empty() {
                AttrValue::String(String::from_utf8_lossy(&a.s).into_owned())
            } else if a.f != 0.0 {
                AttrValue::Float(a.f)
            } else {
                AttrValue::Int(a.i)
            }
        }
        _ => return Ok(None),
    }))
}

pub(super) fn get<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

pub(super) fn get_i(node: &pb::NodeProto, name: &str, default: i64) -> i64 {
    get(node, name).map_or(default, |a| a.i)
}

pub(super) fn get_f(node: &pb::NodeProto, name: &str, default: f32) -> f32 {
    get(node, name).map_or(default, |a| a.f)
}

pub(super) fn get_ints(node: &pb::NodeProto, name: &str) -> Option<Vec<i64>> {
    get(node, name).map(|a| a.ints.clone())
}

pub(super) fn get_s(node: &pb::NodeProto, name: &str) -> Option<String> {
    get(node, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

pub(super) fn input(node: &pb::NodeProto, i: usize) -> Option<&str> {
    node.input
        .get(i)
        .map(|b| pb::text(b))
        .filter(|s| !s.is_empty())
}

/// Convert every attribute not in `skip`, applying the entry's renames.
pub(super) fn generic_attrs(
    node: &pb::NodeProto,
    e: &Entry,
    skip: &[&str],
    attrs: &mut AttrMap,
) -> OnnxResult<()> {
    for a in &node.attribute {
        if skip.contains(&a.name.as_str()) || a.g.is_some() || !a.graphs.is_empty() {
            continue;
        }
        if let Some(v) = attr_value(a)? {
            let name = e
                .renames
                .iter()
                .find(|(o, _)| *o == a.name)
                .map_or(a.name.as_str(), |(_, g)| g);
            attrs.insert(name.to_string(), v);
        }
    }
    Ok(())
}

/// The tensor of a `Constant` node's single attribute (`value`, `value_float`, ...).
pub fn constant_value(attr: &pb::AttributeProto) -> OnnxResult<Tensor> {
    use ascendir_ir::{Format, TensorDesc};
    let scalar = |dt: DataType, bytes: Vec<u8>, dims: &[i64]| {
        Tensor::new(TensorDesc::new(dims, dt, Format::ND), bytes.into())
    };
    Ok(match attr.name.as_str() {
        "value" => match &attr.t {
            Some(t) => tensor_from_proto(t, None)?,
            None => {
                return Err(OnnxError::Invalid(
                    "attribute 'value' holds no tensor".into(),
                ))
            }
        },
        "value_float" => scalar(DataType::FLOAT, attr.f.to_le_bytes().to_vec(), &[]),
        "value_int" => scalar(DataType::INT64, attr.i.to_le_bytes().to_vec(), &[]),
        "value_floats" => scalar(
            DataType::FLOAT,
            attr.floats.iter().flat_map(|v| v.to_le_bytes()).collect(),
            &[attr.floats.len() as i64],
        ),
        "value_ints" => scalar(
            DataType::INT64,
            attr.ints.iter().flat_map(|v| v.to_le_bytes()).collect(),
            &[attr.ints.len() as i64],
        ),
        "value_string" => Tensor::new(
            TensorDesc::new(&[], DataType::STRING, Format::ND),
            crate::types::pack_strings(std::slice::from_ref(&attr.s)),
        ),
        "value_strings" => Tensor::new(
            TensorDesc::new(&[attr.strings.len() as i64], DataType::STRING, Format::ND),
            crate::types::pack_strings(&attr.strings),
        ),
        other => {
            return Err(OnnxError::Invalid(format!(
                "unsupported value attribute '{other}'"
            )))
        }
    })
}

pub(super) fn a_int(name: &str, v: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Int as i32,
        i: v,
        ..Default::default()
    }
}

pub(super) fn a_float(name: &str, v: f32) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Float as i32,
        f: v,
        ..Default::default()
    }
}

pub(super) fn a_ints(name: &str, v: Vec<i64>) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints: v,
        ..Default::default()
    }
}

pub(super) fn a_str(name: &str, v: &str) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::String as i32,
        s: bytes::Bytes::copy_from_slice(v.as_bytes()),
        ..Default::default()
    }
}

/// Convert a GE attribute back to ONNX (`None` for kinds ONNX attributes cannot hold).
pub fn attr_to_proto(name: &str, v: &AttrValue) -> OnnxResult<Option<pb::AttributeProto>> {
    use pb::attribute_proto::AttributeType as T;
    Ok(Some(match v {
        AttrValue::Int(i) => a_int(name, *i),
        AttrValue::Bool(b) => a_int(name, i64::from(*b)),
        AttrValue::Float(f) => a_float(name, *f),
        AttrValue::String(s) => a_str(name, s),
        // ONNX's `s` is bytes too: a GE string that is not UTF-8 keeps its bytes.
        AttrValue::RawString(b) => pb::AttributeProto {
            name: name.into(),
            r#type: T::String as i32,
            s: b.clone(),
            ..Default::default()
        },
        AttrValue::ListInt(l) => a_ints(name, l.clone()),
        AttrValue::ListBool(l) => a_ints(name, l.iter().map(|b| i64::from(*b)).collect()),
        AttrValue::ListFloat(l) => pb::AttributeProto {
            name: name.into(),
            r#type: T::Floats as i32,
            floats: l.clone(),
            ..Default::default()
        },
        AttrValue::ListString(l) => pb::AttributeProto {
            name: name.into(),
            r#type: T::Strings as i32,
            strings: l
                .iter()
                .map(|s| bytes::Bytes::copy_from_slice(s.as_bytes()))
                .collect(),
            ..Default::default()
        },
        AttrValue::Tensor(t) => pb::AttributeProto {
            name: name.into(),
            r#type: T::Tensor as i32,
            t: Some(Box::new(crate::types::tensor_to_proto("", t)?)),
            ..Default::default()
        },
        AttrValue::DataType(dt) => a_int(name, i64::from(onnx_dtype(*dt).unwrap_or(0))),
        // Bytes hold what the import kept of a type attribute (an encoded `TypeProto`).
        AttrValue::Bytes(b) => match <pb::TypeProto as prost::Message>::decode(b.as_ref()) {
            Ok(tp) if tp.value.is_some() => pb::AttributeProto {
                name: name.into(),
                r#type: T::TypeProto as i32,
                tp: Some(tp),
                ..Default::default()
            },
            _ => return Ok(None),
        },
        AttrValue::ListBytes(l) => {
            let decoded: Result<Vec<pb::TypeProto>, _> = l
                .iter()
                .map(|b| <pb::TypeProto as prost::Message>::decode(b.as_ref()))
                .collect();
            match decoded {
                Ok(type_protos) if type_protos.iter().all(|t| t.value.is_some()) => {
                    pb::AttributeProto {
                        name: name.into(),
                        r#type: T::TypeProtos as i32,
                        type_protos,
                        ..Default::default()
                    }
                }
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    }))
}

/// Export guard for ops whose ONNX form gives int64 (`onnx_op`'s indices or sizes): the GE op's
/// index type (attribute `key`, GE's default int32 when absent) must be int64, else it has no
/// ONNX form and the export refuses it rather than change its type.
pub(super) fn require_int64(
    attrs: &AttrMap,
    key: &str,
    ge_type: &str,
    onnx_op: &str,
) -> OnnxResult<()> {
    let dtype = int_of(attrs, key).and_then(DataType::from_ge);
    if dtype == Some(DataType::INT64) {
        return Ok(());
    }
    Err(OnnxError::Unsupported(format!(
        "{ge_type} with {} indices has no ONNX form (ONNX's {onnx_op} gives int64)",
        dtype.map_or_else(
            || "int32 (the default)".to_string(),
            |d| d.name().to_lowercase()
        )
    )))
}

pub(super) fn ints_of(attrs: &AttrMap, key: &str) -> Option<Vec<i64>> {
    attrs
        .get(key)
        .and_then(|v| v.as_list_int())
        .map(<[i64]>::to_vec)
}

pub(super) fn int_of(attrs: &AttrMap, key: &str) -> Option<i64> {
    match attrs.get(key) {
        Some(AttrValue::Int(i)) => Some(*i),
        Some(AttrValue::Bool(b)) => Some(i64::from(*b)),
        _ => None,
    }
}

pub(super) fn bool_of(attrs: &AttrMap, key: &str) -> bool {
    int_of(attrs, key).unwrap_or(0) != 0
}

pub(super) fn float_of(attrs: &AttrMap, key: &str) -> Option<f32> {
    match attrs.get(key) {
        Some(AttrValue::Float(f)) => Some(*f),
        _ => None,
    }
}

pub(super) fn str_of<'a>(attrs: &'a AttrMap, key: &str) -> Option<&'a str> {
    attrs.get(key).and_then(|v| v.as_str())
}

pub(super) fn ints_const(values: &[i64]) -> Tensor {
    Tensor::new(
        ascendir_ir::TensorDesc::new(
            &[values.len() as i64],
            DataType::INT64,
            ascendir_ir::Format::ND,
        ),
        crate::types::i64_payload(values),
    )
}
