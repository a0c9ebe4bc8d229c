//! The loop space of a set of lowered nodes (fusion legality L4 and realization): every
//! non-unit dim of every tensor the nodes touch is a variable; the lowering's shape rule says
//! which dims are the same loop axis; the equivalence classes, ordered consistently with every
//! tensor's dim order, are the kernel's loop axes. Sizes in a class must be equal, and no
//! tensor may hold a class twice or against the order (a transpose or a dim merge): both fail.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ascendir_asc::Expr;
use ascendir_ir::NodeId;
use rustc_hash::FxHashMap;

use crate::lower::{Lowered, ShapeRule};
use crate::symbolize::{SymTable, TRef};

/// The loop axes of a cluster and each tensor's dims mapped onto them.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopSpace {
    /// Loop axis sizes, outermost first.
    pub axes: Vec<Expr>,
    /// Per tensor, per dim: the loop axis (None for a unit dim).
    pub views: FxHashMap<TRef, Vec<Option<usize>>>,
}

impl LoopSpace {
    /// The loop axes a tensor spans.
    pub fn set_of(&self, t: TRef) -> Vec<bool> {
        let mut set = vec![false; self.axes.len()];
        if let Some(v) = self.views.get(&t) {
            for a in v.iter().flatten() {
                set[*a] = true;
            }
        }
        set
    }
}

struct Uf {
    parent: Vec<usize>,
}

impl Uf {
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi] = lo;
        }
    }
}

