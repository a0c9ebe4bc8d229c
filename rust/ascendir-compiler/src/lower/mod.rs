//! Stage 5, lowering: the declarative lowering registry and the per-node decision —
//! a lowered node (its kind, data operands, reduce axes and the template of AscIR steps its
//! output is computed by) or a barrier with a reason in one of GE's three categories.

mod decisions;
mod dtypes;
mod forms;
pub mod spec;
mod table;
mod values;

use std::sync::{Arc, OnceLock, RwLock};

use ascendir_asc::{AttrValue as AscAttr, Expr};
use ascendir_ir::{DataType, Graph, NodeId, OpDesc};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::options::{CompileOptions, Family};
use crate::symbolize::SymTable;

pub use decisions::Decisions;
use dtypes::check_step_dtypes;
pub use dtypes::{compute_dtype, movable};
pub use table::builtin_lowerings;
pub(crate) use values::{attr_ints, int_tensor, tensor_ints};
pub use values::{const_ints, reduce_axes};

/// The fusion kind of a lowered node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Element-wise over one shape.
    Pointwise,
    /// Element-wise with broadcasting operands.
    Broadcast,
    /// Unit dims inserted or removed: no AscIR node.
    View,
    /// Reduction (keep-dims in AscIR), including norm-like ones.
    Reduce,
    /// A strided window of a tensor read from outside the kernel (a Load view).
    Slice,
    /// Tensors read from outside the kernel joined along one axis (Loads of partial extent
    /// and an AscIR Concat).
    Concat,
    /// Elements of a tensor in memory picked by indices in memory (an AscIR Gather).
    Gather,
    /// A permutation of the dims (an AscIR Transpose, the last op of its kernel).
    Transpose,
    /// Everything else: a barrier.
    Opaque,
}

impl Kind {
    /// The kind's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pointwise => "pointwise",
            Kind::Broadcast => "broadcast",
            Kind::View => "view",
            Kind::Reduce => "reduce",
            Kind::Slice => "slice",
            Kind::Concat => "concat",
            Kind::Gather => "gather",
            Kind::Transpose => "transpose",
            Kind::Opaque => "opaque",
        }
    }
}

/// GE's three categories of lowering refusals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Category {
    /// The node's attributes, shapes or scope forbid lowering.
    #[serde(rename = "Node Info Incorrect")]
    NodeInfoIncorrect,
    /// The AscIR backend cannot compute it (dtype, rank).
    #[serde(rename = "Backend Not Support")]
    BackendNotSupport,
    /// No lowering (yet) for this op or this form of it.
    #[serde(rename = "Temporary Skip Lowering")]
    TemporarySkip,
}

impl Category {
    /// GE's text of the category.
    pub fn text(self) -> &'static str {
        match self {
            Category::NodeInfoIncorrect => "Node Info Incorrect",
            Category::BackendNotSupport => "Backend Not Support",
            Category::TemporarySkip => "Temporary Skip Lowering",
        }
    }
}

/// An operand of a lowering step.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// The node's `i`-th data operand (after the lowering's data-input selection).
    In(usize),
    /// The result of an earlier step.
    Step(usize),
    /// A constant scalar in the step's compute dtype.
    Scalar(f64),
    /// A scalar read from a float attribute of the GE node (with its default).
    AttrScalar(String, f64),
}

/// The dtype of a step's result.
#[derive(Clone, Debug, PartialEq)]
pub enum StepDtype {
    /// The dtype of the first operand.
    Same,
    /// A comparison mask (the GE output dtype when it is the node's result, else bool).
    Mask,
    /// The dtype of the GE node's output.
    NodeOut,
    /// A fixed dtype (AscIR ArgMax gives int64).
    Fixed(DataType),
}

/// An AscIR attribute of a step: fixed or read from a GE attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum StepAttr {
    /// A fixed value.
    Fixed(String, AscAttr),
    /// The GE node's float attribute `ge` (or `default`) as AscIR attribute `asc`.
    FromGeFloat {
        /// AscIR attribute name.
        asc: String,
        /// GE attribute name.
        ge: String,
        /// Value when the GE node lacks the attribute.
        default: f64,
    },
}

/// One AscIR computation of a lowering template.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// AscIR op type.
    pub op: String,
    /// Operands.
    pub args: Vec<Arg>,
    /// IR attributes.
    pub attrs: Vec<StepAttr>,
    /// A reduction over the node's reduce axes (keep dims).
    pub reduce: bool,
    /// Result dtype.
    pub dtype: StepDtype,
    /// When this data operand is absent (an optional GE input), the step is skipped and
    /// yields its first operand.
    pub needs_input: Option<usize>,
}

