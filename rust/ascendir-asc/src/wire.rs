//! Serialization of an AscGraph as GE's `ascendc_ir.proto` `AscGraphDef` (expressions as their
//! printed strings), so that it can be stored in a bytes attribute of an `AscBackend` node.
//!
//! Not serialized (as in GE): the transform log and the axis map. Unlike GE's serializer,
//! `mem.reuse_id` is written (GE drops it), so allocation results survive a round trip.

use std::sync::Arc;

use ascendir_ir::DataType;
use prost::Message;

use crate::axis::{Axis, AxisType};
use crate::error::{AscError, AscResult};
use crate::expr::{Expr, FxHashMap};
use crate::graph::{
    AllocType, ApiInfo, ApiType, AscGraph, AttrValue, ComputeType, ComputeUnit, ExecCondition,
    GraphType, MemAttr, MemHardware, Node, NodeId, OutRef, Position, SchedInfo, Tensor, TmpBuffer,
};
use crate::registry::{self, AttrType, OpDef, PortDef, PortKind};

/// The prost types generated from `proto/ascendc_ir.proto`.
#[allow(missing_docs, clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/ascendc_ir.proto.rs"));
}

/// The attribute key under which the graph IR side stores serialized AscGraphs on an
/// `AscBackend` node (a bytes attribute holding [`AscGraph::to_bytes`]).
pub const ASCGRAPH_ATTR_KEY: &str = "_ascendir_ascgraph";

fn dec(msg: String, path: &str) -> AscError {
    AscError::Decode {
        message: msg,
        path: Some(path.to_string()),
    }
}

fn parse_expr(text: &str, path: &str) -> AscResult<Expr> {
    Expr::parse(text).map_err(|e| dec(format!("{path}: {e}"), path))
}

fn mem_to_pb(m: &MemAttr) -> pb::MemAttrDef {
    pb::MemAttrDef {
        tensor_id: m.tensor_id,
        alloc_type: m.alloc_type as i32,
        position: m.position as i32,
        hardware: m.hardware as i32,
        buf_ids: m.buf_ids.clone(),
        name: m.name.clone(),
        reuse_id: m.reuse_id,
    }
}

fn mem_from_pb(m: Option<&pb::MemAttrDef>) -> MemAttr {
    match m {
        None => MemAttr::default(),
        Some(m) => MemAttr {
            tensor_id: m.tensor_id,
            alloc_type: AllocType::from_i64(m.alloc_type as i64),
            hardware: MemHardware::from_i64(m.hardware as i64),
            position: Position::from_i64(m.position as i64),
            reuse_id: m.reuse_id,
            buf_ids: m.buf_ids.clone(),
            name: m.name.clone(),
        },
    }
}

fn attr_to_pb(v: &AttrValue) -> pb::AttrDef {
    use pb::attr_def::Value;
    let value = match v {
        AttrValue::Int(i) => Value::I(*i),
        AttrValue::Float(f) => Value::F(*f as f32),
        AttrValue::Bool(b) => Value::B(*b),
        AttrValue::Str(s) => Value::S(s.as_bytes().to_vec()),
        AttrValue::Expr(e) => Value::S(e.text().into_bytes()),
        AttrValue::ListInt(l) => Value::List(pb::attr_def::ListValue {
            i: l.clone(),
            val_type: pb::attr_def::list_value::ListValueType::VtListInt as i32,
            ..Default::default()
        }),
        AttrValue::DType(d) => Value::Dt(d.ge_value() as i64),
    };
    pb::AttrDef { value: Some(value) }
}

