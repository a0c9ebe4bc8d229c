//! One-pass decoding of tensor descriptors, with the per-thread desc and reserved-key caches.

use super::*;

/// The byte range of a message's attribute-map entries, which the one-pass decoders accept only
/// as one contiguous run of length-delimited fields.
#[derive(Default)]
pub(crate) struct EntrySpan {
    pub(crate) span: Option<(usize, usize)>,
    pub(crate) closed: bool,
}

impl EntrySpan {
    /// Takes field `f`: `Some(true)` when it is an entry of the map (field `number`),
    /// `Some(false)` for another field, `None` when the entries are not one contiguous run of
    /// length-delimited fields.
    pub(crate) fn feed(&mut self, f: &crate::wire::RawField, number: u32) -> Option<bool> {
        if f.number != number {
            self.closed |= self.span.is_some();
            return Some(false);
        }
        if f.wire_type != 2 {
            return None;
        }
        match &mut self.span {
            None => self.span = Some((f.start, f.end)),
            Some((_, end)) if !self.closed && *end == f.start => *end = f.end,
            Some(_) => return None,
        }
        Some(true)
    }
}

/// Decoded tensor descriptors by their encoding: identical descs met by one decoding thread
/// decode once and share one `Arc`. Each thread has its own: descs shared between threads
/// would have their reference counts written by both, which costs more on some machines than
/// decoding the desc twice.
#[derive(Default)]
pub(crate) struct DescCache<'s> {
    pub(crate) map: ByteCache<&'s [u8], Arc<TensorDesc>>,
    /// Attribute entries of descs.
    pub(crate) entries: EntryCache<'s>,
    /// Reserved desc keys (after the layout string).
    pub(crate) reserved: ReservedCache<DescReserved>,
}

/// What sets of reserved attribute entries decode to, by the encoding of the entries after a
/// prefix (what else the result depends on: an op's port counts, a desc's layout). Ops and descs
/// repeat their reserved entries far more than their other attributes.
pub(crate) struct ReservedCache<T> {
    /// Indices into `values`, by key.
    pub(crate) map: ByteCache<Box<[u8]>, usize>,
    pub(crate) values: Vec<Arc<T>>,
    /// The key being looked up (reused between lookups).
    pub(crate) key: Vec<u8>,
}

impl<T> Default for ReservedCache<T> {
    fn default() -> Self {
        ReservedCache {
            map: ByteCache::default(),
            values: Vec::new(),
            key: Vec::new(),
        }
    }
}

impl<T> ReservedCache<T> {
    /// The value of `reserved` (ranges of `entries`) after `prefix`, made by `make` from the
    /// decoded entries the first time; `Ok(None)` when an entry does not decode (the caller's
    /// full decoder then reports it). Lent, not cloned: most ops and descs only read it, and a
    /// clone is a reference-count write (and another when dropped).
    pub(crate) fn get(
        &mut self,
        prefix: &[u8],
        entries: &Bytes,
        reserved: &[ReservedEntry],
        make: impl FnOnce(BTreeMap<String, pb::AttrDef>) -> ProtoResult<T>,
    ) -> ProtoResult<Option<&Arc<T>>> {
        self.key.clear();
        self.key
            .extend_from_slice(&(prefix.len() as u64).to_le_bytes());
        self.key.extend_from_slice(prefix);
        for r in reserved {
            self.key.extend_from_slice(&entries[r.entry.0..r.entry.1]);
        }
        let hash = hash_bytes(&self.key);
        if let Some(&i) = self.map.get(hash, &self.key) {
            return Ok(self.values.get(i));
        }
        let Some(map) = decode_reserved(entries, reserved) else {
            return Ok(None);
        };
        let value = Arc::new(make(map)?);
        self.map
            .insert(hash, self.key.as_slice().into(), self.values.len());
        self.values.push(value);
        Ok(self.values.last())
    }
}

