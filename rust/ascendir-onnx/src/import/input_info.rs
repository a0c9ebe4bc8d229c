//! What the op mappings may ask about a node's inputs while the graph is being built
//! ([`InputInfo`]): constant values, dims and element types.

use ascendir_ir::infer::{infer_op, NoCustom, RuleKind};
use ascendir_ir::{registry, AttrValue, DataType, Graph, NodeId, Side};

use super::Builder;
use crate::ops::InputInfo;
use crate::types::{desc_from_type, tensor_ints};

/// How many producers deep an undeclared element type is traced.
const MAX_TRACE: usize = 24;

impl InputInfo for Builder<'_, '_> {
    fn const_ints(&self, name: &str) -> Option<Vec<i64>> {
        let id = *self.consts.get(name)?;
        match self.g.op(id).ok()?.attr("value") {
            Some(AttrValue::Tensor(t)) => tensor_ints(t),
            _ => None,
        }
    }

    fn dtype(&self, name: &str) -> Option<ascendir_ir::DataType> {
        self.traced_dtype(name, 0)
    }

    fn rank(&self, name: &str) -> Option<usize> {
        self.traced_rank(name)
    }

    fn dims(&self, name: &str) -> Option<Vec<i64>> {
        if let Some(id) = self.consts.get(name) {
            if let Some(AttrValue::Tensor(t)) = self.g.op(*id).ok()?.attr("value") {
                return Some(t.desc.shape.to_vec());
            }
        }
        let d = desc_from_type(self.types.get(name).copied());
        if d.shape.as_slice() != [-2] {
            return Some(d.shape.to_vec());
        }
        // A value of an enclosing graph (an outer initializer a body reads, say).
        self.outer_dims.get(name).cloned()
    }
}

impl Builder<'_, '_> {
    /// The rank of value `name`: declared, else fixed by its producer's GE type (a `MatMulV2`
    /// or `Flatten` makes 2-D values, a 2-D window op 4-D ones, a 3-D one 5-D ones), else
    /// that of the input a rank-keeping producer (a `same_as` rule, a global pool) passes on,
    /// followed back one producer at a time (a loop, at most once per node).
    fn traced_rank(&self, name: &str) -> Option<usize> {
        let mut value = name.to_string();
        for _ in 0..=self.values.len() {
            if let Some(d) = self.dims(&value) {
                return Some(d.len());
            }
            let &(node, out) = self.values.get(value.as_str())?;
            let op = self.g.op(node).ok()?;
            let port = match op.op_type() {
                "MatMulV2" | "Flatten" => return Some(2),
                "Conv2D" | "MaxPoolV3" | "AvgPoolV2" => return Some(4),
                "Conv3D" | "MaxPool3D" | "AvgPool3D" => return Some(5),
                "GlobalAveragePool" | "GlobalMaxPool" => 0,
                ty => {
                    let proto = registry::lookup(ty)?;
                    if proto.rule.kind != RuleKind::SameAs || out != 0 {
                        return None;
                    }
                    let Some(ascendir_ir::infer::Param::Str(input)) =
                        proto.rule.params.get("input")
                    else {
                        return None;
                    };
                    proto.inputs.iter().position(|i| &i.name == input)?
                }
            };
            value = op.input_desc(port).ok()?.name.as_deref()?.to_string();
        }
        None
    }

    /// The element type of value `name`: declared, else decided by its producer (see
    /// [`own_dtype`]), else what the producer's registered rule makes of its inputs' types,
    /// traced back through their producers (at most [`MAX_TRACE`] deep; every answer is
    /// remembered, so each value is traced once).
    fn traced_dtype(&self, name: &str, depth: usize) -> Option<DataType> {
        let known = |d: DataType| (d != DataType::UNDEFINED).then_some(d);
        if let Some(d) = self.descs.get(name).and_then(|d| known(d.dtype)) {
            return Some(d);
        }
        if let Some(d) = known(desc_from_type(self.types.get(name).copied()).dtype) {
            return Some(d);
        }
        // A value of an enclosing graph (a body's captures become `Data` nodes once linked).
        if let Some(&d) = self.outer_types.get(name) {
            return Some(d);
        }
        let &(node, out) = self.values.get(name)?;
        if let Some(d) = own_dtype(&self.g, node, out) {
            return Some(d);
        }
        if let Some(&d) = self.traced.borrow().get(name) {
            return d;
        }
        let d = if depth < MAX_TRACE {
            self.rule_dtype(node, out, depth)
        } else {
            None
        };
        self.traced.borrow_mut().insert(name.to_string(), d);
        d
    }

