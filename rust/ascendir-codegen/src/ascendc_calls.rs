//! The compute API call of every node of an Ascend C kernel function ([`super::ascendc`]):
//! Load / Store as `DataCopyPadExtend` over the copy dimensions, element-wise ops as their
//! Ascend C vector API (scalar operands through the `...s` forms), Broadcast as `Duplicate` /
//! row copies, reductions in [`super::ascendc_reduce`].

use super::ascendc::{err, Func};
use super::ascendc_reduce::reduce;
use super::plan::{PlanNode, PlanTensor};
use super::tiling_data::valid_name;
use ascendir_asc::error::AscResult;
use ascendir_asc::graph::{AttrValue, ComputeType, MemHardware};
use ascendir_ir::DataType;

fn unary_api(op: &str) -> Option<(&'static str, bool)> {
    // (API, takes a shared temporary buffer)
    Some(match op {
        "Abs" => ("Abs", false),
        "Exp" => ("Exp", false),
        "Ln" | "Log" => ("Ln", false),
        "Sqrt" => ("Sqrt", false),
        "Rsqrt" => ("Rsqrt", false),
        "Reciprocal" => ("Reciprocal", false),
        "Relu" => ("Relu", false),
        "LogicalNot" => ("Not", false),
        "Sigmoid" => ("Sigmoid", true),
        "Tanh" => ("Tanh", true),
        "Erf" => ("Erf", true),
        "Sign" => ("Sign", true),
        "Gelu" => ("Gelu", false),
        _ => return None,
    })
}

fn binary_api(op: &str) -> Option<&'static str> {
    Some(match op {
        "Add" => "Add",
        "Sub" => "Sub",
        "Mul" => "Mul",
        "Div" | "TrueDiv" => "Div",
        "Maximum" => "Max",
        "Minimum" => "Min",
        "LogicalAnd" | "BitwiseAnd" => "And",
        "LogicalOr" => "Or",
        _ => return None,
    })
}

fn compare_mode(op: &str) -> Option<&'static str> {
    Some(match op {
        "Eq" => "EQ",
        "Ne" => "NE",
        "Gt" => "GT",
        "Ge" => "GE",
        "Lt" => "LT",
        "Le" => "LE",
        _ => return None,
    })
}

pub(super) fn tmp_arg(f: &Func<'_>, n: &PlanNode) -> Option<String> {
    n.tmps
        .first()
        .map(|ci| format!("tmp_buf_{}", f.p.containers[*ci].id))
}

/// The compute API call of node `pos`.
pub(super) fn call(f: &mut Func<'_>, pos: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    match n.compute_type {
        ComputeType::Load => {
            let Some(Some((q, _))) = n.inputs.first().copied() else {
                return Err(err(&p.name, &n.name, "Load without input".into()));
            };
            let g = f
                .data_global
                .iter()
                .find(|(d, _)| *d == q)
                .map(|(_, g)| g.clone())
                .ok_or_else(|| err(&p.name, &n.name, "Load does not read a Data node".into()))?;
            let t = f.tensor(pos, 0)?;
            let ct = f.ctype(n, t)?;
            let off = f.gm_offset(n, t)?;
            let dims = f.copy_dims(t, t)?;
            let l = f.local(pos, 0);
            f.copy(true, &l, &g, &off, ct, &dims);
        }
        ComputeType::Store | ComputeType::ReduceStore => {
            let g = f
                .store_global
                .iter()
                .find(|(s, _)| *s == pos)
                .map(|(_, g)| g.clone())
                .ok_or_else(|| {
                    err(
                        &p.name,
                        &n.name,
                        "Store does not feed an Output node".into(),
                    )
                })?;
            let Operand::Tensor(l, q, o) = f.operand(n, 0, "float")? else {
                return Err(err(&p.name, &n.name, "Store of a scalar".into()));
            };
            let src = f.tensor(q, o)?;
            let gm = f.tensor(pos, 0)?;
            let ct = f.ctype(n, src)?;
            let off = f.gm_offset(n, gm)?;
            let dims = f.copy_dims(src, gm)?;
            match n.attr("atomic") {
                Some(AttrValue::Str(s)) if !s.is_empty() => {
                    let mode = match s.as_str() {
                        "add" => "SetAtomicAdd",
                        "max" => "SetAtomicMax",
                        "min" => "SetAtomicMin",
                        other => {
                            return Err(err(
                                &p.name,
                                &n.name,
                                format!("unknown atomic store operation '{other}'"),
                            ))
                        }
                    };
                    f.linef(format_args!("AscendC::{mode}<{ct}>();"));
                    f.copy(false, &l, &g, &off, ct, &dims);
                    f.line("AscendC::SetAtomicNone();");
                }
                _ => f.copy(false, &l, &g, &off, ct, &dims),
            }
        }
        ComputeType::Reduce => reduce(f, pos)?,
        ComputeType::Broadcast => broadcast(f, pos)?,
        ComputeType::Concat => concat(f, pos)?,
        _ => elementwise(f, pos)?,
    }
    Ok(())
}

