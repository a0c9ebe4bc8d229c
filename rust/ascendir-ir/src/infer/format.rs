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

/// The physical shape of a `logical` shape in `origin` layout stored as `format`: ND stores
/// the logical shape as it is; NC1HWC0 (and NC1HWC0_C04) split the C of a 4-D NCHW / NHWC
/// shape into C1 = ceil(C / C0) and C0. `None` for layouts this does not know (the shape is
/// then left as it is).
pub fn physical_shape(logical: &[i64], origin: i32, format: i32, dtype: DataType) -> Option<Shape> {
    let primary = bits::primary(format);
    if primary == Format::ND.value() {
        return Some(Shape::from_slice(logical));
    }
    if primary != Format::NC1HWC0.value() && primary != Format::NC1HWC0_C04.value() {
        return None;
    }
    if logical.len() != 4 {
        return None;
    }
    let (n, c, h, w) = match bits::primary(origin) {
        o if o == Format::NCHW.value() => (logical[0], logical[1], logical[2], logical[3]),
        o if o == Format::NHWC.value() => (logical[0], logical[3], logical[1], logical[2]),
        _ => return None,
    };
    let c0 = c0_of(format, dtype);
    let c1 = if c < 0 {
        UNKNOWN_DIM
    } else {
        c / c0 + i64::from(c % c0 != 0)
    };
    Some(Shape::from_slice(&[n, c1, h, w, c0]))
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
