//! Structural twins among a model's clusters: clusters whose HintGraphs differ only in their
//! nodes' names (a model's repeated layers) are scheduled and tiled once; each twin takes the
//! first one's ImplGraphs with its own names carried over
//! ([`ascendir_asc::schedule::rename_for_twin`]), or is scheduled itself where the names
//! cannot be carried over exactly. The result is byte for byte what scheduling every cluster
//! would give.

use crate::error::{ErrorKind, KindResult};
use std::sync::Arc;

use ascendir_asc::schedule::TwinSource;
use ascendir_asc::tiling::TilingData;
use ascendir_asc::AscGraph;
use ascendir_ir::{Graph, NodeId};
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::lower::{Arg, Lowered, Lowering, StepAttr};
use crate::realize::{float_attr, out_dtype, stored, Realized};
use crate::symbolize::{SymTable, TRef};

/// A built kernel: the realized HintGraph, its scheduled ImplGraphs, their tiling, and
/// whether the ImplGraphs came from the kernel cache.
pub(crate) type Art = (Realized, Vec<AscGraph>, TilingData, bool);

/// A HintGraph's structure: the digest of its
/// [`structure_key`](ascendir_asc::schedule::structure_key).
pub(crate) type Key = [u8; 32];

/// The structure of `hint`.
pub(crate) fn key(hint: &AscGraph) -> Key {
    Sha256::digest(hint.structure_bytes()).into()
}

/// The bytes of `hint` and its structure.
pub(crate) fn bytes_and_key(hint: &AscGraph) -> (Vec<u8>, Key) {
    let (bytes, structure) = hint.to_bytes_and_structure();
    (bytes, Sha256::digest(structure).into())
}

/// The kernel a structure was first built as.
pub(crate) struct Source {
    impls: TwinSource,
    tiling: TilingData,
    from_cache: bool,
}

/// What building a structure gave: its kernel, or why it does not schedule or tile.
pub(crate) type Built = Result<Arc<Source>, ErrorKind>;

/// Build outcomes by structure.
#[derive(Default)]
pub(crate) struct Memo(FxHashMap<Key, Built>);

impl Memo {
    /// The outcome recorded for structure `k`.
    pub(crate) fn get(&self, k: &Key) -> Option<&Built> {
        self.0.get(k)
    }

    /// Record the first build of structure `k`.
    pub(crate) fn record(&mut self, k: Key, built: &KindResult<Art>) {
        self.0.entry(k).or_insert_with(|| match built {
            Ok((r, impls, tiling, from_cache)) => Ok(Arc::new(Source {
                impls: TwinSource::new(r.hint.clone(), impls.clone()),
                tiling: tiling.clone(),
                from_cache: *from_cache,
            })),
            Err(e) => Err(e.clone()),
        });
    }
}

/// A twin's kernel: the names and bytes of its ImplGraphs, their tiling and cache flag.
pub(crate) type TwinKernel = (Vec<(String, Vec<u8>)>, TilingData, bool);

/// The kernel of a cluster with HintGraph `hint`, built as its twin `src` was; `None` when the
/// names cannot be carried over (the caller schedules it).
pub(crate) fn built_as(src: &Source, hint: &AscGraph) -> Option<TwinKernel> {
    let impls = src.impls.bytes_for(hint)?;
    Some((impls, src.tiling.clone(), src.from_cache))
}

/// Build outcomes (whether a cluster realizes, schedules and tiles, or why not) by what
/// realizing the cluster reads, names left out: the fuse stage's exact check of a merged
/// cluster asks here first, so a model's repeated layers are realized and keyed once per
/// structure, not once per merge of every layer.
///
/// The key ([`Verdicts::key`]) holds, per member in order: its lowering row (by its text when
/// the row was adapted to the node), kind, reduce axes and `keep_dims`; the values of the GE
/// attributes its row reads; its output's dtype, shape class, and whether it is stored (a graph
/// output, or used outside the members); per operand, the member and port producing it, or which
/// tensor read from outside it is (numbered as first read) with, at its first read, its dtype
/// and shape class. That is everything [`crate::realize::realize`] reads but names (equal keys
/// realize to structural twins, whose outcomes are one); a key is compared whole, never by a
/// digest.
///
/// The memo is bounded ([`MAX_KEY_WORDS`], [`MAX_TEXT_BYTES`]): past the bound, outcomes are
/// no longer recorded and rows get numbers of their own (a model without repeated layers asks
/// few unions twice; the bound depends on the input alone, not on timing).
#[derive(Default)]
pub(crate) struct Verdicts {
    /// Row numbers by the row's address (a row is shared by the nodes of its type, or adapted to
    /// one node).
    rows: FxHashMap<usize, u64>,
    /// Row numbers by the row's text (adapted rows that are equal get one number).
    texts: FxHashMap<String, u64>,
    /// Rows numbered so far, and the bytes of the texts kept.
    numbered: u64,
    text_bytes: usize,
    /// Outcomes by key, and the words of the keys kept.
    seen: FxHashMap<Vec<u64>, KindResult<()>>,
    key_words: usize,
}

