//! Declarative patterns over a graph and one merged matcher for a set of them.
//!
//! A pattern is a small DAG read from a *pattern graph*: its `Data` nodes are captures (any
//! value, named by the node), its `Const` nodes constant predicates (a one-element constant:
//! every element of the matched `Const` equals that scalar; a bigger one: the same shape and
//! elements), and every other node an op predicate: the op type, the attributes listed in the
//! node's `_pattern_attrs` attribute (equal values), and its inputs (an unlinked pattern input
//! must be unlinked in the graph). The pattern's root is the value of the pattern graph's output
//! 0. The values of intermediate op nodes must have no use outside the match.
//!
//! [`PatternSet`] compiles every rule into one matcher: the pattern nodes of all rules are
//! hash-consed into one table of shared nodes (a sub-pattern two rules have in common is one
//! entry), rules are indexed by their root's op type, and one walk over the graph tries, at each
//! node, only the rules whose root type is the node's; the structural check of a shared node
//! against a graph node is memoized for the whole walk, so a sub-pattern shared by many rules is
//! checked once per graph node.

mod compile;
mod outputs;
mod rewrite;
#[cfg(test)]
mod tests;

use rustc_hash::FxHashMap;
use std::sync::Arc;

use slotmap::SecondaryMap;
use smallvec::SmallVec;

use crate::anchor::OutAnchor;
use crate::attr::AttrValue;
use crate::graph::{Graph, NodeId};
use crate::tensor::Tensor;

pub use compile::PatternError;

/// The attribute of a pattern-graph node listing the attributes the pattern constrains.
pub const PATTERN_ATTRS: &str = "_pattern_attrs";

/// What a pattern node asks of the value it is matched against.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Pred {
    /// Any value (a capture).
    Any,
    /// A `Const` whose every element equals the scalar.
    Scalar(f64),
    /// A `Const` with this shape and these elements.
    Tensor(Vec<i64>, Vec<f64>),
    /// A node of this type with these attributes.
    Op(String, Vec<(String, AttrValue)>),
}

/// A pattern node shared between rules: a predicate and its inputs (shared node, output index;
/// `None`: the input must be unlinked).
#[derive(Clone, Debug)]
pub(crate) struct Shared {
    pred: Pred,
    inputs: Vec<Option<(usize, i32)>>,
}

/// A pattern node of one rule.
#[derive(Clone, Debug)]
pub(crate) struct Local {
    /// The pattern graph node's name (a capture's name for a capture), shared with the
    /// matches that name the capture.
    name: Arc<str>,
    pred: Pred,
    /// Inputs: (local node, output index), `None` for an unlinked input.
    inputs: Vec<Option<(usize, i32)>>,
    /// The shared node it compiled to.
    shared: usize,
    /// How many times each of its outputs is read inside the pattern.
    uses: Vec<usize>,
    /// Which of its outputs are pattern outputs (read outside the match too, maybe).
    open: Vec<bool>,
}

/// One compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    name: String,
    nodes: Vec<Local>,
    root: usize,
    root_out: i32,
    /// Every output (local node, output index): the root first.
    outputs: Vec<(usize, i32)>,
    /// How each output after the first is found (`paths[k - 1]` for output `k`).
    paths: Vec<outputs::SearchPath>,
}

impl Rule {
    /// The rule's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The capture names, in pattern order.
    pub fn captures(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| n.pred == Pred::Any)
            .map(|n| &*n.name)
            .collect()
    }
}

/// One match of a rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// The rule's index in its set.
    pub rule: usize,
    /// The node whose output is the pattern's root value.
    pub root: NodeId,
    /// The root value's output index.
    pub root_out: i32,
    /// The matched op and constant nodes (not the captures), in pattern order.
    pub nodes: SmallVec<[NodeId; 4]>,
    /// Each capture's name and the value it matched.
    pub captures: SmallVec<[(Arc<str>, OutAnchor); 2]>,
    /// The value each pattern output matched, the root's first.
    pub outputs: SmallVec<[OutAnchor; 1]>,
}

/// Every rule of a set compiled into one matcher.
#[derive(Clone, Debug, Default)]
pub struct PatternSet {
    rules: Vec<Rule>,
    shared: Vec<Shared>,
    /// Rules by their root's op type.
    by_root_type: FxHashMap<String, RootIndex>,
}

