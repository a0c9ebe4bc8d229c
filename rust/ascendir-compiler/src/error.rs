//! The compiler's one error type: the stage that failed, the node (when one is to blame) and
//! the reason.

use std::fmt;

/// A pipeline stage name, as reported by [`CompileError::stage`] and the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// 0: reading the model.
    Load,
    /// 1: `validate()`.
    Validate,
    /// 2: shape inference.
    Infer,
    /// 3: symbols for unknown dims, symbolic shapes.
    Symbolize,
    /// 4: folding, pruning, CSE, no-op removal.
    Simplify,
    /// 5: per-node lowering.
    Lower,
    /// 6: clustering.
    Fuse,
    /// 7: HintGraphs and AscBackend nodes.
    Realize,
    /// 8: scheduling and UB allocation.
    Schedule,
    /// 9: tiling.
    Tile,
    /// 12: order and package.
    Package,
}

impl Stage {
    /// Every stage in pipeline order.
    pub const ALL: [Stage; 11] = [
        Stage::Load,
        Stage::Validate,
        Stage::Infer,
        Stage::Symbolize,
        Stage::Simplify,
        Stage::Lower,
        Stage::Fuse,
        Stage::Realize,
        Stage::Schedule,
        Stage::Tile,
        Stage::Package,
    ];

    /// The stage's name (`"load"`, `"fuse"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Load => "load",
            Stage::Validate => "validate",
            Stage::Infer => "infer",
            Stage::Symbolize => "symbolize",
            Stage::Simplify => "simplify",
            Stage::Lower => "lower",
            Stage::Fuse => "fuse",
            Stage::Realize => "realize",
            Stage::Schedule => "schedule",
            Stage::Tile => "tile",
            Stage::Package => "package",
        }
    }

    /// The stage's number in the spec's pipeline table (dump file prefix).
    pub fn number(self) -> u32 {
        match self {
            Stage::Load => 0,
            Stage::Validate => 1,
            Stage::Infer => 2,
            Stage::Symbolize => 3,
            Stage::Simplify => 4,
            Stage::Lower => 5,
            Stage::Fuse => 6,
            Stage::Realize => 7,
            Stage::Schedule => 8,
            Stage::Tile => 9,
            Stage::Package => 12,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a model did not compile.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct CompileError {
    /// The stage that failed.
    pub stage: Stage,
    /// The node to blame, when there is one.
    pub node: Option<String>,
    /// What went wrong.
    pub reason: String,
    /// Byte offset in the model file, for load errors the decoder located.
    pub offset: Option<usize>,
}

impl CompileError {
    /// An error of `stage` about the whole model.
    pub fn new(stage: Stage, reason: impl Into<String>) -> CompileError {
        CompileError {
            stage,
            node: None,
            reason: reason.into(),
            offset: None,
        }
    }

    /// An error of `stage` about node `node`.
    pub fn at(stage: Stage, node: &str, reason: impl Into<String>) -> CompileError {
        CompileError {
            stage,
            node: Some(node.to_string()),
            reason: reason.into(),
            offset: None,
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Some(n) => write!(f, "{} failed at node '{n}': {}", self.stage, self.reason),
            None => write!(f, "{} failed: {}", self.stage, self.reason),
        }
    }
}

/// Result alias of the compiler.
pub type CompileResult<T> = Result<T, CompileError>;
