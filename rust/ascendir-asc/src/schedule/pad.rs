//! RemovePad insertion of the unaligned template.
//!
//! The unaligned template keeps UB tensors dense (no 32-byte padding of the innermost axis),
//! but two producers cannot write dense rows: a Load whose vectorized GM region is not
//! contiguous (the copy engine pads every row it writes to 32 bytes) and a Broadcast of a
//! non-scalar input (the vector unit writes aligned rows). Each of them keeps aligned strides
//! and gets a `RemovePad` right after it, which rewrites the rows densely for its consumers.

use super::{
    is_const, view_contiguous, view_pos, AscGraph, AscResult, AxisId, ComputeType, NodeId, Tensor,
};
use crate::alloc::{copy_op, insert_after};

/// Whether `t` extends along axis `a` (repeat other than 1, stride other than 0).
fn extends(t: &Tensor, a: AxisId) -> bool {
    view_pos(t, a).is_some_and(|p| !is_const(&t.repeats[p], 1) && !is_const(&t.strides[p], 0))
}

/// The compute nodes among `cn` whose output cannot be written densely. Padding only shows
/// when the output has rows, i.e. extends along two or more vectorized axes; a Broadcast
/// pads when it broadcasts a non-scalar input along a vectorized axis (along a loop axis only
/// it is a plain copy of the tile).
pub(super) fn padded_producers(g: &AscGraph, cn: &[NodeId]) -> Vec<NodeId> {
    cn.iter()
        .copied()
        .filter(|n| {
            let node = &g.nodes()[n.index()];
            let out = match node.outputs.first() {
                Some(t) => t,
                None => return false,
            };
            let vect = &out.vectorized_axis;
            if vect.iter().filter(|a| extends(out, **a)).count() < 2 {
                return false;
            }
            match node.attr.api.compute_type {
                ComputeType::Load => !view_contiguous(out, vect),
                ComputeType::Broadcast => g.input_tensor(*n, 0).is_some_and(|i| {
                    let scalar = !vect.iter().any(|a| extends(i, *a));
                    let along_vect = vect.iter().any(|a| extends(out, *a) && !extends(i, *a));
                    !scalar && along_vect
                }),
                _ => false,
            }
        })
        .collect()
}

/// The name prefix of the `RemovePad` nodes inserted here.
pub(super) const REMOVE_PAD_PREFIX: &str = "remove_pad";

/// Insert a `RemovePad` after every padded producer among `cn`; returns the producers (their
/// outputs keep aligned strides).
pub(super) fn insert_remove_pads(g: &mut AscGraph, cn: &[NodeId]) -> AscResult<Vec<NodeId>> {
    let producers = padded_producers(g, cn);
    for p in &producers {
        insert_after(g, *p, copy_op("RemovePad"), REMOVE_PAD_PREFIX)?;
    }
    Ok(producers)
}
