//! Public acceptance scenarios A1–A11 (graph core, expressions, dumps) and error paths.

use std::sync::Arc;

use ascendir_asc::{
    AscError, AscGraph, AttrType, AttrValue, AxisType, ComputeType, Expr, NodeId, OpDef, OutRef,
    PortKind,
};
use ascendir_ir::DataType;

fn op(t: &str, ct: ComputeType, inputs: &[&str], attrs: &[(&str, AttrType)]) -> Arc<OpDef> {
    let mut d = OpDef::new(t, ct).dtype_var("T", &[]);
    for i in inputs {
        d = d.input(i, PortKind::Required, "T");
    }
    d = d.output("y", PortKind::Required, "T");
    for (n, ty) in attrs {
        d = d.attr(n, *ty, None);
    }
    Arc::new(d)
}

fn s(n: &str) -> Expr {
    Expr::sym(n)
}

#[test]
fn a1_size_vars() {
    let mut g = AscGraph::new("g");
    g.create_size("s0").unwrap();
    g.create_size("s1").unwrap();
    g.create_size("s2").unwrap();
    g.create_size_const(10);
    g.create_size_const(1);
    g.create_size("s3").unwrap();
    assert_eq!(g.size_vars().len(), 6);
    assert_eq!(g.size_vars()[4], Expr::int(1));
    assert_eq!(g.size_vars()[5].to_string(), "s3");
    assert!(g.create_size("s0").is_err());
    assert!(g.create_size("1bad").is_err());
}

#[test]
fn a2_axes() {
    let mut g = AscGraph::new("g");
    let s0 = g.create_size("s0").unwrap();
    let z0 = g.create_axis("z0", s0).unwrap();
    assert_eq!(z0, 0);
    assert!(g.find_axis(-1).is_none());
    assert!(g.find_axis(g.axes().len() as i64).is_none());
    assert!(g.create_axis("z0", Expr::int(3)).is_err());
    let a = g.find_axis(0).unwrap();
    assert_eq!(
        (a.axis_type, a.align.clone(), a.split_pair_other_id),
        (AxisType::Original, Expr::int(1), -1)
    );
}

#[test]
fn a3_tile_and_block_split() {
    let mut g = AscGraph::new("g");
    let s0 = g.create_size("s0").unwrap();
    let a = g.create_axis("S0", s0).unwrap();
    let (o, i) = g.tile_split(a, None, None).unwrap();
    assert_eq!((o, i), (1, 2));
    let (ao, ai) = (g.find_axis(o).unwrap(), g.find_axis(i).unwrap());
    assert_eq!(ao.name, "S0T");
    assert_eq!(ao.axis_type, AxisType::TileOuter);
    assert_eq!(ao.size.to_string(), "Ceiling((s0 / (S0t_size)))");
    assert_eq!(ai.name, "S0t");
    assert_eq!(ai.axis_type, AxisType::TileInner);
    assert_eq!(ai.size.to_string(), "S0t_size");
    assert_eq!((ao.from.clone(), ai.from.clone()), (vec![0], vec![0]));
    assert_eq!((ao.split_pair_other_id, ai.split_pair_other_id), (2, 1));
    assert_eq!(g.size_vars().last().unwrap().to_string(), "S0t_size");
    let (bo, bi) = g.block_split(a, None, None).unwrap();
    assert_eq!(g.find_axis(bo).unwrap().name, "S0B");
    assert_eq!(g.find_axis(bi).unwrap().name, "S0b");
    assert_eq!(g.find_axis(bo).unwrap().axis_type, AxisType::BlockOuter);
    assert_eq!(g.size_vars().last().unwrap().to_string(), "S0b_size");
    // Errors change nothing.
    let before = g.debug_str(true);
    assert!(matches!(
        g.tile_split(99, None, None),
        Err(AscError::NotFound(_))
    ));
    assert!(g.tile_split(a, None, None).is_err()); // names exist
    assert!(g.tile_split(a, Some("x"), Some("x")).is_err());
    assert_eq!(g.debug_str(true), before);
}

