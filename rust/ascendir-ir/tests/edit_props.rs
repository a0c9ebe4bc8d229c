//! Random edit sequences: invariants always hold (the type index and order keys included), a
//! failed edit changes nothing, and isolating or removing a node never loses a dependency
//! between the remaining nodes.

mod common;

use std::collections::{HashMap, HashSet};

use ascendir_ir::{Graph, InAnchor, NodeId, OutAnchor};
use common::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Edit {
    Isolate(u32, Option<Vec<i64>>),
    Remove(u32),
    Replace(u32, usize, usize),
    InsertBetween(u32),
    InsertAfter(u32),
    InsertBefore(u32),
    MoveOutputs(u32, u32),
    Fuse(u32, u32),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (
            any::<u32>(),
            prop::option::of(prop::collection::vec(-1i64..4, 0..3))
        )
            .prop_map(|(a, m)| Edit::Isolate(a, m)),
        any::<u32>().prop_map(Edit::Remove),
        (any::<u32>(), 0usize..4, 0usize..3).prop_map(|(a, i, o)| Edit::Replace(a, i, o)),
        any::<u32>().prop_map(Edit::InsertBetween),
        any::<u32>().prop_map(Edit::InsertAfter),
        any::<u32>().prop_map(Edit::InsertBefore),
        (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Edit::MoveOutputs(a, b)),
        (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Edit::Fuse(a, b)),
    ]
}

fn random_dag(n: usize, links: &[(u32, u32, u32, u32)], ctrls: &[(u32, u32)]) -> Graph {
    let mut g = Graph::new("g");
    let types = ["Data", "Const", "Relu", "Add", "Mul"];
    let mut ids = Vec::new();
    for i in 0..n {
        let ty = types[i % types.len()];
        let (ni, no) = match ty {
            "Data" | "Const" => (0, 1),
            "Relu" => (1, 1),
            _ => (2, 2),
        };
        ids.push(add(&mut g, &format!("v{i}"), ty, ni, no));
    }
    for &(a, b, c, d) in links {
        let dst = 1 + (a as usize) % (n - 1);
        let src = (b as usize) % dst;
        let no = g.node(ids[src]).unwrap().num_out_data();
        let ni = g.node(ids[dst]).unwrap().num_in_data();
        if no == 0 || ni == 0 {
            continue;
        }
        let _ = g.link(
            OutAnchor::data(ids[src], c as usize % no),
            InAnchor::data(ids[dst], d as usize % ni),
        );
    }
    for &(a, b) in ctrls {
        let dst = 1 + (a as usize) % (n - 1);
        let src = (b as usize) % dst;
        if b % 3 == 0 && g.node(ids[src]).unwrap().num_out_data() > 0 {
            g.link(OutAnchor::data(ids[src], 0), InAnchor::control(ids[dst]))
                .unwrap();
        } else {
            g.link(OutAnchor::control(ids[src]), InAnchor::control(ids[dst]))
                .unwrap();
        }
    }
    g
}

/// Names reachable from each node (by name), over every link.
fn reach(g: &Graph) -> HashMap<String, HashSet<String>> {
    let mut out = HashMap::new();
    for id in g.node_ids() {
        let mut seen = HashSet::new();
        let mut stack: Vec<NodeId> = g.successors(id).collect();
        while let Some(x) = stack.pop() {
            if seen.insert(x) {
                stack.extend(g.successors(x));
            }
        }
        out.insert(
            g.node(id).unwrap().name().to_string(),
            seen.into_iter()
                .map(|x| g.node(x).unwrap().name().to_string())
                .collect(),
        );
    }
    out
}

