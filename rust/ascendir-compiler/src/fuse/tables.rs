//! The fuse stage's dense tables: 32-bit lowered indexes, per-node lists in one array,
//! topological positions by node and each tensor's candidate key.

use std::ops::Range;

use ascendir_ir::{Graph, NodeId};

use super::saturating_bytes;
use crate::symbolize::{SymTable, TRef};

/// No lowered node (a barrier, a graph output).
pub(super) const NONE: usize = usize::MAX;

/// A lowered index as stored in the fuse stage's per-node tables (half a `usize`: the tables
/// the legality checks read at random stay twice as dense in the cache). Lossless: lowered
/// indexes count graph nodes, whose arena slots are 32-bit (`NodeId::slot`), so every index is
/// below `u32::MAX`, which stands for [`NONE`].
pub(super) fn narrow(li: usize) -> u32 {
    u32::try_from(li).unwrap_or(u32::MAX)
}

/// The lowered index `narrow` stored ([`NONE`] for `u32::MAX`).
pub(super) fn widen(li: u32) -> usize {
    if li == u32::MAX {
        NONE
    } else {
        li as usize
    }
}

/// A tensor's place among the candidates of a round ([`key_and_bytes`]): a scalar constant's.
pub(super) const SKIP: u32 = u32::MAX;

/// A tensor's place among the candidates of a round ([`key_and_bytes`]): a producer outside the
/// order.
pub(super) const UNORDERED: u32 = u32::MAX - 1;

/// A tensor's key and its bytes at the hints ([`saturating_bytes`]; 0 when unknown), its
/// producer's record read once. The key groups the tensor's readers and producer into
/// candidate pairs: its producer's position ([`UNORDERED`] outside the order), or [`SKIP`] for a
/// scalar constant (an immediate in every kernel, not a reason to fuse its readers).
pub(super) fn key_and_bytes(g: &Graph, pos: &Positions, syms: &SymTable, t: TRef) -> (u32, i64) {
    let port = g.op(t.0).ok().and_then(|o| {
        let p = o.outputs().get(t.1 as usize)?;
        Some((o.op_type(), &p.desc))
    });
    let scalar_const = port.is_some_and(|(ty, d)| {
        matches!(ty, "Const" | "Constant") && d.shape.iter().all(|&x| x == 1)
    });
    let key = if scalar_const {
        SKIP
    } else {
        pos.get(t.0)
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(UNORDERED)
    };
    let bytes = port.map_or(0, |(_, d)| {
        saturating_bytes(syms.numel(t).unwrap_or(0), d.dtype)
    });
    (key, bytes)
}

/// Per node, a list (of 32-bit indexes, [`narrow`]ed, by default: a lowered node's consumers,
/// a position's successors), in one array: node `i`'s list is `items[starts[i]..starts[i + 1]]`.
#[derive(Debug, Default)]
pub(super) struct Csr<T = u32> {
    pub(super) starts: Vec<usize>,
    pub(super) items: Vec<T>,
}

impl<T: Copy> Csr<T> {
    /// No lists yet, room for `n`.
    pub(super) fn with_capacity(n: usize) -> Csr<T> {
        let mut starts = Vec::with_capacity(n.saturating_add(1));
        starts.push(0);
        Csr {
            starts,
            items: Vec::new(),
        }
    }

    /// Append the next node's list.
    pub(super) fn push(&mut self, list: impl IntoIterator<Item = T>) {
        self.items.extend(list);
        self.starts.push(self.items.len());
    }

    pub(super) fn list(&self, i: usize) -> &[T] {
        &self.items[self.starts[i]..self.starts[i + 1]]
    }
}

/// A node's entry in [`Positions`]: its topological position and, once the fuse set-up has
/// met a lowered node, its output 0's candidate key and bytes ([`key_and_bytes`]; [`UNMET`]
/// before). One entry, one look-up: the set-up asks for all of them of a tensor's producer at
/// once, at random (a graph's long edges).
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    pub(super) pos: u32,
    pub(super) key: u32,
    pub(super) bytes: i64,
}

/// A [`Place`]'s key before the set-up has met its node.
const UNMET: u32 = u32::MAX - 2;

/// A [`Place`] of a slot no node of the order holds.
const ABSENT: Place = Place {
    pos: u32::MAX,
    key: UNMET,
    bytes: 0,
};

/// Topological positions by node: a vector indexed by the node's arena slot
/// ([`NodeId::slot`]), 16 bytes an entry, whose address is known without reading it (the
/// set-up asks for the entries of the nodes a few steps ahead: [`Positions::prefetch`]). The
/// ids asked for are the graph's own (its nodes' successors, the lowered nodes' operands): a
/// slot holds one node of the graph, so the entry is that node's, with no version to check.
#[derive(Debug)]
pub(super) struct Positions {
    at: Vec<Place>,
}

impl Positions {
    pub(super) fn new(order: &[NodeId]) -> Positions {
        let slots = order.iter().map(|id| id.slot() + 1).max().unwrap_or(0);
        let mut at = vec![ABSENT; slots];
        for (p, &id) in order.iter().enumerate() {
            at[id.slot()].pos = narrow(p);
        }
        Positions { at }
    }

