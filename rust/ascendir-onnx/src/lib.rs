//! ONNX frontend of ascendir: decodes ONNX `ModelProto` bytes (our own `proto/onnx.proto`
//! subset, field numbers of the ONNX standard) straight into a [`Graph`](ascendir_ir::Graph),
//! mapping the standard-domain operators (opsets 11–21) to GE op types, ports and attributes,
//! and exports graphs made of those ops back to ONNX.
//!
//! * [`import_model`] — bytes → graph + [`ImportReport`]; initializer payloads are slices of the
//!   input buffer (no copy); external data is read range by range (exactly `offset..offset+length` of a regular file inside the model directory).
//! * [`export_model`] — graph → ONNX bytes.
//! * Malformed input yields [`OnnxError::Decode`] with the byte offset and the field path.
#![deny(missing_docs)]

mod composite;
pub mod error;
pub mod export;
mod export_legacy;
pub mod import;
pub mod ops;
pub mod types;
pub mod wire;

/// The prost types generated from `proto/onnx.proto`.
#[allow(
    missing_docs,
    clippy::all,
    clippy::pedantic,
    missing_debug_implementations
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));

    /// A text field stored as bytes (NodeProto names), as `&str`; `""` when it is not UTF-8
    /// (the importer rejects such nodes before reading them).
    pub fn text(b: &[u8]) -> &str {
        ascendir_wire::utf8(b).unwrap_or("")
    }
}

pub use error::{OnnxError, OnnxResult};
pub use export::{export_model, ExportOptions};
pub use import::{import_model, read_model_file, ImportOptions, ImportReport};
