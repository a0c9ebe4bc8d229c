//! An op's port section: its reserved keys read into port names, IR metadata and the lossless edge
//! keys.

use super::*;

/// What an op's reserved attribute keys decode to (port names, IR metadata, our edge keys),
/// given its port and subgraph-slot counts. Reserved keys that do not read as GE writes them
/// stay attributes (`leftover`). Ops with the same reserved entries share one section.
/// Names come shared, ready for the op.
pub(crate) struct PortSection {
    pub(crate) in_names: Vec<Sym>,
    pub(crate) out_names: Vec<Sym>,
    /// Whether any of the IR keys below was present (the op then gets an `OpMeta`).
    pub(crate) ir_keys: bool,
    pub(crate) opt: Vec<Arc<str>>,
    pub(crate) ir_attr_names: Vec<String>,
    pub(crate) ir_in: Vec<(Arc<str>, IrInputType)>,
    pub(crate) ir_out: Vec<(Arc<str>, IrOutputType)>,
    pub(crate) sub_ir: Option<Vec<(String, SubgraphType)>>,
    pub(crate) in_ctrl: Option<Vec<String>>,
    pub(crate) ctrl_to_data: Option<Vec<String>>,
    pub(crate) fanout: Option<Vec<String>>,
    pub(crate) leftover: AttrMap,
}

/// `strings`: where port names are interned (the decoding thread's table, which the graph
/// adopts), if anywhere.
pub(crate) fn port_section(
    mut map: BTreeMap<String, pb::AttrDef>,
    (n_in, n_out, n_sub): (usize, usize, usize),
    mut strings: Option<&mut Interner>,
    ctx: DecodeCtx,
) -> ProtoResult<PortSection> {
    let attrs = &mut map;
    let in_map = take_name_map(attrs, INPUT_NAME_KEY, INPUT_NAME_VALUE, n_in > 0)
        .or_else(|| take_name_map(attrs, LEGACY_INPUT_NAME_KEY, LEGACY_INPUT_NAME_VALUE, false));
    let out_map =
        take_name_map(attrs, OUTPUT_NAME_KEY, OUTPUT_NAME_VALUE, n_out > 0).or_else(|| {
            take_name_map(
                attrs,
                LEGACY_OUTPUT_NAME_KEY,
                LEGACY_OUTPUT_NAME_VALUE,
                false,
            )
        });
    let (ik, iv) = in_map.unwrap_or_default();
    let (ok, ov) = out_map.unwrap_or_default();
    let in_names = port_names(n_in, &ik, &iv, "__input")
        .map_err(|e| e.within(|| "attr[\"_input_name_key\"]".into()))?;
    let out_names = port_names(n_out, &ok, &ov, "__output")
        .map_err(|e| e.within(|| "attr[\"_output_name_key\"]".into()))?;
    let take_ls = |attrs: &mut BTreeMap<String, pb::AttrDef>, key: &str| {
        let v = attrs
            .get(key)
            .and_then(as_list_s)
            .filter(|v| !v.is_empty())?;
        remove_untyped(attrs, key);
        Some(v)
    };
    let opt = take_ls(attrs, OPT_INPUT);
    let ir_attr_names = take_ls(attrs, IR_ATTR_NAMES);
    let ir_in = pair_lists(attrs, IR_INPUTS_KEY, IR_INPUTS_VALUE, 2);
    let ir_out = pair_lists(attrs, IR_OUTPUTS_KEY, IR_OUTPUTS_VALUE, 1);
    let sub_ir = match (
        attrs.get(ASC_SUBGRAPH_IR_NAMES).and_then(as_list_s),
        attrs
            .get(ASC_SUBGRAPH_IR_TYPES)
            .and_then(|d| as_list_i(d).map(<[i64]>::to_vec)),
    ) {
        (Some(n), Some(t))
            if n.len() == t.len() && n.len() == n_sub && t.iter().all(|&x| x == 0 || x == 1) =>
        {
            attrs.remove(ASC_SUBGRAPH_IR_NAMES);
            attrs.remove(ASC_SUBGRAPH_IR_TYPES);
            Some(n.into_iter().zip(t).collect::<Vec<_>>())
        }
        _ => None,
    };
    let in_ctrl = take_if(attrs, ASC_IN_CTRL, as_list_s);
    let ctrl_to_data = take_if(attrs, ASC_CTRL_TO_DATA, as_list_s);
    let fanout = take_if(attrs, ASC_FANOUT, as_list_s);
    // Our own keys are written by our encoder only: one that is still here did not decode.
    for key in [
        ASC_SUBGRAPH_IR_NAMES,
        ASC_SUBGRAPH_IR_TYPES,
        ASC_IN_CTRL,
        ASC_CTRL_TO_DATA,
        ASC_FANOUT,
    ] {
        if attrs.contains_key(key) {
            return Err(ProtoError::invalid(
                format!("attr[\"{key}\"]"),
                "malformed reserved key: not a list of the expected type, or not one entry per subgraph slot",
            ));
        }
    }
    let ir_keys = opt.is_some() || ir_attr_names.is_some() || ir_in.is_some() || ir_out.is_some();
    let mut shared = |v: Vec<String>| -> Vec<Sym> {
        v.into_iter()
            .map(|n| match strings.as_deref_mut() {
                Some(table) => table.intern(&n),
                None => Sym::from(n),
            })
            .collect()
    };
    Ok(PortSection {
        in_names: shared(in_names),
        out_names: shared(out_names),
        ir_keys,
        opt: opt
            .into_iter()
            .flatten()
            .map(|s| Arc::from(s.as_str()))
            .collect(),
        ir_attr_names: ir_attr_names.unwrap_or_default(),
        ir_in: ir_in
            .into_iter()
            .flatten()
            .map(|(n, t)| {
                let t = match t {
                    0 => IrInputType::Required,
                    1 => IrInputType::Optional,
                    _ => IrInputType::Dynamic,
                };
                (Arc::from(n.as_str()), t)
            })
            .collect(),
        ir_out: ir_out
            .into_iter()
            .flatten()
            .map(|(n, t)| {
                let t = if t == 0 {
                    IrOutputType::Required
                } else {
                    IrOutputType::Dynamic
                };
                (Arc::from(n.as_str()), t)
            })
            .collect(),
        sub_ir: sub_ir.map(|pairs| {
            pairs
                .into_iter()
                .map(|(n, t)| {
                    let t = if t == 0 {
                        SubgraphType::Static
                    } else {
                        SubgraphType::Dynamic
                    };
                    (n, t)
                })
                .collect()
        }),
        in_ctrl,
        ctrl_to_data,
        fanout,
        leftover: attrs_from_map(map, ctx)?,
    })
}

