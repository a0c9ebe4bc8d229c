//! Expressions compiled to slot-indexed trees for fast repeated evaluation.

use crate::expr::{Expr, Func, Kind, Rat, Rel};

/// A compiled expression: symbols are replaced by slot indices.
#[derive(Clone, Debug)]
pub enum CExpr {
    /// Constant.
    Num(Rat),
    /// Value of a slot.
    Slot(usize),
    /// `c + Σ k·t`.
    Add(Rat, Vec<(CExpr, Rat)>),
    /// `c · Π b^e` (integer exponents).
    Mul(Rat, Vec<(CExpr, i128)>),
    /// Function application.
    Func(Func, Vec<CExpr>),
    /// Relation (1 or 0).
    Rel(Rel, Box<CExpr>, Box<CExpr>),
}

impl CExpr {
    /// Compile `e`, naming each symbol's slot with `slot` (an error names unknown symbols).
    pub fn compile(e: &Expr, slot: &dyn Fn(&str) -> Option<usize>) -> Result<CExpr, String> {
        Ok(match e.kind() {
            Kind::Num(r) => CExpr::Num(*r),
            Kind::Sym(s) => CExpr::Slot(slot(s).ok_or_else(|| format!("unbound symbol '{s}'"))?),
            Kind::Add(c, ts) => CExpr::Add(
                *c,
                ts.iter()
                    .map(|(t, k)| Ok((CExpr::compile(t, slot)?, *k)))
                    .collect::<Result<_, String>>()?,
            ),
            Kind::Mul(c, fs) => CExpr::Mul(
                *c,
                fs.iter()
                    .map(|(b, x)| {
                        let ex = x
                            .as_num()
                            .filter(|r| r.is_int())
                            .ok_or_else(|| format!("non-integer exponent in {e}"))?;
                        Ok((CExpr::compile(b, slot)?, ex.numer()))
                    })
                    .collect::<Result<_, String>>()?,
            ),
            Kind::Func(f, args) => CExpr::Func(
                *f,
                args.iter()
                    .map(|a| CExpr::compile(a, slot))
                    .collect::<Result<_, String>>()?,
            ),
            Kind::Rel(r, a, b) => CExpr::Rel(
                *r,
                Box::new(CExpr::compile(a, slot)?),
                Box::new(CExpr::compile(b, slot)?),
            ),
        })
    }

    /// Evaluate with slot values (`None` on overflow or division by zero).
    pub fn eval(&self, vals: &[i64]) -> Option<Rat> {
        match self {
            CExpr::Num(r) => Some(*r),
            CExpr::Slot(i) => Some(Rat::from(*vals.get(*i)?)),
            CExpr::Add(c, ts) => {
                let mut acc = *c;
                for (t, k) in ts {
                    acc = acc.checked_add(k.checked_mul(t.eval(vals)?)?)?;
                }
                Some(acc)
            }
            CExpr::Mul(c, fs) => {
                let mut acc = *c;
                for (b, e) in fs {
                    let bv = b.eval(vals)?;
                    if bv.is_zero() && *e < 0 {
                        return None;
                    }
                    acc = acc.checked_mul(bv.checked_pow(*e)?)?;
                }
                Some(acc)
            }
            CExpr::Func(f, args) => {
                let mut v: smallvec::SmallVec<[Rat; 4]> = smallvec::SmallVec::new();
                for a in args {
                    v.push(a.eval(vals)?);
                }
                match f {
                    Func::Ceiling => Some(v.first()?.ceil()),
                    Func::Floor => Some(v.first()?.floor()),
                    Func::Abs => Some(v.first()?.abs()),
                    Func::Mod => v.first()?.checked_mod(*v.get(1)?),
                    Func::Max => v.iter().copied().max(),
                    Func::Min => v.iter().copied().min(),
                }
            }
            CExpr::Rel(r, a, b) => {
                let x = a.eval(vals)?;
                let y = b.eval(vals)?;
                let t = match r {
                    Rel::Eq => x == y,
                    Rel::Ne => x != y,
                    Rel::Lt => x < y,
                    Rel::Le => x <= y,
                };
                Some(Rat::from(t as i64))
            }
        }
    }

