//! Bindings of the compiler: `compile(graph, options_json, dump)` runs the Rust pipeline on a
//! copy of the graph without the GIL and returns plain data the Python package wraps.

use ascendir_compiler::{compile as run_compile, CompileError, CompileOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::asc::graph::PyAscGraph;
use crate::errors::{compile_error, raise};
use crate::ir::graph::PyGraph;
use crate::ops::{ensure_builtins, PyCustom};

/// Map a compile error to `ascendir.errors.CompileError` with `stage`, `node`, `reason`.
pub fn compile_err(py: Python<'_>, e: CompileError) -> PyErr {
    let node = e
        .node
        .clone()
        .into_pyobject(py)
        .map(|o| o.into_any().unbind())
        .unwrap_or_else(|_| py.None());
    let stage = e
        .stage
        .name()
        .into_pyobject(py)
        .map(|o| o.into_any().unbind());
    let reason = e
        .reason
        .clone()
        .into_pyobject(py)
        .map(|o| o.into_any().unbind());
    match (stage, reason) {
        (Ok(s), Ok(r)) => raise(
            py,
            compile_error(py),
            e.to_string(),
            &[("stage", s), ("node", node), ("reason", r)],
        ),
        _ => raise(py, compile_error(py), e.to_string(), &[]),
    }
}

/// Compile `graph` (unchanged) with the options given as JSON. Returns
/// `(graph, kernels, report_json, report_text, dot, dumps)`; each kernel is a dict with
/// `name`, `fuse_type`, `members`, `member_types`, `hint`, `impls`, `cache_key`.
#[pyfunction]
#[pyo3(signature = (graph, options_json, dump = false))]
#[allow(clippy::type_complexity)]
fn compile<'py>(
    py: Python<'py>,
    graph: &Bound<'py, PyGraph>,
    options_json: &str,
    dump: bool,
) -> PyResult<(
    PyGraph,
    Bound<'py, PyList>,
    String,
    String,
    String,
    Vec<(String, String)>,
)> {
    ensure_builtins(py)?;
    let opts = CompileOptions::from_json(options_json)
        .map_err(|e| compile_err(py, CompileError::new(ascendir_compiler::Stage::Load, e)))?;
    let input = PyGraph::read(graph, |g| g.clone())?;
    let cm = py
        .detach(|| run_compile(&input, &opts, &mut PyCustom, dump))
        .map_err(|e| compile_err(py, e))?;
    let kernels = PyList::empty(py);
    for k in &cm.kernels {
        let d = PyDict::new(py);
        d.set_item("name", &k.name)?;
        d.set_item("fuse_type", &k.fuse_type)?;
        d.set_item("members", &k.members)?;
        d.set_item("member_types", &k.member_types)?;
        d.set_item("hint", PyAscGraph { g: k.hint.clone() })?;
        let impls = PyList::empty(py);
        for i in &k.impls {
            impls.append(PyAscGraph { g: i.clone() })?;
        }
        d.set_item("impls", impls)?;
        d.set_item("cache_key", &k.cache_key)?;
        kernels.append(d)?;
    }
    let json = serde_json::to_string_pretty(&cm.report.to_json()).unwrap_or_default();
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

/// GE op types with a registered lowering.
#[pyfunction]
fn lowered_types() -> Vec<String> {
    ascendir_compiler::lower::registered()
}

/// Register a lowering given as JSON (see `ascendir_compiler::lower::spec`); returns its GE type.
#[pyfunction]
fn register_lowering(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    ascendir_compiler::lower::spec::register_json(spec_json)
        .map_err(|e| compile_err(py, CompileError::new(ascendir_compiler::Stage::Lower, e)))
}

/// Register the `ascendir._core.compiler` functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let sub = PyModule::new(m.py(), "compiler")?;
    sub.add_function(wrap_pyfunction!(compile, &sub)?)?;
    sub.add_function(wrap_pyfunction!(lowered_types, &sub)?)?;
    sub.add_function(wrap_pyfunction!(register_lowering, &sub)?)?;
    m.add_submodule(&sub)?;
    Ok(())
}
