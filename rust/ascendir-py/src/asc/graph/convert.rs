//! Conversions between Python values and the engine's: ids, size expressions, IR attribute
//! values, axis transforms, and the enum and memory fields of nodes and tensors.

use ascendir_asc::transform::Transform;
use ascendir_asc::{
    AllocType, AscError, AscGraph, AttrType, AttrValue, ExecCondition, Expr, MemHardware, NodeId,
    Position,
};
use ascendir_ir::DataType;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::BoundObject;

use crate::asc::expr::{to_expr, PyExpr, TYPE_MSG};
use crate::errors::{py_err, IntoPyResult};

pub(super) fn inv<T>(msg: String) -> PyResult<T> {
    Err(py_err(AscError::InvalidArgument(msg)))
}

pub(super) fn nid(g: &AscGraph, id: u32) -> PyResult<NodeId> {
    let n = NodeId(id);
    g.node(n).py()?;
    Ok(n)
}

pub(crate) fn exprs_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Expr>> {
    let mut v = Vec::new();
    for item in obj.try_iter()? {
        v.push(to_expr(&item?)?);
    }
    Ok(v)
}

pub(crate) fn ids_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let mut v = Vec::new();
    for item in obj.try_iter()? {
        v.push(item?.extract::<i64>()?);
    }
    Ok(v)
}

pub(crate) fn wrap_exprs(py: Python<'_>, v: &[Expr]) -> PyResult<Py<PyAny>> {
    let items: Vec<PyExpr> = v.iter().map(|e| PyExpr { e: e.clone() }).collect();
    Ok(PyList::new(
        py,
        items
            .into_iter()
            .map(|e| Py::new(py, e))
            .collect::<PyResult<Vec<_>>>()?,
    )?
    .into_any()
    .unbind())
}

pub(super) fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> PyResult<Py<PyAny>> {
    v.into_pyobject(py)
        .map(|o| o.into_any().unbind())
        .map_err(Into::into)
}

/// Convert a Python value to an IR attribute value of type `ty` (or guess when undeclared).
pub(crate) fn attr_from_py(
    name: &str,
    ty: Option<AttrType>,
    v: &Bound<'_, PyAny>,
) -> PyResult<AttrValue> {
    let is_int = v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>();
    let bad = |t: &str| inv::<AttrValue>(format!("attribute '{name}' takes a value of type {t}"));
    match ty {
        Some(AttrType::Expr) => match to_expr(v) {
            Ok(e) => Ok(AttrValue::Expr(e)),
            Err(_) => inv(TYPE_MSG.into()),
        },
        Some(AttrType::Int) if is_int => Ok(AttrValue::Int(v.extract()?)),
        Some(AttrType::Int) => bad("int"),
        Some(AttrType::Float) if is_int || v.is_instance_of::<PyFloat>() => {
            Ok(AttrValue::Float(v.extract()?))
        }
        Some(AttrType::Float) => bad("float"),
        Some(AttrType::Bool) if v.is_instance_of::<PyBool>() => Ok(AttrValue::Bool(v.extract()?)),
        Some(AttrType::Bool) if is_int => Ok(AttrValue::Bool(v.extract::<i64>()? != 0)),
        Some(AttrType::Bool) => bad("bool"),
        Some(AttrType::Str) if v.is_instance_of::<PyString>() => Ok(AttrValue::Str(v.extract()?)),
        Some(AttrType::Str) => bad("str"),
        Some(AttrType::ListInt) => match ids_of(v) {
            Ok(l) if !v.is_instance_of::<PyString>() => Ok(AttrValue::ListInt(l)),
            _ => bad("list of int"),
        },
        Some(AttrType::DType) if is_int => {
            let n: i64 = v.extract()?;
            DataType::from_ge(n)
                .map(AttrValue::DType)
                .map_or_else(|| bad("dtype"), Ok)
        }
        Some(AttrType::DType) => bad("dtype"),
        None => {
            if v.is_instance_of::<PyBool>() {
                Ok(AttrValue::Bool(v.extract()?))
            } else if is_int {
                Ok(AttrValue::Int(v.extract()?))
            } else if v.is_instance_of::<PyFloat>() {
                Ok(AttrValue::Float(v.extract()?))
            } else if v.is_instance_of::<PyString>() {
                Ok(AttrValue::Str(v.extract()?))
            } else if let Ok(e) = v.cast::<PyExpr>() {
                Ok(AttrValue::Expr(e.get().e.clone()))
            } else {
                bad("int, float, bool, str or SizeExpr")
            }
        }
    }
}

pub(crate) fn attr_to_py(py: Python<'_>, v: &AttrValue) -> PyResult<Py<PyAny>> {
    match v {
        AttrValue::Int(i) => obj(py, *i),
        AttrValue::Float(f) => obj(py, *f),
        AttrValue::Bool(b) => Ok(PyBool::new(py, *b).to_owned().into_any().unbind()),
        AttrValue::Str(s) => obj(py, s.as_str()),
        AttrValue::Expr(e) => Ok(Py::new(py, PyExpr { e: e.clone() })?.into_any()),
        AttrValue::ListInt(l) => obj(py, l.clone()),
        AttrValue::DType(d) => obj(py, d.ge_value()),
    }
}