impl Step {
    /// A step `op(args)` of dtype [`StepDtype::Same`].
    pub fn new(op: &str, args: Vec<Arg>) -> Step {
        Step {
            op: op.to_string(),
            args,
            attrs: Vec::new(),
            reduce: false,
            dtype: StepDtype::Same,
            needs_input: None,
        }
    }
}

/// How a lowered node's output shape follows from its inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeRule {
    /// Numpy broadcasting of the data operands; `align[i]` = Some(k) places operand `i`'s dims
    /// from output dim `k` on (per-channel operands), None = right-aligned.
    Broadcast {
        /// Per-operand alignment.
        align: Vec<Option<usize>>,
    },
    /// The first operand with the reduce axes set to 1 (keep dims) or removed.
    Reduce,
    /// Unit dims inserted or removed (the output's non-unit dims are the input's, in order).
    View,
    /// `x1 @ x2` with N = 1 on the vector unit: x1 `[..., M, K]`, x2 `[..., K, 1]` (or
    /// `[..., 1, K]` when `x2_transposed`), output `[..., M, 1]`; batch dims broadcast.
    MatVec {
        /// Whether x2 is given as `[..., N, K]`.
        x2_transposed: bool,
    },
    /// A strided window of operand 0, per input dim (a Load with an offset and strides: the
    /// operand is read from outside the kernel).
    Slice {
        /// Per input dim.
        dims: Vec<SliceDim>,
    },
    /// The data operands joined along `axis` (negative counts from the end); every other dim
    /// is the first operand's. The operands are read from outside the kernel.
    Concat {
        /// The concatenation axis.
        axis: i64,
        /// Pack: every operand is one slice along a new dim at `axis` (of the output).
        stack: bool,
    },
    /// `params[..., indices, ...]` along `axis` (operand 0 the params, 1 the indices; both
    /// read from outside the kernel): `params[:axis] + indices + params[axis + 1:]`.
    Gather {
        /// The gathered axis of the params.
        axis: i64,
    },
    /// Output dim `j` is input dim `perm[j]`.
    Transpose {
        /// The permutation.
        perm: Vec<i64>,
    },
}

/// One dim of a [`ShapeRule::Slice`]: elements `begin, begin + step, …`, `size` of them; None
/// keeps the whole dim (which may be symbolic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceDim {
    /// First element.
    pub begin: i64,
    /// Step (positive).
    pub step: i64,
    /// Elements taken; None: the whole dim (begin 0, step 1).
    pub size: Option<i64>,
}

/// Where the output shape of a [`ShapeRule::Broadcast`] row comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// The operands broadcast together.
    Operands,
    /// The (symbolic) value of this GE input, a shape tensor (Expand, BroadcastTo, Fill),
    /// broadcast with the operands.
    Input(usize),
    /// Operand 0 tiled by these multiples (Tile: every tiled dim has size 1).
    Multiples(Vec<i64>),
}

/// Where a node's reduce axes come from.
#[derive(Clone, Debug, PartialEq)]
pub enum AxesSrc {
    /// An int-list (or int) attribute; `empty_all`: an empty list means every axis.
    Attr {
        /// Attribute name.
        name: String,
        /// Empty list = all axes.
        empty_all: bool,
    },
    /// The attribute, else a constant input at this index; empty means every axis.
    AttrOrConstInput(String, usize),
    /// From the int attribute (GE `begin_norm_axis`) to the last axis.
    From(String),
    /// Fixed axes (a node-specific form chose them; negative counts from the end).
    Fixed(Vec<i64>),
}

/// A node-specific admissibility check (attributes a template cannot express).
pub type Guard = fn(&OpDesc) -> Result<(), String>;

/// The node-specific form of a row, for what a fixed template cannot express: the number of
/// operands (AddN), a channel axis from the data format (BiasAdd), axes or shapes read from
/// constant inputs (Tile, MatMul). Returns the row to use for this node, or why it cannot lower.
pub type Adapt = fn(&Graph, NodeId, &Lowering) -> Result<Lowering, Barrier>;

