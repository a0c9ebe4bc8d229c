//! Scheduler, allocator and tiling solver: acceptance scenarios A12–A18 and properties.

mod common;

use common::op;

use std::sync::Arc;

use ascendir_asc::alloc::{allocate, AllocOptions};
use ascendir_asc::expr::FxHashMap;
use ascendir_asc::schedule::group::AxisGroup;
use ascendir_asc::schedule::{graph_group, schedule, ScheduleOptions};
use ascendir_asc::target::Target;
use ascendir_asc::tiling::{solve_tiling, TilingProblem};
use ascendir_asc::{
    AllocType, AscGraph, AxisId, ComputeType, Expr, NodeId, OpDef, OutRef, Position,
};
use ascendir_ir::DataType;

struct B {
    g: AscGraph,
    axes: Vec<AxisId>,
}

impl B {
    fn new(name: &str, sizes: &[Expr]) -> B {
        let mut g = AscGraph::new(name);
        let mut axes = Vec::new();
        for (i, s) in sizes.iter().enumerate() {
            axes.push(g.create_axis(&format!("z{i}"), s.clone()).unwrap());
        }
        B { g, axes }
    }
    fn sym(g: &mut AscGraph, n: &str) -> Expr {
        g.create_size(n).unwrap()
    }
    fn node(
        &mut self,
        name: &str,
        d: Arc<OpDef>,
        inputs: &[NodeId],
        dt: DataType,
        view: Option<(Vec<Expr>, Vec<Expr>)>,
    ) -> NodeId {
        let id = self.g.add_node(name, d).unwrap();
        for (k, i) in inputs.iter().enumerate() {
            self.g
                .connect(OutRef { node: *i, index: 0 }, id, k)
                .unwrap();
        }
        let axes = self.axes.clone();
        match view {
            Some((r, s)) => {
                let t = self.g.tensor_mut(id, 0).unwrap();
                t.axis = axes.clone();
                t.repeats = r;
                t.strides = s;
            }
            None => self.g.set_contiguous_view(id, 0, &axes).unwrap(),
        }
        self.g.tensor_mut(id, 0).unwrap().dtype = dt;
        if self.g.node(id).unwrap().is_compute() {
            self.g.set_sched_axis(id, &axes).unwrap();
        }
        id
    }
}

fn abs_chain(name: &str, sizes: &[Expr], n_abs: usize) -> AscGraph {
    let mut b = B::new(name, sizes);
    let f16 = DataType::FLOAT16;
    let x = b.node(
        "x",
        op("Data", ComputeType::Invalid, &[], false, None),
        &[],
        f16,
        None,
    );
    let mut cur = b.node(
        "load",
        op("Load", ComputeType::Load, &["x"], false, None),
        &[x],
        f16,
        None,
    );
    for i in 0..n_abs {
        let nm = if n_abs == 1 {
            "abs".to_string()
        } else {
            format!("abs{i}")
        };
        cur = b.node(
            &nm,
            op("Abs", ComputeType::Elewise, &["x"], true, Some(8192)),
            &[cur],
            f16,
            None,
        );
    }
    let st = b.node(
        "store",
        op("Store", ComputeType::Store, &["x"], false, None),
        &[cur],
        f16,
        None,
    );
    b.node(
        "y",
        op("Output", ComputeType::Invalid, &["x"], false, None),
        &[st],
        f16,
        None,
    );
    b.g
}

fn sizes_syms(n: usize) -> (AscGraph, Vec<Expr>) {
    let mut g = AscGraph::new("tmp");
    let v = (0..n).map(|i| B::sym(&mut g, &format!("s{i}"))).collect();
    (g, v)
}

fn with_syms(name: &str, n: usize, n_abs: usize) -> AscGraph {
    let (_, syms) = sizes_syms(n);
    let mut g = abs_chain(name, &syms, n_abs);
    for i in 0..n {
        let _ = g.create_size(&format!("s{i}"));
    }
    g
}

