//! The UB model of one ImplGraph: its tiling variables in priority order, their bounds and
//! alignments, the UB and core expressions over tile sizes and shape symbols, compiled for fast
//! evaluation.

use super::compiled::CExpr;
use crate::alloc::{containers_of, Container, TensorBytes};
use crate::axis::{AxisId, AxisType};
use crate::expr::Expr;
use crate::graph::{AscGraph, GraphType};
use crate::schedule::{dtype_size, is_const};
use crate::target::Target;

use super::axes::{broadcast_base_axes, reduce_base_axes};
use super::{base_of, model_err, CContainer, TilingError, TilingProblem, TilingVar, VarKind};

impl TilingProblem {
    /// Build the UB model and variables of an allocated ImplGraph.
    pub fn new(g: &AscGraph, target: &Target) -> Result<TilingProblem, TilingError> {
        if g.graph_type != GraphType::Impl {
            return Err(model_err(g, "is not an ImplGraph".into()));
        }
        let containers = containers_of(g).map_err(|e| model_err(g, e.to_string()))?;
        let bytes = TensorBytes::new(g, target.block_size);
        TilingProblem::from_parts(&bytes, &containers, target)
    }

    /// [`TilingProblem::new`] of `bytes`' graph from its containers (`containers_of`) and its
    /// tensor-byte memo (rounded to `target`'s block size), shared with other readers.
    pub fn from_parts(
        bytes: &TensorBytes<'_>,
        containers: &[Container],
        target: &Target,
    ) -> Result<TilingProblem, TilingError> {
        let g = bytes.graph();
        if g.graph_type != GraphType::Impl {
            return Err(model_err(g, "is not an ImplGraph".into()));
        }
        let block = target.block_size;
        if bytes.block() != block {
            return Err(model_err(
                g,
                format!(
                    "tensor bytes rounded to {} bytes, the target's block is {block}",
                    bytes.block()
                ),
            ));
        }
        let mut ub = Expr::int(0);
        let mut cont_exprs = Vec::new();
        for c in containers {
            let slot = bytes.slot_bytes(c);
            ub = Expr::add(&ub, &Expr::mul(&slot, &Expr::int(c.buf_num)));
            cont_exprs.push((c.size_name(), slot, c.buf_num, c.kind));
        }
        // Reserved scratch: 8 KB for select/where/compare/gather graphs.
        let reserved = if g.nodes().iter().any(|n| {
            matches!(
                n.op_type(),
                "Select" | "Where" | "Eq" | "Ne" | "Gt" | "Ge" | "Lt" | "Le" | "Gather"
            )
        }) {
            8192
        } else {
            0
        };
        ub = Expr::add(&ub, &Expr::int(reserved));
        // Variables.
        let mut vars = Vec::new();
        let mut innermost_axes: Vec<AxisId> = Vec::new();
        let mut min_dsize = i64::MAX;
        for n in g.nodes() {
            if !n.is_compute() {
                continue;
            }
            for t in &n.outputs {
                for (k, a) in t.vectorized_axis.iter().enumerate().rev() {
                    let nz = t.vectorized_strides.get(k).is_none_or(|s| !is_const(s, 0));
                    if nz {
                        if !innermost_axes.contains(a) {
                            innermost_axes.push(*a);
                        }
                        break;
                    }
                }
                min_dsize = min_dsize.min(dtype_size(t));
            }
        }
        if min_dsize == i64::MAX {
            min_dsize = 1;
        }
        let red_axes = reduce_base_axes(g);
        let brc_axes = broadcast_base_axes(g);
        let mut block_vars = Vec::new();
        for ax in g.axes() {
            let is_tile = ax.axis_type == AxisType::TileInner;
            let is_block = ax.axis_type == AxisType::BlockInner;
            if !(is_tile || is_block) {
                continue;
            }
            let name = match ax.size.as_sym() {
                Some(s) => s.to_string(),
                None => continue, // size-1 split
            };
            let parent = match ax.from.first().and_then(|p| g.find_axis(*p)) {
                Some(p) => p,
                None => return Err(model_err(g, format!("axis '{}' has no parent", ax.name))),
            };
            let base = base_of(g, parent.id);
            let innermost = innermost_axes.contains(&ax.id);
            let v = TilingVar {
                name,
                axis: ax.id,
                kind: if is_tile {
                    VarKind::Tile
                } else {
                    VarKind::Block
                },
                upper: parent.size.clone(),
                align: if innermost && is_tile {
                    (block / min_dsize).max(1)
                } else {
                    1
                },
                reduce: base.iter().any(|b| red_axes.contains(b)),
                broadcast: base.iter().any(|b| brc_axes.contains(b)),
                innermost,
            };
            if is_tile {
                vars.push(v);
            } else {
                block_vars.push(v);
            }
        }
        vars.sort_by_key(|v| {
            (
                !v.reduce,
                !v.broadcast,
                v.innermost,
                base_of(g, v.axis).first().copied().unwrap_or(0),
            )
        });
        vars.extend(block_vars);
        // block_dim: product of the block outer sizes.
        let mut block_dim = Expr::int(1);
        for ax in g.axes() {
            if ax.axis_type == AxisType::BlockOuter {
                block_dim = Expr::mul(&block_dim, &ax.size);
            }
        }
        // Iterations per block: product of the loop axes below the block axes.
        let mut iters = Expr::int(1);
        if let Some(n) = g.nodes().iter().find(|n| n.is_compute()) {
            for a in &n.attr.sched.axis {
                if let Some(ax) = g.find_axis(*a) {
                    if ax.axis_type == AxisType::BlockOuter {
                        continue;
                    }
                    if n.outputs.iter().any(|t| t.vectorized_axis.contains(a)) {
                        continue;
                    }
                    iters = Expr::mul(&iters, &ax.size);
                }
            }
        }
        let var_names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let mut shape_symbols: Vec<String> = Vec::new();
        let mut collect = |e: &Expr| {
            for s in e.free_symbols() {
                if !var_names.contains(&s) && !shape_symbols.contains(&s) {
                    shape_symbols.push(s);
                }
            }
        };
        collect(&ub);
        collect(&block_dim);
        for v in &vars {
            collect(&v.upper);
        }
        for ax in g.axes() {
            collect(&ax.size);
        }
        let mut tensor_b = Vec::new();
        for (ni, n) in g.nodes().iter().enumerate() {
            if !n.is_compute() {
                continue;
            }
            for (o, t) in n.outputs.iter().enumerate() {
                if t.mem.hardware == crate::graph::MemHardware::Ub {
                    tensor_b.push(bytes.at(ni, o));
                }
            }
        }
        for e in &tensor_b {
            collect(e);
        }
        shape_symbols.sort();
        let mut slots = var_names.clone();
        slots.extend(shape_symbols.iter().cloned());
        let slot_of = |s: &str| slots.iter().position(|x| x == s);
        let comp = |e: &Expr| CExpr::compile(e, &slot_of).map_err(|m| model_err(g, m));
        let c_ub = comp(&ub)?;
        let c_upper = vars
            .iter()
            .map(|v| comp(&v.upper))
            .collect::<Result<_, _>>()?;
        let c_block_dim = comp(&block_dim)?;
        let c_iters = comp(&iters)?;
        let mut ccont = Vec::new();
        for (name, slot, bn, _k) in &cont_exprs {
            ccont.push(CContainer {
                name: name.clone(),
                slot: comp(slot)?,
                buf_num: *bn,
            });
        }
        Ok(TilingProblem {
            graph: g.name.clone(),
            tiling_key: g.tiling_key,
            vars,
            shape_symbols,
            ub_expr: ub,
            block_dim_expr: block_dim,
            iters_expr: iters,
            container_exprs: cont_exprs
                .iter()
                .map(|(n, e, b, _)| (n.clone(), e.clone(), *b))
                .collect(),
            target: target.clone(),
            slots,
            c_ub,
            c_upper,
            c_block_dim,
            c_iters,
            containers: ccont,
        })
    }
}
