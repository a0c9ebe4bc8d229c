//! Removing nodes the way a pass does: a set at once (all or nothing), the dead code of a
//! graph, and a node bypassed by one of its inputs.

use rustc_hash::FxHashSet;

use crate::anchor::OutAnchor;
use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeId};

/// Op types kept by [`Graph::eliminate_dead_code`] although nothing reads them: they act on
/// state or the outside world (variables, prints, collective communication, queues).
const IMPURE: &[&str] = &[
    "Assign",
    "AssignAdd",
    "AssignSub",
    "ScatterUpdate",
    "ScatterNdUpdate",
    "Print",
    "PrintV2",
    "Send",
    "Recv",
    "HcomAllReduce",
    "HcomAllGather",
    "HcomBroadcast",
    "HcomReduceScatter",
    "HcomSend",
    "HcomReceive",
    "QueueEnqueue",
    "Enqueue",
    "StreamActive",
    "Variable",
    "VarHandleOp",
];

impl Graph {
    /// Remove `ids` together and return their names. With `safe`, refuses (changing nothing)
    /// while an output of a removed node is read by a node outside the set or is a graph
    /// output; without it, outside readers lose those inputs (their links are dropped). A
    /// stale or repeated id is an error before anything changes.
    pub fn remove_nodes(&mut self, ids: &[NodeId], safe: bool) -> IrResult<Vec<String>> {
        let mut names = Vec::with_capacity(ids.len());
        self.remove_nodes_with(ids, safe, Some(&mut names))?;
        Ok(names)
    }

    /// [`Graph::remove_nodes`], pushing the removed nodes' names to `names` when given.
    fn remove_nodes_with(
        &mut self,
        ids: &[NodeId],
        safe: bool,
        mut names: Option<&mut Vec<String>>,
    ) -> IrResult<()> {
        let mut set = FxHashSet::default();
        for &id in ids {
            self.node(id)?;
            if !set.insert(id) {
                return Err(IrError::InvalidArgument(format!(
                    "node '{}' is named twice",
                    self.op(id)?.name()
                )));
            }
        }
        if safe {
            self.check_unused_outside(ids, &set)?;
        }
        self.detach_data_inputs(ids, &set);
        for &id in ids {
            let op = self.erase_node(id)?;
            if let Some(names) = names.as_deref_mut() {
                names.push(op.name().to_string());
            }
        }
        Ok(())
    }

    fn check_unused_outside(&self, ids: &[NodeId], set: &FxHashSet<NodeId>) -> IrResult<()> {
        for &id in ids {
            let n = self.node(id)?;
            for (i, peers) in n.out_data.iter().enumerate() {
                if let Some(user) = peers.iter().find(|p| !set.contains(&p.node)) {
                    return Err(IrError::InvalidArgument(format!(
                        "cannot remove '{}': its output {i} is read by '{}', which is not removed",
                        n.name(),
                        self.arena()[user.node].name()
                    )));
                }
            }
            if self.outputs().iter().any(|&(o, _)| o == id) {
                return Err(IrError::InvalidArgument(format!(
                    "cannot remove '{}': it is a graph output",
                    n.name()
                )));
            }
        }
        Ok(())
    }

