//! Subgraphs: registration on the root, parent links, instance slots on the parent op (static
//! and dynamic `name0, name1, ...`), the subgraph input/output index attributes, the pre-order
//! `all_nodes()` walk and recursive removal.
//!
//! Model (GE's): every subgraph of any depth is registered flat on the **root** graph
//! (`Graph::subgraphs`); a subgraph records its parent as `ParentLink { graph, node }` (the name
//! of the graph holding the parent node, and the node); the parent op records the subgraph by
//! instance name in one of its subgraph slots. In this crate every slot is an entry of
//! `OpMeta::subgraph_ir_names` (a static IR name is its own slot; a dynamic IR name `x` has the
//! entries `x0, x1, ...` of kind `Dynamic`), with the instance name at the same index of
//! `OpMeta::subgraph_instance_names`.

use hashbrown::HashMap;

use crate::attr::AttrValue;
use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeId, ParentLink};
use crate::op_desc::{OpDesc, SubgraphType};

/// `_parent_node_index`: on a subgraph `Data` node, the parent input it stands for; on the input
/// descs of a subgraph `NetOutput`, the parent output it feeds.
pub const ATTR_PARENT_NODE_INDEX: &str = "_parent_node_index";

/// Op attribute: the number of an op's formal inputs when the inputs after them are values its
/// bodies capture from the enclosing graph (an imported ONNX `Loop` / `If` / `Scan`).
pub const ATTR_NUM_INPUTS: &str = "_onnx_num_inputs";

/// The deepest subgraph nesting a graph tree may have: a subgraph of the root is at depth 1, a
/// subgraph of that subgraph at depth 2, and so on. `add_subgraph` and the decoders refuse
/// deeper trees with an error, so every walk over the tree (inference, encoding, dumps, checks)
/// stays within a bounded stack. ONNX cannot nest deeper than about 31 bodies anyway (protobuf's
/// message nesting limit of 100 is reached first); GE models nest a few levels.
pub const MAX_SUBGRAPH_DEPTH: usize = 64;

/// A node somewhere in a graph tree: `graph` is `None` for the root, `Some(k)` for
/// `root.subgraphs[k]`.
pub type TreeNode = (Option<usize>, NodeId);

impl Graph {
    /// The graph of a tree position: `None` = this root, `Some(k)` = `self.subgraphs[k]`.
    pub fn tree_graph(&self, graph: Option<usize>) -> Option<&Graph> {
        match graph {
            None => Some(self),
            Some(k) => self.subgraphs.get(k),
        }
    }

    /// Mutable form of [`Graph::tree_graph`].
    pub fn tree_graph_mut(&mut self, graph: Option<usize>) -> Option<&mut Graph> {
        match graph {
            None => Some(self),
            Some(k) => self.subgraphs.get_mut(k),
        }
    }

    /// Name → index in `self.subgraphs` of every registered subgraph (the first of a duplicate
    /// name).
    pub fn subgraph_name_index(&self) -> HashMap<&str, usize> {
        let mut index = HashMap::with_capacity(self.subgraphs.len());
        for (i, g) in self.subgraphs.iter().enumerate() {
            index.entry(g.name()).or_insert(i);
        }
        index
    }

    /// The nesting depth of every registered subgraph (a subgraph whose parent node is in this
    /// root has depth 1), found by following parent links in linear time; `None` where the
    /// chain of parent links does not reach this root (a broken link or a cycle of links).
    pub fn subgraph_depths(&self) -> Vec<Option<usize>> {
        let n = self.subgraphs.len();
        let index = self.subgraph_name_index();
        let mut depth: Vec<Option<usize>> = vec![None; n];
        let mut done = vec![false; n];
        let mut on_path = vec![false; n];
        let mut path: Vec<usize> = Vec::new();
        for k in 0..n {
            if done[k] {
                continue;
            }
            path.clear();
            let mut cur = k;
            let base: Option<usize> = loop {
                if done[cur] {
                    break depth[cur];
                }
                if on_path[cur] {
                    break None;
                }
                on_path[cur] = true;
                path.push(cur);
                let Some(link) = &self.subgraphs[cur].parent else {
                    break None;
                };
                if link.graph == self.name() {
                    break Some(0);
                }
                match index.get(link.graph.as_str()) {
                    Some(&p) => cur = p,
                    None => break None,
                }
            };
            let mut d = base;
            for &p in path.iter().rev() {
                d = d.and_then(|x| x.checked_add(1));
                depth[p] = d;
                done[p] = true;
                on_path[p] = false;
            }
        }
        depth
    }

