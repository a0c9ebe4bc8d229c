//! The graph builder: FX nodes in order, values by FX node, helpers for the op mapping.
//!
//! A value is a GE out anchor, a tuple of them (multi-output ops), a SymInt (kept symbolic
//! and only turned into shape arithmetic when an op needs it as a tensor), or a deferred 2-D
//! transpose (folded into a matmul's `transpose_x*` attribute, otherwise materialized).

use std::collections::BTreeMap;
use std::sync::Arc;

use ascendir_ir::{
    AttrEntry, AttrMap, AttrValue, DataType, Format, Graph, InAnchor, NodeId, OpDesc, OutAnchor,
    Side, Sym, Tensor, TensorDesc,
};
use bytes::Bytes;
use rustc_hash::FxHashMap;

use crate::program::{desc_arc, Arg, FxNode, FxProgram, OutMeta};
use crate::{TorchError, TorchResult};

/// A GE out anchor: (node, output index).
pub type Out = (NodeId, usize);

/// What an import found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// FX nodes converted (all kinds).
    pub fx_nodes: usize,
    /// `call_function` nodes.
    pub fx_calls: usize,
    /// GE nodes of the graph (NetOutput included).
    pub ge_nodes: usize,
    /// User inputs (`Data` nodes).
    pub inputs: usize,
    /// Parameters, buffers and constants (`Const` nodes from placeholders).
    pub params: usize,
    /// Unmapped ops by GE type (`aten::<op>`), with counts.
    pub unknown_ops: BTreeMap<String, usize>,
    /// The schema of each unmapped op type.
    pub unknown_schemas: BTreeMap<String, String>,
}

/// An integer operand of SymInt arithmetic.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SymArg {
    /// A literal.
    Int(i64),
    /// The SymInt value of an FX node.
    Node(usize),
}

/// How a SymInt is computed.
#[derive(Clone, Debug)]
pub(crate) enum SymDef {
    /// A known value.
    Int(i64),
    /// `x.size(dim)`.
    Size(Out, i64),
    /// A binary op (`Add`, `Sub`, `Mul`, `FloorDiv`) of two operands.
    Bin(&'static str, SymArg, SymArg),
}

/// The value of an FX node.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// A tensor.
    T(Out),
    /// Several tensors (`None` where an output has no GE counterpart).
    Tuple(Vec<Option<Out>>),
    /// A SymInt.
    Sym(SymDef),
    /// The 2-D transpose of a tensor, not built yet.
    Trans(Out),
    /// No value (asserts).
    Nothing,
}

/// The conversion state.
pub(crate) struct Ctx<'p> {
    pub g: Graph,
    p: &'p FxProgram,
    cur_node: Option<std::rc::Rc<FxNode<'p>>>,
    vals: Vec<Option<Value>>,
    sym_out: Vec<Option<Out>>,
    trans_out: Vec<Option<Out>>,
    pub report: ImportReport,
    pub cur: usize,
    helper_seq: usize,
    /// Metadata attributes, one shared entry per (attribute, program string): keyed by the
    /// attribute name's and the string's addresses (the program's strings are deduplicated).
    shared: FxHashMap<(usize, usize), Arc<AttrEntry>>,
    /// The `_ascendir_torch_target` entries by target (target strings are not deduplicated).
    targets: FxHashMap<&'p str, Arc<AttrEntry>>,
    /// GE's port names (the registered prototype's, interned) by (type, input count, output
    /// count): the registry is asked once per conversion and shape of node, not per node.
    ports: FxHashMap<(Sym, usize, usize), PortSyms>,
}

/// The interned input and output port names a prototype gives (`None`: unregistered type, or
/// counts it does not take; the frontend's own names are used).
type PortSyms = Option<std::rc::Rc<(Vec<Sym>, Vec<Sym>)>>;

fn attr_str(s: &str) -> AttrValue {
    AttrValue::String(s.to_string())
}

impl<'p> Ctx<'p> {
    /// The state of converting `p`, before its first node.
    pub fn new(p: &'p FxProgram) -> Self {
        let n = p.len();
        Ctx {
            g: Graph::with_capacity(if p.name.is_empty() { "main" } else { &p.name }, n + 16),
            p,
            cur_node: None,
            vals: vec![None; n],
            sym_out: vec![None; n],
            trans_out: vec![None; n],
            report: ImportReport {
                fx_nodes: n,
                ..ImportReport::default()
            },
            cur: 0,
            helper_seq: 0,
            shared: FxHashMap::default(),
            targets: FxHashMap::default(),
            ports: FxHashMap::default(),
        }
    }

