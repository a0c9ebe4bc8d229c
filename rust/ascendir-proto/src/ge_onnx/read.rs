//! Reading: protobuf text → ONNX `ModelProto` → GE `ModelDef` (ops, descs and attributes
//! restored from GE's flattened attributes) → graph (the existing decoder).

use std::collections::BTreeMap;

use ascendir_ir::Graph;
use ascendir_onnx::pb as onnx;
use bytes::Bytes;
use prost::Message;

use super::json::{desc_from_json, JSON_DESC_THRESHOLD};
use super::write::{split_edge, DESC_MEMBER_KEYS};
use super::{model_descriptor, GE_OP_TYPE_PREFIX, SUBGRAPH_NAME_ATTR, SUBGRAPH_NODE_TYPE};
use crate::convert::model_from_def;
use crate::error::{ProtoError, ProtoResult};
use crate::pb;
use crate::pb::attr_def::list_value::ListValueType as Vt;
use crate::pb::attr_def::Value as V;

type Kind = onnx::attribute_proto::AttributeType;

/// Most output descs a node without desc attributes is given from the indices other nodes
/// read (a larger index is left for the graph decoder to refuse).
const MAX_IMPLIED_OUTPUTS: usize = 1 << 12;

/// The graph (with its subgraphs) a GE ONNX dump text describes. Text that is not protobuf
/// text of an ONNX `ModelProto` is a [`ProtoError::Text`] naming line and column; a model that
/// does not describe a GE graph is a [`ProtoError::Invalid`] naming the field path.
pub fn parse_ge_onnx(text: &str) -> ProtoResult<Graph> {
    let bytes = crate::text::parse_with(text, &model_descriptor()?)?;
    let model = onnx::ModelProto::decode(Bytes::from(bytes)).map_err(|e| ProtoError::Wire {
        offset: 0,
        path: "ModelProto".into(),
        message: e.to_string(),
    })?;
    crate::first_graph(model_from_def(model_def_from_onnx(&model)?)?)
}

/// The GE `ModelDef` an ONNX `ModelProto` written GE's way describes: its graph first, then
/// the body of every `subgraph` node of it.
pub fn model_def_from_onnx(model: &onnx::ModelProto) -> ProtoResult<pb::ModelDef> {
    let main = model
        .graph
        .as_ref()
        .ok_or_else(|| ProtoError::invalid("graph", "the model has no graph"))?;
    let mut graphs = vec![graph_def(main, "graph", true)?];
    for (i, node) in main.node.iter().enumerate() {
        if node.op_type.as_ref() != SUBGRAPH_NODE_TYPE.as_bytes() {
            continue;
        }
        let path = format!("graph.node[{i}]");
        let body = node
            .attribute
            .iter()
            .find(|a| a.name == "graph")
            .and_then(|a| a.g.as_ref())
            .ok_or_else(|| ProtoError::invalid(&path, "a subgraph node without its graph"))?;
        graphs.push(graph_def(
            body,
            &format!("{path}.attribute[\"graph\"].g"),
            false,
        )?);
    }
    Ok(pb::ModelDef {
        name: model.producer_name.clone(),
        graph: graphs,
        ..Default::default()
    })
}

fn text(b: &Bytes, path: &str) -> ProtoResult<String> {
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|_| ProtoError::invalid(path, "text that is not UTF-8"))
}

/// One graph: its ops, its outputs (a node named `k` times is outputs 0..k of it, GE writes
/// node names only) and, for a subgraph, its inputs.
fn graph_def(g: &onnx::GraphProto, path: &str, root: bool) -> ProtoResult<pb::GraphDef> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut output = Vec::with_capacity(g.output.len());
    for v in &g.output {
        let n = seen.entry(v.name.as_str()).or_default();
        output.push(format!("{}:{n}", v.name));
        *n += 1;
    }
    // Outputs each node must have when its dump has no descs (GE's dump level 3): one past
    // the highest index another node reads.
    let mut used: BTreeMap<&[u8], usize> = BTreeMap::new();
    for node in &g.node {
        for input in &node.input {
            let edge = std::str::from_utf8(input).ok().and_then(split_edge);
            if let Some((src, idx)) = edge {
                let n = used.entry(src.as_bytes()).or_default();
                *n = (*n).max(usize::try_from(idx).map_or(0, |i| i.saturating_add(1)));
            }
        }
    }
    let mut op = Vec::with_capacity(g.node.len());
    for (i, node) in g.node.iter().enumerate() {
        if root && node.op_type.as_ref() == SUBGRAPH_NODE_TYPE.as_bytes() {
            continue;
        }
        let name = String::from_utf8_lossy(&node.name);
        let path = format!("{path}.node[{i}]({name})");
        let outputs = used.get(node.name.as_ref()).copied().unwrap_or(0);
        op.push(Bytes::from(op_def(node, outputs, &path)?.encode_to_vec()));
    }
    Ok(pb::GraphDef {
        name: g.name.clone(),
        input: g.input.iter().map(|v| format!("{}:0", v.name)).collect(),
        output,
        op,
        ..Default::default()
    })
}

