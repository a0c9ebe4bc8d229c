//! Bindings of the operator registry and shape inference: the private `_ops_*` functions
//! behind `ascendir.ops` / `ascendir.infer`, `Graph.infer_shapes`, and the registered-type
//! path of `Graph.add_op` (prototype-driven ports, attributes, validation and inference; in
//! `add`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ascendir_ir::infer::{self, CustomInfer, InferError, OutDesc, Param, Params, RuleKind};
use ascendir_ir::registry::{self, AttrSpec, InputSpec, OpProto, OutputSpec, TypeVarSpec};
use ascendir_ir::{
    AttrMap, DataType, Graph, IrError, IrInputType, IrOutputType, NodeId, OpDesc, OutAnchor, Shape,
    SubgraphType, Tensor, TensorDesc,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::errors::{invalid_argument_error, py_err, raise, registry_error, IntoPyResult};
use crate::ir::convert::{attr_to_py, attrs_to_dict, infer_kind, py_to_attr};
use crate::ir::graph::PyGraph;
use crate::ir::node::{extract_source, PyNode};
use crate::ir::tensor::{PyTensor, PyTensorDesc};
use crate::ir::types::{extract_dtype, py_dtype};

mod add;

pub use add::{add_registered, attrs_for};

/// Python functions attached to registered types: (infer, verify).
type PyFuncs = (Option<Py<PyAny>>, Option<Py<PyAny>>);

static PY_FUNCS: Mutex<Option<HashMap<String, PyFuncs>>> = Mutex::new(None);

fn funcs_of(py: Python<'_>, ty: &str) -> PyFuncs {
    let guard = PY_FUNCS.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref().and_then(|m| m.get(ty)) {
        Some((i, v)) => (
            i.as_ref().map(|f| f.clone_ref(py)),
            v.as_ref().map(|f| f.clone_ref(py)),
        ),
        None => (None, None),
    }
}

/// Whether `ascendir.ops._ensure_loaded` has returned in this process (set here, after it
/// returns; the Python side keeps its own state, this only spares the call).
static LIBRARIES_LOADED: AtomicBool = AtomicBool::new(false);

/// Make sure the Python op libraries are loaded before a registry look-up that matters: the
/// builtin ops' Python functions and the user libraries, which may override builtins
/// (`ascendir.ops._ensure_loaded`). The builtin prototypes themselves are in the Rust registry
/// from its first use.
pub fn ensure_libraries(py: Python<'_>) -> PyResult<()> {
    if LIBRARIES_LOADED.load(Ordering::Acquire) {
        return Ok(());
    }
    py.import("ascendir.ops")?.call_method0("_ensure_loaded")?;
    LIBRARIES_LOADED.store(true, Ordering::Release);
    Ok(())
}

/// The prototype of `ty`, the Python op libraries loaded first.
pub fn lookup(py: Python<'_>, ty: &str) -> PyResult<Option<Arc<OpProto>>> {
    ensure_libraries(py)?;
    Ok(registry::lookup(ty))
}

/// The error of `Graph.add_op` for a type that is not registered: `NotFoundError` naming the
/// nearest registered types.
pub fn unknown_type<T>(ty: &str) -> PyResult<T> {
    match registry::lookup_or_suggest(ty) {
        Err(e) => Err(py_err(e)),
        // Registered meanwhile (another thread): still refused, as the caller decided.
        Ok(_) => Err(py_err(registry::RegistryError::UnknownType {
            op_type: ty.to_string(),
            suggestions: Vec::new(),
        })),
    }
}

fn input_kind(s: &str) -> PyResult<IrInputType> {
    Ok(match s {
        "required" => IrInputType::Required,
        "optional" => IrInputType::Optional,
        "dynamic" => IrInputType::Dynamic,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown input kind '{s}'"
            )))
        }
    })
}

fn parse_params(d: &Bound<'_, PyDict>) -> PyResult<Params> {
    let mut params = Params::new();
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        let p = if let Ok(i) = v.extract::<i64>() {
            Param::Int(i)
        } else if let Ok(s) = v.extract::<String>() {
            Param::Str(s)
        } else if let Ok(l) = v.extract::<Vec<String>>() {
            Param::Strs(l)
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "rule parameter '{key}' must be an int, a string or a list of strings"
            )));
        };
        params.insert(key, p);
    }
    Ok(params)
}

