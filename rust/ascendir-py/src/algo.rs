//! Python methods of `ascendir.Graph` for the graph algorithms: topological sorting, edits,
//! subgraphs, copying and the verifier; plus the `NodeSeq` result type.

use std::cell::RefCell;

use ascendir_ir::topo::{memory_priority_from_ge_option, TopoMode, TopoOptions, TopoSorter};
use ascendir_ir::{InAnchor, IrError, NodeId, OutAnchor};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice, PyString};

use crate::errors::{enter, IntoPyResult};
use crate::ir::anchor::{AnchorKind, PyAnchor};
use crate::ir::graph::{GraphSlot, PyGraph};
use crate::ir::node::PyNode;
use crate::ir::op_desc::{add_from_op_desc, PyOpDesc};

thread_local! {
    /// One sorter per thread: repeated sorts reuse its tables instead of allocating.
    static SORTER: RefCell<TopoSorter> = RefCell::new(TopoSorter::new());
}

/// A sequence of nodes of one graph (the result of a sort): indexing and iteration create the
/// `Node` handles on demand.
#[pyclass(name = "NodeSeq", module = "ascendir", frozen, sequence)]
#[derive(Debug)]
pub struct NodeSeq {
    graph: Py<PyGraph>,
    ids: Vec<NodeId>,
}

#[pymethods]
impl NodeSeq {
    fn __len__(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.ids.len())
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            if let Ok(slice) = key.cast::<PySlice>() {
                let ind = slice.indices(self.ids.len() as isize)?;
                let mut ids = Vec::with_capacity(ind.slicelength);
                let mut i = ind.start;
                for _ in 0..ind.slicelength {
                    ids.push(self.ids[i as usize]);
                    i += ind.step;
                }
                return Ok(Py::new(
                    py,
                    NodeSeq {
                        graph: self.graph.clone_ref(py),
                        ids,
                    },
                )?
                .into_any());
            }
            let index: isize = key.extract()?;
            let n = self.ids.len() as isize;
            let i = if index < 0 { index + n } else { index };
            if i < 0 || i >= n {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "node index {index} out of range for {n} nodes"
                )));
            }
            Ok(Py::new(
                py,
                PyNode::new(self.graph.clone_ref(py), self.ids[i as usize]),
            )?
            .into_any())
        })
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| {
            let me = slf.get();
            let list = PyNode::handles(slf.py(), &me.graph, &me.ids)?;
            Ok(list.into_any().try_iter()?.into_any().unbind())
        })
    }

    /// The node names, in order.
    #[getter]
    fn names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            let ids = &self.ids;
            PyGraph::read(self.graph.bind(py), |g| {
                ids.iter()
                    .map(|&id| g.node(id).map(|n| n.name().to_string()).unwrap_or_default())
                    .collect()
            })
        })
    }

    /// The nodes as a list.
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| PyNode::handles(py, &self.graph, &self.ids))
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            if let Ok(o) = other.cast::<NodeSeq>() {
                let (a, b) = (slf.get(), o.get());
                return Ok(a.ids == b.ids
                    && PyGraph::same_graph(a.graph.bind(slf.py()), b.graph.bind(slf.py())));
            }
            let Ok(items) = other.try_iter() else {
                return Ok(false);
            };
            let mine = slf.get().tolist(slf.py())?;
            let theirs: Vec<Bound<'_, PyAny>> = items.collect::<PyResult<_>>()?;
            if theirs.len() != mine.len() {
                return Ok(false);
            }
            for (a, b) in mine.iter().zip(theirs) {
                if !a.eq(b)? {
                    return Ok(false);
                }
            }
            Ok(true)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let names = self.names(py)?;
            let shown: Vec<String> = names.iter().take(8).map(|n| format!("'{n}'")).collect();
            let more = if names.len() > 8 { ", ..." } else { "" };
            Ok(format!("NodeSeq([{}{more}])", shown.join(", ")))
        })
    }
}

/// Parse a mode argument: a name (`"bfs"`, `"dfs"`, `"rdfs"`, `"stable_rdfs"`) or GE's number
/// (an `int` or `TopoMode`).
fn parse_mode(obj: &Bound<'_, PyAny>) -> PyResult<TopoMode> {
    if let Ok(s) = obj.cast::<PyString>() {
        return TopoMode::from_name(s.to_str()?).py();
    }
    let v: i64 = obj.extract()?;
    TopoMode::from_value(v)
        .ok_or_else(|| {
            IrError::InvalidArgument(format!(
                "unknown topological sorting mode {v} (expected 0..3)"
            ))
        })
        .py()
}