fn pick(g: &Graph, k: u32) -> Option<NodeId> {
    let n = g.len();
    (n > 0).then(|| g.node_ids().nth(k as usize % n).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn random_edits_keep_invariants_and_dependencies(
        n in 2usize..14,
        links in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>()), 0..30),
        ctrls in prop::collection::vec((any::<u32>(), any::<u32>()), 0..8),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        let mut g = random_dag(n, &links, &ctrls);
        // Build the type index and the order keys: every edit below must keep them right
        // (check_invariants compares them with the graph).
        let _ = g.find_nodes(Some("Relu"), None);
        let mut fresh = 0usize;
        for e in edits {
            let before = g.dump();
            let reach_before = reach(&g);
            // Constants without producers order nothing: remove_node drops their links.
            let const_sources: HashSet<String> = g
                .node_ids()
                .filter(|&id| g.node(id).unwrap().op_type() == "Const" && g.predecessors(id).next().is_none())
                .map(|id| g.node(id).unwrap().name().to_string())
                .collect();
            let mut name = || { fresh += 1; format!("new{fresh}") };
            let (result, checked): (Result<(), String>, Option<String>) = match e {
                Edit::Isolate(k, m) => match pick(&g, k) {
                    None => continue,
                    Some(id) => {
                        let victim = g.node(id).unwrap().name().to_string();
                        (g.isolate_node(id, m.as_deref()).map(|_| ()).map_err(|e| e.to_string()), Some(victim))
                    }
                },
                Edit::Remove(k) => match pick(&g, k) {
                    None => continue,
                    Some(id) => {
                        let victim = g.node(id).unwrap().name().to_string();
                        (g.remove_node(id).map(|_| ()).map_err(|e| e.to_string()), Some(victim))
                    }
                },
                Edit::Replace(k, i, o) => match pick(&g, k) {
                    None => continue,
                    Some(id) => (g.replace_node(id, op(&name(), "Rep", i, o)).map(|_| ()).map_err(|e| e.to_string()), None),
                },
                Edit::InsertBetween(k) => {
                    let l = g.links();
                    let data: Vec<_> = l.into_iter().filter(|(s, d)| !s.is_control() && !d.is_control()).collect();
                    if data.is_empty() { continue; }
                    let (s, d) = data[k as usize % data.len()];
                    (g.insert_between_data(s, d, op(&name(), "Cast", 1, 1), 0, 0).map(|_| ()).map_err(|e| e.to_string()), None)
                }
                Edit::InsertAfter(k) => match pick(&g, k) {
                    None => continue,
                    Some(id) => (g.insert_after(OutAnchor::data(id, 0), &[], op(&name(), "Cast", 1, 1), 0, 0).map(|_| ()).map_err(|e| e.to_string()), None),
                },
                Edit::InsertBefore(k) => match pick(&g, k) {
                    None => continue,
                    Some(id) => (g.insert_before(InAnchor::data(id, 0), op(&name(), "Cast", 1, 1), 0, 0).map(|_| ()).map_err(|e| e.to_string()), None),
                },
                Edit::MoveOutputs(a, b) => match (pick(&g, a), pick(&g, b)) {
                    (Some(x), Some(y)) => (g.move_output_edges(x, y).map_err(|e| e.to_string()), None),
                    _ => continue,
                },
                Edit::Fuse(a, b) => match (pick(&g, a), pick(&g, b)) {
                    (Some(x), Some(y)) => (g.fuse_nodes(&[x, y], vec![op(&name(), "Fused", 1, 1)]).map(|_| ()).map_err(|e| e.to_string()), None),
                    _ => continue,
                },
            };
            prop_assert!(g.check_invariants().is_empty(), "{:?}", g.check_invariants());
            for ty in ["Data", "Const", "Relu", "Add", "Mul", "Cast", "Rep", "Fused", "NoOp"] {
                let scan: Vec<NodeId> = g.node_ids().filter(|&id| g.node(id).unwrap().op_type() == ty).collect();
                prop_assert_eq!(g.find_nodes(Some(ty), None), scan);
            }
            match result {
                Err(_) => prop_assert_eq!(g.dump(), before),
                Ok(()) => {
                    if let Some(victim) = checked {
                        // No dependency between the other nodes is lost (constants aside:
                        // remove_node drops their links on purpose).
                        let after = reach(&g);
                        for (u, vs) in &reach_before {
                            if *u == victim || !after.contains_key(u) || const_sources.contains(u) {
                                continue;
                            }
                            for v in vs {
                                if *v == victim || !after.contains_key(v) || *v == *u {
                                    continue;
                                }
                                prop_assert!(after[u].contains(v), "{} no longer reaches {} after editing {}", u, v, victim);
                            }
                        }
                    }
                }
            }
        }
    }
}
