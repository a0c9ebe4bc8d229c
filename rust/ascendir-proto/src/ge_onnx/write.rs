//! Writing: graph → GE `ModelDef` (the existing encoder) → ONNX `ModelProto` the way GE's
//! `OnnxUtils` builds it from the same serialized values → protobuf text.

use std::collections::{BTreeMap, BTreeSet};

use ascendir_ir::Graph;
use ascendir_onnx::pb as onnx;
use bytes::Bytes;
use prost::Message;

use super::json::{desc_json, JSON_DESC_THRESHOLD};
use super::{
    model_descriptor, GE_ONNX_IR_VERSION, GE_OP_TYPE_PREFIX, SUBGRAPH_NAME_ATTR, SUBGRAPH_NODE_TYPE,
};
use crate::convert::{model_to_def_flat, with_subgraphs, ModelMeta};
use crate::error::{ProtoError, ProtoResult};
use crate::pb;
use crate::pb::attr_def::list_value::ListValueType as Vt;
use crate::pb::attr_def::Value as V;

type Kind = onnx::attribute_proto::AttributeType;

/// Desc attributes GE holds as tensor-desc members (written as `origin_dtype`,
/// `origin_shape`, `origin_layout`), not as attributes of the desc.
pub(super) const DESC_MEMBER_KEYS: &[&str] = &[
    "origin_data_type",
    "origin_shape",
    "origin_format",
    "origin_shape_initialized",
];

/// `graph` (with its subgraphs) as GE's ONNX dump text, `producer_name` set to `producer`,
/// with every attribute GE writes at dump level 1.
pub fn print_ge_onnx(graph: &Graph, producer: &str) -> ProtoResult<String> {
    print_ge_onnx_flat(&with_subgraphs(&[graph]), producer, true)
}

/// [`print_ge_onnx`] of `graphs[0]` with the subgraphs `graphs[1..]` (a subgraph written as
/// a main graph with its descendants). Without `attributes`, nodes carry no attributes (GE's
/// dump level 3, `DUMP_WITH_OUT_DESC`, what `ge::Graph::DumpToStream(kOnnx)` writes).
pub fn print_ge_onnx_flat(
    graphs: &[&Graph],
    producer: &str,
    attributes: bool,
) -> ProtoResult<String> {
    let model = model_proto_of(graphs, producer, attributes)?;
    crate::text::print_with(&model.encode_to_vec(), &model_descriptor()?)
}

/// The ONNX `ModelProto` GE's dump of `graphs[0]` holds: that graph with, for every subgraph
/// (`graphs[1..]`), a node of type `subgraph` holding its body; nodes have attributes only
/// with `attributes`.
pub fn model_proto_of(
    graphs: &[&Graph],
    producer: &str,
    attributes: bool,
) -> ProtoResult<onnx::ModelProto> {
    let name = graphs.first().map_or("", |g| g.name());
    let def = model_to_def_flat(&ModelMeta::new(name), graphs)?;
    let mut graphs = def.graph.iter();
    let root = graphs
        .next()
        .ok_or_else(|| ProtoError::Encode("the model has no graph".into()))?;
    let mut main = graph_proto(root, true, attributes)?;
    for sub in graphs {
        main.node.push(onnx::NodeProto {
            name: Bytes::from(sub.name.clone()),
            op_type: Bytes::from_static(SUBGRAPH_NODE_TYPE.as_bytes()),
            attribute: vec![onnx::AttributeProto {
                name: "graph".into(),
                r#type: Kind::Graph as i32,
                g: Some(graph_proto(sub, false, attributes)?),
                ..Default::default()
            }],
            ..Default::default()
        });
    }
    Ok(onnx::ModelProto {
        ir_version: GE_ONNX_IR_VERSION,
        producer_name: producer.to_string(),
        graph: Some(main),
        ..Default::default()
    })
}

/// `name:index` split at its last `:`.
pub(super) fn split_edge(s: &str) -> Option<(&str, i64)> {
    let (name, idx) = s.rsplit_once(':')?;
    Some((name, idx.parse().ok()?))
}

