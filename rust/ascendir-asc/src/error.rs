//! The error type of the AscGraph engine.

use crate::expr::{EvalError, ParseError};

/// Every failure of the AscGraph engine; messages name the node, tensor and axis involved.
#[derive(Clone, Debug, thiserror::Error)]
pub enum AscError {
    /// A malformed argument (wrong axis type, duplicate id, bad length, ...).
    #[error("{0}")]
    InvalidArgument(String),
    /// An unknown node, axis, size variable, port or operator.
    #[error("{0}")]
    NotFound(String),
    /// `check()` found broken invariants; `problems` lists every one.
    #[error("{message}")]
    Validation {
        /// Summary.
        message: String,
        /// Every problem found.
        problems: Vec<String>,
    },
    /// An AscIR registration problem.
    #[error("{0}")]
    Registry(String),
    /// Data type inference failed.
    #[error("{0}")]
    Inference(String),
    /// Malformed serialized bytes.
    #[error("{message}")]
    Decode {
        /// What was wrong.
        message: String,
        /// Field path, when known.
        path: Option<String>,
    },
    /// An expression did not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// An expression could not be evaluated.
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// Result alias of the engine.
pub type AscResult<T> = Result<T, AscError>;

pub(crate) fn invalid<T>(msg: impl Into<String>) -> AscResult<T> {
    Err(AscError::InvalidArgument(msg.into()))
}

pub(crate) fn not_found<T>(msg: impl Into<String>) -> AscResult<T> {
    Err(AscError::NotFound(msg.into()))
}