/// The most words of keys a [`Verdicts`] keeps (32 MiB).
const MAX_KEY_WORDS: usize = 1 << 22;

/// The most bytes of row texts a [`Verdicts`] keeps (16 MiB).
const MAX_TEXT_BYTES: usize = 1 << 24;

/// An operand's tag in a [`Verdicts`] key: absent.
const ABSENT: u64 = 0;
/// An operand's tag: a member's output (its index and port follow).
const INSIDE: u64 = 1;
/// An operand's tag: a tensor read from outside, read before (its number follows).
const READ_AGAIN: u64 = 2;
/// An operand's tag: a tensor read from outside, first read (its dtype and shape follow).
const READ_FIRST: u64 = 3;

impl Verdicts {
    /// The number of row `l` (equal rows, equal numbers).
    fn row(&mut self, l: &Arc<Lowering>) -> u64 {
        let at = Arc::as_ptr(l) as usize;
        if let Some(&n) = self.rows.get(&at) {
            return n;
        }
        let text = format!("{l:?}");
        let n = match self.texts.get(&text) {
            Some(&n) => n,
            None => {
                let n = self.numbered;
                self.numbered += 1;
                if self.text_bytes.saturating_add(text.len()) <= MAX_TEXT_BYTES {
                    self.text_bytes += text.len();
                    self.texts.insert(text, n);
                }
                n
            }
        };
        self.rows.insert(at, n);
        n
    }

