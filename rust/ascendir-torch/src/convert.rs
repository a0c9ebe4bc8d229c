//! The conversion driver: a flattened FX program, node by node in its order, into a graph.

use std::sync::Arc;

use ascendir_ir::{AttrValue, NodeId, OpDesc, Tensor};
use bytes::Bytes;

use crate::build::{Ctx, Value};
use crate::program::{Arg, FxProgram, NodeKind};
use crate::{ops, ImportReport, TorchError, TorchResult};

/// Convert a flattened program into a graph.
pub fn convert(p: &FxProgram) -> TorchResult<(ascendir_ir::Graph, ImportReport)> {
    p.check()?;
    let n = p.len();
    let mut consts: Vec<Option<&Bytes>> = vec![None; n];
    for (i, b) in &p.consts {
        let slot = consts
            .get_mut(*i)
            .ok_or_else(|| TorchError::Malformed(format!("payload of node {i} out of range")))?;
        *slot = Some(b);
    }
    let mut ctx = Ctx::new(p);
    let mut outputs: Vec<(NodeId, i32)> = Vec::new();
    let mut data_index = 0i64;
    #[allow(clippy::needless_range_loop)] // `i` indexes the program and the values
    for i in 0..n {
        let node = std::rc::Rc::new(p.node(i)?);
        ctx.begin_node(i, node.clone());
        match node.kind {
            NodeKind::Input => {
                let meta = node
                    .out()
                    .cloned()
                    .ok_or_else(|| ctx.unsupported("a user input without tensor metadata"))?;
                if meta.symint || meta.dtype.is_none() {
                    return Err(ctx.unsupported("only tensor user inputs are supported"));
                }
                let mut desc = meta.desc();
                if meta.sym.iter().any(Option::is_some) {
                    let ranges: Vec<Vec<i64>> = meta
                        .sym
                        .iter()
                        .zip(&meta.dims)
                        .map(|(s, &d)| match s {
                            None => vec![d, d],
                            Some(e) => p
                                .symbols
                                .iter()
                                .find(|x| x.name == *e)
                                .map_or(vec![1, -1], |x| vec![x.min, x.max]),
                        })
                        .collect();
                    desc.attrs_mut()
                        .insert("shape_range", AttrValue::ListListInt(ranges));
                }
                let desc = Arc::new(desc);
                let mut op = OpDesc::new(node.name, "Data");
                op.add_input("x", desc.clone());
                op.add_output("y", desc)?;
                op.set_attr("index", AttrValue::Int(data_index));
                data_index += 1;
                op.set_attr(
                    crate::ATTR_SHAPE,
                    AttrValue::ListString(
                        meta.sym
                            .iter()
                            .zip(&meta.dims)
                            .map(|(s, d)| s.map_or_else(|| d.to_string(), str::to_string))
                            .collect(),
                    ),
                );
                let id = ctx.g.add_node(op)?;
                ctx.report.inputs += 1;
                ctx.set(Value::T((id, 0)));
            }
            NodeKind::Const => {
                let meta = node
                    .out()
                    .cloned()
                    .ok_or_else(|| ctx.unsupported("a constant without tensor metadata"))?;
                let data = consts[i]
                    .cloned()
                    .ok_or_else(|| ctx.unsupported("a constant without a payload"))?;
                if !meta.is_static() {
                    return Err(ctx.unsupported("a constant of symbolic shape"));
                }
                let desc = meta.desc();
                let expected = desc.mem_size().unwrap_or(-1);
                if expected < 0 || expected as usize != data.len() {
                    return Err(ctx.unsupported(format!(
                        "constant payload has {} bytes, its shape {:?} needs {expected}",
                        data.len(),
                        meta.dims
                    )));
                }
                let name = node.name;
                let param = node.target;
                let t = Tensor::new(desc, data);
                let o = ctx.const_tensor(name, t)?;
                ctx.g.modify_op(o.0, |op| {
                    op.set_attr(crate::ATTR_PARAM, AttrValue::String(param.to_string()))
                })?;
                ctx.report.params += 1;
                ctx.set(Value::T(o));
            }
            NodeKind::Call => {
                ctx.report.fx_calls += 1;
                ops::convert_call(&mut ctx, &node)?;
            }
            NodeKind::Output => {
                let args = node.args.clone();
                let items = match args.first() {
                    Some(Arg::List(l)) => l.clone(),
                    Some(a) => vec![a.clone()],
                    None => Vec::new(),
                };
                for a in &items {
                    if matches!(a, Arg::None) {
                        return Err(ctx.unsupported("a None output"));
                    }
                    let o = ctx.tensor(a)?;
                    outputs.push((o.0, o.1 as i32));
                }
            }
        }
    }
    ctx.g.set_outputs(&outputs, &[])?;
    // Program-level symbol information (see the crate docs).
    if !p.symbols.is_empty() {
        let g = &mut ctx.g;
        g.attrs.insert(
            crate::ATTR_SYMBOLS,
            AttrValue::ListString(p.symbols.iter().map(|s| s.name.clone()).collect()),
        );
        g.attrs.insert(
            crate::ATTR_SYMBOL_SOURCES,
            AttrValue::ListString(p.symbols.iter().map(|s| s.source.clone()).collect()),
        );
        g.attrs.insert(
            crate::ATTR_SYMBOL_RANGES,
            AttrValue::ListListInt(p.symbols.iter().map(|s| vec![s.min, s.max]).collect()),
        );
    }
    if !p.guards.is_empty() {
        ctx.g
            .attrs
            .insert(crate::ATTR_GUARDS, AttrValue::ListString(p.guards.clone()));
    }
    if !ctx.report.unknown_ops.is_empty() {
        let names: Vec<String> = ctx.report.unknown_ops.keys().cloned().collect();
        ctx.g
            .attrs
            .insert(crate::ATTR_UNKNOWN_OPS, AttrValue::ListString(names));
    }
    ctx.report.ge_nodes = ctx.g.len();
    Ok((ctx.g, ctx.report))
}
