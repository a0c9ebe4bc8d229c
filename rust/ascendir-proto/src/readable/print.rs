//! The printer: a graph and its subgraphs as GE's readable dump.

use std::collections::HashSet;
use std::fmt::Write;

use ascendir_ir::registry::{self, OpProto};
use ascendir_ir::{AttrKind, AttrValue, Graph, IrInputType, NodeData, OpDesc, SubgraphType};
use rustc_hash::FxHashMap;

use super::value::attr_text;

/// The type of GE's graph output node, shown as the `return (...)` line.
const NET_OUTPUT: &str = "NetOutput";
/// The op whose dynamic input numbering starts at 1 (its input 0 is `start`).
const FOR: &str = "For";

/// `graph` as GE's readable dump (`ge_readable*.txt`): the graph, then every subgraph reached
/// from it, depth first, each once.
pub fn print_readable(graph: &Graph) -> String {
    print_from(graph, graph)
}

/// The readable dump of `root`'s subgraph `name` (and the subgraphs below it), `None` when
/// `root` has no subgraph of that name.
pub fn print_readable_from(root: &Graph, name: &str) -> Option<String> {
    root.subgraph(name).map(|start| print_from(root, start))
}

/// The dump starting at `graph`, subgraphs looked up on `root`.
fn print_from(root: &Graph, graph: &Graph) -> String {
    let mut out = String::new();
    let mut visited: HashSet<String> = HashSet::new();
    let mut stack: Vec<&Graph> = vec![graph];
    let mut first = true;
    while let Some(current) = stack.pop() {
        if !first {
            out.push('\n');
        }
        first = false;
        let subs = print_one(&mut out, root, current, &mut visited);
        stack.extend(subs.into_iter().rev());
    }
    out
}

/// The names each node's outputs go by: the node's name for a node with at most one output,
/// else `ret`, `ret_1`, ... numbered over the graph in node order.
fn output_names(g: &Graph) -> FxHashMap<&str, Vec<String>> {
    let mut map = FxHashMap::default();
    let mut next = 0usize;
    for id in g.node_ids() {
        let Ok(n) = g.node(id) else { continue };
        if n.op_type() == NET_OUTPUT {
            continue;
        }
        let names = if n.num_out_data() <= 1 {
            vec![n.name().to_string()]
        } else {
            (0..n.num_out_data())
                .map(|_| {
                    let name = if next == 0 {
                        "ret".to_string()
                    } else {
                        format!("ret_{next}")
                    };
                    next += 1;
                    name
                })
                .collect()
        };
        map.insert(n.name(), names);
    }
    map
}

/// One graph's section; returns the subgraphs its nodes name that were not shown yet.
fn print_one<'g>(
    out: &mut String,
    root: &'g Graph,
    g: &'g Graph,
    visited: &mut HashSet<String>,
) -> Vec<&'g Graph> {
    let names = output_names(g);
    let _ = writeln!(out, "graph(\"{}\"):", g.name());
    let mut ret_line = String::new();
    let mut subs = Vec::new();
    for id in g.node_ids() {
        let Ok(n) = g.node(id) else { continue };
        if n.op_type() == NET_OUTPUT {
            ret_line.push_str(&graph_output(g, n, &names));
            continue;
        }
        print_node(out, root, g, n, &names, &mut subs, visited);
    }
    if !ret_line.is_empty() {
        let _ = write!(out, "\n  {ret_line}\n");
    }
    subs
}

/// The text naming the value feeding input `index` of `n`, empty when unlinked.
fn input_instance<'a>(
    g: &Graph,
    n: &NodeData,
    index: usize,
    names: &'a FxHashMap<&str, Vec<String>>,
) -> &'a str {
    let Some(peer) = n.in_data_peer(index) else {
        return "";
    };
    let Ok(src) = g.node(peer.node) else {
        return "";
    };
    let slot = usize::try_from(peer.index).unwrap_or(usize::MAX);
    names
        .get(src.name())
        .and_then(|v| v.get(slot))
        .map_or("", String::as_str)
}

