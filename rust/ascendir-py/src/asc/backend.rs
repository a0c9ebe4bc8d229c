//! Bindings of the AscGraph backend, registered as `ascendir._core.asc_backend`: scheduling,
//! UB allocation, the tiling solver, targets, and the numeric plan the simulator runs.

use ascendir_asc::alloc::{
    allocate, container_slot_bytes, AllocOptions, AllocReport, ContainerKind,
};
use ascendir_asc::expr::FxHashMap;
use ascendir_asc::schedule::group::{merge_groups, AxisGroup};
use ascendir_asc::schedule::{graph_group, merge_contiguous_axes, schedule, ScheduleOptions};
use ascendir_asc::target::Target;
use ascendir_asc::tiling::{TilingData, TilingFunction, TilingProblem, VarKind};
use ascendir_asc::{AscError, AscGraph, AxisId};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::expr::PyExpr;
use super::graph::PyAscGraph;
use crate::errors::{py_err, IntoPyResult};

fn inv(msg: String) -> PyErr {
    py_err(AscError::InvalidArgument(msg))
}

/// A hardware target (`Target.ascend910b()`, `ascend910b3()`, `ascend950()`, or custom values).
#[pyclass(name = "Target", module = "ascendir._core.asc_backend", frozen)]
#[derive(Clone, Debug)]
pub struct PyTarget {
    /// The target.
    pub t: Target,
}

#[pymethods]
impl PyTarget {
    /// A custom target.
    #[new]
    #[pyo3(signature = (name = "custom", core_num = 48, ub_size = 196352, block_size = 32, max_que_num = 4))]
    fn new(
        name: &str,
        core_num: i64,
        ub_size: i64,
        block_size: i64,
        max_que_num: usize,
    ) -> PyResult<PyTarget> {
        crate::errors::guard_res(|| {
            Target::custom(name, core_num, ub_size, block_size, max_que_num)
                .map(|t| PyTarget { t })
                .map_err(inv)
        })
    }

    /// Atlas A2: 48 cores, UB 196352 bytes.
    #[staticmethod]
    fn ascend910b() -> PyResult<PyTarget> {
        crate::errors::guard(|| PyTarget {
            t: Target::ascend910b(),
        })
    }

    /// Ascend910B3: 40 cores.
    #[staticmethod]
    fn ascend910b3() -> PyResult<PyTarget> {
        crate::errors::guard(|| PyTarget {
            t: Target::ascend910b3(),
        })
    }

    /// Ascend950: UB 253952 − 256 bytes, 14 queues.
    #[staticmethod]
    fn ascend950() -> PyResult<PyTarget> {
        crate::errors::guard(|| PyTarget {
            t: Target::ascend950(),
        })
    }

    /// A predefined target by name.
    #[staticmethod]
    fn by_name(name: &str) -> PyResult<PyTarget> {
        crate::errors::guard_res(|| {
            Target::by_name(name)
                .map(|t| PyTarget { t })
                .ok_or_else(|| py_err(AscError::NotFound(format!("unknown target '{name}'"))))
        })
    }

    /// Name.
    #[getter]
    fn name(&self) -> PyResult<String> {
        crate::errors::guard(|| self.t.name.clone())
    }

    /// Vector cores.
    #[getter]
    fn core_num(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.t.core_num)
    }

    /// Usable UB bytes.
    #[getter]
    fn ub_size(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.t.ub_size)
    }

    /// UB block bytes.
    #[getter]
    fn block_size(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.t.block_size)
    }

    /// VECIN queue limit.
    #[getter]
    fn max_que_num(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.t.max_que_num)
    }

    fn __repr__(&self) -> PyResult<String> {
        crate::errors::guard(|| {
            format!(
                "Target({}, core_num={}, ub_size={}, block_size={}, max_que_num={})",
                self.t.name, self.t.core_num, self.t.ub_size, self.t.block_size, self.t.max_que_num
            )
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| other.cast::<PyTarget>().is_ok_and(|o| o.get().t == self.t))
    }
}

