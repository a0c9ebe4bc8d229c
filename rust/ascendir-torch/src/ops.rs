//! The Core ATen → GE operator mapping.
//!
//! GE op types, port names and attributes are those of the builtin op library and the ONNX
//! mapping (`aten.convolution` → `Conv2D` like ONNX `Conv`, `aten.addmm` → `MatMulV2` like
//! `Gemm`, `aten._softmax` → `SoftmaxV2` …). Element-wise ops come from [`UNARY`] and
//! [`BINARY`]; the others have a handler in [`convert_call`]. A form a handler cannot express
//! (a transposed convolution, `addmm` with `beta ≠ 1`) falls back to an `aten::<op>` node.

use ascendir_ir::{AttrMap, AttrValue, DataType, Format, Tensor, TensorDesc};
use bytes::Bytes;

use crate::build::{scalar_bytes, Ctx, Out, SymDef, Value};
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
    "rsub", "bitwise_not", "bitwise_and", "bitwise_or", "gelu", "silu", "leaky_relu", "elu",
    "hardsigmoid", "hardtanh", "softplus", "clamp", "round", "where", "masked_fill", "clone",
    "alias", "detach", "lift_fresh_copy", "contiguous", "_to_copy", "view", "_unsafe_view",
    "reshape", "permute", "t", "transpose", "unsqueeze", "squeeze", "expand", "cat",
    "split_with_sizes", "split", "select", "slice", "index", "embedding", "arange", "full",
    "full_like", "zeros_like", "ones_like", "scalar_tensor", "_softmax", "_log_softmax",
    "mm", "addmm", "bmm", "matmul", "convolution", "_native_batch_norm_legit_no_training",
    "native_layer_norm", "max_pool2d_with_indices", "max_pool2d", "avg_pool2d",
    "_adaptive_avg_pool2d", "mean", "sum", "amax", "amin", "any", "all", "prod", "cumsum",
    "constant_pad_nd", "sym_size", "_assert_scalar", "_assert_tensor_metadata",
    "sym_constrain_range_for_size",
];

fn unary_ge(op: &str) -> Option<&'static str> {
    UNARY.iter().find(|(a, _)| *a == op).map(|(_, g)| *g)
}

fn binary_ge(op: &str) -> Option<&'static str> {
    BINARY.iter().find(|(a, _)| *a == op).map(|(_, g)| *g)
}

fn attrs<const N: usize>(items: [(&str, AttrValue); N]) -> AttrMap {
    let mut m = AttrMap::new();
    for (k, v) in items {
        m.insert(k, v);
    }
    m
}

fn ints(v: Vec<i64>) -> AttrValue {
    AttrValue::ListInt(v)
}

fn is_float(dt: DataType) -> bool {
    matches!(
        dt,
        DataType::FLOAT | DataType::FLOAT16 | DataType::BF16 | DataType::DOUBLE
    )
}

/// Normalize axis `d` of a rank-`rank` tensor.
fn norm(d: i64, rank: usize) -> i64 {
    if d < 0 {
        d + rank as i64
    } else {
        d
    }
}

/// The metadata of a tensor argument (or an error).
fn meta<'a>(ctx: &'a Ctx<'_>, a: &Arg) -> TorchResult<&'a OutMeta> {
    ctx.meta_of(a)
        .ok_or_else(|| ctx.unsupported(format!("no tensor metadata for argument {a:?}")))
}

fn out_meta(ctx: &Ctx<'_>, node: &FxNode) -> TorchResult<OutMeta> {
    node.out()
        .cloned()
        .ok_or_else(|| ctx.unsupported("the node has no output metadata"))
}

fn arg<'a>(node: &'a FxNode, i: usize, key: &str) -> &'a Arg {
    static NONE: Arg = Arg::None;
    node.arg(i, key).unwrap_or(&NONE)
}

