//! Orders of GE's four sorting modes on small graphs, derived by hand from GE's algorithms.

mod common;

use ascendir_ir::{Graph, IrError, TopoMode, TopoOptions, TopoSorter};
use common::*;

fn sorted(g: &mut Graph, opts: TopoOptions) -> Vec<String> {
    g.topo_sort(&opts).unwrap();
    // Ids are renumbered to positions.
    for (i, id) in g.node_ids().enumerate() {
        assert_eq!(g.node(id).unwrap().op().id, i as i64);
    }
    names(g)
}

fn mode(m: TopoMode) -> TopoOptions {
    TopoOptions::new(m)
}

/// a(Data) -> b, c ; b, c -> d
fn diamond() -> Graph {
    let mut g = Graph::new("diamond");
    let a = add(&mut g, "a", "Data", 1, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    let c = add(&mut g, "c", "Relu", 1, 1);
    let d = add(&mut g, "d", "Add", 2, 1);
    data(&mut g, a, 0, b, 0);
    data(&mut g, a, 0, c, 0);
    data(&mut g, b, 0, d, 0);
    data(&mut g, c, 0, d, 1);
    g
}

#[test]
fn diamond_in_every_mode() {
    // DFS pops the last-ready successor first.
    assert_eq!(
        sorted(&mut diamond(), mode(TopoMode::Dfs)),
        s(&["a", "c", "b", "d"])
    );
    // Reverse DFS: the first-ready one.
    let mut o = mode(TopoMode::Dfs);
    o.reverse = true;
    assert_eq!(sorted(&mut diamond(), o), s(&["a", "b", "c", "d"]));
    // BFS queues ready nodes by name.
    assert_eq!(
        sorted(&mut diamond(), mode(TopoMode::Bfs)),
        s(&["a", "b", "c", "d"])
    );
    // RDFS from the sink d: equal sizes, smallest name (b) first → a b c d; DelayTopoSort then
    // moves b (fed by the Data node a) to just before d.
    assert_eq!(
        sorted(&mut diamond(), mode(TopoMode::Rdfs)),
        s(&["a", "c", "b", "d"])
    );
    let mut o = mode(TopoMode::Rdfs);
    o.delay = Some(false);
    assert_eq!(sorted(&mut diamond(), o), s(&["a", "b", "c", "d"]));
    // StableRDFS keeps an already topological order.
    assert_eq!(
        sorted(&mut diamond(), mode(TopoMode::StableRdfs)),
        s(&["a", "b", "c", "d"])
    );
}

#[test]
fn reverse_insertion_order() {
    // Nodes added consumers-first.
    let mut g = Graph::new("rev");
    let d = add(&mut g, "d", "Add", 2, 1);
    let c = add(&mut g, "c", "Relu", 1, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    let a = add(&mut g, "a", "Data", 1, 1);
    data(&mut g, a, 0, b, 0);
    data(&mut g, a, 0, c, 0);
    data(&mut g, b, 0, d, 0);
    data(&mut g, c, 0, d, 1);
    let base = g.clone();
    assert_eq!(
        sorted(&mut base.clone(), mode(TopoMode::Dfs)),
        s(&["a", "c", "b", "d"])
    );
    assert_eq!(
        sorted(&mut base.clone(), mode(TopoMode::Bfs)),
        s(&["a", "b", "c", "d"])
    );
    // StableRDFS from d (first in list): producers b, c pushed lowest position (c) on top.
    assert_eq!(
        sorted(&mut base.clone(), mode(TopoMode::StableRdfs)),
        s(&["a", "c", "b", "d"])
    );
    let mut o = mode(TopoMode::Rdfs);
    o.delay = Some(false);
    assert_eq!(sorted(&mut base.clone(), o), s(&["a", "b", "c", "d"]));
}

#[test]
fn stable_rdfs_pulls_late_nodes_before_their_first_consumer() {
    let mut g = Graph::new("late");
    let a = add(&mut g, "a", "Data", 1, 1);
    let x = add(&mut g, "x", "Relu", 1, 1);
    let y = add(&mut g, "y", "Relu", 1, 1);
    let z = add(&mut g, "z", "Add", 2, 1);
    let late = add(&mut g, "late", "Cast", 1, 1);
    data(&mut g, a, 0, x, 0);
    data(&mut g, x, 0, y, 0);
    data(&mut g, y, 0, z, 0);
    data(&mut g, a, 0, late, 0);
    data(&mut g, late, 0, z, 1);
    // z comes before its producer `late`: `late` is pulled to just before z, the rest keeps
    // its order.
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::StableRdfs)),
        s(&["a", "x", "y", "late", "z"])
    );
    // An already legal list is returned unchanged.
    let mut h = g.clone();
    h.move_after(late, Some(y)).unwrap();
    assert_eq!(
        sorted(&mut h, mode(TopoMode::StableRdfs)),
        s(&["a", "x", "y", "late", "z"])
    );
}

