//! The ascendir graph IR (GE's AscendIR model): a compute graph of nodes whose operator
//! descriptors carry named ports with tensor descriptors, linked through anchors.
//!
//! Storage follows the arena pattern: nodes live in a generational slot map (`NodeId`), their
//! anchors' peer lists inline in the node record, the node order in a separate linked list.
#![deny(missing_docs)]

pub mod anchor;
pub mod attr;
pub mod attr_map;
pub mod diff;
pub mod dtype;
pub mod dump;
pub mod dump_read;
pub mod edit;
pub mod error;
pub mod format;
pub mod graph;
pub mod infer;
pub mod instantiate;
pub mod intern;
pub mod memory;
pub mod op_desc;
pub mod pattern;
pub mod prune;
pub mod registry;
pub mod subgraph;
pub mod tensor;
pub mod threads;
pub mod topo;
pub mod uses;
pub mod verify;
mod wire_support;

pub use anchor::{Anchor, InAnchor, OutAnchor, CONTROL};
pub use attr::{AttrKind, AttrValue, GraphAttr, NamedAttrs};
pub use attr_map::{AttrEntry, AttrMap};
pub use dtype::{checked_size_in_bytes, size_in_bytes, DataType};
pub use error::{IrError, IrResult};
pub use format::Format;
pub use graph::{Graph, NodeData, NodeId, ParentLink};
pub use op_desc::{IrInputType, IrOutputType, OpDesc, OpMeta, Port, Side, SubgraphType, Sym};
pub use tensor::{DeviceType, ExtMeta, Shape, Tensor, TensorDesc};
pub use topo::{TopoMode, TopoOptions, TopoSorter};
