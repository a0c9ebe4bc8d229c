//! The attribute map of a graph, op or tensor desc: entries sorted by name (GE's `GetAllAttrs`
//! order), each entry a shared, copy-on-write `(name, value)` pair.
//!
//! Why shared entries: the attributes of a real graph repeat a lot (one GE dump has 2,455 op
//! attributes but only 506 distinct name/value pairs). A decoder gives every repeat of an entry
//! the same allocation, copying an op or a map copies pointers, and an encoder can write each
//! distinct entry once and copy its bytes for the repeats. Writes go through
//! [`Arc::make_mut`], so sharing is never visible.

use std::sync::Arc;

use crate::attr::AttrValue;

/// One attribute: its name and value. Shared between maps through `Arc`.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrEntry {
    key: Box<str>,
    value: AttrValue,
}

/// `a < b` in byte order (see [`name_cmp`]).
#[inline]
fn name_less(a: &str, b: &str) -> bool {
    name_cmp(a, b).is_lt()
}

/// `a.cmp(b)` in byte order, deciding on the first eight bytes without a call when they differ
/// (the common case for attribute names; a string comparison is a `memcmp` call).
#[inline]
fn name_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    if let (Some(x), Some(y)) = (x.first_chunk::<8>(), y.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
    }
    a.cmp(b)
}

impl AttrEntry {
    /// An entry named `key`.
    pub fn new(key: impl Into<Box<str>>, value: AttrValue) -> Self {
        AttrEntry {
            key: key.into(),
            value,
        }
    }

    /// The attribute's name.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The attribute's value.
    pub fn value(&self) -> &AttrValue {
        &self.value
    }

    fn into_value(entry: Arc<AttrEntry>) -> AttrValue {
        Arc::try_unwrap(entry)
            .map(|e| e.value)
            .unwrap_or_else(|shared| shared.value.clone())
    }

    fn into_pair(entry: Arc<AttrEntry>) -> (String, AttrValue) {
        match Arc::try_unwrap(entry) {
            Ok(e) => (e.key.into_string(), e.value),
            Err(shared) => (shared.key.to_string(), shared.value.clone()),
        }
    }
}

/// Attributes ordered by name; a name appears at most once.
#[derive(Clone, Default)]
pub struct AttrMap {
    entries: Vec<Arc<AttrEntry>>,
}

impl AttrMap {
    /// An empty map.
    pub const fn new() -> Self {
        AttrMap {
            entries: Vec::new(),
        }
    }

    /// An empty map with room for `n` attributes.
    pub fn with_capacity(n: usize) -> Self {
        AttrMap {
            entries: Vec::with_capacity(n),
        }
    }

