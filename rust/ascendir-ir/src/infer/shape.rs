//! Shape arithmetic shared by the rules: broadcasting with unknown dims, axis normalization,
//! reading integer constants.

use crate::dtype::DataType;
use crate::tensor::{Shape, Tensor, UNKNOWN_DIM, UNKNOWN_RANK};

/// Whether `s` is the unknown-rank shape `[-2]`.
pub fn unknown_rank(s: &[i64]) -> bool {
    s.contains(&UNKNOWN_RANK)
}

/// The unknown-rank shape.
pub fn rank_unknown() -> Shape {
    Shape::from_slice(&[UNKNOWN_RANK])
}

/// A shape of `rank` unknown dims.
pub fn unknown_dims(rank: usize) -> Shape {
    Shape::from_elem(UNKNOWN_DIM, rank)
}

/// Numpy broadcasting of two shapes. `[-2]` with anything gives `[-2]`; `-1` against `1`
/// stays `-1`, against a known `n > 1` gives `n`; two different known sizes other than 1 fail.
pub fn broadcast(a: &[i64], b: &[i64]) -> Result<Shape, String> {
    if unknown_rank(a) || unknown_rank(b) {
        return Ok(rank_unknown());
    }
    if a == b {
        return Ok(Shape::from_slice(a));
    }
    let rank = a.len().max(b.len());
    let mut out = Shape::with_capacity(rank);
    for i in 0..rank {
        let x = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let y = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        let d = if x == y {
            x
        } else if x == 1 {
            y
        } else if y == 1 {
            x
        } else if x == UNKNOWN_DIM {
            y
        } else if y == UNKNOWN_DIM {
            x
        } else {
            return Err(format!(
                "shapes {a:?} and {b:?} cannot be broadcast (dim {i}: {x} vs {y})"
            ));
        };
        out.push(d);
    }
    Ok(out)
}

/// Normalize `axis` (negative counts from the end) for a tensor of `rank` dims.
pub fn norm_axis(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    if r == 0 && (axis == 0 || axis == -1) {
        return Ok(0);
    }
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    }
    Ok(a as usize)
}

/// Normalize a list of axes and sort them, failing on duplicates.
pub fn norm_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = norm_axis(a, rank)?;
        if out.contains(&n) {
            return Err(format!("axis {a} appears twice in {axes:?}"));
        }
        out.push(n);
    }
    out.sort_unstable();
    Ok(out)
}

/// Product of dims; `-1` when any is unknown.
pub fn product(dims: &[i64]) -> i64 {
    let mut p: i64 = 1;
    for &d in dims {
        if d < 0 {
            return UNKNOWN_DIM;
        }
        p = p.saturating_mul(d);
    }
    p
}

/// Sum of two dims; `-1` when either is unknown.
pub fn add_dim(a: i64, b: i64) -> i64 {
    if a < 0 || b < 0 {
        UNKNOWN_DIM
    } else {
        a.saturating_add(b)
    }
}

/// Merge two sizes that must agree (unknown yields to known); `None` on a conflict.
pub fn merge_dim(a: i64, b: i64) -> Option<i64> {
    if a == b || b == UNKNOWN_DIM {
        Some(a)
    } else if a == UNKNOWN_DIM {
        Some(b)
    } else {
        None
    }
}

/// The integer elements of a constant tensor (any integer dtype, or bool).
pub fn tensor_ints(t: &Tensor) -> Result<Vec<i64>, String> {
    let data = &t.data[..];
    let read = |size: usize, f: &dyn Fn(&[u8]) -> i64| -> Vec<i64> {
        data.chunks_exact(size).map(f).collect()
    };
    Ok(match t.desc.dtype {
        DataType::INT64 => read(8, &|c| {
            i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
        }),
        DataType::UINT64 => read(8, &|c| {
            u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                .min(i64::MAX as u64) as i64
        }),
        DataType::INT32 => read(4, &|c| {
            i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        }),
        DataType::UINT32 => read(4, &|c| {
            i64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        }),
        DataType::INT16 => read(2, &|c| i64::from(i16::from_le_bytes([c[0], c[1]]))),
        DataType::UINT16 => read(2, &|c| i64::from(u16::from_le_bytes([c[0], c[1]]))),
        DataType::INT8 => read(1, &|c| i64::from(c[0] as i8)),
        DataType::UINT8 | DataType::BOOL => read(1, &|c| i64::from(c[0])),
        other => {
            return Err(format!(
                "expected an integer constant, got a {} tensor",
                other.name()
            ))
        }
    })
}

/// The elements of a numeric constant as `f64` (integers and float32/float64).
pub fn tensor_f64(t: &Tensor) -> Result<Vec<f64>, String> {
    let data = &t.data[..];
    Ok(match t.desc.dtype {
        DataType::FLOAT => data
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        DataType::DOUBLE => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
        _ => tensor_ints(t)?.into_iter().map(|i| i as f64).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;
    use crate::tensor::TensorDesc;
    use bytes::Bytes;

    #[test]
    fn broadcasting_rules() {
        let b = |a: &[i64], c: &[i64]| broadcast(a, c).map(|s| s.to_vec());
        assert_eq!(b(&[2, 3], &[3]).unwrap(), vec![2, 3]);
        assert_eq!(b(&[2, 1], &[1, 4]).unwrap(), vec![2, 4]);
        assert_eq!(b(&[], &[5]).unwrap(), vec![5]);
        assert_eq!(b(&[-1, 3], &[1]).unwrap(), vec![-1, 3]);
        assert_eq!(b(&[-1], &[4]).unwrap(), vec![4]);
        assert_eq!(b(&[1], &[-1]).unwrap(), vec![-1]);
        assert_eq!(b(&[-1], &[-1]).unwrap(), vec![-1]);
        assert_eq!(b(&[-2], &[3]).unwrap(), vec![-2]);
        assert_eq!(b(&[0, 3], &[1, 3]).unwrap(), vec![0, 3]);
        assert!(b(&[2, 3], &[4]).is_err());
        assert!(b(&[0], &[2]).is_err());
    }

    #[test]
    fn axes() {
        assert_eq!(norm_axis(-1, 4).unwrap(), 3);
        assert_eq!(norm_axis(0, 0).unwrap(), 0);
        assert!(norm_axis(4, 4).is_err());
        assert!(norm_axis(-5, 4).is_err());
        assert_eq!(norm_axes(&[-1, 0], 3).unwrap(), vec![0, 2]);
        assert!(norm_axes(&[1, -2], 3).is_err());
        assert_eq!(product(&[2, 3]), 6);
        assert_eq!(product(&[2, -1]), -1);
        assert_eq!(merge_dim(-1, 3), Some(3));
        assert_eq!(merge_dim(2, 3), None);
    }

    #[test]
    fn constants() {
        let mut data = Vec::new();
        for v in [3i32, -1] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let t = Tensor::new(
            TensorDesc::new(&[2], DataType::INT32, Format::ND),
            Bytes::from(data),
        );
        assert_eq!(tensor_ints(&t).unwrap(), vec![3, -1]);
        let f = Tensor::new(
            TensorDesc::new(&[1], DataType::FLOAT, Format::ND),
            Bytes::from(1.5f32.to_le_bytes().to_vec()),
        );
        assert!(tensor_ints(&f).is_err());
        assert_eq!(tensor_f64(&f).unwrap(), vec![1.5]);
    }
}
