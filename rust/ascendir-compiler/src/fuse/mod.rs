//! Stage 6, fuse: GE's CanFuse greedy pairwise clustering made deterministic.
//! Candidates are the clusters touching a tensor; legality L1–L7 (with GE's NF codes and
//! ours, AF2xxx); legal pairs are ordered by (priority class, shared bytes desc, proximity,
//! first member, second member) and committed greedily, re-checked when a side changed.

use crate::error::KindResult;
use std::collections::BinaryHeap;

use ascendir_ir::{Graph, NodeId};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::lower::Lowered;
use crate::options::CompileOptions;
use crate::symbolize::SymTable;

mod bytes;
mod reach;
mod refusal;
mod setup;
mod tables;
mod union;

pub use bytes::{saturating_bytes, tensor_bytes};
pub use refusal::Rejection;
use refusal::{Refusal, RefusalLog, Why};
use tables::{hint, narrow, widen, Csr, Positions, NONE};

/// A legal pair: (priority, -shared bytes, proximity, first, second), the two roots and
/// their versions when checked.
type Candidate = ((u8, i64, usize, usize, usize), usize, usize, u32, u32);

/// A tensor a cluster reads from outside: the tensor (its producer's arena slot, unique among
/// the graph's nodes: [`NodeId::slot`], and its output port), its producer's topological
/// position ([`narrow`]ed; out of the order: `u32::MAX`) and its bytes at the hints. 20 bytes
/// (4-byte aligned: the fields are only ever copied out): two fit inline in a cluster record.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed(4))]
struct Read {
    slot: u32,
    port: u32,
    pos: u32,
    bytes: i64,
}

impl Read {
    /// The tensor: its producer's slot and its port.
    fn tensor(&self) -> (u32, u32) {
        (self.slot, self.port)
    }
}

/// Per-cluster state: 128 bytes, two cache lines (the checks read the records of a round's
/// pairs at random: everything a check reads of a cluster but its neighbours' entries is here).
#[derive(Clone, Debug)]
struct Cluster {
    /// Lowered-node indexes, topological. The lists hold a single node's inline (most
    /// clusters the first round checks are single nodes: one cache-friendly struct each).
    members: SmallVec<[usize; 1]>,
    /// Topological positions of the first and the last member ([`narrow`]ed).
    min_ord: u32,
    max_ord: u32,
    /// Compute steps of the members (saturating at `u32::MAX`, which would take billions of
    /// members: more than fit in memory).
    steps: u32,
    /// A reduction among the members.
    reduces: bool,
    /// A plain (not norm-like) reduction among the members.
    plain_reduces: bool,
    /// Slices, concats, gathers (their operands stay outside the cluster) or transposes (their
    /// output is not read inside) among the members.
    slices: bool,
    /// Tensors read from outside the cluster.
    reads: SmallVec<[Read; 2]>,
    /// Members (lowered indexes) whose output is used outside the cluster or is a graph
    /// output.
    writes: SmallVec<[usize; 1]>,
    /// Every member point-wise over one shape (this class of shapes): the loop space is that
    /// shape's dims (no union-find needed).
    uniform: Option<u32>,
    /// How often the cluster changed (a pair's refusal holds while neither side's version
    /// moved).
    version: u32,
    /// Its class of [`LABEL_KEYS`] values (an index into the fuser's `label_classes`): fixed
    /// by its first member, which is its root (the first member of a merged cluster is the
    /// kept side's).
    label: u32,
}

/// The result of stage 6.
#[derive(Clone, Debug, Default)]
pub struct Partition {
    /// Clusters of node ids, each topological; clusters ordered by their first member.
    pub clusters: Vec<Vec<NodeId>>,
    /// Rejected pairs of the last evaluation of each pair.
    pub rejections: Vec<Rejection>,
    /// Rounds run.
    pub rounds: usize,
}