/// Where a node attribute goes.
enum Target<'a> {
    /// `input_desc_<field>:<i>` / `output_desc_<field>:<i>`: a member of desc `i`.
    Member(bool, &'a str, usize),
    /// `input_desc_attr_<key>:<i>`: an attribute of desc `i`.
    DescAttr(bool, &'a str, usize),
    /// `input_desc_attr_<key>:<i>_<k>`: row `k` of the list of int lists `key` of desc `i`.
    DescRow(bool, &'a str, usize, usize),
    /// `input_desc_<i>`: desc `i` as JSON, when the side has 20 descs or more.
    JsonDesc(bool, usize),
    /// Anything else: an op attribute or an `OpDef` field.
    Op,
}

const MEMBERS: &[&str] = &[
    "dtype",
    "origin_dtype",
    "shape",
    "origin_shape",
    "layout",
    "origin_layout",
    "size",
    "weight_size",
    "reuse_input",
    "output_tensor",
    "device_type",
    "input_tensor",
    "real_dim_cnt",
    "data_offset",
    "cmps_size",
    "cmps_tab",
    "cmps_tab_offset",
];

fn target(name: &str) -> Target<'_> {
    let (input, rest) = if let Some(r) = name.strip_prefix("input_desc_") {
        (true, r)
    } else if let Some(r) = name.strip_prefix("output_desc_") {
        (false, r)
    } else {
        return Target::Op;
    };
    let Some((field, idx)) = rest.rsplit_once(':') else {
        return match rest.parse::<usize>() {
            Ok(i) if rest.bytes().all(|b| b.is_ascii_digit()) => Target::JsonDesc(input, i),
            _ => Target::Op,
        };
    };
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse::<usize>().ok())
            .flatten()
    };
    let (i, row) = match idx.split_once('_') {
        Some((i, k)) => match (number(i), number(k)) {
            (Some(i), Some(k)) => (i, Some(k)),
            _ => return Target::Op,
        },
        None => match number(idx) {
            Some(i) => (i, None),
            None => return Target::Op,
        },
    };
    if let Some(key) = field.strip_prefix("attr_") {
        match row {
            Some(k) => Target::DescRow(input, key, i, k),
            None => Target::DescAttr(input, key, i),
        }
    } else if row.is_some() {
        Target::Op
    } else if MEMBERS.contains(&field) {
        Target::Member(input, field, i)
    } else {
        Target::Op
    }
}