/// The solved tiling of one ImplGraph.
#[pyclass(name = "TilingData", module = "ascendir._core.asc_backend", frozen)]
#[derive(Clone, Debug)]
pub struct PyTilingData {
    /// The data.
    pub d: TilingData,
}

#[pymethods]
impl PyTilingData {
    /// Graph name.
    #[getter]
    fn graph(&self) -> PyResult<String> {
        crate::errors::guard(|| self.d.graph.clone())
    }
    /// Template key.
    #[getter]
    fn tiling_key(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.d.tiling_key)
    }
    /// Cores used.
    #[getter]
    fn block_dim(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.d.block_dim)
    }
    /// UB bytes of the target.
    #[getter]
    fn ub_size(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.d.ub_size)
    }
    /// Cores of the target.
    #[getter]
    fn core_num(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.d.core_num)
    }
    /// UB bytes used.
    #[getter]
    fn ub_used(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.d.ub_used)
    }
    /// Cost estimate.
    #[getter]
    fn cost(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.d.cost)
    }
    /// Searched sizes `{name: value}`.
    #[getter]
    fn sizes(&self) -> PyResult<Vec<(String, i64)>> {
        crate::errors::guard(|| self.d.sizes.clone())
    }
    /// Shape sizes `{name: value}`.
    #[getter]
    fn shape(&self) -> PyResult<Vec<(String, i64)>> {
        crate::errors::guard(|| self.d.shape.clone())
    }
    /// Containers `(name, slot bytes, buf_num)`.
    #[getter]
    fn containers(&self) -> PyResult<Vec<(String, i64, i64)>> {
        crate::errors::guard(|| self.d.containers.clone())
    }
    /// A searched or shape size, or a container's per-buffer bytes (`q0_size`, `b0_size`).
    fn __getitem__(&self, name: &str) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            if let Some((_, v, _)) = self.d.containers.iter().find(|c| c.0 == name) {
                return Ok(*v);
            }
            self.d
                .get(name)
                .ok_or_else(|| py_err(AscError::NotFound(format!("tiling data has no '{name}'"))))
        })
    }
    fn __repr__(&self) -> PyResult<String> {
        crate::errors::guard(|| {
            format!(
                "TilingData(graph={}, tiling_key={}, block_dim={}, ub_used={}/{}, sizes={:?})",
                self.d.graph,
                self.d.tiling_key,
                self.d.block_dim,
                self.d.ub_used,
                self.d.ub_size,
                self.d.sizes
            )
        })
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other
                .cast::<PyTilingData>()
                .is_ok_and(|o| o.get().d == self.d)
        })
    }
}

/// Compiled tiling function over one or more ImplGraphs (templates).
#[pyclass(name = "TilingFunction", module = "ascendir._core.asc_backend", frozen)]
pub struct PyTilingFunction {
    f: TilingFunction,
    symbols: Vec<String>,
}

pub(crate) fn graphs_of(impls: &Bound<'_, PyAny>) -> PyResult<Vec<AscGraph>> {
    if let Ok(g) = impls.cast::<PyAscGraph>() {
        return Ok(vec![g.borrow().g.clone()]);
    }
    let mut v = Vec::new();
    for item in impls.try_iter()? {
        let item = item?;
        let core = if item.hasattr("_core")? {
            item.getattr("_core")?
        } else {
            item
        };
        let g = core
            .cast::<PyAscGraph>()
            .map_err(|_| inv("expected ImplGraph objects".into()))?;
        v.push(g.borrow().g.clone());
    }
    Ok(v)
}

fn shape_of(sizes: Option<&Bound<'_, PyDict>>) -> PyResult<FxHashMap<String, i64>> {
    let mut m = FxHashMap::default();
    if let Some(d) = sizes {
        for (k, v) in d.iter() {
            m.insert(k.extract::<String>()?, v.extract::<i64>()?);
        }
    }
    Ok(m)
}

