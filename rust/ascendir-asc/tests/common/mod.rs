//! Helpers shared by the backend integration tests.

use std::sync::Arc;

use ascendir_asc::{AttrType, ComputeType, Expr, OpDef, PortKind};

/// A prototype `ty` of compute type `ct` with inputs `ins` and output `y` of one dtype
/// variable (Data/Output also get the `index` attribute).
pub fn op(ty: &str, ct: ComputeType, ins: &[&str], inplace: bool, tmp: Option<i64>) -> Arc<OpDef> {
    let mut d = OpDef::new(ty, ct).dtype_var("T", &[]);
    for i in ins {
        d = d.input(i, PortKind::Required, "T");
    }
    d = d.output("y", PortKind::Required, "T");
    if ty == "Data" || ty == "Output" {
        d = d.attr("index", AttrType::Int, None);
    }
    d.inplace = inplace;
    d.tmp_buffer = tmp.map(Expr::int);
    Arc::new(d)
}
