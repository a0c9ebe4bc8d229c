//! GE's readable dump (`ge_readable*.txt`): an FX-like text of a graph, one line per node with
//! its IR inputs and IR attributes, `get_element` lines for the outputs of multi-output nodes,
//! a `return (...)` line for the graph output and one section per subgraph.
//!
//! * [`print_readable`] writes a graph the way GE's `ReadableDump` does (byte for byte on
//!   GE's unit-test cases). IR input and attribute names come from the op's own record
//!   (`OpMeta::ir_inputs`, `ir_attr_names`, `subgraph_ir_names`), else from the registered
//!   prototype of its type; without either, inputs show as `_input_N` and no attribute shows,
//!   as in GE.
//! * [`parse_readable`] reads such a text back into a graph: nodes, op types, names, edges,
//!   graph outputs, subgraphs and the IR attributes shown. The format has no tensor
//!   descriptors: ports get GE's default desc, except that a `Const`'s output takes its
//!   value's dtype and shape. Values the format abbreviates cannot be recovered: see
//!   `docs/VIEWING.md` for what a read graph holds in their place.

mod build;
mod parse;
mod print;
mod value;

#[cfg(test)]
mod tests;

use ascendir_ir::{Graph, IrError};
use thiserror::Error;

pub use print::{print_readable, print_readable_from};
pub use value::{c_float, tensor_text};

/// Why a readable dump cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadableError {
    /// The text does not follow the format's grammar.
    #[error("readable dump syntax error at line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column (characters).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed lines that do not describe a graph (an unknown value name, an output index
    /// past the node's outputs, a subgraph without its section, ...).
    #[error("readable dump at line {line}, column {column}: {message}")]
    Graph {
        /// 1-based line.
        line: usize,
        /// 1-based column (characters).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The graph refused an edit the text asks for (a duplicate node name, ...).
    #[error("readable dump at line {line}, column {column}: {source}")]
    Ir {
        /// 1-based line.
        line: usize,
        /// 1-based column (characters).
        column: usize,
        /// The graph's error.
        #[source]
        source: IrError,
    },
}

impl ReadableError {
    /// The 1-based `(line, column)` the error is at.
    pub fn position(&self) -> (usize, usize) {
        match self {
            ReadableError::Syntax { line, column, .. }
            | ReadableError::Graph { line, column, .. }
            | ReadableError::Ir { line, column, .. } => (*line, *column),
        }
    }
}

/// Whether `data` starts like a readable dump: its first line that is not blank is a
/// `graph("...")` header. Protobuf text (GE's `ge_proto` dumps, ONNX text) starts with a field
/// name followed by `:` or `{`, never with `graph(`.
pub fn looks_readable(data: &[u8]) -> bool {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(data.len());
    data[start..].starts_with(b"graph(\"")
}

/// The graph (with its subgraphs) a readable dump describes; its first section is the root.
pub fn parse_readable(text: &str) -> Result<Graph, ReadableError> {
    build::build(parse::sections(text)?)
}