#[test]
fn mixed_sources_data_first() {
    // w (Const) and two Data nodes; data-like sources are emitted first, in list order.
    let mut g = Graph::new("mixed");
    let w = add(&mut g, "w", "Const", 0, 1);
    let x = add(&mut g, "x", "Data", 1, 1);
    let y = add(&mut g, "y", "Data", 1, 1);
    let z = add(&mut g, "z", "MatMul", 2, 1);
    let t = add(&mut g, "t", "Relu", 1, 1);
    data(&mut g, w, 0, z, 1);
    data(&mut g, x, 0, z, 0);
    data(&mut g, y, 0, t, 0);
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Dfs)),
        s(&["x", "y", "t", "w", "z"])
    );
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Bfs)),
        s(&["x", "y", "t", "w", "z"])
    );
}

#[test]
fn bfs_drains_one_seed_region_before_the_next_and_queues_by_name() {
    let mut g = Graph::new("bfs");
    let x1 = add(&mut g, "x1", "Data", 1, 1);
    let x2 = add(&mut g, "x2", "Data", 1, 1);
    let m1 = add(&mut g, "m1", "Relu", 1, 1);
    let m2 = add(&mut g, "m2", "Relu", 1, 1);
    let a2 = add(&mut g, "a2", "Relu", 1, 1);
    let b1 = add(&mut g, "b1", "Relu", 1, 1);
    data(&mut g, x1, 0, m2, 0);
    data(&mut g, x1, 0, m1, 0);
    data(&mut g, m1, 0, a2, 0);
    data(&mut g, x2, 0, b1, 0);
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Bfs)),
        s(&["x1", "m1", "m2", "a2", "x2", "b1"])
    );
    // DFS: m1 made ready last → visited first.
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Dfs)),
        s(&["x1", "m1", "a2", "m2", "x2", "b1"])
    );
}

#[test]
fn fan_out_dfs_batches() {
    // s fans out to a data consumer and a data→control consumer, plus a control consumer.
    let mut g = Graph::new("fan");
    let src = add(&mut g, "s", "Data", 1, 1);
    let p = add(&mut g, "p", "Relu", 1, 1);
    let q = add(&mut g, "q", "NoOp", 0, 0);
    let r = add(&mut g, "r", "NoOp", 0, 0);
    let u = add(&mut g, "u", "Relu", 1, 1);
    data(&mut g, src, 0, p, 0);
    data_ctrl(&mut g, src, 0, q);
    data(&mut g, src, 0, u, 0);
    ctrl(&mut g, src, r);
    // Pushes: [p, u] (in-data batch), [q] (data→control batch), [r] (control batch).
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Dfs)),
        s(&["s", "r", "q", "u", "p"])
    );
    let mut o = mode(TopoMode::Dfs);
    o.reverse = true;
    // Each batch reversed on its own: [u, p], [q], [r] → pop r, q, p, u.
    assert_eq!(sorted(&mut g.clone(), o), s(&["s", "r", "q", "p", "u"]));
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Bfs)),
        s(&["s", "p", "q", "r", "u"])
    );
}

