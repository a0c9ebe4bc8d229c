//! Bindings of the ONNX frontend: the private helpers behind `ascendir.onnx` (`load`, `save`).
//! Decoding and graph building run without the GIL.

use std::path::PathBuf;

use ascendir_onnx::{ExportOptions, ImportOptions, ImportReport};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::enter;
use crate::ir::graph::PyGraph;

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
    d.set_item("opset_mapped", r.opset_mapped())?;
    d.set_item(
        "mapped_opsets",
        (
            *ascendir_onnx::import::MAPPED_OPSETS.start(),
            *ascendir_onnx::import::MAPPED_OPSETS.end(),
        ),
    )?;
    d.set_item("ir_version", r.ir_version)?;
    d.set_item("producer", &r.producer)?;
    Ok(d)
}

fn finish<'py>(
    py: Python<'py>,
    (g, report): (ascendir_ir::Graph, ImportReport),
) -> PyResult<(Py<PyGraph>, Bound<'py, PyDict>)> {
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
        crate::ops::ensure_libraries(py)?;
        let result = enter(py, || {
            let data = ascendir_onnx::read_model_file(&path)?;
            let opts = ImportOptions {
                base_dir: Some(path.parent().map(PathBuf::from).unwrap_or_default()),
            };
            ascendir_onnx::import_model(data, &opts)
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
        crate::ops::ensure_libraries(py)?;
        let buf = crate::proto::shared_input(data);
        let result = enter(py, || {
            ascendir_onnx::import_model(buf, &ImportOptions { base_dir })
        })?;
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
        let data = PyGraph::read(graph, |g| {
            enter(py, || ascendir_onnx::export_model(g, &opts))
        })??;
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

/// The opset warning of a graph imported from ONNX (`None` when its opset is mapped or it
/// did not come from ONNX).
#[pyfunction]
fn _onnx_opset_warning(graph: &Bound<'_, PyGraph>) -> PyResult<Option<String>> {
    crate::errors::guard_res(|| PyGraph::read(graph, ascendir_onnx::import::opset_warning))
}

/// Register the ONNX helpers.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_onnx_load_file, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_opset_warning, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_load_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_onnx_save_bytes, m)?)?;
    Ok(())
}
