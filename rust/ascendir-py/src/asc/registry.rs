//! The AscIR registry from Python: `register_op(...)` pushes a prototype into the Rust registry.

use ascendir_asc::registry::{self, AttrDef, AttrType, OpDef, PortDef, PortKind};
use ascendir_asc::{AscError, AttrValue, ComputeType};
use ascendir_ir::DataType;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use super::expr::{to_expr, PyExpr};
use crate::errors::{py_err, IntoPyResult};

fn reg_err<T>(msg: String) -> PyResult<T> {
    Err(py_err(AscError::Registry(msg)))
}

fn dtypes(op: &str, v: Vec<i64>) -> PyResult<Vec<DataType>> {
    v.into_iter()
        .map(|n| {
            DataType::from_ge(n).map_or_else(
                || reg_err(format!("op '{op}': unknown data type number {n}")),
                Ok,
            )
        })
        .collect()
}

fn default_value(op: &str, name: &str, ty: AttrType, v: &Bound<'_, PyAny>) -> PyResult<AttrValue> {
    let is_int = v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>();
    let msg = format!(
        "op '{op}': default of attribute '{name}' is not of type {}",
        ty.name()
    );
    let bad = || py_err(AscError::Registry(msg.clone()));
    Ok(match ty {
        AttrType::Int if is_int => AttrValue::Int(v.extract()?),
        AttrType::Float if is_int || v.is_instance_of::<PyFloat>() => {
            AttrValue::Float(v.extract()?)
        }
        AttrType::Bool if v.is_instance_of::<PyBool>() => AttrValue::Bool(v.extract()?),
        AttrType::Str if v.is_instance_of::<PyString>() => AttrValue::Str(v.extract()?),
        AttrType::Expr if is_int || v.cast::<PyExpr>().is_ok() => AttrValue::Expr(to_expr(v)?),
        AttrType::ListInt if !v.is_instance_of::<PyString>() => AttrValue::ListInt(v.extract()?),
        AttrType::DType if is_int => {
            let n: i64 = v.extract()?;
            AttrValue::DType(DataType::from_ge(n).ok_or_else(bad)?)
        }
        _ => return Err(bad()),
    })
}

/// Register an AscIR prototype (`REG_ASC_IR`).
///
/// `inputs`/`outputs`: `(name, kind, dtype_var)` with kind `required | optional | dynamic`;
/// `attrs`: `(name, type, default_or_None)`; `dtype_vars`: `(var, [ge dtype numbers])` (empty =
/// any); `combos`: allowed joint assignments of the variables; `compute_type`: GE name or
/// `invalid` for buffer ops; `tmp_buffer`: temporary UB bytes (int or SizeExpr) or None.
#[pyfunction]
#[pyo3(signature = (op_type, inputs, outputs, attrs, dtype_vars, combos, compute_type, inplace = false, tmp_buffer = None, replace = false))]
#[allow(clippy::too_many_arguments)]
fn register_op(
    op_type: &str,
    inputs: Vec<(String, String, String)>,
    outputs: Vec<(String, String, String)>,
    attrs: Vec<(String, String, Bound<'_, PyAny>)>,
    dtype_vars: Vec<(String, Vec<i64>)>,
    combos: Vec<Vec<i64>>,
    compute_type: &str,
    inplace: bool,
    tmp_buffer: Option<&Bound<'_, PyAny>>,
    replace: bool,
) -> PyResult<()> {
    crate::errors::guard_res(|| {
        let ct = ComputeType::parse(compute_type)
            .map_err(|e| py_err(AscError::Registry(format!("op '{op_type}': {e}"))))?;
        let mut def = OpDef::new(op_type, ct);
        let port = |(n, k, v): (String, String, String)| -> PyResult<PortDef> {
            Ok(PortDef {
                name: n,
                kind: PortKind::parse(&k).py()?,
                dtype_var: v,
            })
        };
        def.inputs = inputs.into_iter().map(port).collect::<PyResult<_>>()?;
        def.outputs = outputs.into_iter().map(port).collect::<PyResult<_>>()?;
        for (name, ty, default) in attrs {
            let ty = AttrType::parse(&ty).py()?;
            let default = if default.is_none() {
                None
            } else {
                Some(default_value(op_type, &name, ty, &default)?)
            };
            def.attrs.push(AttrDef { name, ty, default });
        }
        for (var, allowed) in dtype_vars {
            let d = dtypes(op_type, allowed)?;
            def.dtype_vars.push((var, d));
        }
        for c in combos {
            def.dtype_combos.push(dtypes(op_type, c)?);
        }
        def.inplace = inplace;
        def.tmp_buffer = match tmp_buffer {
            Some(t) if !t.is_none() => Some(to_expr(t)?),
            _ => None,
        };
        registry::register(def, replace).py()?;
        Ok(())
    })
}

/// Registered op types, sorted.
#[pyfunction]
fn registered_ops() -> PyResult<Vec<String>> {
    crate::errors::guard(registry::registered_types)
}

/// The prototype of `op_type` as a dict (NotFoundError when unknown).
#[pyfunction]
fn op_info(py: Python<'_>, op_type: &str) -> PyResult<Py<PyAny>> {
    crate::errors::guard_res(|| {
        let def = registry::lookup(op_type).ok_or_else(|| {
            py_err(AscError::NotFound(format!(
                "AscIR op type '{op_type}' is not registered"
            )))
        })?;
        let d = PyDict::new(py);
        let ports = |ps: &[PortDef]| -> Vec<(String, String, String)> {
            ps.iter()
                .map(|p| {
                    let k = match p.kind {
                        PortKind::Required => "required",
                        PortKind::Optional => "optional",
                        PortKind::Dynamic => "dynamic",
                    };
                    (p.name.clone(), k.to_string(), p.dtype_var.clone())
                })
                .collect()
        };
        d.set_item("type", &def.op_type)?;
        d.set_item("inputs", ports(&def.inputs))?;
        d.set_item("outputs", ports(&def.outputs))?;
        let attrs: Vec<(String, String)> = def
            .attrs
            .iter()
            .map(|a| (a.name.clone(), a.ty.name().to_string()))
            .collect();
        d.set_item("attrs", attrs)?;
        let vars: Vec<(String, Vec<i32>)> = def
            .dtype_vars
            .iter()
            .map(|(v, l)| (v.clone(), l.iter().map(|t| t.ge_value()).collect()))
            .collect();
        d.set_item("dtype_vars", vars)?;
        let combos: Vec<Vec<i32>> = def
            .dtype_combos
            .iter()
            .map(|c| c.iter().map(|t| t.ge_value()).collect())
            .collect();
        d.set_item("combos", combos)?;
        d.set_item("compute_type", def.compute_type.name())?;
        d.set_item("inplace", def.inplace)?;
        match &def.tmp_buffer {
            Some(e) => d.set_item("tmp_buffer", Py::new(py, PyExpr { e: e.clone() })?)?,
            None => d.set_item("tmp_buffer", py.None())?,
        }
        Ok(d.into_any().unbind())
    })
}

/// Register the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(register_op, m)?)?;
    m.add_function(wrap_pyfunction!(registered_ops, m)?)?;
    m.add_function(wrap_pyfunction!(op_info, m)?)?;
    Ok(())
}
