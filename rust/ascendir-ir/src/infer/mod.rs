//! Shape, dtype and format inference.
//!
//! A prototype's inference rule is declarative: a [`RuleKind`] plus string/int parameters
//! naming the ports and attributes it reads (so one kind serves `ReduceSum` with an `axes`
//! input and `ReduceSumD` with an `axes` attribute). Rules see the effective shape of each
//! input (the origin shape when the tensor was transformed to another format), read constant
//! inputs from `Const` producers' `value` tensors, and propagate unknown dims (`-1`) and
//! unknown rank (`[-2]`). One file per rule family; `engine` walks whole graphs.

use std::collections::BTreeMap;

use crate::attr::AttrValue;
use crate::dtype::DataType;
use crate::format::{bits, Format};
use crate::op_desc::OpDesc;
use crate::registry::OpProto;
use crate::tensor::{Shape, Tensor, TensorDesc, UNKNOWN_RANK};

mod conv;
mod elementwise;
pub mod engine;
pub mod format;
mod index;
mod matmul;
mod misc;
mod reduce;
mod reshape;
pub mod shape;
mod side;
#[cfg(test)]
mod tests;
pub mod values;

pub use engine::{infer_graph, infer_op, CustomInfer, InferError, NoCustom};

/// One rule parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// An integer.
    Int(i64),
    /// A string (a port or attribute name, a dtype name, a mode).
    Str(String),
    /// A list of strings.
    Strs(Vec<String>),
}

/// Rule parameters by name.
pub type Params = BTreeMap<String, Param>;

macro_rules! rule_kinds {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// The inference rule families.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum RuleKind { $($variant),* }

        impl RuleKind {
            /// Every kind.
            pub const ALL: &'static [RuleKind] = &[$(RuleKind::$variant),*];

            /// The kind's name as written in op libraries (`same_as`).
            pub fn name(self) -> &'static str {
                match self { $(RuleKind::$variant => $name),* }
            }

            /// The kind called `name`.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($name => Some(RuleKind::$variant),)* _ => None }
            }
        }
    };
}

rule_kinds! {
    None = "none",
    SameAs = "same_as",
    Broadcast = "broadcast",
    Cast = "cast",
    Reduce = "reduce",
    MatMul = "matmul",
    BatchMatMul = "batch_matmul",
    FullyConnection = "fully_connection",
    Conv = "conv",
    ConvBackpropInput = "conv_backprop_input",
    Pool = "pool",
    CaffePool = "caffe_pool",
    GlobalPool = "global_pool",
    Reshape = "reshape",
    Transpose = "transpose",
    Concat = "concat",
    Pack = "pack",
    Split = "split",
    Gather = "gather",
    Slice = "slice",
    StridedSlice = "strided_slice",
    SliceAxes = "slice_axes",
    Squeeze = "squeeze",
    Unsqueeze = "unsqueeze",
    ExpandDims = "expand_dims",
    Flatten = "flatten",
    Tile = "tile",
    Expand = "expand",
    Pad = "pad",
    ShapeOf = "shape",
    Size = "size",
    Fill = "fill",
    Range = "range",
    TopK = "topk",
    ArgMax = "arg_max",
    Select = "select",
    Data = "data",
    Const = "const",
    Passthrough = "passthrough",
    TransData = "trans_data",
    LayerNorm = "layer_norm",
    FlashAttention = "flash_attention",
    If = "if",
    While = "while",
    Custom = "custom",
}

/// A declarative inference rule.
#[derive(Clone, Debug, PartialEq)]
pub struct InferRule {
    /// The family.
    pub kind: RuleKind,
    /// Port / attribute names and options.
    pub params: Params,
}

impl InferRule {
    /// A rule of `kind` with `params`.
    pub fn new(kind: RuleKind, params: Params) -> Self {
        InferRule { kind, params }
    }

    /// No inference: outputs keep their descs.
    pub fn none() -> Self {
        InferRule::new(RuleKind::None, Params::new())
    }

