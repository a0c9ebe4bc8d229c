//! The builtin lowering table: GE types as the ONNX importer and GE dumps produce
//! them, each a small template of AscIR steps.

use ascendir_ir::{DataType, OpDesc};

use super::{Arg, AxesSrc, Lowering, ShapeRule, Step, StepAttr, StepDtype, Target};
use crate::options::Family;

use Arg::{In, Step as S};

pub(super) fn bcast(n: usize) -> ShapeRule {
    ShapeRule::Broadcast {
        align: vec![None; n],
    }
}

pub(super) fn row(op_type: &str, family: Family, shape: ShapeRule, steps: Vec<Step>) -> Lowering {
    let out = if steps.is_empty() {
        In(0)
    } else {
        S(steps.len() - 1)
    };
    Lowering {
        op_type: op_type.into(),
        family,
        shape,
        data_inputs: None,
        first_input: 0,
        target: Target::Operands,
        axes: None,
        keep_dims_attr: None,
        keep_dims_default: true,
        steps,
        out,
        norm_like: false,
        guard: None,
        adapt: None,
    }
}

pub(super) fn st(op: &str, args: Vec<Arg>) -> Step {
    Step::new(op, args)
}

pub(super) fn mask(op: &str, args: Vec<Arg>) -> Step {
    let mut s = Step::new(op, args);
    s.dtype = StepDtype::Mask;
    s
}

pub(super) fn red(op: &str, arg: Arg) -> Step {
    let mut s = Step::new(op, vec![arg]);
    s.reduce = true;
    s
}

fn unary(ge: &str, asc: &str) -> Lowering {
    row(
        ge,
        Family::Elementwise,
        bcast(1),
        vec![st(asc, vec![In(0)])],
    )
}

fn binary(ge: &str, asc: &str) -> Lowering {
    row(
        ge,
        Family::Elementwise,
        bcast(2),
        vec![st(asc, vec![In(0), In(1)])],
    )
}

fn compare(ge: &str, asc: &str) -> Lowering {
    row(
        ge,
        Family::Elementwise,
        bcast(2),
        vec![mask(asc, vec![In(0), In(1)])],
    )
}

fn with_attr(mut l: Lowering, step: usize, attr: StepAttr) -> Lowering {
    l.steps[step].attrs.push(attr);
    l
}

fn no_attr_or(op: &OpDesc, name: &str, ok: f32) -> bool {
    match op.attr(name) {
        None => true,
        Some(ascendir_ir::AttrValue::Float(v)) => *v == ok,
        Some(ascendir_ir::AttrValue::Int(v)) => *v as f32 == ok,
        Some(_) => false,
    }
}

fn log_guard(op: &OpDesc) -> Result<(), String> {
    if no_attr_or(op, "base", -1.0) && no_attr_or(op, "scale", 1.0) && no_attr_or(op, "shift", 0.0)
    {
        Ok(())
    } else {
        Err("Log with base/scale/shift is not lowered yet".into())
    }
}

fn batchnorm_guard(op: &OpDesc) -> Result<(), String> {
    if op.attr("is_training").and_then(|v| v.as_bool()) == Some(true) {
        return Err("training-mode BatchNorm is not lowered".into());
    }
    match op.attr("data_format").and_then(|v| v.as_str()) {
        None | Some("NCHW") | Some("ND") => Ok(()),
        Some(f) => Err(format!("BatchNorm with data_format {f} is not lowered yet")),
    }
}

fn reduce_row(ge: &str, asc: &str, with_input: bool) -> Lowering {
    let steps = match asc {
        // Any / All of a bool: the max / min of its 0 / 1 as fp16 (the vector unit's reduce
        // APIs take no 8-bit type), compared with 0 (no Cast gives a bool).
        "Any" | "All" => {
            let mut to_half = Step::new("Cast", vec![In(0)]);
            to_half.dtype = StepDtype::Fixed(DataType::FLOAT16);
            let r = if asc == "Any" { "Max" } else { "Min" };
            vec![
                to_half,
                red(r, S(0)),
                mask("Gt", vec![S(1), Arg::Scalar(0.0)]),
            ]
        }
        _ => vec![red(asc, In(0))],
    };
    let mut l = row(ge, Family::Reduce, ShapeRule::Reduce, steps);
    l.data_inputs = Some(1);
    l.axes = Some(if with_input {
        AxesSrc::AttrOrConstInput("axes".into(), 1)
    } else {
        AxesSrc::Attr {
            name: "axes".into(),
            empty_all: true,
        }
    });
    l.keep_dims_attr = Some("keep_dims".into());
    l
}

