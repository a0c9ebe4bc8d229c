//! Building one graph of the model, and the bodies of its nodes: values by name, captures of
//! enclosing values, links made once every node exists.

use std::borrow::Cow;
use std::sync::Arc;

use ascendir_ir::{AttrValue, Graph, InAnchor, NodeId, OpDesc, OutAnchor, TensorDesc};
use rustc_hash::{FxHashMap, FxHashSet};

use super::*;

fn has_subgraphs(n: &pb::NodeProto) -> bool {
    n.attribute
        .iter()
        .any(|a| a.g.is_some() || !a.graphs.is_empty())
}

/// Every name a graph defines (inputs, initializers, node outputs).
fn defined_names(gp: &pb::GraphProto) -> FxHashSet<&str> {
    let mut s = FxHashSet::default();
    s.extend(gp.input.iter().map(|v| v.name.as_str()));
    s.extend(gp.initializer.iter().map(|t| t.name.as_str()));
    for n in &gp.node {
        s.extend(
            n.output
                .iter()
                .map(|o| pb::text(o))
                .filter(|o| !o.is_empty()),
        );
    }
    s
}

/// How one definition of a value is named in an error.
fn node_label(i: usize, n: &pb::NodeProto) -> String {
    let (name, ty) = (pb::text(&n.name), pb::text(&n.op_type));
    if name.is_empty() {
        format!("node {i} ({ty})")
    } else {
        format!("node '{name}' ({ty})")
    }
}

/// Check that graph `gp` (named `name`) defines each value once: graph inputs and initializers
/// by distinct names (an input may share its name with the initializer that gives its default),
/// node outputs by names no input, initializer, earlier output or enclosing graph (`outer`)
/// uses. Checked before anything is built.
fn check_ssa(gp: &pb::GraphProto, name: &str, outer: &[&FxHashSet<&str>]) -> OnnxResult<()> {
    /// A definition: a graph input, an initializer, or node `k`.
    #[derive(Clone, Copy)]
    enum Def {
        Input,
        Initializer,
        Node(usize),
    }
    let label = |d: Def| match d {
        Def::Input => "graph input".to_string(),
        Def::Initializer => "initializer".to_string(),
        Def::Node(k) => gp
            .node
            .get(k)
            .map_or_else(String::new, |n| node_label(k, n)),
    };
    let dup = |value: &str, first: String, second: Def| OnnxError::DuplicateValue {
        graph: name.to_string(),
        value: value.to_string(),
        first,
        second: label(second),
    };
    let mut seen: FxHashMap<&str, Def> = FxHashMap::default();
    seen.reserve(gp.input.len() + gp.initializer.len() + gp.node.len());
    for v in &gp.input {
        if let Some(first) = seen.insert(v.name.as_str(), Def::Input) {
            return Err(dup(&v.name, label(first), Def::Input));
        }
    }
    for t in &gp.initializer {
        match seen.insert(t.name.as_str(), Def::Initializer) {
            Some(Def::Initializer) => {
                return Err(dup(&t.name, label(Def::Initializer), Def::Initializer))
            }
            // The initializer of an input keeps the input as its first definition.
            Some(first) => {
                seen.insert(t.name.as_str(), first);
            }
            None => {}
        }
    }
    for (i, n) in gp.node.iter().enumerate() {
        for out in n
            .output
            .iter()
            .map(|o| pb::text(o))
            .filter(|o| !o.is_empty())
        {
            if let Some(first) = seen.insert(out, Def::Node(i)) {
                return Err(dup(out, label(first), Def::Node(i)));
            }
            if outer.iter().any(|s| s.contains(out)) {
                return Err(dup(
                    out,
                    "a value of an enclosing graph".into(),
                    Def::Node(i),
                ));
            }
        }
    }
    Ok(())
}

/// A built graph, the values it captures from enclosing graphs (with their `Data` nodes) and
/// the element types of its outputs where known.
type BuiltGraph = (
    Graph,
    Vec<(String, NodeId)>,
    Vec<Option<ascendir_ir::DataType>>,
);

