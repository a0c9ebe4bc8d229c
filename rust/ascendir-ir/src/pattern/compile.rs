//! Reading rules from pattern graphs and merging them into one [`PatternSet`].

use rustc_hash::FxHashMap;

use crate::attr::AttrValue;
use crate::dtype::DataType;
use crate::graph::{Graph, NodeId};
use crate::infer::shape::tensor_f64;
use crate::tensor::Tensor;

use super::{Local, PatternSet, Pred, Rule, Shared, PATTERN_ATTRS};

/// Why a pattern graph cannot be compiled, or a query is out of range.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PatternError {
    /// The pattern graph has no output to be the pattern's root.
    #[error("pattern '{0}' has no output (its root)")]
    NoRoot(String),
    /// The root is a capture or a constant: it must be an op.
    #[error("pattern '{0}': the root must be an op, not a capture or a constant")]
    RootNotOp(String),
    /// A node of the pattern graph cannot be read as a pattern node.
    #[error("pattern '{0}': {1}")]
    Invalid(String, String),
    /// No rule of that index.
    #[error("no rule {0} (the set has {1})")]
    NoRule(usize, usize),
    /// The node is not in the graph.
    #[error("the node is not in the graph")]
    NotInGraph,
}

/// The elements of a numeric constant as `f64` (float16 and bfloat16 included).
pub(crate) fn tensor_values(t: &Tensor) -> Result<Vec<f64>, String> {
    let halves = |f: fn(u16) -> f32| -> Vec<f64> {
        t.data
            .chunks_exact(2)
            .map(|c| f64::from(f(u16::from_le_bytes([c[0], c[1]]))))
            .collect()
    };
    match t.desc.dtype {
        DataType::FLOAT16 => Ok(halves(|h| half::f16::from_bits(h).to_f32())),
        DataType::BF16 => Ok(halves(|b| f32::from_bits(u32::from(b) << 16))),
        _ => tensor_f64(t),
    }
}

impl PatternSet {
    /// Compile named pattern graphs into one matcher (rule `i` is the `i`-th graph).
    pub fn new(patterns: &[(String, &Graph)]) -> Result<Self, PatternError> {
        let mut set = PatternSet::default();
        let mut interned: FxHashMap<String, usize> = FxHashMap::default();
        for (name, g) in patterns {
            let rule = read_rule(name, g)?;
            let mut shared_of = Vec::with_capacity(rule.nodes.len());
            let mut nodes = rule.nodes;
            for local in nodes.iter_mut() {
                let inputs: Vec<Option<(usize, i32)>> = local
                    .inputs
                    .iter()
                    .map(|i| i.map(|(c, out)| (shared_of[c], out)))
                    .collect();
                let key = format!("{:?}|{:?}", local.pred, inputs);
                let next = set.shared.len();
                let s = *interned.entry(key).or_insert(next);
                if s == next {
                    set.shared.push(Shared {
                        pred: local.pred.clone(),
                        inputs,
                    });
                }
                local.shared = s;
                shared_of.push(s);
            }
            let root_type = match &nodes[rule.root].pred {
                Pred::Op(ty, _) => ty.clone(),
                _ => return Err(PatternError::RootNotOp(name.clone())),
            };
            let index = set.by_root_type.entry(root_type).or_default();
            let root_node = &nodes[rule.root];
            let scalar_input = root_node.inputs.iter().enumerate().find_map(|(i, inp)| {
                let (c, _) = (*inp)?;
                match nodes[c].pred {
                    Pred::Scalar(v) => Some((i, super::scalar_key(v))),
                    _ => None,
                }
            });
            let r = set.rules.len();
            match scalar_input {
                // A NaN scalar equals nothing: the rule can never match.
                Some((_, None)) => {}
                Some((i, Some(bits))) => index.by_scalar.entry((i, bits)).or_default().push(r),
                None => index.generic.push(r),
            }
            set.rules.push(Rule { nodes, ..rule });
        }
        Ok(set)
    }
}

