//! Evaluation, substitution and static comparison of expressions.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::{Expr, Func, Kind, Rat, Rel};

/// Symbol values for [`Expr::evaluate`].
pub type Bindings = FxHashMap<String, i64>;

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A symbol without a value.
    #[error("symbol '{0}' has no value")]
    Unbound(String),
    /// Division (or `Mod`) by zero.
    #[error("division by zero in {0}")]
    DivisionByZero(String),
    /// The result or an intermediate value does not fit.
    #[error("integer overflow in {0}")]
    Overflow(String),
    /// A power with a non-integer exponent, or a non-integer final value where one is required.
    #[error("{0}")]
    NotInteger(String),
}

/// A three-valued answer of a static comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriBool {
    /// Provably false.
    False,
    /// Provably true.
    True,
    /// Not decidable without values.
    Unknown,
}

impl TriBool {
    /// `Some(bool)` when known.
    pub fn known(self) -> Option<bool> {
        match self {
            TriBool::True => Some(true),
            TriBool::False => Some(false),
            TriBool::Unknown => None,
        }
    }

    fn from_opt(v: Option<bool>) -> TriBool {
        match v {
            Some(true) => TriBool::True,
            Some(false) => TriBool::False,
            None => TriBool::Unknown,
        }
    }
}

impl Expr {
    /// Exact rational value with `lookup` giving symbol values.
    pub fn evaluate_with(&self, lookup: &dyn Fn(&str) -> Option<Rat>) -> Result<Rat, EvalError> {
        let ovf = || EvalError::Overflow(self.to_string());
        match self.kind() {
            Kind::Num(r) => Ok(*r),
            Kind::Sym(s) => lookup(s).ok_or_else(|| EvalError::Unbound(s.to_string())),
            Kind::Add(c, terms) => {
                let mut acc = *c;
                for (t, k) in terms {
                    let v = t.evaluate_with(lookup)?;
                    acc = acc
                        .checked_add(k.checked_mul(v).ok_or_else(ovf)?)
                        .ok_or_else(ovf)?;
                }
                Ok(acc)
            }
            Kind::Mul(c, factors) => {
                let mut acc = *c;
                for (b, e) in factors {
                    let bv = b.evaluate_with(lookup)?;
                    let ev = e.evaluate_with(lookup)?;
                    if !ev.is_int() {
                        return Err(EvalError::NotInteger(format!(
                            "non-integer exponent {ev} in {self}"
                        )));
                    }
                    if bv.is_zero() && ev.is_negative() {
                        return Err(EvalError::DivisionByZero(self.to_string()));
                    }
                    let p = bv.checked_pow(ev.numer()).ok_or_else(ovf)?;
                    acc = acc.checked_mul(p).ok_or_else(ovf)?;
                }
                Ok(acc)
            }
            Kind::Func(f, args) => {
                let vals: Result<Vec<Rat>, EvalError> =
                    args.iter().map(|a| a.evaluate_with(lookup)).collect();
                let vals = vals?;
                match f {
                    Func::Ceiling => Ok(vals[0].ceil()),
                    Func::Floor => Ok(vals[0].floor()),
                    Func::Abs => Ok(vals[0].abs()),
                    Func::Mod => vals[0]
                        .checked_mod(vals[1])
                        .ok_or_else(|| EvalError::DivisionByZero(self.to_string())),
                    Func::Max => Ok(vals.iter().copied().max().unwrap_or(Rat::ZERO)),
                    Func::Min => Ok(vals.iter().copied().min().unwrap_or(Rat::ZERO)),
                }
            }
            Kind::Rel(r, a, b) => {
                let x = a.evaluate_with(lookup)?;
                let y = b.evaluate_with(lookup)?;
                let v = match r {
                    Rel::Eq => x == y,
                    Rel::Ne => x != y,
                    Rel::Lt => x < y,
                    Rel::Le => x <= y,
                };
                Ok(Rat::int(v as i128))
            }
        }
    }

    /// Exact rational value for integer symbol values.
    pub fn evaluate_rational(&self, bindings: &Bindings) -> Result<Rat, EvalError> {
        self.evaluate_with(&|s| bindings.get(s).map(|v| Rat::from(*v)))
    }