    /// The key of the cluster of `members` (topological; see [`Verdicts`]).
    pub(crate) fn key(
        &mut self,
        g: &Graph,
        members: &[(NodeId, &Lowered)],
        syms: &SymTable,
    ) -> Vec<u64> {
        let index: FxHashMap<NodeId, usize> = members
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (*id, i))
            .collect();
        let inside = |id: NodeId| index.contains_key(&id);
        let mut reads: FxHashMap<TRef, usize> = FxHashMap::default();
        let tensor = |t: TRef| -> [u64; 2] {
            let class = syms.shape_class(t).map_or(u64::MAX, u64::from);
            [out_dtype(g, t) as u64, class]
        };
        let mut key = Vec::with_capacity(members.len().saturating_mul(16));
        key.push(members.len() as u64);
        for (id, l) in members {
            let row = self.row(&l.lowering);
            key.extend([row, l.kind as u64, u64::from(l.keep_dims)]);
            key.push(l.reduce_axes.len() as u64);
            key.extend(l.reduce_axes.iter().map(|&a| a as u64));
            for step in &l.lowering.steps {
                for a in &step.args {
                    if let Arg::AttrScalar(name, default) = a {
                        key.push(float_attr(g, *id, name, *default).to_bits());
                    }
                }
                for a in &step.attrs {
                    if let StepAttr::FromGeFloat { ge, default, .. } = a {
                        key.push(float_attr(g, *id, ge, *default).to_bits());
                    }
                }
            }
            let own = (*id, 0);
            key.extend(tensor(own));
            key.push(u64::from(stored(g, own, &inside)));
            key.push(l.inputs.len() as u64);
            for t in &l.inputs {
                let Some(t) = *t else {
                    key.push(ABSENT);
                    continue;
                };
                if let Some(&j) = index.get(&t.0) {
                    key.extend([INSIDE, j as u64, u64::from(t.1)]);
                    continue;
                }
                let next = reads.len();
                match *reads.entry(t).or_insert(next) {
                    k if k == next => {
                        key.push(READ_FIRST);
                        key.extend(tensor(t));
                    }
                    k => key.extend([READ_AGAIN, k as u64]),
                }
            }
        }
        key
    }

    /// The outcome recorded for `key`.
    pub(crate) fn get(&self, key: &[u64]) -> Option<&KindResult<()>> {
        self.seen.get(key)
    }

    /// Record the outcome of the cluster with `key`.
    pub(crate) fn record(&mut self, key: Vec<u64>, outcome: KindResult<()>) {
        if self.seen.contains_key(&key) || self.key_words.saturating_add(key.len()) > MAX_KEY_WORDS
        {
            return;
        }
        self.key_words += key.len();
        self.seen.insert(key, outcome);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ascendir_ir::infer::{infer_graph, NoCustom};
    use ascendir_ir::{
        AttrValue, DataType, Format, Graph, NodeId, OpDesc, OutAnchor, TensorDesc, TopoMode,
        TopoOptions,
    };

    use super::{key, Verdicts};
    use crate::lower::{lower_graph, Decision};
    use crate::options::CompileOptions;
    use crate::realize::realize;
    use crate::symbolize::symbolize;

    fn desc(shape: &[i64], dtype: DataType) -> Arc<TensorDesc> {
        Arc::new(TensorDesc::new(shape, dtype, Format::ND))
    }

    /// Add `op` of type `ty` reading `inputs` (output 0 each, on the builtin prototype's
    /// input names), with one fp32 output of `shape`.
    fn op(
        g: &mut Graph,
        (name, ty, shape): (&str, &str, &[i64]),
        inputs: &[NodeId],
        attrs: &[(&str, AttrValue)],
    ) -> NodeId {
        let mut o = OpDesc::new(name, ty);
        let names: Vec<String> = ascendir_ir::registry::lookup(ty)
            .map(|p| p.inputs.iter().map(|s| s.name.clone()).collect())
            .unwrap_or_default();
        for (i, &x) in inputs.iter().enumerate() {
            let d = g.op(x).expect("input").outputs()[0].desc.clone();
            let port = names.get(i).cloned().unwrap_or_else(|| format!("x{i}"));
            o.add_input(&port, d);
        }
        o.add_output("y", desc(shape, DataType::FLOAT))
            .expect("output");
        for (k, v) in attrs {
            o.set_attr(k, v.clone());
        }
        let src: Vec<Option<OutAnchor>> = inputs
            .iter()
            .map(|&n| Some(OutAnchor { node: n, index: 0 }))
            .collect();
        g.add_node_linked(o, &src).expect("add")
    }

    #[test]
    fn equal_verdict_keys_are_the_clusters_that_realize_to_twins() {
        // Layers of (mean, sub, leaky relu, mul) over a chain: twins but for their names, and
        // layers that differ in an attribute the row reads, the input's dtype, a use outside,
        // or an operand read twice instead of two tensors.
        let mut g = Graph::new("g");
        let mut x = OpDesc::new("x", "Data");
        x.add_input("x", desc(&[6, 36], DataType::FLOAT));
        x.add_output("y", desc(&[6, 36], DataType::FLOAT))
            .expect("output");
        let x = g.add_node(x).expect("x");
        let mut h = OpDesc::new("h", "Data");
        h.add_input("x", desc(&[6, 36], DataType::FLOAT16));
        h.add_output("y", desc(&[6, 36], DataType::FLOAT16))
            .expect("output");
        let h = g.add_node(h).expect("h");
        // (The fp16 layer is last: inference carries its dtype to the layers after it.)
        let variants = ["a", "a", "slope", "outside", "twice", "a", "dtype"];
        let mut layers: Vec<Vec<NodeId>> = Vec::new();
        let mut extra_outputs = Vec::new();
        let mut cur = x;
        for (i, v) in variants.iter().enumerate() {
            let p = format!("l{i}_");
            let input = match *v {
                "dtype" => {
                    // (The layer before is a graph output.)
                    extra_outputs.push((cur, 0));
                    h
                }
                _ => cur,
            };
            let axes = [
                ("axes", AttrValue::ListInt(vec![1])),
                ("keep_dims", AttrValue::Bool(true)),
            ];
            let mean = op(
                &mut g,
                (&format!("{p}mean"), "ReduceMeanD", &[6, 1]),
                &[input],
                &axes,
            );
            let sub = op(
                &mut g,
                (&format!("{p}sub"), "Sub", &[6, 36]),
                &[input, mean],
                &[],
            );
            let slope = if *v == "slope" { 0.3 } else { 0.2 };
            let relu = op(
                &mut g,
                (&format!("{p}relu"), "LeakyRelu", &[6, 36]),
                &[sub],
                &[("negative_slope", AttrValue::Float(slope))],
            );
            let other = if *v == "twice" { relu } else { sub };
            let mul = op(
                &mut g,
                (&format!("{p}mul"), "Mul", &[6, 36]),
                &[relu, other],
                &[],
            );
            if *v == "outside" {
                extra_outputs.push((sub, 0));
            }
            layers.push(vec![mean, sub, relu, mul]);
            cur = mul;
        }
        let mut outs = vec![(cur, 0)];
        outs.extend(extra_outputs);
        g.set_outputs(&outs, &[]).expect("outputs");
        infer_graph(&mut g, &mut NoCustom).expect("infer");
        let opts = CompileOptions::default();
        let order = g
            .topo_order(&TopoOptions::new(TopoMode::Dfs))
            .expect("order");
        let syms = symbolize(&g, &order, &opts, &mut NoCustom).expect("symbolize");
        let decisions = lower_graph(&g, &order, &syms, &opts);
        let mut verdicts = Verdicts::default();
        let mut keys = Vec::new();
        for members in &layers {
            let lw: Vec<_> = members
                .iter()
                .map(|id| match decisions.get(id) {
                    Some(Decision::Lowered(l)) => (*id, l),
                    other => panic!("not lowered: {other:?}"),
                })
                .collect();
            let r = realize(&g, "cluster", &lw, &syms, &opts).expect("realize");
            keys.push((verdicts.key(&g, &lw, &syms), key(&r.hint)));
        }
        for (i, a) in keys.iter().enumerate() {
            for (j, b) in keys.iter().enumerate() {
                let twins = variants[i] == variants[j];
                assert_eq!(a.0 == b.0, twins, "verdict keys of layers {i} and {j}");
                assert_eq!(a.1 == b.1, twins, "structures of layers {i} and {j}");
            }
        }
    }
}
