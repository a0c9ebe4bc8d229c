//! Edits: isolate, remove, replace, insert, move outputs, fuse — GE semantics, atomic, lossless.

mod common;

use std::sync::Arc;

use ascendir_ir::{AttrValue, Graph, InAnchor, IrError, OpDesc, OutAnchor, TensorDesc};
use common::*;

fn ctrl_succ_names(g: &Graph, name: &str) -> Vec<String> {
    let id = g.find(name).unwrap();
    let mut v: Vec<String> = g
        .node(id)
        .unwrap()
        .out_control_peers()
        .iter()
        .map(|p| g.node(p.node).unwrap().name().to_string())
        .collect();
    v.sort();
    v
}

fn data_src(g: &Graph, name: &str, input: usize) -> Option<String> {
    let id = g.find(name).unwrap();
    g.node(id)
        .unwrap()
        .in_data_peer(input)
        .map(|p| format!("{}:{}", g.node(p.node).unwrap().name(), p.index))
}

/// a(Data) -> n.x0, w(Const) -> n.x1, x -ctrl-> n; n -> b, n -> c, n -ctrl-> y.
fn star() -> Graph {
    let mut g = Graph::new("star");
    let a = add(&mut g, "a", "Data", 1, 1);
    let w = add(&mut g, "w", "Const", 0, 1);
    let x = add(&mut g, "x", "NoOp", 0, 0);
    let n = add(&mut g, "n", "Mul", 2, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    let c = add(&mut g, "c", "Relu", 1, 1);
    let y = add(&mut g, "y", "NoOp", 0, 0);
    data(&mut g, a, 0, n, 0);
    data(&mut g, w, 0, n, 1);
    ctrl(&mut g, x, n);
    data(&mut g, n, 0, b, 0);
    data(&mut g, n, 0, c, 0);
    ctrl(&mut g, n, y);
    g
}

#[test]
fn isolate_relinks_output_zero_and_full_connects_the_rest() {
    let mut g = star();
    let n = g.find("n").unwrap();
    let iso = g.isolate_node(n, None).unwrap();
    assert!(iso.hub.is_none());
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("a:0"));
    assert_eq!(data_src(&g, "c", 0).as_deref(), Some("a:0"));
    // a already feeds b and c: only y needs a control link from a.
    assert_eq!(ctrl_succ_names(&g, "a"), s(&["y"]));
    assert_eq!(ctrl_succ_names(&g, "x"), s(&["b", "c", "y"]));
    assert_eq!(ctrl_succ_names(&g, "w"), s(&["b", "c", "y"]));
    let nd = g.node(n).unwrap();
    assert!(g.successors(n).next().is_none() && g.predecessors(n).next().is_none());
    assert_eq!(nd.name(), "n");
    assert!(g.check_invariants().is_empty());
    // Isolating again creates nothing (no duplicates).
    let again = g.isolate_node(n, None).unwrap();
    assert!(again.relinked.is_empty() && again.control_links.is_empty());
}

#[test]
fn isolate_with_io_map_and_bad_maps() {
    let mut g = star();
    let n = g.find("n").unwrap();
    let before = g.dump();
    assert!(matches!(
        g.isolate_node(n, Some(&[0, 0])),
        Err(IrError::InvalidArgument(_))
    ));
    assert!(matches!(
        g.isolate_node(n, Some(&[2])),
        Err(IrError::InvalidArgument(_))
    ));
    assert_eq!(g.dump(), before);
    // Output 0 takes input 1 (the Const).
    g.isolate_node(n, Some(&[1])).unwrap();
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("w:0"));
    assert_eq!(ctrl_succ_names(&g, "a"), s(&["b", "c", "y"]));
    // No relink at all.
    let mut h = star();
    let n = h.find("n").unwrap();
    h.isolate_node(n, Some(&[-1])).unwrap();
    assert_eq!(data_src(&h, "b", 0), None);
    assert_eq!(ctrl_succ_names(&h, "a"), s(&["b", "c", "y"]));
}

