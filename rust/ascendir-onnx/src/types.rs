//! Element types, tensor descriptors and constant payloads between ONNX and GE.

use std::sync::Arc;

use ascendir_ir::{AttrValue, DataType, Format, Shape, Tensor, TensorDesc};
use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{OnnxError, OnnxResult};
use crate::pb;

/// ONNX `TensorProto.DataType` numbers.
#[allow(missing_docs)]
pub mod onnx_dt {
    pub const UNDEFINED: i32 = 0;
    pub const FLOAT: i32 = 1;
    pub const UINT8: i32 = 2;
    pub const INT8: i32 = 3;
    pub const UINT16: i32 = 4;
    pub const INT16: i32 = 5;
    pub const INT32: i32 = 6;
    pub const INT64: i32 = 7;
    pub const STRING: i32 = 8;
    pub const BOOL: i32 = 9;
    pub const FLOAT16: i32 = 10;
    pub const DOUBLE: i32 = 11;
    pub const UINT32: i32 = 12;
    pub const UINT64: i32 = 13;
    pub const COMPLEX64: i32 = 14;
    pub const COMPLEX128: i32 = 15;
    pub const BFLOAT16: i32 = 16;
    pub const FLOAT8E4M3FN: i32 = 17;
    pub const FLOAT8E4M3FNUZ: i32 = 18;
    pub const FLOAT8E5M2: i32 = 19;
    pub const FLOAT8E5M2FNUZ: i32 = 20;
    pub const UINT4: i32 = 21;
    pub const INT4: i32 = 22;
    pub const FLOAT4E2M1: i32 = 23;
}

/// The GE type of an ONNX element type (`UNDEFINED` for types GE lacks).
pub fn ge_dtype(onnx: i32) -> DataType {
    use onnx_dt as o;
    match onnx {
        o::FLOAT => DataType::FLOAT,
        o::UINT8 => DataType::UINT8,
        o::INT8 => DataType::INT8,
        o::UINT16 => DataType::UINT16,
        o::INT16 => DataType::INT16,
        o::INT32 => DataType::INT32,
        o::INT64 => DataType::INT64,
        o::STRING => DataType::STRING,
        o::BOOL => DataType::BOOL,
        o::FLOAT16 => DataType::FLOAT16,
        o::DOUBLE => DataType::DOUBLE,
        o::UINT32 => DataType::UINT32,
        o::UINT64 => DataType::UINT64,
        o::COMPLEX64 => DataType::COMPLEX64,
        o::COMPLEX128 => DataType::COMPLEX128,
        o::BFLOAT16 => DataType::BF16,
        o::FLOAT8E4M3FN => DataType::FLOAT8_E4M3FN,
        o::FLOAT8E5M2 => DataType::FLOAT8_E5M2,
        o::INT4 => DataType::INT4,
        o::FLOAT4E2M1 => DataType::FLOAT4_E2M1,
        _ => DataType::UNDEFINED,
    }
}

/// The ONNX element type of a GE type, if ONNX has it.
pub fn onnx_dtype(dt: DataType) -> Option<i32> {
    use onnx_dt as o;
    Some(match dt {
        DataType::FLOAT => o::FLOAT,
        DataType::UINT8 => o::UINT8,
        DataType::INT8 => o::INT8,
        DataType::UINT16 => o::UINT16,
        DataType::INT16 => o::INT16,
        DataType::INT32 => o::INT32,
        DataType::INT64 => o::INT64,
        DataType::STRING => o::STRING,
        DataType::BOOL => o::BOOL,
        DataType::FLOAT16 => o::FLOAT16,
        DataType::DOUBLE => o::DOUBLE,
        DataType::UINT32 => o::UINT32,
        DataType::UINT64 => o::UINT64,
        DataType::COMPLEX64 => o::COMPLEX64,
        DataType::COMPLEX128 => o::COMPLEX128,
        DataType::BF16 => o::BFLOAT16,
        DataType::FLOAT8_E4M3FN => o::FLOAT8E4M3FN,
        DataType::FLOAT8_E5M2 => o::FLOAT8E5M2,
        DataType::INT4 => o::INT4,
        DataType::FLOAT4_E2M1 => o::FLOAT4E2M1,
        _ => return None,
    })
}

