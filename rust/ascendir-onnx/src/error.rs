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
    /// A value name defined twice in one graph, or a node output of a body that reuses a name
    /// of an enclosing graph: ONNX graphs are in static single assignment form.
    #[error("ONNX graph '{graph}' defines value '{value}' twice: {first} and {second}")]
    DuplicateValue {
        /// The graph (or body) holding the second definition.
        graph: String,
        /// The value name.
        value: String,
        /// The first definition (`graph input`, `initializer`, `node 'a' (Relu)`, or a value of
        /// an enclosing graph).
        first: String,
        /// The second definition.
        second: String,
    },
    /// An external data file of a tensor could not be found or read.
    #[error("external data of tensor '{tensor}': cannot read '{location}' (relative to the model directory): {message}")]
    ExternalData {
        /// The tensor (initializer or attribute tensor) whose payload is in the file.
        tensor: String,
        /// The file's location as the model gives it (relative to the model's directory).
        location: String,
        /// The kind of the I/O failure.
        kind: std::io::ErrorKind,
        /// The operating system's message.
        message: String,
    },
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
