//! Attribute maps straight from the wire: entries decoded once per distinct encoding, the common
//! value kinds read without prost.

use super::*;

/// OpDef attribute keys that `attr_section` reads itself (decoded as prost messages).
pub(crate) const OP_RESERVED: &[&str] = &[
    INPUT_NAME_KEY,
    INPUT_NAME_VALUE,
    OUTPUT_NAME_KEY,
    OUTPUT_NAME_VALUE,
    LEGACY_INPUT_NAME_KEY,
    LEGACY_INPUT_NAME_VALUE,
    LEGACY_OUTPUT_NAME_KEY,
    LEGACY_OUTPUT_NAME_VALUE,
    OPT_INPUT,
    IR_ATTR_NAMES,
    IR_INPUTS_KEY,
    IR_INPUTS_VALUE,
    IR_OUTPUTS_KEY,
    IR_OUTPUTS_VALUE,
    ASC_SUBGRAPH_IR_NAMES,
    ASC_SUBGRAPH_IR_TYPES,
    ASC_IN_CTRL,
    ASC_CTRL_TO_DATA,
    ASC_FANOUT,
];

/// A reserved attribute entry, left encoded: its name and the byte ranges of the whole map
/// entry field and of its `AttrDef`.
pub(crate) struct ReservedEntry<'a> {
    pub(crate) key: &'a str,
    pub(crate) entry: (usize, usize),
    pub(crate) value: (usize, usize),
}

/// The reserved entries as prost messages, in wire order (a later entry of a name replaces an
/// earlier one); `None` when one does not decode.
pub(crate) fn decode_reserved(
    entries: &Bytes,
    reserved: &[ReservedEntry],
) -> Option<BTreeMap<String, pb::AttrDef>> {
    let mut map = BTreeMap::new();
    for r in reserved {
        let value = entries.slice(r.value.0..r.value.1);
        let d = <pb::AttrDef as prost::Message>::decode(value).ok()?;
        map.insert(r.key.to_string(), d);
    }
    Some(map)
}

impl DirectAttrs<'_> {
    /// Record the unknown `AttrDef` fields of entry `key` (a later entry of a key replaces
    /// the earlier one's).
    #[inline(always)]
    pub(crate) fn note_unknown(&mut self, key: &str, unknown: Vec<u8>) {
        // Almost always there is nothing to record and nothing to replace.
        if !self.unknown.is_empty() || !unknown.is_empty() {
            self.replace_unknown(key, unknown);
        }
    }

    #[cold]
    pub(crate) fn replace_unknown(&mut self, key: &str, unknown: Vec<u8>) {
        self.unknown.retain(|(k, _)| k != key);
        if !unknown.is_empty() {
            self.unknown.push((key.to_string(), unknown));
        }
    }
}

/// Attribute entries read straight from the wire.
pub(crate) struct DirectAttrs<'a> {
    /// Reserved keys, still encoded (for the caller's own reading).
    pub(crate) reserved: SmallVec<[ReservedEntry<'a>; 4]>,
    /// Every other key, decoded.
    pub(crate) user: AttrMap,
    /// Keys whose `AttrDef` carried unknown fields, with those fields.
    pub(crate) unknown: Vec<(String, Vec<u8>)>,
}

/// Decoded attribute entries by their encoding (the map entry: name and `AttrDef`), so that
/// every distinct entry met by one decoding thread is decoded once and its repeats share it.
/// Entries with unknown fields or without a value are not kept (they are rare). One cache per
/// kind of map (op or desc attributes): which keys are reserved depends on it.
#[derive(Default)]
pub(crate) struct EntryCache<'s>(pub(crate) ByteCache<&'s [u8], CachedEntry>);

/// What an attribute entry's encoding was found to be.
pub(crate) enum CachedEntry {
    /// A user attribute, decoded.
    User(Arc<AttrEntry>),
    /// A reserved key (left encoded for the caller) whose `AttrDef` is `len` bytes at offset
    /// `at` of the entry's encoding.
    Reserved {
        key: &'static str,
        at: usize,
        len: usize,
    },
}

