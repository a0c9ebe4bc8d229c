//! The compiler's one error type: the stage that failed, the node (when one is to blame), the
//! reason, and its [`ErrorKind`] (what failed, with the cause kept).

use std::fmt;

use ascendir_asc::tiling::TilingError;
use ascendir_asc::AscError;
use ascendir_ir::infer::InferError;
use ascendir_ir::IrError;

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

/// What failed inside the compiler, with its cause: the kind of a [`CompileError`], and the
/// error of the compiler's internal steps (the pass that meets it adds the stage). Its text is
/// the error's reason.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The graph (`ascendir-ir`): a broken graph, a failed edit, a cycle.
    #[error("{0}")]
    Ir(Box<IrError>),
    /// Shape and dtype inference.
    #[error("{0}")]
    Infer(Box<InferError>),
    /// The AscGraph engine (`ascendir-asc`): building, encoding or renaming a kernel's graph.
    #[error("{0}")]
    Asc(Box<AscError>),
    /// Scheduling a kernel's HintGraph into ImplGraphs.
    #[error("schedule failed: {0}")]
    Schedule(Box<AscError>),
    /// No tiling of a kernel fits the target: the `constraint` that cannot be met (`"ub"`,
    /// `"cores"`, `"shape"` or `"model"`) and by how much (`excess`, bytes for `ub`).
    #[error("tiling failed: {message}")]
    Tiling {
        /// The constraint that cannot be met.
        constraint: String,
        /// By how much it is exceeded (0 when not numeric).
        excess: i64,
        /// The solver's message.
        message: String,
    },
    /// Building a cluster's HintGraph.
    #[error("realize failed: {0}")]
    Realize(String),
    /// Bad compile options (a malformed option set, a limit below 1, an unknown target).
    #[error("{0}")]
    Options(String),
    /// A lowering registered at run time was refused.
    #[error("{0}")]
    Lowering(String),
    /// A value does not fit its type (a folded constant, a size).
    #[error("{0}")]
    Overflow(String),
    /// The compile was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A pass run out of the pipeline's order, or at a point where it may not run (a compile
    /// driven one pass at a time).
    #[error("{0}")]
    Order(String),
    /// Anything else (bad options, a bad model, a refused rewrite), as text.
    #[error("{0}")]
    Other(String),
}

impl ErrorKind {
    /// The kind's name (`"ir"`, `"tiling"`, `"cancelled"`, ...), as the Python exception's
    /// `kind`.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::Ir(_) => "ir",
            ErrorKind::Infer(_) => "infer",
            ErrorKind::Asc(_) => "asc",
            ErrorKind::Schedule(_) => "schedule",
            ErrorKind::Tiling { .. } => "tiling",
            ErrorKind::Realize(_) => "realize",
            ErrorKind::Options(_) => "options",
            ErrorKind::Lowering(_) => "lowering",
            ErrorKind::Overflow(_) => "overflow",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Order(_) => "order",
            ErrorKind::Other(_) => "other",
        }
    }
}

/// Kinds are equal when they are of one kind and read the same.
impl PartialEq for ErrorKind {
    fn eq(&self, other: &ErrorKind) -> bool {
        self.name() == other.name() && self.to_string() == other.to_string()
    }
}

impl From<IrError> for ErrorKind {
    fn from(e: IrError) -> ErrorKind {
        ErrorKind::Ir(Box::new(e))
    }
}

impl From<InferError> for ErrorKind {
    fn from(e: InferError) -> ErrorKind {
        ErrorKind::Infer(Box::new(e))
    }
}

impl From<AscError> for ErrorKind {
    fn from(e: AscError) -> ErrorKind {
        ErrorKind::Asc(Box::new(e))
    }
}

impl From<TilingError> for ErrorKind {
    fn from(e: TilingError) -> ErrorKind {
        ErrorKind::Tiling {
            constraint: e.constraint,
            excess: e.excess,
            message: e.message,
        }
    }
}

impl From<String> for ErrorKind {
    fn from(e: String) -> ErrorKind {
        ErrorKind::Other(e)
    }
}

impl From<&str> for ErrorKind {
    fn from(e: &str) -> ErrorKind {
        ErrorKind::Other(e.to_string())
    }
}

/// Result alias of the compiler's internal steps.
pub type KindResult<T> = Result<T, ErrorKind>;

/// Why a model did not compile.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct CompileError {
    /// The stage that failed.
    pub stage: Stage,
    /// The node to blame, when there is one.
    pub node: Option<String>,
    /// What went wrong (the text of `kind`, unless given otherwise).
    pub reason: String,
    /// Byte offset in the model file, for load errors the decoder located.
    pub offset: Option<usize>,
    /// What failed, with its cause.
    pub kind: Box<ErrorKind>,
}

impl CompileError {
    /// An error of `stage` about the whole model.
    pub fn new(stage: Stage, reason: impl Into<String>) -> CompileError {
        let reason = reason.into();
        CompileError {
            stage,
            node: None,
            kind: Box::new(ErrorKind::Other(reason.clone())),
            reason,
            offset: None,
        }
    }

    /// An error of `stage` about node `node`.
    pub fn at(stage: Stage, node: &str, reason: impl Into<String>) -> CompileError {
        CompileError::new(stage, reason).with_node(node)
    }

    /// An error of `stage` of kind `kind` (its reason is the kind's text).
    pub fn from_kind(stage: Stage, kind: ErrorKind) -> CompileError {
        CompileError {
            stage,
            node: None,
            reason: kind.to_string(),
            offset: None,
            kind: Box::new(kind),
        }
    }

    /// The error about node `node`.
    pub fn with_node(mut self, node: &str) -> CompileError {
        self.node = Some(node.to_string());
        self
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
