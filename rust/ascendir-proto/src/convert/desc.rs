//! Tensor descriptors: prost `TensorDescriptor` messages to and from `TensorDesc`s, with GE's
//! reserved desc keys.

use super::*;

/// Remove `key` when `accept` recognises its value; otherwise leave it as an ordinary attr.
pub(crate) fn take_if<T>(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    key: &str,
    accept: impl FnOnce(&pb::AttrDef) -> Option<T>,
) -> Option<T> {
    let v = accept(attrs.get(key)?)?;
    attrs.remove(key);
    Some(v)
}

pub(crate) fn as_i(d: &pb::AttrDef) -> Option<i64> {
    match &d.value {
        Some(V::I(i)) => Some(*i),
        _ => None,
    }
}
pub(crate) fn as_b(d: &pb::AttrDef) -> Option<bool> {
    match &d.value {
        Some(V::B(b)) => Some(*b),
        _ => None,
    }
}
pub(crate) fn as_s(d: &pb::AttrDef) -> Option<&str> {
    match &d.value {
        Some(V::S(s)) => crate::wire::utf8(s),
        _ => None,
    }
}
pub(crate) fn as_list_i(d: &pb::AttrDef) -> Option<&[i64]> {
    match &d.value {
        Some(V::List(l))
            if l.val_type == Vt::VtListInt as i32 || (l.val_type == 0 && l.s.is_empty()) =>
        {
            Some(&l.i)
        }
        _ => None,
    }
}
pub(crate) fn as_list_s(d: &pb::AttrDef) -> Option<Vec<String>> {
    match &d.value {
        Some(V::List(l))
            if l.val_type == Vt::VtListString as i32 || (l.val_type == 0 && l.i.is_empty()) =>
        {
            l.s.iter()
                .map(|s| crate::wire::utf8(s).map(str::to_string))
                .collect()
        }
        _ => None,
    }
}

pub(crate) fn i64_to_u32(v: i64, what: &str) -> ProtoResult<u32> {
    u32::try_from(v).map_err(|_| ProtoError::invalid(what, format!("{v} is out of range")))
}

/// Decode a `TensorDescriptor` (reserved keys consumed).
pub fn desc_from_def(td: pb::TensorDescriptor) -> ProtoResult<TensorDesc> {
    desc_value(td, DecodeCtx::detached())
}

/// [`desc_from_def`] within a decode.
pub(crate) fn desc_value(mut td: pb::TensorDescriptor, ctx: DecodeCtx) -> ProtoResult<TensorDesc> {
    let reserved = desc_reserved(std::mem::take(&mut td.attr), &td.layout, ctx);
    desc_from_parts(td, &reserved, None, None)
}

/// What a desc's reserved attribute keys and layout string decode to. Failures are kept and
/// reported by `desc_from_parts` in the order the fields are read (so that every decoder path
/// names the same first problem). Descs with the same reserved entries share one.
pub(crate) struct DescReserved {
    /// Format, origin format, origin dtype and origin shape, or the first error among them.
    pub(crate) formats: ProtoResult<(i32, i32, DataType, Option<Shape>)>,
    /// The attributes not taken as reserved keys (they stay attributes).
    pub(crate) leftover: ProtoResult<AttrMap>,
    /// The entry most descs carry, shared by the descs of this section: each decoding thread
    /// has its own sections, so no thread writes the reference count of another's entries.
    pub(crate) has_out_attr: Arc<AttrEntry>,
}

pub(crate) fn desc_reserved(
    mut attrs: BTreeMap<String, pb::AttrDef>,
    layout: &str,
    ctx: DecodeCtx,
) -> DescReserved {
    let formats = desc_formats(&mut attrs, layout);
    DescReserved {
        formats,
        leftover: attrs_from_map(attrs, ctx),
        has_out_attr: Arc::new(AttrEntry::new(ASC_HAS_OUT_ATTR, AttrValue::Bool(true))),
    }
}

