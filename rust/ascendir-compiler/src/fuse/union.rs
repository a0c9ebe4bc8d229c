//! The union of two clusters as the legality checks see it: its members, the tensors it reads
//! and writes, and what the two clusters share — computed from each cluster's cached reads and
//! writes, never by walking the graph again.

use super::{narrow, Fuser, Read, NONE};
use crate::lower::Kind;
use crate::symbolize::TRef;

/// A cluster's root and the topological positions of its first and last members
/// ([`Fuser::span`]): every member lies between them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    root: u32,
    first: u32,
    last: u32,
}

impl<T> Fuser<'_, T> {
    /// The rule of the members laid out in memory: a slice, concat or gather reads its operands
    /// from memory, so none of them may be computed in the union (AF2003); a transpose is the
    /// last op of its kernel, so nothing in the union reads its output (AF2004).
    pub(super) fn view_refusal(
        &self,
        members: &[usize],
        ra: usize,
        rb: usize,
    ) -> Option<(&'static str, &'static str)> {
        let (sa, sb) = (self.span(ra), self.span(rb));
        let at = |x: &TRef| self.pos.get(x.0).map_or(u32::MAX, narrow);
        for &m in members {
            let (id, l) = self.lowered[m];
            let operands = match l.kind {
                Kind::Slice => &l.inputs[..l.inputs.len().min(1)],
                Kind::Concat | Kind::Gather => &l.inputs[..],
                Kind::Transpose => {
                    let read = members
                        .iter()
                        .any(|&o| self.lowered[o].1.inputs.iter().flatten().any(|x| x.0 == id));
                    if read {
                        return Some((
                            "AF2004",
                            "a transpose's output would be read inside the kernel (a transpose \
                             is the last op of its kernel)",
                        ));
                    }
                    continue;
                }
                _ => continue,
            };
            if operands
                .iter()
                .flatten()
                .any(|x| self.in_union(at(x), sa, sb))
            {
                let what = match l.kind {
                    Kind::Slice => {
                        "a slice would read a tensor computed inside the kernel (a slice is a \
                         strided Load)"
                    }
                    Kind::Concat => {
                        "a concat would read a tensor computed inside the kernel (its operands \
                         are Loads of partial extent)"
                    }
                    _ => {
                        "a gather would read a tensor computed inside the kernel (its params and \
                         indices are read from memory)"
                    }
                };
                return Some(("AF2003", what));
            }
        }
        None
    }

    /// The cluster of lowered node `li` ([`narrow`]ed; none: `u32::MAX`), [`NONE`] for none.
    pub(super) fn root_of(&self, li: u32) -> usize {
        if li == u32::MAX {
            NONE
        } else {
            self.find(li as usize)
        }
    }

    /// Cluster `r`'s span (from its record).
    pub(super) fn span(&self, r: usize) -> Span {
        let c = self.cl(r);
        Span {
            root: narrow(r),
            first: c.min_ord,
            last: c.max_ord,
        }
    }

    /// The lowered index of the node at position `p` ([`narrow`]ed; none: `u32::MAX`) when it
    /// is a member of the cluster spanning `s`: its place and root are read only for a node
    /// within the span (the checks ask this of every tensor a pair reads and of every consumer
    /// of what it writes, mostly far from the other side).
    pub(super) fn member_at(&self, s: Span, p: u32) -> Option<usize> {
        if !(s.first..=s.last).contains(&p) {
            return None;
        }
        let li = self.li_of_pos[p as usize];
        (li != u32::MAX && self.parent[li as usize] == s.root).then_some(li as usize)
    }

    /// Whether the node at position `p` is a member of the cluster spanning `s`.
    pub(super) fn holds(&self, s: Span, p: u32) -> bool {
        self.member_at(s, p).is_some()
    }

    /// Whether the node at position `p` is a member of the union of the clusters spanning
    /// `sa` and `sb`.
    pub(super) fn in_union(&self, p: u32, sa: Span, sb: Span) -> bool {
        self.holds(sa, p) || self.holds(sb, p)
    }

    /// Tensors read from outside the union of `ra` and `rb`.
    pub(super) fn reads(&self, ra: usize, rb: usize) -> Vec<Read> {
        let (a, b) = (self.cl(ra), self.cl(rb));
        let (sa, sb) = (self.span(ra), self.span(rb));
        let mut v: Vec<Read> = Vec::with_capacity(a.reads.len() + b.reads.len());
        for (r, other) in a
            .reads
            .iter()
            .map(|r| (r, sb))
            .chain(b.reads.iter().map(|r| (r, sa)))
        {
            if !self.holds(other, r.pos) && !v.iter().any(|x| x.tensor() == r.tensor()) {
                v.push(*r);
            }
        }
        v
    }

    /// `writes(ra, rb).len()` without building the list. A write of one side stays a write of
    /// the union unless the other side reads it (a member with a consumer outside its cluster
    /// is a write, so every member the other side reads is one) and it has no consumer
    /// outside the union: only the members the other side reads are walked, not every write.
    pub(super) fn writes_len(&self, ra: usize, rb: usize) -> usize {
        let (a, b) = (self.cl(ra), self.cl(rb));
        let (sa, sb) = (self.span(ra), self.span(rb));
        let mut n = a.writes.len() + b.writes.len();
        for (reads, producer) in [(&b.reads, sa), (&a.reads, sb)] {
            for r in reads.iter().filter(|r| r.port == 0) {
                match self.member_at(producer, r.pos) {
                    Some(m) if !self.writes_outside(m, sa, sb) => n = n.saturating_sub(1),
                    _ => {}
                }
            }
        }
        debug_assert_eq!(n, self.writes(ra, rb).len());
        n
    }

    /// Whether member `m`'s output is used outside the union of `ra` and `rb`.
    fn writes_outside(&self, m: usize, sa: Span, sb: Span) -> bool {
        self.consumers
            .list(m)
            .iter()
            .any(|&c| !self.in_union(c, sa, sb))
    }

    /// The members of both clusters in topological order (both lists are; lowered indexes
    /// ascend with the order).
    pub(super) fn merged_members(&self, ra: usize, rb: usize) -> Vec<usize> {
        let (a, b) = (&self.cl(ra).members, &self.cl(rb).members);
        if ra == rb {
            return a.to_vec();
        }
        let mut v = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i] <= b[j] {
                v.push(a[i]);
                i += 1;
            } else {
                v.push(b[j]);
                j += 1;
            }
        }
        v.extend_from_slice(&a[i..]);
        v.extend_from_slice(&b[j..]);
        v
    }

    /// Members of the union whose output is used outside it.
    pub(super) fn writes(&self, ra: usize, rb: usize) -> Vec<usize> {
        let (a, b) = (self.cl(ra), self.cl(rb));
        let (sa, sb) = (self.span(ra), self.span(rb));
        let mut v = Vec::with_capacity(a.writes.len() + b.writes.len());
        for &m in a.writes.iter().chain(&b.writes) {
            if self.writes_outside(m, sa, sb) {
                v.push(m);
            }
        }
        v
    }

    /// The tensors both clusters touch (one reads what the other reads or produces): their
    /// number, their bytes at the hints, and whether one cluster reads what the other produces
    /// (a vertical pair).
    ///
    /// A cluster's reads are distinct and never its own products, so the union reads
    /// `a.reads.len() + b.reads.len() - number` tensors: those produced by the other side
    /// and those both read are the shared ones.
    pub(super) fn shared(&self, ra: usize, rb: usize) -> (usize, i64, bool) {
        let (a, b) = (self.cl(ra), self.cl(rb));
        let (sa, sb) = (self.span(ra), self.span(rb));
        let (mut n, mut bytes, mut vertical) = (0usize, 0i64, false);
        for r in &b.reads {
            let produced = self.holds(sa, r.pos);
            vertical |= produced;
            if produced || a.reads.iter().any(|x| x.tensor() == r.tensor()) {
                n += 1;
                bytes = bytes.saturating_add(r.bytes);
            }
        }
        for r in &a.reads {
            if self.holds(sb, r.pos) {
                vertical = true;
                n += 1;
                bytes = bytes.saturating_add(r.bytes);
            }
        }
        (n, bytes, vertical)
    }
}