impl<'s> DescCache<'s> {
    /// The desc encoded as `raw`, a part of `owner`.
    pub(crate) fn get(
        &mut self,
        owner: &'s Bytes,
        raw: &[u8],
        ctx: DecodeCtx,
    ) -> ProtoResult<Arc<TensorDesc>> {
        let hash = hash_bytes(raw);
        if let Some(d) = self.map.get(hash, raw) {
            return Ok(d.clone());
        }
        let Some(range) = range_in(owner, raw) else {
            // Not a part of the op (no decoder path gives such a desc): decoded on its own.
            return Ok(Arc::new(desc_apart(raw, ctx)?));
        };
        let d = Arc::new(desc_from_raw(
            owner,
            range,
            &mut self.entries,
            &mut self.reserved,
            ctx,
        )?);
        self.map.insert(hash, &owner[range.0..range.1], d.clone());
        Ok(d)
    }
}

/// Decode a desc that is not a part of its op's bytes, with caches of its own.
pub(crate) fn desc_apart(raw: &[u8], ctx: DecodeCtx) -> ProtoResult<TensorDesc> {
    let copy = Bytes::copy_from_slice(raw);
    let mut entries = EntryCache::default();
    let mut reserved = ReservedCache::default();
    desc_from_raw(&copy, (0, copy.len()), &mut entries, &mut reserved, ctx)
}

/// Where `part` lies in `whole` (a range of it), when it is a part of it (the same bytes):
/// decoders then work on `whole` with offsets, and caches borrow keys from it, instead of
/// making `Bytes` slices (each a write of a reference count that every thread shares).
pub(crate) fn range_in(whole: &[u8], part: &[u8]) -> Option<(usize, usize)> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some((start, end))
}

/// Append the packed varints of `packed` to `dims` (sized once); `None` when malformed.
pub(crate) fn push_packed_ints(dims: &mut Shape, packed: &[u8]) -> Option<()> {
    dims.reserve(varint_count(packed));
    let mut q = 0usize;
    while q < packed.len() {
        dims.push(crate::wire::varint(packed, &mut q)? as i64);
    }
    Some(())
}

/// The dims of a `ShapeDef` body (packed or not; other fields skipped); `None` when malformed.
pub(crate) fn read_dims(body: &[u8]) -> Option<Shape> {
    let mut dims = Shape::new();
    let mut p = 0usize;
    while p < body.len() {
        let d = crate::wire::next_field(body, &mut p)?;
        match (d.number, d.wire_type) {
            (1, 0) => dims.push(d.varint as i64),
            (1, 2) => push_packed_ints(&mut dims, &body[d.value_start..d.end])?,
            (1, _) => return None,
            _ => {}
        }
    }
    Some(dims)
}

/// Decode the `TensorDescriptor` encoded at `range` of `owner`, unknown fields kept.
pub(crate) fn desc_from_raw<'s>(
    owner: &'s Bytes,
    range: (usize, usize),
    entries: &mut EntryCache<'s>,
    reserved: &mut ReservedCache<DescReserved>,
    ctx: DecodeCtx,
) -> ProtoResult<TensorDesc> {
    if !ctx.reference {
        if let Some(FastDesc {
            def,
            reserved,
            shape,
            origin_shape,
            user,
            attr_unknown,
            unknown,
        }) = parse_desc_fast(owner, range, entries, reserved, ctx)
        {
            check_field_keys(&user, true)?;
            let mut d = desc_from_parts(def, reserved, Some(shape), origin_shape)?;
            let attr_unknown = attr_unknown_value(attr_unknown);
            if !user.is_empty() || !unknown.is_empty() || attr_unknown.is_some() {
                let attrs = d.attrs.get_or_insert_with(Default::default);
                attrs.append(user);
                if !unknown.is_empty() {
                    attrs.insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
                }
                if let Some(v) = attr_unknown {
                    attrs.insert(ASC_ATTR_UNKNOWN.to_string(), v);
                }
            }
            return Ok(d);
        }
    }
    let raw = &owner.slice(range.0..range.1);
    let def = <pb::TensorDescriptor as prost::Message>::decode(raw.clone()).map_err(|e| {
        crate::wire::locate(raw, "TensorDescriptor")
            .map(|w| w.shifted(ctx.offset_of(raw)))
            .unwrap_or_else(|| ProtoError::Wire {
                offset: ctx.offset_of(raw),
                path: "TensorDescriptor".to_string(),
                message: e.to_string(),
            })
    })?;
    let mut d = desc_value(def, ctx)?;
    let unknown = crate::wire::unknown_fields(raw, crate::wire::TENSOR_DESC_FIELDS);
    let attr_unknown = attr_unknown_value(crate::wire::attr_unknown_fields(raw, 5));
    if !unknown.is_empty() || attr_unknown.is_some() {
        let attrs = d.attrs.get_or_insert_with(Default::default);
        if !unknown.is_empty() {
            attrs.insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
        }
        if let Some(v) = attr_unknown {
            attrs.insert(ASC_ATTR_UNKNOWN.to_string(), v);
        }
    }
    Ok(d)
}

