//! The dtype rules of lowering: what Load/Store move, the precision policy's compute dtype,
//! and each template step checked against its AscIR prototype's allowed dtypes.

use ascendir_ir::DataType;

use super::{Arg, Lowering, StepDtype};
use crate::options::CompileOptions;

/// Whether Load/Store move `dt`.
pub fn movable(dt: DataType) -> bool {
    ascendir_asc::builtins::MOVABLE.contains(&dt)
}

/// The dtype every step computes in, given the node's operand dtypes (the precision policy:
/// fp16/bf16 compute in fp32).
pub fn compute_dtype(dt: DataType, opts: &CompileOptions) -> DataType {
    if opts.improve_precision && (dt == DataType::FLOAT16 || dt == DataType::BF16) {
        DataType::FLOAT
    } else {
        dt
    }
}

/// Check each step's operand dtypes against its AscIR prototype's allowed sets.
pub(super) fn check_step_dtypes(
    l: &Lowering,
    in_dtypes: &[DataType],
    out_dtype: DataType,
    opts: &CompileOptions,
) -> Result<(), String> {
    let mut step_dt: Vec<DataType> = Vec::new();
    let cd = |d: DataType| compute_dtype(d, opts);
    for (i, s) in l.steps.iter().enumerate() {
        let def = ascendir_asc::registry::lookup(&s.op)
            .ok_or_else(|| format!("AscIR op '{}' is not registered", s.op))?;
        let arg_dt = |a: &Arg| -> DataType {
            match a {
                Arg::In(k) => cd(in_dtypes.get(*k).copied().unwrap_or(DataType::UNDEFINED)),
                Arg::Step(j) => step_dt[*j],
                _ => DataType::UNDEFINED,
            }
        };
        // Where's condition is a mask: the compute dtype is its values'.
        let first = s
            .args
            .iter()
            .skip(usize::from(s.op == "Where"))
            .map(arg_dt)
            .find(|d| *d != DataType::UNDEFINED)
            .unwrap_or(DataType::UNDEFINED);
        for (k, a) in s.args.iter().enumerate() {
            let dt = match arg_dt(a) {
                DataType::UNDEFINED => first,
                d => d,
            };
            if s.needs_input.is_some()
                && matches!(a, Arg::In(x) if in_dtypes.get(*x) == Some(&DataType::UNDEFINED))
            {
                continue;
            }
            if let Some(port) = def.inputs.get(k).or(def.inputs.last()) {
                let allowed = def.allowed(&port.dtype_var).unwrap_or(&[]);
                if !allowed.is_empty() && !allowed.contains(&dt) {
                    return Err(format!(
                        "AscIR {} does not take {} (step {i})",
                        s.op,
                        dt.serial_name()
                    ));
                }
            }
        }
        let res = match s.dtype {
            StepDtype::Same => first,
            StepDtype::Mask => DataType::BOOL,
            StepDtype::NodeOut => cd(out_dtype),
            StepDtype::Fixed(d) => d,
        };
        if s.op == "Cast" {
            let pair_ok = def.dtype_combos.is_empty()
                || def.dtype_combos.iter().any(|c| c == &vec![first, res]);
            if first != res && !pair_ok {
                return Err(format!(
                    "AscIR Cast does not convert {} to {}",
                    first.serial_name(),
                    res.serial_name()
                ));
            }
        }
        step_dt.push(res);
    }
    Ok(())
}
