//! Bindings of the compiler's graph passes: `compiler_passes()` names them,
//! `run_compiler_pass(graph, name, options_json)` runs one over a graph in place, and a
//! Python pass as a pass of the pipeline ([`PyHook`], run by `CompileState.run_hook`).

use ascendir_compiler::passes::graph::{graph_pass_names, run_graph_pass, GraphHook, HookError};
use ascendir_compiler::{CompileError, CompileOptions, Stage};
use ascendir_ir::Graph;
use pyo3::prelude::*;

use crate::errors::py_err;
use crate::ir::graph::{GraphSlot, PyGraph};
use crate::ops::{ensure_libraries, PyCustom};

/// The names of the compiler's passes that act on a plain graph, pipeline order.
#[pyfunction]
fn compiler_passes() -> PyResult<Vec<String>> {
    crate::errors::guard(graph_pass_names)
}

/// Run the compiler pass `name` over `graph` in place under the options given as JSON;
/// returns whether it modified the graph.
#[pyfunction]
fn run_compiler_pass(
    py: Python<'_>,
    graph: &Bound<'_, PyGraph>,
    name: &str,
    options_json: &str,
) -> PyResult<bool> {
    crate::errors::guard_res(|| {
        ensure_libraries(py)?;
        let opts = CompileOptions::from_json(options_json)
            .map_err(|e| py_err(CompileError::from_kind(Stage::Load, e)))?;
        PyGraph::write(graph, |g| {
            run_graph_pass(g, name, &opts, &mut PyCustom).map_err(py_err)
        })?
    })
}

/// A Python callable `f(graph) -> (graph, modified)` as a pass of the pipeline. The graph is
/// moved into a Python `Graph` for the call and moved back (copied when `f` returns another
/// graph object).
pub(crate) struct PyHook {
    name: String,
    call: Py<PyAny>,
}

impl PyHook {
    /// The pass `name` calling `call`.
    pub(crate) fn new(name: String, call: Py<PyAny>) -> PyHook {
        PyHook { name, call }
    }

    fn call_py(&self, py: Python<'_>, graph: &mut Graph) -> PyResult<bool> {
        let empty = Graph::new(graph.name());
        let handle = Py::new(py, PyGraph::from_graph(std::mem::replace(graph, empty)))?;
        let result = self.call.call1(py, (handle.clone_ref(py),));
        let taken = take_back(handle.bind(py));
        let (out, modified): (Bound<'_, PyGraph>, bool) = match result {
            Ok(r) => r.bind(py).extract()?,
            Err(e) => {
                *graph = taken?;
                return Err(e);
            }
        };
        *graph = match out.is(handle.bind(py)) {
            true => taken?,
            false => PyGraph::read(&out, Graph::clone)?,
        };
        Ok(modified)
    }
}

/// The graph of `handle` (a graph object this module made) taken out of it, an empty graph
/// left behind.
fn take_back(handle: &Bound<'_, PyGraph>) -> PyResult<Graph> {
    let mut me = PyGraph::borrow_slot_mut(handle)?;
    match &mut me.slot {
        GraphSlot::Own(g) => {
            let empty = Graph::new(g.name());
            Ok(std::mem::replace(g, empty))
        }
        GraphSlot::Sub { root, .. } => {
            let root = root.bind(handle.py()).clone();
            drop(me);
            PyGraph::read(&root, Graph::clone)
        }
    }
}

impl GraphHook for PyHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&self, graph: &mut Graph) -> Result<bool, HookError> {
        Python::attach(|py| self.call_py(py, graph).map_err(HookError::from))
    }
}

/// Register the pass functions on the `compiler` submodule.
pub fn register(sub: &Bound<'_, PyModule>) -> PyResult<()> {
    sub.add_function(wrap_pyfunction!(compiler_passes, sub)?)?;
    sub.add_function(wrap_pyfunction!(run_compiler_pass, sub)?)?;
    Ok(())
}
