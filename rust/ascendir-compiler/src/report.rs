//! The compile report: stage times, node and byte counts, kernels, refused pairs,
//! barriers by GE's categories, lifted clusters, symbols and guards — as JSON, text and DOT.

use std::collections::BTreeMap;

use ascendir_ir::{Graph, NodeId};
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::{json, Value};

use crate::error::Stage;
use crate::fuse::{Partition, Rejection};
use crate::lower::{is_plumbing, Decision, Decisions};
use crate::model::Kernel;
use crate::simplify::SimplifyStats;
use crate::symbolize::SymTable;

/// A cluster lifted back to its nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lifted {
    /// Member names.
    pub members: Vec<String>,
    /// Why.
    pub reason: String,
}

impl Lifted {
    /// A lifted cluster.
    pub fn new(members: Vec<String>, reason: String) -> Lifted {
        Lifted { members, reason }
    }
}

/// A node that was not lowered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BarrierInfo {
    /// Node name.
    pub name: String,
    /// Op type.
    pub op_type: String,
    /// GE's category text.
    pub category: String,
    /// Reason.
    pub reason: String,
}

/// Collect the barriers (graph plumbing excluded) in topological order.
pub fn barriers(g: &Graph, order: &[NodeId], d: &Decisions) -> Vec<BarrierInfo> {
    let mut v = Vec::new();
    for id in order {
        let Ok(op) = g.op(*id) else { continue };
        if is_plumbing(op.op_type()) {
            continue;
        }
        if let Some(Decision::Barrier(b)) = d.get(id) {
            v.push(BarrierInfo {
                name: op.name().to_string(),
                op_type: op.op_type().to_string(),
                category: b.category.text().to_string(),
                reason: b.reason.clone(),
            });
        }
    }
    v
}

/// The report of one compile.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Target chip.
    pub target: String,
    /// Seconds per stage, pipeline order.
    pub stages: Vec<(Stage, f64)>,
    /// Nodes before and after.
    pub nodes: (usize, usize),
    /// Total read+write bytes before and after (at the hints).
    pub bytes: (i64, i64),
    /// Per kernel: JSON summaries.
    pub kernels: Vec<Value>,
    /// Refused pairs, most bytes first.
    pub rejections: Vec<Rejection>,
    /// Barriers.
    pub barriers: Vec<BarrierInfo>,
    /// Lifted clusters.
    pub lifted: Vec<Lifted>,
    /// Symbol → (hint, source).
    pub symbols: BTreeMap<String, (i64, String)>,
    /// Guards.
    pub guards: Vec<String>,
    /// Stage 4 counts.
    pub simplify: SimplifyStats,
    /// Fusion rounds run.
    pub rounds: usize,
}

fn kernel_json(k: &Kernel) -> Value {
    let sizes: BTreeMap<&str, i64> = k
        .tiling
        .sizes
        .iter()
        .map(|(n, v)| (n.as_str(), *v))
        .collect();
    json!({
        "name": k.name,
        "fuse_type": k.fuse_type,
        "members": k.members,
        "member_types": k.member_types,
        "inputs": k.io.0,
        "outputs": k.io.1,
        "asc_nodes": k.asc_nodes,
        "compute_ops": k.compute_ops,
        "bytes_before": k.bytes.0,
        "bytes_after": k.bytes.1,
        "bytes_saved": k.bytes.0 - k.bytes.1,
        "templates": k.templates,
        "tiling": {
            "graph": k.tiling.graph,
            "tiling_key": k.tiling.tiling_key,
            "block_dim": k.tiling.block_dim,
            "ub_used": k.tiling.ub_used,
            "ub_size": k.tiling.ub_size,
            "sizes": sizes,
        },
        "cache_key": k.cache_key,
        "from_cache": k.from_cache,
    })
}

