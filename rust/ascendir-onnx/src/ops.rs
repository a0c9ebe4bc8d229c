//! The ONNX ↔ GE operator mapping: op types, port names and attributes.
//!
//! Most operators map through the declarative [`TABLE`] (one GE type, GE port names in ONNX
//! input/output order, attribute renames). Operators whose attributes change shape or meaning
//! (Conv, pooling, Gemm, Softmax, norms, reductions, ...) have a handler on each side.
//! Port lists use `name` for a required port, `?name` for an optional one and `name*` for a
//! dynamic group taking every remaining ONNX input or output (`name0, name1, ...`).

use std::borrow::Cow;

use ascendir_ir::{AttrMap, AttrValue, DataType, Tensor};

use crate::error::{OnnxError, OnnxResult};
use crate::pb;
use crate::types::{ge_dtype, onnx_dtype, tensor_from_proto};

/// One declarative mapping.
#[derive(Debug)]
pub struct Entry {
    /// ONNX op type (standard domain).
    pub onnx: &'static str,
    /// GE op type.
    pub ge: &'static str,
    /// GE input port names, in ONNX input order.
    pub inputs: &'static [&'static str],
    /// GE output port names, in ONNX output order.
    pub outputs: &'static [&'static str],
    /// `(onnx attribute, GE attribute)` renames; other attributes keep their names.
    pub renames: &'static [(&'static str, &'static str)],
}

macro_rules! entries {
    ($( $onnx:literal => $ge:literal [$($i:literal),*] -> [$($o:literal),*] $({ $($a:literal : $b:literal),* })? ;)*) => {
        /// The declarative ONNX → GE table.
        pub static TABLE: &[Entry] = &[$(Entry {
            onnx: $onnx,
            ge: $ge,
            inputs: &[$($i),*],
            outputs: &[$($o),*],
            renames: &[$($(($a, $b)),*)?],
        }),*];
    };
}

entries! {
    "Add" => "Add" ["x1", "x2"] -> ["y"];
    "Sub" => "Sub" ["x1", "x2"] -> ["y"];
    "Mul" => "Mul" ["x1", "x2"] -> ["y"];
    "Div" => "RealDiv" ["x1", "x2"] -> ["y"];
    "Pow" => "Pow" ["x1", "x2"] -> ["y"];
    "Mod" => "Mod" ["x1", "x2"] -> ["y"];
    "Equal" => "Equal" ["x1", "x2"] -> ["y"];
    "Less" => "Less" ["x1", "x2"] -> ["y"];
    "Greater" => "Greater" ["x1", "x2"] -> ["y"];
    "LessOrEqual" => "LessEqual" ["x1", "x2"] -> ["y"];
    "GreaterOrEqual" => "GreaterEqual" ["x1", "x2"] -> ["y"];
    "And" => "LogicalAnd" ["x1", "x2"] -> ["y"];
    "Or" => "LogicalOr" ["x1", "x2"] -> ["y"];
    "Not" => "LogicalNot" ["x"] -> ["y"];
    "Relu" => "Relu" ["x"] -> ["y"];
    "Sigmoid" => "Sigmoid" ["x"] -> ["y"];
    "Tanh" => "Tanh" ["x"] -> ["y"];
    "Gelu" => "Gelu" ["x"] -> ["y"];
    "Erf" => "Erf" ["x"] -> ["y"];
    "Exp" => "Exp" ["x"] -> ["y"];
    "Log" => "Log" ["x"] -> ["y"];
    "Sqrt" => "Sqrt" ["x"] -> ["y"];
    "Abs" => "Abs" ["x"] -> ["y"];
    "Neg" => "Neg" ["x"] -> ["y"];
    "Reciprocal" => "Reciprocal" ["x"] -> ["y"];
    "Floor" => "Floor" ["x"] -> ["y"];
    "Ceil" => "Ceil" ["x"] -> ["y"];
    "Round" => "Round" ["x"] -> ["y"];
    "Sign" => "Sign" ["x"] -> ["y"];
    "Sin" => "Sin" ["x"] -> ["y"];
    "Cos" => "Cos" ["x"] -> ["y"];
    "Tan" => "Tan" ["x"] -> ["y"];
    "Atan" => "Atan" ["x"] -> ["y"];
    "Asin" => "Asin" ["x"] -> ["y"];
    "Acos" => "Acos" ["x"] -> ["y"];
    "Sinh" => "Sinh" ["x"] -> ["y"];
    "Cosh" => "Cosh" ["x"] -> ["y"];
    "IsNaN" => "IsNan" ["x"] -> ["y"];
    "IsInf" => "IsInf" ["x"] -> ["y"];
    "Softplus" => "Softplus" ["x"] -> ["y"];
    "Softsign" => "Softsign" ["x"] -> ["y"];
    "Mish" => "Mish" ["x"] -> ["y"];
    "HardSwish" => "HardSwish" ["x"] -> ["y"];
    "Identity" => "Identity" ["x"] -> ["y"];
    "Elu" => "Elu" ["x"] -> ["y"];
    "Selu" => "Selu" ["x"] -> ["y"];
    "Celu" => "Celu" ["x"] -> ["y"];
    "HardSigmoid" => "HardSigmoid" ["x"] -> ["y"];
    "LeakyRelu" => "LeakyRelu" ["x"] -> ["y"] { "alpha": "negative_slope" };
    "PRelu" => "PRelu" ["x", "weight"] -> ["y"];
    "Flatten" => "Flatten" ["x"] -> ["y"];
    "Reshape" => "Reshape" ["x", "shape"] -> ["y"];
    "Expand" => "Expand" ["x", "shape"] -> ["y"];
    "Tile" => "Tile" ["x", "multiples"] -> ["y"];
    "Where" => "Select" ["condition", "x1", "x2"] -> ["y"];
    "Range" => "Range" ["start", "limit", "delta"] -> ["y"];
    "Slice" => "StridedSliceV2" ["x", "begin", "end", "?axes", "?strides"] -> ["y"];
    "Clip" => "ClipByValue" ["x", "?clip_value_min", "?clip_value_max"] -> ["y"];
    "Pad" => "PadV3" ["x", "paddings", "?constant_values", "?axes"] -> ["y"];
    "Resize" => "Resize" ["x", "?roi", "?scales", "?sizes"] -> ["y"];
    "TopK" => "TopKV2" ["x", "k"] -> ["values", "indices"] { "axis": "dim" };
    "Sum" => "AddN" ["x*"] -> ["y"];
    "Einsum" => "Einsum" ["x*"] -> ["y"];
    "GlobalAveragePool" => "GlobalAveragePool" ["x"] -> ["y"];
    "GlobalMaxPool" => "GlobalMaxPool" ["x"] -> ["y"];
    "GatherElements" => "GatherElements" ["x", "index"] -> ["y"] { "axis": "dim" };
    "GatherND" => "GatherNd" ["x", "indices"] -> ["y"];
    "ScatterND" => "ScatterNd" ["x", "indices", "updates"] -> ["y"];
    "CumSum" => "Cumsum" ["x", "axis"] -> ["y"];
    "NonZero" => "NonZero" ["x"] -> ["y"];
    "InstanceNormalization" => "InstanceNorm" ["x", "gamma", "beta"] -> ["y"];
    "DepthToSpace" => "DepthToSpace" ["x"] -> ["y"];
    "SpaceToDepth" => "SpaceToDepth" ["x"] -> ["y"];
    "Dropout" => "Dropout" ["x", "?ratio", "?training_mode"] -> ["y", "mask"];
    "Trilu" => "Trilu" ["x", "?k"] -> ["y"];
    "OneHot" => "OneHot" ["indices", "depth", "values"] -> ["y"];
    "ArgMax" => "ArgMaxD" ["x"] -> ["y"] { "axis": "dimension", "keepdims": "keep_dims" };
    "ArgMin" => "ArgMinD" ["x"] -> ["y"] { "axis": "dimension", "keepdims": "keep_dims" };
    "Softmax" => "SoftmaxV2" ["x"] -> ["y"];
    "LogSoftmax" => "LogSoftmaxV2" ["logits"] -> ["logsoftmax"];
    "Conv" => "Conv2D" ["x", "filter", "?bias"] -> ["y"];
    "MaxPool" => "MaxPoolV3" ["x"] -> ["y", "argmax"];
    "AveragePool" => "AvgPoolV2" ["x"] -> ["y"];
    "BatchNormalization" => "BatchNorm" ["x", "scale", "offset", "mean", "variance"] -> ["y", "batch_mean", "batch_variance"];
    "LayerNormalization" => "LayerNorm" ["x", "gamma", "?beta"] -> ["y", "mean", "variance"];
    "MatMul" => "BatchMatMulV2" ["x1", "x2"] -> ["y"];
    "Gemm" => "MatMulV2" ["x1", "x2", "?bias"] -> ["y"];
    "Cast" => "Cast" ["x"] -> ["y"];
    "Shape" => "Shape" ["x"] -> ["y"];
    "ConstantOfShape" => "Fill" ["dims"] -> ["y"];
    "Concat" => "ConcatV2D" ["x*"] -> ["y"];
    "Split" => "SplitD" ["x"] -> ["y*"];
    "Gather" => "GatherV2D" ["x", "indices"] -> ["y"];
    "Transpose" => "TransposeD" ["x"] -> ["y"];
    "Squeeze" => "Squeeze" ["x"] -> ["y"];
    "Unsqueeze" => "Unsqueeze" ["x"] -> ["y"];
    "ReduceSum" => "ReduceSumD" ["x"] -> ["y"];
    "ReduceMean" => "ReduceMeanD" ["x"] -> ["y"];
    "ReduceMax" => "ReduceMaxD" ["x"] -> ["y"];
    "ReduceMin" => "ReduceMinD" ["x"] -> ["y"];
    "ReduceProd" => "ReduceProdD" ["x"] -> ["y"];
    "ReduceL2" => "ReduceL2" ["x", "?axes"] -> ["y"];
    "ReduceLogSumExp" => "ReduceLogSumExp" ["x", "?axes"] -> ["y"];
    "Max" => "Maximum" ["x1", "x2"] -> ["y"];
    "Min" => "Minimum" ["x1", "x2"] -> ["y"];
    "Constant" => "Const" [] -> ["y"];
    "If" => "If" ["cond"] -> ["output*"];
    "Loop" => "Loop" ["?max_trip_count", "?cond", "input*"] -> ["output*"];
}

