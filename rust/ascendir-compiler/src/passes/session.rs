//! A compile run one pass at a time ([`Session`]): the caller (the Python pass manager) drives
//! the passes of [`pipeline`] in order, runs its own passes between them, and reads what the
//! passes made (lowering decisions, clusters, kernels). Each pass runs exactly as
//! [`PassManager::run`] runs it in [`crate::compile`] (the same stage laps, log records,
//! invariant checks and dumps), so a session that runs the whole pipeline gives the compiled
//! model `compile` gives.

use std::borrow::Cow;

use ascendir_asc::target::Target;
use ascendir_ir::infer::CustomInfer;
use ascendir_ir::{Graph, NodeId};

use crate::error::{CompileError, CompileResult, ErrorKind, Stage};
use crate::fuse::Partition;
use crate::lower::{Barrier, Category, Decision, Decisions};
use crate::model::{CompiledModel, Kernel};
use crate::options::CompileOptions;
use crate::passes::front::resymbolize;
use crate::passes::graph::{graph_passes, GraphHook, HookPass};
use crate::passes::{build, CompileCtx, PassManager, PassRecord, Timer};
use crate::pipeline::{pipeline, Control};
use crate::report::{BarrierInfo, Lifted};
use crate::simplify::SimplifyStats;

/// Everything a [`CompileCtx`] holds but its borrowed inputs (options, control, inference
/// callbacks): the state of a compile between two passes.
struct Suspended {
    target: Target,
    graph: Graph,
    order: Vec<NodeId>,
    syms: crate::symbolize::SymTable,
    decisions: Decisions,
    partition: Partition,
    prebuilt: Vec<Option<build::Pre>>,
    memo: crate::twins::Memo,
    built: Vec<build::Built>,
    lifted: Vec<Lifted>,
    barriers: Vec<BarrierInfo>,
    kernels: Vec<Kernel>,
    timer: Timer,
    dump: bool,
    dumps: Vec<(String, String)>,
    simplify: SimplifyStats,
    nodes_before: usize,
    bytes_before: i64,
    log: Vec<PassRecord>,
}

impl<'a> CompileCtx<'a> {
    fn suspend(self) -> Suspended {
        Suspended {
            target: self.target,
            graph: self.graph,
            order: self.order,
            syms: self.syms,
            decisions: self.decisions,
            partition: self.partition,
            prebuilt: self.prebuilt,
            memo: self.memo,
            built: self.built,
            lifted: self.lifted,
            barriers: self.barriers,
            kernels: self.kernels,
            timer: self.timer,
            dump: self.dump,
            dumps: self.dumps,
            simplify: self.simplify,
            nodes_before: self.nodes_before,
            bytes_before: self.bytes_before,
            log: self.log,
        }
    }

    fn resume(
        s: Suspended,
        opts: &'a CompileOptions,
        infer: &'a mut dyn CustomInfer,
        ctl: Control<'a>,
    ) -> CompileCtx<'a> {
        CompileCtx {
            opts,
            target: s.target,
            ctl,
            infer,
            graph: s.graph,
            order: s.order,
            syms: s.syms,
            decisions: s.decisions,
            partition: s.partition,
            prebuilt: s.prebuilt,
            memo: s.memo,
            built: s.built,
            lifted: s.lifted,
            barriers: s.barriers,
            kernels: s.kernels,
            timer: s.timer,
            dump: s.dump,
            dumps: s.dumps,
            simplify: s.simplify,
            nodes_before: s.nodes_before,
            bytes_before: s.bytes_before,
            log: s.log,
        }
    }
}

/// The first pipeline pass after which passes over the plain graph may no longer run: its
/// lowering decisions, and the clusters and kernels made from them, are not made again.
const LOWER: &str = "lower";
/// The pass after which lowering decisions may be overridden ([`Session::keep_out`]).
const FUSE: &str = "fuse";

/// A node's lowering decision as [`Session::decisions`] gives it: its name, and `None` when
/// lowered or `Some((category, reason))` when not.
pub type NodeDecision = (String, Option<(String, String)>);

/// A compile run one pass at a time. See the module docs.
pub struct Session {
    opts: CompileOptions,
    /// The names of [`pipeline`]'s passes, in order (read once).
    names: Vec<String>,
    /// `None` only while a pass runs (a panic there leaves the session unusable, not wrong).
    state: Option<Suspended>,
    /// Index in [`pipeline`] of the next pass to run.
    next: usize,
    /// The pass whose failure ended the session.
    failed: Option<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("next", &self.next_pass())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

fn order_error(reason: String) -> CompileError {
    CompileError::from_kind(Stage::Load, ErrorKind::Order(reason))
}

impl Session {
    /// A session compiling `graph` with `opts` (checked here), the load stage done.
    pub fn new(
        graph: Graph,
        opts: CompileOptions,
        infer: &mut dyn CustomInfer,
        dump: bool,
    ) -> CompileResult<Session> {
        let state = {
            let mut cx =
                CompileCtx::new(Cow::Owned(graph), &opts, infer, dump, Control::default())?;
            cx.load();
            cx.suspend()
        };
        Ok(Session {
            opts,
            names: Session::pipeline(),
            state: Some(state),
            next: 0,
            failed: None,
        })
    }

