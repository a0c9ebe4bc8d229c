//! Stages 8–9 for one kernel: schedule (with UB allocation) and tile for the target.

use ascendir_asc::schedule::{schedule, ScheduleOptions};
use ascendir_asc::target::Target;
use ascendir_asc::tiling::{TilingData, TilingFunction};
use ascendir_asc::AscGraph;
use rustc_hash::FxHashMap;

use crate::error::{ErrorKind, KindResult};
use crate::symbolize::SymTable;

/// Schedule `hint` into allocated ImplGraphs (`tiling_key` order).
pub fn schedule_kernel(hint: &AscGraph) -> KindResult<Vec<AscGraph>> {
    schedule(hint, &ScheduleOptions::default()).map_err(|e| ErrorKind::Schedule(Box::new(e)))
}

/// Solve the tiling of `impls` on `target` at the hint values of the graph's size symbols.
pub fn tile_kernel(impls: &[AscGraph], target: &Target, syms: &SymTable) -> KindResult<TilingData> {
    let f = TilingFunction::new(impls, target)?;
    let mut shape: FxHashMap<String, i64> = FxHashMap::default();
    for (k, v) in &syms.hints {
        shape.insert(k.clone(), *v);
    }
    Ok(f.call(&shape)?)
}
