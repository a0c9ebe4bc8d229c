//! `<name>_op_kernel.cpp`: the Ascend C kernel in GE's structure (GE's `codegen_kernel.cpp`),
//! printed from the kernel plan of every ImplGraph.
//!
//! Layout: the basic Ascend C includes and `autofuse_tiling_data.h`, `using namespace
//! AscendC`, the task type, the helper text ([`super::ascendc_api::HELPERS`]), one
//! `inline __aicore__` function per ImplGraph (named after it) and the `extern "C" __global__
//! __aicore__` entry dispatching on `TILING_KEY_IS(key)` in tiling-key order.
//!
//! A function reads, in order: per axis the size / loop / tail trio from the tiling data; the
//! block selection (`GetBlockIdx()`, blocks at or past `t->block_dim` return, the block-outer
//! index); the GlobalTensors; the TPipe with its TBuf / TQue containers initialised with
//! `t->b<id>_size` / `t->q<id>_size`; then the loop nest with, per node in execution order,
//! GE's queue events and synchronisation ("CodegenKernel_CallSync"):
//! * a queue tensor is allocated by its producer (members of one reuse family share the
//!   allocation at their family offsets) and enqueued after the family's last producer;
//! * it is dequeued by its first reader on another pipe (MTE2 → vector, vector → MTE3) and
//!   freed after its last reader; a tensor nobody reads is freed right after `EnQue`;
//! * a Load feeding a Store directly gets an MTE2 → MTE3 event before the dequeue;
//! * a vector op reading a vector result, or overwriting a buffer a vector op used, since the
//!   last barrier is preceded by `AscendC::PipeBarrier<PIPE_V>()`.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use super::ascendc_api::HELPERS;
use super::ascendc_expr::tiling as texpr;
use super::ascendc_sync::{allocations, node, Alloc};
use super::host::KernelIo;
use super::plan::{KernelPlan, PlanNode, PlanTensor};
use ascendir_asc::alloc::ContainerKind;
use ascendir_asc::axis::{AxisId, AxisType};
use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::expr::{Expr, Kind};
use ascendir_asc::graph::{ComputeType, MemHardware, Position};
use ascendir_ir::DataType;

pub(super) fn err(graph: &str, node: &str, what: String) -> AscError {
    if node.is_empty() {
        AscError::InvalidArgument(format!("graph '{graph}': {what} (Ascend C kernel)"))
    } else {
        AscError::InvalidArgument(format!(
            "graph '{graph}' node '{node}': {what} (Ascend C kernel)"
        ))
    }
}

/// The Ascend C element type of `d`.
pub fn ascend_type(d: DataType) -> Option<&'static str> {
    Some(match d {
        DataType::FLOAT => "float",
        DataType::FLOAT16 => "half",
        DataType::BF16 => "bfloat16_t",
        DataType::INT8 => "int8_t",
        DataType::UINT8 => "uint8_t",
        DataType::INT16 => "int16_t",
        DataType::UINT16 => "uint16_t",
        DataType::INT32 => "int32_t",
        DataType::UINT32 => "uint32_t",
        DataType::INT64 => "int64_t",
        DataType::UINT64 => "uint64_t",
        DataType::BOOL => "uint8_t",
        _ => return None,
    })
}

use super::is_c_ident as is_ident;

/// The pipe a node runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pipe {
    Mte2,
    Mte3,
    Vector,
}

pub(super) fn pipe_of(n: &PlanNode) -> Pipe {
    match n.compute_type {
        ComputeType::Load | ComputeType::Gather => Pipe::Mte2,
        ComputeType::Store | ComputeType::ReduceStore => Pipe::Mte3,
        _ => Pipe::Vector,
    }
}

pub(super) fn pipe_name(p: Pipe) -> &'static str {
    match p {
        Pipe::Mte2 => "MTE2",
        Pipe::Mte3 => "MTE3",
        Pipe::Vector => "V",
    }
}

