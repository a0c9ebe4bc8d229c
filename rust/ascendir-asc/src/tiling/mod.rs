//! The tiling solver: a symbolic UB model per ImplGraph, variables in priority
//! order, the aligned tile sizes that use the most UB (exact search), minimal block inners
//! with `block_dim ≤ cores`, and template choice by cost.

mod axes;
pub mod compiled;
mod model;
mod search;

pub use axes::base_of;

use std::fmt;

use rustc_hash::FxHashMap;

use crate::axis::AxisId;
use crate::error::AscError;
use crate::expr::Expr;
use crate::graph::AscGraph;
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