    /// Exact integer value; an error when a symbol is unbound, on division by zero, or when
    /// the value is not an integer.
    pub fn evaluate(&self, bindings: &Bindings) -> Result<i64, EvalError> {
        let v = self.evaluate_rational(bindings)?;
        if !v.is_int() {
            return Err(EvalError::NotInteger(format!(
                "{self} evaluates to the non-integer {v}"
            )));
        }
        v.to_i64()
            .ok_or_else(|| EvalError::Overflow(self.to_string()))
    }

    /// Replace symbols by expressions (all at once) and re-canonicalize.
    pub fn subs(&self, map: &FxHashMap<String, Expr>) -> Expr {
        if map.is_empty() {
            return self.clone();
        }
        self.rebuild(&|e| match e.kind() {
            Kind::Sym(s) => map.get(&**s).cloned(),
            _ => None,
        })
    }

    /// Replace every occurrence of the sub-expression `from` by `to`.
    pub fn replace(&self, from: &Expr, to: &Expr) -> Expr {
        self.rebuild(&|e| if e == from { Some(to.clone()) } else { None })
    }

    /// Bottom-up rebuild: `f` may substitute a node (its result is not visited again).
    pub fn rebuild(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
        if let Some(r) = f(self) {
            return r;
        }
        match self.kind() {
            Kind::Num(_) | Kind::Sym(_) => self.clone(),
            Kind::Add(c, terms) => {
                let items: Vec<Expr> = std::iter::once(Expr::num(*c))
                    .chain(terms.iter().map(|(t, k)| super::scale(*k, &t.rebuild(f))))
                    .collect();
                Expr::sum(items.iter())
            }
            Kind::Mul(c, factors) => {
                let items: Vec<Expr> = std::iter::once(Expr::num(*c))
                    .chain(
                        factors
                            .iter()
                            .map(|(b, e)| Expr::pow(&b.rebuild(f), &e.rebuild(f))),
                    )
                    .collect();
                Expr::product(items.iter())
            }
            Kind::Func(g, args) => {
                let a: Vec<Expr> = args.iter().map(|x| x.rebuild(f)).collect();
                match g {
                    Func::Ceiling => Expr::ceiling(&a[0]),
                    Func::Floor => Expr::floor(&a[0]),
                    Func::Abs => Expr::abs(&a[0]),
                    Func::Mod => Expr::modulo(&a[0], &a[1]),
                    Func::Max => Expr::max_of(a.iter()),
                    Func::Min => Expr::min_of(a.iter()),
                }
            }
            Kind::Rel(r, a, b) => Expr::relation(*r, &a.rebuild(f), &b.rebuild(f)),
        }
    }

    /// The names of the symbols in this expression, sorted.
    pub fn free_symbols(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_symbols(&mut out);
        out
    }