fn elementwise(f: &mut Func<'_>, pos: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    let t = f.tensor(pos, 0)?;
    let ct = f.ctype(n, t)?;
    let dst = format!("{}[0]", f.local(pos, 0));
    let cnt = format!("{}_actual_size", f.local(pos, 0));
    let ty = n.op_type.as_str();
    let k = n.inputs.len();
    // Operands of the same extent as the result (explicit Broadcast nodes do the rest).
    for slot in 0..k {
        if let Operand::Tensor(_, q, o) = f.operand(n, slot, ct)? {
            let it = f.tensor(q, o)?;
            let differs = it.vect_repeats.len() == t.vect_repeats.len()
                && it
                    .vect_repeats
                    .iter()
                    .zip(&t.vect_repeats)
                    .any(|(a, b)| (a.as_i64() == Some(1)) != (b.as_i64() == Some(1)));
            if differs {
                return Err(err(
                    &p.name,
                    &n.name,
                    format!("operand {slot} broadcasts inline; a Broadcast node is needed"),
                ));
            }
        }
    }
    let line = match (ty, k) {
        ("Neg", 1) => {
            let a = f.operand(n, 0, ct)?.text();
            format!("Muls({dst}, {a}, ({ct})(-1), {cnt});")
        }
        ("LeakyRelu", 1) => {
            let a = f.operand(n, 0, ct)?.text();
            let slope = match n.attr("negative_slope") {
                Some(AttrValue::Float(v)) => format!("{v:?}"),
                Some(AttrValue::Int(v)) => v.to_string(),
                Some(AttrValue::Str(s)) if s.trim().parse::<f64>().is_ok() => s.trim().to_string(),
                _ => "0.01".to_string(),
            };
            format!("LeakyRelu({dst}, {a}, ({ct})({slope}), {cnt});")
        }
        ("Cast", 1) => {
            let a = f.operand(n, 0, ct)?.text();
            let mode = if matches!(
                t.dtype,
                DataType::FLOAT | DataType::FLOAT16 | DataType::BF16
            ) {
                "RoundMode::CAST_NONE"
            } else {
                "RoundMode::CAST_RINT"
            };
            format!("Cast({dst}, {a}, {mode}, {cnt});")
        }
        ("Nop" | "Ub2ub", 1) => {
            let a = f.operand(n, 0, ct)?.text();
            format!("DataCopyExtend({dst}, {a}, KernelUtils::BlkAlign<{ct}>({cnt}));")
        }
        ("Transpose", 1) => {
            let a = f.operand(n, 0, ct)?.text();
            let tb = tmp_arg(f, n).ok_or_else(|| {
                err(
                    &p.name,
                    &n.name,
                    "Transpose without a temporary buffer".into(),
                )
            })?;
            let field = format!(
                "{}_{}",
                valid_name(&format!("{}_tilingData", n.name)),
                f.case
            );
            let l = f.local(pos, 0);
            f.linef(format_args!(
                "ConfusionTransposeTiling {l}_tiling = t->{field};"
            ));
            format!(
                "ConfusionTranspose({dst}, {a}, {tb}, TransposeType::TRANSPOSE_ND2ND_ONLY, {l}_tiling);"
            )
        }
        ("RemovePad", 1) => {
            let Operand::Tensor(src, q, o) = f.operand(n, 0, ct)? else {
                return Err(err(&p.name, &n.name, "RemovePad of a scalar".into()));
            };
            let it = f.tensor(q, o)?;
            let nd = t.vect_axes.len();
            if nd == 0 || it.vect_axes.len() != nd {
                return Err(err(
                    &p.name,
                    &n.name,
                    "RemovePad needs matching vectorized axes".into(),
                ));
            }
            let cols = f.vext(t, nd - 1)?;
            let mut rows = Vec::new();
            for kk in 0..nd - 1 {
                rows.push(f.vext(t, kk)?);
            }
            let rows = if rows.is_empty() {
                "1".to_string()
            } else {
                rows.join(" * ")
            };
            let (ss, ds) = if nd >= 2 {
                (
                    f.tx(&it.vect_strides[nd - 2])?,
                    f.tx(&t.vect_strides[nd - 2])?,
                )
            } else {
                ("0".to_string(), "0".to_string())
            };
            format!(
                "RemovePadExtend({}, {src}, {rows}, {cols}, {ss}, {ds});",
                f.local(pos, 0)
            )
        }
        ("Where" | "Select", 3) => {
            let m = f.operand(n, 0, ct)?.text();
            let a = f.operand(n, 1, ct)?;
            let b = f.operand(n, 2, ct)?;
            let mode = match (&a, &b) {
                (Operand::Tensor(..), Operand::Tensor(..)) => "SELMODE::VSEL_TENSOR_TENSOR_MODE",
                _ => "SELMODE::VSEL_TENSOR_SCALAR_MODE",
            };
            format!(
                "Select({dst}, {m}, {}, {}, {mode}, {cnt});",
                a.text(),
                b.text()
            )
        }
        (op, 1) if unary_api(op).is_some() => {
            let (api, tmp) = unary_api(op).unwrap_or(("Abs", false));
            let a = f.operand(n, 0, ct)?.text();
            match (tmp, tmp_arg(f, n)) {
                (true, Some(tb)) => format!("{api}({dst}, {a}, {tb}, {cnt});"),
                _ => format!("{api}({dst}, {a}, {cnt});"),
            }
        }
        ("Pow", 2) => {
            let a = f.operand(n, 0, ct)?;
            let b = f.operand(n, 1, ct)?;
            match (&a, &b) {
                // x² (RMSNorm, GELU's cube via x·x²): one multiply, exact.
                (Operand::Tensor(..), Operand::Scalar(s)) if scalar_is(s, 2.0) => {
                    format!("Mul({dst}, {}, {}, {cnt});", a.text(), a.text())
                }
                (Operand::Tensor(..), Operand::Scalar(s)) => {
                    format!("Power({dst}, {}, ({ct})({s}), {cnt});", a.text())
                }
                (Operand::Scalar(s), Operand::Tensor(..)) => {
                    format!("Power({dst}, ({ct})({s}), {}, {cnt});", b.text())
                }
                (Operand::Tensor(..), Operand::Tensor(..)) => {
                    format!("Power({dst}, {}, {}, {cnt});", a.text(), b.text())
                }
                _ => return Err(err(&p.name, &n.name, "Pow of two scalars".into())),
            }
        }
        (op, 2) if compare_mode(op).is_some() => {
            let a = f.operand(n, 0, ct)?.text();
            let b = f.operand(n, 1, ct)?.text();
            format!(
                "Compare({dst}, {a}, {b}, CMPMODE::{}, {cnt});",
                compare_mode(op).unwrap_or("EQ")
            )
        }
        (op, 2) if binary_api(op).is_some() => {
            let api = binary_api(op).unwrap_or("Add");
            let a = f.operand(n, 0, ct)?;
            let b = f.operand(n, 1, ct)?;
            match (&a, &b) {
                (Operand::Tensor(..), Operand::Tensor(..)) => {
                    format!("{api}({dst}, {}, {}, {cnt});", a.text(), b.text())
                }
                (Operand::Tensor(..), Operand::Scalar(s)) => match api {
                    "Add" => format!("Adds({dst}, {}, {s}, {cnt});", a.text()),
                    "Mul" => format!("Muls({dst}, {}, {s}, {cnt});", a.text()),
                    "Max" => format!("Maxs({dst}, {}, {s}, {cnt});", a.text()),
                    "Min" => format!("Mins({dst}, {}, {s}, {cnt});", a.text()),
                    "Sub" => format!("Adds({dst}, {}, ({ct})(-({s})), {cnt});", a.text()),
                    "Div" => format!("Muls({dst}, {}, ({ct})(1.0f / ({s})), {cnt});", a.text()),
                    _ => {
                        return Err(err(&p.name, &n.name, format!("{op} with a scalar operand")))
                    }
                },
                (Operand::Scalar(s), Operand::Tensor(..)) => match api {
                    "Add" => format!("Adds({dst}, {}, {s}, {cnt});", b.text()),
                    "Mul" => format!("Muls({dst}, {}, {s}, {cnt});", b.text()),
                    "Max" => format!("Maxs({dst}, {}, {s}, {cnt});", b.text()),
                    "Min" => format!("Mins({dst}, {}, {s}, {cnt});", b.text()),
                    "Sub" => format!(
                        "Muls({dst}, {}, ({ct})(-1), {cnt});\nAscendC::PipeBarrier<PIPE_V>();\nAdds({dst}, {dst}, {s}, {cnt});",
                        b.text()
                    ),
                    "Div" => format!(
                        "Reciprocal({dst}, {}, {cnt});\nAscendC::PipeBarrier<PIPE_V>();\nMuls({dst}, {dst}, {s}, {cnt});",
                        b.text()
                    ),
                    _ => {
                        return Err(err(&p.name, &n.name, format!("{op} with a scalar operand")))
                    }
                },
                _ => return Err(err(&p.name, &n.name, format!("{op} of two scalars"))),
            }
        }
        _ => {
            return Err(err(
                &p.name,
                &n.name,
                format!("op {ty} with {k} inputs has no Ascend C API call"),
            ))
        }
    };
    f.line(&line);
    Ok(())
}

