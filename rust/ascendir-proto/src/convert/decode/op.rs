//! One-pass decoding of ops, falling back to the reference path (prost, then conversion) for
//! anything it does not read itself.

use super::*;

/// Per-chunk decode caches: tensor descriptors, attribute entries and port sections.
#[derive(Default)]
pub(crate) struct ChunkCache<'s> {
    pub(crate) descs: DescCache<'s>,
    /// Attribute entries of ops (`descs` has those of descs).
    pub(crate) op_entries: EntryCache<'s>,
    /// Port sections (after the op's input, output and subgraph-slot counts).
    pub(crate) ports: ReservedCache<PortSection>,
    /// Op types.
    pub(crate) types: Interner,
}

impl<'s> ChunkCache<'s> {
    /// Caches for a thread decoding ops of a graph of `n_ops` ops, sized for the distinct
    /// entries and descs such a graph typically has.
    pub(crate) fn new(n_ops: usize) -> Self {
        ChunkCache {
            descs: DescCache {
                map: ByteCache::with_capacity(n_ops.min(1024)),
                entries: EntryCache(ByteCache::with_capacity(n_ops.min(1024))),
                reserved: ReservedCache::default(),
            },
            op_entries: EntryCache(ByteCache::with_capacity((2 * n_ops).min(4096))),
            ports: ReservedCache::default(),
            types: Interner::default(),
        }
    }
}

/// An OpDef read straight from its encoding: the scalar and list fields, descs as slices of
/// the input, the byte range of the attribute entries and the unknown fields.
pub(crate) struct FastOp<'a> {
    /// The op without name and type (those are `name` / `ty`).
    pub(crate) def: pb::OpDef,
    pub(crate) name: &'a str,
    pub(crate) ty: &'a str,
    pub(crate) span: Option<(usize, usize)>,
    pub(crate) unknown: Vec<u8>,
    /// The input and output descs' encodings.
    pub(crate) descs: [DescList<'a>; 2],
    /// The byte ranges of the input edge strings.
    pub(crate) inputs: SmallVec<[(usize, usize); 4]>,
}

/// The desc encodings of one side of an op.
pub(crate) type DescList<'a> = SmallVec<[&'a [u8]; 4]>;

pub(crate) fn fast_str(b: &[u8]) -> Option<String> {
    crate::wire::utf8(b).map(str::to_string)
}

/// Read an OpDef in one pass. `None` whenever the bytes need the full decoder: malformed
/// input, a known field with an unexpected wire type, groups, attribute entries that are not
/// contiguous. Accepts nothing that prost rejects, so the result equals prost's.
pub(crate) fn parse_op_fast(raw: &Bytes) -> Option<FastOp<'_>> {
    let data: &[u8] = raw;
    let mut descs: [DescList; 2] = Default::default();
    let mut def = pb::OpDef::default();
    let mut name = "";
    let mut ty = "";
    let mut span = EntrySpan::default();
    let mut inputs: SmallVec<[(usize, usize); 4]> = SmallVec::new();
    let mut unknown = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        let body = &data[f.value_start..f.end];
        if span.feed(&f, 10)? {
            continue;
        }
        let v = f.varint;
        match (f.number, f.wire_type) {
            (1, 2) => name = crate::wire::utf8(body)?,
            (2, 2) => ty = crate::wire::utf8(body)?,
            (5, 2) => {
                crate::wire::utf8(body)?;
                inputs.push((f.value_start, f.end));
            }
            (11, 2) => def.attr_groups = raw.slice(f.value_start..f.end),
            (20, 0) => def.has_out_attr = v != 0,
            (21, 0) => def.id = v as i64,
            (22, 0) => def.stream_id = v as i64,
            (23, 2) => def.input_name.push(fast_str(body)?),
            (24, 2) => def.src_name.push(fast_str(body)?),
            (26, 2) => def.dst_name.push(fast_str(body)?),
            (35, 2) => def.subgraph_name.push(fast_str(body)?),
            (33, 2) => descs[0].push(body),
            (34, 2) => descs[1].push(body),
            (n @ (25 | 27 | 28 | 29 | 30 | 31), wt @ (0 | 2)) => {
                let list = match n {
                    25 => &mut def.src_index,
                    27 => &mut def.dst_index,
                    28 => &mut def.input_i,
                    29 => &mut def.output_i,
                    30 => &mut def.workspace,
                    _ => &mut def.workspace_bytes,
                };
                if wt == 0 {
                    list.push(v as i64);
                } else {
                    let mut p = 0usize;
                    while p < body.len() {
                        list.push(crate::wire::varint(body, &mut p)? as i64);
                    }
                }
            }
            (32, 0) => def.is_input_const.push(v != 0),
            (32, 2) => {
                let mut p = 0usize;
                while p < body.len() {
                    def.is_input_const
                        .push(crate::wire::varint(body, &mut p)? != 0);
                }
            }
            (n, _) if crate::wire::OP_DEF_FIELDS.contains(&n) => return None,
            _ => unknown.extend_from_slice(&data[f.start..f.end]),
        }
    }
    Some(FastOp {
        def,
        name,
        ty,
        span: span.span,
        unknown,
        descs,
        inputs,
    })
}

