//! Writing the protobuf wire format into a `Vec<u8>`: varints, keys and length-delimited
//! fields. The encoders write every tag and length through here, most of them one byte, so
//! the one-byte case is a single push (prost's writer goes through its generic buffer trait
//! byte by byte).

use prost::encoding::{encoded_len_varint, WireType};

pub use ascendir_wire::encode_varint;

/// Append the key of field `field` with wire type `wire_type`.
#[inline]
pub fn encode_key(field: u32, wire_type: WireType, out: &mut Vec<u8>) {
    encode_varint(u64::from(field << 3 | wire_type as u32), out);
}

/// Write field `field` with the bytes `body` writes, length first (one byte reserved for it,
/// moved when the length needs more).
pub fn put_nested<R>(field: u32, out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    encode_key(field, WireType::LengthDelimited, out);
    let at = out.len();
    out.push(0);
    let r = body(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut head = Vec::with_capacity(10);
        encode_varint(len as u64, &mut head);
        out.splice(at..at + 1, head);
    }
    r
}

/// Write `body` as length-delimited field `field`.
#[inline]
pub fn put_len_delimited(field: u32, body: &[u8], out: &mut Vec<u8>) {
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// Write `values` as packed varint field `field` (nothing when empty).
pub fn put_packed_varints(
    field: u32,
    values: impl Iterator<Item = u64> + Clone,
    out: &mut Vec<u8>,
) {
    let len: usize = values.clone().map(encoded_len_varint).sum();
    if len == 0 && values.clone().next().is_none() {
        return;
    }
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(len as u64, out);
    for v in values {
        encode_varint(v, out);
    }
}

/// Write `values` as packed fixed32 field `field` (nothing when empty).
pub fn put_packed_floats(field: u32, values: &[f32], out: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint((values.len() * 4) as u64, out);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_keys_are_what_prost_writes() {
        for v in [0u64, 1, 127, 128, 300, 16_383, 16_384, 1 << 35, u64::MAX] {
            let mut ours = Vec::new();
            encode_varint(v, &mut ours);
            let mut theirs = Vec::new();
            prost::encoding::encode_varint(v, &mut theirs);
            assert_eq!(ours, theirs, "{v}");
        }
        for (field, wt) in [
            (1, WireType::Varint),
            (15, WireType::LengthDelimited),
            (16, WireType::ThirtyTwoBit),
            (536_870_911, WireType::SixtyFourBit),
        ] {
            let mut ours = Vec::new();
            encode_key(field, wt, &mut ours);
            let mut theirs = Vec::new();
            prost::encoding::encode_key(field, wt, &mut theirs);
            assert_eq!(ours, theirs, "{field}");
        }
    }

    #[test]
    fn nested_lengths_of_any_size_are_written_in_place() {
        for n in [0usize, 1, 127, 128, 20_000] {
            let mut out = vec![9u8];
            put_nested(3, &mut out, |o| o.extend(std::iter::repeat_n(7u8, n)));
            let mut expected = vec![9u8];
            put_len_delimited(3, &vec![7u8; n], &mut expected);
            assert_eq!(out, expected, "{n}");
        }
    }
}