/// Decode a run of `map<string, AttrDef>` entries (field `field`, nothing else in `entries`).
/// `Ok(None)` when the entries need the full decoder (malformed bytes, unusual entry layout);
/// that is decided before any value is converted, so nothing is converted twice. Conversion
/// errors name the attribute as the full decoder does.
pub(crate) fn attrs_direct<'s>(
    entries: &'s Bytes,
    (start, end): (usize, usize),
    field: u32,
    reserved: &[&'static str],
    fast_only: bool,
    cache: &mut EntryCache<'s>,
    ctx: DecodeCtx,
) -> ProtoResult<Option<DirectAttrs<'s>>> {
    // Offsets are in `entries` (the op's bytes), the run of entries being `start..end` of it.
    let Some(data) = entries.get(..end) else {
        return Ok(None);
    };
    // One pass in wire order (a later entry of a key replaces an earlier one). The first
    // conversion error is kept, not returned, until every entry has been read: malformed bytes
    // after it still send the whole map to the full decoder, which then names the problem.
    let mut out = DirectAttrs {
        reserved: SmallVec::new(),
        user: AttrMap::with_capacity(end.saturating_sub(start) / 24 + 1),
        unknown: Vec::new(),
    };
    let mut failed: Option<ProtoError> = None;
    let mut pos = start;
    while pos < end {
        let Some(f) = crate::wire::next_field(data, &mut pos) else {
            return Ok(None);
        };
        if f.number != field || f.wire_type != 2 {
            return Ok(None);
        }
        let encoding = &data[f.value_start..f.end];
        let hash = hash_bytes(encoding);
        match cache.0.get(hash, encoding) {
            Some(CachedEntry::User(e)) => {
                out.note_unknown(e.key(), Vec::new());
                out.user.insert_entry(e.clone());
                continue;
            }
            Some(&CachedEntry::Reserved { key, at, len }) => {
                out.note_unknown(key, Vec::new());
                let vs = f.value_start + at;
                out.reserved.push(ReservedEntry {
                    key,
                    entry: (f.start, f.end),
                    value: (vs, vs + len),
                });
                continue;
            }
            None => {}
        }
        let entry = &data[..f.end];
        let mut key: Option<&[u8]> = None;
        let mut val: Option<(usize, usize)> = None;
        let mut p = f.value_start;
        while p < f.end {
            let Some(e) = crate::wire::next_field(entry, &mut p) else {
                return Ok(None);
            };
            match (e.number, e.wire_type) {
                // A repeated key (each occurrence must be UTF-8): left to the full decoder.
                (1, 2) if key.is_none() => key = Some(&data[e.value_start..e.end]),
                (2, 2) if val.is_none() => val = Some((e.value_start, e.end)),
                _ => return Ok(None),
            }
        }
        let Some(key) = crate::wire::utf8(key.unwrap_or(b"")) else {
            return Ok(None);
        };
        // The value stays a borrowed range: a `Bytes` slice (a shared reference count that
        // every worker thread would touch) is made only for a bytes value or the prost path.
        let (vs, ve) = val.unwrap_or((0, 0));
        if let Some(&key) = reserved.iter().find(|r| **r == key) {
            // Decoded by the caller (once per distinct set of reserved entries); the unknown
            // fields are read here, which also checks the value's framing.
            let u = crate::wire::unknown_fields(&data[vs..ve], crate::wire::ATTR_DEF_FIELDS);
            if u.is_empty() && val.is_some() {
                let found = CachedEntry::Reserved {
                    key,
                    at: vs - f.value_start,
                    len: ve - vs,
                };
                cache.0.insert(hash, encoding, found);
            }
            out.note_unknown(key, u);
            out.reserved.push(ReservedEntry {
                key,
                entry: (f.start, f.end),
                value: (vs, ve),
            });
            continue;
        }
        let value = match fast_attr(entries, vs, ve) {
            Some((Some(v), u)) if u.is_empty() => {
                let e = Arc::new(AttrEntry::new(key, v));
                cache.0.insert(hash, encoding, CachedEntry::User(e.clone()));
                out.note_unknown(key, u);
                out.user.insert_entry(e);
                continue;
            }
            Some((v, u)) => {
                out.note_unknown(key, u);
                v
            }
            None if fast_only => return Ok(None),
            None => {
                let vb = entries.slice(vs..ve);
                let Ok(d) = <pb::AttrDef as prost::Message>::decode(vb.clone()) else {
                    return Ok(None);
                };
                out.note_unknown(
                    key,
                    crate::wire::unknown_fields(&vb, crate::wire::ATTR_DEF_FIELDS),
                );
                if failed.is_some() {
                    continue;
                }
                match attr_value(d, ctx) {
                    Ok(v) => v,
                    Err(e) => {
                        failed = Some(e.within(|| format!("attr[{key:?}]")));
                        continue;
                    }
                }
            }
        };
        match value {
            Some(v) => {
                out.user.insert(key, v);
            }
            None => {
                out.user.remove(key);
            }
        }
    }
    match failed {
        // The caller reports this error through the full decoder, which also checks the
        // reserved entries (and meets their problems first).
        Some(e) => Err(e),
        None => Ok(Some(out)),
    }
}

