//! The Core ATen → GE operator mapping.
//!
//! GE op types, port names and attributes are those of the builtin op library and the ONNX
//! mapping (`aten.convolution` → `Conv2D` like ONNX `Conv`, `aten.addmm` → `MatMulV2` like
//! `Gemm`, `aten._softmax` → `SoftmaxV2` …). Element-wise ops come from [`UNARY`] and
//! [`BINARY`]; the others have a handler in [`convert_call`]. A form a handler cannot express
//! (a transposed convolution, `addmm` with `beta ≠ 1`) falls back to an `aten::<op>` node.

use std::sync::OnceLock;

use ascendir_ir::{AttrMap, AttrValue, DataType, Format, TensorDesc};

use rustc_hash::FxHashMap;

use crate::build::{Ctx, Out, SymDef, Value};
use crate::program::{Arg, FxNode, OutMeta};
use crate::TorchResult;

/// Element-wise unary ops: (ATen name, GE type).
pub static UNARY: &[(&str, &str)] = &[
    ("relu", "Relu"),
    ("sigmoid", "Sigmoid"),
    ("tanh", "Tanh"),
    ("exp", "Exp"),
    ("log", "Log"),
    ("sqrt", "Sqrt"),
    ("rsqrt", "Rsqrt"),
    ("neg", "Neg"),
    ("abs", "Abs"),
    ("reciprocal", "Reciprocal"),
    ("erf", "Erf"),
    ("sin", "Sin"),
    ("cos", "Cos"),
    ("tan", "Tan"),
    ("asin", "Asin"),
    ("acos", "Acos"),
    ("atan", "Atan"),
    ("sinh", "Sinh"),
    ("cosh", "Cosh"),
    ("floor", "Floor"),
    ("ceil", "Ceil"),
    ("sign", "Sign"),
    ("log1p", "Log1p"),
    ("expm1", "Expm1"),
    ("logical_not", "LogicalNot"),
    ("hardswish", "HardSwish"),
    ("mish", "Mish"),
    ("isnan", "IsNan"),
    ("isinf", "IsInf"),
];

/// Element-wise binary ops (also their `.Scalar` forms): (ATen name, GE type).
pub static BINARY: &[(&str, &str)] = &[
    ("add", "Add"),
    ("sub", "Sub"),
    ("mul", "Mul"),
    ("div", "RealDiv"),
    ("pow", "Pow"),
    ("maximum", "Maximum"),
    ("minimum", "Minimum"),
    ("fmod", "Mod"),
    ("remainder", "FloorMod"),
    ("atan2", "Atan2"),
    ("eq", "Equal"),
    ("ne", "NotEqual"),
    ("lt", "Less"),
    ("le", "LessEqual"),
    ("gt", "Greater"),
    ("ge", "GreaterEqual"),
    ("logical_and", "LogicalAnd"),
    ("logical_or", "LogicalOr"),
];

/// Every ATen op (`name` without overload) that has a handler, for documentation and tests.
pub static HANDLED: &[&str] = &[
    // element-wise with attributes or dtype rules
    "rsub",
    "bitwise_not",
    "bitwise_and",
    "bitwise_or",
    "gelu",
    "silu",
    "leaky_relu",
    "elu",
    "hardsigmoid",
    "hardtanh",
    "softplus",
    "clamp",
    "round",
    "where",
    "masked_fill",
    // aliases, casts, asserts, SymInts
    "clone",
    "alias",
    "detach",
    "lift_fresh_copy",
    "contiguous",
    "_to_copy",
    "to",
    "dropout",
    "feature_dropout",
    "alpha_dropout",
    "_assert_scalar",
    "_assert_tensor_metadata",
    "sym_constrain_range_for_size",
    "sym_constrain_range",
    "sym_size",
    // shapes, indexing, creation, reductions
    "view",
    "_unsafe_view",
    "reshape",
    "flatten",
    "unflatten",
    "permute",
    "t",
    "transpose",
    "unsqueeze",
    "squeeze",
    "expand",
    "cat",
    "split_with_sizes",
    "split",
    "select",
    "slice",
    "index",
    "embedding",
    "arange",
    "full",
    "full_like",
    "zeros_like",
    "ones_like",
    "scalar_tensor",
    "mean",
    "sum",
    "amax",
    "amin",
    "any",
    "all",
    "prod",
    "cumsum",
    "constant_pad_nd",
    // neural-network ops
    "_softmax",
    "_log_softmax",
    "softmax",
    "log_softmax",
    "mm",
    "addmm",
    "bmm",
    "matmul",
    "linear",
    "convolution",
    "conv2d",
    "_native_batch_norm_legit_no_training",
    "batch_norm",
    "native_layer_norm",
    "layer_norm",
    "max_pool2d_with_indices",
    "max_pool2d",
    "avg_pool2d",
    "_adaptive_avg_pool2d",
    "adaptive_avg_pool2d",
    "scaled_dot_product_attention",
    "native_group_norm",
    "group_norm",
    "conv1d",
    // indexing and creation (module `index`)
    "gather",
    "repeat",
    "copy",
    "slice_scatter",
    "select_scatter",
    "__and__",
    "__or__",
    "__xor__",
    "bitwise_xor",
    "logical_xor",
    "new_ones",
    "new_zeros",
    "new_full",
    "ones",
    "zeros",
    // composite forms (module `forms`)
    "type_as",
    "pad",
    "chunk",
    "unbind",
    "diff",
    "min",
    "max",
    "_weight_norm",
    "adaptive_avg_pool1d",
];