/// Build one graph. `formal` maps the graph's ONNX inputs to `Data` indexes (root: 0..n;
/// bodies: the parent input each formal input stands for). Returns the graph and the values it
/// captures from enclosing graphs, with their `Data` nodes.
pub(super) fn build_graph<'m>(
    gp: &'m pb::GraphProto,
    name: &str,
    ctx: &mut Ctx,
    outer: &[&FxHashSet<&'m str>],
    formal: &[i64],
    outer_values: OuterValues,
) -> OnnxResult<BuiltGraph> {
    check_ssa(gp, name, outer)?;
    let extra = gp.initializer.len() + gp.input.len() + 1;
    let mut b = Builder {
        g: Graph::with_capacity(name, gp.node.len() + extra),
        values: FxHashMap::default(),
        types: FxHashMap::default(),
        descs: FxHashMap::default(),
        consts: FxHashMap::default(),
        outer,
        captures: Vec::new(),
        unknown: Arc::new(desc_from_type(None)),
        traced: std::cell::RefCell::default(),
        outer_types: outer_values.types,
        outer_dims: outer_values.dims,
        node_name_next: std::cell::RefCell::default(),
    };
    b.values.reserve(gp.node.len() * 2 + extra);
    b.types.reserve(gp.value_info.len() + extra);
    b.descs.reserve(gp.node.len() * 2 + extra);
    for v in gp.value_info.iter().chain(&gp.output).chain(&gp.input) {
        if let Some(t) = &v.r#type {
            b.types.insert(v.name.as_str(), t);
        }
    }
    // Initializers.
    let inits: FxHashSet<&str> = gp.initializer.iter().map(|t| t.name.as_str()).collect();
    for t in &gp.initializer {
        let tensor = ctx.tensor(t)?;
        let mut desc = (*tensor.desc).clone();
        desc.name = Some(t.name.as_str().into());
        let desc = Arc::new(desc);
        b.descs.insert(t.name.as_str(), desc.clone());
        let node_name = b.unique_node_name(if t.name.is_empty() { "const" } else { &t.name });
        let mut op = OpDesc::new(&node_name, "Const");
        op.add_output("y", desc)?;
        op.set_attr("value", AttrValue::Tensor(tensor));
        let id = b.g.add_node(op)?;
        b.values.insert(t.name.as_str(), (id, 0));
        b.consts.insert(t.name.as_str(), id);
    }
    ctx.report.initializers += gp.initializer.len();
    // Graph inputs (those without an initializer of the same name).
    let mut k = 0usize;
    for v in &gp.input {
        if inits.contains(v.name.as_str()) {
            continue;
        }
        if v.name.is_empty() {
            return Err(OnnxError::Invalid(format!(
                "graph '{name}' has an input without a name"
            )));
        }
        let desc = b.desc(v.name.as_str());
        let node_name = b.unique_node_name(&v.name);
        let mut op = OpDesc::new(&node_name, "Data");
        op.add_input("x", desc.clone());
        op.add_output("y", desc)?;
        let index = formal.get(k).copied().unwrap_or(k as i64);
        op.set_attr("index", AttrValue::Int(index));
        let id = b.g.add_node(op)?;
        b.values.insert(v.name.as_str(), (id, 0));
        k += 1;
    }
    // The names visible to bodies: enclosing ones plus this graph's.
    let own_names = gp.node.iter().any(has_subgraphs).then(|| defined_names(gp));
    let mut scope: Vec<&FxHashSet<&'m str>> = outer.to_vec();
    if let Some(s) = &own_names {
        scope.push(s);
    }
    // Pass 1: nodes.
    let mut pending: Vec<Pending<'m>> = Vec::with_capacity(gp.node.len() * 2);
    let mut aux_links: Vec<(NodeId, usize, NodeId)> = Vec::new();
    let id_placeholder = NodeId::default();
    for (i, n) in gp.node.iter().enumerate() {
        for t in n
            .input
            .iter()
            .chain(&n.output)
            .chain([&n.name, &n.op_type, &n.domain])
        {
            if ascendir_wire::utf8(t).is_none() {
                return Err(OnnxError::Decode {
                    offset: 0,
                    path: format!("GraphProto({name}).node[{i}]"),
                    message: "a name is not valid UTF-8".into(),
                });
            }
        }
        let (n_name, n_type, n_domain) =
            (pb::text(&n.name), pb::text(&n.op_type), pb::text(&n.domain));
        if n_type.is_empty() {
            return Err(OnnxError::Invalid(format!(
                "node {i} of graph '{name}' has no op_type"
            )));
        }
        let standard = n_domain.is_empty() || n_domain == "ai.onnx";
        let mapped = if standard {
            ops::map_node(n, ctx.opset, &b)?
        } else {
            None
        };
        let node_name = if n_name.is_empty() {
            Cow::Owned(b.unique_node_name(&format!("{n_type}_{i}")).into_owned())
        } else {
            b.unique_node_name(n_name)
        };
        let Mapped {
            ge_type,
            inputs,
            outputs,
            attrs,
            aux,
            unit_h,
        } = match mapped {
            Some(m) => m,
            None => {
                let ge = format!("onnx::{n_type}");
                *ctx.report.unknown_ops.entry(ge.clone()).or_default() += 1;
                let mut attrs = ascendir_ir::AttrMap::new();
                for a in &n.attribute {
                    if a.g.is_none() && a.graphs.is_empty() {
                        if let Some(v) = ops::attr_value(a)? {
                            attrs.insert(a.name.clone(), v);
                        }
                    }
                }
                if !standard {
                    attrs.insert(ATTR_DOMAIN, AttrValue::String(n_domain.to_string()));
                }
                Mapped {
                    ge_type: ge,
                    inputs: (0..n.input.len())
                        .map(|k| (Cow::Owned(format!("__input{k}")), Some(k), false))
                        .collect(),
                    outputs: (0..n.output.len())
                        .map(|k| Cow::Owned(format!("__output{k}")))
                        .collect(),
                    attrs,
                    aux: Vec::new(),
                    unit_h: Vec::new(),
                }
            }
        };
        let mut op = OpDesc::new(&node_name, &ge_type);
        op.attrs = attrs;
        if ge_type == "Const" {
            op.set_attr(ATTR_CONSTANT_NODE, AttrValue::Bool(true));
        }
        let first_pending = pending.len();
        // All ports at once (names checked in linear time): one by one is quadratic in the
        // number of ports.
        let mut in_ports: Vec<(&str, Arc<TensorDesc>)> = Vec::with_capacity(inputs.len());
        for (port, src, optional) in &inputs {
            let value = src.and_then(|k| n.input.get(k)).map_or("", |v| pb::text(v));
            let desc = if value.is_empty() {
                if *optional {
                    Arc::new(TensorDesc::invalid())
                } else {
                    b.unknown.clone()
                }
            } else if src.is_some_and(|k| unit_h.contains(&k)) {
                // Read through the Unsqueeze made below; the port's 4-D desc is inferred.
                b.unknown.clone()
            } else {
                pending.push(Pending {
                    node: id_placeholder,
                    port: in_ports.len(),
                    name: value,
                });
                b.desc(value)
            };
            in_ports.push((port.as_ref(), desc));
        }
        op.append_ports(ascendir_ir::Side::Input, in_ports)?;
        for (port, _, optional) in &inputs {
            if *optional {
                op.mark_optional_input(port);
            }
        }
        let outs: Vec<(&str, Arc<TensorDesc>)> = outputs
            .iter()
            .enumerate()
            .map(|(k, port)| {
                let value = n.output.get(k).map_or("", |v| pb::text(v));
                let desc = if unit_h.is_empty() {
                    b.desc(value)
                } else {
                    b.unknown.clone()
                };
                (port.as_ref(), desc)
            })
            .collect();
        op.append_ports(ascendir_ir::Side::Output, outs)?;
        let mut aux_ports = Vec::new();
        for (port, tensor) in aux {
            let idx = op.add_input(&port, tensor.desc.clone());
            aux_ports.push((idx, port, tensor));
        }
        let id = b.g.add_node(op)?;
        for (k, out) in n.output.iter().enumerate() {
            if !out.is_empty() {
                b.values.insert(pb::text(out), (id, k));
            }
        }
        if ge_type == "Const" {
            if let Some(out) = n.output.first() {
                b.consts.insert(pb::text(out), id);
            }
        }
        for (idx, port, tensor) in aux_ports {
            let wanted = format!("{node_name}/{port}");
            let cname = b.unique_node_name(&wanted);
            let mut cop = OpDesc::new(&cname, "Const");
            cop.add_output("y", tensor.desc.clone())?;
            cop.set_attr("value", AttrValue::Tensor(tensor));
            cop.set_attr(ATTR_AUX, AttrValue::Bool(true));
            let cid = b.g.add_node(cop)?;
            aux_links.push((cid, idx, id));
            ctx.report.aux_consts += 1;
        }
        for p in &mut pending[first_pending..] {
            p.node = id;
        }
        if !unit_h.is_empty() {
            let lifted = super::unit_axis::lift(&mut b, n, id, &node_name, &inputs, &unit_h)?;
            pending.extend(lifted);
        }
        if has_subgraphs(n) {
            let extra_inputs = build_bodies(&mut b, ctx, &scope, id, n, &ge_type)?;
            pending.extend(extra_inputs);
        }
    }
    ctx.report.onnx_nodes += gp.node.len();
    // Pass 2: links.
    for p in pending {
        let src = b.resolve(p.name)?.ok_or_else(|| {
            let who = b.g.op(p.node).map(|o| o.name().to_string()).unwrap_or_default();
            OnnxError::Invalid(format!(
                "node '{who}' of graph '{name}' reads '{}', which no node, input or initializer produces",
                p.name
            ))
        })?;
        b.g.link(
            OutAnchor::data(src.0, src.1),
            InAnchor::data(p.node, p.port),
        )?;
    }
    for (cid, idx, id) in aux_links {
        b.g.link(OutAnchor::data(cid, 0), InAnchor::data(id, idx))?;
    }
    // Outputs.
    let mut outs = Vec::with_capacity(gp.output.len());
    for v in &gp.output {
        let src = b.resolve(v.name.as_str())?.ok_or_else(|| {
            OnnxError::Invalid(format!(
                "output '{}' of graph '{name}' is never produced",
                v.name
            ))
        })?;
        outs.push((src.0, src.1 as i32));
    }
    b.g.set_outputs(&outs, &[])?;
    // A graph output produced by a Data node keeps its own name on the NetOutput input desc.
    // The element types of the outputs, as traced here, for the parent's look-ups.
    let out_types = {
        use crate::ops::InputInfo;
        gp.output.iter().map(|v| b.dtype(&v.name)).collect()
    };
    Ok((b.g, b.captures, out_types))
}

