//! Stages 7–9 for every cluster: realize (HintGraph), schedule (ImplGraphs, from the kernel
//! cache when it has them) and tile — the [`Build`] pass — and the exact check of the fuse
//! stage, which builds the kernels of merged clusters the same way ([`Builder::check`]).

use std::cell::RefCell;
use std::time::Instant;

use ascendir_asc::target::Target;
use ascendir_asc::tiling::TilingData;
use ascendir_ir::{Graph, NodeId};

use crate::cache::{decode_impls, encode_impls, kernel_key};
use crate::error::{CompileResult, KindResult, Stage};
use crate::kernel::{schedule_kernel, tile_kernel};
use crate::lower::{Decision, Decisions, Kind, Lowered};
use crate::options::CompileOptions;
use crate::passes::{CompileCtx, Pass};
use crate::pipeline::Control;
use crate::realize::{realize, Realized};
use crate::report::Lifted;
use crate::symbolize::{SymTable, TRef};
use crate::twins::{self, Art};

/// A realized cluster with its HintGraph's structure (and bytes, when made with it).
pub(crate) struct Keyed {
    r: Realized,
    bytes: Option<Vec<u8>>,
    key: twins::Key,
}

/// What the fuse stage built for a cluster: its kernel, or (its structure checked from a
/// structural twin) the realized cluster, or nothing (checked as a cluster that realizes to a
/// twin of one built before: the final stage realizes it).
pub(crate) enum Pre {
    Built(Art),
    Twin(Keyed),
    Checked,
}

/// A built kernel keeps its graphs as bytes (under their placeholder names until the package
/// stage names them): a large model's kernels are not all held as graphs at once.
pub(crate) struct Built {
    pub(crate) members: Vec<NodeId>,
    pub(crate) fuse_type: &'static str,
    pub(crate) inputs: Vec<TRef>,
    pub(crate) outputs: Vec<TRef>,
    pub(crate) compute_ops: usize,
    pub(crate) asc_nodes: usize,
    /// Free symbols of the HintGraph's sizes, in first-use order.
    pub(crate) used_syms: Vec<String>,
    pub(crate) hint: Vec<u8>,
    /// ImplGraph names and bytes, tiling-key order.
    pub(crate) impls: Vec<(String, Vec<u8>)>,
    pub(crate) tiling: TilingData,
    pub(crate) from_cache: bool,
}

enum Outcome {
    Built(Box<Built>),
    Lifted(Lifted),
}

/// A cluster on its way through the build stage.
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

/// `r` with the seconds since `t`.
fn timed<R>(t: Instant, r: R) -> (R, f64) {
    (r, t.elapsed().as_secs_f64())
}

/// The kernel's fuse type: that of its strongest member kind.
fn fuse_type(lw: &[(NodeId, &Lowered)]) -> &'static str {
    let has = |k: Kind| lw.iter().any(|(_, l)| l.kind == k);
    if has(Kind::Reduce) {
        "reduce"
    } else if has(Kind::Concat) {
        "concat"
    } else if has(Kind::Gather) {
        "gather"
    } else if has(Kind::Transpose) {
        "transpose"
    } else {
        "pointwise"
    }
}

