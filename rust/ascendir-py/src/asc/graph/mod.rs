//! `ascendir._core.asc.AscGraph`: the graph engine object behind `asc.HintGraph` (sizes, axes,
//! transforms, whole-graph checks and serialization). Nodes, outputs and axes are reached
//! through the handle classes of `super::handles`.

use ascendir_asc::{AscGraph, GraphType, NodeId};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::expr::{to_expr, PyExpr};
use crate::errors::IntoPyResult;

mod convert;

pub(crate) use convert::{
    attr_from_py, attr_to_py, enum_by_name, exec_condition, exprs_of, set_mem_field, wrap_exprs,
};
use convert::{inv, nid, transform_from_py, transform_to_py};

/// The AscGraph engine object.
#[pyclass(name = "AscGraph", module = "ascendir._core.asc")]
#[derive(Debug)]
pub struct PyAscGraph {
    /// The graph.
    pub g: AscGraph,
}

/// One step of GE's `trans_info_road`: `(kind, src, dst)`.
type TransStep = (i64, Vec<i64>, Vec<i64>);

#[pymethods]
impl PyAscGraph {
    /// An empty HintGraph named `name`.
    #[new]
    fn new(name: &str) -> PyResult<PyAscGraph> {
        crate::errors::guard(|| PyAscGraph {
            g: AscGraph::new(name),
        })
    }

    /// Graph name.
    #[getter]
    fn name(&self) -> PyResult<String> {
        crate::errors::guard(|| self.g.name.clone())
    }

    #[setter]
    fn set_name(&mut self, name: String) -> PyResult<()> {
        crate::errors::guard(|| {
            self.g.name = name;
        })
    }

