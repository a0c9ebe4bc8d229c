//! Encoding one op straight to the wire.

use super::*;

/// Write op `id` as an `OpDef` at the end of `out`: the fields in declaration order, the
/// attribute map straight from the op's attributes, then its unknown fields.
pub(crate) fn write_op(
    g: &Graph,
    id: NodeId,
    pos: &slotmap::SecondaryMap<NodeId, u32>,
    cache: &mut DescEncCache,
    out: &mut Vec<u8>,
) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let op = g.op(id).map_err(|e| ProtoError::Encode(e.to_string()))?;
    let (parts, generated) = op_parts(g, id, pos, cache)?;
    let default_meta = OpMeta::default();
    let meta = op.meta().unwrap_or(&default_meta);
    // The fields in declaration order, as prost writes them (empty scalars left out,
    // repeated elements always written, numeric lists packed).
    let text = |field: u32, s: &str, out: &mut Vec<u8>| {
        if !s.is_empty() {
            put_len_delimited(field, s.as_bytes(), out);
        }
    };
    let texts = |field: u32, list: &[String], out: &mut Vec<u8>| {
        for s in list {
            put_len_delimited(field, s.as_bytes(), out);
        }
    };
    let varint = |field: u32, v: u64, out: &mut Vec<u8>| {
        if v != 0 {
            encode_key(field, WireType::Varint, out);
            encode_varint(v, out);
        }
    };
    let ints = |field: u32, list: &[i64], out: &mut Vec<u8>| {
        put_packed_varints(field, list.iter().map(|&v| v as u64), out);
    };
    text(1, op.name(), out);
    text(2, op.op_type(), out);
    texts(5, &parts.input, out);
    let extra = encode_attr_map(
        &op.attrs,
        &generated,
        &[ASC_ATTR_GROUPS],
        10,
        &mut cache.entries,
        out,
    )
    .map_err(|e| e.within(|| format!("op '{}'", op.name())))?;
    if !parts.attr_groups.is_empty() {
        put_len_delimited(11, &parts.attr_groups, out);
    }
    varint(20, u64::from(meta.has_out_attr), out);
    varint(21, op.id as u64, out);
    varint(22, op.stream_id as u64, out);
    texts(23, &meta.input_name, out);
    texts(24, &meta.src_name, out);
    ints(25, &meta.src_index, out);
    texts(26, &meta.dst_name, out);
    ints(27, &meta.dst_index, out);
    ints(28, &meta.input_offsets, out);
    ints(29, &meta.output_offsets, out);
    ints(30, &meta.workspace, out);
    ints(31, &meta.workspace_bytes, out);
    put_packed_varints(32, meta.is_input_const.iter().map(|&b| u64::from(b)), out);
    for &(start, end) in &parts.input_desc {
        put_len_delimited(33, &cache.descs[start..end], out);
    }
    for &(start, end) in &parts.output_desc {
        put_len_delimited(34, &cache.descs[start..end], out);
    }
    texts(35, &meta.subgraph_instance_names, out);
    out.extend_from_slice(&extra);
    Ok(())
}

/// The (port name, index) pairs of `ports` in name order: GE's name-to-index map.
pub(crate) fn sorted_name_map(ports: &[ascendir_ir::Port]) -> SmallVec<[(&str, i64); 8]> {
    let mut pairs: SmallVec<[(&str, i64); 8]> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| (&*p.name, i as i64))
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
    pairs
}

