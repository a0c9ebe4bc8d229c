//! Graph assembly: decoded ops become nodes, edge strings become links, in parts on the package's
//! threads (decided by op count alone).

use super::*;

/// An op decoded from an OpDef, with its edge strings still to be resolved.
pub(crate) struct PendingOp {
    pub(crate) op: OpDesc,
    pub(crate) links: Links,
}

/// The edge strings of an op, resolved once every node is in the graph.
pub(crate) struct Links {
    pub(crate) inputs: EdgeStrings,
    /// The op's port section when it has our control-edge or fan-out keys.
    pub(crate) section: Option<Arc<PortSection>>,
}

impl Links {
    pub(crate) fn in_ctrl(&self) -> Option<&[String]> {
        self.section.as_ref().and_then(|s| s.in_ctrl.as_deref())
    }

    pub(crate) fn ctrl_to_data(&self) -> Option<&[String]> {
        self.section
            .as_ref()
            .and_then(|s| s.ctrl_to_data.as_deref())
    }

    pub(crate) fn fanout(&self) -> Option<&[String]> {
        self.section.as_ref().and_then(|s| s.fanout.as_deref())
    }
}

/// An op's `input` edge strings: byte ranges of the op's encoding (checked UTF-8 when read; no
/// string is made per edge) or, from the full decoder, strings.
pub(crate) enum EdgeStrings {
    Ranges(SmallVec<[(usize, usize); 4]>),
    Owned(Vec<String>),
}

impl EdgeStrings {
    /// The edge strings, ranges read in `op` (the op's encoding).
    pub(crate) fn read<'a>(&'a self, op: &'a [u8]) -> ProtoResult<SmallVec<[&'a str; 4]>> {
        match self {
            EdgeStrings::Owned(list) => Ok(list.iter().map(String::as_str).collect()),
            EdgeStrings::Ranges(list) => list
                .iter()
                .map(|&(s, e)| {
                    op.get(s..e)
                        .and_then(crate::wire::utf8)
                        .ok_or_else(|| ProtoError::invalid("input", "edge string out of place"))
                })
                .collect(),
        }
    }
}

pub(crate) fn split_edge(s: &str) -> Option<(&str, &str)> {
    s.rfind(':').map(|i| (&s[..i], &s[i + 1..]))
}

pub(crate) fn parse_index(text: &str) -> Option<i64> {
    text.parse::<i64>().ok()
}

/// Deepest nesting of graphs inside graph attributes accepted when decoding.
pub const MAX_GRAPH_NESTING: usize = 32;

/// What one decode passes down to every part of it (by argument, to helper threads too): the
/// whole input, to give error offsets in it; how deep graphs are nested in graph attributes;
/// whether ops and descs go through the reference decoder.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DecodeCtx<'a> {
    /// The bytes being decoded (empty when decoding prost messages with no input at hand).
    pub(crate) input: &'a [u8],
    /// Graphs being decoded around this point (0 outside any graph).
    pub(crate) depth: usize,
    /// Decode ops and descs with prost and conversion only (the reference the one-pass
    /// decoder is checked against, see [`crate::reference`]).
    pub(crate) reference: bool,
}

impl<'a> DecodeCtx<'a> {
    /// A decode of `input`.
    pub(crate) fn new(input: &'a [u8], reference: bool) -> Self {
        DecodeCtx {
            input,
            depth: 0,
            reference,
        }
    }

    /// A decode of prost messages with no input at hand (error offsets are in the message).
    pub(crate) fn detached() -> Self {
        DecodeCtx::new(&[], false)
    }

    /// The context inside one more graph; an error past [`MAX_GRAPH_NESTING`].
    pub(crate) fn enter_graph(self) -> ProtoResult<Self> {
        if self.depth >= MAX_GRAPH_NESTING {
            return Err(ProtoError::invalid(
                "",
                format!("graphs nested more than {MAX_GRAPH_NESTING} deep in graph attributes"),
            ));
        }
        Ok(DecodeCtx {
            depth: self.depth + 1,
            ..self
        })
    }

    /// The offset of `part` in the input (0 when it is not a part of it).
    pub(crate) fn offset_of(&self, part: &[u8]) -> usize {
        range_in(self.input, part).map_or(0, |(start, _)| start)
    }
}

/// Ops each thread decodes at least: a graph of fewer than twice as many decodes on the calling
/// thread (see `threads::threads_for`), every GE dump (hundreds of ops) among them. Measured on
/// the shared 2-core machine (`benches/bench_proto.py` graphs G(n), one thread against two):
/// decoding G(8192) on two threads took 0.81× the speed of one, G(16384) 0.98×, G(32768)
/// 1.06×, G(131072) 1.02× (the graph assembly after the ops' decode runs on one thread).
pub const DECODE_OPS_PER_THREAD: usize = 16_384;

/// Decode a `GraphDef` into a graph (subgraph links are resolved by the model decoder).
pub fn graph_from_def(def: pb::GraphDef) -> ProtoResult<Graph> {
    graph_value(def, DecodeCtx::detached())
}

