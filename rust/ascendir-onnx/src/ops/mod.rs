//! The ONNX ↔ GE operator mapping: op types, port names and attributes.
//!
//! Most operators map through the declarative [`TABLE`] (`table`: one GE type, GE port names in
//! ONNX input/output order, attribute renames). Operators whose attributes change shape or meaning
//! have a handler on each side, grouped by family, each module holding both directions: `nn`
//! (convolution, pooling), `matmul`, `norm` (softmax, batch and layer norm), `reduce`, `layout`
//! (shapes, concat, split, gather, transpose, squeeze, pad, reshape) and `math` (mod, cast, sum,
//! einsum, max/min, constants, TopK) and `extra` (bit shifts, losses, RMS norm, grid sampling,
//! quantization) and `convt` (transposed convolution); `legacy` imports the attribute forms of
//! old opsets' Clip, Slice and Pad (their export is `export_legacy`). `attrs` converts attribute
//! values both ways.
//! Port lists use `name` for a required port, `?name` for an optional one and `name*` for a
//! dynamic group taking every remaining ONNX input or output (`name0, name1, ...`).

use std::borrow::Cow;

use ascendir_ir::instantiate::PortName;
use ascendir_ir::registry::{self, OpProto};
use ascendir_ir::{AttrMap, AttrValue, Side, Tensor};

use crate::error::OnnxResult;
use crate::pb;

mod attrs;
mod convt;
mod extra;
mod layout;
mod legacy;
mod math;
mod matmul;
mod nn;
mod norm;
mod reduce;
mod table;

use attrs::{a_float, generic_attrs};
pub use attrs::{attr_to_proto, attr_value, constant_value};
#[cfg(test)]
pub(crate) use legacy::float_scalar as legacy_scalar;
use table::DEFAULTS_DIFFER;
pub use table::{entry, Entry, TABLE};

/// What one family's handler made of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handled {
    /// Mapped: the handler filled the GE type, ports and attributes.
    Mapped,
    /// The family's op, in a form that has no mapping (the node stays `onnx::<OpType>`).
    Unmapped,
    /// Not an op of this family.
    NotMine,
}

/// What one family's export handler made of a GE op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exported<'a> {
    /// The ONNX op type to emit (attributes and inputs filled in).
    As(&'a str),
    /// The family's op, in a form ONNX cannot express.
    Unmapped,
    /// Not an op of this family.
    NotMine,
}

/// One family's import handler: the GE form of an ONNX node.
type ImportFn = fn(&Entry, &pb::NodeProto, i64, &dyn InputInfo, &mut Mapped) -> OnnxResult<Handled>;

/// One family's export handler: the ONNX form of a GE op at an opset.
type ExportFn =
    for<'a> fn(&'a str, &AttrMap, &[&str], i64, &mut Emitted) -> OnnxResult<Exported<'a>>;

/// The op families, each holding both directions of its mapping; ops of no family map
/// through the table alone.
const IMPORTS: [ImportFn; 9] = [
    legacy::import,
    nn::import,
    matmul::import,
    norm::import,
    reduce::import,
    layout::import,
    math::import,
    extra::import,
    convt::import,
];

/// The export side of [`IMPORTS`]' families.
const EXPORTS: [ExportFn; 8] = [
    nn::export,
    matmul::export,
    norm::export,
    reduce::export,
    layout::export,
    math::export,
    extra::export,
    convt::export,
];