/// Whether the printed literal `s` is the number `v`.
fn scalar_is(s: &str, v: f64) -> bool {
    let t = s
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim_end_matches(['f', 'F']);
    t.parse::<f64>().is_ok_and(|x| x == v)
}

/// A Concat: each operand's tile copied into the result's tile at its offset on the concat
/// axis (the first vectorized axis where an operand's extent differs from the result's),
/// element by element over every vectorized axis (operands keep their own strides).
fn concat(f: &mut Func<'_>, pos: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    let t = f.tensor(pos, 0)?;
    let ct = f.ctype(n, t)?;
    let l = f.local(pos, 0);
    let nd = t.vect_axes.len();
    let mut operands = Vec::with_capacity(n.inputs.len());
    for slot in 0..n.inputs.len() {
        match f.operand(n, slot, ct)? {
            Operand::Tensor(src, q, o) => operands.push((src, f.tensor(q, o)?)),
            Operand::Scalar(_) => {
                return Err(err(&p.name, &n.name, "Concat of a scalar".into()));
            }
        }
    }
    if operands.iter().any(|(_, it)| it.vect_axes != t.vect_axes) {
        return Err(err(
            &p.name,
            &n.name,
            "Concat operands need the result's vectorized axes".into(),
        ));
    }
    let axis = (0..nd)
        .find(|&k| {
            operands
                .iter()
                .any(|(_, it)| it.vect_repeats[k] != t.vect_repeats[k])
        })
        .unwrap_or(0);
    f.line("AscendC::PipeBarrier<PIPE_ALL>();");
    let mut at = String::from("0");
    for (src, it) in &operands {
        let mut dst_off = if nd == 0 {
            "0".to_string()
        } else {
            format!("({at}) * {}", f.tx(&t.vect_strides[axis])?)
        };
        let mut src_off = String::from("0");
        let mut opened = 0;
        for k in 0..nd {
            let ext = if k == axis {
                f.tx(&it.vect_repeats[k])?
            } else {
                f.vext(t, k)?
            };
            if ext == "1" {
                continue;
            }
            f.vars += 1;
            let v = format!("v{}", f.vars);
            f.linef(format_args!("for (int {v} = 0; {v} < {ext}; {v}++) {{"));
            opened += 1;
            dst_off = format!("{dst_off} + {v} * {}", f.tx(&t.vect_strides[k])?);
            src_off = format!("{src_off} + {v} * {}", f.tx(&it.vect_strides[k])?);
        }
        f.linef(format_args!(
            "{l}.SetValue({dst_off}, {src}.GetValue({src_off}));"
        ));
        for _ in 0..opened {
            f.line("}");
        }
        if nd > 0 {
            at = format!("{at} + {}", f.tx(&it.vect_repeats[axis])?);
        }
    }
    f.line("AscendC::PipeBarrier<PIPE_ALL>();");
    Ok(())
}

