//! Property tests of the sorter: on random DAGs every mode returns a permutation in which every
//! link goes forward, and the orders equal those of a literal, unoptimised transcription of
//! GE's algorithms (maps, ordered sets, vectors — as GE's sources do it).

mod common;

use std::collections::{BTreeMap, HashMap};

use ascendir_ir::topo::output_bytes;
use ascendir_ir::{Graph, InAnchor, NodeId, OutAnchor, TopoMode, TopoOptions};
use common::*;
use proptest::prelude::*;

/// A random graph description: per node (type code, inputs, outputs, shape code) and links.
#[derive(Clone, Debug)]
struct Spec {
    nodes: Vec<(u8, usize, usize, u8)>,
    data_links: Vec<(usize, usize, usize, usize)>,
    ctrl_links: Vec<(usize, usize)>,
    d2c_links: Vec<(usize, usize, usize)>,
    perm: Vec<usize>,
}

fn spec(max_nodes: usize, exotic: bool) -> impl Strategy<Value = Spec> {
    (1..max_nodes).prop_flat_map(move |n| {
        let nodes = prop::collection::vec((0u8..6, 0usize..4, 1usize..3, 0u8..4), n);
        let picks = prop::collection::vec(
            (any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>()),
            0..n * 3,
        );
        let ctrl = prop::collection::vec((any::<u32>(), any::<u32>()), 0..n);
        let d2c = prop::collection::vec(
            (any::<u32>(), any::<u32>(), any::<u32>()),
            0..if exotic { n } else { 1 },
        );
        let perm = Just((0..n).collect::<Vec<_>>()).prop_shuffle();
        (nodes, picks, ctrl, d2c, perm).prop_map(move |(nodes, picks, ctrl, d2c, perm)| {
            let n = nodes.len();
            let mut data_links = Vec::new();
            for (a, b, c, d) in picks {
                if n < 2 {
                    break;
                }
                let dst = 1 + (a as usize) % (n - 1);
                let src = (b as usize) % dst;
                let n_out = nodes[src].2;
                let n_in = nodes[dst].1;
                if n_in == 0 {
                    continue;
                }
                data_links.push((src, (c as usize) % n_out, dst, (d as usize) % n_in));
            }
            let ctrl_links = ctrl
                .into_iter()
                .filter(|_| n >= 2)
                .map(|(a, b)| {
                    let dst = 1 + (a as usize) % (n - 1);
                    ((b as usize) % dst, dst)
                })
                .collect();
            let d2c_links = if exotic {
                d2c.into_iter()
                    .filter(|_| n >= 2)
                    .map(|(a, b, c)| {
                        let dst = 1 + (a as usize) % (n - 1);
                        let src = (b as usize) % dst;
                        (src, (c as usize) % nodes[src].2, dst)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            Spec {
                nodes,
                data_links,
                ctrl_links,
                d2c_links,
                perm,
            }
        })
    })
}

const TYPES: [&str; 6] = ["Data", "Const", "Relu", "Add", "Variable", "Cast"];
const SHAPES: [&[i64]; 4] = [&[1, 4], &[1, 64], &[8, 8], &[2]];

fn build(sp: &Spec) -> Graph {
    let mut g = Graph::new("rand");
    let mut ids = Vec::new();
    for (i, &(t, n_in, n_out, sh)) in sp.nodes.iter().enumerate() {
        let ty = TYPES[t as usize];
        let n_in = if ty == "Data" || ty == "Const" || ty == "Variable" {
            0
        } else {
            n_in
        };
        ids.push(
            g.add_node(op_sized(
                // Long names share a 16-byte prefix, so the name order needs the full names.
                // (Only in graphs of even size: odd ones keep every name short.)
                &if i % 3 == 0 && sp.nodes.len() % 2 == 0 {
                    format!("model/layer_blocks/n{:02}_{}", (i * 7) % 13, i)
                } else {
                    format!("n{:02}_{}", (i * 7) % 13, i)
                },
                ty,
                n_in,
                n_out,
                SHAPES[sh as usize],
            ))
            .unwrap(),
        );
    }
    for &(s, o, d, i) in &sp.data_links {
        let _ = g.link(OutAnchor::data(ids[s], o), InAnchor::data(ids[d], i));
    }
    for &(s, d) in &sp.ctrl_links {
        g.link(OutAnchor::control(ids[s]), InAnchor::control(ids[d]))
            .unwrap();
    }
    for &(s, o, d) in &sp.d2c_links {
        g.link(OutAnchor::data(ids[s], o), InAnchor::control(ids[d]))
            .unwrap();
    }
    let order: Vec<NodeId> = sp.perm.iter().map(|&p| ids[p]).collect();
    g.set_order(&order).unwrap();
    g
}

// ---------------------------------------------------------------------------------------------
// A literal transcription of GE's sorting code, for comparison.

struct Ge<'a> {
    g: &'a Graph,
    list: Vec<NodeId>,
}

impl<'a> Ge<'a> {
    fn new(g: &'a Graph) -> Self {
        Ge {
            g,
            list: g.node_ids().collect(),
        }
    }
    fn ty(&self, id: NodeId) -> &str {
        self.g.node(id).unwrap().op_type()
    }
    fn name(&self, id: NodeId) -> String {
        self.g.node(id).unwrap().name().to_string()
    }
    fn in_edge_size(&self, id: NodeId) -> u32 {
        let n = self.g.node(id).unwrap();
        let mut size = 0u32;
        for i in 0..n.num_in_data() {
            if let Some(p) = n.in_data_peer(i) {
                size += 1;
                if !p.is_control()
                    && matches!(self.ty(p.node), "NextIteration" | "RefNextIteration")
                {
                    size -= 1;
                }
            }
        }
        size + n.in_control_peers().len() as u32
    }
    fn sort_nodes(&self, counts: &mut HashMap<NodeId, u32>) -> Vec<NodeId> {
        let mut stack = Vec::new();
        let mut spec = 0;
        for &id in &self.list {
            let c = self.in_edge_size(id);
            counts.insert(id, c);
            if c == 0 {
                let t = self.ty(id);
                let data = matches!(
                    t,
                    "Data" | "RefData" | "AippData" | "AnnData" | "Input" | "Recv" | "Send"
                );
                if !data {
                    stack.insert(0, id);
                    spec += 1;
                } else {
                    stack.insert(spec, id);
                }
            }
        }
        stack
    }
    fn mp_key(&self, id: NodeId) -> (u32, i64, String) {
        let n = self.g.node(id).unwrap();
        let consumers = (0..n.num_out_data())
            .map(|i| {
                n.out_data_peers(i)
                    .iter()
                    .filter(|p| !p.is_control())
                    .count() as u32
            })
            .sum();
        (consumers, output_bytes(n), self.name(id))
    }
    fn dec(counts: &mut HashMap<NodeId, u32>, id: NodeId, out: &mut Vec<NodeId>) {
        let c = counts.get_mut(&id).unwrap();
        *c = c.wrapping_sub(1);
        if *c == 0 {
            out.push(id);
        }
    }
    fn dfs(&self, reverse: bool, mp: bool) -> Vec<NodeId> {
        let mut counts = HashMap::new();
        let seeds = self.sort_nodes(&mut counts);
        let use_set = mp && !reverse;
        let mut stack: Vec<NodeId> = Vec::new();
        let mut set: BTreeMap<(u32, i64, String), NodeId> = BTreeMap::new();
        let push = |stack: &mut Vec<NodeId>, set: &mut BTreeMap<_, _>, id: NodeId| {
            if use_set {
                set.insert(self.mp_key(id), id);
            } else {
                stack.push(id);
            }
        };
        for &s in &seeds {
            push(&mut stack, &mut set, s);
        }
        let mut out = Vec::new();
        loop {
            let id = if use_set {
                match set.pop_first() {
                    Some((_, id)) => id,
                    None => break,
                }
            } else {
                match stack.pop() {
                    Some(id) => id,
                    None => break,
                }
            };
            out.push(id);
            let n = self.g.node(id).unwrap();
            let flush =
                |tmp: &mut Vec<NodeId>, stack: &mut Vec<NodeId>, set: &mut BTreeMap<_, _>| {
                    if reverse {
                        tmp.reverse();
                    }
                    for &t in tmp.iter() {
                        push(stack, set, t);
                    }
                    tmp.clear();
                };
            let mut tmp = Vec::new();
            for i in 0..n.num_out_data() {
                for p in n.out_data_peers(i).iter().filter(|p| !p.is_control()) {
                    Self::dec(&mut counts, p.node, &mut tmp);
                }
                flush(&mut tmp, &mut stack, &mut set);
                for p in n.out_data_peers(i).iter().filter(|p| p.is_control()) {
                    Self::dec(&mut counts, p.node, &mut tmp);
                }
                flush(&mut tmp, &mut stack, &mut set);
            }
            for p in n.out_control_peers() {
                Self::dec(&mut counts, p.node, &mut tmp);
            }
            flush(&mut tmp, &mut stack, &mut set);
        }
        out
    }
    fn bfs(&self, mp: bool) -> Vec<NodeId> {
        let mut counts = HashMap::new();
        let mut seeds = self.sort_nodes(&mut counts);
        let mut queue: Vec<NodeId> = Vec::new();
        let mut set: BTreeMap<(u32, i64, String), NodeId> = BTreeMap::new();
        let mut out = Vec::new();
        loop {
            let empty = if mp { set.is_empty() } else { queue.is_empty() };
            let id = if !empty {
                if mp {
                    set.pop_first().unwrap().1
                } else {
                    queue.pop().unwrap()
                }
            } else {
                match seeds.pop() {
                    Some(id) => id,
                    None => break,
                }
            };
            out.push(id);
            let n = self.g.node(id).unwrap();
            let mut ready = Vec::new();
            for i in 0..n.num_out_data() {
                for p in n.out_data_peers(i).iter().filter(|p| !p.is_control()) {
                    Self::dec(&mut counts, p.node, &mut ready);
                }
                for p in n.out_data_peers(i).iter().filter(|p| p.is_control()) {
                    Self::dec(&mut counts, p.node, &mut ready);
                }
            }
            for p in n.out_control_peers() {
                Self::dec(&mut counts, p.node, &mut ready);
            }
            let by_name: BTreeMap<String, NodeId> =
                ready.into_iter().map(|r| (self.name(r), r)).collect();
            for (_, r) in by_name {
                if mp {
                    set.insert(self.mp_key(r), r);
                } else {
                    queue.insert(0, r);
                }
            }
        }
        out
    }
    fn in_nodes(&self, id: NodeId) -> Vec<NodeId> {
        let n = self.g.node(id).unwrap();
        let mut v: Vec<NodeId> = (0..n.num_in_data())
            .filter_map(|i| n.in_data_peer(i))
            .filter(|p| !p.is_control())
            .map(|p| p.node)
            .collect();
        v.extend(
            n.in_control_peers()
                .iter()
                .filter(|p| p.is_control())
                .map(|p| p.node),
        );
        v
    }
    fn rdfs(&self) -> Vec<NodeId> {
        let mut status: HashMap<NodeId, u8> = self.list.iter().map(|&id| (id, 0)).collect();
        let mut out = Vec::new();
        for &node in &self.list {
            let n = self.g.node(node).unwrap();
            let out_size: usize = (0..n.num_out_data())
                .map(|i| {
                    n.out_data_peers(i)
                        .iter()
                        .filter(|p| !p.is_control())
                        .count()
                })
                .sum::<usize>()
                + n.out_control_peers().len();
            if out_size > 0 {
                continue;
            }
            let mut stack = vec![node];
            while let Some(&cur) = stack.last() {
                if status[&cur] == 0 {
                    status.insert(cur, 1);
                    let mut ins = self.in_nodes(cur);
                    // std::set ordered by NodeCmp: larger size first, then larger name.
                    ins.sort_by(|a, b| {
                        let (sa, sb) = (
                            output_bytes(self.g.node(*a).unwrap()),
                            output_bytes(self.g.node(*b).unwrap()),
                        );
                        sb.cmp(&sa).then_with(|| self.name(*b).cmp(&self.name(*a)))
                    });
                    ins.dedup();
                    stack.extend(ins);
                    continue;
                }
                stack.pop();
                if status[&cur] == 1 {
                    status.insert(cur, 2);
                    out.push(cur);
                }
            }
        }
        out
    }
    fn stable_rdfs(&self) -> Vec<NodeId> {
        let pos: HashMap<NodeId, usize> = self
            .list
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i))
            .collect();
        let mut status: HashMap<NodeId, u8> = self.list.iter().map(|&id| (id, 0)).collect();
        let mut out = Vec::new();
        for &node in &self.list {
            if status[&node] == 2 {
                continue;
            }
            let mut stack = vec![node];
            while let Some(&cur) = stack.last() {
                if status[&cur] == 0 {
                    status.insert(cur, 1);
                    let mut ins: Vec<NodeId> = self
                        .in_nodes(cur)
                        .into_iter()
                        .filter(|i| status[i] == 0)
                        .collect();
                    ins.sort_by_key(|i| std::cmp::Reverse(pos[i]));
                    ins.dedup();
                    stack.extend(ins);
                } else {
                    stack.pop();
                    if status[&cur] != 1 {
                        continue;
                    }
                    status.insert(cur, 2);
                    out.push(cur);
                }
            }
        }
        out
    }
    fn long_lived_inputs(&self, id: NodeId) -> bool {
        let n = self.g.node(id).unwrap();
        let mut matched = false;
        for i in 0..n.num_in_data() {
            let Some(p) = n.in_data_peer(i) else { continue };
            if p.is_control() {
                continue;
            }
            let t = self.ty(p.node);
            let ok = matches!(
                t,
                "Const"
                    | "Constant"
                    | "FileConstant"
                    | "Variable"
                    | "VariableV2"
                    | "Data"
                    | "RefData"
                    | "AippData"
                    | "AnnData"
                    | "ConstPlaceHolder"
            );
            if !ok {
                return false;
            }
            matched = true;
        }
        matched
    }
    fn delay(&self, nodes: Vec<NodeId>) -> Vec<NodeId> {
        let ids: HashMap<NodeId, usize> =
            nodes.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let mut slots: Vec<(bool, Vec<NodeId>)> = nodes.iter().map(|&n| (true, vec![n])).collect();
        let mut count = 0;
        for i in 0..slots.len() {
            if !slots[i].0 || slots[i].1.is_empty() {
                continue;
            }
            let chain = slots[i].1.clone();
            if chain.len() == 1 && !self.long_lived_inputs(chain[0]) {
                continue;
            }
            let last = *chain.last().unwrap();
            let ln = self.g.node(last).unwrap();
            if chain.len() != 1 && ln.num_in_data() != 1 {
                continue;
            }
            let mut outs: Vec<NodeId> = (0..ln.num_out_data())
                .flat_map(|k| {
                    ln.out_data_peers(k)
                        .iter()
                        .filter(|p| !p.is_control())
                        .map(|p| p.node)
                        .collect::<Vec<_>>()
                })
                .collect();
            outs.extend(
                ln.out_control_peers()
                    .iter()
                    .filter(|p| p.is_control())
                    .map(|p| p.node),
            );
            if outs.is_empty() {
                continue;
            }
            let mut min_index = 0usize;
            for o in &outs {
                if min_index == 0 || ids[o] < min_index {
                    min_index = ids[o];
                }
            }
            if min_index < slots.len() && min_index > i + 1 {
                let mut moved = chain.clone();
                moved.extend(slots[min_index].1.iter().copied());
                slots[min_index].1 = moved;
                if outs.len() > 1 {
                    slots[min_index].0 = false;
                }
                slots[i].1.clear();
                count += 1;
            }
        }
        if count == 0 {
            return nodes;
        }
        slots.into_iter().flat_map(|s| s.1).collect()
    }
    fn sort(&self, o: &TopoOptions) -> Vec<NodeId> {
        let v = match o.mode {
            TopoMode::Bfs => self.bfs(o.memory_priority),
            TopoMode::Dfs => self.dfs(o.reverse, o.memory_priority),
            TopoMode::Rdfs => self.rdfs(),
            TopoMode::StableRdfs => self.stable_rdfs(),
        };
        if (o.memory_priority && o.mode != TopoMode::StableRdfs) || o.mode == TopoMode::Rdfs {
            self.delay(v)
        } else {
            v
        }
    }
}

