//! Binding of a compile run one pass at a time (`ascendir_compiler::passes::session`): the
//! Python pass manager drives the pipeline's passes through `CompileState.run(name)`.

use std::sync::{Mutex, MutexGuard};

use ascendir_compiler::passes::session::Session;
use ascendir_compiler::{CompileError, CompileOptions, Stage};
use pyo3::prelude::*;

use crate::compiler::{kernel_dicts, model_parts, Parts};
use crate::compiler_passes::PyHook;
use crate::errors::{concurrent_use_error, enter, py_err, raise};
use crate::ir::graph::PyGraph;
use crate::ops::{ensure_libraries, PyCustom};

fn finished() -> PyErr {
    let reason = "the compile state is finished: its model was taken".to_string();
    py_err(CompileError::new(Stage::Load, reason))
}

/// A compile of a copy of a graph, run one pass at a time.
#[pyclass(module = "ascendir._core.compiler", name = "CompileState")]
pub(crate) struct PyCompileState {
    /// `None` once finished.
    inner: Mutex<Option<Session>>,
}

impl PyCompileState {
    fn lock(&self) -> PyResult<MutexGuard<'_, Option<Session>>> {
        self.inner.try_lock().map_err(|_| {
            Python::attach(|py| {
                raise(
                    py,
                    concurrent_use_error(py),
                    "the compile state is in use by another call (another thread, or the pass \
                     it is running)"
                        .to_string(),
                    &[],
                )
            })
        })
    }

    /// Run `f` over the session (not finished).
    fn with<T>(&self, f: impl FnOnce(&mut Session) -> PyResult<T>) -> PyResult<T> {
        let mut guard = self.lock()?;
        f(guard.as_mut().ok_or_else(finished)?)
    }
}

#[pymethods]
impl PyCompileState {
    /// A compile of a copy of `graph` with the options given as JSON, the load stage done.
    #[new]
    #[pyo3(signature = (graph, options_json, dump = false))]
    fn new(
        py: Python<'_>,
        graph: &Bound<'_, PyGraph>,
        options_json: &str,
        dump: bool,
    ) -> PyResult<PyCompileState> {
        crate::errors::guard_res(|| {
            ensure_libraries(py)?;
            let opts = CompileOptions::from_json(options_json)
                .map_err(|e| py_err(CompileError::from_kind(Stage::Load, e)))?;
            let input = PyGraph::read(graph, |g| g.clone())?;
            let session = enter(py, || Session::new(input, opts, &mut PyCustom, dump))?;
            Ok(PyCompileState {
                inner: Mutex::new(Some(session)),
            })
        })
    }

    /// The names of the pipeline's passes, in order.
    #[staticmethod]
    fn pipeline() -> PyResult<Vec<String>> {
        crate::errors::guard(Session::pipeline)
    }

    /// The next pipeline pass to run (`None` when all have run).
    #[getter]
    fn next_pass(&self) -> PyResult<Option<String>> {
        crate::errors::guard_res(|| self.with(|s| Ok(s.next_pass())))
    }

    /// Whether the compile's model was taken.
    #[getter]
    fn finished(&self) -> PyResult<bool> {
        crate::errors::guard_res(|| Ok(self.lock()?.is_none()))
    }

    /// Run the pass `name` (the next pipeline pass, or a graph pass before `lower`); returns
    /// whether it modified the graph.
    fn run(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        crate::errors::guard_res(|| self.with(|s| enter(py, || s.run(name, &mut PyCustom))))
    }

    /// Run `call(graph) -> (graph, modified)` over the graph as the pass `name` at `point`.
    #[pyo3(signature = (name, call, point = None))]
    fn run_hook(
        &self,
        py: Python<'_>,
        name: String,
        call: Py<PyAny>,
        point: Option<String>,
    ) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            self.with(|s| {
                let hook = Box::new(PyHook::new(name, call));
                enter(py, || s.run_hook(hook, point.as_deref(), &mut PyCustom))
            })
        })
    }

    /// Keep node `name` out of fusion (after `lower`, before `fuse`).
    fn keep_out(&self, name: &str, reason: &str) -> PyResult<()> {
        crate::errors::guard_res(|| self.with(|s| s.keep_out(name, reason).map_err(py_err)))
    }

    /// A copy of the graph being compiled.
    fn graph(&self) -> PyResult<PyGraph> {
        crate::errors::guard_res(|| {
            self.with(|s| Ok(PyGraph::from_graph(s.graph().map_err(py_err)?.clone())))
        })
    }

    /// Nodes of the graph being compiled.
    #[getter]
    fn num_nodes(&self) -> PyResult<usize> {
        crate::errors::guard_res(|| self.with(|s| Ok(s.graph().map_err(py_err)?.len())))
    }

    /// `(name, None | (category, reason))` per lowering decision, decision order.
    #[allow(clippy::type_complexity)]
    fn decisions(&self) -> PyResult<Vec<(String, Option<(String, String)>)>> {
        crate::errors::guard_res(|| self.with(|s| s.decisions().map_err(py_err)))
    }

    /// The clusters' member names, cluster order.
    fn clusters(&self) -> PyResult<Vec<Vec<String>>> {
        crate::errors::guard_res(|| self.with(|s| s.clusters().map_err(py_err)))
    }

    /// The packaged kernels as dicts (as `compile` gives them).
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        crate::errors::guard_res(|| self.with(|s| kernel_dicts(py, s.kernels().map_err(py_err)?)))
    }

    /// `(name, stage, seconds, modified, nodes_before, nodes_after)` per pass run.
    #[allow(clippy::type_complexity)]
    fn log(&self) -> PyResult<Vec<(String, String, f64, bool, usize, usize)>> {
        crate::errors::guard_res(|| {
            self.with(|s| {
                Ok(s.log()
                    .map_err(py_err)?
                    .iter()
                    .map(|r| {
                        let stage = r.stage.name().to_string();
                        (
                            r.name.clone(),
                            stage,
                            r.seconds,
                            r.changed,
                            r.nodes.0,
                            r.nodes.1,
                        )
                    })
                    .collect())
            })
        })
    }

    /// The compiled model's parts (as `compile` returns them), once every pass has run; the
    /// state is finished after.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Parts<'py>> {
        crate::errors::guard_res(|| {
            let mut guard = self.lock()?;
            guard
                .as_ref()
                .ok_or_else(finished)?
                .finishable()
                .map_err(py_err)?;
            let session = guard.take().ok_or_else(finished)?;
            drop(guard);
            let cm = enter(py, || session.finish(&mut PyCustom))?;
            model_parts(py, cm)
        })
    }
}
