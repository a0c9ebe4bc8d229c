//! The AscGraph data model: graph, size variables, axes, nodes and their output tensors.
//!
//! Nodes live in a `Vec` indexed by [`NodeId`]; an input refers to the producing output
//! ([`OutRef`]). The input view of an edge *is* the producer's output tensor.

use std::collections::BTreeMap;
use std::sync::Arc;

use ascendir_ir::DataType;
use rustc_hash::FxHashMap;

use crate::axis::{Axis, AxisId};
use crate::error::{invalid, not_found, AscError, AscResult};
use crate::expr::Expr;
use crate::registry::{self, OpDef, PortKind};
use crate::transform::{TransInfo, Transform};

/// `HINT` (0) or `IMPL` (1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphType {
    /// What is computed.
    Hint = 0,
    /// How it is computed (after scheduling).
    Impl = 1,
}

macro_rules! int_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $n:expr => $s:expr),* $(,)? } default $d:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $v = $n),* }
        impl $name {
            /// From the GE number (unknown numbers give the invalid/default value).
            pub fn from_i64(v: i64) -> $name {
                match v { $($n => $name::$v,)* _ => $name::$d }
            }
            /// The GE number.
            pub fn code(self) -> i64 { self as i64 }
            /// The lower-case name used by the Python API and dumps.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $s),* }
            }
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
        }
        impl Default for $name {
            fn default() -> $name { $name::$d }
        }
    };
}

int_enum! {
    /// GE's `ComputeType`.
    ComputeType {
        /// GM → UB copy.
        Load = 0 => "load",
        /// UB → GM copy.
        Store = 1 => "store",
        /// Store with reduction.
        ReduceStore = 2 => "reduce_store",
        /// Elementwise.
        Elewise = 3 => "elewise",
        /// Broadcast.
        Broadcast = 4 => "broadcast",
        /// Reduction.
        Reduce = 5 => "reduce",
        /// Transpose.
        Transpose = 6 => "transpose",
        /// Concat.
        Concat = 7 => "concat",
        /// Gather.
        Gather = 8 => "gather",
        /// Cube (matmul).
        Cube = 9 => "cube",
        /// Split.
        Split = 10 => "split",
        /// Not a compute node (buffers).
        Invalid = 11 => "invalid",
    } default Invalid
}

impl ComputeType {
    /// Parse a Python name (`"elemwise"` is accepted for `elewise`).
    pub fn parse(s: &str) -> AscResult<ComputeType> {
        if s == "elemwise" {
            return Ok(ComputeType::Elewise);
        }
        ComputeType::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| AscError::InvalidArgument(format!("unknown compute type '{s}'")))
    }

    /// GE's API completion: the API type and compute unit of this compute type.
    pub fn api_completion(self) -> (ApiType, ComputeUnit) {
        match self {
            ComputeType::Invalid => (ApiType::Buffer, ComputeUnit::None),
            // GE records Store on MTE2 as well (sic).
            ComputeType::Load | ComputeType::Store | ComputeType::Gather => {
                (ApiType::Compute, ComputeUnit::Mte2)
            }
            ComputeType::Cube => (ApiType::Compute, ComputeUnit::Cube),
            _ => (ApiType::Compute, ComputeUnit::Vector),
        }
    }
}

int_enum! {
    /// GE's `ApiType`.
    ApiType { /// Buffer op.
        Buffer = 0 => "buffer", /// Compute op.
        Compute = 1 => "compute", /// Unset.
        Invalid = 2 => "invalid" } default Invalid
}

int_enum! {
    /// GE's `ComputeUnit`.
    ComputeUnit { /// None.
        None = 0 => "none", /// MTE1.
        Mte1 = 1 => "mte1", /// MTE2.
        Mte2 = 2 => "mte2", /// MTE3.
        Mte3 = 3 => "mte3", /// Scalar.
        Scalar = 4 => "scalar", /// Vector.
        Vector = 5 => "vector", /// Cube.
        Cube = 6 => "cube", /// Invalid.
        Invalid = 7 => "invalid" } default Invalid
}

