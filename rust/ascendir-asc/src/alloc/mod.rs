//! UB allocation (GE's `BufQueAllocator`): GM for Data/Output/Workspace, queue or buffer for
//! every other output, lifetimes in execution order, in-place groups, block packing with
//! reuse, the VECIN queue limit fixed by `Ub2ub` copies, and a report of the result.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::axis::AxisId;
use crate::error::{AscError, AscResult};
use crate::expr::Expr;
use crate::graph::{
    AllocType, AscGraph, ComputeType, ComputeUnit, MemHardware, NodeId, OutRef, Position, Tensor,
    TmpBuffer,
};
use crate::registry::{self, OpDef, PortKind};

/// Options of [`allocate`].
#[derive(Clone, Debug)]
pub struct AllocOptions {
    /// Maximal number of VECIN queues (4 on v1 targets, 14 on v2).
    pub max_que_num: usize,
    /// Insert `Ub2ub` copies when more VECIN queues are needed.
    pub insert_ub2ub: bool,
}

impl Default for AllocOptions {
    fn default() -> AllocOptions {
        AllocOptions {
            max_que_num: 4,
            insert_ub2ub: true,
        }
    }
}

/// Kind of a UB container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerKind {
    /// A TQue (`q<id>`).
    Queue,
    /// A TBuf (`b<id>`).
    Buffer,
    /// A TBuf for temporary API buffers (`b<id>`, at least 8192 bytes).
    Tmp,
}

/// One queue / buffer block after allocation.
#[derive(Clone, Debug)]
pub struct Container {
    /// Queue, buffer or temporary buffer.
    pub kind: ContainerKind,
    /// `que.id` or `buf.id`.
    pub id: i64,
    /// VECIN, VECOUT or VECCALC.
    pub position: Position,
    /// Number of slots (double buffering = 2).
    pub buf_num: i64,
    /// Member tensors `(node, output)` with their reuse ids (queues) in allocation order.
    pub members: Vec<(NodeId, usize, i64)>,
    /// Temporary buffers `(node, index)` (Tmp containers).
    pub tmps: Vec<(NodeId, usize)>,
}

impl Container {
    /// The tiling-data name: `q<id>_size` or `b<id>_size`.
    pub fn size_name(&self) -> String {
        match self.kind {
            ContainerKind::Queue => format!("q{}_size", self.id),
            _ => format!("b{}_size", self.id),
        }
    }
}

/// What [`allocate`] did.
#[derive(Clone, Debug, Default)]
pub struct AllocReport {
    /// Every UB container.
    pub containers: Vec<Container>,
    /// Peak UB bytes as a function of the tile sizes (sum of container totals).
    pub peak_ub_bytes: Option<Expr>,
    /// Lower bound: the maximum over execution steps of the bytes of live tensors.
    pub live_bytes_lower_bound: Option<Expr>,
    /// Names of the `Ub2ub` nodes inserted to respect the queue limit.
    pub inserted: Vec<String>,
    /// Number of VECIN queues used.
    pub vecin_queues: usize,
}

const INF: usize = usize::MAX;

/// Bytes of one UB tensor as a function of the tile sizes: dtype size × extent of the outermost
/// vectorized axis with a non-zero vectorized stride × that stride, rounded up to `block`.
pub fn tensor_bytes(t: &Tensor, block: i64) -> Expr {
    let ds = crate::schedule::dtype_size(t);
    let (va, vs): (Vec<AxisId>, Vec<Expr>) =
        if t.vectorized_strides.len() == t.vectorized_axis.len() && !t.vectorized_axis.is_empty() {
            (t.vectorized_axis.clone(), t.vectorized_strides.clone())
        } else {
            let axes = if t.vectorized_axis.is_empty() {
                t.axis.clone()
            } else {
                t.vectorized_axis.clone()
            };
            let mut tmp = t.clone();
            tmp.vectorized_axis = axes.clone();
            (
                axes,
                crate::schedule::vectorized_strides(&tmp, false, block),
            )
        };
    let mut elems = Expr::int(1);
    for (k, a) in va.iter().enumerate() {
        if crate::schedule::is_const(&vs[k], 0) {
            continue;
        }
        let rep = t.repeat_of(*a);
        elems = Expr::mul(&rep, &vs[k]);
        break;
    }
    Expr::align(&Expr::mul(&elems, &Expr::int(ds)), &Expr::int(block))
}

