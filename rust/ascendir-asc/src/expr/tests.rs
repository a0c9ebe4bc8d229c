//! Unit tests of the canonical forms.

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