int_enum! {
    /// GE's `ExecuteCondition`.
    ExecCondition { /// No caching.
        NoCache = 0 => "no_cache", /// Cache across a block-split fused broadcast axis.
        CacheBlockSplitFusedBroadcastAxis = 1 => "cache_block_split_fused_brc_axis", /// Cache across a block-split original broadcast axis.
        CacheBlockSplitOriginBroadcastAxis = 2 => "cache_block_split_origin_brc_axis", /// Invalid.
        Invalid = 3 => "invalid" } default NoCache
}

int_enum! {
    /// GE's `AllocType`.
    AllocType { /// Global memory.
        Global = 0 => "global", /// L1.
        L1 = 1 => "l1", /// L2.
        L2 = 2 => "l2", /// A TBuf.
        Buffer = 3 => "buffer", /// A TQue.
        Queue = 4 => "queue", /// Invalid.
        Invalid = 5 => "invalid" } default Global
}

int_enum! {
    /// GE's `MemHardware`.
    MemHardware { /// Global memory.
        Gm = 0 => "gm", /// Unified buffer.
        Ub = 1 => "ub", /// Invalid.
        Invalid = 2 => "invalid" } default Gm
}

int_enum! {
    /// GE's `Position` (TPosition).
    Position { /// GM.
        Gm = 0 => "gm", /// VECIN.
        VecIn = 1 => "vecin", /// VECOUT.
        VecOut = 2 => "vecout", /// VECCALC.
        VecCalc = 3 => "veccalc", /// Invalid.
        Invalid = 4 => "invalid" } default Gm
}

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

/// An IR attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// Integer.
    Int(i64),
    /// Float.
    Float(f64),
    /// Bool.
    Bool(bool),
    /// String.
    Str(String),
    /// Size expression.
    Expr(Expr),
    /// List of integers.
    ListInt(Vec<i64>),
    /// Data type.
    DType(DataType),
}

/// Scheduling info of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedInfo {
    /// Execution order (-1 = node order).
    pub exec_order: i64,
    /// Loop axes, outer → inner.
    pub axis: Vec<AxisId>,
    /// Innermost axis that is still a loop (-1 = unset).
    pub loop_axis: AxisId,
    /// Caching condition.
    pub exec_condition: ExecCondition,
}

impl Default for SchedInfo {
    fn default() -> SchedInfo {
        SchedInfo {
            exec_order: -1,
            axis: Vec::new(),
            loop_axis: -1,
            exec_condition: ExecCondition::NoCache,
        }
    }
}

/// API info of a node.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ApiInfo {
    /// Buffer or compute.
    pub api_type: ApiType,
    /// Compute type.
    pub compute_type: ComputeType,
    /// Hardware unit.
    pub unit: ComputeUnit,
}

/// Memory placement of a tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct MemAttr {
    /// Tensor id (-1 = unset).
    pub tensor_id: i64,
    /// Allocation kind.
    pub alloc_type: AllocType,
    /// Hardware.
    pub hardware: MemHardware,
    /// TPosition.
    pub position: Position,
    /// Reuse id (-1 = none).
    pub reuse_id: i64,
    /// Legacy buffer ids.
    pub buf_ids: Vec<i64>,
    /// Legacy name.
    pub name: String,
}

impl Default for MemAttr {
    fn default() -> MemAttr {
        MemAttr {
            tensor_id: -1,
            alloc_type: AllocType::Global,
            hardware: MemHardware::Gm,
            position: Position::Gm,
            reuse_id: -1,
            buf_ids: Vec::new(),
            name: String::new(),
        }
    }
}

