//! Binding of the CPU C++ verification target: argument conversion only.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::backend::graphs_of;

/// Generate the CPU C++ kernel of ImplGraphs (the templates of one kernel): a dict with
/// `source`, `tiling_header`, `runtime_header`, `kernel_tiling_stub`, `fields` [(name, offset)], `inputs` and
/// `outputs` [(name, GE dtype)], `templates` [(graph, tiling key)], `names` (canonical
/// builds: what the source prints as `#<index>`).
#[pyfunction]
#[pyo3(name = "cpu_kernel", signature = (impls, name, block_size = 32, canonical = false))]
fn py_cpu_kernel<'py>(
    py: Python<'py>,
    impls: &Bound<'py, PyAny>,
    name: &str,
    block_size: i64,
    canonical: bool,
) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard_res(|| {
        let gs = graphs_of(impls)?;
        let refs: Vec<&ascendir_asc::AscGraph> = gs.iter().collect();
        let k = crate::errors::enter(py, || {
            ascendir_codegen::generate_cpu_with(name, &refs, block_size, canonical)
        })?;
        let d = PyDict::new(py);
        d.set_item("name", &k.name)?;
        d.set_item("source", &k.source)?;
        d.set_item("tiling_header", &k.tiling_header)?;
        d.set_item("runtime_header", ascendir_codegen::RUNTIME_HEADER)?;
        d.set_item(
            "kernel_tiling_stub",
            ascendir_codegen::tiling_data::kernel_tiling_stub(),
        )?;
        let fields: Vec<(String, usize)> = k
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.offset))
            .collect();
        d.set_item("fields", fields)?;
        let args = |v: &[ascendir_codegen::GmArg]| -> PyResult<Bound<'py, PyList>> {
            let l = PyList::empty(py);
            for a in v {
                l.append((a.name.clone(), a.dtype.ge_value()))?;
            }
            Ok(l)
        };
        d.set_item("inputs", args(&k.inputs)?)?;
        d.set_item("outputs", args(&k.outputs)?)?;
        d.set_item("templates", k.templates.clone())?;
        d.set_item("names", k.names.clone())?;
        Ok(d)
    })
}

/// Register the CPU target functions into the `asc_backend` submodule.
pub fn register(sub: &Bound<'_, PyModule>) -> PyResult<()> {
    sub.add_function(wrap_pyfunction!(py_cpu_kernel, sub)?)?;
    Ok(())
}