fn view(ge: &str) -> Lowering {
    let mut l = row(ge, Family::Elementwise, ShapeRule::View, Vec::new());
    l.data_inputs = Some(1);
    l
}

fn softmax(ge: &str, log: bool) -> Lowering {
    let mut steps = vec![
        red("Max", In(0)),
        st("Sub", vec![In(0), S(0)]),
        st("Exp", vec![S(1)]),
        red("Sum", S(2)),
    ];
    if log {
        steps.push(st("Ln", vec![S(3)]));
        steps.push(st("Sub", vec![S(1), S(4)]));
    } else {
        steps.push(st("TrueDiv", vec![S(2), S(3)]));
    }
    let mut l = row(ge, Family::Reduce, bcast(1), steps);
    l.axes = Some(AxesSrc::Attr {
        name: "axes".into(),
        empty_all: false,
    });
    l.norm_like = true;
    l
}

fn layer_norm() -> Lowering {
    let mut add_beta = st("Add", vec![S(7), In(2)]);
    add_beta.needs_input = Some(2);
    let steps = vec![
        red("Mean", In(0)),
        st("Sub", vec![In(0), S(0)]),
        st("Mul", vec![S(1), S(1)]),
        red("Mean", S(2)),
        st("Add", vec![S(3), Arg::AttrScalar("epsilon".into(), 1e-5)]),
        st("Rsqrt", vec![S(4)]),
        st("Mul", vec![S(1), S(5)]),
        st("Mul", vec![S(6), In(1)]),
        add_beta,
    ];
    let mut l = row("LayerNorm", Family::Reduce, bcast(3), steps);
    l.axes = Some(AxesSrc::From("begin_norm_axis".into()));
    l.norm_like = true;
    l
}

fn batch_norm() -> Lowering {
    // y = (x - mean) * rsqrt(var + eps) * scale + offset; scale, offset, mean, var per C (dim 1).
    let steps = vec![
        st("Sub", vec![In(0), In(3)]),
        st("Add", vec![In(4), Arg::AttrScalar("epsilon".into(), 1e-4)]),
        st("Rsqrt", vec![S(1)]),
        st("Mul", vec![S(0), S(2)]),
        st("Mul", vec![S(3), In(1)]),
        st("Add", vec![S(4), In(2)]),
    ];
    let align = vec![None, Some(1), Some(1), Some(1), Some(1)];
    let mut l = row(
        "BatchNorm",
        Family::Broadcast,
        ShapeRule::Broadcast { align },
        steps,
    );
    l.data_inputs = Some(5);
    l.guard = Some(batchnorm_guard);
    l
}

