//! The loop space of a set of lowered nodes (fusion legality L4 and realization): every
//! non-unit dim of every tensor the nodes touch is a variable; the lowering's shape rule says
//! which dims are the same loop axis; the equivalence classes, ordered consistently with every
//! tensor's dim order, are the kernel's loop axes. Sizes in a class must be equal, and no
//! tensor may hold a class twice or against the order (a transpose or a dim merge): both fail.

use crate::error::{ErrorKind, KindResult};
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
    build(members, syms, true).map(|l| {
        l.unwrap_or_else(|| LoopSpace {
            axes: Vec::new(),
            views: FxHashMap::default(),
        })
    })
}

/// Whether `members` have one loop space ([`loop_space`] without building it: the fusion
/// check's L4).
pub fn has_loop_space(members: &[(NodeId, &Lowered)], syms: &SymTable) -> KindResult<()> {
    build(members, syms, false)
        .map(|_| ())
        .map_err(ErrorKind::Other)
}

/// The tensors the members touch, in first-touch order, and a variable per non-unit dim.
struct Vars<'a> {
    index: FxHashMap<TRef, usize>,
    tensors: Vec<TRef>,
    shapes: Vec<&'a [Expr]>,
    /// Per tensor, where its dims start in `var_at`.
    first: Vec<usize>,
    /// Per tensor dim: its variable (None for a unit dim).
    var_at: Vec<Option<usize>>,
    /// Per variable: its size.
    sizes: Vec<&'a Expr>,
}

impl<'a> Vars<'a> {
    fn add(&mut self, t: TRef, syms: &'a SymTable) -> Result<(), String> {
        if self.index.contains_key(&t) {
            return Ok(());
        }
        let s = syms
            .shape(t)
            .ok_or_else(|| "a tensor has no symbolic shape".to_string())?;
        self.index.insert(t, self.tensors.len());
        self.tensors.push(t);
        self.shapes.push(s);
        self.first.push(self.var_at.len());
        for d in s {
            if d.is_int_value(1) {
                self.var_at.push(None);
            } else {
                self.var_at.push(Some(self.sizes.len()));
                self.sizes.push(d);
            }
        }
        Ok(())
    }

    /// The tensor's index.
    fn of(&self, t: TRef) -> Result<usize, String> {
        self.index
            .get(&t)
            .copied()
            .ok_or_else(|| "a tensor has no symbolic shape".to_string())
    }

    fn rank(&self, ti: usize) -> usize {
        self.shapes[ti].len()
    }

    fn var(&self, ti: usize, j: usize) -> Option<usize> {
        if j < self.rank(ti) {
            self.var_at[self.first[ti] + j]
        } else {
            None
        }
    }
}

