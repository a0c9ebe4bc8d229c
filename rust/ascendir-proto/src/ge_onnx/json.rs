//! The structured form of a desc: GE writes each desc of an op with 20 or more inputs (or
//! outputs) as one JSON object (`input_desc_<i>`, `nlohmann::json::dump()`: keys sorted, no
//! blanks) of its members, its ext-meta fields and its attributes, each attribute as the
//! protobuf text (`DebugString`) of its `AttrDef`.

use std::collections::BTreeMap;

use bytes::Bytes;
use prost::Message;

use super::write::{dtype_name, DESC_MEMBER_KEYS};
use crate::error::{ProtoError, ProtoResult};
use crate::pb;
use crate::pb::attr_def::Value as V;

/// The number of descs from which GE writes them as JSON (`kTensorDescStructuredThresholds`).
pub(super) const JSON_DESC_THRESHOLD: usize = 20;

/// A JSON value of GE's desc object.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    Str(String),
    Int(i64),
    Ints(Vec<i64>),
}

/// GE's JSON text of a desc.
pub(super) fn desc_json(td: &pb::TensorDescriptor) -> ProtoResult<String> {
    let mut obj: BTreeMap<String, Json> = BTreeMap::new();
    let attr_s = |key: &str| match td.attr.get(key).and_then(|d| d.value.as_ref()) {
        Some(V::S(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    };
    let origin_shape = match td.attr.get("origin_shape").and_then(|d| d.value.as_ref()) {
        Some(V::List(l)) => l.i.clone(),
        _ => Vec::new(),
    };
    let mut put = |k: &str, v: Json| {
        obj.insert(k.to_string(), v);
    };
    put("dtype", Json::Str(dtype_name(td.dtype)));
    let origin_dtype = attr_s("origin_data_type").unwrap_or_else(|| "DT_UNDEFINED".into());
    put("origin_dtype", Json::Str(origin_dtype));
    let shape = td.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default();
    put("shape", Json::Ints(shape));
    put("origin_shape", Json::Ints(origin_shape));
    put("layout", Json::Str(td.layout.clone()));
    let origin_layout = attr_s("origin_format").unwrap_or_else(|| "ND".into());
    put("origin_layout", Json::Str(origin_layout));
    put("size", Json::Int(td.size));
    put("weight_size", Json::Int(td.weight_size));
    put("reuse_input", Json::Int(i64::from(td.reuse_input)));
    put("output_tensor", Json::Int(i64::from(td.output_tensor)));
    put("device_type", Json::Str(td.device_type.clone()));
    put("input_tensor", Json::Int(i64::from(td.input_tensor)));
    put("real_dim_cnt", Json::Int(td.real_dim_cnt));
    put("data_offset", Json::Int(td.data_offset));
    put("cmps_size", Json::Int(td.cmps_size));
    put("cmps_tab", Json::Str(td.cmps_tab.clone()));
    put("cmps_tab_offset", Json::Int(td.cmps_tab_offset));
    for (key, def) in &td.attr {
        if !DESC_MEMBER_KEYS.contains(&key.as_str()) {
            let text = crate::text::print_bytes(&def.encode_to_vec(), "AttrDef")?;
            obj.insert(key.clone(), Json::Str(text));
        }
    }
    let mut out = String::from("{");
    for (i, (k, v)) in obj.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        quote(k, &mut out);
        out.push(':');
        match v {
            Json::Str(s) => quote(s, &mut out),
            Json::Int(n) => out.push_str(&n.to_string()),
            Json::Ints(ns) => {
                let items: Vec<String> = ns.iter().map(i64::to_string).collect();
                out.push('[');
                out.push_str(&items.join(","));
                out.push(']');
            }
        }
    }
    out.push('}');
    Ok(out)
}

/// A JSON string as nlohmann's `dump()` escapes it.
fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The desc a JSON object describes (the members by name, every other key an attribute in
/// protobuf text). `at` names the attribute in errors.
pub(super) fn desc_from_json(text: &str, at: &str) -> ProtoResult<pb::TensorDescriptor> {
    let bad = |m: String| ProtoError::invalid(at, format!("JSON desc: {m}"));
    let obj = Parser {
        s: text.as_bytes(),
        pos: 0,
    }
    .object()
    .map_err(bad)?;
    let mut td = pb::TensorDescriptor::default();
    let s_attr = |v: String| pb::AttrDef {
        value: Some(V::S(Bytes::from(v))),
    };
    for (key, value) in obj {
        let wrong = || bad(format!("unexpected value for {key:?}"));
        match (key.as_str(), value) {
            ("dtype", Json::Str(s)) => td.dtype = super::read::parse_dtype(&s, at)?,
            ("origin_dtype", Json::Str(s)) => {
                super::read::parse_dtype(&s, at)?;
                if s != "DT_UNDEFINED" {
                    td.attr.insert(DESC_MEMBER_KEYS[0].into(), s_attr(s));
                }
            }
            ("shape", Json::Ints(d)) => td.shape = Some(pb::ShapeDef { dim: d }),
            ("origin_shape", Json::Ints(d)) => {
                if !d.is_empty() {
                    let list = pb::attr_def::ListValue {
                        i: d,
                        val_type: pb::attr_def::list_value::ListValueType::VtListInt as i32,
                        ..Default::default()
                    };
                    let def = pb::AttrDef {
                        value: Some(V::List(list)),
                    };
                    td.attr.insert(DESC_MEMBER_KEYS[1].into(), def);
                }
            }
            ("layout", Json::Str(s)) => td.layout = s,
            ("origin_layout", Json::Str(s)) => {
                if s != "ND" {
                    td.attr.insert(DESC_MEMBER_KEYS[2].into(), s_attr(s));
                }
            }
            ("size", Json::Int(n)) => td.size = n,
            ("weight_size", Json::Int(n)) => td.weight_size = n,
            ("reuse_input", Json::Int(n)) => td.reuse_input = n != 0,
            ("output_tensor", Json::Int(n)) => td.output_tensor = n != 0,
            ("device_type", Json::Str(s)) => td.device_type = s,
            ("input_tensor", Json::Int(n)) => td.input_tensor = n != 0,
            ("real_dim_cnt", Json::Int(n)) => td.real_dim_cnt = n,
            ("data_offset", Json::Int(n)) => td.data_offset = n,
            ("cmps_size", Json::Int(n)) => td.cmps_size = n,
            ("cmps_tab", Json::Str(s)) => td.cmps_tab = s,
            ("cmps_tab_offset", Json::Int(n)) => td.cmps_tab_offset = n,
            (
                "dtype" | "origin_dtype" | "shape" | "origin_shape" | "layout" | "origin_layout"
                | "size" | "weight_size" | "reuse_input" | "output_tensor" | "device_type"
                | "input_tensor" | "real_dim_cnt" | "data_offset" | "cmps_size" | "cmps_tab"
                | "cmps_tab_offset",
                _,
            ) => return Err(wrong()),
            // GE's attribute groups (their `DebugString`): kept as the string they are.
            ("attr_groups", Json::Str(s)) => {
                td.attr.insert(key, s_attr(s));
            }
            (_, Json::Str(s)) => {
                let raw = crate::text::parse_to_bytes(&s, "AttrDef")
                    .map_err(|e| bad(format!("attribute {key:?}: {e}")))?;
                let def = pb::AttrDef::decode(raw.as_slice())
                    .map_err(|e| bad(format!("attribute {key:?}: {e}")))?;
                td.attr.insert(key, def);
            }
            _ => return Err(wrong()),
        }
    }
    Ok(td)
}

/// A parser of the JSON GE writes for a desc: one object of strings, integers and integer
/// arrays.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn blank(&mut self) {
        while self.s.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.blank();
        let hit = self.s.get(self.pos) == Some(&c);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "expected '{}' at character {}",
                c as char, self.pos
            ))
        }
    }

    fn object(mut self) -> Result<Vec<(String, Json)>, String> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        if !self.eat(b'}') {
            loop {
                let key = self.string()?;
                self.expect(b':')?;
                out.push((key, self.value()?));
                if self.eat(b'}') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        self.blank();
        if self.pos != self.s.len() {
            return Err(format!("text after the object at character {}", self.pos));
        }
        Ok(out)
    }

    fn value(&mut self) -> Result<Json, String> {
        self.blank();
        match self.s.get(self.pos) {
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'[') => {
                self.pos += 1;
                let mut ints = Vec::new();
                if !self.eat(b']') {
                    loop {
                        ints.push(self.int()?);
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(Json::Ints(ints))
            }
            _ => Ok(Json::Int(self.int()?)),
        }
    }

    fn int(&mut self) -> Result<i64, String> {
        self.blank();
        let start = self.pos;
        if self.s.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("expected an integer at character {start}"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err("unterminated string".into());
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.s.get(self.pos).copied();
                    self.pos += 1;
                    let ch = match e {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode()?,
                        _ => return Err(format!("bad escape at character {}", self.pos - 1)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| "a string that is not UTF-8".to_string())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| format!("bad \\u escape at character {}", self.pos))?;
        self.pos += 4;
        Ok(digits)
    }

    fn unicode(&mut self) -> Result<char, String> {
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !(self.eat(b'\\') && self.eat(b'u')) {
                return Err("a lone surrogate in a \\u escape".into());
            }
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Err("a lone surrogate in a \\u escape".into());
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        char::from_u32(code).ok_or_else(|| "a lone surrogate in a \\u escape".into())
    }
}
