//! Conversion between ascendir graphs and `ge.proto` messages.
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
use ascendir_ir::threads;
use ascendir_ir::{
    AttrEntry, AttrMap, AttrValue, DataType, Graph, GraphAttr, InAnchor, NamedAttrs, NodeId,
    OpDesc, OutAnchor, ParentLink, Tensor, TensorDesc,
};
use bytes::Bytes;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::byte_cache::{hash_bytes, ByteCache};
use crate::error::{ProtoError, ProtoResult};
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

mod attr_values;
mod decode;
mod desc;
mod encode;
mod lossless;
mod model;

pub use attr_values::*;
pub use decode::*;
pub use desc::*;
pub use encode::*;
pub(crate) use lossless::*;
pub use model::*;
