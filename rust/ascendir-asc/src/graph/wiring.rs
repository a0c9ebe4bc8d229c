//! Edges and per-node settings: connecting outputs to inputs, dynamic port groups, consumers,
//! tensor access, contiguous views, scheduling axes and IR attributes.

use crate::axis::AxisId;
use crate::error::{invalid, not_found, AscError, AscResult};
use crate::registry::{self, PortKind};

use super::{contiguous_strides, AscGraph, AttrValue, NodeId, OutRef, Tensor};

impl AscGraph {
    pub(super) fn check_outref(&self, r: OutRef, what: &str) -> AscResult<()> {
        let n = self.nodes.get(r.node.index()).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': {what}: no producer node with id {}",
                self.name, r.node.0
            ))
        })?;
        if r.index as usize >= n.outputs.len() {
            return not_found(format!(
                "graph '{}': {what}: node '{}' has no output {} (it has {})",
                self.name,
                n.name,
                r.index,
                n.outputs.len()
            ));
        }
        Ok(())
    }

    /// Connect `src` to input `input` of `dst`.
    pub fn connect(&mut self, src: OutRef, dst: NodeId, input: usize) -> AscResult<()> {
        let d = self.node(dst)?;
        if input >= d.inputs.len() {
            return not_found(format!(
                "graph '{}': node '{}' ({}) has no input {input} (it has {})",
                self.name,
                d.name,
                d.op_type(),
                d.inputs.len()
            ));
        }
        self.check_outref(
            src,
            &format!("input '{}' of node '{}'", d.input_names[input], d.name),
        )?;
        if src.node == dst {
            return invalid(format!(
                "graph '{}': node '{}' cannot consume its own output",
                self.name, d.name
            ));
        }
        self.nodes[dst.index()].inputs[input] = Some(src);
        Ok(())
    }

    /// Connect `src` to the input port named `port` of `dst`.
    pub fn connect_by_name(&mut self, src: OutRef, dst: NodeId, port: &str) -> AscResult<()> {
        let d = self.node(dst)?;
        let i = d.input_index(port).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': node '{}' ({}) has no input '{port}'",
                self.name,
                d.name,
                d.op_type()
            ))
        })?;
        self.connect(src, dst, i)
    }

    /// Set the instances of dynamic input `port` of `dst` to `srcs` (named `<port>0`, ...).
    pub fn set_dynamic_inputs(
        &mut self,
        dst: NodeId,
        port: &str,
        srcs: &[OutRef],
    ) -> AscResult<()> {
        let d = self.node(dst)?;
        let def_pos =
            d.op.inputs
                .iter()
                .position(|p| p.name == port && p.kind == PortKind::Dynamic)
                .ok_or_else(|| {
                    AscError::NotFound(format!(
                        "graph '{}': node '{}' ({}) has no dynamic input '{port}'",
                        self.name,
                        d.name,
                        d.op_type()
                    ))
                })?;
        for (k, s) in srcs.iter().enumerate() {
            self.check_outref(*s, &format!("input '{port}{k}' of node '{}'", d.name))?;
            if s.node == dst {
                return invalid(format!(
                    "graph '{}': node '{}' cannot consume its own output",
                    self.name, d.name
                ));
            }
        }
        let node = &mut self.nodes[dst.index()];
        expand_dynamic(
            &mut node.input_names,
            &mut node.inputs,
            &node.op.inputs,
            def_pos,
            port,
            srcs.iter().map(|s| Some(*s)).collect(),
        );
        Ok(())
    }

    /// Set the number of instances of dynamic output `port` of `node`.
    pub fn set_dynamic_outputs(&mut self, id: NodeId, port: &str, count: usize) -> AscResult<()> {
        let d = self.node(id)?;
        let def_pos =
            d.op.outputs
                .iter()
                .position(|p| p.name == port && p.kind == PortKind::Dynamic)
                .ok_or_else(|| {
                    AscError::NotFound(format!(
                        "graph '{}': node '{}' ({}) has no dynamic output '{port}'",
                        self.name,
                        d.name,
                        d.op_type()
                    ))
                })?;
        let node = &mut self.nodes[id.index()];
        let mut outs: Vec<Option<Tensor>> = node.outputs.drain(..).map(Some).collect();
        expand_dynamic(
            &mut node.output_names,
            &mut outs,
            &node.op.outputs,
            def_pos,
            port,
            vec![Some(Tensor::default()); count],
        );
        node.outputs = outs.into_iter().map(|t| t.unwrap_or_default()).collect();
        Ok(())
    }

    /// Consumers of every output: `(consumer, input index)` per `OutRef` (computed on demand).
    pub fn consumers(&self, id: NodeId) -> Vec<(u32, NodeId, usize)> {
        let mut v = Vec::new();
        for (ci, n) in self.nodes.iter().enumerate() {
            for (k, inp) in n.inputs.iter().enumerate() {
                if let Some(r) = inp {
                    if r.node == id {
                        v.push((r.index, NodeId(ci as u32), k));
                    }
                }
            }
        }
        v
    }

    /// The producer's output tensor feeding input `input` of `id` (the input view).
    pub fn input_tensor(&self, id: NodeId, input: usize) -> Option<&Tensor> {
        let r = (*self.nodes.get(id.index())?.inputs.get(input)?)?;
        self.nodes
            .get(r.node.index())?
            .outputs
            .get(r.index as usize)
    }

    /// Output tensor `index` of `id`.
    pub fn tensor(&self, id: NodeId, index: usize) -> AscResult<&Tensor> {
        let n = self.node(id)?;
        n.outputs.get(index).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': node '{}' has no output {index} (it has {})",
                self.name,
                n.name,
                n.outputs.len()
            ))
        })
    }

    /// Mutable output tensor access.
    pub fn tensor_mut(&mut self, id: NodeId, index: usize) -> AscResult<&mut Tensor> {
        self.tensor(id, index)?;
        Ok(&mut self.nodes[id.index()].outputs[index])
    }

    /// Set the view of output `index` of `id` to contiguous over `axes`: repeats = axis sizes,
    /// strides = suffix products (last 1).
    pub fn set_contiguous_view(
        &mut self,
        id: NodeId,
        index: usize,
        axes: &[AxisId],
    ) -> AscResult<()> {
        let mut sizes = Vec::with_capacity(axes.len());
        for a in axes {
            sizes.push(self.axis_checked(*a)?.size.clone());
        }
        let strides = contiguous_strides(&sizes);
        let t = self.tensor_mut(id, index)?;
        t.axis = axes.to_vec();
        t.repeats = sizes;
        t.strides = strides;
        Ok(())
    }

    /// Set the loop axes of a node (ids must exist and be distinct).
    pub fn set_sched_axis(&mut self, id: NodeId, axes: &[AxisId]) -> AscResult<()> {
        for (i, a) in axes.iter().enumerate() {
            self.axis_checked(*a)?;
            if axes[..i].contains(a) {
                return invalid(format!(
                    "node '{}': axis {} appears twice in sched.axis",
                    self.node(id)?.name,
                    self.axis_name(*a)
                ));
            }
        }
        self.node_mut(id)?.attr.sched.axis = axes.to_vec();
        Ok(())
    }

    /// Set an IR attribute, checking the prototype's type when the attribute is declared.
    pub fn set_ir_attr(&mut self, id: NodeId, name: &str, value: AttrValue) -> AscResult<()> {
        let n = self.node(id)?;
        if let Some(def) = n.op.find_attr(name) {
            if !def.ty.accepts(&value) {
                return invalid(format!(
                    "node '{}' ({}): attribute '{name}' takes a value of type {}",
                    n.name,
                    n.op_type(),
                    def.ty.name()
                ));
            }
        } else if registry::lookup(&n.op.op_type).is_some() {
            return not_found(format!(
                "node '{}' ({}): no IR attribute '{name}'",
                n.name,
                n.op_type()
            ));
        }
        self.node_mut(id)?
            .attr
            .ir_attr
            .insert(name.to_string(), value);
        Ok(())
    }
}

