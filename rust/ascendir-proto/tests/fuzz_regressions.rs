//! Inputs found by the coverage-guided fuzz targets (`fuzz/regressions/`): the one-pass
//! decoder and the reference decoder must agree on them.

use std::path::Path;

fn regression(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/model_def")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn agree(name: &str) {
    let data = regression(name);
    let fast = ascendir_proto::decode_model(&data);
    let reference = ascendir_proto::reference::decode_model(&data);
    match (&fast, &reference) {
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
        (Ok(_), Ok(_)) => {}
        _ => panic!(
            "{name}: the decoders disagree: one-pass {:?}, reference {:?}",
            fast.as_ref().err(),
            reference.as_ref().err()
        ),
    }
}

#[test]
fn a_map_key_repeated_with_a_first_occurrence_not_utf8_is_refused_by_both() {
    agree("attr-key-repeated-first-not-utf8");
    agree("desc-attr-key-repeated-first-not-utf8");
}

#[test]
fn a_malformed_reserved_attribute_beside_a_failing_user_attribute_gives_the_same_error() {
    agree("reserved-attr-bad-nested-wire-type");
    agree("reserved-attr-length-past-end");
}

#[test]
fn a_reserved_key_that_does_not_read_beside_a_failing_user_attribute_gives_the_same_error() {
    // `_ascendir_subgraph_ir_types` well formed on the wire but with one entry for an op with
    // no subgraph slot, and a user attribute whose string is not UTF-8: the reference decoder
    // reports the reserved key (it reads the reserved keys first).
    agree("reserved-key-malformed-beside-failing-user-attribute");
}

#[test]
fn a_failure_nested_in_graph_attributes_at_every_level_is_reported_once_per_level() {
    use ascendir_proto::pb;
    use prost::Message;
    // The innermost op has a user attribute that is not UTF-8, and every op on the way out has
    // a reserved key that does not read: each level's one-pass attempt fails and the reference
    // decoder answers for that op. Decoded once per level (not twice per level, which at the
    // nesting limit would be 2^31 decodes), and both decoders give the same error.
    let bad_utf8 = pb::AttrDef {
        value: Some(pb::attr_def::Value::S(vec![0xff].into())),
    };
    let bad_reserved = pb::AttrDef {
        value: Some(pb::attr_def::Value::List(pb::attr_def::ListValue {
            i: vec![1],
            ..Default::default()
        })),
    };
    let mut op = pb::OpDef {
        name: "leaf".into(),
        r#type: "T".into(),
        ..Default::default()
    };
    op.attr.insert("k".into(), bad_utf8);
    for level in 0..31 {
        let inner = pb::GraphDef {
            name: format!("g{level}"),
            op: vec![op.encode_to_vec().into()],
            ..Default::default()
        };
        op = pb::OpDef {
            name: format!("n{level}"),
            r#type: "T".into(),
            ..Default::default()
        };
        op.attr.insert(
            "g".into(),
            pb::AttrDef {
                value: Some(pb::attr_def::Value::G(inner)),
            },
        );
        op.attr
            .insert("_ascendir_subgraph_ir_types".into(), bad_reserved.clone());
    }
    let m = pb::ModelDef {
        graph: vec![pb::GraphDef {
            name: "root".into(),
            op: vec![op.encode_to_vec().into()],
            ..Default::default()
        }],
        ..Default::default()
    };
    let data = m.encode_to_vec();
    let fast = ascendir_proto::decode_model(&data).unwrap_err();
    let reference = ascendir_proto::reference::decode_model(&data).unwrap_err();
    assert_eq!(fast.to_string(), reference.to_string());
    assert!(
        fast.to_string().contains("_ascendir_subgraph_ir_types"),
        "{fast}"
    );
}
