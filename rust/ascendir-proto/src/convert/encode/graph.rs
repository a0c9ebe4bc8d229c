//! Encoding graphs and models as pieces: the graph head, the ops in parts on the package's
//! threads, the tail.

use super::*;

pub(crate) fn edge(name: &str, index: i32) -> String {
    let mut s = String::with_capacity(name.len() + 4);
    s.push_str(name);
    s.push(':');
    s.push_str(itoa(index).as_str());
    s
}

pub(crate) fn itoa(v: i32) -> String {
    v.to_string()
}

/// The map entries (field 11) of `attrs`, the `attr_groups` field (12) and the unknown fields,
/// as a `GraphDef` or `ModelDef` ends (the same bytes prost writes for those fields).
pub(crate) fn attrs_tail(attrs: &AttrMap) -> ProtoResult<Vec<u8>> {
    let mut out = Vec::new();
    let extra = encode_attr_map(
        attrs,
        &GenAttrs::default(),
        &[ASC_ATTR_GROUPS],
        11,
        &mut EntryEncodings::default(),
        &mut out,
    )?;
    let groups = attr_groups_of(attrs);
    if !groups.is_empty() {
        put_len_delimited(12, &groups, &mut out);
    }
    out.extend_from_slice(&extra);
    Ok(out)
}

/// The `attr_groups` bytes kept in `attrs` (empty when there are none).
pub(crate) fn attr_groups_of(attrs: &AttrMap) -> Bytes {
    match attrs.get(ASC_ATTR_GROUPS) {
        Some(AttrValue::Bytes(b)) => b.clone(),
        _ => Bytes::new(),
    }
}

/// Every graph of `roots`, each followed by its registered subgraphs (the order of
/// `ModelDef.graph`).
pub fn with_subgraphs<'a>(roots: &[&'a Graph]) -> Vec<&'a Graph> {
    roots
        .iter()
        .flat_map(|g| std::iter::once(*g).chain(g.subgraphs.iter()))
        .collect()
}

/// Subgraphs are found by name: two graphs of a model cannot share one.
pub(crate) fn check_unique_names(graphs: &[&Graph]) -> ProtoResult<()> {
    let mut names = rustc_hash::FxHashSet::default();
    for g in graphs {
        if !names.insert(g.name()) {
            return Err(ProtoError::Encode(format!(
                "two graphs of the model are named '{}'; subgraphs are found by name",
                g.name()
            )));
        }
    }
    Ok(())
}

