//! A deterministic, readable text dump of a graph: for tests ("identical before and after a
//! failed edit"), debugging and golden files.

use std::fmt::Write;

use crate::anchor::{InAnchor, OutAnchor};
use crate::attr::{AttrMap, AttrValue};
use crate::graph::Graph;
use crate::tensor::TensorDesc;
use crate::NodeId;

fn desc_text(d: &TensorDesc) -> String {
    let mut s = format!("{}{:?}", d.dtype.name(), d.shape.as_slice());
    if d.format != crate::format::Format::ND.value() {
        let _ = write!(s, " {}", crate::format::bits::serial_string(d.format));
    }
    if let Some(name) = &d.name {
        let _ = write!(s, " name={name}");
    }
    if let Some(attrs) = &d.attrs {
        if !attrs.is_empty() {
            let _ = write!(s, " {}", attrs_text(attrs));
        }
    }
    s
}

pub(crate) fn value_text(v: &AttrValue) -> String {
    match v {
        AttrValue::String(s) => format!("{s:?}"),
        AttrValue::Bytes(b) => format!("bytes[{}]", b.len()),
        AttrValue::Tensor(t) => format!("tensor({}, {} bytes)", desc_text(&t.desc), t.data.len()),
        AttrValue::TensorDesc(d) => format!("desc({})", desc_text(d)),
        AttrValue::Graph(g) => format!("graph('{}', {} nodes)", g.0.name(), g.0.len()),
        AttrValue::NamedAttrs(n) => format!("named('{}', {})", n.name, attrs_text(&n.attrs)),
        AttrValue::DataType(d) => d.name().to_string(),
        other => format!("{other:?}")
            .split_once('(')
            .map(|(_, rest)| rest.trim_end_matches(')').to_string())
            .unwrap_or_default(),
    }
}

fn attrs_text(attrs: &AttrMap) -> String {
    let parts: Vec<String> = attrs
        .iter()
        .map(|(k, v)| format!("{k}:{}={}", v.kind().name(), value_text(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

impl Graph {
    fn out_name(&self, a: OutAnchor) -> String {
        self.anchor_name(a.node, a.is_control(), a.index)
    }

    fn in_name(&self, a: InAnchor) -> String {
        self.anchor_name(a.node, a.is_control(), a.index)
    }

    /// `node:index`, or `node:ctrl` for a control anchor.
    fn anchor_name(&self, node: NodeId, control: bool, index: impl std::fmt::Display) -> String {
        let name = self.node(node).map(|n| n.name()).unwrap_or_default();
        if control {
            format!("{name}:ctrl")
        } else {
            format!("{name}:{index}")
        }
    }

    /// The text dump: the graph line, then one block per node in order (op, ids, ports with
    /// descs and peers, attributes), then inputs, outputs and subgraphs.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "graph {} ({} nodes)", self.name(), self.len());
        if !self.attrs.is_empty() {
            let _ = writeln!(s, "  attrs {}", attrs_text(&self.attrs));
        }
        for id in self.node_ids() {
            let n = self.node(id).expect("ids from the order are live");
            let op = n.op();
            let _ = writeln!(
                s,
                "  node {} : {} id={} stream={}",
                op.name(),
                op.op_type(),
                op.id,
                op.stream_id
            );
            for (i, port) in op.inputs().iter().enumerate() {
                let peer = n
                    .in_data_peer(i)
                    .map_or("-".to_string(), |p| self.out_name(p));
                let _ = writeln!(
                    s,
                    "    in  {i} {} {} <- {peer}",
                    port.name,
                    desc_text(&port.desc)
                );
            }
            for (i, port) in op.outputs().iter().enumerate() {
                let peers: Vec<String> = n
                    .out_data_peers(i)
                    .iter()
                    .map(|&p| self.in_name(p))
                    .collect();
                let _ = writeln!(
                    s,
                    "    out {i} {} {} -> [{}]",
                    port.name,
                    desc_text(&port.desc),
                    peers.join(", ")
                );
            }
            if !n.in_control_peers().is_empty() {
                let peers: Vec<String> = n
                    .in_control_peers()
                    .iter()
                    .map(|&p| self.out_name(p))
                    .collect();
                let _ = writeln!(s, "    ctrl in <- [{}]", peers.join(", "));
            }
            if !n.out_control_peers().is_empty() {
                let peers: Vec<String> = n
                    .out_control_peers()
                    .iter()
                    .map(|&p| self.in_name(p))
                    .collect();
                let _ = writeln!(s, "    ctrl out -> [{}]", peers.join(", "));
            }
            if !op.attrs.is_empty() {
                let _ = writeln!(s, "    attrs {}", attrs_text(&op.attrs));
            }
            let subs = op.subgraph_instance_names();
            if !subs.is_empty() {
                let _ = writeln!(s, "    subgraphs {subs:?}");
            }
        }
        let inputs: Vec<String> = self
            .inputs()
            .iter()
            .filter_map(|&id| self.node(id).ok().map(|n| n.name().to_string()))
            .collect();
        let _ = writeln!(s, "  inputs [{}]", inputs.join(", "));
        let outputs: Vec<String> = self
            .outputs()
            .iter()
            .map(|&(id, i)| self.out_name(OutAnchor { node: id, index: i }))
            .collect();
        let _ = writeln!(s, "  outputs [{}]", outputs.join(", "));
        for sub in &self.subgraphs {
            let parent = sub
                .parent
                .as_ref()
                .map_or(String::new(), |p| p.graph.clone());
            let _ = writeln!(s, "subgraph of {parent}:");
            s.push_str(&sub.dump());
        }
        s
    }
}
