//! The AscIR operator registry (GE's `REG_ASC_IR`): the builtin prototypes ([`crate::builtins`])
//! plus those pushed in by the Python layer or by Rust code, looked up by node creation, dtype
//! inference and the later passes.

use std::sync::{Arc, OnceLock, RwLock};

use ascendir_ir::DataType;
use rustc_hash::FxHashMap;

use crate::error::{AscError, AscResult};
use crate::expr::Expr;
use crate::graph::{ApiType, AttrValue, ComputeType};

/// How a port occurs (GE's `IrInputType` numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// Exactly one (0).
    Required = 0,
    /// Zero or one (1).
    Optional = 1,
    /// Any number, named `<name>0`, `<name>1`, ... (2).
    Dynamic = 2,
}

impl PortKind {
    /// From GE's number.
    pub fn from_i64(v: i64) -> PortKind {
        match v {
            1 => PortKind::Optional,
            2 => PortKind::Dynamic,
            _ => PortKind::Required,
        }
    }

    /// Parse `"required" | "optional" | "dynamic"`.
    pub fn parse(s: &str) -> AscResult<PortKind> {
        match s {
            "required" => Ok(PortKind::Required),
            "optional" => Ok(PortKind::Optional),
            "dynamic" => Ok(PortKind::Dynamic),
            _ => Err(AscError::Registry(format!("unknown port kind '{s}'"))),
        }
    }
}

/// One input or output of an operator prototype.
#[derive(Clone, Debug, PartialEq)]
pub struct PortDef {
    /// Port name (`x`, `y`, `x1`, ...).
    pub name: String,
    /// Occurrence.
    pub kind: PortKind,
    /// Name of the dtype type variable (`T`, `T1`, ...).
    pub dtype_var: String,
}

/// The value type of an IR attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrType {
    /// `int64`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `string`.
    Str,
    /// A size expression.
    Expr,
    /// A list of `int64`.
    ListInt,
    /// A data type.
    DType,
}

impl AttrType {
    /// Parse `"int" | "float" | "bool" | "str" | "expr" | "list_int" | "dtype"`.
    pub fn parse(s: &str) -> AscResult<AttrType> {
        Ok(match s {
            "int" | "int64" => AttrType::Int,
            "float" => AttrType::Float,
            "bool" => AttrType::Bool,
            "str" | "string" => AttrType::Str,
            "expr" | "expression" => AttrType::Expr,
            "list_int" => AttrType::ListInt,
            "dtype" => AttrType::DType,
            _ => return Err(AscError::Registry(format!("unknown attribute type '{s}'"))),
        })
    }

    /// The name accepted by [`AttrType::parse`].
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Int => "int",
            AttrType::Float => "float",
            AttrType::Bool => "bool",
            AttrType::Str => "str",
            AttrType::Expr => "expr",
            AttrType::ListInt => "list_int",
            AttrType::DType => "dtype",
        }
    }

    /// Whether `v` has this type.
    pub fn accepts(self, v: &AttrValue) -> bool {
        matches!(
            (self, v),
            (AttrType::Int, AttrValue::Int(_))
                | (AttrType::Float, AttrValue::Float(_))
                | (AttrType::Bool, AttrValue::Bool(_))
                | (AttrType::Str, AttrValue::Str(_))
                | (AttrType::Expr, AttrValue::Expr(_))
                | (AttrType::ListInt, AttrValue::ListInt(_))
                | (AttrType::DType, AttrValue::DType(_))
        )
    }
}

/// One IR attribute of an operator prototype.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrDef {
    /// Attribute name.
    pub name: String,
    /// Value type.
    pub ty: AttrType,
    /// Default value, if any.
    pub default: Option<AttrValue>,
}

/// An AscIR operator prototype.
#[derive(Clone, Debug, PartialEq)]
pub struct OpDef {
    /// Operator type (`Abs`, `Load`, ...).
    pub op_type: String,
    /// Inputs in order.
    pub inputs: Vec<PortDef>,
    /// Outputs in order.
    pub outputs: Vec<PortDef>,
    /// IR attributes.
    pub attrs: Vec<AttrDef>,
    /// Allowed dtypes per type variable, in declaration order (empty list = any).
    pub dtype_vars: Vec<(String, Vec<DataType>)>,
    /// Allowed joint assignments of `dtype_vars` (empty = any combination of the per-variable sets).
    pub dtype_combos: Vec<Vec<DataType>>,
    /// Compute type (`Invalid` for buffer ops).
    pub compute_type: ComputeType,
    /// Buffer or compute API.
    pub api_type: ApiType,
    /// Whether the output may reuse an input's buffer.
    pub inplace: bool,
    /// Temporary UB buffer size in bytes the API needs (`None` = none).
    pub tmp_buffer: Option<Expr>,
}

