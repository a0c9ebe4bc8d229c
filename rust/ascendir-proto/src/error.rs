//! Errors of decoding and encoding. Every decode error names where the problem is: a byte
//! offset for malformed binary input, a field path (`graph[0].op[3](conv1).input[1]`) for a
//! well-formed message that does not describe a valid graph, a line and column for text.

use thiserror::Error;

/// Every way reading or writing a model can fail.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtoError {
    /// The bytes are not a valid protobuf encoding of the expected message.
    #[error("malformed protobuf at byte {offset} ({path}): {message}")]
    Wire {
        /// Byte offset of the offending tag or value.
        offset: usize,
        /// Field path of the message being read there.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A well-formed message that does not describe a valid graph (unknown edge source,
    /// missing subgraph, duplicate node name, bad dims, ...).
    #[error("invalid model at {path}: {message}")]
    Invalid {
        /// Field path of the offending value.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Protobuf text format that cannot be parsed.
    #[error("text format error at line {line}, column {column}: {message}")]
    Text {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Byte offset in the text.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// Text given with surrogate code points (a Python `str` holding a lone surrogate such as
    /// `"\ud800"`): the text format is UTF-8, which cannot hold them.
    #[error(
        "text holds a lone surrogate U+{code:04X} at character {character} (line {line}, \
         column {column}): the text format is UTF-8, which cannot encode it"
    )]
    LoneSurrogate {
        /// The surrogate code point.
        code: u32,
        /// 0-based character (code point) offset in the text.
        character: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// A readable dump (`ge_readable*.txt`) that cannot be read.
    #[error(transparent)]
    Readable(crate::readable::ReadableError),
    /// A malformed OM container.
    #[error("malformed OM file at byte {offset}: {message}")]
    Om {
        /// Byte offset of the offending header field or partition.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// A graph that cannot be written (e.g. two graphs of one model share a name).
    #[error("cannot encode: {0}")]
    Encode(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The memory a decode needs (estimated from the input size before it starts) cannot be
    /// had: the allocation was refused, so nothing was decoded.
    #[error("out of memory: cannot reserve {needed} bytes to {what}")]
    OutOfMemory {
        /// Bytes asked for.
        needed: usize,
        /// What they were for.
        what: String,
    },
}

impl ProtoError {
    /// A wire error found in a part of the input that starts at `offset`, with its offset made
    /// relative to the whole input (other errors are unchanged).
    pub fn shifted(self, offset: usize) -> ProtoError {
        match self {
            ProtoError::Wire {
                offset: at,
                path,
                message,
            } => ProtoError::Wire {
                offset: at.saturating_add(offset),
                path,
                message,
            },
            other => other,
        }
    }
}

/// How many bytes of memory a decode is expected to use per input byte, checked before it
/// starts, so that under memory pressure a decode fails with [`ProtoError::OutOfMemory`]
/// instead of running into an allocation failure halfway, which aborts the process. Constant
/// payloads are shared with the input, so weight-heavy models need about one byte per byte.
pub const DECODE_RESERVE_PER_BYTE: usize = 2;

/// Address space a decode is expected to need per op, beyond [`DECODE_RESERVE_PER_BYTE`]: an
/// op costs several hundred bytes once decoded however few bytes it takes on the wire (a named
/// op without descs is 17 bytes there), and the allocator maps about twice what it hands out.
/// Only compared with an address-space limit (`RLIMIT_AS`) when one is set.
pub const DECODE_RESERVE_PER_OP: usize = 3 << 10;

pub use ascendir_ir::memory::RESERVE_SLACK;

/// [`ascendir_ir::memory::reserve`] for a decode: [`ProtoError::OutOfMemory`] naming `what`
/// when `needed` bytes cannot be allocated now or `needed + address` (plus [`RESERVE_SLACK`])
/// do not fit under the address-space limit.
pub fn reserve_probe(needed: usize, address: usize, what: &str) -> ProtoResult<()> {
    ascendir_ir::memory::reserve(needed, address).map_err(|needed| ProtoError::OutOfMemory {
        needed,
        what: what.to_string(),
    })
}

impl ProtoError {
    /// An `Invalid` error at `path`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        ProtoError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Prefix the field path with `prefix` (used while unwinding out of nested messages).
    pub fn within(self, prefix: impl FnOnce() -> String) -> Self {
        match self {
            ProtoError::Invalid { path, message } => {
                let p = prefix();
                let path = if path.is_empty() {
                    p
                } else if path.starts_with('[') {
                    format!("{p}{path}")
                } else {
                    format!("{p}.{path}")
                };
                ProtoError::Invalid { path, message }
            }
            ProtoError::Wire {
                offset,
                path,
                message,
            } if !path.starts_with("ModelDef") => ProtoError::Wire {
                offset,
                path: format!("{}.{path}", prefix()),
                message,
            },
            other => other,
        }
    }

    /// The byte offset, when the error has one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            ProtoError::Wire { offset, .. } | ProtoError::Om { offset, .. } => Some(*offset),
            ProtoError::Text { offset, .. } => Some(*offset),
            ProtoError::LoneSurrogate { character, .. } => Some(*character),
            _ => None,
        }
    }

    /// The field path, when the error has one.
    pub fn path(&self) -> Option<&str> {
        match self {
            ProtoError::Wire { path, .. } | ProtoError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Shorthand for results of this crate.
pub type ProtoResult<T> = Result<T, ProtoError>;