#[test]
fn rdfs_visits_the_smallest_producer_first() {
    let mut g = Graph::new("sizes");
    let big = g
        .add_node(op_sized("a_big", "Data", 1, 1, &[1, 1024]))
        .unwrap();
    let small = g
        .add_node(op_sized("z_small", "Data", 1, 1, &[1, 2]))
        .unwrap();
    let mid = g
        .add_node(op_sized("m_mid", "Data", 1, 1, &[1, 64]))
        .unwrap();
    let sink = add(&mut g, "sink", "AddN", 3, 1);
    data(&mut g, big, 0, sink, 0);
    data(&mut g, small, 0, sink, 1);
    data(&mut g, mid, 0, sink, 2);
    assert_eq!(
        sorted(&mut g.clone(), mode(TopoMode::Rdfs)),
        s(&["z_small", "m_mid", "a_big", "sink"])
    );
    // Memory priority in DFS: sources by (consumers, bytes, name).
    let mut o = mode(TopoMode::Dfs);
    o.memory_priority = true;
    o.delay = Some(false);
    assert_eq!(
        sorted(&mut g.clone(), o),
        s(&["z_small", "m_mid", "a_big", "sink"])
    );
}

#[test]
fn memory_priority_pops_fewest_consumers_then_bytes_then_name() {
    let mut g = Graph::new("mp");
    let d = add(&mut g, "d", "Data", 1, 1);
    let p = g.add_node(op_sized("p", "Relu", 1, 1, &[1, 100])).unwrap();
    let q = g.add_node(op_sized("q", "Relu", 1, 1, &[1, 10])).unwrap();
    let r = g.add_node(op_sized("r", "Relu", 1, 1, &[1, 1])).unwrap();
    let o1 = add(&mut g, "o1", "Relu", 1, 1);
    let o2 = add(&mut g, "o2", "Relu", 1, 1);
    let o3 = add(&mut g, "o3", "Relu", 1, 1);
    data(&mut g, d, 0, p, 0);
    data(&mut g, d, 0, q, 0);
    data(&mut g, d, 0, r, 0);
    data(&mut g, p, 0, o1, 0);
    data(&mut g, q, 0, o2, 0);
    data(&mut g, r, 0, o3, 0);
    // r has two data consumers: it comes after p and q although its output is the smallest.
    let o4 = add(&mut g, "o4", "Relu", 1, 1);
    data(&mut g, r, 0, o4, 0);
    let mut o = mode(TopoMode::Bfs);
    o.memory_priority = true;
    o.delay = Some(false);
    // q (1 consumer, 40 B) < p (1 consumer, 400 B) < r (2 consumers); a consumer-less o* beats
    // them all as soon as it is ready.
    assert_eq!(
        sorted(&mut g.clone(), o),
        s(&["d", "q", "o2", "p", "o1", "r", "o3", "o4"])
    );
}

