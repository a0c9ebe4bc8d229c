//! Lossless round trips of synthetic graphs, and defensive decoding of malformed input.

use std::fmt::Write;
use std::sync::Arc;

use ascendir_ir::format::bits;
use ascendir_ir::op_desc::SubgraphType;
use ascendir_ir::tensor::{DeviceType, ExtMeta};
use ascendir_ir::{
    AttrValue, DataType, Format, Graph, GraphAttr, InAnchor, NamedAttrs, NodeId, OpDesc, OutAnchor,
    ParentLink, Tensor, TensorDesc,
};
use ascendir_proto::convert::{model_to_def, ModelMeta};
use ascendir_proto::{
    decode_graph, decode_model, encode_graph, encode_model, pb, text, ProtoError,
};
use bytes::Bytes;
use prost::Message;

fn value_str(v: &AttrValue) -> String {
    match v {
        AttrValue::Graph(g) => format!("Graph({})", describe(&g.0)),
        AttrValue::ListGraph(l) => format!(
            "ListGraph[{}]",
            l.iter()
                .map(|g| describe(&g.0))
                .collect::<Vec<_>>()
                .join(";")
        ),
        AttrValue::NamedAttrs(na) => format!("NamedAttrs({}, {})", na.name, attrs_str(&na.attrs)),
        other => format!("{other:?}"),
    }
}

