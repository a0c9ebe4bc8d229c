//! Size expressions printed as C++: exact rational arithmetic on the runtime's `R` type
//! (`ascendir_cpu_rt.h`), so a kernel computes every size exactly as [`Expr::evaluate`] does.

use crate::expr::{Expr, Func, Kind, Rat};

fn rat(r: &Rat) -> Option<String> {
    let n = i64::try_from(r.numer()).ok()?;
    let d = i64::try_from(r.denom()).ok()?;
    Some(if d == 1 {
        format!("ascendir_rt::ri({n}LL)")
    } else {
        format!("ascendir_rt::mk({n}LL, {d}LL)")
    })
}

/// The C++ expression of `e` (type `ascendir_rt::R`); symbols are read through `sym(name)`.
/// `None` when the expression holds a relation (not a size) or a constant beyond 64 bits.
pub fn print(e: &Expr, sym: &dyn Fn(&str) -> String) -> Option<String> {
    // Iterative post-order over the tree: no recursion bounded by the input.
    enum Step<'a> {
        Visit(&'a Expr),
        Build(&'a Expr),
    }
    let mut stack = vec![Step::Visit(e)];
    let mut out: Vec<String> = Vec::new();
    while let Some(s) = stack.pop() {
        match s {
            Step::Visit(x) => {
                stack.push(Step::Build(x));
                match x.kind() {
                    Kind::Num(_) | Kind::Sym(_) => {}
                    Kind::Add(_, terms) => {
                        for (t, _) in terms.iter().rev() {
                            stack.push(Step::Visit(t));
                        }
                    }
                    Kind::Mul(_, factors) => {
                        for (b, ex) in factors.iter().rev() {
                            stack.push(Step::Visit(ex));
                            stack.push(Step::Visit(b));
                        }
                    }
                    Kind::Func(_, args) => {
                        for a in args.iter().rev() {
                            stack.push(Step::Visit(a));
                        }
                    }
                    Kind::Rel(..) => return None,
                }
            }
            Step::Build(x) => {
                let text = match x.kind() {
                    Kind::Num(r) => rat(r)?,
                    Kind::Sym(s) => sym(s),
                    Kind::Add(c, terms) => {
                        let args = out.split_off(out.len() - terms.len());
                        let mut t = rat(c)?;
                        for ((_, k), a) in terms.iter().zip(args) {
                            if *k == Rat::from(1) {
                                t = format!("({t} + {a})");
                            } else {
                                t = format!("({t} + {} * {a})", rat(k)?);
                            }
                        }
                        t
                    }
                    Kind::Mul(c, factors) => {
                        let args = out.split_off(out.len() - 2 * factors.len());
                        let mut t = rat(c)?;
                        for pair in args.chunks(2) {
                            t = format!("({t} * ascendir_rt::rpow({}, {}))", pair[0], pair[1]);
                        }
                        t
                    }
                    Kind::Func(f, args) => {
                        let a = out.split_off(out.len() - args.len());
                        match f {
                            Func::Ceiling => format!("ascendir_rt::rceil({})", a[0]),
                            Func::Floor => format!("ascendir_rt::rfloor({})", a[0]),
                            Func::Abs => format!("ascendir_rt::rabs({})", a[0]),
                            Func::Mod => format!("ascendir_rt::rmod({}, {})", a[0], a[1]),
                            Func::Max | Func::Min => {
                                let name = if *f == Func::Max { "rmax" } else { "rmin" };
                                let mut it = a.into_iter();
                                let mut t = it
                                    .next()
                                    .unwrap_or_else(|| "ascendir_rt::ri(0LL)".to_string());
                                for b in it {
                                    t = format!("ascendir_rt::{name}({t}, {b})");
                                }
                                t
                            }
                        }
                    }
                    Kind::Rel(..) => return None,
                };
                out.push(text);
            }
        }
    }
    out.pop()
}
