//! The extension module `ascendir._core`: thin PyO3 wrappers over the Rust crates.
//!
//! One file per public area; each registers its classes and functions in `register`.

use pyo3::prelude::*;

mod algo;
mod asc;
mod asc_backend;
mod errors;
pub mod ir;
mod onnx;
mod ops;
mod proto;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    ir::register(m)?;
    onnx::register(m)?;
    algo::register(m)?;
    asc::register(m)?;
    asc_backend::register(m)?;
    proto::register(m)?;
    ops::register(m)?;
    Ok(())
}