fn parse_proto(spec: &Bound<'_, PyDict>) -> PyResult<OpProto> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        spec.get_item(k)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(format!("op spec has no '{k}'")))
    };
    let ty: String = get("type")?.extract()?;
    let mut p = OpProto::new(&ty);
    for item in get("inputs")?.try_iter()? {
        let (name, kind, tv): (String, String, Option<String>) = item?.extract()?;
        p.inputs.push(InputSpec {
            name,
            kind: input_kind(&kind)?,
            type_var: tv,
        });
    }
    for item in get("outputs")?.try_iter()? {
        let (name, kind, tv): (String, String, Option<String>) = item?.extract()?;
        let kind = match kind.as_str() {
            "required" => IrOutputType::Required,
            "dynamic" => IrOutputType::Dynamic,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown output kind '{kind}'"
                )))
            }
        };
        p.outputs.push(OutputSpec {
            name,
            kind,
            type_var: tv,
        });
    }
    for item in get("attrs")?.try_iter()? {
        let item = item?;
        let t = item.cast::<PyTuple>()?;
        let name: String = t.get_item(0)?.extract()?;
        let kind = crate::ir::convert::extract_kind(&t.get_item(1)?)?;
        let has_default: bool = t.get_item(3)?.extract()?;
        let default = if has_default {
            Some(py_to_attr(&name, &t.get_item(2)?, Some(kind))?)
        } else {
            None
        };
        p.attrs.push(AttrSpec {
            name,
            kind,
            default,
        });
    }
    for item in get("type_vars")?.try_iter()? {
        let item = item?;
        let t = item.cast::<PyTuple>()?;
        let name: String = t.get_item(0)?.extract()?;
        let allowed = t
            .get_item(1)?
            .try_iter()?
            .map(|d| extract_dtype(&d?))
            .collect::<PyResult<Vec<DataType>>>()?;
        p.type_vars.push(TypeVarSpec { name, allowed });
    }
    for item in get("subgraphs")?.try_iter()? {
        let (name, kind): (String, String) = item?.extract()?;
        let kind = if kind == "dynamic" {
            SubgraphType::Dynamic
        } else {
            SubgraphType::Static
        };
        p.subgraphs.push((name, kind));
    }
    let rule = get("rule")?;
    let rule = rule.cast::<PyTuple>()?;
    let kind_name: String = rule.get_item(0)?.extract()?;
    let kind = RuleKind::from_name(&kind_name).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "unknown inference rule kind '{kind_name}'"
        ))
    })?;
    let params = parse_params(rule.get_item(1)?.cast::<PyDict>()?)?;
    p.rule = infer::InferRule::new(kind, params);
    p.dynamic_output_count_attr = spec
        .get_item("dynamic_output_count_attr")?
        .and_then(|v| v.extract().ok());
    Ok(p)
}

/// Register an op prototype (a spec dict built by `ascendir.ops`), with optional Python
/// `infer` and `verify` functions.
/// An inference rule: its name and its parameters as `(name, value)` text.
type RuleOf = (String, Vec<(String, String)>);

#[pyfunction]
#[pyo3(signature = (spec, *, overriding=false, infer=None, verify=None, behaviour=None))]
fn _ops_register(
    py: Python<'_>,
    spec: &Bound<'_, PyDict>,
    overriding: bool,
    infer: Option<Py<PyAny>>,
    verify: Option<Py<PyAny>>,
    behaviour: Option<String>,
) -> PyResult<()> {
    crate::errors::guard_res(|| {
        let mut proto = parse_proto(spec)?;
        if infer.is_some() && proto.rule.kind == RuleKind::None {
            proto.rule = infer::InferRule::new(RuleKind::Custom, Params::new());
        }
        if proto.rule.kind == RuleKind::Custom && infer.is_none() {
            return Err(raise(
                py,
                registry_error(py),
                format!(
                    "op '{}': a custom inference rule needs an infer function",
                    proto.op_type
                ),
                &[],
            ));
        }
        let ty = proto.op_type.clone();
        registry::register(proto, overriding).map_err(py_err)?;
        attach(&ty, infer, verify, behaviour);
        Ok(())
    })
}

fn attach(
    ty: &str,
    infer: Option<Py<PyAny>>,
    verify: Option<Py<PyAny>>,
    behaviour: Option<String>,
) {
    registry::set_behaviour(ty, behaviour);
    let mut guard = PY_FUNCS.lock().unwrap_or_else(|e| e.into_inner());
    guard
        .get_or_insert_with(HashMap::new)
        .insert(ty.to_string(), (infer, verify));
}

