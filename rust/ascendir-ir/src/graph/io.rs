//! The graph's inputs, outputs, targets and the NetOutput node that carries the outputs.

use crate::anchor::{InAnchor, OutAnchor};
use crate::attr::AttrValue;
use crate::error::{IrError, IrResult};
use crate::op_desc::{OpDesc, Side};

use super::{Graph, NodeId};

impl Graph {
    /// Replace graph output `old` (producer, index) by `new` wherever it is listed (a pass that
    /// moves a value to another node keeps the graph's output list pointing at it).
    pub fn replace_output(&mut self, old: (NodeId, i32), new: (NodeId, i32)) -> IrResult<()> {
        self.check_out(OutAnchor {
            node: new.0,
            index: new.1,
        })?;
        for o in self.outputs.iter_mut() {
            if *o == old {
                *o = new;
            }
        }
        Ok(())
    }
    /// The graph's input nodes (data-like nodes in insertion order, plus explicit additions).
    pub fn inputs(&self) -> &[NodeId] {
        &self.inputs
    }

    /// `AddInputNode`: register `id` as an input (deduplicated).
    pub fn add_input_node(&mut self, id: NodeId) -> IrResult<()> {
        self.node(id)?;
        if !self.inputs.contains(&id) {
            self.inputs.push(id);
        }
        Ok(())
    }

    /// Replace the input-node list.
    pub fn set_input_nodes(&mut self, ids: Vec<NodeId>) -> IrResult<()> {
        for &id in &ids {
            self.node(id)?;
        }
        self.inputs = ids;
        Ok(())
    }

    /// The graph's outputs as `(node, output index)`.
    pub fn outputs(&self) -> &[(NodeId, i32)] {
        &self.outputs
    }

    /// The target nodes (control dependencies of the NetOutput).
    pub fn targets(&self) -> &[NodeId] {
        &self.targets
    }

    /// `AddOutputNodeByIndex`: append `(id, index)` unless the same pair is present.
    pub fn add_output_node(&mut self, id: NodeId, index: i32) -> IrResult<()> {
        self.check_out(OutAnchor { node: id, index })?;
        if !self.outputs.contains(&(id, index)) {
            self.outputs.push((id, index));
        }
        Ok(())
    }

    /// The name GE gives the NetOutput node of this graph.
    pub fn net_output_name(&self) -> String {
        if self.parent.is_some() {
            format!("{}_Node_Output", self.name)
        } else {
            "Node_Output".to_string()
        }
    }

    /// The first NetOutput node, if any.
    pub fn net_output(&self) -> Option<NodeId> {
        self.node_ids()
            .find(|&id| self.nodes[id].op.op_type() == "NetOutput")
    }

    /// `SetGraphOutNodesInfo` + `SetGraphTargetNodesInfo` + `CreateOrUpdateNetoutput`: store the
    /// outputs and targets, then create (or rewire) the NetOutput node: data input `i` comes
    /// from output `i` (desc copied from the producer), every target not already an output gets
    /// a control edge. Nothing is built when the graph has a node of type `Output`. Returns the
    /// NetOutput node. Validated first: a bad entry changes nothing.
    pub fn set_outputs(
        &mut self,
        outputs: &[(NodeId, i32)],
        targets: &[NodeId],
    ) -> IrResult<Option<NodeId>> {
        for &(id, index) in outputs {
            if index < 0 {
                return Err(IrError::InvalidArgument(format!(
                    "graph output index {index} of '{}' must be ≥ 0",
                    self.node(id)?.op.name()
                )));
            }
            self.check_out(OutAnchor { node: id, index })?;
        }
        for &id in targets {
            self.node(id)?;
        }
        // One pass finds both the NetOutput and any `Output` node (a large graph's nodes are
        // read once, not twice).
        let mut existing = None;
        let mut has_output_op = false;
        for id in self.node_ids() {
            match self.nodes[id].op.op_type() {
                "NetOutput" if existing.is_none() => existing = Some(id),
                "Output" => has_output_op = true,
                _ => {}
            }
            if existing.is_some() && has_output_op {
                break;
            }
        }
        if let Some(net) = existing {
            if outputs.iter().any(|&(n, _)| n == net) || targets.contains(&net) {
                return Err(IrError::InvalidArgument(format!(
                    "the NetOutput node '{}' cannot be its own output",
                    self.nodes[net].op.name()
                )));
            }
        }
        if existing.is_none() && !has_output_op {
            // Checked before anything changes: the NetOutput's name must be free.
            let name = self.net_output_name();
            if self.find(&name).is_some() {
                return Err(IrError::Duplicate(format!(
                    "graph '{}' already has a node named '{name}'",
                    self.name
                )));
            }
        }
        self.outputs = outputs.to_vec();
        self.targets = targets.to_vec();
        if has_output_op {
            return Ok(None);
        }
        let net = match existing {
            Some(net) => {
                self.unlink_node(net);
                self.modify_op(net, |op| op.truncate_ports(Side::Input, 0))?;
                net
            }
            None => {
                let mut op = OpDesc::new(&self.net_output_name(), "NetOutput");
                op.set_attr("_inner_net_output", AttrValue::Bool(true));
                op.set_attr(
                    "_datadump_original_op_names",
                    AttrValue::ListString(Vec::new()),
                );
                op.set_attr("true_branch_stream", AttrValue::Int(0));
                self.add_node(op)?
            }
        };
        for (i, &(id, index)) in outputs.iter().enumerate() {
            let desc = self.nodes[id].op.output_desc(index as usize)?.clone();
            self.modify_op(net, |op| op.add_input(&format!("__input{i}"), desc))?;
            self.link(OutAnchor::data(id, index as usize), InAnchor::data(net, i))?;
        }
        for &t in targets {
            if !outputs.iter().any(|&(n, _)| n == t) {
                self.link(OutAnchor::control(t), InAnchor::control(net))?;
            }
        }
        Ok(Some(net))
    }
}
