//! `Graph.remove`, `Graph.eliminate_dead_code` and `Graph.bypass`: removing nodes as a pass
//! does (in any graph of a tree; the subgraphs below a removed node go with it).

use pyo3::prelude::*;

use super::graph::PyGraph;
use super::node::PyNode;
use crate::algo::{root_of, tree_index};

#[pymethods]
impl PyGraph {
    /// Remove `nodes` together; returns their names. With `safe` (the default), refuses while
    /// an output of a removed node is read outside the set or is a graph output; without it,
    /// the outside readers lose those inputs. All or nothing.
    #[pyo3(signature = (nodes, safe=true))]
    fn remove(
        slf: &Bound<'_, Self>,
        nodes: Vec<Bound<'_, PyAny>>,
        safe: bool,
    ) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            let ids = nodes
                .iter()
                .map(|n| PyNode::extract_id(slf, n))
                .collect::<PyResult<Vec<_>>>()?;
            let (root, name) = root_of(slf)?;
            let owner = tree_index(&root, &name)?;
            PyGraph::try_write(&root, |g| g.remove_tree_nodes(owner, &ids, safe))
        })
    }

    /// Remove every node nothing live depends on (live: graph outputs, NetOutput, targets,
    /// inputs, nodes without outputs or with effects, and what they read); returns their names
    /// in graph order.
    fn eliminate_dead_code(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            let (root, name) = root_of(slf)?;
            let owner = tree_index(&root, &name)?;
            PyGraph::try_write(&root, |g| g.eliminate_tree_dead_code(owner))
        })
    }

    /// Every use of `node`'s output (and a graph output naming it) reads the producer of its
    /// input `input` instead, and `node` is removed. All or nothing.
    #[pyo3(signature = (node, input=0))]
    fn bypass(slf: &Bound<'_, Self>, node: &Bound<'_, PyAny>, input: usize) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let id = PyNode::extract_id(slf, node)?;
            let (root, name) = root_of(slf)?;
            let owner = tree_index(&root, &name)?;
            PyGraph::try_write(&root, |g| g.bypass_tree_node(owner, id, input))
        })
    }
}
