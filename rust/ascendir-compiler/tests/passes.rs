//! The compiler's pass pipeline: the pass list, the report's stages and the dump names agree;
//! the change log records every pass; cancellation and typed errors come out of the passes.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use ascendir_compiler::load::{load, Source};
use ascendir_compiler::passes::Validate;
use ascendir_compiler::simplify;
use ascendir_compiler::{
    compile, compile_with, pipeline, CompileCtx, CompileError, CompileOptions, CompileResult,
    CompiledModel, Control, ErrorKind, Pass, PassManager, Stage,
};
use ascendir_ir::infer::NoCustom;
use ascendir_ir::Graph;

fn example() -> Graph {
    assert_eq!(ascendir_ir::registry::builtin_table_error(), None);
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/transformer_block.onnx");
    load(&Source::Path(model)).expect("the example loads")
}

fn compiled(dump: bool) -> CompiledModel {
    compile(&example(), &CompileOptions::default(), &mut NoCustom, dump).expect("it compiles")
}

#[test]
fn the_pipeline_runs_the_passes_in_order() {
    assert_eq!(
        pipeline().names(),
        [
            "validate",
            "infer",
            "symbolize",
            "simplify",
            "lower",
            "fuse",
            "build",
            "package"
        ]
    );
    assert_eq!(
        simplify::passes().names(),
        [
            "fold_constants",
            "remove_noops",
            "fold_floats",
            "collapse_reshapes",
            "fuse_attention",
            "splits_to_slices",
            "cse",
            "prune"
        ]
    );
}

#[test]
fn the_report_stages_are_the_passes_stages_and_name_the_dumps() {
    let cm = compiled(true);
    let mut want = vec![Stage::Load];
    want.extend(pipeline().stages());
    let got: Vec<Stage> = cm.report.stages.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        got, want,
        "the report's stages are the passes' stages, in order"
    );
    // Every dump is `<NN>_<stage>.<ext>` of a reported stage, in stage order (the symbols of
    // stage 3 are dumped as `03_symbols.json`, after stage 4 symbolized the graph again).
    let mut last = 0;
    for (name, _) in &cm.dumps {
        let (num, rest) = name.split_once('_').expect("a numbered dump");
        let num: u32 = num.parse().expect("a stage number");
        let stage = got
            .iter()
            .find(|s| s.number() == num)
            .unwrap_or_else(|| panic!("dump {name} of no reported stage"));
        let stem = rest.split('.').next().unwrap_or_default();
        assert!(
            stem == stage.name() || (stem == "symbols" && *stage == Stage::Symbolize),
            "dump {name} is not named after stage {stage}"
        );
        assert!(
            num >= last || name == "03_symbols.json",
            "dump {name} out of order"
        );
        last = last.max(num);
    }
    let numbers: Vec<u32> = cm
        .dumps
        .iter()
        .filter_map(|(n, _)| n[..2].parse().ok())
        .collect();
    for s in &got {
        assert!(numbers.contains(&s.number()), "stage {s} has no dump");
    }
}

#[test]
fn the_change_log_records_every_pass() {
    let cm = compiled(false);
    let top: Vec<&str> = cm
        .passes
        .iter()
        .filter(|r| !r.name.contains('.'))
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(top, pipeline().names());
    let nested: Vec<&str> = cm
        .passes
        .iter()
        .filter_map(|r| r.name.strip_prefix("simplify."))
        .collect();
    assert!(
        nested.contains(&"cse") && nested.contains(&"prune"),
        "{nested:?}"
    );
    for r in &cm.passes {
        assert!(r.seconds >= 0.0);
        if r.nodes.0 != r.nodes.1 {
            assert!(
                r.changed,
                "pass {} changed the node count unrecorded",
                r.name
            );
        }
    }
    let package = cm
        .passes
        .iter()
        .find(|r| r.name == "package")
        .expect("package ran");
    assert!(package.changed && package.nodes.1 < package.nodes.0);
    // The nested passes run inside the simplify pass.
    let at = |n: &str| cm.passes.iter().position(|r| r.name == n);
    assert!(at("simplify.prune") < at("simplify") && at("symbolize") < at("simplify.prune"));
}

#[test]
fn a_cancelled_compile_is_a_cancelled_error() {
    let cancel = AtomicBool::new(true);
    let ctl = Control {
        cancel: Some(&cancel),
        cache: None,
    };
    let g = example();
    let e = compile_with(
        std::borrow::Cow::Borrowed(&g),
        &CompileOptions::default(),
        &mut NoCustom,
        false,
        &ctl,
    )
    .expect_err("cancelled");
    assert_eq!(*e.kind, ErrorKind::Cancelled);
    assert_eq!(e.kind.name(), "cancelled");
    assert_eq!(e.reason, "cancelled");
    assert_eq!(e.stage, Stage::Validate);
}

#[test]
fn errors_keep_their_kind() {
    let opts = CompileOptions {
        target: "nowhere".into(),
        ..CompileOptions::default()
    };
    let e = compile(&example(), &opts, &mut NoCustom, false).expect_err("unknown target");
    assert_eq!((e.stage, e.kind.name()), (Stage::Load, "options"));
    let tiling = ErrorKind::from(ascendir_asc::tiling::TilingError {
        message: "graph 'g': ub exceeded".into(),
        constraint: "ub".into(),
        excess: 64,
    });
    assert_eq!(tiling.to_string(), "tiling failed: graph 'g': ub exceeded");
    assert!(
        matches!(&tiling, ErrorKind::Tiling { constraint, excess: 64, .. } if constraint == "ub")
    );
    let e = ascendir_compiler::CompileError::from_kind(Stage::Tile, tiling).with_node("k");
    assert_eq!(
        e.to_string(),
        "tile failed at node 'k': tiling failed: graph 'g': ub exceeded"
    );
}

