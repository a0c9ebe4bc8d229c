//! Unit tests of the graph engine: propagation in dependency order, cycles, unknown types.

use std::sync::Arc;

use super::i32_tensor;
use crate::attr::{AttrMap, AttrValue};
use crate::dtype::DataType;
use crate::format::Format;
use crate::graph::Graph;
use crate::infer::{infer_graph, InferRule, NoCustom, Param, Params, RuleKind};
use crate::op_desc::OpDesc;
use crate::registry::{self, InputSpec, OpProto, OutputSpec};
use crate::tensor::TensorDesc;
use crate::{InAnchor, IrInputType, IrOutputType, OutAnchor};

fn register_test_ops() {
    // Tests run in parallel and share the process-wide registry: register once.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(register_test_ops_now);
}

fn register_test_ops_now() {
    for (ty, rule, n_in) in [
        ("EngTestAdd", InferRule::broadcast(), 2),
        ("EngTestRelu", InferRule::same_as("x0"), 1),
        (
            "EngTestReshape",
            InferRule::new(
                RuleKind::Reshape,
                Params::from([
                    ("x".into(), Param::Str("x0".into())),
                    ("shape".into(), Param::Str("x1".into())),
                ]),
            ),
            2,
        ),
    ] {
        if registry::contains(ty) {
            continue;
        }
        let mut p = OpProto::new(ty);
        p.inputs = (0..n_in)
            .map(|i| InputSpec {
                name: format!("x{i}"),
                kind: IrInputType::Required,
                type_var: None,
            })
            .collect();
        p.outputs = vec![OutputSpec {
            name: "y".into(),
            kind: IrOutputType::Required,
            type_var: None,
        }];
        p.rule = rule;
        registry::register(p, false).unwrap();
    }
}

fn add(g: &mut Graph, name: &str, ty: &str, ins: &[crate::NodeId]) -> crate::NodeId {
    let mut op = OpDesc::new(name, ty);
    for i in 0..ins.len() {
        op.add_input(&format!("x{i}"), Arc::new(TensorDesc::default()));
    }
    op.add_output("y", Arc::new(TensorDesc::default())).unwrap();
    let id = g.add_node(op).unwrap();
    for (i, &src) in ins.iter().enumerate() {
        g.link(OutAnchor::data(src, 0), InAnchor::data(id, i))
            .unwrap();
    }
    id
}

#[test]
fn engine_propagates_through_a_graph() {
    register_test_ops();
    let mut g = Graph::new("g");
    let mut data = OpDesc::new("x", "Data");
    let d = Arc::new(TensorDesc::new(&[2, 6], DataType::FLOAT16, Format::NCHW));
    data.add_input("x", d.clone());
    data.add_output("y", Arc::new(TensorDesc::default()))
        .unwrap();
    let x = g.add_node(data).unwrap();
    if !registry::contains("Data") {
        let mut p = OpProto::new("Data");
        p.inputs = vec![InputSpec {
            name: "x".into(),
            kind: IrInputType::Required,
            type_var: None,
        }];
        p.outputs = vec![OutputSpec {
            name: "y".into(),
            kind: IrOutputType::Required,
            type_var: None,
        }];
        p.rule = InferRule::new(RuleKind::Data, Params::new());
        let _ = registry::register(p, false);
    }
    if !registry::contains("Const") {
        let mut p = OpProto::new("Const");
        p.outputs = vec![OutputSpec {
            name: "y".into(),
            kind: IrOutputType::Required,
            type_var: None,
        }];
        p.rule = InferRule::new(RuleKind::Const, Params::new());
        let _ = registry::register(p, false);
    }
    let mut c = OpDesc::new("shape", "Const");
    c.add_output("y", Arc::new(TensorDesc::default())).unwrap();
    c.set_attr("value", AttrValue::Tensor(i32_tensor(&[3, -1])));
    let s = g.add_node(c).unwrap();
    let r = add(&mut g, "r", "EngTestRelu", &[x]);
    let b = add(&mut g, "b", "EngTestAdd", &[r, x]);
    let rs = add(&mut g, "rs", "EngTestReshape", &[b, s]);
    // Put the reshape first in node order: the engine must still go in dependency order.
    g.move_after(rs, None).unwrap();
    let stats = infer_graph(&mut g, &mut NoCustom).unwrap();
    assert_eq!(stats.nodes, 5);
    let out = g.op(rs).unwrap().output_desc(0).unwrap().clone();
    assert_eq!(out.shape.to_vec(), vec![3, 4]);
    assert_eq!(out.dtype, DataType::FLOAT16);
    assert_eq!(
        out.format,
        Format::NCHW.value(),
        "the default format rule spreads NCHW"
    );
    // A broken edge is reported with the node and rule.
    let mut bad = OpDesc::new("bad", "Const");
    bad.add_output("y", Arc::new(TensorDesc::default()))
        .unwrap();
    bad.set_attr("value", AttrValue::Tensor(i32_tensor(&[5, -1])));
    let bad_id = g.add_node(bad).unwrap();
    g.unlink(OutAnchor::data(s, 0), InAnchor::data(rs, 1))
        .unwrap();
    g.link(OutAnchor::data(bad_id, 0), InAnchor::data(rs, 1))
        .unwrap();
    let e = infer_graph(&mut g, &mut NoCustom).unwrap_err();
    assert_eq!(e.node, "rs");
    assert_eq!(e.rule, "reshape");
    assert!(e.to_string().contains("rs"));
}

#[test]
fn engine_reports_cycles_and_skips_unknown_types() {
    register_test_ops();
    let mut g = Graph::new("cyc");
    let a = add(&mut g, "a", "Unregistered", &[]);
    let b = add(&mut g, "b", "EngTestRelu", &[a]);
    let stats = infer_graph(&mut g, &mut NoCustom).unwrap();
    assert_eq!(stats.unknown, 1);
    let mut op = OpDesc::new("c", "EngTestAdd");
    op.add_input("x0", Arc::new(TensorDesc::default()));
    op.add_input("x1", Arc::new(TensorDesc::default()));
    op.add_output("y", Arc::new(TensorDesc::default())).unwrap();
    let c = g.add_node(op).unwrap();
    g.link(OutAnchor::data(b, 0), InAnchor::data(c, 0)).unwrap();
    g.link(OutAnchor::data(c, 0), InAnchor::data(c, 1)).unwrap();
    let e = infer_graph(&mut g, &mut NoCustom).unwrap_err();
    assert!(e.message.contains("cycle"), "{e}");
    let _ = AttrMap::new();
}