/// Encode a model as `ModelDef` bytes: every root graph followed by its registered subgraphs,
/// unknown fields kept.
pub fn model_to_bytes(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Vec<u8>> {
    model_to_bytes_flat(meta, &with_subgraphs(graphs))
}

/// Encode a model from the exact `ModelDef.graph` list (`graphs[0]` first) as bytes, unknown
/// fields kept. The same bytes as encoding [`model_to_def_flat`] when there are none.
pub fn model_to_bytes_flat(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Vec<u8>> {
    Ok(model_pieces(meta, graphs)?.concat())
}

/// `model_to_bytes_flat` in pieces.
pub fn model_pieces(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Pieces> {
    check_unique_names(graphs)?;
    // Field order as prost writes a ModelDef: 1, 2, 3, then the graphs (7), then 11, 12.
    let mut pieces = Pieces::default();
    pieces.push(prost::Message::encode_to_vec(&pb::ModelDef {
        name: meta.name.clone(),
        version: meta.version,
        custom_version: meta.custom_version.clone(),
        ..Default::default()
    }));
    for g in graphs {
        graph_field(g, 7, &mut pieces)?;
    }
    pieces.push(attrs_tail(&meta.attrs)?);
    Ok(pieces)
}

/// Encode a graph's own nodes (not its subgraphs) as a `GraphDef`.
pub fn graph_to_def(g: &Graph) -> ProtoResult<pb::GraphDef> {
    let mut def = graph_head(g);
    def.attr = attrs_to_map(&g.attrs, &[ASC_ATTR_GROUPS])?;
    def.attr_groups = attr_groups_of(&g.attrs);
    def.op = encode_ops(g, |_, op, list: &mut Vec<Bytes>| {
        list.push(Bytes::copy_from_slice(op))
    })?
    .into_iter()
    .flatten()
    .collect();
    Ok(def)
}

/// A `GraphDef` with its name, inputs and outputs only.
pub(crate) fn graph_head(g: &Graph) -> pb::GraphDef {
    let name_of = |id: NodeId| g.op(id).map(|o| o.name()).unwrap_or_default();
    pb::GraphDef {
        name: g.name().to_string(),
        input: g.inputs().iter().map(|&id| edge(name_of(id), 0)).collect(),
        output: g
            .outputs()
            .iter()
            .map(|&(id, i)| edge(name_of(id), i))
            .collect(),
        ..Default::default()
    }
}

/// Ops each thread encodes at least: a graph of fewer than twice as many encodes on the calling
/// thread. Measured as [`DECODE_OPS_PER_THREAD`]: encoding G(8192) on two threads ran at 1.24×
/// the speed of one, G(16384) 1.62×, G(32768) 1.18×.
pub const ENCODE_OPS_PER_THREAD: usize = 4096;

/// Encode every op of `g` (in node order), handing each encoding to `keep`, which adds it to
/// the list of its part. Ops encode independently: large graphs in contiguous parts, one per
/// thread (the number decided by the op count alone), each with its own caches.
pub(crate) fn encode_ops<T: Default + Send>(
    g: &Graph,
    keep: impl Fn(usize, &[u8], &mut T) + Sync,
) -> ProtoResult<Vec<T>> {
    let mut pos: slotmap::SecondaryMap<NodeId, u32> = slotmap::SecondaryMap::with_capacity(g.len());
    for (i, id) in g.node_ids().enumerate() {
        pos.insert(id, i as u32);
    }
    let ids: Vec<NodeId> = g.node_ids().collect();
    let parts = threads::threads_for(ids.len(), ENCODE_OPS_PER_THREAD);
    threads::run_parts(ids.len(), parts, |range| {
        let mut cache = DescEncCache::default();
        let mut op = Vec::with_capacity(1024);
        let mut list = T::default();
        let len = range.len();
        for &id in &ids[range] {
            op.clear();
            write_op(g, id, &pos, &mut cache, &mut op)?;
            keep(len, &op, &mut list);
        }
        Ok(list)
    })
    .into_iter()
    .collect()
}

/// An encoding as pieces written one after the other (no copy to join them).
#[derive(Debug, Default)]
pub struct Pieces {
    pub(crate) parts: Vec<Vec<u8>>,
    pub(crate) len: usize,
}

impl Pieces {
    pub(crate) fn push(&mut self, part: Vec<u8>) {
        self.len += part.len();
        self.parts.push(part);
    }

    /// Total length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copy the bytes into the front of `out` (`len()` bytes, fewer when `out` is shorter);
    /// returns how many were copied.
    pub fn copy_to(&self, out: &mut [u8]) -> usize {
        let mut at = 0;
        for p in &self.parts {
            let n = p.len().min(out.len() - at);
            out[at..at + n].copy_from_slice(&p[..n]);
            at += n;
        }
        at
    }

    /// The bytes in one buffer.
    pub fn concat(self) -> Vec<u8> {
        if self.parts.len() == 1 {
            return self.parts.into_iter().next().unwrap_or_default();
        }
        let mut out = Vec::with_capacity(self.len);
        for p in &self.parts {
            out.extend_from_slice(p);
        }
        out
    }
}

/// Bytes a buffer of encoded ops is made with. Well below jemalloc's oversize threshold (8 MiB,
/// above which an allocation gets fresh pages that are given back to the system when it is
/// freed): the buffers of one encoding are reused by the next instead of being faulted in
/// again. One buffer per part of a G(100k) (27 MB) made its encoding 1.4x slower.
const OPS_BUFFER_BYTES: usize = 1 << 20;

/// The encoded ops of one part, as `GraphDef.op` fields, in buffers of about
/// [`OPS_BUFFER_BYTES`] (written one after the other, no copy to join them).
#[derive(Default)]
pub(crate) struct ChunkBuffer {
    pub(crate) bufs: Vec<Vec<u8>>,
}

impl ChunkBuffer {
    /// Append `op` as the next `GraphDef.op` field.
    pub(crate) fn push_op(&mut self, op: &[u8]) {
        use crate::write::{encode_key, encode_varint};
        let need = op.len() + 11;
        let buf = match self.bufs.last_mut() {
            Some(b) if b.capacity() - b.len() >= need => b,
            _ => {
                self.bufs
                    .push(Vec::with_capacity(OPS_BUFFER_BYTES.max(need)));
                match self.bufs.last_mut() {
                    Some(b) => b,
                    None => return,
                }
            }
        };
        encode_key(6, prost::encoding::WireType::LengthDelimited, buf);
        encode_varint(op.len() as u64, buf);
        buf.extend_from_slice(op);
    }
}

/// A graph as a length-delimited field `field` (a `GraphDef`: fields 1, 4, 5, the ops (6),
/// 11, 12, then its unknown fields), in pieces.
pub(crate) fn graph_field(g: &Graph, field: u32, out: &mut Pieces) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let head = prost::Message::encode_to_vec(&graph_head(g));
    let tail = attrs_tail(&g.attrs)?;
    let ops = encode_ops(g, |_, op, chunk: &mut ChunkBuffer| {
        chunk.push_op(op);
    })?;
    let ops: Vec<Vec<u8>> = ops.into_iter().flat_map(|c| c.bufs).collect();
    let len = head.len() + ops.iter().map(Vec::len).sum::<usize>() + tail.len();
    let mut key = Vec::with_capacity(12);
    encode_key(field, WireType::LengthDelimited, &mut key);
    encode_varint(len as u64, &mut key);
    out.push(key);
    out.push(head);
    for chunk in ops {
        out.push(chunk);
    }
    out.push(tail);
    Ok(())
}