/// The tensor desc of an ONNX type: symbolic or missing dims become -1, a missing shape an
/// unknown rank (`[-2]`). Non-tensor types (sequences, maps) give an unknown desc.
pub fn desc_from_type(tp: Option<&pb::TypeProto>) -> TensorDesc {
    let mut desc = TensorDesc {
        dtype: DataType::UNDEFINED,
        shape: Shape::from_slice(&[-2]),
        ..TensorDesc::default()
    };
    let t = match tp.and_then(|t| t.value.as_ref().map(|v| (t, v))) {
        Some((_, pb::type_proto::Value::TensorType(t))) => t,
        Some((whole, _)) => {
            // A sequence, optional, map or sparse value: GE's descs describe dense tensors
            // only, so the ONNX type is kept whole for the export to write back.
            desc.attrs_mut().insert(
                ATTR_ONNX_TYPE,
                AttrValue::Bytes(Bytes::from(prost::Message::encode_to_vec(whole))),
            );
            return desc;
        }
        None => return desc,
    };
    desc.dtype = ge_dtype(t.elem_type);
    if desc.dtype == DataType::UNDEFINED && t.elem_type != 0 {
        // An ONNX element type GE has no type for (the FNUZ float8s, 2-bit integers, E8M0...):
        // kept so that the export writes the value's type back as it was.
        desc.attrs_mut()
            .insert(ATTR_ONNX_ELEM_TYPE, AttrValue::Int(i64::from(t.elem_type)));
    }
    if let Some(shape) = &t.shape {
        desc.shape = shape
            .dim
            .iter()
            .map(|d| match d.value {
                Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) if v >= 0 => v,
                _ => -1,
            })
            .collect();
    }
    desc
}

/// The desc attribute holding an ONNX element type that has no GE data type (the desc's dtype
/// is then `UNDEFINED`); the export writes it back.
pub const ATTR_ONNX_ELEM_TYPE: &str = "_onnx_elem_type";

/// The desc attribute holding the encoded ONNX `TypeProto` of a value that is not a dense
/// tensor (a sequence, an optional, a map, a sparse tensor); the desc's dtype is then
/// `UNDEFINED`, and the export writes the type back.
pub const ATTR_ONNX_TYPE: &str = "_onnx_type";

/// The non-tensor ONNX type kept in [`ATTR_ONNX_TYPE`] of a desc without a GE data type.
pub fn kept_type(desc: &TensorDesc) -> Option<pb::TypeProto> {
    if desc.dtype != DataType::UNDEFINED {
        return None;
    }
    match desc.attrs.as_deref()?.get(ATTR_ONNX_TYPE)? {
        AttrValue::Bytes(b) => <pb::TypeProto as prost::Message>::decode(b.as_ref()).ok(),
        _ => None,
    }
}

/// Whether a desc without a GE data type keeps an ONNX type the export writes back (a whole
/// non-tensor type or an element type GE lacks).
pub fn has_kept_type(desc: &TensorDesc) -> bool {
    desc.dtype == DataType::UNDEFINED
        && desc
            .attrs
            .as_deref()
            .is_some_and(|a| a.get(ATTR_ONNX_TYPE).is_some())
        || kept_elem_type(desc).is_some()
}

/// The ONNX element type kept in [`ATTR_ONNX_ELEM_TYPE`] of a desc without a GE data type.
fn kept_elem_type(desc: &TensorDesc) -> Option<i32> {
    if desc.dtype != DataType::UNDEFINED {
        return None;
    }
    match desc.attrs.as_deref()?.get(ATTR_ONNX_ELEM_TYPE)? {
        AttrValue::Int(v) => i32::try_from(*v).ok().filter(|v| *v > 0),
        _ => None,
    }
}

/// The ONNX type of a tensor desc (unknown dims become unnamed dims, unknown rank no shape).
pub fn type_from_desc(desc: &TensorDesc) -> pb::TypeProto {
    if let Some(kept) = kept_type(desc) {
        return kept;
    }
    let elem_type = onnx_dtype(desc.dtype)
        .or_else(|| kept_elem_type(desc))
        .unwrap_or(onnx_dt::FLOAT);
    let dims = (desc.shape.as_slice() != [-2]).then_some(&desc.shape[..]);
    tensor_type(elem_type, dims)
}

