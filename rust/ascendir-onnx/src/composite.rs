//! GE ops with no single ONNX op at the export's opset, written as the ONNX nodes they mean.
//!
//! The frontends produce GE forms that ONNX spells with several ops: `NotEqual` (`Not` of
//! `Equal`), `SelectV2` (`Where`, which broadcasts), `Rsqrt` (`Reciprocal` of `Sqrt`), `Swish` (`x · Sigmoid(scale · x)`), `Gelu`
//! before opset 20 (its erf or tanh formula), and `BatchMatMulV2` with `adj_x1` / `adj_x2` or
//! a bias (a `Transpose` of the last two dims, `MatMul`, `Add`), and `ReduceAnyD` / `ReduceAllD`
//! (ONNX reduces no bool before opset 20: `Cast` to int32, `ReduceMax` / `ReduceMin`, `Cast`
//! back). [`expand`] emits the leading
//! nodes into the graph (constants as initializers) and returns the last one, which carries
//! the GE node's name and output.

use ascendir_ir::{AttrMap, AttrValue, DataType, Format, Tensor, TensorDesc};
use bytes::Bytes;

use crate::error::{OnnxError, OnnxResult};
use crate::pb;
use crate::types::tensor_to_proto;

/// What an expansion needs to know of the GE node.
pub(crate) struct Node<'a> {
    pub name: &'a str,
    pub ty: &'a str,
    pub attrs: &'a AttrMap,
    /// ONNX names of the inputs (`""` for an absent one).
    pub inputs: Vec<String>,
    /// Each input's rank (`None` when unknown) and dtype.
    pub ranks: Vec<Option<usize>>,
    pub dtype: DataType,
    /// The export's opset.
    pub opset: i64,
}

/// Whether `n` has to be written as several ONNX nodes.
pub(crate) fn needed(ty: &str, attrs: &AttrMap, n_inputs: usize, opset: i64) -> bool {
    let flag = |k: &str| matches!(attrs.get(k), Some(AttrValue::Bool(true)));
    match ty {
        "NotEqual" | "Rsqrt" | "SelectV2" | "ReduceAnyD" | "ReduceAllD" => true,
        "Swish" => opset < 24,
        "Gelu" => opset < 20,
        "BatchMatMulV2" | "BatchMatMul" => flag("adj_x1") || flag("adj_x2") || n_inputs > 2,
        _ => false,
    }
}

struct Out<'g> {
    gp: &'g mut pb::GraphProto,
    used: &'g mut dyn FnMut(String) -> String,
    base: String,
    k: usize,
}

impl Out<'_> {
    fn value(&mut self, tag: &str) -> String {
        self.k += 1;
        (self.used)(format!("{}_{tag}{}", self.base, self.k))
    }

    fn node(&mut self, op: &str, inputs: &[&str], attrs: Vec<pb::AttributeProto>) -> String {
        let out = self.value(&op.to_ascii_lowercase());
        self.gp.node.push(pb::NodeProto {
            name: Bytes::from(out.clone()),
            op_type: Bytes::from(op.to_string()),
            input: inputs.iter().map(|s| Bytes::from(s.to_string())).collect(),
            output: vec![Bytes::from(out.clone())],
            attribute: attrs,
            ..Default::default()
        });
        out
    }

    fn initializer(&mut self, t: &Tensor) -> OnnxResult<String> {
        let name = self.value("const");
        self.gp.initializer.push(tensor_to_proto(&name, t)?);
        Ok(name)
    }

    fn scalar(&mut self, v: f64, dt: DataType) -> OnnxResult<String> {
        let bytes = match dt {
            DataType::FLOAT => (v as f32).to_le_bytes().to_vec(),
            DataType::DOUBLE => v.to_le_bytes().to_vec(),
            DataType::FLOAT16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
            DataType::BF16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
            _ => {
                return Err(OnnxError::Unsupported(format!(
                    "no {} constant for the ONNX form of '{}'",
                    dt.name(),
                    self.base
                )))
            }
        };
        let t = Tensor::new(TensorDesc::new(&[], dt, Format::ND), Bytes::from(bytes));
        self.initializer(&t)
    }
}

fn int_attr(name: &str, v: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Int as i32,
        i: v,
        ..Default::default()
    }
}

/// `ReduceAnyD` / `ReduceAllD`: the bool input as int32, reduced by max / min, back to bool.
fn bool_reduce(
    o: &mut Out<'_>,
    n: &Node<'_>,
    x: &str,
) -> OnnxResult<(String, Vec<String>, Vec<pb::AttributeProto>)> {
    let int = o.node(
        "Cast",
        &[x],
        vec![int_attr("to", i64::from(crate::types::onnx_dt::INT32))],
    );
    let keep = matches!(n.attrs.get("keep_dims"), Some(AttrValue::Bool(true)));
    let mut attrs = vec![int_attr("keepdims", i64::from(keep))];
    let mut inputs = vec![int];
    match n.attrs.get("axes") {
        Some(AttrValue::ListInt(axes)) if !axes.is_empty() => {
            if n.opset >= 18 {
                let desc = TensorDesc::new(&[axes.len() as i64], DataType::INT64, Format::ND);
                let t = Tensor::new(desc, crate::types::i64_payload(axes));
                inputs.push(o.initializer(&t)?);
            } else {
                attrs.push(pb::AttributeProto {
                    name: "axes".into(),
                    r#type: pb::attribute_proto::AttributeType::Ints as i32,
                    ints: axes.clone(),
                    ..Default::default()
                });
            }
        }
        _ => {}
    }
    let op = if n.ty == "ReduceAnyD" {
        "ReduceMax"
    } else {
        "ReduceMin"
    };
    let r = o.node(
        op,
        &inputs.iter().map(String::as_str).collect::<Vec<_>>(),
        attrs,
    );
    let to = int_attr("to", i64::from(crate::types::onnx_dt::BOOL));
    Ok(("Cast".into(), vec![r], vec![to]))
}