    /// The depth of tree graph `owner` (`None` = this root, depth 0), following at most
    /// `MAX_SUBGRAPH_DEPTH + 1` parent links; `None` when the chain is broken, cyclic or longer.
    pub fn tree_depth(&self, owner: Option<usize>) -> Option<usize> {
        let mut cur = owner?;
        let mut depth = 1usize;
        loop {
            let link = self.subgraphs.get(cur)?.parent.as_ref()?;
            if link.graph == self.name() {
                return Some(depth);
            }
            if depth > MAX_SUBGRAPH_DEPTH {
                return None;
            }
            cur = self.subgraph_index(&link.graph)?;
            depth += 1;
        }
    }

    /// How deep the subgraphs registered on this root nest (0 without subgraphs).
    pub fn subgraph_height(&self) -> usize {
        self.subgraph_depths()
            .into_iter()
            .map(|d| d.unwrap_or(1))
            .max()
            .unwrap_or(0)
    }

    /// Index of a registered subgraph in `self.subgraphs`.
    pub fn subgraph_index(&self, name: &str) -> Option<usize> {
        self.subgraphs.iter().position(|g| g.name() == name)
    }

    /// Resolve a graph of the tree by name: the root itself or a registered subgraph.
    pub fn tree_index(&self, name: &str) -> IrResult<Option<usize>> {
        if name == self.name() {
            return Ok(None);
        }
        self.subgraph_index(name).map(Some).ok_or_else(|| {
            IrError::NotFound(format!(
                "graph '{}' has no subgraph named '{name}'",
                self.name()
            ))
        })
    }

    /// The slot index of `slot` on `node`'s op, if it exists.
    pub fn subgraph_slot_index(&self, node: NodeId, slot: &str) -> IrResult<Option<usize>> {
        let op = self.op(node)?;
        Ok(op
            .meta()
            .and_then(|m| m.subgraph_ir_names.iter().position(|(n, _)| n == slot)))
    }

    /// Add `sub` as a subgraph of `parent`, a node of the tree graph `owner` (`None` = this
    /// root), in slot `slot`. `dynamic = false`: `slot` is a static slot, created when the op
    /// does not have it yet, and it must be empty. `dynamic = true`: a new slot `slot<k>` is
    /// appended (k = number of existing `slot<i>` dynamic slots). The subgraph is registered
    /// on this root (its own registered subgraphs are moved here too), its parent link is set,
    /// and `_parent_node_index` is filled where missing: on each `Data` node (from its `index`
    /// attribute, else its input position) and on each input desc of its `NetOutput` (the
    /// input index; for a `Loop` body, whose output 0 is the loop condition, -1 on it and the
    /// input index minus one on the carried values after it). Validated first: a failure changes nothing. Returns the slot name used.
    pub fn add_subgraph(
        &mut self,
        owner: Option<usize>,
        parent: NodeId,
        slot: &str,
        dynamic: bool,
        sub: Graph,
    ) -> IrResult<String> {
        self.check_add_subgraph(owner, parent, slot, dynamic, &sub)?;
        self.register_subgraph(owner, parent, slot, dynamic, sub, false)
    }

    /// [`Graph::add_subgraph`] for a builder that gives every graph of the tree a name of its
    /// own (the ONNX import): the names of `sub`'s tree are not compared with the registered
    /// ones, which would make building a tree of n subgraphs take n² steps. Everything else
    /// is checked as in `add_subgraph`.
    pub fn add_subgraph_fresh_names(
        &mut self,
        owner: Option<usize>,
        parent: NodeId,
        slot: &str,
        dynamic: bool,
        sub: Graph,
    ) -> IrResult<String> {
        self.register_subgraph(owner, parent, slot, dynamic, sub, true)
    }