/// Attach Python `infer` / `verify` functions to a registered type (a builtin whose
/// prototype comes from the builtin table); `behaviour` identifies them for the registry's
/// content hash.
#[pyfunction]
#[pyo3(signature = (ty, *, infer=None, verify=None, behaviour=None))]
fn _ops_attach(
    ty: &str,
    infer: Option<Py<PyAny>>,
    verify: Option<Py<PyAny>>,
    behaviour: Option<String>,
) -> PyResult<()> {
    crate::errors::guard_res(|| {
        if !registry::contains(ty) {
            return Err(py_err(ascendir_ir::IrError::NotFound(format!(
                "op type '{ty}' is not registered"
            ))));
        }
        attach(ty, infer, verify, behaviour);
        Ok(())
    })
}

/// Whether `ty` was registered by the builtin op table.
#[pyfunction]
fn _ops_is_builtin(ty: &str) -> PyResult<bool> {
    crate::errors::guard(|| registry::is_builtin(ty))
}

/// The op table text of prototype specs (as `_ops_register` takes them), sorted by type: what
/// `python -m ascendir.ops._table` writes.
#[pyfunction]
fn _ops_table_text(specs: Vec<Bound<'_, PyDict>>) -> PyResult<String> {
    crate::errors::guard_res(|| {
        let protos = specs
            .iter()
            .map(parse_proto)
            .collect::<PyResult<Vec<OpProto>>>()?;
        registry::protos_to_table(&protos)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    })
}

/// Remove a registration; returns whether it existed.
#[pyfunction]
fn _ops_unregister(ty: &str) -> PyResult<bool> {
    crate::errors::guard(|| {
        let mut guard = PY_FUNCS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = guard.as_mut() {
            m.remove(ty);
        }
        registry::unregister(ty)
    })
}

/// Whether `ty` is registered (no lazy loading).
#[pyfunction]
fn _ops_contains(ty: &str) -> PyResult<bool> {
    crate::errors::guard(|| registry::contains(ty))
}

/// Every registered type, sorted.
#[pyfunction]
fn _ops_types() -> PyResult<Vec<String>> {
    crate::errors::guard(registry::registered_types)
}

/// Open an op-library loading window (overrides allowed).
#[pyfunction]
fn _ops_begin_library() -> PyResult<()> {
    crate::errors::guard(|| {
        registry::begin_library();
    })
}

/// Close an op-library loading window.
#[pyfunction]
fn _ops_end_library() -> PyResult<()> {
    crate::errors::guard(|| {
        registry::end_library();
    })
}

/// Whether an op library is loading.
#[pyfunction]
fn _ops_library_loading() -> PyResult<bool> {
    crate::errors::guard(registry::library_loading)
}

/// The names of the declarative rule kinds.
#[pyfunction]
fn _ops_rule_kinds() -> PyResult<Vec<&'static str>> {
    crate::errors::guard(|| RuleKind::ALL.iter().map(|k| k.name()).collect())
}

/// Check a rule against a registered prototype's ports (for `ascendir.infer` helpers).
#[pyfunction]
fn _ops_rule_of(ty: &str) -> PyResult<Option<RuleOf>> {
    crate::errors::guard(|| {
        let p = registry::lookup(ty)?;
        let params = p
            .rule
            .params
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    Param::Int(i) => i.to_string(),
                    Param::Str(s) => s.clone(),
                    Param::Strs(l) => l.join(","),
                };
                (k.clone(), s)
            })
            .collect();
        Some((p.rule.kind.name().to_string(), params))
    })
}