/// The root object of a graph object and the subgraph name when it is a subgraph view.
pub(crate) fn root_of<'py>(
    this: &Bound<'py, PyGraph>,
) -> PyResult<(Bound<'py, PyGraph>, Option<String>)> {
    let out = match &PyGraph::borrow_slot(this)?.slot {
        GraphSlot::Own(_) => (this.clone(), None),
        GraphSlot::Sub { root, name, .. } => (root.bind(this.py()).clone(), Some(name.clone())),
    };
    if out.1.is_some() {
        // A stale view (its subgraph removed, perhaps replaced by another of the same name)
        // fails here instead of acting on the new graph.
        PyGraph::read(this, |_| ())?;
    }
    Ok(out)
}

/// The tree index of this graph within its root (`None` = the root itself).
pub(crate) fn tree_index(
    root: &Bound<'_, PyGraph>,
    name: &Option<String>,
) -> PyResult<Option<usize>> {
    match name {
        None => Ok(None),
        Some(n) => PyGraph::try_read(root, |g| {
            g.subgraph_index(n).map(Some).ok_or_else(|| {
                IrError::StaleSubgraph(format!("subgraph '{n}' is no longer registered"))
            })
        }),
    }
}

/// A graph object for tree graph `index` of `root` (the root object itself or a view).
fn view(py: Python<'_>, root: &Bound<'_, PyGraph>, index: Option<usize>) -> PyResult<Py<PyGraph>> {
    match index {
        None => Ok(root.clone().unbind()),
        Some(k) => {
            let (name, uid) = PyGraph::try_read(root, |g| {
                g.subgraphs
                    .get(k)
                    .map(|s| (s.name().to_string(), s.uid()))
                    .ok_or_else(|| IrError::NotFound(format!("no subgraph #{k}")))
            })?;
            Py::new(
                py,
                PyGraph {
                    slot: GraphSlot::Sub {
                        root: root.clone().unbind(),
                        name,
                        uid,
                    },
                },
            )
        }
    }
}

fn node_handle(py: Python<'_>, graph: &Bound<'_, PyGraph>, id: NodeId) -> PyResult<Py<PyNode>> {
    Py::new(py, PyNode::new(graph.clone().unbind(), id))
}

fn options(
    mode: Option<&Bound<'_, PyAny>>,
    memory_priority: bool,
    delay_const_chains: Option<bool>,
    reverse: bool,
) -> PyResult<TopoOptions> {
    Ok(TopoOptions {
        mode: match mode {
            Some(m) => parse_mode(m)?,
            None => TopoMode::Dfs,
        },
        reverse,
        memory_priority,
        delay: delay_const_chains,
    })
}

