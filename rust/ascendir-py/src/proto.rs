//! Bindings of GE ModelDef / OM interop.

use pyo3::prelude::*;

/// Register the serialization functions.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
