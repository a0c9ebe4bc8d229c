//! Host-side files: `<name>_tiling_func.cpp` (standalone host tiling, no CANN) with the shipped
//! search routine `ascendir_tiling_rt.h`, and `<name>_infershape.cpp`.
//!
//! The tiling file prints, per template, the solver's model of [`TilingProblem`] as C++ — the
//! UB usage, every variable's bound, `block_dim`, the iteration count and the container sizes,
//! exact rational expressions evaluated like [`ascendir_asc::tiling::compiled::CExpr::eval_int`] — and
//! `AutofuseTiling` runs the same search as [`ascendir_asc::tiling::TilingFunction::call`], so the
//! TilingData it fills equals `asc.compile_tiling`'s.

use std::fmt::Write as _;

use crate::text::put;
use crate::tiling_data::{tiling_fields, TilingField};
use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::expr::{Expr, Func, Kind, Rat, Rel};
use ascendir_asc::graph::{AscGraph, AttrValue};
use ascendir_asc::target::Target;
use ascendir_asc::tiling::{TilingError, TilingProblem, VarKind};
use ascendir_ir::DataType;

/// The search routine every `<name>_tiling_func.cpp` includes.
pub const TILING_RT_HEADER: &str = include_str!("ascendir_tiling_rt.h");

/// File name of [`TILING_RT_HEADER`].
pub const TILING_RT_HEADER_NAME: &str = "ascendir_tiling_rt.h";

/// GE's system workspace reserve added to every kernel's workspace (16 MiB).
pub const SYSTEM_WORKSPACE: i64 = 16 * 1024 * 1024;

fn unsupported(m: String) -> AscError {
    AscError::InvalidArgument(m)
}

/// One kernel input or output: its Data / Output node, index, dtype and symbolic shape.
#[derive(Clone, Debug, PartialEq)]
pub struct IoDesc {
    /// Node name.
    pub name: String,
    /// Position among the kernel's inputs (Data) or outputs (Output).
    pub index: i64,
    /// Element type.
    pub dtype: DataType,
    /// Symbolic shape (the node's view repeats).
    pub shape: Vec<Expr>,
}

/// The inputs and outputs of a kernel, in index order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct KernelIo {
    /// Data nodes.
    pub inputs: Vec<IoDesc>,
    /// Output nodes.
    pub outputs: Vec<IoDesc>,
}

impl KernelIo {
    /// The Data and Output nodes of `g` (a HintGraph gives the original shapes, an ImplGraph
    /// its merged view), ordered by their `index` attribute, then node order.
    pub fn of(g: &AscGraph) -> KernelIo {
        let mut io = KernelIo::default();
        for (pos, n) in g.nodes().iter().enumerate() {
            let which = match n.op_type() {
                "Data" => &mut io.inputs,
                "Output" => &mut io.outputs,
                _ => continue,
            };
            let index = match n.attr.ir_attr.get("index") {
                Some(AttrValue::Int(i)) => *i,
                _ => pos as i64,
            };
            let (dtype, shape) = n
                .outputs
                .first()
                .map(|t| (t.dtype, t.repeats.clone()))
                .unwrap_or((DataType::UNDEFINED, Vec::new()));
            which.push(IoDesc {
                name: n.name.clone(),
                index,
                dtype,
                shape,
            });
        }
        io.inputs.sort_by_key(|d| d.index);
        io.outputs.sort_by_key(|d| d.index);
        io
    }

    /// Where each symbol can be read: `(symbol, input position, dim)` for the first input dim
    /// that is exactly the symbol.
    pub fn symbol_sources(&self) -> Vec<(String, usize, usize)> {
        let mut out: Vec<(String, usize, usize)> = Vec::new();
        for (i, d) in self.inputs.iter().enumerate() {
            for (j, e) in d.shape.iter().enumerate() {
                if let Some(s) = e.as_sym() {
                    if !out.iter().any(|(n, _, _)| n == s) {
                        out.push((s.to_string(), i, j));
                    }
                }
            }
        }
        out
    }
}

fn rat_cxx(r: Rat) -> AscResult<String> {
    let n = i64::try_from(r.numer())
        .map_err(|_| unsupported(format!("constant {r} does not fit 64 bits")))?;
    if r.is_int() {
        return Ok(format!("qv({n})"));
    }
    let d = i64::try_from(r.denom())
        .map_err(|_| unsupported(format!("constant {r} does not fit 64 bits")))?;
    Ok(format!("qc({n}, {d})"))
}

