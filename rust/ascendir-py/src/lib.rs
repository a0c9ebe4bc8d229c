//! The extension module `ascendir._core`: thin PyO3 wrappers over the Rust crates.
//!
//! One file per public area; each registers its classes and functions in `register`.

use pyo3::prelude::*;

/// With the feature `jemalloc` (on by default; not on MSVC targets) every Rust allocation of
/// the module goes through jemalloc: decoding and building graphs make many small allocations,
/// often freed on another thread. Measured against the system allocator: ModelDef decode and
/// encode of GE's dumps 25–50% faster, graph building as fast, bulk-built G(1M) 302 instead of
/// 329 bytes per node. Its options are compiled in (`JEMALLOC_SYS_WITH_MALLOC_CONF` in the
/// workspace's `.cargo/config.toml`; no exported `malloc_conf` symbol): larger per-thread
/// caches (`lg_tcache_nslots_mul:4,tcache_nslots_small_max:2048`) keep the small objects of a
/// freed graph for the next one instead of returning their pages to the system, which the
/// next import faults in again — kernel time per ONNX import of the 21k-node decoder
/// 8.6–12.7 ms with the defaults, 5.2–7.5 ms with these (docs/BENCHMARKS.md). The module is
/// loaded with `dlopen`, hence jemalloc without initial-exec TLS.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod algo;
mod asc;
mod compile_state;
mod compiler;
mod compiler_passes;
mod errors;
pub mod ir;
mod onnx;
mod ops;
mod proto;
mod torch;

/// Give freed memory back to the operating system now: wait (at most 60 s) for the graphs
/// being freed on helper threads, then have jemalloc purge the unused pages of every arena
/// (which it otherwise returns gradually). Returns the number of graphs it waited for.
#[pyfunction]
fn release_memory(py: Python<'_>) -> PyResult<usize> {
    crate::errors::guard_res(|| {
        crate::errors::enter(py, || {
            let waited = ascendir_ir::threads::pending_frees();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while ascendir_ir::threads::pending_frees() > 0 && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            #[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
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
            Ok::<_, crate::errors::Error>(waited)
        })
    })
}

/// Set the number of threads every parallel path of ascendir may use, the calling thread
/// included (ModelDef decode and encode, ONNX import's frees, the compiler's parallel phase,
/// freeing large graphs). `1` makes every call single-threaded.
#[pyfunction]
fn set_num_threads(n: i64) -> PyResult<()> {
    crate::errors::guard_res(|| {
        let bad = || {
            ascendir_ir::error::IrError::InvalidArgument(format!(
                "set_num_threads: the number of threads must be at least 1, got {n}"
            ))
        };
        let n = usize::try_from(n).map_err(|_| errors::py_err(bad()))?;
        ascendir_ir::threads::set_num_threads(n).map_err(errors::py_err)
    })
}

/// The number of threads ascendir's parallel paths may use, the calling thread included.
#[pyfunction]
fn get_num_threads() -> PyResult<usize> {
    crate::errors::guard(ascendir_ir::threads::num_threads)
}

/// Start recording which threads run ascendir's parallel work (for tests).
#[pyfunction]
fn _thread_trace_start() -> PyResult<()> {
    crate::errors::guard(|| {
        ascendir_ir::threads::trace::start();
    })
}

/// Stop recording; the tokens of the threads that ran parallel work since the start, sorted.
#[pyfunction]
fn _thread_trace_stop() -> PyResult<Vec<u64>> {
    crate::errors::guard(ascendir_ir::threads::trace::stop)
}

/// The calling thread's token, as `_thread_trace_stop` names threads.
#[pyfunction]
fn _thread_token() -> PyResult<u64> {
    crate::errors::guard(ascendir_ir::threads::trace::token)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(release_memory, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_thread_trace_start, m)?)?;
    m.add_function(wrap_pyfunction!(_thread_trace_stop, m)?)?;
    m.add_function(wrap_pyfunction!(_thread_token, m)?)?;
    ir::register(m)?;
    onnx::register(m)?;
    algo::register(m)?;
    asc::register(m)?;
    proto::register(m)?;
    ops::register(m)?;
    compiler::register(m)?;
    torch::register(m)?;
    Ok(())
}