fn kind_of(a: &onnx::AttributeProto) -> Option<Kind> {
    Kind::try_from(a.r#type).ok()
}

/// The GE attribute value of an ONNX attribute, by the kind GE's encoding gives it.
fn attr_def(a: &onnx::AttributeProto, path: &str) -> ProtoResult<pb::AttrDef> {
    let list = |val_type: Vt| pb::attr_def::ListValue {
        val_type: val_type as i32,
        ..Default::default()
    };
    let value = match kind_of(a) {
        Some(Kind::Int) => V::I(a.i),
        Some(Kind::Float) => V::F(a.f),
        Some(Kind::String) => V::S(a.s.clone()),
        Some(Kind::Ints) => V::List(pb::attr_def::ListValue {
            i: a.ints.clone(),
            ..list(Vt::VtListInt)
        }),
        Some(Kind::Floats) => V::List(pb::attr_def::ListValue {
            f: a.floats.clone(),
            ..list(Vt::VtListFloat)
        }),
        Some(Kind::Strings) => V::List(pb::attr_def::ListValue {
            s: a.strings.clone(),
            ..list(Vt::VtListString)
        }),
        other => {
            let kind = other.map_or_else(|| a.r#type.to_string(), |k| k.as_str_name().to_string());
            return Err(ProtoError::invalid(
                path,
                format!("attribute type {kind} is not one GE's ONNX dump writes"),
            ));
        }
    };
    Ok(pb::AttrDef { value: Some(value) })
}

fn want(a: &onnx::AttributeProto, kind: Kind, path: &str) -> ProtoResult<()> {
    if kind_of(a) == Some(kind) {
        Ok(())
    } else {
        Err(ProtoError::invalid(
            path,
            format!("expected an attribute of type {}", kind.as_str_name()),
        ))
    }
}

/// The op a node describes; without desc attributes, one default desc per data input and
/// `outputs` default output descs.
fn op_def(node: &onnx::NodeProto, outputs: usize, path: &str) -> ProtoResult<pb::OpDef> {
    let op_type = text(&node.op_type, &format!("{path}.op_type"))?;
    let mut op = pb::OpDef {
        name: text(&node.name, &format!("{path}.name"))?,
        r#type: op_type
            .strip_prefix(GE_OP_TYPE_PREFIX)
            .unwrap_or(&op_type)
            .to_string(),
        ..Default::default()
    };
    for (i, input) in node.input.iter().enumerate() {
        op.input.push(text(input, &format!("{path}.input[{i}]"))?);
    }
    // Desc counts first: every desc has at least one attribute, so a count past the number of
    // attributes is malformed (and not allocated).
    let data_inputs = op.input.iter().filter(|s| !s.ends_with(":-1")).count();
    let mut descs: [Vec<pb::TensorDescriptor>; 2] = [
        vec![pb::TensorDescriptor::default(); data_inputs],
        vec![pb::TensorDescriptor::default(); outputs.min(MAX_IMPLIED_OUTPUTS)],
    ];
    for (side, key) in [(0, "input_desc_nums"), (1, "output_desc_nums")] {
        if let Some(a) = node.attribute.iter().find(|a| a.name == key) {
            let at = format!("{path}.attribute[\"{key}\"]");
            want(a, Kind::Int, &at)?;
            let n = usize::try_from(a.i)
                .ok()
                .filter(|&n| n <= node.attribute.len())
                .ok_or_else(|| ProtoError::invalid(&at, format!("{} descs cannot be", a.i)))?;
            descs[side] = vec![pb::TensorDescriptor::default(); n];
        }
    }
    // GE writes an op's members before its attributes of the same name (the sort is stable):
    // the first of a name is the member, a second one an attribute.
    let mut members_seen: Vec<&str> = Vec::new();
    for a in &node.attribute {
        let at = format!("{path}.attribute[{:?}]", a.name);
        match target(&a.name) {
            Target::Member(input, field, i) => {
                let td = desc_at(&mut descs, input, i, &at)?;
                set_member(td, field, a, &at)?;
            }
            Target::DescAttr(input, key, i) => {
                let td = desc_at(&mut descs, input, i, &at)?;
                td.attr.insert(key.to_string(), attr_def(a, &at)?);
            }
            Target::DescRow(input, key, i, k) => {
                want(a, Kind::Ints, &at)?;
                if k >= node.attribute.len() {
                    return Err(ProtoError::invalid(&at, format!("row {k} cannot be")));
                }
                let td = desc_at(&mut descs, input, i, &at)?;
                let entry = td.attr.entry(key.to_string()).or_default();
                if !matches!(entry.value, Some(V::ListListInt(_))) {
                    entry.value = Some(V::ListListInt(Default::default()));
                }
                if let Some(V::ListListInt(rows)) = &mut entry.value {
                    let rows = &mut rows.list_list_i;
                    if rows.len() <= k {
                        rows.resize(k + 1, Default::default());
                    }
                    rows[k].list_i = a.ints.clone();
                }
            }
            Target::JsonDesc(input, i)
                if descs[usize::from(!input)].len() >= JSON_DESC_THRESHOLD
                    && kind_of(a) == Some(Kind::String) =>
            {
                let td = desc_at(&mut descs, input, i, &at)?;
                *td = desc_from_json(&text(&a.s, &at)?, &at)?;
            }
            Target::Op | Target::JsonDesc(..) if members_seen.contains(&a.name.as_str()) => {
                op.attr.insert(a.name.clone(), attr_def(a, &at)?);
            }
            Target::Op | Target::JsonDesc(..) => {
                if op_field(&mut op, a, &at)? {
                    members_seen.push(&a.name);
                }
            }
        }
    }
    let [mut inputs, mut outputs] = descs;
    fold_tensors(&mut op.attr);
    for td in inputs.iter_mut().chain(outputs.iter_mut()) {
        fold_tensors(&mut td.attr);
    }
    op.input_desc = inputs
        .iter()
        .map(|d| Bytes::from(d.encode_to_vec()))
        .collect();
    op.output_desc = outputs
        .iter()
        .map(|d| Bytes::from(d.encode_to_vec()))
        .collect();
    Ok(op)
}

fn desc_at<'a>(
    descs: &'a mut [Vec<pb::TensorDescriptor>; 2],
    input: bool,
    i: usize,
    path: &str,
) -> ProtoResult<&'a mut pb::TensorDescriptor> {
    let list = &mut descs[usize::from(!input)];
    let n = list.len();
    list.get_mut(i).ok_or_else(|| {
        let side = if input { "input" } else { "output" };
        ProtoError::invalid(path, format!("desc {i} past {side}_desc_nums ({n})"))
    })
}

