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

mod build;
mod eval;
mod parse;
mod print;
mod rat;
#[cfg(test)]
mod tests;
mod traits;

pub(crate) use build::scale;
pub use eval::{Bindings, EvalError, TriBool};
pub use parse::ParseError;
pub use rat::Rat;
/// The hash map used for bindings and substitutions.
pub use rustc_hash::FxHashMap;

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHasher;

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
