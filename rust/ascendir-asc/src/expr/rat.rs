//! Exact rational numbers over `i128`, the constants of [`super::Expr`].

use std::cmp::Ordering;
use std::fmt;

/// A normalized rational number `n / d` with `d > 0` and `gcd(n, d) == 1`.
///
/// Arithmetic is exact; the `checked_*` methods return `None` on `i128` overflow and the
/// plain operators saturate (shape arithmetic never comes close to `i128` limits).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Rat {
    n: i128,
    d: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Rat {
    /// Zero.
    pub const ZERO: Rat = Rat { n: 0, d: 1 };
    /// One.
    pub const ONE: Rat = Rat { n: 1, d: 1 };
    /// Minus one.
    pub const MINUS_ONE: Rat = Rat { n: -1, d: 1 };

    /// The integer `v`.
    pub const fn int(v: i128) -> Rat {
        Rat { n: v, d: 1 }
    }

    /// `n / d` normalized; `None` when `d == 0` or on overflow.
    pub fn new(n: i128, d: i128) -> Option<Rat> {
        if d == 0 {
            return None;
        }
        let g = gcd(n, d);
        let (mut n, mut d) = (n / g, d / g);
        if d < 0 {
            n = n.checked_neg()?;
            d = d.checked_neg()?;
        }
        Some(Rat { n, d })
    }

    /// Numerator.
    pub fn numer(self) -> i128 {
        self.n
    }

    /// Denominator (always positive).
    pub fn denom(self) -> i128 {
        self.d
    }

    /// Whether the value is an integer.
    pub fn is_int(self) -> bool {
        self.d == 1
    }

    /// Whether the value is zero.
    pub fn is_zero(self) -> bool {
        self.n == 0
    }

    /// Whether the value is one.
    pub fn is_one(self) -> bool {
        self.n == 1 && self.d == 1
    }

    /// Whether the value is negative.
    pub fn is_negative(self) -> bool {
        self.n < 0
    }

    /// Whether the value is positive.
    pub fn is_positive(self) -> bool {
        self.n > 0
    }

    /// The value as `i64` when it is an integer in range.
    pub fn to_i64(self) -> Option<i64> {
        if self.d == 1 {
            i64::try_from(self.n).ok()
        } else {
            None
        }
    }

    /// `self + o`, `None` on overflow.
    pub fn checked_add(self, o: Rat) -> Option<Rat> {
        if self.d == 1 && o.d == 1 {
            return Some(Rat::int(self.n.checked_add(o.n)?));
        }
        let g = gcd(self.d, o.d);
        let l = (self.d / g).checked_mul(o.d)?;
        let a = self.n.checked_mul(l / self.d)?;
        let b = o.n.checked_mul(l / o.d)?;
        Rat::new(a.checked_add(b)?, l)
    }

    /// `self - o`, `None` on overflow.
    pub fn checked_sub(self, o: Rat) -> Option<Rat> {
        self.checked_add(o.checked_neg()?)
    }

    /// `-self`, `None` on overflow.
    pub fn checked_neg(self) -> Option<Rat> {
        Some(Rat {
            n: self.n.checked_neg()?,
            d: self.d,
        })
    }

    /// `self * o`, `None` on overflow.
    pub fn checked_mul(self, o: Rat) -> Option<Rat> {
        if self.d == 1 && o.d == 1 {
            return Some(Rat::int(self.n.checked_mul(o.n)?));
        }
        let g1 = gcd(self.n, o.d);
        let g2 = gcd(o.n, self.d);
        let g1 = if g1 == 0 { 1 } else { g1 };
        let g2 = if g2 == 0 { 1 } else { g2 };
        let n = (self.n / g1).checked_mul(o.n / g2)?;
        let d = (self.d / g2).checked_mul(o.d / g1)?;
        Rat::new(n, d)
    }

    /// `self / o`, `None` on division by zero or overflow.
    pub fn checked_div(self, o: Rat) -> Option<Rat> {
        if o.n == 0 {
            return None;
        }
        self.checked_mul(o.recip()?)
    }

    /// `1 / self`, `None` for zero.
    pub fn recip(self) -> Option<Rat> {
        Rat::new(self.d, self.n)
    }

    /// `self ^ e` for an integer exponent; `None` on overflow or `0 ^ negative`.
    pub fn checked_pow(self, e: i128) -> Option<Rat> {
        let base = if e < 0 { self.recip()? } else { self };
        let mut e = e.unsigned_abs();
        let mut acc = Rat::ONE;
        let mut b = base;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.checked_mul(b)?;
            }
            e >>= 1;
            if e > 0 {
                b = b.checked_mul(b)?;
            }
        }
        Some(acc)
    }

    /// Largest integer `<= self`.
    pub fn floor(self) -> Rat {
        Rat::int(self.n.div_euclid(self.d))
    }

    /// Smallest integer `>= self`.
    pub fn ceil(self) -> Rat {
        let q = self.n.div_euclid(self.d);
        if self.n.rem_euclid(self.d) == 0 {
            Rat::int(q)
        } else {
            Rat::int(q + 1)
        }
    }

    /// Absolute value (saturating).
    pub fn abs(self) -> Rat {
        Rat {
            n: self.n.checked_abs().unwrap_or(i128::MAX),
            d: self.d,
        }
    }

    /// Floor modulo with the sign of the divisor (Python `%`), `None` for a zero divisor.
    pub fn checked_mod(self, o: Rat) -> Option<Rat> {
        let q = self.checked_div(o)?.floor();
        self.checked_sub(o.checked_mul(q)?)
    }

    /// Saturating addition (used while canonicalizing).
    pub fn sat_add(self, o: Rat) -> Rat {
        self.checked_add(o).unwrap_or_else(|| saturate(self, o))
    }

    /// Saturating multiplication (used while canonicalizing).
    pub fn sat_mul(self, o: Rat) -> Rat {
        self.checked_mul(o).unwrap_or_else(|| {
            if self.is_negative() != o.is_negative() {
                Rat::int(i128::MIN + 1)
            } else {
                Rat::int(i128::MAX)
            }
        })
    }

    /// Saturating negation.
    pub fn sat_neg(self) -> Rat {
        self.checked_neg().unwrap_or(Rat::int(i128::MAX))
    }
}