/// Queue binding (TQue).
#[derive(Clone, Debug, PartialEq)]
pub struct QueAttr {
    /// Queue id (-1 = none).
    pub id: i64,
    /// Depth.
    pub depth: i64,
    /// Buffer count.
    pub buf_num: i64,
    /// Legacy name.
    pub name: String,
}

impl Default for QueAttr {
    fn default() -> QueAttr {
        QueAttr {
            id: -1,
            depth: -1,
            buf_num: -1,
            name: String::new(),
        }
    }
}

/// Buffer binding (TBuf).
#[derive(Clone, Debug, PartialEq)]
pub struct BufAttr {
    /// Buffer id (-1 = none).
    pub id: i64,
    /// Legacy name.
    pub name: String,
}

impl Default for BufAttr {
    fn default() -> BufAttr {
        BufAttr {
            id: -1,
            name: String::new(),
        }
    }
}

/// Legacy optimization attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct OptAttr {
    /// Legacy reuse id.
    pub reuse_id: i64,
    /// Referenced tensor.
    pub ref_tensor: i64,
    /// Merge scope.
    pub merge_scope: i64,
}

impl Default for OptAttr {
    fn default() -> OptAttr {
        OptAttr {
            reuse_id: -1,
            ref_tensor: -1,
            merge_scope: -1,
        }
    }
}

/// An output tensor: a view over axes plus memory attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Element type.
    pub dtype: DataType,
    /// Axis ids of the view.
    pub axis: Vec<AxisId>,
    /// Extent per axis (1 on broadcast/reduced axes).
    pub repeats: Vec<Expr>,
    /// Index step per axis (0 on broadcast/reduced axes).
    pub strides: Vec<Expr>,
    /// Axes held in UB for one API call (ImplGraph).
    pub vectorized_axis: Vec<AxisId>,
    /// UB strides of the vectorized axes.
    pub vectorized_strides: Vec<Expr>,
    /// Placement.
    pub mem: MemAttr,
    /// Queue binding.
    pub que: QueAttr,
    /// Buffer binding.
    pub buf: BufAttr,
    /// Legacy options.
    pub opt: OptAttr,
}

impl Default for Tensor {
    fn default() -> Tensor {
        Tensor {
            dtype: DataType::UNDEFINED,
            axis: Vec::new(),
            repeats: Vec::new(),
            strides: Vec::new(),
            vectorized_axis: Vec::new(),
            vectorized_strides: Vec::new(),
            mem: MemAttr::default(),
            que: QueAttr::default(),
            buf: BufAttr::default(),
            opt: OptAttr::default(),
        }
    }
}

impl Tensor {
    /// Extent of the view along axis `a` (1 when the view does not have the axis).
    pub fn repeat_of(&self, a: AxisId) -> Expr {
        self.axis
            .iter()
            .position(|x| *x == a)
            .and_then(|p| self.repeats.get(p).cloned())
            .unwrap_or_else(|| Expr::int(1))
    }
}

/// A temporary UB buffer an API needs.
#[derive(Clone, Debug, PartialEq)]
pub struct TmpBuffer {
    /// Size in bytes.
    pub size: Expr,
    /// -1 = API scope; else the loop axis it lives across.
    pub life_time_axis_id: i64,
    /// Placement.
    pub mem: MemAttr,
    /// Buffer id.
    pub id: i64,
}

/// Node attributes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NodeAttr {
    /// Scheduling.
    pub sched: SchedInfo,
    /// API.
    pub api: ApiInfo,
    /// Per-op IR attributes.
    pub ir_attr: BTreeMap<String, AttrValue>,
    /// Temporary buffers.
    pub tmp_buffers: Vec<TmpBuffer>,
}

/// One AscIR node.
#[derive(Clone, Debug)]
pub struct Node {
    /// Unique name in the graph.
    pub name: String,
    /// Operator prototype.
    pub op: Arc<OpDef>,
    /// Input port names (dynamic ports expanded to `x0`, `x1`, ...).
    pub input_names: Vec<String>,
    /// Output port names.
    pub output_names: Vec<String>,
    /// Connected producers, one per input port.
    pub inputs: Vec<Option<OutRef>>,
    /// Output tensors.
    pub outputs: Vec<Tensor>,
    /// Attributes.
    pub attr: NodeAttr,
}