#[pymethods]
impl PyTilingFunction {
    /// Compile the tiling of `impls` for `target`.
    #[new]
    fn new(impls: &Bound<'_, PyAny>, target: &PyTarget) -> PyResult<PyTilingFunction> {
        crate::errors::guard_res(|| {
            let gs = graphs_of(impls)?;
            let f = TilingFunction::new(&gs, &target.t).map_err(py_err)?;
            let mut symbols: Vec<String> = Vec::new();
            for p in &f.problems {
                for s in &p.shape_symbols {
                    if !symbols.contains(s) {
                        symbols.push(s.clone());
                    }
                }
            }
            Ok(PyTilingFunction { f, symbols })
        })
    }

    /// Solve for `sizes` (a dict, or keyword arguments): the best template's TilingData.
    #[pyo3(signature = (sizes = None, **kwargs))]
    fn __call__(
        &self,
        sizes: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTilingData> {
        crate::errors::guard_res(|| {
            let mut m = shape_of(sizes)?;
            m.extend(shape_of(kwargs)?);
            self.f.call(&m).map(|d| PyTilingData { d }).map_err(py_err)
        })
    }

    /// Solve with positional shape values in the order of `symbols` (the fastest call).
    fn solve_values(&self, values: Vec<i64>) -> PyResult<PyTilingData> {
        crate::errors::guard_res(|| {
            if values.len() != self.symbols.len() {
                return Err(inv(format!(
                    "expected {} values ({}), got {}",
                    self.symbols.len(),
                    self.symbols.join(", "),
                    values.len()
                )));
            }
            self.f
                .call_values(&self.symbols, &values)
                .map(|d| PyTilingData { d })
                .map_err(py_err)
        })
    }

    /// Solve every template separately (a list of TilingData or TilingError objects).
    fn solve_each(&self, py: Python<'_>, sizes: &Bound<'_, PyDict>) -> PyResult<Vec<Py<PyAny>>> {
        crate::errors::guard_res(|| {
            let m = shape_of(Some(sizes))?;
            let mut out = Vec::new();
            for p in &self.f.problems {
                out.push(match p.solve(&m) {
                    Ok(d) => Py::new(py, PyTilingData { d })?.into_any(),
                    Err(e) => py_err(e).into_value(py).into_any(),
                });
            }
            Ok(out)
        })
    }

    /// Shape symbols to bind.
    #[getter]
    fn symbols(&self) -> PyResult<Vec<String>> {
        crate::errors::guard(|| self.symbols.clone())
    }

    /// Per template: name, tiling key, variables `(name, kind, align, upper)` in priority order,
    /// UB expression and block_dim expression.
    fn problems(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        crate::errors::guard_res(|| {
            let mut v = Vec::new();
            for p in &self.f.problems {
                let d = problem_dict(py, p)?;
                d.set_item("graph", &p.graph)?;
                d.set_item("tiling_key", p.tiling_key)?;
                v.push(d.into_any().unbind());
            }
            Ok(v)
        })
    }

    /// UB bytes of template `index` with every variable and shape size given.
    fn ub_usage(&self, index: usize, values: &Bound<'_, PyDict>) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            let p = self
                .f
                .problems
                .get(index)
                .ok_or_else(|| inv(format!("no template {index}")))?;
            let m = shape_of(Some(values))?;
            let vals: Vec<i64> = p
                .slot_names()
                .iter()
                .map(|s| {
                    m.get(s)
                        .copied()
                        .ok_or_else(|| inv(format!("'{s}' is not given")))
                })
                .collect::<PyResult<_>>()?;
            p.ub_usage(&vals)
                .ok_or_else(|| inv("UB usage overflows".into()))
        })
    }
}

fn opts_from(kw: Option<&Bound<'_, PyDict>>) -> PyResult<ScheduleOptions> {
    let mut o = ScheduleOptions::default();
    if let Some(d) = kw {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            match k.as_str() {
                "merge_contiguous_axes" => o.merge_contiguous_axes = v.extract()?,
                "unaligned_template" => o.unaligned_template = v.extract()?,
                "all_load_reduce" => o.all_load_reduce = v.extract()?,
                "reduce_over_cores" => o.reduce_over_cores = v.extract()?,
                "allocate" => o.allocate = v.extract()?,
                "max_que_num" => o.alloc.max_que_num = v.extract()?,
                "insert_ub2ub" => o.alloc.insert_ub2ub = v.extract()?,
                other => return Err(inv(format!("unknown schedule option '{other}'"))),
            }
        }
    }
    Ok(o)
}