/// An ONNX tensor type of `elem_type` over `dims` (negative dims unnamed; `None`: no shape).
pub fn tensor_type(elem_type: i32, dims: Option<&[i64]>) -> pb::TypeProto {
    let shape = dims.map(|dims| pb::TensorShapeProto {
        dim: dims
            .iter()
            .map(|&d| pb::tensor_shape_proto::Dimension {
                value: (d >= 0).then_some(pb::tensor_shape_proto::dimension::Value::DimValue(d)),
                denotation: String::new(),
            })
            .collect(),
    });
    pb::TypeProto {
        value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
            elem_type,
            shape,
        })),
        denotation: String::new(),
    }
}

fn element_count(dims: &[i64], name: &str) -> OnnxResult<usize> {
    let mut n: usize = 1;
    for &d in dims {
        let d = usize::try_from(d).map_err(|_| {
            OnnxError::Invalid(format!("tensor '{name}' has a negative dimension {d}"))
        })?;
        n = n
            .checked_mul(d)
            .ok_or_else(|| OnnxError::Invalid(format!("tensor '{name}' is too large")))?;
    }
    Ok(n)
}

/// Where external tensor data comes from: `(location, offset, length)` → bytes.
pub type ExternalLoader<'a> = dyn FnMut(&str, u64, Option<u64>) -> OnnxResult<Bytes> + 'a;

/// The GE constant of an ONNX tensor. `raw_data` is shared (a slice of the model buffer);
/// typed fields are packed little-endian; external data goes through `external`.
pub fn tensor_from_proto(
    t: &pb::TensorProto,
    external: Option<&mut ExternalLoader<'_>>,
) -> OnnxResult<Tensor> {
    let dtype = ge_dtype(t.data_type);
    let name = t.name.as_str();
    if dtype == DataType::UNDEFINED {
        return Err(OnnxError::Invalid(format!(
            "tensor '{name}' has an element type ({}) GE cannot hold",
            t.data_type
        )));
    }
    let count = element_count(&t.dims, name)?;
    let desc = TensorDesc::new(&t.dims, dtype, Format::ND);
    let data: Bytes = if t.data_location == pb::tensor_proto::DataLocation::External as i32 {
        let mut location = None;
        let mut offset = 0u64;
        let mut length = None;
        for e in &t.external_data {
            match e.key.as_str() {
                "location" => location = Some(e.value.as_str()),
                "offset" => {
                    offset = e.value.parse().map_err(|_| {
                        OnnxError::Invalid(format!(
                            "tensor '{name}': bad external offset '{}'",
                            e.value
                        ))
                    })?
                }
                "length" => {
                    length = Some(e.value.parse().map_err(|_| {
                        OnnxError::Invalid(format!(
                            "tensor '{name}': bad external length '{}'",
                            e.value
                        ))
                    })?)
                }
                _ => {}
            }
        }
        let location = location.ok_or_else(|| {
            OnnxError::Invalid(format!(
                "tensor '{name}' has external data without a location"
            ))
        })?;
        let loader = external.ok_or_else(|| {
            OnnxError::Invalid(format!(
                "tensor '{name}' stores its data in '{location}' but no base directory was given"
            ))
        })?;
        loader(location, offset, length)?
    } else if !t.raw_data.is_empty() || typed_len(t) == 0 {
        t.raw_data.clone()
    } else {
        pack_typed(t, dtype, count)?
    };
    let too_large = || {
        OnnxError::Invalid(format!(
            "tensor '{name}' of shape {:?} and type {} is too large: its byte size overflows 64 bits",
            t.dims,
            dtype.serial_name()
        ))
    };
    let count_i64 = i64::try_from(count).map_err(|_| too_large())?;
    if dtype == DataType::STRING {
        // GE's layout starts with one 16-byte head per element.
        let heads = count.checked_mul(16).ok_or_else(too_large)?;
        if data.len() < heads {
            return Err(OnnxError::Invalid(format!(
                "tensor '{name}' of shape {:?} and type string holds {} bytes, fewer than the {heads} bytes of its element heads",
                t.dims,
                data.len()
            )));
        }
        return Ok(Tensor::new(desc, data));
    }
    let want = match ascendir_ir::dtype::checked_size_in_bytes(count_i64, dtype) {
        Ok(Some(w)) => w,
        Ok(None) => -1,
        Err(_) => return Err(too_large()),
    };
    if want >= 0 && data.len() as i64 != want {
        return Err(OnnxError::Invalid(format!(
            "tensor '{name}' of shape {:?} and type {} holds {} bytes, expected {want}",
            t.dims,
            dtype.serial_name(),
            data.len()
        )));
    }
    Ok(Tensor::new(desc, data))
}