fn attr_from_pb(a: &pb::AttrDef, ty: Option<AttrType>, path: &str) -> AscResult<AttrValue> {
    use pb::attr_def::Value;
    let v = a
        .value
        .as_ref()
        .ok_or_else(|| dec(format!("{path}: attribute without a value"), path))?;
    Ok(match (v, ty) {
        (Value::S(s), t) => {
            let text = String::from_utf8(s.clone())
                .map_err(|_| dec(format!("{path}: string is not UTF-8"), path))?;
            if t == Some(AttrType::Expr) {
                AttrValue::Expr(parse_expr(&text, path)?)
            } else {
                AttrValue::Str(text)
            }
        }
        (Value::I(i), Some(AttrType::Expr)) => AttrValue::Expr(Expr::int(*i)),
        (Value::I(i), Some(AttrType::Bool)) => AttrValue::Bool(*i != 0),
        (Value::I(i), _) => AttrValue::Int(*i),
        (Value::F(f), _) => AttrValue::Float(*f as f64),
        (Value::B(b), _) => AttrValue::Bool(*b),
        (Value::List(l), _) => AttrValue::ListInt(l.i.clone()),
        (Value::Dt(d), _) => AttrValue::DType(
            DataType::from_ge(*d)
                .ok_or_else(|| dec(format!("{path}: unknown data type number {d}"), path))?,
        ),
    })
}

/// Expression texts of one encode: a graph repeats the same few repeats and strides on most
/// of its tensors, so each distinct expression is printed once (an `Expr` hashes by its
/// stored hash; equal ones built apart compare structurally).
#[derive(Default)]
struct Texts(FxHashMap<Expr, String>);

impl Texts {
    fn get(&mut self, e: &Expr) -> String {
        if let Some(t) = self.0.get(e) {
            return t.clone();
        }
        let t = e.text();
        self.0.insert(e.clone(), t.clone());
        t
    }

    fn all(&mut self, v: &[Expr]) -> Vec<String> {
        v.iter().map(|e| self.get(e)).collect()
    }
}

fn tensor_to_pb(t: &Tensor, texts: &mut Texts) -> pb::AscTensorDef {
    let mut s = |v: &[Expr]| texts.all(v);
    pb::AscTensorDef {
        attr: Some(pb::AscTensorAttrGroupsDef {
            dtype: t.dtype.ge_value() as i64,
            axis_ids: t.axis.clone(),
            repeats: s(&t.repeats),
            strides: s(&t.strides),
            vectorized_axis: t.vectorized_axis.clone(),
            vectorized_strides: s(&t.vectorized_strides),
            mem: Some(mem_to_pb(&t.mem)),
            que: Some(pb::MemQueueAttrDef {
                id: t.que.id,
                depth: t.que.depth,
                buf_num: t.que.buf_num,
                name: t.que.name.clone(),
            }),
            buf: Some(pb::MemBufAttrDef {
                id: t.buf.id,
                name: t.buf.name.clone(),
            }),
            opt: Some(pb::MemOptAttrDef {
                reuse_id: t.opt.reuse_id,
                ref_tensor: t.opt.ref_tensor,
                merge_scope: t.opt.merge_scope,
            }),
        }),
    }
}

fn tensor_from_pb(t: &pb::AscTensorDef, path: &str) -> AscResult<Tensor> {
    let mut out = Tensor::default();
    let Some(a) = &t.attr else { return Ok(out) };
    out.dtype = DataType::from_ge(a.dtype).ok_or_else(|| {
        dec(
            format!("{path}.dtype: unknown data type number {}", a.dtype),
            path,
        )
    })?;
    let ex = |v: &[String], f: &str| -> AscResult<Vec<Expr>> {
        v.iter()
            .enumerate()
            .map(|(i, s)| parse_expr(s, &format!("{path}.{f}[{i}]")))
            .collect()
    };
    out.axis = a.axis_ids.clone();
    out.repeats = ex(&a.repeats, "repeats")?;
    out.strides = ex(&a.strides, "strides")?;
    out.vectorized_axis = a.vectorized_axis.clone();
    out.vectorized_strides = ex(&a.vectorized_strides, "vectorized_strides")?;
    out.mem = mem_from_pb(a.mem.as_ref());
    if let Some(q) = &a.que {
        out.que = crate::graph::QueAttr {
            id: q.id,
            depth: q.depth,
            buf_num: q.buf_num,
            name: q.name.clone(),
        };
    }
    if let Some(b) = &a.buf {
        out.buf = crate::graph::BufAttr {
            id: b.id,
            name: b.name.clone(),
        };
    }
    if let Some(o) = &a.opt {
        out.opt = crate::graph::OptAttr {
            reuse_id: o.reuse_id,
            ref_tensor: o.ref_tensor,
            merge_scope: o.merge_scope,
        };
    }
    Ok(out)
}