/// The rules of one root op type, split by the first root input that must be a constant of
/// one scalar value: a node is tried only against the rules its constant inputs can satisfy
/// (a decision on that predicate, shared by every rule that tests it).
#[derive(Clone, Debug, Default)]
pub(crate) struct RootIndex {
    /// Rules without such an input.
    generic: Vec<usize>,
    /// (input index, scalar bits) → rules.
    by_scalar: FxHashMap<(usize, u64), Vec<usize>>,
}

/// The bits a scalar is indexed by (`-0.0` as `0.0`); `None` for NaN, which equals nothing.
pub(crate) fn scalar_key(v: f64) -> Option<u64> {
    if v.is_nan() {
        None
    } else if v == 0.0 {
        Some(0.0f64.to_bits())
    } else {
        Some(v.to_bits())
    }
}

/// A decoded constant: its shape and elements (`None`: not a numeric tensor).
type Decoded = Option<(Vec<i64>, Vec<f64>)>;

/// What one walk remembers: the structural checks, (shared node, graph node) → matches, and
/// the decoded value (shape, elements) of every `Const` a predicate looked at.
#[derive(Default)]
struct Memo {
    checks: FxHashMap<(usize, NodeId), bool>,
    consts: FxHashMap<NodeId, Decoded>,
}

impl PatternSet {
    /// The compiled rules.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// How many distinct pattern nodes the rules share (the merged matcher's size).
    pub fn shared_len(&self) -> usize {
        self.shared.len()
    }

    /// Every match in graph order of the root nodes. With `greedy`, the nodes are visited from
    /// the last back and at each the first rule (in rule order) that matches and has none of
    /// its op nodes in a match kept before wins (constants may be shared); without it, every
    /// match of every rule at every node is listed (rules in reverse order at a node).
    pub fn find_matches(&self, g: &Graph, greedy: bool) -> Vec<Match> {
        let mut memo = Memo::default();
        let mut claimed: SecondaryMap<NodeId, ()> = SecondaryMap::new();
        let mut out = Vec::new();
        // From the last node back: a rule rooted at a consumer claims its nodes before a
        // smaller rule rooted inside it. The matches are returned in graph order.
        let mut cursor = g.last();
        while let Some(id) = cursor {
            cursor = g.prev_of(id);
            let Ok(node) = g.node(id) else { continue };
            let Some(index) = self.by_root_type.get(node.op_type()) else {
                continue;
            };
            let rules = candidates(g, node, index, &mut memo);
            for r in rules {
                let rule = &self.rules[r];
                let root = &rule.nodes[rule.root];
                // Not remembered: the walk never meets a root again (it goes upstream).
                if !self.structural_at(g, root.shared, id, &mut memo, false) {
                    continue;
                }
                let Ok(m) = self.bind(g, r, id) else { continue };
                if greedy {
                    // Constants may be shared by matches; ops may not.
                    let op = |n: &&NodeId| !is_const(g, **n);
                    if m.nodes.iter().filter(op).any(|n| claimed.contains_key(*n)) {
                        continue;
                    }
                    for &n in m.nodes.iter().filter(op) {
                        claimed.insert(n, ());
                    }
                    out.push(m);
                    break;
                }
                out.push(m);
            }
        }
        out.reverse();
        out
    }

    /// Why rule `rule` does not match with its root at node `id`: the first failing
    /// predicate in words, or `None` when it matches.
    pub fn why_not(
        &self,
        g: &Graph,
        rule: usize,
        id: NodeId,
    ) -> Result<Option<String>, PatternError> {
        if rule >= self.rules.len() {
            return Err(PatternError::NoRule(rule, self.rules.len()));
        }
        if !g.contains(id) {
            return Err(PatternError::NotInGraph);
        }
        Ok(self.bind(g, rule, id).err())
    }

    /// The structural check of shared node `s` against graph node `id` (memoized): op type,
    /// attributes, constant values and inputs, recursively; no use or capture checks.
    fn structural(&self, g: &Graph, s: usize, id: NodeId, memo: &mut Memo) -> bool {
        self.structural_at(g, s, id, memo, true)
    }

