//! The AscGraph engine: symbolic size expressions, AscGraph data model, axis transforms,
//! scheduling of HintGraphs into ImplGraphs, the tiling solver and the UB allocator.
//!
//! Modules: [`expr`] (symbolic sizes), [`graph`] (data model), [`axis`], [`transform`]
//! (axis transforms and their log), [`registry`] (AscIR prototypes), [`check`] (validity),
//! [`dump`] (GE's text dump), [`infer`] (dtype inference), [`wire`] (protobuf serialization).
//! Kernel code generation from allocated ImplGraphs lives in the `ascendir-codegen` crate.
#![deny(missing_docs)]

pub mod axis;
pub mod builtins;
pub mod check;
pub mod dump;
pub mod error;
pub mod expr;
pub mod graph;
pub mod infer;
pub mod registry;
pub mod transform;
pub mod wire;

pub use axis::{Axis, AxisId, AxisType};
pub use error::{AscError, AscResult};
pub use expr::{Expr, Rat, TriBool};
pub use graph::{
    AllocType, ApiInfo, ApiType, AscGraph, AttrValue, ComputeType, ComputeUnit, ExecCondition,
    GraphType, MemAttr, MemHardware, Node, NodeAttr, NodeId, OutRef, Position, SchedInfo, Tensor,
    TmpBuffer,
};
pub use registry::{AttrDef, AttrType, OpDef, PortDef, PortKind, Registry};
pub use transform::{MergeReport, TransInfo, TransType, Transform};
pub mod alloc;
pub mod schedule;
pub mod target;
pub mod tiling;
