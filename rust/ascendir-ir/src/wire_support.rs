//! Small additions used by the wire-format crate (`ascendir-proto`) to rebuild a graph exactly:
//! restoring the fan-out order of an output anchor.

use crate::anchor::{InAnchor, OutAnchor};
use crate::error::{IrError, IrResult};
use crate::graph::Graph;

impl Graph {
    /// Reorder the peers of output anchor `src` to `order`, which must be a permutation of its
    /// current peers (duplicates counted). Only the order on the output side changes; nothing is
    /// linked or unlinked. Fails without changing anything when `order` is not a permutation.
    pub fn set_out_peer_order(&mut self, src: OutAnchor, order: &[InAnchor]) -> IrResult<()> {
        self.check_anchor(crate::anchor::Anchor::Out(src))?;
        let current = self.out_peers(src);
        let mut a: Vec<InAnchor> = current.to_vec();
        let mut b: Vec<InAnchor> = order.to_vec();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return Err(IrError::InvalidArgument(format!(
                "the new peer order of {} is not a permutation of its peers",
                self.describe(crate::anchor::Anchor::Out(src))
            )));
        }
        let n = &mut self.arena_mut()[src.node];
        if src.is_control() {
            n.out_ctrl.clear();
            n.out_ctrl.extend_from_slice(order);
        } else {
            let list = &mut n.out_data[src.index as usize];
            list.clear();
            list.extend_from_slice(order);
        }
        Ok(())
    }
}
