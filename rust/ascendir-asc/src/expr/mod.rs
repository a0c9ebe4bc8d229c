//! Symbolic integer size expressions (GE's `Expression` / Python `SizeExpr`).
//!
//! An [`Expr`] is an immutable, reference-counted tree kept in a canonical form on
//! construction, modelled on the SymEngine forms GE prints:
//!
//! * sums are `constant + Σ coef·term` with rational coefficients and sorted, merged terms;
//! * products are `coef · Π base^exp` with sorted, merged bases (equal factors become powers;
//!   `a / b` is `a · b^-1`); a numeric coefficient is *not* distributed over a sum
//!   (`-(x + 2)` stays `((2 + x) * -1)`), but such a scaled sum is expanded when it is added to
//!   something else, so `x - (x + 2)` folds to `-2`;
//! * `Max`/`Min` are flattened, de-duplicated and sorted; constants are folded everywhere.
//!
//! Structurally equal expressions therefore compare and hash equal. Printing ([`Expr::to_string`])
//! follows GE's printer and [`Expr::parse`] reads it back.

mod eval;
mod parse;
mod print;
mod rat;

pub use eval::{Bindings, EvalError, TriBool};
pub use parse::ParseError;
pub use rat::Rat;
/// The hash map used for bindings and substitutions.
pub use rustc_hash::FxHashMap;

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHasher;
use smallvec::SmallVec;

/// A function application kind.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Func {
    /// `Ceiling(x)`.
    Ceiling,
    /// `Floor(x)`.
    Floor,
    /// `Abs(x)`.
    Abs,
    /// `Mod(a, b)` (floor modulo, sign of the divisor).
    Mod,
    /// `Max(a, b, ...)`.
    Max,
    /// `Min(a, b, ...)`.
    Min,
}

impl Func {
    /// GE's printed name.
    pub fn name(self) -> &'static str {
        match self {
            Func::Ceiling => "Ceiling",
            Func::Floor => "Floor",
            Func::Abs => "Abs",
            Func::Mod => "Mod",
            Func::Max => "Max",
            Func::Min => "Min",
        }
    }
}

/// A relation kind (guards); `Ge`/`Gt` are built as swapped `Le`/`Lt`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Rel {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
}

impl Rel {
    /// GE's printed name.
    pub fn name(self) -> &'static str {
        match self {
            Rel::Eq => "ExpectEq",
            Rel::Ne => "ExpectNe",
            Rel::Lt => "ExpectLt",
            Rel::Le => "ExpectLe",
        }
    }
}

/// GE's `ExprType` classification.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExprType {
    /// An integer constant (0).
    ConstantInteger,
    /// A non-integer rational constant (2).
    ConstantRation,
    /// A symbol (100).
    Variable,
    /// An arithmetic operation (200).
    Operation,
    /// A relation (201).
    OperationBoolean,
}

impl ExprType {
    /// GE's numeric code.
    pub fn code(self) -> u32 {
        match self {
            ExprType::ConstantInteger => 0,
            ExprType::ConstantRation => 2,
            ExprType::Variable => 100,
            ExprType::Operation => 200,
            ExprType::OperationBoolean => 201,
        }
    }
}

/// A term of a sum: `(term, coefficient)`.
pub type Term = (Expr, Rat);
/// A factor of a product: `(base, exponent)`.
pub type Factor = (Expr, Expr);

/// The canonical node kinds. Inspect with [`Expr::kind`].
#[derive(Debug)]
pub enum Kind {
    /// A rational constant.
    Num(Rat),
    /// A named symbol.
    Sym(Arc<str>),
    /// `constant + Σ coef·term`; terms are sorted, coefficient-free and never sums.
    Add(Rat, Vec<Term>),
    /// `coef · Π base^exp`; bases sorted; also represents a lone power (`coef == 1`).
    Mul(Rat, Vec<Factor>),
    /// A function application.
    Func(Func, Vec<Expr>),
    /// A relation.
    Rel(Rel, Expr, Expr),
}

#[derive(Debug)]
struct Node {
    hash: u64,
    kind: Kind,
}

/// An immutable canonical symbolic expression (cheap to clone).
#[derive(Clone)]
pub struct Expr(Arc<Node>);

fn kind_hash(kind: &Kind) -> u64 {
    let mut h = FxHasher::default();
    match kind {
        Kind::Num(r) => {
            0u8.hash(&mut h);
            r.hash(&mut h);
        }
        Kind::Sym(s) => {
            1u8.hash(&mut h);
            s.hash(&mut h);
        }
        Kind::Add(c, terms) => {
            2u8.hash(&mut h);
            c.hash(&mut h);
            for (t, k) in terms {
                t.0.hash.hash(&mut h);
                k.hash(&mut h);
            }
        }
        Kind::Mul(c, factors) => {
            3u8.hash(&mut h);
            c.hash(&mut h);
            for (b, e) in factors {
                b.0.hash.hash(&mut h);
                e.0.hash.hash(&mut h);
            }
        }
        Kind::Func(f, args) => {
            4u8.hash(&mut h);
            f.hash(&mut h);
            for a in args {
                a.0.hash.hash(&mut h);
            }
        }
        Kind::Rel(r, a, b) => {
            5u8.hash(&mut h);
            r.hash(&mut h);
            a.0.hash.hash(&mut h);
            b.0.hash.hash(&mut h);
        }
    }
    h.finish()
}

