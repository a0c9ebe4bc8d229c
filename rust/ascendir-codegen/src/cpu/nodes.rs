//! Per-node emission of the CPU kernel: operands, the op call, reductions, concat.

use super::*;

impl<'a> Gen<'a> {
    /// The producer `(node, output)` feeding input `slot` of node `n`.
    fn input_of(&self, n: &PlanNode, slot: usize) -> AscResult<(usize, usize)> {
        match n.inputs.get(slot) {
            Some(Some(qo)) => Ok(*qo),
            _ => Err(unsupported(
                &self.p.name,
                &n.name,
                format!("input {slot} is not connected"),
            )),
        }
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
        name: &str,
    ) -> AscResult<&'static str> {
        let p = self.p;
        let (q, o) = self.input_of(n, slot)?;
        let prod = &p.nodes[q];
        let t = prod
            .outputs
            .get(o)
            .ok_or_else(|| unsupported(&p.name, &n.name, format!("input {slot} has no tensor")))?;
        let ct = ctype(t.dtype).ok_or_else(|| {
            unsupported(
                &p.name,
                &n.name,
                format!("input dtype {} unsupported", t.dtype.name()),
            )
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
                    format!(
                        "Scalar '{}' has value {text:?}, not a {}",
                        prod.name,
                        t.dtype.name()
                    ),
                )
            })?;
            self.linef(format_args!(
                "const {ct} {v}_val = ascendir_rt::store_as<{ct}>({lit}); const {ct} *{v} = &{v}_val;"
            ));
            self.linef(format_args!("const int64_t {v}_s[{nd}] = {{0}};"));
            return Ok(ct);
        }
        let Some(tk) = self.tkey(q, o) else {
            return Err(unsupported(
                &p.name,
                &n.name,
                format!(
                    "input from '{}' ({}) is not a UB tensor",
                    prod.name, prod.op_type
                ),
            ));
        };
        self.extents(v, t, r);
        self.ub_strides(v, t);
        self.read(v, ct, tk, name);
        // Strides over the iteration space: 0 where this operand has extent 1 (broadcast).
        emit!(self; "int64_t ", v, "_s[", nd, "];");
        emit!(self; "ACHK(ascendir_rt::bcast(", nd, ", ", v, "_ln, ", v, "_us, ", space, ", ", v, "_s, ", name, "));");
        Ok(ct)
    }

    /// The vectorization check and the read of UB tensor `tk` as `<v>` (type `ct`).
    fn read(&mut self, v: &str, ct: &str, tk: usize, name: &str) {
        let nd = self.nd();
        emit!(self; "ACHK(cx.vect(", v, "_ln, ", v, "_us, ", nd, ", ", name, "));");
        emit!(self; "const ", ct, " *", v, " = (const ", ct, " *)cx.read(", tk, ", ", v, "_ln, ", v,
            "_us, ", nd, ", sizeof(", ct, "), ", name, "); if (!", v, ") return cx.err;");
    }

    pub(super) fn node(&mut self, pos: usize, r: &Ranges) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let nd = self.nd();
        let name = self.labels.label(&n.name);
        let t = n
            .outputs
            .first()
            .ok_or_else(|| unsupported(&p.name, &n.name, "no output".into()))?;
        let oct = ctype(t.dtype).ok_or_else(|| {
            unsupported(
                &p.name,
                &n.name,
                format!("dtype {} unsupported", t.dtype.name()),
            )
        })?;
        let note = self.labels.comment(&n.name);
        emit!(self; "{  // ", &note, " (", &n.op_type, ')');
        self.indent += 1;
        let offset = match n.attr("offset") {
            Some(AttrValue::Expr(e)) => self.pool.get(e).to_string(),
            Some(AttrValue::Int(i)) => format!("{i}LL"),
            _ => "0".to_string(),
        };
        match n.compute_type {
            ComputeType::Load => {
                let (di, _, gct) = self.gm_operand(n, 0)?;
                self.extents("o", t, r);
                self.gm_view("o", t, &offset);
                self.write_target(pos, oct, &name)?;
                self.linef(format_args!(
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
                let act = self.operand(n, 0, "a", r, "o_ln", &name)?;
                let _ = act;
                let atomic = match n.attr("atomic") {
                    Some(AttrValue::Str(s)) if !s.is_empty() => Some(s.clone()),
                    _ => None,
                };
                match atomic.as_deref() {
                    None => self.linef(format_args!(
                        "ascendir_rt::map1({nd}, o_ln, ({gct} *)gout[{oi}] + o_go, o_gs, a, a_s, ascendir_rt::OpId());"
                    )),
                    Some(op @ ("add" | "max" | "min")) => {
                        let f = match op {
                            "add" => "OpAdd",
                            "max" => "OpMaximum",
                            _ => "OpMinimum",
                        };
                        self.linef(format_args!(
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
                    self.concat_operand(n, slot, &v, r, &name)?;
                    names.push(v);
                }
                self.write_target(pos, oct, &name)?;
                self.line("int axis = -1;");
                for v in &names {
                    self.linef(format_args!(
                        "for (int k = 0; k < {nd} && axis < 0; ++k) if ({v}_ln[k] != o_ln[k]) axis = k;"
                    ));
                }
                self.line("if (axis < 0) axis = 0;");
                self.line("int64_t at = 0;");
                for v in &names {
                    self.linef(format_args!(
                        "ascendir_rt::map1({nd}, {v}_ln, o + at * o_us[axis], o_s, {v}, {v}_us, ascendir_rt::OpId()); at += {v}_ln[axis];"
                    ));
                }
            }
            ComputeType::Gather => self.gather(pos, r, oct, &name)?,
            _ => {
                self.extents("o", t, r);
                let ty = n.op_type.as_str();
                let k = n.inputs.len();
                let mut ops = Vec::new();
                for slot in 0..k {
                    let v = format!("a{slot}");
                    self.operand(n, slot, &v, r, "o_ln", &name)?;
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

    /// The GM Data input `slot` of node `n`: its interface index, tensor and C type.
    fn gm_operand(
        &self,
        n: &PlanNode,
        slot: usize,
    ) -> AscResult<(usize, &'a PlanTensor, &'static str)> {
        let p = self.p;
        let (q, o) = self.input_of(n, slot)?;
        let src = &p.nodes[q];
        let di = self
            .inputs
            .iter()
            .position(|a| a.name == src.name && src.op_type == "Data")
            .ok_or_else(|| {
                unsupported(
                    &p.name,
                    &n.name,
                    format!(
                        "input {slot} is '{}' ({}), only Data inputs are read from GM",
                        src.name, src.op_type
                    ),
                )
            })?;
        let t = src
            .outputs
            .get(o)
            .ok_or_else(|| unsupported(&p.name, &n.name, format!("input {slot} has no tensor")))?;
        let ct = ctype(t.dtype).ok_or_else(|| {
            unsupported(
                &p.name,
                &n.name,
                format!("input {slot} dtype {} unsupported", t.dtype.name()),
            )
        })?;
        Ok((di, t, ct))
    }

    /// Gather over the current ranges, as the simulator: params (`x1`) and indices (`x2`) read
    /// from GM; each output element reads params at its own coordinates, with the gathered
    /// params axis replaced by the index found at its coordinates of the indices.
    fn gather(&mut self, pos: usize, r: &Ranges, oct: &str, name: &str) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let nd = self.nd();
        let (pdi, t1, pct) = self.gm_operand(n, 0)?;
        let (xdi, t2, xct) = self.gm_operand(n, 1)?;
        if !matches!(xct, "int32_t" | "int64_t") {
            return Err(unsupported(
                &p.name,
                &n.name,
                format!("indices of dtype {} (int32 or int64 only)", t2.dtype.name()),
            ));
        }
        let rank = t1.base_axes.len() as i64;
        let axis = match n.attr("axis") {
            Some(AttrValue::Int(a)) => *a,
            _ => 0,
        };
        let axis = if axis < 0 { axis + rank } else { axis };
        let ax = usize::try_from(axis)
            .ok()
            .filter(|a| *a < t1.base_axes.len())
            .ok_or_else(|| {
                unsupported(
                    &p.name,
                    &n.name,
                    format!("axis {axis} outside the params rank {rank}"),
                )
            })?;
        let count = self.pool.get(&t1.base_repeats[ax]);
        let gstride = self.pool.get(&t1.base_strides[ax]);
        let negative = matches!(
            n.attr("negative_index_support"),
            Some(AttrValue::Bool(true))
        );
        let t = &n.outputs[0];
        self.extents("o", t, r);
        // The params view over the output's coordinates: its gathered axis is not one of them
        // (extent 1 in the output), so the view starts at 0 there and the index selects the row.
        self.extents("p", t1, r);
        self.gm_view("p", t1, "0");
        self.extents("x", t2, r);
        self.gm_view("x", t2, "0");
        self.write_target(pos, oct, name)?;
        emit!(self; "int64_t p_s[", nd, "], x_s[", nd, "];");
        emit!(self; "for (int k = 0; k < ", nd, "; ++k) { p_s[k] = o_ln[k] == 1 ? 0 : p_gs[k]; x_s[k] = x_ln[k] == 1 ? 0 : x_gs[k]; }");
        emit!(self; "ACHK(ascendir_rt::gather(", nd, ", o_ln, o, o_s, (const ", pct, " *)gin[", pdi,
            "] + p_go, p_s, (const ", xct, " *)gin[", xdi, "] + x_go, x_s, ", count, ", ", gstride,
            ", ", if negative { "true" } else { "false" }, ", ", name, "));");
        Ok(())
    }

    fn concat_operand(
        &mut self,
        n: &PlanNode,
        slot: usize,
        v: &str,
        r: &Ranges,
        name: &str,
    ) -> AscResult<()> {
        let p = self.p;
        let (q, o) = self.input_of(n, slot)?;
        let Some(tk) = self.tkey(q, o) else {
            return Err(unsupported(
                &p.name,
                &n.name,
                format!("input {slot} is not a UB tensor"),
            ));
        };
        let t = &p.nodes[q].outputs[o];
        let ct = ctype(t.dtype).ok_or_else(|| unsupported(&p.name, &n.name, "dtype".into()))?;
        self.extents(v, t, r);
        self.ub_strides(v, t);
        self.read(v, ct, tk, name);
        Ok(())
    }

    /// Acquire the node's output slot and declare `o` (typed pointer), `o_us`, `o_s`.
    fn write_target(&mut self, pos: usize, oct: &str, name: &str) -> AscResult<()> {
        self.write_target_fresh(pos, oct, name, "true")
    }

    fn write_target_fresh(
        &mut self,
        pos: usize,
        oct: &str,
        name: &str,
        fresh: &str,
    ) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let t = &n.outputs[0];
        let Some(tk) = self.tkey(pos, 0) else {
            return Err(unsupported(
                &p.name,
                &n.name,
                "output is not a UB tensor".into(),
            ));
        };
        let nd = self.nd();
        self.ub_strides("o", t);
        emit!(self; "ACHK(cx.vect(o_ln, o_us, ", nd, ", ", name, "));");
        self.indent_line();
        self.body.push_str("const int in_keys[] = {");
        let mut ins = 0usize;
        for i in &n.inputs {
            let Some(k) = i.and_then(|(q, o)| self.tkey(q, o)) else {
                continue;
            };
            if ins > 0 {
                self.body.push_str(", ");
            }
            put!(&mut self.body; k);
            ins += 1;
        }
        if ins == 0 {
            self.body.push_str("-1");
        }
        self.body.push_str("};\n");
        emit!(self; oct, " *o = (", oct, " *)cx.write(", tk, ", ", fresh, ", o_ln, o_us, ", nd, ", sizeof(",
            oct, "), in_keys, ", ins, ", ", name, "); if (!o) return cx.err;");
        emit!(self; "int64_t o_s[", nd, "]; ascendir_rt::out_strides(", nd, ", o_ln, o_us, o_s);");
        Ok(())
    }

    fn reduce(&mut self, pos: usize, r: &Ranges, oct: &str, name: &str) -> AscResult<()> {
        let p = self.p;
        let n = &p.nodes[pos];
        let nd = self.nd();
        let t = &n.outputs[0];
        let kind = reduce_kind(&n.op_type).ok_or_else(|| {
            unsupported(
                &p.name,
                &n.name,
                format!("reduce {} unsupported", n.op_type),
            )
        })?;
        let Some(Some((q, o))) = n.inputs.first().cloned() else {
            return Err(unsupported(&p.name, &n.name, "reduce without input".into()));
        };
        let Some(tk) = self.tkey(q, o) else {
            return Err(unsupported(
                &p.name,
                &n.name,
                "reduce input is not a UB tensor".into(),
            ));
        };
        let it = &p.nodes[q].outputs[o];
        let ict = ctype(it.dtype).ok_or_else(|| unsupported(&p.name, &n.name, "dtype".into()))?;
        self.extents("o", t, r);
        self.extents("a", it, r);
        self.ub_strides("a", it);
        self.read("a", ict, tk, name);
        // Mean divides by the full extent of the reduced axes.
        let mut total = Vec::new();
        for b in &n.reduced_base {
            let rep = KernelPlan::repeat(it, *b);
            total.push(self.pool.get(&rep).to_string());
        }
        let total = if total.is_empty() {
            "1".to_string()
        } else {
            total.join(" * ")
        };
        let first = if n.reduce_loops.is_empty() {
            "true".to_string()
        } else {
            n.reduce_loops
                .iter()
                .map(|l| format!("i{l} == 0"))
                .collect::<Vec<_>>()
                .join(" && ")
        };
        self.linef(format_args!("const bool first = {first};"));
        self.write_target_fresh(pos, oct, name, "first")?;
        self.linef(format_args!(
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
        if v > 0.0 {
            "INFINITY".into()
        } else {
            "-INFINITY".into()
        }
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
