//! Matrix products: ONNX Gemm and MatMul ↔ GE MatMulV2, GEMM and BatchMatMul(V2).

use ascendir_ir::{AttrMap, AttrValue};

use crate::error::OnnxResult;
use crate::pb;

use super::attrs::{a_float, a_int, bool_of, float_of, get_f, get_i, input};
use super::table::Entry;
use super::{Emitted, Exported, Handled, InputInfo, Mapped};

/// Import: the GE form of an ONNX node of this family.
pub(super) fn import(
    e: &Entry,
    node: &pb::NodeProto,
    _opset: i64,
    info: &dyn InputInfo,
    m: &mut Mapped,
) -> OnnxResult<Handled> {
    let a = &mut m.attrs;
    match e.onnx {
        "Gemm" => {
            let alpha = get_f(node, "alpha", 1.0);
            let beta = get_f(node, "beta", 1.0);
            a.insert(
                "transpose_x1",
                AttrValue::Bool(get_i(node, "transA", 0) != 0),
            );
            a.insert(
                "transpose_x2",
                AttrValue::Bool(get_i(node, "transB", 0) != 0),
            );
            a.insert("offset_x", AttrValue::Int(0));
            if alpha != 1.0 || beta != 1.0 {
                a.insert("alpha", AttrValue::Float(alpha));
                a.insert("beta", AttrValue::Float(beta));
            }
        }
        "MatMul" => {
            let r0 = input(node, 0).and_then(|x| info.rank(x));
            let r1 = input(node, 1).and_then(|x| info.rank(x));
            if r0 == Some(2) && r1 == Some(2) {
                m.ge_type = "MatMulV2".into();
                a.insert("transpose_x1", AttrValue::Bool(false));
                a.insert("transpose_x2", AttrValue::Bool(false));
            } else {
                a.insert("adj_x1", AttrValue::Bool(false));
                a.insert("adj_x2", AttrValue::Bool(false));
            }
            a.insert("offset_x", AttrValue::Int(0));
        }
        _ => return Ok(Handled::NotMine),
    }
    Ok(Handled::Mapped)
}

/// Export: the ONNX form of a GE op of this family at `opset`.
pub(super) fn export<'a>(
    ge_type: &'a str,
    attrs: &AttrMap,
    input_ports: &[&str],
    opset: i64,
    em: &mut Emitted,
) -> OnnxResult<Exported<'a>> {
    let at = &mut em.attrs;
    let onnx = match ge_type {
        "MatMulV2" | "GEMM" => {
            let t1 = bool_of(attrs, "transpose_x1");
            let t2 = bool_of(attrs, "transpose_x2");
            let alpha = float_of(attrs, "alpha");
            let beta = float_of(attrs, "beta");
            if !t1 && !t2 && alpha.is_none() && beta.is_none() && input_ports.len() == 2 {
                "MatMul"
            } else {
                at.push(a_int("transA", i64::from(t1)));
                at.push(a_int("transB", i64::from(t2)));
                if let Some(x) = alpha {
                    at.push(a_float("alpha", x));
                }
                if let Some(x) = beta {
                    at.push(a_float("beta", x));
                }
                if opset < 7 && input_ports.len() > 2 {
                    // Before opset 7 Gemm broadcasts C only when told to (GE's bias always
                    // broadcasts).
                    at.push(a_int("broadcast", 1));
                }
                "Gemm"
            }
        }
        "BatchMatMulV2" | "BatchMatMul" => {
            if bool_of(attrs, "adj_x1") || bool_of(attrs, "adj_x2") {
                return Ok(Exported::Unmapped);
            }
            "MatMul"
        }
        _ => return Ok(Exported::NotMine),
    };
    Ok(Exported::As(onnx))
}