    /// Make FX node `i` (`node`) the one being converted.
    pub fn begin_node(&mut self, i: usize, node: std::rc::Rc<FxNode<'p>>) {
        self.cur = i;
        self.cur_node = Some(node);
    }

    /// The name of FX node `n`.
    pub fn name(&self, n: usize) -> &'p str {
        self.p.names.get(n).map_or("?", String::as_str)
    }

    /// The name of the FX node being converted.
    pub fn cur_name(&self) -> &'p str {
        self.name(self.cur)
    }

    /// An error about the current node.
    pub fn unsupported(&self, message: impl Into<String>) -> TorchError {
        TorchError::Unsupported {
            node: self.cur_name().to_string(),
            target: self.p.targets.get(self.cur).cloned().unwrap_or_default(),
            message: message.into(),
        }
    }

    fn value_of(&self, n: usize) -> TorchResult<&Value> {
        self.vals.get(n).and_then(Option::as_ref).ok_or_else(|| {
            self.unsupported(format!(
                "reads FX node '{}', which has no value",
                self.name(n)
            ))
        })
    }

    /// The metadata of FX node `n`'s first value.
    pub fn meta_of(&self, arg: &Arg<'_>) -> Option<OutMeta<'p>> {
        match arg {
            Arg::Node(n) => self.p.out0(*n),
            _ => None,
        }
    }

    /// Whether `arg` is a tensor value.
    pub fn is_tensor(&self, arg: &Arg<'_>) -> bool {
        match arg {
            Arg::Node(n) => matches!(
                self.vals.get(*n).and_then(Option::as_ref),
                Some(Value::T(_) | Value::Trans(_))
            ),
            _ => false,
        }
    }

    /// The tensor behind a transpose-deferred value, if `arg` is one.
    pub fn deferred_transpose(&self, arg: &Arg<'_>) -> Option<Out> {
        match arg {
            Arg::Node(n) => match self.vals.get(*n).and_then(Option::as_ref) {
                Some(Value::Trans(o)) => Some(*o),
                _ => None,
            },
            _ => None,
        }
    }

    /// The tensor of `arg` (an FX tensor value; deferred transposes are built here).
    pub fn tensor(&mut self, arg: &Arg<'_>) -> TorchResult<Out> {
        let Arg::Node(n) = arg else {
            return Err(self.unsupported(format!("expected a tensor argument, got {arg:?}")));
        };
        let n = *n;
        match self.value_of(n)?.clone() {
            Value::T(o) => Ok(o),
            Value::Trans(src) => {
                if let Some(o) = self.trans_out[n] {
                    return Ok(o);
                }
                let desc = self.p.out0(n).map(|m| desc_arc(&m)).unwrap_or_default();
                let name = self.name(n);
                let mut attrs = AttrMap::new();
                attrs.insert("perm", AttrValue::ListInt(vec![1, 0]));
                let id =
                    self.add_named(name, n, "TransposeD", &[("x", src)], &[("y", desc)], attrs)?;
                self.trans_out[n] = Some((id, 0));
                Ok((id, 0))
            }
            Value::Sym(_) => self.sym_tensor(SymArg::Node(n)),
            Value::Tuple(_) | Value::Nothing => Err(self.unsupported(format!(
                "uses the tuple value of '{}' as a tensor",
                self.name(n)
            ))),
        }
    }

    /// The SymInt definition of `arg` (`Int` literals included).
    pub fn sym_of(&self, arg: &Arg<'_>) -> Option<SymArg> {
        match arg {
            Arg::Int(v) => Some(SymArg::Int(*v)),
            Arg::Bool(b) => Some(SymArg::Int(i64::from(*b))),
            Arg::Node(n) => match self.vals.get(*n).and_then(Option::as_ref)? {
                Value::Sym(SymDef::Int(v)) => Some(SymArg::Int(*v)),
                Value::Sym(_) => Some(SymArg::Node(*n)),
                _ => None,
            },
            _ => None,
        }
    }

    /// A known int of `arg` (a literal or a SymInt with a static value).
    pub fn int_of(&self, arg: &Arg<'_>) -> Option<i64> {
        match self.sym_of(arg)? {
            SymArg::Int(v) => Some(v),
            SymArg::Node(_) => None,
        }
    }

    /// A one-element INT64 tensor holding a SymInt (shape arithmetic, built once).
    pub fn sym_tensor(&mut self, s: SymArg) -> TorchResult<Out> {
        // Resolve iteratively: walk down to operands not built yet, build bottom-up.
        let mut stack: Vec<(SymArg, bool)> = vec![(s, false)];
        let mut depth_guard = 0usize;
        while let Some((cur, expanded)) = stack.pop() {
            depth_guard += 1;
            if depth_guard > 1 << 16 {
                return Err(self.unsupported("SymInt expression too deep"));
            }
            let SymArg::Node(n) = cur else { continue };
            if self.sym_out[n].is_some() {
                continue;
            }
            let def = match self.value_of(n)? {
                Value::Sym(d) => d.clone(),
                _ => return Err(self.unsupported("expected a SymInt")),
            };
            if let SymDef::Bin(_, a, b) = &def {
                if !expanded {
                    stack.push((cur, true));
                    stack.push((*a, false));
                    stack.push((*b, false));
                    continue;
                }
            }
            let name = format!("{}/sym", self.name(n));
            let out = match def {
                SymDef::Int(v) => self.const_i64(&name, &[v], &[1])?,
                SymDef::Size(src, dim) => {
                    let shape = self.helper(
                        &format!("{name}_shape"),
                        "Shape",
                        &[("x", src)],
                        TensorDesc::new(&[-1], DataType::INT64, Format::ND),
                        [(
                            "dtype",
                            AttrValue::Int(i64::from(DataType::INT64.ge_value())),
                        )],
                    )?;
                    let idx = self.const_i64(&format!("{name}_index"), &[dim], &[1])?;
                    self.helper(
                        &name,
                        "GatherV2D",
                        &[("x", shape), ("indices", idx)],
                        TensorDesc::new(&[1], DataType::INT64, Format::ND),
                        [("axis", AttrValue::Int(0))],
                    )?
                }
                SymDef::Bin(op, a, b) => {
                    let a = self.sym_operand(a, &format!("{name}_a"))?;
                    let b = self.sym_operand(b, &format!("{name}_b"))?;
                    self.helper(
                        &name,
                        op,
                        &[("x1", a), ("x2", b)],
                        TensorDesc::new(&[1], DataType::INT64, Format::ND),
                        [],
                    )?
                }
            };
            self.sym_out[n] = Some(out);
        }
        match s {
            SymArg::Int(v) => {
                let name = format!("{}/int", self.cur_name());
                self.const_i64(&name, &[v], &[1])
            }
            SymArg::Node(n) => self.sym_out[n].ok_or_else(|| self.unsupported("SymInt not built")),
        }
    }

    fn sym_operand(&mut self, a: SymArg, name: &str) -> TorchResult<Out> {
        match a {
            SymArg::Int(v) => self.const_i64(name, &[v], &[1]),
            SymArg::Node(n) => self.sym_out[n].ok_or_else(|| self.unsupported("SymInt not built")),
        }
    }

    /// A 1-D INT64 tensor of an int list whose items may be SymInts: a Const when all are
    /// known, else a ConcatV2D of Consts and SymInt tensors.
    pub fn int_list_tensor(&mut self, items: &[Arg<'_>], name: &str) -> TorchResult<Out> {
        let syms: Vec<SymArg> = items
            .iter()
            .map(|a| {
                self.sym_of(a)
                    .ok_or_else(|| self.unsupported(format!("expected ints, got {a:?}")))
            })
            .collect::<TorchResult<_>>()?;
        if syms.iter().all(|s| matches!(s, SymArg::Int(_))) {
            let v: Vec<i64> = syms
                .iter()
                .map(|s| match s {
                    SymArg::Int(v) => *v,
                    SymArg::Node(_) => 0,
                })
                .collect();
            return self.const_i64(name, &v, &[v.len() as i64]);
        }
        let mut pieces: Vec<Out> = Vec::new();
        let mut run: Vec<i64> = Vec::new();
        for s in syms {
            match s {
                SymArg::Int(v) => run.push(v),
                SymArg::Node(_) => {
                    if !run.is_empty() {
                        let k = pieces.len();
                        pieces.push(self.const_i64(
                            &format!("{name}_{k}"),
                            &run,
                            &[run.len() as i64],
                        )?);
                        run.clear();
                    }
                    pieces.push(self.sym_tensor(s)?);
                }
            }
        }
        if !run.is_empty() {
            let k = pieces.len();
            pieces.push(self.const_i64(&format!("{name}_{k}"), &run, &[run.len() as i64])?);
        }
        let n = items.len() as i64;
        let ports: Vec<(String, Out)> = pieces
            .iter()
            .enumerate()
            .map(|(k, o)| (format!("x{k}"), *o))
            .collect();
        let refs: Vec<(&str, Out)> = ports.iter().map(|(p, o)| (p.as_str(), *o)).collect();
        self.helper(
            name,
            "ConcatV2D",
            &refs,
            TensorDesc::new(&[n], DataType::INT64, Format::ND),
            [
                ("concat_dim", AttrValue::Int(0)),
                ("N", AttrValue::Int(pieces.len() as i64)),
            ],
        )
    }

    fn unique(&mut self, wanted: &str) -> String {
        if self.g.find(wanted).is_none() {
            return wanted.to_string();
        }
        loop {
            self.helper_seq += 1;
            let n = format!("{wanted}_{}", self.helper_seq);
            if self.g.find(&n).is_none() {
                return n;
            }
        }
    }

    /// The shared metadata entry `key = make(text)`, made once per string of the program's
    /// (deduplicated) string table.
    fn shared_entry(
        &mut self,
        key: &'static str,
        text: &'p str,
        make: impl FnOnce(&str) -> AttrValue,
    ) -> Arc<AttrEntry> {
        self.shared
            .entry((key.as_ptr() as usize, text.as_ptr() as usize))
            .or_insert_with(|| Arc::new(AttrEntry::new(key, make(text))))
            .clone()
    }

    /// Add a node named `name` built for FX node `fx` (metadata attrs copied) and link it.
    pub fn add_named(
        &mut self,
        name: &str,
        fx: usize,
        ty: &str,
        inputs: &[(&str, Out)],
        outputs: &[(&str, Arc<TensorDesc>)],
        attrs: AttrMap,
    ) -> TorchResult<NodeId> {
        // FX names are unique and never contain '/'; only helper names can clash.
        let name = if name.contains('/') {
            std::borrow::Cow::Owned(self.unique(name))
        } else {
            std::borrow::Cow::Borrowed(name)
        };
        // Types and port names as the graph's shared strings: no allocation per node.
        let ty_sym = self.g.intern(ty);
        let names = self.port_syms(&ty_sym, inputs.len(), outputs.len());
        let mut op = OpDesc::with_type_sym(&name, ty_sym);
        op.attrs = attrs;
        if let Some(stack) = self.p.info_string(fx, 0) {
            let e = self.shared_entry(crate::ATTR_MODULE, stack, |s| {
                attr_str(s.rsplit('\n').next().unwrap_or(s))
            });
            op.attrs.insert_entry(e);
            if stack.contains('\n') {
                let e = self.shared_entry(crate::ATTR_MODULE_STACK, stack, |s| {
                    AttrValue::ListString(s.split('\n').map(str::to_string).collect())
                });
                op.attrs.insert_entry(e);
            }
        }
        if let Some(s) = self.p.info_string(fx, 1) {
            let e = self.shared_entry(crate::ATTR_SOURCE, s, attr_str);
            op.attrs.insert_entry(e);
        }
        // GE's port names are the registry's: a registered type takes its prototype's.
        for (k, (port, src)) in inputs.iter().enumerate() {
            let d = self.g.op(src.0)?.output_desc(src.1)?.clone();
            let sym = match names.as_ref().and_then(|n| n.0.get(k)) {
                Some(s) => s.clone(),
                None => self.g.intern(port),
            };
            op.push_port(Side::Input, sym, d);
        }
        for (k, (port, d)) in outputs.iter().enumerate() {
            let sym = match names.as_ref().and_then(|n| n.1.get(k)) {
                Some(s) => s.clone(),
                None => self.g.intern(port),
            };
            op.push_port(Side::Output, sym, d.clone());
        }
        let id = self.g.add_node(op)?;
        for (k, (_, src)) in inputs.iter().enumerate() {
            self.g
                .link(OutAnchor::data(src.0, src.1), InAnchor::data(id, k))?;
        }
        Ok(id)
    }

    /// The registered prototype's port names for a node of type `ty` with `n_in` inputs and
    /// `n_out` outputs, interned in the graph (memoized per conversion).
    fn port_syms(&mut self, ty: &Sym, n_in: usize, n_out: usize) -> PortSyms {
        let key = (ty.clone(), n_in, n_out);
        if let Some(hit) = self.ports.get(&key) {
            return hit.clone();
        }
        let names = ascendir_ir::registry::lookup(ty).and_then(|p| {
            p.port_names(n_in, n_out).map(|n| {
                let ins = n.inputs.iter().map(|s| self.g.intern(s)).collect();
                let outs = n.outputs.iter().map(|s| self.g.intern(s)).collect();
                std::rc::Rc::new((ins, outs))
            })
        });
        self.ports.insert(key, names.clone());
        names
    }

    /// Add the node of the current FX node (its name, outputs described by its metadata).
    pub fn add(
        &mut self,
        ty: &str,
        inputs: &[(&str, Out)],
        outputs: &[&str],
        attrs: AttrMap,
    ) -> TorchResult<NodeId> {
        let node = self.cur_node.clone();
        let outs = node.as_ref().map_or(&[][..], |n| n.outs.as_slice());
        let name = self.cur_name();
        let descs: Vec<(&str, Arc<TensorDesc>)> = outputs
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let d = outs
                    .get(k)
                    .or(outs.first())
                    .map(desc_arc)
                    .unwrap_or_default();
                (*p, d)
            })
            .collect();
        let mut attrs = attrs;
        if let Some(t) = self.p.targets.get(self.cur) {
            let e = self
                .targets
                .entry(t.as_str())
                .or_insert_with(|| Arc::new(AttrEntry::new(crate::ATTR_TARGET, attr_str(t))))
                .clone();
            attrs.insert_entry(e);
        }
        self.add_named(name, self.cur, ty, inputs, &descs, attrs)
    }

    /// Add a helper node (shape arithmetic, casts) with one output.
    pub fn helper<const N: usize>(
        &mut self,
        name: &str,
        ty: &str,
        inputs: &[(&str, Out)],
        desc: TensorDesc,
        attrs: [(&str, AttrValue); N],
    ) -> TorchResult<Out> {
        let mut m = AttrMap::new();
        for (k, v) in attrs {
            m.insert(k, v);
        }
        let id = self.add_named(name, self.cur, ty, inputs, &[("y", Arc::new(desc))], m)?;
        Ok((id, 0))
    }

    /// [`Ctx::helper`] with attributes built beforehand.
    pub fn helper_with(
        &mut self,
        name: &str,
        ty: &str,
        inputs: &[(&str, Out)],
        desc: TensorDesc,
        attrs: AttrMap,
    ) -> TorchResult<Out> {
        let id = self.add_named(name, self.cur, ty, inputs, &[("y", Arc::new(desc))], attrs)?;
        Ok((id, 0))
    }

    /// A Const node holding `t`.
    pub fn const_tensor(&mut self, name: &str, t: Tensor) -> TorchResult<Out> {
        let name = if name.contains('/') {
            std::borrow::Cow::Owned(self.unique(name))
        } else {
            std::borrow::Cow::Borrowed(name)
        };
        let mut op = OpDesc::with_type_sym(&name, self.g.intern("Const"));
        op.push_port(Side::Output, self.g.intern("y"), t.desc.clone());
        op.set_attr("value", AttrValue::Tensor(t));
        let id = self.g.add_node(op)?;
        Ok((id, 0))
    }

    /// An INT64 Const of `values` with shape `dims`.
    pub fn const_i64(&mut self, name: &str, values: &[i64], dims: &[i64]) -> TorchResult<Out> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let t = Tensor::new(
            TensorDesc::new(dims, DataType::INT64, Format::ND),
            Bytes::from(bytes),
        );
        self.const_tensor(name, t)
    }

    /// A scalar (0-d) Const of `value` in `dtype` (float, int or bool types).
    pub fn const_scalar(&mut self, name: &str, value: f64, dtype: DataType) -> TorchResult<Out> {
        let bytes = scalar_bytes(value, dtype).ok_or_else(|| {
            self.unsupported(format!("no scalar constant of dtype {}", dtype.name()))
        })?;
        let t = Tensor::new(TensorDesc::new(&[], dtype, Format::ND), Bytes::from(bytes));
        self.const_tensor(name, t)
    }

    /// Set the value of the current node.
    pub fn set(&mut self, v: Value) {
        self.vals[self.cur] = Some(v);
    }

    /// The value of `arg` as-is (for aliases: `clone`, `alias`, no-op views).
    pub fn alias(&mut self, arg: &Arg<'_>) -> TorchResult<Value> {
        match arg {
            Arg::Node(n) => Ok(self.value_of(*n)?.clone()),
            _ => Err(self.unsupported(format!("expected a tensor argument, got {arg:?}"))),
        }
    }

    /// The tuple element `k` of FX node `n`.
    pub fn item(&self, n: usize, k: i64) -> TorchResult<Value> {
        match self.value_of(n)? {
            Value::Tuple(items) => {
                let k = usize::try_from(k).map_err(|_| self.unsupported("negative item index"))?;
                match items.get(k) {
                    Some(Some(o)) => Ok(Value::T(*o)),
                    Some(None) => Err(self.unsupported(format!(
                        "reads output {k} of '{}', which the GE op does not compute",
                        self.name(n)
                    ))),
                    None => Err(self.unsupported(format!("output {k} out of range"))),
                }
            }
            _ => Err(self.unsupported("getitem of a value that is no tuple")),
        }
    }

    /// Cast `o` (of `from`) to `to` if they differ.
    pub fn cast(&mut self, o: Out, from: DataType, to: DataType, dims: &[i64]) -> TorchResult<Out> {
        if from == to {
            return Ok(o);
        }
        let name = format!("{}/cast", self.cur_name());
        self.helper(
            &name,
            "Cast",
            &[("x", o)],
            TensorDesc::new(dims, to, Format::ND),
            [("dst_type", AttrValue::Int(i64::from(to.ge_value())))],
        )
    }
}

