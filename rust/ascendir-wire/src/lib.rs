//! Byte-level protobuf wire-format helpers shared by the format crates (`ascendir-proto` for
//! GE's `ge_ir.proto`, `ascendir-onnx` for ONNX, and the format sniffing of the compiler):
//! reading and writing varints, their encoded length, and validating text fields.
//!
//! One implementation, so the decoders, the error locators and the text printer agree on what
//! a malformed varint is: at most ten bytes, the tenth at most 1 — what prost accepts.
//! Everything here is a leaf: no dependency on other ascendir crates.

#![deny(missing_docs)]

/// Read a varint at `*pos` and advance past it, as prost does (at most 10 bytes, the tenth at
/// most 1); `None` when it is truncated or overlong (`*pos` is then unspecified).
#[inline]
pub fn varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    // One- and two-byte varints (tags of fields 1–2047, lengths below 16 KiB) are most of what
    // a model holds: read them without the loop.
    let p = *pos;
    let b0 = *data.get(p)?;
    if b0 < 0x80 {
        *pos = p + 1;
        return Some(u64::from(b0));
    }
    let b1 = *data.get(p + 1)?;
    if b1 < 0x80 {
        *pos = p + 2;
        return Some(u64::from(b0 & 0x7f) | u64::from(b1) << 7);
    }
    varint_slow(data, pos)
}

#[cold]
fn varint_slow(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in 0..10 {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << (7 * shift);
        if b & 0x80 == 0 {
            if shift == 9 && b > 1 {
                return None;
            }
            return Some(v);
        }
    }
    None
}

/// Append `v` as a varint.
#[inline]
pub fn encode_varint(mut v: u64, out: &mut Vec<u8>) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The number of bytes `v` takes as a varint (1 to 10).
#[inline]
pub fn encoded_len(v: u64) -> usize {
    // Each byte carries 7 bits; zero still takes one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// `b` as text, `None` when it is not UTF-8. Names, types and string values are validated by
/// the thousand when a model is read, nearly all short and ASCII: the ASCII check reads eight
/// bytes at a time, where the general validation walks them one by one.
#[inline]
pub fn utf8(b: &[u8]) -> Option<&str> {
    if b.is_ascii() {
        // SAFETY: a byte sequence of ASCII characters only is valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(b) });
    }
    std::str::from_utf8(b).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: [u64; 11] = [
        0,
        1,
        127,
        128,
        300,
        16_383,
        16_384,
        2_097_152,
        1 << 35,
        1 << 63,
        u64::MAX,
    ];

    #[test]
    fn varints_of_every_length_read_back_as_prost_writes_them() {
        for v in SAMPLES {
            let mut buf = Vec::new();
            prost::encoding::encode_varint(v, &mut buf);
            let mut ours = Vec::new();
            encode_varint(v, &mut ours);
            assert_eq!(ours, buf, "{v}");
            assert_eq!(encoded_len(v), buf.len(), "{v}");
            assert_eq!(
                encoded_len(v),
                prost::encoding::encoded_len_varint(v),
                "{v}"
            );
            let mut pos = 0;
            assert_eq!(varint(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
            // Cut short: refused.
            let mut pos = 0;
            assert_eq!(varint(&buf[..buf.len() - 1], &mut pos), None);
        }
    }

    #[test]
    fn varint_reads_at_an_offset_and_is_strict() {
        let mut p = 1;
        assert_eq!(varint(&[0x00, 0x96, 0x01, 0x05], &mut p), Some(150));
        assert_eq!(p, 3);
        let mut p = 0;
        assert_eq!(varint(&[0xff; 10], &mut p), None);
        let mut p = 0;
        assert_eq!(varint(&[0x80], &mut p), None);
        // Ten bytes whose last is above 1 overflow 64 bits: refused, as prost refuses them.
        let mut over = vec![0xff; 9];
        over.push(0x02);
        let mut p = 0;
        assert_eq!(varint(&over, &mut p), None);
        let mut pos = 0;
        assert!(prost::encoding::decode_varint(&mut &over[..]).is_err());
        over[9] = 0x01;
        assert_eq!(varint(&over, &mut pos), Some(u64::MAX));
    }

    #[test]
    fn utf8_accepts_ascii_and_other_text_and_refuses_bad_bytes() {
        assert_eq!(utf8(b"conv1/weights"), Some("conv1/weights"));
        assert_eq!(utf8("通道".as_bytes()), Some("通道"));
        assert_eq!(utf8(b""), Some(""));
        assert_eq!(utf8(b"abc\xff"), None);
        assert_eq!(utf8(b"\xc3"), None);
    }
}
