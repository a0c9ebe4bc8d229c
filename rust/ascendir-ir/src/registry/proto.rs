//! Op prototypes: declared inputs, outputs, attributes, type variables and subgraph slots,
//! and what is built and checked from them (input plans, `OpDesc` instantiation, attribute
//! coercion).

use std::collections::HashMap;

use smallvec::SmallVec;
use std::sync::Arc;

use crate::attr::{AttrKind, AttrValue};
use crate::dtype::DataType;
use crate::infer::InferRule;
use crate::op_desc::{IrInputType, IrOutputType, OpDesc, SubgraphType};
use crate::tensor::TensorDesc;

/// How many slots each declared input of a prototype takes ([`OpProto::plan_inputs`]); inline
/// for up to eight declared inputs, so planning a node allocates nothing.
pub type InputPlan = SmallVec<[usize; 8]>;

/// Why positional inputs do not fit a prototype's declared inputs ([`OpProto::plan_counts`]);
/// displayed as [`OpProto::plan_inputs`]' message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanMisfit {
    /// No dynamic input: between `required` and `fixed` inputs are taken, `given` were given.
    Count {
        /// Required inputs.
        required: usize,
        /// Required and optional inputs.
        fixed: usize,
        /// Inputs given.
        given: usize,
    },
    /// One dynamic input: at least `fixed` inputs are taken, `given` were given.
    AtLeast {
        /// Required and optional inputs.
        fixed: usize,
        /// Inputs given.
        given: usize,
    },
    /// More than one dynamic input: the inputs must be passed grouped.
    SeveralDynamic,
}

impl std::fmt::Display for PlanMisfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            PlanMisfit::Count {
                required,
                fixed,
                given,
            } if required == fixed => write!(f, "takes {fixed} inputs, {given} given"),
            PlanMisfit::Count {
                required,
                fixed,
                given,
            } => write!(f, "takes {required} to {fixed} inputs, {given} given"),
            PlanMisfit::AtLeast { fixed, given } => {
                write!(f, "takes at least {fixed} inputs, {given} given")
            }
            PlanMisfit::SeveralDynamic => {
                f.write_str("has several dynamic inputs; pass each one as a list")
            }
        }
    }
}

/// Errors of registration and of building ops from prototypes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A registration is refused (duplicate type, malformed prototype).
    #[error("{0}")]
    Registration(String),
    /// An op does not match its prototype (input count, attribute kind, missing attribute, dtype).
    #[error("{0}")]
    Invalid(String),
    /// A type that is not registered, with the registered types nearest to it (best first).
    #[error("unknown op type '{op_type}'{}", did_you_mean(suggestions))]
    UnknownType {
        /// The type asked for.
        op_type: String,
        /// The nearest registered types, best first (may be empty).
        suggestions: Vec<String>,
    },
}

/// `; did you mean 'A', 'B'?` for a non-empty list of suggestions, else nothing.
fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("'{s}'")).collect();
    format!("; did you mean {}?", quoted.join(", "))
}

/// One declared input.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    /// IR name (`x`; a dynamic input `x` has instances `x0, x1, ...`).
    pub name: String,
    /// Required, optional or dynamic.
    pub kind: IrInputType,
    /// The dtype type variable constraining it, if any.
    pub type_var: Option<String>,
}

/// One declared output.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// IR name.
    pub name: String,
    /// Required or dynamic.
    pub kind: IrOutputType,
    /// The dtype type variable constraining it, if any.
    pub type_var: Option<String>,
}

/// One declared attribute; `default == None` marks a required attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrSpec {
    /// Attribute name.
    pub name: String,
    /// Its kind; values of compatible kinds are converted (int → float, ...).
    pub kind: AttrKind,
    /// The default value, `None` for a required attribute.
    pub default: Option<AttrValue>,
}

/// A dtype type variable: every port using it has the same dtype, one of `allowed`
/// (empty = any).
#[derive(Clone, Debug, PartialEq)]
pub struct TypeVarSpec {
    /// Variable name (`T`).
    pub name: String,
    /// Allowed dtypes; empty means unconstrained.
    pub allowed: Vec<DataType>,
}

