//! Reachability for the cycle check (L2): a chain cover of the graph with, per node, the first
//! node of every indexed chain it reaches.
//!
//! The nodes (by topological position) are split into chains, each a path of real edges,
//! greedily: the first node not on a chain starts one, which follows the earliest successor
//! not on a chain yet. Every node `x` reaches, on chain `c`, exactly the nodes from
//! `first[x][c]` on (a chain is a path), so "does `x` reach some member of the union" is one
//! comparison per chain the union's members lie on. Only chains holding a lowered node can hold
//! a member, so only those are indexed, as many as [`MAX_ENTRIES`] allows; a union with a
//! member on a chain left out is checked by a bounded search instead.

use smallvec::SmallVec;

use super::{hint, narrow, Csr, Fuser};

/// Per chain of a union, its last index there.
type ChainEnds = SmallVec<[(u32, u32); 4]>;

/// At most this many `first` entries (4 bytes each) are kept: 64 MiB.
const MAX_ENTRIES: usize = 1 << 24;

/// Not reached.
const NEVER: u32 = u32::MAX;

/// The chain index of a graph (see the module docs).
#[derive(Debug)]
pub(super) struct Reach {
    /// Per position, its indexed chain (`NEVER`: on a chain that is not indexed) and its index
    /// on its chain (side by side: the cycle check reads both of a position at random).
    place: Vec<(u32, u32)>,
    /// Indexed chains.
    k: usize,
    /// `first[x * k + c]`: the first index on chain `c` that position `x` reaches (itself
    /// included), `NEVER` if none.
    first: Vec<u32>,
}

impl Reach {
    /// The index over `succ` (positions' successors, ascending, every edge forwards), with
    /// the chains that hold a position for which `lowered` holds.
    pub(super) fn new(succ: &Csr, lowered: impl Fn(usize) -> bool) -> Reach {
        let n = succ.starts.len().saturating_sub(1);
        // Greedy chain cover: raw chain id and index per position.
        let mut raw = vec![usize::MAX; n];
        let mut index = vec![0u32; n];
        let mut chains = 0usize;
        let mut has_lowered: Vec<bool> = Vec::new();
        for start in 0..n {
            if raw[start] != usize::MAX {
                continue;
            }
            let (id, mut cur, mut at) = (chains, start, 0u32);
            chains += 1;
            has_lowered.push(false);
            loop {
                raw[cur] = id;
                index[cur] = at;
                has_lowered[id] |= lowered(cur);
                at = at.saturating_add(1);
                match succ
                    .list(cur)
                    .iter()
                    .find(|&&s| raw[s as usize] == usize::MAX)
                {
                    Some(&s) => cur = s as usize,
                    None => break,
                }
            }
        }
        // The chains that can hold a member, in order, as many as fit.
        let cap = MAX_ENTRIES.checked_div(n).unwrap_or(0);
        let mut dense = vec![NEVER; chains];
        let mut k = 0usize;
        for (c, &l) in has_lowered.iter().enumerate() {
            if l && k < cap {
                dense[c] = u32::try_from(k).unwrap_or(NEVER);
                k += 1;
            }
        }
        let chain: Vec<u32> = raw.iter().map(|&c| dense[c]).collect();
        let place: Vec<(u32, u32)> = chain.iter().copied().zip(index.iter().copied()).collect();
        // Reverse topological order: a successor's row is done before its predecessors'.
        let mut first = vec![NEVER; n * k];
        if k > 0 {
            for x in (0..n).rev() {
                let (head, tail) = first.split_at_mut((x + 1) * k);
                let row = &mut head[x * k..];
                for &s in succ.list(x) {
                    // Successors come later (s > x), so their rows are in `tail`.
                    let off = (s as usize - x - 1) * k;
                    for (r, &f) in row.iter_mut().zip(&tail[off..off + k]) {
                        *r = (*r).min(f);
                    }
                }
                if let Some(c) = chain.get(x).filter(|&&c| c != NEVER) {
                    let r = &mut row[*c as usize];
                    *r = (*r).min(index[x]);
                }
            }
        }
        Reach { place, k, first }
    }

    /// Per indexed chain the union's members lie on, their last index there: `None` when a
    /// member is on a chain that is not indexed.
    fn last_on_chains(&self, positions: impl Iterator<Item = usize>) -> Option<ChainEnds> {
        let mut last = ChainEnds::new();
        for p in positions {
            let (c, at) = self.place[p];
            if c == NEVER {
                return None;
            }
            match last.iter_mut().find(|(lc, _)| *lc == c) {
                Some((_, i)) => *i = (*i).max(at),
                None => last.push((c, at)),
            }
        }
        Some(last)
    }

    /// Ask the cache for position `p`'s place and, with `row`, its row ([`hint`]).
    pub(super) fn prefetch(&self, p: usize, row: bool) {
        if let Some(x) = self.place.get(p) {
            hint(x);
        }
        if !row {
            return;
        }
        let at = p.checked_mul(self.k);
        if let Some(row) = at.and_then(|s| self.first.get(s..s.checked_add(self.k)?)) {
            hint(row);
        }
    }

    /// Whether position `x` reaches one of the members summarized by `last`.
    fn reaches(&self, x: usize, last: &[(u32, u32)]) -> bool {
        let row = &self.first[x * self.k..(x + 1) * self.k];
        last.iter().any(|&(c, i)| row[c as usize] <= i)
    }
}

/// Outside nodes the bounded search may visit for one pair (unions with a member on a chain
/// that is not indexed).
pub(super) const SEARCH_BUDGET: usize = 1024;

