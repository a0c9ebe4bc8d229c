//! GE's expression printer (the `Str()` / serialization format).

use super::{Expr, Func, Kind, Rat};

impl Expr {
    /// The text `Display` prints (GE's sympy-style form), without the formatter's copy.
    pub fn text(&self) -> String {
        to_str(self)
    }
}

/// A number as its text: integers that fit an `i64` through its (much cheaper) formatting.
fn num_str(r: &Rat) -> String {
    match i64::try_from(r.numer()) {
        Ok(n) if r.is_int() => n.to_string(),
        _ => r.to_string(),
    }
}

/// The text of an expression (what `Display` prints), built directly.
fn to_str(e: &Expr) -> String {
    match e.kind() {
        Kind::Num(r) => num_str(r),
        Kind::Sym(s) => s.to_string(),
        Kind::Add(c, terms) => {
            let mut pos: Vec<String> = Vec::with_capacity(terms.len() + 1);
            let mut neg: Vec<String> = Vec::new();
            if !c.is_zero() {
                pos.push(num_str(c));
            }
            for (t, k) in terms {
                if k.is_negative() {
                    neg.push(scaled_str(k.sat_neg(), t));
                } else {
                    pos.push(scaled_str(*k, t));
                }
            }
            pos.sort();
            neg.sort();
            let mut s = String::from("(");
            s.push_str(&pos.join(" + "));
            if !neg.is_empty() {
                s.push_str(" - ");
                s.push_str(&neg.join(" - "));
            }
            s.push(')');
            s
        }
        Kind::Mul(c, factors) => {
            if c.is_one() && factors.len() == 1 {
                return pow_str(&factors[0].0, &factors[0].1);
            }
            mul_str(*c, factors.iter().map(|(b, e)| (b, e)))
        }
        Kind::Func(f, args) => match f {
            Func::Max | Func::Min => {
                let name = f.name();
                let mut s = format!("{name}({}, {})", to_str(&args[0]), to_str(&args[1]));
                for a in &args[2..] {
                    s = format!("{name}({s}, {})", to_str(a));
                }
                s
            }
            Func::Mod => format!("Mod({}, {})", to_str(&args[0]), to_str(&args[1])),
            _ => format!("{}({})", f.name(), to_str(&args[0])),
        },
        Kind::Rel(r, a, b) => format!("{}({}, {})", r.name(), to_str(a), to_str(b)),
    }
}

/// How `k * t` prints (`t` coefficient-free), without building it.
fn scaled_str(k: Rat, t: &Expr) -> String {
    if k.is_one() {
        return to_str(t);
    }
    match t.kind() {
        Kind::Mul(c, f) if c.is_one() => mul_str(k, f.iter().map(|(b, e)| (b, e))),
        _ => {
            let one = Expr::int(1);
            mul_str(k, std::iter::once((t, &one)))
        }
    }
}

fn mul_str<'a, I: Iterator<Item = (&'a Expr, &'a Expr)>>(c: Rat, factors: I) -> String {
    let mut pos: Vec<String> = Vec::new();
    let mut neg: Vec<String> = Vec::new();
    if !c.is_one() {
        pos.push(num_str(&c));
    }
    for (b, e) in factors {
        match e.as_num() {
            Some(r) if r.is_one() => pos.push(to_str(b)),
            Some(r) if r.is_negative() => {
                let p = r.sat_neg();
                if p.is_one() {
                    neg.push(to_str(b));
                } else {
                    neg.push(pow_str(b, &Expr::num(p)));
                }
            }
            _ => pos.push(pow_str(b, e)),
        }
    }
    pos.sort();
    neg.sort();
    let mut s = String::from("(");
    if pos.is_empty() {
        s.push('1');
    } else {
        s.push_str(&pos.join(" * "));
    }
    if !neg.is_empty() {
        s.push_str(" / (");
        s.push_str(&neg.join(" * "));
        s.push(')');
    }
    s.push(')');
    s
}

fn pow_str(b: &Expr, e: &Expr) -> String {
    if let Some(r) = e.as_num() {
        if r == Rat::new(1, 2).unwrap_or(Rat::ONE) && !r.is_one() {
            return format!("Sqrt({})", to_str(b));
        }
        if r.is_one() {
            return format!("({})", to_str(b));
        }
        if r.is_int() && r.is_positive() && r.numer() <= 64 {
            let base = to_str(b);
            let n = r.numer() as usize;
            let mut s = String::with_capacity(2 + n * (base.len() + 3));
            s.push('(');
            for i in 0..n {
                if i > 0 {
                    s.push_str(" * ");
                }
                s.push_str(&base);
            }
            s.push(')');
            return s;
        }
    }
    format!("Pow({}, {})", to_str(b), to_str(e))
}

#[cfg(test)]
mod tests {
    use super::super::Expr;

    fn s(n: &str) -> Expr {
        Expr::sym(n)
    }

    #[test]
    fn ge_printing() {
        let (b, c, d, x) = (s("b"), s("c"), s("d"), s("x"));
        assert_eq!((&s("s0") + 100).to_string(), "(100 + s0)");
        assert_eq!((&b / &c).to_string(), "(b / (c))");
        assert_eq!((Expr::int(1) / c.clone()).to_string(), "Pow(c, -1)");
        assert_eq!((&(&b * &b) * &b).to_string(), "(b * b * b)");
        assert_eq!(Expr::pow(&b, &c).to_string(), "Pow(b, c)");
        assert_eq!(Expr::modulo(&b, &c).to_string(), "Mod(b, c)");
        assert_eq!(Expr::ceiling(&b).to_string(), "Ceiling(b)");
        assert_eq!(Expr::abs(&b).to_string(), "Abs(b)");
        assert_eq!((Expr::int(2) - &b * 3).to_string(), "(2 - (3 * b))");
        assert_eq!(
            Expr::max(&Expr::max(&b, &c), &d).to_string(),
            "Max(Max(b, c), d)"
        );
        assert_eq!((-&x).to_string(), "(-1 * x)");
        assert_eq!((-(&x + 2)).to_string(), "((2 + x) * -1)");
        assert_eq!((&s("s1") * &s("s2")).to_string(), "(s1 * s2)");
        assert_eq!(
            Expr::ceiling(&(&s("s0") / &s("z0t_size"))).to_string(),
            "Ceiling((s0 / (z0t_size)))"
        );
        assert_eq!((&s("s0") - 1).to_string(), "(-1 + s0)");
    }
}
