//! The reader's second half: parsed sections into a graph with its subgraphs.

use std::sync::Arc;

use ascendir_ir::registry::{self, OpProto};
use ascendir_ir::{
    AttrValue, Graph, InAnchor, IrError, IrInputType, IrOutputType, NodeId, OpDesc, OutAnchor,
    Side, SubgraphType, TensorDesc,
};
use rustc_hash::FxHashMap;

use super::parse::{AttrText, NodeLine, Pos, Section};
use super::ReadableError;

/// The op whose dynamic input numbering starts at 1.
const FOR: &str = "For";

fn ir_err(pos: Pos, source: IrError) -> ReadableError {
    ReadableError::Ir {
        line: pos.line,
        column: pos.column,
        source,
    }
}

fn graph_err(pos: Pos, message: String) -> ReadableError {
    ReadableError::Graph {
        line: pos.line,
        column: pos.column,
        message,
    }
}

/// A subgraph a node names: `(slot, dynamic, instance, place)`.
type SubRef = (String, bool, String, Pos);

/// Per node (by name), the subgraphs it names.
type NodeRefs = Vec<(String, Vec<SubRef>)>;

/// One built section: the graph and, per node, the subgraphs it names.
struct Built {
    graph: Graph,
    refs: NodeRefs,
    pos: Pos,
}

/// The root graph of `sections` with every other section attached as a subgraph where a node
/// names it.
pub fn build(sections: Vec<Section>) -> Result<Graph, ReadableError> {
    let mut built: Vec<(String, Built)> = Vec::with_capacity(sections.len());
    for s in sections {
        let name = s.name.clone();
        if built.iter().any(|(n, _)| *n == name) {
            let pos = s.pos.unwrap_or(Pos { line: 1, column: 1 });
            return Err(graph_err(pos, format!("a second graph named '{name}'")));
        }
        built.push((name, build_section(s)?));
    }
    let mut rest: FxHashMap<String, Built> = FxHashMap::default();
    let mut iter = built.into_iter();
    let Some((_, first)) = iter.next() else {
        return Err(graph_err(
            Pos { line: 1, column: 1 },
            "no graph".to_string(),
        ));
    };
    rest.extend(iter);
    let mut root = first.graph;
    let mut work: Vec<(Option<usize>, NodeRefs)> = vec![(None, first.refs)];
    while let Some((owner, refs)) = work.pop() {
        for (node_name, subs) in refs {
            for (slot, dynamic, instance, pos) in subs {
                let Some(sub) = rest.remove(&instance) else {
                    let msg = format!("node '{node_name}' names graph '{instance}', which is not in the dump or is named twice");
                    return Err(graph_err(pos, msg));
                };
                let owner_graph = root
                    .tree_graph(owner)
                    .ok_or_else(|| graph_err(pos, "lost the owning graph".to_string()))?;
                let node = owner_graph
                    .find(&node_name)
                    .ok_or_else(|| graph_err(pos, format!("no node '{node_name}'")))?;
                root.add_subgraph(owner, node, &slot, dynamic, sub.graph)
                    .map_err(|e| ir_err(pos, e))?;
                let index = root.subgraph_index(&instance).ok_or_else(|| {
                    graph_err(sub.pos, format!("graph '{instance}' was not attached"))
                })?;
                work.push((Some(index), sub.refs));
            }
        }
    }
    if let Some((name, b)) = rest.into_iter().min_by_key(|(_, b)| b.pos.line) {
        return Err(graph_err(
            b.pos,
            format!("graph '{name}' is not named by any node"),
        ));
    }
    Ok(root)
}