#[test]
fn a4_split_of_size_one() {
    let mut g = AscGraph::new("g");
    let a = g.create_axis("S0", Expr::int(1)).unwrap();
    let n = g.size_vars().len();
    let (o, i) = g.tile_split(a, None, None).unwrap();
    assert_eq!(g.find_axis(o).unwrap().size, Expr::int(1));
    assert_eq!(g.find_axis(i).unwrap().size, Expr::int(1));
    assert_eq!(g.size_vars().len(), n);
}

#[test]
fn a5_merge() {
    let mut g = AscGraph::new("g");
    let (s0, s1) = (g.create_size("s0").unwrap(), g.create_size("s1").unwrap());
    let a = g.create_axis("S0", s0).unwrap();
    let b = g.create_axis("S1", s1).unwrap();
    let m = g.merge_axes(&[a, b], None).unwrap();
    let ax = g.find_axis(m).unwrap();
    assert_eq!(ax.name, "S0S1");
    assert_eq!(ax.axis_type, AxisType::Merged);
    assert_eq!(ax.size.to_string(), "(s0 * s1)");
    assert_eq!(ax.from, vec![0, 1]);
    assert!(g.merge_axes(&[a, 7], None).is_err());
    assert!(g.merge_axes(&[a, a], None).is_err());
    assert!(g.merge_axes(&[], None).is_err());
    assert_eq!(g.axes().len(), 3);
}

fn one_node_graph(axes: &[(&str, &str)]) -> (AscGraph, NodeId, Vec<i64>) {
    let mut g = AscGraph::new("g");
    let mut ids = Vec::new();
    for (name, size) in axes {
        let sz = g.create_size(size).unwrap();
        ids.push(g.create_axis(name, sz).unwrap());
    }
    let n = g
        .add_node("n", op("Data", ComputeType::Invalid, &[], &[]))
        .unwrap();
    g.set_sched_axis(n, &ids).unwrap();
    g.set_contiguous_view(n, 0, &ids).unwrap();
    (g, n, ids)
}

#[test]
fn a6_apply_split() {
    let (mut g, n, ids) = one_node_graph(&[("S0", "s0")]);
    let (o, i) = g.tile_split(ids[0], None, None).unwrap();
    g.apply_split(n, o, i).unwrap();
    let node = g.node(n).unwrap();
    assert_eq!(node.attr.sched.axis, vec![o, i]);
    let t = &node.outputs[0];
    assert_eq!(t.axis, vec![o, i]);
    let r: Vec<String> = t.repeats.iter().map(|e| e.to_string()).collect();
    let st: Vec<String> = t.strides.iter().map(|e| e.to_string()).collect();
    assert_eq!(r, ["(s0 / (S0t_size))", "S0t_size"]);
    assert_eq!(st, ["S0t_size", "1"]);
    // Errors: mismatched pair, different parents, unknown ids.
    let before = g.debug_str(true);
    assert!(g.apply_split(n, i, o).is_err());
    assert!(g.apply_split(n, 42, i).is_err());
    let (bo, _) = g.block_split(ids[0], None, None).unwrap();
    assert!(g.apply_split(n, bo, i).is_err());
    let _ = before;
}

#[test]
fn apply_split_broadcast_axis() {
    let (mut g, n, ids) = one_node_graph(&[("S0", "s0"), ("S1", "s1")]);
    {
        let t = g.tensor_mut(n, 0).unwrap();
        t.repeats[0] = Expr::int(1);
        t.strides[0] = Expr::int(0);
    }
    let (o, i) = g.tile_split(ids[0], None, None).unwrap();
    g.apply_split(n, o, i).unwrap();
    let t = g.tensor(n, 0).unwrap();
    let r: Vec<String> = t.repeats.iter().map(|e| e.to_string()).collect();
    let st: Vec<String> = t.strides.iter().map(|e| e.to_string()).collect();
    assert_eq!(r, ["1", "1", "s1"]);
    assert_eq!(st, ["0", "0", "1"]);
}

#[test]
fn a7_apply_merge() {
    let (mut g, n, ids) = one_node_graph(&[("S0", "s0"), ("S1", "s1")]);
    let m = g.merge_axes(&ids, None).unwrap();
    let rep = g.apply_merge(n, m).unwrap();
    assert!(rep.skipped_outputs.is_empty());
    let node = g.node(n).unwrap();
    assert_eq!(node.attr.sched.axis, vec![m]);
    let t = &node.outputs[0];
    assert_eq!(t.axis, vec![m]);
    assert_eq!(t.repeats[0].to_string(), "(s0 * s1)");
    assert_eq!(t.strides[0], Expr::int(1));
}