/// `e` as a C++ expression of `ascendir_rt::Q` values; `slot` gives the `int64_t` C++ text of a
/// symbol.
pub fn cxx_expr(e: &Expr, slot: &dyn Fn(&str) -> Option<String>) -> AscResult<String> {
    let mut out = String::new();
    cxx_into(e, slot, &mut out)?;
    Ok(out)
}

/// [`cxx_expr`] appended to `out` (no text is built twice: nested calls print in place).
fn cxx_into(e: &Expr, slot: &dyn Fn(&str) -> Option<String>, out: &mut String) -> AscResult<()> {
    match e.kind() {
        Kind::Num(r) => out.push_str(&rat_cxx(*r)?),
        Kind::Sym(s) => {
            let v = slot(s).ok_or_else(|| unsupported(format!("symbol '{s}' has no value")))?;
            put!(out; "qv(", &v, ')');
        }
        Kind::Add(c, ts) => {
            let c = rat_cxx(*c)?;
            for _ in ts {
                out.push_str("qadd(");
            }
            out.push_str(&c);
            for (t, k) in ts {
                out.push_str(", ");
                if *k == Rat::from(1) {
                    cxx_into(t, slot, out)?;
                } else {
                    // The term is checked before its coefficient.
                    let kt = rat_cxx(*k);
                    put!(out; "qmul(", kt.as_deref().unwrap_or(""), ", ");
                    cxx_into(t, slot, out)?;
                    kt?;
                    out.push(')');
                }
                out.push(')');
            }
        }
        Kind::Mul(c, fs) => {
            let c = rat_cxx(*c)?;
            for _ in fs {
                out.push_str("qmul(");
            }
            out.push_str(&c);
            for (b, x) in fs {
                let ex = x
                    .as_num()
                    .filter(|r| r.is_int())
                    .and_then(|r| i64::try_from(r.numer()).ok())
                    .ok_or_else(|| unsupported(format!("non-integer exponent in {e}")))?;
                out.push_str(", ");
                if ex == 1 {
                    cxx_into(b, slot, out)?;
                } else {
                    out.push_str("qpow(");
                    cxx_into(b, slot, out)?;
                    put!(out; ", ", ex, ')');
                }
                out.push(')');
            }
        }
        Kind::Func(f, args) => {
            let name = match f {
                Func::Ceiling => "qceil",
                Func::Floor => "qfloor",
                Func::Abs => "qabs",
                Func::Mod => "qmod",
                Func::Max => "qmax",
                Func::Min => "qmin",
            };
            let chain = matches!(f, Func::Max | Func::Min);
            // Max / Min nest left to right: qmax(qmax(a, b), c).
            let opens = if chain {
                args.len().saturating_sub(1)
            } else {
                1
            };
            for _ in 0..opens {
                put!(out; name, '(');
            }
            for (i, x) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                cxx_into(x, slot, out)?;
                if chain && i > 0 {
                    out.push(')');
                }
            }
            // Arity is checked after the arguments are printed.
            match (f, args.len()) {
                (Func::Ceiling | Func::Floor | Func::Abs, 1) | (Func::Mod, 2) => out.push(')'),
                (Func::Max | Func::Min, n) if n > 0 => {}
                (Func::Mod, _) => {
                    return Err(unsupported(format!("Mod takes two arguments in {e}")))
                }
                (Func::Max | Func::Min, _) => {
                    return Err(unsupported(format!("empty {} in {e}", f.name())))
                }
                _ => {
                    return Err(unsupported(format!(
                        "{} takes one argument in {e}",
                        f.name()
                    )))
                }
            }
        }
        Kind::Rel(r, a, b) => {
            let name = match r {
                Rel::Eq => "qeq",
                Rel::Ne => "qne",
                Rel::Lt => "qrlt",
                Rel::Le => "qrle",
            };
            put!(out; name, '(');
            cxx_into(a, slot, out)?;
            out.push_str(", ");
            cxx_into(b, slot, out)?;
            out.push(')');
        }
    }
    Ok(())
}

