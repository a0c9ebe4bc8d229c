//! Parsing: the full protobuf text syntax into the binary wire encoding, with errors naming the
//! line and column.

use prost_reflect::{Kind, MessageDescriptor};

use crate::error::{ProtoError, ProtoResult};
use crate::pb;
use crate::wire::message_descriptor;

/// Parse text of message `ge.proto.<name>` into its binary encoding.
pub fn parse_to_bytes(text: &str, name: &str) -> ProtoResult<Vec<u8>> {
    parse_with(text, &message_descriptor(name)?)
}

/// Parse text of the message `desc` describes (of any descriptor pool) into its binary
/// encoding.
pub fn parse_with(text: &str, desc: &MessageDescriptor) -> ProtoResult<Vec<u8>> {
    let what = format!("parse {} bytes of text", text.len());
    // The output is never longer than the text; the caller copies it once more.
    crate::error::reserve_probe(text.len(), text.len(), &what)?;
    let mut out = Vec::new();
    out.try_reserve(text.len())
        .map_err(|_| ProtoError::OutOfMemory {
            needed: text.len(),
            what,
        })?;
    let mut p = Parser {
        src: text.as_bytes(),
        pos: 0,
        out,
    };
    p.message(desc, None, 0)?;
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

fn put_varint(out: &mut Vec<u8>, v: u64) {
    ascendir_wire::encode_varint(v, out);
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
        if depth > super::MAX_TEXT_DEPTH {
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
                let n = ascendir_wire::encoded_len(len as u64);
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

pub(super) fn parse_int(tok: &str) -> Option<i128> {
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

pub(super) fn parse_float(tok: &str) -> Option<f64> {
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