/// A registered type's signature, as the builders of `ascendir.ops` and the stub generator
/// read it: `(inputs, outputs, attrs, count_attr)` with inputs and outputs as `(name, kind)`
/// (`"required"`, `"optional"`, `"dynamic"`) and attributes as `(name, kind, default,
/// has_default)`, in IR order; `None` for an unregistered type. The op libraries load first.
#[pyfunction]
fn _ops_signature<'py>(py: Python<'py>, ty: &str) -> PyResult<Option<Bound<'py, PyTuple>>> {
    crate::errors::guard_res(|| {
        let Some(p) = lookup(py, ty)? else {
            return Ok(None);
        };
        let in_kind = |k: IrInputType| match k {
            IrInputType::Required => "required",
            IrInputType::Optional => "optional",
            IrInputType::Dynamic => "dynamic",
        };
        let out_kind = |k: IrOutputType| match k {
            IrOutputType::Required => "required",
            IrOutputType::Dynamic => "dynamic",
        };
        let inputs: Vec<(String, &str)> = p
            .inputs
            .iter()
            .map(|i| (i.name.clone(), in_kind(i.kind)))
            .collect();
        let outputs: Vec<(String, &str)> = p
            .outputs
            .iter()
            .map(|o| (o.name.clone(), out_kind(o.kind)))
            .collect();
        let mut attrs = Vec::with_capacity(p.attrs.len());
        for a in &p.attrs {
            let default = match &a.default {
                Some(v) => attr_to_py(py, v)?,
                None => py.None(),
            };
            attrs.push((a.name.clone(), a.kind as i64, default, a.default.is_some()));
        }
        Ok(Some(PyTuple::new(
            py,
            [
                inputs.into_pyobject(py)?.into_any(),
                outputs.into_pyobject(py)?.into_any(),
                attrs.into_pyobject(py)?.into_any(),
                p.dynamic_output_count_attr
                    .clone()
                    .into_pyobject(py)?
                    .into_any(),
            ],
        )?))
    })
}

/// Build the Python context object handed to `infer` / `verify` functions.
fn py_context<'py>(
    py: Python<'py>,
    op: &OpDesc,
    values: &dyn Fn(usize) -> Option<Tensor>,
) -> PyResult<Bound<'py, PyAny>> {
    let inputs = PyList::empty(py);
    let vals = PyList::empty(py);
    for (i, p) in op.inputs().iter().enumerate() {
        if p.desc.is_valid() {
            inputs.append(Py::new(py, PyTensorDesc::owned(p.desc.clone()))?)?;
        } else {
            inputs.append(py.None())?;
        }
        match values(i) {
            Some(t) => vals.append(Py::new(py, PyTensor { inner: t })?)?,
            None => vals.append(py.None())?,
        }
    }
    let input_names: Vec<String> = op.inputs().iter().map(|p| p.name.to_string()).collect();
    let output_names: Vec<String> = op.outputs().iter().map(|p| p.name.to_string()).collect();
    let attrs = attrs_to_dict(py, &op.attrs)?;
    let cls = py.import("ascendir.ops")?.getattr("InferContext")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("op_type", op.op_type())?;
    kwargs.set_item("name", op.name())?;
    kwargs.set_item("inputs", inputs)?;
    kwargs.set_item("input_names", input_names)?;
    kwargs.set_item("output_names", output_names)?;
    kwargs.set_item("attrs", attrs)?;
    kwargs.set_item("values", vals)?;
    cls.call((), Some(&kwargs))
}

/// Convert what a Python infer function returned: a list of `TensorDesc` or `(shape, dtype)`.
fn outputs_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Vec<OutDesc>> {
    let mut outs = Vec::new();
    for item in obj.try_iter()? {
        let item = item?;
        if let Ok(td) = item.cast::<PyTensorDesc>() {
            let d = td.borrow().snapshot(item.py())?;
            outs.push(OutDesc::new(
                Shape::from_slice(infer::logical_shape(&d)),
                d.dtype,
            ));
            continue;
        }
        let (shape, dtype): (Vec<i64>, Bound<'_, PyAny>) = item.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "an infer function must return a list of TensorDesc or (shape, dtype) pairs",
            )
        })?;
        outs.push(OutDesc::new(Shape::from_vec(shape), extract_dtype(&dtype)?));
    }
    Ok(outs)
}

/// Python `infer` functions, called with the GIL re-acquired.
pub(crate) struct PyCustom;

impl CustomInfer for PyCustom {
    fn infer(
        &mut self,
        proto: &OpProto,
        op: &OpDesc,
        values: &dyn Fn(usize) -> Option<Tensor>,
    ) -> Result<Vec<OutDesc>, String> {
        Python::attach(|py| {
            let (f, _) = funcs_of(py, &proto.op_type);
            let Some(f) = f else {
                return Err(format!("'{}' has no Python infer function", proto.op_type));
            };
            let run = || -> PyResult<Vec<OutDesc>> {
                let ctx = py_context(py, op, values)?;
                outputs_from_py(&f.bind(py).call1((ctx,))?)
            };
            run().map_err(|e| format!("the Python infer function raised {e}"))
        })
    }
}

