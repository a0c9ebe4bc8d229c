//! The compiler's graph passes run one at a time (`run_graph_pass`) give the graph of stage 4,
//! and hooks run at their points of the pipeline (`compile_with_hooks`).

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ascendir_compiler::load::{load, Source};
use ascendir_compiler::passes::graph::{
    compile_with_hooks, graph_pass_names, run_graph_pass, GraphHook, Hook, HookError, Position,
};
use ascendir_compiler::{compile, simplify, CompileOptions, Control, ErrorKind, Stage};
use ascendir_ir::infer::NoCustom;
use ascendir_ir::Graph;

fn example() -> Graph {
    assert_eq!(ascendir_ir::registry::builtin_table_error(), None);
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/transformer_block.onnx");
    load(&Source::Path(model)).expect("the example loads")
}

#[test]
fn the_graph_passes_are_infer_and_the_simplify_list() {
    let mut want = vec!["infer".to_string()];
    want.extend(simplify::passes().names().iter().map(|n| n.to_string()));
    assert_eq!(graph_pass_names(), want);
}

#[test]
fn running_the_graph_passes_in_order_gives_the_stage_4_graph() {
    let opts = CompileOptions::default();
    let g = example();
    let cm = compile(&g, &opts, &mut NoCustom, true).expect("it compiles");
    let stage4 = cm
        .dumps
        .iter()
        .find(|(n, _)| n == "04_simplify.txt")
        .map(|(_, t)| t.clone())
        .expect("the stage 4 dump");
    let mut h = g.clone();
    let mut changed = false;
    for name in graph_pass_names() {
        changed |= run_graph_pass(&mut h, &name, &opts, &mut NoCustom).expect("the pass runs");
    }
    assert!(changed);
    assert_eq!(h.dump(), stage4);
    let e = run_graph_pass(&mut h, "lower", &opts, &mut NoCustom).expect_err("not a graph pass");
    assert!(matches!(*e.kind, ErrorKind::Options(_)), "{e}");
}

/// Counts its calls; fails when `fail`.
struct Count(Arc<AtomicUsize>, bool);

impl GraphHook for Count {
    fn name(&self) -> &str {
        "count"
    }

    fn run(&self, _graph: &mut Graph) -> Result<bool, HookError> {
        self.0.fetch_add(1, Ordering::Relaxed);
        match self.1 {
            true => Err("refused".into()),
            false => Ok(false),
        }
    }
}

fn hooked(point: &str, position: Position, fail: bool) -> (usize, Result<Vec<String>, String>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let hook = Hook {
        position,
        point: point.to_string(),
        pass: Box::new(Count(Arc::clone(&calls), fail)),
    };
    let opts = CompileOptions::default();
    let r = compile_with_hooks(
        Cow::Owned(example()),
        &opts,
        &mut NoCustom,
        true,
        &Control::default(),
        vec![hook],
    );
    let r = r
        .map(|cm| cm.passes.iter().map(|p| p.name.clone()).collect())
        .map_err(|e| format!("{:?}: {}", e.stage, e.reason));
    (calls.load(Ordering::Relaxed), r)
}

#[test]
fn a_hook_runs_at_its_point_and_is_logged() {
    let (calls, log) = hooked("simplify", Position::After, false);
    assert_eq!(calls, 1);
    let log = log.expect("it compiles");
    let at = log.iter().position(|n| n == "count").expect("logged");
    assert_eq!(log[at - 1], "simplify");
    assert_eq!(log[at + 1], "lower");
    let (_, log) = hooked("infer", Position::Before, false);
    let log = log.expect("it compiles");
    let at = log.iter().position(|n| n == "count").expect("logged");
    assert_eq!(
        (log[at - 1].as_str(), log[at + 1].as_str()),
        ("validate", "infer")
    );
}

#[test]
fn bad_points_and_failing_hooks_are_errors() {
    let (calls, r) = hooked("simplify", Position::After, true);
    assert_eq!(calls, 1);
    let e = r.expect_err("the hook fails");
    assert!(e.contains("user pass 'count' failed: refused"), "{e}");
    assert!(e.starts_with(&format!("{:?}", Stage::Simplify)), "{e}");
    let (calls, r) = hooked("lower", Position::After, false);
    assert_eq!(calls, 0);
    assert!(r.expect_err("too late").contains("before 'lower'"));
    let (_, r) = hooked("nowhere", Position::Before, false);
    assert!(r.expect_err("unknown").contains("unknown point 'nowhere'"));
}
