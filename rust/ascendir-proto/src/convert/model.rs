//! Models: prost `ModelDef` messages to and from models, unknown fields kept.

use super::*;

/// Encode a model: every root graph followed by its registered subgraphs.
pub fn model_to_def(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<pb::ModelDef> {
    model_to_def_flat(meta, &with_subgraphs(graphs))
}

/// Encode a model from the exact `ModelDef.graph` list (`graphs[0]` first).
pub fn model_to_def_flat(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<pb::ModelDef> {
    check_unique_names(graphs)?;
    let out = graphs
        .iter()
        .map(|g| graph_to_def(g))
        .collect::<ProtoResult<Vec<_>>>()?;
    Ok(pb::ModelDef {
        name: meta.name.clone(),
        version: meta.version,
        custom_version: meta.custom_version.clone(),
        graph: out,
        attr: attrs_to_map(&meta.attrs, &[ASC_ATTR_GROUPS])?,
        attr_groups: attr_groups_of(&meta.attrs),
    })
}

/// Decode a model: every GraphDef, then subgraph ownership rebuilt from the instance names
/// (breadth first from each root); the root's subgraph list keeps the file order.
pub fn model_from_def(def: pb::ModelDef) -> ProtoResult<Model> {
    model_from_def_raw(def, &[])
}

/// Keep the unknown fields of a message (and of its attribute map's values, field
/// `attr_field`) found in its encoding `raw` under our keys of `attrs`.
pub(crate) fn keep_unknown(attrs: &mut AttrMap, raw: &[u8], known: &[u32], attr_field: u32) {
    let unknown = crate::wire::unknown_fields(raw, known);
    if !unknown.is_empty() {
        attrs.insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
    }
    if let Some(v) = attr_unknown_value(crate::wire::attr_unknown_fields(raw, attr_field)) {
        attrs.insert(ASC_ATTR_UNKNOWN.to_string(), v);
    }
}

/// [`model_from_def`] for `def` decoded from `raw`: the unknown fields of the ModelDef, its
/// GraphDefs and their attribute values are kept (see `docs/WIRE_FORMAT.md`).
pub fn model_from_def_raw(def: pb::ModelDef, raw: &[u8]) -> ProtoResult<Model> {
    model_value(def, DecodeCtx::new(raw, false))
}

/// [`model_from_def_raw`] of `ctx`'s input.
pub(crate) fn model_value(def: pb::ModelDef, ctx: DecodeCtx) -> ProtoResult<Model> {
    let raw = ctx.input;
    let mut graph_raw: Vec<&[u8]> = Vec::new();
    let mut pos = 0usize;
    while pos < raw.len() {
        match crate::wire::next_field(raw, &mut pos) {
            Some(f) if f.number == 7 && f.wire_type == 2 => {
                graph_raw.push(&raw[f.value_start..f.end])
            }
            Some(_) => {}
            None => {
                graph_raw.clear();
                break;
            }
        }
    }
    let pb::ModelDef {
        name,
        version,
        custom_version,
        graph,
        attr,
        attr_groups,
    } = def;
    if graph.is_empty() {
        return Err(ProtoError::invalid("graph", "the model has no graph"));
    }
    let mut attrs = attrs_from_map(attr, ctx)?;
    check_field_keys(&attrs, false)?;
    if !attr_groups.is_empty() {
        attrs.insert(ASC_ATTR_GROUPS.to_string(), AttrValue::Bytes(attr_groups));
    }
    if !graph_raw.is_empty() {
        keep_unknown(&mut attrs, raw, crate::wire::MODEL_DEF_FIELDS, 11);
    }
    let mut by_name: FxHashMap<String, usize> = FxHashMap::default();
    for (i, g) in graph.iter().enumerate() {
        if by_name.insert(g.name.clone(), i).is_some() {
            return Err(ProtoError::invalid(
                format!("graph[{i}].name"),
                format!("duplicate graph name '{}'", g.name),
            ));
        }
    }
    let mut slots: Vec<Option<Graph>> = Vec::with_capacity(graph.len());
    let keep = graph_raw.len() == graph.len();
    for (i, gd) in graph.into_iter().enumerate() {
        let mut g = graph_value(gd, ctx).map_err(|e| e.within(|| format!("graph[{i}]")))?;
        if keep {
            keep_unknown(
                &mut g.attrs,
                graph_raw[i],
                crate::wire::GRAPH_DEF_FIELDS,
                11,
            );
        }
        slots.push(Some(g));
    }
    let mut taken = vec![false; slots.len()];
    // Nesting depth of each graph below its root (a root is 0), checked as the tree is found.
    let mut depth = vec![0usize; slots.len()];
    let mut roots = Vec::new();
    for r in 0..slots.len() {
        if taken[r] {
            continue;
        }
        taken[r] = true;
        // Discover subgraphs breadth first.
        let mut found: Vec<usize> = Vec::new();
        let mut queue: Vec<usize> = vec![r];
        let mut head = 0;
        while head < queue.len() {
            let gi = queue[head];
            head += 1;
            let g = slots[gi]
                .as_ref()
                .ok_or_else(|| ProtoError::invalid(format!("graph[{gi}]"), "graph used twice"))?;
            let mut links: Vec<(usize, NodeId)> = Vec::new();
            for id in g.node_ids() {
                let op = g
                    .op(id)
                    .map_err(|e| ProtoError::invalid("", e.to_string()))?;
                for inst in op
                    .subgraph_instance_names()
                    .iter()
                    .filter(|s| !s.is_empty())
                {
                    let si = *by_name.get(inst).ok_or_else(|| {
                        ProtoError::invalid(
                            format!("graph[{gi}].op({}).subgraph_name", op.name()),
                            format!("missing subgraph '{inst}'"),
                        )
                    })?;
                    if taken[si] {
                        return Err(ProtoError::invalid(
                            format!("graph[{gi}].op({}).subgraph_name", op.name()),
                            format!("subgraph '{inst}' is referenced twice (or is a root)"),
                        ));
                    }
                    taken[si] = true;
                    links.push((si, id));
                }
            }
            let parent_name = g.name().to_string();
            let sub_depth = depth[gi] + 1;
            if !links.is_empty() && sub_depth > MAX_SUBGRAPH_DEPTH {
                return Err(ProtoError::invalid(
                    format!("graph[{gi}]"),
                    format!(
                        "subgraphs nested more than {MAX_SUBGRAPH_DEPTH} levels deep (graph '{parent_name}' is at depth {})",
                        depth[gi]
                    ),
                ));
            }
            for (si, id) in links {
                depth[si] = sub_depth;
                if let Some(sub) = slots[si].as_mut() {
                    sub.parent = Some(ParentLink {
                        graph: parent_name.clone(),
                        node: id,
                    });
                }
                found.push(si);
                queue.push(si);
            }
        }
        found.sort_unstable();
        let mut root = slots[r]
            .take()
            .ok_or_else(|| ProtoError::invalid(format!("graph[{r}]"), "graph used twice"))?;
        for si in found {
            if let Some(sub) = slots[si].take() {
                root.subgraphs.push(sub);
            }
        }
        roots.push(root);
    }
    Ok(Model {
        meta: ModelMeta {
            name,
            version,
            custom_version,
            attrs,
        },
        graphs: roots,
    })
}
