//! The fuse stage's set-up: one walk of the topological order builds every table the rounds
//! read (successors, consumers, cluster records, candidate groups, the chain index).

use crate::error::KindResult;
use ascendir_ir::{Graph, NodeId};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::{smallvec, SmallVec};

use super::reach;
use super::tables::{key_and_bytes, narrow, place_by_key, runs, widen, Csr, Positions, NONE, SKIP};
use super::{Cluster, Fuser, Read, LABEL_KEYS};
use crate::lower::{Decision, Decisions, Kind, Lowered};
use crate::options::CompileOptions;
use crate::symbolize::SymTable;

/// The candidate groups of the fuse stage from `touch`, each (key, port, lowered node) with
/// which a lowered node touches a tensor (its output 0, or a tensor it reads): the entries
/// grouped by key (the producer's position), each group in lowered order, only the groups of
/// two or more entries (a tensor one node touches pairs nothing); with each group's producer
/// (its lowered index by `li_of_pos`, `u32::MAX` for none or a producer out of the order).
fn touch_groups(touch: Vec<(u32, u32, u32)>, li_of_pos: &[u32]) -> (Csr<(u32, u32)>, Vec<u32>) {
    // Placed by key, each key's entries in the order pushed (lowered order). A key is a
    // position (below `n`) or UNORDERED, which comes after every position (bucket `n`).
    let n = li_of_pos.len();
    let mut placed = vec![(0u32, 0u32); touch.len()];
    let key = |t: &(u32, u32, u32)| (t.0 as usize).min(n);
    let ends = place_by_key(&touch, n + 1, key, |t| (t.1, t.2), &mut placed);
    drop(touch);
    let mut groups = Csr::with_capacity(0);
    let mut prod = Vec::new();
    for (k, run) in runs(&ends) {
        if run.len() > 1 {
            groups.push(placed[run].iter().copied());
            prod.push(li_of_pos.get(k).copied().unwrap_or(u32::MAX));
        }
    }
    (groups, prod)
}

/// How many nodes ahead of its own the set-up's walk asks for a node's table entries.
const WALK_AHEAD: usize = 8;

/// The most elements a reduced row may have to count as all-load (norm-like).
const ALL_LOAD_ROW: i64 = 8192;

/// A reduction whose reduced axes have a constant extent of at most `ALL_LOAD_ROW` elements:
/// the whole row is loaded at once, like softmax and layer norm (GE's "norm-like, all-load").
fn all_load_row(l: &Lowered, syms: &SymTable) -> bool {
    let Some(Some(x)) = l.inputs.first() else {
        return false;
    };
    let Some(shape) = syms.shape(*x) else {
        return false;
    };
    let mut n: i64 = 1;
    for &a in &l.reduce_axes {
        match shape.get(a).and_then(|d| d.as_i64()) {
            Some(d) => n = n.saturating_mul(d),
            None => return false,
        }
    }
    !l.reduce_axes.is_empty() && n <= ALL_LOAD_ROW
}

