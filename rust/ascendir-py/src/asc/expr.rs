//! `ascendir._core.asc.Expr`: the symbolic size expression (`asc.SizeExpr`).

use ascendir_asc::expr::FxHashMap;
use ascendir_asc::expr::{Bindings, EvalError, Rel};
use ascendir_asc::{AscError, Expr, TriBool};
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};

use crate::errors::IntoPyResult;

/// An immutable canonical symbolic integer expression.
#[pyclass(name = "Expr", module = "ascendir._core.asc", frozen)]
#[derive(Debug)]
pub struct PyExpr {
    /// The expression.
    pub e: Expr,
}

/// The message GE uses when a value is neither an expression nor an integer.
pub const TYPE_MSG: &str = "Only support type of SizeExpr or long";

/// Convert an `Expr` or an `int` (not `bool`) into an expression.
pub fn to_expr(obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if let Ok(e) = obj.cast::<PyExpr>() {
        return Ok(e.get().e.clone());
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        let v: i64 = obj.extract().map_err(|_| {
            crate::errors::raise(
                obj.py(),
                crate::errors::overflow_error(obj.py()),
                "integer does not fit in int64".into(),
                &[],
            )
        })?;
        return Ok(Expr::int(v));
    }
    Err(crate::errors::raise(
        obj.py(),
        crate::errors::invalid_argument_error(obj.py()),
        TYPE_MSG.into(),
        &[],
    ))
}

fn opt_expr(obj: &Bound<'_, PyAny>) -> Option<Expr> {
    if let Ok(e) = obj.cast::<PyExpr>() {
        return Some(e.get().e.clone());
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        return obj.extract::<i64>().ok().map(Expr::int);
    }
    None
}

fn tri(t: TriBool) -> Option<bool> {
    t.known()
}

fn bindings(d: &Bound<'_, PyDict>) -> PyResult<Bindings> {
    let mut b = Bindings::default();
    for (k, v) in d.iter() {
        let key: String = match k.cast::<PyExpr>() {
            Ok(e) => e.get().e.as_sym().map(str::to_string).ok_or_else(|| {
                crate::errors::raise(
                    d.py(),
                    crate::errors::invalid_argument_error(d.py()),
                    format!("binding key {} is not a symbol", e.get().e),
                    &[],
                )
            })?,
            Err(_) => k.extract()?,
        };
        b.insert(key, v.extract::<i64>()?);
    }
    Ok(b)
}

fn floordiv(a: &Expr, b: &Expr) -> Expr {
    Expr::floor(&Expr::div(a, b))
}

#[pymethods]
impl PyExpr {
    /// `SizeExpr(v=1)`: an integer constant or a copy of an expression.
    #[new]
    #[pyo3(signature = (value = None))]
    fn new(value: Option<&Bound<'_, PyAny>>) -> PyResult<PyExpr> {
        crate::errors::guard_res(|| match value {
            None => Ok(PyExpr { e: Expr::int(1) }),
            Some(v) => Ok(PyExpr { e: to_expr(v)? }),
        })
    }

    /// A symbol.
    #[staticmethod]
    fn symbol(name: &str) -> PyResult<PyExpr> {
        crate::errors::guard(|| PyExpr { e: Expr::sym(name) })
    }

    /// Parse GE's printed form.
    #[staticmethod]
    fn parse(text: &str) -> PyResult<PyExpr> {
        crate::errors::guard_res(|| {
            Ok(PyExpr {
                e: Expr::parse(text).map_err(AscError::from).py()?,
            })
        })
    }

    /// A rational constant `n / d`.
    #[staticmethod]
    fn rational(n: i64, d: i64) -> PyResult<PyExpr> {
        crate::errors::guard_res(|| {
            Expr::rational(n, d).map(|e| PyExpr { e }).ok_or_else(|| {
                crate::errors::py_err(AscError::InvalidArgument(
                    "rational with a zero denominator".into(),
                ))
            })
        })
    }