/// The graph of one section.
fn build_section(s: Section) -> Result<Built, ReadableError> {
    let pos = s.pos.unwrap_or(Pos { line: 1, column: 1 });
    let mut g = Graph::new(&s.name);
    let mut symbols: FxHashMap<String, (NodeId, i32, usize)> = FxHashMap::default();
    let mut links: Vec<(NodeId, Slots)> = Vec::new();
    let mut refs = Vec::new();
    let mut outputs: FxHashMap<String, (NodeId, usize)> = FxHashMap::default();
    for line in &s.nodes {
        let proto = registry::lookup(&line.op_type);
        let (op, slots, subs) = make_op(line, proto.as_deref())?;
        let id = g.add_node(op).map_err(|e| ir_err(line.pos, e))?;
        if op_is_input(&line.op_type) {
            g.add_input_node(id).map_err(|e| ir_err(line.pos, e))?;
        }
        outputs.insert(line.name.clone(), (id, line.outputs));
        if line.outputs <= 1 {
            symbols.insert(line.name.clone(), (id, 0, line.pos.line));
        }
        links.push((id, slots));
        if !subs.is_empty() {
            refs.push((line.name.clone(), subs));
        }
    }
    for get in &s.gets {
        let &(id, count) = outputs
            .get(&get.node)
            .ok_or_else(|| graph_err(get.pos, format!("no node '{}'", get.node)))?;
        if get.index >= count {
            let msg = format!(
                "node '{}' has {count} outputs, not {}",
                get.node,
                get.index + 1
            );
            return Err(graph_err(get.pos, msg));
        }
        let index = i32::try_from(get.index).unwrap_or(i32::MAX);
        if let Some(prev) = symbols.insert(get.name.clone(), (id, index, get.pos.line)) {
            let msg = format!("'%{}' is also defined at line {}", get.name, prev.2);
            return Err(graph_err(get.pos, msg));
        }
    }
    let resolve = |name: &str, pos: Pos| {
        symbols
            .get(name)
            .map(|&(id, index, _)| OutAnchor { node: id, index })
            .ok_or_else(|| graph_err(pos, format!("no value named '%{name}'")))
    };
    for (id, slots) in links {
        for (port, name, pos) in slots {
            let src = resolve(&name, pos)?;
            let index = i32::try_from(port).unwrap_or(i32::MAX);
            g.link(src, InAnchor { node: id, index })
                .map_err(|e| ir_err(pos, e))?;
        }
    }
    if let Some(ret) = &s.ret {
        let mut outs = Vec::with_capacity(ret.len());
        for (name, pos) in ret {
            let a = resolve(name, *pos)?;
            outs.push((a.node, a.index));
        }
        let at = ret.first().map_or(pos, |r| r.1);
        g.set_outputs(&outs, &[]).map_err(|e| ir_err(at, e))?;
    }
    Ok(Built {
        graph: g,
        refs,
        pos,
    })
}

/// Whether an op of this type is a graph input.
fn op_is_input(op_type: &str) -> bool {
    matches!(op_type, "Data" | "RefData")
}

/// `_input_N` → N.
fn fallback_index(param: &str) -> Option<usize> {
    param.strip_prefix("_input_")?.parse().ok()
}

/// Input ports: `(port index, value name, place)` per given input.
type Slots = Vec<(usize, String, Pos)>;

/// The op of a node line: ports from the op's prototype when it is registered (else from the
/// line), attributes with their IR names recorded, the subgraphs it names.
fn make_op(
    line: &NodeLine,
    proto: Option<&OpProto>,
) -> Result<(OpDesc, Slots, Vec<SubRef>), ReadableError> {
    let mut op = OpDesc::new(&line.name, &line.op_type);
    let slots = add_inputs(&mut op, line, proto)?;
    add_outputs(&mut op, line.outputs, proto).map_err(|e| ir_err(line.pos, e))?;
    let mut names = Vec::new();
    let mut subs = Vec::new();
    for (name, value, pos) in &line.attrs {
        match value {
            AttrText::Graph(instance) => {
                let (slot, dynamic) = subgraph_slot(name, proto);
                subs.push((slot, dynamic, instance.clone(), *pos));
            }
            AttrText::Value(v) => {
                let declared = proto.and_then(|p| p.attr(name)).map(|a| a.kind);
                let v = declared
                    .and_then(|k| registry::coerce_attr(k, v.clone()))
                    .unwrap_or_else(|| v.clone());
                if let (AttrValue::Tensor(t), 1) = (&v, op.num_outputs()) {
                    if matches!(line.op_type.as_str(), "Const" | "Constant") {
                        let desc: TensorDesc = (*t.desc).clone();
                        op.set_port_desc(Side::Output, 0, Arc::new(desc))
                            .map_err(|e| ir_err(*pos, e))?;
                    }
                }
                op.set_attr(name, v);
                names.push(name.clone());
            }
        }
    }
    if !names.is_empty() {
        op.meta_mut().ir_attr_names = names;
    }
    Ok((op, slots, subs))
}

/// `(slot, dynamic)` of a subgraph attribute: `branches1` of an op declaring a dynamic
/// `branches` is that slot's second instance; anything else is a static slot of that name.
fn subgraph_slot(name: &str, proto: Option<&OpProto>) -> (String, bool) {
    let dynamic = proto.and_then(|p| {
        p.subgraphs.iter().find(|(base, kind)| {
            *kind == SubgraphType::Dynamic
                && name
                    .strip_prefix(base.as_str())
                    .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        })
    });
    match dynamic {
        Some((base, _)) => (base.clone(), true),
        None => (name.to_string(), false),
    }
}

