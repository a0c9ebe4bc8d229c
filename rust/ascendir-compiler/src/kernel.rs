//! Stages 8–9 for one kernel: schedule (with UB allocation) and tile for the target.

use ascendir_asc::schedule::{schedule, ScheduleOptions};
use ascendir_asc::target::Target;
use ascendir_asc::tiling::{TilingData, TilingFunction};
use ascendir_asc::AscGraph;
use rustc_hash::FxHashMap;

use crate::symbolize::SymTable;

/// Schedule `hint` into allocated ImplGraphs (`tiling_key` order).
pub fn schedule_kernel(hint: &AscGraph) -> Result<Vec<AscGraph>, String> {
    schedule(hint, &ScheduleOptions::default()).map_err(|e| e.to_string())
}

/// Solve the tiling of `impls` on `target` at the hint values of the graph's size symbols.
pub fn tile_kernel(
    impls: &[AscGraph],
    target: &Target,
    syms: &SymTable,
) -> Result<TilingData, String> {
    let f = TilingFunction::new(impls, target).map_err(|e| e.to_string())?;
    let mut shape: FxHashMap<String, i64> = FxHashMap::default();
    for (k, v) in &syms.hints {
        shape.insert(k.clone(), *v);
    }
    f.call(&shape).map_err(|e| e.to_string())
}