    /// The printed form (GE's `Str()`).
    #[getter]
    fn expression(&self) -> PyResult<String> {
        crate::errors::guard(|| self.e.to_string())
    }

    /// GE's `ExprType` code (0 integer, 2 rational, 100 symbol, 200 operation, 201 relation).
    #[getter]
    fn expr_type(&self) -> PyResult<u32> {
        crate::errors::guard(|| self.e.expr_type().code())
    }

    /// Whether this is a constant.
    fn is_const(&self) -> PyResult<bool> {
        crate::errors::guard(|| self.e.is_const())
    }

    /// Whether this is a symbol.
    fn is_symbol(&self) -> PyResult<bool> {
        crate::errors::guard(|| self.e.is_symbol())
    }

    /// The integer value of an integer constant, else `None`.
    fn const_value(&self) -> PyResult<Option<i64>> {
        crate::errors::guard(|| self.e.as_i64())
    }

    /// The symbol name, else `None`.
    #[getter]
    fn name(&self) -> PyResult<Option<String>> {
        crate::errors::guard(|| self.e.as_sym().map(str::to_string))
    }

    /// Names of the symbols in the expression.
    fn free_symbols(&self) -> PyResult<Vec<String>> {
        crate::errors::guard(|| self.e.free_symbols().into_iter().collect())
    }

    /// Direct arguments in canonical order.
    fn args(&self) -> PyResult<Vec<PyExpr>> {
        crate::errors::guard(|| self.e.args().into_iter().map(|e| PyExpr { e }).collect())
    }

