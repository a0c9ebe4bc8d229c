//! What a compile produces: the fused [`Kernel`]s and the [`CompiledModel`] (the compiled
//! graph, its kernels, the report and the stage dumps).

use ascendir_asc::tiling::TilingData;
use ascendir_ir::Graph;
use bytes::Bytes;

use crate::passes::PassRecord;
use crate::report::Report;

/// One fused kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The AscBackend node's name.
    pub name: String,
    /// `pointwise`, `reduce`, ...
    pub fuse_type: String,
    /// Names of the original nodes, topological.
    pub members: Vec<String>,
    /// Their types.
    pub member_types: Vec<String>,
    /// The HintGraph (`AscGraphDef` bytes, shared with the AscBackend node's attribute).
    pub hint: Bytes,
    /// Scheduled, allocated ImplGraphs (tiling-key order), as bytes.
    pub impls: Vec<Bytes>,
    /// The ImplGraphs' names.
    pub templates: Vec<String>,
    /// Nodes of the HintGraph.
    pub asc_nodes: usize,
    /// Tiling at the hints for the target.
    pub tiling: TilingData,
    /// Number of inputs and outputs.
    pub io: (usize, usize),
    /// Read+write bytes of the members before, and of the kernel after (at the hints).
    pub bytes: (i64, i64),
    /// AscIR compute nodes.
    pub compute_ops: usize,
    /// Content key: sha256 of HintGraph bytes, target, options and version.
    pub cache_key: String,
    /// The ImplGraphs came from the kernel cache (not scheduled in this compile).
    pub from_cache: bool,
}

/// The result of `compile`.
#[derive(Clone, Debug)]
pub struct CompiledModel {
    /// The compiled graph (clusters replaced by AscBackend nodes).
    pub graph: Graph,
    /// Kernels in cluster order.
    pub kernels: Vec<Kernel>,
    /// The report.
    pub report: Report,
    /// Stage dumps (file name → text) when asked for.
    pub dumps: Vec<(String, String)>,
    /// Every pass run, in order: its time, whether it changed the graph, its node counts.
    pub passes: Vec<PassRecord>,
}
