//! `ascendir.OpDesc`: its ports (names, counts, adding, inserting and renaming them, their
//! tensor descs).

use std::sync::Arc;

use ascendir_ir::{IrError, OpDesc, Side, TensorDesc};
use pyo3::prelude::*;

use crate::errors::IntoPyResult;

use super::op_desc::{desc_arg, PyOpDesc};
use super::tensor::PyTensorDesc;

#[pymethods]
impl PyOpDesc {
    /// Input port names in index order (unset optional inputs included).
    #[getter]
    fn input_names(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op.inputs().iter().map(|p| p.name.to_string()).collect())
            })
        })
    }

    /// Output port names in index order.
    #[getter]
    fn output_names(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| {
                Ok(op.outputs().iter().map(|p| p.name.to_string()).collect())
            })
        })
    }

    /// Number of input slots (GE `GetAllInputsSize`, unset optional inputs included).
    #[getter]
    fn num_inputs(slf: &Bound<'_, Self>) -> PyResult<usize> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.num_inputs())))
    }

    /// Number of inputs with a valid desc (GE `GetInputsSize`).
    #[getter]
    fn num_valid_inputs(slf: &Bound<'_, Self>) -> PyResult<usize> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.num_valid_inputs())))
    }

    /// Number of outputs.
    #[getter]
    fn num_outputs(slf: &Bound<'_, Self>) -> PyResult<usize> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.num_outputs())))
    }

    /// Add input `name` (an existing name updates that slot, as GE does); returns its index.
    #[pyo3(signature = (name, desc=None))]
    fn add_input(
        slf: &Bound<'_, Self>,
        name: &str,
        desc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let d = desc_arg(desc)?;
            PyOpDesc::try_with_mut(slf, |op| Ok(op.add_input(name, d)))
        })
    }

    /// Add an optional input; without `desc` the slot is unset (GE's invalid desc).
    #[pyo3(signature = (name, desc=None))]
    fn add_optional_input(
        slf: &Bound<'_, Self>,
        name: &str,
        desc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let d = match desc {
                Some(d) => PyTensorDesc::extract_arc(d)?,
                None => Arc::new(TensorDesc::invalid()),
            };
            PyOpDesc::try_with_mut(slf, |op| Ok(op.add_optional_input(name, d)))
        })
    }

    /// Add output `name` (a duplicate name raises); returns its index.
    #[pyo3(signature = (name, desc=None))]
    fn add_output(
        slf: &Bound<'_, Self>,
        name: &str,
        desc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let d = desc_arg(desc)?;
            PyOpDesc::try_with_mut(slf, |op| op.add_output(name, d))
        })
    }

    /// Add the dynamic inputs `name0 .. name{count-1}`: at the back (default), at the front
    /// (`front=True`, every name must be new), or at `index`. Returns the first index.
    #[pyo3(signature = (name, count, *, front=false, index=None))]
    fn add_dynamic_input(
        slf: &Bound<'_, Self>,
        name: &str,
        count: usize,
        front: bool,
        index: Option<usize>,
    ) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            if front && index.is_some() {
                return Err(IrError::InvalidArgument(
                    "pass either front=True or index=, not both".into(),
                ))
                .py();
            }
            let at = match (front, index) {
                (true, _) => Some(0),
                (false, Some(i)) => Some(i),
                (false, None) => None,
            };
            match at {
                None => {
                    if PyOpDesc::node_loc(slf)?.is_some() {
                        let end = PyOpDesc::try_with(slf, |op| Ok(op.num_inputs()))?;
                        let names = OpDesc::dynamic_names(name, count);
                        let existing: Vec<bool> = PyOpDesc::try_with(slf, |op| {
                            Ok(names.iter().map(|n| op.input_index(n).is_some()).collect())
                        })?;
                        if existing.iter().any(|&e| e) {
                            return PyOpDesc::try_with_mut(slf, |op| {
                                op.add_dynamic_input(name, count, true)
                            });
                        }
                        let desc = Arc::new(TensorDesc::default());
                        PyOpDesc::insert_at(
                            slf,
                            Side::Input,
                            end,
                            names.into_iter().map(|n| (n, desc.clone())).collect(),
                        )?;
                        return Ok(end);
                    }
                    PyOpDesc::try_with_mut(slf, |op| op.add_dynamic_input(name, count, true))
                }
                Some(i) => {
                    let desc = Arc::new(TensorDesc::default());
                    let ports = OpDesc::dynamic_names(name, count)
                        .into_iter()
                        .map(|n| (n, desc.clone()))
                        .collect();
                    PyOpDesc::insert_at(slf, Side::Input, i, ports)?;
                    Ok(i)
                }
            }
        })
    }

    /// Add the dynamic outputs `name0 .. name{count-1}` at the back or at `index`.
    #[pyo3(signature = (name, count, *, index=None))]
    fn add_dynamic_output(
        slf: &Bound<'_, Self>,
        name: &str,
        count: usize,
        index: Option<usize>,
    ) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let at = match index {
                Some(i) => i,
                None => PyOpDesc::try_with(slf, |op| Ok(op.num_outputs()))?,
            };
            let desc = Arc::new(TensorDesc::default());
            let ports = OpDesc::dynamic_names(name, count)
                .into_iter()
                .map(|n| (n, desc.clone()))
                .collect();
            PyOpDesc::insert_at(slf, Side::Output, at, ports)?;
            Ok(at)
        })
    }

    /// Insert input `name` at `index`; later inputs shift (their links follow them).
    #[pyo3(signature = (index, name, desc=None))]
    fn insert_input(
        slf: &Bound<'_, Self>,
        index: usize,
        name: &str,
        desc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let d = desc_arg(desc)?;
            PyOpDesc::insert_at(slf, Side::Input, index, vec![(name.to_string(), d)])
        })
    }

    /// Insert output `name` at `index`; later outputs shift (their links follow them).
    #[pyo3(signature = (index, name, desc=None))]
    fn insert_output(
        slf: &Bound<'_, Self>,
        index: usize,
        name: &str,
        desc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let d = desc_arg(desc)?;
            PyOpDesc::insert_at(slf, Side::Output, index, vec![(name.to_string(), d)])
        })
    }

    /// Rename an input (GE `UpdateInputName`): index and desc unchanged.
    fn rename_input(slf: &Bound<'_, Self>, old: &str, new: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| op.rename_port(Side::Input, old, new))
        })
    }

    /// Rename an output: index and desc unchanged.
    fn rename_output(slf: &Bound<'_, Self>, old: &str, new: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with_mut(slf, |op| op.rename_port(Side::Output, old, new))
        })
    }

    /// The index of input `name`, or -1.
    fn input_index(slf: &Bound<'_, Self>, name: &str) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| Ok(op.input_index(name).map_or(-1, |i| i as i64)))
        })
    }

    /// The index of output `name`, or -1.
    fn output_index(slf: &Bound<'_, Self>, name: &str) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| Ok(op.output_index(name).map_or(-1, |i| i as i64)))
        })
    }

    /// The desc of an input, by index or name (a view: setting its fields changes this op).
    fn input_desc(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<PyTensorDesc> {
        crate::errors::guard_res(|| {
            let i = PyOpDesc::resolve_index(slf, Side::Input, key)?;
            PyOpDesc::desc_view(slf, Side::Input, i)
        })
    }

    /// The desc of an output, by index or name (a view).
    fn output_desc(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<PyTensorDesc> {
        crate::errors::guard_res(|| {
            let i = PyOpDesc::resolve_index(slf, Side::Output, key)?;
            PyOpDesc::desc_view(slf, Side::Output, i)
        })
    }

    /// Replace the desc of an input (by index or name).
    fn update_input_desc(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        desc: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let i = PyOpDesc::resolve_index(slf, Side::Input, key)?;
            let d = PyTensorDesc::extract_arc(desc)?;
            PyOpDesc::try_with_mut(slf, |op| op.set_port_desc(Side::Input, i, d))
        })
    }

    /// Replace the desc of an output (by index or name).
    fn update_output_desc(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        desc: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let i = PyOpDesc::resolve_index(slf, Side::Output, key)?;
            let d = PyTensorDesc::extract_arc(desc)?;
            PyOpDesc::try_with_mut(slf, |op| op.set_port_desc(Side::Output, i, d))
        })
    }

    /// Indices of the dynamic inputs `name0, name1, ...`.
    fn dynamic_input_indexes(slf: &Bound<'_, Self>, name: &str) -> PyResult<Vec<usize>> {
        crate::errors::guard_res(|| {
            PyOpDesc::try_with(slf, |op| Ok(op.dynamic_indexes(Side::Input, name)))
        })
    }

    /// Whether input `name` is declared optional.
    fn is_optional_input(slf: &Bound<'_, Self>, name: &str) -> PyResult<bool> {
        crate::errors::guard_res(|| PyOpDesc::try_with(slf, |op| Ok(op.is_optional_input(name))))
    }
}