    fn register_subgraph(
        &mut self,
        owner: Option<usize>,
        parent: NodeId,
        slot: &str,
        dynamic: bool,
        mut sub: Graph,
        fresh_names: bool,
    ) -> IrResult<String> {
        let (slot_name, existing) =
            self.check_add_subgraph_impl(owner, parent, slot, dynamic, &sub, !fresh_names)?;
        let owner_name = self.tree_graph(owner).expect("checked").name().to_string();
        // Mutate.
        let sub_name = sub.name().to_string();
        let owner_graph = self.tree_graph_mut(owner).expect("resolved above");
        owner_graph.modify_op(parent, |op| {
            let index = match existing {
                Some(i) => i,
                None => {
                    let meta = op.meta_mut();
                    let kind = if dynamic {
                        SubgraphType::Dynamic
                    } else {
                        SubgraphType::Static
                    };
                    meta.subgraph_ir_names.push((slot_name.clone(), kind));
                    meta.subgraph_instance_names.push(String::new());
                    meta.subgraph_instance_names.len() - 1
                }
            };
            op.meta_mut().subgraph_instance_names[index] = sub_name.clone();
        })?;
        let loop_body = owner_graph
            .op(parent)
            .is_ok_and(|op| op.op_type() == "Loop");
        fill_parent_indexes(&mut sub, loop_body);
        sub.parent = Some(ParentLink {
            graph: owner_name,
            node: parent,
        });
        let mut nested = std::mem::take(&mut sub.subgraphs);
        sub.renew_uid();
        nested.iter_mut().for_each(Graph::renew_uid);
        self.subgraphs.push(sub);
        self.subgraphs.extend(nested);
        Ok(slot_name)
    }

    /// Validate [`Graph::add_subgraph`] without changing anything; returns the slot name and
    /// the index of the existing slot (if any).
    pub fn check_add_subgraph(
        &self,
        owner: Option<usize>,
        parent: NodeId,
        slot: &str,
        dynamic: bool,
        sub: &Graph,
    ) -> IrResult<(String, Option<usize>)> {
        self.check_add_subgraph_impl(owner, parent, slot, dynamic, sub, true)
    }

    fn check_add_subgraph_impl(
        &self,
        owner: Option<usize>,
        parent: NodeId,
        slot: &str,
        dynamic: bool,
        sub: &Graph,
        check_names: bool,
    ) -> IrResult<(String, Option<usize>)> {
        if self.parent.is_some() {
            return Err(IrError::InvalidArgument(format!(
                "subgraphs are registered on the root graph; '{}' is a subgraph",
                self.name()
            )));
        }
        let owner_graph = self.tree_graph(owner).ok_or_else(|| {
            IrError::NotFound(format!(
                "graph '{}' has no subgraph #{owner:?}",
                self.name()
            ))
        })?;
        let op = owner_graph.op(parent)?;
        let owner_depth = match owner {
            None => 0,
            Some(_) => self.tree_depth(owner).unwrap_or(MAX_SUBGRAPH_DEPTH),
        };
        let depth = owner_depth
            .saturating_add(1)
            .saturating_add(sub.subgraph_height());
        if depth > MAX_SUBGRAPH_DEPTH {
            return Err(IrError::InvalidArgument(format!(
                "adding subgraph '{}' under node '{}' of graph '{}' would nest subgraphs {depth} levels deep; the limit is {MAX_SUBGRAPH_DEPTH}",
                sub.name(),
                op.name(),
                owner_graph.name()
            )));
        }
        if sub.name().is_empty() {
            return Err(IrError::InvalidArgument("a subgraph needs a name".into()));
        }
        if sub.parent.is_some() {
            return Err(IrError::InvalidArgument(format!(
                "graph '{}' is already a subgraph",
                sub.name()
            )));
        }
        if check_names {
            let mut names: Vec<&str> = vec![sub.name()];
            names.extend(sub.subgraphs.iter().map(|g| g.name()));
            let registered = self.subgraph_name_index();
            for name in &names {
                if *name == self.name() || registered.contains_key(name) {
                    return Err(IrError::Duplicate(format!(
                        "graph '{}' already has a subgraph named '{name}'",
                        self.name()
                    )));
                }
            }
            let mut seen = HashMap::with_capacity(names.len());
            if names.iter().any(|n| seen.insert(*n, ()).is_some()) {
                return Err(IrError::Duplicate(format!(
                    "subgraph '{}' brings two subgraphs with the same name",
                    sub.name()
                )));
            }
        }
        let entries: &[(String, SubgraphType)] = op.meta().map_or(&[], |m| &m.subgraph_ir_names);
        let (slot_name, existing) = if dynamic {
            if entries
                .iter()
                .any(|(n, t)| n == slot && *t == SubgraphType::Static)
            {
                return Err(IrError::InvalidArgument(format!(
                    "'{slot}' is a static subgraph slot of '{}'",
                    op.name()
                )));
            }
            let mut k = 0usize;
            while entries.iter().any(|(n, _)| *n == format!("{slot}{k}")) {
                k += 1;
            }
            (format!("{slot}{k}"), None)
        } else {
            match entries.iter().position(|(n, _)| n == slot) {
                Some(i) => {
                    let current = &op.subgraph_instance_names()[i];
                    if !current.is_empty() {
                        return Err(IrError::InvalidArgument(format!(
                            "subgraph slot '{slot}' of '{}' already holds '{current}'",
                            op.name()
                        )));
                    }
                    (slot.to_string(), Some(i))
                }
                None => (slot.to_string(), None),
            }
        };
        Ok((slot_name, existing))
    }

