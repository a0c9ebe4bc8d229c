//! Conversion between ascendir graphs and `ge.proto` messages (reference §2.5–2.9).
//!
//! Writing follows GE's serializer: reserved OpDef keys (port-name maps, optional inputs, IR
//! metadata), reserved TensorDescriptor keys (origin format / dtype / shape, format integers),
//! edge strings, subgraphs flattened into `ModelDef.graph[1..]`. Reading consumes those keys
//! again. What GE would lose is kept under keys prefixed `_ascendir_` (see `docs/WIRE_FORMAT.md`).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::write::{put_len_delimited, put_nested, put_packed_floats, put_packed_varints};
use ascendir_ir::format::bits;
use ascendir_ir::intern::Interner;
use ascendir_ir::op_desc::{IrInputType, IrOutputType, OpMeta, Side, SubgraphType, Sym};
use ascendir_ir::subgraph::MAX_SUBGRAPH_DEPTH;
use ascendir_ir::tensor::{DeviceType, ExtMeta, Shape};
use ascendir_ir::{
    AttrEntry, AttrMap, AttrValue, DataType, Graph, GraphAttr, InAnchor, NamedAttrs, NodeId,
    OpDesc, OutAnchor, ParentLink, Tensor, TensorDesc,
};
use bytes::Bytes;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::byte_cache::{hash_bytes, ByteCache};
use crate::chunks::{chunk_len, helpers_for, run_chunks, ChunkPlan};
use crate::error::{ProtoError, ProtoResult};
use crate::pacing;
use crate::pb;
use crate::pb::attr_def::list_value::ListValueType as Vt;
use crate::pb::attr_def::Value as V;

/// Reserved OpDef keys of GE.
pub mod keys {
    /// Input name → index map, names (alphabetical).
    pub const INPUT_NAME_KEY: &str = "_input_name_key";
    /// Input name → index map, indices.
    pub const INPUT_NAME_VALUE: &str = "_input_name_value";
    /// Output name → index map, names.
    pub const OUTPUT_NAME_KEY: &str = "_output_name_key";
    /// Output name → index map, indices.
    pub const OUTPUT_NAME_VALUE: &str = "_output_name_value";
    /// Legacy input name map (older dumps), understood and kept as an attribute.
    pub const LEGACY_INPUT_NAME_KEY: &str = "_input_name_idx_key";
    /// Legacy input name map, indices.
    pub const LEGACY_INPUT_NAME_VALUE: &str = "_input_name_idx_value";
    /// Legacy output name map.
    pub const LEGACY_OUTPUT_NAME_KEY: &str = "_output_name_idx_key";
    /// Legacy output name map, indices.
    pub const LEGACY_OUTPUT_NAME_VALUE: &str = "_output_name_idx_value";
    /// Optional input names.
    pub const OPT_INPUT: &str = "_opt_input";
    /// IR attribute names.
    pub const IR_ATTR_NAMES: &str = "_ir_attr_names";
    /// IR input names.
    pub const IR_INPUTS_KEY: &str = "_ir_inputs_key";
    /// IR input kinds.
    pub const IR_INPUTS_VALUE: &str = "_ir_inputs_value";
    /// IR output names.
    pub const IR_OUTPUTS_KEY: &str = "_ir_outputs_key";
    /// IR output kinds.
    pub const IR_OUTPUTS_VALUE: &str = "_ir_outputs_value";
    /// Tensor desc: origin format string.
    pub const ORIGIN_FORMAT: &str = "origin_format";
    /// Tensor desc: origin format integer.
    pub const ORIGIN_FORMAT_FOR_INT: &str = "origin_format_for_int";
    /// Tensor desc: full format integer.
    pub const FORMAT_FOR_INT: &str = "format_for_int";
    /// Tensor desc: origin dtype serial string.
    pub const ORIGIN_DATA_TYPE: &str = "origin_data_type";
    /// Tensor desc: whether the origin shape is set.
    pub const ORIGIN_SHAPE_INITIALIZED: &str = "origin_shape_initialized";
    /// Tensor desc: origin shape.
    pub const ORIGIN_SHAPE: &str = "origin_shape";
    /// The prefix of our keys.
    pub const ASC_PREFIX: &str = "_ascendir_";
    /// Our key: the in-control peers in order when some are data anchors (`"name:index"`).
    pub const ASC_IN_CTRL: &str = "_ascendir_in_ctrl";
    /// Our key: data inputs fed by an out-control anchor (`"slot:name"`).
    pub const ASC_CTRL_TO_DATA: &str = "_ascendir_ctrl_to_data";
    /// Our key: peer order of output anchors whose order is not the consumer op order
    /// (`"out_index>consumer:in_index"`, grouped per anchor).
    pub const ASC_FANOUT: &str = "_ascendir_fanout";
    /// Our key: subgraph IR names when they are not GE's default (instance names).
    pub const ASC_SUBGRAPH_IR_NAMES: &str = "_ascendir_subgraph_ir_names";
    /// Our key: subgraph IR types (0 static, 1 dynamic), parallel to the names.
    pub const ASC_SUBGRAPH_IR_TYPES: &str = "_ascendir_subgraph_ir_types";
    /// Our key: raw `attr_groups` bytes of an op, desc, graph or model.
    pub const ASC_ATTR_GROUPS: &str = "_ascendir_attr_groups";
    /// Our key: the legacy `TensorDescriptor.has_out_attr` flag (older GE writes it).
    pub const ASC_HAS_OUT_ATTR: &str = "_ascendir_has_out_attr";
    /// Our key: fields of an OpDef, TensorDescriptor, GraphDef or ModelDef that `ge_ir.proto`
    /// does not define (raw tags and values, written back after the known fields).
    pub const ASC_UNKNOWN: &str = "_ascendir_unknown_fields";
    /// Our key: unknown fields of the `AttrDef` values of an attribute map, by attribute name
    /// (a named-attrs value whose entries are raw bytes, written back inside those values).
    pub const ASC_ATTR_UNKNOWN: &str = "_ascendir_attr_unknown_fields";
}

use keys::*;

/// Model-level data of a `ModelDef` (everything except the graphs).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelMeta {
    /// Model name.
    pub name: String,
    /// IR proto version.
    pub version: u32,
    /// User model version string.
    pub custom_version: String,
    /// Model attributes.
    pub attrs: AttrMap,
}

impl ModelMeta {
    /// GE's `Model(name, custom_version)`: version 1 and the 7 default attributes.
    pub fn new(name: &str) -> Self {
        let mut attrs = AttrMap::new();
        for k in [
            "memory_size",
            "p2p_memory_size",
            "stream_num",
            "event_num",
            "label_num",
            "weight_size",
        ] {
            attrs.insert(k.to_string(), AttrValue::Int(0));
        }
        attrs.insert(
            "target_type".to_string(),
            AttrValue::String("MINI".to_string()),
        );
        ModelMeta {
            name: name.to_string(),
            version: 1,
            custom_version: String::new(),
            attrs,
        }
    }
}

/// A model: metadata plus one or more root graphs (each with its subgraphs registered on it).
#[derive(Clone, Debug)]
pub struct Model {
    /// Name, version, attributes.
    pub meta: ModelMeta,
    /// Root graphs; `graphs[0]` is the main graph (`ModelDef.graph[0]`). Further roots are
    /// GraphDefs that no op references (GE discards them; we keep them).
    pub graphs: Vec<Graph>,
}

// ---------------------------------------------------------------------------------------------
// Attribute values
// ---------------------------------------------------------------------------------------------

