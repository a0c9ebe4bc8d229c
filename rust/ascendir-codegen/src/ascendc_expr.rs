//! Size expressions printed as Ascend C integer text the way GE's codegen prints them:
//! TilingData fields as `t-><name>`, products as `(a * b)`, sums as `(a + b)`, GE's `Floor`,
//! `Ceiling`, `Mod`, `Rational` helpers and `KernelUtils::Max` / `Min`.

use ascendir_asc::error::{AscError, AscResult};
use ascendir_asc::expr::{Expr, Func, Kind, Rat};

fn rat(r: &Rat) -> AscResult<String> {
    let n = i64::try_from(r.numer())
        .map_err(|_| AscError::InvalidArgument(format!("constant {r} does not fit 64 bits")))?;
    let d = i64::try_from(r.denom())
        .map_err(|_| AscError::InvalidArgument(format!("constant {r} does not fit 64 bits")))?;
    Ok(if d == 1 {
        n.to_string()
    } else {
        format!("Rational({n}, {d})")
    })
}

fn neg_wrap(s: &str) -> String {
    if s.starts_with('-') {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// `e` as Ascend C text; `sym` names a symbol (`t->s0`, a local variable, ...).
pub fn print(e: &Expr, sym: &dyn Fn(&str) -> String) -> AscResult<String> {
    match e.kind() {
        Kind::Num(r) => return rat(r),
        Kind::Sym(s) => return Ok(sym(s)),
        _ => {}
    }
    super::cexpr::fold(e, &mut |x, kids: Vec<String>| -> AscResult<String> {
        Ok(match x.kind() {
            Kind::Num(r) => rat(r)?,
            Kind::Sym(s) => sym(s),
            Kind::Add(c, terms) => {
                let mut parts: Vec<String> = Vec::with_capacity(terms.len() + 1);
                for ((_, k), a) in terms.iter().zip(kids) {
                    if *k == Rat::from(1) {
                        parts.push(a);
                    } else if *k == Rat::from(-1) {
                        parts.push(format!("-{a}"));
                    } else {
                        parts.push(format!("{} * {a}", neg_wrap(&rat(k)?)));
                    }
                }
                if !c.is_zero() {
                    parts.push(rat(c)?);
                }
                let mut t = String::new();
                for (i, p) in parts.iter().enumerate() {
                    if i == 0 {
                        t.push_str(p);
                    } else if let Some(rest) = p.strip_prefix('-') {
                        t.push_str(" - ");
                        t.push_str(rest);
                    } else {
                        t.push_str(" + ");
                        t.push_str(p);
                    }
                }
                format!("({t})")
            }
            Kind::Mul(c, factors) => {
                let mut num: Vec<String> = Vec::new();
                let mut den: Vec<String> = Vec::new();
                for (pair, (_, ex)) in kids.chunks(2).zip(factors.iter()) {
                    match ex.as_i64() {
                        Some(1) => num.push(pair[0].clone()),
                        Some(-1) => den.push(pair[0].clone()),
                        // Small powers as repeated factors; larger ones through Pow (a capped
                        // repetition would print the wrong power).
                        Some(k) if (2..=16).contains(&k) => {
                            for _ in 0..k {
                                num.push(pair[0].clone());
                            }
                        }
                        _ => num.push(format!("Pow({}, {})", pair[0], pair[1])),
                    }
                }
                if !c.is_one() {
                    num.insert(0, neg_wrap(&rat(c)?));
                }
                let n = if num.is_empty() {
                    "1".to_string()
                } else if num.len() == 1 && den.is_empty() {
                    num.remove(0)
                } else {
                    format!("({})", num.join(" * "))
                };
                if den.is_empty() {
                    n
                } else {
                    format!("Rational({n}, {})", den.join(" * "))
                }
            }
            Kind::Func(f, _) => {
                let a = kids;
                match f {
                    Func::Ceiling => format!("Ceiling({})", a.join(", ")),
                    Func::Floor => format!("Floor({})", a.join(", ")),
                    Func::Abs => format!("Abs({})", a.join(", ")),
                    Func::Mod => format!("Mod({})", a.join(", ")),
                    Func::Max => format!("KernelUtils::Max({})", a.join(", ")),
                    Func::Min => format!("KernelUtils::Min({})", a.join(", ")),
                }
            }
            Kind::Rel(..) => {
                return Err(AscError::InvalidArgument(format!(
                    "relation {e} is not a size"
                )))
            }
        })
    })
}

/// `e` with every symbol read from the tiling data (`t-><name>`).
pub fn tiling(e: &Expr) -> AscResult<String> {
    print(e, &|s| format!("t->{s}"))
}
