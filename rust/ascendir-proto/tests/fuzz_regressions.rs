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
