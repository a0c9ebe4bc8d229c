//! A per-graph string table, so that a million nodes share one copy of "Add".

use std::sync::Arc;

use hashbrown::HashSet;
use rustc_hash::FxBuildHasher;

/// Interned strings of one graph.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    table: HashSet<Arc<str>, FxBuildHasher>,
}

impl Interner {
    /// The shared copy of `s`.
    pub fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(existing) = self.table.get(s) {
            return existing.clone();
        }
        let sym: Arc<str> = Arc::from(s);
        self.table.insert(sym.clone());
        sym
    }

    /// The shared copy of `sym` (the argument itself when it is new).
    pub fn intern_sym(&mut self, sym: &Arc<str>) -> Arc<str> {
        if let Some(existing) = self.table.get(&**sym) {
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