/// Compute the loop space of `members` (topological order). The error says why the nodes'
/// dims do not map onto one set of loop axes.
pub fn loop_space(members: &[(NodeId, &Lowered)], syms: &SymTable) -> Result<LoopSpace, String> {
    // Variables: (tensor, dim) with a non-unit size.
    let mut var_of: FxHashMap<(TRef, usize), usize> = FxHashMap::default();
    let mut sizes: Vec<Expr> = Vec::new();
    let mut tensors: Vec<TRef> = Vec::new();
    let mut shape_of: FxHashMap<TRef, &Vec<Expr>> = FxHashMap::default();
    let mut add_tensor = |t: TRef,
                          var_of: &mut FxHashMap<(TRef, usize), usize>,
                          sizes: &mut Vec<Expr>|
     -> Result<(), String> {
        if shape_of.contains_key(&t) {
            return Ok(());
        }
        let s = syms
            .shape(t)
            .ok_or_else(|| "a tensor has no symbolic shape".to_string())?;
        for (j, d) in s.iter().enumerate() {
            if !d.is_int_value(1) {
                var_of.insert((t, j), sizes.len());
                sizes.push(d.clone());
            }
        }
        shape_of.insert(t, s);
        tensors.push(t);
        Ok(())
    };
    for (id, l) in members {
        // A slice's operand is read through the slice's own view: its dims are no loop axes.
        if !matches!(l.lowering.shape, ShapeRule::Slice { .. }) {
            for t in l.inputs.iter().flatten() {
                add_tensor(*t, &mut var_of, &mut sizes)?;
            }
        }
        add_tensor((*id, 0), &mut var_of, &mut sizes)?;
    }
    let mut uf = Uf {
        parent: (0..sizes.len()).collect(),
    };
    for (id, l) in members {
        let out = (*id, 0u32);
        let out_rank = shape_of[&out].len();
        let link = |uf: &mut Uf, a: (TRef, usize), b: (TRef, usize)| {
            if let (Some(&x), Some(&y)) = (var_of.get(&a), var_of.get(&b)) {
                uf.union(x, y);
            }
        };
        match &l.lowering.shape {
            ShapeRule::Broadcast { align } => {
                for (k, t) in l.inputs.iter().enumerate() {
                    let Some(t) = t else { continue };
                    let r = shape_of[t].len();
                    let start = align
                        .get(k)
                        .copied()
                        .flatten()
                        .unwrap_or(out_rank.saturating_sub(r));
                    for j in 0..r {
                        link(&mut uf, (*t, j), (out, start + j));
                    }
                }
            }
            ShapeRule::Reduce => {
                let Some(t) = l.inputs[0] else { continue };
                let r = shape_of[&t].len();
                let mut o = 0;
                for j in 0..r {
                    let reduced = l.reduce_axes.contains(&j);
                    if !reduced {
                        link(&mut uf, (t, j), (out, if l.keep_dims { j } else { o }));
                    }
                    if !reduced || l.keep_dims {
                        o += 1;
                    }
                }
            }
            ShapeRule::Slice { .. } => {}
            ShapeRule::MatVec { x2_transposed } => {
                let (Some(x1), Some(x2)) = (l.inputs[0], l.inputs.get(1).copied().flatten()) else {
                    continue;
                };
                let (r1, r2) = (shape_of[&x1].len(), shape_of[&x2].len());
                if r1 < 2 || r2 < 2 || out_rank < 2 {
                    return Err("a matrix-vector product of rank below 2".into());
                }
                // Batch dims right-aligned on the output's, M with the output's M, x2's K
                // with x1's K (x1's last dim; the output has N = 1 there).
                for (t, r) in [(x1, r1), (x2, r2)] {
                    for j in 0..r - 2 {
                        link(&mut uf, (t, j), (out, out_rank - r + j));
                    }
                }
                link(&mut uf, (x1, r1 - 2), (out, out_rank - 2));
                let k2 = if *x2_transposed { r2 - 1 } else { r2 - 2 };
                link(&mut uf, (x2, k2), (x1, r1 - 1));
            }
            ShapeRule::View => {
                let Some(t) = l.inputs[0] else { continue };
                let a: Vec<usize> = (0..shape_of[&t].len())
                    .filter(|j| var_of.contains_key(&(t, *j)))
                    .collect();
                let b: Vec<usize> = (0..out_rank)
                    .filter(|j| var_of.contains_key(&(out, *j)))
                    .collect();
                if a.len() != b.len() {
                    return Err("a view merges or splits dims".into());
                }
                for (x, y) in a.into_iter().zip(b) {
                    link(&mut uf, (t, x), (out, y));
                }
            }
        }
    }
    // Classes, numbered by first appearance.
    let mut class_of_root: FxHashMap<usize, usize> = FxHashMap::default();
    let mut class_size: Vec<Expr> = Vec::new();
    let mut var_class = vec![0usize; sizes.len()];
    for v in 0..sizes.len() {
        let r = uf.find(v);
        let c = *class_of_root.entry(r).or_insert_with(|| {
            class_size.push(sizes[v].clone());
            class_size.len() - 1
        });
        if class_size[c] != sizes[v] {
            return Err(format!(
                "dims of sizes {} and {} meet on one loop axis",
                class_size[c], sizes[v]
            ));
        }
        var_class[v] = c;
    }
    // Order: every tensor's consecutive non-unit dims give "before" edges.
    let n = class_size.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    let mut views: FxHashMap<TRef, Vec<Option<usize>>> = FxHashMap::default();
    for t in &tensors {
        let r = shape_of[t].len();
        let v: Vec<Option<usize>> = (0..r)
            .map(|j| var_of.get(&(*t, j)).map(|&x| var_class[x]))
            .collect();
        let present: Vec<usize> = v.iter().flatten().copied().collect();
        for w in present.windows(2) {
            if w[0] == w[1] {
                return Err("a tensor spans one loop axis twice".into());
            }
            if !succ[w[0]].contains(&w[1]) {
                succ[w[0]].push(w[1]);
                indeg[w[1]] += 1;
            }
        }
        views.insert(*t, v);
    }
    let mut heap: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&c| indeg[c] == 0).map(Reverse).collect();
    let mut pos = vec![usize::MAX; n];
    let mut k = 0;
    while let Some(Reverse(c)) = heap.pop() {
        pos[c] = k;
        k += 1;
        for &s in &succ[c] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                heap.push(Reverse(s));
            }
        }
    }
    if k != n {
        return Err("the tensors order their dims differently (a transpose)".into());
    }
    let mut axes = vec![Expr::int(1); n];
    for c in 0..n {
        axes[pos[c]] = class_size[c].clone();
    }
    for v in views.values_mut() {
        for x in v.iter_mut().flatten() {
            *x = pos[*x];
        }
    }
    Ok(LoopSpace { axes, views })
}