/// The element types and dims, as `b` knows them, of the values body `gp` (and the bodies
/// inside it) reads by name: what its mappings may ask of a captured value (a 1-D Conv's
/// weight in the enclosing graph gives the Conv its rank).
fn outer_values(b: &Builder<'_, '_>, gp: &pb::GraphProto) -> OuterValues {
    use crate::ops::InputInfo;
    let mut out = OuterValues::default();
    // Names the body (or a body nested in it) defines are its own, whatever the enclosing
    // graphs call the same name: they take no enclosing dims.
    let mut own: FxHashSet<&str> = FxHashSet::default();
    let mut stack = vec![gp];
    while let Some(g) = stack.pop() {
        own.extend(defined_names(g));
        for n in &g.node {
            for a in &n.attribute {
                stack.extend(a.g.iter());
                stack.extend(&a.graphs);
            }
        }
    }
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut stack = vec![gp];
    while let Some(g) = stack.pop() {
        for n in &g.node {
            for v in &n.input {
                let v = pb::text(v);
                if v.is_empty() || !seen.insert(v) {
                    continue;
                }
                if let Some(d) = b.dtype(v) {
                    out.types.insert(v.to_string(), d);
                }
                if !own.contains(v) {
                    if let Some(d) = b.dims(v) {
                        out.dims.insert(v.to_string(), d);
                    }
                }
            }
            for a in &n.attribute {
                stack.extend(a.g.iter());
                stack.extend(&a.graphs);
            }
        }
    }
    out
}

