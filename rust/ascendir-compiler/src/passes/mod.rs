//! The compiler as a pipeline of passes over one [`CompileCtx`]: a [`Pass`] reads and
//! updates the context (the graph, its topological order, symbols, lowering decisions, the
//! partition, built kernels, the stage timer and the dumps); a [`PassManager`] runs an ordered
//! list of them, timing each, logging what it changed and checking the graph's invariants
//! between them (in debug builds, and on request).

use std::borrow::Cow;
use std::time::Instant;

use ascendir_asc::target::Target;
use ascendir_ir::infer::CustomInfer;
use ascendir_ir::{Graph, NodeId, TopoMode, TopoOptions};

use crate::error::{CompileError, CompileResult, ErrorKind, Stage};
use crate::fuse::Partition;
use crate::lower::Decisions;
use crate::model::{CompiledModel, Kernel};
use crate::options::CompileOptions;
use crate::pipeline::Control;
use crate::report::{BarrierInfo, Lifted, Report};
use crate::simplify::SimplifyStats;
use crate::symbolize::SymTable;

pub(crate) mod build;
pub(crate) mod front;
pub mod graph;
pub(crate) mod package;
pub mod session;

pub use build::Build;
pub use front::{Fuse, Infer, Lower, Simplify, Symbolize, Validate};
pub use package::Package;

/// Seconds per stage, as the report shows them: each lap is the time since the last one.
#[derive(Debug)]
pub struct Timer {
    t: Instant,
    /// The laps so far, pipeline order.
    pub times: Vec<(Stage, f64)>,
}

impl Timer {
    /// A timer started now.
    pub fn start() -> Timer {
        Timer {
            t: Instant::now(),
            times: Vec::new(),
        }
    }

    /// Record the seconds since the last lap as `s`'s.
    pub fn lap(&mut self, s: Stage) {
        let now = Instant::now();
        self.times.push((s, (now - self.t).as_secs_f64()));
        self.t = now;
    }

    /// Start the next lap now (time spent since the last lap counts for no stage).
    pub fn restart(&mut self) {
        self.t = Instant::now();
    }
}

/// What one run of a pass did.
#[derive(Clone, Debug, PartialEq)]
pub struct PassRecord {
    /// The pass (`manager.pass` for a nested manager's).
    pub name: String,
    /// The stage it ran under.
    pub stage: Stage,
    /// Wall seconds.
    pub seconds: f64,
    /// Whether it modified the graph.
    pub changed: bool,
    /// Nodes of the graph before and after.
    pub nodes: (usize, usize),
}

/// Everything one compile works on: the inputs (options, target, control, the custom
/// inference callbacks) and the state the passes hand on to each other.
pub struct CompileCtx<'a> {
    /// The options.
    pub opts: &'a CompileOptions,
    /// The target of `opts`.
    pub target: Target,
    /// Cancellation and the kernel cache.
    pub ctl: Control<'a>,
    /// Custom shape inference callbacks.
    pub infer: &'a mut dyn CustomInfer,
    /// The graph being compiled (the caller's is never changed).
    pub graph: Graph,
    /// Topological order of `graph` (depth-first), from stage 3 on.
    pub order: Vec<NodeId>,
    /// Symbols and symbolic shapes of `graph`, from stage 3 on.
    pub syms: SymTable,
    /// Per-node lowering decisions, from stage 5 on.
    pub decisions: Decisions,
    /// The clusters of stage 6.
    pub partition: Partition,
    /// What the fuse stage built per cluster (taken by the build stage).
    pub(crate) prebuilt: Vec<Option<build::Pre>>,
    /// Build outcomes by cluster structure (shared by the fuse and build stages).
    pub(crate) memo: crate::twins::Memo,
    /// Built clusters (taken by the package stage).
    pub(crate) built: Vec<build::Built>,
    /// Clusters lifted back out, with why.
    pub lifted: Vec<Lifted>,
    /// The nodes not lowered, with why (before packaging).
    pub barriers: Vec<BarrierInfo>,
    /// The packaged kernels, cluster order.
    pub kernels: Vec<Kernel>,
    /// Seconds per stage.
    pub timer: Timer,
    /// Whether stage dumps are made.
    pub dump: bool,
    /// Stage dumps (file name → text).
    pub dumps: Vec<(String, String)>,
    /// What stage 4 did.
    pub simplify: SimplifyStats,
    /// Nodes of the model before compiling.
    pub nodes_before: usize,
    /// Read + write bytes of the model before compiling (at the hints).
    pub bytes_before: i64,
    /// Every pass run, in order.
    pub log: Vec<PassRecord>,
}

