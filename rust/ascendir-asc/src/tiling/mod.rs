//! The tiling solver: a symbolic UB model per ImplGraph (spec §6), variables in priority
//! order, the aligned tile sizes that use the most UB (exact search), minimal block inners
//! with `block_dim ≤ cores`, and template choice by cost.

pub mod compiled;

use std::fmt;

use rustc_hash::FxHashMap;

use crate::alloc::{containers_of, Container, TensorBytes};
use crate::axis::{AxisId, AxisType};
use crate::error::AscError;
use crate::expr::Expr;
use crate::graph::{AscGraph, ComputeType, GraphType};
use crate::schedule::{dtype_size, is_const};
use crate::target::Target;
use compiled::CExpr;

/// Why no tiling exists: the constraint that cannot be met and by how much.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingError {
    /// Human-readable message naming the graph and constraint.
    pub message: String,
    /// `"ub"`, `"cores"`, `"shape"` or `"model"`.
    pub constraint: String,
    /// Amount by which the constraint is exceeded (bytes for `ub`), 0 when not numeric.
    pub excess: i64,
}

impl fmt::Display for TilingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TilingError {}

fn terr(constraint: &str, excess: i64, message: String) -> TilingError {
    TilingError {
        message,
        constraint: constraint.into(),
        excess,
    }
}

/// Kind of a tiling variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A tile (UB) inner size.
    Tile,
    /// A block (multi-core) inner size.
    Block,
}

/// One searched variable.
#[derive(Clone, Debug)]
pub struct TilingVar {
    /// Size symbol (`z0t_size`).
    pub name: String,
    /// The inner axis it sizes.
    pub axis: AxisId,
    /// Tile or block.
    pub kind: VarKind,
    /// Upper bound (the parent's size).
    pub upper: Expr,
    /// Alignment in elements (32 bytes of the innermost dtype for innermost axes, else 1).
    pub align: i64,
    /// Splits a reduce axis.
    pub reduce: bool,
    /// Splits an axis some tensor broadcasts.
    pub broadcast: bool,
    /// Splits an innermost vectorized axis.
    pub innermost: bool,
}

/// The solved tiling of one ImplGraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingData {
    /// Graph name.
    pub graph: String,
    /// Template key of the graph.
    pub tiling_key: i64,
    /// Cores used.
    pub block_dim: i64,
    /// UB bytes of the target.
    pub ub_size: i64,
    /// Core count of the target.
    pub core_num: i64,
    /// UB bytes used by the solved tiling.
    pub ub_used: i64,
    /// Every searched size (`z0t_size`, `z0Tb_size`, ...).
    pub sizes: Vec<(String, i64)>,
    /// Shape sizes the tiling was solved for.
    pub shape: Vec<(String, i64)>,
    /// Container sizes (`q0_size`, `b0_size`, ...) per slot in bytes, with their buf_num.
    pub containers: Vec<(String, i64, i64)>,
    /// Cost estimate (lower is better).
    pub cost: i64,
}

