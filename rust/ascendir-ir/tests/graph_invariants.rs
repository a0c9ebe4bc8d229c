//! Property test: random sequences of add / link / unlink / replace_peer / insert / erase keep the
//! graph's invariants and agree with a simple model of the peer lists.

use std::collections::HashMap;
use std::sync::Arc;

use ascendir_ir::{Anchor, Graph, InAnchor, NodeId, OpDesc, OutAnchor, TensorDesc};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    Add {
        inputs: usize,
        outputs: usize,
    },
    Link {
        src: usize,
        out: i32,
        dst: usize,
        input: i32,
    },
    Unlink {
        pick: usize,
    },
    ReplacePeer {
        pick: usize,
        dst: usize,
        input: i32,
    },
    Insert {
        pick: usize,
    },
    Erase {
        node: usize,
    },
    UnlinkAll {
        node: usize,
        input: bool,
        index: i32,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0usize..3, 0usize..3).prop_map(|(inputs, outputs)| Step::Add { inputs, outputs }),
        (0usize..64, -1i32..3, 0usize..64, -1i32..3).prop_map(|(src, out, dst, input)| {
            Step::Link {
                src,
                out,
                dst,
                input,
            }
        }),
        (0usize..64).prop_map(|pick| Step::Unlink { pick }),
        (0usize..64, 0usize..64, -1i32..3).prop_map(|(pick, dst, input)| Step::ReplacePeer {
            pick,
            dst,
            input
        }),
        (0usize..64).prop_map(|pick| Step::Insert { pick }),
        (0usize..64).prop_map(|node| Step::Erase { node }),
        (0usize..64, any::<bool>(), -1i32..3).prop_map(|(node, input, index)| Step::UnlinkAll {
            node,
            input,
            index
        }),
    ]
}

/// The model: every out-anchor's peers and every in-anchor's peers, in link order.
#[derive(Default)]
struct Model {
    outs: HashMap<OutAnchor, Vec<InAnchor>>,
    ins: HashMap<InAnchor, Vec<OutAnchor>>,
}

impl Model {
    fn link(&mut self, s: OutAnchor, d: InAnchor) {
        self.outs.entry(s).or_default().push(d);
        self.ins.entry(d).or_default().push(s);
    }
    fn unlink(&mut self, s: OutAnchor, d: InAnchor) {
        let o = self.outs.get_mut(&s).unwrap();
        o.remove(o.iter().position(|x| *x == d).unwrap());
        let i = self.ins.get_mut(&d).unwrap();
        i.remove(i.iter().position(|x| *x == s).unwrap());
    }
    fn links(&self) -> Vec<(OutAnchor, InAnchor)> {
        let mut v: Vec<_> = self
            .outs
            .iter()
            .flat_map(|(s, ds)| ds.iter().map(|d| (*s, *d)))
            .collect();
        v.sort();
        v
    }
    fn drop_node(&mut self, id: NodeId) {
        for (s, d) in self.links() {
            if s.node == id || d.node == id {
                self.unlink(s, d);
            }
        }
    }
}

fn op(serial: &mut usize, inputs: usize, outputs: usize) -> OpDesc {
    let desc = Arc::new(TensorDesc::default());
    *serial += 1;
    let mut op = OpDesc::new(&format!("n{serial}"), "Op");
    for i in 0..inputs {
        op.add_input(&format!("x{i}"), desc.clone());
    }
    for i in 0..outputs {
        op.add_output(&format!("y{i}"), desc.clone()).unwrap();
    }
    op
}