fn all_options() -> Vec<TopoOptions> {
    let mut v = Vec::new();
    for mode in TopoMode::ALL {
        for reverse in [false, true] {
            for memory_priority in [false, true] {
                if reverse && mode != TopoMode::Dfs {
                    continue;
                }
                v.push(TopoOptions {
                    mode,
                    reverse,
                    memory_priority,
                    delay: None,
                });
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    /// Same order as GE on graphs with data and control links.
    #[test]
    fn equals_ge_transcription(sp in spec(30, false)) {
        let g = build(&sp);
        prop_assert!(g.check_invariants().is_empty());
        for o in all_options() {
            let ours = g.topo_order(&o).unwrap();
            let ge = Ge::new(&g).sort(&o);
            prop_assert_eq!(names_of(&g, &ours), names_of(&g, &ge), "{:?}", o);
        }
    }

    /// With data→control links too: BFS/DFS still equal GE; every mode is a legal permutation.
    #[test]
    fn every_mode_is_a_legal_permutation(sp in spec(40, true)) {
        let g = build(&sp);
        for o in all_options() {
            let mut h = g.clone();
            h.topo_sort(&o).unwrap();
            prop_assert_eq!(h.len(), g.len());
            prop_assert!(h.check_invariants().is_empty());
            prop_assert!(respects_links(&h), "{:?}: {:?}", o, names(&h));
            for (i, id) in h.node_ids().enumerate() {
                prop_assert_eq!(h.node(id).unwrap().op().id, i as i64);
            }
            // GE's delay pass ignores data→control consumers (and may then break those
            // links); without it BFS and DFS are GE's exactly.
            if matches!(o.mode, TopoMode::Bfs | TopoMode::Dfs) && (!o.applies_delay() || sp.d2c_links.is_empty()) {
                let ge = Ge::new(&g).sort(&o);
                prop_assert_eq!(names(&h), names_of(&g, &ge));
            }
        }
    }

    /// Adding one backward link makes every mode report a cycle whose links exist.
    #[test]
    fn cycles_found_and_graph_unchanged(sp in spec(25, true), back in any::<u32>(), kind in 0u8..3) {
        let mut g = build(&sp);
        // Close an existing link src -> dst with a link back from dst to src.
        let links = g.links();
        if links.is_empty() { return Ok(()); }
        let (src, dst) = links[(back as usize) % links.len()];
        match kind {
            0 => g.link(OutAnchor::control(dst.node), InAnchor::control(src.node)).unwrap(),
            1 if g.node(dst.node).unwrap().num_out_data() > 0 => g.link(OutAnchor::data(dst.node, 0), InAnchor::control(src.node)).unwrap(),
            _ => g.link(OutAnchor::control(dst.node), InAnchor::control(src.node)).unwrap(),
        }
        let cycle = g.find_cycle().expect("a cycle");
        // Every consecutive pair of the cycle is linked.
        for i in 0..cycle.len() {
            let (a, b) = (cycle[i], cycle[(i + 1) % cycle.len()]);
            prop_assert!(g.successors(a).any(|s| s == b));
        }
        let before = g.dump();
        for o in all_options() {
            let err = g.topo_sort(&o).unwrap_err();
            match err {
                ascendir_ir::IrError::Cycle { nodes, .. } => {
                    prop_assert!(!nodes.is_empty());
                    for i in 0..nodes.len() {
                        let a = g.find(&nodes[i]).unwrap();
                        let b = g.find(&nodes[(i + 1) % nodes.len()]).unwrap();
                        prop_assert!(g.successors(a).any(|s| s == b));
                    }
                }
                other => prop_assert!(false, "{:?}", other),
            }
            prop_assert_eq!(g.dump(), before.clone());
        }
    }
}
