//! Data propagation: the values of small integer tensors computed inside a graph (shape
//! arithmetic such as `Shape → Gather → Concat → Reshape`, and the booleans comparisons of them
//! make, such as an `If` condition on a rank), as ONNX's shape inference does with
//! `data_prop`. The engine keeps them beside the graph for the rules that read an input's value
//! (Reshape's shape, Expand's shape, Slice's bounds, ...); nothing is written into the graph.

use bytes::Bytes;

use super::logical_shape;
use super::shape::tensor_ints;
use crate::attr::AttrValue;
use crate::dtype::DataType;
use crate::format::Format;
use crate::op_desc::OpDesc;
use crate::tensor::{Tensor, TensorDesc};

/// Values longer than this are not propagated (shape values are short; this bounds the memory
/// the side table can take to a few hundred bytes per value).
pub const MAX_ELEMENTS: usize = 64;

/// The value of output 0 of `op` computed from its input values (`values(i)`: the value of
/// input `i`, a constant or a propagated one), when `op` is a shape-arithmetic op whose inputs
/// are known and whose output is a small static integer tensor. The output desc must already
/// hold the inferred shape and dtype.
pub fn propagate(op: &OpDesc, values: &dyn Fn(usize) -> Option<Tensor>) -> Option<Tensor> {
    let out = &op.outputs().first()?.desc;
    if op.op_type() == "Cast" {
        if let Some(t) = cast_exact(out, &values(0)?) {
            return Some(t);
        }
    }
    if !matches!(
        out.dtype,
        DataType::INT32 | DataType::INT64 | DataType::BOOL
    ) {
        return None;
    }
    let shape: &[i64] = &out.shape;
    let count = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))?;
    if count > MAX_ELEMENTS {
        return None;
    }
    let ints = |i: usize| values(i).and_then(|t| tensor_ints(&t).ok());
    let v: Vec<i64> = match op.op_type() {
        "Shape" => {
            let dims = logical_shape(&op.inputs().first()?.desc);
            if dims.iter().any(|&d| d < 0) {
                return None;
            }
            let (start, end) = super::misc::shape_range(op, dims.len());
            dims.get(start..end)?.to_vec()
        }
        "Size" => {
            let dims = logical_shape(&op.inputs().first()?.desc);
            vec![dims
                .iter()
                .try_fold(1i64, |n, &d| if d < 0 { None } else { n.checked_mul(d) })?]
        }
        "Identity" | "Reshape" | "Squeeze" | "Unsqueeze" | "SqueezeV3" | "UnsqueezeV3"
        | "ExpandDims" | "Flatten" | "Cast" => ints(0)?,
        "GatherV2" | "GatherV2D" | "Gather" => {
            let data = ints(0)?;
            let index = ints(1)?;
            let axis = match op.input_index("axis") {
                Some(i) => ints(i)?.first().copied()?,
                None => op.attr("axis").and_then(AttrValue::as_int).unwrap_or(0),
            };
            if logical_shape(&op.inputs().first()?.desc).len() != 1 || !matches!(axis, 0 | -1) {
                return None;
            }
            let n = i64::try_from(data.len()).ok()?;
            index
                .iter()
                .map(|&k| {
                    let k = if k < 0 { k + n } else { k };
                    data.get(usize::try_from(k).ok()?).copied()
                })
                .collect::<Option<_>>()?
        }
        "ConcatV2" | "ConcatV2D" | "Concat" | "ConcatD" => {
            let dim = op.input_index("concat_dim");
            let mut all = Vec::new();
            for i in 0..op.num_inputs() {
                if Some(i) == dim {
                    continue;
                }
                if logical_shape(&op.inputs()[i].desc).len() > 1 {
                    return None;
                }
                all.extend(ints(i)?);
            }
            all
        }
        "LogicalNot" => ints(0)?.iter().map(|&x| i64::from(x == 0)).collect(),
        "Neg" => ints(0)?
            .iter()
            .map(|x| x.checked_neg())
            .collect::<Option<_>>()?,
        "Fill" => {
            let v = ints(op.input_index("value").unwrap_or(1))?;
            vec![*v.first()?; count]
        }
        "StridedSliceV2" => {
            // One axis of a 1-D value: ONNX Slice's form (begin, end, axes, strides).
            let data = ints(0)?;
            if logical_shape(&op.inputs().first()?.desc).len() != 1 {
                return None;
            }
            let one = |name: &str, default: i64| match op.input_index(name) {
                Some(i) if op.inputs()[i].desc.is_valid() => {
                    let v = ints(i)?;
                    (v.len() == 1).then(|| v[0])
                }
                _ => Some(default),
            };
            let (begin, end, step) = (one("begin", 0)?, one("end", i64::MAX)?, one("strides", 1)?);
            if !matches!(one("axes", 0)?, 0 | -1) || step == 0 {
                return None;
            }
            slice_1d(&data, begin, end, step)
        }
        "Add" | "AddV2" | "Sub" | "Mul" | "RealDiv" | "Div" | "FloorDiv" | "Maximum"
        | "Minimum" | "Equal" | "NotEqual" | "Less" | "LessEqual" | "Greater" | "GreaterEqual"
        | "LogicalAnd" | "LogicalOr" => {
            let (a, b) = (ints(0)?, ints(1)?);
            let n = a.len().max(b.len());
            if (a.len() != n && a.len() != 1) || (b.len() != n && b.len() != 1) {
                return None;
            }
            let at = |v: &[i64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            (0..n)
                .map(|i| {
                    let (x, y) = (at(&a, i), at(&b, i));
                    match op.op_type() {
                        "Add" | "AddV2" => x.checked_add(y),
                        "Sub" => x.checked_sub(y),
                        "Mul" => x.checked_mul(y),
                        "RealDiv" | "Div" => x.checked_div(y),
                        "FloorDiv" => x.checked_div_euclid(y).filter(|_| y > 0),
                        "Maximum" => Some(x.max(y)),
                        "Minimum" => Some(x.min(y)),
                        "Equal" => Some(i64::from(x == y)),
                        "NotEqual" => Some(i64::from(x != y)),
                        "Less" => Some(i64::from(x < y)),
                        "LessEqual" => Some(i64::from(x <= y)),
                        "Greater" => Some(i64::from(x > y)),
                        "GreaterEqual" => Some(i64::from(x >= y)),
                        "LogicalAnd" => Some(i64::from(x != 0 && y != 0)),
                        _ => Some(i64::from(x != 0 || y != 0)),
                    }
                })
                .collect::<Option<_>>()?
        }
        _ => return None,
    };
    if v.len() != count {
        return None;
    }
    int_tensor(shape, out.dtype, &v)
}

