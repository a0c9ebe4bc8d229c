//! Hostile graph trees: the subgraph nesting limit (in the builder, the verifier and the
//! inference engine), edits of nodes that own subgraphs, graph uids, failure-atomic inference
//! and the validation of inferred shapes.

mod common;

use ascendir_ir::infer::{infer_graph, CustomInfer, OutDesc};
use ascendir_ir::registry::OpProto;
use ascendir_ir::subgraph::MAX_SUBGRAPH_DEPTH;
use ascendir_ir::{DataType, Graph, IrError, OpDesc, ParentLink, Shape, Tensor};
use common::*;

/// A subgraph `name`: Data -> PartitionedCall `p` -> NetOutput.
fn level(name: &str) -> Graph {
    let mut b = Graph::new(name);
    let d = add(&mut b, &format!("{name}_in"), "Data", 1, 1);
    let p = add(&mut b, "p", "PartitionedCall", 1, 1);
    let n = add(&mut b, &format!("{name}_out"), "NetOutput", 1, 0);
    data(&mut b, d, 0, p, 0);
    data(&mut b, p, 0, n, 0);
    b
}

/// A root whose calls nest `levels` subgraphs.
fn chain(levels: usize) -> Graph {
    let mut g = Graph::new("root");
    let x = add(&mut g, "x", "Data", 1, 1);
    let p = add(&mut g, "p", "PartitionedCall", 1, 1);
    data(&mut g, x, 0, p, 0);
    let mut owner: Option<usize> = None;
    for i in 0..levels {
        let parent = g.tree_graph(owner).unwrap().find("p").unwrap();
        g.add_subgraph(owner, parent, "f", false, level(&format!("s{i}")))
            .unwrap();
        owner = g.subgraph_index(&format!("s{i}"));
    }
    g
}

#[test]
fn nesting_is_bounded_when_adding() {
    let mut g = chain(MAX_SUBGRAPH_DEPTH);
    let depths = g.subgraph_depths();
    assert_eq!(depths.iter().flatten().max(), Some(&MAX_SUBGRAPH_DEPTH));
    assert_eq!(g.subgraph_height(), MAX_SUBGRAPH_DEPTH);
    let deepest = g.subgraph_index(&format!("s{}", MAX_SUBGRAPH_DEPTH - 1));
    let p = g.tree_graph(deepest).unwrap().find("p").unwrap();
    let before = g.dump();
    let e = g
        .add_subgraph(deepest, p, "f", false, level("too_deep"))
        .unwrap_err();
    assert!(
        matches!(e, IrError::InvalidArgument(ref m) if m.contains("limit is 64")),
        "{e}"
    );
    assert_eq!(g.dump(), before);
    // A standalone tree is measured as a whole: two levels under depth 63 are too many.
    let mut g = chain(MAX_SUBGRAPH_DEPTH - 1);
    let deepest = g.subgraph_index(&format!("s{}", MAX_SUBGRAPH_DEPTH - 2));
    let p = g.tree_graph(deepest).unwrap().find("p").unwrap();
    let two = chain(2);
    assert_eq!(two.subgraph_height(), 2);
    assert!(g.add_subgraph(deepest, p, "f", false, two).is_err());
    assert!(g.problems().is_empty(), "{:?}", g.problems());
}

#[test]
fn the_verifier_reports_a_tree_built_past_the_limit_by_hand() {
    // Rust code can push subgraphs directly: the verifier and the inference engine still hold,
    // on a tree 100 000 levels deep (the depth; no walk recurses per level).
    let levels = 100_000;
    assert!(levels > MAX_SUBGRAPH_DEPTH);
    let mut g = Graph::new("root");
    let x = add(&mut g, "x", "Data", 1, 1);
    let p = add(&mut g, "p", "PartitionedCall", 1, 1);
    data(&mut g, x, 0, p, 0);
    let mut parent = ("root".to_string(), p);
    let mut subs = Vec::new();
    for i in 0..levels {
        let name = format!("s{i}");
        let mut s = level(&name);
        s.parent = Some(ParentLink {
            graph: parent.0.clone(),
            node: parent.1,
        });
        let inner = s.find("p").unwrap();
        subs.push(s);
        // The owner is the previous level.
        let owner: &mut Graph = match i.checked_sub(1) {
            None => &mut g,
            Some(k) => &mut subs[k],
        };
        owner
            .modify_op(parent.1, |op| {
                let meta = op.meta_mut();
                meta.subgraph_ir_names
                    .push(("f".into(), ascendir_ir::SubgraphType::Static));
                meta.subgraph_instance_names.push(name.clone());
            })
            .unwrap();
        parent = (name, inner);
    }
    g.subgraphs = subs;
    let problems = g.problems();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("levels deep; the limit is 64")),
        "{problems:?}"
    );
    // The builtin PartitionedCall (from the builtin op table) takes the If rule.
    assert_eq!(
        ascendir_ir::registry::lookup("PartitionedCall").map(|p| p.rule.kind),
        Some(ascendir_ir::infer::RuleKind::If)
    );
    let e = infer_graph(&mut g, &mut ascendir_ir::infer::NoCustom).unwrap_err();
    assert!(e.message.contains("nested more than 64"), "{e}");
}