    /// Node `id`'s position.
    pub(super) fn get(&self, id: NodeId) -> Option<usize> {
        match self.at.get(id.slot()) {
            Some(pl) if pl.pos != u32::MAX => Some(pl.pos as usize),
            _ => None,
        }
    }

    /// Node `id`'s position ([`narrow`]ed; out of the order: `u32::MAX`) and, once recorded
    /// ([`Positions::met`]), its output 0's key and bytes.
    pub(super) fn output(&self, id: NodeId) -> (u32, Option<(u32, i64)>) {
        let pl = self.at.get(id.slot()).unwrap_or(&ABSENT);
        (pl.pos, (pl.key != UNMET).then_some((pl.key, pl.bytes)))
    }

    /// Record node `id`'s output 0's key and bytes.
    pub(super) fn met(&mut self, id: NodeId, key: u32, bytes: i64) {
        if let Some(pl) = self.at.get_mut(id.slot()) {
            pl.key = key;
            pl.bytes = bytes;
        }
    }

    /// Ask the cache for node `id`'s entry ([`hint`]).
    pub(super) fn prefetch(&self, id: NodeId) {
        if let Some(pl) = self.at.get(id.slot()) {
            hint(pl);
        }
    }
}

/// Ask the cache for the memory of `x` (its first 256 bytes): a hint, with no effect on any
/// result. The fuse stage's checks read records and table entries at random (a graph's long
/// edges); asking for those of the pairs a few steps ahead overlaps the misses.
#[inline]
pub(super) fn hint<T: ?Sized>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (x as *const T).cast::<i8>();
        for off in (0..std::mem::size_of_val(x).min(256)).step_by(64) {
            // SAFETY: a prefetch reads nothing the program sees and never faults (on x86_64 it
            // is a hint even for an invalid address); the address stays inside `x`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// A counting sort: `src`'s items in `out`, ordered by `key` (below `buckets`), those of one key
/// in the order of `src` (stable), each as `map` makes it; gives where each key's items end in
/// `out`. Two passes over the items (count, place) instead of a radix sort's one per
/// significant byte of the key; the fuse stage's items come nearly in key order, so the
/// placing writes run forward.
pub(super) fn place_by_key<S, T>(
    src: &[S],
    buckets: usize,
    key: impl Fn(&S) -> usize,
    map: impl Fn(&S) -> T,
    out: &mut [T],
) -> Vec<usize> {
    // at[k + 1] counts key k's items; its prefix sums are where each key's begin, each moved
    // on as its items are placed: at[k] then is where key k's end.
    let mut at = vec![0usize; buckets + 1];
    for x in src {
        at[key(x) + 1] += 1;
    }
    for k in 0..buckets {
        at[k + 1] += at[k];
    }
    for x in src {
        let i = &mut at[key(x)];
        out[*i] = map(x);
        *i += 1;
    }
    at.truncate(buckets);
    at
}

/// The runs of [`place_by_key`]'s items from where each key's end (`ends`): per key, the range
/// of its items.
pub(super) fn runs(ends: &[usize]) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
    let begins = std::iter::once(0).chain(ends.iter().copied());
    ends.iter()
        .zip(begins)
        .map(|(&end, begin)| begin..end)
        .enumerate()
}

/// Sort `pairs` (each a pair of roots, both below `n`) and drop repeats: placed by the first
/// root ([`place_by_key`]), then each first root's few pairs by the second. The order of a
/// sort by the whole pair.
pub(super) fn sort_pairs(pairs: &mut Vec<(u32, u32)>, n: usize) {
    if pairs.iter().any(|p| p.0 as usize >= n) {
        // Not roots of `n` clusters (never so in the fuse stage): the general sort.
        radsort::sort_by_key(pairs, |&p| p);
        pairs.dedup();
        return;
    }
    // Placed back into `pairs` (its room stays for the round) from a copy, as a radix sort's
    // scratch buffer.
    let src = pairs.clone();
    let ends = place_by_key(&src, n, |p| p.0 as usize, |&p| p, pairs);
    drop(src);
    for (_, run) in runs(&ends) {
        if run.len() > 1 {
            pairs[run].sort_unstable_by_key(|p| p.1);
        }
    }
    pairs.dedup();
}

/// A seeded generator (xorshift) for the fuse stage's tests: each call gives the next value.
#[cfg(test)]
pub(super) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[cfg(test)]
mod tests {
    use super::{sort_pairs, xorshift};

    #[test]
    fn pairs_sort_as_radsort_does() {
        let mut rng = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| (rng() % m) as u32;
        for (n, len) in [(1usize, 5usize), (7, 40), (300, 2000), (5000, 30000)] {
            let pairs: Vec<(u32, u32)> = (0..len)
                .map(|_| (next(n as u64), next(n as u64 + 3)))
                .collect();
            let mut want = pairs.clone();
            want.sort_unstable();
            want.dedup();
            let mut got = pairs.clone();
            sort_pairs(&mut got, n);
            assert_eq!(got, want);
            // A first root out of range takes the general sort, same order.
            let mut wide = pairs;
            wide.push((n as u32 + 9, 0));
            let mut want = wide.clone();
            want.sort_unstable();
            want.dedup();
            sort_pairs(&mut wide, n);
            assert_eq!(wide, want);
        }
        let mut empty: Vec<(u32, u32)> = Vec::new();
        sort_pairs(&mut empty, 0);
        assert!(empty.is_empty());
    }
}