fn utf8(b: Bytes, what: &str) -> ProtoResult<String> {
    String::from_utf8(b.to_vec()).map_err(|e| {
        ProtoError::invalid(
            "",
            format!(
                "{what} is not valid UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn data_type_ge(v: i64) -> ProtoResult<DataType> {
    DataType::from_ge(v)
        .ok_or_else(|| ProtoError::invalid("", format!("unknown ge::DataType number {v}")))
}

fn attrs_from_map(map: BTreeMap<String, pb::AttrDef>) -> ProtoResult<AttrMap> {
    let mut out = AttrMap::new();
    for (k, v) in map {
        if let Some(value) = attr_from_def(v).map_err(|e| e.within(|| format!("attr[{k:?}]")))? {
            out.insert(k, value);
        }
    }
    Ok(out)
}

/// Every element of list field `field` converted by `f`; an error names the element.
fn each<T, U>(items: Vec<T>, field: &str, f: impl Fn(T) -> ProtoResult<U>) -> ProtoResult<Vec<U>> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, x)| f(x).map_err(|e| e.within(|| format!("list.{field}[{i}]"))))
        .collect()
}

/// Decode one `AttrDef`; `None` for a value GE skips (unset oneof, untyped list).
pub fn attr_from_def(def: pb::AttrDef) -> ProtoResult<Option<AttrValue>> {
    let Some(value) = def.value else {
        return Ok(None);
    };
    Ok(Some(match value {
        V::S(s) => AttrValue::String(utf8(s, "string value")?),
        V::I(i) => AttrValue::Int(i),
        V::F(f) => AttrValue::Float(f),
        V::B(b) => AttrValue::Bool(b),
        V::Bt(b) => AttrValue::Bytes(b),
        V::Expression(s) => AttrValue::Expression(utf8(s, "expression")?),
        V::Dt(d) => AttrValue::DataType(data_type_ge(d)?),
        V::Func(na) => AttrValue::NamedAttrs(Box::new(named_from_def(na)?)),
        V::Td(td) => AttrValue::TensorDesc(Arc::new(desc_from_def(td)?)),
        V::T(t) => AttrValue::Tensor(tensor_from_def(t)?),
        V::G(g) => AttrValue::Graph(GraphAttr(Arc::new(graph_from_def(g)?))),
        V::ListListInt(l) => {
            AttrValue::ListListInt(l.list_list_i.into_iter().map(|x| x.list_i).collect())
        }
        V::ListListFloat(l) => {
            AttrValue::ListListFloat(l.list_list_f.into_iter().map(|x| x.list_f).collect())
        }
        V::List(l) => {
            let vt = Vt::try_from(l.val_type).unwrap_or(Vt::VtListNone);
            match vt {
                Vt::VtListNone => return Ok(None),
                Vt::VtListString => AttrValue::ListString(
                    l.s.into_iter()
                        .enumerate()
                        .map(|(i, s)| utf8(s, &format!("list.s[{i}]")))
                        .collect::<ProtoResult<_>>()?,
                ),
                Vt::VtListInt => AttrValue::ListInt(l.i),
                Vt::VtListFloat => AttrValue::ListFloat(l.f),
                Vt::VtListBool => AttrValue::ListBool(l.b),
                Vt::VtListBytes => AttrValue::ListBytes(l.bt),
                Vt::VtListTensorDesc => AttrValue::ListTensorDesc(each(l.td, "td", |td| {
                    desc_from_def(td).map(Arc::new)
                })?),
                Vt::VtListTensor => AttrValue::ListTensor(each(l.t, "t", tensor_from_def)?),
                Vt::VtListGraph => AttrValue::ListGraph(each(l.g, "g", |g| {
                    graph_from_def(g).map(|g| GraphAttr(Arc::new(g)))
                })?),
                Vt::VtListNamedAttrs => {
                    AttrValue::ListNamedAttrs(each(l.na, "na", named_from_def)?)
                }
                Vt::VtListDataType => AttrValue::ListDataType(
                    l.dt.into_iter()
                        .map(data_type_ge)
                        .collect::<ProtoResult<_>>()?,
                ),
            }
        }
    }))
}

fn named_from_def(na: pb::NamedAttrs) -> ProtoResult<NamedAttrs> {
    Ok(NamedAttrs {
        name: na.name,
        attrs: attrs_from_map(na.attr)?,
    })
}

fn tensor_from_def(t: pb::TensorDef) -> ProtoResult<Tensor> {
    let desc =
        desc_from_def(t.desc.unwrap_or_default()).map_err(|e| e.within(|| "desc".to_string()))?;
    Ok(Tensor::new(desc, t.data))
}

fn list(vt: Vt, f: impl FnOnce(&mut pb::attr_def::ListValue)) -> V {
    let mut l = pb::attr_def::ListValue {
        val_type: vt as i32,
        ..Default::default()
    };
    f(&mut l);
    V::List(l)
}

/// Encode one attribute value.
pub fn attr_to_def(value: &AttrValue) -> ProtoResult<pb::AttrDef> {
    let v = match value {
        AttrValue::Int(i) => V::I(*i),
        AttrValue::Float(f) => V::F(*f),
        AttrValue::Bool(b) => V::B(*b),
        AttrValue::String(s) => V::S(Bytes::copy_from_slice(s.as_bytes())),
        AttrValue::Bytes(b) => V::Bt(b.clone()),
        AttrValue::Expression(s) => V::Expression(Bytes::copy_from_slice(s.as_bytes())),
        AttrValue::DataType(d) => V::Dt(i64::from(d.ge_value())),
        AttrValue::TensorDesc(d) => V::Td(desc_to_def(d)?),
        AttrValue::Tensor(t) => V::T(tensor_to_def(t)?),
        AttrValue::Graph(g) => V::G(graph_to_def(&g.0)?),
        AttrValue::NamedAttrs(na) => V::Func(named_to_def(na)?),
        AttrValue::ListListInt(l) => V::ListListInt(pb::attr_def::ListListInt {
            list_list_i: l
                .iter()
                .map(|x| pb::attr_def::list_list_int::ListInt { list_i: x.clone() })
                .collect(),
        }),
        AttrValue::ListListFloat(l) => V::ListListFloat(pb::attr_def::ListListFloat {
            list_list_f: l
                .iter()
                .map(|x| pb::attr_def::list_list_float::ListFloat { list_f: x.clone() })
                .collect(),
        }),
        AttrValue::ListInt(x) => list(Vt::VtListInt, |l| l.i = x.clone()),
        AttrValue::ListFloat(x) => list(Vt::VtListFloat, |l| l.f = x.clone()),
        AttrValue::ListBool(x) => list(Vt::VtListBool, |l| l.b = x.clone()),
        AttrValue::ListString(x) => list(Vt::VtListString, |l| {
            l.s = x
                .iter()
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .collect()
        }),
        AttrValue::ListBytes(x) => list(Vt::VtListBytes, |l| l.bt = x.clone()),
        AttrValue::ListDataType(x) => list(Vt::VtListDataType, |l| {
            l.dt = x.iter().map(|d| i64::from(d.ge_value())).collect()
        }),
        AttrValue::ListTensorDesc(x) => {
            let td = x
                .iter()
                .map(|d| desc_to_def(d))
                .collect::<ProtoResult<_>>()?;
            list(Vt::VtListTensorDesc, |l| l.td = td)
        }
        AttrValue::ListTensor(x) => {
            let t = x.iter().map(tensor_to_def).collect::<ProtoResult<_>>()?;
            list(Vt::VtListTensor, |l| l.t = t)
        }
        AttrValue::ListGraph(x) => {
            let g = x
                .iter()
                .map(|g| graph_to_def(&g.0))
                .collect::<ProtoResult<_>>()?;
            list(Vt::VtListGraph, |l| l.g = g)
        }
        AttrValue::ListNamedAttrs(x) => {
            let na = x.iter().map(named_to_def).collect::<ProtoResult<_>>()?;
            list(Vt::VtListNamedAttrs, |l| l.na = na)
        }
    };
    Ok(pb::AttrDef { value: Some(v) })
}

fn attrs_to_map(attrs: &AttrMap, skip: &[&str]) -> ProtoResult<BTreeMap<String, pb::AttrDef>> {
    let mut out = BTreeMap::new();
    for (k, v) in attrs {
        if skip.contains(&k) || k == ASC_UNKNOWN || k == ASC_ATTR_UNKNOWN {
            continue;
        }
        out.insert(k.to_string(), attr_to_def(v)?);
    }
    Ok(out)
}

fn named_to_def(na: &NamedAttrs) -> ProtoResult<pb::NamedAttrs> {
    Ok(pb::NamedAttrs {
        name: na.name.clone(),
        attr: attrs_to_map(&na.attrs, &[])?,
    })
}

fn tensor_to_def(t: &Tensor) -> ProtoResult<pb::TensorDef> {
    Ok(pb::TensorDef {
        desc: Some(desc_to_def(&t.desc)?),
        data: t.data.clone(),
    })
}

fn s_attr(s: &str) -> pb::AttrDef {
    pb::AttrDef {
        value: Some(V::S(Bytes::copy_from_slice(s.as_bytes()))),
    }
}

// ---------------------------------------------------------------------------------------------
// Tensor descriptors
// ---------------------------------------------------------------------------------------------

/// Remove `key` when `accept` recognises its value; otherwise leave it as an ordinary attr.
fn take_if<T>(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    key: &str,
    accept: impl FnOnce(&pb::AttrDef) -> Option<T>,
) -> Option<T> {
    let v = accept(attrs.get(key)?)?;
    attrs.remove(key);
    Some(v)
}

fn as_i(d: &pb::AttrDef) -> Option<i64> {
    match &d.value {
        Some(V::I(i)) => Some(*i),
        _ => None,
    }
}
fn as_b(d: &pb::AttrDef) -> Option<bool> {
    match &d.value {
        Some(V::B(b)) => Some(*b),
        _ => None,
    }
}
fn as_s(d: &pb::AttrDef) -> Option<&str> {
    match &d.value {
        Some(V::S(s)) => crate::wire::utf8(s),
        _ => None,
    }
}
fn as_list_i(d: &pb::AttrDef) -> Option<&[i64]> {
    match &d.value {
        Some(V::List(l))
            if l.val_type == Vt::VtListInt as i32 || (l.val_type == 0 && l.s.is_empty()) =>
        {
            Some(&l.i)
        }
        _ => None,
    }
}
fn as_list_s(d: &pb::AttrDef) -> Option<Vec<String>> {
    match &d.value {
        Some(V::List(l))
            if l.val_type == Vt::VtListString as i32 || (l.val_type == 0 && l.i.is_empty()) =>
        {
            l.s.iter()
                .map(|s| crate::wire::utf8(s).map(str::to_string))
                .collect()
        }
        _ => None,
    }
}

fn i64_to_u32(v: i64, what: &str) -> ProtoResult<u32> {
    u32::try_from(v).map_err(|_| ProtoError::invalid(what, format!("{v} is out of range")))
}

/// Decode a `TensorDescriptor` (reserved keys consumed, reference §2.5).
pub fn desc_from_def(mut td: pb::TensorDescriptor) -> ProtoResult<TensorDesc> {
    let reserved = desc_reserved(std::mem::take(&mut td.attr), &td.layout);
    desc_from_parts(td, &reserved, None, None)
}

/// What a desc's reserved attribute keys and layout string decode to. Failures are kept and
/// reported by `desc_from_parts` in the order the fields are read (so that every decoder path
/// names the same first problem). Descs with the same reserved entries share one.
struct DescReserved {
    /// Format, origin format, origin dtype and origin shape, or the first error among them.
    formats: ProtoResult<(i32, i32, DataType, Option<Shape>)>,
    /// The attributes not taken as reserved keys (they stay attributes).
    leftover: ProtoResult<AttrMap>,
    /// The entry most descs carry, shared by the descs of this section: each decoding thread
    /// has its own sections, so no thread writes the reference count of another's entries.
    has_out_attr: Arc<AttrEntry>,
}

fn desc_reserved(mut attrs: BTreeMap<String, pb::AttrDef>, layout: &str) -> DescReserved {
    let formats = desc_formats(&mut attrs, layout);
    DescReserved {
        formats,
        leftover: attrs_from_map(attrs),
        has_out_attr: Arc::new(AttrEntry::new(ASC_HAS_OUT_ATTR, AttrValue::Bool(true))),
    }
}

/// Takes the format keys out of `attrs`.
fn desc_formats(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    layout: &str,
) -> ProtoResult<(i32, i32, DataType, Option<Shape>)> {
    let format = match take_if(attrs, FORMAT_FOR_INT, as_i) {
        Some(f) => i32::try_from(f)
            .map_err(|_| ProtoError::invalid("attr[\"format_for_int\"]", "out of range"))?,
        None => bits::parse_serial_string(layout),
    };
    // Keep the string only if it is the canonical spelling we would write again.
    let origin_format_int = take_if(attrs, ORIGIN_FORMAT_FOR_INT, |d| {
        as_i(d).and_then(|v| i32::try_from(v).ok())
    });
    let origin_format_str = take_if(attrs, ORIGIN_FORMAT, |d| {
        as_s(d).map(|s| (bits::parse_serial_string(s), s.to_string()))
    });
    let origin_format = match (origin_format_int, &origin_format_str) {
        (Some(f), _) => f,
        (None, Some((f, _))) => *f,
        (None, None) => ascendir_ir::Format::ND.value(),
    };
    if let Some((_, s)) = &origin_format_str {
        if *s != bits::serial_string(origin_format) {
            attrs.insert(ORIGIN_FORMAT.to_string(), s_attr(s));
        }
    }
    let origin_dtype = take_if(attrs, ORIGIN_DATA_TYPE, |d| {
        as_s(d)
            .map(DataType::from_serial_name)
            .filter(|t| *t != DataType::UNDEFINED && as_s(d) == Some(t.serial_name()))
    })
    .unwrap_or(DataType::UNDEFINED);
    let _ = take_if(attrs, ORIGIN_SHAPE_INITIALIZED, as_b);
    let origin_shape = take_if(attrs, ORIGIN_SHAPE, |d| as_list_i(d).map(Shape::from_slice));
    if let Some(s) = &origin_shape {
        check_dims(s).map_err(|e| e.within(|| "attr[\"origin_shape\"]".to_string()))?;
    }
    Ok((format, origin_format, origin_dtype, origin_shape))
}

/// A desc from its fields (`td.attr` and `td.layout` are not read: the reserved keys and what
/// the layout gives are in `reserved`, the origin shape there or in `origin_shape`; the shape
/// is `shape` when given, else `td.shape`).
fn desc_from_parts(
    mut td: pb::TensorDescriptor,
    reserved: &DescReserved,
    shape: Option<Shape>,
    origin_shape: Option<Shape>,
) -> ProtoResult<TensorDesc> {
    let dims: Shape = match shape {
        Some(s) => s,
        None => td.shape.map(|s| Shape::from_vec(s.dim)).unwrap_or_default(),
    };
    check_dims(&dims).map_err(|e| e.within(|| "shape".to_string()))?;
    let (format, origin_format, origin_dtype, mut taken_shape) = reserved.formats.clone()?;
    if let Some(s) = origin_shape {
        check_dims(&s).map_err(|e| e.within(|| "attr[\"origin_shape\"]".to_string()))?;
        taken_shape = Some(s);
    }
    let origin_shape = taken_shape;
    let device_type = match td.device_type.as_str() {
        "CPU" => DeviceType::Cpu,
        _ => DeviceType::Npu,
    };
    let ext = ExtMeta {
        size: td.size,
        weight_size: td.weight_size,
        reuse_input: td.reuse_input,
        output_tensor: td.output_tensor,
        input_tensor: td.input_tensor,
        device_type,
        real_dim_cnt: i64_to_u32(td.real_dim_cnt, "real_dim_cnt")?,
        reuse_input_index: i64_to_u32(td.reuse_input_index, "reuse_input_index")?,
        data_offset: td.data_offset,
        cmps_size: td.cmps_size,
        cmps_tab: std::mem::take(&mut td.cmps_tab),
        cmps_tab_offset: td.cmps_tab_offset,
    };
    let mut user = reserved.leftover.clone()?;
    if td.has_out_attr {
        user.insert_entry(reserved.has_out_attr.clone());
    }
    if !td.attr_groups.is_empty() {
        user.insert(
            ASC_ATTR_GROUPS.to_string(),
            AttrValue::Bytes(td.attr_groups),
        );
    }
    // An unknown number would load as UNDEFINED and be lost on the next save: refused.
    let dtype = DataType::from_proto(td.dtype);
    if dtype == DataType::UNDEFINED && td.dtype != DataType::UNDEFINED.to_proto() {
        return Err(ProtoError::invalid(
            "dtype",
            format!("unknown ge.proto DataType number {}", td.dtype),
        ));
    }
    Ok(TensorDesc {
        shape: dims,
        dtype,
        format,
        origin_format,
        origin_dtype,
        origin_shape: origin_shape.map(Box::new),
        name: if td.name.is_empty() {
            None
        } else {
            Some(td.name.into_boxed_str())
        },
        ext: if ext == ExtMeta::default() {
            None
        } else {
            Some(Box::new(ext))
        },
        attrs: if user.is_empty() {
            None
        } else {
            Some(Box::new(user))
        },
    })
}

fn check_dims(dims: &[i64]) -> ProtoResult<()> {
    for (i, &d) in dims.iter().enumerate() {
        if d < -2 || (d == -2 && dims.len() != 1) {
            return Err(ProtoError::invalid(
                format!("dim[{i}]"),
                format!("bad dimension {d} in shape {dims:?} (allowed: ≥ 0, -1 unknown, [-2] unknown rank)"),
            ));
        }
    }
    Ok(())
}

/// Encode a tensor desc the way GE does (reserved keys after user attrs).
pub fn desc_to_def(d: &TensorDesc) -> ProtoResult<pb::TensorDescriptor> {
    let empty = AttrMap::new();
    let user = d.attrs.as_deref().unwrap_or(&empty);
    let mut attr = attrs_to_map(user, &[ASC_HAS_OUT_ATTR, ASC_ATTR_GROUPS])?;
    for (key, value) in desc_reserved_entries(d).0 {
        let def = <pb::AttrDef as prost::Message>::decode(value.as_slice())
            .map_err(|e| ProtoError::Encode(format!("attr[{key:?}]: {e}")))?;
        attr.insert(key.to_string(), def);
    }
    let ext = d.ext.as_deref().cloned().unwrap_or_default();
    let attr_groups = attr_groups_of(user);
    Ok(pb::TensorDescriptor {
        name: d.name.as_deref().unwrap_or("").to_string(),
        dtype: d.dtype.to_proto(),
        shape: Some(pb::ShapeDef {
            dim: d.shape.to_vec(),
        }),
        layout: bits::serial_string(d.format),
        has_out_attr: matches!(user.get(ASC_HAS_OUT_ATTR), Some(AttrValue::Bool(true))),
        size: ext.size,
        weight_size: ext.weight_size,
        reuse_input: ext.reuse_input,
        output_tensor: ext.output_tensor,
        device_type: match ext.device_type {
            DeviceType::Npu => "NPU".to_string(),
            DeviceType::Cpu => "CPU".to_string(),
        },
        input_tensor: ext.input_tensor,
        real_dim_cnt: i64::from(ext.real_dim_cnt),
        reuse_input_index: i64::from(ext.reuse_input_index),
        data_offset: ext.data_offset,
        cmps_size: ext.cmps_size,
        cmps_tab: ext.cmps_tab,
        cmps_tab_offset: ext.cmps_tab_offset,
        attr,
        attr_groups,
    })
}

// ---------------------------------------------------------------------------------------------
// Ops
// ---------------------------------------------------------------------------------------------

/// Names of `count` ports from a name→index map given as two parallel lists.
fn port_names(
    count: usize,
    keys: &[String],
    values: &[i64],
    auto: &str,
) -> ProtoResult<Vec<String>> {
    if keys.len() != values.len() {
        return Err(ProtoError::invalid(
            "",
            format!(
                "port-name map has {} names but {} indices",
                keys.len(),
                values.len()
            ),
        ));
    }
    let mut names: Vec<Option<String>> = vec![None; count];
    for (k, &v) in keys.iter().zip(values) {
        if v >= 0 && (v as u64) < count as u64 {
            let slot = &mut names[v as usize];
            if slot.is_none() {
                *slot = Some(k.clone());
            }
        }
    }
    let names: Vec<String> = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.unwrap_or_else(|| format!("{auto}{i}")))
        .collect();
    let mut seen = rustc_hash::FxHashSet::default();
    for n in &names {
        if !seen.insert(n.as_str()) {
            return Err(ProtoError::invalid(
                "",
                format!("two ports are named '{n}'"),
            ));
        }
    }
    Ok(names)
}

fn take_name_map(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    key: &str,
    value: &str,
    consume: bool,
) -> Option<(Vec<String>, Vec<i64>)> {
    let k = attrs.get(key).and_then(as_list_s)?;
    let v = attrs.get(value).and_then(as_list_i)?.to_vec();
    if consume {
        remove_untyped(attrs, key);
        remove_untyped(attrs, value);
    }
    Some((k, v))
}

fn untyped(d: &pb::AttrDef) -> bool {
    matches!(&d.value, Some(V::List(l)) if l.val_type == 0)
}

/// Remove a reserved key written the way current GE writes it (a list without `val_type`). A
/// typed list (older GE) stays as an attribute, so that it is written back unchanged.
fn remove_untyped(attrs: &mut BTreeMap<String, pb::AttrDef>, key: &str) {
    if attrs.get(key).is_some_and(untyped) {
        attrs.remove(key);
    }
}

/// Insert a reserved key unless the attribute map already holds an equal list (kept with its
/// own `val_type`).
fn put_reserved(attr: &mut GenAttrs, user: &AttrMap, key: &'static str, new: Vec<u8>) {
    if let Some(old) = user.get(key) {
        let old = attr_to_def(old).ok();
        let n = <pb::AttrDef as prost::Message>::decode(new.as_slice()).ok();
        if let (
            Some(pb::AttrDef {
                value: Some(V::List(old)),
            }),
            Some(pb::AttrDef {
                value: Some(V::List(n)),
            }),
        ) = (old, n)
        {
            if old.s == n.s && old.i == n.i && old.f.is_empty() && old.b.is_empty() {
                return;
            }
        }
    }
    attr.insert(key, new);
}

/// `put_reserved` of the string list `items` (a list without a value type): the user's equal
/// list is found without encoding either.
fn put_reserved_s<'a>(
    attr: &mut GenAttrs,
    user: &AttrMap,
    key: &'static str,
    items: impl Iterator<Item = &'a str> + Clone,
) {
    match user.get(key) {
        None => attr.insert(key, gen_s(Vt::VtListNone, items)),
        Some(AttrValue::ListString(old)) if old.iter().map(String::as_str).eq(items.clone()) => {}
        Some(_) => put_reserved(attr, user, key, gen_s(Vt::VtListNone, items)),
    }
}

/// `put_reserved` of the int list `items` (see `put_reserved_s`).
fn put_reserved_i(
    attr: &mut GenAttrs,
    user: &AttrMap,
    key: &'static str,
    items: impl Iterator<Item = i64> + Clone,
) {
    match user.get(key) {
        None => attr.insert(key, gen_i(Vt::VtListNone, items)),
        Some(AttrValue::ListInt(old)) if old.iter().copied().eq(items.clone()) => {}
        Some(_) => put_reserved(attr, user, key, gen_i(Vt::VtListNone, items)),
    }
}

