//! The reader on a GE-style dump, the writer on what it reads, errors and detection.

use ascendir_ir::{AttrValue, DataType};

use super::{looks_ge_onnx, parse_ge_onnx, print_ge_onnx};
use crate::error::ProtoError;

/// A dump the way GE writes one (attributes sorted by name, every desc member present).
const DUMP: &str = r#"ir_version: 6
producer_name: "GE"
graph {
  node {
    name: "x"
    op_type: "ge:Data"
    output: "x:0"
    attribute { name: "id" type: INT }
    attribute { name: "index" i: 0 type: INT }
    attribute { name: "input_desc_nums" type: INT }
    attribute { name: "output_desc_dtype:0" s: "DT_FLOAT" type: STRING }
    attribute { name: "output_desc_layout:0" s: "NCHW" type: STRING }
    attribute { name: "output_desc_nums" i: 1 type: INT }
    attribute { name: "output_desc_shape:0" ints: 1 ints: 3 type: INTS }
  }
  node {
    name: "relu"
    op_type: "ge:Relu"
    input: "x:0"
    input: "x:-1"
    attribute { name: "alpha" f: 0.5 type: FLOAT }
    attribute { name: "axes" ints: 1 ints: -2 type: INTS }
    attribute { name: "input_desc_attr_note:0" s: "n" type: STRING }
    attribute { name: "input_desc_dtype:0" s: "DT_FLOAT16" type: STRING }
    attribute { name: "input_desc_nums" i: 1 type: INT }
    attribute { name: "mode" s: "fast" type: STRING }
    attribute { name: "output_desc_dtype:0" s: "DT_FLOAT16" type: STRING }
    attribute { name: "output_desc_nums" i: 1 type: INT }
    attribute { name: "stream_id" i: 2 type: INT }
  }
  output { name: "relu" type { tensor_type { } } }
}
"#;

#[test]
fn reads_ge_types_attrs_descs_and_edges() {
    let g = parse_ge_onnx(DUMP).unwrap();
    assert_eq!(g.name(), "");
    let relu = g.op(g.find("relu").unwrap()).unwrap();
    assert_eq!(relu.op_type(), "Relu");
    assert_eq!(relu.attr("alpha"), Some(&AttrValue::Float(0.5)));
    assert_eq!(relu.attr("axes"), Some(&AttrValue::ListInt(vec![1, -2])));
    assert_eq!(relu.attr("mode"), Some(&AttrValue::String("fast".into())));
    assert_eq!(relu.inputs()[0].desc.dtype, DataType::FLOAT16);
    let x = g.op(g.find("x").unwrap()).unwrap();
    assert_eq!(x.outputs()[0].desc.shape.as_slice(), &[1, 3]);
    let preds = g.in_control_nodes(g.find("relu").unwrap()).unwrap();
    assert_eq!(preds, vec![g.find("x").unwrap()]);
}

#[test]
fn writes_what_it_reads_identically() {
    let first = print_ge_onnx(&parse_ge_onnx(DUMP).unwrap(), "GE").unwrap();
    let second = print_ge_onnx(&parse_ge_onnx(&first).unwrap(), "GE").unwrap();
    assert_eq!(first, second);
    assert!(first.contains("op_type: \"ge:Relu\""));
    assert!(first.contains("name: \"input_desc_attr_note:0\""));
    assert!(first.contains("output: \"x:-1\""));
}

#[test]
fn bad_text_and_bad_models_are_errors() {
    let cut = &DUMP[..DUMP.len() / 2];
    assert!(matches!(parse_ge_onnx(cut), Err(ProtoError::Text { .. })));
    let unknown = DUMP.replace("input: \"x:0\"", "input: \"nope:0\"");
    assert!(matches!(
        parse_ge_onnx(&unknown),
        Err(ProtoError::Invalid { .. })
    ));
    let past = DUMP.replace("input_desc_dtype:0", "input_desc_dtype:7");
    assert!(matches!(
        parse_ge_onnx(&past),
        Err(ProtoError::Invalid { .. })
    ));
    let kind = DUMP.replace("s: \"fast\" type: STRING", "type: GRAPH");
    assert!(matches!(
        parse_ge_onnx(&kind),
        Err(ProtoError::Invalid { .. })
    ));
    let huge = DUMP.replace(
        "name: \"input_desc_nums\" i: 1",
        "name: \"input_desc_nums\" i: 99999999999",
    );
    assert!(matches!(
        parse_ge_onnx(&huge),
        Err(ProtoError::Invalid { .. })
    ));
    let dtype = DUMP.replace("DT_FLOAT16", "DT_NOPE");
    assert!(matches!(
        parse_ge_onnx(&dtype),
        Err(ProtoError::Invalid { .. })
    ));
}

#[test]
fn detection() {
    assert!(looks_ge_onnx(DUMP.as_bytes()));
    assert!(looks_ge_onnx(
        b"# c\ngraph {\n  name: \"g\"\n  node {\n  }\n}\n"
    ));
    assert!(!looks_ge_onnx(
        b"name: \"m\"\ngraph {\n  name: \"g\"\n  op {\n  }\n}\n"
    ));
    assert!(!looks_ge_onnx(
        b"graph {\n  name: \"g\"\n  input: \"a:0\"\n  op {\n  }\n}\n"
    ));
    assert!(!looks_ge_onnx(b"graph(\"g\"):\n"));
    assert!(!looks_ge_onnx(b""));
}

