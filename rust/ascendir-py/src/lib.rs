//! The extension module `ascendir._core`: thin PyO3 wrappers over the Rust crates.
//!
//! One file per public area; each registers its classes and functions in `register`.

use pyo3::prelude::*;

mod asc;
mod errors;
mod proto;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    asc::register(m)?;
    proto::register(m)?;
    Ok(())
}
