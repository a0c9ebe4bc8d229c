//! GE's ONNX dump (`ge_onnx*.pbtxt`, written with `DUMP_GRAPH_FORMAT=onnx`): an ONNX
//! `ModelProto` in protobuf text format, for Netron, whose nodes carry GE op types
//! (`op_type: "ge:Conv2D"`) and GE's attributes, tensor descriptors flattened into node
//! attributes (`input_desc_dtype:0`, `output_desc_shape:1`, ...).
//!
//! * [`print_ge_onnx`] writes a graph the way GE's `OnnxUtils::ConvertGeModelToModelProto`
//!   does at dump level 1 (`DUMP_GE_GRAPH=1`, everything): the graph goes through the GE
//!   `ModelDef` encoding first, so attributes and descriptors are GE's own serialized values.
//! * [`parse_ge_onnx`] reads such a text back: GE op types stay GE types (no ONNX op
//!   mapping), attributes come back with the kind GE's encoding gives them, descriptors from
//!   the desc attributes, edges from the `input` strings.
//!
//! What GE's writer does not emit (and so what a read graph lacks) is listed in
//! `docs/VIEWING.md`.

mod json;
mod read;
mod write;

#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

use crate::error::{ProtoError, ProtoResult};

pub use read::{model_def_from_onnx, parse_ge_onnx};
pub use write::{model_proto_of, print_ge_onnx, print_ge_onnx_flat};

/// The `ir_version` GE writes: `onnx::IR_VERSION` of GE's own `ge_onnx.proto` (6).
pub const GE_ONNX_IR_VERSION: i64 = 6;
/// The `producer_name` of GE's dump files (the name of the `ge::Model` GE dumps through).
pub const GE_ONNX_PRODUCER: &str = "GE";
/// The prefix GE puts before a node's GE op type, so that Netron does not take the node for
/// the ONNX op of that name.
pub const GE_OP_TYPE_PREFIX: &str = "ge:";
/// The `op_type` of the node GE adds to the main graph for each subgraph (its body in the
/// `graph` attribute).
pub const SUBGRAPH_NODE_TYPE: &str = "subgraph";
/// The attribute (not written by GE, see `docs/VIEWING.md`) that keeps an op's subgraph
/// instance names, so that a read graph knows which op owns which subgraph.
pub const SUBGRAPH_NAME_ATTR: &str = "subgraph_name";

/// The descriptor set of `onnx.proto` (compiled by the build script).
static ONNX_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/onnx_descriptor.bin"));

/// The descriptor of `onnx.ModelProto`.
fn model_descriptor() -> ProtoResult<MessageDescriptor> {
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(ONNX_DESCRIPTOR_SET).ok())
        .as_ref()
        .and_then(|p| p.get_message_by_name("onnx.ModelProto"))
        .ok_or_else(|| {
            ProtoError::Encode("no message onnx.ModelProto in the descriptor set".into())
        })
}

/// Whether `data` starts like an ONNX `ModelProto` in text format rather than GE's `ModelDef`
/// text: its first field (after blanks and `#` comments) is one that `ModelProto` has and
/// `ModelDef` has not (`ir_version`, `producer_name`, `opset_import`, ...), or it is `graph`
/// and the first field inside the graph that tells them apart is ONNX's `node` (or
/// `initializer`, `value_info`, `doc_string`, ...) rather than GE's `op` or `attr`.
pub fn looks_ge_onnx(data: &[u8]) -> bool {
    const ONNX_ONLY: &[&str] = &[
        "ir_version",
        "opset_import",
        "producer_name",
        "producer_version",
        "domain",
        "model_version",
        "doc_string",
        "metadata_props",
        "functions",
        "training_info",
    ];
    const ONNX_GRAPH_ONLY: &[&str] = &[
        "node",
        "initializer",
        "sparse_initializer",
        "doc_string",
        "value_info",
        "quantization_annotation",
        "metadata_props",
    ];
    let mut tokens = Tokens { data, pos: 0 };
    match tokens.ident() {
        Some(first) if ONNX_ONLY.contains(&first) => true,
        Some("graph") => {
            // Inside the graph block: the first field name that only one of the two has.
            if !tokens.open_block() {
                return false;
            }
            for _ in 0..64 {
                match tokens.ident() {
                    Some(f) if ONNX_GRAPH_ONLY.contains(&f) => return true,
                    Some("name" | "input" | "output") => {
                        if !tokens.skip_value() {
                            return false;
                        }
                    }
                    _ => return false,
                }
            }
            false
        }
        _ => false,
    }
}

/// A minimal scanner of protobuf text for [`looks_ge_onnx`].
struct Tokens<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Tokens<'a> {
    fn skip_blank(&mut self) {
        while let Some(&c) = self.data.get(self.pos) {
            if c == b'#' {
                while self.data.get(self.pos).is_some_and(|&c| c != b'\n') {
                    self.pos += 1;
                }
            } else if c.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        self.skip_blank();
        let start = self.pos;
        while self
            .data
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.pos += 1;
        }
        std::str::from_utf8(&self.data[start..self.pos])
            .ok()
            .filter(|s| !s.is_empty())
    }

    /// After a field name: `{`, `:{`, `<` or `: <`.
    fn open_block(&mut self) -> bool {
        self.skip_blank();
        if self.data.get(self.pos) == Some(&b':') {
            self.pos += 1;
            self.skip_blank();
        }
        let open = matches!(self.data.get(self.pos), Some(b'{' | b'<'));
        self.pos += usize::from(open);
        open
    }

    /// Skip the value after a field name: a scalar, a string or a whole block.
    fn skip_value(&mut self) -> bool {
        self.skip_blank();
        let mut depth = 0usize;
        if self.data.get(self.pos) == Some(&b':') {
            self.pos += 1;
            self.skip_blank();
        }
        loop {
            let Some(&c) = self.data.get(self.pos) else {
                return false;
            };
            self.pos += 1;
            match c {
                b'{' | b'<' | b'[' => depth += 1,
                b'}' | b'>' | b']' => {
                    depth = match depth.checked_sub(1) {
                        Some(d) => d,
                        None => return false,
                    };
                    if depth == 0 {
                        return true;
                    }
                }
                b'"' | b'\'' => {
                    while let Some(&s) = self.data.get(self.pos) {
                        self.pos += 1;
                        if s == b'\\' {
                            self.pos += 1;
                        } else if s == c {
                            break;
                        }
                    }
                    if depth == 0 {
                        return true;
                    }
                }
                b'\n' if depth == 0 => return true,
                _ => {}
            }
        }
    }
}
