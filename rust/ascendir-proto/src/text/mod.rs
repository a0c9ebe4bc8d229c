//! Protobuf text format of `ModelDef` (GE's `ge_proto_*.txt` dumps), read and written directly
//! between text and the binary wire format, driven by the message descriptors.
//!
//! The printer follows the C++ `TextFormat` printer GE uses: fields in wire (= field number)
//! order, two-space indentation, `name {` blocks for messages and map entries, `name: value` for
//! scalars, enum names, C-escaped strings (octal for non-printable and non-ASCII bytes) and
//! floats printed with `%.6g` (or `%.9g` when 6 digits do not round-trip).
//! The parser accepts the full text syntax used by protobuf (optional `:` before messages,
//! `<...>` blocks, `[a, b]` lists, adjacent string concatenation, `#` comments, numeric field
//! names for unknown fields).

mod parse;
mod print;

/// Deepest message nesting (the `ModelDef` at depth 0) the text printer and parser accept. The
/// binary reader decodes an attribute value (at most 5 messages below the `ModelDef`: model,
/// graph, op, tensor desc, map entry) with prost, which allows 100 nested messages below it: every
/// model the binary reader accepts is at most 105 deep, so it prints, and what prints parses back.
pub const MAX_TEXT_DEPTH: usize = 128;
#[cfg(test)]
mod tests;

pub use parse::{parse_model_def, parse_to_bytes};
pub use print::{format_float, print_bytes, print_model_def};