pub(super) struct Func<'a> {
    pub(super) p: &'a KernelPlan,
    pub(super) body: String,
    /// Open scopes, outermost first (ids).
    pub(super) scopes: Vec<u32>,
    pub(super) next_scope: u32,
    /// Declared variables and the scope they live in.
    pub(super) declared: Vec<(String, u32)>,
    pub(super) allocs: Vec<Alloc>,
    /// Allocation of each UB queue tensor: (pos, out) → index in `allocs`.
    pub(super) alloc_of: Vec<((usize, usize), usize)>,
    /// Variables that must be declared before a loop opens: (name, declaration, first use
    /// position, declaration depth).
    pub(super) hoisted: Vec<(String, String, usize, usize)>,
    /// Index variables known in each open scope (axis ids).
    pub(super) known: Vec<Vec<AxisId>>,
    /// Barrier state: tensors a vector op wrote, containers vector ops wrote / read since the
    /// last `PipeBarrier<PIPE_V>`.
    pub(super) v_written: BTreeSet<(usize, usize)>,
    pub(super) v_regions_w: BTreeSet<usize>,
    pub(super) v_regions_r: BTreeSet<usize>,
    /// Store position → global tensor name.
    pub(super) store_global: Vec<(usize, String)>,
    /// Data position → global tensor name.
    pub(super) data_global: Vec<(usize, String)>,
    pub(super) vars: usize,
    /// Index of the template among the kernel's ImplGraphs (API tiling field names).
    pub(super) case: usize,
    /// Size expressions printed so far ([`Func::tx`]).
    pub(super) texts: RefCell<FxHashMap<Expr, String>>,
}

impl<'a> Func<'a> {
    pub(super) fn line(&mut self, s: &str) {
        self.body.push_str(s);
        self.body.push('\n');
    }

    /// [`Func::line`] of formatted text, written in place.
    pub(super) fn linef(&mut self, a: std::fmt::Arguments<'_>) {
        let _ = std::fmt::Write::write_fmt(&mut self.body, a);
        self.body.push('\n');
    }

    /// `e` as Ascend C text over the tiling data; composite expressions are printed once per
    /// function.
    pub(super) fn tx(&self, e: &Expr) -> AscResult<String> {
        if matches!(e.kind(), Kind::Num(_) | Kind::Sym(_)) {
            return texpr(e);
        }
        if let Some(t) = self.texts.borrow().get(e) {
            return Ok(t.clone());
        }
        let t = texpr(e)?;
        self.texts.borrow_mut().insert(e.clone(), t.clone());
        Ok(t)
    }

    pub(super) fn visible(&self, name: &str) -> bool {
        self.declared
            .iter()
            .any(|(n, s)| n == name && self.scopes.contains(s))
    }

    pub(super) fn declare(&mut self, name: &str) {
        let s = *self.scopes.last().unwrap_or(&0);
        self.declared.push((name.to_string(), s));
    }

    pub(super) fn open_scope(&mut self) {
        self.next_scope += 1;
        self.scopes.push(self.next_scope);
        self.known.push(Vec::new());
    }

    pub(super) fn close_scope(&mut self) {
        self.scopes.pop();
        self.known.pop();
        let live: Vec<u32> = self.scopes.clone();
        self.declared.retain(|(_, s)| live.contains(s));
        self.line("}");
    }

    pub(super) fn is_known(&self, a: AxisId) -> bool {
        self.known.iter().any(|k| k.contains(&a))
    }

    pub(super) fn axis_name(&self, a: AxisId) -> AscResult<String> {
        let ax = self
            .p
            .axis(a)
            .ok_or_else(|| err(&self.p.name, "", format!("axis {a} missing")))?;
        if !is_ident(&ax.name) {
            return Err(err(
                &self.p.name,
                "",
                format!("axis name '{}' is not a C identifier", ax.name),
            ));
        }
        Ok(ax.name.clone())
    }

    pub(super) fn local(&self, pos: usize, out: usize) -> String {
        if out == 0 {
            format!("local_{pos}")
        } else {
            format!("local_{pos}_{out}")
        }
    }