/// One row of the lowering table: how GE type `op_type` becomes AscIR.
#[derive(Clone, Debug)]
pub struct Lowering {
    /// GE op type.
    pub op_type: String,
    /// The family that switches it on or off.
    pub family: Family,
    /// Output shape rule.
    pub shape: ShapeRule,
    /// Data operands = `n` GE inputs from `first_input` on (None = all); the rest are
    /// parameters.
    pub data_inputs: Option<usize>,
    /// The GE input index of the first data operand (Fill: its value, after the dims).
    pub first_input: usize,
    /// Where a broadcasting row's output shape comes from.
    pub target: Target,
    /// Reduce axes (reductions and norm-like ops).
    pub axes: Option<AxesSrc>,
    /// `keep_dims` attribute name.
    pub keep_dims_attr: Option<String>,
    /// Whether reduced dims are kept when the attribute is absent.
    pub keep_dims_default: bool,
    /// The computation; empty for views.
    pub steps: Vec<Step>,
    /// The value of output 0.
    pub out: Arg,
    /// A norm-like reduction (softmax, layer norm): all-load by construction.
    pub norm_like: bool,
    /// Extra admissibility check.
    pub guard: Option<Guard>,
    /// The node-specific form.
    pub adapt: Option<Adapt>,
}

impl Lowering {
    /// Number of AscIR compute steps.
    pub fn compute_steps(&self) -> usize {
        self.steps.len()
    }

    /// The GE input indices of the data operands of a node with `num_in` inputs.
    pub fn data_ports(&self, num_in: usize) -> std::ops::Range<usize> {
        let end = match self.data_inputs {
            Some(n) => self.first_input.saturating_add(n).min(num_in),
            None => num_in,
        };
        self.first_input.min(end)..end
    }

    /// Whether node `op` keeps its reduced dims.
    pub fn keeps_dims(&self, op: &OpDesc) -> bool {
        self.keep_dims_attr
            .as_deref()
            .and_then(|k| op.attr(k))
            .and_then(|v| v.as_bool())
            .unwrap_or(self.keep_dims_default)
    }
}

/// The row node `id` lowers by: its type's registered row in the node's form (`adapt`).
/// None when no row is registered.
pub fn for_node(g: &Graph, id: NodeId) -> Option<Result<Arc<Lowering>, Barrier>> {
    let l = lookup(g.op(id).ok()?.op_type())?;
    Some(adapted(g, id, l))
}

/// Row `l` in node `id`'s form (its `adapt`), checked like a registered template.
fn adapted(g: &Graph, id: NodeId, l: Arc<Lowering>) -> Result<Arc<Lowering>, Barrier> {
    let Some(adapt) = l.adapt else {
        return Ok(l);
    };
    let a = adapt(g, id, &l)?;
    check_template(&a).map_err(|reason| Barrier {
        category: Category::NodeInfoIncorrect,
        reason,
    })?;
    Ok(Arc::new(a))
}

fn registry() -> &'static RwLock<FxHashMap<String, Arc<Lowering>>> {
    static R: OnceLock<RwLock<FxHashMap<String, Arc<Lowering>>>> = OnceLock::new();
    R.get_or_init(|| {
        RwLock::new(
            builtin_lowerings()
                .into_iter()
                .map(|l| (l.op_type.clone(), Arc::new(l)))
                .collect(),
        )
    })
}

/// The lowering of GE type `op_type`.
pub fn lookup(op_type: &str) -> Option<Arc<Lowering>> {
    registry().read().ok()?.get(op_type).cloned()
}