impl Report {
    /// Assemble the report.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        kernels: &[Kernel],
        partition: &Partition,
        barriers: Vec<BarrierInfo>,
        lifted: Vec<Lifted>,
        syms: &SymTable,
        stages: Vec<(Stage, f64)>,
        nodes: (usize, usize),
        bytes: (i64, i64),
        simplify: SimplifyStats,
        target: &str,
    ) -> Report {
        Report {
            target: target.to_string(),
            stages,
            nodes,
            bytes,
            kernels: kernels.iter().map(kernel_json).collect(),
            rejections: partition.rejections.clone(),
            barriers,
            lifted,
            symbols: syms
                .hints
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        (*v, syms.sources.get(k).cloned().unwrap_or_default()),
                    )
                })
                .collect(),
            guards: syms.guards.clone(),
            simplify,
            rounds: partition.rounds,
        }
    }

    /// Total seconds of the stages.
    pub fn total_seconds(&self) -> f64 {
        self.stages.iter().map(|(_, t)| t).sum()
    }

    /// Barriers grouped: category → op type → count.
    pub fn barrier_groups(&self) -> BTreeMap<String, BTreeMap<String, usize>> {
        let mut m: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for b in &self.barriers {
            *m.entry(b.category.clone())
                .or_default()
                .entry(b.op_type.clone())
                .or_default() += 1;
        }
        m
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.view()).unwrap_or_default()
    }

    /// [`Report::to_json`] written straight to compact JSON bytes (no value tree in between).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.view()).unwrap_or_default()
    }

    fn view(&self) -> ReportView<'_> {
        ReportView {
            target: &self.target,
            stages: self
                .stages
                .iter()
                .map(|(s, t)| StageTime {
                    stage: s.name(),
                    seconds: *t,
                })
                .collect(),
            total_seconds: self.total_seconds(),
            nodes_before: self.nodes.0,
            nodes_after: self.nodes.1,
            bytes_before: self.bytes.0,
            bytes_after: self.bytes.1,
            bytes_saved: self.bytes.0 - self.bytes.1,
            kernels: &self.kernels,
            kernels_from_cache: self
                .kernels
                .iter()
                .filter(|k| k["from_cache"].as_bool() == Some(true))
                .count(),
            rejected_pairs: &self.rejections,
            barriers: &self.barriers,
            barrier_groups: self.barrier_groups(),
            lifted: &self.lifted,
            symbols: self
                .symbols
                .iter()
                .map(|(k, (hint, source))| {
                    (
                        k.as_str(),
                        SymbolView {
                            hint: *hint,
                            source,
                        },
                    )
                })
                .collect(),
            guards: &self.guards,
            simplify: SimplifyView {
                identities_removed: self.simplify.identities,
                casts_removed: self.simplify.casts,
                cse_merged: self.simplify.cse,
                constants_folded: self.simplify.folded,
                reshapes_rewired: self.simplify.reshapes,
                pruned: self.simplify.pruned,
                attention_fused: self.simplify.attention,
                splits_to_slices: self.simplify.splits,
            },
            fusion_rounds: self.rounds,
        }
    }

    /// A compact text table.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "target {}: nodes {} -> {}, kernels {}, bytes {} -> {} (saved {}), {:.1} ms\n",
            self.target,
            self.nodes.0,
            self.nodes.1,
            self.kernels.len(),
            self.bytes.0,
            self.bytes.1,
            self.bytes.0 - self.bytes.1,
            self.total_seconds() * 1e3
        ));
        if !self.kernels.is_empty() {
            s.push_str(&format!(
                "{:<48} {:>9} {:>4} {:>4} {:>6} {:>12} {:>6}\n",
                "kernel", "type", "in", "out", "nodes", "bytes saved", "blocks"
            ));
            for k in &self.kernels {
                let mut name = k["name"].as_str().unwrap_or("").to_string();
                if name.len() > 48 {
                    let mut cut = 45;
                    while !name.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    name.truncate(cut);
                    name.push_str("...");
                }
                s.push_str(&format!(
                    "{:<48} {:>9} {:>4} {:>4} {:>6} {:>12} {:>6}\n",
                    name,
                    k["fuse_type"].as_str().unwrap_or(""),
                    k["inputs"].as_i64().unwrap_or(0),
                    k["outputs"].as_i64().unwrap_or(0),
                    k["asc_nodes"].as_i64().unwrap_or(0),
                    k["bytes_saved"].as_i64().unwrap_or(0),
                    k["tiling"]["block_dim"].as_i64().unwrap_or(0),
                ));
            }
        }
        let groups = self.barrier_groups();
        if !groups.is_empty() {
            s.push_str("not lowered:\n");
            for (cat, types) in groups {
                let list: Vec<String> = types.iter().map(|(t, n)| format!("{t}×{n}")).collect();
                s.push_str(&format!("  {cat}: {}\n", list.join(", ")));
            }
        }
        if !self.lifted.is_empty() {
            s.push_str(&format!("lifted clusters: {}\n", self.lifted.len()));
        }
        if !self.guards.is_empty() {
            s.push_str(&format!("guards: {}\n", self.guards.join(", ")));
        }
        s
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// DOT of the compiled graph: AscBackend nodes filled, edges as in the graph.
pub fn to_dot(g: &Graph) -> String {
    let mut s = String::from("digraph fused {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n");
    let mut idx: FxHashMap<NodeId, usize> = FxHashMap::default();
    for (i, id) in g.node_ids().enumerate() {
        idx.insert(id, i);
        let Ok(op) = g.op(id) else { continue };
        let style = if op.op_type() == "AscBackend" {
            ", style=filled, fillcolor=\"#9ecae1\""
        } else if is_plumbing(op.op_type()) {
            ", shape=ellipse, color=gray"
        } else {
            ""
        };
        s.push_str(&format!(
            "  n{i} [label=\"{}\\n{}\"{style}];\n",
            esc(op.name()),
            esc(op.op_type())
        ));
    }
    for id in g.node_ids() {
        for succ in g.out_data_nodes(id).unwrap_or_default() {
            if let (Some(a), Some(b)) = (idx.get(&id), idx.get(&succ)) {
                s.push_str(&format!("  n{a} -> n{b};\n"));
            }
        }
    }
    s.push_str("}\n");
    s
}

