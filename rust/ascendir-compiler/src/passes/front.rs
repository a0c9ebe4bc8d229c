//! The passes of stages 1–6: validate, infer, symbolize, simplify, lower and fuse.

use std::cell::RefCell;

use ascendir_ir::infer::infer_graph;

use crate::error::{CompileError, CompileResult, Stage};
use crate::fuse::Fuser;
use crate::lower::lower_graph;
use crate::passes::build::Builder;
use crate::passes::package::traffic;
use crate::passes::{CompileCtx, Pass};
use crate::symbolize::symbolize;

/// Stage 1: the graph validates.
#[derive(Debug)]
pub struct Validate;

impl Pass for Validate {
    fn name(&self) -> &'static str {
        "validate"
    }

    fn stage(&self) -> Stage {
        Stage::Validate
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        cx.graph
            .validate()
            .map_err(|e| CompileError::from_kind(Stage::Validate, e.into()))?;
        cx.dump_as(Stage::Validate, "validate.txt", |cx| {
            format!(
                "valid: {} nodes, {} subgraphs\n",
                cx.graph.len(),
                cx.graph.subgraphs.len()
            )
        });
        Ok(false)
    }
}

/// Stage 2: shape and dtype inference.
#[derive(Debug)]
pub struct Infer;

impl Pass for Infer {
    fn name(&self) -> &'static str {
        "infer"
    }

    fn stage(&self) -> Stage {
        Stage::Infer
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        infer_graph(&mut cx.graph, &mut *cx.infer).map_err(|e| {
            let node = (!e.node.is_empty()).then(|| e.node.clone());
            let mut err = CompileError::from_kind(Stage::Infer, e.into());
            err.node = node;
            err
        })?;
        cx.dump_as(Stage::Infer, "infer.txt", |cx| cx.graph.dump());
        Ok(true)
    }
}

/// Re-symbolize the graph after a pass changed it: a fresh order (a failure is `stage`'s) and
/// symbols (a failure is stage 3's).
pub(crate) fn resymbolize(cx: &mut CompileCtx<'_>, stage: Stage) -> CompileResult<()> {
    cx.order = cx.topo(stage)?;
    cx.syms = symbolize(&cx.graph, &cx.order, cx.opts, &mut *cx.infer)
        .map_err(|e| CompileError::from_kind(Stage::Symbolize, e))?;
    Ok(())
}

/// Stage 3: the topological order, symbols for unknown dims and symbolic shapes (and the
/// model's traffic before compiling, for the report).
#[derive(Debug)]
pub struct Symbolize;

impl Pass for Symbolize {
    fn name(&self) -> &'static str {
        "symbolize"
    }

    fn stage(&self) -> Stage {
        Stage::Symbolize
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        cx.nodes_before = cx.graph.len();
        resymbolize(cx, Stage::Symbolize)?;
        cx.bytes_before = traffic(&cx.graph, Some(&cx.syms));
        Ok(false)
    }
}

/// Stage 4: the rewrites of [`crate::simplify::passes`] in order, then the graph is
/// symbolized again (its dumps: the symbols, then the graph).
#[derive(Debug)]
pub struct Simplify;

impl Pass for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn stage(&self) -> Stage {
        Stage::Simplify
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let before = cx.log.len();
        crate::simplify::passes().run(cx)?;
        let changed = cx.log[before..].iter().any(|r| r.changed);
        resymbolize(cx, Stage::Simplify)?;
        cx.dump_as(Stage::Symbolize, "symbols.json", |cx| {
            crate::report::symbols_json(&cx.syms)
        });
        cx.dump_as(Stage::Simplify, "simplify.txt", |cx| cx.graph.dump());
        Ok(changed)
    }
}

/// Stage 5: per-node lowering decisions (norms too wide for a one-op kernel are first
/// computed in passes, their GE steps, and the graph lowered again).
#[derive(Debug)]
pub struct Lower;

impl Pass for Lower {
    fn name(&self) -> &'static str {
        "lower"
    }

    fn stage(&self) -> Stage {
        Stage::Lower
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        cx.decisions = lower_graph(&cx.graph, &cx.order, &cx.syms, cx.opts);
        let split = crate::wide_rows::split_wide_rows(
            &mut cx.graph,
            &cx.decisions,
            &cx.syms,
            cx.opts,
            &cx.target,
        )
        .map_err(|e| CompileError::from_kind(Stage::Lower, e))?;
        if split > 0 {
            resymbolize(cx, Stage::Lower)?;
            cx.decisions = lower_graph(&cx.graph, &cx.order, &cx.syms, cx.opts);
        }
        cx.dump_as(Stage::Lower, "lower.json", |cx| {
            crate::report::lower_json(&cx.graph, &cx.order, &cx.decisions)
        });
        Ok(split > 0)
    }
}

/// Stage 6: clustering, with the exact check building the kernels of merged clusters with a
/// reduction (the build stage reuses them).
#[derive(Debug)]
pub struct Fuse;

impl Pass for Fuse {
    fn name(&self) -> &'static str {
        "fuse"
    }

    fn stage(&self) -> Stage {
        Stage::Fuse
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let memo = RefCell::new(std::mem::take(&mut cx.memo));
        let verdicts = RefCell::default();
        let (partition, prebuilt) = {
            let b = Builder::new(cx);
            let check = |ids: &[_]| b.check(ids, &memo, &verdicts);
            Fuser::new(
                &cx.graph,
                &cx.order,
                &cx.decisions,
                &cx.syms,
                cx.opts,
                &check,
            )
            .run()
        };
        cx.partition = partition;
        cx.prebuilt = prebuilt;
        cx.memo = memo.into_inner();
        cx.dump_as(Stage::Fuse, "fuse.json", |cx| {
            crate::report::partition_json(&cx.graph, &cx.partition)
        });
        Ok(false)
    }
}