#[test]
fn a8_sched_merge_positions() {
    let (mut g, n, ids) = one_node_graph(&[("S0", "s0"), ("S1", "s1"), ("S2", "s2"), ("S3", "s3")]);
    let m03 = g.merge_axes(&[ids[0], ids[3]], None).unwrap();
    let mut g2 = g.clone();
    g2.apply_sched_axis_merge(n, m03).unwrap();
    assert_eq!(
        g2.node(n).unwrap().attr.sched.axis,
        vec![m03, ids[1], ids[2]]
    );
    let m10 = g.merge_axes(&[ids[1], ids[0]], None).unwrap();
    let mut g3 = g.clone();
    g3.apply_sched_axis_merge(n, m10).unwrap();
    assert_eq!(
        g3.node(n).unwrap().attr.sched.axis,
        vec![m10, ids[2], ids[3]]
    );
    // Axes not in the node: unchanged.
    let x = g.create_size("q").unwrap();
    let xa = g.create_axis("X", x.clone()).unwrap();
    let ya = g.create_axis("Y", x).unwrap();
    let mxy = g.merge_axes(&[xa, ya], None).unwrap();
    g.apply_sched_axis_merge(n, mxy).unwrap();
    assert_eq!(g.node(n).unwrap().attr.sched.axis, ids);
    // Partial presence is an error and changes nothing.
    let m_partial = g.merge_axes(&[ids[0], xa], None).unwrap();
    assert!(g.apply_merge(n, m_partial).is_err());
    assert_eq!(g.node(n).unwrap().attr.sched.axis, ids);
    // Not a merged axis.
    assert!(g.apply_merge(n, ids[0]).is_err());
}

#[test]
fn a9_tensor_merge() {
    let (mut g, n, ids) = one_node_graph(&[("S0", "s0"), ("S1", "s1"), ("S2", "s2"), ("S3", "s3")]);
    let m12 = g.merge_axes(&[ids[1], ids[2]], None).unwrap();
    let mut g2 = g.clone();
    let rep = g2.apply_merge(n, m12).unwrap();
    assert!(rep.skipped_outputs.is_empty());
    let t = g2.tensor(n, 0).unwrap();
    assert_eq!(t.axis, vec![ids[0], m12, ids[3]]);
    let r: Vec<String> = t.repeats.iter().map(|e| e.to_string()).collect();
    let st: Vec<String> = t.strides.iter().map(|e| e.to_string()).collect();
    assert_eq!(r, ["s0", "(s1 * s2)", "s3"]);
    assert_eq!(st, ["(s1 * s2 * s3)", "s3", "1"]);
    let m31 = g.merge_axes(&[ids[3], ids[1]], None).unwrap();
    let before = g.tensor(n, 0).unwrap().clone();
    let rep = g.apply_merge(n, m31).unwrap();
    assert_eq!(rep.skipped_outputs, vec![0]);
    assert_eq!(g.tensor(n, 0).unwrap(), &before);
}

#[test]
fn a10_printing_and_parsing() {
    let (b, c, d, x) = (s("b"), s("c"), s("d"), s("x"));
    let cases: Vec<(Expr, &str)> = vec![
        (&b / &c, "(b / (c))"),
        (Expr::int(1) / c.clone(), "Pow(c, -1)"),
        (Expr::pow(&b, &Expr::int(3)), "(b * b * b)"),
        (Expr::pow(&b, &c), "Pow(b, c)"),
        (Expr::modulo(&b, &c), "Mod(b, c)"),
        (Expr::ceiling(&b), "Ceiling(b)"),
        (Expr::abs(&b), "Abs(b)"),
        (Expr::int(2) - &b * 3, "(2 - (3 * b))"),
        (Expr::max(&Expr::max(&b, &c), &d), "Max(Max(b, c), d)"),
        (-&x, "(-1 * x)"),
        (-(&x + 2), "((2 + x) * -1)"),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
        assert_eq!(Expr::parse(text).unwrap(), e, "{text}");
    }
}