/// The `OpDef` fields GE writes as attributes (true), else an op attribute (false).
fn op_field(op: &mut pb::OpDef, a: &onnx::AttributeProto, at: &str) -> ProtoResult<bool> {
    let strings = |a: &onnx::AttributeProto| -> ProtoResult<Vec<String>> {
        want(a, Kind::Strings, at)?;
        a.strings.iter().map(|s| text(s, at)).collect()
    };
    let ints = |a: &onnx::AttributeProto| -> ProtoResult<Vec<i64>> {
        want(a, Kind::Ints, at)?;
        Ok(a.ints.clone())
    };
    match a.name.as_str() {
        "input_desc_nums" | "output_desc_nums" => {}
        "id" => {
            want(a, Kind::Int, at)?;
            op.id = a.i;
        }
        "stream_id" => {
            want(a, Kind::Int, at)?;
            op.stream_id = a.i;
        }
        "input_name" => op.input_name = strings(a)?,
        "src_name" => op.src_name = strings(a)?,
        "dst_name" => op.dst_name = strings(a)?,
        "src_index" => op.src_index = ints(a)?,
        "dst_index" => op.dst_index = ints(a)?,
        "input_i" => op.input_i = ints(a)?,
        "output_i" => op.output_i = ints(a)?,
        "workspace" => op.workspace = ints(a)?,
        "workspace_bytes" => op.workspace_bytes = ints(a)?,
        "is_input_const" => op.is_input_const = ints(a)?.iter().map(|&v| v != 0).collect(),
        SUBGRAPH_NAME_ATTR => op.subgraph_name = strings(a)?,
        name => {
            op.attr.insert(name.to_string(), attr_def(a, at)?);
            return Ok(false);
        }
    }
    Ok(true)
}

