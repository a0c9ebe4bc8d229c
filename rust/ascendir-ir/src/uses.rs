//! Values and their uses: the data consumers of an output, and moving every one of them (and
//! the graph outputs naming it) to another output in one all-or-nothing step.

use std::collections::VecDeque;

use rustc_hash::FxHashSet;

use crate::anchor::{Anchor, InAnchor, OutAnchor};
use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeId};

impl Graph {
    /// The data consumers of output `out`, in link order (the order the output's peer list
    /// holds them, as GE's `GetPeerInDataAnchors`).
    pub fn uses(&self, out: OutAnchor) -> IrResult<Vec<InAnchor>> {
        self.check_anchor(Anchor::Out(out))?;
        if out.is_control() {
            return Err(IrError::InvalidArgument(format!(
                "{} is a control anchor, not a value",
                self.describe(Anchor::Out(out))
            )));
        }
        Ok(self
            .node(out.node)?
            .out_data_peers(out.index as usize)
            .to_vec())
    }

    /// Every data consumer of `from` reads `to` instead, each keeping its input slot, in link
    /// order; graph outputs naming `from` name `to`. Returns how many uses moved. All or
    /// nothing: nothing changes when an anchor does not exist or is a control anchor, or when
    /// the move would make a cycle (`to`'s node is, or depends on, a consumer of `from`).
    pub fn replace_all_uses_with(&mut self, from: OutAnchor, to: OutAnchor) -> IrResult<usize> {
        let uses = self.uses(from)?;
        self.uses(to)?;
        if from == to {
            return Ok(uses.len());
        }
        if let Some(user) = self.reaches(&uses, to.node) {
            return Err(IrError::InvalidArgument(format!(
                "replacing the uses of {} by {} would make a cycle: '{}' reads {} and {} depends \
                 on it",
                self.describe(Anchor::Out(from)),
                self.describe(Anchor::Out(to)),
                self.op(user)?.name(),
                self.describe(Anchor::Out(from)),
                self.describe(Anchor::Out(to)),
            )));
        }
        self.move_uses(&uses, from, to)
    }

    /// [`Graph::replace_all_uses_with`] without the cycle check, for a caller that knows `to`
    /// is upstream of `from` (a pattern's capture feeding its root): the check walks every
    /// node downstream of `from`. The anchors are still checked.
    pub(crate) fn replace_upstream_uses(
        &mut self,
        from: OutAnchor,
        to: OutAnchor,
    ) -> IrResult<usize> {
        let uses = self.uses(from)?;
        self.uses(to)?;
        if from == to {
            return Ok(uses.len());
        }
        self.move_uses(&uses, from, to)
    }

    fn move_uses(&mut self, uses: &[InAnchor], from: OutAnchor, to: OutAnchor) -> IrResult<usize> {
        for dst in uses {
            // Checked by the callers: every use is linked to `from`, both are data anchors.
            self.replace_in_peer(*dst, from, to)?;
        }
        let outputs: Vec<(NodeId, i32)> = self.outputs().to_vec();
        for (node, index) in outputs {
            if node == from.node && index == from.index {
                self.replace_output((node, index), (to.node, to.index))?;
            }
        }
        Ok(uses.len())
    }

    /// [`Graph::replace_all_uses_with`] for every output of `from`, onto the same output of
    /// `to` (which needs at least as many outputs); returns how many uses moved. All or
    /// nothing: the graph is restored when a later output fails.
    pub fn replace_all_node_uses(&mut self, from: NodeId, to: NodeId) -> IrResult<usize> {
        let (n_from, n_to) = (
            self.node(from)?.num_out_data(),
            self.node(to)?.num_out_data(),
        );
        if n_to < n_from {
            return Err(IrError::InvalidArgument(format!(
                "'{}' has {n_from} outputs, '{}' only {n_to}",
                self.op(from)?.name(),
                self.op(to)?.name()
            )));
        }
        if n_from == 1 {
            return self.replace_all_uses_with(OutAnchor::data(from, 0), OutAnchor::data(to, 0));
        }
        let saved = self.clone();
        let mut moved = 0;
        for i in 0..n_from {
            match self.replace_all_uses_with(OutAnchor::data(from, i), OutAnchor::data(to, i)) {
                Ok(n) => moved += n,
                Err(e) => {
                    *self = saved;
                    return Err(e);
                }
            }
        }
        Ok(moved)
    }

    /// The first of `uses`' nodes from which `target` can be reached along data and control
    /// links (`target` itself included), if any.
    fn reaches(&self, uses: &[InAnchor], target: NodeId) -> Option<NodeId> {
        for start in uses.iter().map(|u| u.node) {
            let mut seen: FxHashSet<NodeId> = FxHashSet::default();
            let mut queue = VecDeque::from([start]);
            while let Some(n) = queue.pop_front() {
                if n == target {
                    return Some(start);
                }
                if !seen.insert(n) {
                    continue;
                }
                let Ok(node) = self.node(n) else { continue };
                for peers in &node.out_data {
                    queue.extend(peers.iter().map(|p| p.node));
                }
                queue.extend(node.out_ctrl.iter().map(|p| p.node));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::op_desc::OpDesc;
    use crate::tensor::TensorDesc;

    fn op(g: &mut Graph, name: &str, ins: usize) -> NodeId {
        let mut o = OpDesc::new(name, "Relu");
        for i in 0..ins {
            o.add_input(&format!("x{i}"), Arc::new(TensorDesc::default()));
        }
        o.add_output("y", Arc::new(TensorDesc::default())).unwrap();
        g.add_node(o).unwrap()
    }

    #[test]
    fn uses_move_in_link_order_and_cycles_are_refused() {
        let mut g = Graph::new("g");
        let (a, b) = (op(&mut g, "a", 0), op(&mut g, "b", 0));
        let (u1, u2) = (op(&mut g, "u1", 1), op(&mut g, "u2", 2));
        g.link(OutAnchor::data(a, 0), InAnchor::data(u2, 1))
            .unwrap();
        g.link(OutAnchor::data(a, 0), InAnchor::data(u1, 0))
            .unwrap();
        g.link(OutAnchor::data(a, 0), InAnchor::data(u2, 0))
            .unwrap();
        let used = g.uses(OutAnchor::data(a, 0)).unwrap();
        assert_eq!(
            used,
            vec![
                InAnchor::data(u2, 1),
                InAnchor::data(u1, 0),
                InAnchor::data(u2, 0)
            ]
        );
        // c reads u1: moving a's uses to c would feed u1 from its own consumer.
        let c = op(&mut g, "c", 1);
        g.link(OutAnchor::data(u1, 0), InAnchor::data(c, 0))
            .unwrap();
        let before = g.links();
        let err = g.replace_all_uses_with(OutAnchor::data(a, 0), OutAnchor::data(c, 0));
        assert!(err.is_err());
        assert_eq!(g.links(), before);
        assert_eq!(
            g.replace_all_uses_with(OutAnchor::data(a, 0), OutAnchor::data(b, 0))
                .unwrap(),
            3
        );
        assert!(g.uses(OutAnchor::data(a, 0)).unwrap().is_empty());
        assert_eq!(g.uses(OutAnchor::data(b, 0)).unwrap(), used);
    }
}
