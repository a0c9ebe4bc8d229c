use std::sync::Arc;

use super::*;
use crate::anchor::{InAnchor, OutAnchor};
use crate::dtype::DataType;
use crate::format::Format;
use crate::op_desc::OpDesc;

fn desc() -> Arc<TensorDesc> {
    Arc::new(TensorDesc::new(&[2, 8], DataType::FLOAT, Format::ND))
}

fn op(name: &str, ty: &str, inputs: usize) -> OpDesc {
    let mut op = OpDesc::new(name, ty);
    for i in 0..inputs {
        op.add_input(&format!("x{i}"), desc());
    }
    op.add_output("y", desc()).unwrap();
    op
}

/// `x -> relu -> exp -> add(x) -> out`, `x -> sig -> add` (no: add takes exp and sig).
fn chain() -> Graph {
    let mut g = Graph::new("g");
    let x = g.add_node(op("x", "Data", 0)).unwrap();
    let relu = g.add_node(op("relu", "Relu", 1)).unwrap();
    let exp = g.add_node(op("exp", "Exp", 1)).unwrap();
    let sig = g.add_node(op("sig", "Sigmoid", 1)).unwrap();
    let add = g.add_node(op("add", "Add", 2)).unwrap();
    let out = g.add_node(op("out", "NetOutput", 1)).unwrap();
    for (s, d, i) in [
        (x, relu, 0),
        (relu, exp, 0),
        (x, sig, 0),
        (exp, add, 0),
        (sig, add, 1),
    ] {
        g.link(OutAnchor::data(s, 0), InAnchor::data(d, i)).unwrap();
    }
    g.link(OutAnchor::data(add, 0), InAnchor::data(out, 0))
        .unwrap();
    g.add_output_node(add, 0).unwrap();
    g
}

fn rename(g: &mut Graph, from: &str, to: &str) {
    let id = g.find(from).unwrap();
    g.rename_node(id, to).unwrap();
}

#[test]
fn identical_graphs_have_no_changes() {
    let d = diff(&chain(), &chain());
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(d.kept.len(), 6);
    assert_eq!((d.old_nodes, d.new_nodes), (6, 6));
}

#[test]
fn renamed_nodes_are_matched_by_structure_forward_and_backward() {
    let mut g = chain();
    // A chain of renamed nodes (matched from its matched input), and a renamed source
    // (matched from its matched consumers).
    rename(&mut g, "relu", "r2");
    rename(&mut g, "exp", "e2");
    rename(&mut g, "x", "input");
    let d = diff(&chain(), &g);
    assert!(d.added.is_empty() && d.removed.is_empty(), "{d:?}");
    let renamed: Vec<(&str, &str)> = d
        .kept
        .iter()
        .filter(|m| m.by == MatchedBy::Structure)
        .map(|m| (m.old.as_str(), m.new.as_str()))
        .collect();
    assert_eq!(renamed, [("x", "input"), ("relu", "r2"), ("exp", "e2")]);
    // The relinks are none: renamed producers are the same producers.
    assert!(d.data_edges.is_empty(), "{:?}", d.data_edges);
    assert!(d.outputs.is_none());
}