impl OpDef {
    /// A prototype with no ports or attributes.
    pub fn new(op_type: &str, compute_type: ComputeType) -> OpDef {
        OpDef {
            op_type: op_type.to_string(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            attrs: Vec::new(),
            dtype_vars: Vec::new(),
            dtype_combos: Vec::new(),
            compute_type,
            api_type: if compute_type == ComputeType::Invalid {
                ApiType::Buffer
            } else {
                ApiType::Compute
            },
            inplace: false,
            tmp_buffer: None,
        }
    }

    /// Builder: add an input.
    pub fn input(mut self, name: &str, kind: PortKind, var: &str) -> OpDef {
        self.inputs.push(PortDef {
            name: name.into(),
            kind,
            dtype_var: var.into(),
        });
        self
    }

    /// Builder: add an output.
    pub fn output(mut self, name: &str, kind: PortKind, var: &str) -> OpDef {
        self.outputs.push(PortDef {
            name: name.into(),
            kind,
            dtype_var: var.into(),
        });
        self
    }

    /// Builder: add an attribute.
    pub fn attr(mut self, name: &str, ty: AttrType, default: Option<AttrValue>) -> OpDef {
        self.attrs.push(AttrDef {
            name: name.into(),
            ty,
            default,
        });
        self
    }

    /// Builder: declare a dtype variable with its allowed types (empty = any).
    pub fn dtype_var(mut self, name: &str, allowed: &[DataType]) -> OpDef {
        self.dtype_vars.push((name.into(), allowed.to_vec()));
        self
    }

    /// The attribute definition named `name`.
    pub fn find_attr(&self, name: &str) -> Option<&AttrDef> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Allowed dtypes of variable `var` (`None` = undeclared).
    pub fn allowed(&self, var: &str) -> Option<&[DataType]> {
        self.dtype_vars
            .iter()
            .find(|(n, _)| n == var)
            .map(|(_, v)| v.as_slice())
    }

    /// Check the prototype is well formed.
    pub fn validate(&self) -> AscResult<()> {
        let bad = |m: String| Err(AscError::Registry(format!("op '{}': {m}", self.op_type)));
        if self.op_type.is_empty() {
            return Err(AscError::Registry("op type must not be empty".into()));
        }
        for p in self.inputs.iter().chain(self.outputs.iter()) {
            if p.name.is_empty() {
                return bad("empty port name".into());
            }
            if self.allowed(&p.dtype_var).is_none() {
                return bad(format!(
                    "port '{}' uses undeclared dtype variable '{}'",
                    p.name, p.dtype_var
                ));
            }
        }
        let mut names = rustc_hash::FxHashSet::default();
        for p in &self.inputs {
            if !names.insert(p.name.as_str()) {
                return bad(format!("duplicate input '{}'", p.name));
            }
        }
        names.clear();
        for p in &self.outputs {
            if !names.insert(p.name.as_str()) {
                return bad(format!("duplicate output '{}'", p.name));
            }
        }
        names.clear();
        for a in &self.attrs {
            if !names.insert(a.name.as_str()) {
                return bad(format!("duplicate attribute '{}'", a.name));
            }
            if let Some(d) = &a.default {
                if !a.ty.accepts(d) {
                    return bad(format!(
                        "default of attribute '{}' is not of type {}",
                        a.name,
                        a.ty.name()
                    ));
                }
            }
        }
        names.clear();
        for (v, _) in &self.dtype_vars {
            if !names.insert(v.as_str()) {
                return bad(format!("duplicate dtype variable '{v}'"));
            }
        }
        for c in &self.dtype_combos {
            if c.len() != self.dtype_vars.len() {
                return bad(format!(
                    "dtype combination {:?} has {} entries, expected {}",
                    c.iter().map(|d| d.serial_name()).collect::<Vec<_>>(),
                    c.len(),
                    self.dtype_vars.len()
                ));
            }
        }
        Ok(())
    }
}

/// A set of operator prototypes.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    ops: FxHashMap<String, Arc<OpDef>>,
}

impl Registry {
    /// Add a prototype; an existing type is an error unless `replace`.
    pub fn register(&mut self, def: OpDef, replace: bool) -> AscResult<Arc<OpDef>> {
        def.validate()?;
        if !replace && self.ops.contains_key(&def.op_type) {
            return Err(AscError::Registry(format!(
                "op type '{}' is already registered",
                def.op_type
            )));
        }
        let a = Arc::new(def);
        self.ops.insert(a.op_type.clone(), a.clone());
        Ok(a)
    }

    /// Look a prototype up.
    pub fn get(&self, op_type: &str) -> Option<Arc<OpDef>> {
        self.ops.get(op_type).cloned()
    }

    /// Registered types, sorted.
    pub fn types(&self) -> Vec<String> {
        let mut v: Vec<String> = self.ops.keys().cloned().collect();
        v.sort();
        v
    }
}

fn global() -> &'static RwLock<Registry> {
    static G: OnceLock<RwLock<Registry>> = OnceLock::new();
    G.get_or_init(|| RwLock::new(crate::builtins::builtin_registry()))
}

static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Register `def` in the process-wide registry.
pub fn register(def: OpDef, replace: bool) -> AscResult<Arc<OpDef>> {
    let mut g = global()
        .write()
        .map_err(|_| AscError::Registry("registry lock poisoned".into()))?;
    let r = g.register(def, replace);
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    r
}

/// A number that changes whenever the process-wide registry changes.
pub fn generation() -> u64 {
    GENERATION.load(std::sync::atomic::Ordering::Acquire)
}

/// The process-wide registry's content as text (every prototype's debug form, in type
/// order), for a content hash that changes with any registration.
pub fn content_text() -> String {
    let Ok(g) = global().read() else {
        return String::new();
    };
    let mut out = String::new();
    for t in g.types() {
        if let Some(d) = g.get(&t) {
            out.push_str(&format!("{d:?}\n"));
        }
    }
    out
}

/// Look `op_type` up in the process-wide registry.
pub fn lookup(op_type: &str) -> Option<Arc<OpDef>> {
    global().read().ok().and_then(|g| g.get(op_type))
}

/// Every type of the process-wide registry, sorted.
pub fn registered_types() -> Vec<String> {
    global().read().map(|g| g.types()).unwrap_or_default()
}
