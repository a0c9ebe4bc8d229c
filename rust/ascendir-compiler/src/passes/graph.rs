//! The compiler's passes that act on a plain graph, runnable one at a time outside a compile
//! ([`run_graph_pass`]: shape inference and the rewrites of stage 4, by name), and passes
//! written elsewhere (a [`GraphHook`]) run inside a compile at a named point of the pipeline
//! ([`compile_with_hooks`]).

use std::borrow::Cow;

use ascendir_ir::infer::CustomInfer;
use ascendir_ir::Graph;

use crate::error::{CompileError, CompileResult, ErrorKind, Stage};
use crate::model::CompiledModel;
use crate::options::CompileOptions;
use crate::passes::front::{resymbolize, Infer};
use crate::passes::{CompileCtx, Pass};
use crate::pipeline::{pipeline, Control};

/// The passes that act on a plain graph, in pipeline order: `infer`, then the rewrites of
/// stage 4 (taken from [`crate::simplify::passes`], the list the pipeline runs).
pub fn graph_passes() -> Vec<Box<dyn Pass>> {
    let mut all: Vec<Box<dyn Pass>> = vec![Box::new(Infer)];
    all.extend(crate::simplify::passes().into_passes());
    all
}

/// The names of [`graph_passes`], in order.
pub fn graph_pass_names() -> Vec<String> {
    graph_passes()
        .iter()
        .map(|p| p.name().to_string())
        .collect()
}

/// Run the graph pass `name` of [`graph_passes`] over `graph` in place under `opts`: a stage 4
/// rewrite gets the graph's symbols first (as stage 3 makes them; the graph must be inferred);
/// a pass the options turn off does nothing. `Ok(true)` when the pass modified the graph. On
/// an error the graph is left as the pass left it.
pub fn run_graph_pass(
    graph: &mut Graph,
    name: &str,
    opts: &CompileOptions,
    infer: &mut dyn CustomInfer,
) -> CompileResult<bool> {
    let pass = graph_passes()
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            let known = graph_pass_names().join(", ");
            let e = ErrorKind::Options(format!("unknown compiler pass '{name}' (known: {known})"));
            CompileError::from_kind(Stage::Load, e)
        })?;
    let name = graph.name().to_string();
    let owned = std::mem::replace(graph, Graph::new(&name));
    let mut cx = CompileCtx::new(Cow::Owned(owned), opts, infer, false, Control::default())?;
    let result = run_in(&mut cx, pass.as_ref());
    *graph = std::mem::replace(&mut cx.graph, Graph::new(&name));
    result
}

fn run_in(cx: &mut CompileCtx<'_>, pass: &dyn Pass) -> CompileResult<bool> {
    if !pass.enabled(cx) {
        return Ok(false);
    }
    if pass.stage() == Stage::Simplify {
        resymbolize(cx, Stage::Symbolize)?;
    }
    pass.run(cx)
}

/// A graph pass written outside the compiler (e.g. in Python), run inside a compile.
pub trait GraphHook: Send {
    /// The pass's name (the pass log's, and its dump's `<NN>_<name>.txt`).
    fn name(&self) -> &str;

    /// Run over `graph` in place; `Ok(true)` when it modified the graph, `Err(reason)` when it
    /// failed.
    fn run(&self, graph: &mut Graph) -> Result<bool, HookError>;
}

/// Why a [`GraphHook`] failed: its own error, kept as the cause.
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

/// Where a [`GraphHook`] runs: before or after a top-level pass of [`pipeline`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Just before the named pass.
    Before,
    /// Just after the named pass.
    After,
}

/// One hook and where it runs.
pub struct Hook {
    /// Before or after `point`.
    pub position: Position,
    /// A top-level pass of [`pipeline`] (`validate` … `simplify`, or before `lower`).
    pub point: String,
    /// The pass.
    pub pass: Box<dyn GraphHook>,
}

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hook")
            .field("position", &self.position)
            .field("point", &self.point)
            .field("pass", &self.pass.name())
            .finish()
    }
}

