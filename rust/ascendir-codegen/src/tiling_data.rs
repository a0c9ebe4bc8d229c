//! `autofuse_tiling_data.h`: the TilingData struct in GE's layout (GE's
//! `codegen_tiling_data.cpp`, asserted byte for byte by its `test_codegen_tiling_data.cpp`).
//!
//! One schedule group: `<Kernel>TilingData` with `block_dim`, `corenum`, `ub_size`,
//! `hbm_size`, one `workspace<id>` per workspace tensor, `tiling_key`, the non-constant size
//! variables of every ImplGraph in first-seen order, the API tiling structs (Transpose, Pad),
//! then `q<id>_size` per queue id and `b<id>_size` per buffer / temporary-buffer id (ascending).
//! Several groups: one struct `AscGraph<i>ScheduleResult<j>G<k>TilingData` per group, nested
//! into the kernel struct as `graph<i>_result<j>_g<k>_tiling_data` after `graph<i>_tiling_key`.
//!
//! [`tiling_fields`] lists every `uint32_t` of the struct in order with its byte offset (every
//! member is a `uint32_t` or a struct of them, so the layout has no padding).

use std::collections::BTreeSet;

use ascendir_asc::graph::AscGraph;

/// One `uint32_t` member of the TilingData struct: its path (`s0`,
/// `graph0_result1_g0_tiling_data.s1`, `Transpose_tilingData_1.param3`) and byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingField {
    /// Member path from the outer struct, `.`-separated.
    pub name: String,
    /// Byte offset in the outer struct.
    pub offset: usize,
}

/// A fused schedule result as GE's `FusedScheduledResult` holds it: per AscGraph (index `i`),
/// its schedule results (`j`), each a list of schedule groups (`k`), each its ImplGraphs.
pub type FusedSchedule<'a> = [Vec<Vec<Vec<&'a AscGraph>>>];

const CLASS_NAME: &str = "TilingData";

const MACROS_AND_INCLUDES: &str = "#include <stdint.h>\n\
#include \"kernel_tiling/kernel_tiling.h\"\n\
#define BEGIN_TILING_DATA_DEF_T(name) struct name {\n\
#define TILING_DATA_FIELD_DEF_T(type, name) \\\n  \
type name; \\\n  \
inline void set_##name(type value) { name = value; } \\\n  \
inline type get_##name() { return name; } \\\n  \
inline type* get_addr_##name() {return &name;}\n\
#define END_TILING_DATA_DEF_T };\n\
#define TILING_DATA_FIELD_DEF_T_STRUCT(struct_type, filed_name) \\\n  \
struct_type filed_name;\n";

const PERF_STRUCT: &str = "struct AutofuseTilingDataPerf {\n  \
AutofuseTilingData tiling_data;\n  \
double best_perf;\n\
};\n";

const TRANSPOSE_PARAMS: usize = 18;
const PAD_PARAMS: &[&str] = &[
    "srcHeight",
    "srcWidth",
    "srcOriWidth",
    "widthWithoutLastBlock",
    "blocksPerRow",
    "heightTiling",
    "heightFractal",
    "heightFractalTail",
    "mainLoopOffset",
    "tailBlockOffset",
    "tmpBuffer1BlockNum",
    "tmpBuffer1RowNum",
    "tmpBuffer2Offset",
    "widthTiling",
    "widthFractal",
    "widthFractalTail",
    "widthFractalTailAlingned",
    "brcbTiling",
    "brcbFractal",
    "brcbFractalTail",
    "maxRepeatTimes",
    "brcbTilingRepeatTimes",
    "brcbTilingRepeatTimesTail",
    "brcbFractalTailRepeatTimes",
    "brcbFractalTailRepeatTimesTail",
    "reserved",
];

/// A CANN-free `kernel_tiling/kernel_tiling.h`: the API tiling structs GE's header may name
/// (`ConfusionTransposeTiling`, `PadTiling`) as plain `uint32_t` structs, the layout
/// [`tiling_fields`] assumes. Put on the include path of CPU and host builds.
pub fn kernel_tiling_stub() -> String {
    let mut s = String::from(
        "// kernel_tiling/kernel_tiling.h: CANN-free stand-in (API tiling structs as uint32_t fields).\n\
         #ifndef ASCENDIR_KERNEL_TILING_STUB_H\n#define ASCENDIR_KERNEL_TILING_STUB_H\n\
         #include <stdint.h>\n",
    );
    let transpose: Vec<String> = (0..TRANSPOSE_PARAMS).map(|k| format!("param{k}")).collect();
    for (ty, fields) in [
        ("ConfusionTransposeTiling", transpose),
        (
            "PadTiling",
            PAD_PARAMS.iter().map(|f| f.to_string()).collect(),
        ),
    ] {
        s.push_str("struct ");
        s.push_str(ty);
        s.push_str(" {\n");
        for f in fields {
            s.push_str("  uint32_t ");
            s.push_str(&f);
            s.push_str(";\n");
        }
        s.push_str("};\n");
    }
    s.push_str("#endif\n");
    s
}

