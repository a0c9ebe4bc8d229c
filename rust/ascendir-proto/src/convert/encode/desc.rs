//! Encoding tensor descriptors, each distinct desc once per thread.

use super::*;

/// Encoded tensor descriptors by `Arc` identity (shared descs are encoded once per thread):
/// each encoding thread has its own. The encodings are ranges of one buffer, copied from it
/// as they are written (no reference count per use).
#[derive(Default)]
pub(crate) struct DescEncCache {
    pub(crate) local: FxHashMap<usize, (usize, usize)>,
    /// The encodings, one after another.
    pub(crate) descs: Vec<u8>,
    /// Attribute entries shared by several maps.
    pub(crate) entries: EntryEncodings,
}

/// The encodings of attribute entries held by several maps (a decoded graph shares every
/// repeated entry), by entry address and map field: written once per thread, then copied.
/// Entries held by one map only are written directly (no bookkeeping).
#[derive(Default)]
pub(crate) struct EntryEncodings {
    pub(crate) at: FxHashMap<(usize, u32), (usize, usize)>,
    pub(crate) bytes: Vec<u8>,
}

impl EntryEncodings {
    /// Write `entry` as map field `field`.
    pub(crate) fn write(
        &mut self,
        entry: &Arc<AttrEntry>,
        field: u32,
        out: &mut Vec<u8>,
    ) -> ProtoResult<()> {
        let shared = Arc::strong_count(entry) > 1;
        let key = (Arc::as_ptr(entry) as usize, field);
        if shared {
            if let Some(&(start, end)) = self.at.get(&key) {
                out.extend_from_slice(&self.bytes[start..end]);
                return Ok(());
            }
        }
        let begin = out.len();
        let (k, v) = (entry.key(), entry.value());
        put_nested(field, out, |o| {
            if !k.is_empty() {
                put_len_delimited(1, k.as_bytes(), o);
            }
            put_nested(2, o, |o| encode_attr_value(v, o))
        })
        .map_err(|e| e.within(|| format!("attr[{k:?}]")))?;
        if shared {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(&out[begin..]);
            self.at.insert(key, (start, self.bytes.len()));
        }
        Ok(())
    }
}

/// The range of `cache.descs` that holds the encoding of `d` (encoded there first if new).
pub(crate) fn encode_desc_cached(
    d: &Arc<TensorDesc>,
    cache: &mut DescEncCache,
) -> ProtoResult<(usize, usize)> {
    let key = Arc::as_ptr(d) as usize;
    if let Some(&range) = cache.local.get(&key) {
        return Ok(range);
    }
    let start = cache.descs.len();
    if let Err(e) = encode_desc(d, &mut cache.entries, &mut cache.descs) {
        cache.descs.truncate(start);
        return Err(e);
    }
    let range = (start, cache.descs.len());
    cache.local.insert(key, range);
    Ok(range)
}

/// The reserved attribute entries written for `d`, as encoded `AttrDef`s: its origin format
/// (name and number), format number, origin dtype, whether it has an origin shape, and that
/// shape.
pub(crate) fn desc_reserved_entries(d: &TensorDesc) -> GenAttrs {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let varint = |field: u32, v: u64| {
        let mut b = Vec::with_capacity(10);
        encode_key(field, WireType::Varint, &mut b);
        encode_varint(v, &mut b);
        b
    };
    let string = |s: &str| {
        let mut b = Vec::with_capacity(s.len() + 2);
        put_len_delimited(2, s.as_bytes(), &mut b);
        b
    };
    let mut reserved = GenAttrs::default();
    reserved.insert(ORIGIN_FORMAT, string(&bits::serial_string(d.origin_format)));
    reserved.insert(
        ORIGIN_FORMAT_FOR_INT,
        varint(3, i64::from(d.origin_format) as u64),
    );
    reserved.insert(FORMAT_FOR_INT, varint(3, i64::from(d.format) as u64));
    if d.origin_dtype != DataType::UNDEFINED {
        reserved.insert(ORIGIN_DATA_TYPE, string(d.origin_dtype.serial_name()));
    }
    reserved.insert(
        ORIGIN_SHAPE_INITIALIZED,
        varint(5, u64::from(d.origin_shape.is_some())),
    );
    if let Some(s) = &d.origin_shape {
        reserved.insert(ORIGIN_SHAPE, gen_i(Vt::VtListInt, s.iter().copied()));
    }
    reserved
}

/// Write `d` as a `TensorDescriptor` (the bytes prost writes for `desc_to_def(d)`, then the
/// unknown fields), straight from the desc: no message, no attribute map is built.
pub(crate) fn encode_desc(
    d: &TensorDesc,
    enc: &mut EntryEncodings,
    out: &mut Vec<u8>,
) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let varint = |field: u32, v: u64, out: &mut Vec<u8>| {
        if v != 0 {
            encode_key(field, WireType::Varint, out);
            encode_varint(v, out);
        }
    };
    let text = |field: u32, s: &str, out: &mut Vec<u8>| {
        if !s.is_empty() {
            put_len_delimited(field, s.as_bytes(), out);
        }
    };
    let empty = AttrMap::new();
    let user = d.attrs.as_deref().unwrap_or(&empty);
    text(1, d.name.as_deref().unwrap_or(""), out);
    varint(2, d.dtype.to_proto() as i64 as u64, out);
    put_nested(3, out, |o| {
        put_packed_varints(1, d.shape.iter().map(|&v| v as u64), o)
    });
    text(4, &bits::serial_string(d.format), out);
    // The reserved keys (they replace user entries of one name).
    let reserved = desc_reserved_entries(d);
    let extra = encode_attr_map(
        user,
        &reserved,
        &[ASC_HAS_OUT_ATTR, ASC_ATTR_GROUPS],
        5,
        enc,
        out,
    )?;
    if let Some(AttrValue::Bytes(b)) = user.get(ASC_ATTR_GROUPS) {
        if !b.is_empty() {
            put_len_delimited(6, b, out);
        }
    }
    varint(9, u64::from(has_out_attr_flag(user)?), out);
    let ext = d.ext.as_deref().cloned().unwrap_or_default();
    varint(10, ext.size as u64, out);
    varint(11, ext.weight_size as u64, out);
    varint(12, u64::from(ext.reuse_input), out);
    varint(13, u64::from(ext.output_tensor), out);
    let device = match ext.device_type {
        DeviceType::Npu => "NPU",
        DeviceType::Cpu => "CPU",
    };
    text(14, device, out);
    varint(15, u64::from(ext.input_tensor), out);
    varint(16, u64::from(ext.real_dim_cnt), out);
    varint(17, u64::from(ext.reuse_input_index), out);
    varint(18, ext.data_offset as u64, out);
    varint(19, ext.cmps_size as u64, out);
    text(20, &ext.cmps_tab, out);
    varint(21, ext.cmps_tab_offset as u64, out);
    out.extend_from_slice(&extra);
    Ok(())
}