impl<T> Fuser<'_, T> {
    /// The topological positions of cluster `r`'s members (a single member's is the cluster's
    /// first position: no look-up).
    fn positions(&self, r: usize) -> impl Iterator<Item = usize> + '_ {
        let c = self.cl(r);
        let (single, many) = match &c.members[..] {
            [_] => (Some(c.min_ord as usize), &c.members[..0]),
            all => (None, all),
        };
        single
            .into_iter()
            .chain(many.iter().map(|&m| self.lpos[m] as usize))
    }

    /// A path from the union of `ra` and `rb` through an outside node back into it (the merge
    /// would be cyclic). Every such path leaves the union by an edge to an outside successor
    /// of a member, so the union is cyclic exactly when one of those reaches a member: one
    /// look-up per chain of the union with the chain index. For a union with a member off the
    /// index, a search forwards from those successors visits at most `SEARCH_BUDGET` outside
    /// nodes and gives `None` when it cannot settle the pair within that (refused as if
    /// cyclic; deterministic, and it keeps the stage linear in the graph).
    pub(super) fn creates_cycle(&mut self, ra: usize, rb: usize) -> Option<bool> {
        let bound = self.cl(ra).max_ord.max(self.cl(rb).max_ord) as usize;
        let (sa, sb) = (self.span(ra), self.span(rb));
        let inside = |f: &Self, s: usize| f.in_union(narrow(s), sa, sb);
        let both = || self.positions(ra).chain(self.positions(rb));
        if let Some(last) = self.reach.last_on_chains(both()) {
            // A path back into the union ends at a member, at or before `bound`: only the
            // successors up to it count (the lists ascend; the member at `bound` has none).
            for p in both().filter(|&p| p != bound) {
                for &s in self.succ.list(p) {
                    let s = s as usize;
                    if s > bound {
                        break;
                    }
                    if !inside(self, s) && self.reach.reaches(s, &last) {
                        return Some(true);
                    }
                }
            }
            return Some(false);
        }
        let members = self.merged_members(ra, rb);
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.visit.iter_mut().for_each(|v| *v = 0);
            self.epoch = 1;
        }
        let mut stack: Vec<usize> = Vec::new();
        for &m in &members {
            let p = self.lpos[m] as usize;
            for &s in self.succ.list(p) {
                let s = s as usize;
                if s <= bound && !inside(self, s) && self.visit[s] != self.epoch {
                    self.visit[s] = self.epoch;
                    stack.push(s);
                }
            }
        }
        let mut visited = 0usize;
        while let Some(p) = stack.pop() {
            for i in self.succ.starts[p]..self.succ.starts[p + 1] {
                let s = self.succ.items[i] as usize;
                if s > bound || self.visit[s] == self.epoch {
                    continue;
                }
                if inside(self, s) {
                    return Some(true);
                }
                visited += 1;
                if visited > SEARCH_BUDGET {
                    return None;
                }
                self.visit[s] = self.epoch;
                stack.push(s);
            }
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tables::xorshift;
    use super::*;

    /// `succ` as the one-array lists the index reads.
    fn csr(succ: &[Vec<usize>]) -> Csr {
        let mut c = Csr::with_capacity(succ.len());
        for v in succ {
            c.push(v.iter().map(|&s| s as u32));
        }
        c
    }

    /// Whether `x` reaches `y` (a path of ≥ 0 edges), by search.
    fn reaches_by_search(succ: &[Vec<usize>], x: usize, y: usize) -> bool {
        let mut seen = vec![false; succ.len()];
        let mut stack = vec![x];
        while let Some(p) = stack.pop() {
            if p == y {
                return true;
            }
            for &s in &succ[p] {
                if !seen[s] {
                    seen[s] = true;
                    stack.push(s);
                }
            }
        }
        false
    }

    /// A random DAG over `n` positions (edges forwards), from a seeded generator.
    fn random_dag(n: usize, seed: u64, fan: usize) -> Vec<Vec<usize>> {
        let mut next = xorshift(seed);
        (0..n)
            .map(|x| {
                let mut out = Vec::new();
                for _ in 0..(next() as usize % (fan + 1)) {
                    let span = n - x - 1;
                    if span > 0 {
                        out.push(x + 1 + next() as usize % span.min(12));
                    }
                }
                out.sort_unstable();
                out.dedup();
                out
            })
            .collect()
    }

    #[test]
    fn the_index_answers_reachability_like_a_search() {
        for seed in 1..40u64 {
            let succ = random_dag(40, seed * 7919, 3);
            let r = Reach::new(&csr(&succ), |_| true);
            assert_eq!(
                r.k,
                r.place
                    .iter()
                    .map(|p| p.0)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
            );
            for x in 0..succ.len() {
                for y in 0..succ.len() {
                    let last = r.last_on_chains(std::iter::once(y)).expect("all indexed");
                    assert_eq!(
                        r.reaches(x, &last),
                        reaches_by_search(&succ, x, y),
                        "seed {seed}: {x} -> {y}"
                    );
                }
            }
        }
    }

    #[test]
    fn chains_without_a_lowered_node_are_not_indexed() {
        // 0 -> 1, 2 alone, 3 alone: chains {0, 1}, {2}, {3}; only 2 is lowered.
        let succ = vec![vec![1], vec![], vec![], vec![]];
        let r = Reach::new(&csr(&succ), |p| p == 2);
        assert_eq!(r.k, 1);
        let chains: Vec<u32> = r.place.iter().map(|p| p.0).collect();
        assert_eq!(chains, vec![NEVER, NEVER, 0, NEVER]);
        assert!(r.last_on_chains([0usize].into_iter()).is_none());
        let last = r.last_on_chains([2usize].into_iter()).expect("indexed");
        assert!(r.reaches(2, &last) && !r.reaches(0, &last));
    }
}
