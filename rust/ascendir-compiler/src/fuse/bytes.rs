//! Byte counts of tensors for the fuse stage (shared bytes, memory priority): unknown sizes
//! count 0, overflowing ones the most.

use ascendir_ir::{checked_size_in_bytes, DataType, Graph};

use crate::symbolize::{SymTable, TRef};

/// Bytes of a tensor at the hints (0 when unknown, `i64::MAX` when they overflow).
pub fn tensor_bytes(g: &Graph, syms: &SymTable, t: TRef) -> i64 {
    let dt = g
        .op(t.0)
        .ok()
        .and_then(|o| o.outputs().get(t.1 as usize).map(|p| p.desc.dtype));
    let Some(dt) = dt else { return 0 };
    saturating_bytes(syms.numel(t).unwrap_or(0), dt)
}

/// The bytes of `count` elements of `dtype` for the fuse stage's byte counts: 0 when unknown (a
/// negative count, a type without a size), `i64::MAX` when they do not fit in 64 bits (such a
/// tensor weighs the most, never nothing; the sums over tensors saturate too).
///
/// ```
/// use ascendir_compiler::fuse::saturating_bytes;
/// use ascendir_ir::DataType;
/// assert_eq!(saturating_bytes(4, DataType::FLOAT), 16);
/// assert_eq!(saturating_bytes(-1, DataType::FLOAT), 0);
/// assert_eq!(saturating_bytes(1 << 62, DataType::FLOAT), i64::MAX);
/// ```
pub fn saturating_bytes(count: i64, dtype: DataType) -> i64 {
    match checked_size_in_bytes(count, dtype) {
        Ok(b) => b.unwrap_or(0),
        Err(_) => i64::MAX,
    }
}