impl std::fmt::Debug for CompileCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCtx")
            .field("graph", &self.graph.name())
            .field("nodes", &self.graph.len())
            .field("clusters", &self.partition.clusters.len())
            .field("kernels", &self.kernels.len())
            .field("log", &self.log)
            .finish_non_exhaustive()
    }
}

impl<'a> CompileCtx<'a> {
    /// A context compiling `graph` (a borrowed one is copied) with `opts` (checked here: a
    /// bad option or an unknown target is a load error).
    pub fn new(
        graph: Cow<'_, Graph>,
        opts: &'a CompileOptions,
        infer: &'a mut dyn CustomInfer,
        dump: bool,
        ctl: Control<'a>,
    ) -> CompileResult<CompileCtx<'a>> {
        opts.check()
            .map_err(|e| CompileError::from_kind(Stage::Load, e))?;
        let target = Target::by_name(&opts.target).ok_or_else(|| {
            let e = ErrorKind::Options(format!("unknown target '{}'", opts.target));
            CompileError::from_kind(Stage::Load, e)
        })?;
        // The copy of a borrowed graph is part of the load stage's time.
        let timer = Timer::start();
        let graph = graph.into_owned();
        Ok(CompileCtx {
            opts,
            target,
            ctl,
            infer,
            nodes_before: graph.len(),
            graph,
            order: Vec::new(),
            syms: SymTable::default(),
            decisions: Decisions::default(),
            partition: Partition::default(),
            prebuilt: Vec::new(),
            memo: crate::twins::Memo::default(),
            built: Vec::new(),
            lifted: Vec::new(),
            barriers: Vec::new(),
            kernels: Vec::new(),
            timer,
            dump,
            dumps: Vec::new(),
            simplify: SimplifyStats::default(),
            bytes_before: 0,
            log: Vec::new(),
        })
    }

    /// The load stage's end: its dump (the graph as given) and its lap.
    pub fn load(&mut self) {
        self.dump_as(Stage::Load, "load.txt", |cx| cx.graph.dump());
        self.timer.lap(Stage::Load);
    }

    /// Record the dump `<NN>_<file>` of `stage` (its number, two digits) when dumps are made.
    pub fn dump_as(&mut self, stage: Stage, file: &str, text: impl FnOnce(&Self) -> String) {
        if self.dump {
            let name = format!("{:02}_{file}", stage.number());
            let text = text(self);
            self.dumps.push((name, text));
        }
    }

    /// The compiled model: the graph, the kernels, the report (with the model's traffic after
    /// compiling) and the dumps.
    pub fn finish(self) -> CompiledModel {
        let bytes_after = package::traffic(&self.graph, Some(&self.syms));
        let report = Report::build(
            &self.kernels,
            &self.partition,
            self.barriers,
            self.lifted,
            &self.syms,
            self.timer.times,
            (self.nodes_before, self.graph.len()),
            (self.bytes_before, bytes_after),
            self.simplify,
            &self.opts.target,
        );
        CompiledModel {
            graph: self.graph,
            kernels: self.kernels,
            report,
            dumps: self.dumps,
            passes: self.log,
        }
    }

    /// A fresh depth-first topological order of the graph (a failure is `stage`'s).
    pub fn topo(&self, stage: Stage) -> CompileResult<Vec<NodeId>> {
        self.graph
            .topo_order(&TopoOptions::new(TopoMode::Dfs))
            .map_err(|e| CompileError::from_kind(stage, e.into()))
    }
}

/// One step of the compiler over a [`CompileCtx`].
pub trait Pass {
    /// The pass's name: the report's stage name and the stem of its dump file for a stage
    /// pass, the counter's name for a stage 4 rewrite.
    fn name(&self) -> &str;

    /// The stage whose time and errors the pass's are.
    fn stage(&self) -> Stage;

    /// The report stages whose times it records (default: its own stage's).
    fn stages(&self) -> Vec<Stage> {
        vec![self.stage()]
    }

    /// Whether it runs under the context's options (default: always).
    fn enabled(&self, _cx: &CompileCtx<'_>) -> bool {
        true
    }

    /// Whether it records its stage times itself (default: the manager records one lap of
    /// [`Pass::stage`] after it).
    fn times_itself(&self) -> bool {
        false
    }

    /// Run over `cx`; `Ok(true)` when the pass modified the graph.
    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool>;
}

