//! The AscGraph data model: graph, size variables, axes, nodes and their output tensors.
//!
//! Nodes live in a `Vec` indexed by [`NodeId`]; an input refers to the producing output
//! ([`OutRef`]). The input view of an edge *is* the producer's output tensor.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::axis::{Axis, AxisId};
use crate::error::{invalid, not_found, AscError, AscResult};
use crate::expr::Expr;
use crate::registry::{self, OpDef};
use crate::transform::{TransInfo, Transform};

mod attrs;
mod node;
mod wiring;

pub use attrs::{
    AllocType, ApiInfo, ApiType, AttrValue, BufAttr, ComputeType, ComputeUnit, ExecCondition,
    GraphType, MemAttr, MemHardware, OptAttr, Position, QueAttr, SchedInfo,
};
pub use node::{Node, NodeAttr, Tensor, TmpBuffer};

/// A node index in its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An output of a node: `(node, output index)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OutRef {
    /// Producer.
    pub node: NodeId,
    /// Output index.
    pub index: u32,
}

/// An AscGraph (HintGraph or ImplGraph).
#[derive(Clone, Debug)]
pub struct AscGraph {
    /// Graph name.
    pub name: String,
    /// Hint or impl.
    pub graph_type: GraphType,
    /// Template key (-1 = none).
    pub tiling_key: i64,
    pub(crate) size_vars: Vec<Expr>,
    pub(crate) axes: Vec<Axis>,
    pub(crate) trans_info: Vec<TransInfo>,
    pub(crate) log: Vec<Transform>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) by_name: FxHashMap<String, NodeId>,
    pub(crate) axis_map: Vec<(AxisId, Vec<AxisId>)>,
}

impl AscGraph {
    /// An empty HintGraph.
    pub fn new(name: &str) -> AscGraph {
        AscGraph {
            name: name.to_string(),
            graph_type: GraphType::Hint,
            tiling_key: -1,
            size_vars: Vec::new(),
            axes: Vec::new(),
            trans_info: Vec::new(),
            log: Vec::new(),
            nodes: Vec::new(),
            by_name: FxHashMap::default(),
            axis_map: Vec::new(),
        }
    }

    // ----- size variables ---------------------------------------------------------------

    /// Create the symbol `name` as a size variable (error if already a size variable).
    pub fn create_size(&mut self, name: &str) -> AscResult<Expr> {
        if !is_identifier(name) {
            return invalid(format!(
                "graph '{}': size name '{name}' is not an identifier",
                self.name
            ));
        }
        if self.size_vars.iter().any(|e| e.as_sym() == Some(name)) {
            return invalid(format!(
                "graph '{}': size variable '{name}' already exists",
                self.name
            ));
        }
        let e = Expr::sym(name);
        self.size_vars.push(e.clone());
        Ok(e)
    }

    /// Create a constant size variable.
    pub fn create_size_const(&mut self, value: i64) -> Expr {
        let e = Expr::int(value);
        self.size_vars.push(e.clone());
        e
    }

    /// Size variables in creation order.
    pub fn size_vars(&self) -> &[Expr] {
        &self.size_vars
    }

    /// The size variable named `name`.
    pub fn find_size(&self, name: &str) -> Option<&Expr> {
        self.size_vars.iter().find(|e| e.as_sym() == Some(name))
    }

    // ----- axes ---------------------------------------------------------------------------

    /// Create an ORIGINAL axis (align 1); the name must be unique.
    pub fn create_axis(&mut self, name: &str, size: Expr) -> AscResult<AxisId> {
        self.check_new_axis_name(name)?;
        let id = self.axes.len() as AxisId;
        self.axes
            .push(Axis::new(id, name, crate::axis::AxisType::Original, size));
        Ok(id)
    }

    pub(crate) fn check_new_axis_name(&self, name: &str) -> AscResult<()> {
        if name.is_empty() {
            return invalid(format!(
                "graph '{}': axis name must not be empty",
                self.name
            ));
        }
        if self.axes.iter().any(|a| a.name == name) {
            return invalid(format!(
                "graph '{}': axis name '{name}' already exists",
                self.name
            ));
        }
        Ok(())
    }

    /// All axes (id == index).
    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    /// The axis with id `id` (`None` for -1 or out of range).
    pub fn find_axis(&self, id: AxisId) -> Option<&Axis> {
        if id < 0 {
            return None;
        }
        self.axes.get(id as usize)
    }

    /// Mutable axis access (for passes; keep ids equal to indices).
    pub fn axis_mut(&mut self, id: AxisId) -> AscResult<&mut Axis> {
        let name = self.name.clone();
        if id < 0 || id as usize >= self.axes.len() {
            return not_found(format!("graph '{name}': no axis with id {id}"));
        }
        Ok(&mut self.axes[id as usize])
    }

    /// The axis named `name`.
    pub fn find_axis_by_name(&self, name: &str) -> Option<&Axis> {
        self.axes.iter().find(|a| a.name == name)
    }