/// A [`GraphHook`] as a pass of the pipeline: after it the order and symbols are made again
/// when the pipeline has made them already, and the graph is dumped as `<NN>_<name>.txt`.
pub(crate) struct HookPass {
    hook: Box<dyn GraphHook>,
    stage: Stage,
}

impl HookPass {
    /// `hook` as a pass of `stage`.
    pub(crate) fn new(hook: Box<dyn GraphHook>, stage: Stage) -> HookPass {
        HookPass { hook, stage }
    }
}

impl Pass for HookPass {
    fn name(&self) -> &str {
        self.hook.name()
    }

    fn stage(&self) -> Stage {
        self.stage
    }

    fn stages(&self) -> Vec<Stage> {
        Vec::new()
    }

    fn times_itself(&self) -> bool {
        // Its time counts in the next stage's lap: the report's stages stay the pipeline's.
        true
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let name = self.hook.name().to_string();
        let changed = self.hook.run(&mut cx.graph).map_err(|reason| {
            let e = ErrorKind::Other(format!("user pass '{name}' failed: {reason}"));
            CompileError::from_kind(self.stage, e)
        })?;
        if !cx.order.is_empty() {
            resymbolize(cx, self.stage)?;
        }
        cx.dump_as(self.stage, &format!("{name}.txt"), |cx| cx.graph.dump());
        Ok(changed)
    }
}

/// The first top-level pass hooks may not run after: lowering decisions, clusters and kernels
/// are not made again.
const LAST_POINT: &str = "lower";

/// [`crate::compile_with`] with `hooks` run at their points of the pipeline (in the order
/// given among hooks at one point). A point that is not a pass of [`pipeline`] up to `lower`
/// (only `before` it) is an options error.
pub fn compile_with_hooks(
    input: Cow<'_, Graph>,
    opts: &CompileOptions,
    infer: &mut dyn CustomInfer,
    dump: bool,
    ctl: &Control<'_>,
    hooks: Vec<Hook>,
) -> CompileResult<CompiledModel> {
    let mut pm = pipeline();
    let names: Vec<String> = pm.names().iter().map(|n| n.to_string()).collect();
    let stages = pm.pass_stages();
    let last = names
        .iter()
        .position(|n| n == LAST_POINT)
        .unwrap_or(names.len());
    // Insert from the back so earlier indices stay valid: hooks at one point keep their order.
    let mut placed = Vec::with_capacity(hooks.len());
    for (i, h) in hooks.into_iter().enumerate() {
        let Some(at) = names.iter().position(|n| *n == h.point) else {
            let e = ErrorKind::Options(format!(
                "user pass '{}': unknown point '{}' (one of: {})",
                h.pass.name(),
                h.point,
                names
                    .iter()
                    .take(last + 1)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return Err(CompileError::from_kind(Stage::Load, e));
        };
        let index = match h.position {
            Position::Before => at,
            Position::After => at + 1,
        };
        if index > last {
            let e = ErrorKind::Options(format!(
                "user pass '{}': passes run before '{LAST_POINT}' at the latest, not after '{}'",
                h.pass.name(),
                h.point
            ));
            return Err(CompileError::from_kind(Stage::Load, e));
        }
        let stage = stages.get(at).copied().unwrap_or(Stage::Load);
        placed.push((
            index,
            i,
            HookPass {
                hook: h.pass,
                stage,
            },
        ));
    }
    placed.sort_by_key(|(index, i, _)| (std::cmp::Reverse(*index), std::cmp::Reverse(*i)));
    for (index, _, p) in placed {
        pm.insert(index, Box::new(p));
    }
    let mut cx = CompileCtx::new(input, opts, infer, dump, *ctl)?;
    cx.load();
    pm.run(&mut cx)?;
    Ok(cx.finish())
}