/// The table entry of an ONNX op type (hashed look-up).
pub fn entry(onnx: &str) -> Option<&'static Entry> {
    static INDEX: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, &'static Entry>> =
        std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| TABLE.iter().map(|e| (e.onnx, e)).collect())
        .get(onnx)
        .copied()
}

/// Look-ups the mapping needs about a node's inputs.
pub trait InputInfo {
    /// The integer values of a constant input (initializer or `Constant` output), if known.
    fn const_ints(&self, name: &str) -> Option<Vec<i64>>;
    /// The rank of an input, if its type is known.
    fn rank(&self, name: &str) -> Option<usize>;
}

/// A mapped node: GE type, ports (with the ONNX input index feeding each input port) and
/// attributes. Ports follow ONNX positions; the builder links them.
#[derive(Debug)]
pub struct Mapped {
    /// GE op type.
    pub ge_type: String,
    /// `(GE port name, ONNX input index or None, optional)`.
    pub inputs: Vec<(Cow<'static, str>, Option<usize>, bool)>,
    /// GE output port names, one per ONNX output.
    pub outputs: Vec<Cow<'static, str>>,
    /// GE attributes.
    pub attrs: AttrMap,
    /// Extra constant inputs to create: `(GE port name, value)`, appended after `inputs`.
    pub aux: Vec<(&'static str, Tensor)>,
}

/// Convert an ONNX attribute value (graphs excluded: the builder turns them into subgraphs).
pub fn attr_value(a: &pb::AttributeProto) -> OnnxResult<Option<AttrValue>> {
    use pb::attribute_proto::AttributeType as T;
    let ty = T::try_from(a.r#type).unwrap_or(T::Undefined);
    Ok(Some(match ty {
        T::Float => AttrValue::Float(a.f),
        T::Int => AttrValue::Int(a.i),
        T::String => AttrValue::String(String::from_utf8_lossy(&a.s).into_owned()),
        T::Tensor => match &a.t {
            Some(t) => AttrValue::Tensor(tensor_from_proto(t, None)?),
            None => return Ok(None),
        },
        T::Floats => AttrValue::ListFloat(a.floats.clone()),
        T::Ints => AttrValue::ListInt(a.ints.clone()),
        T::Strings => AttrValue::ListString(
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        ),
        T::Tensors => AttrValue::ListTensor(
            a.tensors
                .iter()
                .map(|t| tensor_from_proto(t, None))
                .collect::<OnnxResult<_>>()?,
        ),
        T::Undefined => {
            // Files written without `type` (old exporters): infer from the set field.
            if !a.ints.is_empty() {
                AttrValue::ListInt(a.ints.clone())
            } else if !a.floats.is_empty() {
                AttrValue::ListFloat(a.floats.clone())
            } else if !a.s.is_empty() {
                AttrValue::String(String::from_utf8_lossy(&a.s).into_owned())
            } else if a.f != 0.0 {
                AttrValue::Float(a.f)
            } else {
                AttrValue::Int(a.i)
            }
        }
        _ => return Ok(None),
    }))
}

fn get<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

fn get_i(node: &pb::NodeProto, name: &str, default: i64) -> i64 {
    get(node, name).map_or(default, |a| a.i)
}

fn get_f(node: &pb::NodeProto, name: &str, default: f32) -> f32 {
    get(node, name).map_or(default, |a| a.f)
}

fn get_ints(node: &pb::NodeProto, name: &str) -> Option<Vec<i64>> {
    get(node, name).map(|a| a.ints.clone())
}

fn get_s(node: &pb::NodeProto, name: &str) -> Option<String> {
    get(node, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

fn input(node: &pb::NodeProto, i: usize) -> Option<&str> {
    node.input
        .get(i)
        .map(|b| pb::text(b))
        .filter(|s| !s.is_empty())
}

/// Lay out ports from a port list over the node's actual inputs/outputs.
fn layout_inputs(spec: &[&'static str], n: usize) -> Vec<(Cow<'static, str>, Option<usize>, bool)> {
    let mut out = Vec::with_capacity(n.max(spec.len()));
    let mut k = 0usize;
    for s in spec {
        if let Some(group) = s.strip_suffix('*') {
            let start = k;
            while k < n {
                out.push((Cow::Owned(format!("{group}{}", k - start)), Some(k), false));
                k += 1;
            }
        } else if let Some(opt) = s.strip_prefix('?') {
            if k < n {
                out.push((Cow::Borrowed(opt), Some(k), true));
            }
            k += 1;
        } else {
            out.push((Cow::Borrowed(*s), (k < n).then_some(k), false));
            k += 1;
        }
    }
    while k < n {
        out.push((Cow::Owned(format!("__input{k}")), Some(k), false));
        k += 1;
    }
    out
}

fn layout_outputs(spec: &[&'static str], n: usize) -> Vec<Cow<'static, str>> {
    let mut out = Vec::with_capacity(n);
    let mut k = 0usize;
    for s in spec {
        if k >= n {
            break;
        }
        if let Some(group) = s.strip_suffix('*') {
            let start = k;
            while k < n {
                out.push(Cow::Owned(format!("{group}{}", k - start)));
                k += 1;
            }
        } else {
            out.push(Cow::Borrowed(s.trim_start_matches('?')));
            k += 1;
        }
    }
    while k < n {
        out.push(Cow::Owned(format!("__output{k}")));
        k += 1;
    }
    out
}

/// Convert every attribute not in `skip`, applying the entry's renames.
fn generic_attrs(
    node: &pb::NodeProto,
    e: &Entry,
    skip: &[&str],
    attrs: &mut AttrMap,
) -> OnnxResult<()> {
    for a in &node.attribute {
        if skip.contains(&a.name.as_str()) || a.g.is_some() || !a.graphs.is_empty() {
            continue;
        }
        if let Some(v) = attr_value(a)? {
            let name = e
                .renames
                .iter()
                .find(|(o, _)| *o == a.name)
                .map_or(a.name.as_str(), |(_, g)| g);
            attrs.insert(name.to_string(), v);
        }
    }
    Ok(())
}

fn nchw(spatial: &[i64], fill: i64) -> Vec<i64> {
    let mut v = vec![fill, fill];
    v.extend_from_slice(spatial);
    v
}

/// ONNX pads `[b1.., e1..]` → GE `[b1, e1, b2, e2, ...]` (top, bottom, left, right for 2-D).
fn ge_pads(onnx: &[i64], spatial: usize) -> Vec<i64> {
    let mut v = Vec::with_capacity(spatial * 2);
    for i in 0..spatial {
        v.push(onnx.get(i).copied().unwrap_or(0));
        v.push(onnx.get(i + spatial).copied().unwrap_or(0));
    }
    v
}

/// Inverse of [`ge_pads`].
fn onnx_pads(ge: &[i64]) -> Vec<i64> {
    let spatial = ge.len() / 2;
    let mut v = vec![0; spatial * 2];
    for i in 0..spatial {
        v[i] = ge[2 * i];
        v[i + spatial] = ge[2 * i + 1];
    }
    v
}

fn auto_pad(node: &pb::NodeProto, attrs: &mut AttrMap, key: &str) {
    if let Some(p) = get_s(node, "auto_pad") {
        let mode = match p.as_str() {
            "SAME_UPPER" => "SAME",
            "SAME_LOWER" => "SAME_LOWER",
            "VALID" => "VALID",
            _ => return,
        };
        attrs.insert(key.to_string(), AttrValue::String(mode.to_string()));
    }
}

/// Map one ONNX node of the standard domain. `None` when the op (or this form of it) has no
/// mapping: the builder then keeps it as `onnx::<OpType>`.
pub fn map_node(
    node: &pb::NodeProto,
    opset: i64,
    info: &dyn InputInfo,
) -> OnnxResult<Option<Mapped>> {
    let Some(e) = entry(pb::text(&node.op_type)) else {
        return Ok(None);
    };
    let n_in = node.input.len();
    let n_out = node.output.len();
    let mut m = Mapped {
        ge_type: e.ge.to_string(),
        inputs: layout_inputs(e.inputs, n_in),
        outputs: layout_outputs(e.outputs, n_out),
        attrs: AttrMap::new(),
        aux: Vec::new(),
    };
    let a = &mut m.attrs;
    let name = pb::text(&node.name);
    match e.onnx {
        "Conv" => {
            let k = get_ints(node, "kernel_shape")
                .map(|k| k.len())
                .or_else(|| {
                    input(node, 1)
                        .and_then(|w| info.rank(w))
                        .map(|r| r.saturating_sub(2))
                })
                .unwrap_or(2);
            if k != 2 {
                return Ok(None);
            }
            let strides = get_ints(node, "strides").unwrap_or_else(|| vec![1; k]);
            let dil = get_ints(node, "dilations").unwrap_or_else(|| vec![1; k]);
            let pads = get_ints(node, "pads").unwrap_or_else(|| vec![0; 2 * k]);
            a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
            a.insert("pads", AttrValue::ListInt(ge_pads(&pads, k)));
            a.insert("dilations", AttrValue::ListInt(nchw(&dil, 1)));
            a.insert("groups", AttrValue::Int(get_i(node, "group", 1)));
            a.insert("data_format", AttrValue::String("NCHW".into()));
            a.insert("offset_x", AttrValue::Int(0));
            if let Some(ks) = get_ints(node, "kernel_shape") {
                a.insert("kernel_shape", AttrValue::ListInt(ks));
            }
            auto_pad(node, a, "padding");
        }
        "MaxPool" | "AveragePool" => {
            let Some(ks) = get_ints(node, "kernel_shape") else {
                return Err(OnnxError::Invalid(format!(
                    "{} '{name}' has no kernel_shape",
                    e.onnx
                )));
            };
            let k = ks.len();
            if k != 2 || (e.onnx == "MaxPool" && n_out > 1) {
                return Ok(None);
            }
            let strides = get_ints(node, "strides").unwrap_or_else(|| vec![1; k]);
            let pads = get_ints(node, "pads").unwrap_or_else(|| vec![0; 2 * k]);
            a.insert("ksize", AttrValue::ListInt(nchw(&ks, 1)));
            a.insert("strides", AttrValue::ListInt(nchw(&strides, 1)));
            a.insert("pads", AttrValue::ListInt(ge_pads(&pads, k)));
            let mode = match get_s(node, "auto_pad").as_deref() {
                Some("SAME_UPPER") | Some("SAME_LOWER") => "SAME",
                Some("VALID") => "VALID",
                _ => "CALCULATED",
            };
            a.insert("padding_mode", AttrValue::String(mode.into()));
            a.insert("data_format", AttrValue::String("NCHW".into()));
            a.insert("global_pooling", AttrValue::Bool(false));
            a.insert(
                "ceil_mode",
                AttrValue::Bool(get_i(node, "ceil_mode", 0) != 0),
            );
            if e.onnx == "AveragePool" {
                a.insert(
                    "exclusive",
                    AttrValue::Bool(get_i(node, "count_include_pad", 0) == 0),
                );
            } else if let Some(d) = get_ints(node, "dilations") {
                a.insert("dilations", AttrValue::ListInt(nchw(&d, 1)));
            }
        }
        "Gemm" => {
            let alpha = get_f(node, "alpha", 1.0);
            let beta = get_f(node, "beta", 1.0);
            a.insert(
                "transpose_x1",
                AttrValue::Bool(get_i(node, "transA", 0) != 0),
            );
            a.insert(
                "transpose_x2",
                AttrValue::Bool(get_i(node, "transB", 0) != 0),
            );
            a.insert("offset_x", AttrValue::Int(0));
            if alpha != 1.0 || beta != 1.0 {
                a.insert("alpha", AttrValue::Float(alpha));
                a.insert("beta", AttrValue::Float(beta));
            }
        }
        "MatMul" => {
            let r0 = input(node, 0).and_then(|x| info.rank(x));
            let r1 = input(node, 1).and_then(|x| info.rank(x));
            if r0 == Some(2) && r1 == Some(2) {
                m.ge_type = "MatMulV2".into();
                a.insert("transpose_x1", AttrValue::Bool(false));
                a.insert("transpose_x2", AttrValue::Bool(false));
            } else {
                a.insert("adj_x1", AttrValue::Bool(false));
                a.insert("adj_x2", AttrValue::Bool(false));
            }
            a.insert("offset_x", AttrValue::Int(0));
        }
        "Softmax" | "LogSoftmax" => {
            let default = if opset >= 13 { -1 } else { 1 };
            if opset < 13 && get_i(node, "axis", default) != -1 {
                // Before opset 13 softmax flattens to 2-D at `axis`; only the last-axis form maps.
                if let Some(r) = input(node, 0).and_then(|x| info.rank(x)) {
                    let axis = get_i(node, "axis", default);
                    if axis != r as i64 - 1 {
                        return Ok(None);
                    }
                } else {
                    return Ok(None);
                }
            }
            a.insert(
                "axes",
                AttrValue::ListInt(vec![get_i(node, "axis", default)]),
            );
        }
        "BatchNormalization" => {
            // GE's BatchNorm always has its five outputs; ONNX's fill the first ones.
            m.outputs = [
                "y",
                "batch_mean",
                "batch_variance",
                "reserve_space_1",
                "reserve_space_2",
            ]
            .into_iter()
            .map(Cow::Borrowed)
            .collect();
            a.insert("epsilon", AttrValue::Float(get_f(node, "epsilon", 1e-5)));
            a.insert("data_format", AttrValue::String("NCHW".into()));
            a.insert(
                "is_training",
                AttrValue::Bool(get_i(node, "training_mode", 0) != 0),
            );
            if let Some(mo) = get(node, "momentum") {
                a.insert("momentum", AttrValue::Float(mo.f));
            }
        }
        "Mod" => {
            // ONNX's default (`fmod=0`) takes the divisor's sign, GE's FloorMod; `fmod=1` is
            // C's fmod, GE's Mod.
            if get_i(node, "fmod", 0) == 0 {
                m.ge_type = "FloorMod".into();
            }
        }
        "LayerNormalization" => {
            // ONNX's third output is the inverse standard deviation: GE's LayerNormV3 (`rstd`)
            // when it is used, else LayerNorm (whose third output is the variance).
            let rstd = node.output.get(2).is_some_and(|o| !pb::text(o).is_empty());
            let third = if rstd {
                m.ge_type = "LayerNormV3".into();
                "rstd"
            } else {
                "variance"
            };
            m.outputs = ["y", "mean", third]
                .into_iter()
                .map(Cow::Borrowed)
                .collect();
            let axis = get_i(node, "axis", -1);
            a.insert("begin_norm_axis", AttrValue::Int(axis));
            a.insert("begin_params_axis", AttrValue::Int(axis));
            a.insert("epsilon", AttrValue::Float(get_f(node, "epsilon", 1e-5)));
            if let Some(st) = get(node, "stash_type") {
                a.insert("stash_type", AttrValue::Int(st.i));
            }
        }
        "Cast" => {
            let to = get_i(node, "to", 0) as i32;
            let dt = ge_dtype(to);
            if dt == DataType::UNDEFINED {
                return Ok(None);
            }
            a.insert("dst_type", AttrValue::Int(i64::from(dt.ge_value())));
            if let Some(s) = get(node, "saturate") {
                a.insert("saturate", AttrValue::Int(s.i));
            }
        }
        "Shape" => {
            a.insert(
                "dtype",
                AttrValue::Int(i64::from(DataType::INT64.ge_value())),
            );
            if let Some(s) = get(node, "start") {
                a.insert("start", AttrValue::Int(s.i));
            }
            if let Some(s) = get(node, "end") {
                a.insert("end", AttrValue::Int(s.i));
            }
        }
        "ConstantOfShape" => {
            let value = match get(node, "value").and_then(|v| v.t.as_ref()) {
                Some(t) => tensor_from_proto(t, None)?,
                None => Tensor::new(
                    ascendir_ir::TensorDesc::new(&[1], DataType::FLOAT, ascendir_ir::Format::ND),
                    bytes::Bytes::from_static(&[0, 0, 0, 0]),
                ),
            };
            m.aux.push(("value", value));
        }
        "Concat" => {
            a.insert("concat_dim", AttrValue::Int(get_i(node, "axis", 0)));
            a.insert("N", AttrValue::Int(n_in as i64));
        }
        "Sum" | "Einsum" => {
            generic_attrs(node, e, &[], a)?;
            a.insert("N", AttrValue::Int(n_in as i64));
        }
        "Split" => {
            let axis = get_i(node, "axis", 0);
            let sizes =
                get_ints(node, "split").or_else(|| input(node, 1).and_then(|s| info.const_ints(s)));
            if input(node, 1).is_some() && sizes.is_none() {
                return Ok(None);
            }
            m.inputs.truncate(1);
            match sizes {
                Some(s) => {
                    m.ge_type = "SplitVD".into();
                    a.insert("size_splits", AttrValue::ListInt(s));
                }
                None => m.ge_type = "SplitD".into(),
            }
            a.insert("split_dim", AttrValue::Int(axis));
            a.insert("num_split", AttrValue::Int(n_out as i64));
        }
        "Gather" => {
            a.insert("axis", AttrValue::Int(get_i(node, "axis", 0)));
        }
        "Transpose" => {
            let perm = match get_ints(node, "perm") {
                Some(p) => p,
                None => match input(node, 0).and_then(|x| info.rank(x)) {
                    Some(r) => (0..r as i64).rev().collect(),
                    None => return Ok(None),
                },
            };
            a.insert("perm", AttrValue::ListInt(perm));
        }
        "Squeeze" | "Unsqueeze" => {
            let key = if e.onnx == "Squeeze" { "axis" } else { "axes" };
            let const_axes = input(node, 1).and_then(|x| info.const_ints(x));
            if let Some(axes) = get_ints(node, "axes") {
                a.insert(key, AttrValue::ListInt(axes));
            } else if let Some(axes) = const_axes {
                // Constant axes become the attribute, as GE's parser folds them.
                m.inputs.truncate(1);
                a.insert(key, AttrValue::ListInt(axes));
            } else if n_in > 1 || e.onnx == "Unsqueeze" {
                m.ge_type = format!("{}V3", e.ge);
                m.inputs = layout_inputs(&["x", "?axes"], n_in);
            } else {
                a.insert(key, AttrValue::ListInt(Vec::new()));
            }
        }
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
            a.insert(
                "keep_dims",
                AttrValue::Bool(get_i(node, "keepdims", 1) != 0),
            );
            let noop = get_i(node, "noop_with_empty_axes", 0);
            if noop != 0 {
                a.insert("noop_with_empty_axes", AttrValue::Bool(true));
            }
            if let Some(axes) = get_ints(node, "axes") {
                a.insert("axes", AttrValue::ListInt(axes));
            } else if n_in > 1 {
                m.ge_type = e.ge.trim_end_matches('D').to_string();
                m.inputs = layout_inputs(&["x", "?axes"], n_in);
            } else {
                a.insert("axes", AttrValue::ListInt(Vec::new()));
            }
        }
        "ReduceL2" | "ReduceLogSumExp" => {
            a.insert(
                "keep_dims",
                AttrValue::Bool(get_i(node, "keepdims", 1) != 0),
            );
            if let Some(axes) = get_ints(node, "axes") {
                a.insert("axes", AttrValue::ListInt(axes));
            }
        }
        "Max" | "Min" => {
            if n_in != 2 {
                return Ok(None);
            }
        }
        "Pad" => {
            if n_in < 2 {
                return Ok(None);
            }
            a.insert(
                "mode",
                AttrValue::String(get_s(node, "mode").unwrap_or_else(|| "constant".into())),
            );
            a.insert("paddings_contiguous", AttrValue::Bool(false));
        }
        "Constant" => {
            let Some(attr) = node.attribute.first() else {
                return Err(OnnxError::Invalid(format!(
                    "Constant '{name}' has no value"
                )));
            };
            let t = constant_value(attr).map_err(|err| match err {
                OnnxError::Invalid(msg) => OnnxError::Invalid(format!("Constant '{name}': {msg}")),
                other => other,
            })?;
            a.insert("value", AttrValue::Tensor(t));
        }
        "TopK" => {
            generic_attrs(node, e, &[], a)?;
            a.get_or_insert("dim", AttrValue::Int(-1));
            a.get_or_insert("largest", AttrValue::Int(1));
            a.get_or_insert("sorted", AttrValue::Int(1));
            for key in ["largest", "sorted"] {
                if let Some(AttrValue::Int(v)) = a.get(key) {
                    let b = *v != 0;
                    a.insert(key, AttrValue::Bool(b));
                }
            }
        }
        "Flatten" => {
            a.insert("axis", AttrValue::Int(get_i(node, "axis", 1)));
        }
        "Reshape" => {
            a.insert("axis", AttrValue::Int(0));
            a.insert("num_axes", AttrValue::Int(-1));
            let allowzero = get_i(node, "allowzero", 0);
            if allowzero != 0 {
                a.insert("allowzero", AttrValue::Int(allowzero));
            }
        }
        "If" | "Loop" => {}
        _ => generic_attrs(node, e, &[], a)?,
    }
    // Where the two sides' defaults differ, an absent attribute is written out explicitly.
    for &(ge, ge_attr, onnx_attr, _, onnx_default) in DEFAULTS_DIFFER {
        if e.ge == ge && !node.attribute.iter().any(|x| x.name == onnx_attr) {
            a.insert(ge_attr, AttrValue::Float(onnx_default));
        }
    }
    Ok(Some(m))
}

/// Float attributes whose GE and ONNX defaults differ:
/// `(GE type, GE attribute, ONNX attribute, GE default, ONNX default)`.
const DEFAULTS_DIFFER: &[(&str, &str, &str, f32, f32)] = &[
    ("LeakyRelu", "negative_slope", "alpha", 0.0, 0.01),
    ("HardSigmoid", "alpha", "alpha", 1.0 / 6.0, 0.2),
];

/// The tensor of a `Constant` node's single attribute (`value`, `value_float`, ...).
pub fn constant_value(attr: &pb::AttributeProto) -> OnnxResult<Tensor> {
    use ascendir_ir::{Format, TensorDesc};
    let scalar = |dt: DataType, bytes: Vec<u8>, dims: &[i64]| {
        Tensor::new(TensorDesc::new(dims, dt, Format::ND), bytes.into())
    };
    Ok(match attr.name.as_str() {
        "value" => match &attr.t {
            Some(t) => tensor_from_proto(t, None)?,
            None => {
                return Err(OnnxError::Invalid(
                    "attribute 'value' holds no tensor".into(),
                ))
            }
        },
        "value_float" => scalar(DataType::FLOAT, attr.f.to_le_bytes().to_vec(), &[]),
        "value_int" => scalar(DataType::INT64, attr.i.to_le_bytes().to_vec(), &[]),
        "value_floats" => scalar(
            DataType::FLOAT,
            attr.floats.iter().flat_map(|v| v.to_le_bytes()).collect(),
            &[attr.floats.len() as i64],
        ),
        "value_ints" => scalar(
            DataType::INT64,
            attr.ints.iter().flat_map(|v| v.to_le_bytes()).collect(),
            &[attr.ints.len() as i64],
        ),
        "value_string" => Tensor::new(
            TensorDesc::new(&[], DataType::STRING, Format::ND),
            crate::types::pack_strings(std::slice::from_ref(&attr.s)),
        ),
        "value_strings" => Tensor::new(
            TensorDesc::new(&[attr.strings.len() as i64], DataType::STRING, Format::ND),
            crate::types::pack_strings(&attr.strings),
        ),
        other => {
            return Err(OnnxError::Invalid(format!(
                "unsupported value attribute '{other}'"
            )))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Export side.

/// One ONNX node to emit (plus constant inputs to add as initializers).
#[derive(Debug, Default)]
pub struct Emitted {
    /// ONNX op type.
    pub op_type: String,
    /// Attributes.
    pub attrs: Vec<pb::AttributeProto>,
    /// Input value names by ONNX position, taken from the GE inputs (`Some(k)` = GE input `k`,
    /// `None` = an absent optional input), or a new initializer (`Err(idx into consts)`).
    pub inputs: Vec<Source>,
    /// Initializers to create for inputs that GE keeps as attributes.
    pub consts: Vec<Tensor>,
    /// Domain (empty for the standard domain).
    pub domain: String,
}

/// Where an exported input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// GE input port `k`.
    Port(usize),
    /// An absent optional input.
    Absent,
    /// The `k`-th entry of [`Emitted::consts`].
    Const(usize),
}

fn a_int(name: &str, v: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Int as i32,
        i: v,
        ..Default::default()
    }
}

fn a_float(name: &str, v: f32) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Float as i32,
        f: v,
        ..Default::default()
    }
}

fn a_ints(name: &str, v: Vec<i64>) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints: v,
        ..Default::default()
    }
}

fn a_str(name: &str, v: &str) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::String as i32,
        s: bytes::Bytes::copy_from_slice(v.as_bytes()),
        ..Default::default()
    }
}

/// Convert a GE attribute back to ONNX (`None` for kinds ONNX attributes cannot hold).
pub fn attr_to_proto(name: &str, v: &AttrValue) -> OnnxResult<Option<pb::AttributeProto>> {
    use pb::attribute_proto::AttributeType as T;
    Ok(Some(match v {
        AttrValue::Int(i) => a_int(name, *i),
        AttrValue::Bool(b) => a_int(name, i64::from(*b)),
        AttrValue::Float(f) => a_float(name, *f),
        AttrValue::String(s) => a_str(name, s),
        AttrValue::ListInt(l) => a_ints(name, l.clone()),
        AttrValue::ListBool(l) => a_ints(name, l.iter().map(|b| i64::from(*b)).collect()),
        AttrValue::ListFloat(l) => pb::AttributeProto {
            name: name.into(),
            r#type: T::Floats as i32,
            floats: l.clone(),
            ..Default::default()
        },
        AttrValue::ListString(l) => pb::AttributeProto {
            name: name.into(),
            r#type: T::Strings as i32,
            strings: l
                .iter()
                .map(|s| bytes::Bytes::copy_from_slice(s.as_bytes()))
                .collect(),
            ..Default::default()
        },
        AttrValue::Tensor(t) => pb::AttributeProto {
            name: name.into(),
            r#type: T::Tensor as i32,
            t: Some(Box::new(crate::types::tensor_to_proto("", t)?)),
            ..Default::default()
        },
        AttrValue::DataType(dt) => a_int(name, i64::from(onnx_dtype(*dt).unwrap_or(0))),
        _ => return Ok(None),
    }))
}

fn ints_of(attrs: &AttrMap, key: &str) -> Option<Vec<i64>> {
    attrs
        .get(key)
        .and_then(|v| v.as_list_int())
        .map(<[i64]>::to_vec)
}

fn int_of(attrs: &AttrMap, key: &str) -> Option<i64> {
    match attrs.get(key) {
        Some(AttrValue::Int(i)) => Some(*i),
        Some(AttrValue::Bool(b)) => Some(i64::from(*b)),
        _ => None,
    }
}

fn bool_of(attrs: &AttrMap, key: &str) -> bool {
    int_of(attrs, key).unwrap_or(0) != 0
}

fn float_of(attrs: &AttrMap, key: &str) -> Option<f32> {
    match attrs.get(key) {
        Some(AttrValue::Float(f)) => Some(*f),
        _ => None,
    }
}

fn str_of<'a>(attrs: &'a AttrMap, key: &str) -> Option<&'a str> {
    attrs.get(key).and_then(|v| v.as_str())
}

fn spatial(v: &[i64]) -> Vec<i64> {
    v.get(2..).map_or_else(Vec::new, <[i64]>::to_vec)
}

fn ints_const(values: &[i64]) -> Tensor {
    Tensor::new(
        ascendir_ir::TensorDesc::new(
            &[values.len() as i64],
            DataType::INT64,
            ascendir_ir::Format::ND,
        ),
        crate::types::i64_payload(values),
    )
}

/// Map one GE op back to ONNX at `opset`. `input_ports` are the GE input port names (for
/// optional and dynamic inputs), `n_out` the output count. `None` when the GE type has no
/// ONNX form.
pub fn unmap_node(
    ge_type: &str,
    attrs: &AttrMap,
    input_ports: &[&str],
    opset: i64,
) -> OnnxResult<Option<Emitted>> {
    let all_ports: Vec<Source> = (0..input_ports.len()).map(Source::Port).collect();
    let mut em = Emitted {
        inputs: all_ports.clone(),
        ..Default::default()
    };
    let at = &mut em.attrs;
    let onnx = match ge_type {
        "Conv2D" => {
            at.push(a_ints(
                "strides",
                spatial(&ints_of(attrs, "strides").unwrap_or_default()),
            ));
            at.push(a_ints(
                "dilations",
                spatial(&ints_of(attrs, "dilations").unwrap_or_default()),
            ));
            let pads = ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 4]);
            match str_of(attrs, "padding") {
                Some("SAME") => at.push(a_str("auto_pad", "SAME_UPPER")),
                Some("SAME_LOWER") => at.push(a_str("auto_pad", "SAME_LOWER")),
                Some("VALID") => at.push(a_str("auto_pad", "VALID")),
                _ => at.push(a_ints("pads", onnx_pads(&pads))),
            }
            at.push(a_int("group", int_of(attrs, "groups").unwrap_or(1)));
            if let Some(ks) = ints_of(attrs, "kernel_shape") {
                at.push(a_ints("kernel_shape", ks));
            }
            "Conv"
        }
        "MaxPoolV3" | "AvgPoolV2" => {
            at.push(a_ints(
                "kernel_shape",
                spatial(&ints_of(attrs, "ksize").unwrap_or_default()),
            ));
            at.push(a_ints(
                "strides",
                spatial(&ints_of(attrs, "strides").unwrap_or_default()),
            ));
            match str_of(attrs, "padding_mode") {
                Some("SAME") => at.push(a_str("auto_pad", "SAME_UPPER")),
                Some("VALID") => at.push(a_str("auto_pad", "VALID")),
                _ => at.push(a_ints(
                    "pads",
                    onnx_pads(&ints_of(attrs, "pads").unwrap_or_else(|| vec![0; 4])),
                )),
            }
            at.push(a_int("ceil_mode", i64::from(bool_of(attrs, "ceil_mode"))));
            if ge_type == "AvgPoolV2" {
                let exclusive = int_of(attrs, "exclusive").is_none_or(|v| v != 0);
                at.push(a_int("count_include_pad", i64::from(!exclusive)));
                "AveragePool"
            } else {
                if let Some(d) = ints_of(attrs, "dilations") {
                    at.push(a_ints("dilations", spatial(&d)));
                }
                "MaxPool"
            }
        }
        "MatMulV2" | "GEMM" => {
            let t1 = bool_of(attrs, "transpose_x1");
            let t2 = bool_of(attrs, "transpose_x2");
            let alpha = float_of(attrs, "alpha");
            let beta = float_of(attrs, "beta");
            if !t1 && !t2 && alpha.is_none() && beta.is_none() && input_ports.len() == 2 {
                "MatMul"
            } else {
                at.push(a_int("transA", i64::from(t1)));
                at.push(a_int("transB", i64::from(t2)));
                if let Some(x) = alpha {
                    at.push(a_float("alpha", x));
                }
                if let Some(x) = beta {
                    at.push(a_float("beta", x));
                }
                "Gemm"
            }
        }
        "BatchMatMulV2" | "BatchMatMul" => {
            if bool_of(attrs, "adj_x1") || bool_of(attrs, "adj_x2") {
                return Ok(None);
            }
            "MatMul"
        }
        "SoftmaxV2" | "LogSoftmaxV2" => {
            let axes = ints_of(attrs, "axes").unwrap_or_else(|| vec![-1]);
            if axes.len() != 1 {
                return Ok(None);
            }
            if opset < 13 && axes[0] != -1 {
                return Ok(None);
            }
            at.push(a_int("axis", axes[0]));
            if ge_type == "SoftmaxV2" {
                "Softmax"
            } else {
                "LogSoftmax"
            }
        }
        "BatchNorm" => {
            at.push(a_float(
                "epsilon",
                float_of(attrs, "epsilon").unwrap_or(1e-5),
            ));
            if let Some(m) = float_of(attrs, "momentum") {
                at.push(a_float("momentum", m));
            }
            if opset >= 14 && bool_of(attrs, "is_training") {
                at.push(a_int("training_mode", 1));
            }
            "BatchNormalization"
        }
        "Mod" | "FloorMod" => {
            at.push(a_int("fmod", i64::from(ge_type == "Mod")));
            "Mod"
        }
        "LayerNorm" | "LayerNormV3" => {
            at.push(a_int(
                "axis",
                int_of(attrs, "begin_norm_axis").unwrap_or(-1),
            ));
            at.push(a_float(
                "epsilon",
                float_of(attrs, "epsilon").unwrap_or(1e-5),
            ));
            if let Some(st) = int_of(attrs, "stash_type") {
                at.push(a_int("stash_type", st));
            }
            "LayerNormalization"
        }
        "Cast" => {
            let dt = int_of(attrs, "dst_type")
                .and_then(DataType::from_ge)
                .and_then(onnx_dtype)
                .ok_or_else(|| OnnxError::Unsupported("Cast without a valid dst_type".into()))?;
            at.push(a_int("to", i64::from(dt)));
            if let Some(s) = int_of(attrs, "saturate") {
                at.push(a_int("saturate", s));
            }
            "Cast"
        }
        "Shape" => {
            for key in ["start", "end"] {
                if let Some(v) = int_of(attrs, key) {
                    at.push(a_int(key, v));
                }
            }
            "Shape"
        }
        "ConcatV2D" | "ConcatD" => {
            at.push(a_int("axis", int_of(attrs, "concat_dim").unwrap_or(0)));
            "Concat"
        }
        "SplitD" | "SplitVD" => {
            at.push(a_int("axis", int_of(attrs, "split_dim").unwrap_or(0)));
            if let Some(sizes) = ints_of(attrs, "size_splits") {
                if opset >= 13 {
                    em.consts.push(ints_const(&sizes));
                    em.inputs.push(Source::Const(0));
                } else {
                    at.push(a_ints("split", sizes));
                }
            }
            "Split"
        }
        "GatherV2D" => {
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(0)));
            "Gather"
        }
        "TransposeD" => {
            at.push(a_ints("perm", ints_of(attrs, "perm").unwrap_or_default()));
            "Transpose"
        }
        "Squeeze" | "Unsqueeze" => {
            let key = if ge_type == "Squeeze" { "axis" } else { "axes" };
            let axes = ints_of(attrs, key).unwrap_or_default();
            if opset >= 13 {
                if !axes.is_empty() || ge_type == "Unsqueeze" {
                    em.consts.push(ints_const(&axes));
                    em.inputs.push(Source::Const(0));
                }
            } else if !axes.is_empty() {
                at.push(a_ints("axes", axes));
            }
            ge_type
        }
        "SqueezeV3" | "UnsqueezeV3" => {
            if opset < 13 {
                return Ok(None);
            }
            &ge_type[..ge_type.len() - 2]
        }
        "ReduceSumD" | "ReduceMeanD" | "ReduceMaxD" | "ReduceMinD" | "ReduceProdD"
        | "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
            let base = ge_type.trim_end_matches('D');
            at.push(a_int(
                "keepdims",
                i64::from(int_of(attrs, "keep_dims").is_none_or(|v| v != 0)),
            ));
            if bool_of(attrs, "noop_with_empty_axes") {
                at.push(a_int("noop_with_empty_axes", 1));
            }
            let axes_as_input = if base == "ReduceSum" {
                opset >= 13
            } else {
                opset >= 18
            };
            if let Some(axes) = ints_of(attrs, "axes") {
                if axes_as_input {
                    if !axes.is_empty() {
                        em.consts.push(ints_const(&axes));
                        em.inputs.push(Source::Const(0));
                    }
                } else if !axes.is_empty() {
                    at.push(a_ints("axes", axes));
                }
            } else if !axes_as_input && input_ports.len() > 1 {
                return Ok(None);
            }
            base
        }
        "Fill" => "ConstantOfShape",
        "Const" | "Constant" => {
            let Some(AttrValue::Tensor(t)) = attrs.get("value") else {
                return Err(OnnxError::Unsupported(
                    "Const without a tensor value".into(),
                ));
            };
            em.attrs.push(pb::AttributeProto {
                name: "value".into(),
                r#type: pb::attribute_proto::AttributeType::Tensor as i32,
                t: Some(Box::new(crate::types::tensor_to_proto("", t)?)),
                ..Default::default()
            });
            em.inputs.clear();
            "Constant"
        }
        "TopKV2" => {
            at.push(a_int("axis", int_of(attrs, "dim").unwrap_or(-1)));
            at.push(a_int("largest", int_of(attrs, "largest").unwrap_or(1)));
            at.push(a_int("sorted", int_of(attrs, "sorted").unwrap_or(1)));
            "TopK"
        }
        "Reshape" => {
            if let Some(z) = int_of(attrs, "allowzero") {
                at.push(a_int("allowzero", z));
            }
            "Reshape"
        }
        "Flatten" => {
            at.push(a_int("axis", int_of(attrs, "axis").unwrap_or(1)));
            "Flatten"
        }
        "PadV3" => {
            at.push(a_str("mode", str_of(attrs, "mode").unwrap_or("constant")));
            "Pad"
        }
        "If" | "Loop" => ge_type,
        "AddN" | "Einsum" => {
            if let Some(eq) = str_of(attrs, "equation") {
                at.push(a_str("equation", eq));
            }
            if ge_type == "AddN" {
                "Sum"
            } else {
                "Einsum"
            }
        }
        _ => {
            let Some(e) = TABLE.iter().find(|e| e.ge == ge_type) else {
                return Ok(None);
            };
            for (k, v) in attrs {
                if k.starts_with('_') {
                    continue;
                }
                let name = e
                    .renames
                    .iter()
                    .find(|(_, g)| *g == k)
                    .map_or(k, |(o, _)| o);
                if let Some(a) = attr_to_proto(name, v)? {
                    at.push(a);
                }
            }
            for &(ge, ge_attr, onnx_attr, ge_default, _) in DEFAULTS_DIFFER {
                if ge == ge_type && attrs.get(ge_attr).is_none() {
                    at.push(a_float(onnx_attr, ge_default));
                }
            }
            e.onnx
        }
    };
    em.op_type = onnx.to_string();
    // Optional GE inputs map to their ONNX slot; an absent optional input in the middle becomes "".
    if let Some(e) = TABLE.iter().find(|e| e.onnx == onnx) {
        if e.inputs.iter().any(|s| s.starts_with('?')) && !e.inputs.iter().any(|s| s.ends_with('*'))
        {
            let mut slots = Vec::new();
            for s in e.inputs {
                let bare = s.trim_start_matches('?');
                match input_ports.iter().position(|p| *p == bare) {
                    Some(k) => slots.push(Source::Port(k)),
                    None => slots.push(Source::Absent),
                }
            }
            while slots.last() == Some(&Source::Absent) {
                slots.pop();
            }
            let extra: Vec<Source> = em
                .inputs
                .iter()
                .copied()
                .filter(|s| matches!(s, Source::Const(_)))
                .collect();
            if slots.len() + extra.len() >= all_ports.len()
                && ge_type != "SqueezeV3"
                && ge_type != "UnsqueezeV3"
            {
                em.inputs = slots;
                em.inputs.extend(extra);
            }
        }
    }
    Ok(Some(em))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_round_trip() {
        let ge = ge_pads(&[1, 2, 3, 4], 2);
        assert_eq!(ge, vec![1, 3, 2, 4]);
        assert_eq!(onnx_pads(&ge), vec![1, 2, 3, 4]);
    }

    #[test]
    fn layout_handles_optional_and_dynamic() {
        let l = layout_inputs(&["x", "?axes", "?steps"], 2);
        assert_eq!(
            l,
            vec![("x".into(), Some(0), false), ("axes".into(), Some(1), true)]
        );
        let d = layout_inputs(&["x*"], 3);
        assert_eq!(
            d.iter().map(|p| &*p.0).collect::<Vec<_>>(),
            ["x0", "x1", "x2"]
        );
        assert_eq!(
            layout_outputs(&["y", "mean", "variance"], 1),
            vec!["y".to_string()]
        );
    }

    #[test]
    fn table_has_unique_onnx_types() {
        for (i, e) in TABLE.iter().enumerate() {
            assert!(
                TABLE[..i].iter().all(|o| o.onnx != e.onnx),
                "{} twice",
                e.onnx
            );
        }
    }
}
