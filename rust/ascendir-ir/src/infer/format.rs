//! GE's default format inference (`OpDesc::DefaultInferFormat`), applied to outputs, and the
//! physical shape of a tensor stored in a 5-D Ascend format.

use crate::dtype::DataType;
use crate::format::{bits, Format};
use crate::op_desc::OpDesc;
use crate::tensor::{Shape, TensorDesc, UNKNOWN_DIM};

/// The C0 of a 5-D format: the one encoded in the format's C0 bits, else 4 for the `_C04`
/// formats, 32 for 8-bit, 64 for 4-bit and 16 for every other element type (GE's defaults).
pub fn c0_of(format: i32, dtype: DataType) -> i64 {
    let set = bits::c0_value(format);
    if set > 0 {
        return set;
    }
    if bits::primary(format) == Format::NC1HWC0_C04.value() {
        return 4;
    }
    match dtype {
        DataType::INT8 | DataType::UINT8 => 32,
        DataType::INT4 => 64,
        _ => 16,
    }
}

/// The physical shape of a `logical` shape in `origin` layout stored as `format`, as GE's
/// format transfers compute it: ND stores the logical shape as it is; NC1HWC0 (and
/// NC1HWC0_C04) split the C of a 4-D NCHW / NHWC shape into C1 = ceil(C / C0) and C0;
/// FRACTAL_Z (from NCHW / NHWC / HWCN) is (C1·H·W, ceil(N / 16), 16, C0) and FRACTAL_Z_C04
/// (C padded to 4) is (ceil(4·H·W / C0), ceil(N / C0), 16, C0). `None` for layouts this does
/// not know (the shape is then left as it is).
pub fn physical_shape(logical: &[i64], origin: i32, format: i32, dtype: DataType) -> Option<Shape> {
    let primary = bits::primary(format);
    if primary == Format::ND.value() {
        return Some(Shape::from_slice(logical));
    }
    let [n, c, h, w] = nchw_dims(logical, bits::primary(origin))?;
    let c0 = c0_of(format, dtype);
    // Unknown dims stay unknown through every product and ceiling.
    let ceil = |a: i64, b: i64| if a < 0 { UNKNOWN_DIM } else { (a + b - 1) / b };
    let mul = |a: i64, b: i64| {
        if a < 0 || b < 0 {
            UNKNOWN_DIM
        } else {
            a.saturating_mul(b)
        }
    };
    const CUBE_N: i64 = 16;
    let dims = match Format::from_value(i64::from(primary))? {
        Format::NC1HWC0 | Format::NC1HWC0_C04 => vec![n, ceil(c, c0), h, w, c0],
        Format::FRACTAL_Z => vec![mul(mul(ceil(c, c0), h), w), ceil(n, CUBE_N), CUBE_N, c0],
        Format::FRACTAL_Z_C04 if c <= 4 => {
            vec![ceil(mul(mul(4, h), w), c0), ceil(n, c0), CUBE_N, c0]
        }
        _ => return None,
    };
    Some(Shape::from_slice(&dims))
}

/// `[N, C, H, W]` of a 4-D shape in an NCHW, NHWC or HWCN layout.
fn nchw_dims(logical: &[i64], origin: i32) -> Option<[i64; 4]> {
    let [a, b, c, d] = <[i64; 4]>::try_from(logical).ok()?;
    match origin {
        o if o == Format::NCHW.value() => Some([a, b, c, d]),
        o if o == Format::NHWC.value() => Some([a, d, b, c]),
        o if o == Format::HWCN.value() => Some([d, c, a, b]),
        _ => None,
    }
}

/// The format a desc stands for: its origin format, or its format when the origin is ND.
fn key(d: &TensorDesc) -> i32 {
    if d.origin_format != Format::ND.value() {
        d.origin_format
    } else {
        bits::primary(d.format)
    }
}

/// The format chosen for an op: the first valid input whose format is not ND; overridden by
/// the first output whose format is not ND. `ND` when none.
pub fn chosen_format(op: &OpDesc) -> i32 {
    let nd = Format::ND.value();
    let mut chosen = op
        .inputs()
        .iter()
        .filter(|p| p.desc.is_valid())
        .map(|p| key(&p.desc))
        .find(|&f| f != nd && f != Format::RESERVED.value())
        .unwrap_or(nd);
    if let Some(f) = op.outputs().iter().map(|p| key(&p.desc)).find(|&f| f != nd) {
        chosen = f;
    }
    chosen
}

/// Give every output whose format and origin format are ND the chosen format (both fields).
/// Returns whether anything changed.
pub fn default_infer_format(op: &mut OpDesc) -> bool {
    let chosen = chosen_format(op);
    let nd = Format::ND.value();
    if chosen == nd {
        return false;
    }
    let mut changed = false;
    for i in 0..op.num_outputs() {
        let d = &op.outputs()[i].desc;
        if d.origin_format == nd && bits::primary(d.format) == nd {
            if let Ok(d) = op.port_desc_mut(crate::op_desc::Side::Output, i) {
                d.format = chosen;
                d.origin_format = chosen;
                changed = true;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;
    use std::sync::Arc;

    #[test]
    fn first_non_nd_input_wins_and_outputs_override() {
        let mut op = OpDesc::new("a", "Add");
        op.add_input(
            "x1",
            Arc::new(TensorDesc::new(&[1], DataType::FLOAT, Format::ND)),
        );
        op.add_input(
            "x2",
            Arc::new(TensorDesc::new(&[1], DataType::FLOAT, Format::NHWC)),
        );
        op.add_output("y", Arc::new(TensorDesc::default())).unwrap();
        assert_eq!(chosen_format(&op), Format::NHWC.value());
        assert!(default_infer_format(&mut op));
        assert_eq!(op.outputs()[0].desc.format, Format::NHWC.value());
        assert_eq!(op.outputs()[0].desc.origin_format, Format::NHWC.value());
        let mut op2 = OpDesc::new("b", "Add");
        op2.add_input(
            "x",
            Arc::new(TensorDesc::new(&[1], DataType::FLOAT, Format::NHWC)),
        );
        op2.add_output("y", Arc::new(TensorDesc::default()))
            .unwrap();
        op2.add_output(
            "z",
            Arc::new(TensorDesc::new(&[1], DataType::FLOAT, Format::NCHW)),
        )
        .unwrap();
        assert_eq!(chosen_format(&op2), Format::NCHW.value());
        default_infer_format(&mut op2);
        assert_eq!(op2.outputs()[0].desc.format, Format::NCHW.value());
        let mut op3 = OpDesc::new("c", "Add");
        op3.add_input("x", Arc::new(TensorDesc::invalid()));
        op3.add_output("y", Arc::new(TensorDesc::default()))
            .unwrap();
        assert!(!default_infer_format(&mut op3));
    }
}
