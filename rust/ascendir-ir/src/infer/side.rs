//! What one inference run keeps beside a graph's descs: the rule that a recorded static value
//! is never replaced by an unknown one, which nodes a dynamic graph input reaches, and the
//! values data propagation computed. Indexed by node slot: a look-up costs no hashing.

use slotmap::SecondaryMap;

use super::{logical_shape, OutDesc};
use crate::dtype::DataType;
use crate::graph::{Graph, NodeId};
use crate::tensor::{Shape, Tensor, TensorDesc, UNKNOWN_DIM, UNKNOWN_RANK};

use super::engine::input_value;

/// What one inference run keeps beside a graph's descs.
#[derive(Default)]
pub(super) struct Side {
    /// Values of small integer outputs computed during this run (data propagation); output 0.
    pub(super) computed: SecondaryMap<NodeId, Tensor>,
    /// Nodes downstream of a graph input with a dynamic shape.
    pub(super) dynamic: SecondaryMap<NodeId, ()>,
}

/// How an inferred output compares with the desc recorded on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recorded {
    /// Nothing known was lost or contradicted.
    Agrees,
    /// Known recorded dims or dtype were kept where the rule left them unknown.
    Kept,
    /// A known recorded dim or dtype differs from the known inferred one.
    Conflict,
}

/// Never replace a known dim or dtype with an unknown one: where the rule leaves a dim, the
/// rank or the dtype unknown although no graph input upstream is dynamic (`static_inputs`: a
/// value-dependent output, an input whose value is not known, a weak rule upstream), the
/// recorded static value stays. Downstream of a dynamic graph input the rule's unknown is the
/// truth (the recorded value may predate the input's change).
pub(super) fn keep_recorded(
    out: &mut OutDesc,
    recorded: &TensorDesc,
    static_inputs: bool,
) -> Recorded {
    let rec = logical_shape(recorded);
    let rec_known_rank = !(rec.len() == 1 && rec[0] == UNKNOWN_RANK);
    let mut result = Recorded::Agrees;
    let mut note = |r: Recorded| {
        if result != Recorded::Conflict {
            result = r;
        }
    };
    if recorded.dtype != DataType::UNDEFINED {
        if out.dtype == DataType::UNDEFINED {
            if static_inputs {
                out.dtype = recorded.dtype;
                note(Recorded::Kept);
            }
        } else if out.dtype != recorded.dtype {
            note(Recorded::Conflict);
        }
    }
    if !rec_known_rank {
        return result;
    }
    // Invalid dims (below -2) are left for `check_outputs` to refuse.
    let out_unknown_rank = out.shape.len() == 1 && out.shape[0] == UNKNOWN_RANK;
    if out_unknown_rank {
        // A recorded scalar is also what a desc never written holds (GE's default desc).
        if static_inputs && !rec.is_empty() {
            out.shape = Shape::from_slice(rec);
            note(Recorded::Kept);
        }
        return result;
    }
    if out.shape.len() != rec.len() {
        note(Recorded::Conflict);
        return result;
    }
    for (d, &r) in out.shape.iter_mut().zip(rec) {
        if r < 0 {
            continue;
        }
        if *d == UNKNOWN_DIM {
            if static_inputs {
                *d = r;
                note(Recorded::Kept);
            }
        } else if *d != r {
            note(Recorded::Conflict);
        }
    }
    result
}

/// Whether every graph input upstream of node `id` has a static shape: its linked inputs come
/// from nodes not marked dynamic, and its unlinked input descs (a `Data` node's feed, a
/// subgraph input seeded from the parent) are static.
pub(super) fn origin_static(g: &Graph, dynamic: &SecondaryMap<NodeId, ()>, id: NodeId) -> bool {
    let Some(node) = g.arena().get(id) else {
        return true;
    };
    node.op.inputs.iter().enumerate().all(|(i, port)| {
        match node.in_data.get(i).copied().flatten() {
            Some(src) if !src.is_control() => !dynamic.contains_key(src.node),
            _ => {
                let d: &TensorDesc = &port.desc;
                d.dtype == DataType::UNDEFINED || logical_shape(d).iter().all(|&x| x >= 0)
            }
        }
    })
}

/// The value feeding input `i` of node `id`: a constant, else one computed during this run.
pub(super) fn known_value(
    g: &Graph,
    computed: &SecondaryMap<NodeId, Tensor>,
    id: NodeId,
    i: usize,
) -> Option<Tensor> {
    input_value(g, id, i).or_else(|| {
        let src = g.arena().get(id)?.in_data_peer(i)?;
        if src.is_control() || src.index != 0 {
            return None;
        }
        computed.get(src.node).cloned()
    })
}