/// The IR inputs of `op`: its own record, else its registered prototype's.
fn ir_inputs(op: &OpDesc, proto: Option<&OpProto>) -> Vec<(String, IrInputType)> {
    match op.meta() {
        Some(m) if !m.ir_inputs.is_empty() => m
            .ir_inputs
            .iter()
            .map(|(n, k)| (n.to_string(), *k))
            .collect(),
        _ => proto.map_or_else(Vec::new, |p| {
            p.inputs.iter().map(|i| (i.name.clone(), i.kind)).collect()
        }),
    }
}

/// `(first port, count)` of each IR input, or `None` when a required input has no port.
fn ir_input_ranges(op: &OpDesc, ir: &[(String, IrInputType)]) -> Option<Vec<(usize, usize)>> {
    let mut ranges = Vec::with_capacity(ir.len());
    for (name, kind) in ir {
        match kind {
            IrInputType::Dynamic => {
                let idx: Vec<usize> = (0..)
                    .map_while(|k| op.input_index(&format!("{name}{k}")))
                    .collect();
                let contiguous = idx.windows(2).all(|w| w[1] == w[0] + 1);
                if !contiguous {
                    return None;
                }
                ranges.push((idx.first().copied().unwrap_or(0), idx.len()));
            }
            IrInputType::Required => ranges.push((op.input_index(name)?, 1)),
            IrInputType::Optional => {
                ranges.push(op.input_index(name).map_or((0, 0), |i| (i, 1)));
            }
        }
    }
    Some(ranges)
}

/// `x1=%a, x2=%b` with IR input names; empty when the IR names do not map onto the ports.
fn inputs_with_ir(
    g: &Graph,
    n: &NodeData,
    proto: Option<&OpProto>,
    names: &FxHashMap<&str, Vec<String>>,
) -> Vec<String> {
    let op = n.op();
    let ir = ir_inputs(op, proto);
    let Some(ranges) = ir_input_ranges(op, &ir) else {
        return Vec::new();
    };
    let mut parts = Vec::new();
    for ((name, kind), (start, count)) in ir.iter().zip(ranges) {
        for k in 0..count {
            let inst = input_instance(g, n, start + k, names);
            if inst.is_empty() {
                continue;
            }
            let param = if *kind == IrInputType::Dynamic {
                let offset = usize::from(op.op_type() == FOR);
                format!("{name}_{}", k + offset)
            } else {
                name.clone()
            };
            parts.push(format!("{param}=%{inst}"));
        }
    }
    parts
}

/// The `inputs = (...)` text of `n`, empty when no input is linked.
fn inputs_text(
    g: &Graph,
    n: &NodeData,
    proto: Option<&OpProto>,
    names: &FxHashMap<&str, Vec<String>>,
) -> String {
    if n.in_data_peers().all(|p| p.is_none()) {
        return String::new();
    }
    let mut parts = inputs_with_ir(g, n, proto, names);
    if parts.is_empty() {
        parts = (0..n.num_in_data())
            .filter_map(|i| {
                let inst = input_instance(g, n, i, names);
                (!inst.is_empty()).then(|| format!("_input_{i}=%{inst}"))
            })
            .collect();
    }
    format!("inputs = ({})", parts.join(", "))
}

/// The subgraph entries `slot: %instance`, collecting the subgraphs not shown yet.
fn subgraph_attrs<'g>(
    root: &'g Graph,
    op: &OpDesc,
    subs: &mut Vec<&'g Graph>,
    visited: &mut HashSet<String>,
) -> Vec<String> {
    let instances = op.subgraph_instance_names();
    if instances.is_empty() {
        return Vec::new();
    }
    let ir_names: Vec<(String, SubgraphType)> = op
        .meta()
        .map_or_else(Vec::new, |m| m.subgraph_ir_names.clone());
    let mut parts = Vec::new();
    let mut collect = |inst: &str, subs: &mut Vec<&'g Graph>| {
        if visited.insert(inst.to_string()) {
            if let Some(sub) = root.subgraph(inst) {
                subs.push(sub);
            }
        }
    };
    for ((ir_name, _), inst) in ir_names.iter().zip(instances) {
        if !inst.is_empty() {
            collect(inst, subs);
            parts.push(format!("{ir_name}: %{inst}"));
        }
    }
    if parts.is_empty() {
        let named = instances.iter().filter(|i| !i.is_empty());
        for (k, inst) in named.enumerate() {
            collect(inst, subs);
            parts.push(format!("_graph_{k}: %{inst}"));
        }
    }
    parts
}