fn perm_last_two(rank: usize) -> pb::AttributeProto {
    let mut p: Vec<i64> = (0..rank as i64).collect();
    p.swap(rank - 2, rank - 1);
    pb::AttributeProto {
        name: "perm".into(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints: p,
        ..Default::default()
    }
}

/// Emit the leading nodes of `n`'s ONNX form into `gp`; the last node's `(op type, inputs,
/// attributes)`, for the caller to name after the GE node and give its outputs.
pub(crate) fn expand(
    n: &Node<'_>,
    gp: &mut pb::GraphProto,
    used: &mut dyn FnMut(String) -> String,
) -> OnnxResult<(String, Vec<String>, Vec<pb::AttributeProto>)> {
    let mut o = Out {
        gp,
        used,
        base: n.name.to_string(),
        k: 0,
    };
    let x = n.inputs.first().cloned().unwrap_or_default();
    let dt = n.dtype;
    let f = |k: &str| match n.attrs.get(k) {
        Some(AttrValue::Float(v)) => Some(f64::from(*v)),
        _ => None,
    };
    Ok(match n.ty {
        "NotEqual" => {
            let eq = o.node("Equal", &[&x, &n.inputs[1]], Vec::new());
            ("Not".into(), vec![eq], Vec::new())
        }
        // SelectV2 is Select with broadcasting, which ONNX's Where has.
        "SelectV2" => ("Where".into(), n.inputs.clone(), Vec::new()),
        "ReduceAnyD" | "ReduceAllD" => bool_reduce(&mut o, n, &x)?,
        "Rsqrt" => {
            let s = o.node("Sqrt", &[&x], Vec::new());
            ("Reciprocal".into(), vec![s], Vec::new())
        }
        "Swish" => {
            let scale = f("scale").unwrap_or(1.0);
            let arg = if scale == 1.0 {
                x.clone()
            } else {
                let c = o.scalar(scale, dt)?;
                o.node("Mul", &[&x, &c], Vec::new())
            };
            let s = o.node("Sigmoid", &[&arg], Vec::new());
            ("Mul".into(), vec![x, s], Vec::new())
        }
        "Gelu" => {
            let exact =
                matches!(n.attrs.get("approximate"), Some(AttrValue::String(s)) if s == "none");
            let inner = if exact {
                let c = o.scalar(std::f64::consts::FRAC_1_SQRT_2, dt)?;
                let scaled = o.node("Mul", &[&x, &c], Vec::new());
                o.node("Erf", &[&scaled], Vec::new())
            } else {
                // tanh(√(2/π) · (x + 0.044715 · x³))
                let three = o.scalar(3.0, dt)?;
                let cube = o.node("Pow", &[&x, &three], Vec::new());
                let k = o.scalar(0.044_715, dt)?;
                let kc = o.node("Mul", &[&cube, &k], Vec::new());
                let sum = o.node("Add", &[&x, &kc], Vec::new());
                let s = o.scalar((2.0 / std::f64::consts::PI).sqrt(), dt)?;
                let arg = o.node("Mul", &[&sum, &s], Vec::new());
                o.node("Tanh", &[&arg], Vec::new())
            };
            let one = o.scalar(1.0, dt)?;
            let plus = o.node("Add", &[&inner, &one], Vec::new());
            let xp = o.node("Mul", &[&x, &plus], Vec::new());
            let half = o.scalar(0.5, dt)?;
            ("Mul".into(), vec![xp, half], Vec::new())
        }
        "BatchMatMulV2" | "BatchMatMul" => {
            let flag = |k: &str| matches!(n.attrs.get(k), Some(AttrValue::Bool(true)));
            let mut ab = Vec::with_capacity(2);
            for (k, adj) in [(0usize, "adj_x1"), (1, "adj_x2")] {
                let name = n.inputs.get(k).cloned().unwrap_or_default();
                if !flag(adj) {
                    ab.push(name);
                    continue;
                }
                let Some(rank) = n.ranks.get(k).copied().flatten().filter(|&r| r >= 2) else {
                    return Err(OnnxError::Unsupported(format!(
                        "{} '{}' transposes an input of unknown rank",
                        n.ty, n.name
                    )));
                };
                ab.push(o.node("Transpose", &[&name], vec![perm_last_two(rank)]));
            }
            let bias = n.inputs.get(2).filter(|b| !b.is_empty());
            match bias {
                None => ("MatMul".into(), ab, Vec::new()),
                Some(b) => {
                    let mm = o.node("MatMul", &[&ab[0], &ab[1]], Vec::new());
                    ("Add".into(), vec![mm, b.clone()], Vec::new())
                }
            }
        }
        other => {
            return Err(OnnxError::Unsupported(format!(
                "op '{}' of type {other} has no ONNX form",
                n.name
            )))
        }
    })
}
