//! Attribute values: one enum for every GE `AttrDef` kind, and the ordered map that holds them.

use std::sync::Arc;

use bytes::Bytes;

use crate::dtype::DataType;
use crate::graph::Graph;
use crate::tensor::{Tensor, TensorDesc};

/// The kind of an attribute value, numbered as GE's `AnyValue::ValueType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
#[allow(missing_docs)]
pub enum AttrKind {
    String = 1,
    Float = 2,
    Bool = 3,
    Int = 4,
    TensorDesc = 5,
    Tensor = 6,
    Bytes = 7,
    Graph = 8,
    NamedAttrs = 9,
    ListListInt = 10,
    DataType = 11,
    ListListFloat = 12,
    Expression = 13,
    ListString = 1001,
    ListFloat = 1002,
    ListBool = 1003,
    ListInt = 1004,
    ListTensorDesc = 1005,
    ListTensor = 1006,
    ListBytes = 1007,
    ListGraph = 1008,
    ListNamedAttrs = 1009,
    ListDataType = 1011,
}

impl AttrKind {
    /// Every kind, for tables and tests.
    pub const ALL: &'static [AttrKind] = &[
        AttrKind::String,
        AttrKind::Float,
        AttrKind::Bool,
        AttrKind::Int,
        AttrKind::TensorDesc,
        AttrKind::Tensor,
        AttrKind::Bytes,
        AttrKind::Graph,
        AttrKind::NamedAttrs,
        AttrKind::ListListInt,
        AttrKind::DataType,
        AttrKind::ListListFloat,
        AttrKind::Expression,
        AttrKind::ListString,
        AttrKind::ListFloat,
        AttrKind::ListBool,
        AttrKind::ListInt,
        AttrKind::ListTensorDesc,
        AttrKind::ListTensor,
        AttrKind::ListBytes,
        AttrKind::ListGraph,
        AttrKind::ListNamedAttrs,
        AttrKind::ListDataType,
    ];

    /// The upper-case name used by the Python `AttrKind` enum (`LIST_INT`).
    pub fn name(self) -> &'static str {
        match self {
            AttrKind::String => "STRING",
            AttrKind::Float => "FLOAT",
            AttrKind::Bool => "BOOL",
            AttrKind::Int => "INT",
            AttrKind::TensorDesc => "TENSOR_DESC",
            AttrKind::Tensor => "TENSOR",
            AttrKind::Bytes => "BYTES",
            AttrKind::Graph => "GRAPH",
            AttrKind::NamedAttrs => "NAMED_ATTRS",
            AttrKind::ListListInt => "LIST_LIST_INT",
            AttrKind::DataType => "DATA_TYPE",
            AttrKind::ListListFloat => "LIST_LIST_FLOAT",
            AttrKind::Expression => "EXPRESSION",
            AttrKind::ListString => "LIST_STRING",
            AttrKind::ListFloat => "LIST_FLOAT",
            AttrKind::ListBool => "LIST_BOOL",
            AttrKind::ListInt => "LIST_INT",
            AttrKind::ListTensorDesc => "LIST_TENSOR_DESC",
            AttrKind::ListTensor => "LIST_TENSOR",
            AttrKind::ListBytes => "LIST_BYTES",
            AttrKind::ListGraph => "LIST_GRAPH",
            AttrKind::ListNamedAttrs => "LIST_NAMED_ATTRS",
            AttrKind::ListDataType => "LIST_DATA_TYPE",
        }
    }

    /// The kind numbered `value`.
    pub fn from_value(value: i64) -> Option<Self> {
        AttrKind::ALL.iter().copied().find(|k| *k as i64 == value)
    }
}

/// A named bag of attributes (GE `NamedAttrs`, the `func` field of `AttrDef`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamedAttrs {
    /// The bag's name.
    pub name: String,
    /// Its attributes.
    pub attrs: AttrMap,
}

/// A graph stored as an attribute value. GE snapshots the graph when it is set, so the value is
/// an immutable shared graph; equality is identity of that snapshot.
#[derive(Clone, Debug)]
pub struct GraphAttr(pub Arc<Graph>);