/// One graph: outputs (and, for a subgraph, inputs) as value infos, the ops as nodes. GE
/// clears the inputs of the main graph.
fn graph_proto(def: &pb::GraphDef, root: bool, attributes: bool) -> ProtoResult<onnx::GraphProto> {
    let ops = def
        .op
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            pb::OpDef::decode(raw.clone())
                .map_err(|e| ProtoError::Encode(format!("graph {}: op {i}: {e}", def.name)))
        })
        .collect::<ProtoResult<Vec<_>>>()?;
    // Which outputs of each op feed another op (data index, or -1 for control).
    let mut used: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
    for op in &ops {
        for input in &op.input {
            if let Some((src, idx)) = split_edge(input) {
                used.entry(src).or_default().insert(idx);
            }
        }
    }
    let by_name: BTreeMap<&str, &pb::OpDef> = ops.iter().map(|o| (o.name.as_str(), o)).collect();
    let value_info = |edge: &String| -> ProtoResult<onnx::ValueInfoProto> {
        let name = split_edge(edge).map_or(edge.as_str(), |e| e.0);
        value_info(name, by_name.get(name).copied())
    };
    let mut out = onnx::GraphProto {
        name: def.name.clone(),
        output: def
            .output
            .iter()
            .map(value_info)
            .collect::<ProtoResult<_>>()?,
        ..Default::default()
    };
    if !root {
        out.input = def
            .input
            .iter()
            .map(value_info)
            .collect::<ProtoResult<_>>()?;
    }
    for op in &ops {
        let mut node = node_proto(op)?;
        if !attributes {
            node.attribute.clear();
        }
        if let Some(idx) = used.get(op.name.as_str()) {
            let data = idx.iter().filter(|&&i| i >= 0);
            node.output = data
                .map(|i| Bytes::from(format!("{}:{i}", op.name)))
                .collect();
            if idx.contains(&-1) {
                node.output.push(Bytes::from(format!("{}:-1", op.name)));
            }
        }
        out.node.push(node);
    }
    Ok(out)
}

