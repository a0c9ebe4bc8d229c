//! Bindings of the PyTorch frontend: the private helper behind `ascendir.torch`. Python
//! flattens the FX graph into arrays; this converts the arguments (constant payloads shared,
//! not copied) and runs the conversion without the GIL.

use std::time::Instant;

use ascendir_torch::{FxProgram, ImportReport, Symbol, TorchError};
use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{invalid_argument_error, raise};
use crate::ir::graph::PyGraph;

/// A C-contiguous numpy array as the owner of tensor bytes (no copy). The array views a
/// torch tensor's storage, which the array keeps alive.
struct SharedArray {
    _array: Py<PyAny>,
    ptr: usize,
    len: usize,
}

impl AsRef<[u8]> for SharedArray {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr`/`len` describe the C-contiguous data of `_array` (checked when it was
        // made), which we keep alive. The frontend documents that the graph shares the
        // parameters' memory: writing to a parameter while a graph reads it is not supported.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

/// The bytes of a C-contiguous numpy array, shared.
fn shared_bytes(array: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    let py = array.py();
    let flags = array.getattr("flags")?;
    let contiguous: bool = flags.getattr("c_contiguous")?.extract()?;
    if !contiguous {
        return Err(raise(
            py,
            invalid_argument_error(py),
            "a constant payload must be a C-contiguous array".into(),
            &[],
        ));
    }
    let (ptr, _): (usize, bool) = array
        .getattr("__array_interface__")?
        .get_item("data")?
        .extract()?;
    let len: usize = array.getattr("nbytes")?.extract()?;
    Ok(Bytes::from_owner(SharedArray {
        _array: array.clone().unbind(),
        ptr,
        len,
    }))
}

fn report_dict<'py>(py: Python<'py>, r: &ImportReport, secs: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("fx_nodes", r.fx_nodes)?;
    d.set_item("fx_calls", r.fx_calls)?;
    d.set_item("ge_nodes", r.ge_nodes)?;
    d.set_item("inputs", r.inputs)?;
    d.set_item("params", r.params)?;
    let unknown = PyDict::new(py);
    for (k, v) in &r.unknown_ops {
        unknown.set_item(k, v)?;
    }
    d.set_item("unknown_ops", unknown)?;
    let schemas = PyDict::new(py);
    for (k, v) in &r.unknown_schemas {
        schemas.set_item(k, v)?;
    }
    d.set_item("unknown_schemas", schemas)?;
    d.set_item("convert_seconds", secs)?;
    Ok(d)
}

/// Convert a flattened FX program (see `ascendir_torch::program` for the encoding).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (name, kinds, names, targets, code, code_off, meta, meta_off, info, strings, consts, symbols, guards))]
fn _torch_convert<'py>(
    py: Python<'py>,
    name: String,
    kinds: Vec<u8>,
    names: Vec<String>,
    targets: Vec<String>,
    code: Vec<i64>,
    code_off: Vec<usize>,
    meta: Vec<i64>,
    meta_off: Vec<usize>,
    info: Vec<i64>,
    strings: Vec<String>,
    consts: Vec<(usize, Bound<'py, PyAny>)>,
    symbols: Vec<(String, i64, i64, String)>,
    guards: Vec<String>,
) -> PyResult<(Py<PyGraph>, Bound<'py, PyDict>)> {
    crate::errors::guard_res(|| {
        // The frontend takes GE port names from the registered prototypes.
        crate::ops::ensure_libraries(py)?;
        let consts = consts
            .iter()
            .map(|(i, a)| Ok((*i, shared_bytes(a)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let program = FxProgram {
            name,
            kinds,
            names,
            targets,
            code,
            code_off,
            meta,
            meta_off,
            info,
            strings,
            consts,
            symbols: symbols
                .into_iter()
                .map(|(name, min, max, source)| Symbol {
                    name,
                    min,
                    max,
                    source,
                })
                .collect(),
            guards,
        };
        // `program` (whose payloads hold Python references) is dropped here, with the GIL.
        let (g, report, secs) = crate::errors::enter(py, || {
            let t = Instant::now();
            let (g, report) = ascendir_torch::convert(&program)?;
            Ok::<_, TorchError>((g, report, t.elapsed().as_secs_f64()))
        })?;
        let d = report_dict(py, &report, secs)?;
        Ok((Py::new(py, PyGraph::from_graph(g))?, d))
    })
}

/// Register the PyTorch helpers.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_torch_convert, m)?)?;
    Ok(())
}
