//! Errors of the ONNX frontend.

use ascendir_ir::IrError;
use thiserror::Error;

/// Every way an ONNX import or export can fail.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OnnxError {
    /// The bytes are not a well-formed ONNX protobuf.
    #[error("malformed ONNX protobuf at byte {offset} ({path}): {message}")]
    Decode {
        /// Byte offset of the first bad field (from the start of the buffer).
        offset: usize,
        /// The field path down to it, e.g. `ModelProto.graph.node[3].attribute[0]`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The model decodes but is not a valid ONNX graph (dangling input, bad tensor size, ...).
    #[error("invalid ONNX model: {0}")]
    Invalid(String),
    /// A file (the model or an external data file) could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The graph cannot be expressed in ONNX (export).
    #[error("cannot export to ONNX: {0}")]
    Unsupported(String),
    /// The import would need more memory than the process can get (checked before it starts,
    /// against a fallible allocation and the address-space limit).
    #[error("out of memory: cannot reserve {needed} bytes to {what}")]
    OutOfMemory {
        /// The bytes asked for.
        needed: usize,
        /// What they were for.
        what: String,
    },
    /// A graph operation failed.
    #[error(transparent)]
    Ir(#[from] IrError),
}

/// Shorthand for results of the ONNX frontend.
pub type OnnxResult<T> = Result<T, OnnxError>;
