//! Bindings of AscGraph: the engine's data model, registered as the submodule
//! `ascendir._core.asc` (the public surface is the Python package `ascendir.asc`); the
//! backend ([`backend`], `ascendir._core.asc_backend`, with the CPU target of [`cpu`]); and
//! the kernel printers ([`codegen`], `ascendir._core.codegen`).

use pyo3::prelude::*;

pub mod backend;
pub mod codegen;
pub mod cpu;
pub mod expr;
pub mod graph;
pub mod handles;
pub mod registry;

/// Register the submodules `asc`, `asc_backend` and `codegen` of `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_asc(m)?;
    backend::register(m)?;
    codegen::register(m)
}

/// Register the AscGraph classes and functions in the submodule `asc` of `m`.
fn register_asc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let sub = PyModule::new(py, "asc")?;
    sub.add_class::<expr::PyExpr>()?;
    sub.add_class::<graph::PyAscGraph>()?;
    handles::register(&sub)?;
    expr::register(&sub)?;
    registry::register(&sub)?;
    sub.add("ASCGRAPH_ATTR_KEY", ascendir_asc::wire::ASCGRAPH_ATTR_KEY)?;
    m.add_submodule(&sub)?;
    Ok(())
}
