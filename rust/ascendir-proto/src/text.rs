//! Protobuf text format of `ModelDef` (GE's `ge_proto_*.txt` dumps), read and written directly
//! between text and the binary wire format, driven by the message descriptors.
//!
//! The printer follows the C++ `TextFormat` printer GE uses: fields in wire (= field number)
//! order, two-space indentation, `name {` blocks for messages and map entries, `name: value` for
//! scalars, enum names, C-escaped strings (octal for non-printable and non-ASCII bytes) and
//! floats printed with `%.6g` (or `%.9g` when 6 digits do not round-trip).
//! The parser accepts the full text syntax used by protobuf (optional `:` before messages,
//! `<...>` blocks, `[a, b]` lists, adjacent string concatenation, `#` comments, numeric field
//! names for unknown fields).

use prost::Message;
use prost_reflect::{Kind, MessageDescriptor};

use crate::error::{ProtoError, ProtoResult};
use crate::pb;
use crate::wire::{locate, message_descriptor};

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

/// Print a binary message of type `ge.proto.<name>` as text.
pub fn print_bytes(data: &[u8], name: &str) -> ProtoResult<String> {
    let desc = message_descriptor(name)?;
    let mut out = String::with_capacity(data.len() * 3);
    if let Err(e) = print_message(data, &desc, 0, &mut out) {
        return Err(locate(data, name).unwrap_or(e));
    }
    Ok(out)
}

/// Print a `ModelDef` as text.
pub fn print_model_def(m: &pb::ModelDef) -> ProtoResult<String> {
    print_bytes(&m.encode_to_vec(), "ModelDef")
}

fn bad(offset: usize, msg: &str) -> ProtoError {
    ProtoError::Wire {
        offset,
        path: String::new(),
        message: msg.to_string(),
    }
}

fn varint(data: &[u8], pos: &mut usize) -> ProtoResult<u64> {
    let mut v: u64 = 0;
    for shift in 0..10 {
        let b = *data
            .get(*pos)
            .ok_or_else(|| bad(*pos, "truncated varint"))?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << (7 * shift);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(bad(*pos, "overlong varint"))
}

fn indent(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push_str("  ");
    }
}

fn print_message(
    data: &[u8],
    desc: &MessageDescriptor,
    depth: usize,
    out: &mut String,
) -> ProtoResult<()> {
    if depth > 100 {
        return Err(bad(0, "messages nested too deeply"));
    }
    let mut pos = 0;
    while pos < data.len() {
        let key = varint(data, &mut pos)?;
        let wt = (key & 7) as u8;
        let number = (key >> 3) as u32;
        let field = desc.get_field(number);
        match (wt, field) {
            (2, Some(f)) => {
                let len = varint(data, &mut pos)? as usize;
                if len > data.len() - pos {
                    return Err(bad(pos, "length past the end"));
                }
                let body = &data[pos..pos + len];
                pos += len;
                match f.kind() {
                    Kind::Message(m) if f.is_map() => {
                        // Gather the whole run of entries and print them sorted by key, as
                        // the C++ printer does (so any writer's entry order prints the same).
                        let mut entries: Vec<&[u8]> = vec![body];
                        loop {
                            let mut p = pos;
                            let Ok(k) = varint(data, &mut p) else { break };
                            if k != key {
                                break;
                            }
                            let l = varint(data, &mut p)? as usize;
                            if l > data.len() - p {
                                return Err(bad(p, "length past the end"));
                            }
                            entries.push(&data[p..p + l]);
                            pos = p + l;
                        }
                        let int_key = m.map_entry_key_field().kind() != Kind::String;
                        entries.sort_by_cached_key(|e| map_key(e, int_key));
                        for e in entries {
                            indent(out, depth);
                            out.push_str(f.name());
                            out.push_str(" {\n");
                            print_message(e, &m, depth + 1, out)?;
                            indent(out, depth);
                            out.push_str("}\n");
                        }
                    }
                    Kind::Message(m) => {
                        indent(out, depth);
                        out.push_str(f.name());
                        out.push_str(" {\n");
                        print_message(body, &m, depth + 1, out)?;
                        indent(out, depth);
                        out.push_str("}\n");
                    }
                    Kind::String | Kind::Bytes => {
                        indent(out, depth);
                        out.push_str(f.name());
                        out.push_str(": \"");
                        escape(body, out);
                        out.push_str("\"\n");
                    }
                    kind => {
                        // Packed repeated scalars.
                        let mut p = 0;
                        while p < body.len() {
                            indent(out, depth);
                            out.push_str(f.name());
                            out.push_str(": ");
                            scalar(body, &mut p, &kind, out)?;
                            out.push('\n');
                        }
                    }
                }
            }
            (0 | 1 | 5, Some(f)) => {
                let kind = f.kind();
                let expected = match kind {
                    Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 1,
                    Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 5,
                    Kind::Message(_) | Kind::String | Kind::Bytes => 2,
                    _ => 0,
                };
                if expected != wt {
                    return Err(bad(pos, "wrong wire type"));
                }
                indent(out, depth);
                out.push_str(f.name());
                out.push_str(": ");
                scalar(data, &mut pos, &kind, out)?;
                out.push('\n');
            }
            (0, None) => {
                let v = varint(data, &mut pos)?;
                indent(out, depth);
                out.push_str(&format!("{number}: {v}\n"));
            }
            (1, None) | (5, None) => {
                let n = if wt == 1 { 8 } else { 4 };
                if data.len() - pos < n {
                    return Err(bad(pos, "truncated fixed value"));
                }
                let mut v = 0u64;
                for (i, b) in data[pos..pos + n].iter().enumerate() {
                    v |= u64::from(*b) << (8 * i);
                }
                pos += n;
                indent(out, depth);
                out.push_str(&format!("{number}: 0x{v:x}\n"));
            }
            (2, None) => {
                let len = varint(data, &mut pos)? as usize;
                if len > data.len() - pos {
                    return Err(bad(pos, "length past the end"));
                }
                indent(out, depth);
                out.push_str(&format!("{number}: \""));
                escape(&data[pos..pos + len], out);
                out.push_str("\"\n");
                pos += len;
            }
            _ => return Err(bad(pos, "invalid wire type")),
        }
    }
    Ok(())
}

