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

/// jemalloc's options, read once when it starts: larger per-thread caches of freed small
/// objects. A decoded GE dump makes and frees some 4,500 small objects; with the default cache
/// sizes a third of the allocator's time went to flushing full caches back to the arenas
/// (decode of dump 00046 on one thread: 3.96 M → 3.75 M instructions, 0.31 → 0.30 ms; of dump
/// 00017 6.63 M → 6.46 M; its encode, which grows large buffers, 6.36 M → 6.67 M). The cost is
/// at most a few MB of freed memory kept per thread, returned by jemalloc's cache GC.
///
/// Soundness: jemalloc declares `const char *malloc_conf` (prefixed `_rjem_` in this build) as
/// a weak symbol that a program may define; this defines it as a pointer to a NUL-terminated
/// string with static lifetime, which jemalloc only reads.
#[cfg(not(target_env = "msvc"))]
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 52] = b"lg_tcache_nslots_mul:4,tcache_nslots_small_max:2048\0";

mod algo;
mod asc;
mod asc_backend;
mod codegen;
mod compiler;
mod cpu;
mod errors;
pub mod ir;
mod onnx;
mod ops;
mod proto;
mod torch;

/// Give freed memory back to the operating system now: wait (at most 60 s) for the graphs
/// being freed on pool threads, then have jemalloc purge the unused pages of every arena
/// (which it otherwise returns gradually). Returns the number of graphs it waited for.
#[pyfunction]
fn release_memory(py: Python<'_>) -> usize {
    use std::sync::atomic::Ordering;
    py.detach(|| {
        let waited = ir::graph::PENDING_FREES.load(Ordering::SeqCst);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while ir::graph::PENDING_FREES.load(Ordering::SeqCst) > 0
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        #[cfg(not(target_env = "msvc"))]
        {
            // "arena.<MALLCTL_ARENAS_ALL>.purge" (4096 = MALLCTL_ARENAS_ALL); the call takes no
            // arguments and cannot fail in a way that matters here.
            let name = b"arena.4096.purge\0";
            // SAFETY: a NUL-terminated control name; no old or new value is read or written.
            unsafe {
                tikv_jemalloc_sys::mallctl(
                    name.as_ptr().cast(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                );
            }
        }
        waited
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(release_memory, m)?)?;
    ir::register(m)?;
    onnx::register(m)?;
    algo::register(m)?;
    asc::register(m)?;
    asc_backend::register(m)?;
    codegen::register(m)?;
    proto::register(m)?;
    ops::register(m)?;
    compiler::register(m)?;
    torch::register(m)?;
    Ok(())
}