/// The edge strings, desc encodings and generated attribute entries of op `id`.
pub(crate) fn op_parts(
    g: &Graph,
    id: NodeId,
    pos: &slotmap::SecondaryMap<NodeId, u32>,
    cache: &mut DescEncCache,
) -> ProtoResult<(OpParts, GenAttrs)> {
    let node = g.node(id).map_err(|e| ProtoError::Encode(e.to_string()))?;
    let op = node.op();
    let name_of = |n: NodeId| g.op(n).map(|o| o.name()).unwrap_or("");
    let path = || format!("op '{}'", op.name());

    // Edge strings.
    let mut input = Vec::with_capacity(node.num_in_data() + node.in_control_peers().len());
    let mut ctrl_to_data = Vec::new();
    for (slot, peer) in node.in_data_peers().enumerate() {
        match peer {
            Some(src) if src.is_control() => {
                input.push(String::new());
                ctrl_to_data.push(format!("{slot}:{}", name_of(src.node)));
            }
            Some(src) => input.push(edge(name_of(src.node), src.index)),
            None => input.push(String::new()),
        }
    }
    // Trailing unset optional inputs (invalid descs) get no edge string, as GE writes them.
    while input.last().is_some_and(String::is_empty)
        && op
            .inputs()
            .get(input.len() - 1)
            .is_some_and(|p| !p.desc.is_valid())
        && !ctrl_to_data
            .iter()
            .any(|e| e.starts_with(&format!("{}:", input.len() - 1)))
    {
        input.pop();
    }
    let in_ctrl = node.in_control_peers();
    let has_data_ctrl = in_ctrl.iter().any(|p| !p.is_control());
    for p in in_ctrl.iter().filter(|p| p.is_control()) {
        input.push(edge(name_of(p.node), -1));
    }

    // Generated entries only: the op's own attributes are written by `write_op`.
    let mut attr = GenAttrs::default();
    let user = &op.attrs;
    if has_data_ctrl {
        attr.insert(
            ASC_IN_CTRL,
            gen_s(
                Vt::VtListString,
                in_ctrl
                    .iter()
                    .map(|p| edge(name_of(p.node), p.index))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str),
            ),
        );
    }
    if !ctrl_to_data.is_empty() {
        attr.insert(
            ASC_CTRL_TO_DATA,
            gen_s(Vt::VtListString, ctrl_to_data.iter().map(String::as_str)),
        );
    }
    // Fan-out order, when it is not what a reader rebuilds (consumer op order).
    let mut fanout: Vec<String> = Vec::new();
    let anchors = (0..node.num_out_data())
        .map(|i| (i as i32, node.out_data_peers(i)))
        .chain(std::iter::once((-1, node.out_control_peers())));
    for (out, peers) in anchors {
        if peers.len() < 2 {
            continue;
        }
        let src = OutAnchor {
            node: id,
            index: out,
        };
        let key = |dst: &InAnchor| -> (u32, usize) {
            let p = pos.get(dst.node).copied().unwrap_or(u32::MAX);
            if dst.is_control() {
                let c = g.node(dst.node).ok();
                let n_in = c.map_or(0, |c| c.num_in_data());
                let k = c
                    .and_then(|c| c.in_control_peers().iter().position(|&q| q == src))
                    .unwrap_or(0);
                (p, n_in + k)
            } else {
                (p, dst.index as usize)
            }
        };
        let canonical = peers.windows(2).all(|w| key(&w[0]) <= key(&w[1]));
        if !canonical {
            for d in peers {
                fanout.push(format!("{out}>{}:{}", name_of(d.node), d.index));
            }
        }
    }
    if !fanout.is_empty() {
        attr.insert(
            ASC_FANOUT,
            gen_s(Vt::VtListString, fanout.iter().map(String::as_str)),
        );
    }

    // GE's reserved keys.
    for (ports, key, value) in [
        (op.inputs(), INPUT_NAME_KEY, INPUT_NAME_VALUE),
        (op.outputs(), OUTPUT_NAME_KEY, OUTPUT_NAME_VALUE),
    ] {
        if !ports.is_empty() {
            let pairs = sorted_name_map(ports);
            put_reserved_s(&mut attr, user, key, pairs.iter().map(|p| p.0));
            put_reserved_i(&mut attr, user, value, pairs.iter().map(|p| p.1));
        }
    }
    let default_meta = OpMeta::default();
    let meta = op.meta().unwrap_or(&default_meta);
    if !meta.optional_inputs.is_empty() {
        let names = meta.optional_inputs.iter().map(|s| &**s);
        put_reserved_s(&mut attr, user, OPT_INPUT, names);
    }
    if !meta.ir_attr_names.is_empty() {
        let names = meta.ir_attr_names.iter().map(String::as_str);
        put_reserved_s(&mut attr, user, IR_ATTR_NAMES, names);
    }
    if !meta.ir_inputs.is_empty() {
        let names = meta.ir_inputs.iter().map(|p| &*p.0);
        put_reserved_s(&mut attr, user, IR_INPUTS_KEY, names);
        let kinds = meta.ir_inputs.iter().map(|p| p.1 as i64);
        put_reserved_i(&mut attr, user, IR_INPUTS_VALUE, kinds);
    }
    if !meta.ir_outputs.is_empty() {
        let names = meta.ir_outputs.iter().map(|p| &*p.0);
        put_reserved_s(&mut attr, user, IR_OUTPUTS_KEY, names);
        let kinds = meta.ir_outputs.iter().map(|p| p.1 as i64);
        put_reserved_i(&mut attr, user, IR_OUTPUTS_VALUE, kinds);
    }
    let inst = &meta.subgraph_instance_names;
    let ge_default = meta.subgraph_ir_names.len() == inst.len()
        && inst.iter().all(|s| !s.is_empty())
        && meta
            .subgraph_ir_names
            .iter()
            .zip(inst)
            .all(|((n, t), i)| n == i && *t == SubgraphType::Static);
    if !ge_default {
        if meta.subgraph_ir_names.len() != inst.len() {
            return Err(ProtoError::Encode(format!(
                "op '{}' has {} subgraph IR names but {} instance slots",
                op.name(),
                meta.subgraph_ir_names.len(),
                inst.len()
            )));
        }
        attr.insert(
            ASC_SUBGRAPH_IR_NAMES,
            gen_s(
                Vt::VtListString,
                meta.subgraph_ir_names.iter().map(|p| p.0.as_str()),
            ),
        );
        attr.insert(
            ASC_SUBGRAPH_IR_TYPES,
            gen_i(
                Vt::VtListInt,
                meta.subgraph_ir_names.iter().map(|p| p.1 as i64),
            ),
        );
    }
    let input_desc = op
        .inputs()
        .iter()
        .map(|p| encode_desc_cached(&p.desc, cache))
        .collect::<ProtoResult<_>>()
        .map_err(|e| e.within(path))?;
    let output_desc = op
        .outputs()
        .iter()
        .map(|p| encode_desc_cached(&p.desc, cache))
        .collect::<ProtoResult<_>>()
        .map_err(|e| e.within(path))?;
    let attr_groups = attr_groups_of(&op.attrs);
    let parts = OpParts {
        input,
        input_desc,
        output_desc,
        attr_groups,
    };
    Ok((parts, attr))
}

/// What an op's message holds besides what its `OpDesc` and `OpMeta` give directly.
pub(crate) struct OpParts {
    pub(crate) input: Vec<String>,
    /// Ranges of the encoding thread's `DescEncCache::descs`.
    pub(crate) input_desc: SmallVec<[(usize, usize); 4]>,
    pub(crate) output_desc: SmallVec<[(usize, usize); 2]>,
    pub(crate) attr_groups: Bytes,
}
