//! Equality, hashing, ordering, printing and the arithmetic operators of [`Expr`].

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::{Expr, Kind};

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
        f.write_str(&self.text())
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
