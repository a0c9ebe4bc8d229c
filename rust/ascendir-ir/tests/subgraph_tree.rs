//! Subgraphs: registration on the root, slots, parent links, pre-order walk, whole-model
//! sorting and ids, recursive removal, and the verifier.

mod common;

use ascendir_ir::subgraph::ATTR_PARENT_NODE_INDEX;
use ascendir_ir::{AttrValue, Graph, IrError, TopoMode, TopoOptions};
use common::*;

/// root: x(Data) -> if(If) -> out ; then/else branches with Data -> op -> NetOutput.
fn branch(name: &str, op_name: &str) -> Graph {
    let mut b = Graph::new(name);
    let d = add(&mut b, &format!("{name}_in"), "Data", 1, 1);
    let o = add(&mut b, op_name, "Relu", 1, 1);
    let n = add(&mut b, &format!("{name}_out"), "NetOutput", 1, 0);
    data(&mut b, d, 0, o, 0);
    data(&mut b, o, 0, n, 0);
    b
}

fn model() -> Graph {
    let mut g = Graph::new("root");
    let x = add(&mut g, "x", "Data", 1, 1);
    let cond = add(&mut g, "if", "If", 1, 1);
    let out = add(&mut g, "out", "Relu", 1, 1);
    data(&mut g, x, 0, cond, 0);
    data(&mut g, cond, 0, out, 0);
    g.add_subgraph(None, cond, "then_branch", false, branch("then", "t_op"))
        .unwrap();
    g.add_subgraph(None, cond, "else_branch", false, branch("else", "e_op"))
        .unwrap();
    g
}

#[test]
fn registration_slots_and_parent_links() {
    let g = model();
    let cond = g.find("if").unwrap();
    let op = g.op(cond).unwrap();
    assert_eq!(op.subgraph_instance_names(), &s(&["then", "else"])[..]);
    let then = g.subgraph("then").unwrap();
    let link = then.parent.as_ref().unwrap();
    assert_eq!(link.graph, "root");
    assert_eq!(link.node, cond);
    // Data and NetOutput got their parent indexes.
    let d = then.find("then_in").unwrap();
    assert_eq!(
        then.op(d).unwrap().attr(ATTR_PARENT_NODE_INDEX),
        Some(&AttrValue::Int(0))
    );
    let n = then.find("then_out").unwrap();
    let attrs = then
        .op(n)
        .unwrap()
        .input_desc(0)
        .unwrap()
        .attrs
        .clone()
        .unwrap();
    assert_eq!(attrs.get(ATTR_PARENT_NODE_INDEX), Some(&AttrValue::Int(0)));
    assert!(g.validate().is_ok(), "{:?}", g.problems());
}

#[test]
fn bad_registrations_change_nothing() {
    let mut g = model();
    let cond = g.find("if").unwrap();
    let before = g.dump();
    // Name taken.
    assert!(matches!(
        g.add_subgraph(None, cond, "x", false, Graph::new("then")),
        Err(IrError::Duplicate(_))
    ));
    // Slot already holds a graph.
    assert!(g
        .add_subgraph(None, cond, "then_branch", false, Graph::new("then2"))
        .is_err());
    assert_eq!(g.dump(), before);
    // Parent node no longer in the owner graph.
    let other = g.subgraph_index("then").unwrap();
    let tmp = add(&mut g.subgraphs[other], "tmp", "NoOp", 0, 0);
    g.subgraphs[other].erase_node(tmp).unwrap();
    let before = g.dump();
    assert!(matches!(
        g.add_subgraph(Some(other), tmp, "s", false, Graph::new("z")),
        Err(IrError::StaleHandle { .. })
    ));
    // Unknown owner graph; a subgraph that is already a subgraph.
    assert!(g
        .add_subgraph(Some(99), cond, "s", false, Graph::new("z"))
        .is_err());
    let mut sub = Graph::new("z");
    sub.parent = g.subgraph("then").unwrap().parent.clone();
    assert!(g.add_subgraph(None, cond, "s", false, sub).is_err());
    assert_eq!(g.dump(), before);
}

