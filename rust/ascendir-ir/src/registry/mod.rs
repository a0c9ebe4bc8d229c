//! The operator registry: prototypes declared by op libraries (inputs, outputs, attributes with
//! kinds and defaults, dtype type variables, subgraph slots, an inference rule), kept in one
//! process-wide table, and the helpers that build and validate an `OpDesc` from a prototype.
//!
//! A type is registered once. A second registration fails unless an op-library loading window
//! is open (`begin_library` / `end_library`) and the caller asks to override, as GE's
//! "register overridable" switch.

use std::sync::{Arc, LazyLock, RwLock};

use rustc_hash::{FxHashMap, FxHashSet};

mod proto;
mod suggest;
mod table;

pub use proto::*;
pub use suggest::{edit_distance, near_matches, MAX_SUGGESTIONS};
pub use table::{parse_table, proto_to_text, protos_to_table, TableError, BUILTIN_TABLE};

#[derive(Default)]
struct Registry {
    protos: FxHashMap<String, Arc<OpProto>>,
    /// The types registered from the builtin table (and not unregistered since).
    builtins: FxHashSet<String>,
    /// Why the builtin table could not be read (a build defect, reported by look-ups' callers
    /// through [`builtin_table_error`]; the table's own test keeps it `None`).
    table_error: Option<TableError>,
    /// What decides an op's results besides its prototype (a Python function's identity),
    /// as text, by type.
    behaviour: FxHashMap<String, String>,
    /// Open op-library loading windows (nested loads count).
    library_depth: usize,
    /// Bumped on every change, so that caches can tell when to refresh.
    generation: u64,
}

impl Registry {
    /// A registry holding the builtin op table.
    fn with_builtins() -> Registry {
        let mut r = Registry::default();
        match parse_table(BUILTIN_TABLE) {
            Ok(protos) => {
                for p in protos {
                    r.builtins.insert(p.op_type.clone());
                    r.protos.insert(p.op_type.clone(), Arc::new(p));
                }
            }
            Err(e) => r.table_error = Some(e),
        }
        r
    }
}

/// The process-wide registry, holding the builtin table from its first use.
static REGISTRY: LazyLock<RwLock<Registry>> =
    LazyLock::new(|| RwLock::new(Registry::with_builtins()));

fn with_read<R>(f: impl FnOnce(&Registry) -> R) -> R {
    let guard = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    f(&guard)
}

fn with_write<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut guard = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    f(&mut guard)
}

/// Register `proto`. A type that is already registered fails, unless `overriding` is set and
/// an op-library loading window is open, in which case the new prototype replaces it.
pub fn register(proto: OpProto, overriding: bool) -> Result<Arc<OpProto>, RegistryError> {
    proto.check()?;
    with_write(|r| {
        if overriding && r.library_depth == 0 {
            return Err(RegistryError::Registration(format!(
                "cannot register '{}' with override=True: overriding is allowed only while an op \
                 library is loading",
                proto.op_type
            )));
        }
        if r.protos.contains_key(&proto.op_type) && !overriding {
            return Err(RegistryError::Registration(format!(
                "op type '{}' is already registered",
                proto.op_type
            )));
        }
        let p = Arc::new(proto);
        r.protos.insert(p.op_type.clone(), p.clone());
        r.generation += 1;
        Ok(p)
    })
}

/// Remove a registration (returns whether it existed). Meant for tests and library reloads.
pub fn unregister(op_type: &str) -> bool {
    with_write(|r| {
        r.generation += 1;
        r.builtins.remove(op_type);
        r.behaviour.remove(op_type);
        r.protos.remove(op_type).is_some()
    })
}

/// Whether `op_type` was registered by the builtin table (and not unregistered since; an
/// override inside an op library keeps it builtin).
pub fn is_builtin(op_type: &str) -> bool {
    with_read(|r| r.builtins.contains(op_type))
}

/// Why the builtin table could not be read, if it could not (then no builtin is registered).
pub fn builtin_table_error() -> Option<TableError> {
    with_read(|r| r.table_error.clone())
}

