//! Graph rewrite helpers shared by the stage 4 rewrites (`simplify`, `attention`, `split`,
//! `fold`) and the wide-row split of stage 5: rewiring a value's uses, fresh node names, and a
//! value replaced by a constant.

use ascendir_ir::{AttrValue, Graph, InAnchor, NodeId, OpDesc, OutAnchor};

use crate::error::KindResult;

/// A name not used in `g`: `base`, else `base_1`, `base_2`, ...
pub(crate) fn fresh_name(g: &Graph, base: &str) -> String {
    let mut name = base.to_string();
    let mut k = 0;
    while g.find(&name).is_some() {
        k += 1;
        name = format!("{base}_{k}");
    }
    name
}

/// Replace every use of `from` by `to` (data consumers and graph outputs).
pub(crate) fn forward(g: &mut Graph, from: OutAnchor, to: OutAnchor) -> KindResult<()> {
    let peers: Vec<InAnchor> = g.out_peers(from).to_vec();
    for p in peers {
        g.unlink(from, p)?;
        g.link(to, p)?;
    }
    g.replace_output((from.node, from.index), (to.node, to.index))?;
    Ok(())
}

/// A Const `<name>_folded` (`_folded1`, ... when taken) holding `value`, read by every consumer
/// of output 0 of `id` (which keeps its node: pruning or the caller removes it).
pub(crate) fn replace_by_const(
    g: &mut Graph,
    id: NodeId,
    name: &str,
    value: ascendir_ir::Tensor,
) -> KindResult<NodeId> {
    let mut cname = format!("{name}_folded");
    let mut k = 0;
    while g.find(&cname).is_some() {
        k += 1;
        cname = format!("{name}_folded{k}");
    }
    let mut cop = OpDesc::new(&cname, "Const");
    cop.add_output("y", value.desc.clone())?;
    cop.set_attr("value", AttrValue::Tensor(value));
    let cid = g.add_node(cop)?;
    forward(g, OutAnchor::data(id, 0), OutAnchor::data(cid, 0))?;
    Ok(cid)
}