/// The attribute entries the encoder adds to an op (reserved keys, our keys), as encoded
/// `AttrDef`s; a later insert of a key replaces the earlier one.
#[derive(Default)]
struct GenAttrs(SmallVec<[(&'static str, Vec<u8>); 8]>);

impl GenAttrs {
    fn insert(&mut self, key: &'static str, value: Vec<u8>) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    fn get(&self, key: &str) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// The entries in key order.
    fn sorted(&self) -> SmallVec<[(&'static str, &[u8]); 8]> {
        let mut v: SmallVec<[_; 8]> = self.0.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

/// An encoded `AttrDef` holding a list of strings with list type `vt` (written when not 0).
fn gen_s<'a>(vt: Vt, it: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    put_nested(1, &mut out, |l| {
        for s in it {
            put_len_delimited(2, s.as_bytes(), l);
        }
        put_val_type(vt, l);
    });
    out
}

/// An encoded `AttrDef` holding a list of integers with list type `vt` (written when not 0).
fn gen_i(vt: Vt, it: impl Iterator<Item = i64> + Clone) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    put_nested(1, &mut out, |l| {
        put_packed_varints(3, it.map(|v| v as u64), l);
        put_val_type(vt, l);
    });
    out
}

fn put_val_type(vt: Vt, out: &mut Vec<u8>) {
    if vt != Vt::VtListNone {
        crate::write::encode_key(20, prost::encoding::WireType::Varint, out);
        crate::write::encode_varint(vt as u64, out);
    }
}

/// An op decoded from an OpDef, with its edge strings still to be resolved.
struct PendingOp {
    op: OpDesc,
    links: Links,
}

/// The edge strings of an op, resolved once every node is in the graph.
struct Links {
    inputs: EdgeStrings,
    /// The op's port section when it has our control-edge or fan-out keys.
    section: Option<Arc<PortSection>>,
}

impl Links {
    fn in_ctrl(&self) -> Option<&[String]> {
        self.section.as_ref().and_then(|s| s.in_ctrl.as_deref())
    }

    fn ctrl_to_data(&self) -> Option<&[String]> {
        self.section
            .as_ref()
            .and_then(|s| s.ctrl_to_data.as_deref())
    }

    fn fanout(&self) -> Option<&[String]> {
        self.section.as_ref().and_then(|s| s.fanout.as_deref())
    }
}

/// An op's `input` edge strings: byte ranges of the op's encoding (checked UTF-8 when read; no
/// string is made per edge) or, from the full decoder, strings.
enum EdgeStrings {
    Ranges(SmallVec<[(usize, usize); 4]>),
    Owned(Vec<String>),
}

impl EdgeStrings {
    /// The edge strings, ranges read in `op` (the op's encoding).
    fn read<'a>(&'a self, op: &'a [u8]) -> ProtoResult<SmallVec<[&'a str; 4]>> {
        match self {
            EdgeStrings::Owned(list) => Ok(list.iter().map(String::as_str).collect()),
            EdgeStrings::Ranges(list) => list
                .iter()
                .map(|&(s, e)| {
                    op.get(s..e)
                        .and_then(crate::wire::utf8)
                        .ok_or_else(|| ProtoError::invalid("input", "edge string out of place"))
                })
                .collect(),
        }
    }
}

/// The byte range of a message's attribute-map entries, which the one-pass decoders accept only
/// as one contiguous run of length-delimited fields.
#[derive(Default)]
struct EntrySpan {
    span: Option<(usize, usize)>,
    closed: bool,
}

impl EntrySpan {
    /// Takes field `f`: `Some(true)` when it is an entry of the map (field `number`),
    /// `Some(false)` for another field, `None` when the entries are not one contiguous run of
    /// length-delimited fields.
    fn feed(&mut self, f: &crate::wire::RawField, number: u32) -> Option<bool> {
        if f.number != number {
            self.closed |= self.span.is_some();
            return Some(false);
        }
        if f.wire_type != 2 {
            return None;
        }
        match &mut self.span {
            None => self.span = Some((f.start, f.end)),
            Some((_, end)) if !self.closed && *end == f.start => *end = f.end,
            Some(_) => return None,
        }
        Some(true)
    }
}

/// Decoded tensor descriptors by their encoding: identical descs met by one decoding thread
/// decode once and share one `Arc`. Each thread has its own: descs shared between threads
/// would have their reference counts written by both, which costs more on some machines than
/// decoding the desc twice.
#[derive(Default)]
struct DescCache<'s> {
    map: ByteCache<&'s [u8], Arc<TensorDesc>>,
    /// Attribute entries of descs.
    entries: EntryCache<'s>,
    /// Reserved desc keys (after the layout string).
    reserved: ReservedCache<DescReserved>,
}

/// What sets of reserved attribute entries decode to, by the encoding of the entries after a
/// prefix (what else the result depends on: an op's port counts, a desc's layout). Ops and descs
/// repeat their reserved entries far more than their other attributes.
struct ReservedCache<T> {
    /// Indices into `values`, by key.
    map: ByteCache<Box<[u8]>, usize>,
    values: Vec<Arc<T>>,
    /// The key being looked up (reused between lookups).
    key: Vec<u8>,
}

impl<T> Default for ReservedCache<T> {
    fn default() -> Self {
        ReservedCache {
            map: ByteCache::default(),
            values: Vec::new(),
            key: Vec::new(),
        }
    }
}

impl<T> ReservedCache<T> {
    /// The value of `reserved` (ranges of `entries`) after `prefix`, made by `make` from the
    /// decoded entries the first time; `Ok(None)` when an entry does not decode (the caller's
    /// full decoder then reports it). Lent, not cloned: most ops and descs only read it, and a
    /// clone is a reference-count write (and another when dropped).
    fn get(
        &mut self,
        prefix: &[u8],
        entries: &Bytes,
        reserved: &[ReservedEntry],
        make: impl FnOnce(BTreeMap<String, pb::AttrDef>) -> ProtoResult<T>,
    ) -> ProtoResult<Option<&Arc<T>>> {
        self.key.clear();
        self.key
            .extend_from_slice(&(prefix.len() as u64).to_le_bytes());
        self.key.extend_from_slice(prefix);
        for r in reserved {
            self.key.extend_from_slice(&entries[r.entry.0..r.entry.1]);
        }
        let hash = hash_bytes(&self.key);
        if let Some(&i) = self.map.get(hash, &self.key) {
            return Ok(self.values.get(i));
        }
        let Some(map) = decode_reserved(entries, reserved) else {
            return Ok(None);
        };
        let value = Arc::new(make(map)?);
        self.map
            .insert(hash, self.key.as_slice().into(), self.values.len());
        self.values.push(value);
        Ok(self.values.last())
    }
}

impl<'s> DescCache<'s> {
    /// The desc encoded as `raw`, a part of `owner`.
    fn get(&mut self, owner: &'s Bytes, raw: &[u8]) -> ProtoResult<Arc<TensorDesc>> {
        let hash = hash_bytes(raw);
        if let Some(d) = self.map.get(hash, raw) {
            return Ok(d.clone());
        }
        let Some(range) = range_in(owner, raw) else {
            // Not a part of the op (no decoder path gives such a desc): decoded on its own.
            return Ok(Arc::new(desc_apart(raw)?));
        };
        let d = Arc::new(desc_from_raw(
            owner,
            range,
            &mut self.entries,
            &mut self.reserved,
        )?);
        self.map.insert(hash, &owner[range.0..range.1], d.clone());
        Ok(d)
    }
}

/// Decode a desc that is not a part of its op's bytes, with caches of its own.
fn desc_apart(raw: &[u8]) -> ProtoResult<TensorDesc> {
    let copy = Bytes::copy_from_slice(raw);
    let mut entries = EntryCache::default();
    let mut reserved = ReservedCache::default();
    desc_from_raw(&copy, (0, copy.len()), &mut entries, &mut reserved)
}

/// Where `part` lies in `whole` (a range of it), when it is a part of it (the same bytes):
/// decoders then work on `whole` with offsets, and caches borrow keys from it, instead of
/// making `Bytes` slices (each a write of a reference count that every thread shares).
fn range_in(whole: &[u8], part: &[u8]) -> Option<(usize, usize)> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some((start, end))
}

/// Append the packed varints of `packed` to `dims` (sized once); `None` when malformed.
fn push_packed_ints(dims: &mut Shape, packed: &[u8]) -> Option<()> {
    dims.reserve(varint_count(packed));
    let mut q = 0usize;
    while q < packed.len() {
        dims.push(crate::wire::varint(packed, &mut q)? as i64);
    }
    Some(())
}

/// The dims of a `ShapeDef` body (packed or not; other fields skipped); `None` when malformed.
fn read_dims(body: &[u8]) -> Option<Shape> {
    let mut dims = Shape::new();
    let mut p = 0usize;
    while p < body.len() {
        let d = crate::wire::next_field(body, &mut p)?;
        match (d.number, d.wire_type) {
            (1, 0) => dims.push(d.varint as i64),
            (1, 2) => push_packed_ints(&mut dims, &body[d.value_start..d.end])?,
            (1, _) => return None,
            _ => {}
        }
    }
    Some(dims)
}

/// Decode the `TensorDescriptor` encoded at `range` of `owner`, unknown fields kept.
fn desc_from_raw<'s>(
    owner: &'s Bytes,
    range: (usize, usize),
    entries: &mut EntryCache<'s>,
    reserved: &mut ReservedCache<DescReserved>,
) -> ProtoResult<TensorDesc> {
    if !FULL_ONLY.with(|f| f.get()) {
        if let Some(FastDesc {
            def,
            reserved,
            shape,
            origin_shape,
            user,
            attr_unknown,
            unknown,
        }) = parse_desc_fast(owner, range, entries, reserved)
        {
            let mut d = desc_from_parts(def, reserved, Some(shape), origin_shape)?;
            let attr_unknown = attr_unknown_value(attr_unknown);
            if !user.is_empty() || !unknown.is_empty() || attr_unknown.is_some() {
                let attrs = d.attrs.get_or_insert_with(Default::default);
                attrs.append(user);
                if !unknown.is_empty() {
                    attrs.insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
                }
                if let Some(v) = attr_unknown {
                    attrs.insert(ASC_ATTR_UNKNOWN.to_string(), v);
                }
            }
            return Ok(d);
        }
    }
    let raw = &owner.slice(range.0..range.1);
    let def = <pb::TensorDescriptor as prost::Message>::decode(raw.clone()).map_err(|e| {
        crate::wire::locate(raw, "TensorDescriptor")
            .map(|w| crate::wire::rebase(w, raw))
            .unwrap_or_else(|| ProtoError::Wire {
                offset: crate::wire::offset_of(raw),
                path: "TensorDescriptor".to_string(),
                message: e.to_string(),
            })
    })?;
    let mut d = desc_from_def(def)?;
    let unknown = crate::wire::unknown_fields(raw, crate::wire::TENSOR_DESC_FIELDS);
    let attr_unknown = attr_unknown_value(crate::wire::attr_unknown_fields(raw, 5));
    if !unknown.is_empty() || attr_unknown.is_some() {
        let attrs = d.attrs.get_or_insert_with(Default::default);
        if !unknown.is_empty() {
            attrs.insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
        }
        if let Some(v) = attr_unknown {
            attrs.insert(ASC_ATTR_UNKNOWN.to_string(), v);
        }
    }
    Ok(d)
}

/// TensorDescriptor attribute keys that `desc_from_def` reads itself.
const DESC_RESERVED: &[&str] = &[
    FORMAT_FOR_INT,
    ORIGIN_FORMAT_FOR_INT,
    ORIGIN_FORMAT,
    ORIGIN_DATA_TYPE,
    ORIGIN_SHAPE_INITIALIZED,
    ORIGIN_SHAPE,
];

/// Unknown AttrDef fields by attribute name.
type AttrUnknown = Vec<(String, Vec<u8>)>;

/// Read a TensorDescriptor in one pass: the message without attributes, its reserved keys
/// decoded (shared between descs), the other attributes decoded, and the unknown fields.
/// `None` whenever the full decoder is needed (malformed input, a repeated `shape`, an
/// attribute value that is not a scalar or scalar list, ...); nothing has been converted then.
fn parse_desc_fast<'s, 'r>(
    owner: &'s Bytes,
    (start, end): (usize, usize),
    entries: &mut EntryCache<'s>,
    reserved: &'r mut ReservedCache<DescReserved>,
) -> Option<FastDesc<'r>> {
    // Offsets are in `owner` (the op's bytes), the desc being `start..end` of it.
    let data: &[u8] = owner.get(..end)?;
    let mut td = pb::TensorDescriptor::default();
    let mut unknown = Vec::new();
    let mut attr_span = EntrySpan::default();
    let mut shape_seen = false;
    let mut shape = Shape::new();
    let mut layout = "";
    let mut pos = start;
    while pos < end {
        let f = crate::wire::next_field(data, &mut pos)?;
        let body = &data[f.value_start..f.end];
        if attr_span.feed(&f, 5)? {
            continue;
        }
        let v = f.varint;
        match (f.number, f.wire_type) {
            (1, 2) => td.name = fast_str(body)?,
            (2, 0) => td.dtype = v as i32,
            (3, 2) => {
                if shape_seen {
                    return None;
                }
                shape_seen = true;
                shape = read_dims(body)?;
            }
            (4, 2) => layout = crate::wire::utf8(body)?,
            (6, 2) => td.attr_groups = owner.slice(f.value_start..f.end),
            (9, 0) => td.has_out_attr = v != 0,
            (10, 0) => td.size = v as i64,
            (11, 0) => td.weight_size = v as i64,
            (12, 0) => td.reuse_input = v != 0,
            (13, 0) => td.output_tensor = v != 0,
            // Only whether it says CPU matters (see `desc_from_parts`): no copy of the usual NPU.
            (14, 2) => {
                if crate::wire::utf8(body)? == "CPU" {
                    td.device_type = "CPU".to_string();
                }
            }
            (15, 0) => td.input_tensor = v != 0,
            (16, 0) => td.real_dim_cnt = v as i64,
            (17, 0) => td.reuse_input_index = v as i64,
            (18, 0) => td.data_offset = v as i64,
            (19, 0) => td.cmps_size = v as i64,
            (20, 2) => td.cmps_tab = fast_str(body)?,
            (21, 0) => td.cmps_tab_offset = v as i64,
            (n, _) if crate::wire::TENSOR_DESC_FIELDS.contains(&n) => return None,
            _ => unknown.extend_from_slice(&data[f.start..f.end]),
        }
    }
    let (taken, origin_shape, user, attr_unknown) = match attr_span.span {
        Some(span) => {
            let mut d = attrs_direct(owner, span, 5, DESC_RESERVED, true, entries).ok()??;
            let origin_shape = take_origin_shape(owner, &mut d.reserved);
            let taken = reserved
                .get(layout.as_bytes(), owner, &d.reserved, |m| {
                    Ok(desc_reserved(m, layout))
                })
                .ok()??;
            (taken, origin_shape, d.user, d.unknown)
        }
        None => (
            reserved
                .get(layout.as_bytes(), &Bytes::new(), &[], |m| {
                    Ok(desc_reserved(m, layout))
                })
                .ok()??,
            None,
            AttrMap::new(),
            Vec::new(),
        ),
    };
    Some(FastDesc {
        def: td,
        reserved: taken,
        shape,
        origin_shape,
        user,
        attr_unknown,
        unknown,
    })
}

/// Takes the `origin_shape` entry out of `reserved` when it is the only one and a typed int
/// list: the value `desc_formats` would read. Origin shapes vary from desc to desc while the
/// other reserved keys repeat, so without it the reserved sets are shared far more often.
fn take_origin_shape(
    entries: &Bytes,
    reserved: &mut SmallVec<[ReservedEntry; 4]>,
) -> Option<Shape> {
    let mut at = reserved
        .iter()
        .enumerate()
        .filter(|(_, r)| r.key == ORIGIN_SHAPE);
    let (i, r) = at.next()?;
    if at.next().is_some() {
        return None;
    }
    let (vs, ve) = r.value;
    let dims = match entries.get(vs..ve).and_then(int_list_dims) {
        Some(dims) => dims,
        None => {
            let Some((Some(AttrValue::ListInt(dims)), unknown)) = fast_attr(entries, vs, ve) else {
                return None;
            };
            if !unknown.is_empty() {
                return None;
            }
            Shape::from_vec(dims)
        }
    };
    reserved.remove(i);
    Some(dims)
}

/// The ints of an `AttrDef` that is nothing but a list of ints (one `list` field whose
/// `ListValue` has only `i` values and a `val_type` of int lists), read straight into a shape;
/// `None` for anything else, which `fast_attr` then reads (origin shapes are such lists, one
/// per distinct desc).
fn int_list_dims(def: &[u8]) -> Option<Shape> {
    let mut pos = 0usize;
    let f = crate::wire::next_field(def, &mut pos)?;
    if (f.number, f.wire_type) != (1, 2) || pos != def.len() {
        return None;
    }
    let list = &def[f.value_start..f.end];
    let mut dims = Shape::new();
    let mut val_type = None;
    let mut p = 0usize;
    while p < list.len() {
        let g = crate::wire::next_field(list, &mut p)?;
        match (g.number, g.wire_type) {
            (3, 0) => dims.push(g.varint as i64),
            (3, 2) => push_packed_ints(&mut dims, &list[g.value_start..g.end])?,
            (20, 0) => val_type = Some(g.varint),
            _ => return None,
        }
    }
    (val_type == Some(Vt::VtListInt as u64)).then_some(dims)
}

/// A desc read in one pass.
struct FastDesc<'r> {
    /// Its fields other than shape and attributes.
    def: pb::TensorDescriptor,
    /// What its reserved keys decode to.
    reserved: &'r DescReserved,
    shape: Shape,
    /// The origin shape when read apart from the other reserved keys.
    origin_shape: Option<Shape>,
    /// The other attributes.
    user: AttrMap,
    /// The unknown `AttrDef` fields by attribute.
    attr_unknown: AttrUnknown,
    /// Its unknown fields.
    unknown: Vec<u8>,
}

/// The `_ascendir_attr_unknown_fields` value for a list of (key, unknown AttrDef fields).
fn attr_unknown_value(list: Vec<(String, Vec<u8>)>) -> Option<AttrValue> {
    if list.is_empty() {
        return None;
    }
    Some(AttrValue::NamedAttrs(Box::new(NamedAttrs {
        name: String::new(),
        attrs: list
            .into_iter()
            .map(|(k, v)| (k, AttrValue::Bytes(v.into())))
            .collect(),
    })))
}

/// Per-chunk decode caches: tensor descriptors, attribute entries and port sections.
#[derive(Default)]
struct ChunkCache<'s> {
    descs: DescCache<'s>,
    /// Attribute entries of ops (`descs` has those of descs).
    op_entries: EntryCache<'s>,
    /// Port sections (after the op's input, output and subgraph-slot counts).
    ports: ReservedCache<PortSection>,
    /// Op types.
    types: Interner,
}

impl<'s> ChunkCache<'s> {
    /// Caches for a thread decoding ops of a graph of `n_ops` ops, sized for the distinct
    /// entries and descs such a graph typically has.
    fn new(n_ops: usize) -> Self {
        ChunkCache {
            descs: DescCache {
                map: ByteCache::with_capacity(n_ops.min(1024)),
                entries: EntryCache(ByteCache::with_capacity(n_ops.min(1024))),
                reserved: ReservedCache::default(),
            },
            op_entries: EntryCache(ByteCache::with_capacity((2 * n_ops).min(4096))),
            ports: ReservedCache::default(),
            types: Interner::default(),
        }
    }
}

/// An OpDef read straight from its encoding: the scalar and list fields, descs as slices of
/// the input, the byte range of the attribute entries and the unknown fields.
struct FastOp<'a> {
    /// The op without name and type (those are `name` / `ty`).
    def: pb::OpDef,
    name: &'a str,
    ty: &'a str,
    span: Option<(usize, usize)>,
    unknown: Vec<u8>,
    /// The input and output descs' encodings.
    descs: [DescList<'a>; 2],
    /// The byte ranges of the input edge strings.
    inputs: SmallVec<[(usize, usize); 4]>,
}

/// The desc encodings of one side of an op.
type DescList<'a> = SmallVec<[&'a [u8]; 4]>;

fn fast_str(b: &[u8]) -> Option<String> {
    crate::wire::utf8(b).map(str::to_string)
}

