//! The reduction calls of an Ascend C kernel function ([`super::ascendc_calls`]): the
//! `Reduce*` pattern APIs over the last two vectorized axes (combined across a reduce-outer
//! loop by the helper `ReduceAccumulate`), leading axes as loops, `Mean` as a sum scaled by
//! `Muls`.

use super::ascendc::{err, Func};
use super::ascendc_calls::{tmp_arg, Operand};
use super::plan::KernelPlan;
use ascendir_asc::error::AscResult;

fn reduce_api(op: &str) -> Option<(&'static str, i32)> {
    Some(match op {
        "Sum" | "Mean" => ("ReduceSum", 0),
        "Max" => ("ReduceMax", 1),
        "Min" => ("ReduceMin", 2),
        "Prod" => ("ReduceProd", 3),
        _ => return None,
    })
}

pub(super) fn reduce(f: &mut Func<'_>, pos: usize) -> AscResult<()> {
    let p = f.p;
    let n = &p.nodes[pos];
    let (api, opcode) = reduce_api(&n.op_type).ok_or_else(|| {
        err(
            &p.name,
            &n.name,
            format!("reduction {} has no Ascend C API call", n.op_type),
        )
    })?;
    let t = f.tensor(pos, 0)?;
    let ct = f.ctype(n, t)?;
    let Operand::Tensor(src, q, o) = f.operand(n, 0, ct)? else {
        return Err(err(&p.name, &n.name, "reduction of a scalar".into()));
    };
    let it = f.tensor(q, o)?;
    // The input's non-unit vectorized axes: (extent, input stride, result stride, reduced).
    let mut dims: Vec<(String, String, String, bool)> = Vec::new();
    for k in 0..it.vect_axes.len() {
        if it.vect_repeats[k].as_i64() == Some(1) {
            continue;
        }
        let a = it.vect_axes[k];
        let j = t.vect_axes.iter().position(|x| *x == a);
        let out_one = j.is_none_or(|j| t.vect_repeats[j].as_i64() == Some(1));
        let ost = match j {
            Some(j) => f.tx(&t.vect_strides[j])?,
            None => "0".into(),
        };
        dims.push((f.vext(it, k)?, f.tx(&it.vect_strides[k])?, ost, out_one));
    }
    // Leading axes become loops (a reduced one combines into the same result, like a
    // reduce-outer loop); the last two axes form the API's 2-D pattern.
    let lead = dims.len().saturating_sub(2);
    let tb = tmp_arg(f, n).ok_or_else(|| {
        err(
            &p.name,
            &n.name,
            "reduction without a temporary buffer".into(),
        )
    })?;
    let l = f.local(pos, 0);
    let mut first: Vec<String> = Vec::new();
    for lvl in &n.reduce_loops {
        first.push(format!("{} == 0", f.axis_name(p.loops[*lvl])?));
    }
    let mut soff = String::from("0");
    let mut doff = String::from("0");
    for d in dims.iter().take(lead) {
        f.vars += 1;
        let v = format!("v{}", f.vars);
        f.linef(format_args!("for (int {v} = 0; {v} < {}; {v}++) {{", d.0));
        soff = format!("{soff} + {v} * {}", d.1);
        if d.3 {
            first.push(format!("{v} == 0"));
        } else {
            doff = format!("{doff} + {v} * {}", d.2);
        }
    }
    let src = format!("{src}[{soff}]");
    let dst = format!("{l}[{doff}]");
    let first = (!first.is_empty()).then(|| first.join(" && "));
    let rest = &dims[lead..];
    let pattern = match rest {
        [] => None,
        [(e, _, _, true)] => Some(("1".to_string(), e.clone(), "1".to_string(), true)),
        [(r, rs, _, false), (c, _, _, true)] => Some((r.clone(), c.clone(), rs.clone(), true)),
        [(r, rs, _, true), (c, _, _, false)] => Some((r.clone(), c.clone(), rs.clone(), false)),
        [(r, rs, _, true), (c, _, _, true)] => Some((
            "1".to_string(),
            format!("({r} - 1) * {rs} + {c}"),
            "1".to_string(),
            true,
        )),
        _ => None,
    };
    match pattern {
        Some((rows, cols, row_stride, inner)) => {
            let out_stride = t
                .vect_strides
                .iter()
                .zip(&t.vect_repeats)
                .rev()
                .find(|(_, r)| r.as_i64() != Some(1))
                .map(|(s, _)| f.tx(s))
                .transpose()?
                .unwrap_or_else(|| "1".to_string());
            let shape = format!("{l}_src_shape");
            f.linef(format_args!(
                "const uint32_t {shape}[2] = {{static_cast<uint32_t>({rows}), static_cast<uint32_t>({})}};",
                if inner { cols.clone() } else { row_stride.clone() }
            ));
            let pat = if inner { "AR" } else { "RA" };
            let api_call = format!(
                "{api}<{ct}, AscendC::Pattern::Reduce::{pat}, true>({dst}, {src}, {tb}, {shape}, true);"
            );
            match &first {
                None => f.line(&api_call),
                Some(c) => {
                    f.linef(format_args!("if ({c}) {{"));
                    f.line(&api_call);
                    f.line("} else {");
                    f.linef(format_args!(
                        "ReduceAccumulate<{ct}, {opcode}>({dst}, {src}, {rows}, {cols}, {row_stride}, {out_stride}, {inner});"
                    ));
                    f.line("}");
                }
            }
        }
        None => {
            // No reduced axis among the innermost two: the tile combines element-wise.
            let span = match rest {
                [] => "1".to_string(),
                [(e, _, _, _)] => e.clone(),
                [(r, rs, _, _), (c, _, _, _)] => format!("({r} - 1) * {rs} + {c}"),
                _ => "1".to_string(),
            };
            let copy =
                format!("DataCopyExtend({dst}, {src}, KernelUtils::BlkAlign<{ct}>({span}));");
            let combine = ["Add", "Max", "Min", "Mul"][opcode.clamp(0, 3) as usize];
            match &first {
                None => f.line(&copy),
                Some(c) => {
                    f.linef(format_args!("if ({c}) {{"));
                    f.line(&copy);
                    f.line("} else {");
                    f.linef(format_args!("{combine}({dst}, {dst}, {src}, {span});"));
                    f.line("}");
                    f.line("AscendC::PipeBarrier<PIPE_V>();");
                }
            }
        }
    }
    for _ in 0..lead {
        f.line("}");
    }
    if n.op_type == "Mean" {
        let mut total = Vec::new();
        for b in &n.reduced_base {
            total.push(f.tx(&KernelPlan::repeat(it, *b))?);
        }
        let total = if total.is_empty() {
            "1".to_string()
        } else {
            total.join(" * ")
        };
        let last = if n.reduce_loops.is_empty() {
            None
        } else {
            let mut c = Vec::new();
            for lvl in &n.reduce_loops {
                let an = f.axis_name(p.loops[*lvl])?;
                c.push(format!("{an} == {an}_loop_size - 1"));
            }
            Some(c.join(" && "))
        };
        f.line("AscendC::PipeBarrier<PIPE_V>();");
        let m = format!("Muls({l}[0], {l}[0], ({ct})(1.0f / (float)({total})), {l}_actual_size);");
        match last {
            None => f.line(&m),
            Some(c) => {
                f.linef(format_args!("if ({c}) {{"));
                f.line(&m);
                f.line("}");
            }
        }
    }
    Ok(())
}
