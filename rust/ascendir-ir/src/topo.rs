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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use slotmap::{Key, SlotMap};

use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeData, NodeId, DATA_LIKE_TYPES};

/// GE's `TopoSortingMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TopoMode {
    /// Breadth first from the sources (`kBFS` = 0); GE's training default.
    Bfs = 0,
    /// Depth first from the sources (`kDFS` = 1); GE's inference default.
    #[default]
    Dfs = 1,
    /// Reverse DFS from the sinks, smallest producer first (`kRDFS` = 2).
    Rdfs = 2,
    /// Keep the current order where legal (`kStableRDFS` = 3).
    StableRdfs = 3,
}

impl TopoMode {
    /// Every mode, in GE's numbering.
    pub const ALL: [TopoMode; 4] = [
        TopoMode::Bfs,
        TopoMode::Dfs,
        TopoMode::Rdfs,
        TopoMode::StableRdfs,
    ];

    /// The snake-case name used by the Python API (`"bfs"`, `"dfs"`, `"rdfs"`, `"stable_rdfs"`).
    pub fn name(self) -> &'static str {
        match self {
            TopoMode::Bfs => "bfs",
            TopoMode::Dfs => "dfs",
            TopoMode::Rdfs => "rdfs",
            TopoMode::StableRdfs => "stable_rdfs",
        }
    }

    /// Parse a mode name (case-insensitive; `stablerdfs` and `stable-rdfs` accepted too).
    pub fn from_name(text: &str) -> IrResult<Self> {
        let t = text.trim().to_ascii_lowercase().replace('-', "_");
        Ok(match t.as_str() {
            "bfs" => TopoMode::Bfs,
            "dfs" => TopoMode::Dfs,
            "rdfs" | "reverse_dfs_from_sinks" => TopoMode::Rdfs,
            "stable_rdfs" | "stablerdfs" => TopoMode::StableRdfs,
            _ => {
                return Err(IrError::InvalidArgument(format!(
                    "unknown topological sorting mode '{text}' (expected bfs, dfs, rdfs or stable_rdfs)"
                )))
            }
        })
    }

    /// The mode with GE's number (0..=3).
    pub fn from_value(value: i64) -> Option<Self> {
        match value {
            0 => Some(TopoMode::Bfs),
            1 => Some(TopoMode::Dfs),
            2 => Some(TopoMode::Rdfs),
            3 => Some(TopoMode::StableRdfs),
            _ => None,
        }
    }

    /// GE's option lookup: `ge.topoSortingMode` parsed like C `strtol` (leading blanks, sign,
    /// digits; no digits → 0 ⇒ BFS; the value converted to a 32-bit enum); a value outside 0..=3
    /// (or an empty / absent option) falls back to `ge.graphRunMode`: `strtol ≥ 1` (training) →
    /// BFS, otherwise DFS.
    pub fn from_ge_options(topo_sorting_mode: Option<&str>, graph_run_mode: Option<&str>) -> Self {
        if let Some(text) = topo_sorting_mode.filter(|t| !t.is_empty()) {
            // GE casts the `long` to a 32-bit enum: keep the low 32 bits, as the compiler does.
            let value = strtol(text) as i32;
            if let Some(mode) = TopoMode::from_value(i64::from(value)) {
                return mode;
            }
        }
        if graph_run_mode.is_some_and(|t| strtol(t) >= 1) {
            TopoMode::Bfs
        } else {
            TopoMode::Dfs
        }
    }
}

/// C `strtol(text, nullptr, 10)`: leading whitespace, an optional sign, then decimal digits;
/// no digits → 0; saturates at the `long` range.
pub fn strtol(text: &str) -> i64 {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let mut value: i64 = 0;
    let mut saturated = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        let d = i64::from(bytes[i] - b'0');
        if !saturated {
            match value.checked_mul(10).and_then(|v| {
                if negative {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            }) {
                Some(v) => value = v,
                None => {
                    saturated = true;
                    value = if negative { i64::MIN } else { i64::MAX };
                }
            }
        }
        i += 1;
    }
    value
}

/// `ge.exec.memoryOptimizationPolicy`: exactly `"MemoryPriority"` enables memory priority.
pub fn memory_priority_from_ge_option(policy: Option<&str>) -> bool {
    policy == Some("MemoryPriority")
}

/// How to sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TopoOptions {
    /// The mode.
    pub mode: TopoMode,
    /// DFS only: visit the first-ready successor first (GE's `dfs_reverse`).
    pub reverse: bool,
    /// Pop the ready node with the smallest (data consumers, output bytes, name) key (BFS/DFS).
    pub memory_priority: bool,
    /// Apply `DelayTopoSort` afterwards: `None` = where GE does (RDFS always; BFS/DFS with
    /// memory priority), `Some(b)` forces it on or off.
    pub delay: Option<bool>,
}

