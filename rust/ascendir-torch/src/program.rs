//! The flattened FX program the Python side hands over, and its decoding.
//!
//! Node `i` of an [`FxProgram`] has a kind, a name and a target string, and two slices of
//! integer streams:
//!
//! * `code[code_off[i]..code_off[i + 1]]` — the arguments, one tagged item after another:
//!   `0` None · `1, n` the value of FX node `n` · `2, v` int · `3, bits` float (`f64` bits) ·
//!   `4, b` bool · `5, s` string `strings[s]` · `6, k, items…` a list of `k` items ·
//!   `7, d` a dtype (`ge::DataType` number) · `8, s, item` keyword argument `strings[s]` ·
//!   `9, s` anything else, described by `strings[s]` (devices, layouts, memory formats).
//!   Keyword arguments follow the positional ones.
//! * `meta[meta_off[i]..meta_off[i + 1]]` — the node's values: a count, then per value a
//!   dtype (`ge::DataType` number; `-1` a SymInt, `-2` no tensor), a rank and the dims. A dim
//!   `d ≥ 0` is static, `d < 0` symbolic with expression `strings[-d - 1]`. A SymInt value has
//!   rank 1 and its value as the one dim.
//!
//! `info[3 i..3 i + 3]` are string indexes (`-1` none) of the node's module stack (entries
//! separated by `\n`), source location and schema.

use std::sync::Arc;

use ascendir_ir::{DataType, Format, TensorDesc};
use bytes::Bytes;
use smallvec::SmallVec;

use crate::{TorchError, TorchResult};

/// What an FX node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A user input (placeholder of kind USER_INPUT).
    Input,
    /// A parameter, buffer or lifted constant (placeholder with a payload).
    Const,
    /// A `call_function` node.
    Call,
    /// The `output` node (its first argument lists the user outputs).
    Output,
}

impl NodeKind {
    fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => NodeKind::Input,
            1 => NodeKind::Const,
            2 => NodeKind::Call,
            3 => NodeKind::Output,
            _ => return None,
        })
    }
}

/// A symbol of the program (`s0`), with its range and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The name (`s0`, `s1`, … in input order, then dim order).
    pub name: String,
    /// Least value.
    pub min: i64,
    /// Largest value (`-1`: unbounded).
    pub max: i64,
    /// Where it comes from (`input 0 dim 0`).
    pub source: String,
}

/// The flattened FX graph of an `ExportedProgram` (see the module docs for the encoding).
#[derive(Clone, Debug, Default)]
pub struct FxProgram {
    /// Graph name.
    pub name: String,
    /// Node kinds (`0` input, `1` const, `2` call, `3` output).
    pub kinds: Vec<u8>,
    /// FX node names.
    pub names: Vec<String>,
    /// Targets: `aten.convolution.default`, `_operator.getitem`, or the parameter name.
    pub targets: Vec<String>,
    /// The argument stream.
    pub code: Vec<i64>,
    /// Per-node offsets into `code` (`len + 1` entries).
    pub code_off: Vec<usize>,
    /// The metadata stream.
    pub meta: Vec<i64>,
    /// Per-node offsets into `meta` (`len + 1` entries).
    pub meta_off: Vec<usize>,
    /// Module stack, source and schema string indexes per node (3 per node).
    pub info: Vec<i64>,
    /// The string table.
    pub strings: Vec<String>,
    /// Payloads of `Const` nodes: `(node index, bytes)`.
    pub consts: Vec<(usize, Bytes)>,
    /// The symbols.
    pub symbols: Vec<Symbol>,
    /// Guards (range constraints, equalities).
    pub guards: Vec<String>,
}