fn ge_load_abs_store() -> AscGraph {
    let mut g = AscGraph::new("LoadAbsStore");
    let s0 = g.create_size("s0").unwrap();
    let s1 = g.create_size("s1").unwrap();
    let s2 = g.create_size("s2").unwrap();
    let z0 = g.create_axis("z0", &s0 + 100).unwrap();
    let z1 = g.create_axis("z1", s1.clone()).unwrap();
    let z2 = g.create_axis("z2", s2.clone()).unwrap();
    let axes = [z0, z1, z2];
    let data = g
        .add_node(
            "arg3_1",
            op(
                "Data",
                ComputeType::Invalid,
                &[],
                &[("index", AttrType::Int)],
            ),
        )
        .unwrap();
    g.set_ir_attr(data, "index", AttrValue::Int(0)).unwrap();
    let load = g
        .add_node(
            "load",
            op(
                "Load",
                ComputeType::Load,
                &["x"],
                &[("offset", AttrType::Expr)],
            ),
        )
        .unwrap();
    g.set_ir_attr(load, "offset", AttrValue::Expr(Expr::int(0)))
        .unwrap();
    let abs = g
        .add_node("abs", op("Abs", ComputeType::Elewise, &["x"], &[]))
        .unwrap();
    let store = g
        .add_node(
            "store",
            op(
                "Store",
                ComputeType::Store,
                &["x"],
                &[("offset", AttrType::Expr)],
            ),
        )
        .unwrap();
    let out = g
        .add_node(
            "buf1",
            op(
                "Output",
                ComputeType::Invalid,
                &["x"],
                &[("index", AttrType::Int)],
            ),
        )
        .unwrap();
    g.connect(
        OutRef {
            node: data,
            index: 0,
        },
        load,
        0,
    )
    .unwrap();
    g.connect(
        OutRef {
            node: load,
            index: 0,
        },
        abs,
        0,
    )
    .unwrap();
    g.connect(
        OutRef {
            node: abs,
            index: 0,
        },
        store,
        0,
    )
    .unwrap();
    g.connect(
        OutRef {
            node: store,
            index: 0,
        },
        out,
        0,
    )
    .unwrap();
    for n in [data, load, abs, store, out] {
        g.set_sched_axis(n, &axes).unwrap();
        g.set_contiguous_view(n, 0, &axes).unwrap();
        g.tensor_mut(n, 0).unwrap().dtype = DataType::FLOAT16;
    }
    g
}

#[test]
fn a11_debug_str() {
    let mut g = AscGraph::new("test");
    let s0 = g.create_size("s0").unwrap();
    let s1 = g.create_size("s1").unwrap();
    let s2 = g.create_size("s2").unwrap();
    assert_eq!(
        g.debug_str(false),
        "Graph: test\nSizes:\n  s0: VAR\n  s1: VAR\n  s2: VAR\nAxis:\nNodes:\n"
    );
    g.create_axis("z0", s0.clone()).unwrap();
    g.create_axis("z1", s1.clone()).unwrap();
    g.create_axis("z2", s2.clone()).unwrap();
    g.create_axis("z3", Expr::int(512)).unwrap();
    g.create_axis("z4", &s1 + &s2).unwrap();
    assert_eq!(
        g.debug_str(false),
        concat!(
            "Graph: test\n",
            "Sizes:\n",
            "  s0: VAR\n",
            "  s1: VAR\n",
            "  s2: VAR\n",
            "Axis:\n",
            "  z0(0) : ORIGINAL, size:s0, \n",
            "  z1(1) : ORIGINAL, size:s1, \n",
            "  z2(2) : ORIGINAL, size:s2, \n",
            "  z3(3) : ORIGINAL, size:512, \n",
            "  z4(4) : ORIGINAL, size:(s1 + s2), \n",
            "Nodes:\n",
        )
    );
    assert_eq!((&s0 + 100).to_string(), "(100 + s0)");
    assert_eq!(Expr::int(1) + Expr::int(2), Expr::int(3));
    assert_eq!(Expr::int(100) * 2, Expr::int(200));
}