/// GE's delay scenario: a node fed only by a graph input is postponed to just before its first
/// consumer, and a single-input follower travels with it.
#[test]
fn delay_topo_sort_moves_long_lived_consumers_and_chains() {
    let mut g = Graph::new("delay");
    let d1 = add(&mut g, "d1", "Data", 1, 1);
    let n1 = add(&mut g, "n1", "Relu", 1, 1);
    let n2 = add(&mut g, "n2", "Relu", 1, 1);
    let n3 = add(&mut g, "n3", "Relu", 1, 1);
    let n4 = add(&mut g, "n4", "Add", 2, 1);
    let m = add(&mut g, "m", "Cast", 1, 1);
    let m2 = add(&mut g, "m2", "Cast", 1, 1);
    data(&mut g, d1, 0, n1, 0);
    data(&mut g, d1, 0, m, 0);
    data(&mut g, n1, 0, n2, 0);
    data(&mut g, n2, 0, n3, 0);
    data(&mut g, n3, 0, n4, 0);
    data(&mut g, m, 0, m2, 0);
    ctrl(&mut g, n2, m2);
    data(&mut g, m2, 0, n4, 1);
    let mut o = mode(TopoMode::Dfs);
    o.delay = Some(false);
    assert_eq!(
        sorted(&mut g.clone(), o),
        s(&["d1", "m", "n1", "n2", "m2", "n3", "n4"])
    );
    o.delay = Some(true);
    assert_eq!(
        sorted(&mut g.clone(), o),
        s(&["d1", "n1", "n2", "n3", "m", "m2", "n4"])
    );
    // Memory priority turns the delay on for DFS.
    let mut mp = mode(TopoMode::Dfs);
    mp.memory_priority = true;
    mp.reverse = true;
    let order = sorted(&mut g.clone(), mp);
    assert!(respects_links(&{
        let mut h = g.clone();
        h.topo_sort(&mp).unwrap();
        h
    }));
    assert_eq!(order.len(), 7);
}