#[test]
fn a12_groups() {
    let g = with_syms("LoadAbsStore", 3, 1);
    let grp = graph_group(&g).unwrap();
    assert!(grp.x.is_empty());
    assert_eq!(grp.y, vec![0, 1, 2]);
    assert!(grp.r.is_empty());
    assert_eq!(grp, AxisGroup::y(vec![0, 1, 2]));
}

#[test]
fn a14_one_axis_schedule() {
    let g = with_syms("LoadAbsStore", 1, 1);
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    assert_eq!(impls.len(), 1);
    let i = &impls[0];
    assert_eq!(i.name, "LoadAbsStore_B0Y0");
    assert_eq!(i.tiling_key, 0);
    let ax: Vec<(i64, String)> = i.axes().iter().map(|a| (a.id, a.name.clone())).collect();
    assert_eq!(
        ax,
        vec![
            (0, "z0".into()),
            (1, "z0T".into()),
            (2, "z0t".into()),
            (3, "z0TB".into()),
            (4, "z0Tb".into())
        ]
    );
    assert_eq!(i.axes()[1].size.to_string(), "Ceiling((s0 / (z0t_size)))");
    assert_eq!(
        i.axes()[3].size.to_string(),
        "Ceiling((Ceiling((s0 / (z0t_size))) / (z0Tb_size)))"
    );
    for n in i.nodes().iter().filter(|n| n.is_compute()) {
        assert_eq!(n.attr.sched.axis, vec![3, 4, 2], "{}", n.name);
        assert_eq!(n.outputs[0].vectorized_axis, vec![2]);
        assert_eq!(n.outputs[0].vectorized_strides, vec![Expr::int(1)]);
        assert_eq!(n.attr.sched.loop_axis, 4);
    }
    i.validate().unwrap();
}

#[test]
fn a15_three_axis_schedule() {
    let g = with_syms("LoadAbsStore", 3, 1);
    let opts = ScheduleOptions {
        merge_contiguous_axes: false,
        ..ScheduleOptions::default()
    };
    let impls = schedule(&g, &opts).unwrap();
    let names_: Vec<&str> = impls.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names_,
        vec![
            "LoadAbsStore_B0Y0",
            "LoadAbsStore_B0Y1",
            "LoadAbsStore_B0Y2"
        ]
    );
    let i = &impls[1];
    assert_eq!(i.axes()[3].name, "z1T");
    assert_eq!(i.axes()[4].name, "z1t");
    assert_eq!(i.axes()[5].name, "z0z1T");
    assert_eq!(i.axes()[6].name, "z0z1TB");
    assert_eq!(i.axes()[7].name, "z0z1Tb");
    for n in i.nodes().iter().filter(|n| n.is_compute()) {
        assert_eq!(n.attr.sched.axis, vec![6, 7, 4, 2]);
        assert_eq!(n.outputs[0].vectorized_axis, vec![4, 2]);
        let vs: Vec<String> = n.outputs[0]
            .vectorized_strides
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(vs, vec!["s2", "1"]);
    }
    // With the contiguous merge the three axes become one.
    let merged = schedule(&g, &ScheduleOptions::default()).unwrap();
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].axes()[0].name, "z0z1z2");
    assert_eq!(merged[0].axes()[0].size.to_string(), "(s0 * s1 * s2)");
}

