//! The CPU C++ verification target (`<name>_cpu.cpp`): the kernel plan printed as portable
//! C++17 that executes exactly what the NPU kernel addresses.
//!
//! One translation unit per kernel: per ImplGraph a function running its loop nest (the block
//! outer axis bound to the block index, GE's tail arithmetic through the exact size
//! expressions), the UB as one byte array with every container at its offset and queue slots
//! rotating, Loads/Stores as strided copies between GM and UB, each op a small functor of the
//! runtime header over the vectorized region; the entry `ascendir_kernel_<name>` dispatches on
//! the tiling key, `ascendir_run_<name>` runs every block.

use std::collections::BTreeMap;
use std::fmt::Write;

use rustc_hash::FxHashMap;

use super::cexpr;
use super::plan::{KernelPlan, PlanNode, PlanTensor};
use super::text::{put, Piece};
use super::tiling_data::{tiling_data_header, tiling_fields, TilingField};
use ascendir_asc::alloc::ContainerKind;
use ascendir_asc::axis::{AxisId, AxisType};
use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::expr::Expr;
use ascendir_asc::graph::{AscGraph, AttrValue, ComputeType, MemHardware};
use ascendir_ir::DataType;

mod function;
mod nodes;

/// The runtime header every generated kernel includes.
pub const RUNTIME_HEADER: &str = include_str!("../ascendir_cpu_rt.h");

/// A GM tensor of the kernel interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GmArg {
    /// Data / Output node name.
    pub name: String,
    /// Element type.
    pub dtype: DataType,
}

/// A generated CPU kernel.
#[derive(Clone, Debug)]
pub struct CpuKernel {
    /// Kernel name (C identifier).
    pub name: String,
    /// `<name>_cpu.cpp`.
    pub source: String,
    /// `autofuse_tiling_data.h`.
    pub tiling_header: String,
    /// TilingData fields in struct order.
    pub fields: Vec<TilingField>,
    /// Inputs in argument order.
    pub inputs: Vec<GmArg>,
    /// Outputs in argument order.
    pub outputs: Vec<GmArg>,
    /// Templates: (graph name, tiling key).
    pub templates: Vec<(String, i64)>,
    /// Canonical builds: the names the source prints as `#<index>`.
    pub names: Vec<String>,
}

fn unsupported(graph: &str, node: &str, what: String) -> AscError {
    AscError::InvalidArgument(format!(
        "graph '{graph}' node '{node}': {what} (CPU target)"
    ))
}

fn ctype(d: DataType) -> Option<&'static str> {
    Some(match d {
        DataType::FLOAT => "float",
        DataType::FLOAT16 => "ascendir_rt::f16",
        DataType::BF16 => "ascendir_rt::bf16",
        DataType::DOUBLE => "double",
        DataType::INT8 => "int8_t",
        DataType::UINT8 => "uint8_t",
        DataType::INT16 => "int16_t",
        DataType::UINT16 => "uint16_t",
        DataType::INT32 => "int32_t",
        DataType::UINT32 => "uint32_t",
        DataType::INT64 => "int64_t",
        DataType::UINT64 => "uint64_t",
        DataType::BOOL => "bool",
        _ => return None,
    })
}

use super::is_c_ident as is_ident;

fn c_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_ascii_graphic() || c == ' ' => o.push(c),
            c => {
                let mut b = [0u8; 4];
                for x in c.encode_utf8(&mut b).bytes() {
                    let _ = write!(o, "\\{x:03o}");
                }
            }
        }
    }
    o.push('"');
    o
}