/// Takes the format keys out of `attrs`.
pub(crate) fn desc_formats(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    layout: &str,
) -> ProtoResult<(i32, i32, DataType, Option<Shape>)> {
    let format = match take_if(attrs, FORMAT_FOR_INT, as_i) {
        Some(f) => i32::try_from(f)
            .map_err(|_| ProtoError::invalid("attr[\"format_for_int\"]", "out of range"))?,
        None => bits::parse_serial_string(layout),
    };
    // Keep the string only if it is the canonical spelling we would write again.
    let origin_format_int = take_if(attrs, ORIGIN_FORMAT_FOR_INT, |d| {
        as_i(d).and_then(|v| i32::try_from(v).ok())
    });
    let origin_format_str = take_if(attrs, ORIGIN_FORMAT, |d| {
        as_s(d).map(|s| (bits::parse_serial_string(s), s.to_string()))
    });
    let origin_format = match (origin_format_int, &origin_format_str) {
        (Some(f), _) => f,
        (None, Some((f, _))) => *f,
        (None, None) => ascendir_ir::Format::ND.value(),
    };
    if let Some((_, s)) = &origin_format_str {
        if *s != bits::serial_string(origin_format) {
            attrs.insert(ORIGIN_FORMAT.to_string(), s_attr(s));
        }
    }
    let origin_dtype = take_if(attrs, ORIGIN_DATA_TYPE, |d| {
        as_s(d)
            .map(DataType::from_serial_name)
            .filter(|t| *t != DataType::UNDEFINED && as_s(d) == Some(t.serial_name()))
    })
    .unwrap_or(DataType::UNDEFINED);
    let _ = take_if(attrs, ORIGIN_SHAPE_INITIALIZED, as_b);
    let origin_shape = take_if(attrs, ORIGIN_SHAPE, |d| as_list_i(d).map(Shape::from_slice));
    if let Some(s) = &origin_shape {
        check_dims(s).map_err(|e| e.within(|| "attr[\"origin_shape\"]".to_string()))?;
    }
    Ok((format, origin_format, origin_dtype, origin_shape))
}

/// Our keys that stand for a field of the message (or for its unknown fields), with what they
/// stand for: the encoder writes them as that, never as attributes.
const FIELD_KEYS: &[(&str, &str)] = &[
    (ASC_ATTR_GROUPS, "the attr_groups field"),
    (ASC_UNKNOWN, "the fields ge_ir.proto does not define"),
    (ASC_ATTR_UNKNOWN, "the unknown fields of attribute values"),
];

/// Refuse the attributes of a decoded op, graph or model (`desc`: a tensor desc, which also
/// has `_ascendir_has_out_attr`, the `has_out_attr` field (9)) named like one of our keys
/// that stand for a field: the encoder never writes them as attributes, so one found in the
/// input would be written back as that field, or dropped.
pub(crate) fn check_field_keys(user: &AttrMap, desc: bool) -> ProtoResult<()> {
    let desc_keys: &[(&str, &str)] = if desc {
        &[(
            ASC_HAS_OUT_ATTR,
            "the has_out_attr field (9) of the TensorDescriptor",
        )]
    } else {
        &[]
    };
    for (key, what) in desc_keys.iter().chain(FIELD_KEYS) {
        if let Some(v) = user.get(key) {
            return Err(ProtoError::invalid(
                format!("attr[\"{key}\"]"),
                format!(
                    "reserved key holding {}: it stands for {what} and is never written as an \
                     attribute",
                    v.kind().name()
                ),
            ));
        }
    }
    Ok(())
}

/// A desc from its fields (`td.attr` and `td.layout` are not read: the reserved keys and what
/// the layout gives are in `reserved`, the origin shape there or in `origin_shape`; the shape
/// is `shape` when given, else `td.shape`).
pub(crate) fn desc_from_parts(
    mut td: pb::TensorDescriptor,
    reserved: &DescReserved,
    shape: Option<Shape>,
    origin_shape: Option<Shape>,
) -> ProtoResult<TensorDesc> {
    let dims: Shape = match shape {
        Some(s) => s,
        None => td.shape.map(|s| Shape::from_vec(s.dim)).unwrap_or_default(),
    };
    check_dims(&dims).map_err(|e| e.within(|| "shape".to_string()))?;
    let (format, origin_format, origin_dtype, mut taken_shape) = reserved.formats.clone()?;
    if let Some(s) = origin_shape {
        check_dims(&s).map_err(|e| e.within(|| "attr[\"origin_shape\"]".to_string()))?;
        taken_shape = Some(s);
    }
    let origin_shape = taken_shape;
    let device_type = match td.device_type.as_str() {
        "CPU" => DeviceType::Cpu,
        _ => DeviceType::Npu,
    };
    let ext = ExtMeta {
        size: td.size,
        weight_size: td.weight_size,
        reuse_input: td.reuse_input,
        output_tensor: td.output_tensor,
        input_tensor: td.input_tensor,
        device_type,
        real_dim_cnt: i64_to_u32(td.real_dim_cnt, "real_dim_cnt")?,
        reuse_input_index: i64_to_u32(td.reuse_input_index, "reuse_input_index")?,
        data_offset: td.data_offset,
        cmps_size: td.cmps_size,
        cmps_tab: std::mem::take(&mut td.cmps_tab),
        cmps_tab_offset: td.cmps_tab_offset,
    };
    let mut user = reserved.leftover.clone()?;
    check_field_keys(&user, true)?;
    if td.has_out_attr {
        user.insert_entry(reserved.has_out_attr.clone());
    }
    if !td.attr_groups.is_empty() {
        user.insert(
            ASC_ATTR_GROUPS.to_string(),
            AttrValue::Bytes(td.attr_groups),
        );
    }
    // An unknown number would load as UNDEFINED and be lost on the next save: refused.
    let dtype = DataType::from_proto(td.dtype);
    if dtype == DataType::UNDEFINED && td.dtype != DataType::UNDEFINED.to_proto() {
        return Err(ProtoError::invalid(
            "dtype",
            format!("unknown ge.proto DataType number {}", td.dtype),
        ));
    }
    Ok(TensorDesc {
        shape: dims,
        dtype,
        format,
        origin_format,
        origin_dtype,
        origin_shape: origin_shape.map(Box::new),
        name: if td.name.is_empty() {
            None
        } else {
            Some(td.name.into_boxed_str())
        },
        ext: if ext == ExtMeta::default() {
            None
        } else {
            Some(Box::new(ext))
        },
        attrs: if user.is_empty() {
            None
        } else {
            Some(Box::new(user))
        },
    })
}

