//! Bindings of the compiler: a compile one pass at a time (`compile_state.rs`), the batch
//! compiler, archives, and the compiled model as plain data the Python package wraps.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use ascendir_compiler::batch::{run_batch, BatchSpec, Done, Input, Output, Progress};
use ascendir_compiler::cache::{CacheMode, DirCache};
use ascendir_compiler::load::Source;
use ascendir_compiler::{
    CompileError, CompileOptions, CompileResult, CompiledModel, Kernel, Stage,
};
use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::{enter, py_err};
use crate::ir::graph::PyGraph;
use crate::ops::{ensure_libraries, PyCustom};

/// A compiled model as Python values: `(graph, kernels, report_json, report_text, dot,
/// dumps)`.
pub(crate) type Parts<'py> = (
    PyGraph,
    Bound<'py, PyList>,
    Bound<'py, PyBytes>,
    String,
    String,
    Vec<(String, String)>,
);

/// The parts of a compiled model as Python values: `(graph, kernels, report_json,
/// report_text, dot, dumps)` (see [`compile`]).
pub(crate) fn model_parts(py: Python<'_>, cm: CompiledModel) -> PyResult<Parts<'_>> {
    let kernels = kernel_dicts(py, &cm.kernels)?;
    let json = crate::errors::py_bytes(py, &cm.report.to_json_bytes())?;
    let text = cm.report.text();
    let dot = ascendir_compiler::report::to_dot(&cm.graph);
    Ok((
        PyGraph::from_graph(cm.graph),
        kernels,
        json,
        text,
        dot,
        cm.dumps,
    ))
}

/// Kernels as dicts: `name`, `fuse_type`, `members`, `member_types`, `hint`, `impls`,
/// `cache_key`, `from_cache`.
pub(crate) fn kernel_dicts<'py>(py: Python<'py>, ks: &[Kernel]) -> PyResult<Bound<'py, PyList>> {
    let kernels = PyList::empty(py);
    for k in ks {
        let d = PyDict::new(py);
        d.set_item("name", &k.name)?;
        d.set_item("fuse_type", &k.fuse_type)?;
        d.set_item("members", &k.members)?;
        d.set_item("member_types", &k.member_types)?;
        d.set_item("hint", crate::errors::py_bytes(py, &k.hint)?)?;
        let impls = PyList::empty(py);
        for i in &k.impls {
            impls.append(crate::errors::py_bytes(py, i)?)?;
        }
        d.set_item("impls", impls)?;
        d.set_item("cache_key", &k.cache_key)?;
        d.set_item("from_cache", k.from_cache)?;
        kernels.append(d)?;
    }
    Ok(kernels)
}

/// A batch running on its own thread: `next(timeout)` hands out `(index, result)` as models
/// finish; `progress()` reads the counters; `cancel()` stops it; `join()` waits for its threads.
#[pyclass(module = "ascendir._core.compiler", name = "Batch")]
pub struct PyBatch {
    rx: Mutex<mpsc::Receiver<(usize, CompileResult<Done>)>>,
    progress: Arc<Progress>,
    handle: Mutex<Option<std::thread::JoinHandle<Result<(), String>>>>,
    total: usize,
}

/// A model of a batch from Python: a Graph (copied), a path or the model bytes.
fn batch_input(item: &Bound<'_, PyAny>) -> PyResult<Input> {
    if let Ok(g) = item.cast::<PyGraph>() {
        return Ok(Input::Graph(Box::new(PyGraph::read(g, |g| g.clone())?)));
    }
    if let Ok(b) = item.cast::<PyBytes>() {
        return Ok(Input::Source(Source::Bytes {
            data: Bytes::copy_from_slice(b.as_bytes()),
            base_dir: None,
        }));
    }
    let p: PathBuf = item.extract()?;
    Ok(Input::Source(Source::Path(p)))
}

