//! Construction in canonical form: sums with merged rational terms, products with merged powers,
//! powers, rounding, `Max`/`Min`, alignment and relations.

use smallvec::SmallVec;

use super::{Expr, Factor, Func, Kind, Rat, Rel, Term};

impl Expr {
    /// `a + b`.
    pub fn add(a: &Expr, b: &Expr) -> Expr {
        Expr::sum([a, b])
    }

    /// The canonical sum of `items`.
    pub fn sum<'a, I: IntoIterator<Item = &'a Expr>>(items: I) -> Expr {
        let mut acc = SumAcc::default();
        let mut single: Option<&Expr> = None;
        let mut count = 0usize;
        for e in items {
            if e.as_num().is_some_and(Rat::is_zero) {
                continue;
            }
            count += 1;
            single = Some(e);
            acc.push(Rat::ONE, e);
        }
        if count == 1 {
            if let Some(e) = single {
                return e.clone();
            }
        }
        acc.build()
    }

    /// `a - b`.
    pub fn sub(a: &Expr, b: &Expr) -> Expr {
        if b.as_num().is_some_and(Rat::is_zero) {
            return a.clone();
        }
        let mut acc = SumAcc::default();
        acc.push(Rat::ONE, a);
        acc.push(Rat::MINUS_ONE, b);
        acc.build()
    }

    /// `-a` (a product with coefficient -1; a sum is not distributed).
    pub fn neg(a: &Expr) -> Expr {
        Expr::mul(&Expr::int(-1), a)
    }

    /// `a * b`.
    pub fn mul(a: &Expr, b: &Expr) -> Expr {
        Expr::product([a, b])
    }

    /// The canonical product of `items`.
    pub fn product<'a, I: IntoIterator<Item = &'a Expr>>(items: I) -> Expr {
        let mut coef = Rat::ONE;
        let mut factors: SmallVec<[Factor; 6]> = SmallVec::new();
        let mut count = 0usize;
        let mut single: Option<&Expr> = None;
        for e in items {
            match e.kind() {
                Kind::Num(r) => {
                    if r.is_one() {
                        continue;
                    }
                    coef = coef.sat_mul(*r);
                }
                Kind::Mul(c, f) => {
                    coef = coef.sat_mul(*c);
                    factors.extend(f.iter().cloned());
                }
                _ => factors.push((e.clone(), Expr::int(1))),
            }
            count += 1;
            single = Some(e);
        }
        if count == 1 {
            if let Some(e) = single {
                return e.clone();
            }
        }
        build_mul(coef, factors)
    }

    /// `a / b` (`a * b^-1`).
    pub fn div(a: &Expr, b: &Expr) -> Expr {
        Expr::mul(a, &Expr::pow(b, &Expr::int(-1)))
    }

    /// `base ^ exp`.
    pub fn pow(base: &Expr, exp: &Expr) -> Expr {
        if let Some(e) = exp.as_num() {
            if e.is_zero() {
                return Expr::int(1);
            }
            if e.is_one() {
                return base.clone();
            }
        }
        if let Some(b) = base.as_num() {
            if b.is_one() {
                return base.clone();
            }
            if let Some(e) = exp.as_num() {
                if e.is_int() {
                    if b.is_zero() && e.is_negative() {
                        // 0^-n stays symbolic; evaluating it reports a division by zero.
                        return Expr::from_kind(Kind::Mul(
                            Rat::ONE,
                            vec![(Expr::int(0), Expr::int(-1))],
                        ));
                    }
                    if let Some(v) = b.checked_pow(e.numer()) {
                        return Expr::num(v);
                    }
                }
            }
            if b.is_zero() && exp.as_num().is_some_and(Rat::is_positive) {
                return Expr::int(0);
            }
        }
        if let (Kind::Mul(c, f), Some(e)) = (base.kind(), exp.as_num()) {
            if e.is_int() {
                let coef = c.checked_pow(e.numer());
                if let Some(coef) = coef {
                    let factors: SmallVec<[Factor; 6]> = f
                        .iter()
                        .map(|(b, x)| (b.clone(), Expr::mul(x, exp)))
                        .collect();
                    return build_mul(coef, factors);
                }
            }
        }
        let mut factors: SmallVec<[Factor; 6]> = SmallVec::new();
        factors.push((base.clone(), exp.clone()));
        build_mul(Rat::ONE, factors)
    }

    /// `Ceiling(a)`.
    pub fn ceiling(a: &Expr) -> Expr {
        match a.kind() {
            Kind::Num(r) => Expr::num(r.ceil()),
            Kind::Func(Func::Ceiling | Func::Floor, _) => a.clone(),
            _ => Expr::from_kind(Kind::Func(Func::Ceiling, vec![a.clone()])),
        }
    }