#[test]
fn isolate_skips_const_producer_for_the_default_map() {
    // First input fed by a Const: output 0 takes the first non-Const producer (input 1).
    let mut g = Graph::new("g");
    let w = add(&mut g, "w", "Const", 0, 1);
    let a = add(&mut g, "a", "Data", 1, 1);
    let n = add(&mut g, "n", "Add", 2, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    data(&mut g, w, 0, n, 0);
    data(&mut g, a, 0, n, 1);
    data(&mut g, n, 0, b, 0);
    g.isolate_node(n, None).unwrap();
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("a:0"));
    assert_eq!(ctrl_succ_names(&g, "w"), s(&["b"]));
}

#[test]
fn isolate_uses_a_noop_hub_above_a_thousand_pairs() {
    let mut g = Graph::new("hub");
    let n = add(&mut g, "n", "NoOp", 0, 0);
    for i in 0..40 {
        let p = add(&mut g, &format!("p{i}"), "NoOp", 0, 0);
        ctrl(&mut g, p, n);
    }
    for i in 0..30 {
        let c = add(&mut g, &format!("c{i}"), "NoOp", 0, 0);
        ctrl(&mut g, n, c);
    }
    let links_before = g.num_links();
    let iso = g.isolate_node(n, None).unwrap();
    let hub = iso.hub.expect("a hub");
    assert_eq!(g.node(hub).unwrap().name(), "n_noop");
    assert_eq!(g.node(hub).unwrap().op_type(), "NoOp");
    assert_eq!(g.num_links(), links_before);
    assert_eq!(g.node(hub).unwrap().in_control_peers().len(), 40);
    assert_eq!(g.node(hub).unwrap().out_control_peers().len(), 30);
    // Below the threshold: direct links.
    let mut h = Graph::new("small");
    let n = add(&mut h, "n", "NoOp", 0, 0);
    for i in 0..20 {
        let p = add(&mut h, &format!("p{i}"), "NoOp", 0, 0);
        ctrl(&mut h, p, n);
        let c = add(&mut h, &format!("c{i}"), "NoOp", 0, 0);
        ctrl(&mut h, n, c);
    }
    let iso = h.isolate_node(n, None).unwrap();
    assert!(iso.hub.is_none());
    assert_eq!(iso.control_links.len(), 400);
}

#[test]
fn remove_node_drops_orphan_consts_only() {
    let mut g = star();
    let w2 = add(&mut g, "w2", "Const", 0, 1);
    let other = add(&mut g, "other", "Relu", 1, 1);
    let n = g.find("n").unwrap();
    // Give n a third input fed by w2, which also feeds `other`.
    g.modify_op(n, |op| {
        op.add_input("x2", desc(&[1, 4]));
    })
    .unwrap();
    data(&mut g, w2, 0, n, 2);
    data(&mut g, w2, 0, other, 0);
    let removed = g.remove_node(n).unwrap();
    assert_eq!(removed, s(&["w"]));
    assert!(g.find("n").is_none() && g.find("w").is_none());
    assert!(g.find("w2").is_some());
    // Constants order nothing: no control links from w2.
    assert!(ctrl_succ_names(&g, "w2").is_empty());
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("a:0"));
    assert_eq!(ctrl_succ_names(&g, "x"), s(&["b", "c", "y"]));
    assert!(g.check_invariants().is_empty());
    // A removed handle is stale.
    assert!(matches!(g.remove_node(n), Err(IrError::StaleHandle { .. })));
}

#[test]
fn replace_node_keeps_slots_and_is_atomic() {
    let mut g = star();
    let n = g.find("n").unwrap();
    let before = g.dump();
    // Too few inputs: input 1 is linked.
    let small = op("n2", "Relu", 1, 1);
    assert!(g.replace_node(n, small).is_err());
    // Name taken by another node.
    assert!(matches!(
        g.replace_node(n, op("b", "Mul", 2, 1)),
        Err(IrError::Duplicate(_))
    ));
    assert_eq!(g.dump(), before);
    // Same name, new type.
    let new = g.replace_node(n, op("n", "MulV2", 2, 1)).unwrap();
    assert_eq!(g.node(new).unwrap().op_type(), "MulV2");
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("n:0"));
    assert_eq!(data_src(&g, "n", 1).as_deref(), Some("w:0"));
    assert_eq!(ctrl_succ_names(&g, "x"), s(&["n"]));
    assert_eq!(ctrl_succ_names(&g, "n"), s(&["y"]));
    assert_eq!(names(&g), s(&["a", "w", "x", "n", "b", "c", "y"]));
    // a's fan-out keeps its order.
    let a = g.find("a").unwrap();
    assert_eq!(
        g.node(a).unwrap().out_data_peers(0),
        &[InAnchor::data(new, 0)]
    );
    assert!(g.check_invariants().is_empty());
}