/// A tensor input cast to `dtype` (scalars become 0-d constants of `dtype`).
fn operand(ctx: &mut Ctx<'_>, a: &Arg, dtype: DataType, tag: &str) -> TorchResult<Out> {
    if let Some(v) = a.as_f64() {
        let name = format!("{}/{tag}", ctx.node().name);
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
fn common_dtype(ctx: &Ctx<'_>, a: &Arg, b: &Arg) -> DataType {
    let da = ctx.meta_of(a).and_then(|m| m.dtype);
    let db = ctx.meta_of(b).and_then(|m| m.dtype);
    match (da, db) {
        (Some(x), Some(y)) if x == y => x,
        (Some(x), Some(y)) => {
            if is_float(y) && !is_float(x) {
                y
            } else if x == DataType::BOOL {
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

fn binary(ctx: &mut Ctx<'_>, node: &FxNode, op: &str, ge: &str) -> TorchResult<bool> {
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
            Some(Arg::Str(m)) if m == "floor" => ge = "FloorDiv",
            Some(Arg::Str(_)) => return Ok(false),
            _ => {}
        }
    }
    let dt = if compare { common_dtype(ctx, &a, &b) } else { out_dt };
    let x1 = operand(ctx, &a, dt, "x1")?;
    let mut x2 = operand(ctx, &b, dt, "x2")?;
    if matches!(op, "add" | "sub" | "rsub") {
        if let Some(alpha) = node.kwarg("alpha").and_then(Arg::as_f64) {
            if alpha != 1.0 {
                let name = format!("{}/alpha", node.name);
                let c = ctx.const_scalar(&name, alpha, dt)?;
                let dims = ctx.meta_of(&b).map(|m| m.dims.clone()).unwrap_or_default();
                let scaled = format!("{}/scaled", node.name);
                x2 = ctx.helper(&scaled, "Mul", &[("x1", x2), ("x2", c)], TensorDesc::new(&dims, dt, Format::ND), [])?;
            }
        }
    }
    let id = ctx.add(ge, &[("x1", x1), ("x2", x2)], &["y"], AttrMap::new())?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

fn unary(ctx: &mut Ctx<'_>, node: &FxNode, ge: &str, extra: AttrMap) -> TorchResult<bool> {
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

fn reshape(ctx: &mut Ctx<'_>, node: &FxNode, x: &Arg, size: &[Arg]) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    if meta(ctx, x)?.same_shape(&om) {
        let v = ctx.alias(x)?;
        ctx.set(v);
        return Ok(true);
    }
    // One unknown entry becomes -1 (the element count fixes it); more need shape arithmetic.
    let unknown = size.iter().filter(|a| ctx.int_of(a).is_none()).count();
    let has_minus_one = size.iter().any(|a| ctx.int_of(a) == Some(-1));
    let items: Vec<Arg> = if unknown == 1 && !has_minus_one {
        size.iter()
            .map(|a| Arg::Int(ctx.int_of(a).unwrap_or(-1)))
            .collect()
    } else {
        size.to_vec()
    };
    let xi = ctx.tensor(x)?;
    let shape = ctx.int_list_tensor(&items, &format!("{}/shape", node.name))?;
    let id = ctx.add(
        "Reshape",
        &[("x", xi), ("shape", shape)],
        &["y"],
        attrs([("axis", AttrValue::Int(0)), ("num_axes", AttrValue::Int(-1))]),
    )?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

fn permute(ctx: &mut Ctx<'_>, _node: &FxNode, x: &Arg, perm: Vec<i64>) -> TorchResult<bool> {
    let rank = meta(ctx, x)?.dims.len();
    let perm: Vec<i64> = perm.into_iter().map(|d| norm(d, rank)).collect();
    if perm.iter().enumerate().all(|(i, &d)| d == i as i64) {
        let v = ctx.alias(x)?;
        ctx.set(v);
        return Ok(true);
    }
    if perm == [1, 0] {
        // Deferred: a matmul folds it into transpose_x*; a double transpose cancels.
        if let Some(src) = ctx.deferred_transpose(x) {
            ctx.set(Value::T(src));
        } else {
            let xi = ctx.tensor(x)?;
            ctx.set(Value::Trans(xi));
        }
        return Ok(true);
    }
    let xi = ctx.tensor(x)?;
    let id = ctx.add("TransposeD", &[("x", xi)], &["y"], attrs([("perm", ints(perm))]))?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// A matmul operand: the tensor and whether it is a folded transpose.
fn mm_operand(ctx: &mut Ctx<'_>, a: &Arg) -> TorchResult<(Out, bool)> {
    if let Some(src) = ctx.deferred_transpose(a) {
        return Ok((src, true));
    }
    Ok((ctx.tensor(a)?, false))
}

fn pool_lists(node: &FxNode, k_idx: usize) -> Option<(Vec<i64>, Vec<i64>, Vec<i64>)> {
    let two = |v: Vec<i64>| if v.len() == 1 { vec![v[0], v[0]] } else { v };
    let k = two(arg(node, k_idx, "kernel_size").as_ints()?);
    let s = arg(node, k_idx + 1, "stride").as_ints().map(two).filter(|s| !s.is_empty()).unwrap_or_else(|| k.clone());
    let p = arg(node, k_idx + 2, "padding").as_ints().map(two).unwrap_or_else(|| vec![0, 0]);
    (k.len() == 2 && s.len() == 2 && p.len() == 2).then_some((k, s, p))
}

fn reduce(ctx: &mut Ctx<'_>, node: &FxNode, ge: &str, all_axes: bool) -> TorchResult<bool> {
    let om = out_meta(ctx, node)?;
    let x = arg(node, 0, "self").clone();
    let rank = meta(ctx, &x)?.dims.len();
    let (axes, keep) = if all_axes {
        ((0..rank as i64).collect::<Vec<_>>(), false)
    } else {
        let axes = match arg(node, 1, "dim") {
            Arg::None => (0..rank as i64).collect(),
            a => match a.as_ints() {
                Some(v) if v.is_empty() => (0..rank as i64).collect(),
                Some(v) => v.into_iter().map(|d| norm(d, rank)).collect(),
                None => return Ok(false),
            },
        };
        let keep = arg(node, 2, "keepdim").as_int().unwrap_or(0) != 0;
        (axes, keep)
    };
    let dt = om.dtype.unwrap_or(DataType::FLOAT);
    let xi = if matches!(ge, "ReduceAnyD" | "ReduceAllD") {
        let m = meta(ctx, &x)?.clone();
        let o = ctx.tensor(&x)?;
        ctx.cast(o, m.dtype.unwrap_or(DataType::BOOL), DataType::BOOL, &m.dims)?
    } else {
        operand(ctx, &x, dt, "x")?
    };
    let id = ctx.add(ge, &[("x", xi)], &["y"], attrs([("axes", ints(axes)), ("keep_dims", AttrValue::Bool(keep))]))?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

/// A constant filled with `value` of the node's output shape (static), or `None` when too big
/// or symbolic.
fn filled_const(ctx: &mut Ctx<'_>, node: &FxNode, value: f64) -> TorchResult<Option<Out>> {
    let om = out_meta(ctx, node)?;
    let dt = om.dtype.unwrap_or(DataType::FLOAT);
    if !om.is_static() {
        return Ok(None);
    }
    let n = om.dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?));
    let Some(n) = n.filter(|&n| n <= 1 << 16) else {
        return Ok(None);
    };
    let one = scalar_bytes(value, dt).ok_or_else(|| ctx.unsupported(format!("cannot fill a {} tensor", dt.name())))?;
    let mut bytes = Vec::with_capacity(one.len().saturating_mul(n));
    for _ in 0..n {
        bytes.extend_from_slice(&one);
    }
    let t = Tensor::new(TensorDesc::new(&om.dims, dt, Format::ND), Bytes::from(bytes));
    let name = node.name.clone();
    Ok(Some(ctx.const_tensor(&name, t)?))
}

fn fill(ctx: &mut Ctx<'_>, node: &FxNode, dims: Out, value: f64) -> TorchResult<bool> {
    let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
    let v = ctx.const_scalar(&format!("{}/value", node.name), value, dt)?;
    let id = ctx.add("Fill", &[("dims", dims), ("value", v)], &["y"], AttrMap::new())?;
    ctx.set(Value::T((id, 0)));
    Ok(true)
}

fn ones_or_zeros(ctx: &mut Ctx<'_>, name: &str, n: i64, value: f64, dt: DataType) -> TorchResult<Out> {
    let one = scalar_bytes(value, dt).ok_or_else(|| ctx.unsupported("bad norm parameter dtype"))?;
    let count = usize::try_from(n).map_err(|_| ctx.unsupported("symbolic norm parameter size"))?;
    let bytes: Vec<u8> = one.iter().copied().cycle().take(one.len().saturating_mul(count)).collect();
    ctx.const_tensor(name, Tensor::new(TensorDesc::new(&[n], dt, Format::ND), Bytes::from(bytes)))
}

/// Convert the current `call_function` node. Unmapped ops become `aten::<op>` nodes.
pub(crate) fn convert_call(ctx: &mut Ctx<'_>) -> TorchResult<()> {
    let node = ctx.nodes[ctx.cur].clone();
    let target = node.target.as_str();
    if let Some(rest) = target.strip_prefix("_operator.") {
        return operator(ctx, &node, rest);
    }
    if target.starts_with("get_attr.") {
        // A submodule (a higher-order op's body): the op using it is what fails.
        ctx.set(Value::Nothing);
        return Ok(());
    }
    let Some((ns, rest)) = target.split_once('.') else {
        return Err(ctx.unsupported("a call of something that is no ATen operator"));
    };
    if ns == "torch" || ns == "get_attr" || !node.schema.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(ctx.unsupported(
            "a call of something that is no ATen operator (higher-order ops, Python functions and submodule calls are not supported)",
        ));
    }
    let (op, overload) = rest.split_once('.').unwrap_or((rest, "default"));
    if ns == "aten" && map_aten(ctx, &node, op, overload)? {
        return Ok(());
    }
    unknown(ctx, &node, ns, op)
}

fn operator(ctx: &mut Ctx<'_>, node: &FxNode, op: &str) -> TorchResult<()> {
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
fn set_sym(
    ctx: &mut Ctx<'_>,
    node: &FxNode,
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

fn unknown(ctx: &mut Ctx<'_>, node: &FxNode, ns: &str, op: &str) -> TorchResult<()> {
    if node.outs.iter().any(|m| m.symint) {
        return Err(ctx.unsupported("an unmapped op that computes a SymInt"));
    }
    let ge = format!("{ns}::{op}");
    let mut inputs: Vec<(String, Out)> = Vec::new();
    let mut a = AttrMap::new();
    let mut tensors = Vec::new();
    let all: Vec<(String, &Arg)> = node
        .args
        .iter()
        .enumerate()
        .map(|(i, x)| (format!("arg{i}"), x))
        .chain(node.kwargs.iter().map(|(k, x)| (k.clone(), x)))
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
                a.insert(key, AttrValue::String(s.clone()));
            }
            Arg::Dtype(d) => {
                a.insert(key, AttrValue::DataType(*d));
            }
            Arg::List(_) => {
                if let Some(v) = x.as_ints() {
                    a.insert(key, AttrValue::ListInt(v));
                } else if let Arg::List(items) = x {
                    if let Some(f) = items.iter().map(Arg::as_f64).collect::<Option<Vec<f64>>>() {
                        a.insert(key, AttrValue::ListFloat(f.into_iter().map(|v| v as f32).collect()));
                    }
                }
            }
            Arg::Node(_) | Arg::None => {}
        }
    }
    for (k, t) in tensors.iter().enumerate() {
        inputs.push((format!("__input{k}"), ctx.tensor(t)?));
    }
    let schema = node.schema.clone().unwrap_or_default();
    a.insert(crate::ATTR_SCHEMA, AttrValue::String(schema.clone()));
    let in_refs: Vec<(&str, Out)> = inputs.iter().map(|(p, o)| (p.as_str(), *o)).collect();
    let out_names: Vec<String> = (0..node.outs.len().max(1)).map(|k| format!("__output{k}")).collect();
    let out_refs: Vec<&str> = out_names.iter().map(String::as_str).collect();
    let id = ctx.add(&ge, &in_refs, &out_refs, a)?;
    *ctx.report.unknown_ops.entry(ge.clone()).or_default() += 1;
    ctx.report.unknown_schemas.entry(ge).or_insert(schema);
    if node.outs.len() > 1 {
        ctx.set(Value::Tuple((0..node.outs.len()).map(|k| Some((id, k))).collect()));
    } else {
        ctx.set(Value::T((id, 0)));
    }
    Ok(())
}

#[allow(clippy::too_many_lines)]
fn map_aten(ctx: &mut Ctx<'_>, node: &FxNode, op: &str, overload: &str) -> TorchResult<bool> {
    if let Some(ge) = unary_ge(op) {
        return unary(ctx, node, ge, AttrMap::new());
    }
    if let Some(ge) = binary_ge(op) {
        return binary(ctx, node, op, ge);
    }
    let x = arg(node, 0, "self").clone();
    match op {
        "rsub" => binary(ctx, node, op, "Sub"),
        "bitwise_not" | "bitwise_and" | "bitwise_or" => {
            let om = out_meta(ctx, node)?;
            if om.dtype != Some(DataType::BOOL) {
                return Ok(false);
            }
            match op {
                "bitwise_not" => unary(ctx, node, "LogicalNot", AttrMap::new()),
                "bitwise_and" => binary(ctx, node, op, "LogicalAnd"),
                _ => binary(ctx, node, op, "LogicalOr"),
            }
        }
        "round" if overload == "default" => unary(ctx, node, "Round", AttrMap::new()),
        "gelu" => {
            let approx = match node.kwarg("approximate").or(node.args.get(1)) {
                Some(Arg::Str(s)) => s.clone(),
                _ => "none".into(),
            };
            let a = if approx == "tanh" {
                AttrMap::new()
            } else {
                attrs([("approximate", AttrValue::String("none".into()))])
            };
            unary(ctx, node, "Gelu", a)
        }
        "silu" => unary(ctx, node, "Swish", attrs([("scale", AttrValue::Float(1.0))])),
        "leaky_relu" => {
            let s = arg(node, 1, "negative_slope").as_f64().unwrap_or(0.01);
            unary(ctx, node, "LeakyRelu", attrs([("negative_slope", AttrValue::Float(s as f32))]))
        }
        "elu" => {
            let alpha = arg(node, 1, "alpha").as_f64().unwrap_or(1.0);
            let scale = arg(node, 2, "scale").as_f64().unwrap_or(1.0);
            let input_scale = arg(node, 3, "input_scale").as_f64().unwrap_or(1.0);
            if scale != 1.0 || input_scale != 1.0 {
                return Ok(false);
            }
            unary(ctx, node, "Elu", attrs([("alpha", AttrValue::Float(alpha as f32))]))
        }
        "hardsigmoid" => unary(
            ctx,
            node,
            "HardSigmoid",
            attrs([("alpha", AttrValue::Float(1.0 / 6.0)), ("beta", AttrValue::Float(0.5))]),
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
                    (ctx.add("Maximum", &[("x1", xi), ("x2", l)], &["y"], AttrMap::new())?, true)
                }
                (Arg::None, h) => {
                    let h = operand(ctx, h, dt, "max")?;
                    (ctx.add("Minimum", &[("x1", xi), ("x2", h)], &["y"], AttrMap::new())?, true)
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
        "where" if overload == "self" => {
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let c = ctx.tensor(&x)?;
            let a = operand(ctx, arg(node, 1, "self"), dt, "x1")?;
            let b = operand(ctx, arg(node, 2, "other"), dt, "x2")?;
            let id = ctx.add("SelectV2", &[("condition", c), ("x1", a), ("x2", b)], &["y"], AttrMap::new())?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "masked_fill" => {
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let xi = operand(ctx, &x, dt, "x")?;
            let mask = ctx.tensor(arg(node, 1, "mask"))?;
            let v = operand(ctx, arg(node, 2, "value"), dt, "value")?;
            let id = ctx.add("SelectV2", &[("condition", mask), ("x1", v), ("x2", xi)], &["y"], AttrMap::new())?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "clone" | "alias" | "detach" | "lift_fresh_copy" | "contiguous" => {
            let v = ctx.alias(&x)?;
            ctx.set(v);
            Ok(true)
        }
        "_to_copy" => {
            let om = out_meta(ctx, node)?;
            let from = meta(ctx, &x)?.dtype;
            if from == om.dtype {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(true);
            }
            let to = om.dtype.unwrap_or(DataType::FLOAT);
            let xi = ctx.tensor(&x)?;
            let id = ctx.add("Cast", &[("x", xi)], &["y"], attrs([("dst_type", AttrValue::Int(i64::from(to.ge_value())))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "_assert_scalar" | "_assert_tensor_metadata" | "sym_constrain_range_for_size"
        | "sym_constrain_range" => {
            ctx.set(Value::Nothing);
            Ok(true)
        }
        "sym_size" => {
            let d = arg(node, 1, "dim").as_int().unwrap_or(0);
            let rank = meta(ctx, &x)?.dims.len();
            let known = node.out().is_some_and(|m| m.dims.first().is_some_and(|&v| v >= 0));
            let o = if known { None } else { Some(ctx.tensor(&x)?) };
            set_sym(ctx, node, |ctx| match o {
                Some(o) => Ok(SymDef::Size(o, norm(d, rank))),
                None => Err(ctx.unsupported("sym_size without a value")),
            })?;
            Ok(true)
        }
        "view" | "_unsafe_view" | "reshape" => {
            let Arg::List(size) = arg(node, 1, "size").clone() else {
                return Ok(false);
            };
            reshape(ctx, node, &x, &size)
        }
        "permute" => {
            let Some(p) = arg(node, 1, "dims").as_ints() else {
                return Ok(false);
            };
            permute(ctx, node, &x, p)
        }
        "t" => {
            if meta(ctx, &x)?.dims.len() < 2 {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(true);
            }
            permute(ctx, node, &x, vec![1, 0])
        }
        "transpose" => {
            let rank = meta(ctx, &x)?.dims.len();
            let (Some(a), Some(b)) = (arg(node, 1, "dim0").as_int(), arg(node, 2, "dim1").as_int()) else {
                return Ok(false);
            };
            let mut p: Vec<i64> = (0..rank as i64).collect();
            let (a, b) = (norm(a, rank) as usize, norm(b, rank) as usize);
            if a >= rank || b >= rank {
                return Ok(false);
            }
            p.swap(a, b);
            permute(ctx, node, &x, p)
        }
        "unsqueeze" => {
            let rank = out_meta(ctx, node)?.dims.len();
            let Some(d) = arg(node, 1, "dim").as_int() else {
                return Ok(false);
            };
            let xi = ctx.tensor(&x)?;
            let id = ctx.add("Unsqueeze", &[("x", xi)], &["y"], attrs([("axes", ints(vec![norm(d, rank)]))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "squeeze" => {
            let m = meta(ctx, &x)?.clone();
            let rank = m.dims.len();
            let wanted: Vec<i64> = match arg(node, 1, "dim") {
                Arg::None => (0..rank as i64).collect(),
                a => match a.as_ints() {
                    Some(v) => v.into_iter().map(|d| norm(d, rank)).collect(),
                    None => return Ok(false),
                },
            };
            let axes: Vec<i64> = wanted
                .into_iter()
                .filter(|&d| m.dims.get(d as usize) == Some(&1))
                .collect();
            if axes.is_empty() {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(true);
            }
            let xi = ctx.tensor(&x)?;
            let id = ctx.add("Squeeze", &[("x", xi)], &["y"], attrs([("axis", ints(axes))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "expand" => {
            let om = out_meta(ctx, node)?;
            let im = meta(ctx, &x)?.clone();
            if im.same_shape(&om) {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(true);
            }
            let Arg::List(size) = arg(node, 1, "size").clone() else {
                return Ok(false);
            };
            let (r, k) = (om.dims.len(), im.dims.len());
            let mut items = Vec::with_capacity(r);
            for i in 0..r {
                let same = i >= r - k.min(r) && im.same_dim(i - (r - k), &om, i);
                if same {
                    items.push(Arg::Int(1));
                } else if om.dims[i] >= 0 {
                    items.push(Arg::Int(om.dims[i]));
                } else {
                    items.push(size.get(i).cloned().unwrap_or(Arg::Int(1)));
                }
            }
            let xi = ctx.tensor(&x)?;
            let shape = ctx.int_list_tensor(&items, &format!("{}/shape", node.name))?;
            let id = ctx.add("Expand", &[("x", xi), ("shape", shape)], &["y"], AttrMap::new())?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "cat" => {
            let Arg::List(items) = x.clone() else {
                return Ok(false);
            };
            let om = out_meta(ctx, node)?;
            let rank = om.dims.len();
            let dim = norm(arg(node, 1, "dim").as_int().unwrap_or(0), rank);
            let dt = om.dtype.unwrap_or(DataType::FLOAT);
            let mut ins = Vec::with_capacity(items.len());
            for (k, it) in items.iter().enumerate() {
                // Legacy: 1-D empty tensors are skipped by torch.cat.
                if meta(ctx, it)?.dims == [0] && rank != 1 {
                    continue;
                }
                ins.push((format!("x{k}"), operand(ctx, it, dt, &format!("x{k}"))?));
            }
            let ports: Vec<(String, Out)> = ins.iter().enumerate().map(|(k, (_, o))| (format!("x{k}"), *o)).collect();
            let refs: Vec<(&str, Out)> = ports.iter().map(|(p, o)| (p.as_str(), *o)).collect();
            let id = ctx.add(
                "ConcatV2D",
                &refs,
                &["y"],
                attrs([("concat_dim", AttrValue::Int(dim)), ("N", AttrValue::Int(refs.len() as i64))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "split_with_sizes" | "split" => {
            let m = meta(ctx, &x)?.clone();
            let rank = m.dims.len();
            let dim = norm(arg(node, 2, "dim").as_int().unwrap_or(0), rank);
            let sizes: Vec<i64> = if op == "split" {
                let (Some(size), Some(&total)) = (arg(node, 1, "split_size").as_int(), m.dims.get(dim as usize)) else {
                    return Ok(false);
                };
                if size <= 0 || total < 0 {
                    return Ok(false);
                }
                let mut v = Vec::new();
                let mut left = total;
                while left > 0 {
                    v.push(size.min(left));
                    left -= size.min(left);
                }
                v
            } else {
                match arg(node, 1, "split_sizes").as_ints() {
                    Some(v) => v,
                    None => return Ok(false),
                }
            };
            let n = sizes.len();
            let xi = ctx.tensor(&x)?;
            let names: Vec<String> = (0..n).map(|k| format!("y{k}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let id = ctx.add(
                "SplitVD",
                &[("x", xi)],
                &refs,
                attrs([
                    ("size_splits", ints(sizes)),
                    ("split_dim", AttrValue::Int(dim)),
                    ("num_split", AttrValue::Int(n as i64)),
                ]),
            )?;
            ctx.set(Value::Tuple((0..n).map(|k| Some((id, k))).collect()));
            Ok(true)
        }
        "select" => {
            let rank = meta(ctx, &x)?.dims.len();
            let (Some(d), Some(i)) = (arg(node, 1, "dim").as_int(), ctx.int_of(arg(node, 2, "index"))) else {
                return Ok(false);
            };
            let xi = ctx.tensor(&x)?;
            let idx = ctx.const_i64(&format!("{}/index", node.name), &[i], &[])?;
            let id = ctx.add("GatherV2D", &[("x", xi), ("indices", idx)], &["y"], attrs([("axis", AttrValue::Int(norm(d, rank)))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "slice" => {
            let m = meta(ctx, &x)?.clone();
            let rank = m.dims.len();
            let dim = norm(arg(node, 1, "dim").as_int().unwrap_or(0), rank);
            let start = match arg(node, 2, "start") {
                Arg::None => Arg::Int(0),
                a => a.clone(),
            };
            let end = match arg(node, 3, "end") {
                Arg::None => Arg::Int(i64::MAX),
                a => a.clone(),
            };
            let step = arg(node, 4, "step").as_int().unwrap_or(1);
            let full_end = match ctx.int_of(&end) {
                Some(e) => e == i64::MAX || m.dims.get(dim as usize).is_some_and(|&d| d >= 0 && e >= d),
                None => false,
            };
            if ctx.int_of(&start) == Some(0) && full_end && step == 1 {
                let v = ctx.alias(&x)?;
                ctx.set(v);
                return Ok(true);
            }
            let xi = ctx.tensor(&x)?;
            let b = ctx.int_list_tensor(&[start], &format!("{}/begin", node.name))?;
            let e = ctx.int_list_tensor(&[end], &format!("{}/end", node.name))?;
            let a = ctx.const_i64(&format!("{}/axes", node.name), &[dim], &[1])?;
            let s = ctx.const_i64(&format!("{}/strides", node.name), &[step], &[1])?;
            let id = ctx.add(
                "StridedSliceV2",
                &[("x", xi), ("begin", b), ("end", e), ("axes", a), ("strides", s)],
                &["y"],
                AttrMap::new(),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "index" if overload == "Tensor" => {
            let Arg::List(idx) = arg(node, 1, "indices").clone() else {
                return Ok(false);
            };
            let given: Vec<usize> = (0..idx.len()).filter(|&k| !matches!(idx[k], Arg::None)).collect();
            if given.len() != 1 {
                return Ok(false);
            }
            let k = given[0];
            let im = meta(ctx, &idx[k])?;
            if !matches!(im.dtype, Some(DataType::INT64 | DataType::INT32)) {
                return Ok(false);
            }
            let xi = ctx.tensor(&x)?;
            let ii = ctx.tensor(&idx[k])?;
            let id = ctx.add("GatherV2D", &[("x", xi), ("indices", ii)], &["y"], attrs([("axis", AttrValue::Int(k as i64))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "embedding" => {
            let w = ctx.tensor(&x)?;
            let i = ctx.tensor(arg(node, 1, "indices"))?;
            let id = ctx.add("GatherV2D", &[("x", w), ("indices", i)], &["y"], attrs([("axis", AttrValue::Int(0))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "arange" => {
            let om = out_meta(ctx, node)?;
            let dt = om.dtype.unwrap_or(DataType::INT64);
            let (start, end, step) = match overload {
                "default" => (Arg::Int(0), x.clone(), Arg::Int(1)),
                "start" => (x.clone(), arg(node, 1, "end").clone(), Arg::Int(1)),
                _ => (x.clone(), arg(node, 1, "end").clone(), match arg(node, 2, "step") {
                    Arg::None => Arg::Int(1),
                    a => a.clone(),
                }),
            };
            let known = |a: &Arg| a.as_f64().or_else(|| ctx.int_of(a).map(|v| v as f64));
            if let (Some(s), Some(_), Some(st)) = (known(&start), known(&end), known(&step)) {
                if let Some(&n) = om.dims.first().filter(|&&n| n >= 0) {
                    let mut bytes = Vec::new();
                    for i in 0..n {
                        let v = s + (i as f64) * st;
                        bytes.extend(scalar_bytes(v, dt).ok_or_else(|| ctx.unsupported("arange dtype"))?);
                    }
                    let t = Tensor::new(TensorDesc::new(&[n], dt, Format::ND), Bytes::from(bytes));
                    let name = node.name.clone();
                    let o = ctx.const_tensor(&name, t)?;
                    ctx.set(Value::T(o));
                    return Ok(true);
                }
            }
            if is_float(dt) {
                return Ok(false);
            }
            let mut scalars = Vec::new();
            for (k, a) in [("start", &start), ("limit", &end), ("delta", &step)] {
                let s = ctx.sym_of(a).ok_or_else(|| ctx.unsupported("arange of a non-integer bound"))?;
                let t = ctx.sym_tensor(s)?;
                let t = ctx.cast(t, DataType::INT64, dt, &[1])?;
                let name = format!("{}/{k}", node.name);
                let sq = ctx.helper(&name, "Squeeze", &[("x", t)], TensorDesc::new(&[], dt, Format::ND), [("axis", ints(vec![0]))])?;
                scalars.push((k, sq));
            }
            let id = ctx.add("Range", &scalars, &["y"], AttrMap::new())?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "full" | "full_like" | "zeros_like" | "ones_like" | "scalar_tensor" => {
            let value = match op {
                "full" => arg(node, 1, "fill_value").as_f64(),
                "full_like" => arg(node, 1, "fill_value").as_f64(),
                "zeros_like" => Some(0.0),
                "ones_like" => Some(1.0),
                _ => x.as_f64(),
            };
            let Some(value) = value else {
                return Ok(false);
            };
            if let Some(o) = filled_const(ctx, node, value)? {
                ctx.set(Value::T(o));
                return Ok(true);
            }
            let dims = if op == "full" {
                let Arg::List(size) = x.clone() else {
                    return Ok(false);
                };
                ctx.int_list_tensor(&size, &format!("{}/dims", node.name))?
            } else {
                let src = ctx.tensor(&x)?;
                let rank = meta(ctx, &x)?.dims.len() as i64;
                ctx.helper(
                    &format!("{}/dims", node.name),
                    "Shape",
                    &[("x", src)],
                    TensorDesc::new(&[rank], DataType::INT64, Format::ND),
                    [("dtype", AttrValue::Int(i64::from(DataType::INT64.ge_value())))],
                )?
            };
            fill(ctx, node, dims, value)
        }
        "_softmax" | "_log_softmax" => {
            let rank = meta(ctx, &x)?.dims.len();
            let d = norm(arg(node, 1, "dim").as_int().unwrap_or(-1), rank);
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let xi = operand(ctx, &x, dt, "x")?;
            let (ty, port) = if op == "_softmax" { ("SoftmaxV2", "x") } else { ("LogSoftmaxV2", "logits") };
            let out = if op == "_softmax" { "y" } else { "logsoftmax" };
            let id = ctx.add(ty, &[(port, xi)], &[out], attrs([("axes", ints(vec![d]))]))?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "mm" | "addmm" | "bmm" | "matmul" => {
            let (a, b, bias) = if op == "addmm" {
                let beta = node.kwarg("beta").and_then(Arg::as_f64).unwrap_or(1.0);
                let alpha = node.kwarg("alpha").and_then(Arg::as_f64).unwrap_or(1.0);
                if beta != 1.0 || alpha != 1.0 {
                    return Ok(false);
                }
                (arg(node, 1, "mat1").clone(), arg(node, 2, "mat2").clone(), Some(x.clone()))
            } else {
                (x.clone(), arg(node, 1, "other").clone(), None)
            };
            let ra = meta(ctx, &a)?.dims.len();
            let rb = meta(ctx, &b)?.dims.len();
            if op == "matmul" && (ra < 2 || rb < 2) {
                return Ok(false);
            }
            let two_d = ra == 2 && rb == 2;
            let (x1, t1) = mm_operand(ctx, &a)?;
            let (x2, t2) = mm_operand(ctx, &b)?;
            let mut ins = vec![("x1", x1), ("x2", x2)];
            if let Some(bias) = &bias {
                ins.push(("bias", ctx.tensor(bias)?));
            }
            let id = if two_d {
                ctx.add(
                    "MatMulV2",
                    &ins,
                    &["y"],
                    attrs([
                        ("transpose_x1", AttrValue::Bool(t1)),
                        ("transpose_x2", AttrValue::Bool(t2)),
                        ("offset_x", AttrValue::Int(0)),
                    ]),
                )?
            } else {
                ctx.add(
                    "BatchMatMulV2",
                    &ins,
                    &["y"],
                    attrs([
                        ("adj_x1", AttrValue::Bool(false)),
                        ("adj_x2", AttrValue::Bool(false)),
                        ("offset_x", AttrValue::Int(0)),
                    ]),
                )?
            };
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "convolution" => {
            let transposed = arg(node, 6, "transposed").as_int().unwrap_or(0) != 0;
            if transposed || meta(ctx, &x)?.dims.len() != 4 {
                return Ok(false);
            }
            let two = |v: Option<Vec<i64>>, d: i64| -> Vec<i64> {
                match v {
                    Some(v) if v.len() == 2 => v,
                    Some(v) if v.len() == 1 => vec![v[0], v[0]],
                    _ => vec![d, d],
                }
            };
            let s = two(arg(node, 3, "stride").as_ints(), 1);
            let p = two(arg(node, 4, "padding").as_ints(), 0);
            let d = two(arg(node, 5, "dilation").as_ints(), 1);
            let groups = arg(node, 8, "groups").as_int().unwrap_or(1);
            let xi = ctx.tensor(&x)?;
            let w = ctx.tensor(arg(node, 1, "weight"))?;
            let mut ins = vec![("x", xi), ("filter", w)];
            if !matches!(arg(node, 2, "bias"), Arg::None) {
                ins.push(("bias", ctx.tensor(arg(node, 2, "bias"))?));
            }
            let id = ctx.add(
                "Conv2D",
                &ins,
                &["y"],
                attrs([
                    ("strides", ints(vec![1, 1, s[0], s[1]])),
                    ("pads", ints(vec![p[0], p[0], p[1], p[1]])),
                    ("dilations", ints(vec![1, 1, d[0], d[1]])),
                    ("groups", AttrValue::Int(groups)),
                    ("data_format", AttrValue::String("NCHW".into())),
                    ("offset_x", AttrValue::Int(0)),
                ]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "_native_batch_norm_legit_no_training" => {
            let m = meta(ctx, &x)?.clone();
            if m.dims.len() != 4 {
                return Ok(false);
            }
            let c = m.dims[1];
            let dt = m.dtype.unwrap_or(DataType::FLOAT);
            let eps = arg(node, 6, "eps").as_f64().unwrap_or(1e-5);
            let xi = ctx.tensor(&x)?;
            let param = |ctx: &mut Ctx<'_>, a: &Arg, fill: f64, tag: &str| -> TorchResult<Out> {
                match a {
                    Arg::None => ones_or_zeros(ctx, &format!("{}/{tag}", node.name), c, fill, dt),
                    a => ctx.tensor(a),
                }
            };
            let scale = param(ctx, arg(node, 1, "weight"), 1.0, "scale")?;
            let offset = param(ctx, arg(node, 2, "bias"), 0.0, "offset")?;
            let mean = ctx.tensor(arg(node, 3, "running_mean"))?;
            let var = ctx.tensor(arg(node, 4, "running_var"))?;
            let id = ctx.add(
                "BatchNorm",
                &[("x", xi), ("scale", scale), ("offset", offset), ("mean", mean), ("variance", var)],
                &["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"],
                attrs([
                    ("epsilon", AttrValue::Float(eps as f32)),
                    ("data_format", AttrValue::String("NCHW".into())),
                    ("is_training", AttrValue::Bool(false)),
                ]),
            )?;
            ctx.set(Value::Tuple(vec![Some((id, 0)), None, None]));
            Ok(true)
        }
        "native_layer_norm" => {
            let m = meta(ctx, &x)?.clone();
            let Some(shape) = arg(node, 1, "normalized_shape").as_ints() else {
                return Ok(false);
            };
            let rank = m.dims.len();
            if shape.len() > rank {
                return Ok(false);
            }
            let axis = (rank - shape.len()) as i64;
            let dt = m.dtype.unwrap_or(DataType::FLOAT);
            let eps = arg(node, 4, "eps").as_f64().unwrap_or(1e-5);
            let n: i64 = shape.iter().product();
            let xi = ctx.tensor(&x)?;
            let param = |ctx: &mut Ctx<'_>, a: &Arg, fill: f64, tag: &str| -> TorchResult<Out> {
                match a {
                    Arg::None => {
                        let o = ones_or_zeros(ctx, &format!("{}/{tag}", node.name), n, fill, dt)?;
                        if shape.len() == 1 {
                            return Ok(o);
                        }
                        let s = ctx.const_i64(&format!("{}/{tag}_shape", node.name), &shape, &[shape.len() as i64])?;
                        ctx.helper(&format!("{}/{tag}_r", node.name), "Reshape", &[("x", o), ("shape", s)], TensorDesc::new(&shape, dt, Format::ND), [])
                    }
                    a => ctx.tensor(a),
                }
            };
            let gamma = param(ctx, arg(node, 2, "weight"), 1.0, "gamma")?;
            let beta = param(ctx, arg(node, 3, "bias"), 0.0, "beta")?;
            let id = ctx.add(
                "LayerNorm",
                &[("x", xi), ("gamma", gamma), ("beta", beta)],
                &["y", "mean", "variance"],
                attrs([
                    ("begin_norm_axis", AttrValue::Int(axis)),
                    ("begin_params_axis", AttrValue::Int(axis)),
                    ("epsilon", AttrValue::Float(eps as f32)),
                ]),
            )?;
            ctx.set(Value::Tuple(vec![Some((id, 0)), None, None]));
            Ok(true)
        }
        "max_pool2d_with_indices" | "max_pool2d" | "avg_pool2d" => {
            if meta(ctx, &x)?.dims.len() != 4 {
                return Ok(false);
            }
            let Some((k, s, p)) = pool_lists(node, 1) else {
                return Ok(false);
            };
            let max = op != "avg_pool2d";
            let (ceil, extra): (bool, Vec<(&str, AttrValue)>) = if max {
                let d = arg(node, 4, "dilation").as_ints().unwrap_or_else(|| vec![1]);
                if d.iter().any(|&v| v != 1) {
                    return Ok(false);
                }
                (arg(node, 5, "ceil_mode").as_int().unwrap_or(0) != 0, vec![])
            } else {
                if !matches!(arg(node, 6, "divisor_override"), Arg::None) {
                    return Ok(false);
                }
                let include = arg(node, 5, "count_include_pad").as_int().unwrap_or(1) != 0;
                (arg(node, 4, "ceil_mode").as_int().unwrap_or(0) != 0, vec![("exclusive", AttrValue::Bool(!include))])
            };
            let xi = ctx.tensor(&x)?;
            let mut a = attrs([
                ("ksize", ints(vec![1, 1, k[0], k[1]])),
                ("strides", ints(vec![1, 1, s[0], s[1]])),
                ("padding_mode", AttrValue::String("CALCULATED".into())),
                ("pads", ints(vec![p[0], p[0], p[1], p[1]])),
                ("data_format", AttrValue::String("NCHW".into())),
                ("global_pooling", AttrValue::Bool(false)),
                ("ceil_mode", AttrValue::Bool(ceil)),
            ]);
            for (k, v) in extra {
                a.insert(k, v);
            }
            let id = ctx.add(if max { "MaxPoolV3" } else { "AvgPoolV2" }, &[("x", xi)], &["y"], a)?;
            if op == "max_pool2d_with_indices" {
                ctx.set(Value::Tuple(vec![Some((id, 0)), None]));
            } else {
                ctx.set(Value::T((id, 0)));
            }
            Ok(true)
        }
        "_adaptive_avg_pool2d" => {
            let m = meta(ctx, &x)?.clone();
            let Some(os) = arg(node, 1, "output_size").as_ints() else {
                return Ok(false);
            };
            if m.dims.len() != 4 || os.len() != 2 {
                return Ok(false);
            }
            let xi = ctx.tensor(&x)?;
            let id = if os == [1, 1] {
                ctx.add("ReduceMeanD", &[("x", xi)], &["y"], attrs([("axes", ints(vec![2, 3])), ("keep_dims", AttrValue::Bool(true))]))?
            } else {
                let (h, w) = (m.dims[2], m.dims[3]);
                if h < 0 || w < 0 || os[0] <= 0 || os[1] <= 0 || h % os[0] != 0 || w % os[1] != 0 {
                    return Ok(false);
                }
                let (kh, kw) = (h / os[0], w / os[1]);
                ctx.add(
                    "AvgPoolV2",
                    &[("x", xi)],
                    &["y"],
                    attrs([
                        ("ksize", ints(vec![1, 1, kh, kw])),
                        ("strides", ints(vec![1, 1, kh, kw])),
                        ("padding_mode", AttrValue::String("CALCULATED".into())),
                        ("pads", ints(vec![0, 0, 0, 0])),
                        ("data_format", AttrValue::String("NCHW".into())),
                        ("global_pooling", AttrValue::Bool(false)),
                        ("ceil_mode", AttrValue::Bool(false)),
                        ("exclusive", AttrValue::Bool(true)),
                    ]),
                )?
            };
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "mean" | "sum" | "amax" | "amin" | "any" | "all" | "prod" => {
            let ge = match op {
                "mean" => "ReduceMeanD",
                "sum" => "ReduceSumD",
                "amax" => "ReduceMaxD",
                "amin" => "ReduceMinD",
                "any" => "ReduceAnyD",
                "all" => "ReduceAllD",
                _ => "ReduceProdD",
            };
            reduce(ctx, node, ge, overload == "default")
        }
        "cumsum" => {
            let rank = meta(ctx, &x)?.dims.len();
            let Some(d) = arg(node, 1, "dim").as_int() else {
                return Ok(false);
            };
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let xi = operand(ctx, &x, dt, "x")?;
            let axis = ctx.const_i64(&format!("{}/axis", node.name), &[norm(d, rank)], &[])?;
            let id = ctx.add("Cumsum", &[("x", xi), ("axis", axis)], &["y"], AttrMap::new())?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        "constant_pad_nd" => {
            let rank = meta(ctx, &x)?.dims.len();
            let Some(pad) = arg(node, 1, "pad").as_ints() else {
                return Ok(false);
            };
            if pad.len() % 2 != 0 || pad.len() / 2 > rank || pad.iter().any(|&v| v < 0) {
                return Ok(false);
            }
            // torch: (last dim begin, end, second-last begin, end, …); GE (ONNX layout):
            // every begin, then every end.
            let mut v = vec![0i64; 2 * rank];
            for (k, pair) in pad.chunks(2).enumerate() {
                let d = rank - 1 - k;
                v[d] = pair[0];
                v[rank + d] = pair[1];
            }
            let dt = out_meta(ctx, node)?.dtype.unwrap_or(DataType::FLOAT);
            let value = arg(node, 2, "value").as_f64().unwrap_or(0.0);
            let xi = ctx.tensor(&x)?;
            let p = ctx.const_i64(&format!("{}/paddings", node.name), &v, &[2 * rank as i64])?;
            let c = ctx.const_scalar(&format!("{}/value", node.name), value, dt)?;
            let id = ctx.add(
                "PadV3",
                &[("x", xi), ("paddings", p), ("constant_values", c)],
                &["y"],
                attrs([("mode", AttrValue::String("constant".into())), ("paddings_contiguous", AttrValue::Bool(false))]),
            )?;
            ctx.set(Value::T((id, 0)));
            Ok(true)
        }
        _ => Ok(false),
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
            assert!(unary_ge(h).is_none() && binary_ge(h).is_none(), "{h} in a table and handled");
        }
    }
}
