//! PyTorch frontend of ascendir: converts a `torch.export` program, flattened into plain
//! arrays by the Python side, into a GE [`Graph`](ascendir_ir::Graph).
//!
//! * [`FxProgram`] — the flattened FX graph: node kinds, names, targets, an argument code
//!   stream, a tensor-metadata stream, a string table, constant payloads and the program's
//!   symbols (see [`program`] for the encoding).
//! * [`convert`] — the whole conversion, without Python: placeholders become `Data` / `Const`
//!   nodes, Core ATen calls GE ops with GE port and attribute names (see [`ops`]), the output
//!   node the `NetOutput`. Ops without a mapping are kept as `aten::<op>` nodes and reported.
//! * Errors name the FX node and its target ([`TorchError::Unsupported`]).
#![deny(missing_docs)]

pub mod build;
mod convert;
pub mod forms;
pub mod index;
pub mod nn;
pub mod ops;
pub mod program;
pub mod shape;
pub mod unit_axis;

pub use build::ImportReport;
pub use convert::convert;
pub use program::{Arg, FxNode, FxProgram, NodeKind, OutMeta, Symbol};

/// Errors of the PyTorch frontend.
#[derive(Debug, thiserror::Error)]
pub enum TorchError {
    /// The flattened program is malformed (a bad index or tag): a bug of the flattener.
    #[error("malformed flattened program: {0}")]
    Malformed(String),
    /// A construct the frontend cannot express, at FX node `node` with target `target`.
    #[error("FX node '{node}' (target {target}): {message}")]
    Unsupported {
        /// The FX node name.
        node: String,
        /// The FX node target (`aten.convolution.default`, `torch.ops.higher_order.cond`).
        target: String,
        /// What is unsupported.
        message: String,
    },
    /// Building the graph failed.
    #[error(transparent)]
    Ir(#[from] ascendir_ir::IrError),
}

/// `Result` with a [`TorchError`].
pub type TorchResult<T> = Result<T, TorchError>;

/// Graph attribute: the program's symbols in order (`s0`, `s1`, …).
pub const ATTR_SYMBOLS: &str = "_ascendir_torch_symbols";
/// Graph attribute: where each symbol comes from (`input 0 dim 0`), in symbol order.
pub const ATTR_SYMBOL_SOURCES: &str = "_ascendir_torch_symbol_sources";
/// Graph attribute: each symbol's range `[min, max]` (max `-1` when unbounded), in order.
pub const ATTR_SYMBOL_RANGES: &str = "_ascendir_torch_symbol_ranges";
/// Graph attribute: the range constraints and equalities as guards (`Ge(s0, 2)`).
pub const ATTR_GUARDS: &str = "_ascendir_torch_guards";
/// Graph attribute: distinct op types kept unmapped (`aten::<op>`).
pub const ATTR_UNKNOWN_OPS: &str = "_ascendir_torch_unknown_ops";
/// Node attribute of `Data` nodes: the symbolic shape, one expression per dim (`s0`, `3`).
pub const ATTR_SHAPE: &str = "_ascendir_torch_shape";
/// Node attribute: the `nn.Module` a node came from (`layer1.0.conv1 (torch.nn...Conv2d)`).
pub const ATTR_MODULE: &str = "_ascendir_torch_module";
/// Node attribute: the whole `nn_module_stack`, outermost first, one entry per level.
pub const ATTR_MODULE_STACK: &str = "_ascendir_torch_module_stack";
/// Node attribute: the user source location (`file.py:12 in forward`).
pub const ATTR_SOURCE: &str = "_ascendir_torch_source";
/// Node attribute: the FX target of the node (`aten.convolution.default`).
pub const ATTR_TARGET: &str = "_ascendir_torch_target";
/// Node attribute of unmapped `aten::<op>` nodes: the ATen schema string.
pub const ATTR_SCHEMA: &str = "_ascendir_torch_schema";
/// Node attribute of `Const` nodes: the parameter / buffer / constant name in the program.
pub const ATTR_PARAM: &str = "_ascendir_torch_param";
