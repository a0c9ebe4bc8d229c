//! Round trips of real GE dumps (text ModelDef) and a real OM file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ascendir_proto::convert::{model_from_def, model_to_def};
use ascendir_proto::pb;
use ascendir_proto::{om, text};
use prost::Message;

/// The GE dumps: `shared/testdata/ge` next to the repository, or the directory
/// `ASCENDIR_GE_TESTDATA` names. Without them the tests check nothing on a developer's machine
/// and fail in CI (`CI=true`).
fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ASCENDIR_GE_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/ge")
        });
    if dir.is_dir() {
        return Some(dir);
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    assert!(
        !in_ci,
        "GE test data not found under {} (set ASCENDIR_GE_TESTDATA to its directory)",
        dir.display()
    );
    eprintln!("GE test data not found under {}; skipping", dir.display());
    None
}

fn dumps() -> Vec<(String, String)> {
    let Some(dir) = data_dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "txt") {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    out.sort();
    assert!(
        !out.is_empty(),
        "no GE text dumps (*.txt) in {}",
        dir.display()
    );
    out
}

fn ops(g: &pb::GraphDef) -> Vec<pb::OpDef> {
    g.op.iter()
        .map(|b| pb::OpDef::decode(b.clone()).unwrap())
        .collect()
}

/// Keys GE's serializer writes on every save (so a re-save may add them to an older dump).
const ADDED_DESC_KEYS: &[&str] = &[
    "origin_format_for_int",
    "format_for_int",
    "origin_shape_initialized",
];
const ADDED_OP_KEYS: &[&str] = &[
    "_input_name_key",
    "_input_name_value",
    "_output_name_key",
    "_output_name_value",
];

fn strip_added(
    orig: &BTreeMap<String, pb::AttrDef>,
    new: &mut BTreeMap<String, pb::AttrDef>,
    keys: &[&str],
) {
    for k in keys {
        if !orig.contains_key(*k) {
            new.remove(*k);
        }
    }
}

fn norm_desc(orig: &pb::TensorDescriptor, new: &mut pb::TensorDescriptor) {
    strip_added(&orig.attr, &mut new.attr, ADDED_DESC_KEYS);
    if orig.device_type.is_empty() && new.device_type == "NPU" {
        new.device_type.clear();
    }
    if orig.shape.is_none() && new.shape.as_ref().is_some_and(|s| s.dim.is_empty()) {
        new.shape = None;
    }
    for (k, v) in &orig.attr {
        if let (Some(pb::attr_def::Value::Td(o)), Some(n)) = (&v.value, new.attr.get_mut(k)) {
            if let Some(pb::attr_def::Value::Td(n)) = &mut n.value {
                norm_desc(o, n);
            }
        }
    }
}

/// Remove from `new` exactly what GE's serializer adds to an older dump.
fn normalize(orig: &pb::ModelDef, new: &mut pb::ModelDef) {
    for k in [
        "memory_size",
        "p2p_memory_size",
        "stream_num",
        "event_num",
        "label_num",
        "weight_size",
        "target_type",
    ] {
        if !orig.attr.contains_key(k) {
            new.attr.remove(k);
        }
    }
    for (og, ng) in orig.graph.iter().zip(new.graph.iter_mut()) {
        for (ob, nb) in og.op.iter().zip(ng.op.iter_mut()) {
            // Ops and tensor descriptors are raw bytes in the Rust types: compare decoded.
            let oo = pb::OpDef::decode(ob.clone()).unwrap();
            let mut no = pb::OpDef::decode(nb.clone()).unwrap();
            strip_added(&oo.attr, &mut no.attr, ADDED_OP_KEYS);
            let pairs = oo
                .input_desc
                .iter()
                .zip(no.input_desc.iter_mut())
                .chain(oo.output_desc.iter().zip(no.output_desc.iter_mut()));
            for (od, nd) in pairs {
                let o = pb::TensorDescriptor::decode(od.clone()).unwrap();
                let mut n = pb::TensorDescriptor::decode(nd.clone()).unwrap();
                norm_desc(&o, &mut n);
                assert_eq!(o, n, "op {}", oo.name);
                *nd = od.clone();
            }
            assert_eq!(oo, no, "op {}", oo.name);
            *nb = ob.clone();
        }
    }
}