    pub(super) fn tensor(&self, pos: usize, out: usize) -> AscResult<&'a PlanTensor> {
        let p = self.p;
        p.nodes
            .get(pos)
            .and_then(|n| n.outputs.get(out))
            .ok_or_else(|| err(&p.name, "", format!("tensor {pos}:{out} missing")))
    }

    pub(super) fn ctype(&self, n: &PlanNode, t: &PlanTensor) -> AscResult<&'static str> {
        ascend_type(t.dtype).ok_or_else(|| {
            err(
                &self.p.name,
                &n.name,
                format!("dtype {} has no Ascend C type", t.dtype.name()),
            )
        })
    }

    /// Mark `a` known and print what follows from it (GE's tail arithmetic): the actual size
    /// of the inner axis of its split, the block offset, and the parent index once both
    /// halves of a split are known.
    pub(super) fn learn(&mut self, a: AxisId) -> AscResult<()> {
        let mut pending = vec![a];
        let mut guard = 0usize;
        while let Some(x) = pending.pop() {
            guard += 1;
            if guard > 8 * (self.p.axes.len() + 1) {
                break;
            }
            if self.is_known(x) {
                continue;
            }
            if let Some(k) = self.known.last_mut() {
                k.push(x);
            }
            let Some(ax) = self.p.axis(x).cloned() else {
                continue;
            };
            let (Some(pair), Some(parent)) = (ax.split_pair, ax.from.first().copied()) else {
                continue;
            };
            let outer_kind = matches!(ax.kind, AxisType::TileOuter | AxisType::BlockOuter);
            let xn = self.axis_name(x)?;
            let pn = self.axis_name(pair)?;
            if outer_kind {
                self.linef(format_args!(
                    "int {pn}_actual_size = {xn} < {xn}_axis_size ? {pn}_axis_size : {pn}_tail_size;"
                ));
                self.linef(format_args!("int {pn}_loop_size = {pn}_actual_size;"));
                let inner = self
                    .p
                    .axis(pair)
                    .ok_or_else(|| err(&self.p.name, "", format!("axis {pair} missing")))?;
                if self.p.loops.contains(&pair) {
                    let off = if ax.kind == AxisType::BlockOuter {
                        "block_dim_offset".to_string()
                    } else {
                        format!("{xn}_offset")
                    };
                    self.linef(format_args!(
                        "int32_t {off} = {xn} * {};",
                        self.tx(&inner.size)?
                    ));
                    self.declare(&off);
                }
            }
            if self.is_known(pair) && !self.is_known(parent) {
                let (outer, inner) = if outer_kind { (x, pair) } else { (pair, x) };
                let on = self.axis_name(outer)?;
                let inn = self.axis_name(inner)?;
                let off = if self.p.axis(outer).map(|o| o.kind) == Some(AxisType::BlockOuter) {
                    "block_dim_offset".to_string()
                } else {
                    format!("{on}_offset")
                };
                let par = self.axis_name(parent)?;
                self.linef(format_args!("int {par} = {off} + {inn};"));
                pending.push(parent);
            }
        }
        Ok(())
    }

    pub(super) fn alloc_index(&self, pos: usize, out: usize) -> Option<usize> {
        self.alloc_of
            .iter()
            .find(|(k, _)| *k == (pos, out))
            .map(|(_, a)| *a)
    }

    pub(super) fn queue_name(&self, ci: usize) -> String {
        format!("q{}", self.p.containers[ci].id)
    }

    pub(super) fn buf_name(&self, ci: usize) -> String {
        format!("b{}", self.p.containers[ci].id)
    }

    /// Emit the variables whose declaration depth is `depth` and whose first use lies in the
    /// scope about to open at node `pos`.
    pub(super) fn hoist(&mut self, pos: usize, depth: usize) {
        let p = self.p;
        let mut end = p.nodes.len();
        for q in pos + 1..p.nodes.len() {
            if p.nodes[q].compute && p.nodes[q].depth <= depth {
                end = q;
                break;
            }
        }
        let items: Vec<(String, String)> = self
            .hoisted
            .iter()
            .filter(|(_, _, first, d)| *d == depth && *first >= pos && *first < end)
            .map(|(n, decl, _, _)| (n.clone(), decl.clone()))
            .collect();
        for (n, decl) in items {
            if !self.visible(&n) {
                self.line(&decl);
                self.declare(&n);
            }
        }
    }
}

