//! Bindings of the AscGraph engine (`ascendir.asc`).

use pyo3::prelude::*;

/// Register the AscGraph classes and functions.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
