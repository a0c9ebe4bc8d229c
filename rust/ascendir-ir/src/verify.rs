//! The verifier: every broken invariant of a graph tree, listed at once.

use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeId};
use crate::op_desc::{IrInputType, OpDesc};
use crate::subgraph::{ATTR_PARENT_NODE_INDEX, MAX_SUBGRAPH_DEPTH};
use crate::topo::TopoSorter;

/// Types whose inputs may stay unlinked: graph inputs and constants (GE `Node::Verify`).
fn is_source_type(ty: &str) -> bool {
    matches!(
        ty,
        "Data"
            | "RefData"
            | "AippData"
            | "AnnData"
            | "Const"
            | "Constant"
            | "Variable"
            | "VariableV2"
            | "ConstPlaceHolder"
            | "FileConstant"
    )
}

/// Whether the op's IR declaration names `port` as an optional input.
fn is_declared_optional(op: &OpDesc, port: &str) -> bool {
    op.meta().is_some_and(|m| {
        m.ir_inputs
            .iter()
            .any(|(name, ty)| &**name == port && *ty == IrInputType::Optional)
    })
}

impl Graph {
    /// Every problem of this graph and, on a root, of its subgraph tree: the structural
    /// invariants (`check_invariants`: two-sided links, anchor counts, order, names), input
    /// and output entries, cycles (one reported per graph), and the subgraph model (parent
    /// links resolve and point back from a slot of the parent op, every slot resolves, names
    /// unique, subgraph `Data` / `NetOutput` index attributes in range), and required inputs
    /// left unconnected (GE `Node::Verify`: every input of an op that is not a graph input
    /// type is linked, unless it is optional or holds the invalid desc of an unset slot).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut sorter = TopoSorter::new();
        self.graph_problems(&mut sorter, &mut out);
        for sub in &self.subgraphs {
            sub.graph_problems(&mut sorter, &mut out);
        }
        if self.parent.is_none() {
            self.tree_problems(&mut out);
        }
        out
    }

    /// `Ok(())`, or `IrError::Validation` listing every problem (see [`Graph::problems`]).
    pub fn validate(&self) -> IrResult<()> {
        let problems = self.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(IrError::Validation {
                graph: self.name().to_string(),
                problems,
            })
        }
    }

    fn graph_problems(&self, sorter: &mut TopoSorter, out: &mut Vec<String>) {
        let g = self.name();
        for p in self.check_invariants() {
            out.push(format!("graph '{g}': {p}"));
        }
        for &id in self.inputs() {
            if !self.contains(id) {
                out.push(format!(
                    "graph '{g}': an input entry refers to a removed node"
                ));
            }
        }
        for &(id, index) in self.outputs() {
            match self.node(id) {
                Err(_) => out.push(format!(
                    "graph '{g}': an output entry refers to a removed node"
                )),
                Ok(n) if index < 0 || index as usize >= n.num_out_data() => out.push(format!(
                    "graph '{g}': output entry '{}':{index} is out of range ({} outputs)",
                    n.name(),
                    n.num_out_data()
                )),
                Ok(_) => {}
            }
        }
        self.net_output_problems(out);
        self.unconnected_input_problems(out);
        if let Some(cycle) = sorter.find_cycle(self) {
            let names: Vec<&str> = cycle.iter().map(|&id| self.arena()[id].name()).collect();
            out.push(format!("graph '{g}' has a cycle: {}", names.join(" -> ")));
        }
        if !self.subgraphs.is_empty() && self.parent.is_some() {
            out.push(format!(
                "subgraph '{g}' holds registered subgraphs; they belong on the root graph"
            ));
        }
    }

    /// The graph outputs and the NetOutput's data inputs must name the same values, in order
    /// (when both are there): evaluation and export read one, the GE file the other.
    fn net_output_problems(&self, out: &mut Vec<String>) {
        let (Some(net), false) = (self.net_output(), self.outputs().is_empty()) else {
            return;
        };
        let Ok(n) = self.node(net) else { return };
        let feeds: Vec<Option<(NodeId, i32)>> = (0..n.num_in_data())
            .map(|k| n.in_data_peer(k).map(|p| (p.node, p.index)))
            .collect();
        let entries: Vec<Option<(NodeId, i32)>> = self.outputs().iter().map(|&e| Some(e)).collect();
        if feeds != entries {
            let show = |v: &[Option<(NodeId, i32)>]| {
                v.iter()
                    .map(|e| match e {
                        Some((id, i)) if self.contains(*id) => {
                            format!("'{}':{i}", self.arena()[*id].name())
                        }
                        Some(_) => "(removed)".to_string(),
                        None => "(unlinked)".to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push(format!(
                "graph '{}': the graph outputs [{}] are not what '{}' reads [{}]",
                self.name(),
                show(&entries),
                n.name(),
                show(&feeds)
            ));
        }
    }

    fn unconnected_input_problems(&self, out: &mut Vec<String>) {
        let g = self.name();
        for id in self.node_ids() {
            let n = &self.arena()[id];
            if is_source_type(n.op_type()) {
                continue;
            }
            let op = n.op();
            for (i, port) in op.inputs().iter().enumerate() {
                if n.in_data_peer(i).is_some()
                    || !port.desc.is_valid()
                    || op.is_optional_input(&port.name)
                    || is_declared_optional(op, &port.name)
                {
                    continue;
                }
                out.push(format!(
                    "graph '{g}': node '{}' ({}) input {i} '{}' is required but not connected",
                    n.name(),
                    n.op_type(),
                    &*port.name
                ));
            }
        }
    }

    fn tree_problems(&self, out: &mut Vec<String>) {
        let root = self.name();
        let index = self.subgraph_name_index();
        let lookup = |name: &str| index.get(name).map(|&i| &self.subgraphs[i]);
        for (k, depth) in self.subgraph_depths().into_iter().enumerate() {
            if let Some(d) = depth.filter(|&d| d > MAX_SUBGRAPH_DEPTH) {
                out.push(format!(
                    "subgraph '{}' is nested {d} levels deep; the limit is {MAX_SUBGRAPH_DEPTH}",
                    self.subgraphs[k].name()
                ));
            }
        }
        for (k, sub) in self.subgraphs.iter().enumerate() {
            let name = sub.name();
            if name == root || index.get(name).is_some_and(|&first| first < k) {
                out.push(format!("subgraph name '{name}' is used twice in the tree"));
            }
            let Some(link) = &sub.parent else {
                out.push(format!("subgraph '{name}' has no parent link"));
                continue;
            };
            let owner = if link.graph == root {
                Some(self)
            } else {
                lookup(&link.graph)
            };
            let Some(owner) = owner else {
                out.push(format!(
                    "subgraph '{name}': parent graph '{}' is not in the tree",
                    link.graph
                ));
                continue;
            };
            let Ok(parent) = owner.node(link.node) else {
                out.push(format!(
                    "subgraph '{name}': its parent node is not in graph '{}'",
                    link.graph
                ));
                continue;
            };
            if !parent
                .op()
                .subgraph_instance_names()
                .iter()
                .any(|n| n == name)
            {
                out.push(format!(
                    "subgraph '{name}': parent node '{}' has no slot naming it",
                    parent.name()
                ));
            }
            let n_in = parent.num_in_data() as i64;
            let n_out = parent.num_out_data() as i64;
            for id in sub.node_ids() {
                let n = &sub.arena()[id];
                if n.op_type() == "Data" {
                    if let Some(v) = n.op().attr(ATTR_PARENT_NODE_INDEX).and_then(|v| v.as_int()) {
                        if v < 0 || v >= n_in {
                            out.push(format!(
                                "subgraph '{name}': Data '{}' has {ATTR_PARENT_NODE_INDEX} {v} but parent '{}' has {n_in} inputs",
                                n.name(),
                                parent.name()
                            ));
                        }
                    }
                }
                if n.op_type() == "NetOutput" {
                    for (i, port) in n.op().inputs().iter().enumerate() {
                        let v = port
                            .desc
                            .attrs
                            .as_ref()
                            .and_then(|a| a.get(ATTR_PARENT_NODE_INDEX))
                            .and_then(|v| v.as_int());
                        // A Loop body's condition (input 0) feeds no parent output.
                        let cond = i == 0 && v == Some(-1) && parent.op_type() == "Loop";
                        if let Some(v) = v.filter(|_| !cond) {
                            if v < 0 || v >= n_out {
                                out.push(format!(
                                    "subgraph '{name}': NetOutput '{}' input {i} has {ATTR_PARENT_NODE_INDEX} {v} but parent '{}' has {n_out} outputs",
                                    n.name(),
                                    parent.name()
                                ));
                            }
                        }
                    }
                }
            }
        }
        // Every instance name on an op of the tree resolves to a subgraph parented there.
        let graphs = std::iter::once(self).chain(self.subgraphs.iter());
        for g in graphs {
            for id in g.node_ids() {
                let n = &g.arena()[id];
                for inst in n.op().subgraph_instance_names() {
                    if inst.is_empty() {
                        continue;
                    }
                    match lookup(inst) {
                        None => out.push(format!(
                            "node '{}' of graph '{}' names subgraph '{inst}', which is not registered",
                            n.name(),
                            g.name()
                        )),
                        Some(s) => {
                            let ok = s
                                .parent
                                .as_ref()
                                .is_some_and(|l| l.graph == g.name() && l.node == id);
                            if !ok {
                                out.push(format!(
                                    "subgraph '{inst}' is named by node '{}' of graph '{}' but its parent link points elsewhere",
                                    n.name(),
                                    g.name()
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
}
