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

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}
