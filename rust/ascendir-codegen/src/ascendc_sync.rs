//! Queue events and synchronisation of an Ascend C kernel function ([`super::ascendc`]),
//! GE's "CodegenKernel_CallSync" rules: per queue allocation (a reuse family, or a lone
//! tensor) the allocating producer, the `EnQue` after its last producer, the `DeQue` by its
//! first reader on another pipe, the `FreeTensor` after its last reader (right after `EnQue`
//! when nobody reads it); cross-pipe events on buffers and Load → Store; `PipeBarrier<PIPE_V>`
//! between dependent vector ops.

use super::ascendc::{err, pipe_name, pipe_of, Func, Pipe};
use super::ascendc_calls::call;
use super::plan::KernelPlan;
use ascendir_asc::alloc::ContainerKind;
use ascendir_asc::error::AscResult;
use ascendir_asc::graph::MemHardware;

/// One queue allocation: the members of a reuse family (or a lone tensor) in one queue.
#[derive(Clone, Debug)]
pub(super) struct Alloc {
    pub(super) container: usize,
    pub(super) reuse: i64,
    /// Member tensors (node position, output).
    pub(super) members: Vec<(usize, usize)>,
    pub(super) first_prod: usize,
    pub(super) last_prod: usize,
    pub(super) producer_pipe: Pipe,
    /// Position of the reader that dequeues (first reader on another pipe), if any.
    pub(super) deque_at: Option<usize>,
    /// Position of the last reader, if any.
    pub(super) last_read: Option<usize>,
    /// The `LocalTensor<uint8_t>` holding the allocation: `q<id>_buf`, or `q<id>_buf<k>` while
    /// `k` earlier allocations of the same queue are still held.
    pub(super) var: String,
}

impl Alloc {
    /// The node after whose call the allocation is freed.
    pub(super) fn free_at(&self) -> usize {
        self.last_read.unwrap_or(self.last_prod).max(self.last_prod)
    }
}

/// The allocations of a plan and the declaration depths of its variables.
pub(super) fn allocations(p: &KernelPlan) -> AscResult<Vec<Alloc>> {
    let mut out: Vec<Alloc> = Vec::new();
    for (ci, c) in p.containers.iter().enumerate() {
        if c.kind != ContainerKind::Queue {
            continue;
        }
        let mut local: Vec<Alloc> = Vec::new();
        for (pos, o, rid) in &c.members {
            let n = &p.nodes[*pos];
            let k = if *rid >= 0 {
                local.iter().position(|a| a.reuse == *rid)
            } else {
                None
            };
            match k {
                Some(k) => {
                    local[k].members.push((*pos, *o));
                    local[k].first_prod = local[k].first_prod.min(*pos);
                    local[k].last_prod = local[k].last_prod.max(*pos);
                }
                None => local.push(Alloc {
                    container: ci,
                    reuse: if *rid >= 0 { *rid } else { *pos as i64 },
                    members: vec![(*pos, *o)],
                    first_prod: *pos,
                    last_prod: *pos,
                    producer_pipe: pipe_of(n),
                    deque_at: None,
                    last_read: None,
                    var: String::new(),
                }),
            }
        }
        for a in &mut local {
            let mut readers: Vec<usize> = Vec::new();
            for (pos, o) in &a.members {
                for r in &p.nodes[*pos].outputs[*o].readers {
                    if p.nodes[*r].compute && !readers.contains(r) {
                        readers.push(*r);
                    }
                }
            }
            readers.sort_unstable();
            a.last_read = readers.last().copied();
            a.deque_at = readers
                .iter()
                .copied()
                .find(|r| pipe_of(&p.nodes[*r]) != a.producer_pipe);
            if let Some(d) = a.deque_at {
                if d <= a.last_prod {
                    return Err(err(
                        &p.name,
                        &p.nodes[d].name,
                        "reads a queue family before its last member is produced".into(),
                    ));
                }
            }
        }
        // Buffer variables: an allocation takes the lowest index no overlapping earlier
        // allocation of this queue holds.
        local.sort_by_key(|a| a.first_prod);
        let mut held: Vec<(usize, usize)> = Vec::new(); // (index, free position)
        for a in &mut local {
            held.retain(|(_, free)| *free >= a.first_prod);
            let mut k = 0usize;
            while held.iter().any(|(i, _)| *i == k) {
                k += 1;
            }
            held.push((k, a.free_at()));
            a.var = if k == 0 {
                format!("q{}_buf", c.id)
            } else {
                format!("q{}_buf{k}", c.id)
            };
        }
        out.extend(local);
    }
    Ok(out)
}