/// The legality check as a function of the graph state. `T` is what the exact check (L5/L7)
/// builds for a merged cluster; the one built for each final cluster is handed back.
#[allow(missing_debug_implementations)]
pub struct Fuser<'a, T> {
    g: &'a Graph,
    syms: &'a SymTable,
    opts: &'a CompileOptions,
    /// Check L5/L7 exactly (realize, schedule, tile) for a merged cluster with a reduction.
    pub exact: &'a dyn Fn(&[NodeId]) -> KindResult<T>,
    /// Topological position of every node, by node slot ([`NodeId::slot`]).
    pos: Positions,
    /// Topological position of every lowered node.
    lpos: Vec<u32>,
    /// Lowered index per position ([`narrow`]ed; `u32::MAX` for barriers).
    li_of_pos: Vec<u32>,
    lowered: Vec<(NodeId, &'a Lowered)>,
    /// Per position, its successors' positions (ascending, distinct).
    succ: Csr,
    /// Reachability over `succ` for the cycle check.
    reach: reach::Reach,
    /// Per lowered node, its cluster's root (every member points at it directly).
    parent: Vec<u32>,
    clusters: Vec<Option<Cluster>>,
    visit: Vec<u32>,
    epoch: u32,
    /// Per lowered node, the consumers of its output 0 (topological positions; `u32::MAX` for
    /// a graph output).
    consumers: Csr,
    /// Per class of [`LABEL_KEYS`] values ([`Cluster::label`]), its value of each key
    /// (numbered by distinct value; 0: not set).
    label_classes: Vec<[u32; 2]>,
    /// The candidate groups' members: per tensor key touched by two or more lowered nodes
    /// ([`setup::touch_groups`]), each (port, lowered node) that touches a tensor with that key.
    tensors: Csr<(u32, u32)>,
    /// Per group of `tensors`, the lowered node producing its tensors (`u32::MAX`: none).
    tensor_prod: Vec<u32>,
    /// L4's outcomes by what the union's loop space is built from, names aside
    /// ([`crate::twins::Verdicts`]): a model's repeated layers ask the same unions again.
    loop_spaces: crate::twins::Verdicts,
}

/// The attributes whose values must agree between fused clusters: GE's stream label
/// (AF2002) and vector core count (NF1025).
const LABEL_KEYS: [&str; 2] = ["_user_stream_label", "_op_vectorcore_num"];

/// How many candidate pairs ahead of its check a cluster's record is asked for.
const PREFETCH_AHEAD: usize = 8;

impl<'a, T> Fuser<'a, T> {
    /// The root of lowered node `x`'s cluster (one step: members point at their root).
    fn find(&self, x: usize) -> usize {
        self.parent[x] as usize
    }

    /// Ask the cache for cluster `r`'s record ahead of its check (a round's later side of a
    /// pair is at random in the table; its checks would otherwise wait on each miss in turn).
    fn prefetch_cluster(&self, r: usize) {
        if let Some(c) = self.clusters.get(r) {
            hint(c);
        }
    }

    /// Ask the cache for the read list of cluster `r` when held outside its record (a merged
    /// cluster's), once its record is near. (The checks read its members and writes only for
    /// a pair that passes the size checks: rarely on a large graph's later rounds.)
    fn prefetch_lists(&self, r: usize) {
        if let Some(Some(c)) = self.clusters.get(r) {
            if c.reads.spilled() {
                hint(&c.reads[..]);
            }
        }
    }

    /// Ask the cache for the table entries the checks read for cluster `r` as a pair's later
    /// side (its first member's place in the cycle check's tables; a merged cluster's first
    /// successors and reach row too: a single member's are read only when the other side ends
    /// later), once its lists are near. (Its reads' producers' roots and its members'
    /// consumers are read only for tensors within the other side's span: rarely.)
    fn prefetch_tables(&self, r: usize) {
        if let Some(Some(c)) = self.clusters.get(r) {
            let p = c.min_ord as usize;
            let many = c.members.len() > 1;
            if many {
                if let Some(s) = self.succ.starts.get(p) {
                    hint(s);
                }
            }
            self.reach.prefetch(p, many);
        }
    }

    /// At least as many as the candidate pairs of a round: a group of `l` entries pairs each
    /// with at most `min(l - 1, pair_attempts)` later ones.
    fn pairs_bound(&self) -> usize {
        let attempts = self.opts.pair_attempts;
        self.tensors
            .starts
            .windows(2)
            .map(|w| {
                let l = w[1] - w[0];
                l.saturating_mul(l.saturating_sub(1).min(attempts))
            })
            .fold(0usize, usize::saturating_add)
    }

