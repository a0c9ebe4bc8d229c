//! Topological sorting with GE's four modes (BFS, DFS / reverse DFS, RDFS, StableRDFS), memory
//! priority, `DelayTopoSort`, id renumbering and whole-model sorting.
//!
//! Given the same acyclic graph the orders are GE's. Where GE is wrong we do better (see
//! `docs/ALGORITHMS.md`): every mode detects every cycle (data→control and control→data links
//! included) and reports one cycle; RDFS and StableRDFS also follow data→control and
//! control→data links, so their orders respect every link; a failed sort changes nothing.
//!
//! The sorter works on per-slot side tables (indexed by the arena slot of each `NodeId`), which a
//! [`TopoSorter`] keeps between calls so that repeated sorts do not allocate.

use slotmap::SlotMap;

use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeData, NodeId, DATA_LIKE_TYPES};

mod delay;
mod modes;
mod options;
#[cfg(test)]
mod tests;

pub use options::{memory_priority_from_ge_option, strtol, TopoMode, TopoOptions};

/// The arena slot of a node id ([`NodeId::slot`]).
#[inline]
pub(crate) fn slot(id: NodeId) -> usize {
    id.slot()
}

/// Op types whose sources come first in BFS/DFS seeding (`IsDataNode` plus Input/Recv/Send).
fn is_seed_data(ty: &str) -> bool {
    DATA_LIKE_TYPES.contains(&ty) || matches!(ty, "Input" | "Recv" | "Send")
}

/// `NextIteration`-like producers: their out-data → in-data links close control-flow loops
/// and are not counted as ordering dependencies (GE's in-degree rule).
pub(crate) fn is_next_iteration(ty: &str) -> bool {
    matches!(ty, "NextIteration" | "RefNextIteration")
}

/// Producers whose consumers `DelayTopoSort` may postpone (consts, variables, graph inputs).
fn is_long_lived(ty: &str) -> bool {
    matches!(
        ty,
        "Const" | "Constant" | "FileConstant" | "Variable" | "VariableV2" | "ConstPlaceHolder"
    ) || DATA_LIKE_TYPES.contains(&ty)
}

/// Σ `CalcTensorMemSize` over the outputs (-1 per unknown output, 0 per unsizable one).
pub fn output_bytes(node: &NodeData) -> i64 {
    node.op()
        .outputs()
        .iter()
        .map(|p| p.desc.mem_size().unwrap_or(0))
        .fold(0i64, |a, b| a.saturating_add(b))
}

/// `output_bytes` with a one-entry memo for single-output nodes sharing a descriptor.
fn output_bytes_memo(
    node: &NodeData,
    memo: &mut Option<(*const crate::tensor::TensorDesc, i64)>,
) -> i64 {
    let outs = node.op().outputs();
    if outs.len() == 1 {
        let ptr = std::sync::Arc::as_ptr(&outs[0].desc);
        if let Some((p, v)) = *memo {
            if p == ptr {
                return v;
            }
        }
        let v = outs[0].desc.mem_size().unwrap_or(0);
        *memo = Some((ptr, v));
        return v;
    }
    output_bytes(node)
}

/// Number of out-data → in-data links (`GetOutDataNodesSize`).
fn data_consumer_count(node: &NodeData) -> u32 {
    node.out_data
        .iter()
        .map(|p| p.iter().filter(|a| !a.is_control()).count() as u32)
        .sum()
}

const NOT_WALKED: u8 = 0;
const WALKING: u8 = 1;
const WALKED: u8 = 2;
const FLAG_NI: u8 = 1;
const FLAG_LONG_LIVED: u8 = 2;
const FLAG_SEED_DATA: u8 = 4;

/// The first 16 bytes of `name` as a big-endian number, zero-padded.
fn name_prefix(name: &str) -> u128 {
    let mut buf = [0u8; 16];
    let b = name.as_bytes();
    let k = b.len().min(16);
    buf[..k].copy_from_slice(&b[..k]);
    u128::from_be_bytes(buf)
}

