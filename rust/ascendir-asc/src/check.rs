//! Validity checks: `validate()` (GE's `CheckValid` plus exec-order uniqueness) and the
//! HintGraph conventions.

use rustc_hash::FxHashMap;

use crate::error::{AscError, AscResult};
use crate::expr::{Expr, TriBool};
use crate::graph::{AllocType, AscGraph, ComputeType, Tensor};

impl AscGraph {
    /// Every broken invariant, each naming the node, tensor and axis involved.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let g = &self.name;
        for (i, a) in self.axes.iter().enumerate() {
            if a.id != i as i64 {
                p.push(format!(
                    "graph '{g}': axis '{}' has id {} but sits at index {i}",
                    a.name, a.id
                ));
            }
            for f in &a.from {
                if self.find_axis(*f).is_none() {
                    p.push(format!(
                        "graph '{g}': axis '{}' comes from unknown axis id {f}",
                        a.name
                    ));
                }
            }
        }
        let mut orders: FxHashMap<i64, &str> = FxHashMap::default();
        for n in &self.nodes {
            let nn = &n.name;
            for (k, a) in n.attr.sched.axis.iter().enumerate() {
                if self.find_axis(*a).is_none() {
                    p.push(format!(
                        "node '{nn}': sched.axis[{k}] = {a} is not an axis of graph '{g}'"
                    ));
                } else if n.attr.sched.axis[..k].contains(a) {
                    p.push(format!(
                        "node '{nn}': sched.axis lists axis '{}' twice",
                        self.axis_name(*a)
                    ));
                }
            }
            let la = n.attr.sched.loop_axis;
            if la >= 0 && self.find_axis(la).is_none() {
                p.push(format!(
                    "node '{nn}': loop_axis {la} is not an axis of graph '{g}'"
                ));
            }
            if n.attr.sched.exec_order >= 0 {
                if let Some(other) = orders.insert(n.attr.sched.exec_order, nn) {
                    p.push(format!(
                        "node '{nn}': exec_order {} is also used by node '{other}'",
                        n.attr.sched.exec_order
                    ));
                }
            }
            for (k, inp) in n.inputs.iter().enumerate() {
                let port = n.input_names.get(k).cloned().unwrap_or_default();
                match inp {
                    None => {
                        let optional = n.input_port_def(k).is_some_and(|d| d.kind == crate::registry::PortKind::Optional);
                        if !optional {
                            p.push(format!("node '{nn}': input '{port}' is not connected"));
                        }
                    }
                    Some(r) => match self.nodes.get(r.node.index()) {
                        None => p.push(format!("node '{nn}': input '{port}' refers to missing node id {}", r.node.0)),
                        Some(src) if r.index as usize >= src.outputs.len() => p.push(format!(
                            "node '{nn}': input '{port}' refers to output {} of node '{}', which has {}",
                            r.index,
                            src.name,
                            src.outputs.len()
                        )),
                        _ => {}
                    },
                }
            }
            for (oi, t) in n.outputs.iter().enumerate() {
                let on = n
                    .output_names
                    .get(oi)
                    .cloned()
                    .unwrap_or_else(|| oi.to_string());
                self.tensor_problems(&mut p, nn, &on, t);
            }
        }
        p
    }

    fn tensor_problems(&self, p: &mut Vec<String>, nn: &str, on: &str, t: &Tensor) {
        if t.axis.len() != t.repeats.len() || t.axis.len() != t.strides.len() {
            p.push(format!(
                "node '{nn}' output '{on}': view has {} axes, {} repeats and {} strides",
                t.axis.len(),
                t.repeats.len(),
                t.strides.len()
            ));
        }
        for a in &t.axis {
            if self.find_axis(*a).is_none() {
                p.push(format!(
                    "node '{nn}' output '{on}': axis id {a} is not an axis of graph '{}'",
                    self.name
                ));
            }
        }
        for a in &t.vectorized_axis {
            if self.find_axis(*a).is_none() {
                p.push(format!("node '{nn}' output '{on}': vectorized axis id {a} is not an axis of graph '{}'", self.name));
            }
        }
        if !t.vectorized_strides.is_empty() && t.vectorized_strides.len() != t.vectorized_axis.len()
        {
            p.push(format!(
                "node '{nn}' output '{on}': {} vectorized axes but {} vectorized strides",
                t.vectorized_axis.len(),
                t.vectorized_strides.len()
            ));
        }
        let ok = match t.mem.alloc_type {
            AllocType::Global => true,
            AllocType::Buffer => t.buf.id >= 0 && t.que.id < 0,
            AllocType::Queue => {
                t.que.id >= 0 && t.buf.id < 0 && t.que.depth > 0 && t.que.buf_num > 0
            }
            _ => false,
        };
        if !ok {
            p.push(format!(
                "node '{nn}' output '{on}': inconsistent memory binding (alloc {}, que id {} depth {} buf_num {}, buf id {})",
                t.mem.alloc_type.name(),
                t.que.id,
                t.que.depth,
                t.que.buf_num,
                t.buf.id
            ));
        }
    }

    /// `Ok` when [`AscGraph::problems`] is empty, else a validation error listing them.
    pub fn validate(&self) -> AscResult<()> {
        let problems = self.problems();
        if problems.is_empty() {
            return Ok(());
        }
        Err(AscError::Validation {
            message: format!("graph '{}' is invalid: {}", self.name, problems.join("; ")),
            problems,
        })
    }

    /// Violations of the HintGraph conventions: explicit Broadcast nodes, Broadcast directly
    /// after Load (or another Broadcast), one broadcast axis per Broadcast, one set of loop axes,
    /// reductions keep dims.
    pub fn hint_problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let mut loops: Option<(&str, &Vec<i64>)> = None;
        for n in &self.nodes {
            if !n.is_compute() {
                continue;
            }
            let nn = n.name.as_str();
            match loops {
                None => loops = Some((nn, &n.attr.sched.axis)),
                Some((first, axes)) if axes != &n.attr.sched.axis => {
                    let fmt = |v: &Vec<i64>| {
                        v.iter()
                            .map(|a| self.axis_name(*a))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    p.push(format!(
                        "node '{nn}': loop axes [{}] differ from node '{first}' [{}]",
                        fmt(&n.attr.sched.axis),
                        fmt(axes)
                    ));
                }
                _ => {}
            }
            let ct = n.attr.api.compute_type;
            let Some(out) = n.outputs.first() else {
                continue;
            };
            // A Concat's operands are of their own extent on the concat axis (the first axis
            // where an operand's differs from the output's): an extent of 1 there is a part,
            // not a broadcast.
            let concat_axis: Option<i64> = (ct == ComputeType::Concat)
                .then(|| {
                    n.inputs.iter().flatten().find_map(|r| {
                        let it = self
                            .nodes
                            .get(r.node.index())?
                            .outputs
                            .get(r.index as usize)?;
                        it.axis
                            .iter()
                            .zip(&it.repeats)
                            .find(|(a, rep)| {
                                out.axis
                                    .iter()
                                    .position(|o| o == *a)
                                    .is_some_and(|j| out.repeats.get(j) != Some(*rep))
                            })
                            .map(|(a, _)| *a)
                    })
                })
                .flatten();
            for (k, inp) in n.inputs.iter().enumerate() {
                let Some(r) = inp else { continue };
                let Some(src) = self.nodes.get(r.node.index()) else {
                    continue;
                };
                let Some(it) = src.outputs.get(r.index as usize) else {
                    continue;
                };
                let mut bcast: Vec<i64> = broadcast_axes(it, out);
                bcast.retain(|a| Some(*a) != concat_axis);
                if ct == ComputeType::Broadcast {
                    let sct = src.attr.api.compute_type;
                    if sct != ComputeType::Load && sct != ComputeType::Broadcast {
                        p.push(format!("node '{nn}': Broadcast input '{}' comes from '{}' ({}), not from a Load", n.input_names[k], src.name, src.op_type()));
                    }
                    if bcast.len() > 1 {
                        let names: Vec<String> = bcast.iter().map(|a| self.axis_name(*a)).collect();
                        p.push(format!("node '{nn}': Broadcast expands {} axes ({}); use one Broadcast per axis", bcast.len(), names.join(", ")));
                    }
                } else if ct != ComputeType::Store
                    && ct != ComputeType::Load
                    && ct != ComputeType::Reduce
                    && !bcast.is_empty()
                {
                    let names: Vec<String> = bcast.iter().map(|a| self.axis_name(*a)).collect();
                    p.push(format!(
                        "node '{nn}': input '{}' is implicitly broadcast along {}; insert a Broadcast node",
                        n.input_names[k],
                        names.join(", ")
                    ));
                }
                if ct == ComputeType::Reduce && it.axis != out.axis {
                    p.push(format!("node '{nn}': reduction does not keep dims (input axes differ from output axes)"));
                }
            }
        }
        p
    }

    /// `Ok` when the HintGraph conventions hold, else a validation error listing violations.
    pub fn validate_hint_conventions(&self) -> AscResult<()> {
        let problems = self.hint_problems();
        if problems.is_empty() {
            return Ok(());
        }
        Err(AscError::Validation {
            message: format!(
                "graph '{}' breaks HintGraph conventions: {}",
                self.name,
                problems.join("; ")
            ),
            problems,
        })
    }
}

/// Axes along which `input` has repeat 1 while `output` provably has a repeat other than 1.
fn broadcast_axes(input: &Tensor, output: &Tensor) -> Vec<i64> {
    let mut v = Vec::new();
    for (i, a) in output.axis.iter().enumerate() {
        let Some(j) = input.axis.iter().position(|x| x == a) else {
            continue;
        };
        let (Some(ri), Some(ro)) = (input.repeats.get(j), output.repeats.get(i)) else {
            continue;
        };
        if ri.is_int_value(1)
            && Expr::static_eq(ro, &Expr::int(1)) != TriBool::True
            && !ro.is_int_value(1)
        {
            v.push(*a);
        }
    }
    v
}