/// Builds clusters of one graph: what the fuse and build stages share.
pub(crate) struct Builder<'a> {
    g: &'a Graph,
    syms: &'a SymTable,
    decisions: &'a Decisions,
    opts: &'a CompileOptions,
    target: &'a Target,
    ctl: Control<'a>,
    opts_json: String,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(cx: &'a CompileCtx<'_>) -> Builder<'a> {
        Builder {
            g: &cx.graph,
            syms: &cx.syms,
            decisions: &cx.decisions,
            opts: cx.opts,
            target: &cx.target,
            ctl: cx.ctl,
            opts_json: cx.opts.kernel_json(),
        }
    }

    fn lowered_of(&self, ids: &[NodeId]) -> Vec<(NodeId, &'a Lowered)> {
        ids.iter()
            .filter_map(|id| match self.decisions.get(id) {
                Some(Decision::Lowered(l)) => Some((*id, l)),
                _ => None,
            })
            .collect()
    }

    fn realize_lowered(&self, lw: &[(NodeId, &Lowered)]) -> KindResult<Realized> {
        realize(self.g, "cluster", lw, self.syms, self.opts)
    }

    fn realize_cluster(&self, ids: &[NodeId]) -> KindResult<Realized> {
        self.realize_lowered(&self.lowered_of(ids))
    }

    /// Schedule (or take from the kernel cache) and tile a realized cluster; also returns the
    /// seconds spent scheduling and tiling.
    fn finish(&self, r: Realized) -> KindResult<(Art, f64, f64)> {
        let t0 = Instant::now();
        let cache = self.ctl.cache;
        let key = cache.map(|_| kernel_key(&r.hint, self.syms, &self.opts.target, &self.opts_json));
        let cached = match (cache, &key) {
            (Some(c), Some(k)) => c.get(k).and_then(|d| decode_impls(&d)),
            _ => None,
        };
        let from_cache = cached.is_some();
        let impls = match cached {
            Some(i) => i,
            None => {
                let i = schedule_kernel(&r.hint)?;
                if let (Some(c), Some(k)) = (cache, &key) {
                    c.put(k, &encode_impls(&i));
                }
                i
            }
        };
        let t1 = Instant::now();
        let tiling = tile_kernel(&impls, self.target, self.syms)?;
        let (ts, tt) = ((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
        Ok(((r, impls, tiling, from_cache), ts, tt))
    }

    /// The exact check of the fuse stage: build a merged cluster. Outcomes are kept by the
    /// cluster's structure: clusters that differ only in their nodes' names, as a model's
    /// repeated layers do, are scheduled and tiled once; a twin's kernel is made in the build
    /// stage.
    pub(crate) fn check(
        &self,
        ids: &[NodeId],
        memo: &RefCell<twins::Memo>,
        verdicts: &RefCell<twins::Verdicts>,
    ) -> KindResult<Pre> {
        // A cluster that reads what one checked before reads (names aside) realizes to its
        // twin: it has its outcome, and most merged clusters merge again.
        let lw = self.lowered_of(ids);
        let vkey = verdicts.borrow_mut().key(self.g, &lw, self.syms);
        if let Some(v) = verdicts.borrow().get(&vkey) {
            return v.clone().map(|()| Pre::Checked);
        }
        // (A cluster that does not realize is not recorded: the reason may name its nodes.)
        let r = self.realize_lowered(&lw)?;
        // Most merged clusters merge again: their HintGraph bytes are made in the final stage.
        let key = twins::key(&r.hint);
        let twin = memo.borrow().get(&key).cloned();
        let built = match twin {
            Some(outcome) => {
                let bytes = None;
                outcome.map(|_| Pre::Twin(Keyed { r, bytes, key }))
            }
            None => {
                let built = self.finish(r).map(|(a, _, _)| a);
                memo.borrow_mut().record(key, &built);
                built.map(Pre::Built)
            }
        };
        let verdict = built.as_ref().map(|_| ()).map_err(Clone::clone);
        verdicts.borrow_mut().record(vkey, verdict);
        built
    }

    fn names_of(&self, ids: &[NodeId]) -> Vec<String> {
        ids.iter()
            .filter_map(|id| self.g.op(*id).ok().map(|o| o.name().to_string()))
            .collect()
    }

    fn lifted(&self, members: &[NodeId], why: String) -> Lifted {
        Lifted::new(self.names_of(members), why)
    }

    fn small(&self, members: &[NodeId], n: usize) -> Lifted {
        let why = format!(
            "{n} compute op(s) < min_cluster_ops {}",
            self.opts.min_cluster_ops
        );
        self.lifted(members, why)
    }

    /// Step 1: realize what the fuse stage did not build and key it by its structure; too
    /// small clusters are lifted before they are scheduled.
    fn prepare(&self, members: &[NodeId], pre: Option<Pre>) -> Step {
        let k = match pre {
            Some(Pre::Built(a)) => return Step::Ready(a, None, 0.0, 0.0),
            Some(Pre::Twin(k)) => k,
            Some(Pre::Checked) | None => match self.realize_cluster(members) {
                Ok(r) if r.compute_ops < self.opts.min_cluster_ops => {
                    return Step::Lifted(self.small(members, r.compute_ops))
                }
                Ok(r) => {
                    let (bytes, key) = twins::bytes_and_key(&r.hint);
                    let bytes = Some(bytes);
                    Keyed { r, bytes, key }
                }
                Err(e) => return Step::Lifted(self.lifted(members, e.to_string())),
            },
        };
        if k.r.compute_ops < self.opts.min_cluster_ops {
            return Step::Lifted(self.small(members, k.r.compute_ops));
        }
        Step::Keyed(k)
    }

    fn build_step(&self, members: &[NodeId], k: Keyed) -> Step {
        match self.finish(k.r) {
            Ok((a, ts, tt)) => Step::Ready(a, k.bytes, ts, tt),
            Err(e) => Step::Lifted(self.lifted(members, e.to_string())),
        }
    }

    /// Step 4: a keyed cluster takes its twin's kernel (built where the names cannot be
    /// carried over); the kernel is encoded.
    fn complete(&self, members: &[NodeId], step: Step, memo: &twins::Memo) -> (Outcome, f64, f64) {
        let step = match step {
            Step::Keyed(k) => match memo.get(&k.key) {
                Some(Ok(src)) => match twins::built_as(src, &k.r.hint) {
                    Some(kernel) => Step::Twin(k.r, k.bytes, kernel),
                    None => self.build_step(members, k),
                },
                Some(Err(e)) => Step::Lifted(self.lifted(members, e.to_string())),
                None => self.build_step(members, k),
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
            // (Keyed steps are completed above.)
            Step::Keyed(_) => {
                let why = "a keyed cluster was not completed".to_string();
                return (Outcome::Lifted(self.lifted(members, why)), 0.0, 0.0);
            }
        };
        if r.compute_ops < self.opts.min_cluster_ops {
            return (Outcome::Lifted(self.small(members, r.compute_ops)), ts, tt);
        }
        let mut used_syms: Vec<String> = Vec::new();
        for s in r.hint.size_vars() {
            for f in s.free_symbols() {
                if !used_syms.contains(&f) {
                    used_syms.push(f);
                }
            }
        }
        let b = Built {
            members: members.to_vec(),
            fuse_type: fuse_type(&self.lowered_of(members)),
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
    }
}

/// Seconds of the build stage's parts, summed over threads.
#[derive(Default)]
struct Spent {
    schedule: f64,
    tile: f64,
    all: f64,
}

/// How many clusters go through the steps at a time (a large model's realized graphs are
/// not all held at once).
const CHUNK: usize = 256;

/// One chunk of clusters through the steps: 1, 3 and 4 run over the chunk in parallel, step 2
/// picks the first cluster of each structure not built yet, in cluster order.
fn build_chunk(
    b: &Builder<'_>,
    chunk: &[Vec<NodeId>],
    pres: Vec<Option<Pre>>,
    memo: &mut twins::Memo,
    spent: &mut Spent,
    outcomes: &mut Vec<Outcome>,
) -> CompileResult<()> {
    let work: Vec<(&Vec<NodeId>, Option<Pre>)> = chunk.iter().zip(pres).collect();
    let mut steps: Vec<Step> = Vec::with_capacity(work.len());
    for res in ascendir_ir::threads::par_map(work, |(m, pre)| {
        let t = Instant::now();
        b.ctl
            .check(Stage::Realize)
            .map(|()| timed(t, b.prepare(m, pre)))
    }) {
        let (s, ta) = res?;
        spent.all += ta;
        steps.push(s);
    }
    let mut firsts = rustc_hash::FxHashSet::default();
    let mut reps: Vec<(usize, Keyed)> = Vec::new();
    for (i, s) in steps.iter_mut().enumerate() {
        let new = matches!(s, Step::Keyed(k) if memo.get(&k.key).is_none() && firsts.insert(k.key));
        if new {
            let placeholder = Step::Lifted(Lifted::new(Vec::new(), String::new()));
            if let Step::Keyed(k) = std::mem::replace(s, placeholder) {
                reps.push((i, k));
            }
        }
    }
    for res in ascendir_ir::threads::par_map(reps, |(i, k)| {
        let t = Instant::now();
        b.ctl
            .check(Stage::Realize)
            .map(|()| timed(t, (i, k.key, k.bytes, b.finish(k.r))))
    }) {
        let ((i, k, bytes, built), ta) = res?;
        spent.all += ta;
        let built = built.map(|(a, ts, tt)| {
            spent.schedule += ts;
            spent.tile += tt;
            a
        });
        memo.record(k, &built);
        steps[i] = match built {
            Ok(a) => Step::Ready(a, bytes, 0.0, 0.0),
            Err(e) => Step::Lifted(b.lifted(&chunk[i], e.to_string())),
        };
    }
    let memo = &*memo;
    let work: Vec<(&Vec<NodeId>, Step)> = chunk.iter().zip(steps).collect();
    for res in ascendir_ir::threads::par_map(work, |(m, s)| {
        let t = Instant::now();
        b.ctl
            .check(Stage::Realize)
            .map(|()| timed(t, b.complete(m, s, memo)))
    }) {
        let ((o, ts, tt), ta) = res?;
        spent.schedule += ts;
        spent.tile += tt;
        spent.all += ta;
        outcomes.push(o);
    }
    Ok(())
}

/// Stages 7–9: realize, lift, schedule and tile every cluster, in parallel (each cluster's
/// work is independent; the outcomes are taken in cluster order). The kernels of the final
/// clusters are built on `ascendir_ir::threads::par_map` (the package's helper threads, or
/// the batch compiler's pool); the result does not depend on the thread count.
#[derive(Debug)]
pub struct Build;

impl Pass for Build {
    fn name(&self) -> &'static str {
        "build"
    }

    fn stage(&self) -> Stage {
        Stage::Realize
    }

    fn stages(&self) -> Vec<Stage> {
        vec![Stage::Realize, Stage::Schedule, Stage::Tile]
    }

    fn times_itself(&self) -> bool {
        true
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let mut memo = std::mem::take(&mut cx.memo);
        let prebuilt = std::mem::take(&mut cx.prebuilt);
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(cx.partition.clusters.len());
        let mut spent = Spent::default();
        {
            let b = Builder::new(cx);
            let mut prebuilt = prebuilt.into_iter();
            for chunk in cx.partition.clusters.chunks(CHUNK) {
                let pres: Vec<Option<Pre>> = prebuilt.by_ref().take(chunk.len()).collect();
                build_chunk(&b, chunk, pres, &mut memo, &mut spent, &mut outcomes)?;
            }
        }
        for o in outcomes {
            match o {
                Outcome::Built(b) => cx.built.push(*b),
                Outcome::Lifted(l) => cx.lifted.push(l),
            }
        }
        // Schedule and tile time the final clusters only (the exact checks' builds are part
        // of the fuse stage). The realize lap ran the final schedules and tilings too, on
        // several threads: the phase's wall time is shared out in proportion to the thread
        // time each part took.
        let timer = &mut cx.timer;
        timer.lap(Stage::Realize);
        if let Some((_, t)) = timer.times.last_mut() {
            let wall = *t;
            let k = if spent.all > 0.0 {
                wall / spent.all
            } else {
                0.0
            };
            spent.schedule *= k;
            spent.tile *= k;
            *t = (wall - spent.schedule - spent.tile).max(0.0);
        }
        timer.times.push((Stage::Schedule, spent.schedule));
        timer.times.push((Stage::Tile, spent.tile));
        Ok(false)
    }
}