/// A pass that removes the first node of `op_type` (its consumers left without an input).
struct Remove(String);

impl Pass for Remove {
    fn name(&self) -> &'static str {
        "remove"
    }

    fn stage(&self) -> Stage {
        Stage::Simplify
    }

    fn run(&self, cx: &mut CompileCtx<'_>) -> CompileResult<bool> {
        let id = cx
            .graph
            .node_ids()
            .find(|id| cx.graph.op(*id).is_ok_and(|o| o.op_type() == self.0))
            .expect("a node of the type");
        cx.graph
            .erase_node(id)
            .map_err(|e| CompileError::new(Stage::Simplify, e.to_string()))?;
        Ok(true)
    }
}

#[test]
fn a_pass_that_breaks_the_graph_is_named_by_the_checks() {
    let opts = CompileOptions::default();
    let g = example();
    let victim = g
        .node_ids()
        .filter_map(|id| g.op(id).ok().map(|o| o.op_type().to_string()))
        .find(|t| t != "Data" && t != "Const" && t != "NetOutput")
        .expect("a compute node");
    let run = |check: bool| {
        let mut infer = NoCustom;
        let mut cx = CompileCtx::new(
            std::borrow::Cow::Borrowed(&g),
            &opts,
            &mut infer,
            false,
            Control::default(),
        )
        .expect("a context");
        let pm = PassManager::new(
            "t",
            vec![Box::new(Validate), Box::new(Remove(victim.clone()))],
        )
        .with_checks(check);
        let res = pm.run(&mut cx);
        (res, cx.log.len())
    };
    let (res, ran) = run(true);
    let e = res.expect_err("the checks find the broken graph");
    assert_eq!(e.stage, Stage::Simplify);
    assert!(e.reason.contains("pass 'remove'"), "{}", e.reason);
    assert_eq!(e.kind.name(), "ir");
    assert_eq!(ran, 2);
    let (res, ran) = run(false);
    assert!(res.is_ok(), "without the checks the manager runs on");
    assert_eq!(ran, 2);
}

#[test]
fn a_cancelled_batch_fails_its_models_as_cancelled() {
    use ascendir_compiler::batch::{compile_many, run_batch, BatchSpec, Input, Progress};
    let opts = CompileOptions::default();
    let spec = BatchSpec {
        opts: &opts,
        jobs: 2,
        dump: false,
        cache: None,
        archives: false,
    };
    let inputs = || {
        vec![
            Input::Graph(Box::new(example())),
            Input::Graph(Box::new(example())),
        ]
    };
    let progress = Progress::default();
    progress
        .cancel
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let kinds = std::sync::Mutex::new(Vec::new());
    run_batch(inputs(), &spec, &progress, &|| NoCustom, &|_, r| {
        let kind = r.err().map(|e| (*e.kind).clone());
        kinds.lock().expect("the list").push(kind);
    })
    .expect("the batch runs");
    let kinds = kinds.into_inner().expect("the list");
    assert_eq!(
        kinds,
        [Some(ErrorKind::Cancelled), Some(ErrorKind::Cancelled)]
    );
    // Not cancelled, the models compile.
    let done = compile_many(inputs(), &spec, &|| NoCustom).expect("the batch runs");
    assert!(done.iter().all(|r| r.is_ok()));
}

#[test]
fn a_session_run_pass_by_pass_gives_the_model_compile_gives() {
    use ascendir_compiler::passes::session::Session;
    let opts = CompileOptions::default();
    let g = example();
    let whole = ascendir_compiler::compile(&g, &opts, &mut NoCustom, true).expect("compiles");
    let mut s = Session::new(g.clone(), opts.clone(), &mut NoCustom, true).expect("a session");
    let names = Session::pipeline();
    assert_eq!(names, pipeline().names());
    // Out of order: refused, nothing run.
    let e = s.run("fuse", &mut NoCustom).expect_err("fuse is not next");
    assert_eq!(e.kind.name(), "order");
    assert_eq!(s.next_pass().as_deref(), Some("validate"));
    assert!(s.finishable().is_err());
    for n in &names {
        if n == "fuse" {
            let id = s.decisions().expect("state").len();
            assert!(id > 0, "lower made decisions");
        }
        s.run(n, &mut NoCustom).expect("the pass runs");
    }
    assert!(!s.clusters().expect("state").is_empty());
    let cm = s.finish(&mut NoCustom).expect("finished");
    assert_eq!(cm.graph.dump(), whole.graph.dump());
    let names = |m: &CompiledModel| m.kernels.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&cm), names(&whole));
    assert_eq!(cm.dumps, whole.dumps);
    let log = |m: &CompiledModel| m.passes.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    assert_eq!(log(&cm), log(&whole));
}

#[test]
fn a_session_keeps_a_node_out_of_fusion_between_lower_and_fuse() {
    use ascendir_compiler::passes::session::Session;
    let opts = CompileOptions::default();
    let mut s = Session::new(example(), opts, &mut NoCustom, false).expect("a session");
    for n in ["validate", "infer", "symbolize", "simplify", "lower"] {
        s.run(n, &mut NoCustom).expect("runs");
    }
    let (victim, _) = s
        .decisions()
        .expect("state")
        .into_iter()
        .find(|(_, why)| why.is_none())
        .expect("a lowered node");
    s.keep_out(&victim, "test").expect("in its window");
    assert!(s.keep_out("no such node", "test").is_err());
    s.run("fuse", &mut NoCustom).expect("fuses");
    assert!(s
        .clusters()
        .expect("state")
        .iter()
        .all(|c| !c.contains(&victim)));
    let e = s.keep_out(&victim, "late").expect_err("after fuse");
    assert_eq!(e.kind.name(), "order");
}