fn check(g: &Graph, m: &Model, live: &[NodeId]) {
    assert_eq!(g.check_invariants(), Vec::<String>::new());
    let mut links = g.links();
    links.sort();
    assert_eq!(links, m.links());
    for (s, ds) in &m.outs {
        if g.contains(s.node) {
            assert_eq!(g.out_peers(*s), ds.as_slice(), "peer order of {s:?}");
        }
    }
    let order: Vec<NodeId> = g.node_ids().collect();
    let mut sorted_order = order.clone();
    sorted_order.sort();
    let mut sorted_live = live.to_vec();
    sorted_live.sort();
    assert_eq!(
        sorted_order, sorted_live,
        "order is a permutation of the live nodes"
    );
    for &id in live {
        assert!(g.node(id).is_ok());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_edits_keep_invariants(steps in proptest::collection::vec(step(), 1..80)) {
        let mut g = Graph::new("p");
        let mut m = Model::default();
        let mut live: Vec<NodeId> = Vec::new();
        let mut dead: Vec<NodeId> = Vec::new();
        let mut serial = 0usize;
        for s in steps {
            match s {
                Step::Add { inputs, outputs } => {
                    let o = op(&mut serial, inputs, outputs);
                    live.push(g.add_node(o).unwrap());
                }
                Step::Link { src, out, dst, input } if !live.is_empty() => {
                    let s = OutAnchor { node: live[src % live.len()], index: out };
                    let d = InAnchor { node: live[dst % live.len()], index: input };
                    let before = g.dump();
                    match g.link(s, d) {
                        Ok(()) => m.link(s, d),
                        Err(_) => assert_eq!(g.dump(), before, "a failed link changes nothing"),
                    }
                }
                Step::Unlink { pick } => {
                    let links = m.links();
                    if !links.is_empty() {
                        let (s, d) = links[pick % links.len()];
                        g.unlink(s, d).unwrap();
                        m.unlink(s, d);
                    }
                }
                Step::ReplacePeer { pick, dst, input } if !live.is_empty() => {
                    let links = m.links();
                    if !links.is_empty() {
                        let (s, d) = links[pick % links.len()];
                        let new = InAnchor { node: live[dst % live.len()], index: input };
                        let before = g.dump();
                        match g.replace_out_peer(s, d, new) {
                            Ok(()) => {
                                let slot = m.outs[&s].iter().position(|x| *x == d).unwrap();
                                m.outs.get_mut(&s).unwrap()[slot] = new;
                                let i = m.ins.get_mut(&d).unwrap();
                                i.remove(i.iter().position(|x| *x == s).unwrap());
                                m.ins.entry(new).or_default().push(s);
                            }
                            Err(_) => assert_eq!(g.dump(), before),
                        }
                    }
                }
                Step::Insert { pick } => {
                    let links = m.links();
                    if !links.is_empty() {
                        let (s, d) = links[pick % links.len()];
                        let id = g.add_node(op(&mut serial, 1, 1)).unwrap();
                        live.push(id);
                        let first = InAnchor { node: id, index: if d.is_control() { -1 } else { 0 } };
                        let second = OutAnchor { node: id, index: if s.is_control() { -1 } else { 0 } };
                        g.insert_between(s, d, first, second).unwrap();
                        let slot = m.outs[&s].iter().position(|x| *x == d).unwrap();
                        m.outs.get_mut(&s).unwrap()[slot] = first;
                        let islot = m.ins[&d].iter().position(|x| *x == s).unwrap();
                        m.ins.get_mut(&d).unwrap()[islot] = second;
                        m.ins.entry(first).or_default().push(s);
                        m.outs.entry(second).or_default().push(d);
                    }
                }
                Step::Erase { node } if !live.is_empty() => {
                    let id = live.remove(node % live.len());
                    g.erase_node(id).unwrap();
                    m.drop_node(id);
                    dead.push(id);
                }
                Step::UnlinkAll { node, input, index } if !live.is_empty() => {
                    let id = live[node % live.len()];
                    let a = if input { Anchor::In(InAnchor { node: id, index }) } else { Anchor::Out(OutAnchor { node: id, index }) };
                    let before = g.dump();
                    match g.unlink_all(a) {
                        Ok(()) => {
                            for (s, d) in m.links() {
                                let hit = match a { Anchor::In(i) => d == i, Anchor::Out(o) => s == o };
                                if hit { m.unlink(s, d); }
                            }
                        }
                        Err(_) => assert_eq!(g.dump(), before),
                    }
                }
                _ => {}
            }
            check(&g, &m, &live);
            for &id in &dead {
                prop_assert!(g.node(id).is_err(), "a removed node's id never resolves again");
            }
        }
    }
}