fn typed_len(t: &pb::TensorProto) -> usize {
    t.float_data.len()
        + t.int32_data.len()
        + t.int64_data.len()
        + t.double_data.len()
        + t.uint64_data.len()
        + t.string_data.len()
}

fn too_large(name: &str) -> OnnxError {
    OnnxError::Invalid(format!("tensor '{name}' is too large"))
}

fn pack_typed(t: &pb::TensorProto, dtype: DataType, count: usize) -> OnnxResult<Bytes> {
    let mut out = BytesMut::new();
    let name = &t.name;
    let check = |n: usize| {
        if n == count {
            Ok(())
        } else {
            Err(OnnxError::Invalid(format!(
                "tensor '{name}' has {n} values for {count} elements"
            )))
        }
    };
    match dtype {
        DataType::FLOAT | DataType::COMPLEX64 => {
            let n = if dtype == DataType::COMPLEX64 {
                count.checked_mul(2).ok_or_else(|| too_large(name))?
            } else {
                count
            };
            if t.float_data.len() != n {
                check(t.float_data.len())?;
            }
            out.reserve(t.float_data.len() * 4);
            t.float_data.iter().for_each(|v| out.put_f32_le(*v));
        }
        DataType::DOUBLE | DataType::COMPLEX128 => {
            let n = if dtype == DataType::COMPLEX128 {
                count.checked_mul(2).ok_or_else(|| too_large(name))?
            } else {
                count
            };
            if t.double_data.len() != n {
                check(t.double_data.len())?;
            }
            t.double_data.iter().for_each(|v| out.put_f64_le(*v));
        }
        DataType::INT64 => {
            check(t.int64_data.len())?;
            t.int64_data.iter().for_each(|v| out.put_i64_le(*v));
        }
        DataType::UINT32 | DataType::UINT64 => {
            check(t.uint64_data.len())?;
            for v in &t.uint64_data {
                if dtype == DataType::UINT32 {
                    out.put_u32_le(*v as u32)
                } else {
                    out.put_u64_le(*v)
                }
            }
        }
        DataType::INT32 => {
            check(t.int32_data.len())?;
            t.int32_data.iter().for_each(|v| out.put_i32_le(*v));
        }
        DataType::INT16 | DataType::UINT16 | DataType::FLOAT16 | DataType::BF16 => {
            check(t.int32_data.len())?;
            t.int32_data.iter().for_each(|v| out.put_u16_le(*v as u16));
        }
        DataType::INT8
        | DataType::UINT8
        | DataType::BOOL
        | DataType::FLOAT8_E4M3FN
        | DataType::FLOAT8_E5M2 => {
            check(t.int32_data.len())?;
            t.int32_data.iter().for_each(|v| out.put_u8(*v as u8));
        }
        DataType::INT4 | DataType::FLOAT4_E2M1 => {
            // int32_data holds packed pairs already (two 4-bit values per entry).
            t.int32_data.iter().for_each(|v| out.put_u8(*v as u8));
        }
        DataType::STRING => {
            check(t.string_data.len())?;
            return Ok(pack_strings(&t.string_data));
        }
        other => {
            return Err(OnnxError::Invalid(format!(
                "tensor '{name}' of type {} has no raw data",
                other.serial_name()
            )))
        }
    }
    Ok(out.freeze())
}

/// GE's string tensor layout: one `{u64 offset, u64 length}` head per element, then the
/// NUL-terminated strings; offsets count from the start of the buffer.
pub fn pack_strings(items: &[Bytes]) -> Bytes {
    let head = items.len() * 16;
    let mut out = BytesMut::with_capacity(head + items.iter().map(|s| s.len() + 1).sum::<usize>());
    let mut offset = head as u64;
    for s in items {
        out.put_u64_le(offset);
        out.put_u64_le(s.len() as u64);
        offset += s.len() as u64 + 1;
    }
    for s in items {
        out.put_slice(s);
        out.put_u8(0);
    }
    out.freeze()
}