#[test]
fn erase_and_replace_keep_the_tree_whole() {
    let mut g = chain(3);
    let p = g.find("p").unwrap();
    // Replacing with an op that names the same subgraph keeps it (and re-parents it).
    let op = g.op(p).unwrap().clone();
    let new = g.replace_tree_node(None, p, op).unwrap();
    assert_eq!(g.subgraphs.len(), 3);
    assert_eq!(g.subgraph("s0").unwrap().parent.as_ref().unwrap().node, new);
    assert!(g.problems().is_empty(), "{:?}", g.problems());
    // An op naming another node's subgraph is refused.
    let s1 = g.subgraph_index("s1");
    let inner = g.tree_graph(s1).unwrap().find("p").unwrap();
    let mut thief = OpDesc::new("p", "PartitionedCall");
    thief.add_input("x", std::sync::Arc::new(ascendir_ir::TensorDesc::default()));
    thief
        .add_output("y", std::sync::Arc::new(ascendir_ir::TensorDesc::default()))
        .unwrap();
    thief
        .meta_mut()
        .subgraph_ir_names
        .push(("f".into(), ascendir_ir::SubgraphType::Static));
    thief.meta_mut().subgraph_instance_names.push("s0".into());
    assert!(g.replace_tree_node(s1, inner, thief).is_err());
    // Replacing without subgraph names drops those below.
    let plain = OpDesc::new("p", "Relu");
    let mut plain = plain;
    plain.add_input("x", std::sync::Arc::new(ascendir_ir::TensorDesc::default()));
    plain
        .add_output("y", std::sync::Arc::new(ascendir_ir::TensorDesc::default()))
        .unwrap();
    g.replace_tree_node(s1, inner, plain).unwrap();
    assert_eq!(g.subgraphs.len(), 2);
    assert!(g.problems().is_empty(), "{:?}", g.problems());
    // Erasing a node removes everything below it.
    let new = g.find("p").unwrap();
    g.erase_tree_node(None, new).unwrap();
    assert!(g.subgraphs.is_empty());
}

#[test]
fn registration_renews_the_uid() {
    let mut g = chain(1);
    let first = g.subgraph("s0").unwrap().uid();
    let removed = g.remove_subgraph("s0").unwrap();
    assert_eq!(removed[0].uid(), first);
    let p = g.find("p").unwrap();
    let mut again = removed.into_iter().next().unwrap();
    again.parent = None;
    g.add_subgraph(None, p, "f", false, again).unwrap();
    assert_ne!(g.subgraph("s0").unwrap().uid(), first);
}

/// A custom rule that fails at the node named `fail_at` and returns `shape` elsewhere.
struct Scripted {
    fail_at: &'static str,
    shape: Vec<i64>,
}

impl CustomInfer for Scripted {
    fn infer(
        &mut self,
        _: &OpProto,
        op: &OpDesc,
        _: &dyn Fn(usize) -> Option<Tensor>,
    ) -> Result<Vec<OutDesc>, String> {
        if op.name() == self.fail_at {
            return Err("scripted failure".into());
        }
        Ok(vec![OutDesc::new(
            Shape::from_slice(&self.shape),
            DataType::FLOAT,
        )])
    }
}

fn custom_chain(ty: &str) -> Graph {
    let mut g = Graph::new("g");
    let x = add(&mut g, "x", "Data", 1, 1);
    let a = add(&mut g, "a", ty, 1, 1);
    let b = add(&mut g, "b", ty, 1, 1);
    let c = add(&mut g, "c", ty, 1, 1);
    data(&mut g, x, 0, a, 0);
    data(&mut g, a, 0, b, 0);
    data(&mut g, b, 0, c, 0);
    g
}

fn register_custom(ty: &str) {
    let mut proto = OpProto::new(ty);
    proto.inputs.push(ascendir_ir::registry::InputSpec {
        name: "x".into(),
        kind: ascendir_ir::IrInputType::Required,
        type_var: None,
    });
    proto.outputs.push(ascendir_ir::registry::OutputSpec {
        name: "y".into(),
        kind: ascendir_ir::IrOutputType::Required,
        type_var: None,
    });
    proto.rule.kind = ascendir_ir::infer::RuleKind::Custom;
    ascendir_ir::registry::register(proto, false).unwrap();
}

#[test]
fn inference_is_failure_atomic_and_validates_results() {
    register_custom("HardeningScripted");
    let mut g = custom_chain("HardeningScripted");
    let before = g.dump();
    let mut fails = Scripted {
        fail_at: "c",
        shape: vec![7, 7],
    };
    let e = infer_graph(&mut g, &mut fails).unwrap_err();
    assert_eq!(e.node, "c");
    assert_eq!(g.dump(), before, "nodes a and b were left rewritten");
    let mut bad = Scripted {
        fail_at: "",
        shape: vec![-7],
    };
    let e = infer_graph(&mut g, &mut bad).unwrap_err();
    assert!(e.message.contains("is not valid"), "{e}");
    assert_eq!(g.dump(), before);
    let mut ok = Scripted {
        fail_at: "",
        shape: vec![7, 7],
    };
    infer_graph(&mut g, &mut ok).unwrap();
    assert_ne!(g.dump(), before);
}
