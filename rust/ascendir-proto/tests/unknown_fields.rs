//! Fields that `ge_ir.proto` does not define survive decode → graph → encode: on the ModelDef,
//! its GraphDefs, their OpDefs, the ops' TensorDescriptors and the AttrDef values of their
//! attribute maps.

use ascendir_ir::AttrValue;
use ascendir_proto::convert::keys;
use ascendir_proto::wire::{
    attr_unknown_fields, next_field, unknown_fields, GRAPH_DEF_FIELDS, MODEL_DEF_FIELDS,
    OP_DEF_FIELDS, TENSOR_DESC_FIELDS,
};
use ascendir_proto::{decode_model, encode_model, pb};
use bytes::Bytes;
use prost::Message;

/// A map entry `{key, value}` of field `field`.
fn entry(field: u32, key: &str, value: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    prost::encoding::string::encode(1, &key.to_string(), &mut e);
    prost::encoding::bytes::encode(2, &value.to_vec(), &mut e);
    let mut out = Vec::new();
    prost::encoding::bytes::encode(field, &e, &mut out);
    out
}

// Unknown fields: a varint, a length-delimited value, a fixed32 and a fixed64.
const U_MODEL: &[u8] = &[0xb0, 0x06, 0x2a]; // field 102, varint 42
const U_GRAPH: &[u8] = &[0xaa, 0x06, 0x02, b'g', b'g']; // field 101, "gg"
const U_OP: &[u8] = &[0xa5, 0x06, 1, 2, 3, 4]; // field 100, fixed32
const U_DESC: &[u8] = &[0x99, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]; // field 99, fixed64
const U_ATTR: &[u8] = &[0x92, 0x03, 0x02, b'z', b'z']; // field 50, "zz"
const U_DESC_ATTR: &[u8] = &[0x98, 0x03, 0x07]; // field 51, varint 7

fn model_with_unknown_fields() -> Vec<u8> {
    let mut td = pb::TensorDescriptor {
        dtype: 1,
        shape: Some(pb::ShapeDef { dim: vec![2, 3] }),
        layout: "ND".into(),
        ..Default::default()
    }
    .encode_to_vec();
    let attr_i = pb::AttrDef {
        value: Some(pb::attr_def::Value::I(5)),
    }
    .encode_to_vec();
    td.extend(entry(5, "d", &[attr_i.as_slice(), U_DESC_ATTR].concat()));
    td.extend_from_slice(U_DESC);
    let data = pb::OpDef {
        name: "x".into(),
        r#type: "Data".into(),
        output_desc: vec![Bytes::from(td.clone())],
        ..Default::default()
    };
    let mut data = data.encode_to_vec();
    data.extend_from_slice(U_OP);
    let mut relu = pb::OpDef {
        name: "r".into(),
        r#type: "Relu".into(),
        input: vec!["x:0".into()],
        input_desc: vec![Bytes::from(td.clone())],
        output_desc: vec![Bytes::from(td)],
        ..Default::default()
    }
    .encode_to_vec();
    relu.extend(entry(10, "k", &[attr_i.as_slice(), U_ATTR].concat()));
    let mut graph = pb::GraphDef {
        name: "g".into(),
        input: vec!["x:0".into()],
        output: vec!["r:0".into()],
        op: vec![Bytes::from(data), Bytes::from(relu)],
        ..Default::default()
    }
    .encode_to_vec();
    graph.extend(entry(11, "ga", &[attr_i.as_slice(), U_ATTR].concat()));
    graph.extend_from_slice(U_GRAPH);
    let mut model = pb::ModelDef {
        name: "m".into(),
        version: 1,
        ..Default::default()
    }
    .encode_to_vec();
    prost::encoding::bytes::encode(7, &graph, &mut model);
    model.extend(entry(11, "ma", &[attr_i.as_slice(), U_ATTR].concat()));
    model.extend_from_slice(U_MODEL);
    model
}

/// The payloads of field `number` of message `data`, in order.
fn payloads(data: &[u8], number: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let f = next_field(data, &mut pos).expect("well-formed");
        if f.number == number {
            out.push(data[f.value_start..f.end].to_vec());
        }
    }
    out
}

fn attr_unknown(data: &[u8], field: u32, key: &str) -> Vec<u8> {
    attr_unknown_fields(data, field)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .unwrap_or_default()
}

