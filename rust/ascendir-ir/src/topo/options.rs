//! How to sort: GE's `TopoSortingMode` and its option strings (`strtol` as GE parses them), memory
//! priority, and the options of one sort.

use crate::error::{IrError, IrResult};

/// GE's `TopoSortingMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TopoMode {
    /// Breadth first from the sources (`kBFS` = 0); GE's training default.
    Bfs = 0,
    /// Depth first from the sources (`kDFS` = 1); GE's inference default.
    #[default]
    Dfs = 1,
    /// Reverse DFS from the sinks, smallest producer first (`kRDFS` = 2).
    Rdfs = 2,
    /// Keep the current order where legal (`kStableRDFS` = 3).
    StableRdfs = 3,
}

impl TopoMode {
    /// Every mode, in GE's numbering.
    pub const ALL: [TopoMode; 4] = [
        TopoMode::Bfs,
        TopoMode::Dfs,
        TopoMode::Rdfs,
        TopoMode::StableRdfs,
    ];

    /// The snake-case name used by the Python API (`"bfs"`, `"dfs"`, `"rdfs"`, `"stable_rdfs"`).
    pub fn name(self) -> &'static str {
        match self {
            TopoMode::Bfs => "bfs",
            TopoMode::Dfs => "dfs",
            TopoMode::Rdfs => "rdfs",
            TopoMode::StableRdfs => "stable_rdfs",
        }
    }

    /// Parse a mode name (case-insensitive; `stablerdfs` and `stable-rdfs` accepted too).
    pub fn from_name(text: &str) -> IrResult<Self> {
        let t = text.trim().to_ascii_lowercase().replace('-', "_");
        Ok(match t.as_str() {
            "bfs" => TopoMode::Bfs,
            "dfs" => TopoMode::Dfs,
            "rdfs" | "reverse_dfs_from_sinks" => TopoMode::Rdfs,
            "stable_rdfs" | "stablerdfs" => TopoMode::StableRdfs,
            _ => {
                return Err(IrError::InvalidArgument(format!(
                    "unknown topological sorting mode '{text}' (expected bfs, dfs, rdfs or stable_rdfs)"
                )))
            }
        })
    }

    /// The mode with GE's number (0..=3).
    pub fn from_value(value: i64) -> Option<Self> {
        match value {
            0 => Some(TopoMode::Bfs),
            1 => Some(TopoMode::Dfs),
            2 => Some(TopoMode::Rdfs),
            3 => Some(TopoMode::StableRdfs),
            _ => None,
        }
    }

    /// GE's option lookup: `ge.topoSortingMode` parsed like C `strtol` (leading blanks, sign,
    /// digits; no digits → 0 ⇒ BFS; the value converted to a 32-bit enum); a value outside 0..=3
    /// (or an empty / absent option) falls back to `ge.graphRunMode`: `strtol ≥ 1` (training) →
    /// BFS, otherwise DFS.
    pub fn from_ge_options(topo_sorting_mode: Option<&str>, graph_run_mode: Option<&str>) -> Self {
        if let Some(text) = topo_sorting_mode.filter(|t| !t.is_empty()) {
            // GE casts the `long` to a 32-bit enum: keep the low 32 bits, as the compiler does.
            let value = strtol(text) as i32;
            if let Some(mode) = TopoMode::from_value(i64::from(value)) {
                return mode;
            }
        }
        if graph_run_mode.is_some_and(|t| strtol(t) >= 1) {
            TopoMode::Bfs
        } else {
            TopoMode::Dfs
        }
    }
}

/// C `strtol(text, nullptr, 10)`: leading whitespace, an optional sign, then decimal digits;
/// no digits → 0; saturates at the `long` range.
pub fn strtol(text: &str) -> i64 {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let mut value: i64 = 0;
    let mut saturated = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        let d = i64::from(bytes[i] - b'0');
        if !saturated {
            match value.checked_mul(10).and_then(|v| {
                if negative {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            }) {
                Some(v) => value = v,
                None => {
                    saturated = true;
                    value = if negative { i64::MIN } else { i64::MAX };
                }
            }
        }
        i += 1;
    }
    value
}

/// `ge.exec.memoryOptimizationPolicy`: exactly `"MemoryPriority"` enables memory priority.
pub fn memory_priority_from_ge_option(policy: Option<&str>) -> bool {
    policy == Some("MemoryPriority")
}

/// How to sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TopoOptions {
    /// The mode.
    pub mode: TopoMode,
    /// DFS only: visit the first-ready successor first (GE's `dfs_reverse`).
    pub reverse: bool,
    /// Pop the ready node with the smallest (data consumers, output bytes, name) key (BFS/DFS).
    pub memory_priority: bool,
    /// Apply `DelayTopoSort` afterwards: `None` = where GE does (RDFS always; BFS/DFS with
    /// memory priority), `Some(b)` forces it on or off.
    pub delay: Option<bool>,
}

impl TopoOptions {
    /// Options for `mode` with GE's defaults otherwise.
    pub fn new(mode: TopoMode) -> Self {
        TopoOptions {
            mode,
            ..TopoOptions::default()
        }
    }

    /// Whether `DelayTopoSort` runs.
    pub fn applies_delay(&self) -> bool {
        self.delay.unwrap_or(
            (self.memory_priority && self.mode != TopoMode::StableRdfs)
                || self.mode == TopoMode::Rdfs,
        )
    }
}