/// Resolve a Python anchor argument of the given side, checking its graph.
fn in_anchor(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<InAnchor> {
    let a = obj.cast::<PyAnchor>()?.get();
    PyGraph::check_same(graph, a.graph.bind(obj.py()), "anchor")?;
    match a.kind {
        AnchorKind::InData | AnchorKind::InControl => Ok(InAnchor {
            node: a.node,
            index: a.index,
        }),
        _ => Err(IrError::InvalidArgument("expected an input anchor".into())).py(),
    }
}

fn out_anchor(graph: &Bound<'_, PyGraph>, obj: &Bound<'_, PyAny>) -> PyResult<OutAnchor> {
    crate::ir::node::extract_source(graph, obj)
}

#[pymethods]
impl PyGraph {
    /// Sort the graph topologically with GE's algorithm for `mode` (`"dfs"` — GE's inference
    /// default, also for `None` —, `"bfs"`, `"rdfs"`, `"stable_rdfs"`, or a `TopoMode`). The node order becomes
    /// the sorted order and every `node.id` its position. `memory_priority` pops the ready
    /// node with the fewest data consumers, then the fewest output bytes, then the smallest
    /// name (BFS/DFS); `delay_const_chains` runs GE's DelayTopoSort (`None`: where GE does —
    /// RDFS, and BFS/DFS with memory priority); `reverse` visits DFS successors first-ready
    /// first. `subgraphs=True` (root only) sorts every subgraph too and numbers ids over
    /// `all_nodes()`, as GE's `TopologicalSorting()`. A cycle raises `CycleError` (its
    /// `nodes` list one cycle) and changes nothing. Returns the new order.
    #[pyo3(signature = (mode=None, *, memory_priority=false, delay_const_chains=None, reverse=false, subgraphs=false))]
    fn topo_sort(
        slf: &Bound<'_, Self>,
        mode: Option<&Bound<'_, PyAny>>,
        memory_priority: bool,
        delay_const_chains: Option<bool>,
        reverse: bool,
        subgraphs: bool,
    ) -> PyResult<NodeSeq> {
        crate::errors::guard_res(|| {
            let opts = options(mode, memory_priority, delay_const_chains, reverse)?;
            let py = slf.py();
            if subgraphs {
                if !matches!(PyGraph::borrow_slot(slf)?.slot, GraphSlot::Own(_)) {
                    return Err(IrError::InvalidArgument(
                        "topo_sort(subgraphs=True) sorts a whole model: call it on the root graph"
                            .into(),
                    ))
                    .py();
                }
                let ids = PyGraph::write(slf, |g| {
                    enter(py, || g.topo_sort_all(&opts))?;
                    Ok::<_, PyErr>(g.node_ids().collect::<Vec<_>>())
                })??;
                return Ok(NodeSeq {
                    graph: slf.clone().unbind(),
                    ids,
                });
            }
            let ids = PyGraph::write(slf, |g| {
                enter(py, || {
                    SORTER.with(|s| {
                        let mut s = s.borrow_mut();
                        s.sort(g, &opts).map(|o| o.to_vec())
                    })
                })
            })??;
            Ok(NodeSeq {
                graph: slf.clone().unbind(),
                ids,
            })
        })
    }

    /// The order `topo_sort` would produce, without changing the graph.
    #[pyo3(signature = (mode=None, *, memory_priority=false, delay_const_chains=None, reverse=false))]
    fn topo_order(
        slf: &Bound<'_, Self>,
        mode: Option<&Bound<'_, PyAny>>,
        memory_priority: bool,
        delay_const_chains: Option<bool>,
        reverse: bool,
    ) -> PyResult<NodeSeq> {
        crate::errors::guard_res(|| {
            let opts = options(mode, memory_priority, delay_const_chains, reverse)?;
            let py = slf.py();
            let ids = PyGraph::read(slf, |g| {
                enter(py, || {
                    SORTER.with(|s| s.borrow_mut().order(g, &opts).map(|o| o.to_vec()))
                })
            })??;
            Ok(NodeSeq {
                graph: slf.clone().unbind(),
                ids,
            })
        })
    }

    /// One cycle of the graph (each node links to the next, the last to the first) over every
    /// kind of link, or `None` when the graph is acyclic.
    fn find_cycle(slf: &Bound<'_, Self>) -> PyResult<Option<NodeSeq>> {
        crate::errors::guard_res(|| {
            let cycle = PyGraph::read(slf, |g| g.find_cycle())?;
            Ok(cycle.map(|ids| NodeSeq {
                graph: slf.clone().unbind(),
                ids,
            }))
        })
    }

    /// Unlink `node` from everything without losing a dependency: the data consumers of
    /// output `i` are re-linked to the producer of input `io_map[i]` (negative = none; by
    /// default output 0 takes the first connected non-Const data producer), and every other
    /// producer gets a control link to every consumer it is not linked to yet (through a
    /// `NoOp` hub `<name>_noop` when producers × consumers exceed 1000). The node stays in the graph. Returns
    /// the hub node, if one was created.
    #[pyo3(signature = (node, io_map=None))]
    fn isolate_node(
        slf: &Bound<'_, Self>,
        node: &Bound<'_, PyAny>,
        io_map: Option<Vec<i64>>,
    ) -> PyResult<Option<Py<PyNode>>> {
        crate::errors::guard_res(|| {
            let id = PyNode::extract_id(slf, node)?;
            let iso = PyGraph::try_write(slf, |g| g.isolate_node(id, io_map.as_deref()))?;
            iso.hub.map(|h| node_handle(slf.py(), slf, h)).transpose()
        })
    }

    /// GE `RemoveNode`, atomic and lossless: isolate `node` (see `isolate_node`), erase it,
    /// drop the source constants that fed only it, and remove the subgraphs below it. Every
    /// handle of the removed nodes goes stale. Returns the names of the removed constants.
    fn remove_node(slf: &Bound<'_, Self>, node: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            let id = PyNode::extract_id(slf, node)?;
            let (root, name) = root_of(slf)?;
            let owner = tree_index(&root, &name)?;
            PyGraph::try_write(&root, |g| g.remove_tree_node(owner, id))
        })
    }

    /// Replace `old` by a new node made from `op_desc`: same place and id, every link moved
    /// to the same port index, graph input/output entries kept; `old` is erased. The op may
    /// reuse `old`'s name. Returns the new node (the `OpDesc` becomes its view).
    fn replace_node(
        slf: &Bound<'_, Self>,
        old: &Bound<'_, PyAny>,
        op_desc: &Bound<'_, PyOpDesc>,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let id = PyNode::extract_id(slf, old)?;
            let (root, name) = root_of(slf)?;
            let owner = tree_index(&root, &name)?;
            let op = PyOpDesc::snapshot(op_desc)?;
            let new_id = PyGraph::try_write(&root, |g| g.replace_tree_node(owner, id, op))?;
            PyOpDesc::attach(op_desc, slf.clone().unbind(), new_id)?;
            node_handle(slf.py(), slf, new_id)
        })
    }

    /// Add a node from `op_desc` next to another in the node order, without links: right
    /// after `after` (GE `InsertNode`) or right before `before` (deprecated: use the block
    /// `with graph.inserting_before(node): graph.add_node(op_desc)`); the new node takes that
    /// node's id.
    #[pyo3(signature = (op_desc, *, after=None, before=None))]
    fn insert_node(
        slf: &Bound<'_, Self>,
        op_desc: &Bound<'_, PyOpDesc>,
        after: Option<&Bound<'_, PyAny>>,
        before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| match (after, before) {
            (Some(a), None) => {
                let a = PyNode::extract_id(slf, a)?;
                add_from_op_desc(slf, op_desc, |g, op| g.insert_node_after(a, op))
            }
            (None, Some(b)) => {
                let b = PyNode::extract_id(slf, b)?;
                let py = slf.py();
                PyErr::warn(
                    py,
                    &py.get_type::<pyo3::exceptions::PyDeprecationWarning>(),
                    c"Graph.insert_node(op_desc, before=node) is deprecated: use \
                      `with graph.inserting_before(node): graph.add_node(op_desc)`",
                    1,
                )?;
                add_from_op_desc(slf, op_desc, |g, op| g.insert_node_before(b, op))
            }
            _ => Err(IrError::InvalidArgument(
                "insert_node needs exactly one of after= or before=".into(),
            ))
            .py(),
        })
    }

    /// GE `AddNodeFront`: add a node from `op_desc` first in the order (second when the first
    /// node is a `Data`), with id = the node count.
    fn add_node_front(
        slf: &Bound<'_, Self>,
        op_desc: &Bound<'_, PyOpDesc>,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| add_from_op_desc(slf, op_desc, |g, op| g.add_node_front(op)))
    }

    /// Splice a new node from `op_desc` into the data link `src → dst` (`src` an out-data
    /// anchor or a node, `dst` an in-data anchor): `src → new.in[in_index]`,
    /// `new.out[out_index] → dst`, each keeping its place in the peer lists.
    #[pyo3(signature = (src, dst, op_desc, *, in_index=0, out_index=0))]
    fn insert_between(
        slf: &Bound<'_, Self>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        op_desc: &Bound<'_, PyOpDesc>,
        in_index: usize,
        out_index: usize,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let s = out_anchor(slf, src)?;
            let d = in_anchor(slf, dst)?;
            add_from_op_desc(slf, op_desc, |g, op| {
                g.insert_between_data(s, d, op, in_index, out_index)
            })
        })
    }

    /// GE `InsertNodeAfter`: a new node fed by `src` that takes over the consumers
    /// `consumers` (in-data anchors; default: every data consumer of `src`) and the
    /// out-control links of `src`'s node.
    #[pyo3(signature = (src, op_desc, *, consumers=None, in_index=0, out_index=0))]
    fn insert_after(
        slf: &Bound<'_, Self>,
        src: &Bound<'_, PyAny>,
        op_desc: &Bound<'_, PyOpDesc>,
        consumers: Option<Vec<Bound<'_, PyAny>>>,
        in_index: usize,
        out_index: usize,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let s = out_anchor(slf, src)?;
            let dsts: Vec<InAnchor> = consumers
                .unwrap_or_default()
                .iter()
                .map(|c| in_anchor(slf, c))
                .collect::<PyResult<_>>()?;
            add_from_op_desc(slf, op_desc, |g, op| {
                g.insert_after(s, &dsts, op, in_index, out_index)
            })
        })
    }

    /// GE `InsertNodeBefore`: a new node between the in-data anchor `dst` and its producer;
    /// `dst`'s node's in-control links move to it (except from atomic-clean nodes).
    #[pyo3(signature = (dst, op_desc, *, in_index=0, out_index=0))]
    fn insert_before(
        slf: &Bound<'_, Self>,
        dst: &Bound<'_, PyAny>,
        op_desc: &Bound<'_, PyOpDesc>,
        in_index: usize,
        out_index: usize,
    ) -> PyResult<Py<PyNode>> {
        crate::errors::guard_res(|| {
            let d = in_anchor(slf, dst)?;
            add_from_op_desc(slf, op_desc, |g, op| {
                g.insert_before(d, op, in_index, out_index)
            })
        })
    }

    /// GE `MoveOutputEdges`: every consumer of `origin` (per output index, then its control
    /// consumers) moves to `new`; both need the same number of outputs.
    fn move_output_edges(
        slf: &Bound<'_, Self>,
        origin: &Bound<'_, PyAny>,
        new: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let a = PyNode::extract_id(slf, origin)?;
            let b = PyNode::extract_id(slf, new)?;
            PyGraph::try_write(slf, |g| g.move_output_edges(a, b))
        })
    }

    /// GE `FuseNodeKeepTopo`: check that `originals` can be fused (`IsSupportFuse`), let the
    /// replacement ops inherit the stream label, super-kernel, core-number and determinism
    /// attributes, and add them right after the original with the smallest id, in order, all
    /// with that id. Originals and links are untouched. Returns the new nodes.
    fn fuse_nodes<'py>(
        slf: &Bound<'py, Self>,
        originals: Vec<Bound<'py, PyAny>>,
        replacements: Vec<Bound<'py, PyOpDesc>>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let ids: Vec<NodeId> = originals
                .iter()
                .map(|o| PyNode::extract_id(slf, o))
                .collect::<PyResult<_>>()?;
            let ops = replacements
                .iter()
                .map(PyOpDesc::snapshot)
                .collect::<PyResult<Vec<_>>>()?;
            let new = PyGraph::try_write(slf, |g| g.fuse_nodes(&ids, ops))?;
            for (od, &id) in replacements.iter().zip(&new) {
                PyOpDesc::attach(od, slf.clone().unbind(), id)?;
            }
            PyNode::handles(slf.py(), &slf.clone().unbind(), &new)
        })
    }

    /// Why `nodes` cannot be fused (GE `IsSupportFuse`), or `None` when they can.
    fn fusion_conflict(
        slf: &Bound<'_, Self>,
        nodes: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Option<String>> {
        crate::errors::guard_res(|| {
            let ids: Vec<NodeId> = nodes
                .iter()
                .map(|o| PyNode::extract_id(slf, o))
                .collect::<PyResult<_>>()?;
            PyGraph::read(slf, |g| g.check_fusable(&ids).err().map(|e| e.to_string()))
        })
    }

    /// A deep copy (a subgraph copies into a standalone graph with the subgraphs below it).
    fn copy(slf: &Bound<'_, Self>) -> PyResult<PyGraph> {
        crate::errors::guard_res(|| {
            let (root, name) = root_of(slf)?;
            let index = tree_index(&root, &name)?;
            let py = slf.py();
            let g = PyGraph::read(&root, |g| enter(py, || g.subtree_copy(index)))??;
            Ok(PyGraph::from_graph(g))
        })
    }

    fn __copy__(slf: &Bound<'_, Self>) -> PyResult<PyGraph> {
        crate::errors::guard_res(|| PyGraph::copy(slf))
    }

    fn __deepcopy__(slf: &Bound<'_, Self>, _memo: &Bound<'_, PyAny>) -> PyResult<PyGraph> {
        crate::errors::guard_res(|| PyGraph::copy(slf))
    }

    /// Every broken invariant, as messages (empty when valid). On a root this covers the
    /// subgraph tree.
    fn problems(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            PyGraph::read(slf, |g| enter(py, || Ok::<_, IrError>(g.problems())))?
        })
    }

    /// The verifier: raise `ValidationError` (its `problems` list every broken invariant:
    /// one-sided links, anchor/port mismatches, order, names, inputs/outputs, cycles, the
    /// subgraph tree), or return `None`.
    fn validate(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            PyGraph::read(slf, |g| enter(py, || g.validate()))?
        })
    }

    /// Add `sub` (a standalone graph) as a subgraph of `parent`, a node of this graph, in
    /// subgraph slot `slot` (created when missing; it must be empty). `dynamic=True` appends a
    /// new slot `slot0`, `slot1`, ... instead. The subgraph is registered on the root graph,
    /// its parent links set, and `_parent_node_index` filled where missing on its `Data`
    /// nodes and `NetOutput` inputs. `sub` becomes a view of the registered subgraph (views of
    /// its own former subgraphs go stale: look them up again with `subgraph(name)`). Returns
    /// the slot name.
    #[pyo3(signature = (sub, *, parent, slot, dynamic=false))]
    fn add_subgraph(
        slf: &Bound<'_, Self>,
        sub: &Bound<'_, PyGraph>,
        parent: &Bound<'_, PyAny>,
        slot: &str,
        dynamic: bool,
    ) -> PyResult<String> {
        crate::errors::guard_res(|| {
            let id = PyNode::extract_id(slf, parent)?;
            let (root, name) = root_of(slf)?;
            if sub.is(&root) || sub.is(slf) {
                return Err(IrError::InvalidArgument(
                    "a graph cannot be its own subgraph".into(),
                ))
                .py();
            }
            if !matches!(PyGraph::borrow_slot(sub)?.slot, GraphSlot::Own(_)) {
                return Err(IrError::InvalidArgument(
                    "this graph is already a subgraph; copy() it first".into(),
                ))
                .py();
            }
            let owner = tree_index(&root, &name)?;
            {
                let me = PyGraph::borrow_slot(sub)?;
                let GraphSlot::Own(body) = &me.slot else {
                    unreachable!("checked above")
                };
                PyGraph::try_read(&root, |g| {
                    g.check_add_subgraph(owner, id, slot, dynamic, body)
                        .map(|_| ())
                })?;
            }
            let body = {
                let mut me = PyGraph::borrow_slot_mut(sub)?;
                let taken = std::mem::replace(
                    &mut me.slot,
                    GraphSlot::Sub {
                        root: root.clone().unbind(),
                        name: String::new(),
                        uid: 0,
                    },
                );
                let GraphSlot::Own(body) = taken else {
                    unreachable!("checked above")
                };
                body
            };
            let sub_name = body.name().to_string();
            let result =
                PyGraph::try_write(&root, |g| g.add_subgraph(owner, id, slot, dynamic, body));
            let uid = PyGraph::read(&root, |g| g.subgraph(&sub_name).map_or(0, |s| s.uid()))?;
            PyGraph::borrow_slot_mut(sub)?.slot = GraphSlot::Sub {
                root: root.clone().unbind(),
                name: sub_name,
                uid,
            };
            result
        })
    }

    /// The registered subgraph called `name` (looked up through the root from any graph of
    /// the tree); `NotFoundError` if none.
    fn subgraph(slf: &Bound<'_, Self>, name: &str) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| {
            let (root, _) = root_of(slf)?;
            let index = PyGraph::try_read(&root, |g| {
                g.subgraph_index(name).ok_or_else(|| {
                    IrError::NotFound(format!(
                        "graph '{}' has no subgraph named '{name}'",
                        g.name()
                    ))
                })
            })?;
            view(slf.py(), &root, Some(index))
        })
    }

    /// The subgraphs: on a root every registered subgraph (any depth), on a subgraph those
    /// below its nodes.
    #[getter]
    fn subgraphs(slf: &Bound<'_, Self>) -> PyResult<Vec<Py<PyGraph>>> {
        crate::errors::guard_res(|| {
            let (root, name) = root_of(slf)?;
            let owner = tree_index(&root, &name)?;
            let indexes: Vec<usize> = PyGraph::try_read(&root, |g| match owner {
                None => Ok((0..g.subgraphs.len()).collect()),
                Some(k) => {
                    let mut out = Vec::new();
                    for id in g.subgraphs[k].node_ids() {
                        for s in g.subgraphs_below(Some(k), id)? {
                            if !out.contains(&s) {
                                out.push(s);
                            }
                        }
                    }
                    Ok(out)
                }
            })?;
            indexes
                .into_iter()
                .map(|k| view(slf.py(), &root, Some(k)))
                .collect()
        })
    }

    /// The graph holding this subgraph's parent node (`None` for a root).
    #[getter]
    fn parent_graph(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyGraph>>> {
        crate::errors::guard_res(|| {
            let (root, name) = root_of(slf)?;
            if name.is_none() {
                return Ok(None);
            }
            let owner = PyGraph::read(slf, |g| g.parent.as_ref().map(|l| l.graph.clone()))?;
            let Some(owner) = owner else { return Ok(None) };
            let index = PyGraph::try_read(&root, |g| g.tree_index(&owner))?;
            view(slf.py(), &root, index).map(Some)
        })
    }

    /// The node owning this subgraph (`None` for a root).
    #[getter]
    fn parent_node(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyNode>>> {
        crate::errors::guard_res(|| {
            let Some(graph) = PyGraph::parent_graph(slf)? else {
                return Ok(None);
            };
            let id = PyGraph::read(slf, |g| g.parent.as_ref().map(|l| l.node))?;
            match id {
                Some(id) => Ok(Some(Py::new(slf.py(), PyNode::new(graph, id))?)),
                None => Ok(None),
            }
        })
    }

    /// The root graph of the tree this graph belongs to.
    #[getter]
    fn root_graph(slf: &Bound<'_, Self>) -> PyResult<Py<PyGraph>> {
        crate::errors::guard_res(|| Ok(root_of(slf)?.0.unbind()))
    }

    /// Remove the registered subgraph `name` and every subgraph below it; its slot on the
    /// parent op is cleared. Views of the removed graphs go stale.
    fn remove_subgraph(slf: &Bound<'_, Self>, name: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let (root, _) = root_of(slf)?;
            PyGraph::try_write(&root, |g| g.remove_subgraph(name).map(|_| ()))
        })
    }

    /// GE `GetAllNodes()`: this graph's nodes, each followed immediately by the nodes of its
    /// subgraphs (slot order, recursively).
    fn all_nodes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard_res(|| {
            let py = slf.py();
            let (root, name) = root_of(slf)?;
            let start = tree_index(&root, &name)?;
            let walk = PyGraph::read(&root, |g| g.all_nodes_from(start))?;
            let mut views: std::collections::HashMap<Option<usize>, Py<PyGraph>> =
                std::collections::HashMap::new();
            views.insert(start, slf.clone().unbind());
            let mut items = Vec::with_capacity(walk.len());
            for (graph, id) in walk {
                let g = match views.entry(graph) {
                    std::collections::hash_map::Entry::Occupied(e) => e.get().clone_ref(py),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(view(py, &root, graph)?).clone_ref(py)
                    }
                };
                items.push(Py::new(py, PyNode::new(g, id))?);
            }
            PyList::new(py, items)
        })
    }
}