    /// [`PatternSet::structural`], remembering this check's outcome when `remember` (the
    /// checks of its inputs always are).
    fn structural_at(
        &self,
        g: &Graph,
        s: usize,
        id: NodeId,
        memo: &mut Memo,
        remember: bool,
    ) -> bool {
        if let Some(&known) = memo.checks.get(&(s, id)) {
            return known;
        }
        let sh = &self.shared[s];
        if sh.pred == Pred::Any {
            // A capture takes any value: nothing to check, nothing worth remembering.
            return g.contains(id);
        }
        let ok = match g.node(id) {
            Err(_) => false,
            Ok(node) => {
                pred_ok(g, &sh.pred, id, memo)
                    && (sh.pred == Pred::Any
                        || matches!(sh.pred, Pred::Scalar(_) | Pred::Tensor(..))
                        || (node.num_in_data() >= sh.inputs.len()
                            && (sh.inputs.len()..node.num_in_data())
                                .all(|i| node.in_data_peer(i).is_none())
                            && sh.inputs.iter().enumerate().all(|(i, want)| {
                                match (want, node.in_data_peer(i)) {
                                    (None, None) => true,
                                    (Some((c, out)), Some(src)) => {
                                        !src.is_control()
                                            && src.index == *out
                                            && self.structural(g, *c, src.node, memo)
                                    }
                                    _ => false,
                                }
                            })))
            }
        };
        if remember {
            memo.checks.insert((s, id), ok);
        }
        ok
    }

    /// Match rule `r` with its root at `id`, checking every predicate in pattern order (from
    /// the root, inputs in order) and naming the first that fails.
    fn bind(&self, g: &Graph, r: usize, id: NodeId) -> Result<Match, String> {
        let rule = &self.rules[r];
        let mut st = BindState {
            nodes: smallvec::smallvec![None; rule.nodes.len()],
            captures: SmallVec::new(),
        };
        let root = OutAnchor::data(id, rule.root_out as usize);
        let node = g.node(id).map_err(|e| e.to_string())?;
        if (rule.root_out as usize) >= node.num_out_data() {
            return Err(format!(
                "{}: '{}' has no output {}",
                describe(&rule.nodes[rule.root]),
                node.name(),
                rule.root_out
            ));
        }
        self.bind_node(g, rule, rule.root, root, Place::Root, &mut st)?;
        let st = if rule.outputs.len() > 1 {
            outputs::bind_outputs(self, g, rule, st)?
        } else {
            st
        };
        let out_values = rule
            .outputs
            .iter()
            .map(|&(t, out)| st.nodes[t].map(|n| OutAnchor::data(n, out.max(0) as usize)))
            .collect::<Option<SmallVec<_>>>()
            .ok_or_else(|| "an output of the pattern is not bound".to_string())?;
        let mut nodes = SmallVec::new();
        let mut captures = SmallVec::new();
        for (i, local) in rule.nodes.iter().enumerate() {
            match (&local.pred, st.nodes[i]) {
                (Pred::Any, _) => {
                    if let Some(v) = st.capture(&local.name) {
                        captures.push((local.name.clone(), v));
                    }
                }
                (_, Some(n)) => nodes.push(n),
                (_, None) => {}
            }
        }
        Ok(Match {
            rule: r,
            root: id,
            root_out: rule.root_out,
            nodes,
            captures,
            outputs: out_values,
        })
    }

    pub(crate) fn bind_node<'r>(
        &self,
        g: &Graph,
        rule: &'r Rule,
        local: usize,
        v: OutAnchor,
        place: Place<'_>,
        st: &mut BindState<'r>,
    ) -> Result<(), String> {
        let ln = &rule.nodes[local];
        if ln.pred == Pred::Any {
            return match st.capture(&ln.name) {
                Some(prev) if prev != v => Err(format!(
                    "{place}capture '{}': reads {}, but '{}' was bound to {} before",
                    ln.name,
                    value_name(g, v),
                    ln.name,
                    value_name(g, prev)
                )),
                Some(_) => Ok(()),
                None => {
                    st.captures.push((&ln.name, v));
                    Ok(())
                }
            };
        }
        if let Some(prev) = st.nodes[local] {
            if prev != v.node {
                return Err(format!(
                    "{place}{}: reads '{}', but the pattern node was matched to '{}' before",
                    describe(ln),
                    node_name(g, v.node),
                    node_name(g, prev)
                ));
            }
            return Ok(());
        }
        check_pred(g, &ln.pred, v.node).map_err(|e| format!("{place}{}: {e}", describe(ln)))?;
        st.nodes[local] = Some(v.node);
        if let Pred::Op(..) = ln.pred {
            self.bind_inputs(g, rule, local, v.node, st)?;
            if local != rule.root {
                check_uses(g, ln, v.node).map_err(|e| format!("{}: {e}", describe(ln)))?;
            }
        }
        Ok(())
    }

    fn bind_inputs<'r>(
        &self,
        g: &Graph,
        rule: &'r Rule,
        local: usize,
        id: NodeId,
        st: &mut BindState<'r>,
    ) -> Result<(), String> {
        let ln = &rule.nodes[local];
        let node = g.node(id).map_err(|e| e.to_string())?;
        for i in 0..ln.inputs.len().max(node.num_in_data()) {
            // Formatted only into an error: the success path allocates nothing here.
            let place = Place::Input(i, ln);
            match (ln.inputs.get(i).copied().flatten(), node.in_data_peer(i)) {
                (None, None) => {}
                (None, Some(src)) => {
                    return Err(format!(
                        "{place}is linked to {}, the pattern leaves it unlinked",
                        value_name(g, src)
                    ))
                }
                (Some(_), None) => return Err(format!("{place}is not linked")),
                (Some(_), Some(src)) if src.is_control() => {
                    return Err(format!("{place}is a control link"))
                }
                (Some((c, out)), Some(src)) => {
                    if src.index != out && rule.nodes[c].pred != Pred::Any {
                        return Err(format!(
                            "{place}reads output {} of '{}', not output {out}",
                            src.index,
                            node_name(g, src.node)
                        ));
                    }
                    self.bind_node(g, rule, c, src, place, st)?;
                }
            }
        }
        Ok(())
    }
}