    /// `Floor(a)`.
    pub fn floor(a: &Expr) -> Expr {
        match a.kind() {
            Kind::Num(r) => Expr::num(r.floor()),
            Kind::Func(Func::Ceiling | Func::Floor, _) => a.clone(),
            _ => Expr::from_kind(Kind::Func(Func::Floor, vec![a.clone()])),
        }
    }

    /// `Abs(a)`.
    pub fn abs(a: &Expr) -> Expr {
        match a.kind() {
            Kind::Num(r) => Expr::num(r.abs()),
            Kind::Func(Func::Abs, _) => a.clone(),
            _ => Expr::from_kind(Kind::Func(Func::Abs, vec![a.clone()])),
        }
    }

    /// `Mod(a, b)` (floor modulo; folded for constants, `Mod(0, b) = 0`, `Mod(a, a) = 0`).
    pub fn modulo(a: &Expr, b: &Expr) -> Expr {
        if let (Some(x), Some(y)) = (a.as_num(), b.as_num()) {
            if let Some(r) = x.checked_mod(y) {
                return Expr::num(r);
            }
        }
        if a.as_num().is_some_and(Rat::is_zero) || (a == b && !b.is_int_value(0)) {
            return Expr::int(0);
        }
        if b.is_int_value(1) && a.is_integer_valued() {
            return Expr::int(0);
        }
        Expr::from_kind(Kind::Func(Func::Mod, vec![a.clone(), b.clone()]))
    }

    /// `Max(a, b)`.
    pub fn max(a: &Expr, b: &Expr) -> Expr {
        Expr::max_of([a, b])
    }

    /// `Min(a, b)`.
    pub fn min(a: &Expr, b: &Expr) -> Expr {
        Expr::min_of([a, b])
    }

    /// The maximum of `items` (at least one).
    pub fn max_of<'a, I: IntoIterator<Item = &'a Expr>>(items: I) -> Expr {
        minmax(Func::Max, items)
    }

    /// The minimum of `items` (at least one).
    pub fn min_of<'a, I: IntoIterator<Item = &'a Expr>>(items: I) -> Expr {
        minmax(Func::Min, items)
    }

    /// `align(x, n) = Ceiling(x / n) * n`.
    pub fn align(x: &Expr, n: &Expr) -> Expr {
        Expr::mul(&Expr::ceiling(&Expr::div(x, n)), n)
    }

    /// A relation `a <rel> b`; folded to 1/0 when both sides are constants.
    pub fn relation(rel: Rel, a: &Expr, b: &Expr) -> Expr {
        if let (Some(x), Some(y)) = (a.as_num(), b.as_num()) {
            let v = match rel {
                Rel::Eq => x == y,
                Rel::Ne => x != y,
                Rel::Lt => x < y,
                Rel::Le => x <= y,
            };
            return Expr::int(v as i64);
        }
        let (a, b) = if matches!(rel, Rel::Eq | Rel::Ne) && b < a {
            (b, a)
        } else {
            (a, b)
        };
        Expr::from_kind(Kind::Rel(rel, a.clone(), b.clone()))
    }
}

/// `k * t` where `t` is a coefficient-free term.
pub(crate) fn scale(k: Rat, t: &Expr) -> Expr {
    if k.is_one() {
        return t.clone();
    }
    Expr::mul(&Expr::num(k), t)
}

/// Split `e` into `(coefficient, coefficient-free term)`.
fn split_coef(e: &Expr) -> (Rat, Expr) {
    if let Kind::Mul(c, f) = e.kind() {
        if !c.is_one() {
            let term = if f.len() == 1 && f[0].1.is_int_value(1) {
                f[0].0.clone()
            } else {
                Expr::from_kind(Kind::Mul(Rat::ONE, f.clone()))
            };
            return (*c, term);
        }
    }
    (Rat::ONE, e.clone())
}

#[derive(Default)]
struct SumAcc {
    coef: Rat,
    terms: SmallVec<[Term; 8]>,
}

impl Default for Rat {
    fn default() -> Rat {
        Rat::ZERO
    }
}