/// Read an OpDef in one pass. `None` whenever the bytes need the full decoder: malformed
/// input, a known field with an unexpected wire type, groups, attribute entries that are not
/// contiguous. Accepts nothing that prost rejects, so the result equals prost's.
fn parse_op_fast(raw: &Bytes) -> Option<FastOp<'_>> {
    let data: &[u8] = raw;
    let mut descs: [DescList; 2] = Default::default();
    let mut def = pb::OpDef::default();
    let mut name = "";
    let mut ty = "";
    let mut span = EntrySpan::default();
    let mut inputs: SmallVec<[(usize, usize); 4]> = SmallVec::new();
    let mut unknown = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        let body = &data[f.value_start..f.end];
        if span.feed(&f, 10)? {
            continue;
        }
        let v = f.varint;
        match (f.number, f.wire_type) {
            (1, 2) => name = crate::wire::utf8(body)?,
            (2, 2) => ty = crate::wire::utf8(body)?,
            (5, 2) => {
                crate::wire::utf8(body)?;
                inputs.push((f.value_start, f.end));
            }
            (11, 2) => def.attr_groups = raw.slice(f.value_start..f.end),
            (20, 0) => def.has_out_attr = v != 0,
            (21, 0) => def.id = v as i64,
            (22, 0) => def.stream_id = v as i64,
            (23, 2) => def.input_name.push(fast_str(body)?),
            (24, 2) => def.src_name.push(fast_str(body)?),
            (26, 2) => def.dst_name.push(fast_str(body)?),
            (35, 2) => def.subgraph_name.push(fast_str(body)?),
            (33, 2) => descs[0].push(body),
            (34, 2) => descs[1].push(body),
            (n @ (25 | 27 | 28 | 29 | 30 | 31), wt @ (0 | 2)) => {
                let list = match n {
                    25 => &mut def.src_index,
                    27 => &mut def.dst_index,
                    28 => &mut def.input_i,
                    29 => &mut def.output_i,
                    30 => &mut def.workspace,
                    _ => &mut def.workspace_bytes,
                };
                if wt == 0 {
                    list.push(v as i64);
                } else {
                    let mut p = 0usize;
                    while p < body.len() {
                        list.push(crate::wire::varint(body, &mut p)? as i64);
                    }
                }
            }
            (32, 0) => def.is_input_const.push(v != 0),
            (32, 2) => {
                let mut p = 0usize;
                while p < body.len() {
                    def.is_input_const
                        .push(crate::wire::varint(body, &mut p)? != 0);
                }
            }
            (n, _) if crate::wire::OP_DEF_FIELDS.contains(&n) => return None,
            _ => unknown.extend_from_slice(&data[f.start..f.end]),
        }
    }
    Some(FastOp {
        def,
        name,
        ty,
        span: span.span,
        unknown,
        descs,
        inputs,
    })
}

thread_local! {
    /// Whether this thread decodes ops with the full decoder only (the reference the one-pass
    /// decoder is checked against).
    static FULL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Sets `FULL_ONLY` for a scope and restores it.
struct FullOnly(bool);

impl FullOnly {
    fn set(on: bool) -> Self {
        FullOnly(FULL_ONLY.with(|f| f.replace(on)))
    }
}

impl Drop for FullOnly {
    fn drop(&mut self) {
        FULL_ONLY.with(|f| f.set(self.0));
    }
}

/// Run `f` with every op decoded by the full decoder (prost messages, then conversion) instead
/// of the one-pass decoder. Both give the same graphs and the same errors; this is the
/// reference the tests compare against.
pub fn with_full_decoder<R>(f: impl FnOnce() -> R) -> R {
    let _guard = FullOnly::set(true);
    f()
}

/// Decode op `i`: one pass over its bytes, attribute entries, port sections and descs from the
/// caches. Any problem goes to the full decoder, which reports it with its offset and field
/// path.
fn op_from_raw<'s>(raw: &'s Bytes, i: usize, cache: &mut ChunkCache<'s>) -> ProtoResult<PendingOp> {
    let fast = if FULL_ONLY.with(|f| f.get()) {
        None
    } else {
        parse_op_fast(raw)
    };
    if let Some(fast) = fast {
        let name = fast.name;
        match op_from_fast(raw, fast, cache) {
            Ok(Some(p)) => return Ok(p),
            Ok(None) => {}
            Err(e) => {
                return Err(e.within(|| format!("op[{i}]({name})")));
            }
        }
    }
    op_from_raw_plain(raw, i, &mut cache.descs)
}

/// `Ok(None)` when the op needs the full decoder (decided before anything is converted).
fn op_from_fast<'s>(
    raw: &'s Bytes,
    fast: FastOp,
    cache: &mut ChunkCache<'s>,
) -> ProtoResult<Option<PendingOp>> {
    let FastOp {
        mut def,
        name,
        ty,
        span,
        unknown,
        descs,
        inputs,
    } = fast;
    let span = span.unwrap_or((0, 0));
    let Some(direct) = attrs_direct(raw, span, 10, OP_RESERVED, false, &mut cache.op_entries)?
    else {
        return Ok(None);
    };
    let counts = [descs[0].len(), descs[1].len(), def.subgraph_name.len()];
    let [n_in, n_out, n_sub] = counts;
    let mut prefix = [0u8; 24];
    for (slot, c) in prefix.chunks_exact_mut(8).zip(counts) {
        slot.copy_from_slice(&(c as u64).to_le_bytes());
    }
    let types = &mut cache.types;
    let made = cache.ports.get(&prefix, raw, &direct.reserved, |m| {
        port_section(m, n_in, n_out, n_sub, Some(types))
    })?;
    let Some(ports) = made else {
        return Ok(None);
    };
    let mut user = direct.user;
    // The section's leftover entries (usually none or two): inserted one by one, not through
    // a copy of the section's map.
    for e in ports.leftover.entries() {
        user.insert_entry(e.clone());
    }
    if let Some(v) = attr_unknown_value(direct.unknown) {
        user.insert(ASC_ATTR_UNKNOWN, v);
    }
    let ty = cache.types.intern(ty);
    let mut p = op_from_def(
        &mut def,
        name,
        ty,
        (raw, &descs),
        &mut cache.descs,
        ports,
        user,
    )?;
    p.links.inputs = EdgeStrings::Ranges(inputs);
    if !unknown.is_empty() {
        p.op.attrs
            .insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
    }
    Ok(Some(p))
}

fn op_from_raw_plain<'s>(
    raw: &'s Bytes,
    i: usize,
    cache: &mut DescCache<'s>,
) -> ProtoResult<PendingOp> {
    let mut def = <pb::OpDef as prost::Message>::decode(raw.clone()).map_err(|e| {
        let w = crate::wire::locate(raw, "OpDef")
            .map(|w| crate::wire::rebase(w, raw))
            .unwrap_or_else(|| ProtoError::Wire {
                offset: crate::wire::offset_of(raw),
                path: "OpDef".to_string(),
                message: e.to_string(),
            });
        w.within(|| format!("op[{i}]"))
    })?;
    let unknown = crate::wire::unknown_fields(raw, crate::wire::OP_DEF_FIELDS);
    let mut ports = port_section(
        std::mem::take(&mut def.attr),
        def.input_desc.len(),
        def.output_desc.len(),
        def.subgraph_name.len(),
        None,
    )
    .map_err(|e| e.within(|| format!("op[{i}]({})", def.name)))?;
    // Every attribute went through the port reading: the ones it did not take are the user's.
    let mut user = std::mem::take(&mut ports.leftover);
    let ports = Arc::new(ports);
    if let Some(v) = attr_unknown_value(crate::wire::attr_unknown_fields(raw, 10)) {
        user.insert(ASC_ATTR_UNKNOWN, v);
    }
    let (name, ty) = (
        std::mem::take(&mut def.name),
        std::mem::take(&mut def.r#type),
    );
    let in_descs = std::mem::take(&mut def.input_desc);
    let out_descs = std::mem::take(&mut def.output_desc);
    let descs = [
        in_descs.iter().map(|d| &d[..]).collect(),
        out_descs.iter().map(|d| &d[..]).collect(),
    ];
    let mut p = op_from_def(
        &mut def,
        &name,
        Sym::from(ty),
        (raw, &descs),
        cache,
        &ports,
        user,
    )
    .map_err(|e| e.within(|| format!("op[{i}]({name})")))?;
    if !unknown.is_empty() {
        p.op.attrs
            .insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
    }
    Ok(p)
}

/// What an op's reserved attribute keys decode to (port names, IR metadata, our edge keys),
/// given its port and subgraph-slot counts. Reserved keys that do not read as GE writes them
/// stay attributes (`leftover`). Ops with the same reserved entries share one section.
/// Names come shared, ready for the op.
struct PortSection {
    in_names: Vec<Sym>,
    out_names: Vec<Sym>,
    /// Whether any of the IR keys below was present (the op then gets an `OpMeta`).
    ir_keys: bool,
    opt: Vec<Arc<str>>,
    ir_attr_names: Vec<String>,
    ir_in: Vec<(Arc<str>, IrInputType)>,
    ir_out: Vec<(Arc<str>, IrOutputType)>,
    sub_ir: Option<Vec<(String, SubgraphType)>>,
    in_ctrl: Option<Vec<String>>,
    ctrl_to_data: Option<Vec<String>>,
    fanout: Option<Vec<String>>,
    leftover: AttrMap,
}

/// `strings`: where port names are interned (the decoding thread's table, which the graph
/// adopts), if anywhere.
fn port_section(
    mut map: BTreeMap<String, pb::AttrDef>,
    n_in: usize,
    n_out: usize,
    n_sub: usize,
    mut strings: Option<&mut Interner>,
) -> ProtoResult<PortSection> {
    let attrs = &mut map;
    let in_map = take_name_map(attrs, INPUT_NAME_KEY, INPUT_NAME_VALUE, n_in > 0)
        .or_else(|| take_name_map(attrs, LEGACY_INPUT_NAME_KEY, LEGACY_INPUT_NAME_VALUE, false));
    let out_map =
        take_name_map(attrs, OUTPUT_NAME_KEY, OUTPUT_NAME_VALUE, n_out > 0).or_else(|| {
            take_name_map(
                attrs,
                LEGACY_OUTPUT_NAME_KEY,
                LEGACY_OUTPUT_NAME_VALUE,
                false,
            )
        });
    let (ik, iv) = in_map.unwrap_or_default();
    let (ok, ov) = out_map.unwrap_or_default();
    let in_names = port_names(n_in, &ik, &iv, "__input")
        .map_err(|e| e.within(|| "attr[\"_input_name_key\"]".into()))?;
    let out_names = port_names(n_out, &ok, &ov, "__output")
        .map_err(|e| e.within(|| "attr[\"_output_name_key\"]".into()))?;
    let take_ls = |attrs: &mut BTreeMap<String, pb::AttrDef>, key: &str| {
        let v = attrs
            .get(key)
            .and_then(as_list_s)
            .filter(|v| !v.is_empty())?;
        remove_untyped(attrs, key);
        Some(v)
    };
    let opt = take_ls(attrs, OPT_INPUT);
    let ir_attr_names = take_ls(attrs, IR_ATTR_NAMES);
    let ir_in = pair_lists(attrs, IR_INPUTS_KEY, IR_INPUTS_VALUE, 2);
    let ir_out = pair_lists(attrs, IR_OUTPUTS_KEY, IR_OUTPUTS_VALUE, 1);
    let sub_ir = match (
        attrs.get(ASC_SUBGRAPH_IR_NAMES).and_then(as_list_s),
        attrs
            .get(ASC_SUBGRAPH_IR_TYPES)
            .and_then(|d| as_list_i(d).map(<[i64]>::to_vec)),
    ) {
        (Some(n), Some(t))
            if n.len() == t.len() && n.len() == n_sub && t.iter().all(|&x| x == 0 || x == 1) =>
        {
            attrs.remove(ASC_SUBGRAPH_IR_NAMES);
            attrs.remove(ASC_SUBGRAPH_IR_TYPES);
            Some(n.into_iter().zip(t).collect::<Vec<_>>())
        }
        _ => None,
    };
    let in_ctrl = take_if(attrs, ASC_IN_CTRL, as_list_s);
    let ctrl_to_data = take_if(attrs, ASC_CTRL_TO_DATA, as_list_s);
    let fanout = take_if(attrs, ASC_FANOUT, as_list_s);
    // Our own keys are written by our encoder only: one that is still here did not decode.
    for key in [
        ASC_SUBGRAPH_IR_NAMES,
        ASC_SUBGRAPH_IR_TYPES,
        ASC_IN_CTRL,
        ASC_CTRL_TO_DATA,
        ASC_FANOUT,
    ] {
        if attrs.contains_key(key) {
            return Err(ProtoError::invalid(
                format!("attr[\"{key}\"]"),
                "malformed reserved key: not a list of the expected type, or not one entry per subgraph slot",
            ));
        }
    }
    let ir_keys = opt.is_some() || ir_attr_names.is_some() || ir_in.is_some() || ir_out.is_some();
    let mut shared = |v: Vec<String>| -> Vec<Sym> {
        v.into_iter()
            .map(|n| match strings.as_deref_mut() {
                Some(table) => table.intern(&n),
                None => Sym::from(n),
            })
            .collect()
    };
    Ok(PortSection {
        in_names: shared(in_names),
        out_names: shared(out_names),
        ir_keys,
        opt: opt
            .into_iter()
            .flatten()
            .map(|s| Arc::from(s.as_str()))
            .collect(),
        ir_attr_names: ir_attr_names.unwrap_or_default(),
        ir_in: ir_in
            .into_iter()
            .flatten()
            .map(|(n, t)| {
                let t = match t {
                    0 => IrInputType::Required,
                    1 => IrInputType::Optional,
                    _ => IrInputType::Dynamic,
                };
                (Arc::from(n.as_str()), t)
            })
            .collect(),
        ir_out: ir_out
            .into_iter()
            .flatten()
            .map(|(n, t)| {
                let t = if t == 0 {
                    IrOutputType::Required
                } else {
                    IrOutputType::Dynamic
                };
                (Arc::from(n.as_str()), t)
            })
            .collect(),
        sub_ir: sub_ir.map(|pairs| {
            pairs
                .into_iter()
                .map(|(n, t)| {
                    let t = if t == 0 {
                        SubgraphType::Static
                    } else {
                        SubgraphType::Dynamic
                    };
                    (n, t)
                })
                .collect()
        }),
        in_ctrl,
        ctrl_to_data,
        fanout,
        leftover: attrs_from_map(map)?,
    })
}

/// `descs`: the input and output desc encodings, parts of the op's encoding (`descs.0`).
fn op_from_def<'s>(
    def: &mut pb::OpDef,
    name: &str,
    ty: Sym,
    descs: (&'s Bytes, &[DescList; 2]),
    cache: &mut DescCache<'s>,
    section: &Arc<PortSection>,
    mut user: AttrMap,
) -> ProtoResult<PendingOp> {
    let mut op = OpDesc::with_type_sym(name, ty);
    op.id = def.id;
    op.stream_id = def.stream_id;
    // The names are distinct (checked when the section was read).
    let (owner, [in_descs, out_descs]) = descs;
    for (i, (td, name)) in in_descs.iter().zip(&section.in_names).enumerate() {
        let d = cache
            .get(owner, td)
            .map_err(|e| e.within(|| format!("input_desc[{i}]")))?;
        op.push_port(Side::Input, name.clone(), d);
    }
    for (i, (td, name)) in out_descs.iter().zip(&section.out_names).enumerate() {
        let d = cache
            .get(owner, td)
            .map_err(|e| e.within(|| format!("output_desc[{i}]")))?;
        op.push_port(Side::Output, name.clone(), d);
    }
    if !def.attr_groups.is_empty() {
        user.insert(
            ASC_ATTR_GROUPS.to_string(),
            AttrValue::Bytes(std::mem::take(&mut def.attr_groups)),
        );
    }
    op.attrs = user;

    let has_meta = !def.has_out_attr
        || section.ir_keys
        || !def.subgraph_name.is_empty()
        || !def.input_name.is_empty()
        || !def.src_name.is_empty()
        || !def.src_index.is_empty()
        || !def.dst_name.is_empty()
        || !def.dst_index.is_empty()
        || !def.input_i.is_empty()
        || !def.output_i.is_empty()
        || !def.workspace.is_empty()
        || !def.workspace_bytes.is_empty()
        || !def.is_input_const.is_empty();
    if has_meta {
        let meta: &mut OpMeta = op.meta_mut();
        meta.has_out_attr = def.has_out_attr;
        meta.optional_inputs = section.opt.clone();
        meta.ir_attr_names = section.ir_attr_names.clone();
        meta.ir_inputs = section.ir_in.clone();
        meta.ir_outputs = section.ir_out.clone();
        match &section.sub_ir {
            Some(pairs) => {
                meta.subgraph_ir_names = pairs.clone();
                meta.subgraph_instance_names = std::mem::take(&mut def.subgraph_name);
            }
            None => {
                // GE: every non-empty instance name becomes its own static IR name.
                let inst: Vec<String> = std::mem::take(&mut def.subgraph_name)
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect();
                meta.subgraph_ir_names = inst
                    .iter()
                    .map(|s| (s.clone(), SubgraphType::Static))
                    .collect();
                meta.subgraph_instance_names = inst;
            }
        }
        meta.input_name = std::mem::take(&mut def.input_name);
        meta.src_name = std::mem::take(&mut def.src_name);
        meta.src_index = std::mem::take(&mut def.src_index);
        meta.dst_name = std::mem::take(&mut def.dst_name);
        meta.dst_index = std::mem::take(&mut def.dst_index);
        meta.input_offsets = std::mem::take(&mut def.input_i);
        meta.output_offsets = std::mem::take(&mut def.output_i);
        meta.workspace = std::mem::take(&mut def.workspace);
        meta.workspace_bytes = std::mem::take(&mut def.workspace_bytes);
        meta.is_input_const = std::mem::take(&mut def.is_input_const);
    }
    Ok(PendingOp {
        op,
        links: Links {
            inputs: EdgeStrings::Owned(std::mem::take(&mut def.input)),
            section: (section.in_ctrl.is_some()
                || section.ctrl_to_data.is_some()
                || section.fanout.is_some())
            .then(|| section.clone()),
        },
    })
}

fn pair_lists(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    key: &str,
    value: &str,
    max: i64,
) -> Option<Vec<(String, i64)>> {
    let k = attrs.get(key).and_then(as_list_s)?;
    let v = attrs.get(value).and_then(as_list_i)?;
    if k.is_empty() || k.len() != v.len() || v.iter().any(|&x| !(0..=max).contains(&x)) {
        return None;
    }
    let out = k.into_iter().zip(v.iter().copied()).collect();
    remove_untyped(attrs, key);
    remove_untyped(attrs, value);
    Some(out)
}

fn split_edge(s: &str) -> Option<(&str, &str)> {
    s.rfind(':').map(|i| (&s[..i], &s[i + 1..]))
}

fn parse_index(text: &str) -> Option<i64> {
    text.parse::<i64>().ok()
}

thread_local! {
    /// How many `graph_from_def` calls are active on this thread (graphs nested in attributes).
    static GRAPH_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Deepest nesting of graphs inside graph attributes accepted when decoding.
pub const MAX_GRAPH_NESTING: usize = 32;

/// Restores the nesting depth when a graph decode ends (normally or by error).
struct DepthGuard(usize);

impl Drop for DepthGuard {
    fn drop(&mut self) {
        GRAPH_DEPTH.with(|d| d.set(self.0));
    }
}

fn enter_graph(depth: usize) -> ProtoResult<DepthGuard> {
    if depth >= MAX_GRAPH_NESTING {
        return Err(ProtoError::invalid(
            "",
            format!("graphs nested more than {MAX_GRAPH_NESTING} deep in graph attributes"),
        ));
    }
    let old = GRAPH_DEPTH.with(|d| d.replace(depth + 1));
    Ok(DepthGuard(old))
}

/// The ops of one graph being decoded, shared by the calling thread and its helpers.
struct OpsJob {
    ops: Vec<Bytes>,
    /// The input buffer registration, the graph nesting depth and the decoder choice of the
    /// calling thread, for the helpers.
    base: (usize, usize),
    depth: usize,
    full_only: bool,
}

impl OpsJob {
    /// Decode ops `range` with a thread's caches.
    fn decode<'s>(
        &'s self,
        cache: &mut ChunkCache<'s>,
        range: std::ops::Range<usize>,
    ) -> ProtoResult<Vec<PendingOp>> {
        crate::wire::with_base_raw(self.base, || {
            let _guard = enter_graph(self.depth)?;
            let _full = FullOnly::set(self.full_only);
            range.map(|i| op_from_raw(&self.ops[i], i, cache)).collect()
        })
    }
}

/// Decode a `GraphDef` into a graph (subgraph links are resolved by the model decoder).
pub fn graph_from_def(def: pb::GraphDef) -> ProtoResult<Graph> {
    let depth = GRAPH_DEPTH.with(|d| d.get());
    let _guard = enter_graph(depth)?;
    let pb::GraphDef {
        name,
        input,
        output,
        op,
        attr,
        attr_groups,
    } = def;
    let mut g = Graph::with_capacity(&name, op.len());
    // Ops decode independently: in parallel, in chunks (each with its own desc cache).
    let n = op.len();
    let chunk = chunk_len(n, 8);
    let job = Arc::new(OpsJob {
        ops: op,
        base: crate::wire::base(),
        depth,
        full_only: FULL_ONLY.with(|f| f.get()),
    });
    let plan = Arc::new(ChunkPlan::new(n, chunk));
    // Small graphs are helped while that has lately been faster (see `pacing`), and timed.
    let possible = helpers_for(n, chunk);
    let timed = n < pacing::ALWAYS_HELP_FROM && possible > 0;
    let helpers = if timed && !pacing::help_small_job() {
        0
    } else {
        possible
    };
    let start = std::time::Instant::now();
    // Helpers own what they use: the caller never waits for them (see `chunks`).
    for _ in 0..helpers {
        let (job, plan) = (job.clone(), plan.clone());
        rayon::spawn(move || {
            // A panic (a bug) must not abort the process from a detached job: the helper just
            // stops, and the caller, running the same chunk, raises it where it can be caught.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut cache: Option<ChunkCache> = None;
                plan.help(|r| {
                    let cache = cache.get_or_insert_with(|| ChunkCache::new(n));
                    job.decode(cache, r)
                });
            }));
        });
    }
    let mut cache = ChunkCache::new(n);
    let chunks: Vec<Vec<PendingOp>> = plan.run(|r| job.decode(&mut cache, r))?;
    if timed {
        let bytes = job.ops.iter().map(Bytes::len).sum();
        pacing::record_time(helpers > 0, start.elapsed(), bytes);
        if helpers > 0 {
            pacing::record_speed(plan.helper_speed());
        }
    }
    // The calling thread's strings (op types, port names) become the graph's shared copies, so
    // that adding its ops finds them already shared.
    g.share_strings(&cache.types);
    drop(cache);
    let n_ops: usize = chunks.iter().map(Vec::len).sum();
    let mut pending: Vec<Links> = Vec::with_capacity(n_ops);
    let mut ids = Vec::with_capacity(n_ops);
    for (i, p) in chunks.into_iter().flatten().enumerate() {
        let PendingOp { op, links } = p;
        let id = g
            .add_node_keep_id(op)
            .map_err(|e| ProtoError::invalid(format!("op[{i}]"), e.to_string()))?;
        ids.push(id);
        pending.push(links);
    }
    for (i, p) in pending.iter().enumerate() {
        let dst = ids[i];
        link_inputs(&mut g, dst, p, &job.ops[i]).map_err(|e| {
            e.within(|| {
                format!(
                    "op[{i}]({})",
                    g.op(dst).map(|o| o.name().to_string()).unwrap_or_default()
                )
            })
        })?;
    }
    for (i, p) in pending.iter().enumerate() {
        if let Some(f) = p.fanout() {
            apply_fanout(&mut g, ids[i], f)
                .map_err(|e| e.within(|| format!("op[{i}].attr[\"{ASC_FANOUT}\"]")))?;
        }
    }
    let mut inputs = Vec::with_capacity(input.len());
    for (i, s) in input.iter().enumerate() {
        let (n, _) = split_edge(s).unwrap_or((s.as_str(), "0"));
        let id = g.find(n).ok_or_else(|| {
            ProtoError::invalid(
                format!("input[{i}]"),
                format!("unknown graph input node '{n}'"),
            )
        })?;
        inputs.push(id);
    }
    g.set_input_nodes(inputs)
        .map_err(|e| ProtoError::invalid("input", e.to_string()))?;
    for (i, s) in output.iter().enumerate() {
        let bad = || ProtoError::invalid(format!("output[{i}]"), format!("bad graph output '{s}'"));
        let (n, idx) = split_edge(s).ok_or_else(bad)?;
        let idx = parse_index(idx)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(bad)?;
        let id = g.find(n).ok_or_else(bad)?;
        g.add_output_node(id, idx)
            .map_err(|e| ProtoError::invalid(format!("output[{i}]"), e.to_string()))?;
    }
    g.attrs = attrs_from_map(attr).map_err(|e| e.within(String::new))?;
    if !attr_groups.is_empty() {
        g.attrs
            .insert(ASC_ATTR_GROUPS.to_string(), AttrValue::Bytes(attr_groups));
    }
    Ok(g)
}