fn build(
    members: &[(NodeId, &Lowered)],
    syms: &SymTable,
    want: bool,
) -> Result<Option<LoopSpace>, String> {
    let mut vs = Vars {
        index: FxHashMap::default(),
        tensors: Vec::new(),
        shapes: Vec::new(),
        first: Vec::new(),
        var_at: Vec::new(),
        sizes: Vec::new(),
    };
    for (id, l) in members {
        // A slice's operand is read through the slice's own view, a concat's operands each
        // through a part of the output's, a gather's from memory by index: their dims are no
        // loop axes.
        if !matches!(
            l.lowering.shape,
            ShapeRule::Slice { .. } | ShapeRule::Concat { .. } | ShapeRule::Gather { .. }
        ) {
            for t in l.inputs.iter().flatten() {
                vs.add(*t, syms)?;
            }
        }
        vs.add((*id, 0), syms)?;
    }
    let mut uf = Uf {
        parent: (0..vs.sizes.len()).collect(),
    };
    // Transpose outputs (tensor indices): stored in a permuted order.
    let mut permuted: Vec<usize> = Vec::new();
    let link = |uf: &mut Uf, a: (usize, usize), b: (usize, usize)| {
        if let (Some(x), Some(y)) = (vs.var(a.0, a.1), vs.var(b.0, b.1)) {
            uf.union(x, y);
        }
    };
    for (id, l) in members {
        let out = vs.of((*id, 0u32))?;
        let out_rank = vs.rank(out);
        match &l.lowering.shape {
            ShapeRule::Broadcast { align } => {
                for (k, t) in l.inputs.iter().enumerate() {
                    let Some(t) = t else { continue };
                    let t = vs.of(*t)?;
                    let r = vs.rank(t);
                    let start = align
                        .get(k)
                        .copied()
                        .flatten()
                        .unwrap_or(out_rank.saturating_sub(r));
                    for j in 0..r {
                        link(&mut uf, (t, j), (out, start + j));
                    }
                }
            }
            ShapeRule::Reduce => {
                let Some(t) = l.inputs[0] else { continue };
                let t = vs.of(t)?;
                let r = vs.rank(t);
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
            ShapeRule::Slice { .. } | ShapeRule::Concat { .. } | ShapeRule::Gather { .. } => {}
            ShapeRule::Transpose { perm } => {
                let Some(t) = l.inputs[0] else { continue };
                let t = vs.of(t)?;
                let r = vs.rank(t);
                if perm.len() != r || out_rank != r {
                    return Err("a transpose's permutation does not match its rank".into());
                }
                for (j, &p) in perm.iter().enumerate() {
                    let p = usize::try_from(if p < 0 { p + r as i64 } else { p })
                        .map_err(|_| "a transpose axis".to_string())?;
                    link(&mut uf, (t, p), (out, j));
                }
                // The output is stored in its own dim order: it sets no loop order.
                permuted.push(out);
            }
            ShapeRule::MatVec { x2_transposed } => {
                let (Some(x1), Some(x2)) = (l.inputs[0], l.inputs.get(1).copied().flatten()) else {
                    continue;
                };
                let (x1, x2) = (vs.of(x1)?, vs.of(x2)?);
                let (r1, r2) = (vs.rank(x1), vs.rank(x2));
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
                let t = vs.of(t)?;
                let a: Vec<usize> = (0..vs.rank(t)).filter_map(|j| vs.var(t, j)).collect();
                let b: Vec<usize> = (0..out_rank).filter_map(|j| vs.var(out, j)).collect();
                if a.len() != b.len() {
                    return Err("a view merges or splits dims".into());
                }
                for (x, y) in a.into_iter().zip(b) {
                    uf.union(x, y);
                }
            }
        }
    }
    // Classes, numbered by first appearance.
    let mut class_of_root: FxHashMap<usize, usize> = FxHashMap::default();
    let mut class_size: Vec<&Expr> = Vec::new();
    let mut var_class = Vec::with_capacity(vs.sizes.len());
    for (v, &size) in vs.sizes.iter().enumerate() {
        let r = uf.find(v);
        let c = *class_of_root.entry(r).or_insert_with(|| {
            class_size.push(size);
            class_size.len() - 1
        });
        if class_size[c] != size {
            return Err(format!(
                "dims of sizes {} and {size} meet on one loop axis",
                class_size[c]
            ));
        }
        var_class.push(c);
    }
    // Order: every tensor's consecutive non-unit dims give "before" edges.
    let n = class_size.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    for ti in 0..vs.tensors.len() {
        if permuted.contains(&ti) {
            continue;
        }
        let mut prev: Option<usize> = None;
        for j in 0..vs.rank(ti) {
            let Some(v) = vs.var(ti, j) else { continue };
            let c = var_class[v];
            if let Some(p) = prev {
                if p == c {
                    return Err("a tensor spans one loop axis twice".into());
                }
                if !succ[p].contains(&c) {
                    succ[p].push(c);
                    indeg[c] += 1;
                }
            }
            prev = Some(c);
        }
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
    if !want {
        return Ok(None);
    }
    let mut axes = vec![Expr::int(1); n];
    for c in 0..n {
        axes[pos[c]] = class_size[c].clone();
    }
    let mut views: FxHashMap<TRef, Vec<Option<usize>>> = FxHashMap::default();
    for (ti, t) in vs.tensors.iter().enumerate() {
        let v = (0..vs.rank(ti))
            .map(|j| vs.var(ti, j).map(|x| pos[var_class[x]]))
            .collect();
        views.insert(*t, v);
    }
    Ok(Some(LoopSpace { axes, views }))
}
