//! Helpers shared by the backend integration tests.

use std::sync::Arc;

use ascendir_asc::schedule::{
    rename_for_twin, schedule, structure_key, ScheduleOptions, TwinSource,
};
use ascendir_asc::{AscGraph, AttrType, ComputeType, Expr, NodeId, OpDef, PortKind};

/// A prototype `ty` of compute type `ct` with inputs `ins` and output `y` of one dtype
/// variable (Data/Output also get the `index` attribute).
pub fn op(ty: &str, ct: ComputeType, ins: &[&str], inplace: bool, tmp: Option<i64>) -> Arc<OpDef> {
    let mut d = OpDef::new(ty, ct).dtype_var("T", &[]);
    for i in ins {
        d = d.input(i, PortKind::Required, "T");
    }
    d = d.output("y", PortKind::Required, "T");
    if ty == "Data" || ty == "Output" {
        d = d.attr("index", AttrType::Int, None);
    }
    d.inplace = inplace;
    d.tmp_buffer = tmp.map(Expr::int);
    Arc::new(d)
}

/// Check [`rename_for_twin`] on `g` (scheduled as `impls`) and its twin with every node renamed
/// by `rename`: the renamed ImplGraphs are those scheduling the twin gives, or `None` exactly
/// when scheduling the twin names an inserted node otherwise. Returns whether they were carried
/// over.
#[allow(dead_code)]
pub fn check_twins(g: &AscGraph, impls: &[AscGraph], rename: impl Fn(&str) -> String) -> bool {
    let mut twin = g.clone();
    for k in 0..twin.nodes().len() {
        let new = rename(&twin.nodes()[k].name);
        twin.rename_node(NodeId(k as u32), &new).unwrap();
    }
    assert_eq!(structure_key(g), structure_key(&twin));
    // The key is the graph with every node named after its index.
    let mut by_index = g.clone();
    for pass in 0..2 {
        for k in 0..by_index.nodes().len() {
            let name = if pass == 0 {
                format!("#{k}")
            } else {
                k.to_string()
            };
            by_index.rename_node(NodeId(k as u32), &name).unwrap();
        }
    }
    assert_eq!(structure_key(g), by_index.to_bytes());
    let direct = schedule(&twin, &ScheduleOptions::default()).unwrap();
    let bytes = |v: &[AscGraph]| v.iter().map(AscGraph::to_bytes).collect::<Vec<_>>();
    let carried_over = |d: &AscGraph| {
        d.nodes().iter().all(|n| {
            twin.find_node(&n.name).is_some() || {
                let p = n.inputs[0].unwrap().node;
                let pn = &d.nodes()[p.index()].name;
                n.name == format!("ub_cpy_{pn}") || n.name == format!("remove_pad_{pn}")
            }
        })
    };
    let source = TwinSource::new(g.clone(), impls.to_vec());
    let from_source = source.bytes_for(&twin);
    match rename_for_twin(impls, g, &twin) {
        Some(r) => {
            assert_eq!(bytes(&r), bytes(&direct));
            let named: Vec<(String, Vec<u8>)> = direct
                .iter()
                .map(|d| (d.name.clone(), d.to_bytes()))
                .collect();
            assert_eq!(from_source, Some(named));
            true
        }
        None => {
            assert!(from_source.is_none());
            assert!(
                !direct.iter().all(carried_over),
                "the names could have been carried over"
            );
            false
        }
    }
}