pub(super) fn transform_to_py(py: Python<'_>, t: &Transform) -> PyResult<Py<PyAny>> {
    let tup = match t {
        Transform::TileSplit { axis, outer, inner } => {
            ("tile_split", *axis, outer.clone(), inner.clone())
                .into_pyobject(py)?
                .into_any()
        }
        Transform::BlockSplit { axis, outer, inner } => {
            ("block_split", *axis, outer.clone(), inner.clone())
                .into_pyobject(py)?
                .into_any()
        }
        Transform::Merge { axes, name } => ("merge", axes.clone(), name.clone())
            .into_pyobject(py)?
            .into_any(),
        Transform::BindBlock { outer, inner } => {
            ("bind_block", *outer, *inner).into_pyobject(py)?.into_any()
        }
        Transform::ApplySplit { node, outer, inner } => {
            ("apply_split", node.clone(), *outer, *inner)
                .into_pyobject(py)?
                .into_any()
        }
        Transform::ApplyMerge { node, merged } => ("apply_merge", node.clone(), *merged)
            .into_pyobject(py)?
            .into_any(),
        Transform::ApplySchedMerge { node, merged } => ("apply_sched_merge", node.clone(), *merged)
            .into_pyobject(py)?
            .into_any(),
        Transform::ApplyReorder { node, order } => ("apply_reorder", node.clone(), order.clone())
            .into_pyobject(py)?
            .into_any(),
        Transform::AxisReplace { node, src, dst } => ("axis_replace", node.clone(), *src, *dst)
            .into_pyobject(py)?
            .into_any(),
    };
    Ok(tup.unbind())
}

pub(super) fn transform_from_py(t: &Bound<'_, PyAny>) -> PyResult<Transform> {
    let tup = t.cast::<PyTuple>()?;
    let kind: String = tup.get_item(0)?.extract()?;
    let g = |i: usize| tup.get_item(i);
    Ok(match kind.as_str() {
        "tile_split" => Transform::TileSplit {
            axis: g(1)?.extract()?,
            outer: g(2)?.extract()?,
            inner: g(3)?.extract()?,
        },
        "block_split" => Transform::BlockSplit {
            axis: g(1)?.extract()?,
            outer: g(2)?.extract()?,
            inner: g(3)?.extract()?,
        },
        "merge" => Transform::Merge {
            axes: g(1)?.extract()?,
            name: g(2)?.extract()?,
        },
        "bind_block" => Transform::BindBlock {
            outer: g(1)?.extract()?,
            inner: g(2)?.extract()?,
        },
        "apply_split" => Transform::ApplySplit {
            node: g(1)?.extract()?,
            outer: g(2)?.extract()?,
            inner: g(3)?.extract()?,
        },
        "apply_merge" => Transform::ApplyMerge {
            node: g(1)?.extract()?,
            merged: g(2)?.extract()?,
        },
        "apply_sched_merge" => Transform::ApplySchedMerge {
            node: g(1)?.extract()?,
            merged: g(2)?.extract()?,
        },
        "apply_reorder" => Transform::ApplyReorder {
            node: g(1)?.extract()?,
            order: g(2)?.extract()?,
        },
        "axis_replace" => Transform::AxisReplace {
            node: g(1)?.extract()?,
            src: g(2)?.extract()?,
            dst: g(3)?.extract()?,
        },
        other => return inv(format!("unknown transform kind '{other}'")),
    })
}

pub(crate) fn exec_condition(v: &Bound<'_, PyAny>) -> PyResult<ExecCondition> {
    if let Ok(s) = v.extract::<String>() {
        return ExecCondition::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                py_err(AscError::InvalidArgument(format!(
                    "unknown exec condition '{s}'"
                )))
            });
    }
    Ok(ExecCondition::from_i64(v.extract()?))
}

pub(crate) fn enum_by_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    s: &str,
    what: &str,
) -> PyResult<T> {
    all.iter()
        .copied()
        .find(|x| name(*x) == s)
        .ok_or_else(|| py_err(AscError::InvalidArgument(format!("unknown {what} '{s}'"))))
}

pub(crate) fn set_mem_field(
    t: &mut ascendir_asc::Tensor,
    group: &str,
    key: &str,
    v: &Bound<'_, PyAny>,
) -> PyResult<()> {
    match (group, key) {
        ("mem", "tensor_id") => t.mem.tensor_id = v.extract()?,
        ("mem", "reuse_id") => t.mem.reuse_id = v.extract()?,
        ("mem", "alloc_type") => {
            t.mem.alloc_type = enum_by_name(
                AllocType::ALL,
                AllocType::name,
                &v.extract::<String>()?,
                "alloc type",
            )?
        }
        ("mem", "hardware") => {
            t.mem.hardware = enum_by_name(
                MemHardware::ALL,
                MemHardware::name,
                &v.extract::<String>()?,
                "hardware",
            )?
        }
        ("mem", "position") => {
            t.mem.position = enum_by_name(
                Position::ALL,
                Position::name,
                &v.extract::<String>()?,
                "position",
            )?
        }
        ("que", "id") => t.que.id = v.extract()?,
        ("que", "depth") => t.que.depth = v.extract()?,
        ("que", "buf_num") => t.que.buf_num = v.extract()?,
        ("buf", "id") => t.buf.id = v.extract()?,
        ("opt", "reuse_id") => t.opt.reuse_id = v.extract()?,
        ("opt", "ref_tensor") => t.opt.ref_tensor = v.extract()?,
        ("opt", "merge_scope") => t.opt.merge_scope = v.extract()?,
        _ => return inv(format!("unknown field '{group}.{key}'")),
    }
    Ok(())
}