/// A `Cast` between integers and floats of a known value, when every value survives it
/// exactly: an integer that the float type holds exactly (|v| ≤ 2^24 for FLOAT, 2^53 for
/// DOUBLE), a float that is a whole number the integer type holds. Shape arithmetic goes
/// through floats this way (`Range(0, Cast<float>(Gather(Shape(x))), 1)`); a value that
/// would round is not propagated.
fn cast_exact(out: &TensorDesc, input: &Tensor) -> Option<Tensor> {
    let is_float = |d: DataType| matches!(d, DataType::FLOAT | DataType::DOUBLE);
    if !is_float(out.dtype) && !is_float(input.desc.dtype) {
        return None; // integer to integer: the generic path
    }
    if input.desc.shape.as_slice() != out.shape.as_slice() {
        return None;
    }
    let v = super::shape::tensor_f64(input).ok()?;
    if v.len() > MAX_ELEMENTS {
        return None;
    }
    let data: Vec<u8> = match out.dtype {
        DataType::FLOAT => v
            .iter()
            .map(|&x| (x.fract() == 0.0 && x.abs() <= 16_777_216.0).then_some(x as f32))
            .collect::<Option<Vec<f32>>>()?
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        DataType::DOUBLE => v
            .iter()
            .map(|&x| (x.fract() == 0.0 && x.abs() <= 9_007_199_254_740_992.0).then_some(x))
            .collect::<Option<Vec<f64>>>()?
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        DataType::INT32 | DataType::INT64 => {
            let ints = v
                .iter()
                .map(|&x| (x.fract() == 0.0 && x.abs() < 9.2e18).then_some(x as i64))
                .collect::<Option<Vec<i64>>>()?;
            return int_tensor(&out.shape, out.dtype, &ints);
        }
        _ => return None,
    };
    Some(Tensor::new(
        TensorDesc::new(&out.shape, out.dtype, Format::ND),
        Bytes::from(data),
    ))
}

