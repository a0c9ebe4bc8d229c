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
#[cfg(test)]
mod tests;

pub use parse::{parse_model_def, parse_to_bytes};
pub use print::{format_float, print_bytes, print_model_def};