    /// 0 = HINT, 1 = IMPL.
    #[getter]
    fn graph_type(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.g.graph_type as i64)
    }

    #[setter]
    fn set_graph_type(&mut self, t: i64) -> PyResult<()> {
        crate::errors::guard_res(|| {
            self.g.graph_type = match t {
                0 => GraphType::Hint,
                1 => GraphType::Impl,
                _ => return inv(format!("graph type must be 0 (HINT) or 1 (IMPL), got {t}")),
            };
            Ok(())
        })
    }

    /// Template key (-1 = none).
    #[getter]
    fn tiling_key(&self) -> PyResult<i64> {
        crate::errors::guard(|| self.g.tiling_key)
    }

    #[setter]
    fn set_tiling_key(&mut self, k: i64) -> PyResult<()> {
        crate::errors::guard(|| {
            self.g.tiling_key = k;
        })
    }

    /// A deep copy.
    fn copy(&self) -> PyResult<PyAscGraph> {
        crate::errors::guard(|| PyAscGraph { g: self.g.clone() })
    }

    // ----- sizes and axes --------------------------------------------------------------

    /// Create a symbol size variable.
    fn create_size(&mut self, name: &str) -> PyResult<PyExpr> {
        crate::errors::guard_res(|| {
            Ok(PyExpr {
                e: self.g.create_size(name).py()?,
            })
        })
    }

    /// Create a constant size variable.
    fn create_size_const(&mut self, value: i64) -> PyResult<PyExpr> {
        crate::errors::guard(|| PyExpr {
            e: self.g.create_size_const(value),
        })
    }

    /// Size variables in creation order.
    fn size_vars(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| wrap_exprs(py, self.g.size_vars()))
    }

    /// Create an ORIGINAL axis; returns its id.
    fn create_axis(&mut self, name: &str, size: &Bound<'_, PyAny>) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            let e = to_expr(size)?;
            self.g.create_axis(name, e).py()
        })
    }

    /// Number of axes.
    fn axis_count(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.g.axes().len())
    }

    /// Id of the axis named `name`, or None.
    fn find_axis(&self, name: &str) -> PyResult<Option<i64>> {
        crate::errors::guard(|| self.g.find_axis_by_name(name).map(|a| a.id))
    }

    /// Tile split; returns `(outer, inner)`.
    #[pyo3(signature = (axis, outer = None, inner = None))]
    fn tile_split(
        &mut self,
        axis: i64,
        outer: Option<&str>,
        inner: Option<&str>,
    ) -> PyResult<(i64, i64)> {
        crate::errors::guard_res(|| self.g.tile_split(axis, outer, inner).py())
    }

    /// Block split; returns `(outer, inner)`.
    #[pyo3(signature = (axis, outer = None, inner = None))]
    fn block_split(
        &mut self,
        axis: i64,
        outer: Option<&str>,
        inner: Option<&str>,
    ) -> PyResult<(i64, i64)> {
        crate::errors::guard_res(|| self.g.block_split(axis, outer, inner).py())
    }

    /// Merge axes; returns the merged id.
    #[pyo3(signature = (axes, name = None))]
    fn merge_axes(&mut self, axes: Vec<i64>, name: Option<&str>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.g.merge_axes(&axes, name).py())
    }

    /// Bind a block pair.
    fn bind_block(&mut self, outer: i64, inner: i64) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.bind_block(outer, inner).py())
    }

    /// Apply a split to a node.
    fn apply_split(&mut self, node: u32, outer: i64, inner: i64) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            self.g.apply_split(n, outer, inner).py()
        })
    }

    /// Apply a merge to a node; returns the output indices left unchanged (non-contiguous).
    fn apply_merge(&mut self, node: u32, merged: i64) -> PyResult<Vec<usize>> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            Ok(self.g.apply_merge(n, merged).py()?.skipped_outputs)
        })
    }

    /// Apply a merge to a node's sched.axis only.
    fn apply_sched_axis_merge(&mut self, node: u32, merged: i64) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            self.g.apply_sched_axis_merge(n, merged).py()
        })
    }

    /// Reorder a node's loop axes and views.
    fn apply_reorder(&mut self, node: u32, order: Vec<i64>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            self.g.apply_reorder(n, &order).py()
        })
    }

    /// Replace an axis id in a node's sched.axis and views.
    fn try_apply_axis_replace(&mut self, node: u32, src: i64, dst: i64) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            self.g.try_apply_axis_replace(n, src, dst).py()
        })
    }

    /// The replayable transform log as tuples.
    fn transform_log(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        crate::errors::guard_res(|| {
            self.g
                .transform_log()
                .iter()
                .map(|t| transform_to_py(py, t))
                .collect()
        })
    }

    /// Replay a transform log (tuples from `transform_log`).
    fn replay(&mut self, log: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let mut v = Vec::new();
            for t in log.try_iter()? {
                v.push(transform_from_py(&t?)?);
            }
            self.g.replay(&v).py()
        })
    }

    /// GE's `trans_info_road`: `(kind, src, dst)` with kind 0 = split, 1 = merge.
    fn trans_info(&self) -> PyResult<Vec<TransStep>> {
        crate::errors::guard(|| {
            self.g
                .trans_info()
                .iter()
                .map(|t| (t.trans_type as i64, t.src.clone(), t.dst.clone()))
                .collect()
        })
    }

    /// Record an axis map (`[(axis, [axes])]`).
    fn set_axis_map(&mut self, map: Vec<(i64, Vec<i64>)>) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.set_axis_map(map).py())
    }

    /// The recorded axis map.
    fn axis_map(&self) -> PyResult<Vec<(i64, Vec<i64>)>> {
        crate::errors::guard(|| self.g.axis_map().to_vec())
    }

    // ----- nodes -----------------------------------------------------------------------

    /// Number of nodes.
    fn node_count(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.g.node_count())
    }

    /// Id of the node named `name`, or None.
    fn find_node(&self, name: &str) -> PyResult<Option<u32>> {
        crate::errors::guard(|| self.g.find_node(name).map(|n| n.0))
    }

    /// Node type.
    fn node_type(&self, node: u32) -> PyResult<String> {
        crate::errors::guard_res(|| Ok(self.g.node(NodeId(node)).py()?.op_type().to_string()))
    }

    // ----- whole graph -----------------------------------------------------------------

    /// Every broken invariant.
    fn problems(&self) -> PyResult<Vec<String>> {
        crate::errors::guard(|| self.g.problems())
    }

    /// Raise ValidationError listing every broken invariant.
    fn validate(&self) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.validate().py())
    }

    /// Every HintGraph convention violation.
    fn hint_problems(&self) -> PyResult<Vec<String>> {
        crate::errors::guard(|| self.g.hint_problems())
    }

    /// Raise ValidationError when a HintGraph convention is broken.
    fn validate_hint_conventions(&self) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.validate_hint_conventions().py())
    }

    /// Check and propagate dtypes.
    fn infer_dtypes(&mut self) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.infer_dtypes().py())
    }

    /// GE's text dump.
    #[pyo3(signature = (verbose = false))]
    fn debug_str(&self, verbose: bool) -> PyResult<String> {
        crate::errors::guard(|| self.g.debug_str(verbose))
    }

    /// Node ids in topological order.
    fn topo_order(&self) -> PyResult<Vec<u32>> {
        crate::errors::guard_res(|| {
            Ok(self.g.topo_order().py()?.into_iter().map(|n| n.0).collect())
        })
    }

    /// Serialize as GE's `AscGraphDef` protobuf.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard_res(|| crate::errors::py_bytes(py, &self.g.to_bytes()))
    }

    /// The bytes of the graph with every node named after its index and no graph name:
    /// equal for two graphs that differ only in names (a model's repeated layers).
    fn structure_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard_res(|| crate::errors::py_bytes(py, &self.g.nameless_structure_bytes()))
    }

    /// Parse GE's `AscGraphDef` protobuf.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyAscGraph> {
        crate::errors::guard_res(|| {
            Ok(PyAscGraph {
                g: AscGraph::from_bytes(data).py()?,
            })
        })
    }
}
