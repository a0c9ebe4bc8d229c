//! Property tests: printing then parsing gives an equal expression, and canonicalization
//! preserves the value for random bindings.

use ascendir_asc::expr::{Bindings, Expr, Rat};
use proptest::prelude::*;

/// A plain (non-canonical) expression tree evaluated directly.
#[derive(Clone, Debug)]
enum Ast {
    Int(i64),
    Sym(usize),
    Add(Box<Ast>, Box<Ast>),
    Sub(Box<Ast>, Box<Ast>),
    Mul(Box<Ast>, Box<Ast>),
    Div(Box<Ast>, Box<Ast>),
    Neg(Box<Ast>),
    Ceil(Box<Ast>),
    Floor(Box<Ast>),
    Max(Box<Ast>, Box<Ast>),
    Min(Box<Ast>, Box<Ast>),
    Mod(Box<Ast>, Box<Ast>),
    Pow(Box<Ast>, u8),
}

const NAMES: [&str; 4] = ["s0", "s1", "z0t_size", "b"];

fn ast() -> impl Strategy<Value = Ast> {
    let leaf = prop_oneof![
        (-5i64..20).prop_map(Ast::Int),
        (0usize..4).prop_map(Ast::Sym)
    ];
    leaf.prop_recursive(5, 40, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Add(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Sub(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Mul(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Div(a.into(), b.into())),
            inner.clone().prop_map(|a| Ast::Neg(a.into())),
            inner.clone().prop_map(|a| Ast::Ceil(a.into())),
            inner.clone().prop_map(|a| Ast::Floor(a.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Max(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Min(a.into(), b.into())),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Mod(a.into(), b.into())),
            (inner, 0u8..4).prop_map(|(a, n)| Ast::Pow(a.into(), n)),
        ]
    })
}

fn build(a: &Ast) -> Expr {
    match a {
        Ast::Int(v) => Expr::int(*v),
        Ast::Sym(i) => Expr::sym(NAMES[*i]),
        Ast::Add(x, y) => &build(x) + &build(y),
        Ast::Sub(x, y) => &build(x) - &build(y),
        Ast::Mul(x, y) => &build(x) * &build(y),
        Ast::Div(x, y) => &build(x) / &build(y),
        Ast::Neg(x) => -&build(x),
        Ast::Ceil(x) => Expr::ceiling(&build(x)),
        Ast::Floor(x) => Expr::floor(&build(x)),
        Ast::Max(x, y) => Expr::max(&build(x), &build(y)),
        Ast::Min(x, y) => Expr::min(&build(x), &build(y)),
        Ast::Mod(x, y) => Expr::modulo(&build(x), &build(y)),
        Ast::Pow(x, n) => Expr::pow(&build(x), &Expr::int(*n as i64)),
    }
}

fn eval(a: &Ast, vals: &[i64; 4]) -> Option<Rat> {
    Some(match a {
        Ast::Int(v) => Rat::from(*v),
        Ast::Sym(i) => Rat::from(vals[*i]),
        Ast::Add(x, y) => eval(x, vals)?.checked_add(eval(y, vals)?)?,
        Ast::Sub(x, y) => eval(x, vals)?.checked_sub(eval(y, vals)?)?,
        Ast::Mul(x, y) => eval(x, vals)?.checked_mul(eval(y, vals)?)?,
        Ast::Div(x, y) => eval(x, vals)?.checked_div(eval(y, vals)?)?,
        Ast::Neg(x) => eval(x, vals)?.checked_neg()?,
        Ast::Ceil(x) => eval(x, vals)?.ceil(),
        Ast::Floor(x) => eval(x, vals)?.floor(),
        Ast::Max(x, y) => eval(x, vals)?.max(eval(y, vals)?),
        Ast::Min(x, y) => eval(x, vals)?.min(eval(y, vals)?),
        Ast::Mod(x, y) => eval(x, vals)?.checked_mod(eval(y, vals)?)?,
        Ast::Pow(x, n) => eval(x, vals)?.checked_pow(*n as i128)?,
    })
}

fn small(r: Rat) -> bool {
    r.numer().abs() < (1 << 60) && r.denom() < (1 << 60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn print_parse_round_trip(a in ast()) {
        let e = build(&a);
        let text = e.to_string();
        let back = Expr::parse(&text).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(&back, &e, "text {}", text);
        prop_assert_eq!(back.to_string(), text);
        prop_assert_eq!(back.hash_value(), e.hash_value());
    }

    #[test]
    fn canonical_preserves_value(a in ast(), v0 in 1i64..50, v1 in 1i64..50, v2 in 1i64..50, v3 in 1i64..50) {
        let vals = [v0, v1, v2, v3];
        if let Some(expected) = eval(&a, &vals) {
            prop_assume!(small(expected));
            let e = build(&a);
            let mut b = Bindings::default();
            for (i, n) in NAMES.iter().enumerate() {
                b.insert((*n).to_string(), vals[i]);
            }
            match e.evaluate_rational(&b) {
                Ok(got) => prop_assert_eq!(got, expected, "expr {}", e),
                // Canonical forms may only fail where the original had intermediate overflow.
                Err(err) => prop_assert!(false, "expr {} failed: {}", e, err),
            }
        }
    }
}