/// A member of a TilingData struct.
enum Member {
    /// `TILING_DATA_FIELD_DEF_T(uint32_t, name);`
    U32(String),
    /// An API tiling struct (`ConfusionTransposeTiling`, `PadTiling`) of `uint32_t` fields.
    Api {
        ty: String,
        name: String,
        fields: Vec<String>,
    },
    /// A nested group struct.
    Group {
        ty: String,
        name: String,
        members: Vec<Member>,
    },
}

/// GE's `GenValidName`: non-identifier characters become `_`, a leading digit gets `t_`.
pub(crate) fn valid_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "t_");
    }
    out
}

/// The API tiling struct a node needs (GE's `GetApiTilingTypeName`).
fn api_tiling(op_type: &str) -> Option<(&'static str, Vec<String>)> {
    match op_type {
        "Transpose" => Some((
            "ConfusionTransposeTiling",
            (0..TRANSPOSE_PARAMS).map(|k| format!("param{k}")).collect(),
        )),
        "Pad" => Some((
            "PadTiling",
            PAD_PARAMS.iter().map(|s| s.to_string()).collect(),
        )),
        _ => None,
    }
}

/// Workspace tensor ids of the whole result, first-seen order.
fn workspace_ids(fused: &FusedSchedule<'_>) -> Vec<i64> {
    let mut ids = Vec::new();
    for results in fused {
        for groups in results {
            for impls in groups {
                for g in impls {
                    for n in g.nodes() {
                        if n.op_type() != "Workspace" {
                            continue;
                        }
                        if let Some(t) = n.outputs.first() {
                            if !ids.contains(&t.mem.tensor_id) {
                                ids.push(t.mem.tensor_id);
                            }
                        }
                    }
                }
            }
        }
    }
    ids
}

/// `block_dim`, `corenum`, `ub_size`, `hbm_size`, the workspaces.
fn common(workspaces: &[i64]) -> Vec<Member> {
    let mut m: Vec<Member> = ["block_dim", "corenum", "ub_size", "hbm_size"]
        .iter()
        .map(|s| Member::U32(s.to_string()))
        .collect();
    for id in workspaces {
        m.push(Member::U32(format!("workspace{id}")));
    }
    m
}

/// The members of one group after its `tiling_key`: size variables, API structs, q/b sizes.
fn group_members(impls: &[&AscGraph], out: &mut Vec<Member>) {
    let mut seen: Vec<String> = Vec::new();
    let mut q_ids = BTreeSet::new();
    let mut b_ids = BTreeSet::new();
    for (case, g) in impls.iter().enumerate() {
        for e in g.size_vars() {
            if e.as_num().is_some() {
                continue;
            }
            let name = e.to_string();
            if !seen.contains(&name) {
                out.push(Member::U32(name.clone()));
                seen.push(name);
            }
        }
        for n in g.nodes() {
            for t in &n.outputs {
                q_ids.insert(t.que.id);
                b_ids.insert(t.buf.id);
            }
            for tb in &n.attr.tmp_buffers {
                if tb.id != -1 {
                    b_ids.insert(tb.id);
                }
            }
        }
        for n in g.nodes() {
            if let Some((ty, fields)) = api_tiling(n.op_type()) {
                out.push(Member::Api {
                    ty: ty.to_string(),
                    name: format!("{}_{case}", valid_name(&format!("{}_tilingData", n.name))),
                    fields,
                });
            }
        }
    }
    for id in q_ids.into_iter().filter(|i| *i >= 0) {
        out.push(Member::U32(format!("q{id}_size")));
    }
    for id in b_ids.into_iter().filter(|i| *i >= 0) {
        out.push(Member::U32(format!("b{id}_size")));
    }
}

