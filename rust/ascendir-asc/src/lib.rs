//! The AscGraph engine: symbolic size expressions, AscGraph data model, axis transforms,
//! scheduling of HintGraphs into ImplGraphs, the tiling solver and the UB allocator.
#![deny(missing_docs)]

pub mod expr;

pub use expr::{Expr, Rat, TriBool};