/// Sort key of a map entry: its key field (number 1), as bytes or as a signed integer.
fn map_key(entry: &[u8], int_key: bool) -> (i64, Vec<u8>) {
    let mut pos = 0;
    let mut found: (i64, Vec<u8>) = (0, Vec::new());
    while pos < entry.len() {
        let Ok(k) = varint(entry, &mut pos) else {
            break;
        };
        let wt = k & 7;
        let number = k >> 3;
        let value: Option<(i64, Vec<u8>)> = match wt {
            0 => varint(entry, &mut pos).ok().map(|v| (v as i64, Vec::new())),
            2 => {
                let Ok(l) = varint(entry, &mut pos) else {
                    break;
                };
                let l = l as usize;
                if l > entry.len() - pos {
                    break;
                }
                let v = entry[pos..pos + l].to_vec();
                pos += l;
                Some((0, v))
            }
            1 => {
                pos += 8;
                None
            }
            5 => {
                pos += 4;
                None
            }
            _ => break,
        };
        if number == 1 {
            if let Some(v) = value {
                found = if int_key { (v.0, Vec::new()) } else { (0, v.1) };
            }
        }
    }
    found
}

fn scalar(data: &[u8], pos: &mut usize, kind: &Kind, out: &mut String) -> ProtoResult<()> {
    use std::fmt::Write;
    let fixed = |pos: &mut usize, n: usize| -> ProtoResult<u64> {
        if data.len() - *pos < n {
            return Err(bad(*pos, "truncated fixed value"));
        }
        let mut v = 0u64;
        for (i, b) in data[*pos..*pos + n].iter().enumerate() {
            v |= u64::from(*b) << (8 * i);
        }
        *pos += n;
        Ok(v)
    };
    let _ = match kind {
        Kind::Float => {
            let v = f32::from_bits(fixed(pos, 4)? as u32);
            out.push_str(&format_float(f64::from(v), true));
            Ok(())
        }
        Kind::Double => {
            let v = f64::from_bits(fixed(pos, 8)?);
            out.push_str(&format_float(v, false));
            Ok(())
        }
        Kind::Fixed32 => write!(out, "{}", fixed(pos, 4)? as u32),
        Kind::Sfixed32 => write!(out, "{}", fixed(pos, 4)? as u32 as i32),
        Kind::Fixed64 => write!(out, "{}", fixed(pos, 8)?),
        Kind::Sfixed64 => write!(out, "{}", fixed(pos, 8)? as i64),
        Kind::Bool => {
            out.push_str(if varint(data, pos)? != 0 {
                "true"
            } else {
                "false"
            });
            Ok(())
        }
        Kind::Int32 => write!(out, "{}", varint(data, pos)? as i64 as i32),
        Kind::Int64 => write!(out, "{}", varint(data, pos)? as i64),
        Kind::Uint32 => write!(out, "{}", varint(data, pos)? as u32),
        Kind::Uint64 => write!(out, "{}", varint(data, pos)?),
        Kind::Sint32 => {
            let v = varint(data, pos)? as u32;
            write!(out, "{}", ((v >> 1) as i32) ^ -((v & 1) as i32))
        }
        Kind::Sint64 => {
            let v = varint(data, pos)?;
            write!(out, "{}", ((v >> 1) as i64) ^ -((v & 1) as i64))
        }
        Kind::Enum(e) => {
            let v = varint(data, pos)? as i64 as i32;
            match e.get_value(v) {
                Some(ev) => {
                    out.push_str(ev.name());
                    Ok(())
                }
                None => write!(out, "{v}"),
            }
        }
        Kind::String | Kind::Bytes | Kind::Message(_) => return Err(bad(*pos, "wrong wire type")),
    };
    Ok(())
}

