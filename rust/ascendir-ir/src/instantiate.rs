//! Building an op from its registered prototype: the positional inputs matched to the declared
//! inputs (optional ones unset, dynamic ones expanded to `x0, x1, ...`), GE's `N` filled in, the
//! dynamic output count settled, the `OpDesc` built with the prototype's port names and default
//! attributes, and its input dtypes checked ([`OpProto::instantiate`]). Frontends that build ops
//! their own way take the prototype's port names from [`OpProto::port_names`].

use std::borrow::Cow;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::attr::{AttrKind, AttrMap, AttrValue};
use crate::op_desc::{IrInputType, IrOutputType, OpDesc, Side};
use crate::registry::{self, OpProto, RegistryError};
use crate::tensor::TensorDesc;

/// Why an op could not be built from its prototype. Each message is the one `Graph.add_op`
/// has always raised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstantiateError {
    /// The type has no registered prototype.
    #[error("operator type '{op_type}' is not registered")]
    UnknownType {
        /// The op type asked for.
        op_type: String,
    },
    /// The positional input count does not fit the declared inputs (`detail` says how).
    #[error("{op_type} '{node}' {detail}")]
    InputCount {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// What the prototype takes and what was given (`takes 2 inputs, 3 given`).
        detail: String,
    },
    /// With lists given for dynamic inputs, more arguments than declared inputs.
    #[error(
        "{op_type} '{node}' takes {declared} inputs (a list for each dynamic one), {given} given"
    )]
    GroupedInputCount {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// Declared inputs.
        declared: usize,
        /// Arguments given.
        given: usize,
    },
    /// A required input is unset.
    #[error("{op_type} '{node}': input '{input}' is required")]
    MissingInput {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// The declared input left unset.
        input: String,
    },
    /// A list was given for an input that takes one tensor.
    #[error("{op_type} '{node}': input '{input}' takes one tensor, not a list")]
    NotAList {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// The declared input.
        input: String,
    },
    /// An output count was requested for a type without a dynamic output, and differs.
    #[error("op '{node}' ({op_type}) has {declared} outputs, {requested} requested")]
    OutputCount {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// Declared outputs.
        declared: usize,
        /// Outputs requested.
        requested: usize,
    },
    /// Explicit output descs whose count is not the op's output count.
    #[error("op '{node}' ({op_type}) has {outputs} outputs, {given} output descs given")]
    OutputDescCount {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// Outputs of the built op.
        outputs: usize,
        /// Descs given.
        given: usize,
    },
    /// The input dtypes break the prototype's type variables.
    #[error("op '{node}' ({op_type}): {message}")]
    Dtype {
        /// The op type.
        op_type: String,
        /// The node name.
        node: String,
        /// Which ports disagree.
        message: String,
    },
    /// Building the op failed (attribute kinds, missing required attribute, ...).
    #[error(transparent)]
    Build(#[from] RegistryError),
}

/// One positional input of an op being built: unset, one source, or a group (a dynamic input).
/// `T` is whatever the caller links from (an anchor, a desc, an input index).
#[derive(Debug, Clone, PartialEq)]
pub enum InputArg<T> {
    /// No tensor (an unset optional input).
    Unset,
    /// One tensor.
    One(T),
    /// A list of tensors for a dynamic input.
    Group(Vec<T>),
}

/// The positional inputs matched to the declared ones: one slot per created input port (`None`
/// for an unset optional input) and the slot count of each declared input.
#[derive(Debug, Clone, PartialEq)]
pub struct InputPlan<T> {
    /// The sources, one per input port of the op to build.
    pub slots: Vec<Option<T>>,
    /// Slots per declared input (1 for required and optional, any for dynamic).
    pub counts: Vec<usize>,
}

/// The outputs asked for: a total output count, the number of explicit output descs, or
/// neither (then the count attribute, the dynamic input count or 1 decide).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputRequest {
    /// The total output count asked for.
    pub count: Option<usize>,
    /// How many output descs will be given for the op's outputs.
    pub descs: Option<usize>,
}