/// A decoded argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<'p> {
    /// `None`.
    None,
    /// The value of FX node `n`.
    Node(usize),
    /// An int.
    Int(i64),
    /// A float.
    Float(f64),
    /// A bool.
    Bool(bool),
    /// A string.
    Str(&'p str),
    /// A list.
    List(Vec<Arg<'p>>),
    /// A dtype.
    Dtype(DataType),
    /// Something else (device, layout, memory format), as text.
    Other(&'p str),
}

impl Arg<'_> {
    /// The int of an `Int` or `Bool`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Arg::Int(v) => Some(*v),
            Arg::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The number of an `Int`, `Float` or `Bool`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Arg::Int(v) => Some(*v as f64),
            Arg::Float(f) => Some(*f),
            Arg::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// The ints of a list of ints (or one int, as a one-element list).
    pub fn as_ints(&self) -> Option<Vec<i64>> {
        match self {
            Arg::List(l) => l.iter().map(Arg::as_int).collect(),
            Arg::Int(v) => Some(vec![*v]),
            _ => None,
        }
    }
}

/// One value's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct OutMeta<'p> {
    /// `None` for a SymInt or a value that is no tensor.
    pub dtype: Option<DataType>,
    /// Whether this is a SymInt.
    pub symint: bool,
    /// Dims, `-1` where symbolic.
    pub dims: SmallVec<[i64; 6]>,
    /// The symbolic expression of each dim (`None` where static).
    pub sym: SmallVec<[Option<&'p str>; 6]>,
}

impl OutMeta<'_> {
    /// The GE descriptor (ND; `-1` for symbolic dims).
    pub fn desc(&self) -> TensorDesc {
        TensorDesc::new(
            &self.dims,
            self.dtype.unwrap_or(DataType::UNDEFINED),
            Format::ND,
        )
    }

    /// Whether dim `i` equals dim `j` of `other` (static values, or the same expression).
    pub fn same_dim(&self, i: usize, other: &OutMeta, j: usize) -> bool {
        match (self.dims.get(i), other.dims.get(j)) {
            (Some(&a), Some(&b)) if a >= 0 && b >= 0 => a == b,
            (Some(_), Some(_)) => {
                self.sym.get(i).cloned().flatten().is_some() && self.sym.get(i) == other.sym.get(j)
            }
            _ => false,
        }
    }

    /// Whether the two shapes are equal (dim by dim, as [`OutMeta::same_dim`]).
    pub fn same_shape(&self, other: &OutMeta<'_>) -> bool {
        self.dims.len() == other.dims.len()
            && (0..self.dims.len()).all(|i| self.same_dim(i, other, i))
    }

    /// Whether every dim is static.
    pub fn is_static(&self) -> bool {
        self.dims.iter().all(|&d| d >= 0)
    }
}

/// One decoded FX node (its strings borrowed from the program).
#[derive(Clone, Debug)]
pub struct FxNode<'p> {
    /// Kind.
    pub kind: NodeKind,
    /// FX name.
    pub name: &'p str,
    /// Target.
    pub target: &'p str,
    /// Positional arguments.
    pub args: Vec<Arg<'p>>,
    /// Keyword arguments.
    pub kwargs: Vec<(&'p str, Arg<'p>)>,
    /// Values (one per tensor output; a SymInt's value).
    pub outs: SmallVec<[OutMeta<'p>; 1]>,
    /// `nn_module_stack` entries, outermost first, separated by `\n`.
    pub modules: Option<&'p str>,
    /// Source location.
    pub source: Option<&'p str>,
    /// ATen schema.
    pub schema: Option<&'p str>,
}

impl<'p> FxNode<'p> {
    /// The innermost module entry.
    pub fn module(&self) -> Option<&'p str> {
        self.modules.and_then(|m| m.rsplit('\n').next())
    }

    /// Argument `i`, or keyword `key`.
    pub fn arg(&self, i: usize, key: &str) -> Option<&Arg<'p>> {
        self.args
            .get(i)
            .or_else(|| self.kwargs.iter().find(|(k, _)| *k == key).map(|(_, v)| v))
    }

    /// Keyword argument `key` only.
    pub fn kwarg(&self, key: &str) -> Option<&Arg<'p>> {
        self.kwargs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The first value's metadata.
    pub fn out(&self) -> Option<&OutMeta<'p>> {
        self.outs.first()
    }
}

const MAX_LIST_DEPTH: usize = 16;

struct Reader<'a> {
    p: &'a FxProgram,
    s: &'a [i64],
    pos: usize,
    node: usize,
}

impl<'a> Reader<'a> {
    fn bad(&self, what: &str) -> TorchError {
        TorchError::Malformed(format!(
            "node {} ('{}'): {what} at position {}",
            self.node,
            self.p.names.get(self.node).map_or("", String::as_str),
            self.pos
        ))
    }

    fn next(&mut self) -> TorchResult<i64> {
        let v = *self
            .s
            .get(self.pos)
            .ok_or_else(|| self.bad("stream ends early"))?;
        self.pos += 1;
        Ok(v)
    }

    fn string(&mut self) -> TorchResult<&'a str> {
        let i = self.next()?;
        let p: &'a FxProgram = self.p;
        usize::try_from(i)
            .ok()
            .and_then(|i| p.strings.get(i))
            .map(String::as_str)
            .ok_or_else(|| self.bad("bad string index"))
    }

    fn arg(&mut self, depth: usize) -> TorchResult<Arg<'a>> {
        if depth > MAX_LIST_DEPTH {
            return Err(self.bad("lists nested too deeply"));
        }
        Ok(match self.next()? {
            0 => Arg::None,
            1 => {
                let n = self.next()?;
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n < self.node)
                    .ok_or_else(|| self.bad("node reference is not an earlier node"))?;
                Arg::Node(n)
            }
            2 => Arg::Int(self.next()?),
            3 => Arg::Float(f64::from_bits(self.next()? as u64)),
            4 => Arg::Bool(self.next()? != 0),
            5 => Arg::Str(self.string()?),
            6 => {
                let k = usize::try_from(self.next()?).map_err(|_| self.bad("bad list length"))?;
                if k > self.s.len() {
                    return Err(self.bad("list longer than the stream"));
                }
                let mut items = Vec::with_capacity(k);
                for _ in 0..k {
                    items.push(self.arg(depth + 1)?);
                }
                Arg::List(items)
            }
            7 => {
                let d = self.next()?;
                Arg::Dtype(DataType::from_ge(d).ok_or_else(|| self.bad("bad dtype"))?)
            }
            9 => Arg::Other(self.string()?),
            _ => return Err(self.bad("bad tag")),
        })
    }
}