/// Dump of stage 3.
pub fn symbols_json(syms: &SymTable) -> String {
    let v = json!({
        "symbols": syms.hints.iter().map(|(k, h)| (k.clone(), json!({"hint": h, "source": syms.sources.get(k)}))).collect::<BTreeMap<_, _>>(),
        "guards": syms.guards,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// Dump of stage 5: per node, its kind or reason.
pub fn lower_json(g: &Graph, order: &[NodeId], d: &Decisions) -> String {
    let mut v = Vec::new();
    for id in order {
        let Ok(op) = g.op(*id) else { continue };
        let entry = match d.get(id) {
            Some(Decision::Lowered(l)) => {
                json!({"node": op.name(), "type": op.op_type(), "kind": l.kind.name()})
            }
            Some(Decision::Barrier(b)) => {
                json!({"node": op.name(), "type": op.op_type(), "category": b.category.text(), "reason": b.reason})
            }
            None => continue,
        };
        v.push(entry);
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// Dump of stage 6: the clusters by member names.
pub fn partition_json(g: &Graph, p: &Partition) -> String {
    let clusters: Vec<Vec<String>> = p
        .clusters
        .iter()
        .map(|c| {
            c.iter()
                .filter_map(|id| g.op(*id).ok().map(|o| o.name().to_string()))
                .collect()
        })
        .collect();
    serde_json::to_string_pretty(
        &json!({"clusters": clusters, "rejected_pairs": p.rejections, "rounds": p.rounds}),
    )
    .unwrap_or_default()
}

/// The JSON form of a [`Report`], borrowing it (the field names docs/COMPILER.md lists).
#[derive(Serialize)]
struct ReportView<'a> {
    target: &'a str,
    stages: Vec<StageTime>,
    total_seconds: f64,
    nodes_before: usize,
    nodes_after: usize,
    bytes_before: i64,
    bytes_after: i64,
    bytes_saved: i64,
    kernels: &'a [Value],
    kernels_from_cache: usize,
    rejected_pairs: &'a [Rejection],
    barriers: &'a [BarrierInfo],
    barrier_groups: BTreeMap<String, BTreeMap<String, usize>>,
    lifted: &'a [Lifted],
    symbols: BTreeMap<&'a str, SymbolView<'a>>,
    guards: &'a [String],
    simplify: SimplifyView,
    fusion_rounds: usize,
}

#[derive(Serialize)]
struct StageTime {
    stage: &'static str,
    seconds: f64,
}

#[derive(Serialize)]
struct SymbolView<'a> {
    hint: i64,
    source: &'a str,
}

#[derive(Serialize)]
struct SimplifyView {
    identities_removed: usize,
    casts_removed: usize,
    cse_merged: usize,
    constants_folded: usize,
    reshapes_rewired: usize,
    pruned: usize,
    attention_fused: usize,
    splits_to_slices: usize,
}
