//! Part of stage 4: constant folding of float computations (GE's ConstantFolding on the builtin
//! ops). An element-wise node (unary math, binary arithmetic with numpy broadcasting, Cast)
//! whose data inputs are all constants and whose float output has at most [`MAX_ELEMS`]
//! elements becomes a Const of its value, computed in f64 and rounded once to the output's
//! dtype. Larger results stay computations (folding a weight-sized tensor would grow the
//! model).

use crate::error::KindResult;
use ascendir_ir::infer::engine::const_value;
use ascendir_ir::{
    AttrValue, DataType, Format, Graph, OpDesc, Tensor, TensorDesc, TopoMode, TopoOptions,
};
use bytes::Bytes;
use half::{bf16, f16};

/// The most elements a folded value may have.
pub const MAX_ELEMS: usize = 1 << 16;

/// The values of a numeric tensor as f64 (None for other dtypes or a short payload).
fn values(t: &Tensor) -> Option<Vec<f64>> {
    let b: &[u8] = &t.data;
    let n = usize::try_from(t.desc.shape.iter().product::<i64>()).ok()?;
    let v: Vec<f64> = match t.desc.dtype {
        DataType::FLOAT => b
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        DataType::DOUBLE => b
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
        DataType::FLOAT16 => b
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        DataType::BF16 => b
            .chunks_exact(2)
            .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        DataType::INT32 => b
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        DataType::INT64 => b
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f64)
            .collect(),
        _ => return None,
    };
    (v.len() == n).then_some(v)
}

/// `vals` encoded as a float `dtype`.
fn encode(vals: &[f64], dtype: DataType) -> Option<Bytes> {
    let mut out = Vec::new();
    match dtype {
        DataType::FLOAT => vals
            .iter()
            .for_each(|v| out.extend_from_slice(&(*v as f32).to_le_bytes())),
        DataType::DOUBLE => vals
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        DataType::FLOAT16 => vals
            .iter()
            .for_each(|v| out.extend_from_slice(&f16::from_f64(*v).to_le_bytes())),
        DataType::BF16 => vals
            .iter()
            .for_each(|v| out.extend_from_slice(&bf16::from_f64(*v).to_le_bytes())),
        _ => return None,
    }
    Some(out.into())
}