/// Look-ups the mapping needs about a node's inputs.
pub trait InputInfo {
    /// The integer values of a constant input (initializer or `Constant` output), if known.
    fn const_ints(&self, name: &str) -> Option<Vec<i64>>;
    /// The dims of an input (-1 where unknown), if its rank is known.
    fn dims(&self, name: &str) -> Option<Vec<i64>>;
    /// The rank of an input, if its type is known.
    fn rank(&self, name: &str) -> Option<usize> {
        self.dims(name).map(|d| d.len())
    }
    /// The GE data type of an input, if its type is known.
    fn dtype(&self, name: &str) -> Option<ascendir_ir::DataType>;
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
    pub aux: Vec<(Cow<'static, str>, Tensor)>,
    /// A 1-D window op run as its 2-D GE op: these ONNX inputs get a unit H axis (an
    /// `Unsqueeze` at axis 2 in front of the port) and output 0 loses it (a `Squeeze` after
    /// it). Empty for every other node.
    pub unit_h: Vec<usize>,
}

impl Mapped {
    /// Take the port names from the GE type's registered prototype, where it has one that
    /// fits the node's port counts: GE's names are the registry's. The table's names stay for
    /// unregistered types and for nodes whose counts the prototype does not take.
    pub fn name_ports(&mut self, proto: &OpProto) {
        let n_in = self.inputs.len() + self.aux.len();
        let (inputs, aux, outputs) = (&mut self.inputs, &mut self.aux, &mut self.outputs);
        // The table's names mostly agree: the prototype's names are compared unbuilt, and a
        // name is copied only where it differs.
        let rename = |port: &mut Cow<'static, str>, n: PortName<'_>| {
            if !n.is(port) {
                *port = Cow::Owned(n.to_string());
            }
        };
        let (mut k_in, mut k_out) = (0usize, 0usize);
        proto.visit_port_names(n_in, outputs.len(), |side, n| match side {
            Side::Input => {
                if let Some((port, _, _)) = inputs.get_mut(k_in) {
                    rename(port, n);
                } else if let Some((port, _)) = aux.get_mut(k_in - inputs.len()) {
                    rename(port, n);
                }
                k_in += 1;
            }
            Side::Output => {
                if let Some(port) = outputs.get_mut(k_out) {
                    rename(port, n);
                }
                k_out += 1;
            }
        });
    }
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
        unit_h: Vec::new(),
    };
    let mut handled = Handled::NotMine;
    for import in IMPORTS {
        handled = import(e, node, opset, info, &mut m)?;
        if handled != Handled::NotMine {
            break;
        }
    }
    let a = &mut m.attrs;
    match handled {
        Handled::Mapped => {}
        Handled::Unmapped => return Ok(None),
        // Control flow keeps its attributes out: the builder turns its graphs into subgraphs.
        Handled::NotMine if matches!(e.onnx, "If" | "Loop") => {}
        Handled::NotMine => generic_attrs(node, e, &[], a)?,
    }
    // Where the two sides' defaults differ, an absent attribute is written out explicitly.
    for &(ge, ge_attr, onnx_attr, _, onnx_default) in DEFAULTS_DIFFER {
        if e.ge == ge && !node.attribute.iter().any(|x| x.name == onnx_attr) {
            a.insert(ge_attr, AttrValue::Float(onnx_default));
        }
    }
    if let Some(proto) = registry::lookup(&m.ge_type) {
        m.name_ports(&proto);
    }
    Ok(Some(m))
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
    let mut exported = Exported::NotMine;
    for export in EXPORTS {
        exported = export(ge_type, attrs, input_ports, opset, &mut em)?;
        if exported != Exported::NotMine {
            break;
        }
    }
    let at = &mut em.attrs;
    let onnx = match exported {
        Exported::As(onnx) => onnx,
        Exported::Unmapped => return Ok(None),
        Exported::NotMine if matches!(ge_type, "If" | "Loop") => ge_type,
        Exported::NotMine => {
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
    use ascendir_ir::IrInputType;

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

    fn proto(ty: &str, inputs: &[(&str, IrInputType)], outputs: &[&str]) -> OpProto {
        use ascendir_ir::registry::{InputSpec, OutputSpec};
        let mut p = OpProto::new(ty);
        p.inputs = inputs
            .iter()
            .map(|&(n, kind)| InputSpec {
                name: n.into(),
                kind,
                type_var: None,
            })
            .collect();
        p.outputs = outputs
            .iter()
            .map(|&n| OutputSpec {
                name: n.into(),
                kind: ascendir_ir::IrOutputType::Required,
                type_var: None,
            })
            .collect();
        p
    }

    fn mapped(ge: &str, ins: &[&'static str], n_in: usize, outs: &[&'static str]) -> Mapped {
        Mapped {
            ge_type: ge.into(),
            inputs: layout_inputs(ins, n_in),
            outputs: layout_outputs(outs, outs.len()),
            attrs: AttrMap::new(),
            aux: Vec::new(),
            unit_h: Vec::new(),
        }
    }

    #[test]
    fn registered_prototypes_name_the_ports() {
        use IrInputType::{Optional, Required};
        let p = proto(
            "Conv2D",
            &[
                ("x", Required),
                ("filter", Required),
                ("bias", Optional),
                ("offset_w", Optional),
            ],
            &["y"],
        );
        // Names from the prototype, the ONNX inputs feeding them and the optional flags kept.
        let mut m = mapped("Conv2D", &["data", "w", "?b"], 3, &["out"]);
        m.name_ports(&p);
        assert_eq!(
            m.inputs,
            vec![
                ("x".into(), Some(0), false),
                ("filter".into(), Some(1), false),
                ("bias".into(), Some(2), true)
            ]
        );
        assert_eq!(m.outputs, vec!["y".to_string()]);
        // Counts the prototype does not take keep the table's names.
        let mut m = mapped("Conv2D", &["x", "w", "?b", "?c", "?d"], 5, &["y"]);
        m.name_ports(&p);
        assert_eq!(m.inputs[1].0, "w");
        // Auxiliary constant inputs follow the node's inputs.
        let fill = proto("Fill", &[("dims", Required), ("value", Required)], &["y"]);
        let mut m = mapped("Fill", &["shape"], 1, &["y"]);
        let zero = Tensor::new(
            ascendir_ir::TensorDesc::new(
                &[1],
                ascendir_ir::DataType::FLOAT,
                ascendir_ir::Format::ND,
            ),
            bytes::Bytes::from_static(&[0, 0, 0, 0]),
        );
        m.aux.push(("v".into(), zero));
        m.name_ports(&fill);
        assert_eq!((&*m.inputs[0].0, &*m.aux[0].0), ("dims", "value"));
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