/// The input ports of `op` and which given input feeds which.
fn add_inputs(
    op: &mut OpDesc,
    line: &NodeLine,
    proto: Option<&OpProto>,
) -> Result<Slots, ReadableError> {
    let desc = || Arc::new(TensorDesc::default());
    let given = &line.inputs;
    let mut slots = Vec::with_capacity(given.len());
    let fallback = !given.is_empty() && given.iter().all(|(p, _, _)| fallback_index(p).is_some());
    if fallback {
        let max = given.iter().filter_map(|(p, _, _)| fallback_index(p)).max();
        for k in 0..=max.unwrap_or(0) {
            op.add_input(&format!("__input{k}"), desc());
        }
        for (p, v, pos) in given {
            slots.push((fallback_index(p).unwrap_or(0), v.clone(), *pos));
        }
        return Ok(slots);
    }
    let Some(proto) = proto else {
        let mut ir = Vec::with_capacity(given.len());
        for (p, v, pos) in given {
            let idx = op.add_input(p, desc());
            slots.push((idx, v.clone(), *pos));
            ir.push((Arc::<str>::from(p.as_str()), IrInputType::Required));
        }
        if !ir.is_empty() {
            op.meta_mut().ir_inputs = ir;
        }
        return Ok(slots);
    };
    let mut used = vec![false; given.len()];
    // Given inputs by name, each name's positions in reverse (taken from the back).
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (j, (p, _, _)) in given.iter().enumerate().rev() {
        by_name.entry(p.as_str()).or_default().push(j);
    }
    let mut find = |param: &str| {
        let j = by_name.get_mut(param)?.pop()?;
        used[j] = true;
        Some(j)
    };
    for spec in &proto.inputs {
        let name = spec.name.as_str();
        match spec.kind {
            IrInputType::Required | IrInputType::Optional => match find(name) {
                Some(j) => {
                    let idx = op.add_input(name, desc());
                    if spec.kind == IrInputType::Optional {
                        op.mark_optional_input(name);
                    }
                    slots.push((idx, given[j].1.clone(), given[j].2));
                }
                None if spec.kind == IrInputType::Required => {
                    op.add_input(name, desc());
                }
                None => {
                    op.add_optional_input(name, Arc::new(TensorDesc::invalid()));
                }
            },
            IrInputType::Dynamic => {
                let offset = usize::from(line.op_type == FOR);
                let mut k = 0usize;
                while let Some(j) = find(&format!("{name}_{}", k + offset)) {
                    let idx = op.add_input(&format!("{name}{k}"), desc());
                    slots.push((idx, given[j].1.clone(), given[j].2));
                    k += 1;
                }
            }
        }
    }
    if let Some(j) = used.iter().position(|u| !u) {
        let (p, _, pos) = &given[j];
        let msg = format!(
            "op type '{}' has no input '{p}' (at this place)",
            line.op_type
        );
        return Err(graph_err(*pos, msg));
    }
    op.meta_mut().ir_inputs = proto
        .inputs
        .iter()
        .map(|s| (Arc::<str>::from(s.name.as_str()), s.kind))
        .collect();
    Ok(slots)
}

/// `count` output ports, named after the prototype's outputs when they fit it.
fn add_outputs(op: &mut OpDesc, count: usize, proto: Option<&OpProto>) -> Result<(), IrError> {
    let desc = || Arc::new(TensorDesc::default());
    let names: Option<Vec<String>> = proto.and_then(|p| {
        let required = p
            .outputs
            .iter()
            .filter(|o| o.kind == IrOutputType::Required)
            .count();
        let dynamic = p.outputs.len() - required;
        if dynamic > 1 || count < required || (dynamic == 0 && count != required) {
            return None;
        }
        let extra = count - required;
        let mut names = Vec::with_capacity(count);
        for o in &p.outputs {
            match o.kind {
                IrOutputType::Required => names.push(o.name.clone()),
                IrOutputType::Dynamic => {
                    names.extend((0..extra).map(|k| format!("{}{k}", o.name)));
                }
            }
        }
        Some(names)
    });
    match names {
        Some(names) => {
            for n in names {
                op.add_output(&n, desc())?;
            }
        }
        None => {
            for _ in 0..count {
                op.add_output_auto(desc())?;
            }
        }
    }
    Ok(())
}