    /// Exact value with symbol values from `bindings` (`{"s0": 4}` or `{s0: 4}`); an `int`, or
    /// a `fractions.Fraction` when the value is not an integer.
    #[pyo3(signature = (bindings = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        bindings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let b = match bindings {
                Some(d) => self::bindings(d)?,
                None => Bindings::default(),
            };
            let v = self.e.evaluate_rational(&b).map_err(AscError::from).py()?;
            if v.is_int() {
                let i = v.to_i64().ok_or_else(|| {
                    crate::errors::py_err(AscError::Eval(EvalError::Overflow(self.e.to_string())))
                })?;
                return Ok(i.into_pyobject(py)?.into_any().unbind());
            }
            let frac = py.import("fractions")?.getattr("Fraction")?;
            Ok(frac.call1((v.numer(), v.denom()))?.unbind())
        })
    }

    /// Substitute symbols: `{"s0": expr_or_int}` (keys may be symbols).
    fn subs(&self, mapping: &Bound<'_, PyDict>) -> PyResult<PyExpr> {
        crate::errors::guard_res(|| {
            let mut m = FxHashMap::default();
            for (k, v) in mapping.iter() {
                let key: String = match k.cast::<PyExpr>() {
                    Ok(e) => e
                        .get()
                        .e
                        .as_sym()
                        .map(str::to_string)
                        .ok_or_else(|| PyTypeError::new_err("subs keys must be symbols"))?,
                    Err(_) => k.extract()?,
                };
                m.insert(key, to_expr(&v)?);
            }
            Ok(PyExpr { e: self.e.subs(&m) })
        })
    }

    /// Replace a sub-expression.
    fn replace(&self, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        crate::errors::guard_res(|| {
            Ok(PyExpr {
                e: self.e.replace(&to_expr(old)?, &to_expr(new)?),
            })
        })
    }

    /// `self == other` statically: True, False or None (unknown).
    fn static_eq(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        crate::errors::guard_res(|| Ok(tri(Expr::static_eq(&self.e, &to_expr(other)?))))
    }

    /// `self != other` statically.
    fn static_ne(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        crate::errors::guard_res(|| Ok(tri(Expr::static_ne(&self.e, &to_expr(other)?))))
    }

    /// `self < other` statically.
    fn static_lt(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        crate::errors::guard_res(|| Ok(tri(Expr::static_lt(&self.e, &to_expr(other)?))))
    }

    /// `self <= other` statically.
    fn static_le(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        crate::errors::guard_res(|| Ok(tri(Expr::static_le(&self.e, &to_expr(other)?))))
    }

    /// `self > other` statically.
    fn static_gt(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        crate::errors::guard_res(|| Ok(tri(Expr::static_gt(&self.e, &to_expr(other)?))))
    }

    /// `self >= other` statically.
    fn static_ge(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        crate::errors::guard_res(|| Ok(tri(Expr::static_ge(&self.e, &to_expr(other)?))))
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let Some(o) = opt_expr(other) else {
                return Ok(py.NotImplemented());
            };
            let r = match op {
                CompareOp::Eq => {
                    return Ok(PyBool::new(py, self.e == o).to_owned().into_any().unbind())
                }
                CompareOp::Ne => {
                    return Ok(PyBool::new(py, self.e != o).to_owned().into_any().unbind())
                }
                CompareOp::Lt => Expr::static_lt(&self.e, &o),
                CompareOp::Le => Expr::static_le(&self.e, &o),
                CompareOp::Gt => Expr::static_gt(&self.e, &o),
                CompareOp::Ge => Expr::static_ge(&self.e, &o),
            };
            match r.known() {
            Some(b) => Ok(PyBool::new(py, b).to_owned().into_any().unbind()),
            None => Err(crate::errors::py_err(AscError::InvalidArgument(format!(
                "cannot decide {} {} {} without symbol values; use static_lt/static_le (None = unknown)",
                self.e,
                match op {
                    CompareOp::Lt => "<",
                    CompareOp::Le => "<=",
                    CompareOp::Gt => ">",
                    _ => ">=",
                },
                o
            )))),
        }
        })
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        crate::errors::guard_res(|| {
            // Integer constants hash like the int they equal.
            if let Some(v) = self.e.as_i64() {
                return v.into_pyobject(py)?.hash();
            }
            Ok(self.e.hash_value() as isize)
        })
    }

    fn __str__(&self) -> PyResult<String> {
        crate::errors::guard(|| self.e.to_string())
    }

    fn __repr__(&self) -> PyResult<String> {
        crate::errors::guard(|| format!("SizeExpr({})", self.e))
    }

    fn __int__(&self) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            self.e.as_i64().ok_or_else(|| {
                PyTypeError::new_err(format!("{} is not an integer constant", self.e))
            })
        })
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::add(&self.e, &o),
            })
        })
    }

    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::add(&o, &self.e),
            })
        })
    }

    fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::sub(&self.e, &o),
            })
        })
    }

    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::sub(&o, &self.e),
            })
        })
    }

    fn __mul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::mul(&self.e, &o),
            })
        })
    }

    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::mul(&o, &self.e),
            })
        })
    }

    fn __truediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::div(&self.e, &o),
            })
        })
    }

    fn __rtruediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::div(&o, &self.e),
            })
        })
    }

    fn __floordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: floordiv(&self.e, &o),
            })
        })
    }

    fn __rfloordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: floordiv(&o, &self.e),
            })
        })
    }

    fn __mod__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::modulo(&self.e, &o),
            })
        })
    }

    fn __rmod__(&self, other: &Bound<'_, PyAny>) -> PyResult<Option<PyExpr>> {
        crate::errors::guard(|| {
            opt_expr(other).map(|o| PyExpr {
                e: Expr::modulo(&o, &self.e),
            })
        })
    }

    fn __pow__(
        &self,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<PyExpr>> {
        crate::errors::guard_res(|| {
            Ok(opt_expr(other).map(|o| PyExpr {
                e: Expr::pow(&self.e, &o),
            }))
        })
    }

    fn __neg__(&self) -> PyResult<PyExpr> {
        crate::errors::guard(|| PyExpr {
            e: Expr::neg(&self.e),
        })
    }

    fn __pos__(&self) -> PyResult<PyExpr> {
        crate::errors::guard(|| PyExpr { e: self.e.clone() })
    }

    fn __abs__(&self) -> PyResult<PyExpr> {
        crate::errors::guard(|| PyExpr {
            e: Expr::abs(&self.e),
        })
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String,))> {
        crate::errors::guard_res(|| {
            let parse = py.import("ascendir.asc")?.getattr("parse_expr")?.unbind();
            Ok((parse, (self.e.to_string(),)))
        })
    }
}

