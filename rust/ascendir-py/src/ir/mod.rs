//! Bindings of the graph IR: graphs, nodes, anchors, op descs, tensor descs, tensors, attributes.

use pyo3::prelude::*;

pub mod anchor;
pub mod attrs;
pub mod convert;
mod diff;
pub mod graph;
pub mod graph_api;
pub mod graph_edit;
mod graph_prune;
pub mod node;
pub mod op_desc;
mod op_desc_ports;
pub mod pattern;
pub mod tensor;
mod tensor_list;
pub mod types;
pub mod value;

/// Register the IR classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<node::PyNode>()?;
    m.add_class::<anchor::PyAnchor>()?;
    m.add_class::<value::PyValue>()?;
    m.add_class::<value::PyUsage>()?;
    m.add_class::<graph_edit::PyInsertionPoint>()?;
    m.add_class::<op_desc::PyOpDesc>()?;
    m.add_class::<pattern::PyPatternSet>()?;
    m.add_class::<tensor::PyTensorDesc>()?;
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<tensor::TensorBuffer>()?;
    m.add_class::<attrs::PyAttrMap>()?;
    types::register(m)?;
    diff::register(m)?;
    Ok(())
}