#[test]
fn delay_keeps_nodes_with_non_long_lived_inputs() {
    // m consumes a Const and a computed value: not delayed.
    let mut g = Graph::new("nodelay");
    let d = add(&mut g, "d", "Data", 1, 1);
    let c = add(&mut g, "c", "Const", 0, 1);
    let a = add(&mut g, "a", "Relu", 1, 1);
    let m = add(&mut g, "m", "Mul", 2, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    let e = add(&mut g, "e", "Add", 2, 1);
    data(&mut g, d, 0, a, 0);
    data(&mut g, a, 0, m, 0);
    data(&mut g, c, 0, m, 1);
    data(&mut g, a, 0, b, 0);
    data(&mut g, m, 0, e, 0);
    data(&mut g, b, 0, e, 1);
    let mut o = mode(TopoMode::Dfs);
    o.delay = Some(false);
    let plain = sorted(&mut g.clone(), o);
    o.delay = Some(true);
    assert_eq!(sorted(&mut g.clone(), o), plain);
}

fn cyclic() -> Graph {
    let mut g = Graph::new("cyc");
    let x = add(&mut g, "x", "Data", 1, 1);
    let a = add(&mut g, "a", "Add", 2, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    let c = add(&mut g, "c", "Relu", 1, 1);
    let out = add(&mut g, "out", "Relu", 1, 1);
    data(&mut g, x, 0, a, 0);
    data(&mut g, a, 0, b, 0);
    data(&mut g, b, 0, c, 0);
    data(&mut g, c, 0, a, 1);
    data(&mut g, c, 0, out, 0);
    g
}

fn assert_cycle(err: IrError, expect: &[&str]) {
    match err {
        IrError::Cycle { graph, nodes } => {
            assert!(!graph.is_empty());
            assert_eq!(nodes.len(), expect.len(), "{nodes:?}");
            // Same cycle, any rotation.
            let start = nodes
                .iter()
                .position(|n| n == expect[0])
                .expect("cycle node");
            let rotated: Vec<&str> = (0..nodes.len())
                .map(|i| nodes[(start + i) % nodes.len()].as_str())
                .collect();
            assert_eq!(rotated, expect);
        }
        other => panic!("expected a cycle, got {other:?}"),
    }
}

#[test]
fn cycles_are_detected_in_every_mode_and_nothing_changes() {
    for m in TopoMode::ALL {
        for reverse in [false, true] {
            for mp in [false, true] {
                let mut g = cyclic();
                let before = g.dump();
                let opts = TopoOptions {
                    mode: m,
                    reverse,
                    memory_priority: mp,
                    delay: None,
                };
                let err = g.topo_sort(&opts).unwrap_err();
                assert_cycle(err, &["a", "b", "c"]);
                assert_eq!(g.dump(), before, "{m:?}");
            }
        }
    }
}

#[test]
fn data_to_control_and_control_to_data_cycles_are_detected() {
    // a -> b (data), b:out0 -> a:ctrl (data→control): GE's RDFS/StableRDFS miss this one.
    let mut g = Graph::new("dc");
    let a = add(&mut g, "a", "Relu", 1, 1);
    let b = add(&mut g, "b", "Relu", 1, 1);
    data(&mut g, a, 0, b, 0);
    data_ctrl(&mut g, b, 0, a);
    for m in TopoMode::ALL {
        assert_cycle(g.clone().topo_sort(&mode(m)).unwrap_err(), &["a", "b"]);
    }
    // Control→data: b:ctrl -> a:in0.
    let mut h = Graph::new("cd");
    let a = add(&mut h, "a", "Relu", 1, 1);
    let b = add(&mut h, "b", "Relu", 1, 1);
    data(&mut h, a, 0, b, 0);
    h.link(
        ascendir_ir::OutAnchor::control(b),
        ascendir_ir::InAnchor::data(a, 0),
    )
    .unwrap();
    for m in TopoMode::ALL {
        assert_cycle(h.clone().topo_sort(&mode(m)).unwrap_err(), &["a", "b"]);
    }
    // Self loop.
    let mut k = Graph::new("self");
    let a = add(&mut k, "a", "NoOp", 0, 0);
    ctrl(&mut k, a, a);
    for m in TopoMode::ALL {
        assert_cycle(k.clone().topo_sort(&mode(m)).unwrap_err(), &["a"]);
    }
}

#[test]
fn rdfs_and_stable_rdfs_respect_data_to_control_links() {
    // GE's RDFS ignores a data→control producer; we place it before its consumer.
    let mut g = Graph::new("d2c");
    let x = add(&mut g, "x", "Data", 1, 1);
    let y = add(&mut g, "y", "Relu", 1, 1);
    let gate = add(&mut g, "gate", "Relu", 1, 1);
    data(&mut g, x, 0, y, 0);
    data(&mut g, x, 0, gate, 0);
    data_ctrl(&mut g, gate, 0, y);
    g.move_after(gate, Some(y)).unwrap();
    for m in TopoMode::ALL {
        let mut h = g.clone();
        h.topo_sort(&mode(m)).unwrap();
        assert!(respects_links(&h), "{m:?}: {:?}", names(&h));
    }
}

#[test]
fn next_iteration_loops_sort_in_every_mode() {
    let mut g = Graph::new("loop");
    let e = add(&mut g, "enter", "Enter", 1, 1);
    let m = add(&mut g, "merge", "Merge", 2, 1);
    let b = add(&mut g, "body", "Relu", 1, 1);
    let ni = add(&mut g, "next", "NextIteration", 1, 1);
    data(&mut g, e, 0, m, 0);
    data(&mut g, ni, 0, m, 1);
    data(&mut g, m, 0, b, 0);
    data(&mut g, b, 0, ni, 0);
    for md in TopoMode::ALL {
        let mut h = g.clone();
        h.topo_sort(&mode(md)).unwrap();
        assert_eq!(names(&h), s(&["enter", "merge", "body", "next"]), "{md:?}");
    }
    assert!(g.find_cycle().is_none());
}

#[test]
fn topo_order_does_not_mutate_and_sorter_is_reusable() {
    let mut g = diamond();
    g.move_after(g.find("a").unwrap(), Some(g.find("d").unwrap()))
        .unwrap();
    let before = g.dump();
    let order = g.topo_order(&mode(TopoMode::Dfs)).unwrap();
    assert_eq!(names_of(&g, &order), s(&["a", "c", "b", "d"]));
    assert_eq!(g.dump(), before);
    let mut sorter = TopoSorter::new();
    for m in TopoMode::ALL {
        let o1 = sorter.order(&g, &mode(m)).unwrap().to_vec();
        let o2 = sorter.order(&g, &mode(m)).unwrap().to_vec();
        assert_eq!(o1, o2);
    }
}

#[test]
fn empty_and_single_node_graphs() {
    for m in TopoMode::ALL {
        let mut g = Graph::new("e");
        g.topo_sort(&mode(m)).unwrap();
        assert!(g.is_empty());
        add(&mut g, "only", "NoOp", 0, 0);
        g.topo_sort(&mode(m)).unwrap();
        assert_eq!(names(&g), s(&["only"]));
    }
}

// ---------------------------------------------------------------------------------------------
// Graphs and expected orders of GE's own unit tests (compute_graph_unittest.cc).

/// GE's `BuildComplexGraph`: four 3-output sources, twelve 1-in/1-out nodes of growing output
/// sizes, three 4-input joins and a control-only sink.
fn ge_complex_graph() -> Graph {
    let mut g = Graph::new("graph_reverse_dfs");
    let shapes: [(&str, usize, usize, &[i64]); 20] = [
        ("node1", 0, 3, &[1, 1]),
        ("node2", 0, 3, &[1, 1]),
        ("node3", 0, 3, &[1, 1]),
        ("node4", 0, 3, &[1, 1]),
        ("node5", 1, 1, &[1, 2]),
        ("node6", 1, 1, &[1, 3]),
        ("node7", 1, 1, &[1, 4]),
        ("node8", 1, 1, &[1, 5]),
        ("node9", 1, 1, &[2, 2]),
        ("node10", 1, 1, &[2, 3]),
        ("node11", 1, 1, &[2, 3]),
        ("node12", 1, 1, &[2, 4]),
        ("node13", 1, 1, &[3, 2]),
        ("node14", 1, 1, &[3, 3]),
        ("node15", 1, 1, &[3, 4]),
        ("node16", 1, 1, &[3, 5]),
        ("node17", 4, 1, &[4, 2]),
        ("node18", 4, 1, &[4, 2]),
        ("node19", 4, 1, &[4, 2]),
        ("node20", 3, 0, &[1, 1, 224, 224]),
    ];
    let ids: Vec<_> = shapes
        .iter()
        .map(|(n, i, o, s)| g.add_node(op_sized(n, n, *i, *o, s)).unwrap())
        .collect();
    for src in 0..4 {
        for out in 0..3 {
            data(&mut g, ids[src], out, ids[4 + out * 4 + src], 0);
        }
    }
    for join in 0..3 {
        for k in 0..4 {
            data(&mut g, ids[4 + join * 4 + k], 0, ids[16 + join], k);
        }
        ctrl(&mut g, ids[16 + join], ids[19]);
    }
    g
}

#[test]
fn ge_ut_complex_graph_rdfs_ids() {
    let mut g = ge_complex_graph();
    g.topo_sort(&TopoOptions::new(TopoMode::from_ge_options(
        Some("2"),
        None,
    )))
    .unwrap();
    let expected = [
        ("node1", 0),
        ("node2", 2),
        ("node3", 4),
        ("node4", 6),
        ("node5", 1),
        ("node6", 3),
        ("node7", 5),
        ("node8", 7),
        ("node9", 9),
        ("node10", 10),
        ("node11", 11),
        ("node12", 12),
        ("node13", 14),
        ("node14", 15),
        ("node15", 16),
        ("node16", 17),
        ("node17", 8),
        ("node18", 13),
        ("node19", 18),
        ("node20", 19),
    ];
    for (name, id) in expected {
        assert_eq!(g.op(g.find(name).unwrap()).unwrap().id, id, "{name}");
    }
}

/// GE's `BuildDelayTopoGraph` (note: the `data` node's type is the literal `"DATA"`), sorted
/// once with `first` as GE's builder graphs are before each test.
fn ge_delay_graph(first: TopoMode) -> Graph {
    let mut g = Graph::new("test_delay_topo_graph");
    let big = [1, 1, 224, 224];
    let variable = g
        .add_node(op_sized("variable", "Variable", 0, 2, &big))
        .unwrap();
    let n1 = g.add_node(op_sized("node1", "node1", 1, 1, &big)).unwrap();
    let n2 = g.add_node(op_sized("node2", "node2", 1, 1, &big)).unwrap();
    let n3 = g.add_node(op_sized("node3", "node3", 1, 1, &big)).unwrap();
    let n4 = g.add_node(op_sized("node4", "node4", 1, 1, &big)).unwrap();
    let n5 = g.add_node(op_sized("node5", "node5", 3, 0, &big)).unwrap();
    let d = g.add_node(op_sized("data", "DATA", 0, 1, &big)).unwrap();
    data(&mut g, variable, 0, n1, 0);
    data(&mut g, variable, 1, n2, 0);
    data(&mut g, n1, 0, n5, 0);
    data(&mut g, n2, 0, n5, 1);
    data(&mut g, d, 0, n3, 0);
    data(&mut g, n3, 0, n4, 0);
    data(&mut g, n4, 0, n5, 2);
    ctrl(&mut g, n2, n3);
    g.topo_sort(&TopoOptions::new(first)).unwrap();
    g
}

#[test]
fn ge_ut_delay_topological_sorting() {
    let mut g = ge_delay_graph(TopoMode::Dfs);
    assert_eq!(
        names(&g),
        s(&["variable", "node2", "node1", "data", "node3", "node4", "node5"])
    );
    // ge.topoSortingMode=2, ge.exec.memoryOptimizationPolicy=MemoryPriority.
    let opts = TopoOptions {
        mode: TopoMode::from_ge_options(Some("2"), None),
        memory_priority: ascendir_ir::topo::memory_priority_from_ge_option(Some("MemoryPriority")),
        ..TopoOptions::default()
    };
    g.topo_sort_all(&opts).unwrap();
    assert_eq!(
        names(&g),
        s(&["variable", "data", "node2", "node3", "node4", "node1", "node5"])
    );
}

#[test]
fn ge_ut_stable_rdfs_keeps_dfs_and_bfs_orders() {
    let mut g = ge_delay_graph(TopoMode::Dfs);
    g.topo_sort(&mode(TopoMode::StableRdfs)).unwrap();
    assert_eq!(
        names(&g),
        s(&["variable", "node2", "node1", "data", "node3", "node4", "node5"])
    );
    let mut g = ge_delay_graph(TopoMode::Bfs);
    assert_eq!(
        names(&g),
        s(&["variable", "node1", "node2", "data", "node3", "node4", "node5"])
    );
    g.topo_sort(&mode(TopoMode::StableRdfs)).unwrap();
    assert_eq!(
        names(&g),
        s(&["variable", "node1", "node2", "data", "node3", "node4", "node5"])
    );
}

#[test]
fn ge_ut_stable_rdfs_vs_dfs_after_appending_noops() {
    let build = || {
        let mut g = ge_delay_graph(TopoMode::Dfs);
        let d = g.find("data").unwrap();
        let n4 = g.find("node4").unwrap();
        let a = add(&mut g, "noop1", "noop", 0, 0);
        let b = add(&mut g, "noop2", "noop", 0, 0);
        ctrl(&mut g, d, a);
        ctrl(&mut g, a, n4);
        ctrl(&mut g, d, b);
        ctrl(&mut g, b, n4);
        g
    };
    let mut g = build();
    g.topo_sort(&mode(TopoMode::StableRdfs)).unwrap();
    assert_eq!(
        names(&g),
        s(&["variable", "node2", "node1", "data", "node3", "noop1", "noop2", "node4", "node5"])
    );
    let mut g = build();
    g.topo_sort(&mode(TopoMode::Dfs)).unwrap();
    assert_eq!(
        names(&g),
        s(&["variable", "node2", "node1", "data", "noop2", "noop1", "node3", "node4", "node5"])
    );
}