    /// A map of `entries` in any order; of two entries with one name the later one stays.
    pub fn from_entries(mut entries: Vec<Arc<AttrEntry>>) -> Self {
        let sorted = entries.windows(2).all(|w| w[0].key < w[1].key);
        if !sorted {
            // Stable, so equal names keep their order and the last one can be kept.
            entries.sort_by(|a, b| a.key.cmp(&b.key));
            let mut kept: Vec<Arc<AttrEntry>> = Vec::with_capacity(entries.len());
            for e in entries {
                match kept.last_mut() {
                    Some(last) if last.key == e.key => *last = e,
                    _ => kept.push(e),
                }
            }
            entries = kept;
        }
        AttrMap { entries }
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no attributes.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every attribute.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| name_cmp(&e.key, key))
    }

    /// The index of `key`. Most maps are small and most names differ in length or in their
    /// first eight bytes: comparing those first is cheaper there than the byte comparisons (a
    /// `memcmp` call each) of a binary search.
    fn position(&self, key: &str) -> Option<usize> {
        if self.entries.len() <= 16 {
            let head = |s: &str| s.as_bytes().first_chunk::<8>().copied();
            let want = head(key);
            self.entries
                .iter()
                .position(|e| e.key.len() == key.len() && head(&e.key) == want && *e.key == *key)
        } else {
            self.find(key).ok()
        }
    }

    /// The value named `key`.
    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.position(key).map(|i| &self.entries[i].value)
    }

    /// The value named `key`, for changing in place (unshared first if another map holds it).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut AttrValue> {
        let i = self.position(key)?;
        Some(&mut Arc::make_mut(&mut self.entries[i]).value)
    }

    /// The shared entry named `key`.
    pub fn get_entry(&self, key: &str) -> Option<&Arc<AttrEntry>> {
        self.position(key).map(|i| &self.entries[i])
    }

    /// Whether an attribute is named `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Sets attribute `key`; returns the value it replaced.
    pub fn insert(&mut self, key: impl Into<Box<str>>, value: AttrValue) -> Option<AttrValue> {
        self.insert_entry(Arc::new(AttrEntry::new(key, value)))
            .map(AttrEntry::into_value)
    }

    /// Sets a shared entry; returns the entry it replaced.
    pub fn insert_entry(&mut self, entry: Arc<AttrEntry>) -> Option<Arc<AttrEntry>> {
        // Names usually come in order (decoders, copies): append without a search.
        if self
            .entries
            .last()
            .is_none_or(|last| name_less(&last.key, &entry.key))
        {
            self.entries.push(entry);
            return None;
        }
        match self.slot(&entry.key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i], entry)),
            Err(i) => {
                self.entries.insert(i, entry);
                None
            }
        }
    }

    /// Where `key` is (`Ok`) or would go (`Err`). Small maps are scanned from the front: each
    /// step a comparison of the names' first eight bytes whose outcome the processor predicts,
    /// where a binary search's steps go either way.
    fn slot(&self, key: &str) -> Result<usize, usize> {
        if self.entries.len() > 16 {
            return self.find(key);
        }
        let i = self
            .entries
            .iter()
            .position(|e| !name_less(&e.key, key))
            .unwrap_or(self.entries.len());
        match self.entries.get(i) {
            Some(e) if *e.key == *key => Ok(i),
            _ => Err(i),
        }
    }

    /// The value named `key`, set to `value` first when there is none.
    pub fn get_or_insert(&mut self, key: &str, value: AttrValue) -> &mut AttrValue {
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, Arc::new(AttrEntry::new(key, value)));
                i
            }
        };
        &mut Arc::make_mut(&mut self.entries[i]).value
    }

    /// Removes attribute `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<AttrValue> {
        let i = self.position(key)?;
        Some(AttrEntry::into_value(self.entries.remove(i)))
    }

    /// Keeps the attributes for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &AttrValue) -> bool) {
        self.entries.retain(|e| keep(&e.key, &e.value));
    }

    /// Adds every entry of `other` (shared, not copied); its names win.
    pub fn append(&mut self, other: AttrMap) {
        if other.entries.is_empty() {
            return;
        }
        if self.entries.is_empty() {
            self.entries = other.entries;
            return;
        }
        if other.entries.len() <= 4 {
            // A few entries: inserting them in place is cheaper than a new merged vector.
            for e in other.entries {
                self.insert_entry(e);
            }
            return;
        }
        // Both sorted: one merge, not an insertion (and a shift) per entry.
        let mut merged = Vec::with_capacity(self.entries.len() + other.entries.len());
        let mut mine = std::mem::take(&mut self.entries).into_iter().peekable();
        let mut theirs = other.entries.into_iter().peekable();
        loop {
            let order = match (mine.peek(), theirs.peek()) {
                (Some(a), Some(b)) => a.key.cmp(&b.key),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => break,
            };
            match order {
                std::cmp::Ordering::Less => merged.extend(mine.next()),
                std::cmp::Ordering::Greater => merged.extend(theirs.next()),
                std::cmp::Ordering::Equal => {
                    mine.next();
                    merged.extend(theirs.next());
                }
            }
        }
        self.entries = merged;
    }

    /// The attributes in name order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    /// The names in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.entries.iter().map(|e| e.key())
    }

    /// The values in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &AttrValue> + ExactSizeIterator {
        self.entries.iter().map(|e| e.value())
    }

    /// The shared entries in name order.
    pub fn entries(&self) -> &[Arc<AttrEntry>] {
        &self.entries
    }
}

impl PartialEq for AttrMap {
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
    }
}

impl std::fmt::Debug for AttrMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Box<str>>> FromIterator<(K, AttrValue)> for AttrMap {
    fn from_iter<I: IntoIterator<Item = (K, AttrValue)>>(iter: I) -> Self {
        AttrMap::from_entries(
            iter.into_iter()
                .map(|(k, v)| Arc::new(AttrEntry::new(k, v)))
                .collect(),
        )
    }
}