/// The local nodes of one rule, inputs before their readers (a post-order from the root, then
/// from each further output in turn).
fn read_rule(name: &str, g: &Graph) -> Result<Rule, PatternError> {
    let invalid = |msg: String| PatternError::Invalid(name.to_string(), msg);
    if g.outputs().is_empty() {
        return Err(PatternError::NoRoot(name.to_string()));
    }
    let mut index: FxHashMap<NodeId, usize> = FxHashMap::default();
    let mut nodes: Vec<Local> = Vec::new();
    for &(out_node, _) in g.outputs() {
        post_order(g, out_node, &mut index, &mut nodes, &invalid)?;
    }
    for i in 0..nodes.len() {
        for (c, out) in nodes[i].inputs.clone().into_iter().flatten() {
            if let Some(u) = nodes[c].uses.get_mut(out.max(0) as usize) {
                *u += 1;
            }
        }
    }
    let mut outputs: Vec<(usize, i32)> = Vec::with_capacity(g.outputs().len());
    for (k, &(out_node, out)) in g.outputs().iter().enumerate() {
        let local = *index
            .get(&out_node)
            .ok_or_else(|| invalid(format!("output {k} is not in the pattern")))?;
        if k > 0 && !matches!(nodes[local].pred, Pred::Op(..)) {
            return Err(invalid(format!(
                "output {k} is a capture or a constant: every output after the first must be \
                 an op's output"
            )));
        }
        if outputs.contains(&(local, out)) {
            return Err(invalid(format!("output {k} repeats an earlier output")));
        }
        if let Some(open) = nodes[local].open.get_mut(out.max(0) as usize) {
            // A pattern output may be read outside the match (and be a graph output).
            *open = true;
        }
        outputs.push((local, out));
    }
    let (root, root_out) = outputs[0];
    let paths = super::outputs::search_paths(&nodes, &outputs).map_err(invalid)?;
    Ok(Rule {
        name: name.to_string(),
        nodes,
        root,
        root_out,
        outputs,
        paths,
    })
}

/// Append the nodes below `from` not seen yet to `nodes`, inputs before their readers.
fn post_order(
    g: &Graph,
    from: NodeId,
    index: &mut FxHashMap<NodeId, usize>,
    nodes: &mut Vec<Local>,
    invalid: &dyn Fn(String) -> PatternError,
) -> Result<(), PatternError> {
    // Iterative post-order: (node, inputs pushed).
    let mut stack = vec![(from, false)];
    while let Some((id, expanded)) = stack.pop() {
        if index.contains_key(&id) {
            continue;
        }
        let node = g.node(id).map_err(|e| invalid(e.to_string()))?;
        let srcs: Vec<_> = node.in_data_peers().collect();
        if !expanded {
            stack.push((id, true));
            if !matches!(node.op_type(), "Data" | "Const" | "Constant") {
                for src in srcs.iter().rev().flatten() {
                    if src.is_control() {
                        return Err(invalid(format!("'{}' has a control input", node.name())));
                    }
                    if !index.contains_key(&src.node) {
                        stack.push((src.node, false));
                    }
                }
            }
            continue;
        }
        let pred = read_pred(node.op(), invalid)?;
        let inputs = if matches!(pred, Pred::Op(..)) {
            let mut ins = Vec::with_capacity(srcs.len());
            for src in &srcs {
                ins.push(match src {
                    None => None,
                    Some(s) => Some((
                        *index
                            .get(&s.node)
                            .ok_or_else(|| invalid(format!("'{}' is in a cycle", node.name())))?,
                        s.index,
                    )),
                });
            }
            while ins.last() == Some(&None) {
                ins.pop();
            }
            ins
        } else {
            Vec::new()
        };
        index.insert(id, nodes.len());
        nodes.push(Local {
            name: node.name().into(),
            pred,
            inputs,
            shared: 0,
            uses: vec![0; node.num_out_data()],
            open: vec![false; node.num_out_data()],
        });
    }
    Ok(())
}

fn read_pred(
    op: &crate::op_desc::OpDesc,
    invalid: &dyn Fn(String) -> PatternError,
) -> Result<Pred, PatternError> {
    match op.op_type() {
        "Data" => Ok(Pred::Any),
        "Const" | "Constant" => {
            let Some(AttrValue::Tensor(t)) = op.attr("value") else {
                return Err(invalid(format!(
                    "Const '{}' has no tensor value",
                    op.name()
                )));
            };
            let vals = tensor_values(t).map_err(|e| invalid(format!("'{}': {e}", op.name())))?;
            Ok(match vals.as_slice() {
                [v] => Pred::Scalar(*v),
                _ => Pred::Tensor(t.desc.shape.to_vec(), vals),
            })
        }
        ty => {
            let keys: Vec<String> = match op.attr(PATTERN_ATTRS) {
                None => Vec::new(),
                Some(AttrValue::ListString(keys)) => keys.clone(),
                Some(_) => {
                    return Err(invalid(format!(
                        "'{}': {PATTERN_ATTRS} must be a list of strings",
                        op.name()
                    )))
                }
            };
            let mut attrs = Vec::with_capacity(keys.len());
            for k in keys {
                let v = op.attr(&k).cloned().ok_or_else(|| {
                    invalid(format!(
                        "'{}' lists attribute '{k}' but has none",
                        op.name()
                    ))
                })?;
                attrs.push((k, v));
            }
            Ok(Pred::Op(ty.to_string(), attrs))
        }
    }
}

#[cfg(test)]
pub(crate) fn tensor_values_for_test(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}