impl OpProto {
    /// Match positional inputs to the declared inputs of an op named `node`: one slot per
    /// required / optional input (`Unset` leaves an optional one unset), a list per dynamic
    /// input. Without lists, a single dynamic input takes the positional inputs left over.
    pub fn plan_args<T>(
        &self,
        node: &str,
        args: Vec<InputArg<T>>,
    ) -> Result<InputPlan<T>, InstantiateError> {
        let grouped = args.iter().any(|a| matches!(a, InputArg::Group(_)));
        let mut slots = Vec::new();
        let mut counts = Vec::with_capacity(self.inputs.len());
        let missing = |input: &str| InstantiateError::MissingInput {
            op_type: self.op_type.clone(),
            node: node.to_string(),
            input: input.to_string(),
        };
        if !grouped {
            let plan =
                self.plan_inputs(args.len())
                    .map_err(|detail| InstantiateError::InputCount {
                        op_type: self.op_type.clone(),
                        node: node.to_string(),
                        detail,
                    })?;
            let mut it = args.into_iter();
            for (spec, count) in self.inputs.iter().zip(plan) {
                if spec.kind == IrInputType::Optional && count == 0 {
                    slots.push(None);
                    counts.push(1);
                    continue;
                }
                counts.push(count);
                for _ in 0..count {
                    match it.next() {
                        Some(InputArg::One(s)) => slots.push(Some(s)),
                        Some(InputArg::Unset) if spec.kind == IrInputType::Optional => {
                            slots.push(None)
                        }
                        _ => return Err(missing(&spec.name)),
                    }
                }
            }
            return Ok(InputPlan { slots, counts });
        }
        if args.len() > self.inputs.len() {
            return Err(InstantiateError::GroupedInputCount {
                op_type: self.op_type.clone(),
                node: node.to_string(),
                declared: self.inputs.len(),
                given: args.len(),
            });
        }
        let mut args = args.into_iter();
        for spec in &self.inputs {
            let arg = args.next().unwrap_or(InputArg::Unset);
            let before = slots.len();
            match (spec.kind, arg) {
                (IrInputType::Dynamic, InputArg::Group(v)) => slots.extend(v.into_iter().map(Some)),
                (IrInputType::Dynamic, InputArg::One(s)) => slots.push(Some(s)),
                (IrInputType::Dynamic, InputArg::Unset) => {}
                (IrInputType::Optional, InputArg::Unset) => slots.push(None),
                (_, InputArg::One(s)) => slots.push(Some(s)),
                (_, InputArg::Group(_)) => {
                    return Err(InstantiateError::NotAList {
                        op_type: self.op_type.clone(),
                        node: node.to_string(),
                        input: spec.name.clone(),
                    })
                }
                (_, InputArg::Unset) => return Err(missing(&spec.name)),
            }
            counts.push(slots.len() - before);
        }
        Ok(InputPlan { slots, counts })
    }

