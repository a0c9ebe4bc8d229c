//! Text printers of the generated kernel files (GE's codegen, spec compiler.md §5):
//! [`tiling_data`] (`autofuse_tiling_data.h`), [`host`] (`<name>_tiling_func.cpp`,
//! `<name>_infershape.cpp`, `ascendir_tiling_rt.h`), [`ascendc`] (`<name>_op_kernel.cpp`) and
//! [`meta`] (`<name>.json`); the kernel plan every printer reads ([`plan`]) and the CPU C++
//! verification target ([`cpu`], `<name>_cpu.cpp`).

pub mod cexpr;
pub mod cpu;
pub mod host;
pub mod numeric;
pub mod plan;
pub mod tiling_data;

pub use cpu::{generate as generate_cpu, CpuKernel, GmArg, RUNTIME_HEADER};
pub use plan::KernelPlan;
pub use tiling_data::{tiling_data_header, tiling_fields, TilingField};

use crate::error::{AscError, AscResult};
use crate::graph::AscGraph;
use crate::target::Target;

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
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
        || name.is_empty()
    {
        return Err(AscError::InvalidArgument(format!(
            "kernel name '{name}' is not a C identifier"
        )));
    }
    let io = host::KernelIo::of(opts.hint.unwrap_or(impls[0]));
    let mut files = vec![
        (
            "autofuse_tiling_data.h".to_string(),
            tiling_data::tiling_data_header(name, impls),
        ),
        (
            format!("{name}_tiling_func.cpp"),
            host::tiling_func_source(name, impls, target)?,
        ),
        (
            format!("{name}_infershape.cpp"),
            host::infershape_source(name, &io)?,
        ),
        (
            host::TILING_RT_HEADER_NAME.to_string(),
            host::TILING_RT_HEADER.to_string(),
        ),
    ];
    files.sort();
    Ok(files)
}