pub(crate) fn utf8_string(b: &[u8]) -> Option<String> {
    crate::wire::utf8(b).map(str::to_string)
}

/// One `AttrDef` (bytes `start..end` of `entries`) of a common kind (scalars, scalar lists) with
/// its unknown fields; `None` for the others (the full decoder handles them).
pub(crate) fn fast_attr(
    entries: &Bytes,
    start: usize,
    end: usize,
) -> Option<(Option<AttrValue>, Vec<u8>)> {
    let data: &[u8] = entries.get(start..end)?;
    let mut val: Option<Option<AttrValue>> = None;
    let mut unknown = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        let v = f.varint;
        let body = &data[f.value_start..f.end];
        let got = match (f.number, f.wire_type) {
            (2, 2) => Some(AttrValue::String(utf8_string(body)?)),
            (3, 0) => Some(AttrValue::Int(v as i64)),
            (4, 5) => Some(AttrValue::Float(f32::from_le_bytes(body.try_into().ok()?))),
            (5, 0) => Some(AttrValue::Bool(v != 0)),
            (7, 2) => Some(AttrValue::Bytes(
                entries.slice(start + f.value_start..start + f.end),
            )),
            (15, 0) => Some(AttrValue::DataType(DataType::from_ge(v as i64)?)),
            (17, 2) => Some(AttrValue::Expression(utf8_string(body)?)),
            (1, 2) => fast_list(body)?,
            (14, 2) => Some(AttrValue::ListListInt(fast_list_list(
                body,
                |b, out| {
                    let mut p = 0usize;
                    while p < b.len() {
                        out.push(crate::wire::varint(b, &mut p)? as i64);
                    }
                    Some(())
                },
                |v, out| {
                    out.push(v as i64);
                    Some(())
                },
            )?)),
            (16, 2) => Some(AttrValue::ListListFloat(fast_list_list(
                body,
                |b, out| {
                    if b.len() % 4 != 0 {
                        return None;
                    }
                    out.extend(
                        b.chunks_exact(4)
                            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    );
                    Some(())
                },
                |_, _| None,
            )?)),
            (n, _) if crate::wire::ATTR_DEF_FIELDS.contains(&n) => return None,
            _ => {
                unknown.extend_from_slice(&data[f.start..f.end]);
                continue;
            }
        };
        if val.is_some() {
            return None;
        }
        val = Some(got);
    }
    Some((val.flatten(), unknown))
}

/// A `ListListInt` / `ListListFloat`: field 1 repeated, each a message whose field 1 is the
/// list (`packed` reads a packed run, `one` a single varint; floats come as fixed32 too).
pub(crate) fn fast_list_list<T>(
    data: &[u8],
    packed: impl Fn(&[u8], &mut Vec<T>) -> Option<()>,
    one: impl Fn(u64, &mut Vec<T>) -> Option<()>,
) -> Option<Vec<Vec<T>>>
where
    T: FromFixed32,
{
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        match (f.number, f.wire_type) {
            (1, 2) => {
                let inner = &data[f.value_start..f.end];
                let mut list = Vec::new();
                let mut p = 0usize;
                while p < inner.len() {
                    let e = crate::wire::next_field(inner, &mut p)?;
                    match (e.number, e.wire_type) {
                        (1, 2) => packed(&inner[e.value_start..e.end], &mut list)?,
                        (1, 0) => one(e.varint, &mut list)?,
                        (1, 5) => list.push(T::from_fixed32(&inner[e.value_start..e.end])?),
                        (1, _) => return None,
                        _ => {}
                    }
                }
                out.push(list);
            }
            (1, _) => return None,
            _ => {}
        }
    }
    Some(out)
}

/// Element types of the list-of-lists attributes read from fixed32 values.
pub(crate) trait FromFixed32: Sized {
    fn from_fixed32(b: &[u8]) -> Option<Self>;
}

impl FromFixed32 for i64 {
    // An int64 list never holds fixed32 values: the full decoder rejects them.
    fn from_fixed32(_: &[u8]) -> Option<Self> {
        None
    }
}

impl FromFixed32 for f32 {
    fn from_fixed32(b: &[u8]) -> Option<Self> {
        Some(f32::from_le_bytes(b.try_into().ok()?))
    }
}

/// The number of varints in a packed run (bytes without the continuation bit), to size the list
/// once.
pub(crate) fn varint_count(packed: &[u8]) -> usize {
    packed.iter().filter(|&&b| b < 0x80).count()
}