/// TensorDescriptor attribute keys that `desc_from_def` reads itself.
pub(crate) const DESC_RESERVED: &[&str] = &[
    FORMAT_FOR_INT,
    ORIGIN_FORMAT_FOR_INT,
    ORIGIN_FORMAT,
    ORIGIN_DATA_TYPE,
    ORIGIN_SHAPE_INITIALIZED,
    ORIGIN_SHAPE,
];

/// Unknown AttrDef fields by attribute name.
pub(crate) type AttrUnknown = Vec<(String, Vec<u8>)>;

/// Read a TensorDescriptor in one pass: the message without attributes, its reserved keys
/// decoded (shared between descs), the other attributes decoded, and the unknown fields.
/// `None` whenever the full decoder is needed (malformed input, a repeated `shape`, an
/// attribute value that is not a scalar or scalar list, ...); nothing has been converted then.
pub(crate) fn parse_desc_fast<'s, 'r>(
    owner: &'s Bytes,
    (start, end): (usize, usize),
    entries: &mut EntryCache<'s>,
    reserved: &'r mut ReservedCache<DescReserved>,
    ctx: DecodeCtx,
) -> Option<FastDesc<'r>> {
    // Offsets are in `owner` (the op's bytes), the desc being `start..end` of it.
    let data: &[u8] = owner.get(..end)?;
    let mut td = pb::TensorDescriptor::default();
    let mut unknown = Vec::new();
    let mut attr_span = EntrySpan::default();
    let mut shape_seen = false;
    let mut shape = Shape::new();
    let mut layout = "";
    let mut pos = start;
    while pos < end {
        let f = crate::wire::next_field(data, &mut pos)?;
        let body = &data[f.value_start..f.end];
        if attr_span.feed(&f, 5)? {
            continue;
        }
        let v = f.varint;
        match (f.number, f.wire_type) {
            (1, 2) => td.name = fast_str(body)?,
            (2, 0) => td.dtype = v as i32,
            (3, 2) => {
                if shape_seen {
                    return None;
                }
                shape_seen = true;
                shape = read_dims(body)?;
            }
            (4, 2) => layout = crate::wire::utf8(body)?,
            (6, 2) => td.attr_groups = owner.slice(f.value_start..f.end),
            (9, 0) => td.has_out_attr = v != 0,
            (10, 0) => td.size = v as i64,
            (11, 0) => td.weight_size = v as i64,
            (12, 0) => td.reuse_input = v != 0,
            (13, 0) => td.output_tensor = v != 0,
            // Only whether it says CPU matters (see `desc_from_parts`): no copy of the usual NPU.
            (14, 2) => {
                if crate::wire::utf8(body)? == "CPU" {
                    td.device_type = "CPU".to_string();
                }
            }
            (15, 0) => td.input_tensor = v != 0,
            (16, 0) => td.real_dim_cnt = v as i64,
            (17, 0) => td.reuse_input_index = v as i64,
            (18, 0) => td.data_offset = v as i64,
            (19, 0) => td.cmps_size = v as i64,
            (20, 2) => td.cmps_tab = fast_str(body)?,
            (21, 0) => td.cmps_tab_offset = v as i64,
            (n, _) if crate::wire::TENSOR_DESC_FIELDS.contains(&n) => return None,
            _ => unknown.extend_from_slice(&data[f.start..f.end]),
        }
    }
    let (taken, origin_shape, user, attr_unknown) = match attr_span.span {
        Some(span) => {
            let mut d = attrs_direct(owner, span, 5, DESC_RESERVED, true, entries, ctx).ok()??;
            let origin_shape = take_origin_shape(owner, &mut d.reserved);
            let taken = reserved
                .get(layout.as_bytes(), owner, &d.reserved, |m| {
                    Ok(desc_reserved(m, layout, ctx))
                })
                .ok()??;
            (taken, origin_shape, d.user, d.unknown)
        }
        None => (
            reserved
                .get(layout.as_bytes(), &Bytes::new(), &[], |m| {
                    Ok(desc_reserved(m, layout, ctx))
                })
                .ok()??,
            None,
            AttrMap::new(),
            Vec::new(),
        ),
    };
    Some(FastDesc {
        def: td,
        reserved: taken,
        shape,
        origin_shape,
        user,
        attr_unknown,
        unknown,
    })
}