#[pymethods]
impl PyBatch {
    /// Start compiling `models` (Graphs, paths or bytes) on `jobs` threads; with `archives`
    /// every model is handed out as its result archive.
    #[new]
    #[pyo3(signature = (models, options_json, jobs, dump = false, cache_dir = None, cache_mode = "off", archives = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        models: &Bound<'_, PyList>,
        options_json: &str,
        jobs: usize,
        dump: bool,
        cache_dir: Option<PathBuf>,
        cache_mode: &str,
        archives: bool,
    ) -> PyResult<PyBatch> {
        crate::errors::guard_res(|| {
            ensure_libraries(py)?;
            let opts = CompileOptions::from_json(options_json)
                .map_err(|e| py_err(CompileError::from_kind(Stage::Load, e)))?;
            let mode = CacheMode::parse(cache_mode).ok_or_else(|| {
                py_err(CompileError::new(
                    Stage::Load,
                    format!("unknown cache mode '{cache_mode}'"),
                ))
            })?;
            let inputs = models
                .iter()
                .map(|m| batch_input(&m))
                .collect::<PyResult<Vec<_>>>()?;
            let total = inputs.len();
            let cache = match (cache_dir, mode) {
                (Some(d), m) if m != CacheMode::Off => Some(DirCache::new(&d, m)),
                _ => None,
            };
            let progress = Arc::new(Progress::default());
            let (tx, rx) = mpsc::channel();
            let p = Arc::clone(&progress);
            let handle = std::thread::Builder::new()
                .name("ascendir-batch".into())
                .spawn(move || {
                    let spec = BatchSpec {
                        opts: &opts,
                        jobs,
                        dump,
                        cache: cache.as_ref(),
                        archives,
                    };
                    let tx = Mutex::new(tx);
                    run_batch(inputs, &spec, &p, &|| PyCustom, &|i, r| {
                        if let Ok(t) = tx.lock() {
                            let _ = t.send((i, r));
                        }
                    })
                })
                .map_err(|e| {
                    py_err(CompileError::new(
                        Stage::Load,
                        format!("cannot start the batch: {e}"),
                    ))
                })?;
            Ok(PyBatch {
                rx: Mutex::new(rx),
                progress,
                handle: Mutex::new(Some(handle)),
                total,
            })
        })
    }

    /// The next finished model as `(index, sections, cached)` (the `(name, bytes)` sections
    /// of its result archive), `(index, parts, cached)` (the parts of [`compile`]'s result)
    /// or `(index, CompileError)`,
    /// waiting up to `timeout` seconds without the GIL; `None` on timeout or when every model
    /// has been handed out. Pending signals (Ctrl-C) are raised after the wait.
    fn next(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<Py<PyAny>>> {
        crate::errors::guard_res(|| {
            let Some((i, r)) = self.recv(py, timeout)? else {
                return Ok(None);
            };
            let item = match r {
                Ok(Done {
                    output: Output::Model(cm),
                    cached,
                }) => (i, model_parts(py, *cm)?, cached)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                Ok(Done {
                    output: Output::Archive(a),
                    cached,
                }) => {
                    let whole = Bytes::from(a);
                    match ascendir_compiler::archive::sections(&whole) {
                        Ok(s) => (i, section_objects(py, &whole, s)?, cached)
                            .into_pyobject(py)?
                            .into_any()
                            .unbind(),
                        Err(e) => error_item(py, i, e)?,
                    }
                }
                Err(e) => error_item(py, i, e)?,
            };
            Ok(Some(item))
        })
    }

    /// `(done, failed, total, in_flight, peak_in_flight)`.
    fn progress(&self) -> PyResult<(usize, usize, usize, usize, usize)> {
        crate::errors::guard(|| {
            let p = &self.progress;
            (
                p.done.load(Ordering::SeqCst),
                p.failed.load(Ordering::SeqCst),
                self.total,
                p.in_flight.load(Ordering::SeqCst),
                p.peak_in_flight.load(Ordering::SeqCst),
            )
        })
    }

    /// Stop: models not started fail as cancelled, running ones at their next stage.
    fn cancel(&self) -> PyResult<()> {
        crate::errors::guard(|| {
            self.progress.cancel.store(true, Ordering::SeqCst);
        })
    }

    /// Wait (without the GIL) until the batch thread and its pool have finished.
    fn join(&self, py: Python<'_>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let h = self.handle.lock().ok().and_then(|mut h| h.take());
            let Some(h) = h else { return Ok(()) };
            // A wait on the batch thread, not engine work: its panic is reported below.
            let r = py.detach(|| h.join());
            match r {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(py_err(CompileError::new(Stage::Load, e))),
                Err(_) => Err(py_err(CompileError::new(
                    Stage::Load,
                    "the batch thread panicked",
                ))),
            }
        })
    }
}

/// A failed model of a batch as `(index, CompileError)`.
fn error_item(py: Python<'_>, i: usize, e: CompileError) -> PyResult<Py<PyAny>> {
    let err = py_err(e);
    Ok((i, err.value(py).clone())
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

impl PyBatch {
    /// The next finished model as the compiler hands it over, waiting up to `timeout` seconds
    /// without the GIL; pending signals (Ctrl-C) are raised after the wait.
    fn recv(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<(usize, CompileResult<Done>)>> {
        let wait = Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
        let got = py.detach(|| match self.rx.lock() {
            Ok(rx) => rx.recv_timeout(wait).ok(),
            Err(_) => None,
        });
        py.check_signals()?;
        Ok(got)
    }
}

impl Drop for PyBatch {
    fn drop(&mut self) {
        // A batch dropped unfinished stops; its thread ends on its own.
        self.progress.cancel.store(true, Ordering::SeqCst);
    }
}

/// The compiled ModelDef of a result archive, held in the archive's buffer: decoded or copied
/// only when asked (a cached batch result that is only counted or saved never copies it).
#[pyclass(name = "ArchivedModel", module = "ascendir._core.compiler", frozen)]
pub struct PyArchivedModel {
    data: Bytes,
}

#[pymethods]
impl PyArchivedModel {
    /// The main graph of the ModelDef (decoded without the GIL, byte payloads shared).
    fn graph(&self, py: Python<'_>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| crate::proto::decode_one(py, self.data.clone()))
    }

    /// The ModelDef bytes (a copy).
    fn __bytes__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard_res(|| crate::errors::py_bytes(py, &self.data))
    }

    /// The size of the ModelDef in bytes.
    fn __len__(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.data.len())
    }
}

/// The `sections` of the result archive `whole` as Python values: `model.pb` as a
/// [`PyArchivedModel`] sharing `whole`'s buffer, the others (small) as `bytes`.
fn section_objects(
    py: Python<'_>,
    whole: &Bytes,
    sections: Vec<(String, &[u8])>,
) -> PyResult<Vec<(String, Py<PyAny>)>> {
    sections
        .into_iter()
        .map(|(n, d)| {
            let o = if n == "model.pb" {
                let data = whole.slice_ref(d);
                Py::new(py, PyArchivedModel { data })?.into_any()
            } else {
                crate::errors::py_bytes(py, d)?.into_any().unbind()
            };
            Ok((n, o))
        })
        .collect()
}

/// The sections of a result archive as `[(name, bytes)]`.
#[pyfunction]
fn unpack_archive<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
    crate::errors::guard_res(|| {
        let s = ascendir_compiler::archive::sections(data).map_err(py_err)?;
        s.into_iter()
            .map(|(n, d)| Ok((n, crate::errors::py_bytes(py, d)?)))
            .collect()
    })
}