/// Non-unit vectorized dimensions of result `t` against input `it`:
/// `(extent, result stride, input stride or "0" when the input has extent 1 there)`.
fn dims_against(
    f: &Func<'_>,
    t: &PlanTensor,
    it: &PlanTensor,
) -> AscResult<Vec<(String, String, String, bool)>> {
    let mut out = Vec::new();
    for k in 0..t.vect_axes.len() {
        let a = t.vect_axes[k];
        let j = it.vect_axes.iter().position(|x| *x == a);
        let in_one = j.is_none_or(|j| it.vect_repeats[j].as_i64() == Some(1));
        let out_one = t.vect_repeats[k].as_i64() == Some(1);
        if out_one && in_one {
            continue;
        }
        let ext = if out_one {
            f.vext(it, j.unwrap_or(0))?
        } else {
            f.vext(t, k)?
        };
        let ist = match j {
            Some(j) if !in_one => f.tx(&it.vect_strides[j])?,
            _ => "0".into(),
        };
        out.push((ext, f.tx(&t.vect_strides[k])?, ist, in_one && !out_one));
    }
    Ok(out)
}

fn broadcast(f: &mut Func<'_>, pos: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    let t = f.tensor(pos, 0)?;
    let ct = f.ctype(n, t)?;
    let l = f.local(pos, 0);
    let cnt = format!("{l}_actual_size");
    match f.operand(n, 0, ct)? {
        Operand::Scalar(s) => {
            f.linef(format_args!("Duplicate({l}[0], {s}, {cnt});"));
            Ok(())
        }
        Operand::Tensor(src, q, o) => {
            let it = f.tensor(q, o)?;
            let dims = dims_against(f, t, it)?;
            if dims.iter().all(|d| d.3) {
                // Every non-unit axis broadcasts: one value fills the tile.
                f.line("AscendC::PipeBarrier<PIPE_ALL>();");
                f.linef(format_args!("Duplicate({l}[0], {src}.GetValue(0), {cnt});"));
                return Ok(());
            }
            let nd = dims.len();
            let mut doff = String::from("0");
            let mut soff = String::from("0");
            let scalar_reads = dims.last().is_some_and(|d| d.3);
            if scalar_reads {
                f.line("AscendC::PipeBarrier<PIPE_ALL>();");
            }
            for d in dims.iter().take(nd.saturating_sub(1)) {
                f.vars += 1;
                let v = format!("v{}", f.vars);
                f.linef(format_args!("for (int {v} = 0; {v} < {}; {v}++) {{", d.0));
                doff = format!("{doff} + {v} * {}", d.1);
                if d.2 != "0" {
                    soff = format!("{soff} + {v} * {}", d.2);
                }
            }
            if let Some(last) = dims.last() {
                if last.3 {
                    f.linef(format_args!(
                        "Duplicate({l}[{doff}], {src}.GetValue({soff}), {});",
                        last.0
                    ));
                } else {
                    f.linef(format_args!(
                        "DataCopyExtend({l}[{doff}], {src}[{soff}], KernelUtils::BlkAlign<{ct}>({}));",
                        last.0
                    ));
                }
            }
            for _ in 0..nd.saturating_sub(1) {
                f.line("}");
            }
            Ok(())
        }
    }
}

