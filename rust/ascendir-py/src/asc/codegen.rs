//! Bindings of the kernel text printers, registered as `ascendir._core.codegen`.

use ascendir_asc::AscGraph;
use ascendir_codegen::tiling_data::{tiling_data_header_fused, tiling_fields_fused};
use ascendir_codegen::{
    generate_kernel as gen_kernel, generate_kernels as gen_kernels, KernelInput, KernelOptions,
};
use pyo3::prelude::*;

use super::backend::PyTarget;
use super::graph::PyAscGraph;
use crate::errors::py_err;

/// Nested as a fused schedule: AscGraph → schedule result → group → ImplGraphs.
type Nested<T> = Vec<Vec<Vec<Vec<T>>>>;

/// A fused schedule as nested Python lists: AscGraph → schedule result → group → ImplGraphs.
type Fused = Nested<AscGraph>;

fn graph_of(obj: &Bound<'_, PyAny>) -> PyResult<AscGraph> {
    Ok(graph_ref(obj)?.g.clone())
}

/// The AscGraph object `obj` (or its `_core`) borrowed, not copied.
fn graph_ref<'py>(obj: &Bound<'py, PyAny>) -> PyResult<PyRef<'py, PyAscGraph>> {
    let core = if obj.hasattr("_core")? {
        obj.getattr("_core")?
    } else {
        obj.clone()
    };
    let g = core.cast_into::<PyAscGraph>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "expected an AscGraph, got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    Ok(g.borrow())
}

/// `obj` nested as AscGraph → schedule result → group → ImplGraphs, each graph through `leaf`.
fn nested<'py, T>(
    obj: &Bound<'py, PyAny>,
    leaf: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Nested<T>> {
    let mut out = Vec::new();
    for results in obj.try_iter()? {
        let mut rs = Vec::new();
        for groups in results?.try_iter()? {
            let mut gs = Vec::new();
            for impls in groups?.try_iter()? {
                let mut is = Vec::new();
                for g in impls?.try_iter()? {
                    is.push(leaf(&g?)?);
                }
                gs.push(is);
            }
            rs.push(gs);
        }
        out.push(rs);
    }
    Ok(out)
}

fn fused_of(obj: &Bound<'_, PyAny>) -> PyResult<Fused> {
    nested(obj, graph_of)
}

fn with_refs<R>(f: &Fused, run: impl FnOnce(&[Vec<Vec<Vec<&AscGraph>>>]) -> R) -> R {
    let refs: Vec<Vec<Vec<Vec<&AscGraph>>>> = f
        .iter()
        .map(|rs| {
            rs.iter()
                .map(|gs| gs.iter().map(|is| is.iter().collect()).collect())
                .collect()
        })
        .collect();
    run(&refs)
}

/// `autofuse_tiling_data.h` of kernel `kernel` for a fused schedule (nested lists).
#[pyfunction]
fn tiling_data_header(kernel: &str, fused: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::errors::guard_res(|| {
        let f = fused_of(fused)?;
        Ok(with_refs(&f, |r| tiling_data_header_fused(kernel, r)))
    })
}

/// The `uint32_t` fields of the TilingData struct: `(name, byte offset)` in struct order.
#[pyfunction]
fn tiling_fields(fused: &Bound<'_, PyAny>) -> PyResult<Vec<(String, usize)>> {
    crate::errors::guard_res(|| {
        let f = fused_of(fused)?;
        Ok(with_refs(&f, |r| {
            tiling_fields_fused(r)
                .into_iter()
                .map(|t| (t.name, t.offset))
                .collect()
        }))
    })
}

/// The one schedule group's ImplGraphs of kernel `name` (nested lists), borrowed.
fn one_group<'py>(fused: &Bound<'py, PyAny>, name: &str) -> PyResult<Vec<PyRef<'py, PyAscGraph>>> {
    let mut f = nested(fused, graph_ref)?;
    match (
        f.len(),
        f.first().map(Vec::len),
        f.first().and_then(|r| r.first()).map(Vec::len),
    ) {
        (1, Some(1), Some(1)) => Ok(f.swap_remove(0).swap_remove(0).swap_remove(0)),
        _ => Err(multi_group(name)),
    }
}

