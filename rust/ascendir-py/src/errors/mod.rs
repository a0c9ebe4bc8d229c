//! The one place where Rust errors become Python exceptions of `ascendir.errors`: the
//! exception classes, the binding's [`Error`] enum with its one conversion into `PyErr`
//! (`map`), the panic guards, and [`enter`], the funnel every long call goes through.

mod map;

use ascendir_asc::tiling::TilingError;
use ascendir_asc::AscError;
use ascendir_compiler::CompileError;
use ascendir_ir::dump_read::DumpTextError;
use ascendir_ir::infer::InferError;
use ascendir_ir::instantiate::InstantiateError;
use ascendir_ir::registry::RegistryError;
use ascendir_ir::IrError;
use ascendir_onnx::OnnxError;
use ascendir_proto::ProtoError;
use ascendir_torch::TorchError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// Look up an exception class of `ascendir.errors` by name (cached per class).
fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> Bound<'py, PyType> {
    cell.get_or_init(py, || {
        py.import("ascendir.errors")
            .and_then(|m| m.getattr(name))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from))
            .map(Bound::unbind)
            .unwrap_or_else(|_| py.get_type::<pyo3::exceptions::PyRuntimeError>().unbind())
    })
    .bind(py)
    .clone()
}

macro_rules! error_classes {
    ($($fn_name:ident => $class:literal),* $(,)?) => {
        $(
            #[doc = concat!("The `ascendir.errors.", $class, "` class.")]
            #[allow(dead_code)] // each area binding uses the classes it raises
            pub fn $fn_name(py: Python<'_>) -> Bound<'_, PyType> {
                static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
                class(py, &CELL, $class)
            }
        )*
    };
}

error_classes! {
    base_error => "AscendIRError",
    stale_handle_error => "StaleHandleError",
    link_error => "LinkError",
    cycle_error => "CycleError",
    validation_error => "ValidationError",
    decode_error => "DecodeError",
    registry_error => "RegistryError",
    inference_error => "InferenceError",
    tiling_error => "TilingError",
    not_found_error => "NotFoundError",
    duplicate_error => "DuplicateNameError",
    external_data_error => "ExternalDataError",
    invalid_argument_error => "InvalidArgumentError",
    foreign_handle_error => "ForeignHandleError",
    overflow_error => "SizeOverflowError",
    compile_error => "CompileError",
    torch_export_error => "TorchExportError",
    internal_error => "InternalError",
    concurrent_use_error => "ConcurrentUseError",
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// A panic caught at the binding boundary, as `ascendir.errors.InternalError`.
pub fn panic_err(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = format!(
        "internal error (a bug in ascendir, please report it): {}",
        panic_message(payload.as_ref())
    );
    Python::attach(|py| raise(py, internal_error(py), msg, &[]))
}

/// Run `f`, turning a panic inside it into `InternalError`: no `PanicException` reaches
/// Python from the calls that go through here (every graph access via `PyGraph::read` /
/// `write`, the decoders and encoders).
pub fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(panic_err)
}

/// The graph is in use by another call (another thread, or the call that runs a callback):
/// `ConcurrentUseError` naming the access that failed.
pub fn concurrent_err(what: &str) -> PyErr {
    Python::attach(|py| {
        raise(
            py,
            concurrent_use_error(py),
            format!(
                "the graph is in use by another call ({what}); a graph takes many readers or one writer at a time, and a call that cannot have its turn fails instead of waiting"
            ),
            &[],
        )
    })
}

/// Build a Python exception of class `cls` with message `msg` and extra keyword attributes.
pub fn raise(
    py: Python<'_>,
    cls: Bound<'_, PyType>,
    msg: String,
    extra: &[(&str, Py<PyAny>)],
) -> PyErr {
    let kwargs = PyDict::new(py);
    for (k, v) in extra {
        if kwargs.set_item(*k, v).is_err() {
            break;
        }
    }
    match cls.call((msg.clone(),), Some(&kwargs)) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// Declares [`Error`] and its `From` impls from one list: each variant wraps one engine's error.
macro_rules! errors {
    ($($(#[doc = $doc:literal])* $variant:ident($ty:ty)),* $(,)?) => {
        /// Every error the engines return, as the binding carries it to Python. `From` each
        /// engine's error type builds it (so `?` works in a body returning `Result<T, Error>`),
        /// and the one `From<Error> for PyErr` (in `map`) picks the exception class and its
        /// attributes.
        #[derive(Debug)]
        pub enum Error {
            $($(#[doc = $doc])* $variant($ty),)*
        }

        $(
            impl From<$ty> for Error {
                fn from(e: $ty) -> Self {
                    Error::$variant(e)
                }
            }
        )*
    };
}

errors! {
    /// An exception raised (or built) on the Python side; passed through unchanged.
    Py(PyErr),
    /// The graph IR (`ascendir-ir`).
    Ir(IrError),
    /// GE ModelDef / text / OM decoding and encoding (`ascendir-proto`).
    Proto(ProtoError),
    /// The ONNX frontend (`ascendir-onnx`).
    Onnx(OnnxError),
    /// The PyTorch frontend (`ascendir-torch`).
    Torch(TorchError),
    /// The AscGraph engine (`ascendir-asc`).
    Asc(AscError),
    /// The tiling solver (`ascendir-asc::tiling`).
    Tiling(TilingError),
    /// The compiler (`ascendir-compiler`).
    Compile(CompileError),
    /// The operator registry.
    Registry(RegistryError),
    /// Shape and dtype inference.
    Infer(InferError),
    /// Building an op from its registered prototype.
    Instantiate(InstantiateError),
    /// Reading a graph text dump back.
    DumpText(DumpTextError),
}

impl From<Error> for PyErr {
    fn from(e: Error) -> Self {
        Python::attach(|py| e.into_py(py))
    }
}

/// The Python exception of any engine error (see [`Error`]).
pub fn py_err(e: impl Into<Error>) -> PyErr {
    PyErr::from(e.into())
}

/// `Result<T, E>` → `PyResult<T>` for every error type [`Error`] takes.
pub trait IntoPyResult<T> {
    /// Map the error into the Python exception tree.
    fn py(self) -> PyResult<T>;
}

impl<T, E: Into<Error>> IntoPyResult<T> for Result<T, E> {
    fn py(self) -> PyResult<T> {
        self.map_err(py_err)
    }
}

/// The funnel of every long call: run `f` with the GIL released, turn a panic inside it into
/// `InternalError` and its error into the matching exception (polars' `enter_polars` is the
/// model). `f` must not touch Python objects (the `Send` bound keeps them out).
pub fn enter<T, E>(py: Python<'_>, f: impl FnOnce() -> Result<T, E> + Send) -> PyResult<T>
where
    T: Send,
    E: Into<Error> + Send,
{
    match py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(py_err(e)),
        Err(payload) => Err(panic_err(payload)),
    }
}

/// A Python `bytes` copy of `data`; `MemoryError` (not a panic) when Python cannot allocate it.
pub fn py_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    pyo3::types::PyBytes::new_with(py, data.len(), |buf| {
        buf.copy_from_slice(data);
        Ok(())
    })
}

/// [`guard`] for the garbage-collector slots (`__traverse__`, `__clear__`), which must not
/// touch Python objects or raise: a panic inside `f` gives `fallback` instead.
pub fn guard_gc<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// [`guard`] for a body that returns a `PyResult` itself.
pub fn guard_res<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    guard(f)?
}
