//! The ascendir graph compiler: `compile(graph, options)` lowers and fuses the vector regions
//! of a GE graph into AscBackend kernels — symbolize, simplify, lower, fuse, realize,
//! schedule + allocate, tile, order + package (spec `compiler.md` §1) — with a report that
//! explains every decision.
#![deny(missing_docs)]

pub mod archive;
pub mod attention;
pub mod batch;
pub mod cache;
pub mod error;
pub mod fold;
pub mod fuse;
pub mod kernel;
pub mod load;
pub mod loopspace;
pub mod lower;
pub mod model;
pub mod options;
pub mod package;
pub mod passes;
pub mod pipeline;
pub mod realize;
pub mod report;
mod rewrite;
mod shapes;
pub mod simplify;
pub mod split;
pub mod symbolize;
mod twins;
pub mod wide_rows;

pub use error::{CompileError, CompileResult, ErrorKind, Stage};
pub use model::{CompiledModel, Kernel};
pub use options::{CompileOptions, Family};
pub use passes::{CompileCtx, Pass, PassManager, PassRecord};
pub use pipeline::{compile, compile_with, pipeline, Control, KernelCache};
pub use report::Report;