fn check_encoding(out: &[u8]) {
    assert_eq!(unknown_fields(out, MODEL_DEF_FIELDS), U_MODEL);
    assert_eq!(attr_unknown(out, 11, "ma"), U_ATTR);
    let graphs = payloads(out, 7);
    assert_eq!(graphs.len(), 1);
    let g = &graphs[0];
    assert_eq!(unknown_fields(g, GRAPH_DEF_FIELDS), U_GRAPH);
    assert_eq!(attr_unknown(g, 11, "ga"), U_ATTR);
    let ops = payloads(g, 6);
    assert_eq!(ops.len(), 2);
    assert_eq!(unknown_fields(&ops[0], OP_DEF_FIELDS), U_OP);
    assert!(unknown_fields(&ops[1], OP_DEF_FIELDS).is_empty());
    assert_eq!(attr_unknown(&ops[1], 10, "k"), U_ATTR);
    for op in &ops {
        for desc in payloads(op, 33).iter().chain(&payloads(op, 34)) {
            assert_eq!(unknown_fields(desc, TENSOR_DESC_FIELDS), U_DESC);
            assert_eq!(attr_unknown(desc, 5, "d"), U_DESC_ATTR);
        }
    }
    // Python protobuf and prost still read it (unknown fields are skipped).
    let def = pb::ModelDef::decode(out).expect("valid ModelDef");
    assert_eq!(def.graph[0].op.len(), 2);
}

#[test]
fn unknown_fields_survive_a_round_trip() {
    let input = model_with_unknown_fields();
    let m = decode_model(&input).unwrap();
    let g = &m.graphs[0];
    // Known content is unaffected.
    let r = g.find("r").unwrap();
    let op = g.op(r).unwrap();
    assert_eq!(op.attrs.get("k"), Some(&AttrValue::Int(5)));
    assert!(op.attrs.contains_key(keys::ASC_ATTR_UNKNOWN));
    let x = g.op(g.find("x").unwrap()).unwrap();
    assert_eq!(
        x.attrs.get(keys::ASC_UNKNOWN),
        Some(&AttrValue::Bytes(Bytes::from_static(U_OP)))
    );
    assert_eq!(
        g.attrs.get(keys::ASC_UNKNOWN),
        Some(&AttrValue::Bytes(Bytes::from_static(U_GRAPH)))
    );
    assert_eq!(g.attrs.get("ga"), Some(&AttrValue::Int(5)));
    assert_eq!(
        m.meta.attrs.get(keys::ASC_UNKNOWN),
        Some(&AttrValue::Bytes(Bytes::from_static(U_MODEL)))
    );
    let d = &op.inputs()[0].desc;
    let dattrs = d.attrs.as_deref().unwrap();
    assert_eq!(dattrs.get("d"), Some(&AttrValue::Int(5)));
    assert_eq!(
        dattrs.get(keys::ASC_UNKNOWN),
        Some(&AttrValue::Bytes(Bytes::from_static(U_DESC)))
    );

    let out = encode_model(&m.meta, &m.graphs.iter().collect::<Vec<_>>()).unwrap();
    check_encoding(&out);
    // Stable: decoding our output and encoding again gives the same bytes.
    let m2 = decode_model(&out).unwrap();
    let out2 = encode_model(&m2.meta, &m2.graphs.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(out, out2);
    // The full decoder keeps them the same way.
    let m3 = ascendir_proto::reference::decode_model(&input).unwrap();
    let out3 = encode_model(&m3.meta, &m3.graphs.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(out, out3);
}

#[test]
fn messages_without_unknown_fields_get_no_private_keys() {
    let td = pb::TensorDescriptor {
        dtype: 1,
        ..Default::default()
    }
    .encode_to_vec();
    let op = pb::OpDef {
        name: "x".into(),
        r#type: "Data".into(),
        output_desc: vec![Bytes::from(td)],
        ..Default::default()
    };
    let model = pb::ModelDef {
        name: "m".into(),
        graph: vec![pb::GraphDef {
            name: "g".into(),
            op: vec![Bytes::from(op.encode_to_vec())],
            ..Default::default()
        }],
        ..Default::default()
    };
    let m = decode_model(&model.encode_to_vec()).unwrap();
    let g = &m.graphs[0];
    assert!(g.attrs.keys().all(|k| !k.starts_with("_ascendir_")));
    assert!(m.meta.attrs.keys().all(|k| !k.starts_with("_ascendir_")));
    let x = g.op(g.find("x").unwrap()).unwrap();
    assert!(x.attrs.keys().all(|k| !k.starts_with("_ascendir_")));
    assert!(x.outputs()[0].desc.attrs.is_none());
}