/// Inverse of [`pack_strings`]; `None` when the buffer is not in that layout.
pub fn unpack_strings(data: &Bytes, count: usize) -> Option<Vec<Bytes>> {
    // The heads come first: a count they cannot fit is refused before anything is reserved.
    if count.checked_mul(16)? > data.len() {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let h = data.get(i * 16..i * 16 + 16)?;
        let off = u64::from_le_bytes(h[..8].try_into().ok()?) as usize;
        let len = u64::from_le_bytes(h[8..].try_into().ok()?) as usize;
        if off.checked_add(len)? > data.len() {
            return None;
        }
        out.push(data.slice(off..off + len));
    }
    Some(out)
}

/// The ONNX tensor of a GE constant (payload shared, never copied).
pub fn tensor_to_proto(name: &str, t: &Tensor) -> OnnxResult<pb::TensorProto> {
    let dtype = onnx_dtype(t.desc.dtype).ok_or_else(|| {
        OnnxError::Unsupported(format!(
            "constant '{name}' has type {} which ONNX lacks",
            t.desc.dtype.serial_name()
        ))
    })?;
    let dims: Vec<i64> = t.desc.shape.to_vec();
    let mut proto = pb::TensorProto {
        dims,
        data_type: dtype,
        name: name.to_string(),
        ..Default::default()
    };
    if t.desc.dtype == DataType::STRING {
        let count = t
            .desc
            .shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
            .ok_or_else(|| {
                OnnxError::Unsupported(format!(
                    "string constant '{name}' of shape {:?} has no element count",
                    t.desc.shape
                ))
            })?;
        proto.string_data = unpack_strings(&t.data, count).ok_or_else(|| {
            OnnxError::Unsupported(format!(
                "string constant '{name}' is not in GE's string layout"
            ))
        })?;
    } else {
        proto.raw_data = t.data.clone();
    }
    Ok(proto)
}

/// An `i64` little-endian payload.
pub fn i64_payload(values: &[i64]) -> Bytes {
    let mut out = BytesMut::with_capacity(values.len() * 8);
    values.iter().for_each(|v| out.put_i64_le(*v));
    out.freeze()
}

/// Read a constant as integers (int32/int64/uint8 kinds), if it is one.
pub fn tensor_ints(t: &Tensor) -> Option<Vec<i64>> {
    let d = &t.data;
    match t.desc.dtype {
        DataType::INT64 => Some(
            d.chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
        ),
        DataType::INT32 => Some(
            d.chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes(c.try_into().unwrap_or([0; 4]))))
                .collect(),
        ),
        _ => None,
    }
}

/// A shared unknown desc (dtype undefined, unknown rank).
pub fn unknown_desc() -> Arc<TensorDesc> {
    Arc::new(desc_from_type(None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_tensor_types_are_kept_whole() {
        let seq = pb::TypeProto {
            value: Some(pb::type_proto::Value::SequenceType(Box::new(
                pb::type_proto::Sequence {
                    elem_type: Some(Box::new(tensor_type(onnx_dt::INT64, None))),
                },
            ))),
            denotation: "list".into(),
        };
        let desc = desc_from_type(Some(&seq));
        assert_eq!(desc.dtype, DataType::UNDEFINED);
        assert_eq!(type_from_desc(&desc), seq);
        // Once a pass gives the value a dense type, the kept type no longer applies.
        let mut dense = desc.clone();
        dense.dtype = DataType::FLOAT;
        assert_eq!(type_from_desc(&dense), tensor_type(onnx_dt::FLOAT, None));
    }

    #[test]
    fn tensor_types_keep_no_whole_type() {
        let desc = desc_from_type(Some(&tensor_type(onnx_dt::FLOAT8E4M3FNUZ, None)));
        assert!(kept_type(&desc).is_none());
        assert_eq!(
            type_from_desc(&desc),
            tensor_type(onnx_dt::FLOAT8E4M3FNUZ, None)
        );
    }
}