fn count_instances(names: &[String], p: &PortDef) -> i64 {
    match p.kind {
        PortKind::Dynamic => names
            .iter()
            .filter(|n| {
                n.strip_prefix(p.name.as_str())
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            })
            .count() as i64,
        _ => names.iter().filter(|n| **n == p.name).count() as i64,
    }
}

fn node_to_pb(g: &AscGraph, n: &Node, texts: &mut Texts) -> pb::AscNodeDef {
    let input_src = n
        .inputs
        .iter()
        .map(
            |i| match i.and_then(|r| g.nodes.get(r.node.index()).map(|p| (p, r))) {
                Some((p, r)) => pb::AscInputSourceDef {
                    src_node_name: p.name.clone(),
                    src_out_index: r.index as i32,
                },
                None => pb::AscInputSourceDef {
                    src_node_name: String::new(),
                    src_out_index: -1,
                },
            },
        )
        .collect();
    let ir_def = pb::IrDef {
        input_names: n.op.inputs.iter().map(|p| p.name.clone()).collect(),
        output_names: n.op.outputs.iter().map(|p| p.name.clone()).collect(),
        input_ir_type: n.op.inputs.iter().map(|p| p.kind as i64).collect(),
        output_ir_type: n.op.outputs.iter().map(|p| p.kind as i64).collect(),
        r#type: n.op.op_type.clone(),
        input_nums: n
            .op
            .inputs
            .iter()
            .map(|p| count_instances(&n.input_names, p))
            .collect(),
        output_nums: n
            .op
            .outputs
            .iter()
            .map(|p| count_instances(&n.output_names, p))
            .collect(),
    };
    let attr = pb::AscNodeAttrGroupsDef {
        name: n.name.clone(),
        r#type: n.op.op_type.clone(),
        sched: Some(pb::SchedInfoDef {
            #[allow(deprecated)]
            exec_order: n.attr.sched.exec_order,
            axis: n.attr.sched.axis.clone(),
            loop_axis: n.attr.sched.loop_axis,
            exec_condition: n.attr.sched.exec_condition as i32,
        }),
        api: Some(pb::ApiInfoDef {
            r#type: n.attr.api.api_type as i32,
            compute_type: n.attr.api.compute_type as i32,
            unit: n.attr.api.unit as i32,
        }),
        ir_attr_def: Some(pb::AscIrAttrDef {
            attr: n
                .attr
                .ir_attr
                .iter()
                .map(|(k, v)| (k.clone(), attr_to_pb(v)))
                .collect(),
        }),
        tmp_buffers: n
            .attr
            .tmp_buffers
            .iter()
            .map(|t| pb::TmpBufferGroupDef {
                buf_desc: Some(pb::TmpBufferDescDef {
                    size: texts.get(&t.size),
                    life_time_axis_id: t.life_time_axis_id,
                }),
                mem: Some(mem_to_pb(&t.mem)),
                id: t.id,
            })
            .collect(),
    };
    pb::AscNodeDef {
        input_src,
        outputs: n.outputs.iter().map(|t| tensor_to_pb(t, texts)).collect(),
        attr: Some(attr),
        ir_def: Some(ir_def),
    }
}

/// Rebuild a prototype for a node of a type the registry does not know.
fn adhoc_op(ir: &pb::IrDef, op_type: &str) -> OpDef {
    let mut d = OpDef::new(op_type, ComputeType::Invalid).dtype_var("T", &[]);
    for (i, name) in ir.input_names.iter().enumerate() {
        let kind = PortKind::from_i64(ir.input_ir_type.get(i).copied().unwrap_or(0));
        d = d.input(name, kind, "T");
    }
    for (i, name) in ir.output_names.iter().enumerate() {
        let kind = PortKind::from_i64(ir.output_ir_type.get(i).copied().unwrap_or(0));
        d = d.output(name, kind, "T");
    }
    d
}

