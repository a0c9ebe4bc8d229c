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

use crate::error::{ProtoError, ProtoResult};

/// Text given as UTF-8 in which surrogate code points are allowed (what Python's
/// `str.encode("utf-8", "surrogatepass")` gives for a `str` holding lone surrogates): the text
/// when it is plain UTF-8, else [`ProtoError::LoneSurrogate`] naming the first surrogate's
/// character offset, line and column. Other invalid bytes are named as a text error.
pub fn text_from_surrogatepass(bytes: &[u8]) -> ProtoResult<&str> {
    let bad_at = match std::str::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e.valid_up_to(),
    };
    // The part before the first bad sequence is valid by construction.
    let before = std::str::from_utf8(&bytes[..bad_at]).unwrap_or_default();
    let character = before.chars().count();
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    match bytes.get(bad_at..bad_at + 3) {
        // A surrogate U+D800..U+DFFF in the three-byte form: ED A0..BF 80..BF.
        Some(&[0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF]) => Err(ProtoError::LoneSurrogate {
            code: 0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F),
            character,
            line,
            column,
        }),
        _ => Err(ProtoError::Text {
            line,
            column,
            offset: bad_at,
            message: "the text is not valid UTF-8".to_string(),
        }),
    }
}

pub use parse::{parse_model_def, parse_to_bytes, parse_with};
pub use print::{format_float, print_bytes, print_model_def, print_with};