impl Node {
    /// A node of prototype `op` (dynamic ports start empty, optional ones present).
    pub fn new(name: &str, op: Arc<OpDef>) -> Node {
        let input_names: Vec<String> = op
            .inputs
            .iter()
            .filter(|p| p.kind != PortKind::Dynamic)
            .map(|p| p.name.clone())
            .collect();
        let output_names: Vec<String> = op
            .outputs
            .iter()
            .filter(|p| p.kind != PortKind::Dynamic)
            .map(|p| p.name.clone())
            .collect();
        let (api_type, unit) = op.compute_type.api_completion();
        let mut attr = NodeAttr {
            api: ApiInfo {
                api_type,
                compute_type: op.compute_type,
                unit,
            },
            ..NodeAttr::default()
        };
        for a in &op.attrs {
            if let Some(d) = &a.default {
                attr.ir_attr.insert(a.name.clone(), d.clone());
            }
        }
        let outputs = vec![Tensor::default(); output_names.len()];
        Node {
            name: name.to_string(),
            inputs: vec![None; input_names.len()],
            input_names,
            output_names,
            outputs,
            attr,
            op,
        }
    }

    /// Operator type.
    pub fn op_type(&self) -> &str {
        &self.op.op_type
    }

    /// Index of the input port named `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.input_names.iter().position(|n| n == name)
    }

    /// Index of the output port named `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.output_names.iter().position(|n| n == name)
    }

    /// The prototype port an input index belongs to.
    pub fn input_port_def(&self, index: usize) -> Option<&crate::registry::PortDef> {
        port_def_for(&self.op.inputs, &self.input_names, index)
    }

    /// The prototype port an output index belongs to.
    pub fn output_port_def(&self, index: usize) -> Option<&crate::registry::PortDef> {
        port_def_for(&self.op.outputs, &self.output_names, index)
    }

    /// Whether this is a compute node.
    pub fn is_compute(&self) -> bool {
        self.attr.api.compute_type != ComputeType::Invalid
    }
}