/// Schedule a HintGraph: a list of ImplGraph engine objects (options as keywords).
#[pyfunction]
#[pyo3(name = "schedule", signature = (graph, **options))]
fn py_schedule(
    graph: &PyAscGraph,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<PyAscGraph>> {
    crate::errors::guard_res(|| {
        let o = opts_from(options)?;
        Ok(schedule(&graph.g, &o)
            .py()?
            .into_iter()
            .map(|g| PyAscGraph { g })
            .collect())
    })
}

/// The HintGraph after the contiguous-axis merge.
#[pyfunction]
#[pyo3(name = "merge_contiguous_axes")]
fn py_merge_contiguous(graph: &PyAscGraph) -> PyResult<PyAscGraph> {
    crate::errors::guard_res(|| {
        Ok(PyAscGraph {
            g: merge_contiguous_axes(&graph.g).py()?,
        })
    })
}

fn group_dict<'py>(py: Python<'py>, g: &AxisGroup) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("x", g.x.clone())?;
    d.set_item("y", g.y.clone())?;
    d.set_item("r", g.r.clone())?;
    d.set_item("n", g.n.clone())?;
    Ok(d)
}

fn group_from(d: &Bound<'_, PyDict>) -> PyResult<AxisGroup> {
    let get = |k: &str| -> PyResult<Vec<AxisId>> {
        match d.get_item(k)? {
            Some(v) => v.extract(),
            None => Ok(Vec::new()),
        }
    };
    Ok(AxisGroup {
        x: get("x")?,
        y: get("y")?,
        r: get("r")?,
        n: get("n")?,
    })
}

/// The merged tiling group of a HintGraph: `{"x", "y", "r", "n"}`.
#[pyfunction]
#[pyo3(name = "tiling_group")]
fn py_tiling_group<'py>(py: Python<'py>, graph: &PyAscGraph) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard_res(|| group_dict(py, &graph_group(&graph.g).py()?))
}

/// Merge two groups (dicts with `x`, `y`, `r`, `n`); None when they cannot be merged.
#[pyfunction]
#[pyo3(name = "merge_groups")]
fn py_merge_groups<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyDict>,
    b: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    crate::errors::guard_res(|| match merge_groups(&group_from(a)?, &group_from(b)?) {
        Some(g) => Ok(Some(group_dict(py, &g)?)),
        None => Ok(None),
    })
}

fn report_dict<'py>(
    py: Python<'py>,
    g: &AscGraph,
    r: &AllocReport,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let cs = PyList::empty(py);
    for c in &r.containers {
        let cd = PyDict::new(py);
        cd.set_item(
            "kind",
            match c.kind {
                ContainerKind::Queue => "queue",
                ContainerKind::Buffer => "buffer",
                ContainerKind::Tmp => "tmp",
            },
        )?;
        cd.set_item("id", c.id)?;
        cd.set_item("name", c.size_name())?;
        cd.set_item("position", c.position.name())?;
        cd.set_item("buf_num", c.buf_num)?;
        let members: Vec<(String, usize, i64)> = c
            .members
            .iter()
            .map(|(n, o, rid)| (g.nodes()[n.index()].name.clone(), *o, *rid))
            .collect();
        cd.set_item("members", members)?;
        let tmps: Vec<(String, usize)> = c
            .tmps
            .iter()
            .map(|(n, k)| (g.nodes()[n.index()].name.clone(), *k))
            .collect();
        cd.set_item("tmps", tmps)?;
        cd.set_item(
            "slot_bytes",
            PyExpr {
                e: container_slot_bytes(g, c, 32),
            },
        )?;
        cs.append(cd)?;
    }
    d.set_item("containers", cs)?;
    d.set_item(
        "peak_ub_bytes",
        r.peak_ub_bytes.clone().map(|e| PyExpr { e }),
    )?;
    d.set_item(
        "live_bytes_lower_bound",
        r.live_bytes_lower_bound.clone().map(|e| PyExpr { e }),
    )?;
    d.set_item("inserted", r.inserted.clone())?;
    d.set_item("vecin_queues", r.vecin_queues)?;
    Ok(d)
}

