//! The TilingData layout of a kernel (`autofuse_tiling_data.h`): the common fields, the
//! tiling key, the size variables of all ImplGraphs in first-seen order, then the container
//! sizes. Every field is a `uint32_t`.

use crate::alloc::containers_of;
use crate::graph::AscGraph;

/// One field of the TilingData struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingField {
    /// Member name.
    pub name: String,
    /// Byte offset in the struct.
    pub offset: usize,
}

fn push(names: &mut Vec<String>, n: String) {
    if !names.contains(&n) {
        names.push(n);
    }
}

/// Every field of the TilingData struct of `impls`, in struct order.
pub fn tiling_fields(_kernel: &str, impls: &[&AscGraph]) -> Vec<TilingField> {
    let mut names: Vec<String> = ["block_dim", "corenum", "ub_size", "hbm_size", "tiling_key"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for g in impls {
        for v in g.size_vars() {
            for s in v.free_symbols() {
                push(&mut names, s);
            }
        }
        for a in g.axes() {
            for s in a.size.free_symbols() {
                push(&mut names, s);
            }
        }
    }
    for g in impls {
        if let Ok(cs) = containers_of(g) {
            for c in cs {
                push(&mut names, c.size_name());
            }
        }
    }
    names
        .into_iter()
        .enumerate()
        .map(|(k, name)| TilingField { name, offset: 4 * k })
        .collect()
}

/// The header text of the TilingData struct.
pub fn tiling_data_header(kernel: &str, impls: &[&AscGraph]) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "#ifndef __{kernel}_Tiling_Data_H__\n#define __{kernel}_Tiling_Data_H__\n#include <stdint.h>\n\n"
    ));
    s.push_str(&format!("struct {kernel}TilingData {{\n"));
    for f in tiling_fields(kernel, impls) {
        s.push_str(&format!("  uint32_t {};\n", f.name));
    }
    s.push_str("};\n\n");
    s.push_str(&format!(
        "using AutofuseTilingData = {kernel}TilingData;\n\n#endif\n"
    ));
    s
}
