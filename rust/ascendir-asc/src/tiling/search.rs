//! Solving one shape: the shape bound into the model's slots, the exact search for the aligned
//! tile sizes that use the most UB, minimal block inners with `block_dim ≤ cores`, and the cost.

use rustc_hash::FxHashMap;

use super::{terr, TilingData, TilingError, TilingProblem, VarKind};

impl TilingProblem {
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
