//! Bindings of the ONNX frontend: the private helpers behind `ascendir.onnx` (`load`, `save`).
//! Decoding and graph building run without the GIL.

use std::path::PathBuf;

use ascendir_onnx::{ExportOptions, ImportOptions, ImportReport, OnnxError};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::{decode_error, guard, invalid_argument_error, ir_err, raise};
use crate::ir::graph::PyGraph;

/// Map an ONNX frontend error to the Python exception tree.
fn onnx_err(py: Python<'_>, err: OnnxError) -> PyErr {
    let msg = err.to_string();
    match err {
        OnnxError::Decode { offset, path, .. } => {
            let offset = offset
                .into_pyobject(py)
                .map(|o| o.into_any().unbind())
                .unwrap_or_else(|_| py.None());
            let path = path
                .into_pyobject(py)
                .map(|o| o.into_any().unbind())
                .unwrap_or_else(|_| py.None());
            raise(
                py,
                decode_error(py),
                msg,
                &[("offset", offset), ("path", path)],
            )
        }
        OnnxError::Io(_) => PyOSError::new_err(msg),
        OnnxError::OutOfMemory { .. } => pyo3::exceptions::PyMemoryError::new_err(msg),
        OnnxError::Invalid(_) | OnnxError::Unsupported(_) => {
            raise(py, invalid_argument_error(py), msg, &[])
        }
        OnnxError::Ir(e) => ir_err(e),
    }
}

fn report_dict<'py>(py: Python<'py>, r: &ImportReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("onnx_nodes", r.onnx_nodes)?;
    d.set_item("root_nodes", r.root_nodes)?;
    d.set_item("initializers", r.initializers)?;
    d.set_item("aux_consts", r.aux_consts)?;
    let unknown = PyDict::new(py);
    for (k, v) in &r.unknown_ops {
        unknown.set_item(k, v)?;
    }
    d.set_item("unknown_ops", unknown)?;
    d.set_item("subgraphs", r.subgraphs)?;
    d.set_item("opset", r.opset)?;
    d.set_item("ir_version", r.ir_version)?;
    d.set_item("producer", &r.producer)?;
    Ok(d)
}

fn finish<'py>(
    py: Python<'py>,
    result: Result<(ascendir_ir::Graph, ImportReport), OnnxError>,
) -> PyResult<(Py<PyGraph>, Bound<'py, PyDict>)> {
    let (g, report) = result.map_err(|e| onnx_err(py, e))?;
    let d = report_dict(py, &report)?;
    Ok((Py::new(py, PyGraph::from_graph(g))?, d))
}

/// Import an ONNX model file. External data is read relative to the file's directory.
#[pyfunction]
fn _onnx_load_file<'py>(
    py: Python<'py>,
    path: PathBuf,
) -> PyResult<(Py<PyGraph>, Bound<'py, PyDict>)> {
    crate::errors::guard_res(|| {
        // The importer takes GE port names from the registered prototypes.
        crate::ops::ensure_builtins(py)?;
        let result = guard(|| {
            py.detach(|| {
                let data = ascendir_onnx::read_model_file(&path)?;
                let opts = ImportOptions {
                    base_dir: Some(path.parent().map(PathBuf::from).unwrap_or_default()),
                };
                ascendir_onnx::import_model(data, &opts)
            })
        })?;
        finish(py, result)
    })
}

/// Import ONNX model bytes; `base_dir` resolves external data. The bytes are shared, not
/// copied (initializer payloads are slices of them).
#[pyfunction]
#[pyo3(signature = (data, base_dir=None))]
fn _onnx_load_bytes<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
    base_dir: Option<PathBuf>,
) -> PyResult<(Py<PyGraph>, Bound<'py, PyDict>)> {
    crate::errors::guard_res(|| {
        crate::ops::ensure_builtins(py)?;
        let buf = crate::proto::shared_input(data);
        let result =
            guard(|| py.detach(|| ascendir_onnx::import_model(buf, &ImportOptions { base_dir })))?;
        finish(py, result)
    })
}

/// Encode a graph as ONNX model bytes.
#[pyfunction]
#[pyo3(signature = (graph, opset=None, producer=None))]
fn _onnx_save_bytes<'py>(
    graph: &Bound<'py, PyGraph>,
    opset: Option<i64>,
    producer: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard_res(|| {
        let py = graph.py();
        let opts = ExportOptions { opset, producer };
        let out = PyGraph::read(graph, |g| {
            py.detach(|| ascendir_onnx::export_model(g, &opts))
        })?;
        let data = out.map_err(|e| onnx_err(py, e))?;
        crate::errors::py_bytes(py, &data)
    })
}

/// The declarative ONNX → GE table: `(ONNX type, GE type)` pairs in table order (families may
/// pick another GE type for some forms of an op).
#[pyfunction]
fn _onnx_mapping() -> PyResult<Vec<(&'static str, &'static str)>> {
    crate::errors::guard(|| {
        ascendir_onnx::ops::TABLE
            .iter()
            .map(|e| (e.onnx, e.ge))
            .collect()
    })
}

/// Register the ONNX helpers.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_onnx_load_file, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_load_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_save_bytes, m)?)?;
    Ok(())
}
