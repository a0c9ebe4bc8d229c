//! One allocation pass in its phases: lifetimes of the UB tensors in execution order, in-place
//! groups, groups of tensors sharing a slot, queue blocks (VECIN, VECOUT), temporary buffers,
//! buffer blocks (VECCALC), the write-back of the memory attributes, the VECIN queue limit and
//! the report.

use rustc_hash::FxHashMap;

use crate::error::AscResult;
use crate::expr::Expr;
use crate::graph::{
    AllocType, AscGraph, ComputeType, ComputeUnit, MemHardware, NodeId, Position, Tensor,
};

use super::{
    exec_order, slot_bytes_with, tensor_bytes, AllocOptions, AllocReport, Container, ContainerKind,
};

/// A lifetime end that never comes: the tensor's slot is not reused.
const INF: usize = usize::MAX;

/// Consumers of each output `(node, output index)`, each listed once.
type Consumers = FxHashMap<(u32, u32), Vec<NodeId>>;

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

/// Tensors merged into one slot (an in-place group, or one tensor alone).
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

/// One queue or buffer block: the groups packed into it.
struct Block {
    kind: ContainerKind,
    id: i64,
    position: Position,
    groups: Vec<usize>,
    level: u8,
}

/// Temporary buffer blocks: `(buffer id, (node, tmp index) members, member lifetimes)`.
type TmpBlocks = Vec<(i64, Vec<(NodeId, usize)>, Vec<(usize, usize)>)>;

fn overlap(a: &Group, b: &Group) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// One allocation pass: the report, and the Load to copy through `Ub2ub` when more VECIN
/// queues than allowed are needed.
pub(super) fn allocate_once(
    g: &mut AscGraph,
    opts: &AllocOptions,
) -> AscResult<(AllocReport, Option<NodeId>)> {
    let order = exec_order(g)?;
    let n = g.node_count();
    let mut pos = vec![0usize; n];
    for (p, i) in order.iter().enumerate() {
        pos[i.index()] = p;
    }
    let (cons, consumer_count) = consumers(g);
    let mut infos = lifetimes(g, &order, &pos, &cons);
    inplace_groups(g, &cons, &consumer_count, &mut infos);
    let groups = groups_of(&infos);
    let mut blocks = queue_blocks(&groups);
    let mut buf_id = 0i64;
    let tmp_blocks = tmp_buffers(g, &order, &pos, &mut buf_id);
    buffer_blocks(&groups, &mut blocks, &mut buf_id);
    let containers = write_back(g, &blocks, &groups, &infos, tmp_blocks);
    let vecin_blocks = blocks
        .iter()
        .filter(|b| b.kind == ContainerKind::Queue && b.position == Position::VecIn)
        .count();
    let over = if vecin_blocks > opts.max_que_num {
        load_to_copy(g, &groups, &infos, &cons)
    } else {
        None
    };
    let report = build_report(g, containers, vecin_blocks, &infos, 32);
    Ok((report, over))
}

fn loop_depth(g: &AscGraph, n: NodeId) -> Option<usize> {
    g.nodes()[n.index()].loop_depth()
}

/// The last position of the loop a value made at depth `made` is read in at position `at`
/// (deeper): the run of compute nodes deeper than `made` from `at` on. The value is read again
/// on every iteration of that loop, so it lives to the loop's end.
fn loop_end(depth_at: &[Option<usize>], at: usize, made: usize) -> usize {
    let mut end = at;
    for (j, d) in depth_at.iter().enumerate().skip(at + 1) {
        match d {
            Some(d) if *d <= made => break,
            Some(_) => end = j,
            None => {}
        }
    }
    end
}

/// Consumers per output, and the number of data inputs each producer feeds.
fn consumers(g: &AscGraph) -> (Consumers, Vec<usize>) {
    let mut cons: Consumers = FxHashMap::default();
    let mut consumer_count = vec![0usize; g.node_count()];
    for (ci, node) in g.nodes().iter().enumerate() {
        for r in node.inputs.iter().flatten() {
            let e = cons.entry((r.node.0, r.index)).or_default();
            if !e.contains(&NodeId(ci as u32)) {
                e.push(NodeId(ci as u32));
            }
            consumer_count[r.node.index()] += 1;
        }
    }
    (cons, consumer_count)
}