/// Decode op `i`: one pass over its bytes, attribute entries, port sections and descs from the
/// caches. Any problem goes to the full decoder, which reports it with its offset and field
/// path.
pub(crate) fn op_from_raw<'s>(
    raw: &'s Bytes,
    i: usize,
    cache: &mut ChunkCache<'s>,
    ctx: DecodeCtx,
) -> ProtoResult<PendingOp> {
    let fast = if ctx.reference {
        None
    } else {
        parse_op_fast(raw)
    };
    if let Some(fast) = fast {
        let name = fast.name;
        match op_from_fast(raw, fast, cache, ctx) {
            Ok(Some(p)) => return Ok(p),
            Ok(None) => {}
            Err(e) => {
                // The reference decoder meets an op's problems in its own order (wire, then
                // the reserved keys, then the user attributes and descs): its error is the one
                // reported. It decodes the op's nested graphs with no one-pass attempt, so a
                // failure nested k graphs deep costs k decodes of it, not 2^k. It cannot accept
                // what the one-pass decoder refused; if it did, the one-pass error stands.
                let reference = DecodeCtx {
                    reference: true,
                    ..ctx
                };
                return match op_from_raw_plain(raw, i, &mut cache.descs, reference) {
                    Err(full) => Err(full),
                    Ok(_) => Err(e.within(|| format!("op[{i}]({name})"))),
                };
            }
        }
    }
    op_from_raw_plain(raw, i, &mut cache.descs, ctx)
}

/// `Ok(None)` when the op needs the full decoder (decided before anything is converted).
pub(crate) fn op_from_fast<'s>(
    raw: &'s Bytes,
    fast: FastOp,
    cache: &mut ChunkCache<'s>,
    ctx: DecodeCtx,
) -> ProtoResult<Option<PendingOp>> {
    let FastOp {
        mut def,
        name,
        ty,
        span,
        unknown,
        descs,
        inputs,
    } = fast;
    let span = span.unwrap_or((0, 0));
    let Some(direct) = attrs_direct(
        raw,
        span,
        10,
        OP_RESERVED,
        false,
        &mut cache.op_entries,
        ctx,
    )?
    else {
        return Ok(None);
    };
    let counts = [descs[0].len(), descs[1].len(), def.subgraph_name.len()];
    let [n_in, n_out, n_sub] = counts;
    let mut prefix = [0u8; 24];
    for (slot, c) in prefix.chunks_exact_mut(8).zip(counts) {
        slot.copy_from_slice(&(c as u64).to_le_bytes());
    }
    let types = &mut cache.types;
    let made = cache.ports.get(&prefix, raw, &direct.reserved, |m| {
        port_section(m, (n_in, n_out, n_sub), Some(types), ctx)
    })?;
    let Some(ports) = made else {
        return Ok(None);
    };
    let mut user = direct.user;
    // The section's leftover entries (usually none or two): inserted one by one, not through
    // a copy of the section's map.
    for e in ports.leftover.entries() {
        user.insert_entry(e.clone());
    }
    check_field_keys(&user, false)?;
    if let Some(v) = attr_unknown_value(direct.unknown) {
        user.insert(ASC_ATTR_UNKNOWN, v);
    }
    let ty = cache.types.intern(ty);
    let mut p = op_from_def(
        &mut def,
        (name, ty),
        (raw, &descs),
        &mut cache.descs,
        ports,
        user,
        ctx,
    )?;
    p.links.inputs = EdgeStrings::Ranges(inputs);
    if !unknown.is_empty() {
        p.op.attrs
            .insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
    }
    Ok(Some(p))
}

pub(crate) fn op_from_raw_plain<'s>(
    raw: &'s Bytes,
    i: usize,
    cache: &mut DescCache<'s>,
    ctx: DecodeCtx,
) -> ProtoResult<PendingOp> {
    let mut def = <pb::OpDef as prost::Message>::decode(raw.clone()).map_err(|e| {
        let w = crate::wire::locate(raw, "OpDef")
            .map(|w| w.shifted(ctx.offset_of(raw)))
            .unwrap_or_else(|| ProtoError::Wire {
                offset: ctx.offset_of(raw),
                path: "OpDef".to_string(),
                message: e.to_string(),
            });
        w.within(|| format!("op[{i}]"))
    })?;
    let unknown = crate::wire::unknown_fields(raw, crate::wire::OP_DEF_FIELDS);
    let counts = (
        def.input_desc.len(),
        def.output_desc.len(),
        def.subgraph_name.len(),
    );
    let mut ports = port_section(std::mem::take(&mut def.attr), counts, None, ctx)
        .map_err(|e| e.within(|| format!("op[{i}]({})", def.name)))?;
    // Every attribute went through the port reading: the ones it did not take are the user's.
    let mut user = std::mem::take(&mut ports.leftover);
    check_field_keys(&user, false).map_err(|e| e.within(|| format!("op[{i}]({})", def.name)))?;
    let ports = Arc::new(ports);
    if let Some(v) = attr_unknown_value(crate::wire::attr_unknown_fields(raw, 10)) {
        user.insert(ASC_ATTR_UNKNOWN, v);
    }
    let (name, ty) = (
        std::mem::take(&mut def.name),
        std::mem::take(&mut def.r#type),
    );
    let in_descs = std::mem::take(&mut def.input_desc);
    let out_descs = std::mem::take(&mut def.output_desc);
    let descs = [
        in_descs.iter().map(|d| &d[..]).collect(),
        out_descs.iter().map(|d| &d[..]).collect(),
    ];
    let mut p = op_from_def(
        &mut def,
        (&name, Sym::from(ty)),
        (raw, &descs),
        cache,
        &ports,
        user,
        ctx,
    )
    .map_err(|e| e.within(|| format!("op[{i}]({name})")))?;
    if !unknown.is_empty() {
        p.op.attrs
            .insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
    }
    Ok(p)
}
