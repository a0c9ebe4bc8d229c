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
use super::tiling_data::{tiling_data_header, tiling_fields, TilingField};
use crate::alloc::ContainerKind;
use crate::axis::{AxisId, AxisType};
use crate::error::{AscError, AscResult};
use crate::expr::Expr;
use crate::graph::{AscGraph, AttrValue, ComputeType, MemHardware};
use ascendir_ir::DataType;

/// The runtime header every generated kernel includes.
pub const RUNTIME_HEADER: &str = include_str!("ascendir_cpu_rt.h");

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

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

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

impl Pool {
    fn new() -> Pool {
        Pool {
            exprs: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    fn get(&mut self, e: &Expr) -> String {
        if let Some(v) = e.as_i64() {
            return format!("{v}LL");
        }
        let h = e.hash_value();
        if let Some(ks) = self.index.get(&h) {
            for k in ks {
                if self.exprs[*k] == *e {
                    return format!("e{k}");
                }
            }
        }
        let k = self.exprs.len();
        self.exprs.push(e.clone());
        self.index.entry(h).or_default().push(k);
        format!("e{k}")
    }
}

/// Base-axis ranges `(start, len)` of one loop level, as C++ names.
type Ranges = BTreeMap<usize, (String, String)>;

struct Gen<'a> {
    p: &'a KernelPlan,
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

    fn fresh(&mut self, stem: &str) -> String {
        self.var += 1;
        format!("{stem}{}", self.var)
    }

    fn size(&mut self, a: AxisId) -> AscResult<String> {
        let ax = self.p.axis(a).ok_or_else(|| {
            AscError::InvalidArgument(format!("graph '{}': axis {a} missing", self.p.name))
        })?;
        let e = ax.size.clone();
        Ok(self.pool.get(&e))
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
                    self.line(&format!("if ({v} >= {sz}) {skip};"));
                    let k = self.base_pos(a).unwrap_or(0);
                    rng.insert(k, (v.clone(), "1LL".into()));
                }
                AxisType::BlockOuter | AxisType::BlockInner => {
                    let (Some(pair), Some(par)) = (ax.split_pair, ax.from.first().copied())
                    else {
                        continue;
                    };
                    let has = |x: AxisId, idx: &[(AxisId, String)]| idx.iter().any(|(y, _)| *y == x);
                    if has(pair, &idx) && !has(par, &idx) {
                        let (outer, inner) = if ax.kind == AxisType::BlockOuter {
                            (a, pair)
                        } else {
                            (pair, a)
                        };
                        let vo = idx.iter().find(|(y, _)| *y == outer).map(|x| x.1.clone());
                        let vi = idx.iter().find(|(y, _)| *y == inner).map(|x| x.1.clone());
                        let (Some(vo), Some(vi)) = (vo, vi) else { continue };
                        let si = self.size(inner)?;
                        let sp = self.size(par)?;
                        let x = self.fresh("x");
                        self.line(&format!("const int64_t {x} = {vo} * {si} + {vi};"));
                        self.line(&format!("if ({x} >= {sp}) {skip};"));
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
                        self.line(&format!(
                            "const int64_t {x} = {s} ? {rem} % {s} : 0; const int64_t {r} = {s} ? {rem} / {s} : 0;"
                        ));
                        vals.push((*c, x));
                        rem = r;
                    }
                    self.line(&format!("if ({rem} != 0) {skip};"));
                    for (c, x) in vals {
                        idx.push((c, x.clone()));
                        pending.push((c, x));
                    }
                }
                AxisType::TileOuter => {
                    let (Some(pair), Some(par)) = (ax.split_pair, ax.from.first().copied())
                    else {
                        return Err(unsupported(&self.p.name, &ax.name, "tile axis without a pair".into()));
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
                    self.line(&format!("const int64_t {st} = {v} * {ts};"));
                    self.line(&format!("if ({st} >= {ps}) {skip};"));
                    self.line(&format!(
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

    /// `(start, len)` per base axis of tensor `t` in ranges `r` (C++ arrays `<v>_st`, `<v>_ln`).
    fn extents(&mut self, v: &str, t: &PlanTensor, r: &Ranges) {
        let nd = self.p.base.len().max(1);
        let mut st = Vec::with_capacity(nd);
        let mut ln = Vec::with_capacity(nd);
        for k in 0..self.p.base.len() {
            let b = self.p.base[k];
            if !t.base_axes.contains(&b) {
                st.push("0".to_string());
                ln.push("1".to_string());
                continue;
            }
            let rep = KernelPlan::repeat(t, b);
            if rep.as_i64() == Some(1) {
                st.push("0".to_string());
                ln.push("1".to_string());
                continue;
            }
            let re = self.pool.get(&rep);
            match r.get(&k) {
                Some((s, l)) => {
                    st.push(format!("({re} == 1 ? 0 : {s})"));
                    ln.push(format!("({re} == 1 ? 1 : {l})"));
                }
                None => {
                    st.push("0".to_string());
                    ln.push(re);
                }
            }
        }
        if self.p.base.is_empty() {
            st.push("0".into());
            ln.push("1".into());
        }
        self.line(&format!("const int64_t {v}_st[{nd}] = {{{}}};", st.join(", ")));
        self.line(&format!("const int64_t {v}_ln[{nd}] = {{{}}};", ln.join(", ")));
        self.line(&format!("(void){v}_st;"));
    }

    /// UB strides per base axis of `t` (`<v>_us`): the last non-zero vectorized stride of a
    /// vectorized axis over that base axis, else 0.
    fn ub_strides(&mut self, v: &str, t: &PlanTensor) {
        let nd = self.p.base.len().max(1);
        self.line(&format!("int64_t {v}_us[{nd}] = {{0}};"));
        for (k, b) in self.p.base.clone().iter().enumerate() {
            for (j, vb) in t.vect_base.iter().enumerate() {
                if *vb == Some(*b) {
                    if let Some(s) = t.vect_strides.get(j) {
                        let se = self.pool.get(s);
                        self.line(&format!("if ({se} != 0) {v}_us[{k}] = {se};"));
                    }
                }
            }
        }
    }

    /// GM strides per base axis (`<v>_gs`) and the GM start offset (`<v>_go`).
    fn gm_view(&mut self, v: &str, t: &PlanTensor, offset: &str) {
        let nd = self.p.base.len().max(1);
        let mut gs = Vec::new();
        for b in self.p.base.clone() {
            let s = KernelPlan::gm_stride(t, b);
            gs.push(self.pool.get(&s));
        }
        if gs.is_empty() {
            gs.push("0".into());
        }
        self.line(&format!("const int64_t {v}_gs[{nd}] = {{{}}};", gs.join(", ")));
        self.line(&format!(
            "const int64_t {v}_go = {offset} + ascendir_rt::dot({nd}, {v}_st, {v}_gs);"
        ));
    }

    fn tkey(&self, pos: usize, out: usize) -> Option<usize> {
        self.tkeys.iter().position(|k| *k == (pos, out))
    }

    fn nd(&self) -> usize {
        self.p.base.len().max(1)
    }

    /// An input operand of node `n`: a UB tensor read or a scalar constant. Emits `<v>` (typed
    /// pointer), `<v>_s` (strides over the iteration space `space`) and returns its C type.
    fn operand(
        &mut self,
        n: &PlanNode,
        slot: usize,
        v: &str,
        r: &Ranges,
        space: &str,
    ) -> AscResult<&'static str> {
        let p = self.p;
        let Some(Some((q, o))) = n.inputs.get(slot).cloned() else {
            return Err(unsupported(&p.name, &n.name, format!("input {slot} is not connected")));
        };
        let prod = &p.nodes[q];
        let t = prod
            .outputs
            .get(o)
            .ok_or_else(|| unsupported(&p.name, &n.name, format!("input {slot} has no tensor")))?;
        let ct = ctype(t.dtype).ok_or_else(|| {
            unsupported(&p.name, &n.name, format!("input dtype {} unsupported", t.dtype.name()))
        })?;
        let nd = self.nd();
        if prod.op_type == "Scalar" {
            let text = match prod.attr("value") {
                Some(AttrValue::Str(s)) => s.clone(),
                Some(AttrValue::Int(i)) => i.to_string(),
                Some(AttrValue::Float(f)) => format!("{f:?}"),
                Some(AttrValue::Bool(b)) => (*b as i32).to_string(),
                _ => String::new(),
            };
            let lit = scalar_literal(&text, t.dtype).ok_or_else(|| {
                unsupported(
                    &p.name,
                    &n.name,
                    format!("Scalar '{}' has value {text:?}, not a {}", prod.name, t.dtype.name()),
                )
            })?;
            self.line(&format!(
                "const {ct} {v}_val = ascendir_rt::store_as<{ct}>({lit}); const {ct} *{v} = &{v}_val;"
            ));
            self.line(&format!("const int64_t {v}_s[{nd}] = {{0}};"));
            return Ok(ct);
        }
        let Some(tk) = self.tkey(q, o) else {
            return Err(unsupported(
                &p.name,
                &n.name,
                format!("input from '{}' ({}) is not a UB tensor", prod.name, prod.op_type),
            ));
        };
        self.extents(v, t, r);
        self.ub_strides(v, t);
        let name = c_str(&n.name);
        self.line(&format!(
            "ACHK(cx.vect({v}_ln, {v}_us, {nd}, {name}));"
        ));
        self.line(&format!(
            "const {ct} *{v} = (const {ct} *)cx.read({tk}, {v}_ln, {v}_us, {nd}, sizeof({ct}), {name}); if (!{v}) return cx.err;"
        ));
        // Strides over the iteration space: 0 where this operand has extent 1 (broadcast).
        self.line(&format!("int64_t {v}_s[{nd}];"));
        self.line(&format!(
            "ACHK(ascendir_rt::bcast({nd}, {v}_ln, {v}_us, {space}, {v}_s, {name}));"
        ));
        Ok(ct)
    }

    fn node(&mut self, pos: usize, r: &Ranges) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let nd = self.nd();
        let name = c_str(&n.name);
        let t = n
            .outputs
            .first()
            .ok_or_else(|| unsupported(&p.name, &n.name, "no output".into()))?;
        let oct = ctype(t.dtype).ok_or_else(|| {
            unsupported(&p.name, &n.name, format!("dtype {} unsupported", t.dtype.name()))
        })?;
        self.line(&format!("{{  // {} ({})", n.name.replace('\n', " "), n.op_type));
        self.indent += 1;
        let offset = match n.attr("offset") {
            Some(AttrValue::Expr(e)) => self.pool.get(e),
            Some(AttrValue::Int(i)) => format!("{i}LL"),
            _ => "0".to_string(),
        };
        match n.compute_type {
            ComputeType::Load => {
                let Some(Some((q, _))) = n.inputs.first().cloned() else {
                    return Err(unsupported(&p.name, &n.name, "Load without input".into()));
                };
                let src = &p.nodes[q];
                let di = self
                    .inputs
                    .iter()
                    .position(|a| a.name == src.name && src.op_type == "Data")
                    .ok_or_else(|| {
                        unsupported(
                            &p.name,
                            &n.name,
                            format!("Load reads '{}' ({}), only Data inputs run", src.name, src.op_type),
                        )
                    })?;
                let gct = ctype(self.inputs[di].dtype).unwrap_or("float");
                self.extents("o", t, r);
                self.gm_view("o", t, &offset);
                self.write_target(pos, oct, &name)?;
                self.line(&format!(
                    "ascendir_rt::map1({nd}, o_ln, o, o_s, (const {gct} *)gin[{di}] + o_go, o_gs, ascendir_rt::OpId());"
                ));
            }
            ComputeType::Store | ComputeType::ReduceStore => {
                let oi = *self
                    .store_out
                    .get(&pos)
                    .ok_or_else(|| unsupported(&p.name, &n.name, "Store without target".into()))?;
                let gct = ctype(self.outputs[oi].dtype).unwrap_or("float");
                self.extents("o", t, r);
                self.gm_view("o", t, &offset);
                let act = self.operand(n, 0, "a", r, "o_ln")?;
                let _ = act;
                let atomic = match n.attr("atomic") {
                    Some(AttrValue::Str(s)) if !s.is_empty() => Some(s.clone()),
                    _ => None,
                };
                match atomic.as_deref() {
                    None => self.line(&format!(
                        "ascendir_rt::map1({nd}, o_ln, ({gct} *)gout[{oi}] + o_go, o_gs, a, a_s, ascendir_rt::OpId());"
                    )),
                    Some(op @ ("add" | "max" | "min")) => {
                        let f = match op {
                            "add" => "OpAdd",
                            "max" => "OpMaximum",
                            _ => "OpMinimum",
                        };
                        self.line(&format!(
                            "ascendir_rt::combine1({nd}, o_ln, ({gct} *)gout[{oi}] + o_go, o_gs, a, a_s, ascendir_rt::{f}());"
                        ))
                    }
                    Some(other) => {
                        return Err(unsupported(
                            &p.name,
                            &n.name,
                            format!("unknown atomic store operation '{other}'"),
                        ))
                    }
                }
            }
            ComputeType::Reduce => self.reduce(pos, r, oct, &name)?,
            ComputeType::Concat => {
                self.extents("o", t, r);
                let k = n.inputs.len();
                let mut names = Vec::new();
                for slot in 0..k {
                    let v = format!("c{slot}");
                    // Concat operands keep their own extents (no broadcast check).
                    self.concat_operand(n, slot, &v, r)?;
                    names.push(v);
                }
                self.write_target(pos, oct, &name)?;
                self.line("int axis = -1;");
                for v in &names {
                    self.line(&format!(
                        "for (int k = 0; k < {nd} && axis < 0; ++k) if ({v}_ln[k] != o_ln[k]) axis = k;"
                    ));
                }
                self.line("if (axis < 0) axis = 0;");
                self.line("int64_t at = 0;");
                for v in &names {
                    self.line(&format!(
                        "ascendir_rt::map1({nd}, {v}_ln, o + at * o_us[axis], o_s, {v}, {v}_us, ascendir_rt::OpId()); at += {v}_ln[axis];"
                    ));
                }
            }
            ComputeType::Gather => {
                return Err(unsupported(&p.name, &n.name, "Gather is not supported yet".into()))
            }
            _ => {
                self.extents("o", t, r);
                let ty = n.op_type.as_str();
                let k = n.inputs.len();
                let mut ops = Vec::new();
                for slot in 0..k {
                    let v = format!("a{slot}");
                    self.operand(n, slot, &v, r, "o_ln")?;
                    ops.push(v);
                }
                self.write_target(pos, oct, &name)?;
                let f = if n.compute_type == ComputeType::Broadcast {
                    Some("ascendir_rt::OpId()".to_string())
                } else {
                    None
                };
                let call = match (f, k) {
                    (Some(f), 1) => format!("ascendir_rt::map1({nd}, o_ln, o, o_s, a0, a0_s, {f});"),
                    (None, 1) if unary_functor(ty).is_some() => format!(
                        "ascendir_rt::map1({nd}, o_ln, o, o_s, a0, a0_s, ascendir_rt::{}());",
                        unary_functor(ty).unwrap_or("OpId")
                    ),
                    (None, 1) if ty == "LeakyRelu" => format!(
                        "ascendir_rt::map1({nd}, o_ln, o, o_s, a0, a0_s, ascendir_rt::OpLeakyRelu{{{}}});",
                        float_attr(n, "negative_slope", 0.01)
                    ),
                    (None, 2) if binary_functor(ty).is_some() => format!(
                        "ascendir_rt::map2({nd}, o_ln, o, o_s, a0, a0_s, a1, a1_s, ascendir_rt::{}());",
                        binary_functor(ty).unwrap_or("OpAdd")
                    ),
                    (None, 2) if ty == "Axpy" => format!(
                        "ascendir_rt::map2({nd}, o_ln, o, o_s, a0, a0_s, a1, a1_s, ascendir_rt::OpAxpy{{{}}});",
                        float_attr(n, "alpha", 1.0)
                    ),
                    (None, 3) if ty == "Where" || ty == "Select" => format!(
                        "ascendir_rt::map3({nd}, o_ln, o, o_s, a0, a0_s, a1, a1_s, a2, a2_s, ascendir_rt::OpWhere());"
                    ),
                    (None, 3) if ty == "ClipByValue" => format!(
                        "ascendir_rt::map3({nd}, o_ln, o, o_s, a0, a0_s, a1, a1_s, a2, a2_s, ascendir_rt::OpClip());"
                    ),
                    _ => {
                        return Err(unsupported(
                            &p.name,
                            &n.name,
                            format!("op {ty} with {k} inputs is not supported"),
                        ))
                    }
                };
                self.line(&call);
            }
        }
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn concat_operand(&mut self, n: &PlanNode, slot: usize, v: &str, r: &Ranges) -> AscResult<()> {
        let p = self.p;
        let Some(Some((q, o))) = n.inputs.get(slot).cloned() else {
            return Err(unsupported(&p.name, &n.name, format!("input {slot} is not connected")));
        };
        let Some(tk) = self.tkey(q, o) else {
            return Err(unsupported(&p.name, &n.name, format!("input {slot} is not a UB tensor")));
        };
        let t = &p.nodes[q].outputs[o];
        let ct = ctype(t.dtype).ok_or_else(|| unsupported(&p.name, &n.name, "dtype".into()))?;
        let nd = self.nd();
        let name = c_str(&n.name);
        self.extents(v, t, r);
        self.ub_strides(v, t);
        self.line(&format!("ACHK(cx.vect({v}_ln, {v}_us, {nd}, {name}));"));
        self.line(&format!(
            "const {ct} *{v} = (const {ct} *)cx.read({tk}, {v}_ln, {v}_us, {nd}, sizeof({ct}), {name}); if (!{v}) return cx.err;"
        ));
        Ok(())
    }

    /// Acquire the node's output slot and declare `o` (typed pointer), `o_us`, `o_s`.
    fn write_target(&mut self, pos: usize, oct: &str, name: &str) -> AscResult<()> {
        self.write_target_fresh(pos, oct, name, "true")
    }

    fn write_target_fresh(&mut self, pos: usize, oct: &str, name: &str, fresh: &str) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let t = &n.outputs[0];
        let Some(tk) = self.tkey(pos, 0) else {
            return Err(unsupported(&p.name, &n.name, "output is not a UB tensor".into()));
        };
        let nd = self.nd();
        self.ub_strides("o", t);
        self.line(&format!("ACHK(cx.vect(o_ln, o_us, {nd}, {name}));"));
        let ins: Vec<String> = n
            .inputs
            .iter()
            .filter_map(|i| i.and_then(|(q, o)| self.tkey(q, o)))
            .map(|k| k.to_string())
            .collect();
        let list = if ins.is_empty() { "-1".to_string() } else { ins.join(", ") };
        self.line(&format!("const int in_keys[] = {{{list}}};"));
        self.line(&format!(
            "{oct} *o = ({oct} *)cx.write({tk}, {fresh}, o_ln, o_us, {nd}, sizeof({oct}), in_keys, {}, {name}); if (!o) return cx.err;",
            ins.len()
        ));
        self.line(&format!("int64_t o_s[{nd}]; ascendir_rt::out_strides({nd}, o_ln, o_us, o_s);"));
        Ok(())
    }

    fn reduce(&mut self, pos: usize, r: &Ranges, oct: &str, name: &str) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let nd = self.nd();
        let t = &n.outputs[0];
        let kind = reduce_kind(&n.op_type)
            .ok_or_else(|| unsupported(&p.name, &n.name, format!("reduce {} unsupported", n.op_type)))?;
        let Some(Some((q, o))) = n.inputs.first().cloned() else {
            return Err(unsupported(&p.name, &n.name, "reduce without input".into()));
        };
        let Some(tk) = self.tkey(q, o) else {
            return Err(unsupported(&p.name, &n.name, "reduce input is not a UB tensor".into()));
        };
        let it = &p.nodes[q].outputs[o];
        let ict = ctype(it.dtype).ok_or_else(|| unsupported(&p.name, &n.name, "dtype".into()))?;
        self.extents("o", t, r);
        self.extents("a", it, r);
        self.ub_strides("a", it);
        self.line(&format!("ACHK(cx.vect(a_ln, a_us, {nd}, {name}));"));
        self.line(&format!(
            "const {ict} *a = (const {ict} *)cx.read({tk}, a_ln, a_us, {nd}, sizeof({ict}), {name}); if (!a) return cx.err;"
        ));
        // Mean divides by the full extent of the reduced axes.
        let mut total = Vec::new();
        for b in &n.reduced_base {
            let rep = KernelPlan::repeat(it, *b);
            total.push(self.pool.get(&rep));
        }
        let total = if total.is_empty() { "1".to_string() } else { total.join(" * ") };
        let first = if n.reduce_loops.is_empty() {
            "true".to_string()
        } else {
            n.reduce_loops
                .iter()
                .map(|l| format!("i{l} == 0"))
                .collect::<Vec<_>>()
                .join(" && ")
        };
        self.line(&format!("const bool first = {first};"));
        self.write_target_fresh(pos, oct, name, "first")?;
        self.line(&format!(
            "ACHK(ascendir_rt::reduce<{oct}, {ict}>(ascendir_rt::{kind}, {nd}, a_ln, a, a_us, o_ln, o, o_s, first, (double)({total}), {name}));"
        ));
        Ok(())
    }
}

fn float_attr(n: &PlanNode, key: &str, default: f64) -> String {
    let v = match n.attr(key) {
        Some(AttrValue::Float(f)) => *f,
        Some(AttrValue::Int(i)) => *i as f64,
        Some(AttrValue::Str(s)) => s.trim().parse().unwrap_or(default),
        _ => default,
    };
    double_literal(v)
}

fn double_literal(v: f64) -> String {
    if v.is_nan() {
        "NAN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "INFINITY".into() } else { "-INFINITY".into() }
    } else {
        format!("{v:?}")
    }
}

fn scalar_literal(text: &str, dt: DataType) -> Option<String> {
    let t = text.trim();
    match dt {
        DataType::BOOL => Some(if matches!(t.to_ascii_lowercase().as_str(), "1" | "true") {
            "true".into()
        } else {
            "false".into()
        }),
        DataType::FLOAT | DataType::FLOAT16 | DataType::BF16 | DataType::DOUBLE => {
            let v: f64 = match t.to_ascii_lowercase().as_str() {
                "inf" | "+inf" | "infinity" => f64::INFINITY,
                "-inf" | "-infinity" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                s => s.parse().ok()?,
            };
            Some(format!("(double){}", double_literal(v)))
        }
        _ => {
            let v: i64 = t.parse().ok()?;
            Some(format!("(int64_t){v}LL"))
        }
    }
}

/// The GM interface of a plan: Data nodes in order, store targets in first-seen order.
fn interface(p: &KernelPlan) -> AscResult<(Vec<GmArg>, Vec<GmArg>, FxHashMap<usize, usize>)> {
    let mut ins = Vec::new();
    for n in &p.nodes {
        if n.op_type == "Data" {
            let dt = n.outputs.first().map(|t| t.dtype).unwrap_or(DataType::UNDEFINED);
            ins.push(GmArg { name: n.name.clone(), dtype: dt });
        }
    }
    let mut outs: Vec<GmArg> = Vec::new();
    let mut store_out = FxHashMap::default();
    for (pos, n) in p.nodes.iter().enumerate() {
        if !matches!(n.compute_type, ComputeType::Store | ComputeType::ReduceStore) {
            continue;
        }
        let t = n.outputs.first();
        let reader = t.and_then(|t| {
            t.readers
                .iter()
                .map(|r| &p.nodes[*r])
                .find(|c| c.op_type == "Output")
        });
        let (name, dt) = match reader {
            Some(o) => (
                o.name.clone(),
                o.outputs.first().map(|t| t.dtype).unwrap_or(DataType::UNDEFINED),
            ),
            None => (n.name.clone(), t.map(|t| t.dtype).unwrap_or(DataType::UNDEFINED)),
        };
        let oi = match outs.iter().position(|a| a.name == name) {
            Some(i) => i,
            None => {
                outs.push(GmArg { name, dtype: dt });
                outs.len() - 1
            }
        };
        store_out.insert(pos, oi);
    }
    Ok((ins, outs, store_out))
}

fn function(
    p: &KernelPlan,
    fname: &str,
    fields: &[TilingField],
    inputs: &[GmArg],
    outputs: &[GmArg],
) -> AscResult<String> {
    let (my_in, my_out, store_out) = interface(p)?;
    for a in my_in.iter().chain(my_out.iter()) {
        if ctype(a.dtype).is_none() {
            return Err(AscError::InvalidArgument(format!(
                "graph '{}': GM tensor '{}' has dtype {} (CPU target)",
                p.name,
                a.name,
                a.dtype.name()
            )));
        }
    }
    // This template's GM tensors map onto the kernel's by name.
    let mut tkeys = Vec::new();
    for (pos, n) in p.nodes.iter().enumerate() {
        for (o, t) in n.outputs.iter().enumerate() {
            if t.hardware == MemHardware::Ub && t.container.is_some() {
                tkeys.push((pos, o));
            }
        }
    }
    let _ = (&my_in, &my_out);
    let mut g = Gen {
        p,
        pool: Pool::new(),
        body: String::new(),
        indent: 1,
        var: 0,
        tkeys,
        inputs,
        outputs,
        store_out: FxHashMap::default(),
    };
    for (pos, oi) in store_out {
        let name = &my_out[oi].name;
        let k = outputs.iter().position(|a| &a.name == name).ok_or_else(|| {
            AscError::InvalidArgument(format!("graph '{}': output '{name}' not in the kernel", p.name))
        })?;
        g.store_out.insert(pos, k);
    }
    for a in &my_in {
        if !inputs.iter().any(|b| b.name == a.name) {
            return Err(AscError::InvalidArgument(format!(
                "graph '{}': input '{}' not in the kernel",
                p.name, a.name
            )));
        }
    }
    // Loop nest: open and close levels as node depths change.
    let block_bound = p
        .loops
        .first()
        .and_then(|a| p.axis(*a))
        .is_some_and(|a| a.kind == AxisType::BlockOuter);
    if p.loops.iter().skip(1).any(|a| p.axis(*a).map(|x| x.kind) == Some(AxisType::BlockOuter)) {
        return Err(unsupported(&p.name, "", "block outer axis below the outermost loop".into()));
    }
    if !block_bound {
        g.line("if (block_idx != 0) return 0;");
    }
    let mut open = 0usize;
    let mut levels: Vec<Ranges> = vec![Ranges::new()];
    for pos in 0..p.nodes.len() {
        let n = &p.nodes[pos];
        if !n.compute {
            continue;
        }
        if n.depth == 0 && block_bound {
            return Err(unsupported(&p.name, &n.name, "node outside the block loop".into()));
        }
        while open > n.depth {
            g.indent -= 1;
            g.line("}");
            open -= 1;
            levels.pop();
        }
        while open < n.depth {
            let a = p.loops[open];
            let sz = g.size(a)?;
            if open == 0 && block_bound {
                g.line("for (int64_t i0 = block_idx; i0 == (int64_t)block_idx; ++i0) {");
                g.indent += 1;
                g.line(&format!("if (i0 >= {sz}) break;"));
            } else {
                g.line(&format!(
                    "for (int64_t i{open} = 0; i{open} < {sz}; ++i{open}) {{"
                ));
                g.indent += 1;
            }
            let r = g.ranges(open, "continue")?;
            levels.push(r);
            open += 1;
        }
        let r = levels.last().cloned().unwrap_or_default();
        g.node(pos, &r)?;
    }
    while open > 0 {
        g.indent -= 1;
        g.line("}");
        open -= 1;
    }
    // The prologue: symbols, hoisted sizes, containers, tensor states.
    let mut pro = String::new();
    let _ = writeln!(
        pro,
        "static int {fname}(const AutofuseTilingData *t, void *const *gin, void *const *gout, uint32_t block_idx, uint8_t *ub, uint32_t ub_size, uint32_t flags) {{"
    );
    let _ = writeln!(pro, "  (void)gin; (void)gout;");
    let mut syms: Vec<String> = Vec::new();
    for e in &g.pool.exprs {
        for s in e.free_symbols() {
            if !syms.contains(&s) {
                syms.push(s);
            }
        }
    }
    for c in &p.containers {
        if !syms.contains(&c.name) {
            syms.push(c.name.clone());
        }
    }
    for s in &syms {
        if !is_ident(s) || !fields.iter().any(|f| &f.name == s) {
            return Err(AscError::InvalidArgument(format!(
                "graph '{}': size symbol '{s}' is not a TilingData field",
                p.name
            )));
        }
        let _ = writeln!(
            pro,
            "  const ascendir_rt::R S_{s} = ascendir_rt::ri((int64_t)t->{s}); (void)S_{s};"
        );
    }
    let _ = writeln!(pro, "  ascendir_rt::size_error = false;");
    for (k, e) in g.pool.exprs.iter().enumerate() {
        let text = cexpr::print(e, &|s| format!("S_{s}")).ok_or_else(|| {
            AscError::InvalidArgument(format!("graph '{}': size {e} cannot be printed", p.name))
        })?;
        let _ = writeln!(pro, "  const int64_t e{k} = ascendir_rt::to_i({text});");
    }
    let gname = c_str(&p.name);
    let _ = writeln!(
        pro,
        "  if (ascendir_rt::size_error) return ascendir_rt::fail(ascendir_rt::ERR_SIZE, {gname}, \"a size expression overflows or divides by zero\");"
    );
    // Containers at their offsets.
    let nc = p.containers.len();
    let _ = writeln!(pro, "  ascendir_rt::Cont conts[{}];", nc.max(1));
    let _ = writeln!(pro, "  int64_t off = 0;");
    let mut nslots = 0i64;
    for (ci, c) in p.containers.iter().enumerate() {
        let q = c.kind == ContainerKind::Queue;
        let _ = writeln!(
            pro,
            "  conts[{ci}] = ascendir_rt::Cont{{off, (int64_t)t->{}, {}LL, {}, -1, -2, 0, {nslots}}}; off += (int64_t)t->{} * {}LL;",
            c.name, c.buf_num.max(1), q, c.name, c.buf_num.max(1)
        );
        nslots += c.buf_num.max(1);
    }
    let _ = writeln!(
        pro,
        "  if (off > (int64_t)ub_size) return ascendir_rt::fail(ascendir_rt::ERR_UB, {gname}, \"containers need \" + std::to_string(off) + \" bytes but the UB has \" + std::to_string(ub_size));"
    );
    let nt = g.tkeys.len();
    let _ = writeln!(pro, "  ascendir_rt::TSt ts[{}];", nt.max(1));
    let tkeys = g.tkeys.clone();
    for (k, (pos, o)) in tkeys.iter().enumerate() {
        let t = &p.nodes[*pos].outputs[*o];
        let ci = t.container.unwrap_or(0);
        let fam_text = match t.fam_offset.as_i64() {
            Some(v) => format!("{v}LL"),
            None => {
                let text = cexpr::print(&t.fam_offset, &|s| format!("S_{s}")).unwrap_or_else(|| "ascendir_rt::ri(0)".into());
                format!("ascendir_rt::to_i({text})")
            }
        };
        let _ = writeln!(
            pro,
            "  ts[{k}] = ascendir_rt::TSt{{{ci}, {}LL, {fam_text}, -1, -1, 0}};",
            t.reuse_id
        );
    }
    let _ = writeln!(pro, "  uint64_t gens[{}] = {{0}};", nslots.max(1));
    let _ = writeln!(pro, "  int occ[{}]; for (auto &x : occ) x = -1;", nslots.max(1));
    let names: Vec<String> = tkeys
        .iter()
        .map(|(pos, _)| c_str(&p.nodes[*pos].name))
        .collect();
    let names = if names.is_empty() { "\"\"".to_string() } else { names.join(", ") };
    let _ = writeln!(pro, "  static const char *const tnames[] = {{{names}}};");
    let _ = writeln!(
        pro,
        "  ascendir_rt::Ctx cx{{ub, (int64_t)ub_size, flags, conts, ts, gens, occ, 0, {gname}, tnames}};"
    );
    let _ = writeln!(pro, "  (void)cx;");
    Ok(format!("{pro}{}  return 0;\n}}\n", g.body))
}

/// Generate the CPU kernel of `impls` (the templates of one kernel, tiling-key order).
pub fn generate(name: &str, impls: &[&AscGraph], block: i64) -> AscResult<CpuKernel> {
    if !is_ident(name) {
        return Err(AscError::InvalidArgument(format!(
            "kernel name '{name}' is not a C identifier"
        )));
    }
    if impls.is_empty() {
        return Err(AscError::InvalidArgument("no ImplGraph given".into()));
    }
    let plans: Vec<KernelPlan> = impls
        .iter()
        .map(|g| KernelPlan::build(g, block))
        .collect::<AscResult<_>>()?;
    for p in &plans {
        if !p.is_impl {
            return Err(AscError::InvalidArgument(format!(
                "graph '{}' is not an ImplGraph",
                p.name
            )));
        }
    }
    let (inputs, outputs, _) = interface(&plans[0])?;
    let fields = tiling_fields(name, impls);
    let header = tiling_data_header(name, impls);
    let mut src = String::new();
    let _ = writeln!(src, "// CPU verification kernel '{name}' (generated by ascendir).");
    let _ = writeln!(src, "#include \"ascendir_cpu_rt.h\"\n#include \"autofuse_tiling_data.h\"\n");
    let _ = writeln!(src, "#define ACHK(...) do {{ int r_ = (__VA_ARGS__); if (r_) return r_; }} while (0)\n");
    let _ = writeln!(src, "namespace {{\n");
    let mut templates = Vec::new();
    for (k, p) in plans.iter().enumerate() {
        let f = function(p, &format!("impl_{k}"), &fields, &inputs, &outputs)?;
        let _ = writeln!(src, "// template '{}', tiling key {}", p.name, p.tiling_key);
        src.push_str(&f);
        src.push('\n');
        templates.push((p.name.clone(), p.tiling_key));
    }
    let _ = writeln!(src, "}}  // namespace\n");
    let _ = writeln!(
        src,
        "extern \"C\" int ascendir_kernel_{name}(const void *tiling, void *const *inputs, void *const *outputs, void *workspace, uint32_t block_idx, uint8_t *ub, uint32_t ub_size, uint32_t flags) {{"
    );
    let _ = writeln!(src, "  (void)workspace;");
    let _ = writeln!(src, "  const AutofuseTilingData *t = (const AutofuseTilingData *)tiling;");
    for (k, p) in plans.iter().enumerate() {
        let _ = writeln!(
            src,
            "  if (t->tiling_key == {}u) return impl_{k}(t, inputs, outputs, block_idx, ub, ub_size, flags);",
            p.tiling_key
        );
    }
    let _ = writeln!(
        src,
        "  return ascendir_rt::fail(ascendir_rt::ERR_KEY, \"{name}\", \"no template for tiling key \" + std::to_string(t->tiling_key));\n}}\n"
    );
    let _ = writeln!(
        src,
        "extern \"C\" int ascendir_run_{name}(const void *tiling, void *const *inputs, void *const *outputs, void *workspace, uint32_t ub_size, uint32_t flags) {{"
    );
    let _ = writeln!(src, "  const AutofuseTilingData *t = (const AutofuseTilingData *)tiling;");
    let _ = writeln!(src, "  std::vector<uint64_t> store(((size_t)ub_size + 63) / 8 + 8);");
    let _ = writeln!(src, "  uint8_t *ub = (uint8_t *)(((uintptr_t)store.data() + 63) & ~(uintptr_t)63);");
    let _ = writeln!(src, "  for (uint32_t b = 0; b < t->block_dim; ++b) {{");
    let _ = writeln!(
        src,
        "    int r = ascendir_kernel_{name}(tiling, inputs, outputs, workspace, b, ub, ub_size, flags);"
    );
    let _ = writeln!(src, "    if (r) return r;\n  }}\n  return 0;\n}}\n");
    let _ = writeln!(
        src,
        "extern \"C\" const char *ascendir_error_{name}(void) {{ return ascendir_rt::last_error.c_str(); }}"
    );
    Ok(CpuKernel {
        name: name.to_string(),
        source: src,
        tiling_header: header,
        fields,
        inputs,
        outputs,
        templates,
    })
}