    /// Output `out`'s element type by the registered rule of `node`'s type, its inputs' types
    /// traced by name (the port descs carry the value names).
    fn rule_dtype(&self, node: NodeId, out: usize, depth: usize) -> Option<DataType> {
        let op = self.g.op(node).ok()?;
        if let Some(onnx) = op.op_type().strip_prefix("onnx::") {
            // An op kept as ONNX whose first output has its first input's type (one type
            // variable `T` ties them in the ONNX schema).
            if out != 0 || !SAME_TYPE_AS_FIRST_INPUT.contains(&onnx) {
                return None;
            }
            let value = op.input_desc(0).ok()?.name.as_deref()?.to_string();
            return self.traced_dtype(&value, depth + 1);
        }
        let proto = registry::lookup(op.op_type())?;
        if proto.rule.kind == RuleKind::Custom {
            return None;
        }
        let mut op = op.clone();
        for i in 0..op.num_inputs() {
            let desc = op.input_desc(i).ok()?;
            if desc.dtype != DataType::UNDEFINED {
                continue;
            }
            let Some(value) = desc.name.as_deref().map(str::to_string) else {
                continue;
            };
            if let Some(d) = self.traced_dtype(&value, depth + 1) {
                op.port_desc_mut(Side::Input, i).ok()?.dtype = d;
            }
        }
        let outs = infer_op(&proto, &op, &|_| None, &mut NoCustom).ok()?;
        outs.get(out)
            .map(|o| o.dtype)
            .filter(|&d| d != DataType::UNDEFINED)
    }
}

/// ONNX ops (kept unmapped) whose first output has the element type of their first input.
const SAME_TYPE_AS_FIRST_INPUT: &[&str] = &[
    "Pad",
    "Conv",
    "ConvTranspose",
    "AveragePool",
    "MaxPool",
    "LpPool",
    "Transpose",
    "ReduceL1",
    "ReduceSumSquare",
    "ReduceLogSum",
    "LpNormalization",
    "Hardmax",
    "Compress",
    "CenterCropPad",
    "Col2Im",
    "DeformConv",
    "GroupNormalization",
    "LRN",
    "Shrink",
    "RotaryEmbedding",
    "Attention",
    "NegativeLogLikelihoodLoss",
];

/// The element type of output `out` of a mapped `node` whose type was not declared, where the
/// op itself decides it (a Cast's `dst_type`, a Shape's `dtype`, a comparison's bool, ...).
/// Inputs are linked after every node is built, so nothing is traced through them here.
fn own_dtype(g: &Graph, node: NodeId, out: usize) -> Option<DataType> {
    let op = g.op(node).ok()?;
    let d = op.output_desc(out).ok()?.dtype;
    if d != DataType::UNDEFINED {
        return Some(d);
    }
    let from_attr = |key: &str| {
        op.attr(key)
            .and_then(AttrValue::as_int)
            .and_then(DataType::from_ge)
    };
    match op.op_type() {
        "Cast" => from_attr("dst_type"),
        "Shape" | "Size" | "ArgMaxD" | "ArgMinD" | "NonZero" => from_attr("dtype"),
        "TopKV2" if out == 1 => from_attr("indices_dtype"),
        "Equal" | "NotEqual" | "Less" | "LessEqual" | "Greater" | "GreaterEqual" | "LogicalAnd"
        | "LogicalOr" | "LogicalNot" | "IsNan" | "IsInf" | "IsFinite" => Some(DataType::BOOL),
        _ => None,
    }
}