/// Python-style `data[begin:end:step]` with ONNX Slice's clamping.
fn slice_1d(data: &[i64], begin: i64, end: i64, step: i64) -> Vec<i64> {
    let n = i64::try_from(data.len()).unwrap_or(i64::MAX);
    let norm = |v: i64| if v < 0 { v.saturating_add(n) } else { v };
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, end) = (norm(begin).clamp(0, n), norm(end).clamp(0, n));
        while i < end {
            out.push(data[i as usize]);
            i += step;
        }
    } else {
        let (mut i, end) = (norm(begin).clamp(-1, n - 1), norm(end).clamp(-1, n - 1));
        while i > end {
            out.push(data[i as usize]);
            i += step;
        }
    }
    out
}

/// A tensor of `dtype` (INT32, INT64 or BOOL) holding `v`; `None` when a value does not fit
/// INT32, or a boolean comes from arithmetic (only comparisons and logic make booleans).
fn int_tensor(shape: &[i64], dtype: DataType, v: &[i64]) -> Option<Tensor> {
    let data: Vec<u8> = if dtype == DataType::BOOL {
        v.iter()
            .map(|&x| u8::try_from(x).ok().filter(|b| *b <= 1))
            .collect::<Option<_>>()?
    } else if dtype == DataType::INT32 {
        let mut data = Vec::with_capacity(v.len() * 4);
        for &x in v {
            data.extend(i32::try_from(x).ok()?.to_le_bytes());
        }
        data
    } else {
        v.iter().flat_map(|&x| x.to_le_bytes()).collect()
    };
    Some(Tensor::new(
        TensorDesc::new(shape, dtype, Format::ND),
        Bytes::from(data),
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn int64(v: &[i64]) -> Tensor {
        int_tensor(&[v.len() as i64], DataType::INT64, v).unwrap()
    }

    fn op(ty: &str, ins: &[&[i64]], out: &[i64]) -> OpDesc {
        let mut op = OpDesc::new("n", ty);
        for (k, s) in ins.iter().enumerate() {
            op.add_input(
                &format!("x{k}"),
                Arc::new(TensorDesc::new(s, DataType::INT64, Format::ND)),
            );
        }
        op.add_output(
            "y",
            Arc::new(TensorDesc::new(out, DataType::INT64, Format::ND)),
        )
        .unwrap();
        op
    }

    #[test]
    fn exact_values_go_through_casts_to_and_from_float() {
        let cast = |v: Tensor, to: DataType| {
            let mut op = OpDesc::new("c", "Cast");
            op.add_input("x", v.desc.clone());
            op.add_output(
                "y",
                Arc::new(TensorDesc::new(&v.desc.shape, to, Format::ND)),
            )
            .unwrap();
            propagate(&op, &|_| Some(v.clone()))
        };
        let f = cast(int64(&[40, -3]), DataType::FLOAT).unwrap();
        assert_eq!(
            super::super::shape::tensor_f64(&f).unwrap(),
            vec![40.0, -3.0]
        );
        let back = cast(f, DataType::INT32).unwrap();
        assert_eq!(tensor_ints(&back).unwrap(), vec![40, -3]);
        // A value the float cannot hold exactly, or a fraction cast to an integer: unknown.
        assert!(cast(int64(&[(1 << 24) + 1]), DataType::FLOAT).is_none());
        let half = Tensor::new(
            TensorDesc::new(&[1], DataType::FLOAT, Format::ND),
            Bytes::from(2.5f32.to_le_bytes().to_vec()),
        );
        assert!(cast(half, DataType::INT64).is_none());
    }

    #[test]
    fn shape_gather_concat_chain() {
        let mut shape = op("Shape", &[&[2, 3, 5]], &[2]);
        shape.set_attr("start", AttrValue::Int(1));
        let v = propagate(&shape, &|_| None).unwrap();
        assert_eq!(tensor_ints(&v).unwrap(), vec![3, 5]);
        let gather = op("GatherV2D", &[&[2], &[1]], &[1]);
        let got = propagate(&gather, &|i| {
            Some(if i == 0 { v.clone() } else { int64(&[-1]) })
        });
        assert_eq!(tensor_ints(&got.unwrap()).unwrap(), vec![5]);
        let concat = op("ConcatD", &[&[2], &[1]], &[3]);
        let got = propagate(&concat, &|i| {
            Some(if i == 0 { v.clone() } else { int64(&[7]) })
        });
        assert_eq!(tensor_ints(&got.unwrap()).unwrap(), vec![3, 5, 7]);
    }

    #[test]
    fn nothing_is_propagated_without_every_value_or_with_bad_arithmetic() {
        let add = op("Add", &[&[1], &[1]], &[1]);
        assert!(propagate(&add, &|i| (i == 0).then(|| int64(&[1]))).is_none());
        let div = op("RealDiv", &[&[1], &[1]], &[1]);
        assert!(propagate(&div, &|i| Some(int64(&[if i == 0 { 4 } else { 0 }]))).is_none());
        let mul = op("Mul", &[&[1], &[1]], &[1]);
        assert!(propagate(&mul, &|_| Some(int64(&[i64::MAX]))).is_none());
        let dynamic = op("Shape", &[&[-1, 3]], &[2]);
        assert!(propagate(&dynamic, &|_| None).is_none());
        let big = op("Shape", &[&[1; 100]], &[100]);
        assert!(propagate(&big, &|_| None).is_none());
    }

    fn boolean(ty: &str, ins: &[&[i64]]) -> OpDesc {
        let mut op = op(ty, ins, &[]);
        op.outputs[0].desc = Arc::new(TensorDesc::new(&[], DataType::BOOL, Format::ND));
        op
    }

    #[test]
    fn comparisons_of_known_values_give_booleans() {
        // An If's condition on a rank: Equal(Size(size), 4).
        let four = |_: usize| Some(int_tensor(&[], DataType::INT64, &[4]).unwrap());
        let eq = propagate(&boolean("Equal", &[&[], &[]]), &four).unwrap();
        assert_eq!(eq.desc.dtype, DataType::BOOL);
        assert_eq!(tensor_ints(&eq).unwrap(), vec![1]);
        let less = propagate(&boolean("Less", &[&[], &[]]), &four).unwrap();
        assert_eq!(tensor_ints(&less).unwrap(), vec![0]);
        let not = propagate(&boolean("LogicalNot", &[&[]]), &|_| Some(less.clone())).unwrap();
        assert_eq!(tensor_ints(&not).unwrap(), vec![1]);
        // Arithmetic never makes a boolean out of a value other than 0 or 1.
        let seven = |_: usize| Some(int_tensor(&[], DataType::INT64, &[7]).unwrap());
        assert!(propagate(&boolean("Add", &[&[], &[]]), &seven).is_none());
    }
}