impl<'a> Func<'a> {
    /// The extent text of vectorized axis `k` of `t` ("1" for a broadcast axis).
    pub(super) fn vext(&self, t: &PlanTensor, k: usize) -> AscResult<String> {
        if t.vect_repeats.get(k).and_then(|r| r.as_i64()) == Some(1) {
            return Ok("1".into());
        }
        Ok(format!("{}_actual_size", self.axis_name(t.vect_axes[k])?))
    }

    /// The vectorized span `Σ (extent - 1) · stride + 1` of `t` in GE's text, over full tile
    /// extents (`actual` false) or the actual ones.
    pub(super) fn span(&self, t: &PlanTensor, actual: bool) -> AscResult<String> {
        let mut terms = Vec::new();
        for k in 0..t.vect_axes.len() {
            let st = &t.vect_strides[k];
            if st.as_i64() == Some(0) || t.vect_repeats[k].as_i64() == Some(1) {
                continue;
            }
            let ext = if actual {
                self.vext(t, k)?
            } else {
                self.tx(&t.vect_repeats[k])?
            };
            let term = if st.as_i64() == Some(1) {
                format!("({ext} - 1)")
            } else {
                format!("({ext} - 1) * {}", self.tx(st)?)
            };
            terms.push(term);
        }
        Ok(if terms.is_empty() {
            "1".into()
        } else {
            format!("{} + 1", terms.join(" + "))
        })
    }