/// A reusable topological sorter: its side tables survive between calls, so sorting the same
/// (or a similar) graph again does not allocate.
#[derive(Debug, Default)]
pub struct TopoSorter {
    /// Nodes in current list order.
    list: Vec<NodeId>,
    /// Per slot: position in `list`.
    pos: Vec<u32>,
    /// Per slot: remaining in-degree (Kahn) or walk status (RDFS).
    count: Vec<u32>,
    /// Per slot: `FLAG_*` bits.
    flags: Vec<u8>,
    /// Per slot: output bytes (RDFS, memory priority).
    bytes: Vec<i64>,
    /// Per slot: the first 16 bytes of the name, big-endian, zero-padded (name order: a
    /// smaller prefix means a smaller name; equal prefixes need the full names).
    prefix: Vec<u128>,
    /// Per slot: number of data consumer links (memory priority).
    consumers: Vec<u32>,
    /// Per slot: name length in bytes.
    name_len: Vec<u32>,
    /// Whether some name is longer than the 16-byte prefix (then keys carry the full name).
    long_names: bool,
    /// The emitted order.
    out: Vec<NodeId>,
    stack: Vec<NodeId>,
    batch: Vec<NodeId>,
    seeds: Vec<NodeId>,
    queue: std::collections::VecDeque<NodeId>,
    /// DelayTopoSort chains: per position the chain head/tail, per slot the chain link.
    chain_head: Vec<u32>,
    chain_tail: Vec<u32>,
    chain_next: Vec<u32>,
    may_delay: Vec<bool>,
}

const NONE: u32 = u32::MAX;

impl TopoSorter {
    /// A sorter with empty tables.
    pub fn new() -> Self {
        TopoSorter::default()
    }

    /// Index the graph in one sequential pass: list order, positions, flags, and (when
    /// `keys`) output bytes and name prefixes; size the per-slot tables.
    fn prepare(&mut self, g: &Graph, names: bool, sizes: bool, kahn: bool) {
        let nodes = g.arena();
        // Slot indexes never exceed the arena's capacity.
        let len = nodes.capacity() + 2;
        for v in [&mut self.pos, &mut self.count] {
            if v.len() < len {
                v.resize(len, 0);
            }
        }
        if self.flags.len() < len {
            self.flags.resize(len, 0);
        }
        if sizes && self.bytes.len() < len {
            self.bytes.resize(len, 0);
        }
        if names && self.prefix.len() < len {
            self.prefix.resize(len, 0);
            self.name_len.resize(len, 0);
        }
        if sizes && self.consumers.len() < len {
            self.consumers.resize(len, 0);
        }
        self.long_names = false;
        self.list.clear();
        self.out.clear();
        self.seeds.clear();
        self.batch.clear();
        // Output sizes memoised on the shared descriptor: nodes built from one `Arc` descriptor
        // are sized once.
        let mut memo: Option<(*const crate::tensor::TensorDesc, i64)> = None;
        let mut has_ni = false;
        // One pass over the list: positions, flags, keys and (Kahn) raw in-degrees and sources.
        let mut cursor = g.first();
        while let Some(id) = cursor {
            let n = &nodes[id];
            cursor = n.next;
            let s = slot(id);
            let ty = n.op_type();
            let ni = is_next_iteration(ty);
            has_ni |= ni;
            self.pos[s] = self.list.len() as u32;
            self.list.push(id);
            self.flags[s] = if ni { FLAG_NI } else { 0 }
                | if is_long_lived(ty) {
                    FLAG_LONG_LIVED
                } else {
                    0
                }
                | if is_seed_data(ty) { FLAG_SEED_DATA } else { 0 };
            if sizes {
                self.bytes[s] = output_bytes_memo(n, &mut memo);
                self.consumers[s] = data_consumer_count(n);
            }
            if names {
                let name = n.name();
                self.prefix[s] = name_prefix(name);
                self.name_len[s] = name.len() as u32;
                self.long_names |= name.len() > 16;
            }
            if kahn {
                let deg = n.in_ctrl.len() + n.in_data.iter().filter(|p| p.is_some()).count();
                self.count[s] = deg as u32;
                if deg == 0 {
                    if self.flags[s] & FLAG_SEED_DATA != 0 {
                        self.batch.push(id);
                    } else {
                        self.seeds.push(id);
                    }
                }
            }
        }
        if kahn && has_ni {
            // NextIteration data links do not count: recompute with every flag known.
            self.seeds.clear();
            self.batch.clear();
            for i in 0..self.list.len() {
                let id = self.list[i];
                let n = &nodes[id];
                let mut deg = n.in_ctrl.len() as u32;
                for p in n.in_data.iter().flatten() {
                    if p.is_control() || !self.is_ni(p.node) {
                        deg += 1;
                    }
                }
                let s = slot(id);
                self.count[s] = deg;
                if deg == 0 {
                    if self.flags[s] & FLAG_SEED_DATA != 0 {
                        self.batch.push(id);
                    } else {
                        self.seeds.push(id);
                    }
                }
            }
        }
        if kahn {
            // Seeds: [non-data sources, reverse list order] + [data sources, reverse list
            // order]; taken from the back, so data-like sources come first, in list order.
            self.seeds.reverse();
            self.batch.reverse();
            let data = std::mem::take(&mut self.batch);
            self.seeds.extend_from_slice(&data);
            self.batch = data;
            self.batch.clear();
        }
    }