static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Register (or replace) a lowering; the template is checked first (operands refer to earlier
/// steps, AscIR op types exist).
pub fn register(l: Lowering) -> Result<(), String> {
    check_template(&l)?;
    let mut r = registry()
        .write()
        .map_err(|_| "lowering registry lock poisoned".to_string())?;
    r.insert(l.op_type.clone(), Arc::new(l));
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    Ok(())
}

/// A number that changes whenever the lowering registry changes.
pub fn generation() -> u64 {
    GENERATION.load(std::sync::atomic::Ordering::Acquire)
}

/// The lowering registry's content as text (every row's debug form, in type order), for a
/// content hash that changes with any registration.
pub fn content_text() -> String {
    let Ok(r) = registry().read() else {
        return String::new();
    };
    let mut types: Vec<&String> = r.keys().collect();
    types.sort();
    let mut out = String::new();
    for t in types {
        out.push_str(&format!("{:?}\n", r[t]));
    }
    out
}

/// Every registered GE type, sorted.
pub fn registered() -> Vec<String> {
    let mut v: Vec<String> = registry()
        .read()
        .map(|r| r.keys().cloned().collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Check a template's operands and op types.
pub fn check_template(l: &Lowering) -> Result<(), String> {
    let bad = |m: String| Err(format!("lowering of '{}': {m}", l.op_type));
    for (i, s) in l.steps.iter().enumerate() {
        if ascendir_asc::registry::lookup(&s.op).is_none() {
            return bad(format!("step {i}: AscIR op '{}' is not registered", s.op));
        }
        if s.args.is_empty() {
            return bad(format!("step {i} ('{}') has no operands", s.op));
        }
        for a in &s.args {
            if let Arg::Step(j) = a {
                if *j >= i {
                    return bad(format!("step {i} uses step {j}, which is not before it"));
                }
            }
        }
        if s.reduce && l.axes.is_none() {
            return bad(format!("step {i} reduces but the lowering has no axes"));
        }
    }
    match &l.out {
        Arg::Step(j) if *j >= l.steps.len() => bad(format!("output is step {j}, out of range")),
        Arg::In(_) if l.shape != ShapeRule::View && !l.steps.is_empty() => {
            bad("a computing lowering must output a step".into())
        }
        Arg::Scalar(_) | Arg::AttrScalar(..) => bad("the output must not be a scalar".into()),
        _ => Ok(()),
    }
}

/// A node the compiler lowered.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The lowering row.
    pub lowering: Arc<Lowering>,
    /// Fusion kind.
    pub kind: Kind,
    /// Data operands: the producing out anchors (node, index), None for an absent optional input.
    pub inputs: Vec<Option<(NodeId, u32)>>,
    /// Reduce axes (normalised, ascending) in the first operand's dims.
    pub reduce_axes: Vec<usize>,
    /// Whether reduced dims are kept (size 1) in the output.
    pub keep_dims: bool,
}

impl Lowered {
    /// Number of AscIR compute steps this node contributes (skipped optional steps excluded).
    pub fn compute_steps(&self) -> usize {
        self.lowering
            .steps
            .iter()
            .filter(|s| {
                s.needs_input
                    .is_none_or(|k| self.inputs.get(k).is_some_and(|x| x.is_some()))
            })
            .count()
    }

    /// Whether the node reduces (not counting norm-like ones).
    pub fn is_plain_reduce(&self) -> bool {
        self.kind == Kind::Reduce && !self.lowering.norm_like
    }
}

/// Why a node stays outside every kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Barrier {
    /// GE's category.
    pub category: Category,
    /// The reason.
    pub reason: String,
}

/// The per-node outcome of stage 5.
#[derive(Clone, Debug)]
pub enum Decision {
    /// Lowered.
    Lowered(Lowered),
    /// Not lowered (Data, Const, NetOutput and other graph plumbing included).
    Barrier(Barrier),
}

/// Types that are graph plumbing, never lowered and never reported as refusals.
pub fn is_plumbing(op_type: &str) -> bool {
    matches!(
        op_type,
        "Data" | "RefData" | "Const" | "Constant" | "NetOutput" | "Variable" | "AscBackend"
    )
}

fn barrier(category: Category, reason: impl Into<String>) -> Decision {
    Decision::Barrier(Barrier {
        category,
        reason: reason.into(),
    })
}

/// Decide, for every node of `g` in `order`, whether and how it lowers. `syms` holds the
/// symbolic shapes computed by stage 3 (a node whose shapes are unknown is a barrier).
pub fn lower_graph(
    g: &Graph,
    order: &[NodeId],
    syms: &SymTable,
    opts: &CompileOptions,
) -> Decisions {
    let mut out = Decisions::default();
    for &id in order {
        out.insert(id, decide(g, id, syms, opts));
    }
    out
}

/// Consumers of output `index` of `id` (data links).
fn has_consumers(g: &Graph, id: NodeId, index: usize) -> bool {
    g.node(id)
        .map(|n| !n.out_data_peers(index).is_empty())
        .unwrap_or(false)
}

/// The lowering decision for one node.
pub fn decide(g: &Graph, id: NodeId, syms: &SymTable, opts: &CompileOptions) -> Decision {
    let Ok(node) = g.node(id) else {
        return barrier(Category::NodeInfoIncorrect, "stale node");
    };
    let op = node.op();
    let ty = op.op_type();
    if is_plumbing(ty) {
        return barrier(Category::TemporarySkip, "graph plumbing");
    }
    if !opts.fusion {
        return barrier(Category::TemporarySkip, "fusion is off");
    }
    if opts.skip_types.iter().any(|t| t == ty) || opts.skip_names.iter().any(|n| n == op.name()) {
        return barrier(Category::NodeInfoIncorrect, "in the skip list");
    }
    for key in ["_disable_autofuse_scope", "_super_kernel_scope"] {
        let set = match op.attr(key) {
            None => false,
            Some(ascendir_ir::AttrValue::Bool(b)) => *b,
            Some(ascendir_ir::AttrValue::String(s)) => !s.is_empty() && s != "0" && s != "false",
            Some(_) => true,
        };
        if set {
            return barrier(
                Category::NodeInfoIncorrect,
                format!("the node is in a {key}"),
            );
        }
    }
    if matches!(ty, "SplitD" | "SplitVD" | "Split" | "SplitV") {
        // Row 35: stage 4 turned every split it could into slices (`split.rs`).
        return barrier(
            Category::TemporarySkip,
            if opts.family_on(Family::Split) {
                "a split of a dynamic extent or of sizes that are not constant"
            } else {
                "the split family is disabled"
            },
        );
    }
    let Some(l) = lookup(ty) else {
        return barrier(Category::TemporarySkip, "no lowering registered");
    };
    if !opts.family_on(l.family) {
        return barrier(
            Category::TemporarySkip,
            format!("the {} family is disabled", l.family.name()),
        );
    }
    if let Some(guard) = l.guard {
        if let Err(e) = guard(op) {
            return barrier(Category::TemporarySkip, e);
        }
    }
    let l = match adapted(g, id, l) {
        Ok(l) => l,
        Err(b) => return Decision::Barrier(b),
    };
    for k in 1..node.num_out_data() {
        if has_consumers(g, id, k) {
            return barrier(
                Category::TemporarySkip,
                format!("output {k} is used; only the first output lowers"),
            );
        }
    }
    let inputs: Vec<Option<(NodeId, u32)>> = l
        .data_ports(node.num_in_data())
        .map(|i| node.in_data_peer(i).map(|p| (p.node, p.index as u32)))
        .collect();
    if inputs.first().is_none_or(|x| x.is_none()) {
        return barrier(
            Category::NodeInfoIncorrect,
            "the first input is not connected",
        );
    }
    // Required operands: every one a step uses without `needs_input`.
    for s in &l.steps {
        for a in &s.args {
            if let Arg::In(k) = a {
                let optional = s.needs_input == Some(*k);
                if !optional && inputs.get(*k).is_none_or(|x| x.is_none()) {
                    return barrier(
                        Category::NodeInfoIncorrect,
                        format!("data input {k} is not connected"),
                    );
                }
            }
        }
    }
    // Shapes must be symbolic and dtypes supported.
    let Some(out_shape) = syms.shape((id, 0)) else {
        return barrier(
            Category::NodeInfoIncorrect,
            "the output shape is not symbolic",
        );
    };
    let mut in_shapes = Vec::new();
    for &t in inputs.iter().flatten() {
        match syms.shape(t) {
            Some(s) => in_shapes.push(s),
            None => {
                return barrier(
                    Category::NodeInfoIncorrect,
                    "an input shape is not symbolic",
                )
            }
        }
    }
    let out_dtype = op.outputs()[0].desc.dtype;
    let mut in_dtypes = Vec::new();
    for (k, t) in inputs.iter().enumerate() {
        let dt = match t {
            Some(_) => op
                .inputs()
                .get(k + l.first_input)
                .map(|p| p.desc.dtype)
                .unwrap_or(DataType::UNDEFINED),
            None => DataType::UNDEFINED,
        };
        in_dtypes.push(dt);
    }
    for (k, t) in inputs.iter().enumerate() {
        if t.is_some() && !movable(in_dtypes[k]) {
            return barrier(
                Category::BackendNotSupport,
                format!(
                    "input {k} has dtype {}, which Load cannot move",
                    in_dtypes[k].serial_name()
                ),
            );
        }
    }
    if !movable(out_dtype) {
        return barrier(
            Category::BackendNotSupport,
            format!(
                "the output dtype {} cannot be stored",
                out_dtype.serial_name()
            ),
        );
    }
    if let Err(e) = check_step_dtypes(&l, &in_dtypes, out_dtype, opts) {
        return barrier(Category::BackendNotSupport, e);
    }
    let rank0 = in_shapes[0].len();
    let (reduce_axes_v, keep_dims) = match &l.axes {
        None => (Vec::new(), true),
        Some(src) => match reduce_axes(g, id, src, rank0) {
            Ok(a) => (a, l.keeps_dims(op)),
            Err(e) => return barrier(Category::NodeInfoIncorrect, e),
        },
    };
    let kind = if matches!(l.shape, ShapeRule::Slice { .. }) {
        Kind::Slice
    } else if let ShapeRule::Concat { axis, stack } = l.shape {
        let rank = out_shape.len();
        let Some(a) = norm_axis(axis, rank) else {
            return barrier(
                Category::NodeInfoIncorrect,
                format!("concat axis {axis} is out of range for rank {rank}"),
            );
        };
        let in_rank = rank - usize::from(stack);
        if out_shape[a].is_int_value(1) || in_shapes.iter().any(|s| s.len() != in_rank) {
            return barrier(
                Category::TemporarySkip,
                "a concat of unit extent or of operands of another rank",
            );
        }
        if !stack && in_shapes.iter().any(|s| s[a].is_int_value(0)) {
            return barrier(Category::TemporarySkip, "a concat of an empty operand");
        }
        Kind::Concat
    } else if let ShapeRule::Gather { axis } = l.shape {
        let rank = in_shapes[0].len();
        if norm_axis(axis, rank).is_none() {
            return barrier(
                Category::NodeInfoIncorrect,
                format!("gather axis {axis} is out of range for rank {rank}"),
            );
        }
        if in_shapes.get(1).is_none_or(|s| s.is_empty()) || out_shape.is_empty() {
            return barrier(
                Category::TemporarySkip,
                "a gather by a scalar index or into a scalar",
            );
        }
        Kind::Gather
    } else if let ShapeRule::Transpose { perm } = &l.shape {
        let rank = in_shapes[0].len();
        let mut seen = vec![false; rank];
        for &p in perm {
            match norm_axis(p, rank) {
                Some(a) if !seen[a] => seen[a] = true,
                _ => {
                    return barrier(
                        Category::NodeInfoIncorrect,
                        format!("perm {perm:?} is not a permutation of {rank} dims"),
                    )
                }
            }
        }
        if perm.len() != rank {
            return barrier(
                Category::NodeInfoIncorrect,
                format!("perm {perm:?} is not a permutation of {rank} dims"),
            );
        }
        if !matches!(out_dtype, DataType::FLOAT | DataType::FLOAT16) || rank > 5 {
            return barrier(
                Category::BackendNotSupport,
                "AscIR Transpose takes fp16 / fp32 tensors of at most 5 dims",
            );
        }
        // A permutation that only moves unit dims keeps the data in place: a view.
        let moved: Vec<usize> = perm
            .iter()
            .filter_map(|&p| norm_axis(p, rank))
            .filter(|&a| !in_shapes[0][a].is_int_value(1))
            .collect();
        if moved.windows(2).all(|w| w[0] < w[1]) {
            let mut view = (*l).clone();
            view.shape = ShapeRule::View;
            view.steps = Vec::new();
            view.out = Arg::In(0);
            return Decision::Lowered(Lowered {
                lowering: Arc::new(view),
                kind: Kind::View,
                inputs,
                reduce_axes: Vec::new(),
                keep_dims: true,
            });
        }
        Kind::Transpose
    } else if l.shape == ShapeRule::View {
        let nu = |s: &[Expr]| -> Vec<Expr> {
            s.iter().filter(|d| !d.is_int_value(1)).cloned().collect()
        };
        if nu(in_shapes[0]) != nu(out_shape) {
            return barrier(
                Category::TemporarySkip,
                "a reshape that merges or splits dims (not a unit-dim view)",
            );
        }
        Kind::View
    } else if l.steps.iter().any(|s| s.reduce) {
        if reduce_axes_v.is_empty() {
            return barrier(Category::NodeInfoIncorrect, "a reduction over no axis");
        }
        Kind::Reduce
    } else if in_shapes.iter().all(|s| s.as_slice() == out_shape) {
        Kind::Pointwise
    } else {
        Kind::Broadcast
    };
    Decision::Lowered(Lowered {
        lowering: l,
        kind,
        inputs,
        reduce_axes: reduce_axes_v,
        keep_dims,
    })
}

/// `axis` (negative from the end) as an index into `rank` dims.
pub(crate) fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis.checked_add(r)? } else { axis };
    usize::try_from(a).ok().filter(|_| a < r)
}