/// Run the UB allocator on `graph` in place; returns the report dict.
#[pyfunction]
#[pyo3(name = "allocate", signature = (graph, max_que_num = 4, insert_ub2ub = true))]
fn py_allocate<'py>(
    py: Python<'py>,
    graph: &mut PyAscGraph,
    max_que_num: usize,
    insert_ub2ub: bool,
) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard_res(|| {
        let mut g = graph.g.clone();
        let r = allocate(
            &mut g,
            &AllocOptions {
                max_que_num,
                insert_ub2ub,
            },
        )
        .py()?;
        graph.g = g;
        report_dict(py, &graph.g, &r)
    })
}

/// Solve the best tiling of `impls` for `sizes` on `target`.
#[pyfunction]
#[pyo3(name = "solve_tiling", signature = (impls, target, sizes = None))]
fn py_solve_tiling(
    impls: &Bound<'_, PyAny>,
    target: &PyTarget,
    sizes: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyTilingData> {
    crate::errors::guard_res(|| {
        let gs = graphs_of(impls)?;
        let m = shape_of(sizes)?;
        ascendir_asc::tiling::solve_tiling(&gs, &target.t, &m)
            .map(|d| PyTilingData { d })
            .map_err(py_err)
    })
}

/// Evaluate an expression with integer bindings.
#[pyfunction]
#[pyo3(name = "eval_expr")]
fn py_eval_expr(e: &PyExpr, bindings: &Bound<'_, PyDict>) -> PyResult<i64> {
    crate::errors::guard_res(|| {
        let m = shape_of(Some(bindings))?;
        e.e.evaluate(&m).map_err(|x| py_err(AscError::Eval(x)))
    })
}

/// The numeric plan of a graph for the simulator and the reference evaluator: the engine's
/// kernel plan with every size evaluated with `bindings` (shape and tiling sizes), as a dict.
#[pyfunction]
#[pyo3(name = "export_plan", signature = (graph, bindings, block_size = 32))]
fn py_export_plan<'py>(
    py: Python<'py>,
    graph: &PyAscGraph,
    bindings: &Bound<'py, PyDict>,
    block_size: i64,
) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard_res(|| {
        use ascendir_codegen::numeric::NumAttr;
        let b = shape_of(Some(bindings))?;
        let plan = ascendir_codegen::KernelPlan::build(&graph.g, block_size)
            .and_then(|p| p.evaluate(&b))
            .map_err(py_err)?;
        let d = PyDict::new(py);
        d.set_item("name", &plan.name)?;
        d.set_item("tiling_key", plan.tiling_key)?;
        d.set_item("impl", plan.is_impl)?;
        let axes = PyList::empty(py);
        for ax in &plan.axes {
            let ad = PyDict::new(py);
            ad.set_item("id", ax.id)?;
            ad.set_item("name", &ax.name)?;
            ad.set_item("type", ax.kind)?;
            ad.set_item("size", ax.size)?;
            ad.set_item("from", ax.from.clone())?;
            ad.set_item("split_pair", ax.split_pair)?;
            axes.append(ad)?;
        }
        d.set_item("axes", axes)?;
        let nodes = PyList::empty(py);
        for n in &plan.nodes {
            let nd = PyDict::new(py);
            nd.set_item("id", n.id)?;
            nd.set_item("name", &n.name)?;
            nd.set_item("type", &n.op_type)?;
            nd.set_item("compute_type", n.compute_type)?;
            nd.set_item("compute", n.compute)?;
            nd.set_item("inputs", n.inputs.clone())?;
            nd.set_item("sched", n.sched.clone())?;
            nd.set_item("loop_axis", n.loop_axis)?;
            let attrs = PyDict::new(py);
            for (k, v) in &n.attrs {
                match v {
                    NumAttr::Int(i) => attrs.set_item(k, *i)?,
                    NumAttr::Float(f) => attrs.set_item(k, *f)?,
                    NumAttr::Bool(x) => attrs.set_item(k, *x)?,
                    NumAttr::Str(s) => attrs.set_item(k, s)?,
                }
            }
            nd.set_item("attrs", attrs)?;
            let outs = PyList::empty(py);
            for t in &n.outputs {
                let od = PyDict::new(py);
                od.set_item("dtype", t.dtype)?;
                od.set_item("base_axes", t.base_axes.clone())?;
                od.set_item("base_repeats", t.base_repeats.clone())?;
                od.set_item("base_strides", t.base_strides.clone())?;
                od.set_item("vect_axes", t.vect_axes.clone())?;
                od.set_item("vect_base", t.vect_base.clone())?;
                od.set_item("vect_repeats", t.vect_repeats.clone())?;
                od.set_item("vect_strides", t.vect_strides.clone())?;
                od.set_item("alloc", t.alloc)?;
                od.set_item("hardware", t.hardware)?;
                od.set_item("position", t.position)?;
                od.set_item("reuse_id", t.reuse_id)?;
                od.set_item("que_id", t.que_id)?;
                od.set_item("buf_num", t.buf_num)?;
                od.set_item("buf_id", t.buf_id)?;
                od.set_item("bytes", t.bytes)?;
                outs.append(od)?;
            }
            nd.set_item("outputs", outs)?;
            nodes.append(nd)?;
        }
        d.set_item("nodes", nodes)?;
        let conts = PyList::empty(py);
        for c in &plan.containers {
            let cd = PyDict::new(py);
            cd.set_item("name", &c.name)?;
            cd.set_item("kind", c.kind)?;
            cd.set_item("id", c.id)?;
            cd.set_item("buf_num", c.buf_num)?;
            cd.set_item("slot_bytes", c.slot_bytes)?;
            cd.set_item("members", c.members.clone())?;
            conts.append(cd)?;
        }
        d.set_item("containers", conts)?;
        Ok(d)
    })
}