    /// The cluster root of a node, if it is lowered.
    pub fn cluster_of(&self, id: NodeId) -> Option<usize> {
        let li = self.li_of_pos[self.pos.get(id)?];
        // (Positions are by slot: a removed node's id, its slot since reused, is not lowered.)
        if self.lowered.get(widen(li))?.0 != id {
            return None;
        }
        let r = self.root_of(li);
        (r != NONE).then_some(r)
    }

    fn cl(&self, r: usize) -> &Cluster {
        self.clusters[r]
            .as_ref()
            .expect("cluster roots hold a cluster")
    }

    /// Compute steps of members downstream of a plain reduction inside the union.
    fn epilogue_steps(&self, members: &[usize]) -> usize {
        let mut after: FxHashSet<NodeId> = FxHashSet::default();
        let mut n = 0;
        for &m in members {
            let (id, l) = self.lowered[m];
            let fed = l.inputs.iter().flatten().any(|t| after.contains(&t.0));
            if l.is_plain_reduce() || fed {
                after.insert(id);
            }
            if fed {
                n += l.compute_steps();
            }
        }
        n
    }

    /// Check L1–L7 for clusters `ra` and `rb`; Ok gives (priority, shared bytes, proximity).
    pub(crate) fn check(&mut self, ra: usize, rb: usize) -> Result<(u8, i64, usize), Refusal> {
        if ra == rb {
            return Err(("NF1001", Why::Text("the nodes are in the same cluster"), 0));
        }
        let (n_shared, shared, vertical) = self.shared(ra, rb);
        if n_shared == 0 {
            return Err(("NF1001", Why::Text("the clusters share no tensor"), 0));
        }
        if !vertical && shared < self.opts.min_shared_bytes {
            return Err(("NF1001", Why::Horizontal(shared), shared));
        }
        let (ca, cb) = (self.cl(ra), self.cl(rb));
        let steps = ca.steps as usize + cb.steps as usize;
        let (ca_reduces, cb_reduces) = (ca.reduces, cb.reduces);
        let (ca_plain, cb_plain) = (ca.plain_reduces, cb.plain_reduces);
        let slices = ca.slices || cb.slices;
        let (ca_min, ca_max) = (ca.min_ord as usize, ca.max_ord as usize);
        let (cb_min, cb_max) = (cb.min_ord as usize, cb.max_ord as usize);
        let uniform = ca.uniform.is_some() && ca.uniform == cb.uniform;
        // The union's reads: both lists less the shared tensors (see `shared`).
        let n_reads = ca.reads.len() + cb.reads.len() - n_shared;
        let n_writes = self.writes_len(ra, rb);
        let asc_nodes = steps + 2 * n_reads + 2 * n_writes;
        if asc_nodes > self.opts.max_fusion_size {
            let why = Why::Size(asc_nodes, self.opts.max_fusion_size);
            return Err(("NF1010", why, shared));
        }
        if n_reads > self.opts.max_inputs {
            let why = Why::Inputs(n_reads, self.opts.max_inputs);
            return Err(("NF1007", why, shared));
        }
        if n_writes > self.opts.max_outputs {
            let why = Why::Outputs(n_writes, self.opts.max_outputs);
            return Err(("AF2001", why, shared));
        }
        if ca.label != cb.label {
            let classes = &self.label_classes;
            let (la, lb) = (classes[ca.label as usize], classes[cb.label as usize]);
            for (k, key) in LABEL_KEYS.iter().enumerate() {
                if la[k] != lb[k] {
                    let code = if *key == "_op_vectorcore_num" {
                        "NF1025"
                    } else {
                        "AF2002"
                    };
                    return Err((code, Why::Label(key), shared));
                }
            }
        }
        // L3: kind rules.
        let norm_only = !ca_plain && !cb_plain;
        if ca_reduces && cb_reduces && !norm_only {
            let why = Why::Text("two reductions that are not both norm-like");
            return Err(("NF1030", why, shared));
        }
        if !vertical && (ca_reduces || cb_reduces) && !norm_only {
            let why = Why::Text("a reduction is never fused horizontally");
            return Err(("NF1021", why, shared));
        }
        let members = if ca_plain || cb_plain || slices || !uniform {
            self.merged_members(ra, rb)
        } else {
            Vec::new()
        };
        if ca_plain || cb_plain {
            let e = self.epilogue_steps(&members);
            if e > self.opts.max_reduce_epilogue {
                let why = Why::Epilogue(e, self.opts.max_reduce_epilogue);
                return Err(("NF1031", why, shared));
            }
        }
        // Members that read memory directly (slice, concat, gather) or write last (transpose).
        if slices {
            if let Some((code, why)) = self.view_refusal(&members, ra, rb) {
                return Err((code, Why::Text(why), shared));
            }
        }
        // L4: one loop space.
        // (Point-wise members over one shape share that shape's loop space.)
        if !uniform {
            let pairs: Vec<(NodeId, &Lowered)> = members.iter().map(|&m| self.lowered[m]).collect();
            let key = self.loop_spaces.key(self.g, &pairs, self.syms);
            let found = match self.loop_spaces.get(&key) {
                Some(found) => found.clone(),
                None => {
                    let found = crate::loopspace::has_loop_space(&pairs, self.syms);
                    self.loop_spaces.record(key, found.clone());
                    found
                }
            };
            if let Err(e) = found {
                let why = Why::LoopSpace(e.to_string().into());
                return Err(("NF1006", why, shared));
            }
        }
        // L2: no cycle through an outside node.
        match self.creates_cycle(ra, rb) {
            Some(false) => {}
            Some(true) => {
                let why = Why::Text("fusing would create a cycle through another node");
                return Err(("NF1002", why, shared));
            }
            None => return Err(("NF1002", Why::Budget, shared)),
        }
        // Reduce prologue/epilogue pairs first, then vertical pointwise chains, then
        // horizontal pairs: a reduction takes its epilogue before the chain closes (C9).
        let prio = match (vertical, ca_reduces || cb_reduces) {
            (true, true) => 0,
            (true, false) => 1,
            (false, _) => 3,
        };
        let prox = ca_min.abs_diff(cb_max).max(cb_min.abs_diff(ca_max));
        Ok((prio, shared, prox))
    }