fn position_name(p: Position) -> &'static str {
    match p {
        Position::VecIn => "VECIN",
        Position::VecOut => "VECOUT",
        Position::Gm => "GM",
        _ => "VECCALC",
    }
}

/// The minimum loop depth of the compute nodes in positions `[a, b]`.
fn min_depth(p: &KernelPlan, a: usize, b: usize) -> usize {
    p.nodes[a..=b.min(p.nodes.len() - 1)]
        .iter()
        .filter(|n| n.compute)
        .map(|n| n.depth)
        .min()
        .unwrap_or(0)
}

/// Append the function of template `p` (index `case` among the kernel's ImplGraphs) to `text`.
fn function(p: &KernelPlan, case: usize, io: &KernelIo, text: &mut String) -> AscResult<()> {
    if !is_ident(&p.name) {
        return Err(err(&p.name, "", "graph name is not a C identifier".into()));
    }
    let allocs = allocations(p)?;
    let mut alloc_of = Vec::new();
    for (k, a) in allocs.iter().enumerate() {
        for m in &a.members {
            alloc_of.push((*m, k));
        }
    }
    let mut f = Func {
        p,
        body: String::with_capacity(p.nodes.len().saturating_mul(1024)),
        scopes: vec![0],
        next_scope: 0,
        declared: Vec::new(),
        allocs,
        alloc_of,
        hoisted: Vec::new(),
        known: vec![Vec::new()],
        v_written: BTreeSet::new(),
        v_regions_w: BTreeSet::new(),
        v_regions_r: BTreeSet::new(),
        store_global: Vec::new(),
        data_global: Vec::new(),
        vars: 0,
        case,
        texts: RefCell::new(FxHashMap::default()),
    };
    // Hoisting: a variable used beyond its producer's loop scope is declared where that scope
    // starts.
    for (pos, n) in p.nodes.iter().enumerate() {
        if !n.compute {
            continue;
        }
        for (o, t) in n.outputs.iter().enumerate() {
            if t.hardware != MemHardware::Ub {
                continue;
            }
            let last = t.readers.iter().copied().max().unwrap_or(pos).max(pos);
            let d = min_depth(p, pos, last);
            if d < n.depth {
                let ct = f.ctype(n, t)?;
                let name = f.local(pos, o);
                f.hoisted
                    .push((name.clone(), format!("LocalTensor<{ct}> {name};"), pos, d));
            }
        }
    }
    let mut qfirst: Vec<(String, usize, usize)> = Vec::new(); // (variable, first, last)
    for a in &f.allocs {
        let last = a.free_at();
        match qfirst.iter_mut().find(|x| x.0 == a.var) {
            Some(x) => {
                x.1 = x.1.min(a.first_prod);
                x.2 = x.2.max(last);
            }
            None => qfirst.push((a.var.clone(), a.first_prod, last)),
        }
    }
    for (name, first, last) in qfirst {
        let d = min_depth(p, first, last);
        if d < p.nodes[first].depth {
            f.hoisted.push((
                name.clone(),
                format!("LocalTensor<uint8_t> {name};"),
                first,
                d,
            ));
        }
    }

    // Signature.
    let mut args: Vec<String> = Vec::new();
    for d in io.inputs.iter().chain(io.outputs.iter()) {
        if !is_ident(&d.name) {
            return Err(err(
                &p.name,
                &d.name,
                "kernel argument name is not a C identifier".into(),
            ));
        }
        args.push(format!("GM_ADDR {}", d.name));
    }
    let _ = writeln!(
        text,
        "inline __aicore__ void {}({}{}GM_ADDR workspace, const AutofuseTilingData *t) {{",
        p.name,
        args.join(", "),
        if args.is_empty() { "" } else { ", " }
    );

    // Axis trios (a split's inner axis before its outer one, parents first).
    let mut done: Vec<AxisId> = Vec::new();
    let mut guard = 0usize;
    while done.len() < p.axes.len() {
        guard += 1;
        if guard > p.axes.len() + 2 {
            return Err(err(
                &p.name,
                "",
                "axes derive from each other in a cycle".into(),
            ));
        }
        for ax in &p.axes {
            if done.contains(&ax.id) || !ax.from.iter().all(|x| done.contains(x)) {
                continue;
            }
            let n = f.axis_name(ax.id)?;
            match ax.kind {
                AxisType::TileInner
                | AxisType::BlockInner
                | AxisType::TileOuter
                | AxisType::BlockOuter => {
                    let Some(pair) = ax.split_pair else {
                        return Err(err(&p.name, &n, "split axis without its pair".into()));
                    };
                    let (inner, outer) =
                        if matches!(ax.kind, AxisType::TileInner | AxisType::BlockInner) {
                            (ax.id, pair)
                        } else {
                            (pair, ax.id)
                        };
                    let parent =
                        ax.from.first().copied().ok_or_else(|| {
                            err(&p.name, &n, "split axis without a parent".into())
                        })?;
                    let inn = f.axis_name(inner)?;
                    let on = f.axis_name(outer)?;
                    let pn = f.axis_name(parent)?;
                    let isz = p
                        .axis(inner)
                        .map(|a| a.size.clone())
                        .ok_or_else(|| err(&p.name, &inn, "axis missing".into()))?;
                    f.linef(format_args!("const int {inn}_axis_size = {};", f.tx(&isz)?));
                    f.linef(format_args!(
                        "const int {inn}_tail_size = {pn}_loop_size % {inn}_axis_size;"
                    ));
                    f.linef(format_args!(
                        "const int {on}_axis_size = {pn}_loop_size / {inn}_axis_size;"
                    ));
                    f.linef(format_args!(
                        "const int {on}_loop_size = {on}_axis_size + ({inn}_tail_size > 0);"
                    ));
                    done.push(inner);
                    done.push(outer);
                }
                _ => {
                    f.linef(format_args!(
                        "const int {n}_axis_size = {};",
                        f.tx(&ax.size)?
                    ));
                    f.linef(format_args!("const int {n}_loop_size = {n}_axis_size;"));
                    f.linef(format_args!("const int {n}_actual_size = {n}_axis_size;"));
                    done.push(ax.id);
                }
            }
        }
    }

    // Block selection.
    let block_outer = p
        .loops
        .first()
        .copied()
        .filter(|a| p.axis(*a).map(|x| x.kind) == Some(AxisType::BlockOuter));
    if p.loops
        .iter()
        .skip(1)
        .any(|a| p.axis(*a).map(|x| x.kind) == Some(AxisType::BlockOuter))
    {
        return Err(err(
            &p.name,
            "",
            "block outer axis below the outermost loop".into(),
        ));
    }
    f.line("int block_dim = GetBlockIdx();");
    f.line("if (block_dim >= t->block_dim) { ");
    f.line("  return;");
    f.line("}");
    if let Some(b) = block_outer {
        let bn = f.axis_name(b)?;
        f.linef(format_args!(
            "const int {bn} = block_dim % {bn}_loop_size; "
        ));
    }
    f.line("");

    // Global tensors.
    for (pos, n) in p.nodes.iter().enumerate() {
        if n.op_type != "Data" {
            continue;
        }
        let Some(arg) = io.inputs.iter().find(|d| d.name == n.name) else {
            return Err(err(
                &p.name,
                &n.name,
                "Data node is not a kernel input".into(),
            ));
        };
        let t = f.tensor(pos, 0)?;
        let ct = f.ctype(n, t)?;
        let g = format!("global_{pos}");
        f.linef(format_args!("GlobalTensor<{ct}> {g};"));
        f.linef(format_args!(
            "{g}.SetGlobalBuffer((__gm__ {ct}*){});",
            arg.name
        ));
        f.data_global.push((pos, g));
    }
    for (pos, n) in p.nodes.iter().enumerate() {
        if n.op_type != "Output" {
            continue;
        }
        let Some(arg) = io.outputs.iter().find(|d| d.name == n.name) else {
            return Err(err(
                &p.name,
                &n.name,
                "Output node is not a kernel output".into(),
            ));
        };
        let ty = n
            .outputs
            .first()
            .map(|t| t.dtype)
            .filter(|d| *d != DataType::UNDEFINED)
            .unwrap_or(arg.dtype);
        let ct = ascend_type(ty)
            .ok_or_else(|| err(&p.name, &n.name, format!("dtype {} unsupported", ty.name())))?;
        let g = format!("global_{pos}");
        f.linef(format_args!("GlobalTensor<{ct}> {g};"));
        f.linef(format_args!(
            "{g}.SetGlobalBuffer((__gm__ {ct}*){});",
            arg.name
        ));
        for (q, m) in p.nodes.iter().enumerate() {
            if matches!(
                m.compute_type,
                ComputeType::Store | ComputeType::ReduceStore
            ) && m.outputs.first().is_some_and(|t| t.readers.contains(&pos))
            {
                f.store_global.push((q, g.clone()));
            }
        }
    }
    f.line("");

    // Pipe, tensor sizes, containers (buffers, then queues, as GE prints them).
    f.line("TPipe tpipe;");
    f.line("");
    for (pos, n) in p.nodes.iter().enumerate() {
        for (o, t) in n.outputs.iter().enumerate() {
            if t.hardware != MemHardware::Ub || t.container.is_none() {
                continue;
            }
            let ct = f.ctype(n, t)?;
            let l = f.local(pos, o);
            f.linef(format_args!(
                "const uint32_t {l}_size = KernelUtils::BlkAlign<{ct}>({});",
                f.span(t, false)?
            ));
            if t.container
                .is_some_and(|c| p.containers[c].kind == ContainerKind::Queue)
            {
                f.linef(format_args!(
                    "const uint32_t {l}_que_buf_num = {};",
                    t.buf_num.max(1)
                ));
            }
        }
    }
    f.line("");
    for (ci, c) in p.containers.iter().enumerate() {
        if c.kind == ContainerKind::Queue {
            continue;
        }
        let b = f.buf_name(ci);
        f.linef(format_args!(
            "TBuf<TPosition::{}> {b};",
            position_name(c.position)
        ));
        f.linef(format_args!("tpipe.InitBuffer({b}, t->{});", c.name));
        if c.kind == ContainerKind::Tmp {
            f.linef(format_args!(
                "LocalTensor<uint8_t> tmp_buf_{} = {b}.Get<uint8_t>();",
                c.id
            ));
        } else {
            f.linef(format_args!(
                "LocalTensor<uint8_t> {b}_buf = {b}.Get<uint8_t>();"
            ));
        }
        f.line("");
    }
    for (ci, c) in p.containers.iter().enumerate() {
        if c.kind != ContainerKind::Queue {
            continue;
        }
        let q = f.queue_name(ci);
        f.linef(format_args!(
            "const uint32_t {q}_buf_num = {};",
            c.buf_num.max(1)
        ));
        f.linef(format_args!(
            "TQue<TPosition::{}, 1> {q};",
            position_name(c.position)
        ));
        f.linef(format_args!(
            "tpipe.InitBuffer({q}, {q}_buf_num, t->{});",
            c.name
        ));
        f.line("");
    }
    f.line("");

    // Loops and nodes.
    let mut open = 0usize;
    if let Some(b) = block_outer {
        f.learn(b)?;
    }
    for pos in 0..p.nodes.len() {
        let n = &p.nodes[pos];
        if !n.compute {
            continue;
        }
        if n.depth == 0 && block_outer.is_some() {
            return Err(err(&p.name, &n.name, "node outside the block loop".into()));
        }
        while open > n.depth {
            f.close_scope();
            open -= 1;
        }
        while open < n.depth {
            f.hoist(pos, open);
            let a = p.loops[open];
            if open == 0 && block_outer.is_some() {
                // The block-outer "loop" is the block index itself.
                open += 1;
                continue;
            }
            let an = f.axis_name(a)?;
            f.linef(format_args!(
                "for (int {an} = 0; {an} < {an}_loop_size; {an}++) {{"
            ));
            f.open_scope();
            f.learn(a)?;
            open += 1;
        }
        node(&mut f, pos)?;
    }
    let floor = usize::from(block_outer.is_some());
    while open > floor {
        f.close_scope();
        open -= 1;
    }
    text.push_str(&f.body);
    text.push_str("}\n");
    Ok(())
}