fn exprs(args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<Vec<Expr>> {
    let v: PyResult<Vec<Expr>> = args.iter().map(|a| to_expr(&a)).collect();
    let v = v?;
    if v.is_empty() {
        return Err(crate::errors::py_err(AscError::InvalidArgument(
            "at least one argument is required".into(),
        )));
    }
    Ok(v)
}

/// `Max(a, b, ...)`.
#[pyfunction(name = "Max", signature = (*args))]
fn py_max(args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::max_of(exprs(args)?.iter()),
    })
}

/// `Min(a, b, ...)`.
#[pyfunction(name = "Min", signature = (*args))]
fn py_min(args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::min_of(exprs(args)?.iter()),
    })
}

/// `Mod(a, b)`.
#[pyfunction(name = "Mod")]
fn py_mod(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::modulo(&to_expr(a)?, &to_expr(b)?),
    })
}

/// `Ceiling(a)`.
#[pyfunction(name = "Ceiling")]
fn py_ceiling(a: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::ceiling(&to_expr(a)?),
    })
}

/// `Floor(a)`.
#[pyfunction(name = "Floor")]
fn py_floor(a: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::floor(&to_expr(a)?),
    })
}

/// `Abs(a)`.
#[pyfunction(name = "Abs")]
fn py_abs(a: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::abs(&to_expr(a)?),
    })
}

/// `Pow(a, b)`.
#[pyfunction(name = "Pow")]
fn py_pow(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::pow(&to_expr(a)?, &to_expr(b)?),
    })
}

/// `align(x, n) = Ceiling(x / n) * n`.
#[pyfunction(name = "align")]
fn py_align(x: &Bound<'_, PyAny>, n: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr {
        e: Expr::align(&to_expr(x)?, &to_expr(n)?),
    })
}

/// A relation `kind` in `"eq" | "ne" | "lt" | "le"`.
#[pyfunction(name = "relation")]
fn py_relation(kind: &str, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let r = match kind {
        "eq" => Rel::Eq,
        "ne" => Rel::Ne,
        "lt" => Rel::Lt,
        "le" => Rel::Le,
        _ => {
            return Err(crate::errors::py_err(AscError::InvalidArgument(format!(
                "unknown relation '{kind}'"
            ))))
        }
    };
    Ok(PyExpr {
        e: Expr::relation(r, &to_expr(a)?, &to_expr(b)?),
    })
}

/// Build `count` expressions `(s_i + k) * s_j / 2 ...` in a loop (benchmark helper that
/// measures the engine without Python call overhead).
#[pyfunction(name = "_bench_exprs")]
fn bench_exprs(count: usize) -> usize {
    let syms: Vec<Expr> = (0..8).map(|i| Expr::sym(&format!("s{i}"))).collect();
    let mut total = 0usize;
    for k in 0..count {
        let a = &syms[k % 8];
        let b = &syms[(k / 8) % 8];
        let e = Expr::ceiling(&Expr::div(
            &(&(a + (k as i64 % 17)) * b),
            &Expr::int(2 + (k as i64 % 5)),
        ));
        total += e.to_string().len();
    }
    total
}

/// Register the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_max, m)?)?;
    m.add_function(wrap_pyfunction!(py_min, m)?)?;
    m.add_function(wrap_pyfunction!(py_mod, m)?)?;
    m.add_function(wrap_pyfunction!(py_ceiling, m)?)?;
    m.add_function(wrap_pyfunction!(py_floor, m)?)?;
    m.add_function(wrap_pyfunction!(py_abs, m)?)?;
    m.add_function(wrap_pyfunction!(py_pow, m)?)?;
    m.add_function(wrap_pyfunction!(py_align, m)?)?;
    m.add_function(wrap_pyfunction!(py_relation, m)?)?;
    m.add_function(wrap_pyfunction!(bench_exprs, m)?)?;
    Ok(())
}
