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

    /// Evaluate to an integer (rationals are rounded up).
    pub fn eval_int(&self, vals: &[i64]) -> Option<i64> {
        self.eval(vals)?.ceil().to_i64()
    }
}