/// The union of the templates' shape symbols, first-seen order (the `AutofuseTiling`
/// parameters and `asc.compile_tiling(...).symbols`).
pub fn tiling_symbols(problems: &[TilingProblem]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in problems {
        for s in &p.shape_symbols {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
    }
    out
}

fn template_cxx(p: &TilingProblem, k: usize, out: &mut String) -> AscResult<()> {
    let slots = p.slot_names();
    let slot = |s: &str| slots.iter().position(|x| x == s).map(|i| format!("v[{i}]"));
    let q = |e: &Expr| cxx_expr(e, &slot);
    let nv = p.vars.len();
    let _ = writeln!(out, "namespace tpl{k} {{\nusing namespace ascendir_rt;");
    let tiles: Vec<String> = p
        .vars
        .iter()
        .map(|v| if v.kind == VarKind::Tile { "1" } else { "0" }.to_string())
        .chain(std::iter::once("0".to_string()))
        .collect();
    let aligns: Vec<String> = p
        .vars
        .iter()
        .map(|v| v.align.to_string())
        .chain(std::iter::once("0".to_string()))
        .collect();
    let names: Vec<&str> = slots.iter().map(String::as_str).collect();
    let _ = writeln!(out, "// slots: {}", names.join(", "));
    let _ = writeln!(out, "const int kIsTile[] = {{{}}};", tiles.join(", "));
    let _ = writeln!(out, "const int64_t kAlign[] = {{{}}};", aligns.join(", "));
    let _ = writeln!(
        out,
        "int64_t Ub(const int64_t *v) {{ return qint({}); }}",
        q(&p.ub_expr)?
    );
    let _ = writeln!(
        out,
        "int64_t Upper(int k, const int64_t *v) {{\n  switch (k) {{"
    );
    for (i, var) in p.vars.iter().enumerate() {
        let _ = writeln!(out, "    case {i}: return qint({});", q(&var.upper)?);
    }
    let _ = writeln!(out, "    default: throw Overflow();\n  }}\n}}");
    let _ = writeln!(
        out,
        "int64_t BlockDim(const int64_t *v) {{ return qint({}); }}",
        q(&p.block_dim_expr)?
    );
    let _ = writeln!(
        out,
        "int64_t Iters(const int64_t *v) {{ return qint({}); }}",
        q(&p.iters_expr)?
    );
    let _ = writeln!(
        out,
        "int64_t Cont(int c, const int64_t *v) {{\n  switch (c) {{"
    );
    for (i, (name, e, _)) in p.container_exprs.iter().enumerate() {
        let _ = writeln!(out, "    case {i}: return qint({});  // {name}", q(e)?);
    }
    let _ = writeln!(out, "    default: throw Overflow();\n  }}\n}}");
    let _ = writeln!(
        out,
        "const Problem kProblem = {{{}, {nv}, {}, kIsTile, kAlign, Ub, Upper, BlockDim, Iters, {}, Cont}};",
        p.tiling_key,
        slots.len(),
        p.container_exprs.len()
    );
    let _ = writeln!(out, "}}  // namespace tpl{k}\n");
    Ok(())
}

fn has_field(fields: &[TilingField], name: &str) -> bool {
    fields.iter().any(|f| f.name == name)
}

/// Bytes of the Workspace tensors of the first template, as a C++ expression over the
/// TilingData fields (GE: workspace tensors plus the system reserve).
fn workspace_cxx(g: &AscGraph, fields: &[TilingField]) -> AscResult<String> {
    let slot = |s: &str| has_field(fields, s).then(|| format!("(int64_t)t->{s}"));
    let mut acc = format!("qv({SYSTEM_WORKSPACE})");
    for n in g.nodes() {
        if n.op_type() != "Workspace" {
            continue;
        }
        let Some(t) = n.outputs.first() else { continue };
        let bytes = t.dtype.bit_width().map(|b| (b as i64 + 7) / 8).unwrap_or(1);
        let mut e = Expr::int(bytes.max(1));
        for r in &t.repeats {
            e = Expr::mul(&e, r);
        }
        acc = format!("qadd({acc}, {})", cxx_expr(&e, &slot)?);
    }
    Ok(acc)
}

/// `<name>_tiling_func.cpp` for the templates `impls` (allocated ImplGraphs, `tiling_key`
/// order) of kernel `name`, with the block size of `target` baked into the UB model.
pub fn tiling_func_source(name: &str, impls: &[&AscGraph], target: &Target) -> AscResult<String> {
    let fields = tiling_fields(name, impls);
    tiling_func_source_with(name, impls, &fields, &|k| {
        TilingProblem::new(impls[k], target)
    })
}

/// [`tiling_func_source`] with the tiling model of template `k` from `problem(k)` (the
/// [`TilingProblem`] of `impls[k]` on the target) and the TilingData `fields` of `impls`.
pub fn tiling_func_source_with(
    name: &str,
    impls: &[&AscGraph],
    fields: &[TilingField],
    problem: &dyn Fn(usize) -> Result<TilingProblem, TilingError>,
) -> AscResult<String> {
    if impls.is_empty() {
        return Err(unsupported(format!("kernel '{name}': no ImplGraph")));
    }
    let problems: Vec<TilingProblem> = (0..impls.len())
        .map(problem)
        .collect::<Result<_, _>>()
        .map_err(|e| AscError::InvalidArgument(format!("kernel '{name}': {}", e.message)))?;
    let symbols = tiling_symbols(&problems);
    let mut s = String::with_capacity(8192);
    let _ = writeln!(
        s,
        "// {name}_tiling_func.cpp: host tiling of kernel {name} (generated by ascendir).\n\
         // Standalone: needs only autofuse_tiling_data.h and {TILING_RT_HEADER_NAME}.\n\
         #include <stdint.h>\n#include <string.h>\n\n\
         #include \"autofuse_tiling_data.h\"\n#include \"{TILING_RT_HEADER_NAME}\"\n"
    );
    for (k, p) in problems.iter().enumerate() {
        template_cxx(p, k, &mut s)?;
    }
    let params: Vec<String> = symbols.iter().map(|x| format!("uint32_t {x}")).collect();
    let args: Vec<&str> = symbols.iter().map(String::as_str).collect();
    let lead = |v: &[String]| {
        if v.is_empty() {
            String::new()
        } else {
            format!("{}, ", v.join(", "))
        }
    };
    let _ = writeln!(
        s,
        "extern \"C\" uint32_t GetTilingDataSize() {{ return (uint32_t)sizeof(AutofuseTilingData); }}\n"
    );
    let _ = writeln!(
        s,
        "extern \"C\" uint32_t GetWorkspaceSize(const AutofuseTilingData *t) {{\n  \
         using namespace ascendir_rt;\n  (void)t;\n  try {{\n    return (uint32_t)qint({});\n  \
         }} catch (const Overflow &) {{\n    return 0;\n  }}\n}}\n",
        workspace_cxx(impls[0], fields)?
    );
    // The shared solve.
    let _ = writeln!(
        s,
        "static ascendir_rt::Result Solve({}uint32_t aiv_num, uint32_t ub_size) {{",
        lead(&params)
    );
    let sym_vals: Vec<String> = symbols
        .iter()
        .map(|x| format!("(int64_t){x}"))
        .chain(std::iter::once("0".to_string()))
        .collect();
    let _ = writeln!(
        s,
        "  const int64_t sym[] = {{{}}};\n  (void)sym;",
        sym_vals.join(", ")
    );
    let mut shapes = Vec::new();
    for (k, p) in problems.iter().enumerate() {
        let vals: Vec<String> = p
            .shape_symbols
            .iter()
            .map(|x| {
                let i = symbols.iter().position(|y| y == x).unwrap_or(0);
                format!("sym[{i}]")
            })
            .chain(std::iter::once("0".to_string()))
            .collect();
        let _ = writeln!(s, "  const int64_t shape{k}[] = {{{}}};", vals.join(", "));
        shapes.push(format!("shape{k}"));
    }
    let probs: Vec<String> = (0..problems.len())
        .map(|k| format!("&tpl{k}::kProblem"))
        .collect();
    let _ = writeln!(
        s,
        "  const ascendir_rt::Problem *problems[] = {{{}}};\n  \
         const int64_t *const shapes[] = {{{}}};\n  \
         return ascendir_rt::SolveBest(problems, {}, shapes, (int64_t)ub_size, (int64_t)aiv_num);\n}}\n",
        probs.join(", "),
        shapes.join(", "),
        problems.len()
    );
    // AutofuseTiling.
    let _ = writeln!(
        s,
        "// Returns 0 and fills the TilingData, or 1 (UB cannot be met), 2 (cores), 3 (overflow).\n\
         extern \"C\" int64_t AutofuseTiling({}AutofuseTilingData *t, uint32_t *workspaceSize, \
         uint32_t *blockDim, uint32_t aiv_num, uint32_t ub_size) {{",
        lead(&params)
    );
    let _ = writeln!(
        s,
        "  ascendir_rt::Result r = Solve({}aiv_num, ub_size);\n  \
         if (r.status != ascendir_rt::kOk) return r.status;\n  \
         memset(t, 0, sizeof(*t));\n  \
         t->block_dim = (uint32_t)r.block_dim;\n  t->corenum = aiv_num;\n  \
         t->ub_size = ub_size;\n  t->hbm_size = 0;\n  t->tiling_key = (uint32_t)r.tiling_key;",
        lead(&args.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    );
    for x in &symbols {
        if has_field(fields, x) {
            let _ = writeln!(s, "  t->{x} = {x};");
        }
    }
    let _ = writeln!(s, "  switch (r.index) {{");
    for (k, p) in problems.iter().enumerate() {
        let _ = writeln!(s, "    case {k}:");
        for (i, v) in p.vars.iter().enumerate() {
            if has_field(fields, &v.name) {
                let _ = writeln!(s, "      t->{} = (uint32_t)r.vals[{i}];", v.name);
            }
        }
        let mut done: Vec<&str> = Vec::new();
        for (i, (cname, _, _)) in p.container_exprs.iter().enumerate() {
            if has_field(fields, cname) && !done.contains(&cname.as_str()) {
                let _ = writeln!(s, "      t->{cname} = (uint32_t)r.cont[{i}];");
                done.push(cname);
            }
        }
        let _ = writeln!(s, "      break;");
    }
    let _ = writeln!(
        s,
        "    default:\n      break;\n  }}\n  \
         *blockDim = (uint32_t)r.block_dim;\n  *workspaceSize = GetWorkspaceSize(t);\n  \
         return 0;\n}}\n"
    );
    let _ = writeln!(
        s,
        "// The tiling key of the best template, or -1 when none fits.\n\
         extern \"C\" int64_t FindBestTilingKey({}uint32_t aiv_num, uint32_t ub_size) {{\n  \
         ascendir_rt::Result r = Solve({}aiv_num, ub_size);\n  \
         return r.status == ascendir_rt::kOk ? r.tiling_key : -1;\n}}",
        lead(&params),
        lead(&args.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    );
    Ok(s)
}

/// `<name>_infershape.cpp`: `InferShape(input_dims, output_dims)` computes every output dim
/// from the output's symbolic shape, each symbol read from the first input dim that is exactly
/// it (an output dim equal to an input dim is copied). Returns 0, or -1 when a symbol has no
/// source.
pub fn infershape_source(name: &str, io: &KernelIo) -> AscResult<String> {
    let sources = io.symbol_sources();
    let mut s = String::with_capacity(2048);
    let _ = writeln!(
        s,
        "// {name}_infershape.cpp: output shapes of kernel {name} (generated by ascendir).\n\
         #include <stdint.h>\n\n#include \"{TILING_RT_HEADER_NAME}\"\n"
    );
    let _ = writeln!(s, "// Inputs:");
    for (i, d) in io.inputs.iter().enumerate() {
        let dims: Vec<String> = d.shape.iter().map(|e| e.to_string()).collect();
        let _ = writeln!(s, "//   {i} {}: [{}]", d.name, dims.join(", "));
    }
    let _ = writeln!(s, "// Outputs:");
    for (i, d) in io.outputs.iter().enumerate() {
        let dims: Vec<String> = d.shape.iter().map(|e| e.to_string()).collect();
        let _ = writeln!(s, "//   {i} {}: [{}]", d.name, dims.join(", "));
    }
    let _ = writeln!(
        s,
        "extern \"C\" int64_t InferShape(const int64_t *const *input_dims, int64_t *const *output_dims) {{\n  \
         using namespace ascendir_rt;\n  (void)input_dims;\n  try {{"
    );
    for (sym, i, j) in &sources {
        let _ = writeln!(
            s,
            "    const int64_t {sym} = input_dims[{i}][{j}];\n    (void){sym};"
        );
    }
    let slot = |x: &str| {
        sources
            .iter()
            .any(|(n, _, _)| n == x)
            .then(|| x.to_string())
    };
    for (o, d) in io.outputs.iter().enumerate() {
        for (j, e) in d.shape.iter().enumerate() {
            let copy = io
                .inputs
                .iter()
                .enumerate()
                .find_map(|(i, inp)| inp.shape.iter().position(|x| x == e).map(|k| (i, k)));
            let value = match (e.as_num(), copy) {
                (Some(_), _) => format!("qint({})", cxx_expr(e, &slot)?),
                (None, Some((i, k))) => format!("input_dims[{i}][{k}]"),
                (None, None) => match cxx_expr(e, &slot) {
                    Ok(c) => format!("qint({c})"),
                    Err(_) => {
                        let _ = writeln!(
                            s,
                            "    return -1;  // output {o} dim {j} ({e}) has a symbol no input dim gives"
                        );
                        continue;
                    }
                },
            };
            let _ = writeln!(s, "    output_dims[{o}][{j}] = {value};");
        }
    }
    let _ = writeln!(
        s,
        "  }} catch (const Overflow &) {{\n    return -1;\n  }}\n  return 0;\n}}"
    );
    Ok(s)
}