/// GE's option lookup for the sorting mode: `ge.topoSortingMode` (C `strtol`; non-numeric →
/// BFS; out of range → fallback), else `ge.graphRunMode` (≥ 1 → BFS, else DFS). Returns GE's
/// mode number.
#[pyfunction]
#[pyo3(signature = (topo_sorting_mode=None, graph_run_mode=None))]
fn topo_mode_from_ge_options(
    topo_sorting_mode: Option<&str>,
    graph_run_mode: Option<&str>,
) -> PyResult<i64> {
    crate::errors::guard(|| TopoMode::from_ge_options(topo_sorting_mode, graph_run_mode) as i64)
}

/// Whether `ge.exec.memoryOptimizationPolicy` enables memory priority (exactly
/// `"MemoryPriority"`).
#[pyfunction]
#[pyo3(signature = (policy=None))]
fn memory_priority_from_ge_options(policy: Option<&str>) -> PyResult<bool> {
    crate::errors::guard(|| memory_priority_from_ge_option(policy))
}

/// Register the algorithm classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NodeSeq>()?;
    m.add_function(wrap_pyfunction!(topo_mode_from_ge_options, m)?)?;
    m.add_function(wrap_pyfunction!(memory_priority_from_ge_options, m)?)?;
    Ok(())
}