#[test]
fn desc_int_lists_and_tensors_come_back() {
    let extra = r#"    attribute { name: "input_desc_attr_range:0_1" ints: 4 ints: 5 type: INTS }
    attribute { name: "w_data" s: "\001\000\000\000" type: STRING }
    attribute { name: "w_desc_device_type" s: "NPU" type: STRING }
    attribute { name: "w_desc_dtype" s: "DT_INT32" type: STRING }
    attribute { name: "w_desc_layout" s: "ND" type: STRING }
    attribute { name: "w_desc_shape" ints: 1 type: INTS }
"#;
    let text = DUMP.replace(
        "    attribute { name: \"mode\"",
        &format!("{extra}    attribute {{ name: \"mode\""),
    );
    let g = parse_ge_onnx(&text).unwrap();
    let relu = g.op(g.find("relu").unwrap()).unwrap();
    let range = relu.inputs()[0].desc.attrs.as_ref().unwrap().get("range");
    assert_eq!(
        range,
        Some(&AttrValue::ListListInt(vec![vec![], vec![4, 5]]))
    );
    match relu.attr("w") {
        Some(AttrValue::Tensor(t)) => {
            assert_eq!(t.desc.dtype, DataType::INT32);
            assert_eq!(t.desc.shape.as_slice(), &[1]);
            assert_eq!(t.data.as_ref(), &[1, 0, 0, 0]);
        }
        other => panic!("not a tensor: {other:?}"),
    }
    let first = print_ge_onnx(&g, "GE").unwrap();
    assert!(first.contains("name: \"w_desc_dtype\""));
    assert!(first.contains("name: \"input_desc_attr_range:0_1\""));
    let second = print_ge_onnx(&parse_ge_onnx(&first).unwrap(), "GE").unwrap();
    assert_eq!(first, second);
}

#[test]
fn json_descs_of_narrow_ops_and_attr_groups_stay_string_attributes() {
    let extra = r#"    attribute { name: "attr_groups" s: "attr_group_def {\n}\n" type: STRING }
    attribute { name: "input_desc_0" s: "{\"dtype\":\"DT_FLOAT\"}" type: STRING }
"#;
    let text = DUMP.replace(
        "    attribute { name: \"alpha\"",
        &format!("{extra}    attribute {{ name: \"alpha\""),
    );
    let g = parse_ge_onnx(&text).unwrap();
    let relu = g.op(g.find("relu").unwrap()).unwrap();
    let json = AttrValue::String("{\"dtype\":\"DT_FLOAT\"}".into());
    assert_eq!(relu.attr("input_desc_0"), Some(&json));
    assert!(matches!(
        relu.attr("attr_groups"),
        Some(AttrValue::String(_))
    ));
    let first = print_ge_onnx(&g, "GE").unwrap();
    let second = print_ge_onnx(&parse_ge_onnx(&first).unwrap(), "GE").unwrap();
    assert_eq!(first, second);
}

#[test]
fn descs_of_wide_ops_go_as_json() {
    let mut node = String::from("  node {\n    name: \"cat\"\n    op_type: \"ge:ConcatD\"\n");
    for _ in 0..21 {
        node.push_str("    input: \"x:0\"\n");
    }
    for i in 0..21 {
        let json = format!(
            "{{\\\"dtype\\\":\\\"DT_INT8\\\",\\\"layout\\\":\\\"NHWC\\\",\\\"note\\\":\\\"s: \\\\\\\"n{i}\\\\\\\"\\\\n\\\",\\\"shape\\\":[2,{i}]}}"
        );
        node.push_str(&format!(
            "    attribute {{ name: \"input_desc_{i}\" s: \"{json}\" type: STRING }}\n"
        ));
    }
    node.push_str("    attribute { name: \"input_desc_nums\" i: 21 type: INT }\n  }\n");
    let text = DUMP.replace(
        "  output { name: \"relu\"",
        &format!("{node}  output {{ name: \"relu\""),
    );
    let g = parse_ge_onnx(&text).unwrap();
    let cat = g.op(g.find("cat").unwrap()).unwrap();
    assert_eq!(cat.inputs().len(), 21);
    let d = &cat.inputs()[20].desc;
    assert_eq!(d.dtype, DataType::INT8);
    assert_eq!(d.shape.as_slice(), &[2, 20]);
    let note = d.attrs.as_ref().unwrap().get("note");
    assert_eq!(note, Some(&AttrValue::String("n20".into())));
    let first = print_ge_onnx(&g, "GE").unwrap();
    assert!(first.contains("name: \"input_desc_20\""));
    assert!(!first.contains("input_desc_dtype:3"));
    let second = print_ge_onnx(&parse_ge_onnx(&first).unwrap(), "GE").unwrap();
    assert_eq!(first, second);
    let groups = text.replace(
        "{\\\"dtype\\\":\\\"DT_INT8\\\",",
        "{\\\"attr_groups\\\":\\\"attr_group_def {}\\\",\\\"dtype\\\":\\\"DT_INT8\\\",",
    );
    assert_ne!(groups, text);
    let g = parse_ge_onnx(&groups).unwrap();
    let cat = g.op(g.find("cat").unwrap()).unwrap();
    let kept = cat.inputs()[0]
        .desc
        .attrs
        .as_ref()
        .unwrap()
        .get("attr_groups");
    assert_eq!(kept, Some(&AttrValue::String("attr_group_def {}".into())));
    let bad = text.replace("[2,3]", "[2,");
    assert!(matches!(
        parse_ge_onnx(&bad),
        Err(ProtoError::Invalid { .. })
    ));
}
