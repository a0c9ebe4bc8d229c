//! Data type checking and propagation (`graph.infer_dtypes()`), driven by the prototypes'
//! dtype variables, allowed sets and allowed combinations.

use ascendir_ir::DataType;
use rustc_hash::FxHashMap;

use crate::error::{AscError, AscResult};
use crate::graph::AscGraph;

fn list(d: &[DataType]) -> String {
    let v: Vec<&str> = d.iter().map(|t| t.serial_name()).collect();
    format!("[{}]", v.join(", "))
}

impl AscGraph {
    /// Check every node's input and output dtypes against its prototype and fill in output
    /// dtypes that follow from the inputs, in topological order. Nothing is written when a
    /// node fails (the error names it).
    pub fn infer_dtypes(&mut self) -> AscResult<()> {
        let order = self.topo_order()?;
        let mut assigned: Vec<(usize, usize, DataType)> = Vec::new();
        // Work on a scratch table so that a failure leaves the graph unchanged.
        let mut out_dtypes: Vec<Vec<DataType>> = self
            .nodes
            .iter()
            .map(|n| n.outputs.iter().map(|t| t.dtype).collect())
            .collect();
        for id in order {
            let n = &self.nodes[id.index()];
            let op = &n.op;
            let mut bind: FxHashMap<&str, DataType> = FxHashMap::default();
            let mut in_dts = Vec::new();
            for (k, inp) in n.inputs.iter().enumerate() {
                let Some(r) = inp else { continue };
                let dt = out_dtypes[r.node.index()][r.index as usize];
                in_dts.push(dt);
                let Some(port) = n.input_port_def(k) else {
                    continue;
                };
                if dt == DataType::UNDEFINED {
                    continue;
                }
                let allowed = op.allowed(&port.dtype_var).unwrap_or(&[]);
                if !allowed.is_empty() && !allowed.contains(&dt) {
                    return Err(AscError::Inference(format!(
                        "Infer dtype failed for {} {}; input_dtypes: {} is not supportted now",
                        n.name,
                        op.op_type,
                        list(&[dt])
                    )));
                }
                if let Some(prev) = bind.insert(port.dtype_var.as_str(), dt) {
                    if prev != dt {
                        return Err(AscError::Inference(format!(
                            "Infer dtype failed for {} {}; inputs of type variable {} disagree: {} vs {}",
                            n.name,
                            op.op_type,
                            port.dtype_var,
                            prev.serial_name(),
                            dt.serial_name()
                        )));
                    }
                }
            }
            let cur_out: Vec<DataType> = out_dtypes[id.index()].clone();
            let mut new_out = cur_out.clone();
            for (k, dt) in cur_out.iter().enumerate() {
                let Some(port) = n.output_port_def(k) else {
                    continue;
                };
                let var = port.dtype_var.as_str();
                let allowed = op.allowed(var).unwrap_or(&[]);
                let inferred = bind.get(var).copied().or_else(|| {
                    if allowed.len() == 1 {
                        Some(allowed[0])
                    } else {
                        None
                    }
                });
                let check_fail = |out: DataType| {
                    AscError::Inference(format!(
                        "Check dtype failed for {} {}; input_dtypes: {}, output_dytpes: {}",
                        n.name,
                        op.op_type,
                        list(&in_dts),
                        list(&[out])
                    ))
                };
                match (inferred, *dt) {
                    (Some(want), DataType::UNDEFINED) => new_out[k] = want,
                    (Some(want), have) if want != have => return Err(check_fail(have)),
                    (None, have) if have != DataType::UNDEFINED => {
                        if !allowed.is_empty() && !allowed.contains(&have) {
                            return Err(check_fail(have));
                        }
                        bind.insert(var, have);
                    }
                    _ => {}
                }
                if let Some(v) = inferred {
                    bind.insert(var, v);
                }
            }
            // Joint combinations (e.g. Cast's (from, to) pairs).
            if !op.dtype_combos.is_empty() {
                let assign: Option<Vec<DataType>> = op
                    .dtype_vars
                    .iter()
                    .map(|(v, _)| bind.get(v.as_str()).copied())
                    .collect();
                if let Some(assign) = assign {
                    if !op.dtype_combos.iter().any(|c| c == &assign) {
                        return Err(AscError::Inference(format!(
                            "Check dtype failed for {} {}; input_dtypes: {}, output_dytpes: {}",
                            n.name,
                            op.op_type,
                            list(&in_dts),
                            list(&new_out)
                        )));
                    }
                }
            }
            for (k, dt) in new_out.iter().enumerate() {
                if *dt != cur_out[k] {
                    assigned.push((id.index(), k, *dt));
                }
            }
            out_dtypes[id.index()] = new_out;
        }
        for (n, k, dt) in assigned {
            self.nodes[n].outputs[k].dtype = dt;
        }
        Ok(())
    }
}