fn index(table: &'static [(&'static str, &'static str)]) -> FxHashMap<&'static str, &'static str> {
    table.iter().copied().collect()
}

fn unary_ge(op: &str) -> Option<&'static str> {
    static INDEX: OnceLock<FxHashMap<&'static str, &'static str>> = OnceLock::new();
    INDEX.get_or_init(|| index(UNARY)).get(op).copied()
}

fn binary_ge(op: &str) -> Option<&'static str> {
    static INDEX: OnceLock<FxHashMap<&'static str, &'static str>> = OnceLock::new();
    INDEX.get_or_init(|| index(BINARY)).get(op).copied()
}

pub(crate) fn attrs<const N: usize>(items: [(&str, AttrValue); N]) -> AttrMap {
    let mut m = AttrMap::new();
    for (k, v) in items {
        m.insert(k, v);
    }
    m
}

pub(crate) fn ints(v: Vec<i64>) -> AttrValue {
    AttrValue::ListInt(v)
}

pub(crate) fn is_float(dt: DataType) -> bool {
    matches!(
        dt,
        DataType::FLOAT | DataType::FLOAT16 | DataType::BF16 | DataType::DOUBLE
    )
}

/// Normalize axis `d` of a rank-`rank` tensor.
pub(crate) fn norm(d: i64, rank: usize) -> i64 {
    if d < 0 {
        d + rank as i64
    } else {
        d
    }
}

/// The metadata of a tensor argument (or an error).
pub(crate) fn meta<'a>(ctx: &Ctx<'a>, a: &Arg<'_>) -> TorchResult<OutMeta<'a>> {
    ctx.meta_of(a)
        .ok_or_else(|| ctx.unsupported(format!("no tensor metadata for argument {a:?}")))
}

pub(crate) fn out_meta<'a>(ctx: &Ctx<'_>, node: &FxNode<'a>) -> TorchResult<OutMeta<'a>> {
    node.out()
        .cloned()
        .ok_or_else(|| ctx.unsupported("the node has no output metadata"))
}

pub(crate) fn arg<'a, 'p>(node: &'a FxNode<'p>, i: usize, key: &str) -> &'a Arg<'p> {
    static NONE: Arg<'static> = Arg::None;
    node.arg(i, key).unwrap_or(&NONE)
}

/// A tensor input cast to `dtype` (scalars become 0-d constants of `dtype`).
pub(crate) fn operand(
    ctx: &mut Ctx<'_>,
    a: &Arg<'_>,
    dtype: DataType,
    tag: &str,
) -> TorchResult<Out> {
    if let Some(v) = a.as_f64() {
        let name = format!("{}/{tag}", ctx.cur_name());
        return ctx.const_scalar(&name, v, dtype);
    }
    let (from, dims) = {
        let m = meta(ctx, a)?;
        (m.dtype.unwrap_or(dtype), m.dims.clone())
    };
    let o = ctx.tensor(a)?;
    ctx.cast(o, from, dtype, &dims)
}