fn expand_ports(
    defs: &[PortDef],
    nums: &[i64],
    actual: usize,
    path: &str,
) -> AscResult<Vec<String>> {
    let mut names = Vec::new();
    let fixed: usize = defs.iter().filter(|p| p.kind != PortKind::Dynamic).count();
    let dynamic_count = defs.iter().filter(|p| p.kind == PortKind::Dynamic).count();
    for (i, p) in defs.iter().enumerate() {
        match p.kind {
            PortKind::Dynamic => {
                let n = match nums.get(i) {
                    Some(n) if *n >= 0 => *n as usize,
                    Some(n) => {
                        return Err(dec(format!("{path}: negative instance count {n}"), path))
                    }
                    None if dynamic_count == 1 => actual.saturating_sub(fixed),
                    None => 0,
                };
                names.extend((0..n).map(|k| format!("{}{k}", p.name)));
            }
            _ => names.push(p.name.clone()),
        }
    }
    if names.len() != actual {
        return Err(dec(
            format!(
                "{path}: {} ports declared but {actual} present",
                names.len()
            ),
            path,
        ));
    }
    Ok(names)
}

impl AscGraph {
    /// The `AscGraphDef` message.
    pub fn to_proto(&self) -> pb::AscGraphDef {
        let mut texts = Texts::default();
        pb::AscGraphDef {
            asc_graph_attr: Some(pb::AscGraphAttrGroupsDef {
                tiling_key: self.tiling_key,
                axis: self
                    .axes
                    .iter()
                    .map(|a| pb::AxisDef {
                        id: a.id,
                        name: a.name.clone(),
                        axis_type: a.axis_type as i32,
                        bind_block: a.bind_block,
                        size: texts.get(&a.size),
                        align: texts.get(&a.align),
                        from: a.from.clone(),
                        split_pair_other_id: a.split_pair_other_id,
                        allow_oversize_axis: a.allow_oversize_axis,
                        allow_unaligned_tail: a.allow_unaligned_tail,
                    })
                    .collect(),
                r#type: self.graph_type as i64,
                size_var: texts.all(&self.size_vars),
            }),
            asc_node: self
                .nodes
                .iter()
                .map(|n| node_to_pb(self, n, &mut texts))
                .collect(),
            graph_name: self.name.clone(),
        }
    }

