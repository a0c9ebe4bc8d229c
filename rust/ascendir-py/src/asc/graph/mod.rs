//! `ascendir._core.asc.AscGraph`: the graph engine object behind `asc.HintGraph`.
//! Nodes and axes are addressed by integer ids; the Python package builds the GE-style
//! object API (`node.attr.sched.axis`, `node.y.dtype`, ...) on top.

use ascendir_asc::{
    ApiType, AscError, AscGraph, ComputeType, ComputeUnit, GraphType, NodeId, OutRef,
};
use ascendir_ir::DataType;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::expr::{to_expr, PyExpr};
use crate::errors::{py_err, IntoPyResult};

mod convert;

use convert::{
    attr_from_py, attr_to_py, exec_condition, exprs_of, ids_of, inv, nid, obj, set_mem_field,
    transform_from_py, transform_to_py, wrap_exprs,
};

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

    /// All fields of axis `id` as a dict (NotFoundError for unknown ids).
    fn axis_info(&self, py: Python<'_>, id: i64) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let a = self.g.find_axis(id).ok_or_else(|| {
                py_err(AscError::NotFound(format!(
                    "graph '{}': no axis with id {id} (it has {})",
                    self.g.name,
                    self.g.axes().len()
                )))
            })?;
            let d = PyDict::new(py);
            d.set_item("id", a.id)?;
            d.set_item("name", &a.name)?;
            d.set_item("type", a.axis_type as i32)?;
            d.set_item("type_name", a.axis_type.dump_name())?;
            d.set_item("size", Py::new(py, PyExpr { e: a.size.clone() })?)?;
            d.set_item("align", Py::new(py, PyExpr { e: a.align.clone() })?)?;
            d.set_item("from", a.from.clone())?;
            d.set_item("split_pair_other_id", a.split_pair_other_id)?;
            d.set_item("bind_block", a.bind_block)?;
            d.set_item("allow_oversize_axis", a.allow_oversize_axis)?;
            d.set_item("allow_unaligned_tail", a.allow_unaligned_tail)?;
            Ok(d.into_any().unbind())
        })
    }

    /// Set a tiling-related field of an axis: `align` (Expr), `allow_unaligned_tail`,
    /// `allow_oversize_axis`, `bind_block` (bool).
    fn set_axis_field(&mut self, id: i64, field: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let v_bool = || value.extract::<bool>();
            match field {
                "align" => {
                    let e = to_expr(value)?;
                    self.g.axis_mut(id).py()?.align = e;
                }
                "allow_unaligned_tail" => {
                    let b = v_bool()?;
                    self.g.axis_mut(id).py()?.allow_unaligned_tail = b;
                }
                "allow_oversize_axis" => {
                    let b = v_bool()?;
                    self.g.axis_mut(id).py()?.allow_oversize_axis = b;
                }
                "bind_block" => {
                    let b = v_bool()?;
                    self.g.axis_mut(id).py()?.bind_block = b;
                }
                other => return inv(format!("axis field '{other}' cannot be set")),
            }
            Ok(())
        })
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

    /// Add a node of a registered AscIR type; returns its id.
    fn add_node(&mut self, name: &str, op_type: &str) -> PyResult<u32> {
        crate::errors::guard_res(|| Ok(self.g.add_node_of_type(name, op_type).py()?.0))
    }

    /// Move node `node` (with no connected inputs) out of `other` into this graph; returns the
    /// new id. `other` keeps a stale copy and should be discarded.
    fn adopt(&mut self, other: &Bound<'_, PyAscGraph>, node: u32) -> PyResult<u32> {
        crate::errors::guard_res(|| {
            let n = {
                let o = other.borrow();
                let n = o.g.node(NodeId(node)).py()?.clone();
                if n.inputs.iter().any(Option::is_some) {
                    return inv(format!(
                        "node '{}' has connected inputs in its own graph",
                        n.name
                    ));
                }
                n
            };
            Ok(self.g.add_node_value(n).py()?.0)
        })
    }

    /// Number of nodes.
    fn node_count(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.g.node_count())
    }

    /// Id of the node named `name`, or None.
    fn find_node(&self, name: &str) -> PyResult<Option<u32>> {
        crate::errors::guard(|| self.g.find_node(name).map(|n| n.0))
    }

    /// Node name.
    fn node_name(&self, node: u32) -> PyResult<String> {
        crate::errors::guard_res(|| Ok(self.g.node(NodeId(node)).py()?.name.clone()))
    }

    /// Rename a node.
    fn rename_node(&mut self, node: u32, name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.rename_node(NodeId(node), name).py())
    }

    /// Node type.
    fn node_type(&self, node: u32) -> PyResult<String> {
        crate::errors::guard_res(|| Ok(self.g.node(NodeId(node)).py()?.op_type().to_string()))
    }

    /// Input port names.
    fn input_names(&self, node: u32) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| Ok(self.g.node(NodeId(node)).py()?.input_names.clone()))
    }

    /// Output port names.
    fn output_names(&self, node: u32) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| Ok(self.g.node(NodeId(node)).py()?.output_names.clone()))
    }

    /// Producers of each input: `(node, output index)` or None.
    fn node_inputs(&self, node: u32) -> PyResult<Vec<Option<(u32, u32)>>> {
        crate::errors::guard_res(|| {
            Ok(self
                .g
                .node(NodeId(node))
                .py()?
                .inputs
                .iter()
                .map(|i| i.map(|r| (r.node.0, r.index)))
                .collect())
        })
    }

    /// Consumers of a node: `(output index, consumer, input index)`.
    fn consumers(&self, node: u32) -> PyResult<Vec<(u32, u32, usize)>> {
        crate::errors::guard_res(|| {
            nid(&self.g, node)?;
            Ok(self
                .g
                .consumers(NodeId(node))
                .into_iter()
                .map(|(o, n, i)| (o, n.0, i))
                .collect())
        })
    }

    /// Connect output `src_index` of `src` to input port `port` of `dst`.
    fn connect(&mut self, src: u32, src_index: u32, dst: u32, port: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let d = nid(&self.g, dst)?;
            self.g
                .connect_by_name(
                    OutRef {
                        node: NodeId(src),
                        index: src_index,
                    },
                    d,
                    port,
                )
                .py()
        })
    }

    /// Set the instances of a dynamic input.
    fn set_dynamic_inputs(&mut self, dst: u32, port: &str, srcs: Vec<(u32, u32)>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let d = nid(&self.g, dst)?;
            let refs: Vec<OutRef> = srcs
                .into_iter()
                .map(|(n, i)| OutRef {
                    node: NodeId(n),
                    index: i,
                })
                .collect();
            self.g.set_dynamic_inputs(d, port, &refs).py()
        })
    }

    /// Set the number of instances of a dynamic output.
    fn set_dynamic_outputs(&mut self, node: u32, port: &str, count: usize) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            self.g.set_dynamic_outputs(n, port, count).py()
        })
    }

    /// Read a scheduling field: `axis`, `loop_axis`, `exec_order`, `exec_condition`.
    fn sched_get(&self, py: Python<'_>, node: u32, field: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let s = &self.g.node(NodeId(node)).py()?.attr.sched;
            match field {
                "axis" => obj(py, s.axis.clone()),
                "loop_axis" => obj(py, s.loop_axis),
                "exec_order" => obj(py, s.exec_order),
                "exec_condition" => obj(py, s.exec_condition.name()),
                other => inv(format!("unknown sched field '{other}'")),
            }
        })
    }

    /// Write a scheduling field.
    fn sched_set(&mut self, node: u32, field: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            match field {
                "axis" => {
                    let ids = ids_of(value)?;
                    self.g.set_sched_axis(n, &ids).py()
                }
                "loop_axis" => {
                    let a: i64 = value.extract()?;
                    if a != -1 && self.g.find_axis(a).is_none() {
                        return Err(py_err(AscError::NotFound(format!("no axis with id {a}"))));
                    }
                    self.g.node_mut(n).py()?.attr.sched.loop_axis = a;
                    Ok(())
                }
                "exec_order" => {
                    let v: i64 = value.extract()?;
                    self.g.node_mut(n).py()?.attr.sched.exec_order = v;
                    Ok(())
                }
                "exec_condition" => {
                    let v = exec_condition(value)?;
                    self.g.node_mut(n).py()?.attr.sched.exec_condition = v;
                    Ok(())
                }
                other => inv(format!("unknown sched field '{other}'")),
            }
        })
    }

    /// Read an API field: `compute_type`, `type`, `unit` (lower-case names).
    fn api_get(&self, node: u32, field: &str) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let a = &self.g.node(NodeId(node)).py()?.attr.api;
            Ok(match field {
                "compute_type" => a.compute_type.name(),
                "type" => a.api_type.name(),
                "unit" => a.unit.name(),
                other => return inv(format!("unknown api field '{other}'")),
            }
            .to_string())
        })
    }

    /// Write an API field (setting `compute_type` also completes type and unit like GE).
    fn api_set(&mut self, node: u32, field: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            let api = &mut self.g.node_mut(n).py()?.attr.api;
            match field {
                "compute_type" => {
                    let ct = if let Ok(s) = value.extract::<String>() {
                        ComputeType::parse(&s).py()?
                    } else {
                        let v: i64 = value.extract()?;
                        if !(0..=11).contains(&v) {
                            return inv(format!("compute type {v} is out of range"));
                        }
                        ComputeType::from_i64(v)
                    };
                    let (t, u) = ct.api_completion();
                    api.compute_type = ct;
                    api.api_type = t;
                    api.unit = u;
                }
                "type" => {
                    let s: String = value.extract()?;
                    api.api_type = ApiType::ALL
                        .iter()
                        .copied()
                        .find(|x| x.name() == s)
                        .ok_or_else(|| {
                            py_err(AscError::InvalidArgument(format!("unknown api type '{s}'")))
                        })?;
                }
                "unit" => {
                    let s: String = value.extract()?;
                    api.unit = ComputeUnit::ALL
                        .iter()
                        .copied()
                        .find(|x| x.name() == s)
                        .ok_or_else(|| {
                            py_err(AscError::InvalidArgument(format!(
                                "unknown compute unit '{s}'"
                            )))
                        })?;
                }
                other => return inv(format!("unknown api field '{other}'")),
            }
            Ok(())
        })
    }

    /// An IR attribute value (None when unset; NotFoundError when undeclared).
    fn ir_attr_get(&self, py: Python<'_>, node: u32, name: &str) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let n = self.g.node(NodeId(node)).py()?;
            match n.attr.ir_attr.get(name) {
                Some(v) => attr_to_py(py, v),
                None if n.op.find_attr(name).is_some() || n.op.attrs.is_empty() => Ok(py.None()),
                None => Err(py_err(AscError::NotFound(format!(
                    "node '{}' ({}): no IR attribute '{name}'",
                    n.name,
                    n.op_type()
                )))),
            }
        })
    }

    /// Set an IR attribute (type-checked against the prototype).
    fn ir_attr_set(&mut self, node: u32, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let n = nid(&self.g, node)?;
            let ty = self.g.node(n).py()?.op.find_attr(name).map(|a| a.ty);
            let v = attr_from_py(name, ty, value)?;
            self.g.set_ir_attr(n, name, v).py()
        })
    }

    /// Names of the IR attributes that are set.
    fn ir_attr_names(&self, node: u32) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            Ok(self
                .g
                .node(NodeId(node))
                .py()?
                .attr
                .ir_attr
                .keys()
                .cloned()
                .collect())
        })
    }

    /// Read a tensor field: `dtype` (GE number), `axis`, `repeats`, `strides`,
    /// `vectorized_axis`, `vectorized_strides`, `mem`, `que`, `buf`, `opt` (dicts).
    fn tensor_get(
        &self,
        py: Python<'_>,
        node: u32,
        index: usize,
        field: &str,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let t = self.g.tensor(NodeId(node), index).py()?;
            match field {
                "dtype" => obj(py, t.dtype.ge_value()),
                "axis" => obj(py, t.axis.clone()),
                "repeats" => wrap_exprs(py, &t.repeats),
                "strides" => wrap_exprs(py, &t.strides),
                "vectorized_axis" => obj(py, t.vectorized_axis.clone()),
                "vectorized_strides" => wrap_exprs(py, &t.vectorized_strides),
                "mem" => {
                    let d = PyDict::new(py);
                    d.set_item("tensor_id", t.mem.tensor_id)?;
                    d.set_item("alloc_type", t.mem.alloc_type.name())?;
                    d.set_item("hardware", t.mem.hardware.name())?;
                    d.set_item("position", t.mem.position.name())?;
                    d.set_item("reuse_id", t.mem.reuse_id)?;
                    Ok(d.into_any().unbind())
                }
                "que" => {
                    let d = PyDict::new(py);
                    d.set_item("id", t.que.id)?;
                    d.set_item("depth", t.que.depth)?;
                    d.set_item("buf_num", t.que.buf_num)?;
                    Ok(d.into_any().unbind())
                }
                "buf" => {
                    let d = PyDict::new(py);
                    d.set_item("id", t.buf.id)?;
                    Ok(d.into_any().unbind())
                }
                "opt" => {
                    let d = PyDict::new(py);
                    d.set_item("reuse_id", t.opt.reuse_id)?;
                    d.set_item("ref_tensor", t.opt.ref_tensor)?;
                    d.set_item("merge_scope", t.opt.merge_scope)?;
                    Ok(d.into_any().unbind())
                }
                other => inv(format!("unknown tensor field '{other}'")),
            }
        })
    }

    /// Write a tensor field (see `tensor_get`; `mem`/`que`/`buf`/`opt` take `(key, value)`).
    fn tensor_set(
        &mut self,
        node: u32,
        index: usize,
        field: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            // Validate everything before touching the tensor.
            let axis_ok = |g: &AscGraph, ids: &[i64]| -> PyResult<()> {
                for a in ids {
                    if g.find_axis(*a).is_none() {
                        return Err(py_err(AscError::NotFound(format!(
                            "graph '{}': no axis with id {a}",
                            g.name
                        ))));
                    }
                }
                Ok(())
            };
            let g = &mut self.g;
            g.tensor(NodeId(node), index).py()?;
            match field {
                "dtype" => {
                    let v: i64 = value.extract()?;
                    let dt = DataType::from_ge(v).ok_or_else(|| {
                        py_err(AscError::InvalidArgument(format!(
                            "unknown data type number {v}"
                        )))
                    })?;
                    g.tensor_mut(NodeId(node), index).py()?.dtype = dt;
                }
                "axis" | "vectorized_axis" => {
                    let ids = ids_of(value)?;
                    axis_ok(g, &ids)?;
                    let t = g.tensor_mut(NodeId(node), index).py()?;
                    if field == "axis" {
                        t.axis = ids;
                    } else {
                        t.vectorized_axis = ids;
                    }
                }
                "repeats" | "strides" | "vectorized_strides" => {
                    let es = exprs_of(value)?;
                    let t = g.tensor_mut(NodeId(node), index).py()?;
                    match field {
                        "repeats" => t.repeats = es,
                        "strides" => t.strides = es,
                        _ => t.vectorized_strides = es,
                    }
                }
                "mem" | "que" | "buf" | "opt" => {
                    let (key, v): (String, Bound<'_, PyAny>) = value.extract()?;
                    let t = g.tensor_mut(NodeId(node), index).py()?;
                    set_mem_field(t, field, &key, &v)?;
                }
                other => return inv(format!("unknown tensor field '{other}'")),
            }
            Ok(())
        })
    }

    /// Make output `index` of `node` a contiguous view over `axes`.
    fn set_contiguous(&mut self, node: u32, index: usize, axes: Vec<i64>) -> PyResult<()> {
        crate::errors::guard_res(|| self.g.set_contiguous_view(NodeId(node), index, &axes).py())
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