/// [`graph_from_def`] within a decode.
pub(crate) fn graph_value(def: pb::GraphDef, ctx: DecodeCtx) -> ProtoResult<Graph> {
    let ctx = ctx.enter_graph()?;
    let pb::GraphDef {
        name,
        input,
        output,
        op,
        attr,
        attr_groups,
    } = def;
    let mut g = Graph::with_capacity(&name, op.len());
    // Ops decode independently: large graphs in contiguous parts, one per thread, each with its
    // own caches. The number of parts depends on the op count alone.
    let n = op.len();
    let parts = threads::threads_for(n, DECODE_OPS_PER_THREAD);
    let decoded = threads::run_parts(n, parts, |r| {
        let mut cache = ChunkCache::new(r.len());
        let ops = r
            .map(|i| op_from_raw(&op[i], i, &mut cache, ctx))
            .collect::<ProtoResult<Vec<_>>>()?;
        Ok((ops, cache.types))
    });
    let mut chunks: Vec<Vec<PendingOp>> = Vec::with_capacity(decoded.len());
    let mut types: Option<Interner> = None;
    for part in decoded {
        let (ops, t) = part?;
        chunks.push(ops);
        types.get_or_insert(t);
    }
    // The first part's strings (op types, port names) become the graph's shared copies, so
    // that adding its ops finds them already shared.
    if let Some(types) = &types {
        g.share_strings(types);
    }
    drop(types);
    let n_ops: usize = chunks.iter().map(Vec::len).sum();
    let mut pending: Vec<Links> = Vec::with_capacity(n_ops);
    let mut ids = Vec::with_capacity(n_ops);
    for (i, p) in chunks.into_iter().flatten().enumerate() {
        let PendingOp { op, links } = p;
        let id = g
            .add_node_keep_id(op)
            .map_err(|e| ProtoError::invalid(format!("op[{i}]"), e.to_string()))?;
        ids.push(id);
        pending.push(links);
    }
    for (i, p) in pending.iter().enumerate() {
        let dst = ids[i];
        link_inputs(&mut g, dst, p, &op[i]).map_err(|e| {
            e.within(|| {
                format!(
                    "op[{i}]({})",
                    g.op(dst).map(|o| o.name().to_string()).unwrap_or_default()
                )
            })
        })?;
    }
    for (i, p) in pending.iter().enumerate() {
        if let Some(f) = p.fanout() {
            apply_fanout(&mut g, ids[i], f)
                .map_err(|e| e.within(|| format!("op[{i}].attr[\"{ASC_FANOUT}\"]")))?;
        }
    }
    let mut inputs = Vec::with_capacity(input.len());
    for (i, s) in input.iter().enumerate() {
        let (n, _) = split_edge(s).unwrap_or((s.as_str(), "0"));
        let id = g.find(n).ok_or_else(|| {
            ProtoError::invalid(
                format!("input[{i}]"),
                format!("unknown graph input node '{n}'"),
            )
        })?;
        inputs.push(id);
    }
    g.set_input_nodes(inputs)
        .map_err(|e| ProtoError::invalid("input", e.to_string()))?;
    for (i, s) in output.iter().enumerate() {
        let bad = || ProtoError::invalid(format!("output[{i}]"), format!("bad graph output '{s}'"));
        let (n, idx) = split_edge(s).ok_or_else(bad)?;
        let idx = parse_index(idx)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(bad)?;
        let id = g.find(n).ok_or_else(bad)?;
        g.add_output_node(id, idx)
            .map_err(|e| ProtoError::invalid(format!("output[{i}]"), e.to_string()))?;
    }
    g.attrs = attrs_from_map(attr, ctx).map_err(|e| e.within(String::new))?;
    check_field_keys(&g.attrs, false)?;
    if !attr_groups.is_empty() {
        g.attrs
            .insert(ASC_ATTR_GROUPS.to_string(), AttrValue::Bytes(attr_groups));
    }
    Ok(g)
}

pub(crate) fn resolve_src(
    g: &Graph,
    s: &str,
    path: &dyn Fn() -> String,
) -> ProtoResult<(NodeId, i64)> {
    let (name, idx) = split_edge(s)
        .ok_or_else(|| ProtoError::invalid(path(), format!("bad edge string '{s}'")))?;
    let index = parse_index(idx).filter(|&i| i >= -1).ok_or_else(|| {
        ProtoError::invalid(path(), format!("bad output index in edge string '{s}'"))
    })?;
    let id = g
        .find(name)
        .ok_or_else(|| ProtoError::invalid(path(), format!("unknown edge source '{name}'")))?;
    if index >= 0 {
        let n_out = g.node(id).map(|n| n.num_out_data()).unwrap_or(0);
        if index as u64 >= n_out as u64 {
            return Err(ProtoError::invalid(
                path(),
                format!("edge source '{name}' has no output {index} (it has {n_out})"),
            ));
        }
    }
    Ok((id, index))
}

