//! Serialization round trips and decode errors, plus dtype inference.

use std::sync::Arc;

use ascendir_asc::registry::{self, AttrType};
use ascendir_asc::{AscError, AscGraph, AttrValue, ComputeType, Expr, OpDef, OutRef, PortKind};
use ascendir_ir::DataType;

fn ops() -> (Arc<OpDef>, Arc<OpDef>, Arc<OpDef>) {
    let data = OpDef::new("WData", ComputeType::Invalid)
        .dtype_var("T", &[])
        .output("y", PortKind::Required, "T")
        .attr("index", AttrType::Int, None);
    let load = OpDef::new("WLoad", ComputeType::Load)
        .dtype_var("T", &[DataType::FLOAT16, DataType::FLOAT])
        .input("x", PortKind::Required, "T")
        .output("y", PortKind::Required, "T")
        .attr(
            "offset",
            AttrType::Expr,
            Some(AttrValue::Expr(Expr::int(0))),
        );
    let concat = OpDef::new("WConcat", ComputeType::Concat)
        .dtype_var("T", &[])
        .input("x", PortKind::Dynamic, "T")
        .output("y", PortKind::Required, "T");
    let d = registry::register(data, true).unwrap();
    let l = registry::register(load, true).unwrap();
    let c = registry::register(concat, true).unwrap();
    (d, l, c)
}

fn sample() -> AscGraph {
    let (data, load, concat) = ops();
    let mut g = AscGraph::new("wire");
    let s0 = g.create_size("s0").unwrap();
    g.create_size_const(7);
    let z0 = g.create_axis("z0", &s0 * 2).unwrap();
    let z1 = g.create_axis("z1", Expr::int(16)).unwrap();
    let (o, i) = g.tile_split(z0, None, None).unwrap();
    let d = g.add_node("x", data).unwrap();
    g.set_ir_attr(d, "index", AttrValue::Int(3)).unwrap();
    let l = g.add_node("load", load).unwrap();
    g.connect(OutRef { node: d, index: 0 }, l, 0).unwrap();
    let l2 = g.add_node("load2", g.node(l).unwrap().op.clone()).unwrap();
    g.connect(OutRef { node: d, index: 0 }, l2, 0).unwrap();
    let c = g.add_node("cat", concat).unwrap();
    g.set_dynamic_inputs(
        c,
        "x",
        &[OutRef { node: l, index: 0 }, OutRef { node: l2, index: 0 }],
    )
    .unwrap();
    for n in [d, l, l2, c] {
        g.set_sched_axis(n, &[z0, z1]).unwrap();
        g.set_contiguous_view(n, 0, &[z0, z1]).unwrap();
        g.tensor_mut(n, 0).unwrap().dtype = DataType::FLOAT16;
    }
    g.apply_split(l, o, i).unwrap();
    let t = g.tensor_mut(l, 0).unwrap();
    t.vectorized_axis = vec![i, z1];
    t.vectorized_strides = vec![Expr::int(16), Expr::int(1)];
    t.mem.alloc_type = ascendir_asc::AllocType::Queue;
    t.mem.reuse_id = 4;
    t.que.id = 0;
    t.que.depth = 2;
    t.que.buf_num = 2;
    g.node_mut(l).unwrap().attr.sched.loop_axis = o;
    g.tiling_key = 5;
    g
}

#[test]
fn round_trip_is_exact() {
    let g = sample();
    g.validate().unwrap();
    let bytes = g.to_bytes();
    let back = AscGraph::from_bytes(&bytes).unwrap();
    assert_eq!(back.debug_str(true), g.debug_str(true));
    assert_eq!(back.to_bytes(), bytes);
    assert_eq!(back.tiling_key, 5);
    let cat = back.find_node("cat").unwrap();
    assert_eq!(back.node(cat).unwrap().input_names, vec!["x0", "x1"]);
    assert_eq!(
        back.tensor(back.find_node("load").unwrap(), 0)
            .unwrap()
            .mem
            .reuse_id,
        4
    );
}

