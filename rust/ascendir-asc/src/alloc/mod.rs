//! UB allocation (GE's `BufQueAllocator`): GM for Data/Output/Workspace, queue or buffer for
//! every other output, lifetimes in execution order, in-place groups, block packing with
//! reuse, the VECIN queue limit fixed by `Ub2ub` copies, and a report of the result.

use std::sync::Arc;

use crate::axis::AxisId;
use crate::error::AscResult;
use crate::expr::Expr;
use crate::graph::{AscGraph, ComputeType, NodeId, OutRef, Position, Tensor};
use crate::registry::{self, OpDef, PortKind};

mod phases;
mod sizes;

use phases::allocate_once;
use sizes::slot_bytes_with;
pub use sizes::{
    attach_tmp_buffer, container_slot_bytes, container_total, containers_of, tmp_buffer_size,
    TensorBytes,
};

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

/// The name prefix of the `Ub2ub` copies the allocator inserts.
pub(crate) const UB2UB_PREFIX: &str = "ub_cpy";

fn insert_ub2ub(g: &mut AscGraph, load: NodeId) -> AscResult<String> {
    let id = insert_after(g, load, copy_op("Ub2ub"), UB2UB_PREFIX)?;
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