#[test]
fn added_removed_retyped_relinked_and_changed_attributes_are_reported() {
    let old = chain();
    let mut g = chain();
    // Fuse relu+exp into one node, retype sig, change an attribute and a descriptor.
    let relu = g.find("relu").unwrap();
    let exp = g.find("exp").unwrap();
    g.erase_node(relu).unwrap();
    g.erase_node(exp).unwrap();
    let fused = g.add_node(op("fused", "AscBackend", 1)).unwrap();
    let (x, add, sig) = (
        g.find("x").unwrap(),
        g.find("add").unwrap(),
        g.find("sig").unwrap(),
    );
    g.link(OutAnchor::data(x, 0), InAnchor::data(fused, 0))
        .unwrap();
    g.link(OutAnchor::data(fused, 0), InAnchor::data(add, 0))
        .unwrap();
    g.link(OutAnchor::control(x), InAnchor::control(add))
        .unwrap();
    g.modify_op(sig, |op| {
        op.set_type("Tanh");
        op.set_attr("mode", AttrValue::Int(3));
        op.port_desc_mut(Side::Output, 0).unwrap().dtype = DataType::FLOAT16;
    })
    .unwrap();
    let d = diff(&old, &g);
    assert_eq!(
        d.added,
        [NodeInfo {
            name: "fused".into(),
            op_type: "AscBackend".into()
        }]
    );
    let removed: Vec<&str> = d.removed.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(removed, ["relu", "exp"]);
    assert_eq!(
        d.retyped,
        [Retyped {
            node: "sig".into(),
            old: "Sigmoid".into(),
            new: "Tanh".into()
        }]
    );
    assert_eq!(
        d.data_edges,
        [DataRelink {
            node: "add".into(),
            index: 0,
            old: Some(("exp".into(), 0)),
            new: Some(("fused".into(), 0)),
        }]
    );
    assert_eq!(
        d.control_edges,
        [ControlChange {
            src: "x".into(),
            dst: "add".into(),
            added: true
        }]
    );
    assert_eq!(
        d.attrs,
        [AttrChange {
            node: "sig".into(),
            key: "mode".into(),
            old: None,
            new: Some("3".into())
        }]
    );
    assert_eq!(d.descs.len(), 1);
    assert_eq!(d.descs[0].side, Side::Output);
    assert_eq!(d.descs[0].old.as_ref().unwrap().dtype, "DT_FLOAT");
    assert_eq!(d.descs[0].new.as_ref().unwrap().dtype, "DT_FLOAT16");
    // Every node of both graphs is kept, added or removed exactly once.
    assert_eq!(d.kept.len() + d.removed.len(), d.old_nodes);
    assert_eq!(d.kept.len() + d.added.len(), d.new_nodes);
}

#[test]
fn ties_follow_the_old_graphs_order() {
    // Two identical renamed branches: the first of `new` takes the first of `old`.
    let build = |names: [&str; 2]| {
        let mut g = Graph::new("g");
        let x = g.add_node(op("x", "Data", 0)).unwrap();
        for n in names {
            let r = g.add_node(op(n, "Relu", 1)).unwrap();
            g.link(OutAnchor::data(x, 0), InAnchor::data(r, 0)).unwrap();
        }
        g
    };
    let d = diff(&build(["a", "b"]), &build(["p", "q"]));
    let pairs: Vec<(&str, &str)> = d
        .kept
        .iter()
        .map(|m| (m.old.as_str(), m.new.as_str()))
        .collect();
    assert_eq!(pairs, [("x", "x"), ("a", "p"), ("b", "q")]);
}

#[test]
fn a_long_renamed_chain_is_matched_in_linear_time() {
    let n = 20_000;
    let build = |prefix: &str| {
        let mut g = Graph::new("g");
        let mut prev = g.add_node(op("x", "Data", 0)).unwrap();
        for i in 0..n {
            let id = g.add_node(op(&format!("{prefix}{i}"), "Relu", 1)).unwrap();
            g.link(OutAnchor::data(prev, 0), InAnchor::data(id, 0))
                .unwrap();
            prev = id;
        }
        g
    };
    let (a, b) = (build("a"), build("b"));
    let t = std::time::Instant::now();
    let d = diff(&a, &b);
    assert!(d.added.is_empty() && d.removed.is_empty());
    assert_eq!(d.kept.len(), n + 1);
    assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
}

#[test]
fn removed_control_links_and_changed_graph_outputs_are_reported() {
    let mut old = chain();
    let (x, add) = (old.find("x").unwrap(), old.find("add").unwrap());
    old.link(OutAnchor::control(x), InAnchor::control(add))
        .unwrap();
    let mut new = chain();
    let sig = new.find("sig").unwrap();
    new.add_output_node(sig, 0).unwrap();
    let d = diff(&old, &new);
    assert_eq!(
        d.control_edges,
        [ControlChange {
            src: "x".into(),
            dst: "add".into(),
            added: false
        }]
    );
    assert_eq!(
        d.outputs,
        Some((
            vec!["add:0".to_string()],
            vec!["add:0".into(), "sig:0".into()]
        ))
    );
    assert!(!d.is_empty());
}