    /// Name order of two nodes (prefixes first, full names on a tie).
    #[inline]
    fn name_cmp(
        &self,
        nodes: &SlotMap<NodeId, NodeData>,
        a: NodeId,
        b: NodeId,
    ) -> std::cmp::Ordering {
        self.prefix[slot(a)]
            .cmp(&self.prefix[slot(b)])
            .then_with(|| nodes[a].name().cmp(nodes[b].name()))
    }

    #[inline]
    fn is_ni(&self, id: NodeId) -> bool {
        self.flags[slot(id)] & FLAG_NI != 0
    }

    /// Decrement the in-degree of the consumer of a link from `src` and report readiness.
    #[inline]
    fn release(&mut self, src_is_ni: bool, dst: crate::anchor::InAnchor) -> bool {
        if src_is_ni && !dst.is_control() {
            return false;
        }
        let c = &mut self.count[slot(dst.node)];
        if *c == 0 {
            return false;
        }
        *c -= 1;
        *c == 0
    }

    /// The sorted order of `g` (nothing is changed). A cycle → `IrError::Cycle`.
    pub fn order(&mut self, g: &Graph, opts: &TopoOptions) -> IrResult<&[NodeId]> {
        let mp = opts.memory_priority && !opts.reverse;
        let (names, sizes) = match opts.mode {
            TopoMode::Bfs => (true, opts.memory_priority),
            TopoMode::Dfs => (mp, mp),
            TopoMode::Rdfs => (true, true),
            TopoMode::StableRdfs => (false, false),
        };
        let kahn = matches!(opts.mode, TopoMode::Bfs | TopoMode::Dfs);
        self.prepare(g, names, sizes, kahn);
        let ok = match opts.mode {
            TopoMode::Bfs => {
                self.bfs(g, opts.memory_priority);
                true
            }
            TopoMode::Dfs => {
                self.dfs(g, opts.reverse, opts.memory_priority);
                true
            }
            TopoMode::Rdfs => self.rdfs(g),
            TopoMode::StableRdfs => self.stable_rdfs(g),
        };
        if !ok || self.out.len() != self.list.len() {
            let cycle = self.find_cycle(g).unwrap_or_default();
            return Err(IrError::Cycle {
                graph: g.name().to_string(),
                nodes: cycle
                    .iter()
                    .map(|&id| g.arena()[id].name().to_string())
                    .collect(),
            });
        }
        if opts.applies_delay() {
            self.delay(g);
        }
        Ok(&self.out)
    }

    /// Sort `g` in place: the node order becomes the sorted order and every `op.id` its
    /// position. On a cycle nothing changes.
    pub fn sort(&mut self, g: &mut Graph, opts: &TopoOptions) -> IrResult<&[NodeId]> {
        self.order(g, opts)?;
        apply_order(g, &self.out);
        Ok(&self.out)
    }

