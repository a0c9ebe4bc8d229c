//! Code generation from scheduled ImplGraphs: the kernel plan every printer reads, and the
//! printers (the TilingData layout, the CPU C++ verification target).

pub mod cexpr;
pub mod cpu;
pub mod plan;
pub mod tiling_data;

pub use cpu::{generate as generate_cpu, CpuKernel, GmArg, RUNTIME_HEADER};
pub use plan::KernelPlan;
pub use tiling_data::{tiling_data_header, tiling_fields, TilingField};