/// `(name, ty)`: the op's name and type. `descs`: the input and output desc encodings, parts
/// of the op's encoding (`descs.0`).
pub(crate) fn op_from_def<'s>(
    def: &mut pb::OpDef,
    (name, ty): (&str, Sym),
    descs: (&'s Bytes, &[DescList; 2]),
    cache: &mut DescCache<'s>,
    section: &Arc<PortSection>,
    mut user: AttrMap,
    ctx: DecodeCtx,
) -> ProtoResult<PendingOp> {
    let mut op = OpDesc::with_type_sym(name, ty);
    op.id = def.id;
    op.stream_id = def.stream_id;
    // The names are distinct (checked when the section was read).
    let (owner, [in_descs, out_descs]) = descs;
    for (i, (td, name)) in in_descs.iter().zip(&section.in_names).enumerate() {
        let d = cache
            .get(owner, td, ctx)
            .map_err(|e| e.within(|| format!("input_desc[{i}]")))?;
        op.push_port(Side::Input, name.clone(), d);
    }
    for (i, (td, name)) in out_descs.iter().zip(&section.out_names).enumerate() {
        let d = cache
            .get(owner, td, ctx)
            .map_err(|e| e.within(|| format!("output_desc[{i}]")))?;
        op.push_port(Side::Output, name.clone(), d);
    }
    if !def.attr_groups.is_empty() {
        user.insert(
            ASC_ATTR_GROUPS.to_string(),
            AttrValue::Bytes(std::mem::take(&mut def.attr_groups)),
        );
    }
    op.attrs = user;

    let has_meta = !def.has_out_attr
        || section.ir_keys
        || !def.subgraph_name.is_empty()
        || !def.input_name.is_empty()
        || !def.src_name.is_empty()
        || !def.src_index.is_empty()
        || !def.dst_name.is_empty()
        || !def.dst_index.is_empty()
        || !def.input_i.is_empty()
        || !def.output_i.is_empty()
        || !def.workspace.is_empty()
        || !def.workspace_bytes.is_empty()
        || !def.is_input_const.is_empty();
    if has_meta {
        let meta: &mut OpMeta = op.meta_mut();
        meta.has_out_attr = def.has_out_attr;
        meta.optional_inputs = section.opt.clone();
        meta.ir_attr_names = section.ir_attr_names.clone();
        meta.ir_inputs = section.ir_in.clone();
        meta.ir_outputs = section.ir_out.clone();
        match &section.sub_ir {
            Some(pairs) => {
                meta.subgraph_ir_names = pairs.clone();
                meta.subgraph_instance_names = std::mem::take(&mut def.subgraph_name);
            }
            None => {
                // GE: every non-empty instance name becomes its own static IR name.
                let inst: Vec<String> = std::mem::take(&mut def.subgraph_name)
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect();
                meta.subgraph_ir_names = inst
                    .iter()
                    .map(|s| (s.clone(), SubgraphType::Static))
                    .collect();
                meta.subgraph_instance_names = inst;
            }
        }
        meta.input_name = std::mem::take(&mut def.input_name);
        meta.src_name = std::mem::take(&mut def.src_name);
        meta.src_index = std::mem::take(&mut def.src_index);
        meta.dst_name = std::mem::take(&mut def.dst_name);
        meta.dst_index = std::mem::take(&mut def.dst_index);
        meta.input_offsets = std::mem::take(&mut def.input_i);
        meta.output_offsets = std::mem::take(&mut def.output_i);
        meta.workspace = std::mem::take(&mut def.workspace);
        meta.workspace_bytes = std::mem::take(&mut def.workspace_bytes);
        meta.is_input_const = std::mem::take(&mut def.is_input_const);
    }
    Ok(PendingOp {
        op,
        links: Links {
            inputs: EdgeStrings::Owned(std::mem::take(&mut def.input)),
            section: (section.in_ctrl.is_some()
                || section.ctrl_to_data.is_some()
                || section.fanout.is_some())
            .then(|| section.clone()),
        },
    })
}

pub(crate) fn pair_lists(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    key: &str,
    value: &str,
    max: i64,
) -> Option<Vec<(String, i64)>> {
    let k = attrs.get(key).and_then(as_list_s)?;
    let v = attrs.get(value).and_then(as_list_i)?;
    if k.is_empty() || k.len() != v.len() || v.iter().any(|&x| !(0..=max).contains(&x)) {
        return None;
    }
    let out = k.into_iter().zip(v.iter().copied()).collect();
    remove_untyped(attrs, key);
    remove_untyped(attrs, value);
    Some(out)
}
