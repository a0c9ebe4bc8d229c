//! The compile pipeline (stages 0–9 and 12, docs/COMPILER.md): `compile(graph, options)`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ascendir_asc::target::Target;
use ascendir_asc::tiling::TilingData;
use ascendir_asc::AscGraph;
use ascendir_ir::infer::{infer_graph, CustomInfer};
use ascendir_ir::{Graph, NodeId, TopoMode, TopoOptions};
use bytes::Bytes;

pub use crate::cache::KernelCache;
use crate::cache::{cache_key, decode_impls, encode_impls, kernel_key};
use crate::error::{CompileError, CompileResult, Stage};
use crate::fuse::{tensor_bytes, Fuser, Partition};
use crate::kernel::{schedule_kernel, tile_kernel};
use crate::lower::{is_plumbing, lower_graph, Decision, Lowered};
use crate::options::CompileOptions;
use crate::package::{replace_cluster, BackendSpec};
use crate::realize::{realize, Realized};
use crate::report::{Lifted, Report};
use crate::symbolize::{symbolize, SymTable, TRef};
use crate::twins::{self, Art};

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
}

/// Read + write bytes of every non-plumbing node at the hints.
fn traffic(g: &Graph, syms: Option<&SymTable>) -> i64 {
    let mut total: i64 = 0;
    for id in g.node_ids() {
        let Ok(n) = g.node(id) else { continue };
        if is_plumbing(n.op_type()) && n.op_type() != "AscBackend" {
            continue;
        }
        let op = n.op();
        let bytes = |t: TRef, desc: &ascendir_ir::TensorDesc| -> i64 {
            match syms.and_then(|s| s.shape(t).map(|_| tensor_bytes(g, s, t))) {
                Some(b) => b,
                None => {
                    let n = desc
                        .shape
                        .iter()
                        .try_fold(1i64, |a, &d| (d >= 0).then(|| a.saturating_mul(d)))
                        .unwrap_or(0);
                    crate::fuse::saturating_bytes(n, desc.dtype)
                }
            }
        };
        for (k, p) in op.outputs().iter().enumerate() {
            total = total.saturating_add(bytes((id, k as u32), &p.desc));
        }
        for k in 0..n.num_in_data() {
            if let Some(src) = n.in_data_peer(k) {
                if let Ok(sop) = g.op(src.node) {
                    if let Some(p) = sop.outputs().get(src.index as usize) {
                        total = total.saturating_add(bytes((src.node, src.index as u32), &p.desc));
                    }
                }
            }
        }
    }
    total
}

fn compress_types(types: &[String]) -> String {
    let mut v: Vec<&str> = Vec::new();
    for t in types {
        if v.last() != Some(&t.as_str()) {
            v.push(t);
        }
    }
    v.join("_")
}

fn kernel_name(fuse_type: &str, n: usize, types: &[String]) -> String {
    let mut s = format!("autofuse_{fuse_type}_{n}_{}", compress_types(types));
    if s.len() > 140 {
        let mut cut = 140;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// `r` with the seconds since `t`.
fn timed<R>(t: Instant, r: R) -> (R, f64) {
    (r, t.elapsed().as_secs_f64())
}

struct Timer {
    t: Instant,
    times: Vec<(Stage, f64)>,
}

impl Timer {
    fn lap(&mut self, s: Stage) {
        let now = Instant::now();
        self.times.push((s, (now - self.t).as_secs_f64()));
        self.t = now;
    }
}

/// A realized cluster with its HintGraph's structure (and bytes, when made with it).
struct Keyed {
    r: Realized,
    bytes: Option<Vec<u8>>,
    key: twins::Key,
}

/// What the fuse stage built for a cluster: its kernel, or (its structure checked from a
/// structural twin) the realized cluster, or nothing (checked as a cluster that realizes to a
/// twin of one built before: the final stage realizes it).
enum Pre {
    Built(Art),
    Twin(Keyed),
    Checked,
}

/// How one compile runs besides its options: a cancellation flag checked between stages and
/// kernels, and the kernel cache.
#[derive(Clone, Copy, Default)]
pub struct Control<'a> {
    /// Set to stop the compile at the next check (a `CompileError` "cancelled").
    pub cancel: Option<&'a AtomicBool>,
    /// Scheduled kernels by content key.
    pub cache: Option<&'a dyn KernelCache>,
}

impl std::fmt::Debug for Control<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("cancel", &self.cancel)
            .field("cache", &self.cache.is_some())
            .finish()
    }
}

