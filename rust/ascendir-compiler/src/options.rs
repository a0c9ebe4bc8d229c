//! `CompileOptions`: what to fuse, the limits, the target. Serializable as JSON so a
//! batch task can carry them across processes.

use crate::error::{ErrorKind, KindResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Op families that can be switched on and off (`enable` / `disable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Element-wise ops (always on unless fusion is off).
    Elementwise,
    /// Broadcasting element-wise ops.
    Broadcast,
    /// Reductions, including the norm-like all-load ones (softmax, layer norm).
    Reduce,
    /// Concatenation.
    Concat,
    /// Strided slices.
    Slice,
    /// Transposes (GE: off by default).
    Transpose,
    /// Splits (off by default).
    Split,
    /// Gathers (off by default).
    Gather,
    /// Matrix-vector products computed on the vector unit (off by default).
    MatmulVector,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 9] = [
        Family::Elementwise,
        Family::Broadcast,
        Family::Reduce,
        Family::Concat,
        Family::Slice,
        Family::Transpose,
        Family::Split,
        Family::Gather,
        Family::MatmulVector,
    ];

    /// The family's option name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Elementwise => "elementwise",
            Family::Broadcast => "broadcast",
            Family::Reduce => "reduce",
            Family::Concat => "concat",
            Family::Slice => "slice",
            Family::Transpose => "transpose",
            Family::Split => "split",
            Family::Gather => "gather",
            Family::MatmulVector => "matmul_vector",
        }
    }

    /// The family called `name`.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the family is on by default (element-wise, broadcast, reduce, concat, slice).
    pub fn default_on(self) -> bool {
        matches!(
            self,
            Family::Elementwise
                | Family::Broadcast
                | Family::Reduce
                | Family::Concat
                | Family::Slice
        )
    }
}

/// Everything that steers a compile. Defaults as docs/COMPILER.md gives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompileOptions {
    /// Chip: `ascend910b`, `ascend910b3` or `ascend950`.
    pub target: String,
    /// Hints binding the dims of graph inputs: input name → dims (`-1` keeps a dim unknown).
    pub input_shapes: BTreeMap<String, Vec<i64>>,
    /// Whether to fuse at all.
    pub fusion: bool,
    /// Replace softmax attention (`BatchMatMul → scale → + mask → Softmax → BatchMatMul`) by
    /// GE's `FlashAttentionScore` library op before lowering.
    pub fuse_attention: bool,
    /// Families switched on in addition to the defaults.
    pub enable: Vec<Family>,
    /// Families switched off.
    pub disable: Vec<Family>,
    /// Most AscGraph nodes per kernel (GE's `max_fusion_size`).
    pub max_fusion_size: usize,
    /// Most distinct inputs per kernel.
    pub max_inputs: usize,
    /// Most outputs per kernel.
    pub max_outputs: usize,
    /// Most compute nodes after a (non norm-like) reduction in one kernel.
    pub max_reduce_epilogue: usize,
    /// Clusters with fewer compute ops are lifted back to their nodes.
    pub min_cluster_ops: usize,
    /// Duplicate cheap producers into several clusters (off, as in GE and Inductor).
    pub recompute: bool,
    /// Compute fp16/bf16 in fp32 inside kernels.
    pub improve_precision: bool,
    /// AscIR op types kept in their own dtype by the precision policy.
    pub precision_blacklist: Vec<String>,
    /// GE op types never lowered.
    pub skip_types: Vec<String>,
    /// Node names never lowered.
    pub skip_names: Vec<String>,
    /// Most fusion rounds.
    pub max_rounds: usize,
    /// Candidate partners per cluster and tensor.
    pub pair_attempts: usize,
    /// Least shared bytes for a horizontal pair.
    pub min_shared_bytes: i64,
    /// Value bound to a symbol that no hint binds.
    pub default_hint: i64,
    /// Rejected candidate pairs the report keeps, the most shared bytes first (`None`: all).
    /// Report-only: kernels and their cache keys do not depend on it.
    pub report_rejections: Option<usize>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            target: "ascend910b".into(),
            input_shapes: BTreeMap::new(),
            fusion: true,
            fuse_attention: true,
            enable: Vec::new(),
            disable: Vec::new(),
            max_fusion_size: 64,
            max_inputs: 8,
            max_outputs: 8,
            max_reduce_epilogue: 3,
            min_cluster_ops: 2,
            recompute: false,
            improve_precision: true,
            precision_blacklist: Vec::new(),
            skip_types: Vec::new(),
            skip_names: Vec::new(),
            max_rounds: 10,
            pair_attempts: 64,
            min_shared_bytes: 1,
            default_hint: 16,
            report_rejections: Some(1000),
        }
    }
}

impl CompileOptions {
    /// Whether family `f` is on.
    pub fn family_on(&self, f: Family) -> bool {
        if self.disable.contains(&f) {
            return false;
        }
        f.default_on() || self.enable.contains(&f)
    }

    /// Parse options from JSON (unknown fields are an error naming them).
    pub fn from_json(text: &str) -> KindResult<CompileOptions> {
        serde_json::from_str(text)
            .map_err(|e| ErrorKind::Options(format!("bad compile options: {e}")))
    }

    /// The options as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The options that decide the kernels, as JSON (the report-only ones at their
    /// defaults): what kernel cache keys hash.
    pub fn kernel_json(&self) -> String {
        CompileOptions {
            report_rejections: CompileOptions::default().report_rejections,
            ..self.clone()
        }
        .to_json()
    }

    /// Check the values (limits ≥ 1, a known target).
    pub fn check(&self) -> KindResult<()> {
        self.problem()
            .map_or(Ok(()), |p| Err(ErrorKind::Options(p)))
    }

    /// The first value out of range, described.
    fn problem(&self) -> Option<String> {
        if ascendir_asc::target::Target::by_name(&self.target).is_none() {
            return Some(format!(
                "unknown target '{}' (ascend910b, ascend910b3, ascend950)",
                self.target
            ));
        }
        for (name, v) in [
            ("max_fusion_size", self.max_fusion_size),
            ("max_inputs", self.max_inputs),
            ("max_outputs", self.max_outputs),
            ("pair_attempts", self.pair_attempts),
        ] {
            if v == 0 {
                return Some(format!("{name} must be at least 1"));
            }
        }
        if self.default_hint < 1 {
            return Some("default_hint must be at least 1".into());
        }
        for (name, dims) in &self.input_shapes {
            if let Some(d) = dims.iter().find(|&&d| d < -1) {
                return Some(format!(
                    "input_shapes['{name}'] has dim {d} (use -1 for unknown)"
                ));
            }
        }
        None
    }
}