/// A `ListValue` of scalars: `Some(None)` for an untyped list (GE skips it), `None` when the
/// full decoder is needed.
pub(crate) fn fast_list(data: &[u8]) -> Option<Option<AttrValue>> {
    let mut s: Vec<&[u8]> = Vec::new();
    let mut i: Vec<i64> = Vec::new();
    let mut fl: Vec<f32> = Vec::new();
    let mut b: Vec<bool> = Vec::new();
    let mut dt: Vec<i64> = Vec::new();
    let mut vt: i32 = 0;
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        let v = f.varint;
        let body = &data[f.value_start..f.end];
        match (f.number, f.wire_type) {
            (2, 2) => s.push(body),
            (3, 0) => i.push(v as i64),
            (12, 0) => dt.push(v as i64),
            (3 | 12, 2) => {
                let list = if f.number == 3 { &mut i } else { &mut dt };
                list.reserve(varint_count(body));
                let mut p = 0usize;
                while p < body.len() {
                    list.push(crate::wire::varint(body, &mut p)? as i64);
                }
            }
            (4, 5) => fl.push(f32::from_le_bytes(body.try_into().ok()?)),
            (4, 2) => {
                if body.len() % 4 != 0 {
                    return None;
                }
                fl.extend(
                    body.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
            }
            (5, 0) => b.push(v != 0),
            (5, 2) => {
                b.reserve(varint_count(body));
                let mut p = 0usize;
                while p < body.len() {
                    b.push(crate::wire::varint(body, &mut p)? != 0);
                }
            }
            (20, 0) => vt = v as i32,
            // Bytes, descs, tensors, graphs, named attrs, or a wrong wire type.
            (7 | 8 | 9 | 10 | 11 | 2 | 3 | 4 | 5 | 12 | 20, _) => return None,
            _ => {}
        }
    }
    Some(match Vt::try_from(vt).unwrap_or(Vt::VtListNone) {
        Vt::VtListNone => None,
        Vt::VtListString => Some(AttrValue::ListString(
            s.into_iter().map(utf8_string).collect::<Option<_>>()?,
        )),
        Vt::VtListInt => Some(AttrValue::ListInt(i)),
        Vt::VtListFloat => Some(AttrValue::ListFloat(fl)),
        Vt::VtListBool => Some(AttrValue::ListBool(b)),
        Vt::VtListDataType => Some(AttrValue::ListDataType(
            dt.into_iter()
                .map(DataType::from_ge)
                .collect::<Option<_>>()?,
        )),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn list_def(f: impl FnOnce(&mut pb::attr_def::ListValue)) -> Vec<u8> {
        let mut l = pb::attr_def::ListValue::default();
        f(&mut l);
        pb::AttrDef {
            value: Some(V::List(l)),
        }
        .encode_to_vec()
    }

    #[test]
    fn int_lists_read_apart_as_the_general_reader_reads_them() {
        let unpacked_key = |n: u8| vec![(3 << 3) as u8, n]; // ListValue.i, one varint
        let mut cases = vec![
            list_def(|l| {
                l.i = vec![1, 3, 224, 224];
                l.val_type = Vt::VtListInt as i32;
            }),
            list_def(|l| {
                l.i = vec![-1, 0, 1 << 40];
                l.val_type = Vt::VtListInt as i32;
            }),
            list_def(|l| l.val_type = Vt::VtListInt as i32),
            list_def(|l| l.i = vec![1, 2]),
            list_def(|l| {
                l.i = vec![1, 2];
                l.val_type = Vt::VtListFloat as i32;
            }),
            list_def(|l| {
                l.i = vec![4];
                l.s = vec![b"x".to_vec().into()];
                l.val_type = Vt::VtListInt as i32;
            }),
        ];
        // Unpacked ints and a val_type of int lists, written by hand.
        let mut list = unpacked_key(5);
        list.extend(unpacked_key(6));
        list.extend([(20 << 3) as u8, Vt::VtListInt as u8]);
        let mut def = vec![(1 << 3 | 2) as u8, list.len() as u8];
        def.extend(list);
        cases.push(def);
        for def in cases {
            let bytes = Bytes::from(def.clone());
            let general = match fast_attr(&bytes, 0, bytes.len()) {
                Some((Some(AttrValue::ListInt(v)), u)) if u.is_empty() => Some(v),
                _ => None,
            };
            if let Some(dims) = int_list_dims(&def) {
                assert_eq!(Some(dims.to_vec()), general, "{def:?}");
            }
        }
        let typical = list_def(|l| {
            l.i = vec![1, 3, 224, 224];
            l.val_type = Vt::VtListInt as i32;
        });
        assert_eq!(
            int_list_dims(&typical).map(|d| d.to_vec()),
            Some(vec![1, 3, 224, 224])
        );
    }
}
