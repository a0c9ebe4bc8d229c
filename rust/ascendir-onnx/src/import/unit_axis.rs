//! 1-D window ops (`Conv` and `MaxPool` over `[N, C, L]`) imported as their 2-D GE op over a
//! unit H axis, as the PyTorch frontend imports `conv1d`: each lifted input is read through
//! an `Unsqueeze` (axis 2), output 0 through a `Squeeze` (axis 2) that takes the ONNX value's
//! name. GE has no 1-D window op; the 2-D op serves every stage (inference, evaluate,
//! compile, export) with the same numbers.

use std::borrow::Cow;

use ascendir_ir::{AttrValue, InAnchor, NodeId, OpDesc, OutAnchor};

use super::{Builder, Pending};
use crate::error::OnnxResult;
use crate::pb;

/// Make the `Unsqueeze` in front of every port of node `id` that reads an ONNX input listed
/// in `unit_h`, and the `Squeeze` after its output 0; returns the links still to make (from
/// the ONNX values to the `Unsqueeze` nodes).
pub(super) fn lift<'m>(
    b: &mut Builder<'m, '_>,
    n: &'m pb::NodeProto,
    id: NodeId,
    name: &str,
    inputs: &[(Cow<'static, str>, Option<usize>, bool)],
    unit_h: &[usize],
) -> OnnxResult<Vec<Pending<'m>>> {
    let mut pending = Vec::new();
    for (port, (_, src, _)) in inputs.iter().enumerate() {
        let Some(k) = src.filter(|k| unit_h.contains(k)) else {
            continue;
        };
        let value = n.input.get(k).map_or("", |v| pb::text(v));
        if value.is_empty() {
            continue;
        }
        let uname = b
            .unique_node_name(&format!("{name}/unsqueeze{k}"))
            .into_owned();
        let mut op = OpDesc::new(&uname, "Unsqueeze");
        op.add_input("x", b.desc(value));
        op.add_output("y", b.unknown.clone())?;
        op.set_attr("axes", AttrValue::ListInt(vec![2]));
        let u = b.g.add_node(op)?;
        b.g.link(OutAnchor::data(u, 0), InAnchor::data(id, port))?;
        pending.push(Pending {
            node: u,
            port: 0,
            name: value,
        });
    }
    if let Some(out) = n.output.first().filter(|o| !o.is_empty()) {
        let value = pb::text(out);
        let sname = b.unique_node_name(&format!("{name}/squeeze")).into_owned();
        let mut op = OpDesc::new(&sname, "Squeeze");
        op.add_input("x", b.unknown.clone());
        op.add_output("y", b.desc(value))?;
        op.set_attr("axis", AttrValue::ListInt(vec![2]));
        let s = b.g.add_node(op)?;
        b.g.link(OutAnchor::data(id, 0), InAnchor::data(s, 0))?;
        b.values.insert(value, (s, 0));
    }
    Ok(pending)
}
