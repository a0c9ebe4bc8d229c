//! `ascendir._core.PatternSet`: the merged pattern matcher of `ascendir-ir` (`pattern`), for
//! `ascendir.rewriter`.

use ascendir_ir::pattern::PatternSet;
use ascendir_ir::{IrError, OutAnchor};
use pyo3::prelude::*;

use super::graph::PyGraph;
use super::node::PyNode;
use super::value::PyValue;
use crate::algo::{root_of, tree_index};

/// One match as Python sees it: (rule index, root node, root output index, matched nodes,
/// [(capture name, value)], [the value of each pattern output, the root's first]).
type PyMatch = (
    usize,
    Py<PyNode>,
    i32,
    Vec<Py<PyNode>>,
    Vec<(String, PyValue)>,
    Vec<PyValue>,
);

fn pattern_err(e: ascendir_ir::pattern::PatternError) -> PyErr {
    crate::errors::py_err(IrError::InvalidArgument(e.to_string()))
}

/// Rules compiled from pattern graphs into one matcher.
#[pyclass(name = "PatternSet", module = "ascendir", frozen)]
#[derive(Debug)]
pub struct PyPatternSet {
    set: PatternSet,
}

#[pymethods]
impl PyPatternSet {
    /// Compile `(name, pattern graph)` pairs; rule `i` is the `i`-th.
    #[new]
    fn new(patterns: Vec<(String, Bound<'_, PyGraph>)>) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            let graphs = patterns
                .iter()
                .map(|(name, g)| Ok((name.clone(), PyGraph::read(g, |g| g.clone())?)))
                .collect::<PyResult<Vec<_>>>()?;
            let refs: Vec<(String, &ascendir_ir::Graph)> =
                graphs.iter().map(|(n, g)| (n.clone(), g)).collect();
            let set = PatternSet::new(&refs).map_err(pattern_err)?;
            Ok(PyPatternSet { set })
        })
    }

    /// The number of rules.
    fn __len__(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.set.rules().len())
    }

    /// The number of distinct pattern nodes after merging the rules.
    #[getter]
    fn shared_len(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.set.shared_len())
    }

    /// The capture names of rule `rule`, in pattern order.
    fn captures(&self, rule: usize) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            let r = self.set.rules().get(rule).ok_or_else(|| {
                crate::errors::py_err(IrError::NotFound(format!("no rule {rule}")))
            })?;
            Ok(r.captures().into_iter().map(str::to_string).collect())
        })
    }

    /// Every match in `graph`, in graph order of the roots: `(rule, root, root output, nodes,
    /// captures, outputs)`. With `greedy`, non-overlapping (see the Rust docs).
    #[pyo3(signature = (graph, greedy=true))]
    fn find_matches(&self, graph: &Bound<'_, PyGraph>, greedy: bool) -> PyResult<Vec<PyMatch>> {
        crate::errors::guard_res(|| {
            let py = graph.py();
            let matches = PyGraph::read(graph, |g| self.set.find_matches(g, greedy))?;
            let gh: Py<PyGraph> = graph.clone().unbind();
            let node = |id| Py::new(py, PyNode::new(gh.clone_ref(py), id));
            let value = |a: OutAnchor| PyValue {
                graph: gh.clone_ref(py),
                node: a.node,
                index: a.index.max(0) as usize,
            };
            matches
                .into_iter()
                .map(|m| {
                    let nodes = m.nodes.iter().map(|&n| node(n)).collect::<PyResult<_>>()?;
                    let caps = m
                        .captures
                        .into_iter()
                        .map(|(k, a)| (k.to_string(), value(a)))
                        .collect();
                    let outs = m.outputs.into_iter().map(value).collect();
                    Ok((m.rule, node(m.root)?, m.root_out, nodes, caps, outs))
                })
                .collect()
        })
    }

    /// Find the (greedy) matches in `graph` and rewrite those of every rule `r` whose
    /// replacement is its capture `capture[r]` (`None`: the rule is left alone): the root
    /// value's uses move to the capture's value and the unread matched nodes go. Returns how
    /// many matches were rewritten.
    fn rewrite_to_captures(
        &self,
        graph: &Bound<'_, PyGraph>,
        capture: Vec<Option<String>>,
    ) -> PyResult<usize> {
        crate::errors::guard_res(|| {
            let (root, name) = root_of(graph)?;
            let owner = tree_index(&root, &name)?;
            PyGraph::try_write(&root, |g| self.set.rewrite_to_captures(g, owner, &capture))
        })
    }

    /// Why rule `rule` does not match with its root at `node`: the first failing predicate,
    /// or `None` when it matches.
    fn why_not(&self, rule: usize, node: &Bound<'_, PyNode>) -> PyResult<Option<String>> {
        crate::errors::guard_res(|| {
            let n = node.get();
            let graph = n.graph.bind(node.py());
            PyGraph::read(graph, |g| self.set.why_not(g, rule, n.id))?.map_err(pattern_err)
        })
    }
}
