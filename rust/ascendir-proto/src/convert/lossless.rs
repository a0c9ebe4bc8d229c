//! GE's reserved op keys (port-name maps, IR metadata) and the `_ascendir_*` keys that keep what
//! GE would lose: reading them from attribute maps, writing them as generated entries.

use super::*;

/// Names of `count` ports from a name→index map given as two parallel lists.
pub(crate) fn port_names(
    count: usize,
    keys: &[String],
    values: &[i64],
    auto: &str,
) -> ProtoResult<Vec<String>> {
    if keys.len() != values.len() {
        return Err(ProtoError::invalid(
            "",
            format!(
                "port-name map has {} names but {} indices",
                keys.len(),
                values.len()
            ),
        ));
    }
    let mut names: Vec<Option<String>> = vec![None; count];
    for (k, &v) in keys.iter().zip(values) {
        if v >= 0 && (v as u64) < count as u64 {
            let slot = &mut names[v as usize];
            if slot.is_none() {
                *slot = Some(k.clone());
            }
        }
    }
    let names: Vec<String> = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.unwrap_or_else(|| format!("{auto}{i}")))
        .collect();
    let mut seen = rustc_hash::FxHashSet::default();
    for n in &names {
        if !seen.insert(n.as_str()) {
            return Err(ProtoError::invalid(
                "",
                format!("two ports are named '{n}'"),
            ));
        }
    }
    Ok(names)
}

pub(crate) fn take_name_map(
    attrs: &mut BTreeMap<String, pb::AttrDef>,
    key: &str,
    value: &str,
    consume: bool,
) -> Option<(Vec<String>, Vec<i64>)> {
    let k = attrs.get(key).and_then(as_list_s)?;
    let v = attrs.get(value).and_then(as_list_i)?.to_vec();
    if consume {
        remove_untyped(attrs, key);
        remove_untyped(attrs, value);
    }
    Some((k, v))
}

pub(crate) fn untyped(d: &pb::AttrDef) -> bool {
    matches!(&d.value, Some(V::List(l)) if l.val_type == 0)
}

/// Remove a reserved key written the way current GE writes it (a list without `val_type`). A
/// typed list (older GE) stays as an attribute, so that it is written back unchanged.
pub(crate) fn remove_untyped(attrs: &mut BTreeMap<String, pb::AttrDef>, key: &str) {
    if attrs.get(key).is_some_and(untyped) {
        attrs.remove(key);
    }
}

/// Insert a reserved key unless the attribute map already holds an equal list (kept with its
/// own `val_type`).
pub(crate) fn put_reserved(attr: &mut GenAttrs, user: &AttrMap, key: &'static str, new: Vec<u8>) {
    if let Some(old) = user.get(key) {
        let old = attr_to_def(old).ok();
        let n = <pb::AttrDef as prost::Message>::decode(new.as_slice()).ok();
        if let (
            Some(pb::AttrDef {
                value: Some(V::List(old)),
            }),
            Some(pb::AttrDef {
                value: Some(V::List(n)),
            }),
        ) = (old, n)
        {
            if old.s == n.s && old.i == n.i && old.f.is_empty() && old.b.is_empty() {
                return;
            }
        }
    }
    attr.insert(key, new);
}

/// `put_reserved` of the string list `items` (a list without a value type): the user's equal
/// list is found without encoding either.
pub(crate) fn put_reserved_s<'a>(
    attr: &mut GenAttrs,
    user: &AttrMap,
    key: &'static str,
    items: impl Iterator<Item = &'a str> + Clone,
) {
    match user.get(key) {
        None => attr.insert(key, gen_s(Vt::VtListNone, items)),
        Some(AttrValue::ListString(old)) if old.iter().map(String::as_str).eq(items.clone()) => {}
        Some(_) => put_reserved(attr, user, key, gen_s(Vt::VtListNone, items)),
    }
}

/// `put_reserved` of the int list `items` (see `put_reserved_s`).
pub(crate) fn put_reserved_i(
    attr: &mut GenAttrs,
    user: &AttrMap,
    key: &'static str,
    items: impl Iterator<Item = i64> + Clone,
) {
    match user.get(key) {
        None => attr.insert(key, gen_i(Vt::VtListNone, items)),
        Some(AttrValue::ListInt(old)) if old.iter().copied().eq(items.clone()) => {}
        Some(_) => put_reserved(attr, user, key, gen_i(Vt::VtListNone, items)),
    }
}

/// The attribute entries the encoder adds to an op (reserved keys, our keys), as encoded
/// `AttrDef`s; a later insert of a key replaces the earlier one.
#[derive(Default)]
pub(crate) struct GenAttrs(pub(crate) SmallVec<[(&'static str, Vec<u8>); 8]>);

impl GenAttrs {
    pub(crate) fn insert(&mut self, key: &'static str, value: Vec<u8>) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// The entries in key order.
    pub(crate) fn sorted(&self) -> SmallVec<[(&'static str, &[u8]); 8]> {
        let mut v: SmallVec<[_; 8]> = self.0.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

/// An encoded `AttrDef` holding a list of strings with list type `vt` (written when not 0).
pub(crate) fn gen_s<'a>(vt: Vt, it: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    put_nested(1, &mut out, |l| {
        for s in it {
            put_len_delimited(2, s.as_bytes(), l);
        }
        put_val_type(vt, l);
    });
    out
}

/// An encoded `AttrDef` holding a list of integers with list type `vt` (written when not 0).
pub(crate) fn gen_i(vt: Vt, it: impl Iterator<Item = i64> + Clone) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    put_nested(1, &mut out, |l| {
        put_packed_varints(3, it.map(|v| v as u64), l);
        put_val_type(vt, l);
    });
    out
}

pub(crate) fn put_val_type(vt: Vt, out: &mut Vec<u8>) {
    if vt != Vt::VtListNone {
        crate::write::encode_key(20, prost::encoding::WireType::Varint, out);
        crate::write::encode_varint(vt as u64, out);
    }
}