    /// The subgraphs directly under `node` of tree graph `owner`, in slot order (empty or
    /// unresolvable slots skipped), as indexes into `self.subgraphs`.
    pub fn node_subgraphs(&self, owner: Option<usize>, node: NodeId) -> IrResult<Vec<usize>> {
        let g = self
            .tree_graph(owner)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))?;
        Ok(g.op(node)?
            .subgraph_instance_names()
            .iter()
            .filter(|n| !n.is_empty())
            .filter_map(|n| self.subgraph_index(n))
            .collect())
    }

    /// Every subgraph below `node` (recursively), as indexes into `self.subgraphs`, parents
    /// before their children.
    pub fn subgraphs_below(&self, owner: Option<usize>, node: NodeId) -> IrResult<Vec<usize>> {
        let direct = self.node_subgraphs(owner, node)?;
        self.subgraph_closure(direct)
    }

    /// Remove the subgraph `name` and every subgraph below it, and clear its slot on the parent
    /// op (the slot stays, empty, as in GE). Returns the removed graphs (the named one first).
    pub fn remove_subgraph(&mut self, name: &str) -> IrResult<Vec<Graph>> {
        let k = self.subgraph_index(name).ok_or_else(|| {
            IrError::NotFound(format!(
                "graph '{}' has no subgraph named '{name}'",
                self.name()
            ))
        })?;
        let doomed = self.subgraph_closure(vec![k])?;
        if let Some(link) = self.subgraphs[k].parent.clone() {
            let owner = self.tree_index(&link.graph).ok().flatten();
            let owner_is_root = link.graph == self.name();
            if let Some(g) = if owner_is_root {
                Some(&mut *self)
            } else {
                owner.map(|o| &mut self.subgraphs[o])
            } {
                if g.contains(link.node) {
                    let _ = g.modify_op(link.node, |op| {
                        let meta = op.meta_mut();
                        for inst in meta
                            .subgraph_instance_names
                            .iter_mut()
                            .filter(|n| *n == name)
                        {
                            inst.clear();
                        }
                    });
                }
            }
        }
        Ok(self.take_subgraphs(&doomed))
    }

    /// `remove_node` of node `id` of tree graph `owner`, also removing the subgraphs below the
    /// node (recursively). Returns the names of the constants removed with it.
    pub fn remove_tree_node(&mut self, owner: Option<usize>, id: NodeId) -> IrResult<Vec<String>> {
        let mut below = self.subgraphs_below(owner, id)?;
        // The constants `remove_node` may take with it: their subgraphs go too.
        let g = self
            .tree_graph(owner)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))?;
        let producers: Vec<NodeId> = g
            .node(id)?
            .in_data_peers()
            .flatten()
            .map(|a| a.node)
            .filter(|&p| p != id)
            .collect();
        let mut with_subgraphs = Vec::new();
        for p in producers {
            let subs = self.subgraphs_below(owner, p)?;
            if !subs.is_empty() {
                with_subgraphs.push((p, subs));
            }
        }
        let g = self
            .tree_graph_mut(owner)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))?;
        let removed = g.remove_node(id)?;
        for (p, subs) in with_subgraphs {
            if !g.contains(p) {
                below.extend(subs);
            }
        }
        self.take_subgraphs(&below);
        Ok(removed)
    }

    /// The subgraphs `start` and every subgraph below them, as indexes into
    /// `self.subgraphs` (each once, parents before their children).
    fn subgraph_closure(&self, start: Vec<usize>) -> IrResult<Vec<usize>> {
        let mut seen = vec![false; self.subgraphs.len()];
        let mut out = Vec::with_capacity(start.len());
        for k in start {
            if !std::mem::replace(&mut seen[k], true) {
                out.push(k);
            }
        }
        let index = self.subgraph_name_index();
        let mut i = 0;
        while i < out.len() {
            let g = &self.subgraphs[out[i]];
            for id in g.node_ids() {
                for name in g.arena()[id].op().subgraph_instance_names() {
                    if let Some(&s) = index.get(name.as_str()) {
                        if !std::mem::replace(&mut seen[s], true) {
                            out.push(s);
                        }
                    }
                }
            }
            i += 1;
        }
        Ok(out)
    }

    /// `erase_node` of node `id` of tree graph `owner`, also removing the subgraphs below the
    /// node (recursively), so that none is left without its parent. Returns the erased op.
    pub fn erase_tree_node(&mut self, owner: Option<usize>, id: NodeId) -> IrResult<OpDesc> {
        let below = self.subgraphs_below(owner, id)?;
        let g = self
            .tree_graph_mut(owner)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))?;
        let op = g.erase_node(id)?;
        self.take_subgraphs(&below);
        Ok(op)
    }

    /// `replace_node` of node `old` of tree graph `owner` by `op`, keeping the subgraph tree
    /// whole: a subgraph of `old` that `op` names in one of its slots stays (its parent link
    /// moves to the new node), the other subgraphs below `old` are removed. Fails, changing
    /// nothing, when `op` names a registered subgraph that is not one of `old`'s.
    pub fn replace_tree_node(
        &mut self,
        owner: Option<usize>,
        old: NodeId,
        op: OpDesc,
    ) -> IrResult<NodeId> {
        let direct = self.node_subgraphs(owner, old)?;
        let names: Vec<String> = op
            .subgraph_instance_names()
            .iter()
            .filter(|n| !n.is_empty())
            .cloned()
            .collect();
        for n in &names {
            if let Some(k) = self.subgraph_index(n) {
                if !direct.contains(&k) {
                    return Err(IrError::InvalidArgument(format!(
                        "the replacement op '{}' names subgraph '{n}', which belongs to another node",
                        op.name()
                    )));
                }
            }
        }
        let (kept, dropped): (Vec<usize>, Vec<usize>) = direct
            .into_iter()
            .partition(|&k| names.iter().any(|n| n == self.subgraphs[k].name()));
        let doomed = self.subgraph_closure(dropped)?;
        let g = self
            .tree_graph_mut(owner)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{owner:?}")))?;
        let new_id = g.replace_node(old, op)?;
        for k in kept {
            if let Some(link) = self.subgraphs[k].parent.as_mut() {
                link.node = new_id;
            }
        }
        self.take_subgraphs(&doomed);
        Ok(new_id)
    }

    /// A standalone deep copy of tree graph `k` (`None` = this whole graph): the copy has no
    /// parent, and the subgraphs below its nodes are registered on it.
    pub fn subtree_copy(&self, k: Option<usize>) -> IrResult<Graph> {
        let Some(k) = k else {
            return Ok(self.clone());
        };
        let sub = self
            .subgraphs
            .get(k)
            .ok_or_else(|| IrError::NotFound(format!("no subgraph #{k}")))?;
        let mut copy = sub.clone();
        copy.parent = None;
        copy.subgraphs.clear();
        let mut direct = Vec::new();
        for id in sub.node_ids() {
            direct.extend(self.node_subgraphs(Some(k), id)?);
        }
        let below = self.subgraph_closure(direct)?;
        copy.subgraphs = below.iter().map(|&s| self.subgraphs[s].clone()).collect();
        Ok(copy)
    }

    /// Remove the subgraphs with the given indexes (in that order) from the registry.
    pub(crate) fn take_subgraphs(&mut self, doomed: &[usize]) -> Vec<Graph> {
        let mut slots: Vec<Option<Graph>> = std::mem::take(&mut self.subgraphs)
            .into_iter()
            .map(Some)
            .collect();
        let removed: Vec<Graph> = doomed.iter().filter_map(|&d| slots[d].take()).collect();
        self.subgraphs = slots.into_iter().flatten().collect();
        removed
    }

    /// GE's `GetAllNodes()` from this root: each node followed immediately by the nodes of its
    /// subgraphs (slot order, recursively), then the next node.
    pub fn all_nodes(&self) -> Vec<TreeNode> {
        self.all_nodes_walk().0
    }

    /// `all_nodes()` of the tree graph `start` only (its nodes and everything below them).
    pub fn all_nodes_from(&self, start: Option<usize>) -> Vec<TreeNode> {
        self.walk_from(start).0
    }

    /// The pre-order walk and the subgraphs it met, in walk order.
    pub(crate) fn all_nodes_walk(&self) -> (Vec<TreeNode>, Vec<usize>) {
        self.walk_from(None)
    }

    fn walk_from(&self, start: Option<usize>) -> (Vec<TreeNode>, Vec<usize>) {
        let index: HashMap<&str, usize> = self
            .subgraphs
            .iter()
            .enumerate()
            .map(|(i, g)| (g.name(), i))
            .collect();
        let mut out = Vec::new();
        let mut met = Vec::new();
        let mut seen = vec![false; self.subgraphs.len()];
        if let Some(k) = start {
            if let Some(s) = seen.get_mut(k) {
                *s = true;
            }
        }
        // Explicit stack of node iterators: (graph, next node to visit).
        let Some(first_graph) = self.tree_graph(start) else {
            return (out, met);
        };
        let mut stack: Vec<(Option<usize>, Option<NodeId>)> = vec![(start, first_graph.first())];
        while let Some(top) = stack.last_mut() {
            let (graph, Some(id)) = *top else {
                stack.pop();
                continue;
            };
            let g = self.tree_graph(graph).expect("graphs on the stack exist");
            top.1 = g.next_of(id);
            out.push((graph, id));
            let names = g.arena()[id].op().subgraph_instance_names();
            // Push in reverse so that the first slot is walked first; GE lists the subgraphs
            // it meets in that (reverse slot) order.
            for name in names.iter().rev() {
                if let Some(&k) = index.get(name.as_str()) {
                    if !seen[k] {
                        seen[k] = true;
                        met.push(k);
                        stack.push((Some(k), self.subgraphs[k].first()));
                    }
                }
            }
        }
        (out, met)
    }
}