#[test]
fn move_output_edges_moves_every_consumer() {
    let mut g = star();
    let n = g.find("n").unwrap();
    let m = add(&mut g, "m", "Mul", 2, 1);
    let bad = add(&mut g, "bad", "Split", 1, 2);
    let before = g.dump();
    assert!(g.move_output_edges(n, bad).is_err());
    assert_eq!(g.dump(), before);
    g.move_output_edges(n, m).unwrap();
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("m:0"));
    assert_eq!(data_src(&g, "c", 0).as_deref(), Some("m:0"));
    assert_eq!(ctrl_succ_names(&g, "m"), s(&["y"]));
    assert!(ctrl_succ_names(&g, "n").is_empty());
}

#[test]
fn insertions() {
    let mut g = star();
    let (n, b, c) = (
        g.find("n").unwrap(),
        g.find("b").unwrap(),
        g.find("c").unwrap(),
    );
    // Between n:0 and c:0, placed right after n.
    let cast = g
        .insert_between_data(
            OutAnchor::data(n, 0),
            InAnchor::data(c, 0),
            op("cast", "Cast", 1, 1),
            0,
            0,
        )
        .unwrap();
    assert_eq!(data_src(&g, "c", 0).as_deref(), Some("cast:0"));
    assert_eq!(data_src(&g, "cast", 0).as_deref(), Some("n:0"));
    assert_eq!(g.next_of(n), Some(cast));
    // n:0 lists cast where c was.
    assert_eq!(
        g.node(n).unwrap().out_data_peers(0),
        &[InAnchor::data(b, 0), InAnchor::data(cast, 0)]
    );
    // Not linked → error, nothing changes.
    let before = g.dump();
    assert!(g
        .insert_between_data(
            OutAnchor::data(n, 0),
            InAnchor::data(c, 0),
            op("z", "Cast", 1, 1),
            0,
            0
        )
        .is_err());
    assert!(g
        .insert_between_data(
            OutAnchor::data(n, 0),
            InAnchor::data(b, 0),
            op("n", "Cast", 1, 1),
            0,
            0
        )
        .is_err());
    assert_eq!(g.dump(), before);
    // After n: takes every data consumer and n's control consumers.
    let id = g
        .insert_after(
            OutAnchor::data(n, 0),
            &[],
            op("ident", "Identity", 1, 1),
            0,
            0,
        )
        .unwrap();
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("ident:0"));
    assert_eq!(data_src(&g, "cast", 0).as_deref(), Some("ident:0"));
    assert_eq!(ctrl_succ_names(&g, "ident"), s(&["y"]));
    assert_eq!(g.next_of(n), Some(id));
    // Before b: b's in-control links move, except from atomic-clean nodes.
    let clean = add(&mut g, "clean", "AtomicAddrClean", 0, 0);
    let x2 = add(&mut g, "x2", "NoOp", 0, 0);
    ctrl(&mut g, clean, b);
    ctrl(&mut g, x2, b);
    let pre = g
        .insert_before(InAnchor::data(b, 0), op("pre", "Cast", 1, 1), 0, 0)
        .unwrap();
    assert_eq!(data_src(&g, "pre", 0).as_deref(), Some("ident:0"));
    assert_eq!(data_src(&g, "b", 0).as_deref(), Some("pre:0"));
    assert_eq!(g.next_of(pre), Some(b));
    assert_eq!(ctrl_succ_names(&g, "x2"), s(&["pre"]));
    assert_eq!(ctrl_succ_names(&g, "clean"), s(&["b"]));
    assert!(g.check_invariants().is_empty());
}

fn with_attr(mut od: OpDesc, k: &str, v: &str) -> OpDesc {
    od.set_attr(k, AttrValue::String(v.into()));
    od
}