impl PartialEq for GraphAttr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// One attribute value. The variant is the attribute's kind and is kept exactly.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum AttrValue {
    Int(i64),
    Float(f32),
    Bool(bool),
    String(String),
    /// A GE string (`AttrDef.s`, a `bytes` field of `ge_ir.proto`) whose bytes are not valid
    /// UTF-8: kept as read, written back as the same `s` field. Its kind is `String`.
    RawString(Bytes),
    Bytes(Bytes),
    TensorDesc(Arc<TensorDesc>),
    Tensor(Tensor),
    Graph(GraphAttr),
    NamedAttrs(Box<NamedAttrs>),
    DataType(DataType),
    Expression(String),
    ListInt(Vec<i64>),
    ListFloat(Vec<f32>),
    ListBool(Vec<bool>),
    ListString(Vec<String>),
    ListBytes(Vec<Bytes>),
    ListTensorDesc(Vec<Arc<TensorDesc>>),
    ListTensor(Vec<Tensor>),
    ListGraph(Vec<GraphAttr>),
    ListNamedAttrs(Vec<NamedAttrs>),
    ListDataType(Vec<DataType>),
    ListListInt(Vec<Vec<i64>>),
    ListListFloat(Vec<Vec<f32>>),
}

impl AttrValue {
    /// The kind of this value.
    pub fn kind(&self) -> AttrKind {
        match self {
            AttrValue::Int(_) => AttrKind::Int,
            AttrValue::Float(_) => AttrKind::Float,
            AttrValue::Bool(_) => AttrKind::Bool,
            AttrValue::String(_) | AttrValue::RawString(_) => AttrKind::String,
            AttrValue::Bytes(_) => AttrKind::Bytes,
            AttrValue::TensorDesc(_) => AttrKind::TensorDesc,
            AttrValue::Tensor(_) => AttrKind::Tensor,
            AttrValue::Graph(_) => AttrKind::Graph,
            AttrValue::NamedAttrs(_) => AttrKind::NamedAttrs,
            AttrValue::DataType(_) => AttrKind::DataType,
            AttrValue::Expression(_) => AttrKind::Expression,
            AttrValue::ListInt(_) => AttrKind::ListInt,
            AttrValue::ListFloat(_) => AttrKind::ListFloat,
            AttrValue::ListBool(_) => AttrKind::ListBool,
            AttrValue::ListString(_) => AttrKind::ListString,
            AttrValue::ListBytes(_) => AttrKind::ListBytes,
            AttrValue::ListTensorDesc(_) => AttrKind::ListTensorDesc,
            AttrValue::ListTensor(_) => AttrKind::ListTensor,
            AttrValue::ListGraph(_) => AttrKind::ListGraph,
            AttrValue::ListNamedAttrs(_) => AttrKind::ListNamedAttrs,
            AttrValue::ListDataType(_) => AttrKind::ListDataType,
            AttrValue::ListListInt(_) => AttrKind::ListListInt,
            AttrValue::ListListFloat(_) => AttrKind::ListListFloat,
        }
    }

    /// The integer value, if this is an `Int`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The string value, if this is a `String`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::String(v) => Some(v),
            _ => None,
        }
    }

    /// The list of integers, if this is a `ListInt`.
    pub fn as_list_int(&self) -> Option<&[i64]> {
        match self {
            AttrValue::ListInt(v) => Some(v),
            _ => None,
        }
    }

    /// The boolean, if this is a `Bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(v) => Some(*v),
            _ => None,
        }
    }
}

pub use crate::attr_map::AttrMap;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_numbers() {
        for kind in AttrKind::ALL {
            assert_eq!(AttrKind::from_value(*kind as i64), Some(*kind));
        }
        assert_eq!(AttrValue::ListInt(vec![]).kind(), AttrKind::ListInt);
        assert_eq!(AttrKind::ListInt.name(), "LIST_INT");
    }
}