impl TilingData {
    /// Value of a size symbol (searched or shape).
    pub fn get(&self, name: &str) -> Option<i64> {
        self.sizes
            .iter()
            .chain(self.shape.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

#[derive(Clone, Debug)]
struct CContainer {
    name: String,
    slot: CExpr,
    buf_num: i64,
}

/// A tiling problem compiled for one ImplGraph and target: call [`TilingProblem::solve`] per shape.
#[derive(Clone, Debug)]
pub struct TilingProblem {
    /// Graph name.
    pub graph: String,
    /// Template key.
    pub tiling_key: i64,
    /// Variables in priority order (tiles first, then blocks).
    pub vars: Vec<TilingVar>,
    /// Shape symbols the caller must bind.
    pub shape_symbols: Vec<String>,
    /// Symbolic UB usage in bytes.
    pub ub_expr: Expr,
    /// Symbolic block_dim.
    pub block_dim_expr: Expr,
    /// Symbolic loop iterations per block (the cost model's iteration count).
    pub iters_expr: Expr,
    /// Per UB container: size name (`q0_size`), symbolic slot bytes, buf_num.
    pub container_exprs: Vec<(String, Expr, i64)>,
    target: Target,
    slots: Vec<String>,
    c_ub: CExpr,
    c_upper: Vec<CExpr>,
    c_block_dim: CExpr,
    c_iters: CExpr,
    containers: Vec<CContainer>,
}

fn model_err(g: &AscGraph, m: String) -> TilingError {
    terr("model", 0, format!("graph '{}': {m}", g.name))
}

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

    /// Slot names: variables then shape symbols.
    pub fn slot_names(&self) -> &[String] {
        &self.slots
    }

    /// UB bytes used with every variable and shape symbol given (slot order).
    pub fn ub_usage(&self, vals: &[i64]) -> Option<i64> {
        self.c_ub.eval_int(vals)
    }

    /// Upper bound of variable `k` given the other values.
    pub fn upper(&self, k: usize, vals: &[i64]) -> Option<i64> {
        self.c_upper.get(k)?.eval_int(vals)
    }

    /// Solve for one shape.
    pub fn solve(&self, shape: &FxHashMap<String, i64>) -> Result<TilingData, TilingError> {
        let nv = self.vars.len();
        let mut vals = vec![1i64; self.slots.len()];
        for (k, s) in self.shape_symbols.iter().enumerate() {
            match shape.get(s) {
                Some(v) if *v >= 0 => vals[nv + k] = *v,
                Some(v) => {
                    return Err(terr(
                        "shape",
                        0,
                        format!("graph '{}': size '{s}' is negative ({v})", self.graph),
                    ))
                }
                None => {
                    return Err(terr(
                        "shape",
                        0,
                        format!(
                            "graph '{}': size '{s}' is not bound (needs {})",
                            self.graph,
                            self.shape_symbols.join(", ")
                        ),
                    ))
                }
            }
        }
        self.solve_slots(vals)
    }

    /// Solve with shape values given positionally for the symbols `syms` (no map lookups).
    pub fn solve_indexed(
        &self,
        syms: &[String],
        values: &[i64],
    ) -> Result<TilingData, TilingError> {
        let nv = self.vars.len();
        let mut vals = vec![1i64; self.slots.len()];
        for (k, s) in self.shape_symbols.iter().enumerate() {
            match syms.iter().position(|x| x == s).and_then(|p| values.get(p)) {
                Some(v) if *v >= 0 => vals[nv + k] = *v,
                _ => {
                    return Err(terr(
                        "shape",
                        0,
                        format!(
                            "graph '{}': size '{s}' is not bound or negative (needs {})",
                            self.graph,
                            self.shape_symbols.join(", ")
                        ),
                    ))
                }
            }
        }
        self.solve_slots(vals)
    }

    /// Solve with shape values already placed in their slots (variables are overwritten).
    pub fn solve_slots(&self, mut vals: Vec<i64>) -> Result<TilingData, TilingError> {
        let ovf = || self.overflow();
        let ub_size = self.target.ub_size;
        let nv = self.vars.len();
        // Tile variables start at their minimum.
        for v in vals.iter_mut().take(nv) {
            *v = 1;
        }
        let mut empty = false;
        for k in 0..nv {
            if self.vars[k].kind != VarKind::Tile {
                continue;
            }
            let up = self.upper(k, &vals).ok_or_else(ovf)?;
            if up <= 0 {
                empty = true;
            }
            vals[k] = self.vars[k].align.min(up).max(1);
        }
        if !empty {
            let base_ub = self.ub_usage(&vals).ok_or_else(ovf)?;
            if base_ub > ub_size {
                return Err(terr(
                    "ub",
                    base_ub - ub_size,
                    format!(
                        "graph '{}': UB constraint cannot be met: the smallest tiles ({}) need {base_ub} bytes, the target has {ub_size} (over by {})",
                        self.graph,
                        self.vars
                            .iter()
                            .enumerate()
                            .filter(|(_, v)| v.kind == VarKind::Tile)
                            .map(|(k, v)| format!("{}={}", v.name, vals[k]))
                            .collect::<Vec<_>>()
                            .join(", "),
                        base_ub - ub_size
                    ),
                ));
            }
            let tiles: Vec<usize> = (0..nv)
                .filter(|k| self.vars[*k].kind == VarKind::Tile)
                .collect();
            let mut best = Best {
                ub: -1,
                vals: vals.clone(),
            };
            self.search(&tiles, &mut vals, &mut best)?;
            vals = best.vals;
        }
        // Block variables: smallest value with block_dim <= cores.
        let cores = self.target.core_num;
        for k in 0..nv {
            if self.vars[k].kind != VarKind::Block {
                continue;
            }
            let up = self.upper(k, &vals).ok_or_else(ovf)?.max(1);
            let mut b = (up + cores - 1) / cores;
            b = b.max(1);
            vals[k] = b;
            while b < up {
                vals[k] = b;
                if self.c_block_dim.eval_int(&vals).ok_or_else(ovf)? <= cores {
                    break;
                }
                b += 1;
            }
            vals[k] = b.min(up).max(1);
        }
        let block_dim = self.c_block_dim.eval_int(&vals).ok_or_else(ovf)?;
        if block_dim > cores {
            return Err(terr(
                "cores",
                block_dim - cores,
                format!(
                    "graph '{}': block_dim {block_dim} exceeds the {cores} cores",
                    self.graph
                ),
            ));
        }
        let ub_used = self.ub_usage(&vals).ok_or_else(ovf)?;
        let mut containers = Vec::new();
        for c in &self.containers {
            containers.push((
                c.name.clone(),
                c.slot.eval_int(&vals).ok_or_else(ovf)?,
                c.buf_num,
            ));
        }
        // Cost: iterations per core × (launch overhead + bytes processed per iteration / 32),
        // the bytes being approximated by the container slots.
        let iters = self.c_iters.eval_int(&vals).ok_or_else(ovf)?;
        let per_iter = 64 + containers.iter().map(|c| c.1).sum::<i64>() / 32;
        let cost = iters.saturating_mul(per_iter) + 1000;
        Ok(TilingData {
            graph: self.graph.clone(),
            tiling_key: self.tiling_key,
            block_dim,
            ub_size: self.target.ub_size,
            core_num: cores,
            ub_used,
            sizes: self
                .vars
                .iter()
                .enumerate()
                .map(|(k, v)| (v.name.clone(), vals[k]))
                .collect(),
            shape: self
                .shape_symbols
                .iter()
                .enumerate()
                .map(|(k, s)| (s.clone(), vals[nv + k]))
                .collect(),
            containers,
            cost,
        })
    }
}

/// What [`TilingProblem::fit_max`] found for one variable.
struct Fit {
    /// The largest fitting candidate.
    value: i64,
    /// UB usage with it.
    usage: i64,
    /// UB usage with the variable at its bound (the same others).
    at_upper: i64,
}

/// The best assignment found so far by [`TilingProblem::search`].
struct Best {
    ub: i64,
    vals: Vec<i64>,
}

impl TilingProblem {
    fn overflow(&self) -> TilingError {
        terr(
            "model",
            0,
            format!("graph '{}': arithmetic overflow", self.graph),
        )
    }

    fn usage(&self, vals: &[i64]) -> Result<i64, TilingError> {
        self.ub_usage(vals).ok_or_else(|| self.overflow())
    }

    /// Upper bound of tile variable `k` (at least 1) with the current values.
    fn tile_upper(&self, k: usize, vals: &[i64]) -> Result<i64, TilingError> {
        Ok(self.upper(k, vals).ok_or_else(|| self.overflow())?.max(1))
    }

    /// Smallest candidate of tile variable `k`: its alignment, or the bound when smaller.
    fn tile_min(&self, k: usize, vals: &[i64]) -> Result<i64, TilingError> {
        Ok(self.vars[k].align.max(1).min(self.tile_upper(k, vals)?))
    }

    /// The candidate of tile variable `k` just above `v` (multiples of the alignment, then the
    /// bound itself), or `None` when `v` is already the bound.
    fn tile_next(&self, k: usize, v: i64, vals: &[i64]) -> Result<Option<i64>, TilingError> {
        let up = self.tile_upper(k, vals)?;
        let align = self.vars[k].align.max(1);
        if v >= up {
            return Ok(None);
        }
        Ok(Some(((v / align + 1) * align).min(up)))
    }

    /// The candidate of tile variable `k` just below `v`, or `None` at the smallest.
    fn tile_prev(&self, k: usize, v: i64, vals: &[i64]) -> Result<Option<i64>, TilingError> {
        let align = self.vars[k].align.max(1);
        let prev = if v % align == 0 {
            v - align
        } else {
            v / align * align
        };
        Ok((prev >= self.tile_min(k, vals)? && prev >= 1).then_some(prev))
    }

    /// Sets tile variable `k` to the largest candidate whose UB usage fits, the others fixed;
    /// `None` (and `k` at its smallest candidate) when not even the smallest fits. The usage is
    /// monotone in each variable, so the search is exact: the bound first, then a linear guess
    /// (the usage is affine up to the 32-byte rounding), galloping and bisection over the
    /// multiples of the alignment.
    fn fit_max(&self, k: usize, vals: &mut [i64]) -> Result<Option<Fit>, TilingError> {
        let ub_size = self.target.ub_size;
        let up = self.tile_upper(k, vals)?;
        let align = self.vars[k].align.max(1);
        vals[k] = up;
        let u_up = self.usage(vals)?;
        let fit = |value, usage| Fit {
            value,
            usage,
            at_upper: u_up,
        };
        if u_up <= ub_size {
            return Ok(Some(fit(up, u_up)));
        }
        let hi_k = up / align;
        vals[k] = self.tile_min(k, vals)?;
        if hi_k < 1 {
            return Ok(None);
        }
        let u_lo = self.usage(vals)?;
        if u_lo > ub_size {
            return Ok(None);
        }
        // The usage at `kk` alignment steps when it fits.
        let fits = |kk: i64, vals: &mut [i64]| -> Result<Option<i64>, TilingError> {
            vals[k] = kk * align;
            let u = self.usage(vals)?;
            Ok((u <= ub_size).then_some(u))
        };
        let span = (u_up - u_lo).max(1) as i128;
        let guess = 1
            + ((ub_size - u_lo).max(0) as i128 * (up - align).max(0) as i128
                / (span * align as i128)) as i64;
        let k0 = guess.clamp(1, hi_k);
        let (mut lo, mut lo_u, mut hi);
        if let Some(u) = fits(k0, vals)? {
            (lo, lo_u) = (k0, u);
            hi = hi_k + 1;
            let mut step = 1;
            while lo + step <= hi_k {
                if let Some(u) = fits(lo + step, vals)? {
                    (lo, lo_u) = (lo + step, u);
                    step *= 2;
                } else {
                    hi = lo + step;
                    break;
                }
            }
        } else {
            hi = k0;
            (lo, lo_u) = (1, u_lo);
            let mut step = 1;
            while hi - step > 1 {
                if let Some(u) = fits(hi - step, vals)? {
                    (lo, lo_u) = (hi - step, u);
                    break;
                }
                hi -= step;
                step *= 2;
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if let Some(u) = fits(mid, vals)? {
                (lo, lo_u) = (mid, u);
            } else {
                hi = mid;
            }
        }
        vals[k] = lo * align;
        Ok(Some(fit(lo * align, lo_u)))
    }

    /// Sets every tile variable of `tiles` to its smallest candidate, in order.
    fn set_min(&self, tiles: &[usize], vals: &mut [i64]) -> Result<(), TilingError> {
        for &k in tiles {
            vals[k] = self.tile_min(k, vals)?;
        }
        Ok(())
    }

    /// UB usage with every variable of `tiles` at its bound (an upper bound of what they reach).
    fn usage_at_bounds(&self, tiles: &[usize], vals: &[i64]) -> Result<i64, TilingError> {
        let mut v = vals.to_vec();
        for &k in tiles {
            v[k] = self.tile_upper(k, &v)?;
        }
        self.usage(&v)
    }

    /// Keep `vals` (whose UB usage is `u`) when it fits and beats the best.
    fn record(&self, vals: &[i64], u: i64, best: &mut Best) {
        if u <= self.target.ub_size && u > best.ub {
            best.ub = u;
            best.vals.copy_from_slice(vals);
        }
    }

    /// Exact search for the tile sizes (variables `tiles`, in priority order) that use the most
    /// UB without exceeding it; among equal usages the first found wins, which gives the
    /// higher-priority variables the larger values.
    ///
    /// One variable: its largest fitting candidate. Two: a walk over the corners of the
    /// feasible staircase — for the largest fitting first variable, the largest second; then
    /// the second one step up and the first as large as still fits — so only `min(#x, #y)`
    /// points are visited instead of every pair. More: the first variable from its largest
    /// fitting candidate downwards, the rest solved recursively, stopping when even the rest
    /// at their bounds cannot beat the best.
    fn search(
        &self,
        tiles: &[usize],
        vals: &mut [i64],
        best: &mut Best,
    ) -> Result<(), TilingError> {
        let ub_size = self.target.ub_size;
        match tiles {
            [] => {
                self.record(vals, self.usage(vals)?, best);
                Ok(())
            }
            [k] => {
                if let Some(f) = self.fit_max(*k, vals)? {
                    self.record(vals, f.usage, best);
                }
                Ok(())
            }
            [x, y] => {
                let (x, y) = (*x, *y);
                vals[y] = self.tile_min(y, vals)?;
                let mut xv = match self.fit_max(x, vals)? {
                    Some(f) => f.value,
                    None => return Ok(()),
                };
                loop {
                    vals[x] = xv;
                    let Some(yf) = self.fit_max(y, vals)? else {
                        break;
                    };
                    self.record(vals, yf.usage, best);
                    if best.ub >= ub_size {
                        break;
                    }
                    let Some(ny) = self.tile_next(y, yf.value, vals)? else {
                        break;
                    };
                    // Later corners have a smaller first variable: even the second at its
                    // bound cannot beat the best then.
                    if yf.at_upper <= best.ub {
                        break;
                    }
                    vals[y] = ny;
                    xv = match self.fit_max(x, vals)? {
                        Some(f) => f.value,
                        None => break,
                    };
                }
                Ok(())
            }
            [k, rest @ ..] => {
                let k = *k;
                self.set_min(rest, vals)?;
                let mut v = match self.fit_max(k, vals)? {
                    Some(f) => f.value,
                    None => return Ok(()),
                };
                loop {
                    vals[k] = v;
                    if self.usage_at_bounds(rest, vals)? <= best.ub {
                        break;
                    }
                    self.set_min(rest, vals)?;
                    self.search(rest, vals, best)?;
                    if best.ub >= ub_size {
                        break;
                    }
                    v = match self.tile_prev(k, v, vals)? {
                        Some(p) => p,
                        None => break,
                    };
                }
                Ok(())
            }
        }
    }
}

/// Base (ORIGINAL) axes an axis derives from.
pub fn base_of(g: &AscGraph, a: AxisId) -> Vec<AxisId> {
    let mut out = Vec::new();
    let mut stack = vec![a];
    let mut guard = 0;
    while let Some(x) = stack.pop() {
        guard += 1;
        if guard > 10_000 {
            break;
        }
        match g.find_axis(x) {
            Some(ax) if ax.from.is_empty() && !out.contains(&x) => out.push(x),
            Some(ax) if ax.from.is_empty() => {}
            Some(ax) => stack.extend(ax.from.iter().copied()),
            None => {}
        }
    }
    out
}

fn collapsed_base_axes(g: &AscGraph, t: &crate::graph::Tensor) -> Vec<AxisId> {
    let mut v = Vec::new();
    for (p, a) in t.axis.iter().enumerate() {
        if is_const(&t.repeats[p], 1) || is_const(&t.strides[p], 0) {
            let full1 = g.find_axis(*a).is_some_and(|ax| is_const(&ax.size, 1));
            if !full1 {
                v.extend(base_of(g, *a));
            }
        }
    }
    v
}

fn reduce_base_axes(g: &AscGraph) -> Vec<AxisId> {
    let mut v = Vec::new();
    for (i, n) in g.nodes().iter().enumerate() {
        if n.attr.api.compute_type != ComputeType::Reduce {
            continue;
        }
        if let (Some(inp), Some(out)) = (
            g.input_tensor(crate::graph::NodeId(i as u32), 0),
            n.outputs.first(),
        ) {
            let ci = collapsed_base_axes(g, inp);
            for a in collapsed_base_axes(g, out) {
                if !ci.contains(&a) && !v.contains(&a) {
                    v.push(a);
                }
            }
        }
    }
    v
}

fn broadcast_base_axes(g: &AscGraph) -> Vec<AxisId> {
    let mut v = Vec::new();
    for (i, n) in g.nodes().iter().enumerate() {
        if n.attr.api.compute_type != ComputeType::Broadcast {
            continue;
        }
        if let Some(inp) = g.input_tensor(crate::graph::NodeId(i as u32), 0) {
            for a in collapsed_base_axes(g, inp) {
                if !v.contains(&a) {
                    v.push(a);
                }
            }
        }
    }
    v
}

/// Tiling problems of several templates: [`TilingFunction::call`] solves each and picks the
/// lowest cost (ties → higher UB use).
#[derive(Clone, Debug)]
pub struct TilingFunction {
    /// One problem per ImplGraph (template).
    pub problems: Vec<TilingProblem>,
}

impl TilingFunction {
    /// Compile every ImplGraph.
    pub fn new(impls: &[AscGraph], target: &Target) -> Result<TilingFunction, TilingError> {
        if impls.is_empty() {
            return Err(terr("model", 0, "no ImplGraph to tile".into()));
        }
        Ok(TilingFunction {
            problems: impls
                .iter()
                .map(|g| TilingProblem::new(g, target))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Like [`TilingFunction::call`] with positional values for the symbols `syms`.
    pub fn call_values(&self, syms: &[String], values: &[i64]) -> Result<TilingData, TilingError> {
        self.pick(self.problems.iter().map(|p| p.solve_indexed(syms, values)))
    }

    /// Solve every template for `shape` and pick the best; the error of the first template
    /// is returned when none fits.
    pub fn call(&self, shape: &FxHashMap<String, i64>) -> Result<TilingData, TilingError> {
        self.pick(self.problems.iter().map(|p| p.solve(shape)))
    }

    fn pick(
        &self,
        results: impl Iterator<Item = Result<TilingData, TilingError>>,
    ) -> Result<TilingData, TilingError> {
        let mut best: Option<TilingData> = None;
        let mut first_err = None;
        for r in results {
            match r {
                Ok(t) => {
                    let better = match &best {
                        None => true,
                        Some(b) => t.cost < b.cost || (t.cost == b.cost && t.ub_used > b.ub_used),
                    };
                    if better {
                        best = Some(t);
                    }
                }
                Err(e) => {
                    if e.constraint == "shape" {
                        return Err(e);
                    }
                    first_err.get_or_insert(e);
                }
            }
        }
        match best {
            Some(b) => Ok(b),
            None => Err(first_err.unwrap_or_else(|| terr("model", 0, "no template".into()))),
        }
    }
}

/// Solve the best tiling of `impls` for `shape` on `target`.
pub fn solve_tiling(
    impls: &[AscGraph],
    target: &Target,
    shape: &FxHashMap<String, i64>,
) -> Result<TilingData, TilingError> {
    TilingFunction::new(impls, target)?.call(shape)
}

impl From<AscError> for TilingError {
    fn from(e: AscError) -> TilingError {
        terr("model", 0, e.to_string())
    }
}
