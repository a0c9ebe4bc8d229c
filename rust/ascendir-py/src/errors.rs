//! The one place where Rust errors become Python exceptions of `ascendir.errors`.

use ascendir_ir::IrError;
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

/// Convert an IR error into the matching Python exception.
pub fn ir_err(err: IrError) -> PyErr {
    Python::attach(|py| {
        let msg = err.to_string();
        match err {
            IrError::InvalidArgument(_) => raise(py, invalid_argument_error(py), msg, &[]),
            IrError::StaleHandle { .. } | IrError::StaleSubgraph(_) => {
                raise(py, stale_handle_error(py), msg, &[])
            }
            IrError::NotFound(_) | IrError::AnchorOutOfRange { .. } => {
                raise(py, not_found_error(py), msg, &[])
            }
            IrError::Duplicate(_) => raise(py, duplicate_error(py), msg, &[]),
            IrError::Link(_) | IrError::NotLinked { .. } => raise(py, link_error(py), msg, &[]),
            IrError::Overflow(_) => raise(py, overflow_error(py), msg, &[]),
            IrError::Cycle { nodes, .. } => {
                let nodes = nodes.into_pyobject(py).map(|o| o.into_any().unbind());
                match nodes {
                    Ok(n) => raise(py, cycle_error(py), msg, &[("nodes", n)]),
                    Err(e) => e,
                }
            }
            IrError::Validation { problems, .. } => {
                let problems = problems.into_pyobject(py).map(|o| o.into_any().unbind());
                match problems {
                    Ok(p) => raise(py, validation_error(py), msg, &[("problems", p)]),
                    Err(e) => e,
                }
            }
            // A variant added to the IR later and not mapped here yet: the base class.
            _ => raise(py, base_error(py), msg, &[]),
        }
    })
}

/// `Result<T, IrError>` → `PyResult<T>`.
pub trait IntoPyResult<T> {
    /// Map the error into the Python exception tree.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, IrError> {
    fn py(self) -> PyResult<T> {
        self.map_err(ir_err)
    }
}

/// A Python `bytes` copy of `data`; `MemoryError` (not a panic) when Python cannot allocate it.
pub fn py_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    pyo3::types::PyBytes::new_with(py, data.len(), |buf| {
        buf.copy_from_slice(data);
        Ok(())
    })
}

/// [`guard`] for a body that returns a `PyResult` itself.
pub fn guard_res<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    guard(f)?
}