    /// Bytes of the tensors both clusters touch.
    fn shared_bytes(&self, ra: usize, rb: usize) -> i64 {
        self.shared(ra, rb).1
    }

    /// L5 + L7: the merged cluster schedules and fits the UB — exact, for kernels with a
    /// reduction (a pure element-wise cluster schedules by construction). Run when the pair is
    /// committed; gives what the check built.
    fn check_exact(&self, ra: usize, rb: usize) -> Result<Option<T>, Refusal> {
        let (ca, cb) = (self.cl(ra), self.cl(rb));
        if !ca.reduces && !cb.reduces {
            return Ok(None);
        }
        let members = self.merged_members(ra, rb);
        let ids: Vec<NodeId> = members.iter().map(|&m| self.lowered[m].0).collect();
        (self.exact)(&ids).map(Some).map_err(|e| {
            let shared = self.shared_bytes(ra, rb);
            ("NF1009", Why::Exact(e.to_string().into()), shared)
        })
    }

    fn merge(&mut self, ra: usize, rb: usize) {
        let (keep, gone) = if ra < rb { (ra, rb) } else { (rb, ra) };
        let members = self.merged_members(keep, gone);
        let reads = self.reads(keep, gone);
        let writes = self.writes(keep, gone);
        let uniform = match (self.cl(keep).uniform, self.cl(gone).uniform) {
            (Some(x), Some(y)) if x == y => Some(x),
            _ => None,
        };
        let b = self.clusters[gone].take().expect("root");
        let a = self.clusters[keep].as_mut().expect("root");
        a.members = SmallVec::from_vec(members);
        a.reads = SmallVec::from_vec(reads);
        a.writes = SmallVec::from_vec(writes);
        a.uniform = uniform;
        a.min_ord = a.min_ord.min(b.min_ord);
        a.max_ord = a.max_ord.max(b.max_ord);
        a.steps = a.steps.saturating_add(b.steps);
        a.reduces |= b.reduces;
        a.plain_reduces |= b.plain_reduces;
        a.slices |= b.slices;
        a.version = a.version.wrapping_add(b.version).wrapping_add(1);
        // Every member points at its root directly: finds stay one step.
        let root = narrow(keep);
        for &m in &a.members {
            self.parent[m] = root;
        }
    }

    /// Record a refusal of the pair of clusters `a`, `b`: its key (the roots, which are the
    /// clusters' first members, and their versions) and where its code, reason and bytes are.
    fn reject(&self, log: &mut RefusalLog, a: usize, b: usize, why: Refusal) {
        let (va, vb) = (self.cl(a).version, self.cl(b).version);
        log.keys
            .push((narrow(a), narrow(b), va, vb, log.refusals.len()));
        log.refusals.push(why);
    }

