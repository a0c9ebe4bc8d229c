//! Sizes of what the allocator places: temporary buffers an API needs, bytes of a container's
//! slot and of the whole container, cached tensor bytes of one graph, and the container list
//! rebuilt from a graph's memory attributes.

use crate::error::{AscError, AscResult};
use crate::expr::Expr;
use crate::graph::{AllocType, AscGraph, NodeId, Position, TmpBuffer};

use super::{exec_order, tensor_bytes, Container, ContainerKind};

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
pub(super) fn slot_bytes_with(
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
