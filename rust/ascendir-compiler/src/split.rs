//! Part of stage 4 (GE's default path): a split becomes one strided Load per
//! output. Each used output of a `SplitD` / `SplitVD` / `Split` / `SplitV` whose split dim and
//! sizes are static is replaced by a `SliceD` of the input (offset on the split axis, whole
//! extent elsewhere), which the slice row lowers; the split node goes. Only when the `split`
//! family is on (GE has it off by default).

use crate::error::KindResult;
use std::sync::Arc;

use ascendir_ir::{AttrValue, Graph, InAnchor, NodeId, OpDesc, OutAnchor};

use crate::lower::{attr_ints, const_ints, norm_axis};
use crate::rewrite::{forward, fresh_name};
use crate::symbolize::SymTable;

/// The input, axis and output extents of split `id` (None when not static or not plain).
fn plan(g: &Graph, syms: &SymTable, id: NodeId) -> Option<(OutAnchor, usize, Vec<i64>)> {
    let n = g.node(id).ok()?;
    let op = n.op();
    if !n.in_control_peers().is_empty()
        || !n.out_control_peers().is_empty()
        || !op.subgraph_instance_names().is_empty()
    {
        return None;
    }
    let const_in = |k: usize| n.in_data_peer(k).and_then(|p| const_ints(g, p.node));
    let (x, axis, sizes): (OutAnchor, i64, Option<Vec<i64>>) = match op.op_type() {
        "SplitD" => (n.in_data_peer(0)?, op.attr("split_dim")?.as_int()?, None),
        "SplitVD" => (
            n.in_data_peer(0)?,
            op.attr("split_dim")?.as_int()?,
            Some(attr_ints(op, "size_splits")?),
        ),
        "Split" => (n.in_data_peer(1)?, *const_in(0)?.first()?, None),
        "SplitV" => (
            n.in_data_peer(0)?,
            *const_in(2)?.first()?,
            Some(const_in(1)?),
        ),
        _ => return None,
    };
    let shape = syms.shape((x.node, u32::try_from(x.index).ok()?))?;
    let a = norm_axis(axis, shape.len())?;
    let dim = shape[a].as_i64()?;
    let count = n.num_out_data();
    let sizes = match sizes {
        None => {
            let k = i64::try_from(count).ok()?;
            if k == 0 || dim % k != 0 {
                return None;
            }
            vec![dim / k; count]
        }
        Some(mut s) => {
            // One -1 takes what the others leave.
            let known: i64 = s.iter().filter(|&&v| v >= 0).sum();
            match s.iter().filter(|&&v| v < 0).count() {
                0 => {}
                1 if known <= dim => {
                    for v in s.iter_mut().filter(|v| **v < 0) {
                        *v = dim - known;
                    }
                }
                _ => return None,
            }
            s
        }
    };
    if sizes.len() != count || sizes.iter().any(|&v| v < 0) || sizes.iter().sum::<i64>() != dim {
        return None;
    }
    Some((x, a, sizes))
}

/// Replace every static split of `g` by slices of its input; returns how many splits went.
pub fn splits_to_slices(g: &mut Graph, syms: &SymTable) -> KindResult<usize> {
    let splits: Vec<NodeId> = g
        .node_ids()
        .filter(|&id| {
            g.op(id)
                .is_ok_and(|o| matches!(o.op_type(), "SplitD" | "SplitVD" | "Split" | "SplitV"))
        })
        .collect();
    let mut done = 0;
    for id in splits {
        let Some((x, axis, sizes)) = plan(g, syms, id) else {
            continue;
        };
        let (name, in_desc, out_descs) = {
            let op = g.op(id).map_err(|e| e.to_string())?;
            let x_port = usize::from(op.op_type() == "Split");
            (
                op.name().to_string(),
                op.inputs()
                    .get(x_port)
                    .map(|p| p.desc.clone())
                    .ok_or("split without input")?,
                op.outputs()
                    .iter()
                    .map(|p| p.desc.clone())
                    .collect::<Vec<_>>(),
            )
        };
        let rank = in_desc.shape.len().max(axis + 1);
        let mut start = 0i64;
        for (k, &size) in sizes.iter().enumerate() {
            let from = OutAnchor::data(id, k);
            let used = !g.out_peers(from).is_empty()
                || g.outputs().iter().any(|&(n, i)| n == id && i == from.index);
            if used {
                let mut offsets = vec![0i64; rank];
                let mut extent = vec![-1i64; rank];
                offsets[axis] = start;
                extent[axis] = size;
                let mut op = OpDesc::new(&fresh_name(g, &format!("{name}_slice{k}")), "SliceD");
                op.add_input("x", in_desc.clone());
                op.add_output("y", Arc::clone(&out_descs[k]))
                    .map_err(|e| e.to_string())?;
                op.set_attr("offsets", AttrValue::ListInt(offsets));
                op.set_attr("size", AttrValue::ListInt(extent));
                let sid = g.insert_node_before(id, op).map_err(|e| e.to_string())?;
                g.link(x, InAnchor::data(sid, 0))
                    .map_err(|e| e.to_string())?;
                forward(g, from, OutAnchor::data(sid, 0))?;
            }
            start += size;
        }
        g.erase_node(id).map_err(|e| e.to_string())?;
        done += 1;
    }
    Ok(done)
}