#[test]
fn real_text_dumps_round_trip() {
    for (path, txt) in dumps() {
        let orig = text::parse_model_def(&txt).unwrap_or_else(|e| panic!("{path}: {e}"));
        let n_ops: usize = orig.graph.iter().map(|g| g.op.len()).sum();
        let orig_ops: Vec<pb::OpDef> = orig.graph.iter().flat_map(ops).collect();
        let n_edges: usize = orig_ops
            .iter()
            .flat_map(|o| o.input.iter())
            .filter(|s| !s.is_empty())
            .count();
        let n_attrs: usize = orig_ops.iter().map(|o| o.attr.len()).sum();
        assert!(n_ops > 100, "{path}: {n_ops} ops");

        let model = model_from_def(orig.clone()).unwrap_or_else(|e| panic!("{path}: {e}"));
        let g = &model.graphs[0];
        assert_eq!(g.len(), orig.graph[0].op.len());
        assert!(
            g.check_invariants().is_empty(),
            "{:?}",
            g.check_invariants()
        );
        assert_eq!(
            g.num_links(),
            n_edges,
            "{path}: every non-empty edge string is a link"
        );

        let mut again =
            model_to_def(&model.meta, &model.graphs.iter().collect::<Vec<_>>()).unwrap();
        let attrs_again: usize = again.graph.iter().flat_map(ops).map(|o| o.attr.len()).sum();
        assert!(attrs_again >= n_attrs);
        normalize(&orig, &mut again);
        assert_eq!(orig.graph.len(), again.graph.len());
        for (go, gn) in orig.graph.iter().zip(&again.graph) {
            assert_eq!(go.name, gn.name);
            assert_eq!(go.input, gn.input);
            assert_eq!(go.output, gn.output);
            assert_eq!(go.attr, gn.attr);
            assert_eq!(go.op, gn.op, "{path}");
        }
        assert_eq!(orig, again, "{path}: model differs after a load/save");

        // A second load/save is byte-stable, binary and text.
        let bytes1 = model_to_def(&model.meta, &model.graphs.iter().collect::<Vec<_>>())
            .unwrap()
            .encode_to_vec();
        let m2 = ascendir_proto::decode_model(&bytes1).unwrap();
        let bytes2 =
            ascendir_proto::encode_model(&m2.meta, &m2.graphs.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(bytes1, bytes2, "{path}: second save differs");
        let t1 = text::print_bytes(&bytes1, "ModelDef").unwrap();
        let t2 =
            text::print_bytes(&text::parse_to_bytes(&t1, "ModelDef").unwrap(), "ModelDef").unwrap();
        assert_eq!(t1, t2);
        // Our printer reproduces GE's own text for the original message.
        let orig_text = text::print_model_def(&orig).unwrap();
        assert_eq!(
            orig_text, txt,
            "{path}: printed text differs from GE's dump"
        );
    }
}

#[test]
fn real_om_file_loads() {
    let Some(dir) = data_dir() else { return };
    let data = std::fs::read(dir.join("root_model.om")).unwrap();
    let om = om::read(&data).unwrap();
    assert_eq!(om.name, "test_graph_cache");
    let def = om.model_def().unwrap();
    let model = ascendir_proto::decode_model(def).unwrap();
    let g = &model.graphs[0];
    assert_eq!(g.name(), "test_graph_cache");
    assert!(g.len() >= 2);
    assert!(g.check_invariants().is_empty());
    // Written back as a standard OM file with MODEL_DEF + WEIGHTS_DATA, it reads the same.
    let bytes = ascendir_proto::encode_model(&model.meta, &model.graphs.iter().collect::<Vec<_>>())
        .unwrap();
    let out = om::write(&om.name, &bytes, &om.weights());
    let back = om::read(&out).unwrap();
    let model2 = ascendir_proto::decode_model(back.model_def().unwrap()).unwrap();
    let bytes2 =
        ascendir_proto::encode_model(&model2.meta, &model2.graphs.iter().collect::<Vec<_>>())
            .unwrap();
    assert_eq!(bytes, bytes2);
    // The original ModelDef survives our load/save unchanged (modulo GE's added keys).
    let orig = pb::ModelDef::decode(def.clone()).unwrap();
    let mut again = pb::ModelDef::decode(&bytes[..]).unwrap();
    normalize(&orig, &mut again);
    assert_eq!(orig, again);
}

#[test]
fn real_dumps_encode_as_prost_does() {
    for (path, txt) in dumps() {
        let data = text::parse_to_bytes(&txt, "ModelDef").unwrap();
        let m = ascendir_proto::decode_model(&data).unwrap_or_else(|e| panic!("{path}: {e}"));
        let out =
            ascendir_proto::encode_model(&m.meta, &m.graphs.iter().collect::<Vec<_>>()).unwrap();
        let def = pb::ModelDef::decode(out.as_slice()).unwrap();
        assert_eq!(def.encode_to_vec(), out, "{path}: ModelDef");
        for g in &def.graph {
            for raw in &g.op {
                let op = pb::OpDef::decode(raw.clone()).unwrap();
                assert_eq!(op.encode_to_vec(), raw.to_vec(), "{path}: op {}", op.name);
            }
        }
        // The one-pass decoder and the full decoder build the same graphs.
        let full = ascendir_proto::reference::decode_model(&data).unwrap();
        let out_full =
            ascendir_proto::encode_model(&full.meta, &full.graphs.iter().collect::<Vec<_>>())
                .unwrap();
        assert_eq!(out, out_full, "{path}");
    }
}