pub(crate) fn link_inputs(g: &mut Graph, dst: NodeId, p: &Links, op: &[u8]) -> ProtoResult<()> {
    let n_in = g.node(dst).map(|n| n.num_in_data()).unwrap_or(0);
    // Input slot -> (entry index, source name); entries are removed as their slots are met.
    let mut ctrl_data: FxHashMap<usize, (usize, &str)> = FxHashMap::default();
    let ctrl_path = |k: usize| format!("attr[\"{ASC_CTRL_TO_DATA}\"][{k}]");
    if let Some(list) = p.ctrl_to_data() {
        for (k, e) in list.iter().enumerate() {
            let bad = |why: &str| ProtoError::invalid(ctrl_path(k), format!("entry '{e}' {why}"));
            let (slot, name) = e
                .split_once(':')
                .ok_or_else(|| bad("is not '<input slot>:<source node>'"))?;
            let slot: usize = slot
                .parse()
                .map_err(|_| bad("does not start with an input slot number"))?;
            if slot >= n_in {
                return Err(bad(&format!(
                    "names input slot {slot}, but the op has {n_in} input descs"
                )));
            }
            if g.find(name).is_none() {
                return Err(bad(&format!("names an unknown source node '{name}'")));
            }
            if let Some((first, _)) = ctrl_data.insert(slot, (k, name)) {
                return Err(bad(&format!("repeats input slot {slot} of entry {first}")));
            }
        }
    }
    let mut slot = 0usize;
    for (k, s) in p.inputs.read(op)?.into_iter().enumerate() {
        let path = || format!("input[{k}]");
        let Some((_, idx)) = split_edge(s) else {
            if !s.is_empty() {
                return Err(ProtoError::invalid(
                    path(),
                    format!("edge '{s}' has no ':<output index>' (an unconnected slot is \"\")"),
                ));
            }
            // "": an unconnected slot.
            if let Some((_, name)) = ctrl_data.remove(&slot) {
                if slot >= n_in {
                    return Err(ProtoError::invalid(
                        path(),
                        format!("input slot {slot} does not exist"),
                    ));
                }
                let src = g.find(name).ok_or_else(|| {
                    ProtoError::invalid(path(), format!("unknown edge source '{name}'"))
                })?;
                g.link(OutAnchor::control(src), InAnchor::data(dst, slot))
                    .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
            }
            slot += 1;
            continue;
        };
        if idx == "-1" {
            if p.in_ctrl().is_some() {
                // Control edges are given in full (with data→control ones) by our key.
                let _ = resolve_src(g, s, &path)?;
                continue;
            }
            let (src, _) = resolve_src(g, s, &path)?;
            g.link(OutAnchor::control(src), InAnchor::control(dst))
                .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
            continue;
        }
        let (src, index) = resolve_src(g, s, &path)?;
        if slot >= n_in {
            return Err(ProtoError::invalid(
                path(),
                format!("edge '{s}' targets input slot {slot}, but the op has {n_in} input descs"),
            ));
        }
        g.link(
            OutAnchor::data(src, index as usize),
            InAnchor::data(dst, slot),
        )
        .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
        slot += 1;
    }
    // An entry whose slot is linked by a data edge (or never read) would be dropped.
    if let Some((slot, (k, name))) = ctrl_data.into_iter().min_by_key(|(_, (k, _))| *k) {
        return Err(ProtoError::invalid(
            ctrl_path(k),
            format!(
                "entry '{slot}:{name}' names input slot {slot}, which is not an unconnected \
                 input (\"\") of the op's input list"
            ),
        ));
    }
    if let Some(list) = p.in_ctrl() {
        for (k, s) in list.iter().enumerate() {
            let path = || format!("attr[\"{ASC_IN_CTRL}\"][{k}]");
            let (src, index) = resolve_src(g, s, &path)?;
            let out = if index < 0 {
                OutAnchor::control(src)
            } else {
                OutAnchor::data(src, index as usize)
            };
            g.link(out, InAnchor::control(dst))
                .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
        }
    }
    Ok(())
}

pub(crate) fn apply_fanout(g: &mut Graph, src: NodeId, entries: &[String]) -> ProtoResult<()> {
    let mut groups: Vec<(i32, Vec<InAnchor>)> = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        let bad = || ProtoError::invalid(format!("[{k}]"), format!("bad fan-out entry '{e}'"));
        let (out, rest) = e.split_once('>').ok_or_else(bad)?;
        let out: i32 = out.parse().map_err(|_| bad())?;
        let (cons, idx) = split_edge(rest).ok_or_else(bad)?;
        let idx: i32 = idx.parse().map_err(|_| bad())?;
        let node = g.find(cons).ok_or_else(bad)?;
        let anchor = InAnchor { node, index: idx };
        match groups.last_mut() {
            Some((o, list)) if *o == out => list.push(anchor),
            _ => groups.push((out, vec![anchor])),
        }
    }
    for (out, order) in groups {
        if out < -1 {
            return Err(ProtoError::invalid("", format!("bad output index {out}")));
        }
        g.set_out_peer_order(
            OutAnchor {
                node: src,
                index: out,
            },
            &order,
        )
        .map_err(|e| ProtoError::invalid("", e.to_string()))?;
    }
    Ok(())
}