    /// One cycle of `g` (in link order: each node links to the next, the last to the first),
    /// over every kind of link except NextIteration data links; `None` if acyclic.
    pub fn find_cycle(&mut self, g: &Graph) -> Option<Vec<NodeId>> {
        let nodes = g.arena();
        self.prepare(g, false, false, false);
        // Peel sources (Kahn) until only nodes on or behind cycles are left.
        self.stack.clear();
        for i in 0..self.list.len() {
            let id = self.list[i];
            let n = &nodes[id];
            let mut deg = n.in_ctrl.len() as u32;
            for p in n.in_data.iter().flatten() {
                if p.is_control() || !self.is_ni(p.node) {
                    deg += 1;
                }
            }
            self.count[slot(id)] = deg;
            if deg == 0 {
                self.stack.push(id);
            }
        }
        while let Some(id) = self.stack.pop() {
            let n = &nodes[id];
            let ni = self.is_ni(id);
            for &p in n
                .out_data
                .iter()
                .flat_map(|p| p.iter())
                .chain(n.out_ctrl.iter())
            {
                if self.release(ni, p) {
                    self.stack.push(p.node);
                }
            }
        }
        let start = *self.list.iter().find(|&&id| self.count[slot(id)] > 0)?;
        // Every remaining node has a remaining producer: walk producers until one repeats.
        // `pos` marks the step at which a node was visited (+1; 0 = not yet).
        for i in 0..self.list.len() {
            self.pos[slot(self.list[i])] = 0;
        }
        let mut path: Vec<NodeId> = Vec::new();
        let mut cur = start;
        loop {
            let s = slot(cur);
            if self.pos[s] != 0 {
                let from = (self.pos[s] - 1) as usize;
                let mut cycle: Vec<NodeId> = path[from..].to_vec();
                cycle.reverse();
                return Some(cycle);
            }
            path.push(cur);
            self.pos[s] = path.len() as u32;
            let n = &nodes[cur];
            let next = n
                .in_data
                .iter()
                .flatten()
                .filter(|p| p.is_control() || !self.is_ni(p.node))
                .chain(n.in_ctrl.iter())
                .map(|p| p.node)
                .find(|&p| self.count[slot(p)] > 0)?;
            cur = next;
        }
    }
}

/// Write `order` (a permutation of the live nodes) into the node list and `op.id`.
pub(crate) fn apply_order(g: &mut Graph, order: &[NodeId]) {
    g.relink_order(order);
    let nodes = g.arena_mut();
    for (i, &id) in order.iter().enumerate() {
        nodes[id].op.id = i as i64;
    }
}

impl Graph {
    /// `TopologicalSorting(mode)`: sort this graph only (subgraphs untouched); the node order
    /// becomes the sorted order and `op.id` the position. A cycle → `IrError::Cycle` naming one
    /// cycle, and nothing changes.
    pub fn topo_sort(&mut self, opts: &TopoOptions) -> IrResult<()> {
        TopoSorter::new().sort(self, opts).map(|_| ())
    }

    /// The order `topo_sort` would produce, without changing anything.
    pub fn topo_order(&self, opts: &TopoOptions) -> IrResult<Vec<NodeId>> {
        Ok(TopoSorter::new().order(self, opts)?.to_vec())
    }

    /// One cycle (see [`TopoSorter::find_cycle`]), or `None` when the graph is acyclic.
    pub fn find_cycle(&self) -> Option<Vec<NodeId>> {
        TopoSorter::new().find_cycle(self)
    }

    /// Whole-model `TopologicalSorting()`: sort this (root) graph, then every registered
    /// subgraph with the same options; then number `op.id` over `all_nodes()` (pre-order across
    /// the tree) and, when that walk meets every registered subgraph, reorder the subgraph list
    /// in walk order. Atomic: every graph is sorted first, and on a cycle nothing changes.
    pub fn topo_sort_all(&mut self, opts: &TopoOptions) -> IrResult<()> {
        let mut sorter = TopoSorter::new();
        let root_order = sorter.order(self, opts)?.to_vec();
        let mut sub_orders = Vec::with_capacity(self.subgraphs.len());
        for sub in &self.subgraphs {
            sub_orders.push(sorter.order(sub, opts)?.to_vec());
        }
        apply_order(self, &root_order);
        for (sub, order) in self.subgraphs.iter_mut().zip(&sub_orders) {
            apply_order(sub, order);
        }
        let (walk, graphs_met) = self.all_nodes_walk();
        for (i, &(graph, id)) in walk.iter().enumerate() {
            let g = match graph {
                None => &mut *self,
                Some(k) => &mut self.subgraphs[k],
            };
            g.arena_mut()[id].op.id = i as i64;
        }
        if graphs_met.len() == self.subgraphs.len() {
            let mut old: Vec<Option<Graph>> = std::mem::take(&mut self.subgraphs)
                .into_iter()
                .map(Some)
                .collect();
            self.subgraphs = graphs_met.iter().filter_map(|&k| old[k].take()).collect();
        }
        Ok(())
    }
}
