//! Unit tests of the graph core: names, order, links, ports and NetOutput.

use std::sync::Arc;

use super::*;
use crate::tensor::TensorDesc;

#[test]
fn shared_strings_are_the_ones_nodes_keep() {
    let mut table = Interner::default();
    let relu = table.intern("Relu");
    let mut g = Graph::new("g");
    g.share_strings(&table);
    let a = g
        .add_node(OpDesc::with_type_sym("a", relu.clone()))
        .unwrap();
    let b = g.add_node(OpDesc::new("b", "Relu")).unwrap();
    for id in [a, b] {
        assert!(Sym::ptr_eq(g.op(id).unwrap().op_type_sym(), &relu));
    }
    assert_eq!(g.interned_strings(), 1);
    // A string the graph already has keeps the graph's copy.
    let mut other = Interner::default();
    let copy = other.intern("Relu");
    g.share_strings(&other);
    let c = g.add_node(OpDesc::with_type_sym("c", copy)).unwrap();
    assert!(Sym::ptr_eq(g.op(c).unwrap().op_type_sym(), &relu));
}

#[test]
fn one_sided_links_are_found_from_either_side() {
    let mut g = Graph::new("g");
    let a = g.add_node(op("a", 0, 1)).unwrap();
    let b = g.add_node(op("b", 2, 0)).unwrap();
    g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
    g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap();
    g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap(); // GE keeps duplicates
    assert!(
        g.check_invariants().is_empty(),
        "{:?}",
        g.check_invariants()
    );
    // The consumer side forgets one of the two control links.
    let mut c = g.clone();
    c.nodes[b].in_ctrl.pop();
    let p = c.check_invariants();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("one-sided"));
    // The producer side forgets the data link.
    let mut c = g.clone();
    c.nodes[a].out_data[0].clear();
    let p = c.check_invariants();
    assert_eq!(p.len(), 1, "{p:?}");
    // The consumer points at a link the producer does not list.
    let mut c = g.clone();
    c.nodes[b].in_data[1] = Some(OutAnchor::data(a, 0));
    let p = c.check_invariants();
    assert_eq!(p.len(), 1, "{p:?}");
}

fn op(name: &str, inputs: usize, outputs: usize) -> OpDesc {
    let d = Arc::new(TensorDesc::default());
    let mut op = OpDesc::new(name, "Op");
    for i in 0..inputs {
        op.add_input(&format!("x{i}"), d.clone());
    }
    for i in 0..outputs {
        op.add_output(&format!("y{i}"), d.clone()).unwrap();
    }
    op
}

#[test]
fn hot_records_stay_small() {
    // Pin the size of the node record so that growth is a conscious decision.
    assert!(
        std::mem::size_of::<NodeData>() <= 248,
        "{}",
        std::mem::size_of::<NodeData>()
    );
    assert_eq!(std::mem::size_of::<Sym>(), 8);
    assert_eq!(std::mem::size_of::<InAnchor>(), 12);
    assert_eq!(std::mem::size_of::<Option<NodeId>>(), 8);
}

#[test]
fn add_node_linked_is_all_or_nothing() {
    let mut g = Graph::new("g");
    let a = g.add_node(op("a", 0, 1)).unwrap();
    let b = g
        .add_node_linked(op("b", 2, 1), &[Some(OutAnchor::data(a, 0)), None])
        .unwrap();
    assert_eq!(g.in_peer(InAnchor::data(b, 0)), Some(OutAnchor::data(a, 0)));
    let before = g.dump();
    // Output 5 of `a` does not exist: the new node must not stay behind.
    let err = g.add_node_linked(op("c", 1, 1), &[Some(OutAnchor::data(a, 5))]);
    assert!(err.is_err());
    assert_eq!(g.dump(), before);
    assert!(g.find("c").is_none());
}

#[test]
fn names_are_unique_and_indexed() {
    let mut g = Graph::new("g");
    let a = g.add_node(op("a", 0, 1)).unwrap();
    assert!(matches!(
        g.add_node(op("a", 0, 1)),
        Err(IrError::Duplicate(_))
    ));
    assert!(g.add_node(op("", 0, 1)).is_err());
    assert_eq!(g.find("a"), Some(a));
    g.rename_node(a, "b").unwrap();
    assert_eq!(g.find("a"), None);
    assert_eq!(g.find("b"), Some(a));
    g.erase_node(a).unwrap();
    assert_eq!(g.find("b"), None);
    assert!(g.node(a).is_err());
    let c = g.add_node(op("c", 0, 1)).unwrap();
    assert!(g.node(a).is_err(), "the reused slot has a new generation");
    assert!(g.node(c).is_ok());
}