    /// Build the op `name` from this prototype: `counts` slots per declared input (from
    /// [`OpProto::plan_args`]), `input_descs` one per slot (`None`: the producer's desc is not
    /// known, or the optional input is unset). GE's `N` attribute (the dynamic input count) is
    /// filled when declared and not given; the dynamic output instances are `outputs.count`
    /// less the fixed outputs, else the explicit descs' count less them, else the count
    /// attribute's value, else the dynamic input count (at least 1). Attributes are coerced to
    /// their declared kinds with defaults filled in; input dtypes are checked against the type
    /// variables. Output descs are left as declared (see [`OpProto::set_output_descs`]).
    pub fn instantiate(
        &self,
        name: &str,
        counts: &[usize],
        input_descs: &[Option<Arc<TensorDesc>>],
        mut attrs: AttrMap,
        outputs: OutputRequest,
    ) -> Result<OpDesc, InstantiateError> {
        let dyn_inputs: usize = self
            .inputs
            .iter()
            .zip(counts)
            .filter(|(s, _)| s.kind == IrInputType::Dynamic)
            .map(|(_, &c)| c)
            .sum();
        let has_dynamic_input = self.inputs.iter().any(|i| i.kind == IrInputType::Dynamic);
        if has_dynamic_input && !attrs.contains_key("N") {
            if let Some(spec) = self.attr("N") {
                if spec.kind == AttrKind::Int {
                    attrs.insert("N", AttrValue::Int(dyn_inputs as i64));
                }
            }
        }
        let has_dynamic_output = self.outputs.iter().any(|o| o.kind == IrOutputType::Dynamic);
        let fixed_outputs = self.outputs.len() - usize::from(has_dynamic_output);
        let dyn_outputs = match (outputs.count, outputs.descs) {
            (Some(n), _) => {
                if !has_dynamic_output && n != fixed_outputs {
                    return Err(InstantiateError::OutputCount {
                        op_type: self.op_type.clone(),
                        node: name.to_string(),
                        declared: fixed_outputs,
                        requested: n,
                    });
                }
                n.saturating_sub(fixed_outputs)
            }
            (None, Some(d)) if has_dynamic_output => d.saturating_sub(fixed_outputs),
            (None, _) => match &self.dynamic_output_count_attr {
                Some(a) => match attrs
                    .get(a)
                    .or_else(|| self.attr(a).and_then(|s| s.default.as_ref()))
                {
                    Some(AttrValue::Int(n)) if *n >= 0 => *n as usize,
                    _ => 1,
                },
                None if has_dynamic_output && has_dynamic_input => dyn_inputs.max(1),
                None => usize::from(has_dynamic_output),
            },
        };
        let op = self.build_planned(name, counts, input_descs, dyn_outputs, attrs)?;
        self.check_dtypes(&op, false)
            .map_err(|message| InstantiateError::Dtype {
                op_type: self.op_type.clone(),
                node: name.to_string(),
                message,
            })?;
        Ok(op)
    }

    /// Give the outputs of `op` (built from this prototype) the descs `descs`, one per output.
    pub fn set_output_descs(
        &self,
        op: &mut OpDesc,
        descs: &[Arc<TensorDesc>],
    ) -> Result<(), InstantiateError> {
        if descs.len() != op.num_outputs() {
            return Err(InstantiateError::OutputDescCount {
                op_type: self.op_type.clone(),
                node: op.name().to_string(),
                outputs: op.num_outputs(),
                given: descs.len(),
            });
        }
        for (i, desc) in descs.iter().enumerate() {
            op.set_port_desc(Side::Output, i, desc.clone())
                .map_err(|e| RegistryError::Invalid(e.to_string()))?;
        }
        Ok(())
    }

    /// The port names an op of this type has with `n_inputs` positional inputs and `n_outputs`
    /// outputs: inputs as [`OpProto::plan_inputs`] lays them out (trailing optional inputs left
    /// out, a dynamic input `x` expanded to `x0, x1, ...`), outputs the first `n_outputs`
    /// declared ones (a dynamic output expanded over the outputs beyond the fixed ones).
    /// `None` when the counts do not fit the prototype.
    pub fn port_names(&self, n_inputs: usize, n_outputs: usize) -> Option<PortNames<'_>> {
        let mut inputs = SmallVec::with_capacity(n_inputs);
        let mut outputs = SmallVec::with_capacity(n_outputs);
        let fits = self.visit_port_names(n_inputs, n_outputs, |side, name| match side {
            Side::Input => inputs.push(name.to_cow()),
            Side::Output => outputs.push(name.to_cow()),
        });
        fits.then_some(PortNames { inputs, outputs })
    }

    /// The names of [`OpProto::port_names`] handed to `f` one by one (inputs first, then
    /// outputs, each in order) without building them: for frontends that compare them with
    /// names of their own on every node. Returns `false`, having called `f` for none, when the
    /// counts do not fit the prototype.
    pub fn visit_port_names<'a>(
        &'a self,
        n_inputs: usize,
        n_outputs: usize,
        mut f: impl FnMut(Side, PortName<'a>),
    ) -> bool {
        let Ok(plan) = self.plan_counts(n_inputs) else {
            return false;
        };
        let dynamic = self.outputs.iter().any(|o| o.kind == IrOutputType::Dynamic);
        let fixed = self.outputs.len() - usize::from(dynamic);
        if !dynamic && n_outputs > fixed {
            return false;
        }
        for (spec, count) in self.inputs.iter().zip(plan) {
            if spec.kind == IrInputType::Dynamic {
                for i in 0..count {
                    f(Side::Input, PortName::instance(&spec.name, i));
                }
            } else if count == 1 {
                f(Side::Input, PortName::declared(&spec.name));
            }
        }
        let mut given = 0usize;
        for spec in &self.outputs {
            if spec.kind == IrOutputType::Dynamic {
                let count = n_outputs.saturating_sub(fixed);
                for i in 0..count.min(n_outputs - given) {
                    f(Side::Output, PortName::instance(&spec.name, i));
                }
                given += count.min(n_outputs - given);
            } else if given < n_outputs {
                f(Side::Output, PortName::declared(&spec.name));
                given += 1;
            }
            if given == n_outputs {
                break;
            }
        }
        true
    }
}