fn resolve_src(g: &Graph, s: &str, path: &dyn Fn() -> String) -> ProtoResult<(NodeId, i64)> {
    let (name, idx) = split_edge(s)
        .ok_or_else(|| ProtoError::invalid(path(), format!("bad edge string '{s}'")))?;
    let index = parse_index(idx).filter(|&i| i >= -1).ok_or_else(|| {
        ProtoError::invalid(path(), format!("bad output index in edge string '{s}'"))
    })?;
    let id = g
        .find(name)
        .ok_or_else(|| ProtoError::invalid(path(), format!("unknown edge source '{name}'")))?;
    if index >= 0 {
        let n_out = g.node(id).map(|n| n.num_out_data()).unwrap_or(0);
        if index as u64 >= n_out as u64 {
            return Err(ProtoError::invalid(
                path(),
                format!("edge source '{name}' has no output {index} (it has {n_out})"),
            ));
        }
    }
    Ok((id, index))
}

fn link_inputs(g: &mut Graph, dst: NodeId, p: &Links, op: &[u8]) -> ProtoResult<()> {
    let n_in = g.node(dst).map(|n| n.num_in_data()).unwrap_or(0);
    let mut ctrl_data: FxHashMap<usize, &str> = FxHashMap::default();
    if let Some(list) = p.ctrl_to_data() {
        for (k, e) in list.iter().enumerate() {
            let bad = || {
                ProtoError::invalid(
                    format!("attr[\"{ASC_CTRL_TO_DATA}\"][{k}]"),
                    format!("bad entry '{e}'"),
                )
            };
            let (slot, name) = e.split_once(':').ok_or_else(bad)?;
            let slot: usize = slot.parse().map_err(|_| bad())?;
            ctrl_data.insert(slot, name);
        }
    }
    let mut slot = 0usize;
    for (k, s) in p.inputs.read(op)?.into_iter().enumerate() {
        let path = || format!("input[{k}]");
        let Some((_, idx)) = split_edge(s) else {
            if !s.is_empty() {
                return Err(ProtoError::invalid(
                    path(),
                    format!("edge '{s}' has no ':<output index>' (an unconnected slot is \"\")"),
                ));
            }
            // "": an unconnected slot.
            if let Some(name) = ctrl_data.get(&slot) {
                if slot >= n_in {
                    return Err(ProtoError::invalid(
                        path(),
                        format!("input slot {slot} does not exist"),
                    ));
                }
                let src = g.find(name).ok_or_else(|| {
                    ProtoError::invalid(path(), format!("unknown edge source '{name}'"))
                })?;
                g.link(OutAnchor::control(src), InAnchor::data(dst, slot))
                    .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
            }
            slot += 1;
            continue;
        };
        if idx == "-1" {
            if p.in_ctrl().is_some() {
                // Control edges are given in full (with data→control ones) by our key.
                let _ = resolve_src(g, s, &path)?;
                continue;
            }
            let (src, _) = resolve_src(g, s, &path)?;
            g.link(OutAnchor::control(src), InAnchor::control(dst))
                .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
            continue;
        }
        let (src, index) = resolve_src(g, s, &path)?;
        if slot >= n_in {
            return Err(ProtoError::invalid(
                path(),
                format!("edge '{s}' targets input slot {slot}, but the op has {n_in} input descs"),
            ));
        }
        g.link(
            OutAnchor::data(src, index as usize),
            InAnchor::data(dst, slot),
        )
        .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
        slot += 1;
    }
    if let Some(list) = p.in_ctrl() {
        for (k, s) in list.iter().enumerate() {
            let path = || format!("attr[\"{ASC_IN_CTRL}\"][{k}]");
            let (src, index) = resolve_src(g, s, &path)?;
            let out = if index < 0 {
                OutAnchor::control(src)
            } else {
                OutAnchor::data(src, index as usize)
            };
            g.link(out, InAnchor::control(dst))
                .map_err(|e| ProtoError::invalid(path(), e.to_string()))?;
        }
    }
    Ok(())
}

fn apply_fanout(g: &mut Graph, src: NodeId, entries: &[String]) -> ProtoResult<()> {
    let mut groups: Vec<(i32, Vec<InAnchor>)> = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        let bad = || ProtoError::invalid(format!("[{k}]"), format!("bad fan-out entry '{e}'"));
        let (out, rest) = e.split_once('>').ok_or_else(bad)?;
        let out: i32 = out.parse().map_err(|_| bad())?;
        let (cons, idx) = split_edge(rest).ok_or_else(bad)?;
        let idx: i32 = idx.parse().map_err(|_| bad())?;
        let node = g.find(cons).ok_or_else(bad)?;
        let anchor = InAnchor { node, index: idx };
        match groups.last_mut() {
            Some((o, list)) if *o == out => list.push(anchor),
            _ => groups.push((out, vec![anchor])),
        }
    }
    for (out, order) in groups {
        if out < -1 {
            return Err(ProtoError::invalid("", format!("bad output index {out}")));
        }
        g.set_out_peer_order(
            OutAnchor {
                node: src,
                index: out,
            },
            &order,
        )
        .map_err(|e| ProtoError::invalid("", e.to_string()))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Encoding graphs
// ---------------------------------------------------------------------------------------------

fn edge(name: &str, index: i32) -> String {
    let mut s = String::with_capacity(name.len() + 4);
    s.push_str(name);
    s.push(':');
    s.push_str(itoa(index).as_str());
    s
}

fn itoa(v: i32) -> String {
    v.to_string()
}

/// The map entries (field 11) of `attrs`, the `attr_groups` field (12) and the unknown fields,
/// as a `GraphDef` or `ModelDef` ends (the same bytes prost writes for those fields).
fn attrs_tail(attrs: &AttrMap) -> ProtoResult<Vec<u8>> {
    let mut out = Vec::new();
    let extra = encode_attr_map(
        attrs,
        &GenAttrs::default(),
        &[ASC_ATTR_GROUPS],
        11,
        &mut EntryEncodings::default(),
        &mut out,
    )?;
    let groups = attr_groups_of(attrs);
    if !groups.is_empty() {
        put_len_delimited(12, &groups, &mut out);
    }
    out.extend_from_slice(&extra);
    Ok(out)
}

/// The `attr_groups` bytes kept in `attrs` (empty when there are none).
fn attr_groups_of(attrs: &AttrMap) -> Bytes {
    match attrs.get(ASC_ATTR_GROUPS) {
        Some(AttrValue::Bytes(b)) => b.clone(),
        _ => Bytes::new(),
    }
}

/// Every graph of `roots`, each followed by its registered subgraphs (the order of
/// `ModelDef.graph`).
pub fn with_subgraphs<'a>(roots: &[&'a Graph]) -> Vec<&'a Graph> {
    roots
        .iter()
        .flat_map(|g| std::iter::once(*g).chain(g.subgraphs.iter()))
        .collect()
}

/// Subgraphs are found by name: two graphs of a model cannot share one.
fn check_unique_names(graphs: &[&Graph]) -> ProtoResult<()> {
    let mut names = rustc_hash::FxHashSet::default();
    for g in graphs {
        if !names.insert(g.name()) {
            return Err(ProtoError::Encode(format!(
                "two graphs of the model are named '{}'; subgraphs are found by name",
                g.name()
            )));
        }
    }
    Ok(())
}