#[test]
fn order_insertions_follow_ge() {
    let mut g = Graph::new("g");
    let mut data = op("data", 0, 1);
    data.set_type("Data");
    let d = g.add_node(data).unwrap();
    let x = g.add_node(op("x", 0, 1)).unwrap();
    let front = g.add_node_front(op("front", 0, 0)).unwrap();
    let after = g.insert_node_after(d, op("after", 0, 0)).unwrap();
    let before = g.insert_node_before(x, op("before", 0, 0)).unwrap();
    let names: Vec<&str> = g.node_ids().map(|id| g.op(id).unwrap().name()).collect();
    assert_eq!(names, ["data", "after", "front", "before", "x"]);
    assert_eq!(g.op(front).unwrap().id, 2);
    assert_eq!(g.op(after).unwrap().id, g.op(d).unwrap().id);
    assert_eq!(g.op(before).unwrap().id, g.op(x).unwrap().id);
    assert_eq!(g.inputs(), &[d]);
    let order: Vec<NodeId> = g.node_ids().collect();
    let reversed: Vec<NodeId> = order.iter().rev().copied().collect();
    g.set_order(&reversed).unwrap();
    assert_eq!(g.node_ids().collect::<Vec<_>>(), reversed);
    assert!(g.set_order(&order[..2]).is_err());
    assert!(g
        .set_order(&[order[0], order[0], order[1], order[2], order[3]])
        .is_err());
    assert!(g.check_invariants().is_empty());
}

#[test]
fn links_follow_the_anchor_rules() {
    let mut g = Graph::new("g");
    let a = g.add_node(op("a", 1, 1)).unwrap();
    let b = g.add_node(op("b", 2, 1)).unwrap();
    g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
    assert!(matches!(
        g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)),
        Err(IrError::Link(_))
    ));
    assert!(matches!(
        g.link(OutAnchor::data(a, 3), InAnchor::data(b, 1)),
        Err(IrError::AnchorOutOfRange { .. })
    ));
    g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap();
    g.link(OutAnchor::control(a), InAnchor::control(b)).unwrap();
    g.link(OutAnchor::data(a, 0), InAnchor::control(b)).unwrap();
    g.link(OutAnchor::control(b), InAnchor::data(a, 0)).unwrap();
    assert_eq!(g.in_control_nodes(b).unwrap(), vec![a, a, a]);
    assert_eq!(g.in_nodes(b).unwrap(), vec![a, a, a]);
    assert_eq!(g.in_data_nodes(a).unwrap(), Vec::<NodeId>::new());
    assert_eq!(g.num_links(), 5);
    g.unlink_all(Anchor::In(InAnchor::control(b))).unwrap();
    assert_eq!(g.num_links(), 2);
    assert!(g.check_invariants().is_empty());
}

#[test]
fn inserted_ports_keep_links() {
    let mut g = Graph::new("g");
    let a = g.add_node(op("a", 0, 2)).unwrap();
    let b = g.add_node(op("b", 2, 0)).unwrap();
    g.link(OutAnchor::data(a, 1), InAnchor::data(b, 1)).unwrap();
    g.insert_ports(
        b,
        Side::Input,
        0,
        &[("p".into(), Arc::new(TensorDesc::default()))],
    )
    .unwrap();
    assert_eq!(g.in_peer(InAnchor::data(b, 2)), Some(OutAnchor::data(a, 1)));
    g.insert_ports(
        a,
        Side::Output,
        1,
        &[("q".into(), Arc::new(TensorDesc::default()))],
    )
    .unwrap();
    assert_eq!(g.in_peer(InAnchor::data(b, 2)), Some(OutAnchor::data(a, 2)));
    assert!(g.check_invariants().is_empty());
}

#[test]
fn net_output_is_created_and_rewired() {
    let mut g = Graph::new("g");
    let a = g.add_node(op("a", 0, 2)).unwrap();
    let t = g.add_node(op("t", 0, 0)).unwrap();
    let net = g.set_outputs(&[(a, 1), (a, 0)], &[t]).unwrap().unwrap();
    assert_eq!(g.op(net).unwrap().name(), "Node_Output");
    assert_eq!(
        g.in_peer(InAnchor::data(net, 0)),
        Some(OutAnchor::data(a, 1))
    );
    assert_eq!(g.in_control_nodes(net).unwrap(), vec![t]);
    let again = g.set_outputs(&[(a, 0)], &[]).unwrap().unwrap();
    assert_eq!(again, net);
    assert_eq!(g.op(net).unwrap().num_inputs(), 1);
    assert!(g.set_outputs(&[(a, 5)], &[]).is_err());
    assert!(g.check_invariants().is_empty());
}