/// Whether the graph's invariants are checked between passes by default: in debug builds, or
/// with `ASCENDIR_CHECK_PASSES=1` (`0` turns them off).
pub fn check_by_default() -> bool {
    match std::env::var("ASCENDIR_CHECK_PASSES").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => cfg!(debug_assertions),
    }
}

/// The graph validates and sorts (what every pass leaves behind); a failure (of kind `Ir`,
/// the graph's error kept) names `after`.
pub fn check_invariants(g: &Graph, after: &str, stage: Stage) -> CompileResult<()> {
    let broken = |e: ascendir_ir::IrError| {
        let reason = format!("the graph left by pass '{after}' is broken: {e}");
        CompileError {
            reason,
            ..CompileError::from_kind(stage, e.into())
        }
    };
    g.validate().map_err(broken)?;
    g.topo_order(&TopoOptions::new(TopoMode::Dfs))
        .map_err(broken)?;
    Ok(())
}

/// An ordered list of passes run over one context.
pub struct PassManager {
    name: &'static str,
    passes: Vec<Box<dyn Pass>>,
    laps: bool,
    check: bool,
}

impl std::fmt::Debug for PassManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassManager")
            .field("name", &self.name)
            .field("passes", &self.names())
            .field("check", &self.check)
            .finish()
    }
}

impl PassManager {
    /// A manager of `passes` that records one stage lap per pass (the top-level pipeline).
    pub fn new(name: &'static str, passes: Vec<Box<dyn Pass>>) -> PassManager {
        PassManager {
            name,
            passes,
            laps: true,
            check: check_by_default(),
        }
    }

    /// A manager of `passes` run inside one pass: its passes are logged as
    /// `<name>.<pass>`, the enclosing pass's stage lap covers them.
    pub fn nested(name: &'static str, passes: Vec<Box<dyn Pass>>) -> PassManager {
        PassManager {
            laps: false,
            ..PassManager::new(name, passes)
        }
    }

    /// Check the graph's invariants after every pass (`on`), or not.
    pub fn with_checks(mut self, on: bool) -> PassManager {
        self.check = on;
        self
    }

    /// The manager's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The passes' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Each pass's own stage, in order (one per pass, unlike [`PassManager::stages`]).
    pub fn pass_stages(&self) -> Vec<Stage> {
        self.passes.iter().map(|p| p.stage()).collect()
    }

    /// The passes themselves, in order (to run one alone or build another manager).
    pub fn into_passes(self) -> Vec<Box<dyn Pass>> {
        self.passes
    }

    /// Insert `pass` at `index` (clamped to the end).
    pub fn insert(&mut self, index: usize, pass: Box<dyn Pass>) {
        let index = index.min(self.passes.len());
        self.passes.insert(index, pass);
    }

    /// The report stages the passes record, in order.
    pub fn stages(&self) -> Vec<Stage> {
        self.passes.iter().flat_map(|p| p.stages()).collect()
    }

    /// Run every enabled pass in order (a cancellation is checked before each).
    pub fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<()> {
        for p in &self.passes {
            self.run_pass(p.as_ref(), cx)?;
        }
        Ok(())
    }

    /// Run pass `index` of the manager alone, as [`PassManager::run`] runs it: `Ok(None)` when
    /// there is no such pass.
    pub fn run_index(&self, index: usize, cx: &mut CompileCtx<'_>) -> CompileResult<Option<bool>> {
        match self.passes.get(index) {
            Some(p) => self.run_pass(p.as_ref(), cx).map(Some),
            None => Ok(None),
        }
    }

    /// Run `p` as a pass of this manager, when enabled: the cancellation check, the stage lap,
    /// the log record and the invariant check. `Ok(true)` when it modified the graph.
    pub fn run_pass(&self, p: &dyn Pass, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        if !p.enabled(cx) {
            return Ok(false);
        }
        cx.ctl.check(p.stage())?;
        let before = cx.graph.len();
        let t = Instant::now();
        let changed = p.run(cx)?;
        let seconds = t.elapsed().as_secs_f64();
        if self.laps && !p.times_itself() {
            cx.timer.lap(p.stage());
        }
        let name = match self.laps {
            true => p.name().to_string(),
            false => format!("{}.{}", self.name, p.name()),
        };
        cx.log.push(PassRecord {
            name,
            stage: p.stage(),
            seconds,
            changed,
            nodes: (before, cx.graph.len()),
        });
        if self.check {
            check_invariants(&cx.graph, p.name(), p.stage())?;
            if self.laps {
                // The checks' time counts for no stage.
                cx.timer.restart();
            }
        }
        Ok(changed)
    }
}
