//! The symbol table's shapes: each distinct shape stored once (a class), a tensor's class by
//! its node's slot. The later stages ask for shapes on every edge; a look-up is one read of a
//! table in node order instead of a hash probe, and the bytes of a shape are counted once.

use ascendir_asc::Expr;
use ascendir_ir::NodeId;
use rustc_hash::FxHashMap;
use slotmap::SecondaryMap;

use super::TRef;

/// No shape.
const NONE: u32 = u32::MAX;

/// Shapes by out anchor (see the module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Shapes {
    /// The class of each node's output 0.
    first: SecondaryMap<NodeId, u32>,
    /// The classes of other outputs.
    rest: FxHashMap<TRef, u32>,
    /// The distinct shapes, by class, in first-seen order.
    uniq: Vec<Vec<Expr>>,
    /// The class of each distinct shape.
    ids: FxHashMap<Vec<Expr>, u32>,
    /// Elements of each class at the hints, once counted ([`Shapes::count`]).
    numel: Vec<Option<i64>>,
}

impl Shapes {
    /// The class of `t`'s shape.
    pub(super) fn class(&self, t: TRef) -> Option<u32> {
        let c = if t.1 == 0 {
            *self.first.get(t.0)?
        } else {
            *self.rest.get(&t)?
        };
        (c != NONE).then_some(c)
    }

    /// The shape of class `c`.
    pub(super) fn shape(&self, c: u32) -> Option<&Vec<Expr>> {
        self.uniq.get(c as usize)
    }

    /// The counted elements of class `c` (`None` inside: unknown at the hints; outside: not
    /// counted yet).
    pub(super) fn numel(&self, c: u32) -> Option<Option<i64>> {
        self.numel.get(c as usize).copied()
    }

    /// The class of `s`, a new one if it is not stored yet.
    fn intern(&mut self, s: Vec<Expr>) -> u32 {
        if let Some(&c) = self.ids.get(&s) {
            return c;
        }
        // Fewer classes than tensors, and tensors are counted by 32-bit node slots.
        let c = u32::try_from(self.uniq.len()).unwrap_or(NONE);
        self.uniq.push(s.clone());
        self.ids.insert(s, c);
        c
    }

    pub(super) fn set(&mut self, t: TRef, s: Vec<Expr>) {
        let c = self.intern(s);
        if t.1 == 0 {
            self.first.insert(t.0, c);
        } else {
            self.rest.insert(t, c);
        }
        self.numel.clear();
    }

    pub(super) fn contains(&self, t: TRef) -> bool {
        self.class(t).is_some()
    }

    /// Rewrite every stored shape dim by dim; shapes that become equal become one class
    /// (classes keep their first-seen order).
    pub(super) fn rewrite(&mut self, f: impl Fn(&Expr) -> Expr) {
        let old = std::mem::take(&mut self.uniq);
        self.ids.clear();
        self.numel.clear();
        let remap: Vec<u32> = old
            .iter()
            .map(|s| self.intern(s.iter().map(&f).collect()))
            .collect();
        let to = |c: u32| remap.get(c as usize).copied().unwrap_or(NONE);
        for (_, c) in &mut self.first {
            *c = to(*c);
        }
        for c in self.rest.values_mut() {
            *c = to(*c);
        }
    }

    /// Count every class's elements with `numel_of` (after the last shape is stored).
    pub(super) fn count(&mut self, numel_of: impl Fn(&[Expr]) -> Option<i64>) {
        self.numel = self.uniq.iter().map(|s| numel_of(s)).collect();
    }
}

#[cfg(test)]
mod tests {
    use ascendir_ir::{Graph, OpDesc};

    use super::*;

    fn dims(v: &[&str]) -> Vec<Expr> {
        v.iter()
            .map(|d| d.parse::<i64>().map_or_else(|_| Expr::sym(d), Expr::int))
            .collect()
    }

    #[test]
    fn equal_shapes_share_a_class_and_a_rewrite_merges_classes() {
        let mut g = Graph::new("g");
        let a = g.add_node(OpDesc::new("a", "Relu")).expect("add");
        let b = g.add_node(OpDesc::new("b", "Relu")).expect("add");
        let mut s = Shapes::default();
        s.set((a, 0), dims(&["s0", "64"]));
        s.set((b, 0), dims(&["s1", "64"]));
        s.set((b, 1), dims(&["s0", "64"]));
        let class = |s: &Shapes, t| s.class(t).expect("stored");
        assert_eq!(class(&s, (a, 0)), class(&s, (b, 1)));
        assert_ne!(class(&s, (a, 0)), class(&s, (b, 0)));
        assert_eq!(s.shape(class(&s, (b, 0))), Some(&dims(&["s1", "64"])));
        assert!(s.class((a, 1)).is_none() && !s.contains((a, 2)));
        // s1 := s0: the two classes become one.
        s.rewrite(|d| {
            if *d == Expr::sym("s1") {
                Expr::sym("s0")
            } else {
                d.clone()
            }
        });
        assert_eq!(class(&s, (a, 0)), class(&s, (b, 0)));
        assert_eq!(s.shape(class(&s, (b, 0))), Some(&dims(&["s0", "64"])));
        s.count(|v| Some(v.len() as i64));
        assert_eq!(s.numel(class(&s, (a, 0))), Some(Some(2)));
        // A node added in a removed node's slot has no shape.
        g.remove_node(a).expect("remove");
        let c = g.add_node(OpDesc::new("c", "Relu")).expect("add");
        assert_eq!(c.slot(), a.slot());
        assert!(s.class((c, 0)).is_none());
    }
}