fn unary_functor(op: &str) -> Option<&'static str> {
    Some(match op {
        "Abs" => "OpAbs",
        "Exp" => "OpExp",
        "Ln" => "OpLn",
        "Sqrt" => "OpSqrt",
        "Rsqrt" => "OpRsqrt",
        "Reciprocal" => "OpReciprocal",
        "Neg" => "OpNeg",
        "Relu" => "OpRelu",
        "Sigmoid" => "OpSigmoid",
        "Tanh" => "OpTanh",
        "Sign" => "OpSign",
        "LogicalNot" => "OpLogicalNot",
        "Isnan" => "OpIsnan",
        "IsFinite" => "OpIsFinite",
        "Erf" => "OpErf",
        "Gelu" => "OpGelu",
        "Nop" | "Ub2ub" | "Pad" | "RemovePad" | "Cast" | "Transpose" | "Broadcast" => "OpId",
        _ => return None,
    })
}

fn binary_functor(op: &str) -> Option<&'static str> {
    Some(match op {
        "Add" => "OpAdd",
        "Sub" => "OpSub",
        "Mul" => "OpMul",
        "Div" => "OpDiv",
        "TrueDiv" => "OpTrueDiv",
        "FloorDiv" => "OpFloorDiv",
        "Remainder" => "OpRemainder",
        "Pow" => "OpPow",
        "Maximum" => "OpMaximum",
        "Minimum" => "OpMinimum",
        "LogicalAnd" => "OpLogicalAnd",
        "LogicalOr" => "OpLogicalOr",
        "BitwiseAnd" => "OpBitwiseAnd",
        "Eq" => "OpEq",
        "Ne" => "OpNe",
        "Gt" => "OpGt",
        "Ge" => "OpGe",
        "Lt" => "OpLt",
        "Le" => "OpLe",
        _ => return None,
    })
}

fn reduce_kind(op: &str) -> Option<&'static str> {
    Some(match op {
        "Sum" => "RED_SUM",
        "Mean" => "RED_MEAN",
        "Max" => "RED_MAX",
        "Min" => "RED_MIN",
        "Prod" => "RED_PROD",
        "All" => "RED_ALL",
        "Any" => "RED_ANY",
        "ArgMax" => "RED_ARGMAX",
        _ => return None,
    })
}

/// Hoisted size expressions of one function: each distinct expression becomes `e<k>`.
struct Pool {
    exprs: Vec<Expr>,
    index: FxHashMap<u64, Vec<usize>>,
}

/// A size as the function prints it: a constant (`<v>LL`) or a hoisted expression (`e<k>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sz {
    Int(i64),
    Hoisted(usize),
}

impl std::fmt::Display for Sz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sz::Int(v) => write!(f, "{v}LL"),
            Sz::Hoisted(k) => write!(f, "e{k}"),
        }
    }
}

impl Piece for Sz {
    fn put(self, out: &mut String) {
        match self {
            Sz::Int(v) => put!(out; v, "LL"),
            Sz::Hoisted(k) => put!(out; 'e', k),
        }
    }
}

/// One line of the function body from pieces: `emit!(gen; "a", x, "b")` (indented, `\n`).
macro_rules! emit {
    ($g:expr; $($p:expr),* $(,)?) => {{
        let g: &mut Gen<'_> = $g;
        g.indent_line();
        put!(&mut g.body; $($p,)* '\n');
    }};
}
pub(super) use emit;