#[test]
fn dynamic_slots_nesting_and_walk() {
    let mut g = model();
    let out = g.find("out").unwrap();
    // Dynamic slots on `out`: branches0, branches1.
    assert_eq!(
        g.add_subgraph(None, out, "branches", true, Graph::new("b0"))
            .unwrap(),
        "branches0"
    );
    assert_eq!(
        g.add_subgraph(None, out, "branches", true, Graph::new("b1"))
            .unwrap(),
        "branches1"
    );
    let b0 = g.subgraph_index("b0").unwrap();
    let k = add(g.subgraphs.get_mut(b0).unwrap(), "k", "NoOp", 0, 0);
    // A subgraph nested in b0, registered on the root.
    let mut nested = Graph::new("deep");
    add(&mut nested, "deep_op", "NoOp", 0, 0);
    g.add_subgraph(Some(b0), k, "body", false, nested).unwrap();
    assert_eq!(
        g.subgraph("deep").unwrap().parent.as_ref().unwrap().graph,
        "b0"
    );
    let b1 = g.subgraph_index("b1").unwrap();
    add(&mut g.subgraphs[b1], "j", "NoOp", 0, 0);
    // Pre-order: each node followed by its subgraphs' nodes.
    let walk: Vec<String> = g
        .all_nodes()
        .iter()
        .map(|&(gr, id)| {
            g.tree_graph(gr)
                .unwrap()
                .node(id)
                .unwrap()
                .name()
                .to_string()
        })
        .collect();
    assert_eq!(
        walk,
        s(&[
            "x", "if", "then_in", "t_op", "then_out", "else_in", "e_op", "else_out", "out", "k",
            "deep_op", "j"
        ])
    );
    assert!(g.validate().is_ok(), "{:?}", g.problems());
    // Whole-model sort: ids over the walk; subgraph list in GE's walk order.
    g.topo_sort_all(&TopoOptions::new(TopoMode::Dfs)).unwrap();
    let ids: Vec<i64> = g
        .all_nodes()
        .iter()
        .map(|&(gr, id)| g.tree_graph(gr).unwrap().node(id).unwrap().op().id)
        .collect();
    assert_eq!(ids, (0..12).collect::<Vec<i64>>());
    let order: Vec<&str> = g.subgraphs.iter().map(|s| s.name()).collect();
    // GE lists the subgraphs of one node in reverse slot order as it meets them.
    assert_eq!(order, vec!["else", "then", "b1", "b0", "deep"]);
    // Recursive removal clears the slot and drops the nested graph.
    let removed = g.remove_subgraph("b0").unwrap();
    assert_eq!(
        removed.iter().map(|r| r.name()).collect::<Vec<_>>(),
        vec!["b0", "deep"]
    );
    assert_eq!(
        g.op(out).unwrap().subgraph_instance_names(),
        &s(&["", "b1"])[..]
    );
    assert!(g.validate().is_ok(), "{:?}", g.problems());
}

#[test]
fn whole_model_sort_is_atomic_on_a_cycle_in_a_subgraph() {
    let mut g = model();
    let k = g.subgraph_index("else").unwrap();
    let sub = &mut g.subgraphs[k];
    let e = sub.find("e_op").unwrap();
    ctrl(sub, e, e);
    let before = g.dump();
    assert!(matches!(
        g.topo_sort_all(&TopoOptions::default()),
        Err(IrError::Cycle { .. })
    ));
    assert_eq!(g.dump(), before);
}

#[test]
fn verifier_lists_every_problem() {
    let mut g = model();
    // A dangling instance name, a broken parent link and a cycle.
    let out = g.find("out").unwrap();
    g.modify_op(out, |op| {
        op.add_subgraph_name("ghost").unwrap();
        op.set_subgraph_instance_name(0, "nowhere").unwrap();
    })
    .unwrap();
    let k = g.subgraph_index("then").unwrap();
    g.subgraphs[k].parent.as_mut().unwrap().graph = "missing".into();
    let x = g.find("x").unwrap();
    let o = g.find("out").unwrap();
    ctrl(&mut g, o, x);
    let k = g.subgraph_index("else").unwrap();
    let d = g.subgraphs[k].find("else_in").unwrap();
    g.subgraphs[k]
        .modify_op(d, |op| {
            op.set_attr(ATTR_PARENT_NODE_INDEX, AttrValue::Int(5))
        })
        .unwrap();
    match g.validate() {
        Err(IrError::Validation { problems, .. }) => {
            let text = problems.join("\n");
            assert!(text.contains("nowhere"), "{text}");
            assert!(text.contains("missing"), "{text}");
            assert!(text.contains("cycle"), "{text}");
            assert!(text.contains("_parent_node_index 5"), "{text}");
            assert!(problems.len() >= 4);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn copy_is_deep() {
    let g = model();
    let mut h = g.clone();
    let cond = h.find("if").unwrap();
    h.remove_node(cond).unwrap();
    let k = h.subgraph_index("then").unwrap();
    let t = h.subgraphs[k].find("t_op").unwrap();
    h.subgraphs[k].remove_node(t).unwrap();
    assert!(g.find("if").is_some());
    assert!(g.subgraph("then").unwrap().find("t_op").is_some());
}