/// Encode a model as `ModelDef` bytes: every root graph followed by its registered subgraphs,
/// unknown fields kept.
pub fn model_to_bytes(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Vec<u8>> {
    model_to_bytes_flat(meta, &with_subgraphs(graphs))
}

/// Encode a model from the exact `ModelDef.graph` list (`graphs[0]` first) as bytes, unknown
/// fields kept. The same bytes as encoding [`model_to_def_flat`] when there are none.
pub fn model_to_bytes_flat(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Vec<u8>> {
    Ok(model_pieces(meta, graphs)?.concat())
}

/// `model_to_bytes_flat` in pieces.
pub fn model_pieces(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<Pieces> {
    check_unique_names(graphs)?;
    // Field order as prost writes a ModelDef: 1, 2, 3, then the graphs (7), then 11, 12.
    let mut pieces = Pieces::default();
    pieces.push(prost::Message::encode_to_vec(&pb::ModelDef {
        name: meta.name.clone(),
        version: meta.version,
        custom_version: meta.custom_version.clone(),
        ..Default::default()
    }));
    for g in graphs {
        graph_field(g, 7, &mut pieces)?;
    }
    pieces.push(attrs_tail(&meta.attrs)?);
    Ok(pieces)
}

/// Encoded tensor descriptors by `Arc` identity (shared descs are encoded once per thread):
/// each encoding thread has its own. The encodings are ranges of one buffer, copied from it
/// as they are written (no reference count per use).
#[derive(Default)]
struct DescEncCache {
    local: FxHashMap<usize, (usize, usize)>,
    /// The encodings, one after another.
    descs: Vec<u8>,
    /// Attribute entries shared by several maps.
    entries: EntryEncodings,
}

/// The encodings of attribute entries held by several maps (a decoded graph shares every
/// repeated entry), by entry address and map field: written once per thread, then copied.
/// Entries held by one map only are written directly (no bookkeeping).
#[derive(Default)]
struct EntryEncodings {
    at: FxHashMap<(usize, u32), (usize, usize)>,
    bytes: Vec<u8>,
}

impl EntryEncodings {
    /// Write `entry` as map field `field`.
    fn write(&mut self, entry: &Arc<AttrEntry>, field: u32, out: &mut Vec<u8>) -> ProtoResult<()> {
        let shared = Arc::strong_count(entry) > 1;
        let key = (Arc::as_ptr(entry) as usize, field);
        if shared {
            if let Some(&(start, end)) = self.at.get(&key) {
                out.extend_from_slice(&self.bytes[start..end]);
                return Ok(());
            }
        }
        let begin = out.len();
        let (k, v) = (entry.key(), entry.value());
        put_nested(field, out, |o| {
            if !k.is_empty() {
                put_len_delimited(1, k.as_bytes(), o);
            }
            put_nested(2, o, |o| encode_attr_value(v, o))
        })
        .map_err(|e| e.within(|| format!("attr[{k:?}]")))?;
        if shared {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(&out[begin..]);
            self.at.insert(key, (start, self.bytes.len()));
        }
        Ok(())
    }
}

/// The range of `cache.descs` that holds the encoding of `d` (encoded there first if new).
fn encode_desc_cached(
    d: &Arc<TensorDesc>,
    cache: &mut DescEncCache,
) -> ProtoResult<(usize, usize)> {
    let key = Arc::as_ptr(d) as usize;
    if let Some(&range) = cache.local.get(&key) {
        return Ok(range);
    }
    let start = cache.descs.len();
    if let Err(e) = encode_desc(d, &mut cache.entries, &mut cache.descs) {
        cache.descs.truncate(start);
        return Err(e);
    }
    let range = (start, cache.descs.len());
    cache.local.insert(key, range);
    Ok(range)
}

/// The reserved attribute entries written for `d`, as encoded `AttrDef`s: its origin format
/// (name and number), format number, origin dtype, whether it has an origin shape, and that
/// shape.
fn desc_reserved_entries(d: &TensorDesc) -> GenAttrs {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let varint = |field: u32, v: u64| {
        let mut b = Vec::with_capacity(10);
        encode_key(field, WireType::Varint, &mut b);
        encode_varint(v, &mut b);
        b
    };
    let string = |s: &str| {
        let mut b = Vec::with_capacity(s.len() + 2);
        put_len_delimited(2, s.as_bytes(), &mut b);
        b
    };
    let mut reserved = GenAttrs::default();
    reserved.insert(ORIGIN_FORMAT, string(&bits::serial_string(d.origin_format)));
    reserved.insert(
        ORIGIN_FORMAT_FOR_INT,
        varint(3, i64::from(d.origin_format) as u64),
    );
    reserved.insert(FORMAT_FOR_INT, varint(3, i64::from(d.format) as u64));
    if d.origin_dtype != DataType::UNDEFINED {
        reserved.insert(ORIGIN_DATA_TYPE, string(d.origin_dtype.serial_name()));
    }
    reserved.insert(
        ORIGIN_SHAPE_INITIALIZED,
        varint(5, u64::from(d.origin_shape.is_some())),
    );
    if let Some(s) = &d.origin_shape {
        reserved.insert(ORIGIN_SHAPE, gen_i(Vt::VtListInt, s.iter().copied()));
    }
    reserved
}

/// Write `d` as a `TensorDescriptor` (the bytes prost writes for `desc_to_def(d)`, then the
/// unknown fields), straight from the desc: no message, no attribute map is built.
fn encode_desc(d: &TensorDesc, enc: &mut EntryEncodings, out: &mut Vec<u8>) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let varint = |field: u32, v: u64, out: &mut Vec<u8>| {
        if v != 0 {
            encode_key(field, WireType::Varint, out);
            encode_varint(v, out);
        }
    };
    let text = |field: u32, s: &str, out: &mut Vec<u8>| {
        if !s.is_empty() {
            put_len_delimited(field, s.as_bytes(), out);
        }
    };
    let empty = AttrMap::new();
    let user = d.attrs.as_deref().unwrap_or(&empty);
    text(1, d.name.as_deref().unwrap_or(""), out);
    varint(2, d.dtype.to_proto() as i64 as u64, out);
    put_nested(3, out, |o| {
        put_packed_varints(1, d.shape.iter().map(|&v| v as u64), o)
    });
    text(4, &bits::serial_string(d.format), out);
    // The reserved keys (they replace user entries of one name).
    let reserved = desc_reserved_entries(d);
    let extra = encode_attr_map(
        user,
        &reserved,
        &[ASC_HAS_OUT_ATTR, ASC_ATTR_GROUPS],
        5,
        enc,
        out,
    )?;
    if let Some(AttrValue::Bytes(b)) = user.get(ASC_ATTR_GROUPS) {
        if !b.is_empty() {
            put_len_delimited(6, b, out);
        }
    }
    varint(
        9,
        u64::from(matches!(
            user.get(ASC_HAS_OUT_ATTR),
            Some(AttrValue::Bool(true))
        )),
        out,
    );
    let ext = d.ext.as_deref().cloned().unwrap_or_default();
    varint(10, ext.size as u64, out);
    varint(11, ext.weight_size as u64, out);
    varint(12, u64::from(ext.reuse_input), out);
    varint(13, u64::from(ext.output_tensor), out);
    let device = match ext.device_type {
        DeviceType::Npu => "NPU",
        DeviceType::Cpu => "CPU",
    };
    text(14, device, out);
    varint(15, u64::from(ext.input_tensor), out);
    varint(16, u64::from(ext.real_dim_cnt), out);
    varint(17, u64::from(ext.reuse_input_index), out);
    varint(18, ext.data_offset as u64, out);
    varint(19, ext.cmps_size as u64, out);
    text(20, &ext.cmps_tab, out);
    varint(21, ext.cmps_tab_offset as u64, out);
    out.extend_from_slice(&extra);
    Ok(())
}

/// Encode a graph's own nodes (not its subgraphs) as a `GraphDef`.
pub fn graph_to_def(g: &Graph) -> ProtoResult<pb::GraphDef> {
    let mut def = graph_head(g);
    def.attr = attrs_to_map(&g.attrs, &[ASC_ATTR_GROUPS])?;
    def.attr_groups = attr_groups_of(&g.attrs);
    def.op = encode_ops(g, |_, op, list: &mut Vec<Bytes>| {
        list.push(Bytes::copy_from_slice(op))
    })?
    .into_iter()
    .flatten()
    .collect();
    Ok(def)
}

/// A `GraphDef` with its name, inputs and outputs only.
fn graph_head(g: &Graph) -> pb::GraphDef {
    let name_of = |id: NodeId| g.op(id).map(|o| o.name()).unwrap_or_default();
    pb::GraphDef {
        name: g.name().to_string(),
        input: g.inputs().iter().map(|&id| edge(name_of(id), 0)).collect(),
        output: g
            .outputs()
            .iter()
            .map(|&(id, i)| edge(name_of(id), i))
            .collect(),
        ..Default::default()
    }
}

/// Encode every op of `g` (in node order), handing each encoding to `keep`, which adds it to
/// the list of its chunk. Ops encode independently: in parallel, in chunks, each with its own
/// caches (descs are shared between chunks).
fn encode_ops<T: Default + Send>(
    g: &Graph,
    keep: impl Fn(usize, &[u8], &mut T) + Sync,
) -> ProtoResult<Vec<T>> {
    let mut pos: slotmap::SecondaryMap<NodeId, u32> = slotmap::SecondaryMap::with_capacity(g.len());
    for (i, id) in g.node_ids().enumerate() {
        pos.insert(id, i as u32);
    }
    let ids: Vec<NodeId> = g.node_ids().collect();
    run_chunks(
        ids.len(),
        chunk_len(ids.len(), 16),
        || {
            let cache = DescEncCache::default();
            (cache, Vec::with_capacity(1024))
        },
        |(cache, op), range| {
            let mut list = T::default();
            let len = range.len();
            for &id in &ids[range] {
                op.clear();
                write_op(g, id, &pos, cache, op)?;
                keep(len, op, &mut list);
            }
            Ok(list)
        },
    )
}

/// An encoding as pieces written one after the other (no copy to join them).
#[derive(Debug, Default)]
pub struct Pieces {
    parts: Vec<Vec<u8>>,
    len: usize,
}

impl Pieces {
    fn push(&mut self, part: Vec<u8>) {
        self.len += part.len();
        self.parts.push(part);
    }

    /// Total length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copy the bytes into the front of `out` (`len()` bytes, fewer when `out` is shorter);
    /// returns how many were copied.
    pub fn copy_to(&self, out: &mut [u8]) -> usize {
        let mut at = 0;
        for p in &self.parts {
            let n = p.len().min(out.len() - at);
            out[at..at + n].copy_from_slice(&p[..n]);
            at += n;
        }
        at
    }

    /// The bytes in one buffer.
    pub fn concat(self) -> Vec<u8> {
        if self.parts.len() == 1 {
            return self.parts.into_iter().next().unwrap_or_default();
        }
        let mut out = Vec::with_capacity(self.len);
        for p in &self.parts {
            out.extend_from_slice(p);
        }
        out
    }
}

/// The encoded ops of one chunk, as `GraphDef.op` fields.
#[derive(Default)]
struct ChunkBuffer {
    buf: Vec<u8>,
    ops: usize,
}

impl ChunkBuffer {
    /// Append `op`, the next of the chunk's `n` ops. The buffer is sized for the whole chunk
    /// from the ops so far (projected, with an eighth to spare), so that it rarely grows (each
    /// growth copies all of it).
    fn push_op(&mut self, n: usize, op: &[u8]) {
        use crate::write::{encode_key, encode_varint};
        let need = op.len() + 11;
        if self.buf.capacity() - self.buf.len() < need {
            let per_op = (self.buf.len() + need) / (self.ops + 1);
            let projected = per_op * n.max(self.ops + 1);
            self.buf
                .reserve((projected + projected / 8).saturating_sub(self.buf.len()));
        }
        encode_key(6, prost::encoding::WireType::LengthDelimited, &mut self.buf);
        encode_varint(op.len() as u64, &mut self.buf);
        self.buf.extend_from_slice(op);
        self.ops += 1;
    }
}

/// A graph as a length-delimited field `field` (a `GraphDef`: fields 1, 4, 5, the ops (6),
/// 11, 12, then its unknown fields), in pieces.
fn graph_field(g: &Graph, field: u32, out: &mut Pieces) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let head = prost::Message::encode_to_vec(&graph_head(g));
    let tail = attrs_tail(&g.attrs)?;
    let ops = encode_ops(g, |n, op, chunk: &mut ChunkBuffer| {
        chunk.push_op(n, op);
    })?;
    let ops: Vec<Vec<u8>> = ops.into_iter().map(|c| c.buf).collect();
    let len = head.len() + ops.iter().map(Vec::len).sum::<usize>() + tail.len();
    let mut key = Vec::with_capacity(12);
    encode_key(field, WireType::LengthDelimited, &mut key);
    encode_varint(len as u64, &mut key);
    out.push(key);
    out.push(head);
    for chunk in ops {
        out.push(chunk);
    }
    out.push(tail);
    Ok(())
}

/// Write op `id` as an `OpDef` at the end of `out`: the fields in declaration order, the
/// attribute map straight from the op's attributes, then its unknown fields.
fn write_op(
    g: &Graph,
    id: NodeId,
    pos: &slotmap::SecondaryMap<NodeId, u32>,
    cache: &mut DescEncCache,
    out: &mut Vec<u8>,
) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let op = g.op(id).map_err(|e| ProtoError::Encode(e.to_string()))?;
    let (parts, generated) = op_parts(g, id, pos, cache)?;
    let default_meta = OpMeta::default();
    let meta = op.meta().unwrap_or(&default_meta);
    // The fields in declaration order, as prost writes them (empty scalars left out,
    // repeated elements always written, numeric lists packed).
    let text = |field: u32, s: &str, out: &mut Vec<u8>| {
        if !s.is_empty() {
            put_len_delimited(field, s.as_bytes(), out);
        }
    };
    let texts = |field: u32, list: &[String], out: &mut Vec<u8>| {
        for s in list {
            put_len_delimited(field, s.as_bytes(), out);
        }
    };
    let varint = |field: u32, v: u64, out: &mut Vec<u8>| {
        if v != 0 {
            encode_key(field, WireType::Varint, out);
            encode_varint(v, out);
        }
    };
    let ints = |field: u32, list: &[i64], out: &mut Vec<u8>| {
        put_packed_varints(field, list.iter().map(|&v| v as u64), out);
    };
    text(1, op.name(), out);
    text(2, op.op_type(), out);
    texts(5, &parts.input, out);
    let extra = encode_attr_map(
        &op.attrs,
        &generated,
        &[ASC_ATTR_GROUPS],
        10,
        &mut cache.entries,
        out,
    )
    .map_err(|e| e.within(|| format!("op '{}'", op.name())))?;
    if !parts.attr_groups.is_empty() {
        put_len_delimited(11, &parts.attr_groups, out);
    }
    varint(20, u64::from(meta.has_out_attr), out);
    varint(21, op.id as u64, out);
    varint(22, op.stream_id as u64, out);
    texts(23, &meta.input_name, out);
    texts(24, &meta.src_name, out);
    ints(25, &meta.src_index, out);
    texts(26, &meta.dst_name, out);
    ints(27, &meta.dst_index, out);
    ints(28, &meta.input_offsets, out);
    ints(29, &meta.output_offsets, out);
    ints(30, &meta.workspace, out);
    ints(31, &meta.workspace_bytes, out);
    put_packed_varints(32, meta.is_input_const.iter().map(|&b| u64::from(b)), out);
    for &(start, end) in &parts.input_desc {
        put_len_delimited(33, &cache.descs[start..end], out);
    }
    for &(start, end) in &parts.output_desc {
        put_len_delimited(34, &cache.descs[start..end], out);
    }
    texts(35, &meta.subgraph_instance_names, out);
    out.extend_from_slice(&extra);
    Ok(())
}

/// The (port name, index) pairs of `ports` in name order: GE's name-to-index map.
fn sorted_name_map(ports: &[ascendir_ir::Port]) -> SmallVec<[(&str, i64); 8]> {
    let mut pairs: SmallVec<[(&str, i64); 8]> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| (&*p.name, i as i64))
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
    pairs
}

