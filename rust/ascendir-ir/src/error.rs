//! The structured error type of the graph IR.

use thiserror::Error;

/// Every way an IR operation can fail. Each message names the node, anchor or field involved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IrError {
    /// An argument is malformed (bad index, unknown name, wrong kind).
    #[error("{0}")]
    InvalidArgument(String),
    /// A node id no longer resolves: the node was removed.
    #[error("stale node handle: {0}")]
    StaleHandle(String),
    /// A lookup by name or index found nothing.
    #[error("{0}")]
    NotFound(String),
    /// A name that must be unique is taken.
    #[error("{0}")]
    Duplicate(String),
    /// A link or unlink violates the anchor rules.
    #[error("{0}")]
    Link(String),
    /// The graph has a cycle; `nodes` lists one cycle in order.
    #[error("graph '{graph}' has a cycle: {}", nodes.join(" -> "))]
    Cycle {
        /// The graph that was being sorted.
        graph: String,
        /// The node names of one cycle, in edge order.
        nodes: Vec<String>,
    },
    /// The verifier found broken invariants (one message each).
    #[error("graph '{graph}' is invalid:\n  {}", problems.join("\n  "))]
    Validation {
        /// The graph that was checked.
        graph: String,
        /// Every problem found.
        problems: Vec<String>,
    },
    /// An arithmetic result does not fit (element counts, byte sizes).
    #[error("{0}")]
    Overflow(String),
}

/// Shorthand for results of IR operations.
pub type IrResult<T> = Result<T, IrError>;