#[test]
fn a16_aligned_strides() {
    // Load (7, 9, 8, 10) dense; Store writes (7, 9, 8, 1) with strides (8, 1, 1, 0).
    let sizes: Vec<Expr> = [7, 9, 8, 10].iter().map(|v| Expr::int(*v)).collect();
    let mut b = B::new("Aligned", &sizes);
    let f16 = DataType::FLOAT16;
    let x = b.node(
        "x",
        op("Data", ComputeType::Invalid, &[], false, None),
        &[],
        f16,
        None,
    );
    let ld = b.node(
        "load",
        op("Load", ComputeType::Load, &["x"], false, None),
        &[x],
        f16,
        None,
    );
    let sv = (
        vec![Expr::int(7), Expr::int(9), Expr::int(8), Expr::int(1)],
        vec![Expr::int(8), Expr::int(1), Expr::int(1), Expr::int(0)],
    );
    let st = b.node(
        "store",
        op("Store", ComputeType::Store, &["x"], false, None),
        &[ld],
        f16,
        Some(sv),
    );
    b.node(
        "y",
        op("Output", ComputeType::Invalid, &["x"], false, None),
        &[st],
        f16,
        None,
    );
    let opts = ScheduleOptions {
        merge_contiguous_axes: false,
        unaligned_template: false,
        ..ScheduleOptions::default()
    };
    let impls = schedule(&b.g, &opts).unwrap();
    // Case Y0 (tile z0): vectorized z0t, z1, z2, z3.
    let i = impls.iter().find(|i| i.name.ends_with("Y0")).unwrap();
    for n in ["load", "store"] {
        let id = i.find_node(n).unwrap();
        let t = &i.node(id).unwrap().outputs[0];
        let vs: Vec<String> = t.vectorized_strides.iter().map(|e| e.to_string()).collect();
        assert_eq!(&vs[1..], &["128", "16", "1"], "{n}");
    }
    // Unaligned template exists for this graph (only discontinuous GM views need alignment).
    let all = schedule(
        &b.g,
        &ScheduleOptions {
            merge_contiguous_axes: false,
            ..ScheduleOptions::default()
        },
    )
    .unwrap();
    let un = all
        .iter()
        .find(|i| i.name.ends_with("Y0_unaligned"))
        .unwrap();
    let id = un.find_node("load").unwrap();
    let vs: Vec<String> = un.node(id).unwrap().outputs[0]
        .vectorized_strides
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(&vs[1..], &["80", "10", "1"]);
    let keys: Vec<i64> = all.iter().map(|i| i.tiling_key).collect();
    assert_eq!(keys, (0..all.len() as i64).collect::<Vec<_>>());
}

#[test]
fn a17_inplace_chain() {
    let g = with_syms("Chain", 1, 4);
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    let i = &impls[0];
    let t = |n: &str| i.node(i.find_node(n).unwrap()).unwrap().outputs[0].clone();
    let ld = t("load");
    assert_eq!(ld.mem.alloc_type, AllocType::Queue);
    assert_eq!(ld.que.id, 0);
    assert_eq!(ld.mem.reuse_id, 0);
    assert_eq!(ld.mem.position, Position::VecIn);
    for k in 0..4 {
        let a = t(&format!("abs{k}"));
        assert_eq!(a.mem.alloc_type, AllocType::Queue, "abs{k}");
        assert_eq!(a.que.id, 1, "abs{k}");
        assert_eq!(a.mem.reuse_id, k as i64 + 1);
        assert_eq!(a.que.depth, 2);
        assert_eq!(a.que.buf_num, 2);
    }
    assert_eq!(t("store").mem.alloc_type, AllocType::Global);
    i.validate().unwrap();
}

#[test]
fn a18_tiling() {
    let g = with_syms("LoadAbsStore", 1, 1);
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    let p = TilingProblem::new(&impls[0], &Target::ascend910b()).unwrap();
    // UB(t) = 2·A(2t) + 2·A(2t) + 8192 with A = round up to 32 bytes.
    for t in [1i64, 15, 16, 17, 1000, 23520] {
        let a = (2 * t + 31) / 32 * 32;
        assert_eq!(p.ub_usage(&[t, 1, 1 << 20]).unwrap(), 4 * a + 8192, "t={t}");
    }
    let mut shape = FxHashMap::default();
    shape.insert("s0".to_string(), 1 << 20);
    let t = solve_tiling(&impls, &Target::ascend910b(), &shape).unwrap();
    assert_eq!(t.get("z0t_size"), Some(23520));
    assert_eq!(t.block_dim, 45);
    assert_eq!(t.get("z0Tb_size"), Some(1));
    assert!(t.ub_used <= 196352);
    assert_eq!(t.ub_used, 4 * 47040 + 8192);
    // One aligned step more would not fit.
    let mut vals = vec![23520 + 16, 1, 1 << 20];
    let names: Vec<String> = p.slot_names().to_vec();
    assert_eq!(names, vec!["z0t_size", "z0Tb_size", "s0"]);
    assert!(p.ub_usage(&vals).unwrap() > 196352);
    vals[0] = 23520;
    assert_eq!(p.ub_usage(&vals).unwrap(), t.ub_used);
    // 40 cores.
    let t3 = solve_tiling(&impls, &Target::ascend910b3(), &shape).unwrap();
    assert!(t3.block_dim <= 40);
}