/// The dtype two operands compute in (for comparisons, whose output is bool).
fn common_dtype(ctx: &Ctx<'_>, a: &Arg<'_>, b: &Arg<'_>) -> DataType {
    let da = ctx.meta_of(a).and_then(|m| m.dtype);
    let db = ctx.meta_of(b).and_then(|m| m.dtype);
    match (da, db) {
        (Some(x), Some(y)) if x == y => x,
        (Some(x), Some(y)) => {
            if (is_float(y) && !is_float(x)) || x == DataType::BOOL {
                y
            } else {
                x
            }
        }
        (Some(x), None) | (None, Some(x)) => {
            let other = if da.is_some() { b } else { a };
            if !is_float(x) && matches!(other, Arg::Float(_)) {
                DataType::FLOAT
            } else {
                x
            }
        }
        (None, None) => DataType::FLOAT,
    }
}

fn binary(ctx: &mut Ctx<'_>, node: &FxNode<'_>, op: &str, ge: &str) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    let out_dt = om.dtype.unwrap_or(DataType::FLOAT);
    let compare = out_dt == DataType::BOOL;
    let (mut a, mut b) = (arg(node, 0, "self").clone(), arg(node, 1, "other").clone());
    let mut ge = ge;
    if op == "rsub" {
        std::mem::swap(&mut a, &mut b);
        ge = "Sub";
    }
    if op == "div" {
        match node.kwarg("rounding_mode") {
            Some(Arg::Str(m)) if *m == "floor" => ge = "FloorDiv",
            Some(Arg::Str(_)) => return Ok(false),
            _ => {}
        }
    }
    let dt = if compare {
        common_dtype(ctx, &a, &b)
    } else {
        out_dt
    };
    let x1 = operand(ctx, &a, dt, "x1")?;
    let mut x2 = operand(ctx, &b, dt, "x2")?;
    if matches!(op, "add" | "sub" | "rsub") {
        if let Some(alpha) = node.kwarg("alpha").and_then(Arg::as_f64) {
            if alpha != 1.0 {
                let name = format!("{}/alpha", node.name);
                let c = ctx.const_scalar(&name, alpha, dt)?;
                let dims = ctx.meta_of(&b).map(|m| m.dims.clone()).unwrap_or_default();
                let scaled = format!("{}/scaled", node.name);
                x2 = ctx.helper(
                    &scaled,
                    "Mul",
                    &[("x1", x2), ("x2", c)],
                    TensorDesc::new(&dims, dt, Format::ND),
                    [],
                )?;
            }
        }
    }
    let id = ctx.add(ge, &[("x1", x1), ("x2", x2)], &["y"], AttrMap::new())?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

fn unary(ctx: &mut Ctx<'_>, node: &FxNode<'_>, ge: &str, extra: AttrMap) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    let out_dt = om.dtype.unwrap_or(DataType::FLOAT);
    let predicate = out_dt == DataType::BOOL && ge != "LogicalNot";
    let x = arg(node, 0, "self").clone();
    let xi = if predicate {
        ctx.tensor(&x)?
    } else {
        operand(ctx, &x, out_dt, "x")?
    };
    let id = ctx.add(ge, &[("x", xi)], &["y"], extra)?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// Convert the current `call_function` node. Unmapped ops become `aten::<op>` nodes.
pub(crate) fn convert_call(ctx: &mut Ctx<'_>, node: &FxNode<'_>) -> TorchResult<()> {
    let target = node.target;
    if let Some(rest) = target.strip_prefix("_operator.") {
        return operator(ctx, node, rest);
    }
    if target.starts_with("get_attr.") {
        // A submodule (a higher-order op's body): the op using it is what fails.
        ctx.set(Value::Nothing);
        return Ok(());
    }
    let Some((ns, rest)) = target.split_once('.') else {
        return Err(ctx.unsupported("a call of something that is no ATen operator"));
    };
    if ns == "torch" || ns == "get_attr" || node.schema.as_ref().is_none_or(|s| s.is_empty()) {
        return Err(ctx.unsupported(
            "a call of something that is no ATen operator (higher-order ops, Python functions and submodule calls are not supported)",
        ));
    }
    let (op, overload) = rest.split_once('.').unwrap_or((rest, "default"));
    // In-place forms (`relu_`, `add_`) reach here only where the flattener checked that
    // nothing else sees the mutated tensor: they convert as their functional form.
    let op = match op.strip_suffix('_') {
        Some(base) if !base.is_empty() && !base.ends_with('_') => base,
        _ => op,
    };
    if ns == "aten" && map_aten(ctx, node, op, overload)? {
        return Ok(());
    }
    unknown(ctx, node, ns, op)
}