    fn collect_symbols(&self, out: &mut BTreeSet<String>) {
        match self.kind() {
            Kind::Num(_) => {}
            Kind::Sym(s) => {
                out.insert(s.to_string());
            }
            Kind::Add(_, t) => t.iter().for_each(|(x, _)| x.collect_symbols(out)),
            Kind::Mul(_, f) => f.iter().for_each(|(b, e)| {
                b.collect_symbols(out);
                e.collect_symbols(out);
            }),
            Kind::Func(_, a) => a.iter().for_each(|x| x.collect_symbols(out)),
            Kind::Rel(_, a, b) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
            }
        }
    }

    /// Whether `name` occurs in this expression.
    pub fn contains_symbol(&self, name: &str) -> bool {
        match self.kind() {
            Kind::Num(_) => false,
            Kind::Sym(s) => &**s == name,
            Kind::Add(_, t) => t.iter().any(|(x, _)| x.contains_symbol(name)),
            Kind::Mul(_, f) => f
                .iter()
                .any(|(b, e)| b.contains_symbol(name) || e.contains_symbol(name)),
            Kind::Func(_, a) => a.iter().any(|x| x.contains_symbol(name)),
            Kind::Rel(_, a, b) => a.contains_symbol(name) || b.contains_symbol(name),
        }
    }

    /// A lower and upper bound of the value (`None` = unbounded) assuming every symbol is a
    /// positive integer (a size). `None` overall when no bound can be derived.
    pub fn bounds(&self) -> Option<(Option<Rat>, Option<Rat>)> {
        match self.kind() {
            Kind::Num(r) => Some((Some(*r), Some(*r))),
            Kind::Sym(_) => Some((Some(Rat::ONE), None)),
            Kind::Add(c, terms) => {
                let (mut lo, mut hi) = (Some(*c), Some(*c));
                for (t, k) in terms {
                    let (tlo, thi) = t.bounds()?;
                    let (a, b) = if k.is_negative() {
                        (thi, tlo)
                    } else {
                        (tlo, thi)
                    };
                    lo = match (lo, a) {
                        (Some(l), Some(a)) => l.checked_add(k.checked_mul(a)?),
                        _ => None,
                    };
                    hi = match (hi, b) {
                        (Some(h), Some(b)) => h.checked_add(k.checked_mul(b)?),
                        _ => None,
                    };
                }
                Some((lo, hi))
            }
            Kind::Mul(c, factors) => {
                // Only products of non-negative factors are bounded here.
                let (mut lo, mut hi) = (Some(Rat::ONE), Some(Rat::ONE));
                for (b, e) in factors {
                    let ev = e.as_num()?;
                    if !ev.is_int() {
                        return None;
                    }
                    let (blo, bhi) = b.bounds()?;
                    let blo = blo?;
                    if blo.is_negative() {
                        return None;
                    }
                    let (flo, fhi) = if ev.is_negative() {
                        if blo.is_zero() {
                            return None;
                        }
                        let n = -ev.numer();
                        let flo = match bhi {
                            Some(h) => h.checked_pow(n)?.recip(),
                            None => Some(Rat::ZERO),
                        };
                        (flo, blo.checked_pow(n)?.recip())
                    } else {
                        let n = ev.numer();
                        (blo.checked_pow(n), bhi.and_then(|h| h.checked_pow(n)))
                    };
                    lo = match (lo, flo) {
                        (Some(a), Some(b)) => a.checked_mul(b),
                        _ => None,
                    };
                    hi = match (hi, fhi) {
                        (Some(a), Some(b)) => a.checked_mul(b),
                        _ => None,
                    };
                    lo.as_ref()?;
                }
                let lo = lo?;
                if c.is_negative() {
                    Some((hi.and_then(|h| h.checked_mul(*c)), lo.checked_mul(*c)))
                } else {
                    Some((lo.checked_mul(*c), hi.and_then(|h| h.checked_mul(*c))))
                }
            }
            Kind::Func(f, args) => {
                let b: Option<Vec<(Option<Rat>, Option<Rat>)>> =
                    args.iter().map(Expr::bounds).collect();
                let b = b?;
                match f {
                    Func::Ceiling => Some((b[0].0.map(Rat::ceil), b[0].1.map(Rat::ceil))),
                    Func::Floor => Some((b[0].0.map(Rat::floor), b[0].1.map(Rat::floor))),
                    Func::Abs => {
                        let lo = b[0].0?;
                        if lo.is_negative() {
                            Some((Some(Rat::ZERO), None))
                        } else {
                            Some((Some(lo), b[0].1))
                        }
                    }
                    Func::Mod => {
                        let dlo = b[1].0?;
                        if !dlo.is_positive() {
                            return None;
                        }
                        let hi = b[1]
                            .1
                            .and_then(|h| h.checked_sub(Rat::ONE))
                            .map(|h| h.max(Rat::ZERO));
                        let hi = match (hi, b[0].0, b[0].1) {
                            (h, Some(l), Some(ah)) if !l.is_negative() => match h {
                                Some(h) => Some(h.min(ah)),
                                None => Some(ah),
                            },
                            (h, _, _) => h,
                        };
                        Some((Some(Rat::ZERO), hi))
                    }
                    Func::Max => {
                        let lo = b.iter().filter_map(|x| x.0).max();
                        let hi = if b.iter().all(|x| x.1.is_some()) {
                            b.iter().filter_map(|x| x.1).max()
                        } else {
                            None
                        };
                        Some((lo, hi))
                    }
                    Func::Min => {
                        let lo = if b.iter().all(|x| x.0.is_some()) {
                            b.iter().filter_map(|x| x.0).min()
                        } else {
                            None
                        };
                        let hi = b.iter().filter_map(|x| x.1).min();
                        Some((lo, hi))
                    }
                }
            }
            Kind::Rel(..) => Some((Some(Rat::ZERO), Some(Rat::ONE))),
        }
    }

    /// `a == b`: True/False when decidable (symbols are assumed to be positive integers).
    pub fn static_eq(a: &Expr, b: &Expr) -> TriBool {
        if a == b {
            return TriBool::True;
        }
        let d = Expr::sub(a, b);
        if let Some(v) = d.as_num() {
            return TriBool::from_opt(Some(v.is_zero()));
        }
        match d.bounds() {
            Some((Some(lo), _)) if lo.is_positive() => TriBool::False,
            Some((_, Some(hi))) if hi.is_negative() => TriBool::False,
            _ => TriBool::Unknown,
        }
    }

    /// `a != b`.
    pub fn static_ne(a: &Expr, b: &Expr) -> TriBool {
        match Expr::static_eq(a, b) {
            TriBool::True => TriBool::False,
            TriBool::False => TriBool::True,
            TriBool::Unknown => TriBool::Unknown,
        }
    }

    /// `a < b`.
    pub fn static_lt(a: &Expr, b: &Expr) -> TriBool {
        let d = Expr::sub(b, a);
        match d.bounds() {
            Some((Some(lo), _)) if lo.is_positive() => TriBool::True,
            Some((_, Some(hi))) if !hi.is_positive() => TriBool::False,
            _ => TriBool::Unknown,
        }
    }

    /// `a <= b`.
    pub fn static_le(a: &Expr, b: &Expr) -> TriBool {
        let d = Expr::sub(b, a);
        match d.bounds() {
            Some((Some(lo), _)) if !lo.is_negative() => TriBool::True,
            Some((_, Some(hi))) if hi.is_negative() => TriBool::False,
            _ => TriBool::Unknown,
        }
    }

    /// `a > b`.
    pub fn static_gt(a: &Expr, b: &Expr) -> TriBool {
        Expr::static_lt(b, a)
    }

    /// `a >= b`.
    pub fn static_ge(a: &Expr, b: &Expr) -> TriBool {
        Expr::static_le(b, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluate_and_static() {
        let s0 = Expr::sym("s0");
        let t = Expr::sym("t");
        let mut b = Bindings::default();
        b.insert("s0".into(), 10);
        b.insert("t".into(), 4);
        assert_eq!(Expr::ceiling(&(&s0 / &t)).evaluate(&b), Ok(3));
        assert_eq!(Expr::floor(&(&s0 / &t)).evaluate(&b), Ok(2));
        assert!(matches!(
            (&s0 / &t).evaluate(&b),
            Err(EvalError::NotInteger(_))
        ));
        assert!(matches!(
            Expr::sym("q").evaluate(&b),
            Err(EvalError::Unbound(_))
        ));
        b.insert("t".into(), 0);
        assert!(matches!(
            (&s0 / &t).evaluate(&b),
            Err(EvalError::DivisionByZero(_))
        ));
        assert_eq!(Expr::static_le(&Expr::int(1), &s0), TriBool::True);
        assert_eq!(Expr::static_lt(&s0, &(&s0 + 1)), TriBool::True);
        assert_eq!(Expr::static_eq(&s0, &t), TriBool::Unknown);
        assert_eq!(Expr::static_eq(&(&s0 + 1), &s0), TriBool::False);
        assert_eq!(Expr::static_lt(&(&s0 + 2), &s0), TriBool::False);
        let mut m = FxHashMap::default();
        m.insert("t".to_string(), Expr::int(2));
        assert_eq!((&s0 * &t).subs(&m), &s0 * 2);
        assert_eq!((&s0 * &t).free_symbols().len(), 2);
    }
}
