//! Attribute values in the readable dump: how each kind prints (C `%f` floats, `{a, b}` lists,
//! abbreviated tensors) and how the printed forms read back into values.

use ascendir_ir::{AttrValue, DataType, Format, Tensor, TensorDesc};
use bytes::Bytes;

/// How many tensor elements print in full; longer tensors show the first and last half of it.
const TENSOR_SHOW: usize = 6;
const TENSOR_HALF: usize = TENSOR_SHOW / 2;

/// C's `printf("%f", v)`: six decimals, `inf` / `nan` spelled the C way.
pub fn c_float(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    format!("{v:.6}")
}

/// The text of one attribute value, or `None` when the dump leaves it out (an empty string or
/// list, a kind the dump does not show).
pub fn attr_text(value: &AttrValue) -> Option<String> {
    let text = match value {
        AttrValue::Int(v) => v.to_string(),
        AttrValue::Float(v) => c_float(f64::from(*v)),
        AttrValue::Bool(v) => v.to_string(),
        AttrValue::String(s) if s.is_empty() => return None,
        AttrValue::String(s) => format!("\"{s}\""),
        AttrValue::RawString(b) if b.is_empty() => return None,
        AttrValue::RawString(b) => format!("\"{}\"", String::from_utf8_lossy(b)),
        AttrValue::DataType(dt) => dtype_text(*dt)?,
        AttrValue::Tensor(t) => tensor_text(t),
        AttrValue::ListInt(v) => list(v.iter().map(|x| Some(x.to_string())))?,
        AttrValue::ListFloat(v) => list(v.iter().map(|x| Some(c_float(f64::from(*x)))))?,
        AttrValue::ListBool(v) => list(v.iter().map(|x| Some(x.to_string())))?,
        AttrValue::ListString(v) => list(
            v.iter()
                .map(|s| (!s.is_empty()).then(|| format!("\"{s}\""))),
        )?,
        AttrValue::ListDataType(v) => list(v.iter().map(|d| dtype_text(*d)))?,
        AttrValue::ListListInt(v) => list(
            v.iter()
                .map(|inner| list(inner.iter().map(|x| Some(x.to_string())))),
        )?,
        _ => return None,
    };
    Some(text)
}

/// `DT_FLOAT`; `None` for the undefined type (GE cannot name it and leaves the value out).
fn dtype_text(dt: DataType) -> Option<String> {
    (dt != DataType::UNDEFINED).then(|| dt.serial_name().to_string())
}

/// `{a, b, c}` of the items that print; `None` when none does.
fn list(items: impl Iterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = items.flatten().collect();
    (!parts.is_empty()).then(|| format!("{{{}}}", parts.join(", ")))
}

/// The element width of the dtypes the dump shows, `None` for the others.
fn element_width(dt: DataType) -> Option<usize> {
    Some(match dt {
        DataType::BOOL | DataType::INT8 | DataType::UINT8 => 1,
        DataType::INT16 | DataType::UINT16 | DataType::FLOAT16 => 2,
        DataType::FLOAT | DataType::INT32 | DataType::UINT32 => 4,
        DataType::INT64 | DataType::UINT64 | DataType::DOUBLE => 8,
        _ => return None,
    })
}

/// One element of `dt` from its little-endian bytes (`chunk` has the dtype's width).
fn element_text(dt: DataType, chunk: &[u8]) -> String {
    let mut b = [0u8; 8];
    b[..chunk.len()].copy_from_slice(chunk);
    let [b0, b1, b2, b3, ..] = b;
    match dt {
        DataType::BOOL => (b0 != 0).to_string(),
        DataType::INT8 => i8::from_le_bytes([b0]).to_string(),
        DataType::UINT8 => b0.to_string(),
        DataType::INT16 => i16::from_le_bytes([b0, b1]).to_string(),
        DataType::UINT16 => u16::from_le_bytes([b0, b1]).to_string(),
        DataType::FLOAT16 => c_float(f64::from(half::f16::from_le_bytes([b0, b1]).to_f32())),
        DataType::FLOAT => c_float(f64::from(f32::from_le_bytes([b0, b1, b2, b3]))),
        DataType::INT32 => i32::from_le_bytes([b0, b1, b2, b3]).to_string(),
        DataType::UINT32 => u32::from_le_bytes([b0, b1, b2, b3]).to_string(),
        DataType::INT64 => i64::from_le_bytes(b).to_string(),
        DataType::UINT64 => u64::from_le_bytes(b).to_string(),
        _ => c_float(f64::from_le_bytes(b)),
    }
}