fn saturate(a: Rat, _b: Rat) -> Rat {
    if a.is_negative() {
        Rat::int(i128::MIN + 1)
    } else {
        Rat::int(i128::MAX)
    }
}

impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        if self.d == o.d {
            return self.n.cmp(&o.n);
        }
        match (self.n.checked_mul(o.d), o.n.checked_mul(self.d)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => {
                let a = self.n as f64 / self.d as f64;
                let b = o.n as f64 / o.d as f64;
                a.partial_cmp(&b).unwrap_or(Ordering::Equal)
            }
        }
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl From<i64> for Rat {
    fn from(v: i64) -> Rat {
        Rat::int(v as i128)
    }
}

impl fmt::Display for Rat {
    /// Integers print as decimals; other values as GE's `Rational(n , d)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.d == 1 {
            write!(f, "{}", self.n)
        } else {
            write!(f, "Rational({} , {})", self.n, self.d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let h = Rat::new(1, 2).unwrap();
        let t = Rat::new(1, 3).unwrap();
        assert_eq!(h.checked_add(t), Rat::new(5, 6));
        assert_eq!(h.checked_mul(t), Rat::new(1, 6));
        assert_eq!(Rat::new(-7, 2).unwrap().floor(), Rat::int(-4));
        assert_eq!(Rat::new(-7, 2).unwrap().ceil(), Rat::int(-3));
        assert_eq!(Rat::new(7, 2).unwrap().ceil(), Rat::int(4));
        assert_eq!(Rat::int(-7).checked_mod(Rat::int(3)), Some(Rat::int(2)));
        assert_eq!(Rat::int(2).checked_pow(-2), Rat::new(1, 4));
        assert_eq!(Rat::new(4, -6), Rat::new(-2, 3));
        assert!(Rat::new(1, 0).is_none());
        assert!(Rat::new(1, 3).unwrap() < Rat::new(1, 2).unwrap());
    }
}