fn event_block(f: &mut Func<'_>, var: &str, from: Pipe, to: Pipe) {
    let (a, b) = (pipe_name(from), pipe_name(to));
    f.linef(format_args!(
        "auto {var}_e = tpipe.AllocEventID<HardEvent::{a}_{b}>();"
    ));
    f.linef(format_args!("TQueSync<PIPE_{a}, PIPE_{b}> {var}_s;"));
    f.linef(format_args!("{var}_s.SetFlag({var}_e);"));
    f.linef(format_args!("{var}_s.WaitFlag({var}_e);"));
    f.linef(format_args!(
        "tpipe.ReleaseEventID<HardEvent::{a}_{b}>({var}_e);"
    ));
    f.line("");
}

/// Allocate / view one output of node `pos`.
fn output_view(f: &mut Func<'_>, pos: usize, o: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    let t = f.tensor(pos, o)?;
    let Some(ci) = t.container else {
        return Err(err(
            &p.name,
            &n.name,
            "UB output without a container".into(),
        ));
    };
    let ct = f.ctype(n, t)?;
    let l = f.local(pos, o);
    let src = if p.containers[ci].kind == ContainerKind::Queue {
        let ai = f.alloc_index(pos, o).ok_or_else(|| {
            err(
                &p.name,
                &n.name,
                "queue tensor outside any allocation".into(),
            )
        })?;
        let (reuse, first) = (f.allocs[ai].reuse, f.allocs[ai].first_prod == pos);
        let q = f.queue_name(ci);
        let off = format!("{q}_reuse{reuse}_offset");
        let fam = f.tx(&t.fam_offset)?;
        if f.visible(&off) {
            f.linef(format_args!("{off} = {fam};"));
        } else {
            f.linef(format_args!("uint32_t {off} = {fam};"));
            f.declare(&off);
        }
        if first {
            let qb = f.allocs[ai].var.clone();
            if f.visible(&qb) {
                f.linef(format_args!("{qb} = {q}.AllocTensor<uint8_t>();"));
            } else {
                f.linef(format_args!(
                    "LocalTensor<uint8_t> {qb} = {q}.AllocTensor<uint8_t>();"
                ));
                f.declare(&qb);
            }
        }
        format!("{}[{off}]", f.allocs[ai].var)
    } else {
        format!("{}_buf", f.buf_name(ci))
    };
    f.linef(format_args!(
        "const uint32_t {l}_actual_size = {};",
        f.span(t, true)?
    ));
    if !f.visible(&l) {
        f.linef(format_args!("LocalTensor<{ct}> {l};"));
        f.declare(&l);
    }
    f.linef(format_args!(
        "{l} = {src}.template ReinterpretCast<{ct}>();"
    ));
    Ok(())
}