fn port_def_for<'a>(
    defs: &'a [crate::registry::PortDef],
    names: &[String],
    index: usize,
) -> Option<&'a crate::registry::PortDef> {
    let name = names.get(index)?;
    defs.iter().find(|p| &p.name == name).or_else(|| {
        defs.iter().find(|p| {
            p.kind == PortKind::Dynamic
                && name
                    .strip_prefix(p.name.as_str())
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        })
    })
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

    fn check_outref(&self, r: OutRef, what: &str) -> AscResult<()> {
        let n = self.nodes.get(r.node.index()).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': {what}: no producer node with id {}",
                self.name, r.node.0
            ))
        })?;
        if r.index as usize >= n.outputs.len() {
            return not_found(format!(
                "graph '{}': {what}: node '{}' has no output {} (it has {})",
                self.name,
                n.name,
                r.index,
                n.outputs.len()
            ));
        }
        Ok(())
    }

    /// Connect `src` to input `input` of `dst`.
    pub fn connect(&mut self, src: OutRef, dst: NodeId, input: usize) -> AscResult<()> {
        let d = self.node(dst)?;
        if input >= d.inputs.len() {
            return not_found(format!(
                "graph '{}': node '{}' ({}) has no input {input} (it has {})",
                self.name,
                d.name,
                d.op_type(),
                d.inputs.len()
            ));
        }
        self.check_outref(
            src,
            &format!("input '{}' of node '{}'", d.input_names[input], d.name),
        )?;
        if src.node == dst {
            return invalid(format!(
                "graph '{}': node '{}' cannot consume its own output",
                self.name, d.name
            ));
        }
        self.nodes[dst.index()].inputs[input] = Some(src);
        Ok(())
    }

    /// Connect `src` to the input port named `port` of `dst`.
    pub fn connect_by_name(&mut self, src: OutRef, dst: NodeId, port: &str) -> AscResult<()> {
        let d = self.node(dst)?;
        let i = d.input_index(port).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': node '{}' ({}) has no input '{port}'",
                self.name,
                d.name,
                d.op_type()
            ))
        })?;
        self.connect(src, dst, i)
    }

    /// Set the instances of dynamic input `port` of `dst` to `srcs` (named `<port>0`, ...).
    pub fn set_dynamic_inputs(
        &mut self,
        dst: NodeId,
        port: &str,
        srcs: &[OutRef],
    ) -> AscResult<()> {
        let d = self.node(dst)?;
        let def_pos =
            d.op.inputs
                .iter()
                .position(|p| p.name == port && p.kind == PortKind::Dynamic)
                .ok_or_else(|| {
                    AscError::NotFound(format!(
                        "graph '{}': node '{}' ({}) has no dynamic input '{port}'",
                        self.name,
                        d.name,
                        d.op_type()
                    ))
                })?;
        for (k, s) in srcs.iter().enumerate() {
            self.check_outref(*s, &format!("input '{port}{k}' of node '{}'", d.name))?;
            if s.node == dst {
                return invalid(format!(
                    "graph '{}': node '{}' cannot consume its own output",
                    self.name, d.name
                ));
            }
        }
        let node = &mut self.nodes[dst.index()];
        expand_dynamic(
            &mut node.input_names,
            &mut node.inputs,
            &node.op.inputs,
            def_pos,
            port,
            srcs.iter().map(|s| Some(*s)).collect(),
        );
        Ok(())
    }

    /// Set the number of instances of dynamic output `port` of `node`.
    pub fn set_dynamic_outputs(&mut self, id: NodeId, port: &str, count: usize) -> AscResult<()> {
        let d = self.node(id)?;
        let def_pos =
            d.op.outputs
                .iter()
                .position(|p| p.name == port && p.kind == PortKind::Dynamic)
                .ok_or_else(|| {
                    AscError::NotFound(format!(
                        "graph '{}': node '{}' ({}) has no dynamic output '{port}'",
                        self.name,
                        d.name,
                        d.op_type()
                    ))
                })?;
        let node = &mut self.nodes[id.index()];
        let mut outs: Vec<Option<Tensor>> = node.outputs.drain(..).map(Some).collect();
        expand_dynamic(
            &mut node.output_names,
            &mut outs,
            &node.op.outputs,
            def_pos,
            port,
            vec![Some(Tensor::default()); count],
        );
        node.outputs = outs.into_iter().map(|t| t.unwrap_or_default()).collect();
        Ok(())
    }

    /// Consumers of every output: `(consumer, input index)` per `OutRef` (computed on demand).
    pub fn consumers(&self, id: NodeId) -> Vec<(u32, NodeId, usize)> {
        let mut v = Vec::new();
        for (ci, n) in self.nodes.iter().enumerate() {
            for (k, inp) in n.inputs.iter().enumerate() {
                if let Some(r) = inp {
                    if r.node == id {
                        v.push((r.index, NodeId(ci as u32), k));
                    }
                }
            }
        }
        v
    }

    /// The producer's output tensor feeding input `input` of `id` (the input view).
    pub fn input_tensor(&self, id: NodeId, input: usize) -> Option<&Tensor> {
        let r = (*self.nodes.get(id.index())?.inputs.get(input)?)?;
        self.nodes
            .get(r.node.index())?
            .outputs
            .get(r.index as usize)
    }

    /// Output tensor `index` of `id`.
    pub fn tensor(&self, id: NodeId, index: usize) -> AscResult<&Tensor> {
        let n = self.node(id)?;
        n.outputs.get(index).ok_or_else(|| {
            AscError::NotFound(format!(
                "graph '{}': node '{}' has no output {index} (it has {})",
                self.name,
                n.name,
                n.outputs.len()
            ))
        })
    }

    /// Mutable output tensor access.
    pub fn tensor_mut(&mut self, id: NodeId, index: usize) -> AscResult<&mut Tensor> {
        self.tensor(id, index)?;
        Ok(&mut self.nodes[id.index()].outputs[index])
    }

    /// Set the view of output `index` of `id` to contiguous over `axes`: repeats = axis sizes,
    /// strides = suffix products (last 1).
    pub fn set_contiguous_view(
        &mut self,
        id: NodeId,
        index: usize,
        axes: &[AxisId],
    ) -> AscResult<()> {
        let mut sizes = Vec::with_capacity(axes.len());
        for a in axes {
            sizes.push(self.axis_checked(*a)?.size.clone());
        }
        let strides = contiguous_strides(&sizes);
        let t = self.tensor_mut(id, index)?;
        t.axis = axes.to_vec();
        t.repeats = sizes;
        t.strides = strides;
        Ok(())
    }

    /// Set the loop axes of a node (ids must exist and be distinct).
    pub fn set_sched_axis(&mut self, id: NodeId, axes: &[AxisId]) -> AscResult<()> {
        for (i, a) in axes.iter().enumerate() {
            self.axis_checked(*a)?;
            if axes[..i].contains(a) {
                return invalid(format!(
                    "node '{}': axis {} appears twice in sched.axis",
                    self.node(id)?.name,
                    self.axis_name(*a)
                ));
            }
        }
        self.node_mut(id)?.attr.sched.axis = axes.to_vec();
        Ok(())
    }

    /// Set an IR attribute, checking the prototype's type when the attribute is declared.
    pub fn set_ir_attr(&mut self, id: NodeId, name: &str, value: AttrValue) -> AscResult<()> {
        let n = self.node(id)?;
        if let Some(def) = n.op.find_attr(name) {
            if !def.ty.accepts(&value) {
                return invalid(format!(
                    "node '{}' ({}): attribute '{name}' takes a value of type {}",
                    n.name,
                    n.op_type(),
                    def.ty.name()
                ));
            }
        } else if registry::lookup(&n.op.op_type).is_some() {
            return not_found(format!(
                "node '{}' ({}): no IR attribute '{name}'",
                n.name,
                n.op_type()
            ));
        }
        self.node_mut(id)?
            .attr
            .ir_attr
            .insert(name.to_string(), value);
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

fn expand_dynamic<T: Clone>(
    names: &mut Vec<String>,
    vals: &mut Vec<Option<T>>,
    defs: &[crate::registry::PortDef],
    def_pos: usize,
    port: &str,
    new_vals: Vec<Option<T>>,
) {
    // Remove existing instances of the port.
    let is_inst = |n: &str| {
        n.strip_prefix(port)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut keep_names = Vec::new();
    let mut keep_vals = Vec::new();
    for (n, v) in names.drain(..).zip(vals.drain(..)) {
        if !is_inst(&n) || defs.iter().any(|d| d.name == n) {
            keep_names.push(n);
            keep_vals.push(v);
        }
    }
    // Insert after the ports declared before this one.
    let before: Vec<&str> = defs[..def_pos].iter().map(|d| d.name.as_str()).collect();
    let mut at = 0;
    for (i, n) in keep_names.iter().enumerate() {
        let belongs = before.iter().any(|b| {
            n == b
                || n.strip_prefix(b)
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|c| c.is_ascii_digit()))
        });
        if belongs {
            at = i + 1;
        }
    }
    let k = new_vals.len();
    let ins_names: Vec<String> = (0..k).map(|i| format!("{port}{i}")).collect();
    keep_names.splice(at..at, ins_names);
    keep_vals.splice(at..at, new_vals);
    *names = keep_names;
    *vals = keep_vals;
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