fn expand_dynamic<T: Clone>(
    names: &mut Vec<String>,
    vals: &mut Vec<Option<T>>,
    defs: &[crate::registry::PortDef],
    def_pos: usize,
    port: &str,
    new_vals: Vec<Option<T>>,
) {
    // Remove existing instances of the port.
    let is_inst = |n: &str| {
        n.strip_prefix(port)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut keep_names = Vec::new();
    let mut keep_vals = Vec::new();
    for (n, v) in names.drain(..).zip(vals.drain(..)) {
        if !is_inst(&n) || defs.iter().any(|d| d.name == n) {
            keep_names.push(n);
            keep_vals.push(v);
        }
    }
    // Insert after the ports declared before this one.
    let before: Vec<&str> = defs[..def_pos].iter().map(|d| d.name.as_str()).collect();
    let mut at = 0;
    for (i, n) in keep_names.iter().enumerate() {
        let belongs = before.iter().any(|b| {
            n == b
                || n.strip_prefix(b)
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|c| c.is_ascii_digit()))
        });
        if belongs {
            at = i + 1;
        }
    }
    let k = new_vals.len();
    let ins_names: Vec<String> = (0..k).map(|i| format!("{port}{i}")).collect();
    keep_names.splice(at..at, ins_names);
    keep_vals.splice(at..at, new_vals);
    *names = keep_names;
    *vals = keep_vals;
}
