//! Unit tests of the text format: float printing, integer tokens, escapes and parse errors.

use prost::Message;

use super::parse::{parse_float, parse_int};
use super::print::escape;
use super::*;
use crate::error::ProtoError;
use crate::pb;

#[test]
fn floats_print_like_cpp() {
    assert_eq!(format_float(1e-05_f32 as f64, true), "1e-05");
    assert_eq!(format_float(0.0, true), "0");
    assert_eq!(format_float(1.0, true), "1");
    assert_eq!(format_float(0.1_f32 as f64, true), "0.1");
    assert_eq!(format_float(123456789.0_f32 as f64, true), "123456792");
    assert_eq!(format_float(1.5e20_f32 as f64, true), "1.5e+20");
    assert_eq!(format_float(f64::NAN, true), "nan");
    assert_eq!(format_float(0.3333333432674408, true), "0.333333343");
}

#[test]
fn integers_take_one_sign_and_digits_only() {
    assert_eq!(parse_int("-1"), Some(-1));
    assert_eq!(parse_int("0x1f"), Some(31));
    assert_eq!(parse_int("017"), Some(15));
    assert_eq!(parse_int("-0x10"), Some(-16));
    for bad in [
        "--1", "0-5", "+5", "-", "0x", "0x-1", "08", "1-2", "0x+f", "-+1",
    ] {
        assert_eq!(parse_int(bad), None, "{bad}");
    }
    assert_eq!(parse_float("--1"), None);
}

#[test]
fn escapes_round_trip() {
    let raw = b"a\"b\\c\n\x01\xff'".to_vec();
    let mut s = String::new();
    escape(&raw, &mut s);
    let text = format!("name: \"{s}\"");
    let bytes = parse_to_bytes(&text, "GraphDef").unwrap_err();
    // Non-UTF-8 is rejected for a string field; a bytes field keeps it.
    let _ = bytes;
    let text = format!("s: \"{s}\" ");
    let data = parse_to_bytes(&text, "AttrDef").unwrap();
    let def = pb::AttrDef::decode(&data[..]).unwrap();
    match def.value {
        Some(pb::attr_def::Value::S(b)) => assert_eq!(&b[..], &raw[..]),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn errors_name_line_and_column() {
    let e = parse_to_bytes("name: \"g\"\n  bogus: 1\n", "GraphDef").unwrap_err();
    match e {
        ProtoError::Text { line, column, .. } => assert_eq!((line, column), (2, 3)),
        other => panic!("unexpected {other:?}"),
    }
    assert!(parse_to_bytes("op {", "GraphDef").is_err());
    assert!(parse_to_bytes("name: \"x", "GraphDef").is_err());
}

#[test]
fn lone_surrogates_are_located() {
    use super::text_from_surrogatepass;
    assert_eq!(
        text_from_surrogatepass(b"name: \"m\"").ok(),
        Some("name: \"m\"")
    );
    // "ab\n\u{e9}c" then U+D800 (ED A0 80).
    let text = b"ab\n\xC3\xA9c\xED\xA0\x80";
    match text_from_surrogatepass(text) {
        Err(crate::ProtoError::LoneSurrogate {
            code,
            character,
            line,
            column,
        }) => assert_eq!((code, character, line, column), (0xD800, 5, 2, 3)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        text_from_surrogatepass(b"a\xFF"),
        Err(crate::ProtoError::Text { offset: 1, .. })
    ));
}