#[derive(Clone, Debug)]
struct TInfo {
    node: NodeId,
    out: usize,
    start: usize,
    end: usize,
    reusable: bool,
    level: u8,
    position: Position,
    buf_num: i64,
    reuse_id: i64,
    group: i64,
}

fn is_gm_node(ty: &str) -> bool {
    matches!(ty, "Data" | "Output" | "Workspace")
}

/// The execution order: `exec_order` when every node has a distinct one and it is
/// topological, else insertion order when topological, else a topological order.
pub fn exec_order(g: &AscGraph) -> AscResult<Vec<NodeId>> {
    let n = g.node_count();
    let mut ids: Vec<NodeId> = g.node_ids().collect();
    let all_set = g.nodes().iter().all(|x| x.attr.sched.exec_order >= 0);
    if all_set {
        let mut seen = rustc_hash::FxHashSet::default();
        if g.nodes()
            .iter()
            .all(|x| seen.insert(x.attr.sched.exec_order))
        {
            ids.sort_by_key(|i| g.nodes()[i.index()].attr.sched.exec_order);
        }
    }
    let mut pos = vec![0usize; n];
    for (p, i) in ids.iter().enumerate() {
        pos[i.index()] = p;
    }
    let topo_ok = g.nodes().iter().enumerate().all(|(i, node)| {
        node.inputs
            .iter()
            .flatten()
            .all(|r| pos[r.node.index()] < pos[i])
    });
    if topo_ok {
        Ok(ids)
    } else {
        g.topo_order()
    }
}

fn size_level(g: &AscGraph, t: &Tensor) -> u8 {
    let mut all_full = true;
    let mut medium = false;
    for a in &t.vectorized_axis {
        let rep = match t.axis.iter().position(|x| x == a) {
            Some(p) => &t.repeats[p],
            None => continue,
        };
        let full = g
            .find_axis(*a)
            .is_some_and(|ax| Expr::static_eq(&ax.size, rep) == crate::expr::TriBool::True);
        if !full {
            all_full = false;
            if !crate::schedule::is_const(rep, 1) {
                medium = true;
            }
        }
    }
    if all_full {
        2
    } else if medium {
        1
    } else {
        0
    }
}

/// Run the allocator on `g` (any AscGraph whose compute types and units are set): writes
/// `mem`, `que` and `buf` of every output and the ids of temporary buffers, inserting `Ub2ub`
/// nodes when more VECIN queues than allowed would be needed.
pub fn allocate(g: &mut AscGraph, opts: &AllocOptions) -> AscResult<AllocReport> {
    // The temporary buffers op prototypes declare are part of the UB model (GE's allocator
    // attaches them itself): a graph allocated without `schedule` gets them here.
    for k in 0..g.nodes().len() {
        let id = NodeId(k as u32);
        if g.nodes()[k].is_compute() {
            attach_tmp_buffer(g, id);
        }
    }
    let mut inserted = Vec::new();
    for _round in 0..32 {
        let (report, over) = allocate_once(g, opts)?;
        if over.is_none() || !opts.insert_ub2ub {
            let mut report = report;
            report.inserted = inserted;
            return Ok(report);
        }
        if let Some(load) = over {
            inserted.push(insert_ub2ub(g, load)?);
        }
    }
    let (mut report, _) = allocate_once(g, opts)?;
    report.inserted = inserted;
    Ok(report)
}

/// The registered prototype of a one-input UB copy op (`Ub2ub`, `RemovePad`), or an
/// elementwise `x → y` prototype of that type when none is registered.
pub(crate) fn copy_op(ty: &str) -> Arc<OpDef> {
    registry::lookup(ty).unwrap_or_else(|| {
        Arc::new(
            OpDef::new(ty, ComputeType::Elewise)
                .input("x", PortKind::Required, "T")
                .output("y", PortKind::Required, "T")
                .dtype_var("T", &[]),
        )
    })
}

fn insert_ub2ub(g: &mut AscGraph, load: NodeId) -> AscResult<String> {
    let id = insert_after(g, load, copy_op("Ub2ub"), "ub_cpy")?;
    Ok(g.node(id)?.name.clone())
}