/// GE's `CamelToLowerSneak`: `Result1G0TilingData` → `result1_g0_tiling_data`.
fn camel_to_snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The kernel struct's members (group structs nested as [`Member::Group`]).
fn layout(fused: &FusedSchedule<'_>) -> Vec<Member> {
    let workspaces = workspace_ids(fused);
    let mut outer = common(&workspaces);
    let single = fused.len() == 1 && fused[0].len() == 1 && fused[0][0].len() == 1;
    if single {
        outer.push(Member::U32("tiling_key".into()));
        group_members(&fused[0][0][0], &mut outer);
        return outer;
    }
    for i in 0..fused.len() {
        outer.push(Member::U32(format!("graph{i}_tiling_key")));
    }
    for (i, results) in fused.iter().enumerate() {
        for (j, groups) in results.iter().enumerate() {
            for (k, impls) in groups.iter().enumerate() {
                let tail = format!("Result{j}G{k}");
                let mut members = common(&[]);
                members.push(Member::U32("tiling_key".into()));
                group_members(impls, &mut members);
                outer.push(Member::Group {
                    ty: format!("AscGraph{i}Schedule{tail}{CLASS_NAME}"),
                    name: format!(
                        "graph{i}_{}",
                        camel_to_snake(&format!("{tail}{CLASS_NAME}"))
                    ),
                    members,
                });
            }
        }
    }
    outer
}

fn print_members(members: &[Member], out: &mut String) {
    for m in members {
        match m {
            Member::U32(n) => {
                out.push_str("  TILING_DATA_FIELD_DEF_T(uint32_t, ");
                out.push_str(n);
                out.push_str(");\n");
            }
            Member::Api { ty, name, .. } | Member::Group { ty, name, .. } => {
                out.push_str("  TILING_DATA_FIELD_DEF_T_STRUCT(");
                out.push_str(ty);
                out.push_str(", ");
                out.push_str(name);
                out.push_str(");\n");
            }
        }
    }
}

fn print_struct(ty: &str, members: &[Member], out: &mut String) {
    out.push_str("BEGIN_TILING_DATA_DEF_T(");
    out.push_str(ty);
    out.push_str(")\n");
    print_members(members, out);
    out.push_str("END_TILING_DATA_DEF_T;\n\n");
}

/// `autofuse_tiling_data.h` for a fused schedule result (GE's `TilingData::Generate`).
pub fn tiling_data_header_fused(kernel: &str, fused: &FusedSchedule<'_>) -> String {
    let outer = layout(fused);
    let mut s = String::with_capacity(2048);
    s.push_str("#ifndef __");
    s.push_str(kernel);
    s.push_str("_Tiling_Data_H__\n#define __");
    s.push_str(kernel);
    s.push_str("_Tiling_Data_H__\n");
    s.push_str(MACROS_AND_INCLUDES);
    s.push('\n');
    for m in &outer {
        if let Member::Group { ty, members, .. } = m {
            print_struct(ty, members, &mut s);
        }
    }
    let ty = format!("{kernel}{CLASS_NAME}");
    print_struct(&ty, &outer, &mut s);
    if ty != "AutofuseTilingData" {
        s.push_str("using AutofuseTilingData = ");
        s.push_str(&ty);
        s.push_str(";\n");
    }
    s.push_str(PERF_STRUCT);
    s.push_str("#endif\n");
    s
}

/// `autofuse_tiling_data.h` for one schedule group whose templates are `impls`.
pub fn tiling_data_header(kernel: &str, impls: &[&AscGraph]) -> String {
    tiling_data_header_fused(kernel, &[vec![vec![impls.to_vec()]]])
}

fn collect_fields(
    members: &[Member],
    prefix: &str,
    offset: &mut usize,
    out: &mut Vec<TilingField>,
) {
    for m in members {
        match m {
            Member::U32(n) => {
                out.push(TilingField {
                    name: format!("{prefix}{n}"),
                    offset: *offset,
                });
                *offset += 4;
            }
            Member::Api { name, fields, .. } => {
                for f in fields {
                    out.push(TilingField {
                        name: format!("{prefix}{name}.{f}"),
                        offset: *offset,
                    });
                    *offset += 4;
                }
            }
            Member::Group { name, members, .. } => {
                collect_fields(members, &format!("{prefix}{name}."), offset, out);
            }
        }
    }
}

/// Every `uint32_t` of the TilingData struct of a fused result, in struct order with offsets.
pub fn tiling_fields_fused(fused: &FusedSchedule<'_>) -> Vec<TilingField> {
    let outer = layout(fused);
    let mut out = Vec::new();
    let mut offset = 0;
    collect_fields(&outer, "", &mut offset, &mut out);
    out
}

/// Every `uint32_t` of the TilingData struct of one schedule group, in order with offsets
/// (the kernel name does not change the layout; it is taken for symmetry with the header).
pub fn tiling_fields(kernel: &str, impls: &[&AscGraph]) -> Vec<TilingField> {
    let _ = kernel;
    tiling_fields_fused(&[vec![vec![impls.to_vec()]]])
}

/// Size in bytes of the TilingData struct (`sizeof(AutofuseTilingData)`).
pub fn tiling_data_size(fields: &[TilingField]) -> usize {
    fields.last().map_or(0, |f| f.offset + 4)
}