    /// The GM offset of node `n`'s GM view `t`: Σ loop index × stride over its loop axes.
    pub(super) fn gm_offset(&self, n: &PlanNode, t: &PlanTensor) -> AscResult<String> {
        let mut terms = Vec::new();
        for a in n.sched.iter().take(n.depth) {
            let st = t.stride_of(*a);
            if st.as_i64() == Some(0) {
                continue;
            }
            terms.push(format!(
                "(int64_t){} * (int64_t){}",
                self.axis_name(*a)?,
                self.tx(&st)?
            ));
        }
        let base = match n.attr("offset") {
            Some(AttrValue::Expr(e)) => self.tx(e)?,
            Some(AttrValue::Int(i)) => i.to_string(),
            _ => "0".into(),
        };
        terms.push(base);
        Ok(terms.join(" + "))
    }

    /// Copy dimensions of a Load / Store: `(extent, GM stride, UB stride)` per non-unit
    /// vectorized axis of the UB tensor `ub` against the GM view `gm`.
    pub(super) fn copy_dims(
        &self,
        ub: &PlanTensor,
        gm: &PlanTensor,
    ) -> AscResult<Vec<(String, String, String)>> {
        let mut dims = Vec::new();
        for k in 0..ub.vect_axes.len() {
            if ub.vect_repeats[k].as_i64() == Some(1) {
                continue;
            }
            dims.push((
                self.vext(ub, k)?,
                self.tx(&gm.stride_of(ub.vect_axes[k]))?,
                self.tx(&ub.vect_strides[k])?,
            ));
        }
        if dims.last().is_some_and(|d| d.1 != "1") {
            dims.push(("1".into(), "1".into(), "1".into()));
        }
        Ok(dims)
    }

