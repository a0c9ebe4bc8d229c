//! A per-graph string table, so that a million nodes share one copy of "Add".

use hashbrown::HashSet;
use rustc_hash::FxBuildHasher;

use crate::op_desc::Sym;

/// Interned strings of one graph.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    table: HashSet<Sym, FxBuildHasher>,
}

impl Interner {
    /// The shared copy of `s`.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(existing) = self.table.get(s) {
            return existing.clone();
        }
        let sym = Sym::new(s);
        self.table.insert(sym.clone());
        sym
    }

    /// The shared copy of `sym` (the argument itself when it is new).
    pub fn intern_sym(&mut self, sym: &Sym) -> Sym {
        if let Some(existing) = self.table.get(sym.as_str()) {
            return existing.clone();
        }
        self.table.insert(sym.clone());
        sym.clone()
    }

    /// Make `sym` the shared copy in place; a no-op (no reference-count traffic) when it already
    /// is one, which is the common case for builders that intern up front.
    pub fn intern_in_place(&mut self, sym: &mut Sym) {
        match self.table.get(sym.as_str()) {
            Some(existing) if Sym::ptr_eq(existing, sym) => {}
            Some(existing) => *sym = existing.clone(),
            None => {
                self.table.insert(sym.clone());
            }
        }
    }

    /// The interned strings, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Sym> {
        self.table.iter()
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_in_place_shares_one_copy() {
        let mut table = Interner::default();
        let first = table.intern("Add");
        let mut same = first.clone();
        table.intern_in_place(&mut same);
        assert!(Sym::ptr_eq(&same, &first));
        let mut other = Sym::new("Add");
        assert!(!Sym::ptr_eq(&other, &first));
        table.intern_in_place(&mut other);
        assert!(Sym::ptr_eq(&other, &first));
        let mut fresh = Sym::new("Relu");
        table.intern_in_place(&mut fresh);
        assert!(Sym::ptr_eq(&table.intern("Relu"), &fresh));
        assert_eq!(table.len(), 2);
    }
}
