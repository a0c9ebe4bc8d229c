//! Text printers of the generated kernel files (GE's codegen, spec compiler.md §5):
//! [`tiling_data`] (`autofuse_tiling_data.h`), [`host`] (`<name>_tiling_func.cpp`,
//! `<name>_infershape.cpp`, `ascendir_tiling_rt.h`), [`ascendc`] (`<name>_op_kernel.cpp`) and
//! [`meta`] (`<name>.json`).

pub mod tiling_data;