pub(super) fn node(f: &mut Func<'_>, pos: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    let pipe = pipe_of(n);
    // Inputs in the UB.
    let mut ub_inputs: Vec<(usize, usize)> = Vec::new();
    for (q, o) in n.inputs.iter().flatten() {
        let t = f.tensor(*q, *o)?;
        if t.hardware == MemHardware::Ub && t.container.is_some() && !ub_inputs.contains(&(*q, *o))
        {
            ub_inputs.push((*q, *o));
        }
    }
    // Cross-pipe events: a Load feeding a Store (MTE2 → MTE3), or a buffer tensor produced on
    // another pipe.
    for (q, o) in &ub_inputs {
        let prod = pipe_of(&p.nodes[*q]);
        let queued = f.alloc_index(*q, *o).is_some();
        if prod != pipe && (!queued || (prod == Pipe::Mte2 && pipe == Pipe::Mte3)) {
            let var = f.local(*q, *o);
            event_block(f, &var, prod, pipe);
        }
    }
    // PipeBarrier<PIPE_V>.
    if pipe == Pipe::Vector {
        let mut need = ub_inputs.iter().any(|k| f.v_written.contains(k));
        let mut regions: Vec<usize> = n.tmps.clone();
        for t in &n.outputs {
            if let Some(ci) = t.container {
                if p.containers[ci].kind != ContainerKind::Queue {
                    regions.push(ci);
                }
            }
        }
        if regions
            .iter()
            .any(|r| f.v_regions_r.contains(r) || f.v_regions_w.contains(r))
        {
            need = true;
        }
        if need {
            f.line("AscendC::PipeBarrier<PIPE_V>();");
            f.v_written.clear();
            f.v_regions_r.clear();
            f.v_regions_w.clear();
        }
    }
    // Dequeues.
    let mut dequeued: Vec<usize> = Vec::new();
    for (q, o) in &ub_inputs {
        if let Some(ai) = f.alloc_index(*q, *o) {
            if f.allocs[ai].deque_at == Some(pos) && !dequeued.contains(&ai) {
                let qn = f.queue_name(f.allocs[ai].container);
                let v = f.allocs[ai].var.clone();
                f.linef(format_args!("{v} = {qn}.DeQue<uint8_t>();"));
                dequeued.push(ai);
            }
        }
    }
    // Output views.
    let mut outs: Vec<usize> = Vec::new();
    for (o, t) in n.outputs.iter().enumerate() {
        if t.hardware == MemHardware::Ub && t.container.is_some() {
            output_view(f, pos, o)?;
            outs.push(o);
        }
    }
    call(f, pos)?;
    // Enqueue after the family's last producer; free what nobody reads.
    let mut enq: Vec<usize> = Vec::new();
    for o in &outs {
        if let Some(ai) = f.alloc_index(pos, *o) {
            if f.allocs[ai].last_prod == pos && !enq.contains(&ai) {
                enq.push(ai);
            }
        }
    }
    for ai in &enq {
        let qn = f.queue_name(f.allocs[*ai].container);
        let v = f.allocs[*ai].var.clone();
        f.linef(format_args!("{qn}.EnQue({v});"));
        if f.allocs[*ai].last_read.is_none() {
            f.linef(format_args!("{qn}.FreeTensor({v});"));
        }
    }
    // Frees after the last reader.
    let mut frees: Vec<usize> = Vec::new();
    for (q, o) in &ub_inputs {
        if let Some(ai) = f.alloc_index(*q, *o) {
            if f.allocs[ai].last_read == Some(pos) && !frees.contains(&ai) {
                frees.push(ai);
            }
        }
    }
    for ai in frees.iter().rev() {
        let qn = f.queue_name(f.allocs[*ai].container);
        let v = f.allocs[*ai].var.clone();
        f.linef(format_args!("{qn}.FreeTensor({v});"));
    }
    f.line("");
    // Barrier bookkeeping.
    if pipe == Pipe::Vector {
        for o in &outs {
            f.v_written.insert((pos, *o));
            if let Some(ci) = n.outputs[*o].container {
                if p.containers[ci].kind != ContainerKind::Queue {
                    f.v_regions_w.insert(ci);
                }
            }
        }
        for t in &n.tmps {
            f.v_regions_w.insert(*t);
        }
        for (q, o) in &ub_inputs {
            if let Some(ci) = f.tensor(*q, *o)?.container {
                if p.containers[ci].kind != ContainerKind::Queue {
                    f.v_regions_r.insert(ci);
                }
            }
        }
    }
    Ok(())
}