    /// Evaluate to an integer (rationals are rounded up): a fast path on unnormalized
    /// `numerator / denominator` pairs, falling back to exact rationals on overflow.
    pub fn eval_int(&self, vals: &[i64]) -> Option<i64> {
        if let Some((n, d)) = self.eval_nd(vals) {
            return i64::try_from(ceil_div(n, d)?).ok();
        }
        self.eval(vals)?.ceil().to_i64()
    }

    /// `(numerator, denominator > 0)` without normalization (`None` on overflow, division by
    /// zero or relations).
    fn eval_nd(&self, vals: &[i64]) -> Option<(i128, i128)> {
        match self {
            CExpr::Num(r) => Some((r.numer(), r.denom())),
            CExpr::Slot(i) => Some((*vals.get(*i)? as i128, 1)),
            CExpr::Add(c, ts) => {
                let (mut n, mut d) = (c.numer(), c.denom());
                for (t, k) in ts {
                    let (tn, td) = t.eval_nd(vals)?;
                    let (kn, kd) = (k.numer(), k.denom());
                    let pn = tn.checked_mul(kn)?;
                    let pd = td.checked_mul(kd)?;
                    if pd == d {
                        n = n.checked_add(pn)?;
                    } else {
                        n = n.checked_mul(pd)?.checked_add(pn.checked_mul(d)?)?;
                        d = d.checked_mul(pd)?;
                    }
                }
                Some((n, d))
            }
            CExpr::Mul(c, fs) => {
                let (mut n, mut d) = (c.numer(), c.denom());
                for (b, e) in fs {
                    let (bn, bd) = b.eval_nd(vals)?;
                    let (mut pn, mut pd) = if *e >= 0 { (bn, bd) } else { (bd, bn) };
                    if pd < 0 {
                        pn = -pn;
                        pd = -pd;
                    }
                    if pd == 0 {
                        return None;
                    }
                    for _ in 0..e.unsigned_abs() {
                        n = n.checked_mul(pn)?;
                        d = d.checked_mul(pd)?;
                    }
                }
                Some((n, d))
            }
            CExpr::Func(f, args) => match f {
                Func::Ceiling => {
                    let (n, d) = args.first()?.eval_nd(vals)?;
                    Some((ceil_div(n, d)?, 1))
                }
                Func::Floor => {
                    let (n, d) = args.first()?.eval_nd(vals)?;
                    Some((n.checked_div_euclid(d)?, 1))
                }
                Func::Max | Func::Min => {
                    let mut best: Option<(i128, i128)> = None;
                    for a in args {
                        let v = a.eval_nd(vals)?;
                        best = Some(match best {
                            None => v,
                            Some(b) => {
                                let lhs = v.0.checked_mul(b.1)?;
                                let rhs = b.0.checked_mul(v.1)?;
                                let take = if *f == Func::Max {
                                    lhs > rhs
                                } else {
                                    lhs < rhs
                                };
                                if take {
                                    v
                                } else {
                                    b
                                }
                            }
                        });
                    }
                    best
                }
                _ => None,
            },
            CExpr::Rel(..) => None,
        }
    }
}

fn ceil_div(n: i128, d: i128) -> Option<i128> {
    if d == 0 {
        return None;
    }
    let q = n.checked_div_euclid(d)?;
    if n.checked_rem_euclid(d)? != 0 {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_matches_exact_evaluation() {
        let t = Expr::sym("t");
        let s = Expr::sym("s");
        let exprs = [
            Expr::ceiling(&Expr::div(&t, &Expr::int(16))),
            Expr::ceiling(&Expr::div(&s, &t)),
            Expr::add(
                &Expr::mul(
                    &Expr::int(384),
                    &Expr::ceiling(&Expr::div(&t, &Expr::int(16))),
                ),
                &Expr::int(8192),
            ),
            Expr::max(
                &Expr::div(&s, &Expr::int(3)),
                &Expr::floor(&Expr::div(&t, &Expr::int(7))),
            ),
            Expr::sub(&Expr::div(&s, &t), &Expr::int(5)),
        ];
        let slot = |n: &str| ["t", "s"].iter().position(|x| *x == n);
        for e in &exprs {
            let c = CExpr::compile(e, &slot).unwrap();
            for t in [1i64, 2, 15, 16, 17, 1000] {
                for s in [1i64, 7, 100, 1 << 20] {
                    let exact = c.eval(&[t, s]).unwrap().ceil().to_i64().unwrap();
                    assert_eq!(c.eval_int(&[t, s]), Some(exact), "{e} t={t} s={s}");
                }
            }
        }
    }
}