    /// Remove every node nothing live depends on and return their names in graph order. Live:
    /// the graph outputs, the NetOutput nodes and targets, the graph inputs, nodes without data
    /// outputs and nodes of types with effects (variables, prints, communication), and every
    /// node any of them reads (data or control).
    pub fn eliminate_dead_code(&mut self) -> Vec<String> {
        let dead = self.dead_nodes();
        dead.into_iter()
            .map(|id| {
                self.erase_node(id)
                    .map(|op| op.name().to_string())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The nodes [`Graph::eliminate_dead_code`] removes, in graph order.
    pub fn dead_nodes(&self) -> Vec<NodeId> {
        let mut live: FxHashSet<NodeId> = FxHashSet::default();
        let mut stack: Vec<NodeId> = Vec::new();
        stack.extend(self.outputs().iter().map(|&(id, _)| id));
        stack.extend(self.targets().iter().copied());
        stack.extend(self.inputs().iter().copied());
        for id in self.node_ids() {
            let n = &self.arena()[id];
            if n.op_type() == "NetOutput" || n.num_out_data() == 0 || IMPURE.contains(&n.op_type())
            {
                stack.push(id);
            }
        }
        while let Some(id) = stack.pop() {
            if !live.insert(id) {
                continue;
            }
            let n = &self.arena()[id];
            stack.extend(n.in_data.iter().flatten().map(|p| p.node));
            stack.extend(n.in_ctrl.iter().map(|p| p.node));
        }
        self.node_ids().filter(|id| !live.contains(id)).collect()
    }

    /// Every use of `id`'s output 0 (and a graph output naming it) reads the producer of its
    /// input `input` instead, then `id` is removed with its other links. All or nothing: an
    /// unlinked input, a node without outputs or with more than one, or one whose other
    /// outputs are read, is refused.
    pub fn bypass(&mut self, id: NodeId, input: usize) -> IrResult<()> {
        let n = self.node(id)?;
        let name = n.name().to_string();
        if n.num_out_data() != 1 {
            return Err(IrError::InvalidArgument(format!(
                "cannot bypass '{name}': it has {} outputs (one is needed)",
                n.num_out_data()
            )));
        }
        let src = n
            .in_data
            .get(input)
            .copied()
            .flatten()
            .filter(|p| !p.is_control())
            .ok_or_else(|| {
                IrError::InvalidArgument(format!(
                    "cannot bypass '{name}' by its input {input}: it is not linked"
                ))
            })?;
        self.replace_all_uses_with(OutAnchor::data(id, 0), src)?;
        self.erase_node(id)?;
        Ok(())
    }
}

/// The same operations on graph `owner` of a root's tree (`None`: the root), removing the
/// subgraphs below every removed node with it.
impl Graph {
    fn owned_graph(&self, owner: Option<usize>) -> IrResult<&Graph> {
        self.tree_graph(owner)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))
    }

    /// [`Graph::remove_nodes`] in tree graph `owner`.
    pub fn remove_tree_nodes(
        &mut self,
        owner: Option<usize>,
        ids: &[NodeId],
        safe: bool,
    ) -> IrResult<Vec<String>> {
        let mut names = Vec::with_capacity(ids.len());
        self.remove_tree_nodes_with(owner, ids, safe, Some(&mut names))?;
        Ok(names)
    }

    /// [`Graph::remove_tree_nodes`] without collecting the names (a bulk rewrite's removal).
    pub(crate) fn remove_tree_nodes_unnamed(
        &mut self,
        owner: Option<usize>,
        ids: &[NodeId],
        safe: bool,
    ) -> IrResult<()> {
        self.remove_tree_nodes_with(owner, ids, safe, None)
    }

    fn remove_tree_nodes_with(
        &mut self,
        owner: Option<usize>,
        ids: &[NodeId],
        safe: bool,
        names: Option<&mut Vec<String>>,
    ) -> IrResult<()> {
        self.owned_graph(owner)?;
        let mut below = Vec::new();
        for &id in ids {
            below.extend(self.subgraphs_below(owner, id)?);
        }
        let g = self.tree_graph_mut(owner).expect("checked above");
        g.remove_nodes_with(ids, safe, names)?;
        self.take_subgraphs(&below);
        Ok(())
    }

    /// [`Graph::eliminate_dead_code`] in tree graph `owner`.
    pub fn eliminate_tree_dead_code(&mut self, owner: Option<usize>) -> IrResult<Vec<String>> {
        let dead = self.owned_graph(owner)?.dead_nodes();
        self.remove_tree_nodes(owner, &dead, false)
    }

    /// [`Graph::bypass`] in tree graph `owner`.
    pub fn bypass_tree_node(
        &mut self,
        owner: Option<usize>,
        id: NodeId,
        input: usize,
    ) -> IrResult<()> {
        self.owned_graph(owner)?;
        let below = self.subgraphs_below(owner, id)?;
        self.tree_graph_mut(owner)
            .expect("checked above")
            .bypass(id, input)?;
        self.take_subgraphs(&below);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::anchor::InAnchor;
    use crate::op_desc::OpDesc;
    use crate::tensor::TensorDesc;

    fn op(g: &mut Graph, name: &str, ty: &str, ins: &[NodeId]) -> NodeId {
        let mut o = OpDesc::new(name, ty);
        for i in 0..ins.len() {
            o.add_input(&format!("x{i}"), Arc::new(TensorDesc::default()));
        }
        o.add_output("y", Arc::new(TensorDesc::default())).unwrap();
        let id = g.add_node(o).unwrap();
        for (i, &src) in ins.iter().enumerate() {
            g.link(OutAnchor::data(src, 0), InAnchor::data(id, i))
                .unwrap();
        }
        id
    }

    #[test]
    fn sets_dead_code_and_bypass() {
        let mut g = Graph::new("g");
        let x = op(&mut g, "x", "Data", &[]);
        let a = op(&mut g, "a", "Relu", &[x]);
        let b = op(&mut g, "b", "Abs", &[a]);
        let dead1 = op(&mut g, "d1", "Exp", &[a]);
        let dead2 = op(&mut g, "d2", "Neg", &[dead1]);
        g.add_output_node(b, 0).unwrap();
        // a is read by b, outside the set: refused, nothing changes.
        let before = g.links();
        assert!(g.remove_nodes(&[a, dead1], true).is_err());
        assert_eq!(g.links(), before);
        assert!(g.remove_nodes(&[dead1, dead1], false).is_err());
        assert_eq!(g.eliminate_dead_code(), vec!["d1", "d2"]);
        assert!(!g.contains(dead2));
        g.bypass(a, 0).unwrap();
        assert_eq!(
            g.uses(OutAnchor::data(x, 0)).unwrap(),
            vec![InAnchor::data(b, 0)]
        );
        assert!(g.bypass(x, 0).is_err());
        assert_eq!(g.remove_nodes(&[b], false).unwrap(), vec!["b"]);
        assert!(g.outputs().is_empty());
    }
}