/// Run a Python verify function, if the type has one: `None` / `True` pass, `False` or a
/// string fail, an exception propagates.
fn run_verify(
    py: Python<'_>,
    op: &OpDesc,
    values: &dyn Fn(usize) -> Option<Tensor>,
) -> PyResult<()> {
    let (_, v) = funcs_of(py, op.op_type());
    let Some(v) = v else { return Ok(()) };
    let ctx = py_context(py, op, values)?;
    let r = v.bind(py).call1((ctx,))?;
    let problem = if r.is_none() {
        None
    } else if let Ok(b) = r.extract::<bool>() {
        (!b).then(|| "the verifier returned False".to_string())
    } else if let Ok(s) = r.cast::<PyString>() {
        Some(s.to_str()?.to_string())
    } else {
        None
    };
    match problem {
        Some(m) => Err(raise(
            py,
            invalid_argument_error(py),
            format!(
                "op '{}' ({}) failed verification: {m}",
                op.name(),
                op.op_type()
            ),
            &[],
        )),
        None => Ok(()),
    }
}

/// Infer the outputs of `node` from its current input descs, attributes and constant inputs,
/// without changing the graph: `[(shape, dtype), ...]`, or `None` for unregistered types.
#[pyfunction]
fn _ops_infer_node<'py>(
    py: Python<'py>,
    node: &Bound<'py, PyNode>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    crate::errors::guard_res(|| {
        let n = node.get();
        let ty = n.read(py, |g, id| Ok(g.op(id)?.op_type().to_string()))?;
        let Some(proto) = lookup(py, &ty)? else {
            return Ok(None);
        };
        let (op, vals): (OpDesc, Vec<Option<Tensor>>) = n.read(py, |g, id| {
            let op = g.op(id)?.clone();
            let vals = (0..op.num_inputs())
                .map(|i| infer::engine::input_value(g, id, i))
                .collect();
            Ok((op, vals))
        })?;
        let values = |i: usize| vals.get(i).cloned().flatten();
        let outs = infer::infer_op(&proto, &op, &values, &mut PyCustom)
            .and_then(|outs| infer::engine::check_outputs(&outs).map(|()| outs))
            .map_err(|m| {
                py_err(InferError {
                    graph: String::new(),
                    node: op.name().to_string(),
                    op_type: ty.clone(),
                    rule: proto.rule.kind.name().to_string(),
                    message: m,
                })
            })?;
        let list = PyList::empty(py);
        for o in outs {
            list.append((o.shape.to_vec(), py_dtype(py, o.dtype)?))?;
        }
        Ok(Some(list))
    })
}

#[pymethods]
impl PyGraph {
    /// Infer output shapes, dtypes and formats over the whole graph (subgraphs included) in
    /// topological order, with the registered rules; nodes of unregistered types keep their
    /// descs. A dim, rank or dtype a rule leaves unknown where no graph input upstream is
    /// dynamic keeps its recorded value (never replaced by an unknown one). Runs without the GIL
    /// (Python infer functions take it back). Returns counters `{"nodes", "inferred",
    /// "unknown", "kept", "conflicts"}` (`kept`: outputs whose recorded values were kept;
    /// `conflicts`: outputs whose recorded static shape or dtype disagreed with the inferred
    /// one, which is written); a failure raises `InferenceError` naming the node and rule
    /// (descs inferred before it are kept).
    fn infer_shapes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            ensure_libraries(py)?;
            let stats = PyGraph::write(slf, |g: &mut Graph| {
                crate::errors::enter(py, || infer::infer_graph(g, &mut PyCustom))
            })??;
            let d = PyDict::new(py);
            d.set_item("nodes", stats.nodes)?;
            d.set_item("inferred", stats.inferred)?;
            d.set_item("unknown", stats.unknown)?;
            d.set_item("kept", stats.kept)?;
            d.set_item("conflicts", stats.conflicts)?;
            Ok(d)
        })
    }
}

/// Register the registry functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_ops_register, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_unregister, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_contains, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_types, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_begin_library, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_end_library, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_library_loading, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_attach, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_is_builtin, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_table_text, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_rule_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_rule_of, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_signature, m)?)?;
    m.add_function(wrap_pyfunction!(_ops_infer_node, m)?)?;
    Ok(())
}
