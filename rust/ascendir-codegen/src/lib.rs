//! Text printers of the generated kernel files (GE's codegen, spec compiler.md §5):
//! [`tiling_data`] (`autofuse_tiling_data.h`), [`host`] (`<name>_tiling_func.cpp`,
//! `<name>_infershape.cpp`, `ascendir_tiling_rt.h`), [`ascendc`] (`<name>_op_kernel.cpp`) and
//! [`meta`] (`<name>.json`), with the shipped headers; the kernel plan every printer reads ([`plan`]) and the CPU C++
//! verification target ([`cpu`], `<name>_cpu.cpp`).
//!
//! The printers read the AscGraph engine (`ascendir-asc`): allocated ImplGraphs, their
//! containers and the tiling problem; the engine itself knows nothing of them.
#![deny(missing_docs)]

pub mod ascendc;
pub mod ascendc_api;
mod ascendc_calls;
pub mod ascendc_expr;
mod ascendc_reduce;
mod ascendc_sync;
pub mod cexpr;
pub mod cpu;
pub mod host;
pub mod meta;
pub mod numeric;
pub mod plan;
mod text;
pub mod tiling_data;

pub use cpu::{
    generate as generate_cpu, generate_with as generate_cpu_with, CpuKernel, GmArg, RUNTIME_HEADER,
};
pub use plan::KernelPlan;
pub use tiling_data::{tiling_data_header, tiling_fields, TilingField};

use ascendir_asc::alloc::{Container, TensorBytes};
use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::tiling::TilingProblem;

/// File name of the CPU runtime header [`RUNTIME_HEADER`].
pub const CPU_RT_HEADER_NAME: &str = "ascendir_cpu_rt.h";

/// Path (relative to the kernel directory) of the CANN-free `kernel_tiling.h` stub.
pub const KERNEL_TILING_STUB_NAME: &str = "kernel_tiling/kernel_tiling.h";
use ascendir_asc::graph::AscGraph;
use ascendir_asc::target::Target;

/// What [`generate_kernel`] needs besides the ImplGraphs.
#[derive(Clone, Debug, Default)]
pub struct KernelOptions<'a> {
    /// The HintGraph the templates were scheduled from (its Data / Output views give the
    /// kernel's input and output shapes); without it the first ImplGraph's are used.
    pub hint: Option<&'a AscGraph>,
    /// Recorded in `<name>.json`.
    pub cache_key: Option<String>,
}

/// Every generated file of kernel `name` (file name → text, sorted by name) for one schedule
/// group whose templates are `impls` (allocated ImplGraphs in `tiling_key` order).
pub fn generate_kernel(
    name: &str,
    impls: &[&AscGraph],
    target: &Target,
    opts: &KernelOptions<'_>,
) -> AscResult<Vec<(String, String)>> {
    if impls.is_empty() {
        return Err(AscError::InvalidArgument(format!(
            "kernel '{name}': no ImplGraph to generate"
        )));
    }
    if !is_c_ident(name) {
        return Err(AscError::InvalidArgument(format!(
            "kernel name '{name}' is not a C identifier"
        )));
    }
    let io = host::KernelIo::of(opts.hint.unwrap_or(impls[0]));
    // One tensor-byte memo, plan and container list per ImplGraph, read by every printer.
    let bytes: Vec<TensorBytes> = impls
        .iter()
        .map(|g| TensorBytes::new(g, target.block_size))
        .collect();
    let mut plans: Vec<KernelPlan> = Vec::with_capacity(impls.len());
    let mut containers: Vec<Vec<Container>> = Vec::with_capacity(impls.len());
    for b in &bytes {
        let (p, c) = KernelPlan::build_shared(b)?;
        plans.push(p);
        containers.push(c);
    }
    // The CPU kernel computes the TilingData layout and header the other files print.
    let cpu = cpu::generate_planned(name, impls, &plans, false)?;
    let fields = &cpu.fields;
    let problem = |k: usize| TilingProblem::from_parts(&bytes[k], &containers[k], target);
    let mut files = vec![
        ("autofuse_tiling_data.h".to_string(), cpu.tiling_header),
        (
            format!("{name}_tiling_func.cpp"),
            host::tiling_func_source_with(name, impls, fields, &problem)?,
        ),
        (
            format!("{name}_infershape.cpp"),
            host::infershape_source(name, &io)?,
        ),
        (
            format!("{name}_op_kernel.cpp"),
            ascendc::kernel_source(name, &plans, &io)?,
        ),
        (format!("{name}_cpu.cpp"), cpu.source),
        (
            format!("{name}.json"),
            meta::kernel_json(name, &io, &plans, fields, opts.cache_key.as_deref()),
        ),
        (
            host::TILING_RT_HEADER_NAME.to_string(),
            host::TILING_RT_HEADER.to_string(),
        ),
        (CPU_RT_HEADER_NAME.to_string(), RUNTIME_HEADER.to_string()),
        (
            KERNEL_TILING_STUB_NAME.to_string(),
            tiling_data::kernel_tiling_stub(),
        ),
    ];
    files.sort();
    Ok(files)
}

/// One kernel of a [`generate_kernels`] call: its name, its templates (allocated ImplGraphs
/// in `tiling_key` order) and its options.
#[derive(Clone, Debug)]
pub struct KernelInput<'a> {
    /// The kernel's name (a C identifier).
    pub name: &'a str,
    /// The templates of its schedule group.
    pub impls: Vec<&'a AscGraph>,
    /// The HintGraph and cache key.
    pub opts: KernelOptions<'a>,
}

/// [`generate_kernel`] of every kernel of a model, in input order. The kernels are independent,
/// so they are generated on the package's helper threads (`ascendir_ir::threads::par_map`:
/// `set_num_threads(1)` keeps them on the calling thread); each result is exactly what
/// [`generate_kernel`] gives for that kernel alone.
pub fn generate_kernels(
    kernels: &[KernelInput<'_>],
    target: &Target,
) -> Vec<AscResult<Vec<(String, String)>>> {
    ascendir_ir::threads::par_map(kernels.iter().collect(), |k| {
        generate_kernel(k.name, &k.impls, target, &k.opts)
    })
}

/// Whether `s` is a C identifier (a letter or `_`, then letters, digits or `_`).
pub(crate) fn is_c_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}
