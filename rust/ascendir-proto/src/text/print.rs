//! Printing: a binary message as protobuf text the way the C++ `TextFormat` printer GE uses
//! writes it (field order, map entries sorted by key, C escapes, `%.6g` / `%.9g` floats).

use prost::Message;
use prost_reflect::{Kind, MessageDescriptor};

use crate::error::{ProtoError, ProtoResult};
use crate::pb;
use crate::wire::{locate, message_descriptor};

/// Print a binary message of type `ge.proto.<name>` as text.
pub fn print_bytes(data: &[u8], name: &str) -> ProtoResult<String> {
    let desc = message_descriptor(name)?;
    let mut out = String::with_capacity(data.len() * 3);
    if let Err(e) = print_message(data, &desc, 0, &mut out) {
        return Err(locate(data, name).unwrap_or(e));
    }
    Ok(out)
}

/// Print a binary message of the type `desc` describes (of any descriptor pool) as text; a
/// malformed encoding is a [`ProtoError::Wire`] error.
pub fn print_with(data: &[u8], desc: &MessageDescriptor) -> ProtoResult<String> {
    let mut out = String::with_capacity(data.len() * 3);
    print_message(data, desc, 0, &mut out)?;
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
    let at = *pos;
    ascendir_wire::varint(data, pos).ok_or_else(|| bad(at, "truncated or overlong varint"))
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
    if depth > super::MAX_TEXT_DEPTH {
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

pub(super) fn escape(bytes: &[u8], out: &mut String) {
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
