//! Bindings of the AscGraph engine, registered as the submodule `ascendir._core.asc`
//! (the public surface is the Python package `ascendir.asc`).

use pyo3::prelude::*;

pub mod expr;
pub mod graph;
pub mod handles;
pub mod registry;

/// Register the AscGraph classes and functions in the submodule `asc` of `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
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
