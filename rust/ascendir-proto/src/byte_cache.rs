//! A hash table from byte strings (encodings) to decoded values, for the decoder's caches.
//!
//! The keys are encodings tens to hundreds of bytes long. A std `HashMap` hashes a key again
//! for every entry it moves when it grows, and a cache that misses in one table and then looks
//! in another hashes the probe twice; here the hash is computed once by the caller
//! ([`hash_bytes`]) and kept with the entry.

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

/// The hash [`ByteCache`] files `bytes` under.
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// Values by byte-string key (`K` owns the key bytes: a `Box<[u8]>` or a shared `Bytes`).
pub(crate) struct ByteCache<K, V> {
    table: HashTable<(u64, K, V)>,
}

impl<K, V> Default for ByteCache<K, V> {
    fn default() -> Self {
        ByteCache {
            table: HashTable::new(),
        }
    }
}

impl<K: AsRef<[u8]>, V> ByteCache<K, V> {
    /// An empty cache with room for `n` entries.
    pub(crate) fn with_capacity(n: usize) -> Self {
        ByteCache {
            table: HashTable::with_capacity(n),
        }
    }

    /// The value of `key`, whose [`hash_bytes`] is `hash`.
    pub(crate) fn get(&self, hash: u64, key: &[u8]) -> Option<&V> {
        self.table
            .find(hash, |(h, k, _)| *h == hash && k.as_ref() == key)
            .map(|(_, _, v)| v)
    }

    /// Add `key` (hashed `hash`, not yet in the cache) with `value`.
    pub(crate) fn insert(&mut self, hash: u64, key: K, value: V) {
        self.table
            .insert_unique(hash, (hash, key, value), |(h, _, _)| *h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_inserted_across_growth() {
        let mut c: ByteCache<Box<[u8]>, usize> = ByteCache::default();
        for i in 0..2000usize {
            let k = format!("key-{i}").into_bytes();
            c.insert(hash_bytes(&k), k.into(), i);
        }
        for i in 0..2000usize {
            let k = format!("key-{i}").into_bytes();
            assert_eq!(c.get(hash_bytes(&k), &k), Some(&i));
        }
        let missing = b"key-2000";
        assert_eq!(c.get(hash_bytes(missing), missing), None);
    }

    #[test]
    fn equal_hashes_are_told_apart_by_the_bytes() {
        let mut c: ByteCache<Box<[u8]>, u8> = ByteCache::with_capacity(4);
        c.insert(7, b"a"[..].into(), 1);
        c.insert(7, b"b"[..].into(), 2);
        assert_eq!(c.get(7, b"a"), Some(&1));
        assert_eq!(c.get(7, b"b"), Some(&2));
        assert_eq!(c.get(7, b"c"), None);
    }
}
