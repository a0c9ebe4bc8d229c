//! The builtin AscIR operators (GE's `REG_ASC_IR` set used by the scheduler, the simulator and
//! the compiler's lowerings), registered into the process-wide registry the first time it is
//! used — from Rust or from Python — so every layer sees the same prototypes.

use ascendir_ir::DataType as D;

use crate::expr::Expr;
use crate::graph::{AttrValue, ComputeType};
use crate::registry::{AttrType, OpDef, PortKind, Registry};

/// Floating-point dtypes the vector math APIs take.
pub const FLOATS: &[D] = &[D::FLOAT, D::FLOAT16, D::BF16];
/// Integer dtypes of the integer vector APIs.
pub const INTS: &[D] = &[D::INT8, D::INT16, D::INT32, D::INT64, D::UINT8];
/// Dtypes Load/Store move (int64 is not supported by the v1 data movement APIs).
pub const MOVABLE: &[D] = &[
    D::FLOAT,
    D::FLOAT16,
    D::BF16,
    D::INT8,
    D::UINT8,
    D::INT16,
    D::UINT16,
    D::INT32,
    D::UINT32,
    D::BOOL,
];
/// Dtypes of the logical APIs.
pub const LOGICAL: &[D] = &[D::BOOL, D::UINT8, D::INT8];
/// Dtypes of comparison results.
pub const MASK: &[D] = &[D::UINT8, D::BOOL];
/// GE's default temporary buffer size in bytes.
pub const TMP: i64 = 8192;

/// The `(from, to)` pairs the AscIR `Cast` supports.
pub const CAST_PAIRS: &[(D, D)] = &[
    (D::FLOAT, D::FLOAT16),
    (D::FLOAT16, D::FLOAT),
    (D::FLOAT, D::BF16),
    (D::BF16, D::FLOAT),
    (D::FLOAT, D::INT32),
    (D::INT32, D::FLOAT),
    (D::FLOAT, D::INT64),
    (D::INT64, D::FLOAT),
    (D::FLOAT16, D::INT32),
    (D::INT32, D::FLOAT16),
    (D::FLOAT16, D::INT8),
    (D::INT8, D::FLOAT16),
    (D::FLOAT16, D::UINT8),
    (D::UINT8, D::FLOAT16),
    (D::FLOAT16, D::INT16),
    (D::INT16, D::FLOAT16),
    (D::INT32, D::INT64),
    (D::INT64, D::INT32),
    (D::UINT8, D::FLOAT),
    (D::BOOL, D::FLOAT),
    (D::BOOL, D::FLOAT16),
    (D::BOOL, D::INT32),
    (D::INT8, D::FLOAT),
    (D::INT32, D::INT16),
    (D::FLOAT, D::UINT8),
    (D::INT16, D::FLOAT),
];

/// Ops whose output may reuse an input's buffer.
const INPLACE: &[&str] = &[
    "Abs",
    "Add",
    "Axpy",
    "Div",
    "Exp",
    "LeakyRelu",
    "Ln",
    "LogicalAnd",
    "LogicalNot",
    "LogicalOr",
    "Maximum",
    "Minimum",
    "Mul",
    "Neg",
    "Reciprocal",
    "Relu",
    "Rsqrt",
    "Sqrt",
    "Sub",
];

fn numeric() -> Vec<D> {
    FLOATS.iter().chain(INTS).copied().collect()
}

const REQ: PortKind = PortKind::Required;

fn with_tmp(mut d: OpDef, tmp: bool) -> OpDef {
    if tmp {
        d.tmp_buffer = Some(Expr::int(TMP));
    }
    d
}

/// A one-input element-wise prototype (`x` → `y`); `out` gives the output's own dtype set.
fn unary(name: &str, allowed: &[D], inplace: bool, tmp: bool, out: Option<&[D]>) -> OpDef {
    let d = OpDef::new(name, ComputeType::Elewise).input("x", REQ, "T");
    let mut d = match out {
        None => d.output("y", REQ, "T").dtype_var("T", allowed),
        Some(o) => d
            .output("y", REQ, "T2")
            .dtype_var("T", allowed)
            .dtype_var("T2", o),
    };
    d.inplace = inplace;
    with_tmp(d, tmp)
}

