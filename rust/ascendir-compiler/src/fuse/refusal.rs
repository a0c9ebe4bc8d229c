//! The fuse stage's refusals: why a pair was refused (its figures; the text is written only
//! for the refusals the report keeps), the log of a run's refusals, and the report's entry.

use serde::Serialize;

/// A refused pair: the first member of each side, the code and the reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rejection {
    /// First member (by topological order) of the earlier cluster.
    pub a: String,
    /// First member of the later cluster.
    pub b: String,
    /// GE's NF code or ours (AF2xxx).
    pub code: &'static str,
    /// The reason.
    pub reason: String,
    /// Bytes the pair shares (at the hints).
    pub bytes: i64,
}

/// A refusal: its code, its reason, the bytes the pair shares.
pub(super) type Refusal = (&'static str, Why, i64);

/// The refusals of the rounds.
#[derive(Debug, Default)]
pub(super) struct RefusalLog {
    /// Per refusal: the pair's roots, their versions then and its index in `refusals`; sorted
    /// at the end of each round, so a round's candidates (sorted too) are filtered against the
    /// earlier refusals by one merge walk (sequential, where hashing hundreds of thousands of
    /// pairs is random access).
    pub(super) keys: Vec<(u32, u32, u32, u32, usize)>,
    /// Code, reason and shared bytes, in the order refused.
    pub(super) refusals: Vec<Refusal>,
}

/// Why a pair was refused, with the figures of its text: the text is written only for the
/// refusals the report keeps (a large graph refuses hundreds of thousands of pairs).
#[derive(Clone, Debug)]
pub(crate) enum Why {
    /// A fixed text.
    Text(&'static str),
    /// A horizontal pair sharing these bytes, below `min_shared_bytes`.
    Horizontal(i64),
    /// AscGraph nodes of the fused kernel, above `max_fusion_size`.
    Size(usize, usize),
    /// Distinct inputs of the fused kernel, above `max_inputs`.
    Inputs(usize, usize),
    /// Outputs of the fused kernel, above `max_outputs`.
    Outputs(usize, usize),
    /// The attribute the clusters differ in.
    Label(&'static str),
    /// Compute nodes after the reduction, above `max_reduce_epilogue`.
    Epilogue(usize, usize),
    /// No common loop space, and why.
    LoopSpace(Box<str>),
    /// No cycle-free path proven within the search budget.
    Budget,
    /// The fused kernel does not schedule or tile, and why.
    Exact(Box<str>),
}

impl Why {
    /// The reason as the report words it.
    pub(crate) fn text(&self) -> String {
        match self {
            Why::Text(t) => (*t).to_string(),
            Why::Horizontal(b) => {
                format!("a horizontal pair sharing {b} bytes (< min_shared_bytes)")
            }
            Why::Size(n, max) => {
                format!("the fused kernel would have {n} AscGraph nodes (max_fusion_size {max})")
            }
            Why::Inputs(n, max) => {
                format!("the fused kernel would read {n} distinct inputs (max_inputs {max})")
            }
            Why::Outputs(n, max) => {
                format!("the fused kernel would write {n} outputs (max_outputs {max})")
            }
            Why::Label(key) => format!("the clusters differ in {key}"),
            Why::Epilogue(n, max) => {
                format!("{n} compute nodes after the reduction (max_reduce_epilogue {max})")
            }
            Why::LoopSpace(e) => format!("no common loop space: {e}"),
            Why::Budget => format!(
                "no cycle-free path proven within {} nodes between the clusters",
                super::reach::SEARCH_BUDGET
            ),
            Why::Exact(e) => format!("the fused kernel does not schedule or tile: {e}"),
        }
    }
}