/// GE's value info of a graph input or output: named after the node, with the ONNX dtype of
/// its last output and the dims of all its outputs one after another (as GE's loop leaves
/// them).
fn value_info(name: &str, op: Option<&pb::OpDef>) -> ProtoResult<onnx::ValueInfoProto> {
    let mut tensor = onnx::type_proto::Tensor::default();
    for raw in op.map(|o| o.output_desc.as_slice()).unwrap_or_default() {
        let td = decode_desc(raw)?;
        tensor.elem_type = onnx_dtype(td.dtype);
        let shape = tensor.shape.get_or_insert_with(Default::default);
        for d in td.shape.map(|s| s.dim).unwrap_or_default() {
            shape.dim.push(onnx::tensor_shape_proto::Dimension {
                value: Some(onnx::tensor_shape_proto::dimension::Value::DimValue(d)),
                ..Default::default()
            });
        }
    }
    Ok(onnx::ValueInfoProto {
        name: name.to_string(),
        r#type: Some(onnx::TypeProto {
            value: Some(onnx::type_proto::Value::TensorType(tensor)),
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn decode_desc(raw: &Bytes) -> ProtoResult<pb::TensorDescriptor> {
    pb::TensorDescriptor::decode(raw.clone())
        .map_err(|e| ProtoError::Encode(format!("tensor descriptor: {e}")))
}

/// GE's `EncodeDataType`: the ONNX element type of a GE dtype, 0 for the ones GE does not map.
fn onnx_dtype(dtype: i32) -> i32 {
    use onnx::tensor_proto::DataType as O;
    let o = match pb::DataType::try_from(dtype).map(|d| d.as_str_name()) {
        Ok("DT_INT64") => O::Int64,
        Ok("DT_UINT64") => O::Uint64,
        Ok("DT_FLOAT") => O::Float,
        Ok("DT_INT32") => O::Int32,
        Ok("DT_UINT32") => O::Uint32,
        Ok("DT_INT8") => O::Int8,
        Ok("DT_UINT8") => O::Uint8,
        Ok("DT_INT16") => O::Int16,
        Ok("DT_UINT16") => O::Uint16,
        Ok("DT_FLOAT16") => O::Float16,
        Ok("DT_DOUBLE") => O::Double,
        Ok("DT_BOOL") => O::Bool,
        Ok("DT_FLOAT8_E5M2") => O::Float8e5m2,
        Ok("DT_FLOAT8_E4M3FN") => O::Float8e4m3fn,
        _ => O::Undefined,
    };
    o as i32
}

/// A GE dtype's serialized name (`DT_FLOAT`); a number GE's proto does not name is written as
/// the number.
pub(super) fn dtype_name(dtype: i32) -> String {
    pb::DataType::try_from(dtype).map_or_else(|_| dtype.to_string(), |d| d.as_str_name().into())
}

fn attr(name: String, kind: Kind) -> onnx::AttributeProto {
    onnx::AttributeProto {
        name,
        r#type: kind as i32,
        ..Default::default()
    }
}
fn int_attr(name: String, i: i64) -> onnx::AttributeProto {
    onnx::AttributeProto {
        i,
        ..attr(name, Kind::Int)
    }
}
fn str_attr(name: String, s: impl Into<Bytes>) -> onnx::AttributeProto {
    onnx::AttributeProto {
        s: s.into(),
        ..attr(name, Kind::String)
    }
}
fn ints_attr(name: String, ints: Vec<i64>) -> onnx::AttributeProto {
    onnx::AttributeProto {
        ints,
        ..attr(name, Kind::Ints)
    }
}
fn strings_attr(name: String, strings: Vec<Bytes>) -> onnx::AttributeProto {
    onnx::AttributeProto {
        strings,
        ..attr(name, Kind::Strings)
    }
}

/// GE's `EncodeNode` of one op: name, `ge:`-prefixed type, its attributes sorted by name, its
/// inputs as `producer:index` (`producer:-1` for control inputs, `""` for an unconnected one).
fn node_proto(op: &pb::OpDef) -> ProtoResult<onnx::NodeProto> {
    let mut attrs = Vec::new();
    for (side, descs) in [("input", &op.input_desc), ("output", &op.output_desc)] {
        attrs.push(int_attr(format!("{side}_desc_nums"), descs.len() as i64));
        let json = descs.len() >= JSON_DESC_THRESHOLD;
        for (i, raw) in descs.iter().enumerate() {
            let td = decode_desc(raw)?;
            if json {
                attrs.push(str_attr(format!("{side}_desc_{i}"), desc_json(&td)?));
            } else {
                desc_attrs(&td, &format!("{side}_desc_"), i, &mut attrs);
            }
        }
    }
    let strings = |v: &[String]| v.iter().map(|s| Bytes::from(s.clone())).collect();
    attrs.push(int_attr("id".into(), op.id));
    attrs.push(int_attr("stream_id".into(), op.stream_id));
    attrs.push(strings_attr("input_name".into(), strings(&op.input_name)));
    attrs.push(strings_attr("src_name".into(), strings(&op.src_name)));
    attrs.push(ints_attr("src_index".into(), op.src_index.clone()));
    attrs.push(strings_attr("dst_name".into(), strings(&op.dst_name)));
    attrs.push(ints_attr("dst_index".into(), op.dst_index.clone()));
    attrs.push(ints_attr("input_i".into(), op.input_i.clone()));
    attrs.push(ints_attr("output_i".into(), op.output_i.clone()));
    attrs.push(ints_attr("workspace".into(), op.workspace.clone()));
    let bytes = op.workspace_bytes.clone();
    attrs.push(ints_attr("workspace_bytes".into(), bytes));
    let consts = op.is_input_const.iter().map(|&b| i64::from(b)).collect();
    attrs.push(ints_attr("is_input_const".into(), consts));
    for (name, def) in &op.attr {
        attr_protos(name, def, "", "", &mut attrs);
    }
    if !op.subgraph_name.is_empty() {
        let names = strings(&op.subgraph_name);
        attrs.push(strings_attr(SUBGRAPH_NAME_ATTR.into(), names));
    }
    attrs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(onnx::NodeProto {
        name: Bytes::from(op.name.clone()),
        op_type: Bytes::from(format!("{GE_OP_TYPE_PREFIX}{}", op.r#type)),
        input: op.input.iter().map(|s| Bytes::from(s.clone())).collect(),
        attribute: attrs,
        ..Default::default()
    })
}

/// The attributes of desc `i` (`prefix` = `input_desc_` / `output_desc_`): its members, its
/// ext-meta fields and its own attributes (under `<prefix>attr_`).
fn desc_attrs(
    td: &pb::TensorDescriptor,
    prefix: &str,
    i: usize,
    out: &mut Vec<onnx::AttributeProto>,
) {
    let name = |field: &str| format!("{prefix}{field}:{i}");
    let attr_s = |key: &str| match td.attr.get(key).and_then(|d| d.value.as_ref()) {
        Some(V::S(s)) => Some(s.clone()),
        _ => None,
    };
    let origin_shape = match td.attr.get("origin_shape").and_then(|d| d.value.as_ref()) {
        Some(V::List(l)) => l.i.clone(),
        _ => Vec::new(),
    };
    let shape = td.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default();
    out.push(str_attr(name("dtype"), dtype_name(td.dtype)));
    let origin_dtype = attr_s("origin_data_type").unwrap_or(Bytes::from_static(b"DT_UNDEFINED"));
    out.push(str_attr(name("origin_dtype"), origin_dtype));
    out.push(ints_attr(name("shape"), shape));
    out.push(ints_attr(name("origin_shape"), origin_shape));
    out.push(str_attr(name("layout"), td.layout.clone()));
    let origin_layout = attr_s("origin_format").unwrap_or(Bytes::from_static(b"ND"));
    out.push(str_attr(name("origin_layout"), origin_layout));
    out.push(int_attr(name("size"), td.size));
    out.push(int_attr(name("weight_size"), td.weight_size));
    out.push(int_attr(name("reuse_input"), i64::from(td.reuse_input)));
    out.push(int_attr(name("output_tensor"), i64::from(td.output_tensor)));
    out.push(str_attr(name("device_type"), td.device_type.clone()));
    out.push(int_attr(name("input_tensor"), i64::from(td.input_tensor)));
    out.push(int_attr(name("real_dim_cnt"), td.real_dim_cnt));
    out.push(int_attr(name("data_offset"), td.data_offset));
    out.push(int_attr(name("cmps_size"), td.cmps_size));
    out.push(str_attr(name("cmps_tab"), td.cmps_tab.clone()));
    out.push(int_attr(name("cmps_tab_offset"), td.cmps_tab_offset));
    let attr_prefix = format!("{prefix}attr_");
    let suffix = format!(":{i}");
    for (key, def) in &td.attr {
        if !DESC_MEMBER_KEYS.contains(&key.as_str()) {
            attr_protos(key, def, &attr_prefix, &suffix, out);
        }
    }
}

/// GE's `AddAttrProtoForAttrsFromAttrMap` at dump level 1 for one attribute: scalars and
/// lists of ints, floats, strings and bools (bools as ints), a tensor as its desc fields and
/// its data, a list of int lists as one `INTS` per row (`<name>_<row>`); other kinds are not
/// written. Empty lists are not written.
fn attr_protos(
    name: &str,
    def: &pb::AttrDef,
    prefix: &str,
    suffix: &str,
    out: &mut Vec<onnx::AttributeProto>,
) {
    let full = format!("{prefix}{name}{suffix}");
    match &def.value {
        Some(V::S(s)) => out.push(str_attr(full, s.clone())),
        Some(V::I(i)) => out.push(int_attr(full, *i)),
        Some(V::F(f)) => out.push(onnx::AttributeProto {
            f: *f,
            ..attr(full, Kind::Float)
        }),
        Some(V::B(b)) => out.push(int_attr(full, i64::from(*b))),
        Some(V::T(t)) => {
            let desc = t.desc.clone().unwrap_or_default();
            let part = |p: &str| format!("{prefix}{name}{p}{suffix}");
            out.push(str_attr(part("_desc_dtype"), dtype_name(desc.dtype)));
            let dims = desc.shape.map(|s| s.dim).unwrap_or_default();
            if !dims.is_empty() {
                out.push(ints_attr(part("_desc_shape"), dims));
            }
            out.push(str_attr(part("_desc_layout"), desc.layout));
            out.push(str_attr(part("_desc_device_type"), desc.device_type));
            out.push(str_attr(part("_data"), t.data.clone()));
        }
        Some(V::List(l)) => {
            let vt = l.val_type;
            if vt == Vt::VtListString as i32 && !l.s.is_empty() {
                out.push(strings_attr(full, l.s.clone()));
            } else if vt == Vt::VtListFloat as i32 && !l.f.is_empty() {
                out.push(onnx::AttributeProto {
                    floats: l.f.clone(),
                    ..attr(full, Kind::Floats)
                });
            } else if vt == Vt::VtListInt as i32 && !l.i.is_empty() {
                out.push(ints_attr(full, l.i.clone()));
            } else if vt == Vt::VtListBool as i32 && !l.b.is_empty() {
                out.push(ints_attr(full, l.b.iter().map(|&b| i64::from(b)).collect()));
            }
        }
        Some(V::ListListInt(ll)) => {
            for (k, row) in ll.list_list_i.iter().enumerate() {
                if !row.list_i.is_empty() {
                    out.push(ints_attr(format!("{full}_{k}"), row.list_i.clone()));
                }
            }
        }
        _ => {}
    }
}
