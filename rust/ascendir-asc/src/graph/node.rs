//! A node and its output tensors: the tensor view over axes, temporary buffers, node attributes
//! and port look-ups through the op definition.

use std::collections::BTreeMap;
use std::sync::Arc;

use ascendir_ir::DataType;

use crate::axis::AxisId;
use crate::expr::Expr;
use crate::registry::{OpDef, PortKind};

use super::{
    ApiInfo, AttrValue, BufAttr, ComputeType, MemAttr, OptAttr, OutRef, QueAttr, SchedInfo,
};

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

    /// A compute node's loop depth: where its loop axis is among its scheduled axes (None for
    /// the other nodes, and before the loop axis is set).
    pub fn loop_depth(&self) -> Option<usize> {
        let s = &self.attr.sched;
        self.is_compute()
            .then(|| s.axis.iter().position(|a| *a == s.loop_axis))
            .flatten()
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