    /// Serialize as GE's `AscGraphDef` protobuf bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_proto().encode_to_vec()
    }

    /// [`to_bytes`](Self::to_bytes), and the bytes of the graph with every node named after
    /// its index ([`structure_key`](crate::schedule::structure_key)), from one conversion.
    pub fn to_bytes_and_structure(&self) -> (Vec<u8>, Vec<u8>) {
        let mut p = self.to_proto();
        let bytes = p.encode_to_vec();
        self.name_by_index(&mut p);
        (bytes, p.encode_to_vec())
    }

    /// The bytes of the graph with every node named after its index.
    pub fn structure_bytes(&self) -> Vec<u8> {
        let mut p = self.to_proto();
        self.name_by_index(&mut p);
        p.encode_to_vec()
    }

    /// [`structure_bytes`](Self::structure_bytes) without the graph's own name: equal for
    /// the kernels of a model's repeated layers, which differ only in names.
    pub fn nameless_structure_bytes(&self) -> Vec<u8> {
        let mut p = self.to_proto();
        self.name_by_index(&mut p);
        p.graph_name.clear();
        p.encode_to_vec()
    }

    fn name_by_index(&self, p: &mut pb::AscGraphDef) {
        for (i, (pn, n)) in p.asc_node.iter_mut().zip(&self.nodes).enumerate() {
            if let Some(a) = pn.attr.as_mut() {
                a.name = i.to_string();
            }
            for (src, inp) in pn.input_src.iter_mut().zip(&n.inputs) {
                if let Some(r) = inp {
                    if r.node.index() < self.nodes.len() {
                        src.src_node_name = r.node.index().to_string();
                    }
                }
            }
        }
    }

    /// `AscGraphDef` bytes with the graph name replaced: every other field is kept byte for
    /// byte, so the result equals `to_bytes` of the renamed graph (the name, field 3, is the
    /// last field an encoder writes). Errors on bytes that are not a well-formed message.
    pub fn rename_bytes(data: &[u8], name: &str) -> AscResult<Vec<u8>> {
        let bad = |m: &str| AscError::Decode {
            message: format!("malformed AscGraphDef: {m}"),
            path: None,
        };
        let varint = |at: &mut usize| -> AscResult<u64> {
            let mut v = 0u64;
            for shift in (0..64).step_by(7) {
                let b = *data.get(*at).ok_or_else(|| bad("truncated varint"))?;
                *at += 1;
                v |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    return Ok(v);
                }
            }
            Err(bad("varint too long"))
        };
        let mut out = Vec::with_capacity(data.len() + name.len());
        let mut at = 0usize;
        while at < data.len() {
            let start = at;
            let key = varint(&mut at)?;
            let end = match key & 7 {
                0 => {
                    varint(&mut at)?;
                    at
                }
                1 => at.checked_add(8).ok_or_else(|| bad("length overflow"))?,
                5 => at.checked_add(4).ok_or_else(|| bad("length overflow"))?,
                2 => {
                    let n = usize::try_from(varint(&mut at)?).map_err(|_| bad("length"))?;
                    at.checked_add(n).ok_or_else(|| bad("length overflow"))?
                }
                _ => return Err(bad("unknown wire type")),
            };
            if end > data.len() {
                return Err(bad("truncated field"));
            }
            if key >> 3 != 3 {
                out.extend_from_slice(&data[start..end]);
            }
            at = end;
        }
        if !name.is_empty() {
            out.push(0x1a);
            let mut n = name.len() as u64;
            while n >= 0x80 {
                out.push((n as u8) | 0x80);
                n >>= 7;
            }
            out.push(n as u8);
            out.extend_from_slice(name.as_bytes());
        }
        Ok(out)
    }

    /// Parse `AscGraphDef` bytes; errors name the field path.
    pub fn from_bytes(data: &[u8]) -> AscResult<AscGraph> {
        let def = pb::AscGraphDef::decode(data).map_err(|e| AscError::Decode {
            message: format!("malformed AscGraphDef: {e}"),
            path: None,
        })?;
        AscGraph::from_proto(&def)
    }

    /// Rebuild a graph from an `AscGraphDef` message.
    pub fn from_proto(def: &pb::AscGraphDef) -> AscResult<AscGraph> {
        let mut g = AscGraph::new(&def.graph_name);
        let ga = def.asc_graph_attr.clone().unwrap_or_default();
        g.tiling_key = ga.tiling_key;
        g.graph_type = match ga.r#type {
            0 => GraphType::Hint,
            1 => GraphType::Impl,
            t => {
                return Err(dec(
                    format!("asc_graph_attr.type: unknown graph type {t}"),
                    "asc_graph_attr.type",
                ))
            }
        };
        for (i, s) in ga.size_var.iter().enumerate() {
            g.size_vars
                .push(parse_expr(s, &format!("asc_graph_attr.size_var[{i}]"))?);
        }
        for (i, a) in ga.axis.iter().enumerate() {
            let p = format!("asc_graph_attr.axis[{i}]");
            if a.id != i as i64 {
                return Err(dec(
                    format!("{p}: axis '{}' has id {} at index {i}", a.name, a.id),
                    &p,
                ));
            }
            if g.axes.iter().any(|x| x.name == a.name) {
                return Err(dec(format!("{p}: duplicate axis name '{}'", a.name), &p));
            }
            let mut ax = Axis::new(
                a.id,
                &a.name,
                AxisType::from_i32(a.axis_type),
                parse_expr(&a.size, &format!("{p}.size"))?,
            );
            ax.bind_block = a.bind_block;
            ax.align = if a.align.is_empty() {
                Expr::int(1)
            } else {
                parse_expr(&a.align, &format!("{p}.align"))?
            };
            ax.from = a.from.clone();
            ax.split_pair_other_id = a.split_pair_other_id;
            ax.allow_oversize_axis = a.allow_oversize_axis;
            ax.allow_unaligned_tail = a.allow_unaligned_tail;
            g.axes.push(ax);
        }
        // Pass 1: nodes.
        for (i, nd) in def.asc_node.iter().enumerate() {
            let p = format!("asc_node[{i}]");
            let attr = nd.attr.clone().unwrap_or_default();
            let ir = nd.ir_def.clone().unwrap_or_default();
            let op_type = if attr.r#type.is_empty() {
                ir.r#type.clone()
            } else {
                attr.r#type.clone()
            };
            let op: Arc<OpDef> = match registry::lookup(&op_type) {
                Some(o) => o,
                None => Arc::new(adhoc_op(&ir, &op_type)),
            };
            let mut node = Node::new(&attr.name, op.clone());
            node.input_names = expand_ports(
                &op.inputs,
                &ir.input_nums,
                nd.input_src.len(),
                &format!("{p}.input_src"),
            )?;
            node.inputs = vec![None; node.input_names.len()];
            node.output_names = expand_ports(
                &op.outputs,
                &ir.output_nums,
                nd.outputs.len(),
                &format!("{p}.outputs"),
            )?;
            node.outputs = nd
                .outputs
                .iter()
                .enumerate()
                .map(|(k, t)| tensor_from_pb(t, &format!("{p}.outputs[{k}].attr")))
                .collect::<AscResult<_>>()?;
            if let Some(s) = &attr.sched {
                #[allow(deprecated)]
                let exec_order = s.exec_order;
                node.attr.sched = SchedInfo {
                    exec_order,
                    axis: s.axis.clone(),
                    loop_axis: s.loop_axis,
                    exec_condition: ExecCondition::from_i64(s.exec_condition as i64),
                };
            }
            if let Some(a) = &attr.api {
                node.attr.api = ApiInfo {
                    api_type: ApiType::from_i64(a.r#type as i64),
                    compute_type: ComputeType::from_i64(a.compute_type as i64),
                    unit: ComputeUnit::from_i64(a.unit as i64),
                };
            }
            node.attr.ir_attr.clear();
            if let Some(ia) = &attr.ir_attr_def {
                for (k, v) in &ia.attr {
                    let ty = op.find_attr(k).map(|d| d.ty);
                    node.attr.ir_attr.insert(
                        k.clone(),
                        attr_from_pb(v, ty, &format!("{p}.attr.ir_attr_def.attr[{k}]"))?,
                    );
                }
            }
            for (k, t) in attr.tmp_buffers.iter().enumerate() {
                let tp = format!("{p}.attr.tmp_buffers[{k}]");
                let desc = t.buf_desc.clone().unwrap_or_default();
                node.attr.tmp_buffers.push(TmpBuffer {
                    size: parse_expr(&desc.size, &format!("{tp}.buf_desc.size"))?,
                    life_time_axis_id: desc.life_time_axis_id,
                    mem: mem_from_pb(t.mem.as_ref()),
                    id: t.id,
                });
            }
            g.add_node_value(node)
                .map_err(|e| dec(format!("{p}: {e}"), &p))?;
        }
        // Pass 2: edges.
        for (i, nd) in def.asc_node.iter().enumerate() {
            for (k, src) in nd.input_src.iter().enumerate() {
                if src.src_node_name.is_empty() {
                    continue;
                }
                let p = format!("asc_node[{i}].input_src[{k}]");
                let from = g.find_node(&src.src_node_name).ok_or_else(|| {
                    dec(
                        format!("{p}: unknown source node '{}'", src.src_node_name),
                        &p,
                    )
                })?;
                if src.src_out_index < 0 {
                    return Err(dec(
                        format!("{p}: negative output index {}", src.src_out_index),
                        &p,
                    ));
                }
                g.connect(
                    OutRef {
                        node: from,
                        index: src.src_out_index as u32,
                    },
                    NodeId(i as u32),
                    k,
                )
                .map_err(|e| dec(format!("{p}: {e}"), &p))?;
            }
        }
        Ok(g)
    }
}