fn operator(ctx: &mut Ctx<'_>, node: &FxNode<'_>, op: &str) -> TorchResult<()> {
    if op == "getitem" {
        let (src, k) = (arg(node, 0, ""), arg(node, 1, "").as_int());
        let (Arg::Node(n), Some(k)) = (src, k) else {
            return Err(ctx.unsupported("getitem with a non-constant index"));
        };
        let v = ctx.item(*n, k)?;
        ctx.set(v);
        return Ok(());
    }
    let ge = match op {
        "add" => "Add",
        "sub" => "Sub",
        "mul" => "Mul",
        "floordiv" => "FloorDiv",
        _ => return Err(ctx.unsupported(format!("Python operator '{op}' is not supported"))),
    };
    set_sym(ctx, node, |ctx| {
        let a = ctx.sym_of(arg(node, 0, ""));
        let b = ctx.sym_of(arg(node, 1, ""));
        match (a, b) {
            (Some(a), Some(b)) => Ok(SymDef::Bin(ge, a, b)),
            _ => Err(ctx.unsupported(format!("operator '{op}' of values that are no ints"))),
        }
    })
}

/// Set a SymInt value: the static value from the metadata when known, else `def`.
pub(crate) fn set_sym(
    ctx: &mut Ctx<'_>,
    node: &FxNode<'_>,
    def: impl FnOnce(&Ctx<'_>) -> TorchResult<SymDef>,
) -> TorchResult<()> {
    if let Some(m) = node.out() {
        if m.symint {
            if let Some(&v) = m.dims.first().filter(|&&v| v >= 0) {
                ctx.set(Value::Sym(SymDef::Int(v)));
                return Ok(());
            }
        }
    }
    let d = def(ctx)?;
    ctx.set(Value::Sym(d));
    Ok(())
}

fn unknown(ctx: &mut Ctx<'_>, node: &FxNode<'_>, ns: &str, op: &str) -> TorchResult<()> {
    if node.outs.iter().any(|m| m.symint) {
        return Err(ctx.unsupported("an unmapped op that computes a SymInt"));
    }
    let ge = format!("{ns}::{op}");
    let mut inputs: Vec<(String, Out)> = Vec::new();
    let mut a = AttrMap::new();
    let mut tensors = Vec::new();
    let all: Vec<(String, &Arg<'_>)> = node
        .args
        .iter()
        .enumerate()
        .map(|(i, x)| (format!("arg{i}"), x))
        .chain(node.kwargs.iter().map(|(k, x)| (k.to_string(), x)))
        .collect();
    for (key, x) in all {
        match x {
            Arg::Node(_) if ctx.is_tensor(x) => tensors.push(x.clone()),
            Arg::List(items) if items.iter().any(|i| ctx.is_tensor(i)) => {
                tensors.extend(items.iter().filter(|i| ctx.is_tensor(i)).cloned());
            }
            Arg::Int(v) => {
                a.insert(key, AttrValue::Int(*v));
            }
            Arg::Float(f) => {
                a.insert(key, AttrValue::Float(*f as f32));
            }
            Arg::Bool(b) => {
                a.insert(key, AttrValue::Bool(*b));
            }
            Arg::Str(s) | Arg::Other(s) => {
                a.insert(key, AttrValue::String(s.to_string()));
            }
            Arg::Dtype(d) => {
                a.insert(key, AttrValue::DataType(*d));
            }
            Arg::List(_) => {
                if let Some(v) = x.as_ints() {
                    a.insert(key, AttrValue::ListInt(v));
                } else if let Arg::List(items) = x {
                    if let Some(f) = items.iter().map(Arg::as_f64).collect::<Option<Vec<f64>>>() {
                        a.insert(
                            key,
                            AttrValue::ListFloat(f.into_iter().map(|v| v as f32).collect()),
                        );
                    }
                }
            }
            Arg::Node(_) | Arg::None => {}
        }
    }
    for (k, t) in tensors.iter().enumerate() {
        inputs.push((format!("__input{k}"), ctx.tensor(t)?));
    }
    let schema = node.schema.unwrap_or_default().to_string();
    a.insert(crate::ATTR_SCHEMA, AttrValue::String(schema.clone()));
    let in_refs: Vec<(&str, Out)> = inputs.iter().map(|(p, o)| (p.as_str(), *o)).collect();
    let out_names: Vec<String> = (0..node.outs.len().max(1))
        .map(|k| format!("__output{k}"))
        .collect();
    let out_refs: Vec<&str> = out_names.iter().map(String::as_str).collect();
    let id = ctx.add(&ge, &in_refs, &out_refs, a)?;
    *ctx.report.unknown_ops.entry(ge.clone()).or_default() += 1;
    ctx.report.unknown_schemas.entry(ge).or_insert(schema);
    if node.outs.len() > 1 {
        ctx.set(Value::Tuple(
            (0..node.outs.len()).map(|k| Some((id, k))).collect(),
        ));
    } else {
        ctx.set(Value::T((id, 0)));
    }
    Ok(())
}

#[allow(clippy::too_many_lines)]
fn map_aten(ctx: &mut Ctx<'_>, node: &FxNode<'_>, op: &str, overload: &str) -> TorchResult<bool> {
    if let Some(ge) = unary_ge(op) {
        return unary(ctx, node, ge, AttrMap::new());
    }
    if let Some(ge) = binary_ge(op) {
        return binary(ctx, node, op, ge);
    }
    let x = arg(node, 0, "self").clone();
    match op {
        "rsub" => binary(ctx, node, op, "Sub"),
        "bitwise_not" => {
            let om = out_meta(ctx, node)?;
            if om.dtype != Some(DataType::BOOL) {
                return Ok(false);
            }
            unary(ctx, node, "LogicalNot", AttrMap::new())
        }
        "round" if overload == "default" => unary(ctx, node, "Round", AttrMap::new()),
        "gelu" => {
            let approx = match node.kwarg("approximate").or(node.args.get(1)) {
                Some(Arg::Str(s)) => s.to_string(),
                _ => "none".into(),
            };
            let a = if approx == "tanh" {
                AttrMap::new()
            } else {
                attrs([("approximate", AttrValue::String("none".into()))])
            };
            unary(ctx, node, "Gelu", a)
        }
        "silu" => unary(
            ctx,
            node,
            "Swish",
            attrs([("scale", AttrValue::Float(1.0))]),
        ),
        "leaky_relu" => {
            let s = arg(node, 1, "negative_slope").as_f64().unwrap_or(0.01);
            unary(
                ctx,
                node,
                "LeakyRelu",
                attrs([("negative_slope", AttrValue::Float(s as f32))]),
            )
        }
        "elu" => {
            let alpha = arg(node, 1, "alpha").as_f64().unwrap_or(1.0);
            let scale = arg(node, 2, "scale").as_f64().unwrap_or(1.0);
            let input_scale = arg(node, 3, "input_scale").as_f64().unwrap_or(1.0);
            if scale != 1.0 || input_scale != 1.0 {
                return Ok(false);
            }
            unary(
                ctx,
                node,
                "Elu",
                attrs([("alpha", AttrValue::Float(alpha as f32))]),
            )
        }
        "hardsigmoid" => unary(
            ctx,
            node,
            "HardSigmoid",
            attrs([
                ("alpha", AttrValue::Float(1.0 / 6.0)),
                ("beta", AttrValue::Float(0.5)),
            ]),
        ),
        "softplus" => {
            if arg(node, 1, "beta").as_f64().unwrap_or(1.0) != 1.0 {
                return Ok(false);
            }
            unary(ctx, node, "Softplus", AttrMap::new())
        }
        "clamp" | "hardtanh" => {
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let (lo, hi) = if op == "hardtanh" {
                (
                    Arg::Float(arg(node, 1, "min_val").as_f64().unwrap_or(-1.0)),
                    Arg::Float(arg(node, 2, "max_val").as_f64().unwrap_or(1.0)),
                )
            } else {
                (arg(node, 1, "min").clone(), arg(node, 2, "max").clone())
            };
            let xi = operand(ctx, &x, dt, "x")?;
            let (id, ok) = match (&lo, &hi) {
                (Arg::None, Arg::None) => {
                    let v = ctx.alias(&x)?;
                    ctx.set(v);
                    return Ok(true);
                }
                (l, Arg::None) => {
                    let l = operand(ctx, l, dt, "min")?;
                    (
                        ctx.add("Maximum", &[("x1", xi), ("x2", l)], &["y"], AttrMap::new())?,
                        true,
                    )
                }
                (Arg::None, h) => {
                    let h = operand(ctx, h, dt, "max")?;
                    (
                        ctx.add("Minimum", &[("x1", xi), ("x2", h)], &["y"], AttrMap::new())?,
                        true,
                    )
                }
                (l, h) => {
                    let l = operand(ctx, l, dt, "min")?;
                    let h = operand(ctx, h, dt, "max")?;
                    (
                        ctx.add(
                            "ClipByValue",
                            &[("x", xi), ("clip_value_min", l), ("clip_value_max", h)],
                            &["y"],
                            AttrMap::new(),
                        )?,
                        true,
                    )
                }
            };
            ctx.set(Value::T((id, 0)));
            Ok(ok)
        }
        "where" if matches!(overload, "self" | "ScalarSelf" | "ScalarOther" | "Scalar") => {
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let c = ctx.tensor(&x)?;
            let a = operand(ctx, arg(node, 1, "self"), dt, "x1")?;
            let b = operand(ctx, arg(node, 2, "other"), dt, "x2")?;
            let id = ctx.add(
                "SelectV2",
                &[("condition", c), ("x1", a), ("x2", b)],
                &["y"],
                AttrMap::new(),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "masked_fill" => {
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let xi = operand(ctx, &x, dt, "x")?;
            let mask = ctx.tensor(arg(node, 1, "mask"))?;
            let v = operand(ctx, arg(node, 2, "value"), dt, "value")?;
            let id = ctx.add(
                "SelectV2",
                &[("condition", mask), ("x1", v), ("x2", xi)],
                &["y"],
                AttrMap::new(),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "clone" | "alias" | "detach" | "lift_fresh_copy" | "contiguous" => {
            let v = ctx.alias(&x)?;
            ctx.set(v);
            Ok(true)
        }
        // `type_as(x, other)` is `_to_copy` to `other`'s dtype, which the output carries.
        "_to_copy" | "to" | "type_as" => {
            let om = out_meta(ctx, node)?;
            let from = meta(ctx, &x)?.dtype;
            if from == om.dtype {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(true);
            }
            let to = om.dtype.unwrap_or(DataType::FLOAT);
            let xi = ctx.tensor(&x)?;
            let id = ctx.add(
                "Cast",
                &[("x", xi)],
                &["y"],
                attrs([("dst_type", AttrValue::Int(i64::from(to.ge_value())))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "_assert_scalar"
        | "_assert_tensor_metadata"
        | "sym_constrain_range_for_size"
        | "sym_constrain_range" => {
            ctx.set(Value::Nothing);
            Ok(true)
        }
        _ => {
            type Family = for<'a, 'b, 'c> fn(
                &mut Ctx<'a>,
                &FxNode<'b>,
                &str,
                &str,
                &Arg<'c>,
            ) -> TorchResult<Option<bool>>;
            let families: [Family; 4] = [
                crate::index::map,
                crate::forms::map,
                crate::shape::map,
                crate::nn::map,
            ];
            for family in families {
                if let Some(done) = family(ctx, node, op, overload, &x)? {
                    return Ok(done);
                }
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_unique_names() {
        for t in [UNARY, BINARY] {
            for (i, (a, _)) in t.iter().enumerate() {
                assert!(t[..i].iter().all(|(b, _)| b != a), "{a} twice");
            }
        }
        for h in HANDLED {
            assert!(
                unary_ge(h).is_none() && binary_ge(h).is_none(),
                "{h} in a table and handled"
            );
        }
    }
}