    /// Every output has the shape and dtype of input `input`.
    pub fn same_as(input: &str) -> Self {
        let mut p = Params::new();
        p.insert("input".into(), Param::Str(input.into()));
        InferRule::new(RuleKind::SameAs, p)
    }

    /// Numpy broadcasting of all inputs.
    pub fn broadcast() -> Self {
        InferRule::new(RuleKind::Broadcast, Params::new())
    }

    /// Check the rule's parameters against the prototype (names that must be ports exist).
    pub fn check(&self, proto: &OpProto) -> Result<(), String> {
        let has_input = |n: &str| proto.inputs.iter().any(|i| i.name == n);
        let has_attr = |n: &str| proto.attrs.iter().any(|a| a.name == n);
        for (key, value) in &self.params {
            let names: Vec<&str> = match value {
                Param::Str(s) => vec![s.as_str()],
                Param::Strs(v) => v.iter().map(String::as_str).collect(),
                Param::Int(_) => continue,
            };
            if key == "dtype" {
                for n in names {
                    parse_dtype_spec(n).map_err(|e| format!("rule {}: {e}", self.kind.name()))?;
                }
                continue;
            }
            if PORT_PARAMS.contains(&key.as_str()) {
                for n in names {
                    if !has_input(n) && !has_attr(n) {
                        return Err(format!(
                            "rule {} parameter '{key}' names '{n}', which is neither an input nor an attribute",
                            self.kind.name()
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Parameters whose values name inputs or attributes (checked at registration).
const PORT_PARAMS: &[&str] = &[
    "input",
    "inputs",
    "outputs",
    "a",
    "b",
    "x",
    "filter",
    "axes",
    "axis",
    "keep_dims",
    "shape",
    "perm",
    "split_dim",
    "size_splits",
    "num_split",
    "indices",
    "offsets",
    "size",
    "begin",
    "end",
    "strides",
    "multiples",
    "paddings",
    "k",
    "condition",
    "x1",
    "x2",
    "transpose_a",
    "transpose_b",
    "dims",
    "value",
    "start",
    "limit",
    "delta",
    "input_size",
];

/// How an output dtype is chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum DtypeSpec {
    /// The dtype of the named input.
    Input(String),
    /// A fixed dtype.
    Fixed(DataType),
    /// The value of the named attribute (an int or a data type), with a default.
    Attr(String, DataType),
}

/// Parse `"input:x"`, `"attr:dst_type"`, `"attr:dtype=INT32"` or a dtype name (`"BOOL"`).
pub fn parse_dtype_spec(text: &str) -> Result<DtypeSpec, String> {
    if let Some(name) = text.strip_prefix("input:") {
        return Ok(DtypeSpec::Input(name.to_string()));
    }
    if let Some(rest) = text.strip_prefix("attr:") {
        let (name, default) = match rest.split_once('=') {
            Some((n, d)) => (n, DataType::from_name(d).map_err(|e| e.to_string())?),
            None => (rest, DataType::UNDEFINED),
        };
        return Ok(DtypeSpec::Attr(name.to_string(), default));
    }
    DataType::from_name(text)
        .map(DtypeSpec::Fixed)
        .map_err(|e| e.to_string())
}

/// One inferred output.
#[derive(Clone, Debug, PartialEq)]
pub struct OutDesc {
    /// Its shape (the logical one when `layout` is given).
    pub shape: Shape,
    /// Its dtype.
    pub dtype: DataType,
    /// The storage format and the origin (logical) format the rule decides, for rules that
    /// change a layout (`TransData`); `None` keeps the desc's formats.
    pub layout: Option<(Format, Format)>,
}

impl OutDesc {
    /// An output of `shape` and `dtype`.
    pub fn new(shape: Shape, dtype: DataType) -> Self {
        OutDesc {
            shape,
            dtype,
            layout: None,
        }
    }

    /// An output of logical `shape` stored as `format`, whose origin format is `origin`.
    pub fn with_layout(shape: Shape, dtype: DataType, format: Format, origin: Format) -> Self {
        OutDesc {
            shape,
            dtype,
            layout: Some((format, origin)),
        }
    }

    /// An output of unknown rank.
    pub fn unknown(dtype: DataType) -> Self {
        OutDesc::new(Shape::from_slice(&[UNKNOWN_RANK]), dtype)
    }
}

/// Whether a desc was transformed to a device format, so that its origin shape is the logical
/// one (e.g. `NC1HWC0` data with an `NCHW` origin).
pub fn is_transformed(d: &TensorDesc) -> bool {
    d.origin_shape.is_some()
        && d.origin_format != Format::ND.value()
        && d.origin_format != Format::RESERVED.value()
        && bits::primary(d.format) != bits::primary(d.origin_format)
}

/// The logical shape of a desc: the origin shape when transformed, else the shape.
pub fn logical_shape(d: &TensorDesc) -> &[i64] {
    match (&d.origin_shape, is_transformed(d)) {
        (Some(s), true) => s,
        _ => &d.shape,
    }
}

/// The logical primary format of a desc: the origin format when transformed or when the format
/// is ND, else the format.
pub fn logical_format(d: &TensorDesc) -> Format {
    let f = if is_transformed(d) || bits::primary(d.format) == Format::ND.value() {
        d.origin_format
    } else {
        d.format
    };
    Format::from_value(i64::from(bits::primary(f))).unwrap_or(Format::ND)
}

/// What a rule sees of one op: its descs, attributes and constant input values.
pub struct InferCtx<'a> {
    /// The op being inferred.
    pub op: &'a OpDesc,
    /// The rule's parameters.
    pub params: &'a Params,
    /// The constant value feeding input `i`, if its producer is a `Const`.
    pub values: &'a dyn Fn(usize) -> Option<Tensor>,
}

impl std::fmt::Debug for InferCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InferCtx")
            .field("op", &self.op.name())
            .finish()
    }
}

/// Rule results: the outputs, or a message.
pub type RuleResult = Result<Vec<OutDesc>, String>;

impl InferCtx<'_> {
    /// The string parameter `key`.
    pub fn param(&self, key: &str) -> Option<&str> {
        match self.params.get(key) {
            Some(Param::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The string parameter `key`, or `default`.
    pub fn param_or<'b>(&'b self, key: &str, default: &'b str) -> &'b str {
        self.param(key).unwrap_or(default)
    }

    /// The integer parameter `key`.
    pub fn param_int(&self, key: &str) -> Option<i64> {
        match self.params.get(key) {
            Some(Param::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// The list parameter `key`.
    pub fn param_list(&self, key: &str) -> Option<Vec<String>> {
        match self.params.get(key) {
            Some(Param::Strs(v)) => Some(v.clone()),
            Some(Param::Str(s)) => Some(vec![s.clone()]),
            _ => None,
        }
    }

    /// Index of the input called `name` (it must exist). An op whose inputs carry GE's
    /// automatic names (`__input<k>`, as in some GE dumps) resolves `name` by its position
    /// among the registered prototype's inputs.
    pub fn input(&self, name: &str) -> Result<usize, String> {
        if let Some(i) = self.op.input_index(name) {
            return Ok(i);
        }
        self.positional(name)
            .ok_or_else(|| format!("the op has no input named '{name}'"))
    }

    fn positional(&self, name: &str) -> Option<usize> {
        let auto = |p: &crate::op_desc::Port| p.name.starts_with("__input");
        if self.op.inputs().is_empty() || !self.op.inputs().iter().all(auto) {
            return None;
        }
        let proto = crate::registry::lookup(self.op.op_type())?;
        for (pos, spec) in proto.inputs.iter().enumerate() {
            if spec.name == name {
                return (pos < self.op.num_inputs()).then_some(pos);
            }
            if spec.kind == crate::op_desc::IrInputType::Dynamic {
                return None;
            }
        }
        None
    }

    /// Index of the input named by parameter `key` (default name `default`).
    pub fn input_param(&self, key: &str, default: &str) -> Result<usize, String> {
        self.input(self.param_or(key, default))
    }

    /// Index of the input called `name` when it exists and is set.
    pub fn opt_input(&self, name: &str) -> Option<usize> {
        self.op
            .input_index(name)
            .or_else(|| self.positional(name))
            .filter(|&i| self.op.inputs()[i].desc.is_valid())
    }

    /// The desc of input `i`.
    pub fn desc(&self, i: usize) -> &TensorDesc {
        &self.op.inputs()[i].desc
    }

    /// The logical shape of input `i`.
    pub fn shape(&self, i: usize) -> &[i64] {
        logical_shape(self.desc(i))
    }

    /// The dtype of input `i`.
    pub fn dtype(&self, i: usize) -> DataType {
        self.desc(i).dtype
    }

    /// The logical format of input `i`.
    pub fn format(&self, i: usize) -> Format {
        logical_format(self.desc(i))
    }

    /// Indices of the set inputs of the dynamic group `name` (`name0, name1, ...`), or the
    /// single input `name`.
    pub fn group(&self, name: &str) -> Vec<usize> {
        if let Some(i) = self.opt_input(name) {
            return vec![i];
        }
        self.op
            .inputs()
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                crate::registry::port_matches(&p.name, name, true) && p.desc.is_valid()
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// An attribute.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.op.attr(name)
    }

    /// An int attribute (bools count as 0/1), or `default`.
    pub fn attr_int(&self, name: &str, default: i64) -> i64 {
        match self.attr(name) {
            Some(AttrValue::Int(i)) => *i,
            Some(AttrValue::Bool(b)) => i64::from(*b),
            _ => default,
        }
    }

    /// A bool attribute (ints count as truthy), or `default`.
    pub fn attr_bool(&self, name: &str, default: bool) -> bool {
        match self.attr(name) {
            Some(AttrValue::Bool(b)) => *b,
            Some(AttrValue::Int(i)) => *i != 0,
            _ => default,
        }
    }

    /// A string attribute, or `default`.
    pub fn attr_str<'b>(&'b self, name: &str, default: &'b str) -> &'b str {
        match self.attr(name) {
            Some(AttrValue::String(s)) => s,
            _ => default,
        }
    }

    /// A list-of-int attribute (an int counts as a one-element list).
    pub fn attr_ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name)? {
            AttrValue::ListInt(v) => Some(v.clone()),
            AttrValue::Int(i) => Some(vec![*i]),
            AttrValue::ListListInt(v) => Some(v.iter().flatten().copied().collect()),
            _ => None,
        }
    }

    /// Integers from the input called `name` (its constant value) or, when there is no such
    /// input, from the attribute `name`. `Ok(None)` when the input exists but its value is not
    /// constant; an error when neither exists.
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, String> {
        if let Some(i) = self.op.input_index(name).or_else(|| self.positional(name)) {
            if !self.op.inputs()[i].desc.is_valid() {
                return Ok(self.attr_ints(name));
            }
            return match (self.values)(i) {
                Some(t) => shape::tensor_ints(&t).map(Some),
                None => Ok(None),
            };
        }
        match self.attr_ints(name) {
            Some(v) => Ok(Some(v)),
            None => Err(format!(
                "needs '{name}' (an input or an attribute), which is missing"
            )),
        }
    }

    /// Like `ints`, but the name comes from parameter `key` (default `default`).
    pub fn ints_param(&self, key: &str, default: &str) -> Result<Option<Vec<i64>>, String> {
        self.ints(self.param_or(key, default))
    }

    /// Whether the op has an input or attribute called `name`.
    pub fn has(&self, name: &str) -> bool {
        self.op.input_index(name).is_some()
            || self.attr(name).is_some()
            || self.positional(name).is_some()
    }

    /// Number of elements of the constant feeding `name` when only its shape is known: the
    /// length of a 1-D input (for unknown values of known length).
    pub fn len_of(&self, name: &str) -> Option<usize> {
        let i = self.opt_input(name)?;
        match self.shape(i) {
            [n] if *n >= 0 => Some(*n as usize),
            [] => Some(1),
            _ => None,
        }
    }

    /// The output dtype from the `dtype` parameter (default: the dtype of input `default`).
    pub fn out_dtype(&self, default: usize) -> Result<DataType, String> {
        match self.param("dtype") {
            None => Ok(self
                .op
                .inputs()
                .get(default)
                .map_or(DataType::FLOAT, |p| p.desc.dtype)),
            Some(text) => self.resolve_dtype(&parse_dtype_spec(text)?, default),
        }
    }

    /// Resolve a dtype spec.
    pub fn resolve_dtype(&self, spec: &DtypeSpec, default: usize) -> Result<DataType, String> {
        Ok(match spec {
            DtypeSpec::Fixed(d) => *d,
            DtypeSpec::Input(name) => self.dtype(self.input(name)?),
            DtypeSpec::Attr(name, fallback) => match self.attr(name) {
                Some(AttrValue::Int(i)) => DataType::from_ge(*i)
                    .ok_or_else(|| format!("attribute '{name}' = {i} is not a data type"))?,
                Some(AttrValue::DataType(d)) => *d,
                Some(other) => {
                    return Err(format!(
                        "attribute '{name}' is a {}, not a data type",
                        other.kind().name()
                    ))
                }
                None if *fallback != DataType::UNDEFINED => *fallback,
                None => self
                    .op
                    .inputs()
                    .get(default)
                    .map_or(DataType::FLOAT, |p| p.desc.dtype),
            },
        })
    }

    /// `n` copies of one output (for ops whose outputs all share a shape).
    pub fn all_outputs(&self, out: OutDesc) -> Vec<OutDesc> {
        vec![out; self.op.num_outputs().max(1)]
    }
}

/// Run the declarative rule of `rule` on `ctx`.
pub fn run_rule(rule: &InferRule, ctx: &InferCtx<'_>) -> RuleResult {
    use RuleKind as K;
    match rule.kind {
        K::None | K::Custom => Ok(Vec::new()),
        K::SameAs => elementwise::same_as(ctx),
        K::Broadcast => elementwise::broadcast(ctx),
        K::Cast => elementwise::cast(ctx),
        K::Select => elementwise::select(ctx),
        K::Passthrough => elementwise::passthrough(ctx),
        K::Data => elementwise::data(ctx),
        K::Const => elementwise::constant(ctx),
        K::Reduce => reduce::reduce(ctx),
        K::ArgMax => reduce::arg_max(ctx),
        K::TopK => reduce::topk(ctx),
        K::LayerNorm => reduce::layer_norm(ctx),
        K::FlashAttention => matmul::flash_attention(ctx),
        K::MatMul => matmul::matmul(ctx, false),
        K::BatchMatMul => matmul::matmul(ctx, true),
        K::FullyConnection => matmul::fully_connection(ctx),
        K::Conv => conv::conv(ctx),
        K::ConvBackpropInput => conv::conv_backprop_input(ctx),
        K::Pool => conv::pool(ctx),
        K::CaffePool => conv::caffe_pool(ctx),
        K::GlobalPool => conv::global_pool(ctx),
        K::Reshape => reshape::reshape(ctx),
        K::Transpose => reshape::transpose(ctx),
        K::Squeeze => reshape::squeeze(ctx),
        K::Unsqueeze => reshape::unsqueeze(ctx),
        K::ExpandDims => reshape::expand_dims(ctx),
        K::Flatten => reshape::flatten(ctx),
        K::Concat => index::concat(ctx),
        K::Pack => index::pack(ctx),
        K::Split => index::split(ctx),
        K::Gather => index::gather(ctx),
        K::Slice => index::slice(ctx),
        K::StridedSlice => index::strided_slice(ctx),
        K::SliceAxes => index::slice_axes(ctx),
        K::Tile => index::tile(ctx),
        K::Expand => index::expand(ctx),
        K::Pad => index::pad(ctx),
        K::ShapeOf => misc::shape_of(ctx),
        K::Size => misc::size(ctx),
        K::Fill => misc::fill(ctx),
        K::Range => misc::range(ctx),
        K::TransData => misc::trans_data(ctx),
        K::If => misc::if_without_subgraphs(ctx),
        K::While => elementwise::passthrough(ctx),
    }
}