#[test]
fn unknown_types_survive() {
    let g = sample();
    let mut def = g.to_proto();
    for n in def.asc_node.iter_mut() {
        if let Some(a) = n.attr.as_mut() {
            a.r#type = format!("Custom{}", a.r#type);
        }
        if let Some(ir) = n.ir_def.as_mut() {
            ir.r#type = format!("Custom{}", ir.r#type);
        }
    }
    let back = AscGraph::from_proto(&def).unwrap();
    assert_eq!(back.node_count(), 4);
    assert_eq!(
        back.node(back.find_node("cat").unwrap())
            .unwrap()
            .input_names,
        vec!["x0", "x1"]
    );
}

#[test]
fn decode_errors_name_the_field() {
    assert!(matches!(
        AscGraph::from_bytes(&[0xff, 0xff, 0xff]),
        Err(AscError::Decode { .. })
    ));
    let g = sample();
    let mut def = g.to_proto();
    def.asc_node[1].outputs[0].attr.as_mut().unwrap().repeats[0] = "(1 +".into();
    let Err(AscError::Decode { path, .. }) = AscGraph::from_proto(&def) else {
        panic!()
    };
    assert_eq!(
        path.as_deref(),
        Some("asc_node[1].outputs[0].attr.repeats[0]")
    );
    let mut def = g.to_proto();
    def.asc_node[1].input_src[0].src_node_name = "ghost".into();
    let Err(AscError::Decode { message, .. }) = AscGraph::from_proto(&def) else {
        panic!()
    };
    assert!(message.contains("ghost"), "{message}");
    let mut def = g.to_proto();
    def.asc_graph_attr.as_mut().unwrap().axis[1].id = 9;
    assert!(AscGraph::from_proto(&def).is_err());
    let mut def = g.to_proto();
    def.asc_node[2].attr.as_mut().unwrap().name = "load".into();
    assert!(AscGraph::from_proto(&def).is_err());
}

#[test]
fn infer_dtypes_propagates_and_checks() {
    let mut g = sample();
    let l = g.find_node("load").unwrap();
    let c = g.find_node("cat").unwrap();
    g.tensor_mut(l, 0).unwrap().dtype = DataType::UNDEFINED;
    g.tensor_mut(c, 0).unwrap().dtype = DataType::UNDEFINED;
    g.infer_dtypes().unwrap();
    assert_eq!(g.tensor(l, 0).unwrap().dtype, DataType::FLOAT16);
    assert_eq!(g.tensor(c, 0).unwrap().dtype, DataType::FLOAT16);
    // A disallowed input dtype fails and writes nothing.
    let x = g.find_node("x").unwrap();
    g.tensor_mut(x, 0).unwrap().dtype = DataType::INT64;
    g.tensor_mut(c, 0).unwrap().dtype = DataType::UNDEFINED;
    let Err(AscError::Inference(m)) = g.infer_dtypes() else {
        panic!()
    };
    assert_eq!(
        m,
        "Infer dtype failed for load WLoad; input_dtypes: [DT_INT64] is not supportted now"
    );
    assert_eq!(g.tensor(c, 0).unwrap().dtype, DataType::UNDEFINED);
}

#[test]
fn rename_bytes_equals_encoding_the_renamed_graph() {
    let mut g = sample();
    let bytes = g.to_bytes();
    for name in ["", "k", "autofuse_pointwise_0_Abs_Exp", &"x".repeat(300)] {
        g.name = name.to_string();
        assert_eq!(AscGraph::rename_bytes(&bytes, name).unwrap(), g.to_bytes());
    }
    for cut in [1, bytes.len() / 2, bytes.len() - 1] {
        assert!(AscGraph::rename_bytes(&bytes[..cut], "k").is_err() || cut == 0);
    }
}
