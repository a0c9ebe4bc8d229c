//! `<name>.json`: the kernel's metadata — inputs and outputs (name, dtype, symbolic shape),
//! templates (graph name, tiling key), the TilingData field list with byte offsets and the
//! struct size, the UB containers of every template and the cache key when given.
//!
//! Written by hand (the crate has no JSON dependency) with full string escaping; key order
//! is fixed, so the same kernel gives the same bytes.

use std::fmt::Write as _;

use super::host::{IoDesc, KernelIo};
use super::plan::KernelPlan;
use super::tiling_data::{tiling_data_size, TilingField};
use ascendir_asc::alloc::ContainerKind;

/// `s` as a JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn io_list(out: &mut String, key: &str, items: &[IoDesc]) {
    let _ = write!(out, "  {}: [", json_str(key));
    for (k, d) in items.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let shape: Vec<String> = d.shape.iter().map(|e| json_str(&e.to_string())).collect();
        let _ = write!(
            out,
            "\n    {{\"name\": {}, \"index\": {}, \"dtype\": {}, \"shape\": [{}]}}",
            json_str(&d.name),
            d.index,
            json_str(d.dtype.name()),
            shape.join(", ")
        );
    }
    if !items.is_empty() {
        out.push_str("\n  ");
    }
    out.push_str("],\n");
}

fn kind_name(k: ContainerKind) -> &'static str {
    match k {
        ContainerKind::Queue => "queue",
        ContainerKind::Buffer => "buffer",
        ContainerKind::Tmp => "tmp_buffer",
    }
}

/// The text of `<name>.json`.
pub fn kernel_json(
    name: &str,
    io: &KernelIo,
    plans: &[KernelPlan],
    fields: &[TilingField],
    cache_key: Option<&str>,
) -> String {
    let mut s = String::with_capacity(4096);
    s.push_str("{\n");
    let _ = writeln!(s, "  \"kernel\": {},", json_str(name));
    io_list(&mut s, "inputs", &io.inputs);
    io_list(&mut s, "outputs", &io.outputs);
    let mut order: Vec<&KernelPlan> = plans.iter().collect();
    order.sort_by_key(|p| p.tiling_key);
    s.push_str("  \"templates\": [");
    for (k, p) in order.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "\n    {{\"graph\": {}, \"tiling_key\": {}, \"containers\": [",
            json_str(&p.name),
            p.tiling_key
        );
        for (j, c) in p.containers.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            let prefix = if c.kind == ContainerKind::Queue {
                "q"
            } else {
                "b"
            };
            let _ = write!(
                s,
                "\n      {{\"name\": {}, \"kind\": {}, \"id\": {}, \"position\": {}, \"buf_num\": {}, \"size_field\": {}, \"slot_bytes\": {}}}",
                json_str(&format!("{prefix}{}", c.id)),
                json_str(kind_name(c.kind)),
                c.id,
                json_str(c.position.name()),
                c.buf_num,
                json_str(&c.name),
                json_str(&c.slot_bytes.to_string())
            );
        }
        if !p.containers.is_empty() {
            s.push_str("\n    ");
        }
        s.push_str("]}");
    }
    if !order.is_empty() {
        s.push_str("\n  ");
    }
    s.push_str("],\n");
    let struct_name = format!("{name}TilingData");
    let _ = write!(
        s,
        "  \"tiling_data\": {{\"struct\": {}, \"size\": {}, \"fields\": [",
        json_str(&struct_name),
        tiling_data_size(fields)
    );
    for (k, f) in fields.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "\n    {{\"name\": {}, \"offset\": {}, \"type\": \"uint32_t\"}}",
            json_str(&f.name),
            f.offset
        );
    }
    if !fields.is_empty() {
        s.push_str("\n  ");
    }
    s.push_str("]},\n");
    match cache_key {
        Some(k) => {
            let _ = writeln!(s, "  \"cache_key\": {}", json_str(k));
        }
        None => s.push_str("  \"cache_key\": null\n"),
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::json_str;

    #[test]
    fn escapes_quotes_controls_and_separators() {
        assert_eq!(json_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(json_str("x\ny\u{1}"), "\"x\\ny\\u0001\"");
        assert_eq!(json_str("\u{2028}é"), "\"\\u2028é\"");
    }
}