/// One member of a desc from its attribute.
fn set_member(
    td: &mut pb::TensorDescriptor,
    field: &str,
    a: &onnx::AttributeProto,
    at: &str,
) -> ProtoResult<()> {
    let s = |a: &onnx::AttributeProto| -> ProtoResult<String> {
        want(a, Kind::String, at)?;
        text(&a.s, at)
    };
    let i = |a: &onnx::AttributeProto| -> ProtoResult<i64> {
        want(a, Kind::Int, at)?;
        Ok(a.i)
    };
    let ints = |a: &onnx::AttributeProto| -> ProtoResult<Vec<i64>> {
        want(a, Kind::Ints, at)?;
        Ok(a.ints.clone())
    };
    let string_attr = |v: String| pb::AttrDef {
        value: Some(V::S(Bytes::from(v))),
    };
    match field {
        "dtype" => td.dtype = parse_dtype(&s(a)?, at)?,
        "origin_dtype" => {
            let v = s(a)?;
            parse_dtype(&v, at)?;
            if v != "DT_UNDEFINED" {
                td.attr.insert(DESC_MEMBER_KEYS[0].into(), string_attr(v));
            }
        }
        "shape" => td.shape = Some(pb::ShapeDef { dim: ints(a)? }),
        "origin_shape" => {
            let dims = ints(a)?;
            if !dims.is_empty() {
                let list = pb::attr_def::ListValue {
                    i: dims,
                    val_type: Vt::VtListInt as i32,
                    ..Default::default()
                };
                let def = pb::AttrDef {
                    value: Some(V::List(list)),
                };
                td.attr.insert(DESC_MEMBER_KEYS[1].into(), def);
            }
        }
        "layout" => td.layout = s(a)?,
        "origin_layout" => {
            let v = s(a)?;
            if v != "ND" {
                td.attr.insert(DESC_MEMBER_KEYS[2].into(), string_attr(v));
            }
        }
        "size" => td.size = i(a)?,
        "weight_size" => td.weight_size = i(a)?,
        "reuse_input" => td.reuse_input = i(a)? != 0,
        "output_tensor" => td.output_tensor = i(a)? != 0,
        "device_type" => td.device_type = s(a)?,
        "input_tensor" => td.input_tensor = i(a)? != 0,
        "real_dim_cnt" => td.real_dim_cnt = i(a)?,
        "data_offset" => td.data_offset = i(a)?,
        "cmps_size" => td.cmps_size = i(a)?,
        "cmps_tab" => td.cmps_tab = s(a)?,
        _ => td.cmps_tab_offset = i(a)?,
    }
    Ok(())
}

/// A dtype by its serialized name (`DT_FLOAT`) or, for one GE's proto does not name, its
/// number.
pub(super) fn parse_dtype(name: &str, at: &str) -> ProtoResult<i32> {
    if let Some(d) = pb::DataType::from_str_name(name) {
        return Ok(d as i32);
    }
    name.parse::<i32>()
        .map_err(|_| ProtoError::invalid(at, format!("unknown data type {name:?}")))
}

/// GE writes a tensor attribute `<name>` as `<name>_desc_dtype`, `<name>_desc_shape` (left out
/// for a scalar), `<name>_desc_layout`, `<name>_desc_device_type` and `<name>_data`: where all
/// of them (but the shape) are there with their types, they become the tensor again. Its desc
/// has only those fields (GE writes no others).
fn fold_tensors(attrs: &mut BTreeMap<String, pb::AttrDef>) {
    let s = |attrs: &BTreeMap<String, pb::AttrDef>, key: &str| match attrs.get(key) {
        Some(pb::AttrDef {
            value: Some(V::S(s)),
        }) => Some(s.clone()),
        _ => None,
    };
    let bases: Vec<String> = attrs
        .keys()
        .filter_map(|k| k.strip_suffix("_desc_dtype"))
        .map(str::to_string)
        .collect();
    for base in bases {
        let key = |part: &str| format!("{base}{part}");
        let parts = (
            s(attrs, &key("_desc_dtype")),
            s(attrs, &key("_desc_layout")),
            s(attrs, &key("_desc_device_type")),
            s(attrs, &key("_data")),
        );
        let (Some(dtype), Some(layout), Some(device), Some(data)) = parts else {
            continue;
        };
        let dims = match attrs.get(&key("_desc_shape")).map(|d| &d.value) {
            None => Vec::new(),
            Some(Some(V::List(l))) if l.val_type == Vt::VtListInt as i32 => l.i.clone(),
            Some(_) => continue,
        };
        let text = |b: &Bytes| std::str::from_utf8(b).ok().map(str::to_string);
        let (Some(dtype), Some(layout), Some(device)) = (
            text(&dtype).and_then(|d| parse_dtype(&d, "").ok()),
            text(&layout),
            text(&device),
        ) else {
            continue;
        };
        if attrs.contains_key(&base) {
            continue;
        }
        for part in [
            "_desc_dtype",
            "_desc_shape",
            "_desc_layout",
            "_desc_device_type",
            "_data",
        ] {
            attrs.remove(&key(part));
        }
        let desc = pb::TensorDescriptor {
            dtype,
            shape: (!dims.is_empty()).then_some(pb::ShapeDef { dim: dims }),
            layout,
            device_type: device,
            ..Default::default()
        };
        let tensor = pb::TensorDef {
            desc: Some(desc),
            data,
        };
        attrs.insert(
            base,
            pb::AttrDef {
                value: Some(V::T(tensor)),
            },
        );
    }
}