fn slice<'a>(s: &'a [i64], off: &[usize], i: usize) -> TorchResult<&'a [i64]> {
    let (a, b) = (off.get(i).copied(), off.get(i + 1).copied());
    match (a, b) {
        (Some(a), Some(b)) if a <= b && b <= s.len() => Ok(&s[a..b]),
        _ => Err(TorchError::Malformed(format!("bad offsets of node {i}"))),
    }
}

impl FxProgram {
    /// Number of FX nodes.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the program has no nodes.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// String `k` of node `i`'s info (0 module stack, 1 source, 2 schema).
    pub fn info_string(&self, i: usize, k: usize) -> Option<&str> {
        let idx = *self.info.get(3 * i + k)?;
        usize::try_from(idx)
            .ok()
            .and_then(|j| self.strings.get(j))
            .map(String::as_str)
    }

    /// The values of node `i`.
    pub fn outs(&self, i: usize) -> TorchResult<SmallVec<[OutMeta<'_>; 1]>> {
        let mut m = Reader {
            p: self,
            s: slice(&self.meta, &self.meta_off, i)?,
            pos: 0,
            node: i,
        };
        let mut outs = SmallVec::new();
        if !m.s.is_empty() {
            let n = usize::try_from(m.next()?).map_err(|_| m.bad("bad value count"))?;
            for _ in 0..n.min(m.s.len()) {
                let dt = m.next()?;
                let rank = usize::try_from(m.next()?).map_err(|_| m.bad("bad rank"))?;
                if rank > m.s.len() {
                    return Err(m.bad("rank longer than the stream"));
                }
                let mut dims = SmallVec::with_capacity(rank);
                let mut sym = SmallVec::with_capacity(rank);
                for _ in 0..rank {
                    let d = m.next()?;
                    if d >= 0 {
                        dims.push(d);
                        sym.push(None);
                    } else {
                        let s = usize::try_from(-(d + 1))
                            .ok()
                            .and_then(|j| self.strings.get(j))
                            .map(String::as_str)
                            .ok_or_else(|| m.bad("bad expression index"))?;
                        dims.push(-1);
                        sym.push(Some(s));
                    }
                }
                let dtype = if dt >= 0 {
                    Some(DataType::from_ge(dt).ok_or_else(|| m.bad("bad dtype"))?)
                } else {
                    None
                };
                outs.push(OutMeta {
                    dtype,
                    symint: dt == -1,
                    dims,
                    sym,
                });
            }
        }
        Ok(outs)
    }

    /// The first value of node `i`, if it has one.
    pub fn out0(&self, i: usize) -> Option<OutMeta<'_>> {
        self.outs(i).ok()?.into_iter().next()
    }

    /// Decode node `i`.
    pub fn node(&self, i: usize) -> TorchResult<FxNode<'_>> {
        let kind = self
            .kinds
            .get(i)
            .and_then(|&k| NodeKind::from_code(k))
            .ok_or_else(|| TorchError::Malformed(format!("bad kind of node {i}")))?;
        let mut r = Reader {
            p: self,
            s: slice(&self.code, &self.code_off, i)?,
            pos: 0,
            node: i,
        };
        let mut args = Vec::new();
        let mut kwargs = Vec::new();
        while r.pos < r.s.len() {
            if r.s[r.pos] == 8 {
                r.pos += 1;
                let key = r.string()?;
                kwargs.push((key, r.arg(0)?));
            } else {
                args.push(r.arg(0)?);
            }
        }
        let outs = self.outs(i)?;
        Ok(FxNode {
            kind,
            name: self.names.get(i).map_or("", String::as_str),
            target: self.targets.get(i).map_or("", String::as_str),
            args,
            kwargs,
            outs,
            modules: self.info_string(i, 0),
            source: self.info_string(i, 1),
            schema: self.info_string(i, 2),
        })
    }

    /// Check the arrays agree in length.
    pub fn check(&self) -> TorchResult<()> {
        let n = self.kinds.len();
        if self.names.len() != n
            || self.targets.len() != n
            || self.code_off.len() != n + 1
            || self.meta_off.len() != n + 1
            || self.info.len() != 3 * n
        {
            return Err(TorchError::Malformed(format!(
                "{n} nodes but {} names, {} targets, {} code offsets, {} meta offsets, {} info",
                self.names.len(),
                self.targets.len(),
                self.code_off.len(),
                self.meta_off.len(),
                self.info.len()
            )));
        }
        Ok(())
    }
}

/// A shared descriptor of `meta`.
pub(crate) fn desc_arc(meta: &OutMeta<'_>) -> Arc<TensorDesc> {
    Arc::new(meta.desc())
}