/// A tensor's value: `<not_supported>` for a dtype the dump does not show, `<empty>` without
/// data, `<invalid>` when the byte count is not a whole number of elements, else
/// `[a b c]`, abbreviated to `[a b c ... x y z]` past six elements.
pub fn tensor_text(t: &Tensor) -> String {
    let dt = t.desc.dtype;
    let Some(width) = element_width(dt) else {
        return "<not_supported>".to_string();
    };
    if t.data.is_empty() {
        return "<empty>".to_string();
    }
    if t.data.len() % width != 0 {
        return "<invalid>".to_string();
    }
    let items: Vec<&[u8]> = t.data.chunks(width).collect();
    let n = items.len();
    let mut parts: Vec<String> = Vec::with_capacity(TENSOR_SHOW + 1);
    for (i, chunk) in items.iter().enumerate() {
        if n > TENSOR_SHOW && i == TENSOR_HALF {
            parts.push("...".to_string());
        }
        if n <= TENSOR_SHOW || i < TENSOR_HALF || i >= n - TENSOR_HALF {
            parts.push(element_text(dt, chunk));
        }
    }
    format!("[{}]", parts.join(" "))
}

/// A tensor read back from `[a b c]` / `[a b c ... x y z]`: `INT64` when every element is an
/// integer, `BOOL` for `true` / `false`, else `FLOAT`; one dimension. An abbreviated value
/// holds seven elements, the middle one a zero standing for the elements the text leaves out,
/// so that it prints back as it was read. `None` when an element is not a number.
pub fn tensor_from_items(items: &[&str]) -> Option<Tensor> {
    let shown: Vec<&str> = items.iter().copied().filter(|s| *s != "...").collect();
    let abbreviated = shown.len() != items.len();
    let (dt, mut data): (DataType, Vec<u8>) = if shown.iter().all(|s| *s == "true" || *s == "false")
    {
        let v = shown.iter().map(|s| u8::from(*s == "true")).collect();
        (DataType::BOOL, v)
    } else if shown.iter().all(|s| s.parse::<i64>().is_ok()) {
        let v = shown
            .iter()
            .flat_map(|s| s.parse::<i64>().unwrap_or_default().to_le_bytes())
            .collect();
        (DataType::INT64, v)
    } else {
        let mut v = Vec::with_capacity(shown.len() * 4);
        for s in &shown {
            v.extend_from_slice(&parse_c_float(s)?.to_le_bytes());
        }
        (DataType::FLOAT, v)
    };
    let mut count = shown.len();
    if abbreviated {
        let width = element_width(dt).unwrap_or(1);
        let mid = TENSOR_HALF.min(count) * width;
        data.splice(mid..mid, std::iter::repeat_n(0u8, width));
        count += 1;
    }
    let dims = [i64::try_from(count).unwrap_or(i64::MAX)];
    let desc = TensorDesc::new(&dims, dt, Format::ND);
    Some(Tensor::new(desc, Bytes::from(data)))
}

/// A float as C prints it (`1.500000`, `inf`, `-nan`).
pub fn parse_c_float(s: &str) -> Option<f32> {
    match s {
        "inf" => Some(f32::INFINITY),
        "-inf" => Some(f32::NEG_INFINITY),
        "nan" => Some(f32::NAN),
        "-nan" => Some(-f32::NAN),
        _ if s.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.') => {
            s.parse::<f32>().ok()
        }
        _ => None,
    }
}