fn attrs_str(a: &ascendir_ir::AttrMap) -> String {
    a.iter()
        .map(|(k, v)| format!("{k}={}", value_str(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything observable about a graph, by names (independent of node ids).
fn describe(g: &Graph) -> String {
    let mut s = String::new();
    let name = |id: NodeId| {
        g.op(id)
            .map(|o| o.name().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    writeln!(
        s,
        "graph {} parent={:?}",
        g.name(),
        g.parent
            .as_ref()
            .map(|p| (p.graph.clone(), describe_parent(g, p)))
    )
    .unwrap();
    for id in g.node_ids() {
        let n = g.node(id).unwrap();
        let op = n.op();
        writeln!(
            s,
            " node {} {} id={} stream={}",
            op.name(),
            op.op_type(),
            op.id,
            op.stream_id
        )
        .unwrap();
        for p in op.inputs() {
            writeln!(s, "  in {} {:?}", p.name, p.desc).unwrap();
        }
        for p in op.outputs() {
            writeln!(s, "  out {} {:?}", p.name, p.desc).unwrap();
        }
        writeln!(s, "  attrs {}", attrs_str(&op.attrs)).unwrap();
        writeln!(s, "  meta {:?}", op.meta()).unwrap();
        for (i, p) in n.in_data_peers().enumerate() {
            writeln!(
                s,
                "  in_data[{i}] <- {:?}",
                p.map(|p| (name(p.node), p.index))
            )
            .unwrap();
        }
        for i in 0..n.num_out_data() {
            let peers: Vec<_> = n
                .out_data_peers(i)
                .iter()
                .map(|p| (name(p.node), p.index))
                .collect();
            writeln!(s, "  out_data[{i}] -> {peers:?}").unwrap();
        }
        let ic: Vec<_> = n
            .in_control_peers()
            .iter()
            .map(|p| (name(p.node), p.index))
            .collect();
        let oc: Vec<_> = n
            .out_control_peers()
            .iter()
            .map(|p| (name(p.node), p.index))
            .collect();
        writeln!(s, "  in_ctrl {ic:?} out_ctrl {oc:?}").unwrap();
    }
    let inputs: Vec<_> = g.inputs().iter().map(|&i| name(i)).collect();
    let outputs: Vec<_> = g.outputs().iter().map(|&(i, k)| (name(i), k)).collect();
    writeln!(s, " inputs {inputs:?} outputs {outputs:?}").unwrap();
    writeln!(s, " attrs {}", attrs_str(&g.attrs)).unwrap();
    for sub in &g.subgraphs {
        s.push_str(&describe(sub));
    }
    s
}

fn describe_parent(_g: &Graph, p: &ParentLink) -> String {
    p.graph.clone()
}

fn desc(shape: &[i64], dt: DataType, f: Format) -> Arc<TensorDesc> {
    Arc::new(TensorDesc::new(shape, dt, f))
}

fn simple_op(name: &str, ty: &str, n_in: usize, n_out: usize) -> OpDesc {
    let mut op = OpDesc::new(name, ty);
    for i in 0..n_in {
        op.add_input(&format!("x{i}"), desc(&[2, 3], DataType::FLOAT, Format::ND));
    }
    for i in 0..n_out {
        op.add_output(&format!("y{i}"), desc(&[2, 3], DataType::FLOAT, Format::ND))
            .unwrap();
    }
    op
}

fn every_attr(g_attr: &Graph) -> Vec<(String, AttrValue)> {
    let mut td = TensorDesc::new(&[1, -1, 16], DataType::FLOAT16, Format::NC1HWC0);
    td.name = Some("named_desc".into());
    td.origin_shape = Some(Box::new([1, 16].into_iter().collect()));
    td.origin_dtype = DataType::FLOAT;
    td.origin_format = Format::NCHW.value();
    let td = Arc::new(td);
    let tensor = Tensor::new(
        TensorDesc::new(&[2], DataType::INT8, Format::ND),
        Bytes::from_static(b"\x01\x02"),
    );
    let ga = GraphAttr(Arc::new(g_attr.clone()));
    let mut inner = NamedAttrs {
        name: "inner".into(),
        ..Default::default()
    };
    inner.attrs.insert("k", AttrValue::Int(7));
    inner.attrs.insert("empty", AttrValue::Bytes(Bytes::new()));
    let mut na = NamedAttrs {
        name: "outer".into(),
        ..Default::default()
    };
    na.attrs
        .insert("nested", AttrValue::NamedAttrs(Box::new(inner.clone())));
    vec![
        ("int".into(), AttrValue::Int(-5)),
        ("int_big".into(), AttrValue::Int(i64::MIN)),
        ("float".into(), AttrValue::Float(1e-5)),
        ("float_nan_free".into(), AttrValue::Float(-0.0)),
        ("bool".into(), AttrValue::Bool(false)),
        ("string".into(), AttrValue::String("héllo \"q\"\n".into())),
        ("string_empty".into(), AttrValue::String(String::new())),
        (
            "string_not_utf8".into(),
            AttrValue::RawString(Bytes::from_static(b"\xff\xfeA\x00")),
        ),
        (
            "bytes".into(),
            AttrValue::Bytes(Bytes::from_static(b"\x00\xff")),
        ),
        ("bytes_empty".into(), AttrValue::Bytes(Bytes::new())),
        ("td".into(), AttrValue::TensorDesc(td.clone())),
        ("tensor".into(), AttrValue::Tensor(tensor.clone())),
        ("graph".into(), AttrValue::Graph(ga.clone())),
        ("named".into(), AttrValue::NamedAttrs(Box::new(na))),
        ("dt".into(), AttrValue::DataType(DataType::BF16)),
        ("expr".into(), AttrValue::Expression("s0 * 2 + 1".into())),
        ("list_int".into(), AttrValue::ListInt(vec![1, -2, 3])),
        ("list_int_empty".into(), AttrValue::ListInt(vec![])),
        ("list_float".into(), AttrValue::ListFloat(vec![0.5, 1.25])),
        ("list_float_empty".into(), AttrValue::ListFloat(vec![])),
        ("list_bool".into(), AttrValue::ListBool(vec![true, false])),
        (
            "list_string".into(),
            AttrValue::ListString(vec!["a".into(), String::new()]),
        ),
        ("list_string_empty".into(), AttrValue::ListString(vec![])),
        (
            "list_bytes".into(),
            AttrValue::ListBytes(vec![Bytes::new(), Bytes::from_static(b"x")]),
        ),
        (
            "list_td".into(),
            AttrValue::ListTensorDesc(vec![td.clone(), td]),
        ),
        ("list_tensor".into(), AttrValue::ListTensor(vec![tensor])),
        ("list_graph".into(), AttrValue::ListGraph(vec![ga])),
        ("list_named".into(), AttrValue::ListNamedAttrs(vec![inner])),
        (
            "list_dt".into(),
            AttrValue::ListDataType(vec![DataType::INT4, DataType::UINT1]),
        ),
        ("list_dt_empty".into(), AttrValue::ListDataType(vec![])),
        (
            "lli".into(),
            AttrValue::ListListInt(vec![vec![1, 2], vec![], vec![3]]),
        ),
        ("lli_empty".into(), AttrValue::ListListInt(vec![])),
        (
            "llf".into(),
            AttrValue::ListListFloat(vec![vec![1.5], vec![]]),
        ),
    ]
}

fn build() -> Graph {
    let mut small = Graph::new("attr_graph");
    small.add_node(simple_op("c", "Const", 0, 1)).unwrap();

    let mut g = Graph::new("main");
    let data = g.add_node(simple_op("data", "Data", 0, 1)).unwrap();
    let data2 = g.add_node(simple_op("data2", "Data", 0, 1)).unwrap();
    // An op with an unset optional input (invalid desc) in the middle and at the end.
    let mut conv = OpDesc::new("conv", "Conv2D");
    conv.add_input("x", desc(&[1, 3, 8, 8], DataType::FLOAT16, Format::NCHW));
    conv.add_optional_input("bias", Arc::new(TensorDesc::invalid()));
    conv.add_input(
        "filter",
        desc(&[4, 3, 3, 3], DataType::FLOAT16, Format::FRACTAL_Z),
    );
    conv.add_optional_input("offset_w", Arc::new(TensorDesc::invalid()));
    conv.add_output("y", desc(&[1, 4, 8, 8], DataType::FLOAT16, Format::NC1HWC0))
        .unwrap();
    for (k, v) in every_attr(&small) {
        conv.set_attr(&k, v);
    }
    {
        let m = conv.meta_mut();
        m.ir_attr_names = vec!["strides".into(), "pads".into()];
        m.ir_inputs = vec![
            ("x".into(), ascendir_ir::IrInputType::Required),
            ("bias".into(), ascendir_ir::IrInputType::Optional),
        ];
        m.ir_outputs = vec![("y".into(), ascendir_ir::IrOutputType::Dynamic)];
        m.input_name = vec!["data".into()];
        m.src_name = vec!["data".into()];
        m.src_index = vec![0];
        m.workspace_bytes = vec![32];
        m.is_input_const = vec![false, true];
        m.has_out_attr = false;
    }
    conv.stream_id = 3;
    let conv = g.add_node(conv).unwrap();

    // Every dtype and format (with sub-format and C0 bits) on outputs of one op.
    let mut wide = OpDesc::new("wide", "Wide");
    for (i, dt) in DataType::VALUES.iter().enumerate() {
        let f = Format::VALUES[i % Format::VALUES.len()];
        let mut d = TensorDesc::new(&[i as i64 + 1], *dt, f);
        d.format = bits::with_c0_format(bits::with_sub_format(f.value(), i as i32), (i % 6) as i32);
        d.origin_dtype = *dt;
        d.origin_format = bits::with_sub_format(Format::FRACTAL_Z.value(), 16);
        d.name = (i % 2 == 0).then(|| format!("t{i}").into_boxed_str());
        if i % 3 == 0 {
            d.ext = Some(Box::new(ExtMeta {
                size: 64,
                weight_size: 1,
                reuse_input: true,
                output_tensor: true,
                input_tensor: true,
                device_type: DeviceType::Cpu,
                real_dim_cnt: 2,
                reuse_input_index: 1,
                data_offset: 128,
                cmps_size: 5,
                cmps_tab: "tab".into(),
                cmps_tab_offset: 9,
            }));
        }
        d.attrs_mut().insert("k", AttrValue::ListInt(vec![]));
        wide.add_output(&format!("o{i}"), Arc::new(d)).unwrap();
    }
    for f in Format::VALUES.iter() {
        let mut d = TensorDesc::new(&[-2], DataType::FLOAT, *f);
        d.origin_shape = Some(Box::default());
        wide.add_input(&format!("i_{}", f.name()), Arc::new(d));
    }
    let wide = g.add_node(wide).unwrap();

    let add = g.add_node(simple_op("add", "Add", 2, 1)).unwrap();
    let relu = g.add_node(simple_op("relu", "Relu", 1, 1)).unwrap();
    let sink = g.add_node(simple_op("sink", "Sink", 1, 0)).unwrap();
    let iff = g.add_node(simple_op("if", "If", 1, 1)).unwrap();
    let out = g.add_node(simple_op("out", "NetOutput", 2, 0)).unwrap();

    g.link(OutAnchor::data(data, 0), InAnchor::data(conv, 0))
        .unwrap();
    g.link(OutAnchor::data(data2, 0), InAnchor::data(conv, 2))
        .unwrap();
    g.link(OutAnchor::data(conv, 0), InAnchor::data(add, 0))
        .unwrap();
    g.link(OutAnchor::data(data, 0), InAnchor::data(add, 1))
        .unwrap();
    // Fan-out in reverse op order: relu before sink... then add first -> non-canonical order.
    g.link(OutAnchor::data(add, 0), InAnchor::data(sink, 0))
        .unwrap();
    g.link(OutAnchor::data(add, 0), InAnchor::data(relu, 0))
        .unwrap();
    g.link(OutAnchor::data(relu, 0), InAnchor::data(out, 0))
        .unwrap();
    g.link(OutAnchor::data(relu, 0), InAnchor::data(iff, 0))
        .unwrap();
    // Control, data->control and control->data links, interleaved.
    g.link(OutAnchor::control(data), InAnchor::control(relu))
        .unwrap();
    g.link(OutAnchor::data(conv, 0), InAnchor::control(relu))
        .unwrap();
    g.link(OutAnchor::control(data2), InAnchor::control(relu))
        .unwrap();
    g.link(OutAnchor::control(wide), InAnchor::data(out, 1))
        .unwrap();
    g.link(OutAnchor::control(relu), InAnchor::control(sink))
        .unwrap();
    g.link(OutAnchor::control(relu), InAnchor::control(add))
        .unwrap();
    g.set_input_nodes(vec![data2, data]).unwrap();
    g.add_output_node(relu, 0).unwrap();
    g.attrs
        .insert("graph_attr", AttrValue::ListString(vec!["x".into()]));

    // Subgraphs: `if` has a then branch (which itself has a nested subgraph) and an empty slot.
    g.modify_op(iff, |op| {
        op.add_subgraph_name("then_branch").unwrap();
        op.add_subgraph_name("else_branch").unwrap();
        op.set_subgraph_instance_name(0, "if_then").unwrap();
        op.meta_mut().subgraph_ir_names[1].1 = SubgraphType::Dynamic;
    })
    .unwrap();
    let mut then = Graph::new("if_then");
    let td = then.add_node(simple_op("then_data", "Data", 0, 1)).unwrap();
    let tw = then.add_node(simple_op("while", "While", 1, 1)).unwrap();
    then.link(OutAnchor::data(td, 0), InAnchor::data(tw, 0))
        .unwrap();
    then.modify_op(tw, |op| {
        op.add_subgraph_name("body").unwrap();
        op.set_subgraph_instance_name(0, "while_body").unwrap();
    })
    .unwrap();
    then.parent = Some(ParentLink {
        graph: "main".into(),
        node: iff,
    });
    let mut body = Graph::new("while_body");
    body.add_node(simple_op("body_data", "Data", 0, 1)).unwrap();
    body.parent = Some(ParentLink {
        graph: "if_then".into(),
        node: tw,
    });
    g.subgraphs.push(then);
    g.subgraphs.push(body);
    g
}

#[test]
fn synthetic_graph_round_trips_losslessly() {
    let g = build();
    assert!(g.check_invariants().is_empty());
    let bytes = encode_graph(&g).unwrap();
    let back = decode_graph(&bytes).unwrap();
    assert_eq!(describe(&g), describe(&back));
    assert!(back.check_invariants().is_empty());
    for s in &back.subgraphs {
        assert!(s.check_invariants().is_empty());
    }
    // Parent links point at the right nodes.
    let then = back.subgraph("if_then").unwrap();
    let p = then.parent.as_ref().unwrap();
    assert_eq!(p.graph, "main");
    assert_eq!(back.op(p.node).unwrap().name(), "if");
    let body = back.subgraph("while_body").unwrap();
    let p = body.parent.as_ref().unwrap();
    assert_eq!(then.op(p.node).unwrap().name(), "while");
    // Byte-stable.
    assert_eq!(encode_graph(&back).unwrap(), bytes);
    // Text round trip gives the same bytes.
    let t = text::print_bytes(&bytes, "ModelDef").unwrap();
    let b2 = text::parse_to_bytes(&t, "ModelDef").unwrap();
    let back2 = decode_graph(&b2).unwrap();
    assert_eq!(describe(&g), describe(&back2));
}

#[test]
fn wire_details_follow_ge() {
    let g = build();
    let def = model_to_def(&ModelMeta::new("main"), &[&g]).unwrap();
    assert_eq!(def.graph.len(), 3);
    assert_eq!(def.graph[1].name, "if_then");
    assert_eq!(def.version, 1);
    for k in [
        "memory_size",
        "p2p_memory_size",
        "stream_num",
        "event_num",
        "label_num",
        "weight_size",
        "target_type",
    ] {
        assert!(def.attr.contains_key(k), "{k}");
    }
    let conv = op_named(&def.graph[0], "conv");
    // Unset optional input in the middle keeps its slot; the trailing one gets no string.
    assert_eq!(conv.input, vec!["data:0", "", "data2:0"]);
    assert_eq!(conv.input_desc.len(), 4);
    let desc = |b: &Bytes| pb::TensorDescriptor::decode(b.clone()).unwrap();
    assert_eq!(desc(&conv.input_desc[0]).dtype, 2); // proto numbering of FLOAT16
    assert!(!conv.has_out_attr);
    assert_eq!(conv.stream_id, 3);
    let dt = conv.attr.get("dt").unwrap();
    assert_eq!(dt.value, Some(pb::attr_def::Value::Dt(27))); // API numbering of BF16
    let names = conv.attr.get("_input_name_key").unwrap();
    match &names.value {
        Some(pb::attr_def::Value::List(l)) => {
            let s: Vec<_> =
                l.s.iter()
                    .map(|b| String::from_utf8(b.to_vec()).unwrap())
                    .collect();
            assert_eq!(s, ["bias", "filter", "offset_w", "x"]);
        }
        other => panic!("{other:?}"),
    }
    let fz = desc(&conv.input_desc[2]);
    assert_eq!(fz.layout, "FRACTAL_Z");
    let relu = op_named(&def.graph[0], "relu");
    assert_eq!(relu.input, vec!["add:0", "data:-1", "data2:-1"]);
    assert!(relu.attr.contains_key("_ascendir_in_ctrl"));
    let add = op_named(&def.graph[0], "add");
    assert!(add.attr.contains_key("_ascendir_fanout"));
    let iff = op_named(&def.graph[0], "if");
    assert_eq!(iff.subgraph_name, vec!["if_then", ""]);
    // Sub-format string and integer.
    let wide = op_named(&def.graph[0], "wide");
    let d = desc(&wide.output_desc[4]);
    assert_eq!(
        d.attr.get("origin_format").unwrap().value,
        Some(pb::attr_def::Value::S(Bytes::from_static(b"FRACTAL_Z:16")))
    );
}

#[test]
fn plain_graph_needs_no_private_keys() {
    let mut g = Graph::new("plain");
    let a = g.add_node(simple_op("a", "Data", 0, 1)).unwrap();
    let b = g.add_node(simple_op("b", "Relu", 1, 1)).unwrap();
    let c = g.add_node(simple_op("c", "Relu", 1, 1)).unwrap();
    g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
    g.link(OutAnchor::data(a, 0), InAnchor::data(c, 0)).unwrap();
    g.link(OutAnchor::control(b), InAnchor::control(c)).unwrap();
    let def = model_to_def(&ModelMeta::new("plain"), &[&g]).unwrap();
    for op in &ops(&def.graph[0]) {
        assert!(
            op.attr.keys().all(|k| !k.starts_with("_ascendir_")),
            "{:?}",
            op.attr.keys()
        );
    }
    let back = decode_graph(&def.encode_to_vec()).unwrap();
    assert_eq!(describe(&g), describe(&back));
}

fn tiny_model() -> pb::ModelDef {
    let mut g = Graph::new("g");
    let a = g.add_node(simple_op("a", "Data", 0, 1)).unwrap();
    let b = g.add_node(simple_op("b", "Relu", 1, 1)).unwrap();
    g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
    model_to_def(&ModelMeta::new("m"), &[&g]).unwrap()
}

fn ops(g: &pb::GraphDef) -> Vec<pb::OpDef> {
    g.op.iter()
        .map(|b| pb::OpDef::decode(b.clone()).unwrap())
        .collect()
}

fn op_named(g: &pb::GraphDef, name: &str) -> pb::OpDef {
    ops(g).into_iter().find(|o| o.name == name).unwrap()
}

fn edit_op(m: &mut pb::ModelDef, gi: usize, oi: usize, f: impl FnOnce(&mut pb::OpDef)) {
    let mut op = pb::OpDef::decode(m.graph[gi].op[oi].clone()).unwrap();
    f(&mut op);
    m.graph[gi].op[oi] = Bytes::from(op.encode_to_vec());
}

fn invalid_path(e: ProtoError) -> (String, String) {
    match e {
        ProtoError::Invalid { path, message } => (path, message),
        other => panic!("expected an Invalid error, got {other:?}"),
    }
}

#[test]
fn semantic_errors_name_the_field() {
    let mut m = tiny_model();
    edit_op(&mut m, 0, 1, |o| o.input[0] = "nope:0".into());
    let (path, msg) = invalid_path(decode_model(&m.encode_to_vec()).unwrap_err());
    assert_eq!(path, "graph[0].op[1](b).input[0]");
    assert!(msg.contains("unknown edge source 'nope'"), "{msg}");

    let mut m = tiny_model();
    edit_op(&mut m, 0, 1, |o| o.input[0] = "a:5".into());
    let (_, msg) = invalid_path(decode_model(&m.encode_to_vec()).unwrap_err());
    assert!(msg.contains("no output 5"), "{msg}");

    let mut m = tiny_model();
    edit_op(&mut m, 0, 1, |o| o.name = "a".into());
    let (path, msg) = invalid_path(decode_model(&m.encode_to_vec()).unwrap_err());
    assert!(path.starts_with("graph[0].op[1]"), "{path}");
    assert!(msg.contains("already has a node named 'a'"), "{msg}");

    let mut m = tiny_model();
    edit_op(&mut m, 0, 1, |o| o.subgraph_name = vec!["missing".into()]);
    let (path, msg) = invalid_path(decode_model(&m.encode_to_vec()).unwrap_err());
    assert!(path.contains("subgraph_name"), "{path}");
    assert!(msg.contains("missing subgraph 'missing'"), "{msg}");

    let mut m = tiny_model();
    edit_op(&mut m, 0, 0, |o| {
        let mut d = pb::TensorDescriptor::decode(o.output_desc[0].clone()).unwrap();
        d.shape = Some(pb::ShapeDef { dim: vec![2, -7] });
        o.output_desc[0] = Bytes::from(d.encode_to_vec());
    });
    let (path, msg) = invalid_path(decode_model(&m.encode_to_vec()).unwrap_err());
    assert_eq!(path, "graph[0].op[0](a).output_desc[0].shape.dim[1]");
    assert!(msg.contains("bad dimension -7"), "{msg}");

    let mut m = tiny_model();
    m.graph.push(m.graph[0].clone());
    let (path, _) = invalid_path(decode_model(&m.encode_to_vec()).unwrap_err());
    assert_eq!(path, "graph[1].name");

    let m = pb::ModelDef::default();
    assert!(decode_model(&m.encode_to_vec()).is_err());
}

#[test]
fn wire_errors_name_the_offset() {
    let bytes = tiny_model().encode_to_vec();
    // Truncation anywhere: an error or (at a field boundary) a smaller valid model, never a panic.
    for cut in 0..bytes.len() {
        match decode_model(&bytes[..cut]) {
            Ok(m) => assert!(!m.graphs.is_empty()),
            Err(ProtoError::Wire { offset, .. }) => assert!(offset <= cut),
            Err(ProtoError::Invalid { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    // A bad length right at the start.
    let e = decode_model(&[0x3a, 0x05, 0x0a]).unwrap_err();
    match e {
        ProtoError::Wire {
            offset,
            path,
            message,
        } => {
            assert_eq!(offset, 1);
            assert_eq!(path, "ModelDef.graph[0]");
            assert!(message.contains("length 5"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Wrong wire type for `version` (uint32, sent as fixed64).
    let e = decode_model(&[0x11, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
    match e {
        ProtoError::Wire { offset, path, .. } => {
            assert_eq!(offset, 0);
            assert_eq!(path, "ModelDef.version");
        }
        other => panic!("{other:?}"),
    }
    // Every single-byte corruption: never a panic, never a half-built graph.
    for i in 0..bytes.len() {
        for v in [0x00u8, 0xff, 0x80, 0x07] {
            let mut b = bytes.clone();
            b[i] = v;
            if let Ok(m) = decode_model(&b) {
                for g in &m.graphs {
                    assert!(g.check_invariants().is_empty());
                }
            }
        }
    }
}

#[test]
fn model_keeps_several_graphs_and_attrs() {
    let g1 = build();
    let mut g2 = Graph::new("other");
    g2.add_node(simple_op("z", "Data", 0, 1)).unwrap();
    let mut meta = ModelMeta::new("net");
    meta.version = 7;
    meta.custom_version = "v1.2".into();
    meta.attrs.insert("extra", AttrValue::String("x".into()));
    let bytes = encode_model(&meta, &[&g1, &g2]).unwrap();
    let m = decode_model(&bytes).unwrap();
    assert_eq!(m.meta, meta);
    assert_eq!(m.graphs.len(), 2);
    assert_eq!(describe(&m.graphs[0]), describe(&g1));
    assert_eq!(describe(&m.graphs[1]), describe(&g2));
    // Duplicate graph names cannot be written.
    let g3 = g2.clone();
    assert!(matches!(
        encode_model(&meta, &[&g2, &g3]),
        Err(ProtoError::Encode(_))
    ));
}

#[test]
fn a_subgraph_encodes_with_everything_below_it() {
    let g = build();
    let bytes = ascendir_proto::encode_subgraph(&g, "if_then").unwrap();
    let sub = decode_graph(&bytes).unwrap();
    assert_eq!(sub.name(), "if_then");
    assert_eq!(sub.subgraphs.len(), 1);
    assert_eq!(sub.subgraphs[0].name(), "while_body");
    assert_eq!(ascendir_proto::descendants(&g, "while_body").len(), 0);
    assert!(ascendir_proto::encode_subgraph(&g, "nope").is_err());
}

#[test]
fn deeply_nested_graph_attributes_are_rejected_not_overflowed() {
    let mut inner = pb::GraphDef {
        name: "leaf".into(),
        ..Default::default()
    };
    for level in 0..400 {
        let mut op = pb::OpDef {
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
        inner = pb::GraphDef {
            name: format!("g{level}"),
            op: vec![Bytes::from(op.encode_to_vec())],
            ..Default::default()
        };
    }
    let m = pb::ModelDef {
        graph: vec![inner],
        ..Default::default()
    };
    let e = decode_model(&m.encode_to_vec()).unwrap_err();
    assert!(e.to_string().contains("nested more than"), "{e}");
}

/// Every message we write is exactly what prost writes for the same message (our encoder
/// writes attribute maps straight from the graph).
fn assert_prost_canonical(model: &[u8]) {
    let def = pb::ModelDef::decode(model).unwrap();
    assert_eq!(def.encode_to_vec(), model, "ModelDef");
    for g in &def.graph {
        for raw in &g.op {
            let op = pb::OpDef::decode(raw.clone()).unwrap();
            assert_eq!(op.encode_to_vec(), raw.to_vec(), "OpDef {}", op.name);
            for d in op.input_desc.iter().chain(&op.output_desc) {
                let td = pb::TensorDescriptor::decode(d.clone()).unwrap();
                assert_eq!(td.encode_to_vec(), d.to_vec(), "desc of {}", op.name);
            }
        }
    }
}

#[test]
fn encoding_matches_prost_for_every_attribute_kind() {
    let g = build();
    assert_prost_canonical(&encode_graph(&g).unwrap());
    let mut a = Graph::new("attrs");
    let mut op = simple_op("n", "T", 0, 1);
    for (k, v) in every_attr(&g) {
        op.attrs.insert(k, v);
    }
    op.attrs.insert("empty_list", AttrValue::ListInt(vec![]));
    op.attrs.insert("empty_s", AttrValue::String(String::new()));
    op.attrs.insert("zero", AttrValue::Int(0));
    op.attrs.insert(String::new(), AttrValue::Bool(false));
    a.add_node(op).unwrap();
    let bytes = encode_graph(&a).unwrap();
    assert_prost_canonical(&bytes);
    let back = decode_graph(&bytes).unwrap();
    assert_eq!(encode_graph(&back).unwrap(), bytes);
}

#[test]
fn descs_encode_as_their_messages_do() {
    // Every attribute kind, an origin shape and dtype, every extended field, on both sides.
    let g = build();
    let mut d = TensorDesc::new(&[2, -1, 7], DataType::FLOAT16, Format::FRACTAL_Z);
    d.format = bits::with_sub_format(Format::FRACTAL_Z.value(), 3);
    d.origin_format = Format::NCHW.value();
    d.origin_dtype = DataType::FLOAT;
    d.origin_shape = Some(Box::new(ascendir_ir::Shape::from_slice(&[2, 3, 7])));
    d.name = Some("x".into());
    d.ext = Some(Box::new(ExtMeta {
        size: -5,
        weight_size: 9,
        reuse_input: true,
        output_tensor: true,
        input_tensor: true,
        device_type: DeviceType::Cpu,
        real_dim_cnt: 3,
        reuse_input_index: 1,
        data_offset: 64,
        cmps_size: 2,
        cmps_tab: "tab".into(),
        cmps_tab_offset: 4,
    }));
    let attrs = d.attrs_mut();
    for (k, v) in every_attr(&g) {
        attrs.insert(k, v);
    }
    attrs.insert("origin_format", AttrValue::Int(1)); // replaced by the reserved key
    let d = Arc::new(d);
    let mut a = Graph::new("descs");
    let mut op = OpDesc::new("n", "T");
    op.add_input("x", d.clone());
    op.add_output("y", d.clone()).unwrap();
    a.add_node(op).unwrap();
    let bytes = encode_graph(&a).unwrap();
    assert_prost_canonical(&bytes);
    let def = pb::ModelDef::decode(bytes.as_slice()).unwrap();
    let op = pb::OpDef::decode(def.graph[0].op[0].clone()).unwrap();
    let expected = ascendir_proto::convert::desc_to_def(&d)
        .unwrap()
        .encode_to_vec();
    assert_eq!(op.input_desc[0].to_vec(), expected);
    assert_eq!(op.output_desc[0].to_vec(), expected);
    let back = decode_graph(&bytes).unwrap();
    assert_eq!(encode_graph(&back).unwrap(), bytes);
}

#[test]
fn pieces_join_to_the_encoding() {
    let g = build();
    let pieces = ascendir_proto::encode_graph_pieces(&g).unwrap();
    let whole = encode_graph(&g).unwrap();
    assert_eq!(pieces.len(), whole.len());
    let mut buf = vec![0u8; pieces.len()];
    assert_eq!(pieces.copy_to(&mut buf), whole.len());
    assert_eq!(buf, whole);
    // A short buffer gets a prefix, not a panic.
    let mut short = vec![0u8; 10];
    assert_eq!(pieces.copy_to(&mut short), 10);
    assert_eq!(short, whole[..10]);
    assert_eq!(pieces.concat(), whole);
}