impl Expr {
    fn from_kind(kind: Kind) -> Expr {
        let hash = kind_hash(&kind);
        Expr(Arc::new(Node { hash, kind }))
    }

    /// The canonical node.
    pub fn kind(&self) -> &Kind {
        &self.0.kind
    }

    /// The precomputed structural hash.
    pub fn hash_value(&self) -> u64 {
        self.0.hash
    }

    /// A rational constant.
    pub fn num(r: Rat) -> Expr {
        Expr::from_kind(Kind::Num(r))
    }

    /// An integer constant.
    pub fn int(v: i64) -> Expr {
        Expr::num(Rat::from(v))
    }

    /// `n / d` as a constant; `None` when `d == 0`.
    pub fn rational(n: i64, d: i64) -> Option<Expr> {
        Rat::new(n as i128, d as i128).map(Expr::num)
    }

    /// A symbol named `name`.
    pub fn sym(name: &str) -> Expr {
        Expr::from_kind(Kind::Sym(Arc::from(name)))
    }

    /// The constant value, if this is a constant.
    pub fn as_num(&self) -> Option<Rat> {
        match self.kind() {
            Kind::Num(r) => Some(*r),
            _ => None,
        }
    }

    /// The integer value, if this is an integer constant within `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_num().and_then(Rat::to_i64)
    }

    /// The symbol name, if this is a symbol.
    pub fn as_sym(&self) -> Option<&str> {
        match self.kind() {
            Kind::Sym(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this is a constant.
    pub fn is_const(&self) -> bool {
        matches!(self.kind(), Kind::Num(_))
    }

    /// Whether this is a symbol.
    pub fn is_symbol(&self) -> bool {
        matches!(self.kind(), Kind::Sym(_))
    }

    /// GE's `ExprType` of this expression.
    pub fn expr_type(&self) -> ExprType {
        match self.kind() {
            Kind::Num(r) if r.is_int() => ExprType::ConstantInteger,
            Kind::Num(_) => ExprType::ConstantRation,
            Kind::Sym(_) => ExprType::Variable,
            Kind::Rel(..) => ExprType::OperationBoolean,
            _ => ExprType::Operation,
        }
    }

    /// Whether this is the integer `v`.
    pub fn is_int_value(&self, v: i64) -> bool {
        self.as_num() == Some(Rat::from(v))
    }

    /// The direct arguments (GE's `GetArgs`, in canonical order).
    pub fn args(&self) -> Vec<Expr> {
        match self.kind() {
            Kind::Num(_) | Kind::Sym(_) => Vec::new(),
            Kind::Add(c, terms) => {
                let mut v = Vec::with_capacity(terms.len() + 1);
                if !c.is_zero() {
                    v.push(Expr::num(*c));
                }
                v.extend(terms.iter().map(|(t, k)| scale(*k, t)));
                v
            }
            Kind::Mul(c, factors) => {
                let mut v = Vec::with_capacity(factors.len() + 1);
                if !c.is_one() {
                    v.push(Expr::num(*c));
                }
                v.extend(factors.iter().map(|(b, e)| Expr::pow(b, e)));
                v
            }
            Kind::Func(_, a) => a.clone(),
            Kind::Rel(_, a, b) => vec![a.clone(), b.clone()],
        }
    }

    // ----- arithmetic -------------------------------------------------------------------

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

    /// Whether every value this expression takes is an integer (for integer symbols).
    pub fn is_integer_valued(&self) -> bool {
        match self.kind() {
            Kind::Num(r) => r.is_int(),
            Kind::Sym(_) => true,
            Kind::Add(c, t) => {
                c.is_int() && t.iter().all(|(x, k)| k.is_int() && x.is_integer_valued())
            }
            Kind::Mul(c, f) => {
                c.is_int()
                    && f.iter().all(|(b, e)| {
                        b.is_integer_valued()
                            && e.as_num().is_some_and(|r| r.is_int() && !r.is_negative())
                    })
            }
            Kind::Func(Func::Ceiling | Func::Floor, _) => true,
            Kind::Func(_, a) => a.iter().all(Expr::is_integer_valued),
            Kind::Rel(..) => true,
        }
    }

    /// Whether this is the division-by-zero marker `Pow(0, -1)`.
    pub fn is_zoo(&self) -> bool {
        matches!(self.kind(), Kind::Mul(c, f) if c.is_one() && f.len() == 1 && f[0].0.is_int_value(0))
    }

    fn rank(&self) -> u8 {
        match self.kind() {
            Kind::Num(_) => 0,
            Kind::Sym(_) => 1,
            Kind::Mul(..) => 2,
            Kind::Add(..) => 3,
            Kind::Func(..) => 4,
            Kind::Rel(..) => 5,
        }
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

impl PartialEq for Expr {
    fn eq(&self, o: &Expr) -> bool {
        if Arc::ptr_eq(&self.0, &o.0) {
            return true;
        }
        if self.0.hash != o.0.hash {
            return false;
        }
        match (self.kind(), o.kind()) {
            (Kind::Num(a), Kind::Num(b)) => a == b,
            (Kind::Sym(a), Kind::Sym(b)) => a == b,
            (Kind::Add(c1, t1), Kind::Add(c2, t2)) => c1 == c2 && t1 == t2,
            (Kind::Mul(c1, f1), Kind::Mul(c2, f2)) => c1 == c2 && f1 == f2,
            (Kind::Func(g1, a1), Kind::Func(g2, a2)) => g1 == g2 && a1 == a2,
            (Kind::Rel(r1, a1, b1), Kind::Rel(r2, a2, b2)) => r1 == r2 && a1 == a2 && b1 == b2,
            _ => false,
        }
    }
}

impl Eq for Expr {}

impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl Ord for Expr {
    /// The canonical order: constants, symbols (by name), products, sums, functions, relations.
    fn cmp(&self, o: &Expr) -> Ordering {
        if Arc::ptr_eq(&self.0, &o.0) {
            return Ordering::Equal;
        }
        let r = self.rank().cmp(&o.rank());
        if r != Ordering::Equal {
            return r;
        }
        match (self.kind(), o.kind()) {
            (Kind::Num(a), Kind::Num(b)) => a.cmp(b),
            (Kind::Sym(a), Kind::Sym(b)) => a.cmp(b),
            (Kind::Mul(c1, f1), Kind::Mul(c2, f2)) => f1.cmp(f2).then(c1.cmp(c2)),
            (Kind::Add(c1, t1), Kind::Add(c2, t2)) => t1.cmp(t2).then(c1.cmp(c2)),
            (Kind::Func(g1, a1), Kind::Func(g2, a2)) => g1.cmp(g2).then_with(|| a1.cmp(a2)),
            (Kind::Rel(r1, a1, b1), Kind::Rel(r2, a2, b2)) => {
                r1.cmp(r2).then_with(|| a1.cmp(a2)).then_with(|| b1.cmp(b2))
            }
            _ => Ordering::Equal,
        }
    }
}

impl PartialOrd for Expr {
    fn partial_cmp(&self, o: &Expr) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        print::write_expr(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr({self})")
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::int(v)
    }
}

macro_rules! binop {
    ($tr:ident, $m:ident, $f:path) => {
        impl std::ops::$tr<&Expr> for &Expr {
            type Output = Expr;
            fn $m(self, o: &Expr) -> Expr {
                $f(self, o)
            }
        }
        impl std::ops::$tr<Expr> for Expr {
            type Output = Expr;
            fn $m(self, o: Expr) -> Expr {
                $f(&self, &o)
            }
        }
        impl std::ops::$tr<i64> for &Expr {
            type Output = Expr;
            fn $m(self, o: i64) -> Expr {
                $f(self, &Expr::int(o))
            }
        }
        impl std::ops::$tr<i64> for Expr {
            type Output = Expr;
            fn $m(self, o: i64) -> Expr {
                $f(&self, &Expr::int(o))
            }
        }
    };
}

binop!(Add, add, Expr::add);
binop!(Sub, sub, Expr::sub);
binop!(Mul, mul, Expr::mul);
binop!(Div, div, Expr::div);

impl std::ops::Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(self)
    }
}

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(&self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> Expr {
        Expr::sym(n)
    }

    #[test]
    fn canonical_forms() {
        let x = s("x");
        assert_eq!(&(&x + 2) + 4, &x + 6);
        assert_eq!(&x * &x, Expr::pow(&x, &Expr::int(2)));
        assert_eq!(&x - &x, Expr::int(0));
        assert_eq!(&(&x * 2) / 2, x);
        assert_eq!(&(&x + 1) - &(&x + 2), Expr::int(-1));
        assert_eq!(&s("a") + &s("b"), &s("b") + &s("a"));
        assert_eq!(&s("a") * &s("b"), &s("b") * &s("a"));
        assert_eq!(Expr::int(6) / Expr::int(3), Expr::int(2));
        assert_eq!(
            Expr::max(&Expr::max(&s("b"), &s("c")), &s("d")),
            Expr::max_of([&s("d"), &s("c"), &s("b")])
        );
        assert_eq!(Expr::max(&Expr::int(3), &Expr::int(5)), Expr::int(5));
        assert_eq!(Expr::ceiling(&(Expr::int(7) / Expr::int(2))), Expr::int(4));
        assert_eq!(Expr::modulo(&Expr::int(-7), &Expr::int(3)), Expr::int(2));
        let xy = &x * &s("y");
        assert_eq!(
            Expr::pow(&xy, &Expr::int(2)),
            &(&x * &x) * &(&s("y") * &s("y"))
        );
        assert_eq!(&x / &x, Expr::int(1));
    }
}