impl Pool {
    fn new() -> Pool {
        Pool {
            exprs: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    fn get(&mut self, e: &Expr) -> Sz {
        if let Some(v) = e.as_i64() {
            return Sz::Int(v);
        }
        let h = e.hash_value();
        if let Some(ks) = self.index.get(&h) {
            for k in ks {
                if self.exprs[*k] == *e {
                    return Sz::Hoisted(*k);
                }
            }
        }
        let k = self.exprs.len();
        self.exprs.push(e.clone());
        self.index.entry(h).or_default().push(k);
        Sz::Hoisted(k)
    }
}

/// Base-axis ranges `(start, len)` of one loop level, as C++ names.
type Ranges = BTreeMap<usize, (String, String)>;

/// The names a kernel prints: as C strings, or — canonical builds, which identical kernels
/// share — as `#<index>` into a table the caller keeps.
pub(super) struct Labels {
    canonical: bool,
    names: Vec<String>,
}

impl Labels {
    /// The C string literal standing for `name`.
    pub(super) fn label(&mut self, name: &str) -> String {
        if !self.canonical {
            return c_str(name);
        }
        let k = match self.names.iter().position(|n| n == name) {
            Some(k) => k,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        };
        format!("\"#{k}\"")
    }

    /// `name` for a comment (nothing in canonical builds).
    pub(super) fn comment(&self, name: &str) -> String {
        if self.canonical {
            String::new()
        } else {
            name.replace('\n', " ")
        }
    }
}

struct Gen<'a> {
    p: &'a KernelPlan,
    labels: &'a mut Labels,
    pool: Pool,
    body: String,
    indent: usize,
    var: usize,
    /// UB tensor keys: (node position, output) → index.
    tkeys: Vec<(usize, usize)>,
    inputs: &'a [GmArg],
    outputs: &'a [GmArg],
    /// Store node position → output index.
    store_out: FxHashMap<usize, usize>,
}

impl<'a> Gen<'a> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.body.push_str("  ");
        }
        self.body.push_str(s);
        self.body.push('\n');
    }

    /// [`Gen::line`] of formatted text, written in place.
    fn linef(&mut self, a: std::fmt::Arguments<'_>) {
        for _ in 0..self.indent {
            self.body.push_str("  ");
        }
        let _ = std::fmt::Write::write_fmt(&mut self.body, a);
        self.body.push('\n');
    }

    fn fresh(&mut self, stem: &str) -> String {
        self.var += 1;
        format!("{stem}{}", self.var)
    }

    fn size(&mut self, a: AxisId) -> AscResult<Sz> {
        let p = self.p;
        let ax = p.axis(a).ok_or_else(|| {
            AscError::InvalidArgument(format!("graph '{}': axis {a} missing", p.name))
        })?;
        Ok(self.pool.get(&ax.size))
    }

    fn base_pos(&self, b: AxisId) -> Option<usize> {
        self.p.base.iter().position(|x| *x == b)
    }

    /// Statements deriving the base ranges of the loop prefix `loops[..=level]` (the simulator's
    /// `ranges`), with `skip` run when the environment is out of range.
    fn ranges(&mut self, level: usize, skip: &str) -> AscResult<Ranges> {
        let mut idx: Vec<(AxisId, String)> = (0..=level)
            .map(|l| (self.p.loops[l], format!("i{l}")))
            .collect();
        let mut pending = idx.clone();
        let mut rng = Ranges::new();
        let mut guard = 0usize;
        while let Some((a, v)) = pending.pop() {
            guard += 1;
            if guard > 64 * (self.p.axes.len() + 1) {
                break;
            }
            let ax = self.p.axis(a).cloned().ok_or_else(|| {
                AscError::InvalidArgument(format!("graph '{}': axis {a} missing", self.p.name))
            })?;
            match ax.kind {
                AxisType::Original => {
                    let sz = self.size(a)?;
                    self.linef(format_args!("if ({v} >= {sz}) {skip};"));
                    let k = self.base_pos(a).unwrap_or(0);
                    rng.insert(k, (v.clone(), "1LL".into()));
                }
                AxisType::BlockOuter | AxisType::BlockInner => {
                    let (Some(pair), Some(par)) = (ax.split_pair, ax.from.first().copied()) else {
                        continue;
                    };
                    let has =
                        |x: AxisId, idx: &[(AxisId, String)]| idx.iter().any(|(y, _)| *y == x);
                    if has(pair, &idx) && !has(par, &idx) {
                        let (outer, inner) = if ax.kind == AxisType::BlockOuter {
                            (a, pair)
                        } else {
                            (pair, a)
                        };
                        let vo = idx.iter().find(|(y, _)| *y == outer).map(|x| x.1.clone());
                        let vi = idx.iter().find(|(y, _)| *y == inner).map(|x| x.1.clone());
                        let (Some(vo), Some(vi)) = (vo, vi) else {
                            continue;
                        };
                        let si = self.size(inner)?;
                        let sp = self.size(par)?;
                        let x = self.fresh("x");
                        self.linef(format_args!("const int64_t {x} = {vo} * {si} + {vi};"));
                        self.linef(format_args!("if ({x} >= {sp}) {skip};"));
                        idx.push((par, x.clone()));
                        pending.push((par, x));
                    }
                }
                AxisType::Merged => {
                    let mut rem = v.clone();
                    let mut vals = Vec::new();
                    for c in ax.from.iter().rev() {
                        let s = self.size(*c)?;
                        let x = self.fresh("x");
                        let r = self.fresh("x");
                        self.linef(format_args!(
                            "const int64_t {x} = {s} ? {rem} % {s} : 0; const int64_t {r} = {s} ? {rem} / {s} : 0;"
                        ));
                        vals.push((*c, x));
                        rem = r;
                    }
                    self.linef(format_args!("if ({rem} != 0) {skip};"));
                    for (c, x) in vals {
                        idx.push((c, x.clone()));
                        pending.push((c, x));
                    }
                }
                AxisType::TileOuter => {
                    let (Some(pair), Some(par)) = (ax.split_pair, ax.from.first().copied()) else {
                        return Err(unsupported(
                            &self.p.name,
                            &ax.name,
                            "tile axis without a pair".into(),
                        ));
                    };
                    if self.p.axis(par).map(|x| x.kind) != Some(AxisType::Original) {
                        return Err(unsupported(
                            &self.p.name,
                            &ax.name,
                            "tile split of a non-original axis".into(),
                        ));
                    }
                    let ts = self.size(pair)?;
                    let ps = self.size(par)?;
                    let st = self.fresh("x");
                    let ln = self.fresh("x");
                    self.linef(format_args!("const int64_t {st} = {v} * {ts};"));
                    self.linef(format_args!("if ({st} >= {ps}) {skip};"));
                    self.linef(format_args!(
                        "const int64_t {ln} = {ts} < {ps} - {st} ? {ts} : {ps} - {st};"
                    ));
                    let k = self.base_pos(par).unwrap_or(0);
                    rng.insert(k, (st, ln));
                }
                _ => {
                    return Err(unsupported(
                        &self.p.name,
                        &ax.name,
                        format!("axis of kind {} cannot be a loop axis", ax.kind.dump_name()),
                    ))
                }
            }
        }
        Ok(rng)
    }

    /// Indentation of a new line.
    fn indent_line(&mut self) {
        for _ in 0..self.indent {
            self.body.push_str("  ");
        }
    }

    /// `(start, len)` per base axis of tensor `t` in ranges `r` (C++ arrays `<v>_st`, `<v>_ln`).
    fn extents(&mut self, v: &str, t: &PlanTensor, r: &Ranges) {
        /// The extent of one base axis.
        enum Ext<'r> {
            Unit,
            Full(Sz),
            Range(Sz, &'r str, &'r str),
        }
        let p = self.p;
        let nd = p.base.len().max(1);
        let mut ext = Vec::with_capacity(nd);
        for (k, b) in p.base.iter().enumerate() {
            let rep = match t.base_axes.iter().position(|a| a == b) {
                Some(i) => &t.base_repeats[i],
                None => {
                    ext.push(Ext::Unit);
                    continue;
                }
            };
            if rep.as_i64() == Some(1) {
                ext.push(Ext::Unit);
                continue;
            }
            let re = self.pool.get(rep);
            ext.push(match r.get(&k) {
                Some((s, l)) => Ext::Range(re, s, l),
                None => Ext::Full(re),
            });
        }
        if p.base.is_empty() {
            ext.push(Ext::Unit);
        }
        self.indent_line();
        put!(&mut self.body; "const int64_t ", v, "_st[", nd, "] = {");
        for (i, e) in ext.iter().enumerate() {
            if i > 0 {
                self.body.push_str(", ");
            }
            match e {
                Ext::Unit | Ext::Full(_) => self.body.push('0'),
                Ext::Range(re, s, _) => put!(&mut self.body; '(', *re, " == 1 ? 0 : ", *s, ')'),
            }
        }
        self.body.push_str("};\n");
        self.indent_line();
        put!(&mut self.body; "const int64_t ", v, "_ln[", nd, "] = {");
        for (i, e) in ext.iter().enumerate() {
            if i > 0 {
                self.body.push_str(", ");
            }
            match e {
                Ext::Unit => self.body.push('1'),
                Ext::Full(re) => re.put(&mut self.body),
                Ext::Range(re, _, l) => put!(&mut self.body; '(', *re, " == 1 ? 1 : ", *l, ')'),
            }
        }
        self.body.push_str("};\n");
        emit!(self; "(void)", v, "_st;");
    }

    /// UB strides per base axis of `t` (`<v>_us`): the last non-zero vectorized stride of a
    /// vectorized axis over that base axis, else 0.
    fn ub_strides(&mut self, v: &str, t: &PlanTensor) {
        let p = self.p;
        let nd = p.base.len().max(1);
        emit!(self; "int64_t ", v, "_us[", nd, "] = {0};");
        for (k, b) in p.base.iter().enumerate() {
            for (j, vb) in t.vect_base.iter().enumerate() {
                if *vb == Some(*b) {
                    if let Some(s) = t.vect_strides.get(j) {
                        let se = self.pool.get(s);
                        emit!(self; "if (", se, " != 0) ", v, "_us[", k, "] = ", se, ';');
                    }
                }
            }
        }
    }

    /// GM strides per base axis (`<v>_gs`) and the GM start offset (`<v>_go`).
    fn gm_view(&mut self, v: &str, t: &PlanTensor, offset: &str) {
        let p = self.p;
        let nd = p.base.len().max(1);
        self.indent_line();
        put!(&mut self.body; "const int64_t ", v, "_gs[", nd, "] = {");
        for (k, b) in p.base.iter().enumerate() {
            if k > 0 {
                self.body.push_str(", ");
            }
            let s = match t.base_axes.iter().position(|a| a == b) {
                Some(i) => self.pool.get(&t.base_strides[i]),
                None => Sz::Int(0),
            };
            s.put(&mut self.body);
        }
        if p.base.is_empty() {
            self.body.push('0');
        }
        self.body.push_str("};\n");
        emit!(self; "const int64_t ", v, "_go = ", offset, " + ascendir_rt::dot(", nd, ", ", v, "_st, ", v, "_gs);");
    }

    fn tkey(&self, pos: usize, out: usize) -> Option<usize> {
        self.tkeys.iter().position(|k| *k == (pos, out))
    }

    fn nd(&self) -> usize {
        self.p.base.len().max(1)
    }
}