    /// Print a DataCopyPadExtend between `local` and `global[offset]` over `dims`, looping
    /// over all but the last two dimensions.
    pub(super) fn copy(
        &mut self,
        load: bool,
        local: &str,
        global: &str,
        offset: &str,
        ct: &str,
        dims: &[(String, String, String)],
    ) {
        let nd = dims.len();
        let lead = nd.saturating_sub(2);
        let mut goff = offset.to_string();
        let mut loff = String::new();
        for (k, d) in dims.iter().take(lead).enumerate() {
            self.vars += 1;
            let v = format!("v{}", self.vars);
            self.linef(format_args!("for (int {v} = 0; {v} < {}; {v}++) {{", d.0));
            let _ = k;
            goff = format!("{goff} + (int64_t){v} * (int64_t){}", d.1);
            loff = if loff.is_empty() {
                format!("{v} * {}", d.2)
            } else {
                format!("{loff} + {v} * {}", d.2)
            };
        }
        let lt = if loff.is_empty() {
            local.to_string()
        } else {
            format!("{local}[{loff}]")
        };
        let (count, len, gm_gap, ub_gap) = match nd {
            0 => (
                "1".to_string(),
                "1".to_string(),
                "0".to_string(),
                "0".to_string(),
            ),
            1 => (
                "1".to_string(),
                dims[0].0.clone(),
                "0".to_string(),
                "0".to_string(),
            ),
            _ => {
                let r = &dims[nd - 2];
                let c = &dims[nd - 1];
                (
                    r.0.clone(),
                    c.0.clone(),
                    format!("{} - {}", r.1, c.0),
                    format!("{} - KernelUtils::BlkAlign<{ct}>({})", r.2, c.0),
                )
            }
        };
        if load {
            self.linef(format_args!(
                "DataCopyPadExtend({lt}, {global}[{goff}], {count}, {len}, {gm_gap}, {ub_gap});"
            ));
        } else {
            self.linef(format_args!(
                "DataCopyPadExtend({global}[{goff}], {lt}, {count}, {len}, {ub_gap}, {gm_gap});"
            ));
        }
        for _ in 0..lead {
            self.line("}");
        }
    }

    /// Operand text of input `slot` of `n`: a UB tensor `local_k[0]` or a scalar literal.
    pub(super) fn operand(&self, n: &PlanNode, slot: usize, ct: &str) -> AscResult<Operand> {
        let p = self.p;
        let Some(Some((q, o))) = n.inputs.get(slot).copied() else {
            return Err(err(
                &p.name,
                &n.name,
                format!("input {slot} is not connected"),
            ));
        };
        let prod = &p.nodes[q];
        if prod.op_type == "Scalar" {
            let text = match prod.attr("value") {
                Some(AttrValue::Str(s)) => s.trim().to_string(),
                Some(AttrValue::Int(i)) => i.to_string(),
                Some(AttrValue::Float(f)) => format!("{f:?}"),
                Some(AttrValue::Bool(b)) => (*b as i32).to_string(),
                _ => String::new(),
            };
            let lit = match text.to_ascii_lowercase().as_str() {
                "inf" | "+inf" | "infinity" => format!("({ct})(__builtin_inff())"),
                "-inf" | "-infinity" => format!("({ct})(-__builtin_inff())"),
                s if s.parse::<f64>().is_ok() => format!("({ct})({text})"),
                _ => {
                    return Err(err(
                        &p.name,
                        &n.name,
                        format!("Scalar '{}' has value {text:?}", prod.name),
                    ))
                }
            };
            return Ok(Operand::Scalar(lit));
        }
        let t = self.tensor(q, o)?;
        if t.hardware != MemHardware::Ub {
            return Err(err(
                &p.name,
                &n.name,
                format!("input from '{}' is not in the UB", prod.name),
            ));
        }
        Ok(Operand::Tensor(self.local(q, o), q, o))
    }
}

pub(super) enum Operand {
    /// A literal.
    Scalar(String),
    /// A UB tensor: its variable, producer position and output.
    Tensor(String, usize, usize),
}

impl Operand {
    pub(super) fn text(&self) -> String {
        match self {
            Operand::Scalar(s) => s.clone(),
            Operand::Tensor(l, _, _) => format!("{l}[0]"),
        }
    }
}