/// An operator prototype.
#[derive(Clone, Debug, PartialEq)]
pub struct OpProto {
    /// The op type (`Conv2D`).
    pub op_type: String,
    /// Inputs in IR order.
    pub inputs: Vec<InputSpec>,
    /// Outputs in IR order.
    pub outputs: Vec<OutputSpec>,
    /// Attributes in IR order.
    pub attrs: Vec<AttrSpec>,
    /// Dtype type variables.
    pub type_vars: Vec<TypeVarSpec>,
    /// Subgraph slots.
    pub subgraphs: Vec<(String, SubgraphType)>,
    /// The inference rule.
    pub rule: InferRule,
    /// For a dynamic output: the attribute giving its instance count (`num_split`).
    pub dynamic_output_count_attr: Option<String>,
}

impl OpProto {
    /// An empty prototype for `op_type` (no ports, no inference).
    pub fn new(op_type: &str) -> Self {
        OpProto {
            op_type: op_type.to_string(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            attrs: Vec::new(),
            type_vars: Vec::new(),
            subgraphs: Vec::new(),
            rule: InferRule::none(),
            dynamic_output_count_attr: None,
        }
    }

    /// Check the prototype itself: unique names, known type variables, well-formed rule.
    pub fn check(&self) -> Result<(), RegistryError> {
        let bad = |m: String| {
            Err(RegistryError::Registration(format!(
                "op '{}': {m}",
                self.op_type
            )))
        };
        if self.op_type.is_empty() {
            return Err(RegistryError::Registration(
                "an op type must not be empty".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for name in self.inputs.iter().map(|i| &i.name) {
            if !seen.insert(name.as_str()) {
                return bad(format!("input '{name}' is declared twice"));
            }
        }
        seen.clear();
        for name in self.outputs.iter().map(|o| &o.name) {
            if !seen.insert(name.as_str()) {
                return bad(format!("output '{name}' is declared twice"));
            }
        }
        seen.clear();
        for a in &self.attrs {
            if !seen.insert(a.name.as_str()) {
                return bad(format!("attribute '{}' is declared twice", a.name));
            }
            if let Some(d) = &a.default {
                if coerce_attr(a.kind, d.clone()).is_none() {
                    return bad(format!(
                        "the default of attribute '{}' is a {}, not a {}",
                        a.name,
                        d.kind().name(),
                        a.kind.name()
                    ));
                }
            }
        }
        let vars: Vec<&str> = self.type_vars.iter().map(|t| t.name.as_str()).collect();
        let used = self
            .inputs
            .iter()
            .filter_map(|i| i.type_var.as_deref())
            .chain(self.outputs.iter().filter_map(|o| o.type_var.as_deref()));
        for v in used {
            if !vars.contains(&v) {
                return bad(format!("type variable '{v}' is used but not declared"));
            }
        }
        let dyn_outs = self
            .outputs
            .iter()
            .filter(|o| o.kind == IrOutputType::Dynamic)
            .count();
        if dyn_outs > 1 {
            return bad("at most one dynamic output is supported".into());
        }
        self.rule
            .check(self)
            .map_err(|m| RegistryError::Registration(format!("op '{}': {m}", self.op_type)))
    }

    /// The attribute spec called `name`.
    pub fn attr(&self, name: &str) -> Option<&AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Build an `OpDesc` named `name` from this prototype. `dynamic_inputs[k]` is the instance
    /// count of the k-th dynamic input; `set_optional[k]` whether the k-th optional input is
    /// set; `dynamic_outputs` the instance count of the dynamic output. Input descs are
    /// `input_descs` in order (one per created input slot; unset optional slots get the invalid
    /// desc whatever is passed). Attributes are `attrs` coerced to their declared kinds, with
    /// defaults filled in; undeclared attributes are kept as given.
    pub fn build(
        &self,
        name: &str,
        input_descs: &[Option<Arc<TensorDesc>>],
        dynamic_outputs: usize,
        attrs: crate::attr::AttrMap,
    ) -> Result<OpDesc, RegistryError> {
        let plan = self
            .plan_inputs(input_descs.len())
            .map_err(|m| RegistryError::Invalid(format!("op '{name}' ({}): {m}", self.op_type)))?;
        self.build_planned(name, &plan, input_descs, dynamic_outputs, attrs)
    }

    /// An op of this type as `OpDesc::from_type` gives it: one slot per required input, no
    /// optional or dynamic input instance, the dynamic output instances its count attribute
    /// asks for (from `attrs`, else its default; none without one), every port with the
    /// default desc, attributes checked and completed with their defaults.
    pub fn build_default(
        &self,
        name: &str,
        attrs: crate::attr::AttrMap,
    ) -> Result<OpDesc, RegistryError> {
        let plan: Vec<usize> = self
            .inputs
            .iter()
            .map(|i| usize::from(i.kind == IrInputType::Required))
            .collect();
        let descs = vec![None; plan.iter().sum()];
        let dynamic_outputs = self
            .dynamic_output_count_attr
            .as_deref()
            .and_then(|a| {
                attrs
                    .get(a)
                    .or_else(|| self.attr(a).and_then(|s| s.default.as_ref()))
            })
            .and_then(AttrValue::as_int)
            .map_or(0, |n| usize::try_from(n).unwrap_or(0));
        self.build_planned(name, &plan, &descs, dynamic_outputs, attrs)
    }

    /// Like `build` with an explicit slot count per declared input (`plan[k]` slots for input
    /// `k`: 1 for required, 0 or 1 for optional, any for dynamic); `input_descs` has one entry
    /// per slot.
    pub fn build_planned(
        &self,
        name: &str,
        plan: &[usize],
        input_descs: &[Option<Arc<TensorDesc>>],
        dynamic_outputs: usize,
        attrs: crate::attr::AttrMap,
    ) -> Result<OpDesc, RegistryError> {
        let ctx =
            |m: String| RegistryError::Invalid(format!("op '{name}' ({}): {m}", self.op_type));
        if plan.len() != self.inputs.len() || plan.iter().sum::<usize>() != input_descs.len() {
            return Err(ctx(format!(
                "input plan {plan:?} does not match {} declared inputs and {} descs",
                self.inputs.len(),
                input_descs.len()
            )));
        }
        let mut op = OpDesc::new(name, &self.op_type);
        let mut k = 0usize;
        let default_desc = Arc::new(TensorDesc::default());
        for (spec, count) in self.inputs.iter().zip(plan.iter()) {
            match spec.kind {
                IrInputType::Required => {
                    let d = input_descs[k]
                        .clone()
                        .unwrap_or_else(|| default_desc.clone());
                    op.add_input(&spec.name, d);
                    k += 1;
                }
                IrInputType::Optional => {
                    let given = if *count == 1 {
                        input_descs[k].clone()
                    } else {
                        None
                    };
                    k += count;
                    let d = given.unwrap_or_else(|| Arc::new(TensorDesc::invalid()));
                    op.add_optional_input(&spec.name, d);
                }
                IrInputType::Dynamic => {
                    for i in 0..*count {
                        let d = input_descs[k]
                            .clone()
                            .unwrap_or_else(|| default_desc.clone());
                        op.add_input(&format!("{}{i}", spec.name), d);
                        k += 1;
                    }
                }
            }
        }
        for spec in &self.outputs {
            match spec.kind {
                IrOutputType::Required => {
                    op.add_output(&spec.name, default_desc.clone())
                        .map_err(|e| ctx(e.to_string()))?;
                }
                IrOutputType::Dynamic => {
                    for i in 0..dynamic_outputs {
                        op.add_output(&format!("{}{i}", spec.name), default_desc.clone())
                            .map_err(|e| ctx(e.to_string()))?;
                    }
                }
            }
        }
        op.attrs = self.check_attrs(attrs).map_err(ctx)?;
        let meta = op.meta_mut();
        meta.ir_inputs = self
            .inputs
            .iter()
            .map(|i| (Arc::from(i.name.as_str()), i.kind))
            .collect();
        meta.ir_outputs = self
            .outputs
            .iter()
            .map(|o| (Arc::from(o.name.as_str()), o.kind))
            .collect();
        meta.ir_attr_names = self.attrs.iter().map(|a| a.name.clone()).collect();
        for (sg, kind) in &self.subgraphs {
            if *kind == SubgraphType::Static {
                op.add_subgraph_name(sg).map_err(|e| ctx(e.to_string()))?;
            }
        }
        Ok(op)
    }

    /// How many slots each declared input takes for `given` positional inputs: required and
    /// optional inputs take one (trailing optional inputs may be left out), a dynamic input
    /// takes what remains. With more than one dynamic input the caller must use
    /// `plan_inputs_grouped`.
    pub fn plan_inputs(&self, given: usize) -> Result<InputPlan, String> {
        self.plan_counts(given).map_err(|m| m.to_string())
    }

    /// [`OpProto::plan_inputs`] with the misfit as a value (nothing formatted): for callers
    /// that only ask whether the counts fit.
    pub fn plan_counts(&self, given: usize) -> Result<InputPlan, PlanMisfit> {
        let fixed = self
            .inputs
            .iter()
            .filter(|i| i.kind != IrInputType::Dynamic)
            .count();
        let dynamic = self.inputs.len() - fixed;
        let required = self
            .inputs
            .iter()
            .filter(|i| i.kind == IrInputType::Required)
            .count();
        if dynamic == 0 {
            if given < required || given > fixed {
                return Err(PlanMisfit::Count {
                    required,
                    fixed,
                    given,
                });
            }
            // Fill in order; trailing optional inputs beyond `given` are unset.
            let mut left = given;
            let mut plan = InputPlan::with_capacity(self.inputs.len());
            let mut required_left = required;
            for spec in &self.inputs {
                match spec.kind {
                    IrInputType::Required => {
                        plan.push(1);
                        left -= 1;
                        required_left -= 1;
                    }
                    _ => {
                        let take = usize::from(left > required_left);
                        plan.push(take);
                        left -= take;
                    }
                }
            }
            return Ok(plan);
        }
        if dynamic > 1 {
            return Err(PlanMisfit::SeveralDynamic);
        }
        if given < fixed {
            return Err(PlanMisfit::AtLeast { fixed, given });
        }
        Ok(self
            .inputs
            .iter()
            .map(|i| {
                if i.kind == IrInputType::Dynamic {
                    given - fixed
                } else {
                    1
                }
            })
            .collect())
    }

    /// Validate attributes against the declarations: coerce declared ones to their kind, fill
    /// defaults, fail on a missing required attribute.
    pub fn check_attrs(
        &self,
        mut attrs: crate::attr::AttrMap,
    ) -> Result<crate::attr::AttrMap, String> {
        for spec in &self.attrs {
            match attrs.remove(&spec.name) {
                Some(v) => {
                    let given = v.kind();
                    let v = coerce_attr(spec.kind, v).ok_or_else(|| {
                        format!(
                            "attribute '{}' must be {}, got {}",
                            spec.name,
                            spec.kind.name(),
                            given.name()
                        )
                    })?;
                    attrs.insert(spec.name.clone(), v);
                }
                None => match &spec.default {
                    Some(d) => {
                        attrs.insert(spec.name.clone(), d.clone());
                    }
                    None => return Err(format!("required attribute '{}' is missing", spec.name)),
                },
            }
        }
        Ok(attrs)
    }

    /// Check the dtypes of an op's ports against the type variables: each port's dtype must
    /// be allowed, and all ports bound to one variable must agree. Unset optional inputs and
    /// `UNDEFINED` dtypes are skipped. `outputs` selects whether outputs are checked too.
    pub fn check_dtypes(&self, op: &OpDesc, outputs: bool) -> Result<(), String> {
        // (variable, port label, dtype) for every constrained port.
        let mut seen: Vec<(&str, String, DataType)> = Vec::new();
        for spec in &self.inputs {
            let Some(var) = spec.type_var.as_deref() else {
                continue;
            };
            for (i, port) in op.inputs().iter().enumerate() {
                if port.desc.is_valid()
                    && port_matches(&port.name, &spec.name, spec.kind == IrInputType::Dynamic)
                {
                    seen.push((var, format!("input {i} '{}'", port.name), port.desc.dtype));
                }
            }
        }
        if outputs {
            for spec in &self.outputs {
                let Some(var) = spec.type_var.as_deref() else {
                    continue;
                };
                for (i, port) in op.outputs().iter().enumerate() {
                    if port_matches(&port.name, &spec.name, spec.kind == IrOutputType::Dynamic) {
                        seen.push((var, format!("output {i} '{}'", port.name), port.desc.dtype));
                    }
                }
            }
        }
        let mut bound: HashMap<&str, (DataType, &str)> = HashMap::new();
        for (var, port, dt) in &seen {
            if *dt == DataType::UNDEFINED {
                continue;
            }
            if let Some(tv) = self.type_vars.iter().find(|t| t.name == *var) {
                if !tv.allowed.is_empty() && !tv.allowed.contains(dt) {
                    return Err(format!(
                        "{port} has dtype {}, but {var} allows only {}",
                        dt.name(),
                        tv.allowed
                            .iter()
                            .map(|d| d.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            match bound.get(var) {
                Some((first, who)) if first != dt => {
                    return Err(format!(
                        "{port} has dtype {} but {who} has {} (both are {var})",
                        dt.name(),
                        first.name()
                    ))
                }
                Some(_) => {}
                None => {
                    bound.insert(var, (*dt, port.as_str()));
                }
            }
        }
        Ok(())
    }

    /// The single allowed dtype of the type variable of output `spec`, if it has exactly one.
    pub fn fixed_output_dtype(&self, output: usize) -> Option<DataType> {
        let var = self.outputs.get(output)?.type_var.as_deref()?;
        let tv = self.type_vars.iter().find(|t| t.name == var)?;
        (tv.allowed.len() == 1).then(|| tv.allowed[0])
    }
}

/// Whether a port called `port` belongs to the IR port `ir` (`x` or, dynamic, `x0, x1, ...`).
pub fn port_matches(port: &str, ir: &str, dynamic: bool) -> bool {
    if !dynamic {
        return port == ir;
    }
    port.strip_prefix(ir)
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
}

/// Convert `v` to `kind` where the conversion is lossless in intent: int → float, int ↔ bool
/// (0/1), int → data type, a list of one kind to another list kind, an empty list of any kind.
/// `None` when the value cannot be that kind.
pub fn coerce_attr(kind: AttrKind, v: AttrValue) -> Option<AttrValue> {
    if v.kind() == kind {
        return Some(v);
    }
    use AttrValue as V;
    Some(match (kind, v) {
        (AttrKind::Float, V::Int(i)) => V::Float(i as f32),
        (AttrKind::Bool, V::Int(i)) if i == 0 || i == 1 => V::Bool(i == 1),
        (AttrKind::Int, V::Bool(b)) => V::Int(i64::from(b)),
        (AttrKind::DataType, V::Int(i)) => V::DataType(DataType::from_ge(i)?),
        (AttrKind::Int, V::DataType(d)) => V::Int(i64::from(d.ge_value())),
        (AttrKind::Expression, V::String(s)) => V::Expression(s),
        (AttrKind::String, V::Expression(s)) => V::String(s),
        (AttrKind::ListFloat, V::ListInt(l)) => {
            V::ListFloat(l.into_iter().map(|i| i as f32).collect())
        }
        (AttrKind::ListDataType, V::ListInt(l)) => V::ListDataType(
            l.into_iter()
                .map(DataType::from_ge)
                .collect::<Option<Vec<_>>>()?,
        ),
        (AttrKind::ListBool, V::ListInt(l)) if l.iter().all(|&i| i == 0 || i == 1) => {
            V::ListBool(l.into_iter().map(|i| i == 1).collect())
        }
        (AttrKind::ListListFloat, V::ListListInt(l)) => V::ListListFloat(
            l.into_iter()
                .map(|r| r.into_iter().map(|i| i as f32).collect())
                .collect(),
        ),
        (k, v) if is_empty_list(&v) => empty_list(k)?,
        _ => return None,
    })
}

fn is_empty_list(v: &AttrValue) -> bool {
    use AttrValue as V;
    match v {
        V::ListInt(l) => l.is_empty(),
        V::ListFloat(l) => l.is_empty(),
        V::ListBool(l) => l.is_empty(),
        V::ListString(l) => l.is_empty(),
        V::ListBytes(l) => l.is_empty(),
        V::ListTensorDesc(l) => l.is_empty(),
        V::ListTensor(l) => l.is_empty(),
        V::ListGraph(l) => l.is_empty(),
        V::ListNamedAttrs(l) => l.is_empty(),
        V::ListDataType(l) => l.is_empty(),
        V::ListListInt(l) => l.is_empty(),
        V::ListListFloat(l) => l.is_empty(),
        _ => false,
    }
}

fn empty_list(kind: AttrKind) -> Option<AttrValue> {
    use AttrValue as V;
    Some(match kind {
        AttrKind::ListInt => V::ListInt(vec![]),
        AttrKind::ListFloat => V::ListFloat(vec![]),
        AttrKind::ListBool => V::ListBool(vec![]),
        AttrKind::ListString => V::ListString(vec![]),
        AttrKind::ListBytes => V::ListBytes(vec![]),
        AttrKind::ListTensorDesc => V::ListTensorDesc(vec![]),
        AttrKind::ListTensor => V::ListTensor(vec![]),
        AttrKind::ListGraph => V::ListGraph(vec![]),
        AttrKind::ListNamedAttrs => V::ListNamedAttrs(vec![]),
        AttrKind::ListDataType => V::ListDataType(vec![]),
        AttrKind::ListListInt => V::ListListInt(vec![]),
        AttrKind::ListListFloat => V::ListListFloat(vec![]),
        _ => return None,
    })
}