/// A tensor standing for `<empty>` / `<not_supported>` / `<invalid>`, chosen so it prints back
/// the same: no data; a `STRING` tensor; three bytes of `FLOAT`.
pub fn tensor_from_marker(marker: &str) -> Option<Tensor> {
    let (dt, data, dims): (DataType, &[u8], [i64; 1]) = match marker {
        "empty" => (DataType::FLOAT, &[], [0]),
        "not_supported" => (DataType::STRING, &[], [0]),
        "invalid" => (DataType::FLOAT, &[0, 0, 0], [1]),
        _ => return None,
    };
    let desc = TensorDesc::new(&dims, dt, Format::ND);
    Some(Tensor::new(desc, Bytes::copy_from_slice(data)))
}

/// A scalar token: `true` / `false`, an integer, a float, a `DT_` type name; `None` otherwise.
pub fn scalar_from_token(tok: &str) -> Option<AttrValue> {
    match tok {
        "true" => return Some(AttrValue::Bool(true)),
        "false" => return Some(AttrValue::Bool(false)),
        _ => {}
    }
    if let Ok(v) = tok.parse::<i64>() {
        return Some(AttrValue::Int(v));
    }
    if tok.starts_with("DT_") {
        let dt = DataType::from_serial_name(tok);
        return (dt != DataType::UNDEFINED).then_some(AttrValue::DataType(dt));
    }
    parse_c_float(tok).map(AttrValue::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dt: DataType, data: Vec<u8>) -> Tensor {
        Tensor::new(TensorDesc::new(&[], dt, Format::ND), Bytes::from(data))
    }

    #[test]
    fn tensors_abbreviate_past_six() {
        let ints = |n: i32| {
            t(
                DataType::INT32,
                (0..n).flat_map(|i| i.to_le_bytes()).collect(),
            )
        };
        assert_eq!(tensor_text(&ints(6)), "[0 1 2 3 4 5]");
        assert_eq!(tensor_text(&ints(7)), "[0 1 2 ... 4 5 6]");
        assert_eq!(tensor_text(&ints(1)), "[0]");
        assert_eq!(tensor_text(&ints(0)), "<empty>");
        assert_eq!(
            tensor_text(&t(DataType::STRING, vec![1])),
            "<not_supported>"
        );
        assert_eq!(tensor_text(&t(DataType::FLOAT, vec![1, 2])), "<invalid>");
        let half = t(DataType::FLOAT16, vec![0x00, 0x3C, 0x00, 0xC1]);
        assert_eq!(tensor_text(&half), "[1.000000 -2.500000]");
        assert_eq!(tensor_text(&t(DataType::BOOL, vec![1, 0])), "[true false]");
    }

    #[test]
    fn tensors_read_back_print_the_same() {
        for text in [
            "[1 2 3 ... 98 99 100]",
            "[-1 7168]",
            "[0.900000]",
            "[true false]",
        ] {
            let inner = &text[1..text.len() - 1];
            let items: Vec<&str> = inner.split(' ').collect();
            let tensor = tensor_from_items(&items).unwrap();
            assert_eq!(tensor_text(&tensor), text);
        }
        for marker in ["empty", "not_supported", "invalid"] {
            let tensor = tensor_from_marker(marker).unwrap();
            assert_eq!(tensor_text(&tensor), format!("<{marker}>"));
        }
    }

    #[test]
    fn scalars_and_lists() {
        assert_eq!(attr_text(&AttrValue::Float(0.1)).unwrap(), "0.100000");
        assert_eq!(attr_text(&AttrValue::Float(f32::NAN)).unwrap(), "nan");
        assert_eq!(attr_text(&AttrValue::String(String::new())), None);
        assert_eq!(attr_text(&AttrValue::ListInt(vec![])), None);
        let ll = AttrValue::ListListInt(vec![vec![1, 2, 3], vec![3, 2, 1]]);
        assert_eq!(attr_text(&ll).unwrap(), "{{1, 2, 3}, {3, 2, 1}}");
        let dts = AttrValue::ListDataType(vec![DataType::FLOAT, DataType::DOUBLE]);
        assert_eq!(attr_text(&dts).unwrap(), "{DT_FLOAT, DT_DOUBLE}");
        assert_eq!(
            scalar_from_token("DT_INT64"),
            Some(AttrValue::DataType(DataType::INT64))
        );
        assert_eq!(scalar_from_token("-3"), Some(AttrValue::Int(-3)));
        assert_eq!(scalar_from_token("abc"), None);
    }
}