/// The IR attributes of `op` that are set and shown, as `name: value`.
fn ir_attrs(op: &OpDesc, proto: Option<&OpProto>) -> Vec<String> {
    let names: Vec<&str> = match op.meta() {
        Some(m) if !m.ir_attr_names.is_empty() => {
            m.ir_attr_names.iter().map(String::as_str).collect()
        }
        _ => proto.map_or_else(Vec::new, |p| {
            p.attrs.iter().map(|a| a.name.as_str()).collect()
        }),
    };
    let mut parts = Vec::new();
    for name in names {
        let Some(value) = op.attr(name) else { continue };
        let declared = proto.and_then(|p| p.attr(name)).map(|a| a.kind);
        let text = match (declared, value) {
            // A data-type attribute held as its enum number shows the type's name.
            (Some(AttrKind::DataType), AttrValue::Int(v)) => ascendir_ir::DataType::from_ge(*v)
                .and_then(|dt| attr_text(&AttrValue::DataType(dt))),
            _ => attr_text(value),
        };
        if let Some(text) = text {
            if text != "\"\"" {
                parts.push(format!("{name}: {text}"));
            }
        }
    }
    parts
}

/// One node's line, then a `get_element` line per output of a node with several.
fn print_node<'g>(
    out: &mut String,
    root: &'g Graph,
    g: &'g Graph,
    n: &NodeData,
    names: &FxHashMap<&str, Vec<String>>,
    subs: &mut Vec<&'g Graph>,
    visited: &mut HashSet<String>,
) {
    let op = n.op();
    let proto = registry::lookup(op.op_type());
    let proto = proto.as_deref();
    let inputs = inputs_text(g, n, proto, names);
    let mut attrs = subgraph_attrs(root, op, subs, visited);
    attrs.extend(ir_attrs(op, proto));
    let _ = write!(
        out,
        "  %{} : [#users={}] = Node[type={}] (",
        n.name(),
        n.num_out_data(),
        op.op_type()
    );
    out.push_str(&inputs);
    if !attrs.is_empty() {
        if !inputs.is_empty() {
            out.push_str(", ");
        }
        let _ = write!(out, "attrs = {{{}}}", attrs.join(", "));
    }
    out.push_str(")\n");
    if n.num_out_data() > 1 {
        let rets = names.get(n.name()).map_or(&[][..], Vec::as_slice);
        for (i, ret) in rets.iter().enumerate() {
            let _ = writeln!(
                out,
                "  %{ret} : [#users={}] = get_element[node=%{}]({i})",
                n.out_data_peers(i).len(),
                n.name()
            );
        }
    }
}

/// The `return (...)` text of a NetOutput node, empty when none of its inputs is linked.
fn graph_output(g: &Graph, n: &NodeData, names: &FxHashMap<&str, Vec<String>>) -> String {
    let linked = n.in_data_peers().filter(Option::is_some).count();
    if linked == 0 {
        return String::new();
    }
    let mut parts = Vec::new();
    for i in 0..n.num_in_data() {
        let inst = input_instance(g, n, i, names);
        if inst.is_empty() {
            continue;
        }
        if linked > 1 {
            parts.push(format!("output_{}=%{inst}", parts.len()));
        } else {
            parts.push(format!("%{inst}"));
        }
    }
    format!("return ({})", parts.join(", "))
}