    /// The names of the pipeline's passes, in order.
    pub fn pipeline() -> Vec<String> {
        pipeline().names().iter().map(|n| n.to_string()).collect()
    }

    /// The next pipeline pass to run, `None` when all have run.
    pub fn next_pass(&self) -> Option<String> {
        self.names.get(self.next).cloned()
    }

    fn index_of(&self, name: &str) -> usize {
        let names = &self.names;
        names.iter().position(|n| n == name).unwrap_or(names.len())
    }

    fn state(&self) -> CompileResult<&Suspended> {
        self.state
            .as_ref()
            .ok_or_else(|| order_error("the session was left by a pass that panicked".into()))
    }

    /// Run `f` over the context rebuilt from the state (the stage timer restarted: time spent
    /// between passes counts for no stage); a failure ends the session, naming `pass`.
    fn with_ctx<T>(
        &mut self,
        pass: &str,
        infer: &mut dyn CustomInfer,
        f: impl FnOnce(&mut CompileCtx<'_>) -> CompileResult<T>,
    ) -> CompileResult<T> {
        if let Some(p) = &self.failed {
            return Err(order_error(format!(
                "the compile failed in pass '{p}': nothing more runs in this session"
            )));
        }
        let s = self
            .state
            .take()
            .ok_or_else(|| order_error("the session was left by a pass that panicked".into()))?;
        let mut cx = CompileCtx::resume(s, &self.opts, infer, Control::default());
        cx.timer.restart();
        let result = f(&mut cx);
        self.state = Some(cx.suspend());
        if result.is_err() {
            self.failed = Some(pass.to_string());
        }
        result
    }

    /// Run the pass `name`: the next pipeline pass (running them out of order is an `Order`
    /// error), or, before `lower`, one of [`graph_passes`] over the graph (a stage 4 rewrite
    /// gets the graph's symbols first; the order and symbols are made again after it once
    /// `symbolize` has run). `Ok(true)` when it modified the graph.
    pub fn run(&mut self, name: &str, infer: &mut dyn CustomInfer) -> CompileResult<bool> {
        let pm = pipeline();
        let names = &self.names;
        if let Some(i) = names.iter().position(|n| n == name) {
            if i != self.next {
                let next = match self.next_pass() {
                    Some(n) => format!("the next pass is '{n}'"),
                    None => "every pass has run".to_string(),
                };
                return Err(order_error(format!(
                    "pass '{name}' runs in pipeline order ({}): {next}",
                    names.join(", ")
                )));
            }
            let changed = self.with_ctx(name, infer, |cx| {
                pm.run_index(i, cx).map(|c| c.unwrap_or(false))
            })?;
            self.next += 1;
            return Ok(changed);
        }
        let Some(pass) = graph_passes().into_iter().find(|p| p.name() == name) else {
            let known: Vec<String> = graph_passes().iter().map(|p| p.name().into()).collect();
            return Err(order_error(format!(
                "unknown compiler pass '{name}' (pipeline: {}; graph passes: {})",
                names.join(", "),
                known.join(", ")
            )));
        };
        self.graph_point(name)?;
        let nested = PassManager::nested("simplify", Vec::new());
        let symbolized = self.next > self.index_of("symbolize");
        self.with_ctx(name, infer, |cx| {
            if !pass.enabled(cx) {
                return Ok(false);
            }
            if pass.stage() == Stage::Simplify {
                resymbolize(cx, Stage::Symbolize)?;
            }
            let changed = nested.run_pass(pass.as_ref(), cx)?;
            if symbolized {
                resymbolize(cx, pass.stage())?;
            } else {
                cx.order.clear();
            }
            Ok(changed)
        })
    }

    /// Refuse a pass over the plain graph once `lower` has run.
    fn graph_point(&self, what: &str) -> CompileResult<()> {
        if self.next > self.index_of(LOWER) {
            return Err(order_error(format!(
                "'{what}' works on the graph: it runs before '{LOWER}' at the latest (the \
                 lowering decisions, clusters and kernels are not made again)"
            )));
        }
        Ok(())
    }

    /// Run `hook` (a pass written outside the compiler) over the graph, as a pass of the
    /// pipeline at `point` (a pipeline pass; its stage numbers the dump `<NN>_<name>.txt`;
    /// `None`: the last pass run). Only before `lower`.
    pub fn run_hook(
        &mut self,
        hook: Box<dyn GraphHook>,
        point: Option<&str>,
        infer: &mut dyn CustomInfer,
    ) -> CompileResult<bool> {
        let name = hook.name().to_string();
        self.graph_point(&format!("user pass '{name}'"))?;
        let pm = pipeline();
        let stages = pm.pass_stages();
        let at = match point {
            Some(p) => Some(self.index_of(p))
                .filter(|i| *i < stages.len())
                .ok_or_else(|| order_error(format!("user pass '{name}': unknown point '{p}'")))?,
            None => self.next.saturating_sub(1),
        };
        let stage = match (point, self.next) {
            (None, 0) => Stage::Load,
            _ => stages.get(at).copied().unwrap_or(Stage::Load),
        };
        let pass = HookPass::new(hook, stage);
        self.with_ctx(&name, infer, |cx| pm.run_pass(&pass, cx))
    }

    /// Keep node `name` out of fusion: its lowering decision becomes a barrier (GE's "Node Info
    /// Incorrect", `reason` recorded). Only after `lower` and before `fuse`.
    pub fn keep_out(&mut self, name: &str, reason: &str) -> CompileResult<()> {
        if self.next != self.index_of(FUSE) {
            return Err(order_error(format!(
                "keep_out('{name}') overrides lowering decisions: it runs after '{LOWER}' and \
                 before '{FUSE}'"
            )));
        }
        if let Some(p) = &self.failed {
            return Err(order_error(format!("the compile failed in pass '{p}'")));
        }
        let s = self
            .state
            .as_mut()
            .ok_or_else(|| order_error("the session was left by a pass that panicked".into()))?;
        let id = s.graph.find(name).ok_or_else(|| {
            let e = ascendir_ir::IrError::NotFound(format!("no node '{name}'"));
            CompileError::from_kind(Stage::Lower, e.into())
        })?;
        s.decisions.insert(
            id,
            Decision::Barrier(Barrier {
                category: Category::NodeInfoIncorrect,
                reason: format!("kept out by a user pass: {reason}"),
            }),
        );
        Ok(())
    }

    /// The graph being compiled.
    pub fn graph(&self) -> CompileResult<&Graph> {
        Ok(&self.state()?.graph)
    }

    /// Each node's lowering decision, decision order: `(name, None)` when lowered, `(name,
    /// Some((category, reason)))` when not. Empty before `lower`.
    pub fn decisions(&self) -> CompileResult<Vec<NodeDecision>> {
        let s = self.state()?;
        Ok(s.decisions
            .iter()
            .filter_map(|(id, d)| {
                let node = s.graph.node(id).ok()?;
                let why = match d {
                    Decision::Lowered(_) => None,
                    Decision::Barrier(b) => Some((b.category.text().to_string(), b.reason.clone())),
                };
                Some((node.name().to_string(), why))
            })
            .collect())
    }

    /// The clusters of `fuse` (member names, topological), cluster order. Empty before it.
    pub fn clusters(&self) -> CompileResult<Vec<Vec<String>>> {
        let s = self.state()?;
        Ok(s.partition
            .clusters
            .iter()
            .map(|c| {
                c.iter()
                    .filter_map(|id| s.graph.node(*id).ok().map(|n| n.name().to_string()))
                    .collect()
            })
            .collect())
    }

    /// The packaged kernels (after `package`).
    pub fn kernels(&self) -> CompileResult<&[Kernel]> {
        Ok(&self.state()?.kernels)
    }

    /// Every pass run so far, in order.
    pub fn log(&self) -> CompileResult<&[PassRecord]> {
        Ok(&self.state()?.log)
    }

    /// `Ok` when [`Session::finish`] can give the compiled model: every pipeline pass has run
    /// and none failed.
    pub fn finishable(&self) -> CompileResult<()> {
        if let Some(p) = &self.failed {
            return Err(order_error(format!("the compile failed in pass '{p}'")));
        }
        if let Some(next) = self.next_pass() {
            return Err(order_error(format!(
                "the compile is not finished: the next pass is '{next}'"
            )));
        }
        Ok(())
    }

    /// The compiled model, once every pipeline pass has run.
    pub fn finish(mut self, infer: &mut dyn CustomInfer) -> CompileResult<CompiledModel> {
        self.finishable()?;
        let s = self
            .state
            .take()
            .ok_or_else(|| order_error("the session was left by a pass that panicked".into()))?;
        let opts = std::mem::take(&mut self.opts);
        let cx = CompileCtx::resume(s, &opts, infer, Control::default());
        Ok(cx.finish())
    }
}