/// Insert a one-input node of `op` (named `<prefix>_<producer>`) right after `producer` in the
/// execution order: it takes the producer's output 0 (same view, sched axes and loop axis)
/// and every consumer of that output reads the new node instead.
pub(crate) fn insert_after(
    g: &mut AscGraph,
    producer: NodeId,
    op: Arc<OpDef>,
    prefix: &str,
) -> AscResult<NodeId> {
    let order = exec_order(g)?;
    let pnode = g.node(producer)?.clone();
    let mut name = format!("{prefix}_{}", pnode.name);
    let mut k = 0;
    while g.find_node(&name).is_some() {
        k += 1;
        name = format!("{prefix}_{}_{k}", pnode.name);
    }
    let mut node = crate::graph::Node::new(&name, op);
    node.attr.sched.axis = pnode.attr.sched.axis.clone();
    node.attr.sched.loop_axis = pnode.attr.sched.loop_axis;
    let mut t = pnode.outputs[0].clone();
    t.mem = Default::default();
    t.que = Default::default();
    t.buf = Default::default();
    node.outputs = vec![t];
    node.inputs = vec![Some(OutRef {
        node: producer,
        index: 0,
    })];
    let consumers = g.consumers(producer);
    let id = g.add_node_value(node)?;
    for (oi, c, inp) in consumers {
        if oi == 0 && c != id {
            g.nodes[c.index()].inputs[inp] = Some(OutRef { node: id, index: 0 });
        }
    }
    let mut new_order = Vec::with_capacity(order.len() + 1);
    for n in order {
        new_order.push(n);
        if n == producer {
            new_order.push(id);
        }
    }
    for (p, n) in new_order.iter().enumerate() {
        g.nodes[n.index()].attr.sched.exec_order = p as i64;
    }
    Ok(id)
}

