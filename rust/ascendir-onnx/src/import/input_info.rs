//! What the op mappings may ask about a node's inputs while the graph is being built
//! ([`InputInfo`]): constant values, dims and element types.

use ascendir_ir::{AttrValue, DataType, Graph, NodeId};

use super::Builder;
use crate::ops::InputInfo;
use crate::types::{desc_from_type, tensor_ints};

impl InputInfo for Builder<'_, '_> {
    fn const_ints(&self, name: &str) -> Option<Vec<i64>> {
        let id = *self.consts.get(name)?;
        match self.g.op(id).ok()?.attr("value") {
            Some(AttrValue::Tensor(t)) => tensor_ints(t),
            _ => None,
        }
    }

    fn dtype(&self, name: &str) -> Option<ascendir_ir::DataType> {
        let known = |d: ascendir_ir::DataType| (d != ascendir_ir::DataType::UNDEFINED).then_some(d);
        if let Some(d) = self.descs.get(name).and_then(|d| known(d.dtype)) {
            return Some(d);
        }
        if let Some(d) = known(desc_from_type(self.types.get(name).copied()).dtype) {
            return Some(d);
        }
        let &(node, out) = self.values.get(name)?;
        own_dtype(&self.g, node, out)
    }

    fn dims(&self, name: &str) -> Option<Vec<i64>> {
        if let Some(id) = self.consts.get(name) {
            if let Some(AttrValue::Tensor(t)) = self.g.op(*id).ok()?.attr("value") {
                return Some(t.desc.shape.to_vec());
            }
        }
        let d = desc_from_type(self.types.get(name).copied());
        (d.shape.as_slice() != [-2]).then(|| d.shape.to_vec())
    }
}

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