impl TopoOptions {
    /// Options for `mode` with GE's defaults otherwise.
    pub fn new(mode: TopoMode) -> Self {
        TopoOptions {
            mode,
            ..TopoOptions::default()
        }
    }

    /// Whether `DelayTopoSort` runs.
    pub fn applies_delay(&self) -> bool {
        self.delay.unwrap_or(
            (self.memory_priority && self.mode != TopoMode::StableRdfs)
                || self.mode == TopoMode::Rdfs,
        )
    }
}

/// The arena slot of a node id (dense: slots are reused and numbered from 1).
#[inline]
pub(crate) fn slot(id: NodeId) -> usize {
    (id.data().as_ffi() & 0xffff_ffff) as usize
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

    fn dfs(&mut self, g: &Graph, reverse: bool, memory_priority: bool) {
        let nodes = g.arena();
        if memory_priority && !reverse {
            let mut heap = BinaryHeap::new();
            let seeds = std::mem::take(&mut self.seeds);
            for &id in &seeds {
                heap.push(Reverse(self.mp_key(nodes, id)));
            }
            self.seeds = seeds;
            while let Some(Reverse((_, _, _, _, _, id))) = heap.pop() {
                self.out.push(id);
                let n = &nodes[id];
                let ni = self.is_ni(id);
                for peers in n.out_data.iter() {
                    for &p in peers.iter() {
                        if self.release(ni, p) {
                            heap.push(Reverse(self.mp_key(nodes, p.node)));
                        }
                    }
                }
                for &p in n.out_ctrl.iter() {
                    if self.release(ni, p) {
                        heap.push(Reverse(self.mp_key(nodes, p.node)));
                    }
                }
            }
            return;
        }
        self.stack.clear();
        self.stack.extend_from_slice(&self.seeds);
        while let Some(id) = self.stack.pop() {
            self.out.push(id);
            let n = &nodes[id];
            let ni = self.is_ni(id);
            for peers in n.out_data.iter() {
                // In-data consumers, then data→control consumers: two batches.
                for want_ctrl in [false, true] {
                    let start = self.stack.len();
                    for &p in peers.iter() {
                        if p.is_control() == want_ctrl && self.release(ni, p) {
                            self.stack.push(p.node);
                        }
                    }
                    if reverse {
                        self.stack[start..].reverse();
                    }
                }
            }
            let start = self.stack.len();
            for &p in n.out_ctrl.iter() {
                if self.release(ni, p) {
                    self.stack.push(p.node);
                }
            }
            if reverse {
                self.stack[start..].reverse();
            }
        }
    }

    /// The memory-priority key: (data consumers, output bytes, name, id). Names up to 16
    /// bytes are ordered exactly by (prefix, length); longer ones need the full name.
    #[allow(clippy::type_complexity)]
    fn mp_key<'a>(
        &self,
        nodes: &'a SlotMap<NodeId, NodeData>,
        id: NodeId,
    ) -> (u32, i64, u128, u32, &'a str, NodeId) {
        let s = slot(id);
        let (len, name) = if self.long_names {
            (0, nodes[id].name())
        } else {
            (self.name_len[s], "")
        };
        (
            self.consumers[s],
            self.bytes[s],
            self.prefix[s],
            len,
            name,
            id,
        )
    }

    fn bfs(&mut self, g: &Graph, memory_priority: bool) {
        let nodes = g.arena();
        let mut heap = BinaryHeap::new();
        self.queue.clear();
        loop {
            let id = if memory_priority {
                match heap.pop() {
                    Some(Reverse((_, _, _, _, _, id))) => id,
                    None => match self.seeds.pop() {
                        Some(id) => id,
                        None => break,
                    },
                }
            } else {
                match self.queue.pop_front() {
                    Some(id) => id,
                    None => match self.seeds.pop() {
                        Some(id) => id,
                        None => break,
                    },
                }
            };
            self.out.push(id);
            let n = &nodes[id];
            let ni = self.is_ni(id);
            self.batch.clear();
            for peers in n.out_data.iter() {
                for &p in peers.iter().filter(|p| !p.is_control()) {
                    if self.release(ni, p) {
                        self.batch.push(p.node);
                    }
                }
                for &p in peers.iter().filter(|p| p.is_control()) {
                    if self.release(ni, p) {
                        self.batch.push(p.node);
                    }
                }
            }
            for &p in n.out_ctrl.iter() {
                if self.release(ni, p) {
                    self.batch.push(p.node);
                }
            }
            // Nodes made ready by this node are queued by name.
            if self.batch.len() > 1 {
                let mut batch = std::mem::take(&mut self.batch);
                batch.sort_unstable_by(|a, b| self.name_cmp(nodes, *a, *b));
                self.batch = batch;
            }
            let batch = std::mem::take(&mut self.batch);
            for &b in &batch {
                if memory_priority {
                    heap.push(Reverse(self.mp_key(nodes, b)));
                } else {
                    self.queue.push_back(b);
                }
            }
            self.batch = batch;
        }
    }

    /// Every producer RDFS/StableRDFS follow: data producers, control→data producers and every
    /// peer of the in-control anchor; NextIteration data links excluded.
    fn producers(&self, n: &NodeData, into: &mut Vec<NodeId>) {
        into.clear();
        for p in n.in_data.iter().flatten() {
            if p.is_control() || !self.is_ni(p.node) {
                into.push(p.node);
            }
        }
        into.extend(n.in_ctrl.iter().map(|p| p.node));
    }

    /// GE's reverse DFS from the sinks; returns false when a cycle was met.
    fn rdfs(&mut self, g: &Graph) -> bool {
        let nodes = g.arena();
        self.reverse_dfs(
            g,
            |this, root| {
                // GE's sink: no in-data consumers and no peer at all on the out-control anchor
                // (a NextIteration's loop-closing data links do not count).
                let n = &nodes[root];
                n.out_ctrl.is_empty()
                    && (this.is_ni(root)
                        || n.out_data.iter().all(|p| p.iter().all(|a| a.is_control())))
            },
            |this, producers| {
                // Largest (bytes, name) first, so the smallest ends on top.
                if producers.len() > 1 {
                    producers.sort_unstable_by(|a, b| {
                        this.bytes[slot(*b)]
                            .cmp(&this.bytes[slot(*a)])
                            .then_with(|| this.name_cmp(nodes, *b, *a))
                    });
                }
            },
        )
    }

    /// Reverse DFS from every node in list order, producers by position; returns false when a
    /// cycle was met.
    fn stable_rdfs(&mut self, g: &Graph) -> bool {
        self.reverse_dfs(
            g,
            |_, _| true,
            |this, producers| {
                // Highest position first, so the lowest ends on top.
                producers.sort_unstable_by_key(|p| Reverse(this.pos[slot(*p)]));
            },
        )
    }

    /// Post-order walk over producers from the roots `is_root` picks among `self.list` (in list
    /// order), each node's unwalked producers pushed in the order `order` leaves them (the last
    /// one is walked first); appends to `self.out`. Returns false when a cycle was met.
    fn reverse_dfs(
        &mut self,
        g: &Graph,
        is_root: impl Fn(&Self, NodeId) -> bool,
        order: impl Fn(&Self, &mut Vec<NodeId>),
    ) -> bool {
        let nodes = g.arena();
        for i in 0..self.list.len() {
            self.count[slot(self.list[i])] = u32::from(NOT_WALKED);
        }
        let mut producers = std::mem::take(&mut self.batch);
        let mut ok = true;
        'outer: for i in 0..self.list.len() {
            let root = self.list[i];
            if self.count[slot(root)] != u32::from(NOT_WALKED) || !is_root(self, root) {
                continue;
            }
            self.stack.clear();
            self.stack.push(root);
            while let Some(&cur) = self.stack.last() {
                let s = slot(cur);
                if self.count[s] == u32::from(NOT_WALKED) {
                    self.count[s] = u32::from(WALKING);
                    self.producers(&nodes[cur], &mut producers);
                    if producers
                        .iter()
                        .any(|p| self.count[slot(*p)] == u32::from(WALKING))
                    {
                        ok = false;
                        break 'outer;
                    }
                    producers.retain(|p| self.count[slot(*p)] == u32::from(NOT_WALKED));
                    order(self, &mut producers);
                    producers.dedup();
                    self.stack.extend_from_slice(&producers);
                    continue;
                }
                self.stack.pop();
                if self.count[s] == u32::from(WALKING) {
                    self.count[s] = u32::from(WALKED);
                    self.out.push(cur);
                }
            }
        }
        self.batch = producers;
        ok
    }

    /// GE's `DelayTopoSort` on `self.out` (ids = positions in `self.out`).
    fn delay(&mut self, g: &Graph) {
        let nodes = g.arena();
        let n = self.out.len();
        // Positions in the sorted sequence (reuse `pos`).
        for (i, &id) in self.out.iter().enumerate() {
            self.pos[slot(id)] = i as u32;
        }
        self.chain_head.clear();
        self.chain_head.extend(0..n as u32);
        self.chain_tail.clear();
        self.chain_tail.extend(0..n as u32);
        self.chain_next.clear();
        self.chain_next.resize(n, NONE);
        self.may_delay.clear();
        self.may_delay.resize(n, true);
        let mut moved = 0usize;
        for i in 0..n {
            if !self.may_delay[i] || self.chain_head[i] == NONE {
                continue;
            }
            let single = self.chain_head[i] == self.chain_tail[i];
            let last = self.out[self.chain_tail[i] as usize];
            let ln = &nodes[last];
            if single {
                // Every connected data input must be long-lived, and there must be one.
                let mut matched = false;
                let mut all = true;
                for p in ln.in_data.iter().flatten().filter(|p| !p.is_control()) {
                    if self.flags[slot(p.node)] & FLAG_LONG_LIVED != 0 {
                        matched = true;
                    } else {
                        all = false;
                        break;
                    }
                }
                if !(all && matched) {
                    continue;
                }
            } else if ln.in_data.len() != 1 {
                continue;
            }
            // Target: the smallest position among the out-nodes (GE's `min_index == 0` quirk
            // kept). GE looks at data consumers and control consumers only; we also count the
            // data→control and control→data consumers, so that no link ends up backwards.
            let mut out_count = 0usize;
            let mut min_index: u32 = 0;
            let any = ln
                .out_data
                .iter()
                .any(|p| p.iter().any(|a| !a.is_control()))
                || ln.out_ctrl.iter().any(|a| a.is_control());
            let outs = ln
                .out_data
                .iter()
                .flat_map(|p| p.iter())
                .chain(ln.out_ctrl.iter());
            for p in outs {
                out_count += 1;
                let id = self.pos[slot(p.node)];
                if min_index == 0 || id < min_index {
                    min_index = id;
                }
            }
            if !any {
                continue;
            }
            let target = min_index as usize;
            if target < n && target > i + 1 {
                // Prepend chain i to chain target.
                let (h, t) = (self.chain_head[i], self.chain_tail[i]);
                self.chain_next[t as usize] = self.chain_head[target];
                self.chain_head[target] = h;
                if out_count > 1 {
                    self.may_delay[target] = false;
                }
                self.chain_head[i] = NONE;
                self.chain_tail[i] = NONE;
                moved += 1;
            }
        }
        if moved == 0 {
            return;
        }
        let mut result = Vec::with_capacity(n);
        for i in 0..n {
            let mut c = self.chain_head[i];
            while c != NONE {
                result.push(self.out[c as usize]);
                c = self.chain_next[c as usize];
            }
        }
        self.out = result;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_like_c() {
        assert_eq!(strtol("  12abc"), 12);
        assert_eq!(strtol("abc"), 0);
        assert_eq!(strtol("-3"), -3);
        assert_eq!(strtol("+2"), 2);
        assert_eq!(strtol("99999999999999999999999"), i64::MAX);
    }

    #[test]
    fn option_mapping() {
        use TopoMode::*;
        assert_eq!(TopoMode::from_ge_options(None, None), Dfs);
        assert_eq!(TopoMode::from_ge_options(None, Some("1")), Bfs);
        assert_eq!(TopoMode::from_ge_options(Some(""), Some("0")), Dfs);
        assert_eq!(TopoMode::from_ge_options(Some("abc"), Some("0")), Bfs);
        assert_eq!(TopoMode::from_ge_options(Some("2"), Some("1")), Rdfs);
        assert_eq!(TopoMode::from_ge_options(Some("3"), None), StableRdfs);
        assert_eq!(TopoMode::from_ge_options(Some("7"), None), Dfs);
        assert_eq!(TopoMode::from_ge_options(Some("4"), Some("2")), Bfs);
        // 2^32 + 1 truncates to 1 in GE's enum conversion.
        assert_eq!(TopoMode::from_ge_options(Some("4294967297"), None), Dfs);
        assert_eq!(TopoMode::from_ge_options(Some("4294967298"), None), Rdfs);
        assert!(memory_priority_from_ge_option(Some("MemoryPriority")));
        assert!(!memory_priority_from_ge_option(Some("memorypriority")));
    }

    #[test]
    fn delay_rule() {
        let mut o = TopoOptions::new(TopoMode::Rdfs);
        assert!(o.applies_delay());
        o.mode = TopoMode::Dfs;
        assert!(!o.applies_delay());
        o.memory_priority = true;
        assert!(o.applies_delay());
        o.mode = TopoMode::StableRdfs;
        assert!(!o.applies_delay());
        o.delay = Some(true);
        assert!(o.applies_delay());
    }

    #[test]
    fn slots_are_dense_from_one() {
        let mut g = Graph::new("g");
        let a = g.add_node(crate::OpDesc::new("a", "X")).unwrap();
        let b = g.add_node(crate::OpDesc::new("b", "X")).unwrap();
        assert_eq!(slot(a), 1);
        assert_eq!(slot(b), 2);
    }
}
