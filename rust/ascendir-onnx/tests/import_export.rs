//! Import of hand-built ONNX models, round trip through export, and decode errors.

use ascendir_ir::{AttrValue, DataType};
use ascendir_onnx::{export_model, import_model, pb, ExportOptions, ImportOptions, OnnxError};
use bytes::Bytes;
use prost::Message;

fn vi(name: &str, elem: i32, dims: &[i64]) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: elem,
                shape: Some(pb::TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| pb::tensor_shape_proto::Dimension {
                            value: Some(if d < 0 {
                                pb::tensor_shape_proto::dimension::Value::DimParam("N".into())
                            } else {
                                pb::tensor_shape_proto::dimension::Value::DimValue(d)
                            }),
                            denotation: String::new(),
                        })
                        .collect(),
                }),
            })),
            denotation: String::new(),
        }),
        ..Default::default()
    }
}

fn node(
    op: &str,
    name: &str,
    inputs: &[&str],
    outputs: &[&str],
    attrs: Vec<pb::AttributeProto>,
) -> pb::NodeProto {
    pb::NodeProto {
        op_type: Bytes::copy_from_slice(op.as_bytes()),
        name: Bytes::copy_from_slice(name.as_bytes()),
        input: inputs
            .iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect(),
        output: outputs
            .iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn ints(name: &str, v: &[i64]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn weights(name: &str, dims: &[i64]) -> pb::TensorProto {
    let n: i64 = dims.iter().product();
    pb::TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: 1,
        raw_data: Bytes::from(
            (0..n)
                .flat_map(|i| (i as f32).to_le_bytes())
                .collect::<Vec<u8>>(),
        ),
        ..Default::default()
    }
}

fn conv_model() -> pb::ModelProto {
    let graph = pb::GraphProto {
        name: "net".into(),
        node: vec![
            node(
                "Conv",
                "conv1",
                &["x", "w"],
                &["c"],
                vec![
                    ints("pads", &[1, 1, 1, 1]),
                    ints("strides", &[2, 2]),
                    ints("kernel_shape", &[3, 3]),
                ],
            ),
            node("Relu", "", &["c"], &["r"], vec![]),
            node("Custom", "mystery", &["r"], &["y"], vec![ints("k", &[7])]),
        ],
        initializer: vec![weights("w", &[4, 3, 3, 3])],
        input: vec![vi("x", 1, &[-1, 3, 8, 8])],
        output: vec![vi("y", 1, &[-1, 4, 4, 4])],
        value_info: vec![vi("c", 1, &[-1, 4, 4, 4])],
        ..Default::default()
    };
    pb::ModelProto {
        ir_version: 8,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    }
}

#[test]
fn conv_relu_unknown_imports_with_ge_names() {
    let bytes = Bytes::from(conv_model().encode_to_vec());
    let (g, report) = import_model(bytes.clone(), &ImportOptions::default()).unwrap();
    assert_eq!(report.onnx_nodes, 3);
    assert_eq!(report.unknown_ops.get("onnx::Custom"), Some(&1));
    // x (Data), w (Const), 3 ops, NetOutput.
    assert_eq!(g.len(), 6);
    let conv = g.op(g.find("conv1").unwrap()).unwrap();
    assert_eq!(conv.op_type(), "Conv2D");
    assert_eq!(conv.input_index("filter"), Some(1));
    assert_eq!(
        conv.attr("pads"),
        Some(&AttrValue::ListInt(vec![1, 1, 1, 1]))
    );
    assert_eq!(
        conv.attr("strides"),
        Some(&AttrValue::ListInt(vec![1, 1, 2, 2]))
    );
    assert_eq!(conv.attr("groups"), Some(&AttrValue::Int(1)));
    let out = conv.output_desc(0).unwrap();
    assert_eq!(out.shape.as_slice(), &[-1, 4, 4, 4]);
    assert_eq!(out.dtype, DataType::FLOAT);
    assert_eq!(out.name.as_deref(), Some("c"));
    // The unnamed Relu gets a generated name; the unknown op keeps its attributes.
    assert!(g.find("Relu_1").is_some());
    let m = g.op(g.find("mystery").unwrap()).unwrap();
    assert_eq!(m.op_type(), "onnx::Custom");
    assert_eq!(m.attr("k"), Some(&AttrValue::ListInt(vec![7])));
    // The weight payload is a slice of the input buffer (no copy).
    let w = g.op(g.find("w").unwrap()).unwrap();
    let Some(AttrValue::Tensor(t)) = w.attr("value") else {
        panic!()
    };
    let base = bytes.as_ptr() as usize;
    let p = t.data.as_ptr() as usize;
    assert!(p >= base && p + t.data.len() <= base + bytes.len());
    assert!(g.check_invariants().is_empty());
}

#[test]
fn export_round_trip_keeps_structure() {
    let bytes = Bytes::from(conv_model().encode_to_vec());
    let (g, _) = import_model(bytes, &ImportOptions::default()).unwrap();
    let out = export_model(&g, &ExportOptions::default()).unwrap();
    let m = pb::ModelProto::decode(out.as_slice()).unwrap();
    let gp = m.graph.unwrap();
    let types: Vec<&str> = gp.node.iter().map(|n| pb::text(&n.op_type)).collect();
    assert_eq!(types, ["Conv", "Relu", "Custom"]);
    let conv = &gp.node[0];
    let pads = conv.attribute.iter().find(|a| a.name == "pads").unwrap();
    assert_eq!(pads.ints, vec![1, 1, 1, 1]);
    let strides = conv.attribute.iter().find(|a| a.name == "strides").unwrap();
    assert_eq!(strides.ints, vec![2, 2]);
    assert_eq!(gp.input[0].name, "x");
    assert_eq!(gp.output[0].name, "y");
    assert_eq!(gp.initializer[0].name, "w");
    assert_eq!(
        conv.input,
        vec![Bytes::from_static(b"x"), Bytes::from_static(b"w")]
    );
}

#[test]
fn if_bodies_capture_outer_values() {
    let then_g = pb::GraphProto {
        name: "then".into(),
        node: vec![node("Relu", "t_relu", &["x"], &["t"], vec![])],
        output: vec![vi("t", 1, &[2])],
        ..Default::default()
    };
    let else_g = pb::GraphProto {
        name: "else".into(),
        node: vec![node("Neg", "e_neg", &["x"], &["e"], vec![])],
        output: vec![vi("e", 1, &[2])],
        ..Default::default()
    };
    let graph_attr = |name: &str, g: pb::GraphProto| pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Graph as i32,
        g: Some(g),
        ..Default::default()
    };
    let graph = pb::GraphProto {
        name: "main".into(),
        node: vec![node(
            "If",
            "branch",
            &["c"],
            &["y"],
            vec![
                graph_attr("then_branch", then_g),
                graph_attr("else_branch", else_g),
            ],
        )],
        input: vec![vi("c", 9, &[]), vi("x", 1, &[2])],
        output: vec![vi("y", 1, &[2])],
        ..Default::default()
    };
    let model = pb::ModelProto {
        ir_version: 8,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    };
    let (g, report) = import_model(
        Bytes::from(model.encode_to_vec()),
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(report.onnx_nodes, 3);
    assert_eq!(g.subgraphs.len(), 2);
    let id = g.find("branch").unwrap();
    let op = g.op(id).unwrap();
    assert_eq!(op.op_type(), "If");
    assert_eq!(op.num_inputs(), 2);
    assert_eq!(op.inputs()[1].name.as_ref(), "input0");
    assert_eq!(op.subgraph_instance_names(), ["then", "else"]);
    let then = g.subgraph("then").unwrap();
    assert_eq!(then.parent.as_ref().unwrap().node, id);
    let data = then.op(then.find("x").unwrap()).unwrap();
    assert_eq!(data.attr("index"), Some(&AttrValue::Int(1)));
    // Back to ONNX: the bodies read "x" from the outer scope again.
    let out = export_model(&g, &ExportOptions::default()).unwrap();
    let m = pb::ModelProto::decode(out.as_slice()).unwrap();
    let n = &m.graph.unwrap().node[0];
    assert_eq!(n.input, vec![Bytes::from_static(b"c")]);
    let body = n
        .attribute
        .iter()
        .find(|a| a.name == "then_branch")
        .unwrap()
        .g
        .as_ref()
        .unwrap();
    assert!(body.input.is_empty());
    assert_eq!(body.node[0].input, vec![Bytes::from_static(b"x")]);
}

#[test]
fn malformed_bytes_are_decode_errors_with_offsets() {
    let mut bytes = conv_model().encode_to_vec();
    let cut = bytes.len() - 5;
    bytes.truncate(cut);
    match import_model(Bytes::from(bytes), &ImportOptions::default()) {
        Err(OnnxError::Decode { path, .. }) => {
            assert!(path.starts_with("ModelProto.graph[0]"), "{path}")
        }
        other => panic!("{other:?}"),
    }
    match import_model(
        Bytes::from_static(&[0xff, 0xff, 0xff]),
        &ImportOptions::default(),
    ) {
        Err(OnnxError::Decode { offset, .. }) => assert_eq!(offset, 0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn dangling_inputs_are_reported_not_panicking() {
    let mut m = conv_model();
    m.graph.as_mut().unwrap().node[1].input[0] = Bytes::from_static(b"nowhere");
    match import_model(Bytes::from(m.encode_to_vec()), &ImportOptions::default()) {
        Err(OnnxError::Invalid(msg)) => assert!(msg.contains("nowhere"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_value_defined_twice_names_both_definitions() {
    let mut m = conv_model();
    // The Relu now writes "c", which the Conv already produces.
    m.graph.as_mut().unwrap().node[1].output[0] = Bytes::from_static(b"c");
    match import_model(Bytes::from(m.encode_to_vec()), &ImportOptions::default()) {
        Err(OnnxError::DuplicateValue {
            graph,
            value,
            first,
            second,
        }) => {
            assert_eq!((graph.as_str(), value.as_str()), ("net", "c"));
            assert_eq!(first, "node 'conv1' (Conv)");
            assert_eq!(second, "node 1 (Relu)");
        }
        other => panic!("{other:?}"),
    }
    // A node output named like an initializer.
    let mut m = conv_model();
    m.graph.as_mut().unwrap().node[2].output[0] = Bytes::from_static(b"w");
    match import_model(Bytes::from(m.encode_to_vec()), &ImportOptions::default()) {
        Err(OnnxError::DuplicateValue { first, second, .. }) => {
            assert_eq!(
                (first.as_str(), second.as_str()),
                ("initializer", "node 'mystery' (Custom)")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_external_data_names_the_tensor_and_the_location() {
    let mut m = conv_model();
    let w = &mut m.graph.as_mut().unwrap().initializer[0];
    w.raw_data = Bytes::new();
    w.data_location = pb::tensor_proto::DataLocation::External as i32;
    w.external_data = vec![pb::StringStringEntryProto {
        key: "location".into(),
        value: "no/such.bin".into(),
    }];
    let dir = std::env::temp_dir();
    let opts = ImportOptions {
        base_dir: Some(dir),
    };
    match import_model(Bytes::from(m.encode_to_vec()), &opts) {
        Err(OnnxError::ExternalData {
            tensor,
            location,
            kind,
            ..
        }) => {
            assert_eq!((tensor.as_str(), location.as_str()), ("w", "no/such.bin"));
            assert_eq!(kind, std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}
