//! Bindings of the AscGraph engine, registered as the submodule `ascendir._core.asc`
//! (the public surface is the Python package `ascendir.asc`).

use ascendir_asc::AscError;
use pyo3::prelude::*;

use crate::errors;

pub mod expr;
pub mod graph;
pub mod registry;

/// Map an engine error onto the `ascendir.errors` tree.
pub fn asc_err(err: AscError) -> PyErr {
    Python::attach(|py| {
        let msg = err.to_string();
        match err {
            AscError::InvalidArgument(_) => {
                errors::raise(py, errors::invalid_argument_error(py), msg, &[])
            }
            AscError::NotFound(_) => errors::raise(py, errors::not_found_error(py), msg, &[]),
            AscError::Registry(_) => errors::raise(py, errors::registry_error(py), msg, &[]),
            AscError::Inference(_) => errors::raise(py, errors::inference_error(py), msg, &[]),
            AscError::Validation { problems, .. } => match problems.into_pyobject(py) {
                Ok(p) => errors::raise(
                    py,
                    errors::validation_error(py),
                    msg,
                    &[("problems", p.into_any().unbind())],
                ),
                Err(e) => e,
            },
            AscError::Decode { path, .. } => {
                let path: Py<PyAny> = match path {
                    Some(p) => pyo3::types::PyString::new(py, &p).into_any().unbind(),
                    None => py.None(),
                };
                errors::raise(py, errors::decode_error(py), msg, &[("path", path)])
            }
            AscError::Parse(p) => {
                let off = pyo3::types::PyInt::new(py, p.offset).into_any().unbind();
                errors::raise(
                    py,
                    errors::invalid_argument_error(py),
                    msg,
                    &[("offset", off)],
                )
            }
            AscError::Eval(ascendir_asc::expr::EvalError::Overflow(_)) => {
                errors::raise(py, errors::overflow_error(py), msg, &[])
            }
            AscError::Eval(ascendir_asc::expr::EvalError::Unbound(_)) => {
                errors::raise(py, errors::not_found_error(py), msg, &[])
            }
            AscError::Eval(_) => errors::raise(py, errors::invalid_argument_error(py), msg, &[]),
        }
    })
}

/// `Result<T, AscError>` → `PyResult<T>`.
pub trait AscPy<T> {
    /// Map the error into the Python exception tree.
    fn py(self) -> PyResult<T>;
}

impl<T> AscPy<T> for Result<T, AscError> {
    fn py(self) -> PyResult<T> {
        self.map_err(asc_err)
    }
}

/// Register the AscGraph classes and functions in the submodule `asc` of `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let sub = PyModule::new(py, "asc")?;
    sub.add_class::<expr::PyExpr>()?;
    sub.add_class::<graph::PyAscGraph>()?;
    expr::register(&sub)?;
    registry::register(&sub)?;
    sub.add("ASCGRAPH_ATTR_KEY", ascendir_asc::wire::ASCGRAPH_ATTR_KEY)?;
    m.add_submodule(&sub)?;
    Ok(())
}
