//! The extension module `ascendir._core`: thin PyO3 wrappers over the Rust crates.
//!
//! One file per public area; each registers its classes and functions in `register`.

use pyo3::prelude::*;

/// Every Rust allocation of the module goes through jemalloc: decoding and building graphs
/// make many small allocations, often on worker threads and freed on another thread. Measured
/// against the system allocator: ModelDef decode and encode of GE's dumps 25–50% faster, graph
/// building as fast, bulk-built G(1M) 302 instead of 329 bytes per node.
/// The module is loaded with `dlopen`, hence jemalloc without initial-exec TLS.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