impl<K: Into<Box<str>>> Extend<(K, AttrValue)> for AttrMap {
    fn extend<I: IntoIterator<Item = (K, AttrValue)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: Into<Box<str>>, const N: usize> From<[(K, AttrValue); N]> for AttrMap {
    fn from(items: [(K, AttrValue); N]) -> Self {
        items.into_iter().collect()
    }
}

/// Iterator over `(name, value)` in name order.
#[derive(Clone, Debug)]
pub struct Iter<'a>(std::slice::Iter<'a, Arc<AttrEntry>>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a AttrValue);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|e| (e.key(), e.value()))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|e| (e.key(), e.value()))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a AttrMap {
    type Item = (&'a str, &'a AttrValue);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Owning iterator over `(name, value)` in name order (values copied out of shared entries).
#[derive(Debug)]
pub struct IntoIter(std::vec::IntoIter<Arc<AttrEntry>>);

impl Iterator for IntoIter {
    type Item = (String, AttrValue);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(AttrEntry::into_pair)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl IntoIterator for AttrMap {
    type Item = (String, AttrValue);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter(self.entries.into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_names_sorted_and_unique() {
        let mut m = AttrMap::new();
        assert_eq!(m.insert("b", AttrValue::Int(2)), None);
        assert_eq!(m.insert("a", AttrValue::Int(1)), None);
        assert_eq!(m.insert("c", AttrValue::Int(3)), None);
        assert_eq!(m.insert("b", AttrValue::Int(20)), Some(AttrValue::Int(2)));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(m.get("b"), Some(&AttrValue::Int(20)));
        assert_eq!(m.remove("a"), Some(AttrValue::Int(1)));
        assert_eq!(m.remove("a"), None);
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn lookups_agree_on_small_and_large_maps() {
        for n in [0usize, 3, 16, 17, 40] {
            let mut m = AttrMap::new();
            for i in (0..n).rev() {
                m.insert(format!("k{i:02}"), AttrValue::Int(i as i64));
            }
            for i in 0..n {
                let k = format!("k{i:02}");
                assert_eq!(m.get(&k), Some(&AttrValue::Int(i as i64)), "{n} {k}");
            }
            assert!(!m.contains_key("k"));
            assert!(!m.contains_key("k999"));
            assert_eq!(m.keys().count(), n);
            assert!(m.keys().zip(m.keys().skip(1)).all(|(a, b)| a < b));
        }
    }

    #[test]
    fn from_entries_sorts_and_keeps_the_last_repeat() {
        let m: AttrMap = [
            ("z", AttrValue::Int(1)),
            ("a", AttrValue::Int(2)),
            ("z", AttrValue::Int(3)),
        ]
        .into();
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            [("a", &AttrValue::Int(2)), ("z", &AttrValue::Int(3))]
        );
    }

    #[test]
    fn append_merges_and_the_appended_names_win() {
        let mut a: AttrMap = [
            ("a", AttrValue::Int(1)),
            ("c", AttrValue::Int(3)),
            ("e", AttrValue::Int(5)),
        ]
        .into();
        let b: AttrMap = [
            ("b", AttrValue::Int(20)),
            ("c", AttrValue::Int(30)),
            ("f", AttrValue::Int(60)),
        ]
        .into();
        a.append(b);
        assert_eq!(
            a.iter()
                .map(|(k, v)| (k.to_string(), v.as_int().unwrap_or(0)))
                .collect::<Vec<_>>(),
            [("a", 1), ("b", 20), ("c", 30), ("e", 5), ("f", 60)].map(|(k, v)| (k.to_string(), v))
        );
        let mut empty = AttrMap::new();
        empty.append(a.clone());
        assert_eq!(empty, a);
        a.append(AttrMap::new());
        assert_eq!(a.len(), 5);
    }

    #[test]
    fn name_order_matches_string_order() {
        let names = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefgi",
            "abcdefghi",
            "abcdefgh0",
            "_input_name_key",
            "_input_name_value",
            "_opt_input",
            "origin_shape",
            "zzzzzzzzzzzz",
            "\u{e9}t\u{e9}",
        ];
        for a in names {
            for b in names {
                assert_eq!(name_less(a, b), a < b, "{a:?} < {b:?}");
                assert_eq!(name_cmp(a, b), a.cmp(b), "{a:?} cmp {b:?}");
            }
        }
    }

    #[test]
    fn append_equals_inserting_each_entry_for_small_and_large_maps() {
        for n in 0..12i64 {
            let mut a: AttrMap = (0..8i64)
                .map(|i| (format!("k{:02}", 3 * i), AttrValue::Int(i)))
                .collect();
            let b: AttrMap = (0..n)
                .map(|i| (format!("k{:02}", 2 * i), AttrValue::Int(100 + i)))
                .collect();
            let mut want = a.clone();
            for (k, v) in b.iter() {
                want.insert(k, v.clone());
            }
            a.append(b);
            assert_eq!(a, want, "{n} appended entries");
        }
    }

    #[test]
    fn writes_do_not_leak_into_maps_sharing_an_entry() {
        let mut a = AttrMap::new();
        a.insert("x", AttrValue::ListInt(vec![1, 2]));
        let mut b = a.clone();
        assert!(Arc::ptr_eq(&a.entries()[0], &b.entries()[0]));
        if let Some(AttrValue::ListInt(v)) = b.get_mut("x") {
            v.push(3);
        }
        assert_eq!(a.get("x"), Some(&AttrValue::ListInt(vec![1, 2])));
        assert_eq!(b.get("x"), Some(&AttrValue::ListInt(vec![1, 2, 3])));
        assert_ne!(a, b);
        // Removing a shared entry copies its value out and leaves the other map whole.
        let c = a.clone();
        assert_eq!(a.remove("x"), Some(AttrValue::ListInt(vec![1, 2])));
        assert_eq!(c.len(), 1);
    }
}