pub(crate) fn check_dims(dims: &[i64]) -> ProtoResult<()> {
    for (i, &d) in dims.iter().enumerate() {
        if d < -2 || (d == -2 && dims.len() != 1) {
            return Err(ProtoError::invalid(
                format!("dim[{i}]"),
                format!("bad dimension {d} in shape {dims:?} (allowed: ≥ 0, -1 unknown, [-2] unknown rank)"),
            ));
        }
    }
    Ok(())
}

/// The `has_out_attr` field a desc is written with: its `_ascendir_has_out_attr` attribute,
/// which must be a bool (any other kind would be lost on the way out).
pub(crate) fn has_out_attr_flag(user: &AttrMap) -> ProtoResult<bool> {
    match user.get(ASC_HAS_OUT_ATTR) {
        None => Ok(false),
        Some(AttrValue::Bool(b)) => Ok(*b),
        Some(v) => Err(ProtoError::Encode(format!(
            "tensor desc attribute '{ASC_HAS_OUT_ATTR}' is reserved for the has_out_attr field \
             and must be a BOOL; it holds {}",
            v.kind().name()
        ))),
    }
}

/// Encode a tensor desc the way GE does (reserved keys after user attrs).
pub fn desc_to_def(d: &TensorDesc) -> ProtoResult<pb::TensorDescriptor> {
    let empty = AttrMap::new();
    let user = d.attrs.as_deref().unwrap_or(&empty);
    let mut attr = attrs_to_map(user, &[ASC_HAS_OUT_ATTR, ASC_ATTR_GROUPS])?;
    for (key, value) in desc_reserved_entries(d).0 {
        let def = <pb::AttrDef as prost::Message>::decode(value.as_slice())
            .map_err(|e| ProtoError::Encode(format!("attr[{key:?}]: {e}")))?;
        attr.insert(key.to_string(), def);
    }
    let ext = d.ext.as_deref().cloned().unwrap_or_default();
    let attr_groups = attr_groups_of(user);
    Ok(pb::TensorDescriptor {
        name: d.name.as_deref().unwrap_or("").to_string(),
        dtype: d.dtype.to_proto(),
        shape: Some(pb::ShapeDef {
            dim: d.shape.to_vec(),
        }),
        layout: bits::serial_string(d.format),
        has_out_attr: has_out_attr_flag(user)?,
        size: ext.size,
        weight_size: ext.weight_size,
        reuse_input: ext.reuse_input,
        output_tensor: ext.output_tensor,
        device_type: match ext.device_type {
            DeviceType::Npu => "NPU".to_string(),
            DeviceType::Cpu => "CPU".to_string(),
        },
        input_tensor: ext.input_tensor,
        real_dim_cnt: i64::from(ext.real_dim_cnt),
        reuse_input_index: i64::from(ext.reuse_input_index),
        data_offset: ext.data_offset,
        cmps_size: ext.cmps_size,
        cmps_tab: ext.cmps_tab,
        cmps_tab_offset: ext.cmps_tab_offset,
        attr,
        attr_groups,
    })
}