/// Fill `_parent_node_index` where missing on the subgraph's Data nodes and NetOutput inputs.
/// A `Loop` body's NetOutput input 0 is the continue condition, which no parent output
/// receives (-1); its input `i > 0` is the parent's output `i - 1`.
fn fill_parent_indexes(sub: &mut Graph, loop_body: bool) {
    let ids: Vec<NodeId> = sub.node_ids().collect();
    let mut data_pos = 0i64;
    for id in ids {
        let ty = sub.arena()[id].op_type().to_string();
        if ty == "Data" {
            let position = data_pos;
            data_pos += 1;
            let _ = sub.modify_op(id, |op| {
                if op.attr(ATTR_PARENT_NODE_INDEX).is_none() {
                    let index = op
                        .attr("index")
                        .and_then(|v| v.as_int())
                        .unwrap_or(position);
                    op.set_attr(ATTR_PARENT_NODE_INDEX, AttrValue::Int(index));
                }
            });
        } else if ty == "NetOutput" {
            let _ = sub.modify_op(id, |op| {
                for i in 0..op.num_inputs() {
                    if let Ok(d) = op.port_desc_mut(crate::op_desc::Side::Input, i) {
                        let attrs = d.attrs_mut();
                        if !attrs.contains_key(ATTR_PARENT_NODE_INDEX) {
                            let index = if loop_body { i as i64 - 1 } else { i as i64 };
                            attrs.insert(ATTR_PARENT_NODE_INDEX.to_string(), AttrValue::Int(index));
                        }
                    }
                }
            });
        }
    }
}