#[derive(Clone)]
pub(crate) struct BindState<'r> {
    nodes: SmallVec<[Option<NodeId>; 8]>,
    /// The captures bound so far (a handful: searched in order).
    captures: SmallVec<[(&'r str, OutAnchor); 4]>,
}

impl BindState<'_> {
    fn capture(&self, name: &str) -> Option<OutAnchor> {
        self.captures
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
}

/// Where a pattern node is bound, for error messages: the root, or input `i` of a node.
#[derive(Clone, Copy)]
pub(crate) enum Place<'a> {
    Root,
    Input(usize, &'a Local),
    /// Output `k` of the pattern (after the first).
    Output(usize),
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Root => Ok(()),
            Place::Input(i, ln) => write!(f, "input {i} of {}: ", describe(ln)),
            Place::Output(k) => write!(f, "output {k}: "),
        }
    }
}

pub(crate) fn describe(n: &Local) -> String {
    match &n.pred {
        Pred::Any => format!("capture '{}'", n.name),
        Pred::Scalar(_) | Pred::Tensor(..) => format!("Const '{}'", n.name),
        Pred::Op(ty, _) => format!("{ty} '{}'", n.name),
    }
}

fn node_name(g: &Graph, id: NodeId) -> String {
    g.op(id).map(|o| o.name().to_string()).unwrap_or_default()
}

fn value_name(g: &Graph, v: OutAnchor) -> String {
    format!("output {} of '{}'", v.index, node_name(g, v.node))
}

fn is_const(g: &Graph, id: NodeId) -> bool {
    g.node(id)
        .map(|n| matches!(n.op_type(), "Const" | "Constant"))
        .unwrap_or(false)
}

/// The rules of `index` worth trying at `node`, in rule order: the generic ones and those
/// whose scalar input the node's constant inputs hold.
fn candidates(
    g: &Graph,
    node: &crate::graph::NodeData,
    index: &RootIndex,
    memo: &mut Memo,
) -> SmallVec<[usize; 8]> {
    let mut rules: SmallVec<[usize; 8]> = SmallVec::from_slice(&index.generic);
    if !index.by_scalar.is_empty() {
        for (i, src) in node.in_data_peers().enumerate() {
            let Some(src) = src else { continue };
            let Some(key) = uniform_value(g, src.node, memo).and_then(scalar_key) else {
                continue;
            };
            if let Some(more) = index.by_scalar.get(&(i, key)) {
                rules.extend_from_slice(more);
            }
        }
        rules.sort_unstable();
        rules.dedup();
    }
    rules
}

/// The one value every element of a `Const` node equals, if any (decoded once per walk).
fn uniform_value(g: &Graph, id: NodeId, memo: &mut Memo) -> Option<f64> {
    let node = g.node(id).ok()?;
    if !matches!(node.op_type(), "Const" | "Constant") {
        return None;
    }
    let (_, v) = decoded(node, id, memo).as_ref()?;
    let first = *v.first()?;
    v.iter().all(|x| *x == first).then_some(first)
}