impl SumAcc {
    fn push(&mut self, k: Rat, e: &Expr) {
        match e.kind() {
            Kind::Num(r) => self.coef = self.coef.sat_add(k.sat_mul(*r)),
            Kind::Add(c, terms) => {
                self.coef = self.coef.sat_add(k.sat_mul(*c));
                for (t, tk) in terms {
                    self.terms.push((t.clone(), k.sat_mul(*tk)));
                }
            }
            _ => {
                let (c, t) = split_coef(e);
                // A scaled sum (`c * (a + b)`) is expanded inside a sum.
                if let Kind::Add(..) = t.kind() {
                    self.push(k.sat_mul(c), &t);
                } else {
                    self.terms.push((t, k.sat_mul(c)));
                }
            }
        }
    }

    fn build(mut self) -> Expr {
        if self.terms.is_empty() {
            return Expr::num(self.coef);
        }
        self.terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<Term> = Vec::with_capacity(self.terms.len());
        for (t, k) in self.terms {
            match merged.last_mut() {
                Some(last) if last.0 == t => last.1 = last.1.sat_add(k),
                _ => merged.push((t, k)),
            }
        }
        merged.retain(|(_, k)| !k.is_zero());
        for (t, k) in merged.iter_mut() {
            if t.is_zoo() {
                *k = Rat::ONE;
            }
        }
        if merged.is_empty() {
            return Expr::num(self.coef);
        }
        if self.coef.is_zero() && merged.len() == 1 {
            let (t, k) = merged.pop().unwrap_or_else(|| (Expr::int(0), Rat::ZERO));
            return scale(k, &t);
        }
        Expr::from_kind(Kind::Add(self.coef, merged))
    }
}

fn build_mul(mut coef: Rat, mut factors: SmallVec<[Factor; 6]>) -> Expr {
    if coef.is_zero() {
        return Expr::int(0);
    }
    factors.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged: SmallVec<[Factor; 6]> = SmallVec::with_capacity(factors.len());
    for (b, e) in factors {
        match merged.last_mut() {
            Some(last) if last.0 == b => last.1 = Expr::add(&last.1, &e),
            _ => merged.push((b, e)),
        }
    }
    if merged
        .iter()
        .any(|(b, e)| b.is_int_value(0) && e.as_num().is_some_and(Rat::is_negative))
    {
        // A division by zero absorbs the product: the canonical form is `Pow(0, -1)`.
        return Expr::from_kind(Kind::Mul(Rat::ONE, vec![(Expr::int(0), Expr::int(-1))]));
    }
    let mut out: Vec<Factor> = Vec::with_capacity(merged.len());
    let mut refold = false;
    for (b, e) in merged {
        if e.is_int_value(0) {
            continue;
        }
        if let (Some(bv), Some(ev)) = (b.as_num(), e.as_num()) {
            if ev.is_int() && !(bv.is_zero() && ev.is_negative()) {
                if let Some(v) = bv.checked_pow(ev.numer()) {
                    coef = coef.sat_mul(v);
                    continue;
                }
            }
        }
        if !e.is_int_value(1) {
            // (x^a)^b from merged powers of products: distribute integer powers of products.
            if let (Kind::Mul(..), Some(ev)) = (b.kind(), e.as_num()) {
                if ev.is_int() {
                    refold = true;
                }
            }
        }
        out.push((b, e));
    }
    if refold {
        let mut items: Vec<Expr> = vec![Expr::num(coef)];
        for (b, e) in out {
            items.push(Expr::pow(&b, &e));
        }
        return Expr::product(items.iter());
    }
    if coef.is_zero() {
        return Expr::int(0);
    }
    if out.is_empty() {
        return Expr::num(coef);
    }
    if coef.is_one() && out.len() == 1 && out[0].1.is_int_value(1) {
        return out.pop().map(|f| f.0).unwrap_or_else(|| Expr::int(1));
    }
    Expr::from_kind(Kind::Mul(coef, out))
}

fn minmax<'a, I: IntoIterator<Item = &'a Expr>>(f: Func, items: I) -> Expr {
    let mut args: Vec<Expr> = Vec::new();
    let mut best: Option<Rat> = None;
    let mut stack: Vec<Expr> = items.into_iter().cloned().collect();
    while let Some(e) = stack.pop() {
        match e.kind() {
            Kind::Func(g, a) if *g == f => stack.extend(a.iter().cloned()),
            Kind::Num(r) => {
                best = Some(match best {
                    None => *r,
                    Some(b) if f == Func::Max => b.max(*r),
                    Some(b) => b.min(*r),
                })
            }
            _ => args.push(e),
        }
    }
    if let Some(b) = best {
        args.push(Expr::num(b));
    }
    args.sort();
    args.dedup();
    if args.len() == 1 {
        return args.pop().unwrap_or_else(|| Expr::int(0));
    }
    if args.is_empty() {
        return Expr::int(0);
    }
    Expr::from_kind(Kind::Func(f, args))
}