/// Build the bodies of `n` (node `id` in `b`), register them, and return the links to make for
/// the values they capture (new inputs of the parent node).
fn build_bodies<'m>(
    b: &mut Builder<'m, '_>,
    ctx: &mut Ctx,
    scope: &[&FxHashSet<&'m str>],
    id: NodeId,
    n: &'m pb::NodeProto,
    ge_type: &str,
) -> OnnxResult<Vec<Pending<'m>>> {
    let parent_inputs = b.g.op(id)?.num_inputs();
    let node_name = b.g.op(id)?.name().to_string();
    // (slot, dynamic, graph)
    let mut bodies: Vec<(String, bool, &'m pb::GraphProto)> = Vec::new();
    for a in &n.attribute {
        if let Some(g) = &a.g {
            bodies.push((a.name.clone(), false, g));
        }
        for g in &a.graphs {
            bodies.push((a.name.clone(), true, g));
        }
    }
    // GE's slot order (attributes may come sorted by name).
    if ge_type == "If" {
        bodies.sort_by_key(|(slot, _, _)| match slot.as_str() {
            "then_branch" => 0,
            "else_branch" => 1,
            _ => 2,
        });
    }
    // Formal inputs of a Loop body stand for the parent inputs in order; others have none
    // they could map to, so their formal inputs get fresh parent ports after the captures.
    let formal: Vec<i64> = (0..parent_inputs as i64).collect();
    let mut built = Vec::with_capacity(bodies.len());
    let mut body_types: Vec<Vec<Option<ascendir_ir::DataType>>> = Vec::new();
    for (slot, dynamic, gp) in &bodies {
        let name = ctx.unique_graph_name(&gp.name, &format!("{node_name}_{slot}"));
        let outer = outer_values(b, gp);
        let (g, caps, out_types) = build_graph(gp, &name, ctx, scope, &formal, outer)?;
        body_types.push(out_types);
        built.push((slot.clone(), *dynamic, g, caps));
    }
    // The parent's outputs have its bodies' types: an If's where both branches agree, a
    // Loop's those of its body outputs after the condition.
    let skip = usize::from(ge_type == "Loop");
    if matches!(ge_type, "If" | "Loop") {
        if let Some((first, rest)) = body_types.split_first() {
            for (k, out) in n.output.iter().enumerate() {
                let t = first.get(k + skip).copied().flatten();
                let agree = rest.iter().all(|r| r.get(k + skip).copied().flatten() == t);
                let out = pb::text(out);
                if let (Some(t), true, false) = (t, agree, out.is_empty()) {
                    b.traced.borrow_mut().insert(out.to_string(), Some(t));
                }
            }
        }
    }
    // Union of the captured names, in first-seen order, as new parent inputs.
    let mut union: Vec<String> = Vec::new();
    for (_, _, _, caps) in &built {
        for (cname, _) in caps {
            if !union.contains(cname) {
                union.push(cname.clone());
            }
        }
    }
    let dyn_group = match ge_type {
        "If" => Some("input"),
        "Loop" => Some("input"),
        _ => None,
    };
    let mut links = Vec::with_capacity(union.len());
    let mut first_index = 0usize;
    if !union.is_empty() {
        let mut keys: Vec<&'m str> = Vec::with_capacity(union.len());
        for u in &union {
            let key: &'m str = scope
                .iter()
                .find_map(|s| s.get(u.as_str()).copied())
                .ok_or_else(|| {
                    OnnxError::Invalid(format!("captured value '{u}' is not visible"))
                })?;
            keys.push(key);
        }
        let descs: Vec<Arc<TensorDesc>> = keys.iter().map(|k| b.desc(k)).collect();
        let start = parent_inputs;
        first_index = start;
        let existing_dyn = dyn_group.map_or(0, |g| {
            b.g.op(id).map_or(0, |op| {
                op.dynamic_indexes(ascendir_ir::Side::Input, g).len()
            })
        });
        b.g.modify_op(id, |op| {
            op.set_attr(ATTR_NUM_INPUTS, AttrValue::Int(start as i64));
            for (k, d) in descs.into_iter().enumerate() {
                let port = match dyn_group {
                    Some(g) => format!("{g}{}", existing_dyn + k),
                    None => format!("__input{}", start + k),
                };
                op.add_input(&port, d);
            }
        })?;
        for (k, key) in keys.into_iter().enumerate() {
            links.push(Pending {
                node: id,
                port: start + k,
                name: key,
            });
        }
    }
    for (slot, dynamic, mut g, caps) in built {
        for (cname, data) in &caps {
            let pos = union.iter().position(|u| u == cname).unwrap_or(0);
            let index = (first_index + pos) as i64;
            g.modify_op(*data, |op| op.set_attr("index", AttrValue::Int(index)))?;
        }
        // Graph names are unique across the model (`unique_graph_name`).
        b.g.add_subgraph_fresh_names(None, id, &slot, dynamic, g)?;
    }
    Ok(links)
}