/// C++ `SimpleFtoa` / `SimpleDtoa`: `%.6g` (`%.15g` for doubles), or `%.9g` (`%.17g`) when
/// that does not read back as the same value.
pub fn format_float(v: f64, single: bool) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "inf".to_string()
        } else {
            "-inf".to_string()
        };
    }
    let (short, long) = if single { (6, 9) } else { (15, 17) };
    let s = format_g(v, short);
    let same = if single {
        s.parse::<f32>().ok() == Some(v as f32)
    } else {
        s.parse::<f64>().ok() == Some(v)
    };
    if same {
        s
    } else {
        format_g(v, long)
    }
}

/// C's `%.{p}g`.
fn format_g(v: f64, p: usize) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".to_string()
        } else {
            "0".to_string()
        };
    }
    let e = format!("{:.*e}", p - 1, v);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if x < -4 || x >= p as i32 {
        let mant = strip_zeros(mant);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", x.abs())
    } else {
        let decimals = (p as i32 - 1 - x).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, v)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn escape(bytes: &[u8], out: &mut String) {
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                out.push('\\');
                out.push((b'0' + (b >> 6)) as char);
                out.push((b'0' + ((b >> 3) & 7)) as char);
                out.push((b'0' + (b & 7)) as char);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/// Parse text of message `ge.proto.<name>` into its binary encoding.
pub fn parse_to_bytes(text: &str, name: &str) -> ProtoResult<Vec<u8>> {
    let desc = message_descriptor(name)?;
    let mut out = Vec::new();
    out.try_reserve(text.len())
        .map_err(|_| ProtoError::OutOfMemory {
            needed: text.len(),
            what: format!("parse {} bytes of text", text.len()),
        })?;
    let mut p = Parser {
        src: text.as_bytes(),
        pos: 0,
        out,
    };
    p.message(&desc, None, 0)?;
    Ok(p.out)
}

/// Parse a text-format `ModelDef`.
pub fn parse_model_def(text: &str) -> ProtoResult<pb::ModelDef> {
    let bytes = parse_to_bytes(text, "ModelDef")?;
    crate::wire::parse_model_def_bytes(bytes::Bytes::from(bytes))
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    out: Vec<u8>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

impl Parser<'_> {
    fn err(&self, at: usize, message: impl Into<String>) -> ProtoError {
        let at = at.min(self.src.len());
        let before = &self.src[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = at
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        ProtoError::Text {
            line,
            column: col,
            offset: at,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.src.len() {
            match self.src[self.pos] {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'#' => {
                    while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.src.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> ProtoResult<&str> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.src.len() {
            let c = self.src[self.pos];
            if c.is_ascii_alphanumeric() || c == b'_' || (c == b'.' && self.pos > start) {
                self.pos += 1;
            } else {
                break;
            }
        }
        if start == self.pos {
            return Err(self.err(start, "expected a field name"));
        }
        // The slice is ASCII by construction.
        std::str::from_utf8(&self.src[start..self.pos])
            .map_err(|_| self.err(start, "bad identifier"))
    }

    /// Parse fields until `close` (or the end of input at depth 0).
    fn message(
        &mut self,
        desc: &MessageDescriptor,
        close: Option<u8>,
        depth: usize,
    ) -> ProtoResult<()> {
        if depth > 100 {
            return Err(self.err(self.pos, "messages nested too deeply"));
        }
        loop {
            match (self.peek(), close) {
                (None, None) => return Ok(()),
                (None, Some(c)) => {
                    return Err(self.err(
                        self.pos,
                        format!("expected '{}' before the end of input", c as char),
                    ))
                }
                (Some(c), Some(cl)) if c == cl => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {}
            }
            let name_at = self.pos;
            let name = self.ident()?.to_string();
            let field = match desc.get_field_by_name(&name) {
                Some(f) => Some(f),
                None => match name.parse::<u32>() {
                    Ok(n) if n > 0 && n <= 0x1FFF_FFFF => desc.get_field(n).or(None),
                    _ => {
                        return Err(self.err(
                            name_at,
                            format!("message {} has no field '{name}'", desc.name()),
                        ))
                    }
                },
            };
            let number = match (&field, name.parse::<u32>()) {
                (Some(f), _) => f.number(),
                (None, Ok(n)) => n,
                (None, Err(_)) => {
                    return Err(self.err(
                        name_at,
                        format!("message {} has no field '{name}'", desc.name()),
                    ))
                }
            };
            let colon = self.eat(b':');
            let kind = field.as_ref().map(|f| f.kind());
            let is_list = self.eat(b'[');
            if is_list {
                if self.eat(b']') {
                    continue;
                }
                loop {
                    self.value(number, kind.as_ref(), colon, depth)?;
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b']') {
                        break;
                    }
                    return Err(self.err(self.pos, "expected ',' or ']' in a list"));
                }
            } else {
                self.value(number, kind.as_ref(), colon, depth)?;
            }
            // Optional field separators.
            if !self.eat(b';') {
                self.eat(b',');
            }
        }
    }

    fn value(
        &mut self,
        number: u32,
        kind: Option<&Kind>,
        colon: bool,
        depth: usize,
    ) -> ProtoResult<()> {
        let at = self.pos;
        match kind {
            Some(Kind::Message(m)) => {
                let close = if self.eat(b'{') {
                    b'}'
                } else if self.eat(b'<') {
                    b'>'
                } else {
                    return Err(self.err(
                        self.pos,
                        format!("expected '{{' to start message {}", m.name()),
                    ));
                };
                put_varint(&mut self.out, (u64::from(number) << 3) | 2);
                let start = self.out.len();
                self.message(m, Some(close), depth + 1)?;
                let len = self.out.len() - start;
                let n = varint_len(len as u64);
                let mut prefix = Vec::with_capacity(n);
                put_varint(&mut prefix, len as u64);
                self.out.splice(start..start, prefix);
                Ok(())
            }
            _ if !colon => Err(self.err(at, "expected ':' after a scalar field name")),
            Some(Kind::String) | Some(Kind::Bytes) | None
                if matches!(self.peek(), Some(b'"' | b'\'')) =>
            {
                let s = self.string()?;
                if matches!(kind, Some(Kind::String)) && std::str::from_utf8(&s).is_err() {
                    return Err(self.err(at, "string field is not valid UTF-8"));
                }
                put_varint(&mut self.out, (u64::from(number) << 3) | 2);
                put_varint(&mut self.out, s.len() as u64);
                self.out.extend_from_slice(&s);
                Ok(())
            }
            Some(Kind::String) | Some(Kind::Bytes) => Err(self.err(at, "expected a quoted string")),
            Some(Kind::Enum(e)) => {
                let tok = self.token()?;
                let v = match e.get_value_by_name(&tok) {
                    Some(v) => v.number(),
                    None => tok.parse::<i32>().map_err(|_| {
                        self.err(at, format!("unknown value '{tok}' of enum {}", e.name()))
                    })?,
                };
                put_varint(&mut self.out, u64::from(number) << 3);
                put_varint(&mut self.out, v as i64 as u64);
                Ok(())
            }
            Some(Kind::Float) | Some(Kind::Double) => {
                let tok = self.token()?;
                let v =
                    parse_float(&tok).ok_or_else(|| self.err(at, format!("bad number '{tok}'")))?;
                if matches!(kind, Some(Kind::Float)) {
                    put_varint(&mut self.out, (u64::from(number) << 3) | 5);
                    self.out
                        .extend_from_slice(&(v as f32).to_bits().to_le_bytes());
                } else {
                    put_varint(&mut self.out, (u64::from(number) << 3) | 1);
                    self.out.extend_from_slice(&v.to_bits().to_le_bytes());
                }
                Ok(())
            }
            Some(Kind::Bool) => {
                let tok = self.token()?;
                let v = match tok.as_str() {
                    "true" | "True" | "t" | "1" => 1,
                    "false" | "False" | "f" | "0" => 0,
                    _ => return Err(self.err(at, format!("bad bool '{tok}'"))),
                };
                put_varint(&mut self.out, u64::from(number) << 3);
                self.out.push(v);
                Ok(())
            }
            Some(k) => {
                let tok = self.token()?;
                let v =
                    parse_int(&tok).ok_or_else(|| self.err(at, format!("bad integer '{tok}'")))?;
                let (ok, wire): (bool, u64) = match k {
                    Kind::Int32 | Kind::Sfixed32 => (i32::try_from(v).is_ok(), v as i64 as u64),
                    Kind::Sint32 => (i32::try_from(v).is_ok(), {
                        let x = v as i32;
                        u64::from(((x << 1) ^ (x >> 31)) as u32)
                    }),
                    Kind::Int64 | Kind::Sfixed64 => (i64::try_from(v).is_ok(), v as i64 as u64),
                    Kind::Sint64 => (i64::try_from(v).is_ok(), {
                        let x = v as i64;
                        ((x << 1) ^ (x >> 63)) as u64
                    }),
                    Kind::Uint32 | Kind::Fixed32 => (u32::try_from(v).is_ok(), v as u64),
                    _ => (u64::try_from(v).is_ok(), v as u64),
                };
                if !ok {
                    return Err(self.err(at, format!("integer '{tok}' is out of range")));
                }
                match k {
                    Kind::Fixed32 | Kind::Sfixed32 => {
                        put_varint(&mut self.out, (u64::from(number) << 3) | 5);
                        self.out.extend_from_slice(&(wire as u32).to_le_bytes());
                    }
                    Kind::Fixed64 | Kind::Sfixed64 => {
                        put_varint(&mut self.out, (u64::from(number) << 3) | 1);
                        self.out.extend_from_slice(&wire.to_le_bytes());
                    }
                    _ => {
                        put_varint(&mut self.out, u64::from(number) << 3);
                        put_varint(&mut self.out, wire);
                    }
                }
                Ok(())
            }
            None => {
                // Unknown field by number: an integer becomes a varint.
                let tok = self.token()?;
                let v = parse_int(&tok).ok_or_else(|| {
                    self.err(at, format!("bad value '{tok}' of unknown field {number}"))
                })?;
                put_varint(&mut self.out, u64::from(number) << 3);
                put_varint(&mut self.out, v as u64);
                Ok(())
            }
        }
    }

    /// A bare scalar token (number, identifier).
    fn token(&mut self) -> ProtoResult<String> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.src.len() {
            let c = self.src[self.pos];
            if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'.') {
                self.pos += 1;
            } else {
                break;
            }
        }
        if start == self.pos {
            return Err(self.err(start, "expected a value"));
        }
        Ok(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned())
    }

    /// One or more adjacent quoted strings, unescaped.
    fn string(&mut self) -> ProtoResult<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(q @ (b'"' | b'\'')) = self.peek() {
            let open = self.pos;
            self.pos += 1;
            loop {
                let Some(&c) = self.src.get(self.pos) else {
                    return Err(self.err(open, "unterminated string"));
                };
                self.pos += 1;
                if c == q {
                    break;
                }
                if c == b'\n' {
                    return Err(self.err(open, "unterminated string (newline inside)"));
                }
                if c != b'\\' {
                    out.push(c);
                    continue;
                }
                let esc_at = self.pos - 1;
                let Some(&e) = self.src.get(self.pos) else {
                    return Err(self.err(esc_at, "unterminated escape"));
                };
                self.pos += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'?' => out.push(b'?'),
                    b'"' | b'\'' | b'\\' => out.push(e),
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        for _ in 0..2 {
                            match self.src.get(self.pos) {
                                Some(&d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    self.pos += 1;
                                }
                                _ => break,
                            }
                        }
                        if v > 255 {
                            return Err(self.err(esc_at, "octal escape out of range"));
                        }
                        out.push(v as u8);
                    }
                    b'x' | b'X' => {
                        let mut v = 0u32;
                        let mut n = 0;
                        while n < 2 {
                            match self
                                .src
                                .get(self.pos)
                                .and_then(|d| (*d as char).to_digit(16))
                            {
                                Some(d) => {
                                    v = v * 16 + d;
                                    self.pos += 1;
                                    n += 1;
                                }
                                None => break,
                            }
                        }
                        if n == 0 {
                            return Err(self.err(esc_at, "bad hex escape"));
                        }
                        out.push(v as u8);
                    }
                    _ => return Err(self.err(esc_at, format!("unknown escape '\\{}'", e as char))),
                }
            }
        }
        Ok(out)
    }
}

