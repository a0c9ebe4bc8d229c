//! Parser of GE's printed expression format (the inverse of the printer).
//!
//! Grammar: `sum := term (('+' | '-') term)*`, `term := unary (('*' | '/') unary)*`,
//! `unary := '-' unary | atom ('**' unary)?`, `atom := integer | name | name '(' args ')' |
//! '(' sum ')'`. Functions: `Ceiling`, `Floor`, `Abs`, `Mod`, `Max`, `Min`, `Pow`, `Sqrt`,
//! `Rational`, `ExpectEq`, `ExpectNe`, `ExpectLt`, `ExpectLe`.

use super::{Expr, Rat, Rel};

/// A syntax error with its byte offset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse expression {text:?} at offset {offset}: {message}")]
pub struct ParseError {
    /// The input text.
    pub text: String,
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 512;

impl Expr {
    /// Parse GE's printed form (`"(100 + s0)"`, `"Ceiling((s0 / (z0t_size)))"`, ...).
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser {
            s: text.as_bytes(),
            text,
            pos: 0,
            depth: 0,
        };
        let e = p.sum()?;
        p.ws();
        if p.pos != p.s.len() {
            return Err(p.err("unexpected trailing input"));
        }
        Ok(e)
    }
}

impl<'a> Parser<'a> {
    fn err(&self, m: &str) -> ParseError {
        ParseError {
            text: self.text.to_string(),
            offset: self.pos,
            message: m.to_string(),
        }
    }

    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), ParseError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("expression nested too deeply"));
        }
        Ok(())
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let mut items = vec![self.term()?];
        loop {
            match self.peek() {
                Some(b'+') => {
                    self.pos += 1;
                    items.push(self.term()?);
                }
                Some(b'-') => {
                    self.pos += 1;
                    let t = self.term()?;
                    items.push(Expr::neg(&t));
                }
                _ => break,
            }
        }
        self.depth -= 1;
        if items.len() == 1 {
            return Ok(items.pop().unwrap_or_else(|| Expr::int(0)));
        }
        Ok(Expr::sum(items.iter()))
    }

    fn term(&mut self) -> Result<Expr, ParseError> {
        let mut items = vec![self.unary()?];
        loop {
            match self.peek() {
                Some(b'*') if self.s.get(self.pos + 1) != Some(&b'*') => {
                    self.pos += 1;
                    items.push(self.unary()?);
                }
                Some(b'/') => {
                    self.pos += 1;
                    let d = self.unary()?;
                    items.push(Expr::pow(&d, &Expr::int(-1)));
                }
                _ => break,
            }
        }
        if items.len() == 1 {
            return Ok(items.pop().unwrap_or_else(|| Expr::int(0)));
        }
        Ok(Expr::product(items.iter()))
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let r = if self.peek() == Some(b'-') {
            self.pos += 1;
            let inner = self.unary()?;
            match inner.as_num() {
                Some(v) => Ok(Expr::num(v.sat_neg())),
                None => Ok(Expr::neg(&inner)),
            }
        } else {
            let base = self.atom()?;
            if self.peek() == Some(b'*') && self.s.get(self.pos + 1) == Some(&b'*') {
                self.pos += 2;
                let e = self.unary()?;
                Ok(Expr::pow(&base, &e))
            } else {
                Ok(base)
            }
        };
        self.depth -= 1;
        r
    }

    fn args(&mut self) -> Result<Vec<Expr>, ParseError> {
        self.expect(b'(')?;
        let mut v = vec![self.sum()?];
        while self.peek() == Some(b',') {
            self.pos += 1;
            v.push(self.sum()?);
        }
        self.expect(b')')?;
        Ok(v)
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let e = self.sum()?;
                self.expect(b')')?;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let v: i128 = self.text[start..self.pos].parse().map_err(|_| ParseError {
                    text: self.text.to_string(),
                    offset: start,
                    message: "integer out of range".into(),
                })?;
                Ok(Expr::num(Rat::int(v)))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self.pos < self.s.len()
                    && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
                {
                    self.pos += 1;
                }
                let name = &self.text[start..self.pos];
                if self.peek() != Some(b'(') {
                    return Ok(Expr::sym(name));
                }
                let at = start;
                let args = self.args()?;
                let arity = |n: usize| -> Result<(), ParseError> {
                    if args.len() == n {
                        Ok(())
                    } else {
                        Err(ParseError {
                            text: self.text.to_string(),
                            offset: at,
                            message: format!("{name} takes {n} argument(s), got {}", args.len()),
                        })
                    }
                };
                match name {
                    "Ceiling" => arity(1).map(|_| Expr::ceiling(&args[0])),
                    "Floor" => arity(1).map(|_| Expr::floor(&args[0])),
                    "Abs" => arity(1).map(|_| Expr::abs(&args[0])),
                    "Sqrt" => arity(1).map(|_| {
                        Expr::pow(&args[0], &Expr::num(Rat::new(1, 2).unwrap_or(Rat::ONE)))
                    }),
                    "Mod" => arity(2).map(|_| Expr::modulo(&args[0], &args[1])),
                    "Pow" => arity(2).map(|_| Expr::pow(&args[0], &args[1])),
                    "Rational" => {
                        arity(2)?;
                        match (args[0].as_num(), args[1].as_num()) {
                            (Some(n), Some(d)) if n.is_int() && d.is_int() => {
                                Rat::new(n.numer(), d.numer())
                                    .map(Expr::num)
                                    .ok_or(ParseError {
                                        text: self.text.to_string(),
                                        offset: at,
                                        message: "Rational with zero denominator".into(),
                                    })
                            }
                            _ => Err(ParseError {
                                text: self.text.to_string(),
                                offset: at,
                                message: "Rational takes two integers".into(),
                            }),
                        }
                    }
                    "Max" | "Min" if args.len() >= 2 => Ok(if name == "Max" {
                        Expr::max_of(args.iter())
                    } else {
                        Expr::min_of(args.iter())
                    }),
                    "ExpectEq" => arity(2).map(|_| Expr::relation(Rel::Eq, &args[0], &args[1])),
                    "ExpectNe" => arity(2).map(|_| Expr::relation(Rel::Ne, &args[0], &args[1])),
                    "ExpectLt" => arity(2).map(|_| Expr::relation(Rel::Lt, &args[0], &args[1])),
                    "ExpectLe" => arity(2).map(|_| Expr::relation(Rel::Le, &args[0], &args[1])),
                    _ => Err(ParseError {
                        text: self.text.to_string(),
                        offset: at,
                        message: format!("unknown function '{name}'"),
                    }),
                }
            }
            Some(_) => Err(self.err("unexpected character")),
            None => Err(self.err("unexpected end of input")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for text in [
            "(100 + s0)",
            "(b / (c))",
            "Pow(c, -1)",
            "(b * b * b)",
            "Pow(b, c)",
            "Mod(b, c)",
            "Ceiling(b)",
            "Abs(b)",
            "(2 - (3 * b))",
            "Max(Max(b, c), d)",
            "(-1 * x)",
            "((2 + x) * -1)",
            "Ceiling((s0 / (z0t_size)))",
            "( - x - y)",
            "(-1 + s0)",
            "Rational(1 , 2)",
            "(Rational(1 , 2) * x)",
            "(x / ((1 + y)))",
            "Sqrt(x)",
            "ExpectLe(a, b)",
            "Min(a, b)",
            "Floor((a / (b * c)))",
        ] {
            let e = Expr::parse(text).unwrap();
            assert_eq!(e.to_string(), text, "{text}");
            assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
        }
    }

    #[test]
    fn errors() {
        assert!(Expr::parse("(1 + ").is_err());
        assert!(Expr::parse("Foo(1)").is_err());
        assert!(Expr::parse("Mod(1)").is_err());
        assert!(Expr::parse("1 2").is_err());
        assert!(Expr::parse("Rational(1 , 0)").is_err());
        assert!(Expr::parse(&"(".repeat(10000)).is_err());
        assert_eq!(Expr::parse("s0 + 100").unwrap().to_string(), "(100 + s0)");
        assert_eq!(Expr::parse("s0**2").unwrap().to_string(), "(s0 * s0)");
    }
}
