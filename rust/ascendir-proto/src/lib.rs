//! GE `ge_ir.proto` interop: ModelDef binary and text format, OM containers, and the conversion
//! between ascendir graphs and ModelDef messages.
//!
//! * [`decode_model`] / [`encode_model`]: binary `ModelDef` ⇄ [`Model`] (root graphs with their
//!   subgraphs, model attributes).
//! * [`decode_graph`] / [`encode_graph`]: the same for a single graph.
//! * [`text`]: GE's text dumps (`ge_proto_*.txt`, protobuf text format of `ModelDef`).
//! * [`readable`]: GE's readable dumps (`ge_readable*.txt`), printed and read back.
//! * [`ge_onnx`]: GE's ONNX dumps (`ge_onnx*.pbtxt`), printed and read back.
//! * [`om`]: GE model files (`.om`) with MODEL_DEF and WEIGHTS_DATA partitions.
#![deny(missing_docs)]

/// The prost types of `ge_ir.proto` (package `ge.proto`). `attr_groups` fields are opaque bytes.
#[allow(missing_docs, clippy::all, missing_debug_implementations)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/ge.proto.rs"));
}

mod byte_cache;
pub mod convert;
pub mod error;
pub mod ge_onnx;
/// How much memory the process may still take (moved to the IR crate, shared with the ONNX
/// import).
pub use ascendir_ir::memory;
pub mod om;
pub mod readable;
pub mod text;
pub mod wire;
mod write;

use ascendir_ir::Graph;

pub use convert::{Model, ModelMeta};
pub use error::{ProtoError, ProtoResult};

/// Decode a binary `ModelDef` into a model.
pub fn decode_model(data: &[u8]) -> ProtoResult<Model> {
    decode_model_bytes(bytes::Bytes::copy_from_slice(data))
}

/// Decode a binary `ModelDef` held in shared bytes (byte payloads are not copied).
pub fn decode_model_bytes(data: bytes::Bytes) -> ProtoResult<Model> {
    decode_with(data, false)
}

/// Decode `data`, with the one-pass op and desc decoders or (`reference`) the reference one.
fn decode_with(data: bytes::Bytes, reference: bool) -> ProtoResult<Model> {
    let ops = wire::precheck_ops(&data)?;
    error::reserve_probe(
        data.len().saturating_mul(error::DECODE_RESERVE_PER_BYTE),
        ops.saturating_mul(error::DECODE_RESERVE_PER_OP),
        &format!("decode a model of {} bytes and {ops} ops", data.len()),
    )?;
    let def = wire::parse_model_def_bytes(data.clone())?;
    convert::model_value(def, convert::DecodeCtx::new(&data, reference))
}

/// The reference decoder: every op and desc decoded by prost into messages, then converted.
/// It gives the same graphs and the same errors as [`decode_model`], only slower; the tests
/// check the one-pass decoder against it (`tests/fuzz_decode.rs`). Not for production use.
#[doc(hidden)]
pub mod reference {
    use super::*;

    /// [`decode_model`](super::decode_model) with the reference decoder.
    pub fn decode_model(data: &[u8]) -> ProtoResult<Model> {
        decode_with(bytes::Bytes::copy_from_slice(data), true)
    }
}

/// Decode a binary `ModelDef` and return its main graph (with its subgraphs).
pub fn decode_graph(data: &[u8]) -> ProtoResult<Graph> {
    first_graph(decode_model(data)?)
}

/// The main graph of a model.
pub fn first_graph(model: Model) -> ProtoResult<Graph> {
    model
        .graphs
        .into_iter()
        .next()
        .ok_or_else(|| ProtoError::invalid("graph", "the model has no graph"))
}

/// Encode a model as a binary `ModelDef`.
pub fn encode_model(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Vec<u8>> {
    convert::model_to_bytes(meta, graphs)
}

/// Encode one graph (and its subgraphs) as a binary `ModelDef` named after the graph, with
/// GE's default model attributes.
pub fn encode_graph(graph: &Graph) -> ProtoResult<Vec<u8>> {
    Ok(encode_graph_pieces(graph)?.concat())
}

/// `encode_graph` in pieces, for a caller that copies them into a buffer of its own (saves
/// joining them first).
pub fn encode_graph_pieces(graph: &Graph) -> ProtoResult<convert::Pieces> {
    convert::model_pieces(
        &ModelMeta::new(graph.name()),
        &convert::with_subgraphs(&[graph]),
    )
}

/// The subgraphs of `root` that descend from its subgraph `name` (children, grandchildren, …),
/// in registration order.
pub fn descendants<'a>(root: &'a Graph, name: &str) -> Vec<&'a Graph> {
    let mut keep: Vec<&str> = vec![name];
    let mut out: Vec<&Graph> = Vec::new();
    let mut changed = true;
    while changed {
        changed = false;
        for s in &root.subgraphs {
            let inside = s
                .parent
                .as_ref()
                .is_some_and(|p| keep.contains(&p.graph.as_str()));
            if inside && !keep.contains(&s.name()) {
                keep.push(s.name());
                changed = true;
            }
        }
    }
    for s in &root.subgraphs {
        if s.name() != name && keep.contains(&s.name()) {
            out.push(s);
        }
    }
    out
}

/// Encode subgraph `name` of `root` as a model of its own: the subgraph first, then every
/// subgraph below it.
pub fn encode_subgraph(root: &Graph, name: &str) -> ProtoResult<Vec<u8>> {
    Ok(encode_subgraph_pieces(root, name)?.concat())
}

/// `encode_subgraph` in pieces.
pub fn encode_subgraph_pieces(root: &Graph, name: &str) -> ProtoResult<convert::Pieces> {
    let sub = root.subgraph(name).ok_or_else(|| {
        ProtoError::Encode(format!("graph '{}' has no subgraph '{name}'", root.name()))
    })?;
    let mut list = vec![sub];
    list.extend(descendants(root, name));
    convert::model_pieces(&ModelMeta::new(name), &list)
}
