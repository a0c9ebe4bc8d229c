//! Backend properties: reduce schedules, block reuse order, tiling invariants over many shapes.

mod common;

use common::op;

use std::sync::Arc;

use ascendir_asc::axis::AxisType;
use ascendir_asc::expr::FxHashMap;
use ascendir_asc::graph::AttrValue;
use ascendir_asc::schedule::{schedule, ScheduleOptions, ATOMIC_ATTR};
use ascendir_asc::target::Target;
use ascendir_asc::tiling::{TilingFunction, TilingProblem, VarKind};
use ascendir_asc::{AscGraph, AxisId, ComputeType, Expr, NodeId, OpDef, OutRef};
use ascendir_ir::DataType;

fn node(
    g: &mut AscGraph,
    axes: &[AxisId],
    name: &str,
    d: Arc<OpDef>,
    inputs: &[NodeId],
    reps: Option<Vec<Expr>>,
) -> NodeId {
    let id = g.add_node(name, d).unwrap();
    for (k, i) in inputs.iter().enumerate() {
        g.connect(OutRef { node: *i, index: 0 }, id, k).unwrap();
    }
    match reps {
        Some(r) => {
            let mut strides = vec![Expr::int(0); r.len()];
            let mut acc = Expr::int(1);
            for k in (0..r.len()).rev() {
                if !r[k].is_int_value(1) {
                    strides[k] = acc.clone();
                    acc = Expr::mul(&acc, &r[k]);
                }
            }
            let t = g.tensor_mut(id, 0).unwrap();
            t.axis = axes.to_vec();
            t.repeats = r;
            t.strides = strides;
        }
        None => g.set_contiguous_view(id, 0, axes).unwrap(),
    }
    g.tensor_mut(id, 0).unwrap().dtype = DataType::FLOAT;
    if g.node(id).unwrap().is_compute() {
        g.set_sched_axis(id, axes).unwrap();
    }
    id
}

fn reduce_graph() -> AscGraph {
    reduce_graph_over(false)
}

/// `Sum` over the last axis, or over both axes when `all` is set.
fn reduce_graph_over(all: bool) -> AscGraph {
    let mut g = AscGraph::new("Red");
    let s0 = g.create_size("s0").unwrap();
    let s1 = g.create_size("s1").unwrap();
    let kept = |s: &Expr| if all { Expr::int(1) } else { s.clone() };
    let axes = vec![
        g.create_axis("z0", s0.clone()).unwrap(),
        g.create_axis("z1", s1).unwrap(),
    ];
    let x = node(
        &mut g,
        &axes,
        "x",
        op("Data", ComputeType::Invalid, &[], false, None),
        &[],
        None,
    );
    let l = node(
        &mut g,
        &axes,
        "load",
        op("Load", ComputeType::Load, &["x"], false, None),
        &[x],
        None,
    );
    let r = node(
        &mut g,
        &axes,
        "sum",
        op("Sum", ComputeType::Reduce, &["x"], false, Some(8192)),
        &[l],
        Some(vec![kept(&s0), Expr::int(1)]),
    );
    let st = node(
        &mut g,
        &axes,
        "store",
        op("Store", ComputeType::Store, &["x"], false, None),
        &[r],
        Some(vec![kept(&s0), Expr::int(1)]),
    );
    node(
        &mut g,
        &axes,
        "y",
        op("Output", ComputeType::Invalid, &["x"], false, None),
        &[st],
        Some(vec![kept(&s0), Expr::int(1)]),
    );
    g
}

#[test]
fn reduce_split_and_all_load_templates() {
    let impls = schedule(&reduce_graph(), &ScheduleOptions::default()).unwrap();
    let names: Vec<&str> = impls.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["Red_B0Y0R1", "Red_B0Y0"]);
    let split = &impls[0];
    let ax = |n: &str| split.find_axis_by_name(n).unwrap().id;
    let load = split.node(split.find_node("load").unwrap()).unwrap();
    assert_eq!(
        load.attr.sched.axis,
        vec![ax("z0TB"), ax("z0Tb"), ax("z1T"), ax("z0t"), ax("z1t")]
    );
    assert_eq!(load.attr.sched.loop_axis, ax("z1T"));
    let store = split.node(split.find_node("store").unwrap()).unwrap();
    assert_eq!(store.attr.sched.loop_axis, ax("z0Tb"));
    // AR reduce: the reduce axis' aligned stride comes last, the sum output is aligned on z0t.
    let sum = split.node(split.find_node("sum").unwrap()).unwrap();
    let vs: Vec<String> = sum.outputs[0]
        .vectorized_strides
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(vs, vec!["1", "0"]);
    let p = TilingProblem::new(split, &Target::ascend910b()).unwrap();
    // Reduce variable first.
    assert_eq!(p.vars[0].name, "z1t_size");
    assert_eq!(p.vars[0].kind, VarKind::Tile);
    let all = &impls[1];
    let load = all.node(all.find_node("load").unwrap()).unwrap();
    assert_eq!(load.outputs[0].vectorized_axis.len(), 2);
    for i in &impls {
        i.validate().unwrap();
    }
}