/// The edge strings, desc encodings and generated attribute entries of op `id`.
fn op_parts(
    g: &Graph,
    id: NodeId,
    pos: &slotmap::SecondaryMap<NodeId, u32>,
    cache: &mut DescEncCache,
) -> ProtoResult<(OpParts, GenAttrs)> {
    let node = g.node(id).map_err(|e| ProtoError::Encode(e.to_string()))?;
    let op = node.op();
    let name_of = |n: NodeId| g.op(n).map(|o| o.name()).unwrap_or("");
    let path = || format!("op '{}'", op.name());

    // Edge strings.
    let mut input = Vec::with_capacity(node.num_in_data() + node.in_control_peers().len());
    let mut ctrl_to_data = Vec::new();
    for (slot, peer) in node.in_data_peers().enumerate() {
        match peer {
            Some(src) if src.is_control() => {
                input.push(String::new());
                ctrl_to_data.push(format!("{slot}:{}", name_of(src.node)));
            }
            Some(src) => input.push(edge(name_of(src.node), src.index)),
            None => input.push(String::new()),
        }
    }
    // Trailing unset optional inputs (invalid descs) get no edge string, as GE writes them.
    while input.last().is_some_and(String::is_empty)
        && op
            .inputs()
            .get(input.len() - 1)
            .is_some_and(|p| !p.desc.is_valid())
        && !ctrl_to_data
            .iter()
            .any(|e| e.starts_with(&format!("{}:", input.len() - 1)))
    {
        input.pop();
    }
    let in_ctrl = node.in_control_peers();
    let has_data_ctrl = in_ctrl.iter().any(|p| !p.is_control());
    for p in in_ctrl.iter().filter(|p| p.is_control()) {
        input.push(edge(name_of(p.node), -1));
    }

    // Generated entries only: the op's own attributes are written by `write_op`.
    let mut attr = GenAttrs::default();
    let user = &op.attrs;
    if has_data_ctrl {
        attr.insert(
            ASC_IN_CTRL,
            gen_s(
                Vt::VtListString,
                in_ctrl
                    .iter()
                    .map(|p| edge(name_of(p.node), p.index))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str),
            ),
        );
    }
    if !ctrl_to_data.is_empty() {
        attr.insert(
            ASC_CTRL_TO_DATA,
            gen_s(Vt::VtListString, ctrl_to_data.iter().map(String::as_str)),
        );
    }
    // Fan-out order, when it is not what a reader rebuilds (consumer op order).
    let mut fanout: Vec<String> = Vec::new();
    let anchors = (0..node.num_out_data())
        .map(|i| (i as i32, node.out_data_peers(i)))
        .chain(std::iter::once((-1, node.out_control_peers())));
    for (out, peers) in anchors {
        if peers.len() < 2 {
            continue;
        }
        let src = OutAnchor {
            node: id,
            index: out,
        };
        let key = |dst: &InAnchor| -> (u32, usize) {
            let p = pos.get(dst.node).copied().unwrap_or(u32::MAX);
            if dst.is_control() {
                let c = g.node(dst.node).ok();
                let n_in = c.map_or(0, |c| c.num_in_data());
                let k = c
                    .and_then(|c| c.in_control_peers().iter().position(|&q| q == src))
                    .unwrap_or(0);
                (p, n_in + k)
            } else {
                (p, dst.index as usize)
            }
        };
        let canonical = peers.windows(2).all(|w| key(&w[0]) <= key(&w[1]));
        if !canonical {
            for d in peers {
                fanout.push(format!("{out}>{}:{}", name_of(d.node), d.index));
            }
        }
    }
    if !fanout.is_empty() {
        attr.insert(
            ASC_FANOUT,
            gen_s(Vt::VtListString, fanout.iter().map(String::as_str)),
        );
    }

    // GE's reserved keys.
    for (ports, key, value) in [
        (op.inputs(), INPUT_NAME_KEY, INPUT_NAME_VALUE),
        (op.outputs(), OUTPUT_NAME_KEY, OUTPUT_NAME_VALUE),
    ] {
        if !ports.is_empty() {
            let pairs = sorted_name_map(ports);
            put_reserved_s(&mut attr, user, key, pairs.iter().map(|p| p.0));
            put_reserved_i(&mut attr, user, value, pairs.iter().map(|p| p.1));
        }
    }
    let default_meta = OpMeta::default();
    let meta = op.meta().unwrap_or(&default_meta);
    if !meta.optional_inputs.is_empty() {
        let names = meta.optional_inputs.iter().map(|s| &**s);
        put_reserved_s(&mut attr, user, OPT_INPUT, names);
    }
    if !meta.ir_attr_names.is_empty() {
        let names = meta.ir_attr_names.iter().map(String::as_str);
        put_reserved_s(&mut attr, user, IR_ATTR_NAMES, names);
    }
    if !meta.ir_inputs.is_empty() {
        let names = meta.ir_inputs.iter().map(|p| &*p.0);
        put_reserved_s(&mut attr, user, IR_INPUTS_KEY, names);
        let kinds = meta.ir_inputs.iter().map(|p| p.1 as i64);
        put_reserved_i(&mut attr, user, IR_INPUTS_VALUE, kinds);
    }
    if !meta.ir_outputs.is_empty() {
        let names = meta.ir_outputs.iter().map(|p| &*p.0);
        put_reserved_s(&mut attr, user, IR_OUTPUTS_KEY, names);
        let kinds = meta.ir_outputs.iter().map(|p| p.1 as i64);
        put_reserved_i(&mut attr, user, IR_OUTPUTS_VALUE, kinds);
    }
    let inst = &meta.subgraph_instance_names;
    let ge_default = meta.subgraph_ir_names.len() == inst.len()
        && inst.iter().all(|s| !s.is_empty())
        && meta
            .subgraph_ir_names
            .iter()
            .zip(inst)
            .all(|((n, t), i)| n == i && *t == SubgraphType::Static);
    if !ge_default {
        if meta.subgraph_ir_names.len() != inst.len() {
            return Err(ProtoError::Encode(format!(
                "op '{}' has {} subgraph IR names but {} instance slots",
                op.name(),
                meta.subgraph_ir_names.len(),
                inst.len()
            )));
        }
        attr.insert(
            ASC_SUBGRAPH_IR_NAMES,
            gen_s(
                Vt::VtListString,
                meta.subgraph_ir_names.iter().map(|p| p.0.as_str()),
            ),
        );
        attr.insert(
            ASC_SUBGRAPH_IR_TYPES,
            gen_i(
                Vt::VtListInt,
                meta.subgraph_ir_names.iter().map(|p| p.1 as i64),
            ),
        );
    }
    let input_desc = op
        .inputs()
        .iter()
        .map(|p| encode_desc_cached(&p.desc, cache))
        .collect::<ProtoResult<_>>()
        .map_err(|e| e.within(path))?;
    let output_desc = op
        .outputs()
        .iter()
        .map(|p| encode_desc_cached(&p.desc, cache))
        .collect::<ProtoResult<_>>()
        .map_err(|e| e.within(path))?;
    let attr_groups = attr_groups_of(&op.attrs);
    let parts = OpParts {
        input,
        input_desc,
        output_desc,
        attr_groups,
    };
    Ok((parts, attr))
}

/// What an op's message holds besides what its `OpDesc` and `OpMeta` give directly.
struct OpParts {
    input: Vec<String>,
    /// Ranges of the encoding thread's `DescEncCache::descs`.
    input_desc: SmallVec<[(usize, usize); 4]>,
    output_desc: SmallVec<[(usize, usize); 2]>,
    attr_groups: Bytes,
}

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/// Encode a model: every root graph followed by its registered subgraphs.
pub fn model_to_def(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<pb::ModelDef> {
    model_to_def_flat(meta, &with_subgraphs(graphs))
}

/// Encode a model from the exact `ModelDef.graph` list (`graphs[0]` first).
pub fn model_to_def_flat(meta: &ModelMeta, graphs: &[&Graph]) -> ProtoResult<pb::ModelDef> {
    check_unique_names(graphs)?;
    let out = graphs
        .iter()
        .map(|g| graph_to_def(g))
        .collect::<ProtoResult<Vec<_>>>()?;
    Ok(pb::ModelDef {
        name: meta.name.clone(),
        version: meta.version,
        custom_version: meta.custom_version.clone(),
        graph: out,
        attr: attrs_to_map(&meta.attrs, &[ASC_ATTR_GROUPS])?,
        attr_groups: attr_groups_of(&meta.attrs),
    })
}

/// Decode a model: every GraphDef, then subgraph ownership rebuilt from the instance names
/// (breadth first from each root); the root's subgraph list keeps the file order.
pub fn model_from_def(def: pb::ModelDef) -> ProtoResult<Model> {
    model_from_def_raw(def, &[])
}

/// Keep the unknown fields of a message (and of its attribute map's values, field
/// `attr_field`) found in its encoding `raw` under our keys of `attrs`.
fn keep_unknown(attrs: &mut AttrMap, raw: &[u8], known: &[u32], attr_field: u32) {
    let unknown = crate::wire::unknown_fields(raw, known);
    if !unknown.is_empty() {
        attrs.insert(ASC_UNKNOWN.to_string(), AttrValue::Bytes(unknown.into()));
    }
    if let Some(v) = attr_unknown_value(crate::wire::attr_unknown_fields(raw, attr_field)) {
        attrs.insert(ASC_ATTR_UNKNOWN.to_string(), v);
    }
}

/// [`model_from_def`] for `def` decoded from `raw`: the unknown fields of the ModelDef, its
/// GraphDefs and their attribute values are kept (see `docs/WIRE_FORMAT.md`).
pub fn model_from_def_raw(def: pb::ModelDef, raw: &[u8]) -> ProtoResult<Model> {
    let mut graph_raw: Vec<&[u8]> = Vec::new();
    let mut pos = 0usize;
    while pos < raw.len() {
        match crate::wire::next_field(raw, &mut pos) {
            Some(f) if f.number == 7 && f.wire_type == 2 => {
                graph_raw.push(&raw[f.value_start..f.end])
            }
            Some(_) => {}
            None => {
                graph_raw.clear();
                break;
            }
        }
    }
    let pb::ModelDef {
        name,
        version,
        custom_version,
        graph,
        attr,
        attr_groups,
    } = def;
    if graph.is_empty() {
        return Err(ProtoError::invalid("graph", "the model has no graph"));
    }
    let mut attrs = attrs_from_map(attr)?;
    if !attr_groups.is_empty() {
        attrs.insert(ASC_ATTR_GROUPS.to_string(), AttrValue::Bytes(attr_groups));
    }
    if !graph_raw.is_empty() {
        keep_unknown(&mut attrs, raw, crate::wire::MODEL_DEF_FIELDS, 11);
    }
    let mut by_name: FxHashMap<String, usize> = FxHashMap::default();
    for (i, g) in graph.iter().enumerate() {
        if by_name.insert(g.name.clone(), i).is_some() {
            return Err(ProtoError::invalid(
                format!("graph[{i}].name"),
                format!("duplicate graph name '{}'", g.name),
            ));
        }
    }
    let mut slots: Vec<Option<Graph>> = Vec::with_capacity(graph.len());
    let keep = graph_raw.len() == graph.len();
    for (i, gd) in graph.into_iter().enumerate() {
        let mut g = graph_from_def(gd).map_err(|e| e.within(|| format!("graph[{i}]")))?;
        if keep {
            keep_unknown(
                &mut g.attrs,
                graph_raw[i],
                crate::wire::GRAPH_DEF_FIELDS,
                11,
            );
        }
        slots.push(Some(g));
    }
    let mut taken = vec![false; slots.len()];
    // Nesting depth of each graph below its root (a root is 0), checked as the tree is found.
    let mut depth = vec![0usize; slots.len()];
    let mut roots = Vec::new();
    for r in 0..slots.len() {
        if taken[r] {
            continue;
        }
        taken[r] = true;
        // Discover subgraphs breadth first.
        let mut found: Vec<usize> = Vec::new();
        let mut queue: Vec<usize> = vec![r];
        let mut head = 0;
        while head < queue.len() {
            let gi = queue[head];
            head += 1;
            let g = slots[gi]
                .as_ref()
                .ok_or_else(|| ProtoError::invalid(format!("graph[{gi}]"), "graph used twice"))?;
            let mut links: Vec<(usize, NodeId)> = Vec::new();
            for id in g.node_ids() {
                let op = g
                    .op(id)
                    .map_err(|e| ProtoError::invalid("", e.to_string()))?;
                for inst in op
                    .subgraph_instance_names()
                    .iter()
                    .filter(|s| !s.is_empty())
                {
                    let si = *by_name.get(inst).ok_or_else(|| {
                        ProtoError::invalid(
                            format!("graph[{gi}].op({}).subgraph_name", op.name()),
                            format!("missing subgraph '{inst}'"),
                        )
                    })?;
                    if taken[si] {
                        return Err(ProtoError::invalid(
                            format!("graph[{gi}].op({}).subgraph_name", op.name()),
                            format!("subgraph '{inst}' is referenced twice (or is a root)"),
                        ));
                    }
                    taken[si] = true;
                    links.push((si, id));
                }
            }
            let parent_name = g.name().to_string();
            let sub_depth = depth[gi] + 1;
            if !links.is_empty() && sub_depth > MAX_SUBGRAPH_DEPTH {
                return Err(ProtoError::invalid(
                    format!("graph[{gi}]"),
                    format!(
                        "subgraphs nested more than {MAX_SUBGRAPH_DEPTH} levels deep (graph '{parent_name}' is at depth {})",
                        depth[gi]
                    ),
                ));
            }
            for (si, id) in links {
                depth[si] = sub_depth;
                if let Some(sub) = slots[si].as_mut() {
                    sub.parent = Some(ParentLink {
                        graph: parent_name.clone(),
                        node: id,
                    });
                }
                found.push(si);
                queue.push(si);
            }
        }
        found.sort_unstable();
        let mut root = slots[r]
            .take()
            .ok_or_else(|| ProtoError::invalid(format!("graph[{r}]"), "graph used twice"))?;
        for si in found {
            if let Some(sub) = slots[si].take() {
                root.subgraphs.push(sub);
            }
        }
        roots.push(root);
    }
    Ok(Model {
        meta: ModelMeta {
            name,
            version,
            custom_version,
            attrs,
        },
        graphs: roots,
    })
}

// ---------------------------------------------------------------------------------------------
// Attribute maps straight from the wire
// ---------------------------------------------------------------------------------------------

/// OpDef attribute keys that `attr_section` reads itself (decoded as prost messages).
const OP_RESERVED: &[&str] = &[
    INPUT_NAME_KEY,
    INPUT_NAME_VALUE,
    OUTPUT_NAME_KEY,
    OUTPUT_NAME_VALUE,
    LEGACY_INPUT_NAME_KEY,
    LEGACY_INPUT_NAME_VALUE,
    LEGACY_OUTPUT_NAME_KEY,
    LEGACY_OUTPUT_NAME_VALUE,
    OPT_INPUT,
    IR_ATTR_NAMES,
    IR_INPUTS_KEY,
    IR_INPUTS_VALUE,
    IR_OUTPUTS_KEY,
    IR_OUTPUTS_VALUE,
    ASC_SUBGRAPH_IR_NAMES,
    ASC_SUBGRAPH_IR_TYPES,
    ASC_IN_CTRL,
    ASC_CTRL_TO_DATA,
    ASC_FANOUT,
];

/// A reserved attribute entry, left encoded: its name and the byte ranges of the whole map
/// entry field and of its `AttrDef`.
struct ReservedEntry<'a> {
    key: &'a str,
    entry: (usize, usize),
    value: (usize, usize),
}

/// The reserved entries as prost messages, in wire order (a later entry of a name replaces an
/// earlier one); `None` when one does not decode.
fn decode_reserved(
    entries: &Bytes,
    reserved: &[ReservedEntry],
) -> Option<BTreeMap<String, pb::AttrDef>> {
    let mut map = BTreeMap::new();
    for r in reserved {
        let value = entries.slice(r.value.0..r.value.1);
        let d = <pb::AttrDef as prost::Message>::decode(value).ok()?;
        map.insert(r.key.to_string(), d);
    }
    Some(map)
}

impl DirectAttrs<'_> {
    /// Record the unknown `AttrDef` fields of entry `key` (a later entry of a key replaces
    /// the earlier one's).
    #[inline(always)]
    fn note_unknown(&mut self, key: &str, unknown: Vec<u8>) {
        // Almost always there is nothing to record and nothing to replace.
        if !self.unknown.is_empty() || !unknown.is_empty() {
            self.replace_unknown(key, unknown);
        }
    }

    #[cold]
    fn replace_unknown(&mut self, key: &str, unknown: Vec<u8>) {
        self.unknown.retain(|(k, _)| k != key);
        if !unknown.is_empty() {
            self.unknown.push((key.to_string(), unknown));
        }
    }
}

/// Attribute entries read straight from the wire.
struct DirectAttrs<'a> {
    /// Reserved keys, still encoded (for the caller's own reading).
    reserved: SmallVec<[ReservedEntry<'a>; 4]>,
    /// Every other key, decoded.
    user: AttrMap,
    /// Keys whose `AttrDef` carried unknown fields, with those fields.
    unknown: Vec<(String, Vec<u8>)>,
}

/// Decoded attribute entries by their encoding (the map entry: name and `AttrDef`), so that
/// every distinct entry met by one decoding thread is decoded once and its repeats share it.
/// Entries with unknown fields or without a value are not kept (they are rare). One cache per
/// kind of map (op or desc attributes): which keys are reserved depends on it.
#[derive(Default)]
struct EntryCache<'s>(ByteCache<&'s [u8], CachedEntry>);

/// What an attribute entry's encoding was found to be.
enum CachedEntry {
    /// A user attribute, decoded.
    User(Arc<AttrEntry>),
    /// A reserved key (left encoded for the caller) whose `AttrDef` is `len` bytes at offset
    /// `at` of the entry's encoding.
    Reserved {
        key: &'static str,
        at: usize,
        len: usize,
    },
}

/// Decode a run of `map<string, AttrDef>` entries (field `field`, nothing else in `entries`).
/// `Ok(None)` when the entries need the full decoder (malformed bytes, unusual entry layout);
/// that is decided before any value is converted, so nothing is converted twice. Conversion
/// errors name the attribute as the full decoder does.
fn attrs_direct<'s>(
    entries: &'s Bytes,
    (start, end): (usize, usize),
    field: u32,
    reserved: &[&'static str],
    fast_only: bool,
    cache: &mut EntryCache<'s>,
) -> ProtoResult<Option<DirectAttrs<'s>>> {
    // Offsets are in `entries` (the op's bytes), the run of entries being `start..end` of it.
    let Some(data) = entries.get(..end) else {
        return Ok(None);
    };
    // One pass in wire order (a later entry of a key replaces an earlier one). The first
    // conversion error is kept, not returned, until every entry has been read: malformed bytes
    // after it still send the whole map to the full decoder, which then names the problem.
    let mut out = DirectAttrs {
        reserved: SmallVec::new(),
        user: AttrMap::with_capacity(end.saturating_sub(start) / 24 + 1),
        unknown: Vec::new(),
    };
    let mut failed: Option<ProtoError> = None;
    let mut pos = start;
    while pos < end {
        let Some(f) = crate::wire::next_field(data, &mut pos) else {
            return Ok(None);
        };
        if f.number != field || f.wire_type != 2 {
            return Ok(None);
        }
        let encoding = &data[f.value_start..f.end];
        let hash = hash_bytes(encoding);
        match cache.0.get(hash, encoding) {
            Some(CachedEntry::User(e)) => {
                out.note_unknown(e.key(), Vec::new());
                out.user.insert_entry(e.clone());
                continue;
            }
            Some(&CachedEntry::Reserved { key, at, len }) => {
                out.note_unknown(key, Vec::new());
                let vs = f.value_start + at;
                out.reserved.push(ReservedEntry {
                    key,
                    entry: (f.start, f.end),
                    value: (vs, vs + len),
                });
                continue;
            }
            None => {}
        }
        let entry = &data[..f.end];
        let mut key: &[u8] = b"";
        let mut val: Option<(usize, usize)> = None;
        let mut p = f.value_start;
        while p < f.end {
            let Some(e) = crate::wire::next_field(entry, &mut p) else {
                return Ok(None);
            };
            match (e.number, e.wire_type) {
                (1, 2) => key = &data[e.value_start..e.end],
                (2, 2) if val.is_none() => val = Some((e.value_start, e.end)),
                _ => return Ok(None),
            }
        }
        let Some(key) = crate::wire::utf8(key) else {
            return Ok(None);
        };
        // The value stays a borrowed range: a `Bytes` slice (a shared reference count that
        // every worker thread would touch) is made only for a bytes value or the prost path.
        let (vs, ve) = val.unwrap_or((0, 0));
        if let Some(&key) = reserved.iter().find(|r| **r == key) {
            // Decoded by the caller (once per distinct set of reserved entries); the unknown
            // fields are read here, which also checks the value's framing.
            let u = crate::wire::unknown_fields(&data[vs..ve], crate::wire::ATTR_DEF_FIELDS);
            if u.is_empty() && val.is_some() {
                let found = CachedEntry::Reserved {
                    key,
                    at: vs - f.value_start,
                    len: ve - vs,
                };
                cache.0.insert(hash, encoding, found);
            }
            out.note_unknown(key, u);
            out.reserved.push(ReservedEntry {
                key,
                entry: (f.start, f.end),
                value: (vs, ve),
            });
            continue;
        }
        let value = match fast_attr(entries, vs, ve) {
            Some((Some(v), u)) if u.is_empty() => {
                let e = Arc::new(AttrEntry::new(key, v));
                cache.0.insert(hash, encoding, CachedEntry::User(e.clone()));
                out.note_unknown(key, u);
                out.user.insert_entry(e);
                continue;
            }
            Some((v, u)) => {
                out.note_unknown(key, u);
                v
            }
            None if fast_only => return Ok(None),
            None => {
                let vb = entries.slice(vs..ve);
                let Ok(d) = <pb::AttrDef as prost::Message>::decode(vb.clone()) else {
                    return Ok(None);
                };
                out.note_unknown(
                    key,
                    crate::wire::unknown_fields(&vb, crate::wire::ATTR_DEF_FIELDS),
                );
                if failed.is_some() {
                    continue;
                }
                match attr_from_def(d) {
                    Ok(v) => v,
                    Err(e) => {
                        failed = Some(e.within(|| format!("attr[{key:?}]")));
                        continue;
                    }
                }
            }
        };
        match value {
            Some(v) => {
                out.user.insert(key, v);
            }
            None => {
                out.user.remove(key);
            }
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(Some(out)),
    }
}