/// Numpy broadcasting of two static shapes.
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|j| {
            let x = (j + a.len()).checked_sub(r).map_or(1, |i| a[i]);
            let y = (j + b.len()).checked_sub(r).map_or(1, |i| b[i]);
            match (x, y) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// The flat index into a tensor of `shape` (right-aligned in `out`, broadcast on its unit dims)
/// for every element of `out`.
fn gather_index(shape: &[i64], out: &[i64]) -> Vec<usize> {
    let r = out.len();
    let n: usize = out.iter().map(|&d| d as usize).product();
    let mut strides = vec![0usize; r];
    let mut acc = 1usize;
    for j in (0..shape.len()).rev() {
        let k = r - shape.len() + j;
        strides[k] = if shape[j] == 1 { 0 } else { acc };
        acc *= shape[j] as usize;
    }
    let mut idx = vec![0usize; n];
    let mut coord = vec![0usize; r];
    for slot in idx.iter_mut() {
        *slot = coord.iter().zip(&strides).map(|(c, s)| c * s).sum();
        for k in (0..r).rev() {
            coord[k] += 1;
            if (coord[k] as i64) < out[k] {
                break;
            }
            coord[k] = 0;
        }
    }
    idx
}

fn unary(op: &OpDesc) -> Option<fn(f64) -> f64> {
    Some(match op.op_type() {
        "Neg" => |x| -x,
        "Abs" => f64::abs,
        "Sqrt" => f64::sqrt,
        "Rsqrt" => |x| 1.0 / x.sqrt(),
        "Reciprocal" | "Inv" => |x| 1.0 / x,
        "Exp" => f64::exp,
        "Log" => {
            let f = |name: &str, default: f32| match op.attr(name) {
                Some(AttrValue::Float(v)) => *v,
                _ => default,
            };
            let plain = f("base", -1.0) == -1.0 && f("scale", 1.0) == 1.0 && f("shift", 0.0) == 0.0;
            if !plain {
                return None;
            }
            f64::ln
        }
        "Relu" => |x| if x > 0.0 { x } else { 0.0 },
        "Sigmoid" => |x| 1.0 / (1.0 + (-x).exp()),
        "Tanh" => f64::tanh,
        "Square" => |x| x * x,
        "Cast" => |x| x,
        _ => return None,
    })
}

fn binary(ty: &str) -> Option<fn(f64, f64) -> f64> {
    Some(match ty {
        "Add" | "AddV2" => |a, b| a + b,
        "Sub" => |a, b| a - b,
        "Mul" => |a, b| a * b,
        "RealDiv" | "Div" => |a, b| a / b,
        "Maximum" => f64::max,
        "Minimum" => f64::min,
        "Pow" => f64::powf,
        "SquaredDifference" => |a, b| (a - b) * (a - b),
        _ => return None,
    })
}

/// The folded value of node `id`, if it folds.
fn fold_one(g: &Graph, id: ascendir_ir::NodeId) -> Option<Tensor> {
    let n = g.node(id).ok()?;
    let op = n.op();
    if n.num_out_data() != 1
        || !n.in_control_peers().is_empty()
        || !n.out_control_peers().is_empty()
        || !op.subgraph_instance_names().is_empty()
    {
        return None;
    }
    let out = &op.outputs()[0].desc;
    if !matches!(
        out.dtype,
        DataType::FLOAT | DataType::FLOAT16 | DataType::DOUBLE | DataType::BF16
    ) {
        return None;
    }
    let inputs: Vec<Tensor> = (0..n.num_in_data())
        .map(|k| {
            n.in_data_peer(k)
                .and_then(|p| const_value(g.op(p.node).ok()?))
        })
        .collect::<Option<_>>()?;
    let (vals, shape) = match (unary(op), binary(op.op_type()), inputs.as_slice()) {
        (Some(f), _, [x]) => {
            // Cast: any numeric input to the float output dtype; the rest float to float.
            if op.op_type() != "Cast" && x.desc.dtype != out.dtype {
                return None;
            }
            if x.desc.shape.iter().product::<i64>() > MAX_ELEMS as i64 {
                return None;
            }
            (
                values(x)?.into_iter().map(f).collect(),
                x.desc.shape.to_vec(),
            )
        }
        (_, Some(f), [a, b]) => {
            if a.desc.dtype != out.dtype || b.desc.dtype != out.dtype {
                return None;
            }
            let shape = broadcast(&a.desc.shape, &b.desc.shape)?;
            if shape.iter().any(|&d| d < 0) {
                return None;
            }
            let numel = usize::try_from(shape.iter().product::<i64>()).ok()?;
            if numel > MAX_ELEMS {
                return None;
            }
            let (va, vb) = (values(a)?, values(b)?);
            let (ia, ib) = (
                gather_index(&a.desc.shape, &shape),
                gather_index(&b.desc.shape, &shape),
            );
            let v: Vec<f64> = ia.iter().zip(&ib).map(|(&i, &j)| f(va[i], vb[j])).collect();
            (v, shape)
        }
        _ => return None,
    };
    if vals.len() > MAX_ELEMS {
        return None;
    }
    // The recorded shape wins where it is static and agrees in size (a scalar kept as []).
    let rec: Vec<i64> = out.shape.to_vec();
    let shape = if rec.iter().all(|&d| d >= 0) && rec.iter().product::<i64>() == vals.len() as i64 {
        rec
    } else {
        shape
    };
    let data = encode(&vals, out.dtype)?;
    Some(Tensor::new(
        TensorDesc::new(&shape, out.dtype, Format::ND),
        data,
    ))
}

/// Fold every foldable float computation of `g` (in topological order, so chains fold whole);
/// returns how many nodes became Consts.
pub fn fold_floats(g: &mut Graph) -> KindResult<usize> {
    let order = g
        .topo_order(&TopoOptions::new(TopoMode::Dfs))
        .map_err(|e| e.to_string())?;
    let mut n = 0;
    for id in order {
        let Some(t) = fold_one(g, id) else { continue };
        let name = g.op(id).map_err(|e| e.to_string())?.name().to_string();
        crate::rewrite::replace_by_const(g, id, &name, t)?;
        g.erase_node(id).map_err(|e| e.to_string())?;
        n += 1;
    }
    Ok(n)
}