    pub(crate) fn axis_checked(&self, id: AxisId) -> AscResult<&Axis> {
        self.find_axis(id).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': no axis with id {id} (the graph has {} axes)",
                self.name,
                self.axes.len()
            ))
        })
    }

    /// Name of axis `id` (or `#<id>` when absent).
    pub fn axis_name(&self, id: AxisId) -> String {
        self.find_axis(id)
            .map(|a| a.name.clone())
            .unwrap_or_else(|| format!("#{id}"))
    }

    /// Record an axis correspondence (GE's `set_axis_map`).
    pub fn set_axis_map(&mut self, map: Vec<(AxisId, Vec<AxisId>)>) -> AscResult<()> {
        for (k, v) in &map {
            self.axis_checked(*k)?;
            for a in v {
                self.axis_checked(*a)?;
            }
        }
        self.axis_map = map;
        Ok(())
    }

    /// The recorded axis map.
    pub fn axis_map(&self) -> &[(AxisId, Vec<AxisId>)] {
        &self.axis_map
    }

    // ----- nodes --------------------------------------------------------------------------

    /// Add a node of prototype `op`; the name must be unique.
    pub fn add_node(&mut self, name: &str, op: Arc<OpDef>) -> AscResult<NodeId> {
        self.add_node_value(Node::new(name, op))
    }

    /// Add a node of a registered type.
    pub fn add_node_of_type(&mut self, name: &str, op_type: &str) -> AscResult<NodeId> {
        let op = registry::lookup(op_type).ok_or_else(|| {
            AscError::NotFound(format!("AscIR op type '{op_type}' is not registered"))
        })?;
        self.add_node(name, op)
    }

    /// Add a prepared node value (its inputs must be unset or refer to this graph).
    pub fn add_node_value(&mut self, node: Node) -> AscResult<NodeId> {
        if node.name.is_empty() {
            return invalid(format!(
                "graph '{}': node name must not be empty",
                self.name
            ));
        }
        if self.by_name.contains_key(&node.name) {
            return invalid(format!(
                "graph '{}': a node named '{}' already exists",
                self.name, node.name
            ));
        }
        for (i, inp) in node.inputs.iter().enumerate() {
            if let Some(r) = inp {
                self.check_outref(*r, &format!("input {i} of node '{}'", node.name))?;
            }
        }
        let id = NodeId(self.nodes.len() as u32);
        self.by_name.insert(node.name.clone(), id);
        self.nodes.push(node);
        Ok(id)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// All nodes in insertion order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Node ids in insertion order.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// The node `id`.
    pub fn node(&self, id: NodeId) -> AscResult<&Node> {
        self.nodes.get(id.index()).ok_or_else(|| {
            AscError::NotFound(format!("graph '{}': no node with id {}", self.name, id.0))
        })
    }

    /// Mutable node access.
    pub fn node_mut(&mut self, id: NodeId) -> AscResult<&mut Node> {
        let name = self.name.clone();
        self.nodes
            .get_mut(id.index())
            .ok_or_else(|| AscError::NotFound(format!("graph '{name}': no node with id {}", id.0)))
    }

    /// The node named `name`.
    pub fn find_node(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// Rename a node (unique names).
    pub fn rename_node(&mut self, id: NodeId, name: &str) -> AscResult<()> {
        if name.is_empty() {
            return invalid("node name must not be empty");
        }
        if let Some(other) = self.find_node(name) {
            if other == id {
                return Ok(());
            }
            return invalid(format!(
                "graph '{}': a node named '{name}' already exists",
                self.name
            ));
        }
        let old = self.node(id)?.name.clone();
        self.by_name.remove(&old);
        self.by_name.insert(name.to_string(), id);
        self.nodes[id.index()].name = name.to_string();
        Ok(())
    }

    /// Node ids in a topological order (stable: insertion order among ready nodes).
    pub fn topo_order(&self) -> AscResult<Vec<NodeId>> {
        let n = self.nodes.len();
        let mut indeg = vec![0usize; n];
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, node) in self.nodes.iter().enumerate() {
            for r in node.inputs.iter().flatten() {
                indeg[i] += 1;
                succ[r.node.index()].push(i);
            }
        }
        let mut ready: std::collections::BTreeSet<usize> =
            (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut out = Vec::with_capacity(n);
        while let Some(&i) = ready.iter().next() {
            ready.remove(&i);
            out.push(NodeId(i as u32));
            for &s in &succ[i] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready.insert(s);
                }
            }
        }
        if out.len() != n {
            let stuck: Vec<String> = (0..n)
                .filter(|&i| indeg[i] > 0)
                .map(|i| self.nodes[i].name.clone())
                .collect();
            return invalid(format!(
                "graph '{}' has a cycle through {}",
                self.name,
                stuck.join(", ")
            ));
        }
        Ok(out)
    }

    /// The axis transform history (GE's `trans_info_road`).
    pub fn trans_info(&self) -> &[TransInfo] {
        &self.trans_info
    }
}

/// Contiguous strides of `sizes`: suffix products, last 1.
pub fn contiguous_strides(sizes: &[Expr]) -> Vec<Expr> {
    let mut strides = vec![Expr::int(1); sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        strides[i] = Expr::mul(&strides[i + 1], &sizes[i + 1]);
    }
    strides
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}