/// A tiling problem as a dict: variables `(name, kind, align, upper)` in priority order, the UB
/// and block_dim expressions, and the shape symbols.
fn problem_dict<'py>(py: Python<'py>, p: &TilingProblem) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let vars: Vec<(String, &str, i64, String)> = p
        .vars
        .iter()
        .map(|x| {
            (
                x.name.clone(),
                if x.kind == VarKind::Tile {
                    "tile"
                } else {
                    "block"
                },
                x.align,
                x.upper.to_string(),
            )
        })
        .collect();
    d.set_item("vars", vars)?;
    d.set_item(
        "ub",
        PyExpr {
            e: p.ub_expr.clone(),
        },
    )?;
    d.set_item(
        "block_dim",
        PyExpr {
            e: p.block_dim_expr.clone(),
        },
    )?;
    d.set_item("shape_symbols", p.shape_symbols.clone())?;
    Ok(d)
}

/// Variables of a compiled tiling problem for one ImplGraph.
#[pyfunction]
#[pyo3(name = "tiling_problem")]
fn py_tiling_problem<'py>(
    py: Python<'py>,
    graph: &PyAscGraph,
    target: &PyTarget,
) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard_res(|| {
        let p = TilingProblem::new(&graph.g, &target.t).map_err(py_err)?;
        problem_dict(py, &p)
    })
}

/// Register the `asc_backend` submodule.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let sub = PyModule::new(py, "asc_backend")?;
    sub.add_class::<PyTarget>()?;
    sub.add_class::<PyTilingData>()?;
    sub.add_class::<PyTilingFunction>()?;
    sub.add_function(wrap_pyfunction!(py_schedule, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_merge_contiguous, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_tiling_group, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_merge_groups, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_allocate, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_solve_tiling, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_eval_expr, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_export_plan, &sub)?)?;
    sub.add_function(wrap_pyfunction!(py_tiling_problem, &sub)?)?;
    super::cpu::register(&sub)?;
    m.add_submodule(&sub)?;
    Ok(())
}