/// One port name of a prototype ([`OpProto::visit_port_names`]): a declared name, or the
/// instance `{name}{k}` of a dynamic port, unbuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortName<'a> {
    /// The declared name.
    pub declared: &'a str,
    /// The instance number of a dynamic port.
    pub instance: Option<usize>,
}

impl<'a> PortName<'a> {
    fn declared(name: &'a str) -> Self {
        PortName {
            declared: name,
            instance: None,
        }
    }

    fn instance(name: &'a str, k: usize) -> Self {
        PortName {
            declared: name,
            instance: Some(k),
        }
    }

    /// Whether `name` is this name (compared without building it).
    pub fn is(&self, name: &str) -> bool {
        match self.instance {
            None => name == self.declared,
            Some(k) => name
                .strip_prefix(self.declared)
                .is_some_and(|digits| is_decimal(digits, k)),
        }
    }

    /// The name, borrowed when it is a declared one.
    pub fn to_cow(self) -> Cow<'a, str> {
        match self.instance {
            None => Cow::Borrowed(self.declared),
            Some(k) => Cow::Owned(format!("{}{k}", self.declared)),
        }
    }
}

impl std::fmt::Display for PortName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.declared)?;
        match self.instance {
            Some(k) => write!(f, "{k}"),
            None => Ok(()),
        }
    }
}

/// Whether `digits` is `k` written as `format!` writes it (decimal, no sign, no leading zero).
fn is_decimal(digits: &str, mut k: usize) -> bool {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (k % 10) as u8;
        k /= 10;
        if k == 0 {
            break;
        }
    }
    digits.as_bytes() == &buf[at..]
}

/// Port names from a prototype ([`OpProto::port_names`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortNames<'a> {
    /// Input port names, in order.
    pub inputs: SmallVec<[Cow<'a, str>; 4]>,
    /// Output port names, in order.
    pub outputs: SmallVec<[Cow<'a, str>; 4]>,
}

impl<'a> PortNames<'a> {
    /// The name of input `k`, or `given` past the prototype's inputs.
    pub fn input_or<'b>(&'b self, k: usize, given: &'b str) -> &'b str {
        self.inputs.get(k).map_or(given, |n| n.as_ref())
    }

    /// The name of output `k`, or `given` past the prototype's outputs.
    pub fn output_or<'b>(&'b self, k: usize, given: &'b str) -> &'b str {
        self.outputs.get(k).map_or(given, |n| n.as_ref())
    }
}

/// Build op `name` of the registered type `op_type` from `input_descs`, one per positional
/// input (`None` unsets an optional input), with `attrs` and the outputs `outputs` asks for.
pub fn instantiate(
    op_type: &str,
    name: &str,
    input_descs: Vec<Option<Arc<TensorDesc>>>,
    attrs: AttrMap,
    outputs: OutputRequest,
) -> Result<OpDesc, InstantiateError> {
    let proto = registry::lookup(op_type).ok_or_else(|| InstantiateError::UnknownType {
        op_type: op_type.to_string(),
    })?;
    let args = input_descs
        .into_iter()
        .map(|d| d.map_or(InputArg::Unset, InputArg::One))
        .collect();
    let plan = proto.plan_args(name, args)?;
    proto.instantiate(name, &plan.counts, &plan.slots, attrs, outputs)
}

#[cfg(test)]
#[path = "instantiate_tests.rs"]
mod tests;