#[test]
fn tiling_error_names_constraint() {
    let g = with_syms("LoadAbsStore", 1, 1);
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    let tiny = Target::custom("tiny", 8, 4096, 32, 4).unwrap();
    let mut shape = FxHashMap::default();
    shape.insert("s0".to_string(), 1000);
    let e = solve_tiling(&impls, &tiny, &shape).unwrap_err();
    assert_eq!(e.constraint, "ub");
    assert!(e.excess > 0);
    assert!(e.message.contains("UB"), "{}", e.message);
    let e = solve_tiling(&impls, &Target::ascend910b(), &FxHashMap::default()).unwrap_err();
    assert_eq!(e.constraint, "shape");
    assert!(e.message.contains("s0"));
}

/// Six loads whose values all stay live until a final chain of adds.
fn many_loads_graph() -> AscGraph {
    let (_, syms) = sizes_syms(1);
    let mut b = B::new("ManyLoads", &syms);
    let _ = b.g.create_size("s0");
    let f16 = DataType::FLOAT16;
    let mut loads = Vec::new();
    for k in 0..6 {
        let x = b.node(
            &format!("x{k}"),
            op("Data", ComputeType::Invalid, &[], false, None),
            &[],
            f16,
            None,
        );
        loads.push(b.node(
            &format!("load{k}"),
            op("Load", ComputeType::Load, &["x"], false, None),
            &[x],
            f16,
            None,
        ));
    }
    let add = op("Add", ComputeType::Elewise, &["x1", "x2"], true, None);
    let mut cur = b.node("add0", add.clone(), &[loads[0], loads[1]], f16, None);
    for (k, l) in loads.iter().enumerate().skip(2) {
        cur = b.node(&format!("add{}", k - 1), add.clone(), &[cur, *l], f16, None);
    }
    let st = b.node(
        "store",
        op("Store", ComputeType::Store, &["x"], false, None),
        &[cur],
        f16,
        None,
    );
    b.node(
        "y",
        op("Output", ComputeType::Invalid, &["x"], false, None),
        &[st],
        f16,
        None,
    );
    b.g
}

#[test]
fn queue_limit_inserts_ub2ub() {
    let opts = ScheduleOptions {
        allocate: false,
        ..ScheduleOptions::default()
    };
    let mut impls = schedule(&many_loads_graph(), &opts).unwrap();
    let rep = allocate(&mut impls[0], &AllocOptions::default()).unwrap();
    assert!(rep.vecin_queues <= 4, "{rep:?}");
    assert!(!rep.inserted.is_empty());
    assert!(rep.inserted[0].starts_with("ub_cpy_load"));
    impls[0].validate().unwrap();
    let no = allocate(
        &mut impls[0].clone(),
        &AllocOptions {
            max_que_num: 64,
            insert_ub2ub: true,
        },
    )
    .unwrap();
    assert!(no.inserted.is_empty());
}

#[test]
fn a_twin_takes_the_inserted_copies_under_its_own_names() {
    let g = many_loads_graph();
    let impls = schedule(&g, &ScheduleOptions::default()).unwrap();
    assert!(common::check_twins(&g, &impls, |n| format!("layer1/{n}")));
    // A twin whose node already has the name a copy would take: scheduling it gives the copy a
    // clash suffix, so the names are not carried over.
    let copy = impls[0]
        .nodes()
        .iter()
        .find(|n| n.name.starts_with("ub_cpy_"))
        .unwrap();
    let load = copy.name.strip_prefix("ub_cpy_").unwrap().to_string();
    let clash = common::check_twins(&g, &impls, |n| {
        if n == "add0" {
            format!("ub_cpy_L/{load}")
        } else {
            format!("L/{n}")
        }
    });
    assert!(!clash);
}