/// Generate the CPU kernel of `impls` (the templates of one kernel, tiling-key order).
pub fn generate(name: &str, impls: &[&AscGraph], block: i64) -> AscResult<CpuKernel> {
    generate_with(name, impls, block, false)
}

/// [`generate`], optionally canonical: the kernel is named `kernel` and node names are printed
/// as `#<index>` into [`CpuKernel::names`], so kernels that differ only in names have the same
/// source (and share one build).
pub fn generate_with(
    name: &str,
    impls: &[&AscGraph],
    block: i64,
    canonical: bool,
) -> AscResult<CpuKernel> {
    if impls.is_empty() {
        return Err(AscError::InvalidArgument("no ImplGraph given".into()));
    }
    let plans: Vec<KernelPlan> = impls
        .iter()
        .map(|g| KernelPlan::build(g, block))
        .collect::<AscResult<_>>()?;
    generate_planned(name, impls, &plans, canonical)
}

/// [`generate_with`] from the plans of `impls` (built with the target's block size, same
/// order).
pub fn generate_planned(
    name: &str,
    impls: &[&AscGraph],
    plans: &[KernelPlan],
    canonical: bool,
) -> AscResult<CpuKernel> {
    if !is_ident(name) {
        return Err(AscError::InvalidArgument(format!(
            "kernel name '{name}' is not a C identifier"
        )));
    }
    if impls.is_empty() || plans.len() != impls.len() {
        return Err(AscError::InvalidArgument(format!(
            "kernel '{name}': {} plans for {} ImplGraphs",
            plans.len(),
            impls.len()
        )));
    }
    for p in plans {
        if !p.is_impl {
            return Err(AscError::InvalidArgument(format!(
                "graph '{}' is not an ImplGraph",
                p.name
            )));
        }
    }
    let (inputs, outputs, _) = function::interface(&plans[0])?;
    let sym = if canonical { "kernel" } else { name };
    let mut labels = Labels {
        canonical,
        names: Vec::new(),
    };
    let fields = tiling_fields(sym, impls);
    let header = tiling_data_header(sym, impls);
    let nodes: usize = plans.iter().map(|p| p.nodes.len()).sum();
    let mut src = String::with_capacity(nodes.saturating_mul(2048));
    let _ = writeln!(
        src,
        "// CPU verification kernel '{sym}' (generated by ascendir)."
    );
    let _ = writeln!(
        src,
        "#include \"ascendir_cpu_rt.h\"\n#include \"autofuse_tiling_data.h\"\n"
    );
    let _ = writeln!(
        src,
        "#define ACHK(...) do {{ int r_ = (__VA_ARGS__); if (r_) return r_; }} while (0)\n"
    );
    let _ = writeln!(src, "namespace {{\n");
    let mut templates = Vec::new();
    for (k, p) in plans.iter().enumerate() {
        let _ = writeln!(
            src,
            "// template '{}', tiling key {}",
            labels.comment(&p.name),
            p.tiling_key
        );
        function::function(p, k, &fields, &inputs, &outputs, &mut labels, &mut src)?;
        src.push('\n');
        templates.push((p.name.clone(), p.tiling_key));
    }
    let _ = writeln!(src, "}}  // namespace\n");
    let _ = writeln!(
        src,
        "extern \"C\" int ascendir_kernel_{sym}(const void *tiling, void *const *inputs, void *const *outputs, void *workspace, uint32_t block_idx, uint8_t *ub, uint32_t ub_size, uint32_t flags) {{"
    );
    let _ = writeln!(src, "  (void)workspace;");
    let _ = writeln!(
        src,
        "  const AutofuseTilingData *t = (const AutofuseTilingData *)tiling;"
    );
    for (k, p) in plans.iter().enumerate() {
        let _ = writeln!(
            src,
            "  if (t->tiling_key == {}u) return impl_{k}(t, inputs, outputs, block_idx, ub, ub_size, flags);",
            p.tiling_key
        );
    }
    let kname = labels.label(name);
    let _ = writeln!(
        src,
        "  return ascendir_rt::fail(ascendir_rt::ERR_KEY, {kname}, \"no template for tiling key \" + std::to_string(t->tiling_key));\n}}\n"
    );
    let atomic = plans.iter().any(|p| {
        p.nodes
            .iter()
            .any(|n| matches!(n.attr("atomic"), Some(AttrValue::Str(s)) if !s.is_empty()))
    });
    let _ = writeln!(
        src,
        "extern \"C\" int ascendir_run_{sym}(const void *tiling, void *const *inputs, void *const *outputs, void *workspace, uint32_t ub_size, uint32_t flags, uint32_t threads) {{"
    );
    let _ = writeln!(
        src,
        "  const AutofuseTilingData *t = (const AutofuseTilingData *)tiling;"
    );
    let _ = writeln!(
        src,
        "  return ascendir_rt::run_blocks(ascendir_kernel_{sym}, tiling, inputs, outputs, workspace, t->block_dim, ub_size, flags, threads, {atomic});\n}}\n"
    );
    let _ = writeln!(
        src,
        "extern \"C\" const char *ascendir_error_{sym}(void) {{ return ascendir_rt::last_error.c_str(); }}"
    );
    Ok(CpuKernel {
        name: sym.to_string(),
        names: labels.names,
        source: src,
        tiling_header: header,
        fields,
        inputs,
        outputs,
        templates,
    })
}