impl<'a, T> Fuser<'a, T> {
    /// Set up over nodes in topological `order` with their stage-5 decisions.
    pub fn new(
        g: &'a Graph,
        order: &[NodeId],
        decisions: &'a Decisions,
        syms: &'a SymTable,
        opts: &'a CompileOptions,
        exact: &'a dyn Fn(&[NodeId]) -> KindResult<T>,
    ) -> Fuser<'a, T> {
        let mut pos = Positions::new(order);
        let mut li_of_pos = vec![u32::MAX; order.len()];
        let mut lowered = Vec::new();
        // At least the entries of `touch` below: per lowered node its output and its inputs.
        let mut n_touch = 0usize;
        for (p, id) in order.iter().enumerate() {
            if let Some(Decision::Lowered(l)) = decisions.get(id) {
                li_of_pos[p] = narrow(lowered.len());
                lowered.push((*id, l));
                n_touch = n_touch.saturating_add(l.inputs.len() + 1);
            }
        }
        let graph_outs: FxHashSet<NodeId> = g
            .outputs()
            .iter()
            .filter(|&&(_, i)| i == 0)
            .map(|&(n, _)| n)
            .collect();
        let mut label_ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut labels_of = |id: NodeId| {
            LABEL_KEYS.map(|key| {
                let Some(v) = g.op(id).ok().and_then(|o| o.attr(key)) else {
                    return 0;
                };
                let n = label_ids.len() as u32 + 1;
                *label_ids.entry(format!("{v:?}")).or_insert(n)
            })
        };
        // One walk of the order builds every table, a node's graph record read once: its
        // successors; for a lowered node its consumers, its output's candidate key and bytes
        // (recorded in its place, [`Positions`]: a later read of it finds them there with the
        // producer's position, in one look-up, instead of in the graph and the symbol table)
        // and its cluster.
        let n_lowered = lowered.len();
        let mut succ = Csr::with_capacity(order.len());
        let mut consumers = Csr::with_capacity(n_lowered);
        let mut clusters: Vec<Option<Cluster>> = Vec::with_capacity(n_lowered);
        let mut lpos: Vec<u32> = Vec::with_capacity(n_lowered);
        let mut label_class: FxHashMap<[u32; 2], u32> = FxHashMap::default();
        let mut label_classes: Vec<[u32; 2]> = Vec::new();
        // Per tensor a lowered node touches (its output 0, what it reads), the tensor's key,
        // port and the node.
        let mut touch: Vec<(u32, u32, u32)> = Vec::with_capacity(n_touch);
        let mut list: Vec<u32> = Vec::new();
        for (p, id) in order.iter().enumerate() {
            // The positions this walk asks for are at random (a graph's long edges): those of
            // the node a few steps ahead, its successors' and its operands', are asked for now.
            if let Some(&ahead) = order.get(p + WALK_AHEAD) {
                for s in g.successors(ahead) {
                    pos.prefetch(s);
                }
                let l = li_of_pos
                    .get(p + WALK_AHEAD)
                    .and_then(|&i| lowered.get(widen(i)));
                for t in l.into_iter().flat_map(|(_, l)| l.inputs.iter().flatten()) {
                    pos.prefetch(t.0);
                }
            }
            list.clear();
            list.extend(g.successors(*id).filter_map(|s| pos.get(s)).map(narrow));
            list.sort_unstable();
            list.dedup();
            succ.push(list.iter().copied());
            let i = widen(li_of_pos[p]);
            let Some(&(_, l)) = lowered.get(i) else {
                continue;
            };
            list.clear();
            if let Ok(n) = g.node(*id) {
                let peers = n.out_data_peers(0);
                let inside = peers.iter().filter(|q| q.node != *id);
                list.extend(inside.map(|q| pos.get(q.node).map_or(u32::MAX, narrow)));
            }
            if graph_outs.contains(id) {
                list.push(narrow(NONE));
            }
            consumers.push(list.iter().copied());
            let own = (*id, 0);
            let (own_key, own_bytes) = key_and_bytes(g, &pos, syms, own);
            pos.met(*id, own_key, own_bytes);
            let li = narrow(i);
            // The tensors the node touches, each by its key, port and the node: its output 0,
            // then what it reads (the checks never read the keys: they stay here).
            let mut touches = |key: u32, port: u32| {
                if key != SKIP {
                    touch.push((key, port, li));
                }
            };
            touches(own_key, 0);
            let mut reads: SmallVec<[Read; 2]> = SmallVec::new();
            for t in l.inputs.iter().flatten() {
                // Slots are 32-bit (`NodeId::slot`).
                let (slot, port) = (narrow(t.0.slot()), t.1);
                if t.0 != *id && !reads.iter().any(|r| r.tensor() == (slot, port)) {
                    // A lowered producer comes before its readers in the order: it is met.
                    let (at, met) = pos.output(t.0);
                    let (key, bytes) = match met {
                        Some(o) if t.1 == 0 => o,
                        _ => key_and_bytes(g, &pos, syms, *t),
                    };
                    touches(key, port);
                    reads.push(Read {
                        slot,
                        port,
                        pos: at,
                        bytes,
                    });
                }
            }
            let labels = labels_of(*id);
            let label = *label_class.entry(labels).or_insert_with(|| {
                label_classes.push(labels);
                narrow(label_classes.len() - 1)
            });
            let writes = if consumers.list(i).is_empty() {
                SmallVec::new()
            } else {
                smallvec![i]
            };
            clusters.push(Some(Cluster {
                members: smallvec![i],
                min_ord: narrow(p),
                max_ord: narrow(p),
                steps: u32::try_from(l.compute_steps()).unwrap_or(u32::MAX),
                reduces: l.kind == Kind::Reduce,
                plain_reduces: l.is_plain_reduce() && !all_load_row(l, syms),
                slices: matches!(
                    l.kind,
                    Kind::Slice | Kind::Concat | Kind::Gather | Kind::Transpose
                ),
                reads,
                writes,
                uniform: syms.shape_class(own).filter(|_| l.kind == Kind::Pointwise),
                version: 0,
                label,
            }));
            lpos.push(narrow(p));
        }
        let reach = reach::Reach::new(&succ, |p| li_of_pos[p] != u32::MAX);
        let (tensors, tensor_prod) = touch_groups(touch, &li_of_pos);
        Fuser {
            g,
            syms,
            opts,
            exact,
            pos,
            lpos,
            li_of_pos,
            parent: (0..lowered.len()).map(narrow).collect(),
            lowered,
            succ,
            reach,
            clusters,
            visit: vec![0; order.len()],
            epoch: 0,
            consumers,
            label_classes,
            tensors,
            tensor_prod,
            loop_spaces: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tables::{xorshift, UNORDERED};
    use super::touch_groups;

    #[test]
    fn groups_are_the_keys_touched_twice_in_key_then_push_order() {
        let mut rng = xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u64| (rng() % m) as u32;
        for n in [0usize, 1, 9, 500] {
            let li_of_pos: Vec<u32> = (0..n as u32)
                .map(|p| if p % 3 == 0 { u32::MAX } else { p / 2 })
                .collect();
            let touch: Vec<(u32, u32, u32)> = (0..4 * n + 3)
                .map(|i| {
                    let key = if next(10) == 0 || n == 0 {
                        UNORDERED
                    } else {
                        next(n as u64)
                    };
                    (key, next(2), i as u32)
                })
                .collect();
            // The reference: a stable sort by key, runs of two or more.
            let mut sorted = touch.clone();
            sorted.sort_by_key(|t| t.0);
            let mut want_groups: Vec<Vec<(u32, u32)>> = Vec::new();
            let mut want_prod = Vec::new();
            for run in sorted.chunk_by(|x, y| x.0 == y.0).filter(|r| r.len() > 1) {
                want_groups.push(run.iter().map(|t| (t.1, t.2)).collect());
                want_prod.push(
                    li_of_pos
                        .get(run[0].0 as usize)
                        .copied()
                        .unwrap_or(u32::MAX),
                );
            }
            let (groups, prod) = touch_groups(touch, &li_of_pos);
            let got: Vec<Vec<(u32, u32)>> =
                (0..prod.len()).map(|g| groups.list(g).to_vec()).collect();
            assert_eq!(got, want_groups, "n = {n}");
            assert_eq!(prod, want_prod, "n = {n}");
        }
    }
}