/// Every builtin lowering.
pub fn builtin_lowerings() -> Vec<Lowering> {
    let mut v = Vec::new();
    for (ge, asc) in [
        ("Abs", "Abs"),
        ("Neg", "Neg"),
        ("Exp", "Exp"),
        ("Sqrt", "Sqrt"),
        ("Rsqrt", "Rsqrt"),
        ("Reciprocal", "Reciprocal"),
        ("Inv", "Reciprocal"),
        ("Relu", "Relu"),
        ("Sigmoid", "Sigmoid"),
        ("Tanh", "Tanh"),
        ("Erf", "Erf"),
        ("Sign", "Sign"),
        ("LogicalNot", "LogicalNot"),
    ] {
        v.push(unary(ge, asc));
    }
    let mut log = unary("Log", "Ln");
    log.guard = Some(log_guard);
    v.push(log);
    v.push(row(
        "IsNan",
        Family::Elementwise,
        bcast(1),
        vec![mask("Isnan", vec![In(0)])],
    ));
    v.push(row(
        "IsFinite",
        Family::Elementwise,
        bcast(1),
        vec![mask("IsFinite", vec![In(0)])],
    ));
    for (ge, asc) in [
        ("Add", "Add"),
        ("AddV2", "Add"),
        ("Sub", "Sub"),
        ("Mul", "Mul"),
        ("RealDiv", "TrueDiv"),
        ("Div", "Div"),
        ("FloorDiv", "FloorDiv"),
        ("Mod", "Remainder"),
        ("Pow", "Pow"),
        ("Maximum", "Maximum"),
        ("Minimum", "Minimum"),
        ("LogicalAnd", "LogicalAnd"),
        ("LogicalOr", "LogicalOr"),
        ("BitwiseAnd", "BitwiseAnd"),
    ] {
        v.push(binary(ge, asc));
    }
    for (ge, asc) in [
        ("Equal", "Eq"),
        ("NotEqual", "Ne"),
        ("Greater", "Gt"),
        ("GreaterEqual", "Ge"),
        ("Less", "Lt"),
        ("LessEqual", "Le"),
    ] {
        v.push(compare(ge, asc));
    }
    for ge in ["Select", "SelectV2"] {
        v.push(row(
            ge,
            Family::Elementwise,
            bcast(3),
            vec![st("Where", vec![In(0), In(1), In(2)])],
        ));
    }
    let mut cast = Step::new("Cast", vec![In(0)]);
    cast.dtype = StepDtype::NodeOut;
    v.push(row("Cast", Family::Elementwise, bcast(1), vec![cast]));
    v.push(row(
        "ClipByValue",
        Family::Elementwise,
        bcast(3),
        vec![
            st("Minimum", vec![In(0), In(2)]),
            st("Maximum", vec![S(0), In(1)]),
        ],
    ));
    v.push(with_attr(
        unary("LeakyRelu", "LeakyRelu"),
        0,
        StepAttr::FromGeFloat {
            asc: "negative_slope".into(),
            ge: "negative_slope".into(),
            default: 0.0,
        },
    ));
    v.push(row(
        "Square",
        Family::Elementwise,
        bcast(1),
        vec![st("Mul", vec![In(0), In(0)])],
    ));
    v.push(row(
        "SquaredDifference",
        Family::Elementwise,
        bcast(2),
        vec![st("Sub", vec![In(0), In(1)]), st("Mul", vec![S(0), S(0)])],
    ));
    v.push(row(
        "Muls",
        Family::Elementwise,
        bcast(1),
        vec![st("Mul", vec![In(0), Arg::AttrScalar("value".into(), 1.0)])],
    ));
    v.push(with_attr(
        row(
            "Axpy",
            Family::Elementwise,
            bcast(2),
            vec![st("Axpy", vec![In(0), In(1)])],
        ),
        0,
        StepAttr::FromGeFloat {
            asc: "alpha".into(),
            ge: "alpha".into(),
            default: 1.0,
        },
    ));
    // Activations composed of AscIR ops.
    v.push(row(
        "Softplus",
        Family::Elementwise,
        bcast(1),
        vec![
            st("Exp", vec![In(0)]),
            st("Add", vec![S(0), Arg::Scalar(1.0)]),
            st("Ln", vec![S(1)]),
        ],
    ));
    v.push(row(
        "Softsign",
        Family::Elementwise,
        bcast(1),
        vec![
            st("Abs", vec![In(0)]),
            st("Add", vec![S(0), Arg::Scalar(1.0)]),
            st("TrueDiv", vec![In(0), S(1)]),
        ],
    ));
    v.push(row(
        "HardSigmoid",
        Family::Elementwise,
        bcast(1),
        vec![
            st(
                "Mul",
                vec![In(0), Arg::AttrScalar("alpha".into(), 0.16666667)],
            ),
            st("Add", vec![S(0), Arg::AttrScalar("beta".into(), 0.5)]),
            st("Minimum", vec![S(1), Arg::Scalar(1.0)]),
            st("Maximum", vec![S(2), Arg::Scalar(0.0)]),
        ],
    ));
    v.push(row(
        "HardSwish",
        Family::Elementwise,
        bcast(1),
        vec![
            st("Mul", vec![In(0), Arg::Scalar(1.0 / 6.0)]),
            st("Add", vec![S(0), Arg::Scalar(0.5)]),
            st("Minimum", vec![S(1), Arg::Scalar(1.0)]),
            st("Maximum", vec![S(2), Arg::Scalar(0.0)]),
            st("Mul", vec![In(0), S(3)]),
        ],
    ));
    v.push(row(
        "Mish",
        Family::Elementwise,
        bcast(1),
        vec![
            st("Exp", vec![In(0)]),
            st("Add", vec![S(0), Arg::Scalar(1.0)]),
            st("Ln", vec![S(1)]),
            st("Tanh", vec![S(2)]),
            st("Mul", vec![In(0), S(3)]),
        ],
    ));
    v.push(elu("Elu", None));
    v.push(elu("Selu", Some(("scale", 1.050_701))));
    v.push(row(
        "Swish",
        Family::Elementwise,
        bcast(1),
        vec![
            st("Mul", vec![In(0), Arg::AttrScalar("scale".into(), 1.0)]),
            st("Sigmoid", vec![S(0)]),
            st("Mul", vec![In(0), S(1)]),
        ],
    ));
    // Training-graph gradients (GE's formulas).
    v.push(row(
        "SigmoidGrad",
        Family::Elementwise,
        bcast(2),
        vec![
            st("Sub", vec![Arg::Scalar(1.0), In(0)]),
            st("Mul", vec![In(0), S(0)]),
            st("Mul", vec![S(1), In(1)]),
        ],
    ));
    v.push(row(
        "TanhGrad",
        Family::Elementwise,
        bcast(2),
        vec![
            st("Mul", vec![In(0), In(0)]),
            st("Sub", vec![Arg::Scalar(1.0), S(0)]),
            st("Mul", vec![S(1), In(1)]),
        ],
    ));
    v.push(row(
        "RsqrtGrad",
        Family::Elementwise,
        bcast(2),
        vec![
            st("Mul", vec![In(0), In(0)]),
            st("Mul", vec![S(0), In(0)]),
            st("Mul", vec![S(1), In(1)]),
            st("Mul", vec![S(2), Arg::Scalar(-0.5)]),
        ],
    ));
    v.push(row(
        "ReluGrad",
        Family::Elementwise,
        bcast(2),
        vec![
            mask("Gt", vec![In(1), Arg::Scalar(0.0)]),
            st("Where", vec![S(0), In(0), Arg::Scalar(0.0)]),
        ],
    ));
    // Constant-valued and broadcasting forms.
    v.push(row(
        "ZerosLike",
        Family::Elementwise,
        bcast(1),
        vec![st("Mul", vec![In(0), Arg::Scalar(0.0)])],
    ));
    v.push(row(
        "OnesLike",
        Family::Elementwise,
        bcast(1),
        vec![
            st("Mul", vec![In(0), Arg::Scalar(0.0)]),
            st("Add", vec![S(0), Arg::Scalar(1.0)]),
        ],
    ));
    for ge in ["Expand", "BroadcastTo"] {
        let mut l = row(ge, Family::Broadcast, bcast(1), Vec::new());
        l.data_inputs = Some(1);
        l.target = Target::Input(1);
        v.push(l);
    }
    // Reductions.
    for (ge, asc) in [
        ("ReduceSumD", "Sum"),
        ("ReduceMeanD", "Mean"),
        ("ReduceMaxD", "Max"),
        ("ReduceMinD", "Min"),
        ("ReduceProdD", "Prod"),
        ("ReduceAllD", "All"),
        ("ReduceAnyD", "Any"),
    ] {
        v.push(reduce_row(ge, asc, false));
    }
    for (ge, asc) in [
        ("ReduceSum", "Sum"),
        ("ReduceMean", "Mean"),
        ("ReduceMax", "Max"),
        ("ReduceMin", "Min"),
        ("ReduceProd", "Prod"),
        ("ReduceAll", "All"),
        ("ReduceAny", "Any"),
    ] {
        v.push(reduce_row(ge, asc, true));
    }
    v.push(softmax("SoftmaxV2", false));
    v.push(softmax("LogSoftmaxV2", true));
    v.push(layer_norm());
    v.push(batch_norm());
    v.extend(super::forms::node_specific_rows());
    // Views: unit dims inserted or removed.
    for ge in [
        "Squeeze",
        "Unsqueeze",
        "ExpandDims",
        "Flatten",
        "Reshape",
        "SqueezeV3",
        "UnsqueezeV3",
    ] {
        v.push(view(ge));
    }
    v
}

/// Elu (alpha) and Selu (scale · Elu with GE's alpha): x > 0 ? x : alpha · (exp(x) − 1).
fn elu(ge: &str, scale: Option<(&str, f64)>) -> Lowering {
    let alpha = if ge == "Selu" { 1.673_263_2 } else { 1.0 };
    let mut steps = vec![
        st("Exp", vec![In(0)]),
        st("Sub", vec![S(0), Arg::Scalar(1.0)]),
        st("Mul", vec![S(1), Arg::AttrScalar("alpha".into(), alpha)]),
        mask("Gt", vec![In(0), Arg::Scalar(0.0)]),
        st("Where", vec![S(3), In(0), S(2)]),
    ];
    if let Some((name, default)) = scale {
        steps.push(st("Mul", vec![S(4), Arg::AttrScalar(name.into(), default)]));
    }
    row(ge, Family::Elementwise, bcast(1), steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::check_template;

    #[test]
    fn every_builtin_row_is_well_formed() {
        let rows = builtin_lowerings();
        assert!(rows.len() > 60);
        for l in &rows {
            check_template(l).unwrap();
        }
    }
}