#[test]
fn load_abs_store_dump_and_check() {
    let g = ge_load_abs_store();
    g.validate().unwrap();
    g.validate_hint_conventions().unwrap();
    let d = g.debug_str(false);
    assert!(d.contains("  load: Load (1)\n    .ir_attr =  {.offset = s: \"0\"\n    }\n    .axis = {z0, z1, z2, }\n"), "{d}");
    assert!(d.contains("    .x = arg3_1.y\n    .y.dtype = float16\n    .y.axis = {z0, z1, z2, }\n    .y.repeats = {(100 + s0), s1, s2, }\n    .y.strides = {(s1 * s2), s2, 1, }\n"), "{d}");
}

#[test]
fn check_reports_problems_naming_things() {
    let mut g = ge_load_abs_store();
    let abs = g.find_node("abs").unwrap();
    g.node_mut(abs).unwrap().inputs[0] = None;
    g.tensor_mut(abs, 0).unwrap().strides.pop();
    g.node_mut(abs).unwrap().attr.sched.axis.push(17);
    let store = g.find_node("store").unwrap();
    g.tensor_mut(store, 0).unwrap().mem.alloc_type = ascendir_asc::AllocType::Queue;
    g.node_mut(store).unwrap().attr.sched.exec_order = 3;
    g.node_mut(abs).unwrap().attr.sched.exec_order = 3;
    let Err(AscError::Validation { problems, .. }) = g.validate() else {
        panic!("expected a validation error")
    };
    let all = problems.join("\n");
    assert!(
        all.contains("node 'abs': input 'x' is not connected"),
        "{all}"
    );
    assert!(
        all.contains("node 'abs' output 'y': view has 3 axes, 3 repeats and 2 strides"),
        "{all}"
    );
    assert!(all.contains("node 'abs': sched.axis[3] = 17"), "{all}");
    assert!(
        all.contains("node 'store' output 'y': inconsistent memory binding"),
        "{all}"
    );
    assert!(all.contains("exec_order 3"), "{all}");
}

#[test]
fn hint_conventions() {
    let mut g = ge_load_abs_store();
    let abs = g.find_node("abs").unwrap();
    let load = g.find_node("load").unwrap();
    // Implicit broadcast: the load produces repeat 1 on z1 that abs expands.
    g.tensor_mut(load, 0).unwrap().repeats[1] = Expr::int(1);
    g.tensor_mut(load, 0).unwrap().strides[1] = Expr::int(0);
    g.node_mut(abs).unwrap().attr.sched.axis.pop();
    let p = g.hint_problems().join("\n");
    assert!(
        p.contains("node 'abs': input 'x' is implicitly broadcast along z1"),
        "{p}"
    );
    assert!(
        p.contains("node 'abs': loop axes [z0, z1] differ from node 'load' [z0, z1, z2]"),
        "{p}"
    );
}

#[test]
fn reorder_and_replay() {
    let g0 = ge_load_abs_store();
    let mut g = g0.clone();
    let abs = g.find_node("abs").unwrap();
    let (o, i) = g.tile_split(1, None, None).unwrap();
    g.apply_split(abs, o, i).unwrap();
    let m = g.merge_axes(&[0, o], None).unwrap();
    g.apply_merge(abs, m).unwrap();
    g.apply_reorder(abs, &[i, m, 2]).unwrap();
    assert_eq!(g.node(abs).unwrap().attr.sched.axis, vec![i, m, 2]);
    assert!(g.apply_reorder(abs, &[i, m]).is_err());
    assert!(g.apply_reorder(abs, &[i, m, 0]).is_err());
    assert!(g.apply_reorder(abs, &[i, i, 2]).is_err());
    let mut copy = g0.clone();
    copy.replay(g.transform_log()).unwrap();
    assert_eq!(copy.debug_str(true), g.debug_str(true));
    assert_eq!(g.trans_info().len(), 2);
}

