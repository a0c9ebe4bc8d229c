//! Attribute maps straight to the wire.

use super::*;

/// The encoding of `attr_to_def(value)`, written without building the message for the common
/// kinds (the same bytes as prost writes).
pub(crate) fn encode_attr_value(value: &AttrValue, out: &mut Vec<u8>) -> ProtoResult<()> {
    use crate::write::{encode_key, encode_varint};
    use prost::encoding::WireType;
    let list = |out: &mut Vec<u8>, vt: Vt, body: &dyn Fn(&mut Vec<u8>)| {
        put_nested(1, out, |l| {
            body(l);
            encode_key(20, WireType::Varint, l);
            encode_varint(vt as u64, l);
        })
    };
    match value {
        AttrValue::Int(i) => {
            encode_key(3, WireType::Varint, out);
            encode_varint(*i as u64, out);
        }
        AttrValue::Float(f) => {
            encode_key(4, WireType::ThirtyTwoBit, out);
            out.extend_from_slice(&f.to_le_bytes());
        }
        AttrValue::Bool(b) => {
            encode_key(5, WireType::Varint, out);
            encode_varint(u64::from(*b), out);
        }
        AttrValue::String(s) => put_len_delimited(2, s.as_bytes(), out),
        AttrValue::RawString(b) => put_len_delimited(2, b, out),
        AttrValue::Bytes(b) => put_len_delimited(7, b, out),
        AttrValue::Expression(s) => put_len_delimited(17, s.as_bytes(), out),
        AttrValue::DataType(d) => {
            encode_key(15, WireType::Varint, out);
            encode_varint(i64::from(d.ge_value()) as u64, out);
        }
        AttrValue::ListInt(x) => list(out, Vt::VtListInt, &|l| {
            put_packed_varints(3, x.iter().map(|&v| v as u64), l)
        }),
        AttrValue::ListFloat(x) => list(out, Vt::VtListFloat, &|l| put_packed_floats(4, x, l)),
        AttrValue::ListBool(x) => list(out, Vt::VtListBool, &|l| {
            put_packed_varints(5, x.iter().map(|&v| u64::from(v)), l)
        }),
        AttrValue::ListString(x) => list(out, Vt::VtListString, &|l| {
            for s in x {
                put_len_delimited(2, s.as_bytes(), l);
            }
        }),
        AttrValue::ListBytes(x) => list(out, Vt::VtListBytes, &|l| {
            for b in x {
                put_len_delimited(7, b, l);
            }
        }),
        AttrValue::ListDataType(x) => list(out, Vt::VtListDataType, &|l| {
            put_packed_varints(12, x.iter().map(|d| i64::from(d.ge_value()) as u64), l)
        }),
        other => prost::Message::encode_raw(&attr_to_def(other)?, out),
    }
    Ok(())
}

/// Write the attribute map of a message (field `field`): `user` (minus `skip` and our private
/// keys) merged with `generated` entries (which replace user entries of the same key), in key
/// order as prost writes a map; then the entries of attributes with unknown `AttrDef` fields
/// and the message's own unknown fields (from `user`), which the caller writes after the
/// message's other fields: returned separately.
pub(crate) fn encode_attr_map(
    user: &AttrMap,
    generated: &GenAttrs,
    skip: &[&str],
    field: u32,
    enc: &mut EntryEncodings,
    out: &mut Vec<u8>,
) -> ProtoResult<Vec<u8>> {
    let unknown_attrs = match user.get(ASC_ATTR_UNKNOWN) {
        Some(AttrValue::NamedAttrs(na)) => Some(&na.attrs),
        _ => None,
    };
    // Our keys share a prefix: most names are told apart from them by it alone.
    let ours = |k: &str| k.starts_with(ASC_PREFIX);
    debug_assert!(skip.iter().all(|k| ours(k)));
    let private = |k: &str| {
        (ours(k) && (skip.contains(&k) || k == ASC_UNKNOWN || k == ASC_ATTR_UNKNOWN))
            || unknown_attrs.is_some_and(|u| u.contains_key(k))
    };
    let mut value = Vec::new();
    let write = |key: &str, value: &[u8], out: &mut Vec<u8>| {
        use crate::write::{encode_key, encode_varint};
        use prost::encoding::{encoded_len_varint, WireType};
        let key_len = if key.is_empty() {
            0
        } else {
            1 + encoded_len_varint(key.len() as u64) + key.len()
        };
        let len = key_len + 1 + encoded_len_varint(value.len() as u64) + value.len();
        encode_key(field, WireType::LengthDelimited, out);
        encode_varint(len as u64, out);
        if !key.is_empty() {
            put_len_delimited(1, key.as_bytes(), out);
        }
        put_len_delimited(2, value, out);
    };
    let mut u = user
        .entries()
        .iter()
        .filter(|e| !private(e.key()))
        .peekable();
    let sorted = generated.sorted();
    let mut gi = sorted
        .iter()
        .filter(|(k, _)| !unknown_attrs.is_some_and(|u| u.contains_key(k)))
        .peekable();
    loop {
        let take_user = match (u.peek(), gi.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(e), Some((gk, _))) => e.key() < *gk,
        };
        value.clear();
        if take_user {
            let Some(e) = u.next() else { break };
            enc.write(e, field, out)?;
        } else {
            let Some((k, d)) = gi.next() else { break };
            if u.peek().is_some_and(|e| e.key() == *k) {
                u.next();
            }
            write(k, d, out);
        }
    }
    // Attributes with unknown AttrDef fields, then the message's unknown fields.
    let mut extra = Vec::new();
    if let Some(list) = unknown_attrs {
        for (k, v) in list {
            let AttrValue::Bytes(unknown) = v else {
                continue;
            };
            value.clear();
            match (generated.get(k), user.get(k)) {
                (Some(d), _) => value.extend_from_slice(d),
                (None, Some(v)) if !skip.contains(&k) => encode_attr_value(v, &mut value)
                    .map_err(|e| e.within(|| format!("attr[{k:?}]")))?,
                _ => {}
            }
            value.extend_from_slice(unknown);
            let mut entry = Vec::with_capacity(k.len() + value.len() + 8);
            put_len_delimited(1, k.as_bytes(), &mut entry);
            put_len_delimited(2, &value, &mut entry);
            put_len_delimited(field, &entry, &mut extra);
        }
    }
    if let Some(AttrValue::Bytes(b)) = user.get(ASC_UNKNOWN) {
        extra.extend_from_slice(b);
    }
    Ok(extra)
}