#[allow(clippy::type_complexity)]
fn allocate_once(
    g: &mut AscGraph,
    opts: &AllocOptions,
) -> AscResult<(AllocReport, Option<NodeId>)> {
    let order = exec_order(g)?;
    let n = g.node_count();
    let mut pos = vec![0usize; n];
    for (p, i) in order.iter().enumerate() {
        pos[i.index()] = p;
    }
    // consumers per (node, out)
    let mut cons: FxHashMap<(u32, u32), Vec<NodeId>> = FxHashMap::default();
    let mut consumer_count = vec![0usize; n];
    for (ci, node) in g.nodes().iter().enumerate() {
        for r in node.inputs.iter().flatten() {
            let e = cons.entry((r.node.0, r.index)).or_default();
            if !e.contains(&NodeId(ci as u32)) {
                e.push(NodeId(ci as u32));
            }
            consumer_count[r.node.index()] += 1;
        }
    }
    let first_reduce = order
        .iter()
        .map(|i| (pos[i.index()], &g.nodes()[i.index()]))
        .filter(|(_, x)| x.attr.api.compute_type == ComputeType::Reduce)
        .map(|(p, _)| p)
        .min();
    let mut tensor_id = 0i64;
    let mut infos: Vec<TInfo> = Vec::new();
    let mut reuse_counter = 0i64;
    // VecIn reuse ids per consumer.
    let mut vecin_by_consumer: FxHashMap<u32, i64> = FxHashMap::default();
    for &nid in &order {
        let node = g.nodes[nid.index()].clone();
        let ty = node.op_type().to_string();
        let ct = node.attr.api.compute_type;
        for oi in 0..node.outputs.len() {
            let t = &mut g.nodes[nid.index()].outputs[oi];
            t.mem.tensor_id = tensor_id;
            tensor_id += 1;
            if is_gm_node(&ty) || ct == ComputeType::Store || ct == ComputeType::ReduceStore {
                t.mem.alloc_type = AllocType::Global;
                t.mem.hardware = MemHardware::Gm;
                t.mem.position = Position::Gm;
                t.mem.reuse_id = -1;
                t.que = Default::default();
                t.buf = Default::default();
                continue;
            }
            if !node.is_compute() {
                continue;
            }
            let unit = node.attr.api.unit;
            let consumers = cons.get(&(nid.0, oi as u32)).cloned().unwrap_or_default();
            let queue = matches!(ct, ComputeType::Load | ComputeType::Gather)
                || consumers
                    .iter()
                    .any(|c| g.nodes[c.index()].attr.api.unit != unit);
            let position = if queue {
                if unit == ComputeUnit::Mte2 {
                    Position::VecIn
                } else {
                    Position::VecOut
                }
            } else {
                Position::VecCalc
            };
            let t = &g.nodes[nid.index()].outputs[oi];
            let start = pos[nid.index()];
            let mut end = consumers
                .iter()
                .map(|c| pos[c.index()])
                .max()
                .unwrap_or(start);
            let scalar_like = position == Position::VecCalc
                && t.axis
                    .iter()
                    .zip(&t.repeats)
                    .filter(|(a, _)| t.vectorized_axis.contains(a))
                    .all(|(_, r)| crate::schedule::is_const(r, 1));
            let after_reduce = first_reduce.is_some_and(|fr| start >= fr);
            let reusable = !(scalar_like || after_reduce);
            if !reusable {
                end = INF;
            }
            let level = size_level(g, t);
            let buf_num = match position {
                Position::VecCalc => 1,
                _ => 2,
            };
            let reuse_id = if position == Position::VecIn && consumers.len() == 1 && reusable {
                let c = consumers[0].0;
                match vecin_by_consumer.get(&c) {
                    Some(r) => *r,
                    None => {
                        let r = reuse_counter;
                        reuse_counter += 1;
                        vecin_by_consumer.insert(c, r);
                        r
                    }
                }
            } else {
                let r = reuse_counter;
                reuse_counter += 1;
                r
            };
            infos.push(TInfo {
                node: nid,
                out: oi,
                start,
                end,
                reusable,
                level,
                position,
                buf_num,
                reuse_id,
                group: reuse_id,
            });
        }
    }
    // In-place groups.
    let idx_of = |infos: &Vec<TInfo>, node: NodeId, out: usize| {
        infos.iter().position(|t| t.node == node && t.out == out)
    };
    for k in 0..infos.len() {
        let nid = infos[k].node;
        let node = &g.nodes[nid.index()];
        if !node.op.inplace
            || node.outputs.len() != 1
            || node.inputs.is_empty()
            || !infos[k].reusable
        {
            continue;
        }
        if cons.get(&(nid.0, 0)).is_none_or(|c| c.is_empty()) {
            continue;
        }
        let out_dt = node.outputs[0].dtype;
        let mut ok = true;
        let mut cands = Vec::new();
        for r in node.inputs.iter().flatten() {
            if consumer_count[r.node.index()] != 1 {
                ok = false;
            }
            let it = &g.nodes[r.node.index()].outputs[r.index as usize];
            if it.dtype != out_dt {
                ok = false;
            }
            if let Some(j) = idx_of(&infos, r.node, r.index as usize) {
                if infos[j].reusable && infos[j].position != Position::VecIn {
                    cands.push(j);
                }
            }
        }
        if !ok || cands.is_empty() {
            continue;
        }
        let lvl = infos[k].level as i32;
        cands.sort_by_key(|&j| {
            (
                (infos[j].level as i32 - lvl).abs(),
                -(infos[j].level as i32),
            )
        });
        infos[k].group = infos[cands[0]].group;
    }
    // Groups.
    #[derive(Clone, Debug)]
    struct Group {
        members: Vec<usize>,
        start: usize,
        end: usize,
        level: u8,
        reusable: bool,
        position: Position,
        buf_num: i64,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut gid_index: FxHashMap<i64, usize> = FxHashMap::default();
    for (k, t) in infos.iter().enumerate() {
        match gid_index.get(&t.group) {
            Some(&gi) => {
                let gr = &mut groups[gi];
                gr.members.push(k);
                gr.start = gr.start.min(t.start);
                gr.end = gr.end.max(t.end);
                gr.level = gr.level.max(t.level);
                gr.reusable &= t.reusable;
                if t.position != Position::VecCalc {
                    gr.position = t.position;
                }
                gr.buf_num = gr.buf_num.max(t.buf_num);
            }
            None => {
                gid_index.insert(t.group, groups.len());
                groups.push(Group {
                    members: vec![k],
                    start: t.start,
                    end: t.end,
                    level: t.level,
                    reusable: t.reusable,
                    position: t.position,
                    buf_num: t.buf_num,
                });
            }
        }
    }
    for gr in groups.iter_mut() {
        if gr.position != Position::VecCalc {
            gr.buf_num = gr.buf_num.max(2);
        }
    }
    let overlap = |a: &Group, b: &Group| a.start <= b.end && b.start <= a.end;
    // Blocks.
    struct Block {
        kind: ContainerKind,
        id: i64,
        position: Position,
        groups: Vec<usize>,
        level: u8,
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut que_id = 0i64;
    let mut buf_id = 0i64;
    for pos_kind in [Position::VecIn, Position::VecOut] {
        let mut gl: Vec<usize> = (0..groups.len())
            .filter(|&i| groups[i].position == pos_kind)
            .collect();
        gl.sort_by_key(|&i| (groups[i].start, i));
        let mut last_used: Option<usize> = None;
        for gi in gl {
            let gr = &groups[gi];
            let mut chosen = None;
            if gr.reusable {
                let cands: Vec<usize> = (0..blocks.len())
                    .filter(|&b| {
                        blocks[b].kind == ContainerKind::Queue
                            && blocks[b].position == pos_kind
                            && blocks[b]
                                .groups
                                .iter()
                                .all(|&o| groups[o].reusable && !overlap(&groups[o], gr))
                    })
                    .collect();
                let pick = |v: &[usize]| {
                    v.iter()
                        .copied()
                        .min_by_key(|&b| ((blocks[b].level as i32 - gr.level as i32).abs(), b))
                };
                let others: Vec<usize> = cands
                    .iter()
                    .copied()
                    .filter(|b| Some(*b) != last_used)
                    .collect();
                chosen = pick(&others);
                if chosen.is_none() && cands.len() == 1 && blocks.len() > 2 {
                    chosen = Some(cands[0]);
                }
            }
            let b = match chosen {
                Some(b) => b,
                None => {
                    blocks.push(Block {
                        kind: ContainerKind::Queue,
                        id: que_id,
                        position: pos_kind,
                        groups: Vec::new(),
                        level: 0,
                    });
                    que_id += 1;
                    blocks.len() - 1
                }
            };
            blocks[b].groups.push(gi);
            blocks[b].level = blocks[b].level.max(gr.level);
            last_used = Some(b);
        }
    }
    // Temporary buffers: API-scoped ones share blocks without overlap.
    let mut tmp_blocks: Vec<(i64, Vec<(NodeId, usize)>, Vec<(usize, usize)>)> = Vec::new();
    for &nid in &order {
        let p = pos[nid.index()];
        let ntmp = g.nodes[nid.index()].attr.tmp_buffers.len();
        for k in 0..ntmp {
            let scoped = g.nodes[nid.index()].attr.tmp_buffers[k].life_time_axis_id >= 0;
            let found = if scoped {
                None
            } else {
                tmp_blocks
                    .iter()
                    .position(|(_, _, lives)| lives.iter().all(|&(s, e)| !(s <= p && p <= e)))
            };
            let bi = match found {
                Some(b) => b,
                None => {
                    tmp_blocks.push((buf_id, Vec::new(), Vec::new()));
                    buf_id += 1;
                    tmp_blocks.len() - 1
                }
            };
            let end = if scoped { INF } else { p };
            tmp_blocks[bi].1.push((nid, k));
            tmp_blocks[bi].2.push((p, end));
            let id = tmp_blocks[bi].0;
            let tb = &mut g.nodes[nid.index()].attr.tmp_buffers[k];
            tb.id = id;
            tb.mem.alloc_type = AllocType::Buffer;
            tb.mem.hardware = MemHardware::Ub;
            tb.mem.position = Position::VecCalc;
        }
    }
    // VecCalc groups.
    let mut gl: Vec<usize> = (0..groups.len())
        .filter(|&i| groups[i].position == Position::VecCalc)
        .collect();
    gl.sort_by_key(|&i| (groups[i].start, i));
    for gi in gl {
        let gr = &groups[gi];
        let mut chosen = None;
        if gr.reusable {
            chosen = (0..blocks.len())
                .filter(|&b| {
                    blocks[b].kind == ContainerKind::Buffer
                        && blocks[b]
                            .groups
                            .iter()
                            .all(|&o| groups[o].reusable && !overlap(&groups[o], gr))
                })
                .min_by_key(|&b| ((blocks[b].level as i32 - gr.level as i32).abs(), b));
        }
        let b = match chosen {
            Some(b) => b,
            None => {
                blocks.push(Block {
                    kind: ContainerKind::Buffer,
                    id: buf_id,
                    position: Position::VecCalc,
                    groups: Vec::new(),
                    level: 0,
                });
                buf_id += 1;
                blocks.len() - 1
            }
        };
        blocks[b].groups.push(gi);
        blocks[b].level = blocks[b].level.max(gr.level);
    }
    // Write back.
    let mut containers = Vec::new();
    for b in &blocks {
        let buf_num = b
            .groups
            .iter()
            .map(|&gi| groups[gi].buf_num)
            .max()
            .unwrap_or(1);
        let buf_num = if b.kind == ContainerKind::Buffer {
            1
        } else {
            buf_num
        };
        let mut members = Vec::new();
        let mut ms: Vec<usize> = b
            .groups
            .iter()
            .flat_map(|&gi| groups[gi].members.clone())
            .collect();
        ms.sort_unstable();
        for k in ms {
            let ti = &infos[k];
            let t = &mut g.nodes[ti.node.index()].outputs[ti.out];
            t.mem.hardware = MemHardware::Ub;
            t.mem.position = b.position;
            match b.kind {
                ContainerKind::Queue => {
                    t.mem.alloc_type = AllocType::Queue;
                    t.mem.reuse_id = ti.reuse_id;
                    t.que.id = b.id;
                    t.que.depth = 2;
                    t.que.buf_num = buf_num;
                    t.buf = Default::default();
                    members.push((ti.node, ti.out, ti.reuse_id));
                }
                _ => {
                    t.mem.alloc_type = AllocType::Buffer;
                    t.mem.reuse_id = -1;
                    t.buf.id = b.id;
                    t.que = Default::default();
                    members.push((ti.node, ti.out, -1));
                }
            }
        }
        containers.push(Container {
            kind: b.kind,
            id: b.id,
            position: b.position,
            buf_num,
            members,
            tmps: Vec::new(),
        });
    }
    for (id, tmps, _) in tmp_blocks {
        containers.push(Container {
            kind: ContainerKind::Tmp,
            id,
            position: Position::VecCalc,
            buf_num: 1,
            members: Vec::new(),
            tmps,
        });
    }
    // Queue limit.
    let vecin_blocks = blocks
        .iter()
        .filter(|b| b.kind == ContainerKind::Queue && b.position == Position::VecIn)
        .count();
    let mut over = None;
    if vecin_blocks > opts.max_que_num {
        // The VecIn group overlapping most others; its first Load (not yet copied).
        let vin: Vec<usize> = (0..groups.len())
            .filter(|&i| groups[i].position == Position::VecIn)
            .collect();
        let mut best: Option<(usize, usize)> = None;
        for &a in &vin {
            let c = vin
                .iter()
                .filter(|&&b| b != a && overlap(&groups[a], &groups[b]))
                .count();
            let node = infos[groups[a].members[0]].node;
            let already = cons
                .get(&(node.0, 0))
                .is_some_and(|cs| cs.iter().all(|c| g.nodes[c.index()].op_type() == "Ub2ub"));
            if already {
                continue;
            }
            if best.is_none_or(|(_, bc)| c > bc) {
                best = Some((a, c));
            }
        }
        if let Some((a, _)) = best {
            over = Some(infos[groups[a].members[0]].node);
        }
    }
    let report = build_report(g, containers, vecin_blocks, &infos, 32);
    Ok((report, over))
}

fn build_report(
    g: &AscGraph,
    containers: Vec<Container>,
    vecin: usize,
    infos: &[TInfo],
    block: i64,
) -> AllocReport {
    // Each tensor's bytes once, for the containers and the live-bytes bound.
    let bytes: Vec<Expr> = infos
        .iter()
        .map(|t| tensor_bytes(&g.nodes()[t.node.index()].outputs[t.out], block))
        .collect();
    let of: FxHashMap<(u32, usize), &Expr> = infos
        .iter()
        .zip(&bytes)
        .map(|(t, b)| ((t.node.index() as u32, t.out), b))
        .collect();
    let lookup = |n: NodeId, o: usize| -> Expr {
        match of.get(&(n.index() as u32, o)) {
            Some(b) => (*b).clone(),
            None => tensor_bytes(&g.nodes()[n.index()].outputs[o], block),
        }
    };
    let mut peak = Expr::int(0);
    for c in &containers {
        let slot = slot_bytes_with(g, c, block, &lookup);
        peak = Expr::add(&peak, &Expr::mul(&slot, &Expr::int(c.buf_num)));
    }
    // Live bytes per step. The live set only grows at a step where a tensor starts, so the
    // maximum over all steps is the maximum over those steps.
    let mut starts: Vec<usize> = infos.iter().map(|t| t.start).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut seen: rustc_hash::FxHashSet<Expr> = rustc_hash::FxHashSet::default();
    let mut lb: Option<Expr> = None;
    for &s in &starts {
        let live = Expr::sum(
            infos
                .iter()
                .zip(&bytes)
                .filter(|(t, _)| t.start <= s && s <= t.end)
                .map(|(_, b)| b),
        );
        if !seen.insert(live.clone()) {
            continue;
        }
        lb = Some(match lb {
            None => live,
            Some(x) => Expr::max(&x, &live),
        });
    }
    let lb = lb.or_else(|| Some(Expr::int(0)));
    AllocReport {
        containers,
        peak_ub_bytes: Some(peak),
        live_bytes_lower_bound: lb,
        inserted: Vec::new(),
        vecin_queues: vecin,
    }
}

/// GE's default temporary buffer of an API (`DEFAULT_TEMP_BUFFER_SIZE`).
const DEFAULT_TMP_BYTES: i64 = 8192;
/// The cap of an int32 Abs temporary buffer.
const ABS_INT32_TMP_CAP: i64 = 65312;

/// The temporary buffer a node's API needs (GE's `CalcTmpBufSize` rules), if any: Abs on
/// int32 needs `Min(65312, 4 × input elements)` bytes (the elements of its input's vectorized
/// axes), every other op that declares one its prototype's size.
pub fn tmp_buffer_size(g: &AscGraph, id: NodeId) -> Option<Expr> {
    let node = g.nodes().get(id.index())?;
    let declared = node.op.tmp_buffer.clone()?;
    if node.op_type() == "Abs" {
        if let Some(t) = g.input_tensor(id, 0) {
            if t.dtype == ascendir_ir::DataType::INT32 {
                let mut elems = Expr::int(4);
                for a in &t.vectorized_axis {
                    elems = Expr::mul(&elems, &t.repeat_of(*a));
                }
                return Some(Expr::min(&Expr::int(ABS_INT32_TMP_CAP), &elems));
            }
        }
        return Some(Expr::int(DEFAULT_TMP_BYTES));
    }
    Some(declared)
}

/// Attach the temporary buffer the node's API needs ([`tmp_buffer_size`]) unless it has one.
pub fn attach_tmp_buffer(g: &mut AscGraph, id: NodeId) {
    let Some(node) = g.nodes().get(id.index()) else {
        return;
    };
    if !node.attr.tmp_buffers.is_empty() {
        return;
    }
    if let Some(size) = tmp_buffer_size(g, id) {
        g.nodes[id.index()].attr.tmp_buffers.push(TmpBuffer {
            size,
            life_time_axis_id: -1,
            mem: Default::default(),
            id: -1,
        });
    }
}

/// Bytes of one container slot: max over its members, members of a queue sharing a reuse id
/// summed; temporary buffers at least 8192 bytes.
pub fn container_slot_bytes(g: &AscGraph, c: &Container, block: i64) -> Expr {
    slot_bytes_with(g, c, block, &|n, o| {
        tensor_bytes(&g.nodes()[n.index()].outputs[o], block)
    })
}

/// [`tensor_bytes`] of every output of one graph, each computed on first use: the kernel plan,
/// its containers' slot sizes and the tiling model of one ImplGraph read the same values.
#[derive(Debug)]
pub struct TensorBytes<'g> {
    g: &'g AscGraph,
    block: i64,
    cells: Vec<Vec<std::cell::OnceCell<Expr>>>,
}

impl<'g> TensorBytes<'g> {
    /// An empty memo of `g`'s tensor bytes, rounded to `block` bytes.
    pub fn new(g: &'g AscGraph, block: i64) -> TensorBytes<'g> {
        let cells = g
            .nodes()
            .iter()
            .map(|n| {
                n.outputs
                    .iter()
                    .map(|_| std::cell::OnceCell::new())
                    .collect()
            })
            .collect();
        TensorBytes { g, block, cells }
    }

    /// The graph.
    pub fn graph(&self) -> &'g AscGraph {
        self.g
    }

    /// The block size the byte counts are rounded to.
    pub fn block(&self) -> i64 {
        self.block
    }

    /// [`tensor_bytes`] of output `o` of node `n` (a node and output of the graph).
    pub fn get(&self, n: NodeId, o: usize) -> Expr {
        self.at(n.index(), o)
    }

    /// [`tensor_bytes`] of output `o` of the node at index `node` of [`AscGraph::nodes`].
    pub fn at(&self, node: usize, o: usize) -> Expr {
        self.cells[node][o]
            .get_or_init(|| tensor_bytes(&self.g.nodes()[node].outputs[o], self.block))
            .clone()
    }

    /// [`container_slot_bytes`] of container `c` of the graph.
    pub fn slot_bytes(&self, c: &Container) -> Expr {
        slot_bytes_with(self.g, c, self.block, &|n, o| self.get(n, o))
    }
}

/// [`container_slot_bytes`] with each member tensor's bytes from `bytes(node, output)`.
fn slot_bytes_with(
    g: &AscGraph,
    c: &Container,
    block: i64,
    bytes: &dyn Fn(NodeId, usize) -> Expr,
) -> Expr {
    if c.kind == ContainerKind::Tmp {
        let mut m = Expr::int(8192);
        for (n, k) in &c.tmps {
            if let Some(tb) = g
                .nodes()
                .get(n.index())
                .and_then(|x| x.attr.tmp_buffers.get(*k))
            {
                m = Expr::max(&m, &Expr::align(&tb.size, &Expr::int(block)));
            }
        }
        return m;
    }
    let mut sums: Vec<(i64, Expr)> = Vec::new();
    let mut items: Vec<Expr> = Vec::new();
    for (n, o, rid) in &c.members {
        let tb = bytes(*n, *o);
        if *rid >= 0 {
            match sums.iter_mut().find(|(r, _)| r == rid) {
                Some((_, e)) => *e = Expr::add(e, &tb),
                None => sums.push((*rid, tb)),
            }
        } else {
            items.push(tb);
        }
    }
    items.extend(sums.into_iter().map(|(_, e)| e));
    if items.is_empty() {
        return Expr::int(0);
    }
    Expr::max_of(items.iter())
}

/// Total bytes of a container: slot bytes × buf_num.
pub fn container_total(g: &AscGraph, c: &Container, block: i64) -> Expr {
    Expr::mul(&container_slot_bytes(g, c, block), &Expr::int(c.buf_num))
}

/// Rebuild the container list from the memory attributes written on `g` (for graphs
/// allocated earlier or edited by hand).
pub fn containers_of(g: &AscGraph) -> AscResult<Vec<Container>> {
    let mut out: Vec<Container> = Vec::new();
    let order = exec_order(g)?;
    for nid in &order {
        let node = &g.nodes()[nid.index()];
        for (oi, t) in node.outputs.iter().enumerate() {
            let (kind, id, rid) = match t.mem.alloc_type {
                AllocType::Queue => (ContainerKind::Queue, t.que.id, t.mem.reuse_id),
                AllocType::Buffer => (ContainerKind::Buffer, t.buf.id, -1),
                _ => continue,
            };
            if id < 0 {
                return Err(AscError::InvalidArgument(format!(
                    "node '{}' output {oi}: {} without an id",
                    node.name,
                    t.mem.alloc_type.name()
                )));
            }
            let bn = if kind == ContainerKind::Queue {
                t.que.buf_num.max(1)
            } else {
                1
            };
            match out.iter_mut().find(|c| c.kind == kind && c.id == id) {
                Some(c) => {
                    c.members.push((*nid, oi, rid));
                    c.buf_num = c.buf_num.max(bn);
                }
                None => out.push(Container {
                    kind,
                    id,
                    position: t.mem.position,
                    buf_num: bn,
                    members: vec![(*nid, oi, rid)],
                    tmps: Vec::new(),
                }),
            }
        }
        for (k, tb) in node.attr.tmp_buffers.iter().enumerate() {
            if tb.id < 0 {
                continue;
            }
            match out
                .iter_mut()
                .find(|c| c.kind == ContainerKind::Tmp && c.id == tb.id)
            {
                Some(c) => c.tmps.push((*nid, k)),
                None => out.push(Container {
                    kind: ContainerKind::Tmp,
                    id: tb.id,
                    position: Position::VecCalc,
                    buf_num: 1,
                    members: Vec::new(),
                    tmps: vec![(*nid, k)],
                }),
            }
        }
    }
    out.sort_by_key(|c| (c.kind != ContainerKind::Queue, c.id));
    Ok(out)
}