#[test]
fn node_errors() {
    let mut g = ge_load_abs_store();
    let abs = g.find_node("abs").unwrap();
    assert!(g
        .add_node("abs", op("Abs", ComputeType::Elewise, &["x"], &[]))
        .is_err());
    assert!(g
        .connect(
            OutRef {
                node: abs,
                index: 3
            },
            abs,
            0
        )
        .is_err());
    assert!(g
        .connect(
            OutRef {
                node: abs,
                index: 0
            },
            abs,
            0
        )
        .is_err());
    assert!(g
        .connect(
            OutRef {
                node: NodeId(99),
                index: 0
            },
            abs,
            0
        )
        .is_err());
    assert!(g
        .connect_by_name(
            OutRef {
                node: abs,
                index: 0
            },
            abs,
            "nope"
        )
        .is_err());
    assert!(g.set_sched_axis(abs, &[0, 0]).is_err());
    assert!(g.set_sched_axis(abs, &[9]).is_err());
    let load = g.find_node("load").unwrap();
    assert!(g
        .set_ir_attr(load, "offset", AttrValue::Str("3".into()))
        .is_err());
    assert!(g.set_contiguous_view(abs, 1, &[0]).is_err());
    g.validate().unwrap();
}

#[test]
fn broadcast_conventions() {
    let mut g = AscGraph::new("b");
    let s0 = g.create_size("s0").unwrap();
    let s1 = g.create_size("s1").unwrap();
    let z0 = g.create_axis("z0", s0).unwrap();
    let z1 = g.create_axis("z1", s1).unwrap();
    let axes = [z0, z1];
    let data = g
        .add_node("x", op("Data", ComputeType::Invalid, &[], &[]))
        .unwrap();
    let load = g
        .add_node("load", op("Load", ComputeType::Load, &["x"], &[]))
        .unwrap();
    let abs = g
        .add_node("abs", op("Abs", ComputeType::Elewise, &["x"], &[]))
        .unwrap();
    let bc = g
        .add_node("bc", op("Broadcast", ComputeType::Broadcast, &["x"], &[]))
        .unwrap();
    g.connect(
        OutRef {
            node: data,
            index: 0,
        },
        load,
        0,
    )
    .unwrap();
    g.connect(
        OutRef {
            node: load,
            index: 0,
        },
        abs,
        0,
    )
    .unwrap();
    g.connect(
        OutRef {
            node: abs,
            index: 0,
        },
        bc,
        0,
    )
    .unwrap();
    for n in [data, load, abs, bc] {
        g.set_sched_axis(n, &axes).unwrap();
        g.set_contiguous_view(n, 0, &axes).unwrap();
    }
    for n in [load, abs] {
        let t = g.tensor_mut(n, 0).unwrap();
        t.repeats = vec![Expr::int(1), Expr::int(1)];
        t.strides = vec![Expr::int(0), Expr::int(0)];
    }
    let p = g.hint_problems().join("\n");
    assert!(
        p.contains("node 'bc': Broadcast input 'x' comes from 'abs' (Abs), not from a Load"),
        "{p}"
    );
    assert!(
        p.contains("node 'bc': Broadcast expands 2 axes (z0, z1); use one Broadcast per axis"),
        "{p}"
    );
    assert!(g.validate_hint_conventions().is_err());
}

#[test]
fn bind_block_and_axis_errors() {
    let mut g = AscGraph::new("g");
    let s0 = g.create_size("s0").unwrap();
    let a = g.create_axis("A", s0).unwrap();
    let (o, i) = g.tile_split(a, None, None).unwrap();
    g.bind_block(o, i).unwrap();
    assert_eq!(g.find_axis(o).unwrap().name, "ATB");
    assert_eq!(g.find_axis(o).unwrap().axis_type, AxisType::BlockOuter);
    assert_eq!(g.find_axis(i).unwrap().name, "Atb");
    assert!(g.bind_block(o, o).is_err());
    assert!(g.bind_block(o, 99).is_err());
    assert!(g.axis_mut(99).is_err());
    assert_eq!(g.transform_log().len(), 2);
    // Failed transforms are not logged.
    assert!(g.merge_axes(&[a, 42], None).is_err());
    assert_eq!(g.transform_log().len(), 2);
}

#[test]
fn equal_expressions_hash_equal() {
    use std::collections::HashSet;
    let (a, b, c) = (s("a"), s("b"), s("c"));
    let forms = [
        &(&a + &b) * &c,
        &(&b + &a) * &c,
        &c * &(&a + &b),
        Expr::parse("(c * (a + b))").unwrap(),
    ];
    let set: HashSet<Expr> = forms.iter().cloned().collect();
    assert_eq!(set.len(), 1);
}