fn names_of(g: &Graph, ids: &[NodeId]) -> Vec<String> {
    ids.iter()
        .map(|&id| g.op(id).unwrap().name().to_string())
        .collect()
}

#[test]
fn insertion_points_place_nodes_in_creation_order() {
    let mut g = Graph::new("g");
    let a = g.add_node(OpDesc::new("a", "Relu")).unwrap();
    let b = g.add_node(OpDesc::new("b", "Relu")).unwrap();
    assert_eq!(
        g.set_insertion_point(Some(InsertPoint::Before(b))).unwrap(),
        None
    );
    g.add_node(OpDesc::new("c", "Exp")).unwrap();
    g.add_node(OpDesc::new("d", "Exp")).unwrap();
    let prev = g.set_insertion_point(Some(InsertPoint::After(a))).unwrap();
    assert_eq!(prev, Some(InsertPoint::Before(b)));
    g.add_node(OpDesc::new("e", "Exp")).unwrap();
    g.add_node(OpDesc::new("f", "Exp")).unwrap();
    g.set_insertion_point(None).unwrap();
    g.add_node(OpDesc::new("z", "Exp")).unwrap();
    let order: Vec<NodeId> = g.node_ids().collect();
    assert_eq!(names_of(&g, &order), ["a", "e", "f", "c", "d", "b", "z"]);
    assert!(g.check_invariants().is_empty());
}

#[test]
fn a_stale_insertion_point_fails_before_adding() {
    let mut g = Graph::new("g");
    let a = g.add_node(OpDesc::new("a", "Relu")).unwrap();
    g.set_insertion_point(Some(InsertPoint::After(a))).unwrap();
    g.erase_node(a).unwrap();
    let err = g.add_node(OpDesc::new("b", "Relu")).unwrap_err();
    assert!(matches!(err, IrError::StaleHandle { .. }), "{err:?}");
    assert!(g.is_empty() && g.find("b").is_none());
    assert!(matches!(
        g.set_insertion_point(Some(InsertPoint::Before(a))),
        Err(IrError::StaleHandle { .. })
    ));
}

#[test]
fn find_nodes_follows_edits_in_graph_order() {
    let mut g = Graph::new("g");
    let mut ids = Vec::new();
    for i in 0..6 {
        let ty = if i % 2 == 0 { "Relu" } else { "Exp" };
        ids.push(g.add_node(OpDesc::new(&format!("n{i}"), ty)).unwrap());
    }
    assert_eq!(
        names_of(&g, &g.find_nodes(Some("Relu"), None)),
        ["n0", "n2", "n4"]
    );
    // Insert many nodes at one place: the order keys run out of room and are renumbered.
    g.set_insertion_point(Some(InsertPoint::Before(ids[1])))
        .unwrap();
    for k in 0..40 {
        g.add_node(OpDesc::new(&format!("m{k}"), "Relu")).unwrap();
        let found = g.find_nodes(Some("Relu"), None);
        let order: Vec<NodeId> = g.node_ids().filter(|id| found.contains(id)).collect();
        assert_eq!(found, order);
    }
    g.set_insertion_point(None).unwrap();
    assert_eq!(g.count_type("Relu"), 43);
    // Retype, rename, remove, reorder.
    g.modify_op(ids[1], |op| op.set_type("Relu")).unwrap();
    g.rename_node(ids[0], "first").unwrap();
    g.erase_node(ids[2]).unwrap();
    g.move_after(ids[4], None).unwrap();
    let relus = g.find_nodes(Some("Relu"), None);
    assert_eq!(names_of(&g, &relus[..2]), ["n4", "first"]);
    assert_eq!(*relus.last().unwrap(), ids[1]);
    assert_eq!(g.count_type("Relu"), 43);
    assert_eq!(names_of(&g, &g.find_nodes(Some("Exp"), None)), ["n3", "n5"]);
    assert!(g.find_nodes(None, Some("n0")).is_empty());
    assert_eq!(g.find_nodes(Some("Exp"), Some("first")), vec![]);
    assert_eq!(g.find_nodes(Some("Relu"), Some("first")), vec![ids[0]]);
    let rev: Vec<NodeId> = g.node_ids().collect::<Vec<_>>().into_iter().rev().collect();
    g.set_order(&rev).unwrap();
    let relus = g.find_nodes(Some("Relu"), None);
    assert_eq!(relus.first(), Some(&ids[1]));
    assert!(
        g.check_invariants().is_empty(),
        "{:?}",
        g.check_invariants()
    );
}