fn decoded<'m>(node: &crate::graph::NodeData, id: NodeId, memo: &'m mut Memo) -> &'m Decoded {
    memo.consts
        .entry(id)
        .or_insert_with(|| match node.op().attr("value") {
            Some(AttrValue::Tensor(t)) => compile::tensor_values(t)
                .ok()
                .map(|v| (t.desc.shape.to_vec(), v)),
            _ => None,
        })
}

/// [`check_pred`] without the words: the matcher's hot path allocates nothing for a miss, and
/// decodes a constant once per walk.
fn pred_ok(g: &Graph, pred: &Pred, id: NodeId, memo: &mut Memo) -> bool {
    let Ok(node) = g.node(id) else { return false };
    match pred {
        Pred::Any => true,
        Pred::Op(ty, attrs) => {
            node.op_type() == ty
                && attrs
                    .iter()
                    .all(|(k, want)| node.op().attr(k) == Some(want))
        }
        Pred::Scalar(_) | Pred::Tensor(..) => {
            if !matches!(node.op_type(), "Const" | "Constant") {
                return false;
            }
            match (pred, decoded(node, id, memo)) {
                (Pred::Scalar(w), Some((_, v))) => !v.is_empty() && v.iter().all(|x| x == w),
                (Pred::Tensor(shape, w), Some((have, v))) => have == shape && v == w,
                _ => false,
            }
        }
    }
}

/// The local predicate of a pattern node against graph node `id` (no inputs).
fn check_pred(g: &Graph, pred: &Pred, id: NodeId) -> Result<(), String> {
    let node = g.node(id).map_err(|e| e.to_string())?;
    match pred {
        Pred::Any => Ok(()),
        Pred::Op(ty, attrs) => {
            if node.op_type() != ty {
                return Err(format!("op type is {}, not {ty}", node.op_type()));
            }
            for (key, want) in attrs {
                match node.op().attr(key) {
                    None => return Err(format!("attribute '{key}' is not set")),
                    Some(have) if have != want => {
                        return Err(format!("attribute '{key}' is {have:?}, not {want:?}"))
                    }
                    Some(_) => {}
                }
            }
            Ok(())
        }
        Pred::Scalar(_) | Pred::Tensor(..) => {
            if !matches!(node.op_type(), "Const" | "Constant") {
                return Err(format!("op type is {}, not Const", node.op_type()));
            }
            let Some(AttrValue::Tensor(t)) = node.op().attr("value") else {
                return Err("the Const has no tensor value".into());
            };
            check_const(pred, t)
        }
    }
}

fn check_const(pred: &Pred, t: &Tensor) -> Result<(), String> {
    let vals = compile::tensor_values(t)?;
    match pred {
        Pred::Scalar(want) => match vals.iter().find(|v| *v != want) {
            None if !vals.is_empty() => Ok(()),
            None => Err("Const is empty".into()),
            Some(v) => Err(format!("Const value is {v:?}, not {want:?}")),
        },
        Pred::Tensor(shape, want) => {
            if t.desc.shape.as_slice() != shape.as_slice() {
                return Err(format!(
                    "Const shape is {:?}, not {shape:?}",
                    t.desc.shape.as_slice()
                ));
            }
            match vals.iter().zip(want).position(|(a, b)| a != b) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "Const element {i} is {:?}, not {:?}",
                    vals[i], want[i]
                )),
            }
        }
        _ => Ok(()),
    }
}

/// An intermediate node's outputs are read only inside the match (as often as the pattern
/// reads them) and are no graph outputs.
fn check_uses(g: &Graph, ln: &Local, id: NodeId) -> Result<(), String> {
    let node = g.node(id).map_err(|e| e.to_string())?;
    for i in 0..node.num_out_data() {
        let want = ln.uses.get(i).copied().unwrap_or(0);
        let have = node.out_data_peers(i).len();
        if ln.open.get(i).copied().unwrap_or(false) {
            // A pattern output: read inside the match as the pattern says, and maybe outside.
            if have < want {
                return Err(format!(
                    "output {i} of '{}' has {have} uses, the pattern reads it {want} times",
                    node.name()
                ));
            }
            continue;
        }
        if have != want {
            return Err(format!(
                "output {i} of '{}' has {have} uses, the pattern allows {want}",
                node.name()
            ));
        }
        if g.outputs().iter().any(|&(n, k)| n == id && k as usize == i) {
            return Err(format!("output {i} of '{}' is a graph output", node.name()));
        }
    }
    Ok(())
}
