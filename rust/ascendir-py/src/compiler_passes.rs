//! Bindings of the compiler's graph passes: `compiler_passes()` names them,
//! `run_compiler_pass(graph, name, options_json)` runs one over a graph in place, and
//! `compile_with_passes(graph, options_json, dump, hooks)` compiles with Python passes run at
//! named points of the pipeline.

use std::borrow::Cow;

use ascendir_compiler::passes::graph::{
    compile_with_hooks, graph_pass_names, run_graph_pass, GraphHook, Hook, HookError, Position,
};
use ascendir_compiler::{CompileError, CompileOptions, Control, Stage};
use ascendir_ir::Graph;
use pyo3::prelude::*;

use crate::errors::{enter, py_err};
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
struct PyHook {
    name: String,
    call: Py<PyAny>,
}

impl PyHook {
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

/// Compile `graph` (unchanged) like `compile`, with `hooks` — `(position, point, name, f)`:
/// `position` is `"before"` or `"after"`, `point` a top-level pass name, `f(graph) ->
/// (graph, modified)` — run at their points.
#[pyfunction]
#[pyo3(signature = (graph, options_json, dump, hooks))]
fn compile_with_passes<'py>(
    py: Python<'py>,
    graph: &Bound<'py, PyGraph>,
    options_json: &str,
    dump: bool,
    hooks: Vec<(String, String, String, Py<PyAny>)>,
) -> PyResult<crate::compiler::Parts<'py>> {
    crate::errors::guard_res(|| {
        ensure_libraries(py)?;
        let opts = CompileOptions::from_json(options_json)
            .map_err(|e| py_err(CompileError::from_kind(Stage::Load, e)))?;
        let mut list = Vec::with_capacity(hooks.len());
        for (position, point, name, call) in hooks {
            let position = match position.as_str() {
                "before" => Position::Before,
                "after" => Position::After,
                other => {
                    let reason = format!(
                        "user pass '{name}': position '{other}' is not 'before' or 'after'"
                    );
                    return Err(py_err(CompileError::new(Stage::Load, reason)));
                }
            };
            list.push(Hook {
                position,
                point,
                pass: Box::new(PyHook { name, call }),
            });
        }
        let input = PyGraph::read(graph, |g| g.clone())?;
        let cm = enter(py, || {
            let ctl = Control::default();
            compile_with_hooks(Cow::Owned(input), &opts, &mut PyCustom, dump, &ctl, list)
        })?;
        crate::compiler::model_parts(py, cm)
    })
}

/// Register the pass functions on the `compiler` submodule.
pub fn register(sub: &Bound<'_, PyModule>) -> PyResult<()> {
    sub.add_function(wrap_pyfunction!(compiler_passes, sub)?)?;
    sub.add_function(wrap_pyfunction!(run_compiler_pass, sub)?)?;
    sub.add_function(wrap_pyfunction!(compile_with_passes, sub)?)?;
    Ok(())
}