/// Compile one model (a Graph, path or bytes) into its result archive, on `jobs` threads:
/// what an executor task runs. Returns `(archive, cached)`.
#[pyfunction]
#[pyo3(signature = (model, options_json, jobs, dump = false, cache_dir = None, cache_mode = "off"))]
fn compile_archive<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    options_json: &str,
    jobs: usize,
    dump: bool,
    cache_dir: Option<PathBuf>,
    cache_mode: &str,
) -> PyResult<(Bound<'py, PyBytes>, bool)> {
    crate::errors::guard_res(|| {
        let list = PyList::new(py, [model])?;
        let b = PyBatch::new(
            py,
            &list,
            options_json,
            jobs,
            dump,
            cache_dir,
            cache_mode,
            true,
        )?;
        let (_, got) = loop {
            if let Some(item) = b.recv(py, 0.1)? {
                break item;
            }
        };
        b.join(py)?;
        let done = got.map_err(py_err)?;
        let archive = done.output.into_archive().map_err(py_err)?;
        Ok((crate::errors::py_bytes(py, &archive)?, done.cached))
    })
}

/// The model formats the loader tells from bytes: `"onnx"`, `"pb"`, `"txt"`, `"om"` or `None`.
#[pyfunction]
fn sniff(data: &[u8]) -> PyResult<Option<&'static str>> {
    crate::errors::guard(|| ascendir_compiler::load::sniff(data).map(|f| f.name()))
}

/// Load a model (path or bytes; `base_dir` for external ONNX data of bytes) as a Graph.
#[pyfunction]
#[pyo3(signature = (model, base_dir = None))]
fn load_model(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    base_dir: Option<PathBuf>,
) -> PyResult<PyGraph> {
    crate::errors::guard_res(|| {
        let src = match model.cast::<PyBytes>() {
            Ok(b) => Source::Bytes {
                data: Bytes::copy_from_slice(b.as_bytes()),
                base_dir,
            },
            Err(_) => Source::Path(model.extract()?),
        };
        let g = enter(py, || ascendir_compiler::load::load(&src))?;
        Ok(PyGraph::from_graph(g))
    })
}

/// GE op types with a registered lowering.
#[pyfunction]
fn lowered_types() -> PyResult<Vec<String>> {
    crate::errors::guard(ascendir_compiler::lower::registered)
}

/// Register a lowering given as JSON (see `ascendir_compiler::lower::spec`); returns its GE type.
#[pyfunction]
fn register_lowering(spec_json: &str) -> PyResult<String> {
    crate::errors::guard_res(|| {
        ascendir_compiler::lower::spec::register_json(spec_json)
            .map_err(|e| py_err(CompileError::from_kind(Stage::Lower, e)))
    })
}

/// Register the `ascendir._core.compiler` functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let sub = PyModule::new(m.py(), "compiler")?;
    sub.add_function(wrap_pyfunction!(lowered_types, &sub)?)?;
    sub.add_function(wrap_pyfunction!(register_lowering, &sub)?)?;
    sub.add_function(wrap_pyfunction!(unpack_archive, &sub)?)?;
    sub.add_function(wrap_pyfunction!(compile_archive, &sub)?)?;
    sub.add_function(wrap_pyfunction!(sniff, &sub)?)?;
    sub.add_function(wrap_pyfunction!(load_model, &sub)?)?;
    sub.add_class::<PyBatch>()?;
    sub.add_class::<PyArchivedModel>()?;
    crate::compiler_passes::register(&sub)?;
    sub.add_class::<crate::compile_state::PyCompileState>()?;
    m.add_submodule(&sub)?;
    Ok(())
}
