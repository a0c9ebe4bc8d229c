//! Constant integer inputs and attributes of GE nodes, and the reduce axes they give.

use ascendir_ir::{DataType, Graph, NodeId, OpDesc};

use super::AxesSrc;

/// Integer values of a Const/Constant node's `value` tensor (int32 or int64).
pub fn const_ints(g: &Graph, id: NodeId) -> Option<Vec<i64>> {
    tensor_ints(&ascendir_ir::infer::engine::const_value(g.op(id).ok()?)?)
}

/// The values of an int32 / int64 tensor.
pub(crate) fn tensor_ints(t: &ascendir_ir::Tensor) -> Option<Vec<i64>> {
    let data = &t.data;
    match t.desc.dtype {
        DataType::INT64 => Some(
            data.chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
        ),
        DataType::INT32 => Some(
            data.chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes(c.try_into().unwrap_or([0; 4]))))
                .collect(),
        ),
        _ => None,
    }
}

/// An int32 / int64 tensor of `shape` holding `vals` (None when a value does not fit int32).
pub(crate) fn int_tensor(
    vals: &[i64],
    shape: &[i64],
    dtype: DataType,
) -> Option<ascendir_ir::Tensor> {
    let bytes: Vec<u8> = if dtype == DataType::INT32 {
        let mut b = Vec::with_capacity(vals.len() * 4);
        for v in vals {
            b.extend_from_slice(&i32::try_from(*v).ok()?.to_le_bytes());
        }
        b
    } else {
        vals.iter().flat_map(|v| v.to_le_bytes()).collect()
    };
    let desc = ascendir_ir::TensorDesc::new(shape, dtype, ascendir_ir::Format::ND);
    Some(ascendir_ir::Tensor::new(desc, bytes.into()))
}

/// An int or list-of-ints attribute as a list.
pub(crate) fn attr_ints(op: &OpDesc, name: &str) -> Option<Vec<i64>> {
    match op.attr(name)? {
        ascendir_ir::AttrValue::ListInt(v) => Some(v.clone()),
        ascendir_ir::AttrValue::Int(v) => Some(vec![*v]),
        _ => None,
    }
}

fn normalize_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let r = rank as i64;
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = if a < 0 { a + r } else { a };
        if n < 0 || n >= r {
            return Err(format!("axis {a} is out of range for rank {rank}"));
        }
        out.push(n as usize);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The reduce axes of node `id` under `src`, for a first operand of rank `rank`.
pub fn reduce_axes(
    g: &Graph,
    id: NodeId,
    src: &AxesSrc,
    rank: usize,
) -> Result<Vec<usize>, String> {
    let op = g.op(id).map_err(|e| e.to_string())?;
    let all = || (0..rank).collect::<Vec<_>>();
    match src {
        AxesSrc::Attr { name, empty_all } => {
            let v = attr_ints(op, name).unwrap_or_default();
            if v.is_empty() && *empty_all {
                return Ok(all());
            }
            normalize_axes(&v, rank)
        }
        AxesSrc::AttrOrConstInput(name, input) => {
            if let Some(v) = attr_ints(op, name) {
                return if v.is_empty() {
                    Ok(all())
                } else {
                    normalize_axes(&v, rank)
                };
            }
            let node = g.node(id).map_err(|e| e.to_string())?;
            match node.in_data_peer(*input) {
                None => Ok(all()),
                Some(p) => {
                    let v = const_ints(g, p.node)
                        .ok_or_else(|| "the axes input is not a constant".to_string())?;
                    if v.is_empty() {
                        Ok(all())
                    } else {
                        normalize_axes(&v, rank)
                    }
                }
            }
        }
        AxesSrc::From(name) => {
            let k = op.attr(name).and_then(|v| v.as_int()).unwrap_or(-1);
            let first = normalize_axes(&[k], rank)?;
            Ok((first[0]..rank).collect())
        }
        AxesSrc::Fixed(v) => normalize_axes(v, rank),
    }
}
