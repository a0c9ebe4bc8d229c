//! One template's C++ function: the loop nest, the prologue (symbols, hoisted sizes,
//! containers, tensor states) and the GM interface.

use super::*;

/// The GM interface of a plan: inputs, outputs, and the output index of each Store node.
type Interface = (Vec<GmArg>, Vec<GmArg>, FxHashMap<usize, usize>);

/// The GM interface of a plan: Data nodes in order, store targets in first-seen order.
pub(super) fn interface(p: &KernelPlan) -> AscResult<Interface> {
    let mut ins = Vec::new();
    for n in &p.nodes {
        if n.op_type == "Data" {
            let dt = n
                .outputs
                .first()
                .map(|t| t.dtype)
                .unwrap_or(DataType::UNDEFINED);
            ins.push(GmArg {
                name: n.name.clone(),
                dtype: dt,
            });
        }
    }
    let mut outs: Vec<GmArg> = Vec::new();
    let mut store_out = FxHashMap::default();
    for (pos, n) in p.nodes.iter().enumerate() {
        if !matches!(
            n.compute_type,
            ComputeType::Store | ComputeType::ReduceStore
        ) {
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
                o.outputs
                    .first()
                    .map(|t| t.dtype)
                    .unwrap_or(DataType::UNDEFINED),
            ),
            None => (
                n.name.clone(),
                t.map(|t| t.dtype).unwrap_or(DataType::UNDEFINED),
            ),
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

/// Append the function `impl_<index>` of template `p` to `pro`.
pub(super) fn function(
    p: &KernelPlan,
    index: usize,
    fields: &[TilingField],
    inputs: &[GmArg],
    outputs: &[GmArg],
    labels: &mut Labels,
    pro: &mut String,
) -> AscResult<()> {
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
        labels,
        pool: Pool::new(),
        body: String::with_capacity(p.nodes.len().saturating_mul(1024)),
        indent: 1,
        var: 0,
        tkeys,
        inputs,
        outputs,
        store_out: FxHashMap::default(),
    };
    for (pos, oi) in store_out {
        let name = &my_out[oi].name;
        let k = outputs
            .iter()
            .position(|a| &a.name == name)
            .ok_or_else(|| {
                AscError::InvalidArgument(format!(
                    "graph '{}': output '{name}' not in the kernel",
                    p.name
                ))
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
    if p.loops
        .iter()
        .skip(1)
        .any(|a| p.axis(*a).map(|x| x.kind) == Some(AxisType::BlockOuter))
    {
        return Err(unsupported(
            &p.name,
            "",
            "block outer axis below the outermost loop".into(),
        ));
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
            return Err(unsupported(
                &p.name,
                &n.name,
                "node outside the block loop".into(),
            ));
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
                g.linef(format_args!("if (i0 >= {sz}) break;"));
            } else {
                g.linef(format_args!(
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
    let _ = writeln!(
        pro,
        "static int impl_{index}(const AutofuseTilingData *t, void *const *gin, void *const *gout, uint32_t block_idx, uint8_t *ub, uint32_t ub_size, uint32_t flags) {{"
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
    let gname = g.labels.label(&p.name);
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
                let text = cexpr::print(&t.fam_offset, &|s| format!("S_{s}"))
                    .unwrap_or_else(|| "ascendir_rt::ri(0)".into());
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
    let _ = writeln!(
        pro,
        "  int occ[{}]; for (auto &x : occ) x = -1;",
        nslots.max(1)
    );
    let names: Vec<String> = tkeys
        .iter()
        .map(|(pos, _)| g.labels.label(&p.nodes[*pos].name))
        .collect();
    let names = if names.is_empty() {
        "\"\"".to_string()
    } else {
        names.join(", ")
    };
    let _ = writeln!(pro, "  static const char *const tnames[] = {{{names}}};");
    let _ = writeln!(
        pro,
        "  ascendir_rt::Ctx cx{{ub, (int64_t)ub_size, flags, conts, ts, gens, occ, 0, {gname}, tnames}};"
    );
    let _ = writeln!(pro, "  (void)cx;");
    pro.push_str(&g.body);
    pro.push_str("  return 0;\n}\n");
    Ok(())
}
