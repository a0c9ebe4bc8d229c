//! Size expressions printed as C++: exact rational arithmetic on the runtime's `R` type
//! (`ascendir_cpu_rt.h`), so a kernel computes every size exactly as [`Expr::evaluate`] does.

use ascendir_asc::expr::{Expr, Func, Kind, Rat};

fn rat(r: &Rat) -> Option<String> {
    let n = i64::try_from(r.numer()).ok()?;
    let d = i64::try_from(r.denom()).ok()?;
    Some(if d == 1 {
        format!("ascendir_rt::ri({n}LL)")
    } else {
        format!("ascendir_rt::mk({n}LL, {d}LL)")
    })
}

/// Fold `e` bottom-up without recursion (the depth of an expression is the input's):
/// `build(node, children)` receives the results of the node's children in order — sum terms;
/// product base and exponent pairs; function arguments; relation sides.
pub(crate) fn fold<T, E, F>(e: &Expr, build: &mut F) -> Result<T, E>
where
    F: FnMut(&Expr, Vec<T>) -> Result<T, E>,
{
    enum Step<'a> {
        Visit(&'a Expr),
        Build(&'a Expr, usize),
    }
    let mut stack = vec![Step::Visit(e)];
    let mut out: Vec<T> = Vec::new();
    while let Some(s) = stack.pop() {
        match s {
            Step::Visit(x) => {
                // The build step, then the children in reverse (the first is visited first).
                let mark = stack.len();
                stack.push(Step::Build(x, 0));
                match x.kind() {
                    Kind::Num(_) | Kind::Sym(_) => {}
                    Kind::Add(_, terms) => {
                        stack.extend(terms.iter().rev().map(|(t, _)| Step::Visit(t)));
                    }
                    Kind::Mul(_, factors) => {
                        for (b, ex) in factors.iter().rev() {
                            stack.push(Step::Visit(ex));
                            stack.push(Step::Visit(b));
                        }
                    }
                    Kind::Func(_, args) => stack.extend(args.iter().rev().map(Step::Visit)),
                    Kind::Rel(_, a, b) => {
                        stack.push(Step::Visit(b));
                        stack.push(Step::Visit(a));
                    }
                }
                stack[mark] = Step::Build(x, stack.len() - mark - 1);
            }
            Step::Build(x, n) => {
                let args = out.split_off(out.len().saturating_sub(n));
                out.push(build(x, args)?);
            }
        }
    }
    // The root's result is the only one left.
    Ok(out.pop().expect("fold builds the root last"))
}

/// The C++ expression of `e` (type `ascendir_rt::R`); symbols are read through `sym(name)`.
/// `None` when the expression holds a relation (not a size) or a constant beyond 64 bits.
pub fn print(e: &Expr, sym: &dyn Fn(&str) -> String) -> Option<String> {
    match e.kind() {
        Kind::Num(r) => return rat(r),
        Kind::Sym(s) => return Some(sym(s)),
        _ => {}
    }
    fold(e, &mut |x, a: Vec<String>| -> Result<String, ()> {
        Ok(match x.kind() {
            Kind::Num(r) => rat(r).ok_or(())?,
            Kind::Sym(s) => sym(s),
            Kind::Add(c, terms) => {
                let mut t = rat(c).ok_or(())?;
                for ((_, k), a) in terms.iter().zip(a) {
                    if *k == Rat::from(1) {
                        t = format!("({t} + {a})");
                    } else {
                        t = format!("({t} + {} * {a})", rat(k).ok_or(())?);
                    }
                }
                t
            }
            Kind::Mul(c, _) => {
                let mut t = rat(c).ok_or(())?;
                for pair in a.chunks(2) {
                    t = format!("({t} * ascendir_rt::rpow({}, {}))", pair[0], pair[1]);
                }
                t
            }
            Kind::Func(f, _) => match f {
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
            },
            Kind::Rel(..) => return Err(()),
        })
    })
    .ok()
}