/// GE's kernel task type: vector only, or vector with workspace.
fn task_type(plans: &[KernelPlan]) -> &'static str {
    let ws = plans
        .iter()
        .any(|p| p.nodes.iter().any(|n| n.op_type == "Workspace"));
    if ws {
        "KERNEL_TYPE_MIX_AIV_1_0"
    } else {
        "KERNEL_TYPE_AIV_ONLY"
    }
}

/// `<name>_op_kernel.cpp` for the plans of one kernel (templates in tiling-key order).
pub fn kernel_source(name: &str, plans: &[KernelPlan], io: &KernelIo) -> AscResult<String> {
    if !is_ident(name) {
        return Err(AscError::InvalidArgument(format!(
            "kernel name '{name}' is not a C identifier"
        )));
    }
    if plans.is_empty() {
        return Err(AscError::InvalidArgument(format!(
            "kernel '{name}': no ImplGraph to generate"
        )));
    }
    for p in plans {
        if !p.is_impl {
            return Err(err(&p.name, "", "not an ImplGraph".into()));
        }
    }
    let mut keys: Vec<i64> = plans.iter().map(|p| p.tiling_key).collect();
    keys.sort_unstable();
    keys.dedup();
    if keys.len() != plans.len() {
        return Err(AscError::InvalidArgument(format!(
            "kernel '{name}': two templates share a tiling key"
        )));
    }
    let mut order: Vec<(usize, &KernelPlan)> = plans.iter().enumerate().collect();
    order.sort_by_key(|(_, p)| p.tiling_key);
    let nodes: usize = plans.iter().map(|p| p.nodes.len()).sum();
    let mut s = String::with_capacity(nodes.saturating_mul(1024).saturating_add(HELPERS.len()));
    let _ = writeln!(s, "// Ascend C kernel '{name}' (generated by ascendir).");
    s.push_str("#include \"kernel_operator.h\"\n");
    s.push_str("#include \"autofuse_tiling_data.h\"\n\n");
    s.push_str("using namespace AscendC;\n\n");
    let _ = writeln!(s, "KERNEL_TASK_TYPE_DEFAULT({});\n", task_type(plans));
    s.push_str(HELPERS);
    for (case, p) in &order {
        function(p, *case, io, &mut s)?;
    }
    let mut args: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for d in io.inputs.iter().chain(io.outputs.iter()) {
        args.push(format!("GM_ADDR {}", d.name));
        names.push(d.name.clone());
    }
    args.push("GM_ADDR workspace".into());
    args.push("GM_ADDR gm_tiling_data".into());
    names.push("workspace".into());
    names.push("&t".into());
    let _ = writeln!(
        s,
        "extern \"C\" __global__ __aicore__ void {name}({}) {{",
        args.join(", ")
    );
    s.push_str("  REGISTER_TILING_DEFAULT(AutofuseTilingData);\n");
    s.push_str("  GET_TILING_DATA(t, gm_tiling_data);\n");
    for (k, (_, p)) in order.iter().enumerate() {
        let kw = if k == 0 { "  if" } else { "  } else if" };
        let _ = writeln!(s, "{kw} (TILING_KEY_IS({})) {{", p.tiling_key);
        let _ = writeln!(s, "    {}({});", p.name, names.join(", "));
    }
    s.push_str("  }\n}\n");
    Ok(s)
}