/// A two-input element-wise prototype (`x1`, `x2` → `y`).
fn binary(name: &str, allowed: &[D], inplace: bool, tmp: bool, out: Option<&[D]>) -> OpDef {
    let d = OpDef::new(name, ComputeType::Elewise)
        .input("x1", REQ, "T")
        .input("x2", REQ, "T");
    let mut d = match out {
        None => d.output("y", REQ, "T").dtype_var("T", allowed),
        Some(o) => d
            .output("y", REQ, "T2")
            .dtype_var("T", allowed)
            .dtype_var("T2", o),
    };
    d.inplace = inplace;
    with_tmp(d, tmp)
}

/// Every builtin prototype, in registration order.
pub fn builtin_defs() -> Vec<OpDef> {
    let num = numeric();
    let inplace = |n: &str| INPLACE.contains(&n);
    let ct = ComputeType::Invalid;
    let mut v = vec![
        OpDef::new("Data", ct)
            .output("y", REQ, "T")
            .dtype_var("T", &[])
            .attr("index", AttrType::Int, None),
        OpDef::new("Scalar", ct)
            .output("y", REQ, "T")
            .dtype_var("T", &[])
            .attr("value", AttrType::Str, None)
            .attr("index", AttrType::Int, None),
        OpDef::new("IndexExpr", ct)
            .output("y", REQ, "T")
            .dtype_var("T", &[])
            .attr("expr", AttrType::Int, None),
        OpDef::new("Output", ct)
            .input("x", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", &[])
            .attr("index", AttrType::Int, None),
        OpDef::new("Workspace", ct)
            .input("x", PortKind::Optional, "T")
            .output("y", REQ, "T")
            .dtype_var("T", &[]),
        OpDef::new("Load", ComputeType::Load)
            .input("x", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", MOVABLE)
            .attr("offset", AttrType::Expr, None),
        OpDef::new("Store", ComputeType::Store)
            .input("x", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", MOVABLE)
            .attr("offset", AttrType::Expr, None),
        with_tmp(
            OpDef::new("Gather", ComputeType::Gather)
                .input("x1", REQ, "T1")
                .input("x2", REQ, "T2")
                .output("y", REQ, "T1")
                .dtype_var("T1", &num)
                .dtype_var("T2", &[D::INT32, D::INT64])
                .attr("axis", AttrType::Int, None)
                .attr(
                    "negative_index_support",
                    AttrType::Bool,
                    Some(AttrValue::Bool(false)),
                ),
            true,
        ),
        with_tmp(
            OpDef::new("Broadcast", ComputeType::Broadcast)
                .input("x", REQ, "T")
                .output("y", REQ, "T")
                .dtype_var("T", MOVABLE),
            true,
        ),
    ];
    for name in [
        "Abs",
        "Exp",
        "Ln",
        "Sqrt",
        "Rsqrt",
        "Reciprocal",
        "Erf",
        "Sign",
        "Tanh",
        "Sigmoid",
        "Gelu",
    ] {
        let allowed: &[D] = if name == "Abs" || name == "Sign" {
            &num
        } else {
            FLOATS
        };
        v.push(unary(name, allowed, inplace(name), true, None));
    }
    v.push(unary("Relu", &num, true, false, None));
    v.push(unary("Neg", &num, true, false, None));
    v.push(unary("Isnan", FLOATS, false, true, Some(&[D::UINT8])));
    v.push(unary("IsFinite", FLOATS, false, true, Some(&[D::UINT8])));
    v.push(unary("LogicalNot", LOGICAL, true, false, None));
    let mut leaky = OpDef::new("LeakyRelu", ComputeType::Elewise)
        .input("x", REQ, "T")
        .output("y", REQ, "T")
        .dtype_var("T", FLOATS)
        .attr(
            "negative_slope",
            AttrType::Float,
            Some(AttrValue::Float(0.0)),
        );
    leaky.inplace = true;
    v.push(with_tmp(leaky, true));
    let mut cast = OpDef::new("Cast", ComputeType::Elewise)
        .input("x", REQ, "T1")
        .output("y", REQ, "T2")
        .dtype_var("T1", &[])
        .dtype_var("T2", &[]);
    cast.dtype_combos = CAST_PAIRS.iter().map(|&(a, b)| vec![a, b]).collect();
    v.push(with_tmp(cast, true));
    for name in ["RemovePad", "Pad", "Nop", "Ub2ub"] {
        v.push(unary(name, &[], false, name == "Pad", None));
    }
    for name in ["Add", "Sub", "Mul", "Maximum", "Minimum"] {
        v.push(binary(name, &num, inplace(name), false, None));
    }
    for name in ["Div", "TrueDiv", "FloorDiv", "Remainder", "Pow"] {
        v.push(binary(name, &num, inplace(name), true, None));
    }
    for name in ["LogicalAnd", "LogicalOr"] {
        v.push(binary(name, LOGICAL, true, false, None));
    }
    v.push(binary("BitwiseAnd", INTS, false, false, None));
    for name in ["Eq", "Ne", "Gt", "Ge", "Lt", "Le"] {
        v.push(binary(name, &num, false, true, Some(MASK)));
    }
    let mut axpy = OpDef::new("Axpy", ComputeType::Elewise)
        .input("x1", REQ, "T")
        .input("x2", REQ, "T")
        .output("y", REQ, "T")
        .dtype_var("T", FLOATS)
        .attr("alpha", AttrType::Float, Some(AttrValue::Float(1.0)));
    axpy.inplace = true;
    v.push(axpy);
    for name in ["Where", "Select"] {
        v.push(with_tmp(
            OpDef::new(name, ComputeType::Elewise)
                .input("x1", REQ, "T1")
                .input("x2", REQ, "T")
                .input("x3", REQ, "T")
                .output("y", REQ, "T")
                .dtype_var("T1", MASK)
                .dtype_var("T", &num),
            true,
        ));
    }
    v.push(with_tmp(
        OpDef::new("ClipByValue", ComputeType::Elewise)
            .input("x1", REQ, "T")
            .input("x2", REQ, "T")
            .input("x3", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", &num),
        true,
    ));
    for name in ["Sum", "Max", "Min", "Mean", "Prod"] {
        v.push(reduce(name, &num));
    }
    for name in ["All", "Any"] {
        v.push(reduce(name, LOGICAL));
    }
    v.push(with_tmp(
        OpDef::new("ArgMax", ComputeType::Reduce)
            .input("x", REQ, "T")
            .output("y", REQ, "T2")
            .dtype_var("T", &num)
            .dtype_var("T2", &[D::INT64]),
        true,
    ));
    v.push(with_tmp(
        OpDef::new("Transpose", ComputeType::Transpose)
            .input("x", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", &num),
        true,
    ));
    v.push(with_tmp(
        OpDef::new("Concat", ComputeType::Concat)
            .input("x", PortKind::Dynamic, "T")
            .output("y", REQ, "T")
            .dtype_var("T", MOVABLE),
        true,
    ));
    v.push(
        OpDef::new("Split", ComputeType::Split)
            .input("x", REQ, "T")
            .output("y", PortKind::Dynamic, "T")
            .dtype_var("T", MOVABLE)
            .attr("index", AttrType::Int, None)
            .attr("gid", AttrType::Int, None),
    );
    let zero = || Some(AttrValue::Int(0));
    v.push(
        OpDef::new("MatMul", ComputeType::Cube)
            .input("x1", REQ, "T")
            .input("x2", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", FLOATS)
            .attr("enable_hf32", AttrType::Int, zero())
            .attr("transpose_x1", AttrType::Int, zero())
            .attr("transpose_x2", AttrType::Int, zero())
            .attr("has_relu", AttrType::Int, zero())
            .attr("offset_x", AttrType::Int, zero()),
    );
    v
}

fn reduce(name: &str, allowed: &[D]) -> OpDef {
    with_tmp(
        OpDef::new(name, ComputeType::Reduce)
            .input("x", REQ, "T")
            .output("y", REQ, "T")
            .dtype_var("T", allowed),
        true,
    )
}

/// A registry holding every builtin prototype.
pub fn builtin_registry() -> Registry {
    let mut r = Registry::default();
    for d in builtin_defs() {
        r.register(d, false)
            .expect("builtin AscIR prototypes are well formed (checked by a test)");
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_validate_and_are_unique() {
        let defs = builtin_defs();
        let mut names: Vec<&str> = defs.iter().map(|d| d.op_type.as_str()).collect();
        for d in &defs {
            d.validate().unwrap();
        }
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
        let r = builtin_registry();
        assert!(r.get("Abs").unwrap().inplace);
        assert_eq!(r.get("Cast").unwrap().dtype_combos.len(), CAST_PAIRS.len());
        assert_eq!(
            r.get("Where").unwrap().dtype_vars[0],
            ("T1".to_string(), MASK.to_vec())
        );
    }
}