/// Record what decides `op_type`'s results besides its prototype (for a function attached by
/// a binding: its identity and code digest), so that [`content_text`] changes with it.
pub fn set_behaviour(op_type: &str, text: Option<String>) {
    with_write(|r| {
        r.generation += 1;
        match text {
            Some(t) => r.behaviour.insert(op_type.to_string(), t),
            None => r.behaviour.remove(op_type),
        };
    })
}

/// The registry's content as canonical text: every prototype's table form in type order,
/// each followed by its behaviour text. Two registries with the same text infer alike; a
/// content hash over it changes whenever anything is registered, overridden or removed.
pub fn content_text() -> String {
    with_read(|r| {
        let mut types: Vec<&String> = r.protos.keys().collect();
        types.sort();
        let mut out = String::new();
        for ty in types {
            match proto_to_text(&r.protos[ty]) {
                Ok(t) => out.push_str(&t),
                // Not representable as a table (a default of an exotic kind): its debug form
                // still changes with its content.
                Err(_) => out.push_str(&format!("{:?}\n", r.protos[ty])),
            }
            if let Some(b) = r.behaviour.get(ty) {
                out.push_str("behaviour ");
                out.push_str(b);
                out.push('\n');
            }
        }
        out
    })
}

/// The prototype of `op_type`.
pub fn lookup(op_type: &str) -> Option<Arc<OpProto>> {
    with_read(|r| r.protos.get(op_type).cloned())
}

/// Whether `op_type` is registered.
pub fn contains(op_type: &str) -> bool {
    with_read(|r| r.protos.contains_key(op_type))
}

/// The prototype of `op_type`, or [`RegistryError::UnknownType`] naming the registered types
/// nearest to it.
pub fn lookup_or_suggest(op_type: &str) -> Result<Arc<OpProto>, RegistryError> {
    with_read(|r| match r.protos.get(op_type) {
        Some(p) => Ok(p.clone()),
        None => Err(RegistryError::UnknownType {
            op_type: op_type.to_string(),
            suggestions: near_matches(op_type, r.protos.keys().map(String::as_str)),
        }),
    })
}

/// Every registered type, sorted.
pub fn registered_types() -> Vec<String> {
    let mut v: Vec<String> = with_read(|r| r.protos.keys().cloned().collect());
    v.sort();
    v
}

/// A number that changes whenever the registry changes.
pub fn generation() -> u64 {
    with_read(|r| r.generation)
}

/// Open an op-library loading window (overrides allowed until the matching `end_library`).
pub fn begin_library() {
    with_write(|r| r.library_depth += 1);
}

/// Close an op-library loading window.
pub fn end_library() {
    with_write(|r| r.library_depth = r.library_depth.saturating_sub(1));
}