impl Control<'_> {
    fn check(&self, stage: Stage) -> CompileResult<()> {
        match self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(CompileError::new(stage, "cancelled")),
            _ => Ok(()),
        }
    }
}

/// Compile `input` (left unchanged) with `opts`; `infer` runs custom inference callbacks.
pub fn compile(
    input: &Graph,
    opts: &CompileOptions,
    infer: &mut dyn CustomInfer,
    dump: bool,
) -> CompileResult<CompiledModel> {
    compile_with(Cow::Borrowed(input), opts, infer, dump, &Control::default())
}

/// [`compile`] of a borrowed (copied, left unchanged) or owned graph, under `ctl`. The
/// kernels of the final clusters are built in parallel (`ascendir_ir::threads::par_map`: the
/// package's helper threads, or the batch compiler's pool when called from it); the result
/// does not depend on the thread count.
pub fn compile_with(
    input: Cow<'_, Graph>,
    opts: &CompileOptions,
    infer: &mut dyn CustomInfer,
    dump: bool,
    ctl: &Control<'_>,
) -> CompileResult<CompiledModel> {
    opts.check()
        .map_err(|e| CompileError::new(Stage::Load, e))?;
    let target = Target::by_name(&opts.target).ok_or_else(|| {
        CompileError::new(Stage::Load, format!("unknown target '{}'", opts.target))
    })?;
    let mut timer = Timer {
        t: Instant::now(),
        times: Vec::new(),
    };
    let mut dumps: Vec<(String, String)> = Vec::new();
    let mut g = input.into_owned();
    if dump {
        dumps.push(("00_load.txt".into(), g.dump()));
    }
    timer.lap(Stage::Load);
    ctl.check(Stage::Validate)?;
    g.validate()
        .map_err(|e| CompileError::new(Stage::Validate, e.to_string()))?;
    if dump {
        dumps.push((
            "01_validate.txt".into(),
            format!(
                "valid: {} nodes, {} subgraphs\n",
                g.len(),
                g.subgraphs.len()
            ),
        ));
    }
    timer.lap(Stage::Validate);
    infer_graph(&mut g, infer).map_err(|e| match e.node.is_empty() {
        true => CompileError::new(Stage::Infer, e.to_string()),
        false => CompileError::at(Stage::Infer, &e.node, e.to_string()),
    })?;
    if dump {
        dumps.push(("02_infer.txt".into(), g.dump()));
    }
    timer.lap(Stage::Infer);
    ctl.check(Stage::Symbolize)?;
    let nodes_before = g.len();
    let topo = TopoOptions::new(TopoMode::Dfs);
    let order = g
        .topo_order(&topo)
        .map_err(|e| CompileError::new(Stage::Symbolize, e.to_string()))?;
    let syms0 =
        symbolize(&g, &order, opts, infer).map_err(|e| CompileError::new(Stage::Symbolize, e))?;
    let bytes_before = traffic(&g, Some(&syms0));
    timer.lap(Stage::Symbolize);
    let simp = crate::simplify::simplify(&mut g, &syms0, opts)
        .map_err(|e| CompileError::new(Stage::Simplify, e))?;
    let order = g
        .topo_order(&topo)
        .map_err(|e| CompileError::new(Stage::Simplify, e.to_string()))?;
    let syms =
        symbolize(&g, &order, opts, infer).map_err(|e| CompileError::new(Stage::Symbolize, e))?;
    if dump {
        dumps.push(("03_symbols.json".into(), crate::report::symbols_json(&syms)));
        dumps.push(("04_simplify.txt".into(), g.dump()));
    }
    timer.lap(Stage::Simplify);
    let decisions = lower_graph(&g, &order, &syms, opts);
    // Norms too wide for a one-op kernel are computed in passes (their GE steps).
    let (order, syms, decisions) =
        match crate::wide_rows::split_wide_rows(&mut g, &decisions, &syms, opts, &target)
            .map_err(|e| CompileError::new(Stage::Lower, e))?
        {
            0 => (order, syms, decisions),
            _ => {
                let order = g
                    .topo_order(&topo)
                    .map_err(|e| CompileError::new(Stage::Lower, e.to_string()))?;
                let syms = symbolize(&g, &order, opts, infer)
                    .map_err(|e| CompileError::new(Stage::Symbolize, e))?;
                let decisions = lower_graph(&g, &order, &syms, opts);
                (order, syms, decisions)
            }
        };
    if dump {
        dumps.push((
            "05_lower.json".into(),
            crate::report::lower_json(&g, &order, &decisions),
        ));
    }
    timer.lap(Stage::Lower);
    ctl.check(Stage::Fuse)?;
    let lowered_of = |ids: &[NodeId]| -> Vec<(NodeId, &Lowered)> {
        ids.iter()
            .filter_map(|id| match decisions.get(id) {
                Some(Decision::Lowered(l)) => Some((*id, l)),
                _ => None,
            })
            .collect()
    };
    // Realize, schedule and tile one cluster (the exact check of the fuse stage builds the
    // kernels of clusters with a reduction this way; the final stage reuses them).
    let realize_lowered = |lw: &[(NodeId, &Lowered)]| -> Result<Realized, String> {
        realize(&g, "cluster", lw, &syms, opts).map_err(|e| format!("realize failed: {e}"))
    };
    let realize_cluster = |ids: &[NodeId]| realize_lowered(&lowered_of(ids));
    let opts_json = opts.kernel_json();
    // Schedule (or take from the kernel cache) and tile a realized cluster; also returns the
    // seconds spent scheduling and tiling.
    let finish = |r: Realized| -> Result<(Art, f64, f64), String> {
        let t0 = Instant::now();
        let key = ctl
            .cache
            .map(|_| kernel_key(&r.hint, &syms, &opts.target, &opts_json));
        let cached = match (ctl.cache, &key) {
            (Some(c), Some(k)) => c.get(k).and_then(|d| decode_impls(&d)),
            _ => None,
        };
        let from_cache = cached.is_some();
        let impls = match cached {
            Some(i) => i,
            None => {
                let i = schedule_kernel(&r.hint).map_err(|e| format!("schedule failed: {e}"))?;
                if let (Some(c), Some(k)) = (ctl.cache, &key) {
                    c.put(k, &encode_impls(&i));
                }
                i
            }
        };
        let t1 = Instant::now();
        let tiling =
            tile_kernel(&impls, &target, &syms).map_err(|e| format!("tiling failed: {e}"))?;
        let (ts, tt) = ((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
        Ok(((r, impls, tiling, from_cache), ts, tt))
    };
    // Build outcomes by the cluster's structure: clusters that differ only in their nodes'
    // names, as a model's repeated layers do, are scheduled and tiled once (the exact check of
    // the fuse stage, then the final stage); a twin's kernel is made in the final stage.
    let memo: RefCell<twins::Memo> = RefCell::default();
    let verdicts: RefCell<twins::Verdicts> = RefCell::default();
    let build = |ids: &[NodeId]| -> Result<Pre, String> {
        // A cluster that reads what one checked before reads (names aside) realizes to its
        // twin: it has its outcome, and most merged clusters merge again.
        let lw = lowered_of(ids);
        let vkey = verdicts.borrow_mut().key(&g, &lw, &syms);
        if let Some(v) = verdicts.borrow().get(&vkey) {
            return v.clone().map(|()| Pre::Checked);
        }
        // (A cluster that does not realize is not recorded: the reason may name its nodes.)
        let r = realize_lowered(&lw)?;
        // Most merged clusters merge again: their HintGraph bytes are made in the final stage.
        let key = twins::key(&r.hint);
        let twin = memo.borrow().get(&key).cloned();
        let built = match twin {
            Some(outcome) => {
                let bytes = None;
                outcome.map(|_| Pre::Twin(Keyed { r, bytes, key }))
            }
            None => {
                let built = finish(r).map(|(a, _, _)| a);
                memo.borrow_mut().record(key, &built);
                built.map(Pre::Built)
            }
        };
        let verdict = built.as_ref().map(|_| ()).map_err(Clone::clone);
        verdicts.borrow_mut().record(vkey, verdict);
        built
    };
    let (partition, artifacts): (Partition, Vec<Option<Pre>>) =
        Fuser::new(&g, &order, &decisions, &syms, opts, &build).run();
    let mut memo = memo.into_inner();
    if dump {
        dumps.push((
            "06_fuse.json".into(),
            crate::report::partition_json(&g, &partition),
        ));
    }
    timer.lap(Stage::Fuse);
    ctl.check(Stage::Realize)?;
    // Realize, lift, schedule and tile every cluster, in parallel (each cluster's work is
    // independent; the outcomes are taken in cluster order). Schedule and tile time the final
    // clusters only (the exact checks' builds are part of the fuse stage).
    // A built kernel keeps its graphs as bytes (under their placeholder names until the
    // package stage names them): a large model's kernels are not all held as graphs at once.
    struct Built {
        members: Vec<NodeId>,
        fuse_type: &'static str,
        inputs: Vec<TRef>,
        outputs: Vec<TRef>,
        compute_ops: usize,
        asc_nodes: usize,
        /// Free symbols of the HintGraph's sizes, in first-use order.
        used_syms: Vec<String>,
        hint: Vec<u8>,
        /// ImplGraph names and bytes, tiling-key order.
        impls: Vec<(String, Vec<u8>)>,
        tiling: TilingData,
        from_cache: bool,
    }
    enum Outcome {
        Built(Box<Built>),
        Lifted(Lifted),
    }
    let names_of = |ids: &[NodeId]| -> Vec<String> {
        ids.iter()
            .filter_map(|id| g.op(*id).ok().map(|o| o.name().to_string()))
            .collect()
    };
    let lifted = |members: &[NodeId], why: String| Lifted::new(names_of(members), why);
    let small = |members: &[NodeId], n: usize| {
        lifted(
            members,
            format!(
                "{n} compute op(s) < min_cluster_ops {}",
                opts.min_cluster_ops
            ),
        )
    };
    // A cluster on its way through the final stage.
    enum Step {
        /// Built, with its HintGraph's bytes when known (and the schedule and tiling seconds
        /// spent on it in this stage).
        Ready(Art, Option<Vec<u8>>, f64, f64),
        /// Realized, to be built or to take its structural twin's kernel.
        Keyed(Keyed),
        /// Realized, with its twin's kernel.
        Twin(Realized, Option<Vec<u8>>, twins::TwinKernel),
        Lifted(Lifted),
    }
    // Step 1: realize what the fuse stage did not build and key it by its structure; too
    // small clusters are lifted before they are scheduled.
    let prepare = |members: &Vec<NodeId>, pre: Option<Pre>| -> Step {
        let k = match pre {
            Some(Pre::Built(a)) => return Step::Ready(a, None, 0.0, 0.0),
            Some(Pre::Twin(k)) => k,
            Some(Pre::Checked) | None => match realize_cluster(members) {
                Ok(r) if r.compute_ops < opts.min_cluster_ops => {
                    return Step::Lifted(small(members, r.compute_ops))
                }
                Ok(r) => {
                    let (bytes, key) = twins::bytes_and_key(&r.hint);
                    let bytes = Some(bytes);
                    Keyed { r, bytes, key }
                }
                Err(e) => return Step::Lifted(lifted(members, e)),
            },
        };
        if k.r.compute_ops < opts.min_cluster_ops {
            return Step::Lifted(small(members, k.r.compute_ops));
        }
        Step::Keyed(k)
    };
    let build_step = |members: &[NodeId], k: Keyed| match finish(k.r) {
        Ok((a, ts, tt)) => Step::Ready(a, k.bytes, ts, tt),
        Err(e) => Step::Lifted(lifted(members, e)),
    };
    // Step 4: a keyed cluster takes its twin's kernel (built where the names cannot be
    // carried over); the kernel is encoded.
    let complete = |members: &Vec<NodeId>, step: Step, memo: &twins::Memo| -> (Outcome, f64, f64) {
        let step = match step {
            Step::Keyed(k) => match memo.get(&k.key) {
                Some(Ok(src)) => match twins::built_as(src, &k.r.hint) {
                    Some(kernel) => Step::Twin(k.r, k.bytes, kernel),
                    None => build_step(members, k),
                },
                Some(Err(e)) => Step::Lifted(lifted(members, e.clone())),
                None => build_step(members, k),
            },
            s => s,
        };
        let (r, hint_bytes, (impls, tiling, from_cache), ts, tt) = match step {
            Step::Ready((r, impls, tiling, cached), b, ts, tt) => {
                let impls = impls
                    .iter()
                    .map(|i| (i.name.clone(), i.to_bytes()))
                    .collect();
                (r, b, (impls, tiling, cached), ts, tt)
            }
            Step::Twin(r, b, kernel) => (r, b, kernel, 0.0, 0.0),
            Step::Lifted(l) => return (Outcome::Lifted(l), 0.0, 0.0),
            Step::Keyed(..) => unreachable!("keyed clusters are completed above"),
        };
        if r.compute_ops < opts.min_cluster_ops {
            return (Outcome::Lifted(small(members, r.compute_ops)), ts, tt);
        }
        let lw = lowered_of(members);
        let fuse_type = if lw.iter().any(|(_, l)| l.kind == crate::lower::Kind::Reduce) {
            "reduce"
        } else if lw.iter().any(|(_, l)| l.kind == crate::lower::Kind::Concat) {
            "concat"
        } else if lw.iter().any(|(_, l)| l.kind == crate::lower::Kind::Gather) {
            "gather"
        } else if lw
            .iter()
            .any(|(_, l)| l.kind == crate::lower::Kind::Transpose)
        {
            "transpose"
        } else {
            "pointwise"
        };
        let mut used_syms: Vec<String> = Vec::new();
        for s in r.hint.size_vars() {
            for f in s.free_symbols() {
                if !used_syms.contains(&f) {
                    used_syms.push(f);
                }
            }
        }
        let b = Built {
            members: members.clone(),
            fuse_type,
            asc_nodes: r.hint.node_count(),
            hint: hint_bytes.unwrap_or_else(|| r.hint.to_bytes()),
            inputs: r.inputs,
            outputs: r.outputs,
            compute_ops: r.compute_ops,
            used_syms,
            impls,
            tiling,
            from_cache,
        };
        (Outcome::Built(Box::new(b)), ts, tt)
    };
    // Clusters go through the steps a chunk at a time (a large model's realized graphs are
    // not all held at once); steps 1, 3 and 4 run over the chunk in parallel, step 2 picks
    // the first cluster of each structure not built yet, in cluster order.
    const CHUNK: usize = 256;
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(partition.clusters.len());
    let (mut t_sched, mut t_tile, mut t_all) = (0.0f64, 0.0f64, 0.0f64);
    let mut artifacts = artifacts.into_iter();
    for chunk in partition.clusters.chunks(CHUNK) {
        let work: Vec<(&Vec<NodeId>, Option<Pre>)> = chunk.iter().zip(artifacts.by_ref()).collect();
        let mut steps: Vec<Step> = Vec::with_capacity(work.len());
        for res in ascendir_ir::threads::par_map(work, |(m, pre)| {
            let t = Instant::now();
            ctl.check(Stage::Realize)
                .map(|()| timed(t, prepare(m, pre)))
        }) {
            let (s, ta) = res?;
            t_all += ta;
            steps.push(s);
        }
        let mut firsts = rustc_hash::FxHashSet::default();
        let mut reps: Vec<(usize, Keyed)> = Vec::new();
        for (i, s) in steps.iter_mut().enumerate() {
            let new =
                matches!(s, Step::Keyed(k) if memo.get(&k.key).is_none() && firsts.insert(k.key));
            if new {
                let placeholder = Step::Lifted(Lifted::new(Vec::new(), String::new()));
                if let Step::Keyed(k) = std::mem::replace(s, placeholder) {
                    reps.push((i, k));
                }
            }
        }
        for res in ascendir_ir::threads::par_map(reps, |(i, k)| {
            let t = Instant::now();
            ctl.check(Stage::Realize)
                .map(|()| timed(t, (i, k.key, k.bytes, finish(k.r))))
        }) {
            let ((i, k, bytes, built), ta) = res?;
            t_all += ta;
            let built = built.map(|(a, ts, tt)| {
                t_sched += ts;
                t_tile += tt;
                a
            });
            memo.record(k, &built);
            steps[i] = match built {
                Ok(a) => Step::Ready(a, bytes, 0.0, 0.0),
                Err(e) => Step::Lifted(lifted(&chunk[i], e)),
            };
        }
        let memo = &memo;
        let work: Vec<(&Vec<NodeId>, Step)> = chunk.iter().zip(steps).collect();
        for res in ascendir_ir::threads::par_map(work, |(m, s)| {
            let t = Instant::now();
            ctl.check(Stage::Realize)
                .map(|()| timed(t, complete(m, s, memo)))
        }) {
            let ((o, ts, tt), ta) = res?;
            t_sched += ts;
            t_tile += tt;
            t_all += ta;
            outcomes.push(o);
        }
    }
    let mut built: Vec<Built> = Vec::new();
    let mut lifted: Vec<Lifted> = Vec::new();
    for o in outcomes {
        match o {
            Outcome::Built(b) => built.push(*b),
            Outcome::Lifted(l) => lifted.push(l),
        }
    }
    timer.lap(Stage::Realize);
    // The realize lap ran the final schedules and tilings too, on several threads: the
    // phase's wall time is shared out in proportion to the thread time each part took.
    if let Some((_, t)) = timer.times.last_mut() {
        let wall = *t;
        let k = if t_all > 0.0 { wall / t_all } else { 0.0 };
        t_sched *= k;
        t_tile *= k;
        *t = (wall - t_sched - t_tile).max(0.0);
    }
    timer.times.push((Stage::Schedule, t_sched));
    timer.times.push((Stage::Tile, t_tile));
    // Package: name, rename graphs, replace.
    let mut kernels = Vec::new();
    let mut counters: BTreeMap<&str, usize> = BTreeMap::new();
    let mut specs = Vec::new();
    // Stage dumps 07 (HintGraphs), 08 (ImplGraphs) and 09 (tilings), by kernel name.
    let (mut d_realize, mut d_schedule, mut d_tile) = (String::new(), String::new(), Vec::new());
    for b in built.iter_mut() {
        let n = counters.entry(b.fuse_type).or_insert(0);
        let types: Vec<String> = b
            .members
            .iter()
            .filter_map(|id| g.op(*id).ok().map(|o| o.op_type().to_string()))
            .collect();
        let name = kernel_name(b.fuse_type, *n, &types);
        *n += 1;
        let renamed = |old: &str, k: usize| match old.strip_prefix("cluster") {
            Some(rest) => format!("{name}{rest}"),
            None => format!("{name}_{k}"),
        };
        let rename = |bytes: &[u8], new: &str| {
            AscGraph::rename_bytes(bytes, new)
                .map(Bytes::from)
                .map_err(|e| CompileError::at(Stage::Package, &name, e.to_string()))
        };
        let hint_bytes = rename(&std::mem::take(&mut b.hint), &name)?;
        let mut templates = Vec::new();
        let mut impl_bytes = Vec::new();
        for (k, (old, bytes)) in std::mem::take(&mut b.impls).into_iter().enumerate() {
            let new = renamed(&old, k);
            impl_bytes.push(rename(&bytes, &new)?);
            if b.tiling.graph == old {
                b.tiling.graph = new.clone();
            }
            templates.push(new);
        }
        if dump {
            let text = |bytes: &[u8]| {
                AscGraph::from_bytes(bytes)
                    .map(|a| a.debug_str(false))
                    .unwrap_or_else(|e| format!("(cannot decode: {e})\n"))
            };
            d_realize.push_str(&format!("== {name}\n{}\n", text(&hint_bytes)));
            for i in &impl_bytes {
                d_schedule.push_str(&format!("== {name}\n{}\n", text(i)));
            }
            let t = &b.tiling;
            d_tile.push(serde_json::json!({
                "kernel": name, "graph": t.graph, "tiling_key": t.tiling_key,
                "block_dim": t.block_dim, "ub_used": t.ub_used, "ub_size": t.ub_size,
                "sizes": t.sizes, "shape": t.shape,
            }));
        }
        let key = cache_key(&hint_bytes, &opts.target, &opts_json);
        let symbols: Vec<String> = b
            .used_syms
            .iter()
            .map(|s| format!("{s}: {}", syms.sources.get(s).cloned().unwrap_or_default()))
            .collect();
        let out_shapes: Vec<Vec<String>> = b
            .outputs
            .iter()
            .map(|t| {
                syms.shape(*t)
                    .map(|v| v.iter().map(|e| e.to_string()).collect())
                    .unwrap_or_default()
            })
            .collect();
        let member_bytes: i64 = b
            .members
            .iter()
            .map(|id| {
                let l = match decisions.get(id) {
                    Some(Decision::Lowered(l)) => l,
                    _ => return 0,
                };
                let ins: i64 = l
                    .inputs
                    .iter()
                    .flatten()
                    .map(|t| tensor_bytes(&g, &syms, *t))
                    .sum();
                ins + tensor_bytes(&g, &syms, (*id, 0))
            })
            .sum();
        let kernel_bytes: i64 = b
            .inputs
            .iter()
            .chain(&b.outputs)
            .map(|t| tensor_bytes(&g, &syms, *t))
            .sum();
        kernels.push(Kernel {
            name: name.clone(),
            fuse_type: b.fuse_type.to_string(),
            members: names_of(&b.members),
            member_types: types,
            hint: hint_bytes.clone(),
            impls: impl_bytes.clone(),
            templates,
            asc_nodes: b.asc_nodes,
            tiling: b.tiling.clone(),
            io: (b.inputs.len(), b.outputs.len()),
            bytes: (member_bytes, kernel_bytes),
            compute_ops: b.compute_ops,
            cache_key: key.clone(),
            from_cache: b.from_cache,
        });
        specs.push((name, hint_bytes, impl_bytes, symbols, out_shapes, key));
    }
    if dump {
        dumps.push(("07_realize.txt".into(), d_realize));
        dumps.push(("08_schedule.txt".into(), d_schedule));
        dumps.push((
            "09_tile.json".into(),
            serde_json::to_string_pretty(&d_tile).unwrap_or_default(),
        ));
    }
    let barrier_list = crate::report::barriers(&g, &order, &decisions);
    // A kernel reading another kernel's output reads it from the AscBackend node that took it.
    let mut moved: rustc_hash::FxHashMap<TRef, TRef> = rustc_hash::FxHashMap::default();
    for (index, (b, (name, hint_bytes, impl_bytes, symbols, out_shapes, key))) in
        built.iter().zip(specs).enumerate()
    {
        let inputs: Vec<TRef> = b
            .inputs
            .iter()
            .map(|t| moved.get(t).copied().unwrap_or(*t))
            .collect();
        let spec = BackendSpec {
            name: &name,
            fuse_type: b.fuse_type,
            members: &b.members,
            inputs: &inputs,
            outputs: &b.outputs,
            hint_bytes,
            impl_bytes,
            symbols,
            output_symbol_shape: out_shapes,
            guards: syms.guards.clone(),
            cache_key: key,
            index,
        };
        let k = replace_cluster(&mut g, &spec)
            .map_err(|e| CompileError::at(Stage::Package, &name, e))?;
        for (j, t) in b.outputs.iter().enumerate() {
            moved.insert(*t, (k, j as u32));
        }
    }
    let mut order_opts = TopoOptions::new(TopoMode::Dfs);
    order_opts.memory_priority = true;
    g.topo_sort(&order_opts)
        .map_err(|e| CompileError::new(Stage::Package, e.to_string()))?;
    g.validate().map_err(|e| {
        CompileError::new(
            Stage::Package,
            format!("the compiled graph is invalid: {e}"),
        )
    })?;
    if dump {
        dumps.push(("12_package.txt".into(), g.dump()));
    }
    timer.lap(Stage::Package);
    let bytes_after = traffic(&g, Some(&syms));
    let report = Report::build(
        &kernels,
        &partition,
        barrier_list,
        lifted,
        &syms,
        timer.times,
        (nodes_before, g.len()),
        (bytes_before, bytes_after),
        simp,
        &opts.target,
    );
    Ok(CompiledModel {
        graph: g,
        kernels,
        report,
        dumps,
    })
}