/// The generated files of kernel `name` (file name → text) for one schedule group.
#[pyfunction]
#[pyo3(signature = (fused, name, target, hint = None, cache_key = None))]
fn generate_kernel(
    py: Python<'_>,
    fused: &Bound<'_, PyAny>,
    name: &str,
    target: &PyTarget,
    hint: Option<&Bound<'_, PyAny>>,
    cache_key: Option<String>,
) -> PyResult<Vec<(String, String)>> {
    crate::errors::guard_res(|| {
        // The graphs are borrowed for the call, not copied.
        let borrowed = one_group(fused, name)?;
        let hint_g = hint.map(graph_ref).transpose()?;
        let impls: Vec<&AscGraph> = borrowed.iter().map(|r| &r.g).collect();
        let hint_ref: Option<&AscGraph> = hint_g.as_ref().map(|r| &r.g);
        let t = &target.t;
        crate::errors::enter(py, || {
            let opts = KernelOptions {
                hint: hint_ref,
                cache_key,
            };
            gen_kernel(name, &impls, t, &opts)
        })
    })
}

/// A kernel of [`generate_kernels`]: its one group's ImplGraphs, name, HintGraph, cache key.
type KernelArgs<'py> = (
    Bound<'py, PyAny>,
    String,
    Option<Bound<'py, PyAny>>,
    Option<String>,
);

/// The generated files of every kernel of `kernels` (`(fused, name, hint, cache_key)` each), in
/// order, generated on the package's threads with the GIL released; the first failing kernel's
/// error is raised.
#[pyfunction]
fn generate_kernels(
    py: Python<'_>,
    kernels: Vec<KernelArgs<'_>>,
    target: &PyTarget,
) -> PyResult<Vec<Vec<(String, String)>>> {
    crate::errors::guard_res(|| {
        let mut groups = Vec::with_capacity(kernels.len());
        let mut hints = Vec::with_capacity(kernels.len());
        for (fused, name, hint, _) in &kernels {
            groups.push(one_group(fused, name)?);
            hints.push(hint.as_ref().map(graph_ref).transpose()?);
        }
        let inputs: Vec<KernelInput<'_>> = kernels
            .iter()
            .zip(groups.iter().zip(&hints))
            .map(|((_, name, _, key), (impls, hint))| KernelInput {
                name,
                impls: impls.iter().map(|r| &r.g).collect(),
                opts: KernelOptions {
                    hint: hint.as_ref().map(|r| &r.g),
                    cache_key: key.clone(),
                },
            })
            .collect();
        let t = &target.t;
        crate::errors::enter(py, || {
            gen_kernels(&inputs, t)
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
        })
    })
}

fn multi_group(name: &str) -> PyErr {
    py_err(ascendir_asc::AscError::InvalidArgument(format!(
        "kernel '{name}': generate_kernel takes one schedule group's ImplGraphs"
    )))
}

/// A CANN-free `kernel_tiling/kernel_tiling.h` (API tiling structs as `uint32_t` fields).
#[pyfunction]
fn kernel_tiling_stub() -> PyResult<String> {
    crate::errors::guard(ascendir_codegen::tiling_data::kernel_tiling_stub)
}

/// Register the `codegen` submodule.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let sub = PyModule::new(m.py(), "codegen")?;
    sub.add_function(wrap_pyfunction!(tiling_data_header, &sub)?)?;
    sub.add_function(wrap_pyfunction!(tiling_fields, &sub)?)?;
    sub.add_function(wrap_pyfunction!(generate_kernel, &sub)?)?;
    sub.add_function(wrap_pyfunction!(generate_kernels, &sub)?)?;
    sub.add_function(wrap_pyfunction!(kernel_tiling_stub, &sub)?)?;
    m.add_submodule(&sub)?;
    Ok(())
}