#[test]
fn fuse_nodes_inherits_attrs_and_keeps_topo() {
    let mut g = Graph::new("fuse");
    let d = add(&mut g, "d", "Data", 1, 1);
    let a = g
        .add_node(with_attr(op("a", "Relu", 1, 1), "_user_stream_label", "s1"))
        .unwrap();
    let b = g
        .add_node(with_attr(op("b", "Relu", 1, 1), "_user_stream_label", "s1"))
        .unwrap();
    g.modify_op(b, |o| {
        o.set_attr("_deterministic", AttrValue::String("1".into()));
        o.set_attr("_op_aicore_num", AttrValue::String("8".into()));
    })
    .unwrap();
    let c = add(&mut g, "c", "Relu", 1, 1);
    data(&mut g, d, 0, a, 0);
    data(&mut g, a, 0, b, 0);
    data(&mut g, b, 0, c, 0);
    // Originals given out of order: the fused ops go after the smallest id (a).
    let fused = g
        .fuse_nodes(
            &[b, a],
            vec![op("ab", "FusedRelu", 1, 1), op("ab2", "Cast", 1, 1)],
        )
        .unwrap();
    assert_eq!(names(&g), s(&["d", "a", "ab", "ab2", "b", "c"]));
    let a_id = g.node(a).unwrap().op().id;
    for &f in &fused {
        let o = g.node(f).unwrap().op();
        assert_eq!(o.id, a_id);
        assert_eq!(
            o.attr("_user_stream_label").and_then(|v| v.as_str()),
            Some("s1")
        );
        assert_eq!(o.attr("_deterministic").and_then(|v| v.as_str()), Some("1"));
        assert_eq!(o.attr("_op_aicore_num").and_then(|v| v.as_str()), Some("8"));
    }
    // Conflicts fail and change nothing.
    let before = g.dump();
    // c has no stream label ("" vs "s1").
    assert!(g.fuse_nodes(&[a, c], vec![op("f1", "X", 1, 1)]).is_err());
    g.modify_op(c, |o| {
        o.set_attr("_deterministic", AttrValue::String("2".into()))
    })
    .unwrap();
    let before_c = g.dump();
    assert!(g.fuse_nodes(&[c], vec![op("f2", "X", 1, 1)]).is_err());
    assert_eq!(g.dump(), before_c);
    g.modify_op(c, |o| o.set_attr("_deterministic", AttrValue::Int(1)))
        .unwrap();
    assert!(g.fuse_nodes(&[c], vec![op("f3", "X", 1, 1)]).is_err());
    // A fusion op with a different _deterministic fails; a Data original has no label.
    let conflicting = with_attr(op("f4", "X", 1, 1), "_deterministic", "0");
    assert!(g.fuse_nodes(&[b], vec![conflicting]).is_err());
    assert!(g.fuse_nodes(&[d, a], vec![op("f5", "X", 1, 1)]).is_ok());
    // Duplicate names are refused.
    assert!(g.fuse_nodes(&[a], vec![op("c", "X", 1, 1)]).is_err());
    let _ = before;
}

#[test]
fn verifier_reports_required_inputs_left_unconnected() {
    let mut g = Graph::new("g");
    let c = add(&mut g, "c", "Const", 0, 1);
    let id = add(&mut g, "id", "Identity", 1, 1);
    let x = add(&mut g, "x", "Data", 1, 1);
    let sum = add(&mut g, "sum", "Add", 2, 1);
    data(&mut g, c, 0, id, 0);
    data(&mut g, x, 0, sum, 0);
    data(&mut g, id, 0, sum, 1);
    assert!(g.validate().is_ok(), "{:?}", g.problems());
    g.erase_node(id).unwrap();
    assert_eq!(
        g.problems(),
        ["graph 'g': node 'sum' (Add) input 1 'x1' is required but not connected"]
    );
    // An optional slot and the invalid desc of an unset slot may stay open.
    let mut op2 = op("bias_add", "BiasAdd", 1, 1);
    op2.add_optional_input("bias", Arc::new(TensorDesc::default()));
    op2.add_input("unset", Arc::new(TensorDesc::invalid()));
    let b = g.add_node(op2).unwrap();
    data(&mut g, sum, 0, b, 0);
    assert_eq!(g.problems().len(), 1);
}