fn parse_int(tok: &str) -> Option<i128> {
    let (neg, body) = match tok.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, tok),
    };
    // Digits only after the one optional '-': `from_str_radix` and `parse` would take a second
    // sign ("--1", "0-5").
    let digits = |t: &str, radix: u32| !t.is_empty() && t.chars().all(|c| c.is_digit(radix));
    let v: i128 = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if !digits(h, 16) {
            return None;
        }
        i128::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        if !digits(&body[1..], 8) {
            return None;
        }
        i128::from_str_radix(&body[1..], 8).ok()?
    } else {
        if !digits(body, 10) {
            return None;
        }
        body.parse::<i128>().ok()?
    };
    if v > i128::from(u64::MAX) {
        return None;
    }
    Some(if neg { -v } else { v })
}

fn parse_float(tok: &str) -> Option<f64> {
    let t = tok.trim_end_matches(['f', 'F']);
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "inf" | "infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        "nan" | "-nan" => return Some(f64::NAN),
        _ => {}
    }
    if let Ok(v) = t.parse::<f64>() {
        return Some(v);
    }
    parse_int(t).map(|v| v as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_cpp() {
        assert_eq!(format_float(1e-05_f32 as f64, true), "1e-05");
        assert_eq!(format_float(0.0, true), "0");
        assert_eq!(format_float(1.0, true), "1");
        assert_eq!(format_float(0.1_f32 as f64, true), "0.1");
        assert_eq!(format_float(123456789.0_f32 as f64, true), "123456792");
        assert_eq!(format_float(1.5e20_f32 as f64, true), "1.5e+20");
        assert_eq!(format_float(f64::NAN, true), "nan");
        assert_eq!(format_float(0.3333333432674408, true), "0.333333343");
    }

    #[test]
    fn integers_take_one_sign_and_digits_only() {
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("0x1f"), Some(31));
        assert_eq!(parse_int("017"), Some(15));
        assert_eq!(parse_int("-0x10"), Some(-16));
        for bad in [
            "--1", "0-5", "+5", "-", "0x", "0x-1", "08", "1-2", "0x+f", "-+1",
        ] {
            assert_eq!(parse_int(bad), None, "{bad}");
        }
        assert_eq!(parse_float("--1"), None);
    }

    #[test]
    fn escapes_round_trip() {
        let raw = b"a\"b\\c\n\x01\xff'".to_vec();
        let mut s = String::new();
        escape(&raw, &mut s);
        let text = format!("name: \"{s}\"");
        let bytes = parse_to_bytes(&text, "GraphDef").unwrap_err();
        // Non-UTF-8 is rejected for a string field; a bytes field keeps it.
        let _ = bytes;
        let text = format!("s: \"{s}\" ");
        let data = parse_to_bytes(&text, "AttrDef").unwrap();
        let def = pb::AttrDef::decode(&data[..]).unwrap();
        match def.value {
            Some(pb::attr_def::Value::S(b)) => assert_eq!(&b[..], &raw[..]),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse_to_bytes("name: \"g\"\n  bogus: 1\n", "GraphDef").unwrap_err();
        match e {
            ProtoError::Text { line, column, .. } => assert_eq!((line, column), (2, 3)),
            other => panic!("unexpected {other:?}"),
        }
        assert!(parse_to_bytes("op {", "GraphDef").is_err());
        assert!(parse_to_bytes("name: \"x", "GraphDef").is_err());
    }
}