/// Number every output's tensor, place GM outputs, and describe every UB tensor: its lifetime
/// in execution order, reusability, size level, position, buffer count and reuse id.
fn lifetimes(g: &mut AscGraph, order: &[NodeId], pos: &[usize], cons: &Consumers) -> Vec<TInfo> {
    let first_reduce = order
        .iter()
        .map(|i| (pos[i.index()], &g.nodes()[i.index()]))
        .filter(|(_, x)| x.attr.api.compute_type == ComputeType::Reduce)
        .map(|(p, _)| p)
        .min();
    let depth_at: Vec<Option<usize>> = order.iter().map(|n| loop_depth(g, *n)).collect();
    let mut tensor_id = 0i64;
    let mut infos: Vec<TInfo> = Vec::new();
    let mut reuse_counter = 0i64;
    // VecIn reuse ids per consumer.
    let mut vecin_by_consumer: FxHashMap<u32, i64> = FxHashMap::default();
    for &nid in order {
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
            let made = depth_at[start];
            let mut end = consumers
                .iter()
                .map(|c| {
                    let at = pos[c.index()];
                    match (made, depth_at[at]) {
                        (Some(m), Some(d)) if d > m => loop_end(&depth_at, at, m),
                        _ => at,
                    }
                })
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
    infos
}

/// Merge an in-place op's output into the group of one of its inputs (the one closest in size
/// level) when every input is consumed once, has the output's dtype and is reusable.
fn inplace_groups(g: &AscGraph, cons: &Consumers, consumer_count: &[usize], infos: &mut [TInfo]) {
    let idx_of = |infos: &[TInfo], node: NodeId, out: usize| {
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
        let depth = loop_depth(g, nid);
        let mut ok = true;
        let mut cands = Vec::new();
        for r in node.inputs.iter().flatten() {
            if consumer_count[r.node.index()] != 1 {
                ok = false;
            }
            let it = &g.nodes[r.node.index()].outputs[r.index as usize];
            // A value made outside this node's loop is read again on the next iteration.
            let outside = matches!((loop_depth(g, r.node), depth), (Some(a), Some(b)) if a < b);
            if it.dtype != out_dt || outside {
                ok = false;
            }
            if let Some(j) = idx_of(infos, r.node, r.index as usize) {
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
}

/// The groups of the tensors, in order of first member: span, level, reusability, position and
/// buffer count over the members (queues are double-buffered).
fn groups_of(infos: &[TInfo]) -> Vec<Group> {
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
    groups
}

/// Pack the VECIN and VECOUT groups into queue blocks: a reusable group joins the block of
/// closest size level whose groups are reusable and do not overlap it (not the block used last
/// unless it is the only candidate among more than two blocks).
fn queue_blocks(groups: &[Group]) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut que_id = 0i64;
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
    blocks
}

/// Temporary buffers: API-scoped ones get a block each, the others share blocks whose members'
/// steps do not include theirs. Writes each buffer's id and memory; `buf_id` is the next id.
fn tmp_buffers(g: &mut AscGraph, order: &[NodeId], pos: &[usize], buf_id: &mut i64) -> TmpBlocks {
    let mut tmp_blocks: TmpBlocks = Vec::new();
    for &nid in order {
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
                    tmp_blocks.push((*buf_id, Vec::new(), Vec::new()));
                    *buf_id += 1;
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
    tmp_blocks
}

/// Pack the VECCALC groups into buffer blocks (closest size level among the blocks whose groups
/// are reusable and do not overlap); `buf_id` is the next buffer id.
fn buffer_blocks(groups: &[Group], blocks: &mut Vec<Block>, buf_id: &mut i64) {
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
                    id: *buf_id,
                    position: Position::VecCalc,
                    groups: Vec::new(),
                    level: 0,
                });
                *buf_id += 1;
                blocks.len() - 1
            }
        };
        blocks[b].groups.push(gi);
        blocks[b].level = blocks[b].level.max(gr.level);
    }
}

/// Write every member's memory, queue and buffer attributes and list the containers (queue and
/// buffer blocks, then temporary buffers).
fn write_back(
    g: &mut AscGraph,
    blocks: &[Block],
    groups: &[Group],
    infos: &[TInfo],
    tmp_blocks: TmpBlocks,
) -> Vec<Container> {
    let mut containers = Vec::new();
    for b in blocks {
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
    containers
}

/// Over the VECIN queue limit: the first Load of the VECIN group overlapping most others whose
/// output is not yet copied through `Ub2ub`.
fn load_to_copy(
    g: &AscGraph,
    groups: &[Group],
    infos: &[TInfo],
    cons: &Consumers,
) -> Option<NodeId> {
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
    best.map(|(a, _)| infos[groups[a].members[0]].node)
}

/// The report: containers, the UB peak (slot bytes × buffer count summed) and the largest
/// bytes live at one step.
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