fn utf8_string(b: &[u8]) -> Option<String> {
    crate::wire::utf8(b).map(str::to_string)
}

/// One `AttrDef` (bytes `start..end` of `entries`) of a common kind (scalars, scalar lists) with
/// its unknown fields; `None` for the others (the full decoder handles them).
fn fast_attr(entries: &Bytes, start: usize, end: usize) -> Option<(Option<AttrValue>, Vec<u8>)> {
    let data: &[u8] = entries.get(start..end)?;
    let mut val: Option<Option<AttrValue>> = None;
    let mut unknown = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        let v = f.varint;
        let body = &data[f.value_start..f.end];
        let got = match (f.number, f.wire_type) {
            (2, 2) => Some(AttrValue::String(utf8_string(body)?)),
            (3, 0) => Some(AttrValue::Int(v as i64)),
            (4, 5) => Some(AttrValue::Float(f32::from_le_bytes(body.try_into().ok()?))),
            (5, 0) => Some(AttrValue::Bool(v != 0)),
            (7, 2) => Some(AttrValue::Bytes(
                entries.slice(start + f.value_start..start + f.end),
            )),
            (15, 0) => Some(AttrValue::DataType(DataType::from_ge(v as i64)?)),
            (17, 2) => Some(AttrValue::Expression(utf8_string(body)?)),
            (1, 2) => fast_list(body)?,
            (14, 2) => Some(AttrValue::ListListInt(fast_list_list(
                body,
                |b, out| {
                    let mut p = 0usize;
                    while p < b.len() {
                        out.push(crate::wire::varint(b, &mut p)? as i64);
                    }
                    Some(())
                },
                |v, out| {
                    out.push(v as i64);
                    Some(())
                },
            )?)),
            (16, 2) => Some(AttrValue::ListListFloat(fast_list_list(
                body,
                |b, out| {
                    if b.len() % 4 != 0 {
                        return None;
                    }
                    out.extend(
                        b.chunks_exact(4)
                            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    );
                    Some(())
                },
                |_, _| None,
            )?)),
            (n, _) if crate::wire::ATTR_DEF_FIELDS.contains(&n) => return None,
            _ => {
                unknown.extend_from_slice(&data[f.start..f.end]);
                continue;
            }
        };
        if val.is_some() {
            return None;
        }
        val = Some(got);
    }
    Some((val.flatten(), unknown))
}

/// A `ListListInt` / `ListListFloat`: field 1 repeated, each a message whose field 1 is the
/// list (`packed` reads a packed run, `one` a single varint; floats come as fixed32 too).
fn fast_list_list<T>(
    data: &[u8],
    packed: impl Fn(&[u8], &mut Vec<T>) -> Option<()>,
    one: impl Fn(u64, &mut Vec<T>) -> Option<()>,
) -> Option<Vec<Vec<T>>>
where
    T: FromFixed32,
{
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        match (f.number, f.wire_type) {
            (1, 2) => {
                let inner = &data[f.value_start..f.end];
                let mut list = Vec::new();
                let mut p = 0usize;
                while p < inner.len() {
                    let e = crate::wire::next_field(inner, &mut p)?;
                    match (e.number, e.wire_type) {
                        (1, 2) => packed(&inner[e.value_start..e.end], &mut list)?,
                        (1, 0) => one(e.varint, &mut list)?,
                        (1, 5) => list.push(T::from_fixed32(&inner[e.value_start..e.end])?),
                        (1, _) => return None,
                        _ => {}
                    }
                }
                out.push(list);
            }
            (1, _) => return None,
            _ => {}
        }
    }
    Some(out)
}

/// Element types of the list-of-lists attributes read from fixed32 values.
trait FromFixed32: Sized {
    fn from_fixed32(b: &[u8]) -> Option<Self>;
}

impl FromFixed32 for i64 {
    // An int64 list never holds fixed32 values: the full decoder rejects them.
    fn from_fixed32(_: &[u8]) -> Option<Self> {
        None
    }
}

impl FromFixed32 for f32 {
    fn from_fixed32(b: &[u8]) -> Option<Self> {
        Some(f32::from_le_bytes(b.try_into().ok()?))
    }
}

/// The number of varints in a packed run (bytes without the continuation bit), to size the list
/// once.
fn varint_count(packed: &[u8]) -> usize {
    packed.iter().filter(|&&b| b < 0x80).count()
}

/// A `ListValue` of scalars: `Some(None)` for an untyped list (GE skips it), `None` when the
/// full decoder is needed.
fn fast_list(data: &[u8]) -> Option<Option<AttrValue>> {
    let mut s: Vec<&[u8]> = Vec::new();
    let mut i: Vec<i64> = Vec::new();
    let mut fl: Vec<f32> = Vec::new();
    let mut b: Vec<bool> = Vec::new();
    let mut dt: Vec<i64> = Vec::new();
    let mut vt: i32 = 0;
    let mut pos = 0usize;
    while pos < data.len() {
        let f = crate::wire::next_field(data, &mut pos)?;
        let v = f.varint;
        let body = &data[f.value_start..f.end];
        match (f.number, f.wire_type) {
            (2, 2) => s.push(body),
            (3, 0) => i.push(v as i64),
            (12, 0) => dt.push(v as i64),
            (3 | 12, 2) => {
                let list = if f.number == 3 { &mut i } else { &mut dt };
                list.reserve(varint_count(body));
                let mut p = 0usize;
                while p < body.len() {
                    list.push(crate::wire::varint(body, &mut p)? as i64);
                }
            }
            (4, 5) => fl.push(f32::from_le_bytes(body.try_into().ok()?)),
            (4, 2) => {
                if body.len() % 4 != 0 {
                    return None;
                }
                fl.extend(
                    body.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
            }
            (5, 0) => b.push(v != 0),
            (5, 2) => {
                b.reserve(varint_count(body));
                let mut p = 0usize;
                while p < body.len() {
                    b.push(crate::wire::varint(body, &mut p)? != 0);
                }
            }
            (20, 0) => vt = v as i32,
            // Bytes, descs, tensors, graphs, named attrs, or a wrong wire type.
            (7 | 8 | 9 | 10 | 11 | 2 | 3 | 4 | 5 | 12 | 20, _) => return None,
            _ => {}
        }
    }
    Some(match Vt::try_from(vt).unwrap_or(Vt::VtListNone) {
        Vt::VtListNone => None,
        Vt::VtListString => Some(AttrValue::ListString(
            s.into_iter().map(utf8_string).collect::<Option<_>>()?,
        )),
        Vt::VtListInt => Some(AttrValue::ListInt(i)),
        Vt::VtListFloat => Some(AttrValue::ListFloat(fl)),
        Vt::VtListBool => Some(AttrValue::ListBool(b)),
        Vt::VtListDataType => Some(AttrValue::ListDataType(
            dt.into_iter()
                .map(DataType::from_ge)
                .collect::<Option<_>>()?,
        )),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Attribute maps straight to the wire
// ---------------------------------------------------------------------------------------------

/// The encoding of `attr_to_def(value)`, written without building the message for the common
/// kinds (the same bytes as prost writes).
fn encode_attr_value(value: &AttrValue, out: &mut Vec<u8>) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let list = |out: &mut Vec<u8>, vt: Vt, body: &dyn Fn(&mut Vec<u8>)| {
        put_nested(1, out, |l| {
            body(l);
            encode_key(20, WireType::Varint, l);
            encode_varint(vt as u64, l);
        })
    };
    match value {
        AttrValue::Int(i) => {
            encode_key(3, WireType::Varint, out);
            encode_varint(*i as u64, out);
        }
        AttrValue::Float(f) => {
            encode_key(4, WireType::ThirtyTwoBit, out);
            out.extend_from_slice(&f.to_le_bytes());
        }
        AttrValue::Bool(b) => {
            encode_key(5, WireType::Varint, out);
            encode_varint(u64::from(*b), out);
        }
        AttrValue::String(s) => put_len_delimited(2, s.as_bytes(), out),
        AttrValue::Bytes(b) => put_len_delimited(7, b, out),
        AttrValue::Expression(s) => put_len_delimited(17, s.as_bytes(), out),
        AttrValue::DataType(d) => {
            encode_key(15, WireType::Varint, out);
            encode_varint(i64::from(d.ge_value()) as u64, out);
        }
        AttrValue::ListInt(x) => list(out, Vt::VtListInt, &|l| {
            put_packed_varints(3, x.iter().map(|&v| v as u64), l)
        }),
        AttrValue::ListFloat(x) => list(out, Vt::VtListFloat, &|l| put_packed_floats(4, x, l)),
        AttrValue::ListBool(x) => list(out, Vt::VtListBool, &|l| {
            put_packed_varints(5, x.iter().map(|&v| u64::from(v)), l)
        }),
        AttrValue::ListString(x) => list(out, Vt::VtListString, &|l| {
            for s in x {
                put_len_delimited(2, s.as_bytes(), l);
            }
        }),
        AttrValue::ListBytes(x) => list(out, Vt::VtListBytes, &|l| {
            for b in x {
                put_len_delimited(7, b, l);
            }
        }),
        AttrValue::ListDataType(x) => list(out, Vt::VtListDataType, &|l| {
            put_packed_varints(12, x.iter().map(|d| i64::from(d.ge_value()) as u64), l)
        }),
        other => prost::Message::encode_raw(&attr_to_def(other)?, out),
    }
    Ok(())
}

/// Write the attribute map of a message (field `field`): `user` (minus `skip` and our private
/// keys) merged with `generated` entries (which replace user entries of the same key), in key
/// order as prost writes a map; then the entries of attributes with unknown `AttrDef` fields
/// and the message's own unknown fields (from `user`), which the caller writes after the
/// message's other fields: returned separately.
fn encode_attr_map(
    user: &AttrMap,
    generated: &GenAttrs,
    skip: &[&str],
    field: u32,
    enc: &mut EntryEncodings,
    out: &mut Vec<u8>,
) -> ProtoResult<Vec<u8>> {
    let unknown_attrs = match user.get(ASC_ATTR_UNKNOWN) {
        Some(AttrValue::NamedAttrs(na)) => Some(&na.attrs),
        _ => None,
    };
    // Our keys share a prefix: most names are told apart from them by it alone.
    let ours = |k: &str| k.starts_with(ASC_PREFIX);
    debug_assert!(skip.iter().all(|k| ours(k)));
    let private = |k: &str| {
        (ours(k) && (skip.contains(&k) || k == ASC_UNKNOWN || k == ASC_ATTR_UNKNOWN))
            || unknown_attrs.is_some_and(|u| u.contains_key(k))
    };
    let mut value = Vec::new();
    let write = |key: &str, value: &[u8], out: &mut Vec<u8>| {
        use crate::write::{encode_key, encode_varint};
        use prost::encoding::{encoded_len_varint, WireType};
        let key_len = if key.is_empty() {
            0
        } else {
            1 + encoded_len_varint(key.len() as u64) + key.len()
        };
        let len = key_len + 1 + encoded_len_varint(value.len() as u64) + value.len();
        encode_key(field, WireType::LengthDelimited, out);
        encode_varint(len as u64, out);
        if !key.is_empty() {
            put_len_delimited(1, key.as_bytes(), out);
        }
        put_len_delimited(2, value, out);
    };
    let mut u = user
        .entries()
        .iter()
        .filter(|e| !private(e.key()))
        .peekable();
    let sorted = generated.sorted();
    let mut gi = sorted
        .iter()
        .filter(|(k, _)| !unknown_attrs.is_some_and(|u| u.contains_key(k)))
        .peekable();
    loop {
        let take_user = match (u.peek(), gi.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(e), Some((gk, _))) => e.key() < *gk,
        };
        value.clear();
        if take_user {
            let Some(e) = u.next() else { break };
            enc.write(e, field, out)?;
        } else {
            let Some((k, d)) = gi.next() else { break };
            if u.peek().is_some_and(|e| e.key() == *k) {
                u.next();
            }
            write(k, d, out);
        }
    }
    // Attributes with unknown AttrDef fields, then the message's unknown fields.
    let mut extra = Vec::new();
    if let Some(list) = unknown_attrs {
        for (k, v) in list {
            let AttrValue::Bytes(unknown) = v else {
                continue;
            };
            value.clear();
            match (generated.get(k), user.get(k)) {
                (Some(d), _) => value.extend_from_slice(d),
                (None, Some(v)) if !skip.contains(&k) => encode_attr_value(v, &mut value)
                    .map_err(|e| e.within(|| format!("attr[{k:?}]")))?,
                _ => {}
            }
            value.extend_from_slice(unknown);
            let mut entry = Vec::with_capacity(k.len() + value.len() + 8);
            put_len_delimited(1, k.as_bytes(), &mut entry);
            put_len_delimited(2, &value, &mut entry);
            put_len_delimited(field, &entry, &mut extra);
        }
    }
    if let Some(AttrValue::Bytes(b)) = user.get(ASC_UNKNOWN) {
        extra.extend_from_slice(b);
    }
    Ok(extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn list_def(f: impl FnOnce(&mut pb::attr_def::ListValue)) -> Vec<u8> {
        let mut l = pb::attr_def::ListValue::default();
        f(&mut l);
        pb::AttrDef {
            value: Some(V::List(l)),
        }
        .encode_to_vec()
    }

    #[test]
    fn int_lists_read_apart_as_the_general_reader_reads_them() {
        let unpacked_key = |n: u8| vec![(3 << 3) as u8, n]; // ListValue.i, one varint
        let mut cases = vec![
            list_def(|l| {
                l.i = vec![1, 3, 224, 224];
                l.val_type = Vt::VtListInt as i32;
            }),
            list_def(|l| {
                l.i = vec![-1, 0, 1 << 40];
                l.val_type = Vt::VtListInt as i32;
            }),
            list_def(|l| l.val_type = Vt::VtListInt as i32),
            list_def(|l| l.i = vec![1, 2]),
            list_def(|l| {
                l.i = vec![1, 2];
                l.val_type = Vt::VtListFloat as i32;
            }),
            list_def(|l| {
                l.i = vec![4];
                l.s = vec![b"x".to_vec().into()];
                l.val_type = Vt::VtListInt as i32;
            }),
        ];
        // Unpacked ints and a val_type of int lists, written by hand.
        let mut list = unpacked_key(5);
        list.extend(unpacked_key(6));
        list.extend([(20 << 3) as u8, Vt::VtListInt as u8]);
        let mut def = vec![(1 << 3 | 2) as u8, list.len() as u8];
        def.extend(list);
        cases.push(def);
        for def in cases {
            let bytes = Bytes::from(def.clone());
            let general = match fast_attr(&bytes, 0, bytes.len()) {
                Some((Some(AttrValue::ListInt(v)), u)) if u.is_empty() => Some(v),
                _ => None,
            };
            if let Some(dims) = int_list_dims(&def) {
                assert_eq!(Some(dims.to_vec()), general, "{def:?}");
            }
        }
        let typical = list_def(|l| {
            l.i = vec![1, 3, 224, 224];
            l.val_type = Vt::VtListInt as i32;
        });
        assert_eq!(
            int_list_dims(&typical).map(|d| d.to_vec()),
            Some(vec![1, 3, 224, 224])
        );
    }
}
