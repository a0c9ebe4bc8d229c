//! Realize's Data / Load builders and the members read straight from memory (Gather): the
//! layouts that are not the cluster's plain loop-order view.

use ascendir_asc::{AttrValue as AscAttr, AxisId, Expr, NodeId as AscId};
use ascendir_ir::{DataType, Graph, NodeId};
use rustc_hash::FxHashMap;

use super::{err, out_dtype, Builder, Val};
use crate::loopspace::LoopSpace;
use crate::lower::Lowered;
use crate::symbolize::{SymTable, TRef};

/// Row-major strides of a tensor of `sizes`.
pub(super) fn contiguous(sizes: &[Expr]) -> Vec<Expr> {
    let mut strides = vec![Expr::int(1); sizes.len()];
    for j in (0..sizes.len().saturating_sub(1)).rev() {
        strides[j] = Expr::mul(&strides[j + 1], &sizes[j + 1]);
    }
    strides
}

/// A tensor layout: axes, extents and strides.
pub(super) type View = (Vec<AxisId>, Vec<Expr>, Vec<Expr>);

/// Set output 0 of `id` to `view` and `dtype`.
pub(super) fn set_tensor(
    b: &mut Builder,
    id: AscId,
    view: &View,
    dtype: DataType,
) -> Result<(), String> {
    let t = b.g.tensor_mut(id, 0).map_err(err)?;
    t.axis = view.0.clone();
    t.repeats = view.1.clone();
    t.strides = view.2.clone();
    t.dtype = dtype;
    Ok(())
}

/// A Data + Load of graph tensor `t` (the kernel's next input) over the axes in `set`.
pub(super) fn load(
    b: &mut Builder,
    inputs: &mut Vec<TRef>,
    t: TRef,
    set: Vec<bool>,
    dt: DataType,
) -> Result<Val, String> {
    let k = inputs.len();
    inputs.push(t);
    let data = b.node(&format!("data{k}"), "Data", &[])?;
    b.g.set_ir_attr(data, "index", AscAttr::Int(k as i64))
        .map_err(err)?;
    b.set_view(data, &set, dt)?;
    let load = b.node(&format!("load{k}"), "Load", &[data])?;
    b.g.set_ir_attr(load, "offset", AscAttr::Expr(Expr::int(0)))
        .map_err(err)?;
    b.set_view(load, &set, dt)?;
    Ok(Val {
        node: load,
        set,
        dtype: dt,
        after_reduce: false,
    })
}

/// A Data node of the tensor `t` (graph input `k` of the kernel) read from memory with the
/// given axes and extents (contiguous strides), no Load (Gather reads it by index).
fn gm_data(
    b: &mut Builder,
    k: usize,
    axes: Vec<AxisId>,
    sizes: Vec<Expr>,
    dtype: DataType,
) -> Result<AscId, String> {
    let data = b.node(&format!("data{k}"), "Data", &[])?;
    b.g.set_ir_attr(data, "index", AscAttr::Int(k as i64))
        .map_err(err)?;
    let strides = contiguous(&sizes);
    let t = b.g.tensor_mut(data, 0).map_err(err)?;
    t.axis = axes;
    t.repeats = sizes;
    t.strides = strides;
    t.dtype = dtype;
    Ok(data)
}

/// Realize a gather member: the params (with their own axis for the gathered dim) and the
/// indices read from memory by an AscIR Gather over the output's loop axes.
#[allow(clippy::too_many_arguments)]
pub(super) fn gather(
    b: &mut Builder,
    g: &Graph,
    syms: &SymTable,
    ls: &LoopSpace,
    (id, l): (NodeId, &Lowered),
    axis: i64,
    inside: &dyn Fn(NodeId) -> bool,
    inputs: &mut Vec<TRef>,
    values: &mut FxHashMap<TRef, Val>,
) -> Result<(), String> {
    let (Some(Some(params)), Some(Some(indices))) = (l.inputs.first(), l.inputs.get(1)) else {
        return Err("a gather without params or indices".into());
    };
    if inside(params.0) || inside(indices.0) {
        return Err("a gather reads a tensor computed inside the kernel".into());
    }
    let y = (id, 0u32);
    let y_view = ls.views.get(&y).ok_or("a gather output has no view")?;
    let p = syms
        .shape(*params)
        .ok_or("gather params have no symbolic shape")?;
    let ix = syms
        .shape(*indices)
        .ok_or("gather indices have no symbolic shape")?;
    let a = crate::lower::norm_axis(axis, p.len()).ok_or("a gather axis")?;
    if y_view.len() != p.len() - 1 + ix.len() {
        return Err("a gather output's rank is not the params' and indices'".into());
    }
    for s in p[a].free_symbols() {
        if b.g.find_size(&s).is_none() {
            b.g.create_size(&s).map_err(err)?;
        }
    }
    let name = format!("z{}_gathered", b.axes.len());
    let gathered = b.g.create_axis(&name, p[a].clone()).map_err(err)?;
    // The params' dims: the loop axes of the output dims they become, the gathered axis at
    // `a`; unit dims are left out (their extent is 1).
    let mut p_axes = Vec::new();
    let mut p_sizes = Vec::new();
    let mut gather_at = 0i64;
    for (j, d) in p.iter().enumerate() {
        if j == a {
            gather_at = p_axes.len() as i64;
            p_axes.push(gathered);
            p_sizes.push(d.clone());
            continue;
        }
        let oj = if j < a { j } else { j - 1 + ix.len() };
        if let Some(ax) = y_view[oj] {
            p_axes.push(b.axes[ax]);
            p_sizes.push(b.sizes[ax].clone());
        }
    }
    let mut i_axes = Vec::new();
    let mut i_sizes = Vec::new();
    for i in 0..ix.len() {
        if let Some(ax) = y_view[a + i] {
            i_axes.push(b.axes[ax]);
            i_sizes.push(b.sizes[ax].clone());
        }
    }
    let dt = out_dtype(g, y);
    let kp = inputs.len();
    inputs.push(*params);
    let pdata = gm_data(b, kp, p_axes, p_sizes, out_dtype(g, *params))?;
    let ki = inputs.len();
    inputs.push(*indices);
    let idata = gm_data(b, ki, i_axes, i_sizes, out_dtype(g, *indices))?;
    let node_name = g.op(id).map_err(err)?.name().to_string();
    let gnode = b.node(&node_name, "Gather", &[pdata, idata])?;
    b.g.set_ir_attr(gnode, "axis", AscAttr::Int(gather_at))
        .map_err(err)?;
    b.g.set_ir_attr(gnode, "negative_index_support", AscAttr::Bool(true))
        .map_err(err)?;
    let mut set = ls.set_of(y);
    set.resize(b.axes.len(), false);
    b.set_view(gnode, &set, dt)?;
    b.compute_ops += 1;
    values.insert(
        y,
        Val {
            node: gnode,
            set,
            dtype: dt,
            after_reduce: false,
        },
    );
    Ok(())
}