    /// Run the rounds; the partition and, per cluster, what the exact check built for it
    /// (None for clusters without a reduction).
    pub fn run(mut self) -> (Partition, Vec<Option<T>>) {
        let mut built: FxHashMap<usize, T> = FxHashMap::default();
        let mut log = RefusalLog::default();
        let mut rounds = 0;
        let mut group: Vec<(u32, u32)> = Vec::new();
        // The groups are fixed at set-up: so is the bound on a round's pairs.
        let pairs_room = self.pairs_bound();
        for _ in 0..self.opts.max_rounds {
            rounds += 1;
            // Candidates: per tensor a cluster touches (reads from outside or produces), the
            // clusters touching it, by first member (their root: a cluster's first member's
            // position grows with it), paired within `pair_attempts` of each other. A cluster
            // touches a tensor its member produces or a member reads, except another port of
            // a member's output, which it reads from inside (port 0 is its own product).
            // Room for them up front (a hint: if the bound is more than memory allows, the
            // list grows as it fills instead).
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            let _ = pairs.try_reserve(pairs_room);
            for (gi, &prod) in self.tensor_prod.iter().enumerate() {
                let prod_root = self.root_of(prod);
                group.clear();
                for &(port, li) in self.tensors.list(gi) {
                    let r = self.find(li as usize);
                    if port == 0 || r != prod_root {
                        group.push((port, narrow(r)));
                    }
                }
                group.sort_unstable();
                group.dedup();
                // Within a group the clusters are ordered by root, so a pair has the same
                // orientation in every group it is found in: sorting dedups it.
                for run in group.chunk_by(|x, y| x.0 == y.0) {
                    for x in 0..run.len() {
                        for y in x + 1..run.len().min(x + 1 + self.opts.pair_attempts) {
                            pairs.push((run[x].1, run[y].1));
                        }
                    }
                }
            }
            tables::sort_pairs(&mut pairs, self.lowered.len());
            let mut legal: Vec<Candidate> = Vec::new();
            // A round refuses at most its pairs (each pair is checked once here; a pair the
            // commit loop refuses passed here): room for all, so the log (tens of megabytes
            // on a large graph) is never copied to grow within a round.
            log.keys.reserve(pairs.len());
            log.refusals.reserve(pairs.len());
            let refusals_before = log.keys.len();
            let mut r = 0;
            for (k, &(a32, b32)) in pairs.iter().enumerate() {
                if let Some(&(_, b)) = pairs.get(k + PREFETCH_AHEAD) {
                    self.prefetch_cluster(widen(b));
                }
                if let Some(&(_, b)) = pairs.get(k + PREFETCH_AHEAD / 2) {
                    self.prefetch_lists(widen(b));
                }
                if let Some(&(_, b)) = pairs.get(k + PREFETCH_AHEAD / 4) {
                    self.prefetch_tables(widen(b));
                }
                let (a, b) = (widen(a32), widen(b32));
                // A pair refused in an earlier round is refused again while neither side
                // changed (the check is a function of the two clusters).
                let key = (a32, b32, self.cl(a).version, self.cl(b).version);
                let at = |r: usize| {
                    let k = log.keys[r];
                    (k.0, k.1, k.2, k.3)
                };
                while r < refusals_before && at(r) < key {
                    r += 1;
                }
                if r < refusals_before && at(r) == key {
                    continue;
                }
                match self.check(a, b) {
                    Ok((prio, shared, prox)) => {
                        let (ca, cb) = (self.cl(a), self.cl(b));
                        let (ma, mb) = (ca.min_ord as usize, cb.min_ord as usize);
                        let (va, vb) = (ca.version, cb.version);
                        legal.push(((prio, -shared, prox, ma.min(mb), ma.max(mb)), a, b, va, vb));
                    }
                    Err(why) => self.reject(&mut log, a, b, why),
                }
            }
            // The keys are distinct (the last two are the pair's first members). The pairs were
            // checked in order of their roots, which is the order of the keys' last two parts: a
            // stable sort (which finds runs already in order) takes time linear in the pairs
            // when most share the first parts, as a graph of like ops does.
            legal.sort_by_key(|x| x.0);
            let mut changed = false;
            for (k, &(_, a, b, va, vb)) in legal.iter().enumerate() {
                if let Some(&(_, x, y, _, _)) = legal.get(k + PREFETCH_AHEAD) {
                    self.prefetch_cluster(x);
                    self.prefetch_cluster(y);
                }
                let (ra, rb) = (self.find(a), self.find(b));
                if ra == rb {
                    continue;
                }
                let stale =
                    ra != a || rb != b || self.cl(ra).version != va || self.cl(rb).version != vb;
                if stale {
                    if let Err(why) = self.check(ra, rb) {
                        self.reject(&mut log, ra, rb, why);
                        continue;
                    }
                }
                // The exact check last, only for pairs about to merge (its result for a
                // pair is a function of the two clusters, as the other checks').
                let made = match self.check_exact(ra, rb) {
                    Ok(t) => t,
                    Err(why) => {
                        self.reject(&mut log, ra, rb, why);
                        continue;
                    }
                };
                built.remove(&ra);
                built.remove(&rb);
                self.merge(ra, rb);
                if let Some(t) = made {
                    built.insert(self.find(ra), t);
                }
                changed = true;
            }
            if log.keys.len() > refusals_before {
                // Equal keys are refusals of the same two clusters: the same refusal. The log
                // is a few runs in order (the earlier rounds' sorted keys, this round's checks
                // in pair order, then the commit loop's): the stable sort merges runs.
                log.keys.sort();
                log.keys.dedup_by_key(|k| (k.0, k.1, k.2, k.3));
            }
            if !changed {
                break;
            }
        }
        let mut clusters: Vec<Vec<NodeId>> = Vec::new();
        let mut artifacts: Vec<Option<T>> = Vec::new();
        for li in 0..self.lowered.len() {
            if self.find(li) == li {
                artifacts.push(built.remove(&li));
                clusters.push(
                    self.cl(li)
                        .members
                        .iter()
                        .map(|&m| self.lowered[m].0)
                        .collect(),
                );
            }
        }
        let name = |m: usize| {
            self.g
                .op(self.lowered[m].0)
                .map(|o| o.name().to_string())
                .unwrap_or_default()
        };
        // The refused pairs that stayed apart, most shared bytes first (then in graph order:
        // lowered indexes ascend with the order); the report keeps the first
        // `report_rejections`, chosen with a heap of that many (a large graph refuses
        // hundreds of thousands of pairs, nearly all of them left out). A pair's latest
        // refusal is the last of its keys: a root's version only grows.
        let keys = &log.keys;
        let keep = self.opts.report_rejections.unwrap_or(usize::MAX);
        let mut kept: BinaryHeap<(i64, u32, u32, usize)> = BinaryHeap::new();
        for (i, &(a, b, _, _, at)) in keys.iter().enumerate() {
            let latest = keys.get(i + 1).is_none_or(|k| (k.0, k.1) != (a, b));
            if !latest {
                continue;
            }
            let entry = (-log.refusals[at].2, a, b, i);
            // Once the heap is full, an entry no better than its worst stays out whatever the
            // clusters: their roots (random look-ups, for most of the keys) are not asked for.
            let full = kept.len() >= keep;
            if full && kept.peek().is_some_and(|w| entry >= *w) {
                continue;
            }
            if self.find(widen(a)) == self.find(widen(b)) {
                continue;
            }
            if !full {
                kept.push(entry);
            } else if let Some(mut worst) = kept.peek_mut() {
                if entry < *worst {
                    *worst = entry;
                }
            }
        }
        let rej: Vec<Rejection> = kept
            .into_sorted_vec()
            .into_iter()
            .map(|(_, _, _, i)| {
                let (a, b, _, _, at) = keys[i];
                let (code, reason, bytes) = &log.refusals[at];
                Rejection {
                    a: name(widen(a)),
                    b: name(widen(b)),
                    code,
                    reason: reason.text(),
                    bytes: *bytes,
                }
            })
            .collect();
        (
            Partition {
                clusters,
                rejections: rej,
                rounds,
            },
            artifacts,
        )
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::{tables::Place, Cluster, Read};

    #[test]
    fn a_cluster_record_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Read>(), 20);
        assert_eq!(std::mem::size_of::<Option<Cluster>>(), 128);
    }

    #[test]
    fn a_place_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Place>(), 16);
    }
}