#[test]
fn tiling_invariants_over_shapes() {
    let impls = schedule(&reduce_graph(), &ScheduleOptions::default()).unwrap();
    for target in [
        Target::ascend910b(),
        Target::custom("s", 7, 20000, 32, 4).unwrap(),
    ] {
        let f = TilingFunction::new(&impls, &target).unwrap();
        for s0 in [1i64, 3, 17, 48, 1000, 65536] {
            for s1 in [1i64, 7, 64, 4097, 100_000] {
                let mut shape = FxHashMap::default();
                shape.insert("s0".to_string(), s0);
                shape.insert("s1".to_string(), s1);
                for p in &f.problems {
                    let t = match p.solve(&shape) {
                        Ok(t) => t,
                        Err(e) => {
                            assert_eq!(e.constraint, "ub", "{e}");
                            continue;
                        }
                    };
                    assert!(t.ub_used <= target.ub_size);
                    assert!(t.block_dim <= target.core_num);
                    // Maximal: one more alignment step of any tile variable overflows the UB
                    // or the parent size.
                    let names = p.slot_names().to_vec();
                    let vals: Vec<i64> = names.iter().map(|n| t.get(n).unwrap()).collect();
                    for (k, v) in p.vars.iter().enumerate() {
                        if v.kind != VarKind::Tile {
                            continue;
                        }
                        let up = p.upper(k, &vals).unwrap();
                        let next = (vals[k] / v.align + 1) * v.align;
                        if next <= up && vals[k] < up {
                            let mut g = vals.clone();
                            g[k] = next;
                            assert!(p.ub_usage(&g).unwrap() > target.ub_size, "{} {t:?}", v.name);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn queue_reuse_avoids_the_block_used_just_before() {
    // Three independent load -> abs -> store chains in sequence: lifetimes never overlap.
    let mut g = AscGraph::new("Seq");
    let s0 = g.create_size("s0").unwrap();
    let axes = vec![g.create_axis("z0", s0).unwrap()];
    for k in 0..3 {
        let x = node(
            &mut g,
            &axes,
            &format!("x{k}"),
            op("Data", ComputeType::Invalid, &[], false, None),
            &[],
            None,
        );
        let l = node(
            &mut g,
            &axes,
            &format!("load{k}"),
            op("Load", ComputeType::Load, &["x"], false, None),
            &[x],
            None,
        );
        let a = node(
            &mut g,
            &axes,
            &format!("abs{k}"),
            op("Abs", ComputeType::Elewise, &["x"], true, None),
            &[l],
            None,
        );
        let s = node(
            &mut g,
            &axes,
            &format!("store{k}"),
            op("Store", ComputeType::Store, &["x"], false, None),
            &[a],
            None,
        );
        node(
            &mut g,
            &axes,
            &format!("y{k}"),
            op("Output", ComputeType::Invalid, &["x"], false, None),
            &[s],
            None,
        );
    }
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    let q = |n: &str| {
        let i = &impls[0];
        i.node(i.find_node(n).unwrap()).unwrap().outputs[0].que.id
    };
    assert_eq!((q("load0"), q("load1"), q("load2")), (0, 1, 0));
}

#[test]
fn schedule_errors_do_not_touch_the_input() {
    let mut g = reduce_graph();
    let before = format!("{:?}", g.nodes().len());
    // Disconnect the store's input: scheduling fails with a message naming the node.
    let st = g.find_node("store").unwrap();
    g.node_mut(st).unwrap().inputs[0] = None;
    let e = schedule(&g, &ScheduleOptions::default()).unwrap_err();
    assert!(e.to_string().contains("store"), "{e}");
    assert_eq!(before, format!("{:?}", g.nodes().len()));
}

#[test]
fn full_reduction_splits_over_cores() {
    let impls = schedule(&reduce_graph_over(true), &ScheduleOptions::default()).unwrap();
    let names: Vec<&str> = impls.iter().map(|i| i.name.as_str()).collect();
    // The contiguous merge makes the two reduce axes one (z0).
    assert_eq!(
        names,
        vec!["Red_B0R0_reduce_over_cores", "Red_B0Y1R0", "Red_B0Y1"]
    );
    for i in &impls {
        i.validate().unwrap();
    }
    // The Store combines the partial result of each core atomically.
    let over = &impls[0];
    let store = over.node(over.find_node("store").unwrap()).unwrap();
    assert_eq!(
        store.attr.ir_attr.get(ATOMIC_ATTR),
        Some(&AttrValue::Str("add".into()))
    );
    let bo = over.find_axis(store.attr.sched.loop_axis).unwrap();
    assert_eq!(bo.axis_type, AxisType::BlockOuter);
    // The one-core cases put a unit axis in front.
    for i in &impls[1..] {
        assert!(i.find_axis_by_name("z_unit").is_some(), "{}", i.name);
    }
    let f = TilingFunction::new(&impls, &Target::ascend910b()).unwrap();
    let mut shape = FxHashMap::default();
    shape.insert("s0".to_string(), 1000);
    shape.insert("s1".to_string(), 3000);
    let t = f.call(&shape).unwrap();
    assert_eq!(t.graph, "Red_B0R0_reduce_over_cores");
    // The smallest block inner with block_dim <= 48: every core but a few gets work.
    assert!(t.block_dim > 40 && t.block_dim <= 48, "{t:?}");
    // The all-load case cannot hold 3 million values; the split reduce runs on one core.
    for p in &f.problems[1..] {
        if let Ok(t) = p.solve(&shape) {
            assert_eq!(t.block_dim, 1, "{}", t.graph);
        }
    }
}

/// Every aligned candidate of each tile variable (multiples of the alignment and the bound).
fn candidates(align: i64, upper: i64) -> Vec<i64> {
    let mut v: Vec<i64> = (1..=upper / align).map(|k| k * align).collect();
    if v.last() != Some(&upper) {
        v.push(upper);
    }
    v
}

#[test]
fn two_tile_variables_reach_the_exhaustive_optimum() {
    // The split reduce tiles the kept axis and the reduce axis; a small UB keeps the search
    // space small enough to try every pair.
    let impls = schedule(&reduce_graph(), &ScheduleOptions::default()).unwrap();
    let target = Target::custom("small", 4, 12288, 32, 4).unwrap();
    let p = TilingProblem::new(&impls[0], &target).unwrap();
    let tiles: Vec<usize> = (0..p.vars.len())
        .filter(|k| p.vars[*k].kind == VarKind::Tile)
        .collect();
    assert_eq!(tiles.len(), 2);
    let nv = p.vars.len();
    for (s0, s1) in [(3, 5), (33, 64), (100, 333), (257, 31), (7, 1000)] {
        let mut shape = FxHashMap::default();
        shape.insert("s0".to_string(), s0);
        shape.insert("s1".to_string(), s1);
        let t = p.solve(&shape).unwrap();
        let mut vals = vec![1i64; p.slot_names().len()];
        for (k, s) in p.slot_names().iter().enumerate().skip(nv) {
            vals[k] = shape[s];
        }
        let mut best = -1;
        let (a, b) = (tiles[0], tiles[1]);
        for va in candidates(p.vars[a].align, p.upper(a, &vals).unwrap()) {
            vals[a] = va;
            for vb in candidates(p.vars[b].align, p.upper(b, &vals).unwrap()) {
                vals[b] = vb;
                let u = p.ub_usage(&vals).unwrap();
                if u <= target.ub_size {
                    best = best.max(u);
                }
            }
        }
        assert_eq!(t.ub_used, best, "s0={s0} s1={s1}: {t:?}");
    }
}

/// `x[s0, s1] + Broadcast(y[1, s1])`, float32.
fn broadcast_graph() -> AscGraph {
    let mut g = AscGraph::new("Brc");
    let s0 = g.create_size("s0").unwrap();
    let s1 = g.create_size("s1").unwrap();
    let axes = vec![
        g.create_axis("z0", s0.clone()).unwrap(),
        g.create_axis("z1", s1.clone()).unwrap(),
    ];
    let data = |g: &mut AscGraph, name: &str, reps: Vec<Expr>| {
        node(
            g,
            &axes,
            name,
            op("Data", ComputeType::Invalid, &[], false, None),
            &[],
            Some(reps),
        )
    };
    let load = |g: &mut AscGraph, name: &str, src: NodeId, reps: Vec<Expr>| {
        node(
            g,
            &axes,
            name,
            op("Load", ComputeType::Load, &["x"], false, None),
            &[src],
            Some(reps),
        )
    };
    let full = vec![s0.clone(), s1.clone()];
    let x = data(&mut g, "x", full.clone());
    let y = data(&mut g, "y", vec![Expr::int(1), s1.clone()]);
    let lx = load(&mut g, "load_x", x, full.clone());
    let ly = load(&mut g, "load_y", y, vec![Expr::int(1), s1]);
    let brc = node(
        &mut g,
        &axes,
        "brc",
        op("Broadcast", ComputeType::Broadcast, &["x"], false, None),
        &[ly],
        Some(full.clone()),
    );
    let add = node(
        &mut g,
        &axes,
        "add",
        op("Add", ComputeType::Elewise, &["x1", "x2"], false, None),
        &[lx, brc],
        Some(full.clone()),
    );
    let st = node(
        &mut g,
        &axes,
        "store",
        op("Store", ComputeType::Store, &["x"], false, None),
        &[add],
        Some(full.clone()),
    );
    node(
        &mut g,
        &axes,
        "out",
        op("Output", ComputeType::Invalid, &["x"], false, None),
        &[st],
        Some(full),
    );
    g
}

#[test]
fn unaligned_template_pads_only_the_broadcast() {
    let impls = schedule(&broadcast_graph(), &ScheduleOptions::default()).unwrap();
    let names: Vec<&str> = impls.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["Brc_B0Y0", "Brc_B0Y0_unaligned", "Brc_B0Y1"]);
    let u = &impls[1];
    u.validate().unwrap();
    let strides = |n: &str| -> Vec<String> {
        let node = u.node(u.find_node(n).unwrap()).unwrap();
        node.outputs[0]
            .vectorized_strides
            .iter()
            .map(|e| e.to_string())
            .collect()
    };
    // The broadcast keeps 32-byte rows (8 floats); its RemovePad and everything else is dense.
    assert_ne!(strides("brc")[0], "s1");
    assert_eq!(strides("remove_pad_brc"), vec!["s1", "1"]);
    for n in ["load_x", "add", "store"] {
        assert_eq!(strides(n), vec!["s1", "1"], "{n}");
    }
    let order = |n: &str| {
        u.node(u.find_node(n).unwrap())
            .unwrap()
            .attr
            .sched
            .exec_order
    };
    assert_eq!(order("remove_pad_brc"), order("brc") + 1);
    let add = u.node(u.find_node("add").unwrap()).unwrap();
    assert_eq!(
        add.inputs[1].unwrap().node,
        u.find_node("remove_pad_brc").unwrap()
    );
    // The general template pads every row instead.
    let gen = &impls[0];
    let add = gen.node(gen.find_node("add").unwrap()).unwrap();
    assert_ne!(add.outputs[0].vectorized_strides[0].to_string(), "s1");
}

#[test]
fn a_twin_takes_the_remove_pads_under_its_own_names() {
    let g = broadcast_graph();
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    assert!(impls[1].find_node("remove_pad_brc").is_some());
    assert!(common::check_twins(&g, &impls, |n| format!("blk.3/{n}")));
    // The name the twin's RemovePad would take is a node's already: not carried over.
    let clash = common::check_twins(&g, &impls, |n| match n {
        "brc" => "b".to_string(),
        "add" => "remove_pad_b".to_string(),
        _ => n.to_string(),
    });
    assert!(!clash);
}

#[test]
fn gather_params_axis_survives_the_contiguous_merge() {
    // params[v, h] gathered on v by indices[b]: loop axes (b, h); v is no loop axis.
    let mut g = AscGraph::new("Gat");
    let (sv, sb, sh) = (
        g.create_size("sv").unwrap(),
        g.create_size("sb").unwrap(),
        g.create_size("sh").unwrap(),
    );
    let zb = g.create_axis("zb", sb.clone()).unwrap();
    let zh = g.create_axis("zh", sh.clone()).unwrap();
    let zv = g.create_axis("zv", sv.clone()).unwrap();
    let loop_axes = [zb, zh];
    let params = node(
        &mut g,
        &[zv, zh],
        "params",
        op("Data", ComputeType::Invalid, &[], false, None),
        &[],
        Some(vec![sv, sh.clone()]),
    );
    let indices = node(
        &mut g,
        &[zb],
        "indices",
        op("Data", ComputeType::Invalid, &[], false, None),
        &[],
        Some(vec![sb.clone()]),
    );
    let full = Some(vec![sb, sh]);
    let gat = node(
        &mut g,
        &loop_axes,
        "gather",
        op("Gather", ComputeType::Gather, &["x1", "x2"], false, None),
        &[params, indices],
        full.clone(),
    );
    let st = node(
        &mut g,
        &loop_axes,
        "store",
        op("Store", ComputeType::Store, &["x"], false, None),
        &[gat],
        full.clone(),
    );
    node(
        &mut g,
        &loop_axes,
        "out",
        op("Output", ComputeType::Invalid, &["x"], false, None),
        &[st],
        full,
    );
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    assert!(!impls.is_empty());
    for i in &impls {
        i.validate().unwrap();
        // b and h are never merged (the params view has h without b), and v stays an
        // ORIGINAL axis of the params view.
        let p = i.node(i.find_node("params").unwrap()).unwrap();
        let names: Vec<&str> = p.outputs[0]
            .axis
            .iter()
            .map(|a| i.find_axis(*a).unwrap().name.as_str())
            .collect();
        assert_eq!(names, vec!["zv", "zh"], "{}", i.name);
        assert_eq!(
            i.find_axis_by_name("zv").unwrap().axis_type,
            AxisType::Original
        );
    }
}
