//! Lowerings given as data (JSON) — what `@air.compiler.lowering` traces a Python function
//! into, so compiling never calls back into Python.
//!
//! ```json
//! {"op_type": "MyGelu", "family": "elementwise", "shape": "broadcast", "inputs": 1,
//!  "steps": [{"op": "Mul", "args": [{"in": 0}, {"scalar": 1.702}]},
//!            {"op": "Sigmoid", "args": [{"step": 0}]},
//!            {"op": "Mul", "args": [{"in": 0}, {"step": 1}], "dtype": "same"}],
//!  "out": {"step": 2}, "replace": false}
//! ```
//!
//! `shape` is `broadcast` (element-wise over numpy-broadcast operands) or `reduce` (then
//! `axes_attr` names the GE attribute holding the axes, `keep_dims_attr` the keep-dims flag,
//! and reducing steps carry `"reduce": true`). `dtype` of a step is `same` (its first operand's,
//! the default), `mask` (a comparison) or `node_out` (the GE node's output dtype).

use crate::error::{ErrorKind, KindResult};
use serde::Deserialize;

use super::{register, Arg, AxesSrc, Lowering, ShapeRule, Step, StepDtype};
use crate::options::Family;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecArg {
    #[serde(rename = "in")]
    input: Option<usize>,
    step: Option<usize>,
    scalar: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecStep {
    op: String,
    args: Vec<SpecArg>,
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    reduce: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    op_type: String,
    #[serde(default = "elementwise")]
    family: Family,
    #[serde(default = "broadcast")]
    shape: String,
    inputs: usize,
    steps: Vec<SpecStep>,
    out: SpecArg,
    #[serde(default)]
    axes_attr: Option<String>,
    #[serde(default)]
    keep_dims_attr: Option<String>,
    #[serde(default)]
    replace: bool,
}

fn elementwise() -> Family {
    Family::Elementwise
}

fn broadcast() -> String {
    "broadcast".into()
}

fn arg(a: &SpecArg, n_inputs: usize, what: &str) -> Result<Arg, String> {
    match (a.input, a.step, a.scalar) {
        (Some(k), None, None) if k < n_inputs => Ok(Arg::In(k)),
        (Some(k), None, None) => Err(format!("{what}: input {k} of {n_inputs}")),
        (None, Some(j), None) => Ok(Arg::Step(j)),
        (None, None, Some(x)) if x.is_finite() => Ok(Arg::Scalar(x)),
        (None, None, Some(x)) => Err(format!("{what}: the scalar {x} is not finite")),
        _ => Err(format!(
            "{what}: give exactly one of 'in', 'step', 'scalar'"
        )),
    }
}

/// Parse a lowering from its JSON form (checked like every lowering).
pub fn from_json(text: &str) -> Result<(Lowering, bool), String> {
    let s: Spec = serde_json::from_str(text).map_err(|e| format!("lowering spec: {e}"))?;
    if s.op_type.is_empty() {
        return Err("lowering spec: empty op_type".into());
    }
    let shape = match s.shape.as_str() {
        "broadcast" => ShapeRule::Broadcast {
            align: vec![None; s.inputs],
        },
        "reduce" => ShapeRule::Reduce,
        other => {
            return Err(format!(
                "lowering of '{}': shape '{other}' (broadcast or reduce)",
                s.op_type
            ))
        }
    };
    let mut steps = Vec::with_capacity(s.steps.len());
    for (i, st) in s.steps.iter().enumerate() {
        let what = format!("lowering of '{}', step {i}", s.op_type);
        let args = st
            .args
            .iter()
            .map(|a| arg(a, s.inputs, &what))
            .collect::<Result<Vec<_>, _>>()?;
        let mut step = Step::new(&st.op, args);
        step.reduce = st.reduce;
        step.dtype = match st.dtype.as_deref() {
            None | Some("same") => StepDtype::Same,
            Some("mask") => StepDtype::Mask,
            Some("node_out") => StepDtype::NodeOut,
            Some(o) => return Err(format!("{what}: dtype '{o}' (same, mask or node_out)")),
        };
        steps.push(step);
    }
    let axes = match (&shape, &s.axes_attr) {
        (ShapeRule::Reduce, Some(name)) => Some(AxesSrc::Attr {
            name: name.clone(),
            empty_all: true,
        }),
        (ShapeRule::Reduce, None) => {
            return Err(format!(
                "lowering of '{}': a reduce lowering needs axes_attr",
                s.op_type
            ))
        }
        _ => None,
    };
    let out = arg(
        &s.out,
        s.inputs,
        &format!("lowering of '{}', out", s.op_type),
    )?;
    let l = Lowering {
        op_type: s.op_type,
        family: s.family,
        shape,
        data_inputs: Some(s.inputs),
        first_input: 0,
        target: super::Target::Operands,
        axes,
        keep_dims_attr: s.keep_dims_attr,
        keep_dims_default: true,
        steps,
        out,
        norm_like: false,
        guard: None,
        adapt: None,
    };
    Ok((l, s.replace))
}

/// Register a lowering given as JSON; refuses to replace an existing one unless the spec says
/// `"replace": true`. Returns the GE type.
pub fn register_json(text: &str) -> KindResult<String> {
    register_spec(text).map_err(ErrorKind::Lowering)
}

/// [`register_json`], its failures as text.
fn register_spec(text: &str) -> Result<String, String> {
    let (l, replace) = from_json(text)?;
    if !replace && super::lookup(&l.op_type).is_some() {
        return Err(format!(
            "'{}' already has a lowering (pass replace=True to override it)",
            l.op_type
        ));
    }
    let name = l.op_type.clone();
    register(l)?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let ok = r#"{"op_type": "T1", "inputs": 1,
            "steps": [{"op": "Exp", "args": [{"in": 0}]}], "out": {"step": 0}}"#;
        let (l, _) = from_json(ok).unwrap();
        assert_eq!(l.steps.len(), 1);
        assert!(from_json(&ok.replace("\"in\": 0", "\"in\": 3")).is_err());
        assert!(from_json(&ok.replace("Exp", "NoSuchOp")).is_ok()); // checked at register
        assert!(register_json(&ok.replace("Exp", "NoSuchOp")).is_err());
        assert!(from_json(&ok.replace("\"inputs\": 1", "\"inputs\": 1, \"x\": 2")).is_err());
        assert!(from_json(&ok.replace("{\"step\": 0}}", "{\"scalar\": 1}}")).is_ok());
        assert!(register_json(&ok.replace("T1", "Abs")).is_err()); // builtin, no replace
    }
}