/// Little-endian bytes of `value` in `dtype` (half and bfloat16 rounded to nearest even).
pub(crate) fn scalar_bytes(value: f64, dtype: DataType) -> Option<Vec<u8>> {
    Some(match dtype {
        DataType::FLOAT => (value as f32).to_le_bytes().to_vec(),
        DataType::DOUBLE => value.to_le_bytes().to_vec(),
        DataType::FLOAT16 => half::f16::from_f64(value).to_le_bytes().to_vec(),
        DataType::BF16 => half::bf16::from_f64(value).to_le_bytes().to_vec(),
        DataType::INT64 => (value as i64).to_le_bytes().to_vec(),
        DataType::INT32 => (value as i32).to_le_bytes().to_vec(),
        DataType::INT16 => (value as i16).to_le_bytes().to_vec(),
        DataType::INT8 => (value as i8).to_le_bytes().to_vec(),
        DataType::UINT8 => (value as u8).to_le_bytes().to_vec(),
        DataType::BOOL => vec![u8::from(value != 0.0)],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_and_bfloat16_scalars_round_to_nearest_even() {
        let h = |v: f64| scalar_bytes(v, DataType::FLOAT16).unwrap();
        assert_eq!(h(1.0), 0x3c00u16.to_le_bytes());
        assert_eq!(h(-2.0), 0xc000u16.to_le_bytes());
        assert_eq!(h(65504.0), 0x7bffu16.to_le_bytes());
        assert_eq!(h(1e6), 0x7c00u16.to_le_bytes());
        assert_eq!(h(f64::NEG_INFINITY), 0xfc00u16.to_le_bytes());
        // 1 + 2^-11 lies halfway between two halves: the even one (1.0) is kept.
        assert_eq!(h(1.0 + 2f64.powi(-11)), 0x3c00u16.to_le_bytes());
        let b = |v: f64| scalar_bytes(v, DataType::BF16).unwrap();
        assert_eq!(b(1.0), 0x3f80u16.to_le_bytes());
        assert_eq!(b(-0.5), 0xbf00u16.to_le_bytes());
        let nan = u16::from_le_bytes(b(f64::NAN).try_into().unwrap());
        assert!(
            nan & 0x7f80 == 0x7f80 && nan & 0x7f != 0,
            "bfloat16 NaN stays NaN: {nan:#x}"
        );
    }
}