/// Takes the `origin_shape` entry out of `reserved` when it is the only one and a typed int
/// list: the value `desc_formats` would read. Origin shapes vary from desc to desc while the
/// other reserved keys repeat, so without it the reserved sets are shared far more often.
pub(crate) fn take_origin_shape(
    entries: &Bytes,
    reserved: &mut SmallVec<[ReservedEntry; 4]>,
) -> Option<Shape> {
    let mut at = reserved
        .iter()
        .enumerate()
        .filter(|(_, r)| r.key == ORIGIN_SHAPE);
    let (i, r) = at.next()?;
    if at.next().is_some() {
        return None;
    }
    let (vs, ve) = r.value;
    let dims = match entries.get(vs..ve).and_then(int_list_dims) {
        Some(dims) => dims,
        None => {
            let Some((Some(AttrValue::ListInt(dims)), unknown)) = fast_attr(entries, vs, ve) else {
                return None;
            };
            if !unknown.is_empty() {
                return None;
            }
            Shape::from_vec(dims)
        }
    };
    reserved.remove(i);
    Some(dims)
}

/// The ints of an `AttrDef` that is nothing but a list of ints (one `list` field whose
/// `ListValue` has only `i` values and a `val_type` of int lists), read straight into a shape;
/// `None` for anything else, which `fast_attr` then reads (origin shapes are such lists, one
/// per distinct desc).
pub(crate) fn int_list_dims(def: &[u8]) -> Option<Shape> {
    let mut pos = 0usize;
    let f = crate::wire::next_field(def, &mut pos)?;
    if (f.number, f.wire_type) != (1, 2) || pos != def.len() {
        return None;
    }
    let list = &def[f.value_start..f.end];
    let mut dims = Shape::new();
    let mut val_type = None;
    let mut p = 0usize;
    while p < list.len() {
        let g = crate::wire::next_field(list, &mut p)?;
        match (g.number, g.wire_type) {
            (3, 0) => dims.push(g.varint as i64),
            (3, 2) => push_packed_ints(&mut dims, &list[g.value_start..g.end])?,
            (20, 0) => val_type = Some(g.varint),
            _ => return None,
        }
    }
    (val_type == Some(Vt::VtListInt as u64)).then_some(dims)
}

/// A desc read in one pass.
pub(crate) struct FastDesc<'r> {
    /// Its fields other than shape and attributes.
    pub(crate) def: pb::TensorDescriptor,
    /// What its reserved keys decode to.
    pub(crate) reserved: &'r DescReserved,
    pub(crate) shape: Shape,
    /// The origin shape when read apart from the other reserved keys.
    pub(crate) origin_shape: Option<Shape>,
    /// The other attributes.
    pub(crate) user: AttrMap,
    /// The unknown `AttrDef` fields by attribute.
    pub(crate) attr_unknown: AttrUnknown,
    /// Its unknown fields.
    pub(crate) unknown: Vec<u8>,
}

/// The `_ascendir_attr_unknown_fields` value for a list of (key, unknown AttrDef fields).
pub(crate) fn attr_unknown_value(list: Vec<(String, Vec<u8>)>) -> Option<AttrValue> {
    if list.is_empty() {
        return None;
    }
    Some(AttrValue::NamedAttrs(Box::new(NamedAttrs {
        name: String::new(),
        attrs: list
            .into_iter()
            .map(|(k, v)| (k, AttrValue::Bytes(v.into())))
            .collect(),
    })))
}