/// Whether an op-library loading window is open.
pub fn library_loading() -> bool {
    with_read(|r| r.library_depth > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::{AttrKind, AttrValue};
    use crate::dtype::DataType;
    use crate::infer::InferRule;
    use crate::op_desc::{IrInputType, IrOutputType};
    use crate::tensor::TensorDesc;

    fn proto(ty: &str) -> OpProto {
        let mut p = OpProto::new(ty);
        p.inputs = vec![
            InputSpec {
                name: "x".into(),
                kind: IrInputType::Required,
                type_var: Some("T".into()),
            },
            InputSpec {
                name: "bias".into(),
                kind: IrInputType::Optional,
                type_var: Some("T".into()),
            },
        ];
        p.outputs = vec![OutputSpec {
            name: "y".into(),
            kind: IrOutputType::Required,
            type_var: Some("T".into()),
        }];
        p.attrs = vec![
            AttrSpec {
                name: "alpha".into(),
                kind: AttrKind::Float,
                default: Some(AttrValue::Float(1.0)),
            },
            AttrSpec {
                name: "axes".into(),
                kind: AttrKind::ListInt,
                default: None,
            },
        ];
        p.type_vars = vec![TypeVarSpec {
            name: "T".into(),
            allowed: vec![DataType::FLOAT, DataType::FLOAT16],
        }];
        p.rule = InferRule::same_as("x");
        p
    }

    #[test]
    fn duplicate_and_override_window() {
        register(proto("RegTestA"), false).unwrap();
        assert!(register(proto("RegTestA"), false).is_err());
        assert!(register(proto("RegTestA"), true).is_err());
        begin_library();
        assert!(library_loading());
        register(proto("RegTestA"), true).unwrap();
        end_library();
        assert!(lookup("RegTestA").is_some());
        assert!(registered_types().contains(&"RegTestA".to_string()));
        assert!(unregister("RegTestA"));
        assert!(!contains("RegTestA"));
    }

    #[test]
    fn malformed_prototypes_are_refused() {
        let mut p = proto("RegTestB");
        p.inputs.push(p.inputs[0].clone());
        assert!(register(p, false).is_err());
        let mut p = proto("RegTestB");
        p.type_vars.clear();
        assert!(register(p, false).is_err());
        let mut p = proto("RegTestB");
        p.attrs[0].default = Some(AttrValue::String("x".into()));
        assert!(p.check().is_err());
    }

    #[test]
    fn build_fills_defaults_and_metadata() {
        let p = proto("RegTestC");
        let d = Some(Arc::new(TensorDesc::default()));
        let mut attrs = crate::attr::AttrMap::new();
        attrs.insert("axes", AttrValue::ListInt(vec![1]));
        attrs.insert("alpha", AttrValue::Int(2));
        let op = p
            .build("n", std::slice::from_ref(&d), 0, attrs.clone())
            .unwrap();
        assert_eq!(op.num_inputs(), 2);
        assert!(!op.inputs()[1].desc.is_valid());
        assert_eq!(op.attr("alpha"), Some(&AttrValue::Float(2.0)));
        assert_eq!(
            op.meta().unwrap().ir_attr_names,
            vec!["alpha".to_string(), "axes".to_string()]
        );
        assert!(p
            .build("n", &[d.clone(), d.clone(), d.clone()], 0, attrs.clone())
            .is_err());
        assert!(p
            .build(
                "n",
                std::slice::from_ref(&d),
                0,
                crate::attr::AttrMap::new()
            )
            .is_err());
        let mut bad = attrs.clone();
        bad.insert("alpha", AttrValue::String("no".into()));
        let e = p.build("n", &[d], 0, bad).unwrap_err().to_string();
        assert!(e.contains("alpha"), "{e}");
    }

    #[test]
    fn dtype_variables() {
        let p = proto("RegTestD");
        let f = Some(Arc::new(TensorDesc::new(
            &[2],
            DataType::FLOAT,
            crate::format::Format::ND,
        )));
        let h = Some(Arc::new(TensorDesc::new(
            &[2],
            DataType::FLOAT16,
            crate::format::Format::ND,
        )));
        let i = Some(Arc::new(TensorDesc::new(
            &[2],
            DataType::INT32,
            crate::format::Format::ND,
        )));
        let mut attrs = crate::attr::AttrMap::new();
        attrs.insert("axes", AttrValue::ListInt(vec![]));
        let ok = p
            .build("n", &[f.clone(), f.clone()], 0, attrs.clone())
            .unwrap();
        assert!(p.check_dtypes(&ok, false).is_ok());
        let mixed = p.build("n", &[f, h], 0, attrs.clone()).unwrap();
        assert!(p.check_dtypes(&mixed, false).is_err());
        let wrong = p.build("n", &[i], 0, attrs).unwrap();
        assert!(p.check_dtypes(&wrong, false).unwrap_err().contains("INT32"));
    }

    #[test]
    fn input_plans() {
        let mut p = OpProto::new("P");
        p.inputs = vec![
            InputSpec {
                name: "axis".into(),
                kind: IrInputType::Required,
                type_var: None,
            },
            InputSpec {
                name: "x".into(),
                kind: IrInputType::Dynamic,
                type_var: None,
            },
        ];
        assert_eq!(p.plan_inputs(4).unwrap()[..], [1, 3]);
        assert!(p.plan_inputs(0).is_err());
        assert!(port_matches("x12", "x", true));
        assert!(!port_matches("x", "x", true));
        assert!(!port_matches("xa", "x", true));
    }
}
